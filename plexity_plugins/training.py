"""Training the paper's models (and any other) from raw corpora: the engine of `plexity train`
and `plexity calibrate`.

Corpus readers turn a corpus in its distributed format into documents (a stable key and
a list of sentences):

- `BncReader`: the British National Corpus, XML Edition (``Texts/A/A0/A00.xml`` ...), one
  document per text, its ``<s>`` elements as sentences; written (``<wtext>``) texts only
  unless told otherwise;
- `Cord19Reader`: CORD-19's ``metadata.csv``, one document per unique ``cord_uid``, the
  abstract split into sentences;
- `TextReader`: plain UTF-8 files, one document (or sentence) per line.

`ModelTrainer` holds 1 document in 20 out (CRC-32 of its key, as the embedded model's
build does), tokenises the rest with the scorer's tokenizer, runs lmplz and build_binary,
sets the default thresholds at percentiles of the held-out sentences' perplexities (the
99th for ``threshold``, the 99.9th for ``threshold_extracted``: `lmbuild.THRESHOLD_PERCENTILE`,
`lmbuild.THRESHOLD_EXTRACTED_PERCENTILE`), writes model.json and installs the model where `--model NAME` finds it.

`calibrate` scores clean (and optionally boilerplate) text with a model and suggests a
threshold by the same percentile rule; `write_threshold` stores one in a model.json.
"""

from __future__ import annotations

import bisect
import csv
import datetime as dt
import gzip
import io
import json
import logging
import resource
import shutil
import sys
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from . import __version__, lmbuild
from .models import DEFAULT_MODEL, EMBEDDED_DIR, MODEL_FILES, PAPER_MODELS, ModelError, ModelInfo, model_dir
from .sentences import split_sentences

logger = logging.getLogger(__name__)

CORPORA = ("bnc", "cord19", "text")
MAX_HELDOUT_SENTENCES = 50_000  # enough for a stable 99.9th percentile (50 sentences above it); bounds the scoring time
DROPPED_FILE = "train-dropped.jsonl"

CORPUS_DESCRIPTIONS = {
    "bnc": "British National Corpus, XML Edition",
    "cord19": "CORD-19 metadata.csv abstracts",
    "text": "plain text",
}
CORPUS_LICENCES = {
    "bnc": ("derived from the British National Corpus: redistribution is governed by the BNC User "
            "Licence (check it before sharing this model)"),
    "cord19": ("derived from CORD-19 abstracts: each article carries its own licence (see the "
               "`license` column of metadata.csv); check them before sharing this model"),
    "text": "derived from the training text: its licence applies",
}


class TrainError(ValueError):
    """Training cannot go on; the message says why and what to do."""


class CorpusError(TrainError):
    """A corpus file is unreadable or not in the expected format; the message names the file."""


# -- corpus readers -------------------------------------------------------------------------------


@dataclass
class Document:
    key: str  # stable identifier (BNC text id, cord_uid, file:line): decides the hold-out
    sentences: list[str]


class SkipLog:
    """Counts every document left out of training, by reason, and optionally writes them
    out (JSON lines: file, id, reason, detail)."""

    def __init__(self, out_path: Path | None = None):
        self.counts: Counter = Counter()
        self._out = open(out_path, "w", encoding="utf-8") if out_path else None

    def skip(self, reason: str, file: Path | str, doc_id: str | None = None, detail: str = "") -> None:
        self.counts[reason] += 1
        if self._out:
            record = {"file": str(file), "id": doc_id, "reason": reason}
            if detail:
                record["detail"] = detail
            self._out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._out:
            self._out.close()
            self._out = None


def _split(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def _open_text(path: Path):
    """A UTF-8 text stream of a plain or gzipped file (newline="" as the csv module wants)."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


class CorpusReader:
    """Base of the readers: finds the input files and iterates documents.

    Args:
        inputs: files, or directories searched recursively for `suffixes`.
        skips: where left-out documents are counted (a new SkipLog if None).
        skip_bad_files: a malformed file is counted and logged as a skip instead of
            stopping the run with an error.
    """

    suffixes: tuple[str, ...] = ()

    def __init__(self, inputs: Iterable[str | Path], skips: SkipLog | None = None, skip_bad_files: bool = False):
        self.inputs = [Path(p).expanduser() for p in inputs]
        self.skips = skips or SkipLog()
        self.skip_bad_files = skip_bad_files
        self.files_read = 0
        self.documents_read = 0

    def files(self) -> list[Path]:
        found: list[Path] = []
        for path in self.inputs:
            if path.is_dir():
                found += sorted(p for p in path.rglob("*")
                                if p.is_file() and p.name.endswith(self.suffixes) and not p.name.startswith("."))
            elif path.is_file():
                found.append(path)
            else:
                raise CorpusError(f"{path}: no such file or directory")
        if not found:
            raise CorpusError(f"empty corpus: no {'/'.join(self.suffixes)} files in "
                              f"{', '.join(map(str, self.inputs))}")
        return found

    def __iter__(self) -> Iterator[Document]:
        for path in self.files():
            self.files_read += 1
            try:
                for doc in self.read_file(path):
                    self.documents_read += 1
                    yield doc
            except CorpusError as exc:
                if not self.skip_bad_files:
                    raise
                logger.warning("skipping %s", exc)
                self.skips.skip("unreadable file", path, detail=str(exc))

    def read_file(self, path: Path) -> Iterator[Document]:
        raise NotImplementedError


def _local_name(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class BncReader(CorpusReader):
    """The BNC XML Edition: TEI files (``Texts/A/A0/A00.xml``), one text each, whose
    ``<wtext>`` holds a written text and ``<stext>`` a spoken one.  Sentences are ``<s>``
    elements of ``<w>`` (word) and ``<c>`` (punctuation) elements whose text carries its
    own trailing space, so a sentence is the concatenation of their texts.

    Args:
        written_only: skip spoken texts (the paper's choice); they are counted as
            skipped, and parsing a spoken file stops at its ``<stext>`` tag.
    """

    suffixes = (".xml", ".xml.gz")

    def __init__(self, inputs, skips=None, skip_bad_files=False, written_only: bool = True):
        super().__init__(inputs, skips, skip_bad_files)
        self.written_only = written_only
        self.texts = Counter()  # written / spoken texts read

    def read_file(self, path: Path) -> Iterator[Document]:
        from lxml import etree

        doc_id, kind, sentences = path.name.split(".")[0], None, []
        try:
            with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
                # Streaming: each <s> is read, then freed with the siblings before it.
                for event, elem in etree.iterparse(f, events=("start", "end"), resolve_entities=False):
                    tag = _local_name(elem.tag)
                    if event == "start":
                        if tag == "bncDoc":
                            doc_id = elem.get("{http://www.w3.org/XML/1998/namespace}id") or doc_id
                        elif tag in ("wtext", "stext"):
                            kind = "written" if tag == "wtext" else "spoken"
                            if kind == "spoken" and self.written_only:
                                break
                        continue
                    if tag == "s" and kind is not None:
                        words = "".join(t.text or "" for t in elem.iter() if _local_name(t.tag) in ("w", "c"))
                        sentence = " ".join(words.split())
                        if sentence:
                            sentences.append(sentence)
                        elem.clear(keep_tail=True)
                        while elem.getprevious() is not None:
                            del elem.getparent()[0]
        except etree.XMLSyntaxError as exc:
            raise CorpusError(f"{path}: malformed XML: {exc}") from exc
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from exc
        if kind is None:
            logger.warning("%s: not a BNC text (no <wtext> or <stext>), skipped", path)
            self.skips.skip("not a BNC text (no <wtext> or <stext>)", path, doc_id)
            return
        self.texts[kind] += 1
        if kind == "spoken" and self.written_only:
            self.skips.skip("spoken text (--written-only)", path, doc_id)
        elif not sentences:
            self.skips.skip("no sentences", path, doc_id)
        else:
            yield Document(doc_id, sentences)


def _csv_field_limit() -> None:
    # Abstracts can exceed the csv module's 128 KiB default; sys.maxsize overflows a C long on some platforms.
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


class Cord19Reader(CorpusReader):
    """CORD-19's ``metadata.csv`` (a header with ``cord_uid``, ``title``, ``abstract`` ...;
    quoted multi-line fields), streamed row by row.  The paper trained on the abstracts:
    a document is one abstract.  Rows with an empty abstract are skipped, and only the
    first row with an abstract is kept for each ``cord_uid`` (the file lists a paper
    once per source); both are counted."""

    suffixes = ("metadata.csv", "metadata.csv.gz")
    REQUIRED = ("cord_uid", "abstract")

    def __init__(self, inputs, skips=None, skip_bad_files=False):
        super().__init__(inputs, skips, skip_bad_files)
        self.seen: set[str] = set()

    def read_file(self, path: Path) -> Iterator[Document]:
        _csv_field_limit()
        try:
            with _open_text(path) as f:
                reader = csv.DictReader(f)
                try:
                    header = reader.fieldnames
                    if not header:
                        raise CorpusError(f"{path}: empty file, expected a CORD-19 metadata.csv header")
                    missing = [c for c in self.REQUIRED if c not in header]
                    if missing:
                        raise CorpusError(
                            f"{path}: not a CORD-19 metadata.csv: missing column(s) {', '.join(missing)} "
                            f"(header: {', '.join(header[:12])})")
                    for row in reader:
                        uid = (row["cord_uid"] or "").strip()
                        abstract = (row["abstract"] or "").strip()
                        if not uid:
                            self.skips.skip("no cord_uid", path, f"line {reader.line_num}")
                        elif not abstract:
                            self.skips.skip("empty abstract", path, uid)
                        elif uid in self.seen:
                            self.skips.skip("duplicate cord_uid", path, uid)
                        else:
                            self.seen.add(uid)
                            yield Document(uid, _split(abstract))
                except csv.Error as exc:
                    raise CorpusError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
                except UnicodeDecodeError as exc:
                    raise CorpusError(f"{path}: not UTF-8 near line {reader.line_num}: {exc}") from exc
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from exc


class TextReader(CorpusReader):
    """Plain UTF-8 text (``.txt``/``.txt.gz`` in directories; any file named directly),
    one document or one sentence per line; a line is split into sentences like any
    document.  Blank lines are ignored."""

    suffixes = (".txt", ".txt.gz", ".text")

    def read_file(self, path: Path) -> Iterator[Document]:
        lineno = 0
        try:
            with _open_text(path) as f:
                for lineno, line in enumerate(f, 1):
                    line = line.strip()
                    if line:
                        yield Document(f"{path.name}:{lineno}", _split(line))
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{path}: not UTF-8 (after line {lineno}): {exc}") from exc
        except (OSError, EOFError, zlib.error) as exc:  # gzip raises EOFError on a truncated file
            raise CorpusError(f"{path}: cannot read (after line {lineno}): {exc}") from exc


def make_reader(corpus: str, inputs, skips: SkipLog | None = None, skip_bad_files: bool = False,
                written_only: bool = True) -> CorpusReader:
    if corpus == "bnc":
        return BncReader(inputs, skips, skip_bad_files, written_only=written_only)
    if corpus == "cord19":
        return Cord19Reader(inputs, skips, skip_bad_files)
    if corpus == "text":
        return TextReader(inputs, skips, skip_bad_files)
    raise TrainError(f"unknown corpus format {corpus!r} (expected one of {', '.join(CORPORA)})")


# -- training -------------------------------------------------------------------------------------


def paper_config(name: str, corpus: str | None, order: int | None) -> tuple[str, int]:
    """(corpus, order) for a model name: the paper's names fix both; others need both."""
    spec = PAPER_MODELS.get(name)
    if spec:
        if corpus and corpus != spec["corpus"]:
            raise TrainError(f"'{name}' is the paper's {spec['corpus']} model: --corpus {corpus} contradicts it "
                             f"(choose another --name for a {corpus} model)")
        if order and order != spec["order"]:
            raise TrainError(f"'{name}' is the paper's order-{spec['order']} model: --order {order} contradicts "
                             f"it (choose another --name)")
        return spec["corpus"], spec["order"]
    if not corpus or not order:
        raise TrainError(f"--corpus and --order are needed for a model named '{name}' (only the paper's "
                         f"names {', '.join(PAPER_MODELS)} imply them)")
    return corpus, order


def check_model_name(name: str) -> None:
    if not name or name.startswith(".") or any(c in name for c in "/\\") or name.strip() != name:
        raise TrainError(f"invalid model name {name!r}: use letters, digits, '-', '_' or '.'")
    if name in (DEFAULT_MODEL, "default") or (EMBEDDED_DIR / name).is_dir():
        raise TrainError(f"'{name}' is the embedded model's name, which always takes precedence: choose another")


@dataclass
class TrainResult:
    info: ModelInfo
    directory: Path
    documents_read: int
    documents_trained: int
    heldout_documents: int
    heldout_sentences: int
    sentences: int
    tokens: int
    vocab_size: int
    skipped: dict[str, int]
    model_bytes: int
    seconds: float
    steps: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        skipped = ", ".join(f"{n:,} {reason}" for reason, n in sorted(self.skipped.items())) or "none"
        threshold = (f"{self.info.threshold} (threshold_extracted {self.info.threshold_extracted}; from "
                     f"{self.heldout_sentences:,} held-out sentences)"
                     if self.info.threshold else "none: set one with `plexity calibrate --write`")
        steps = ", ".join(f"{k} {v:.1f}s" for k, v in self.steps.items())
        return "\n".join([
            f"model '{self.info.name}' (order {self.info.order}) installed in {self.directory}",
            f"  documents: {self.documents_read:,} read, {self.documents_trained:,} trained on, "
            f"{self.heldout_documents:,} held out; skipped: {skipped}",
            f"  training text: {self.sentences:,} sentences, {self.tokens:,} tokens, "
            f"vocabulary {self.vocab_size:,}",
            f"  model: {self.model_bytes / 1e6:.1f} MB; default threshold {threshold}",
            f"  time: {self.seconds:.1f}s ({steps})",
        ])


class ModelTrainer:
    """Builds a KenLM model from a corpus and installs it (the engine of `plexity train`).

    Args:
        corpus: "bnc", "cord19" or "text" (see the readers).
        inputs: corpus files or directories.
        name: the model's name; `--model NAME` finds it once installed.
        order: n-gram order.
        written_only: BNC: written texts only (the paper's choice) or all.
        memory: lmplz's ``-S`` (sort memory: "20%", "4G" ...).
        prune: lmplz's ``--prune`` counts, one per order (e.g. [0, 1, 1]).
        temp_dir: where the training text, ARPA file and lmplz's sort files go (default:
            a temporary directory beside the installed model).
        discount_fallback: pass lmplz ``--discount_fallback``; None = only if lmplz
            says the corpus needs it (tiny or artificial corpora).
        quantize_bits: build_binary's ``-q``/``-b`` (None: no quantisation).
        holdout_every: hold out 1 document in this many for the threshold (0: none).
        percentile: the default threshold (for the "region" and "sentences" methods) is
            this percentile of the held-out sentences' perplexities;
        percentile_extracted: ... and the default `threshold_extracted` (for "trim", on
            extractor output) this one: the rule of the embedded model (99 and 99.9).
        output_dir: install into this directory instead of the model directory.
        force: replace an installed model of the same name.
        skip_bad_files: count and skip unreadable corpus files instead of stopping.
        write_dropped: write every skipped document with its reason to
            ``train-dropped.jsonl`` in the model directory.
        progress: show a progress bar; report: where step messages go.
    """

    def __init__(self, corpus: str, inputs: Iterable[str | Path], name: str, order: int,
                 written_only: bool = True, memory: str = "20%", prune: list[int] | None = None,
                 temp_dir: str | Path | None = None, discount_fallback: bool | None = None,
                 quantize_bits: int | None = 8, holdout_every: int = lmbuild.HOLDOUT_EVERY,
                 percentile: float = lmbuild.THRESHOLD_PERCENTILE,
                 percentile_extracted: float = lmbuild.THRESHOLD_EXTRACTED_PERCENTILE,
                 output_dir: str | Path | None = None,
                 force: bool = False, skip_bad_files: bool = False, write_dropped: bool = False,
                 progress: bool = False, report: Callable[[str], None] | None = None):
        check_model_name(name)
        if corpus not in CORPORA:
            raise TrainError(f"unknown corpus format {corpus!r} (expected one of {', '.join(CORPORA)})")
        for value in (percentile, percentile_extracted):
            if not 0 < value < 100:
                raise TrainError(f"a percentile is between 0 and 100 (exclusive), got {value}")
        self.corpus, self.inputs, self.name, self.order = corpus, list(inputs), name, order
        self.written_only = written_only
        self.memory, self.prune, self.temp_dir = memory, prune, temp_dir
        self.discount_fallback, self.quantize_bits = discount_fallback, quantize_bits
        self.holdout_every, self.percentile = holdout_every, percentile
        self.percentile_extracted = percentile_extracted
        self.output_dir = Path(output_dir).expanduser() if output_dir else None
        self.force, self.skip_bad_files, self.write_dropped = force, skip_bad_files, write_dropped
        self.progress = progress
        self.report = report or (lambda message: logger.info("%s", message))

    @property
    def destination(self) -> Path:
        return (self.output_dir or model_dir()) / self.name

    def run(self) -> TrainResult:
        started = time.perf_counter()
        # Fail before reading a big corpus, not after.
        lmbuild.find_tool("lmplz")
        lmbuild.find_tool("build_binary")
        dest = self.destination
        if dest.exists() and not self.force:
            raise TrainError(f"model '{self.name}' already exists in {dest}: pass --force to replace it")
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{self.name}.partial-", dir=dest.parent))
        staging.chmod(0o755)  # mkdtemp's 0700 would hide a shared model directory from other users
        try:
            result = self._build(staging, started)
            if dest.exists():
                shutil.rmtree(dest)
            staging.rename(dest)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        result.directory = dest
        result.info.path = str(dest / "model.bin")
        result.seconds = round(time.perf_counter() - started, 1)
        return result

    def _build(self, staging: Path, started: float) -> TrainResult:
        steps: dict[str, float] = {}
        work_parent = Path(self.temp_dir).expanduser() if self.temp_dir else staging.parent
        work_parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{self.name}.work-", dir=work_parent) as work:
            work = Path(work)
            text_path, heldout_path, arpa_path = work / "train.txt", work / "heldout.txt", work / "model.arpa"
            skips = SkipLog(staging / DROPPED_FILE if self.write_dropped else None)
            reader = make_reader(self.corpus, self.inputs, skips, self.skip_bad_files, self.written_only)
            try:
                self.report(f"reading {CORPUS_DESCRIPTIONS[self.corpus]} from {', '.join(map(str, self.inputs))}")
                t0 = time.perf_counter()
                heldout = {"documents": 0, "sentences": 0}
                stats = lmbuild.write_training_sentences(
                    self._training_documents(reader, heldout_path, heldout), text_path)
                steps["read"] = round(time.perf_counter() - t0, 1)
            finally:
                skips.close()
            if stats.sentences == 0:
                skipped = ", ".join(f"{n} {r}" for r, n in skips.counts.items()) or "nothing skipped"
                raise CorpusError(f"empty corpus: no training sentences in {', '.join(map(str, self.inputs))} "
                                  f"({reader.files_read} files, {reader.documents_read} documents; "
                                  f"{heldout['documents']} held out; skipped: {skipped})")
            self.report(f"training text: {stats.documents:,} documents, {stats.sentences:,} sentences, "
                        f"{stats.tokens:,} tokens ({heldout['documents']:,} documents held out)")

            t0 = time.perf_counter()
            fallback, lmplz_run = self._run_lmplz(text_path, arpa_path, work)
            steps["lmplz"] = round(time.perf_counter() - t0, 1)
            counts = lmbuild.arpa_counts(arpa_path)
            work_mb = {"training_text": round(text_path.stat().st_size / 1e6, 1),
                       "arpa": round(arpa_path.stat().st_size / 1e6, 1)}  # disk needed in --temp-dir
            text_path.unlink()
            self.report(f"building the binary ({'trie, %d-bit' % self.quantize_bits if self.quantize_bits else 'trie'})")
            t0 = time.perf_counter()
            binary_run = lmbuild.run_build_binary(arpa_path, staging / "model.bin", self.quantize_bits)
            steps["build_binary"] = round(time.perf_counter() - t0, 1)
            arpa_path.unlink()

            info = self._metadata(stats, counts, reader, skips, heldout, fallback, lmplz_run, binary_run)
            info.save(staging / "model.json")
            t0 = time.perf_counter()
            self._set_threshold(info, staging, heldout_path, heldout)
            steps["threshold"] = round(time.perf_counter() - t0, 1)
        info.build["work_files_mb"] = work_mb
        info.build["python_max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        info.build["steps_seconds"] = steps
        info.build["seconds"] = round(time.perf_counter() - started, 1)
        info.save(staging / "model.json")
        return TrainResult(
            info=info, directory=staging, documents_read=reader.documents_read,
            documents_trained=stats.documents, heldout_documents=heldout["documents"],
            heldout_sentences=heldout["sentences"], sentences=stats.sentences, tokens=stats.tokens,
            vocab_size=counts.get(1, 0), skipped=dict(skips.counts),
            model_bytes=(staging / "model.bin").stat().st_size, seconds=0.0, steps=steps)

    def _training_documents(self, reader: CorpusReader, heldout_path: Path, heldout: dict) -> Iterator[list[str]]:
        """Sentences of each training document; held-out ones go to `heldout_path`, one
        sentence a line (whitespace collapsed: the tokenizer ignores it anyway)."""
        from tqdm import tqdm

        with open(heldout_path, "w", encoding="utf-8") as out, \
                tqdm(desc=f"plexity train {self.name}", unit="doc", disable=not self.progress or None,
                     file=sys.stderr) as bar:
            for doc in reader:
                bar.update(1)
                if lmbuild.is_held_out(doc.key, self.holdout_every):
                    heldout["documents"] += 1
                    for sentence in doc.sentences:
                        line = " ".join(sentence.split())
                        if line:
                            out.write(line + "\n")
                            heldout["sentences"] += 1
                    continue
                yield doc.sentences

    def _run_lmplz(self, text_path: Path, arpa_path: Path, work: Path) -> tuple[bool, lmbuild.ToolRun]:
        fallback = bool(self.discount_fallback)
        self.report(f"running lmplz -o {self.order} -S {self.memory}"
                    + (f" --prune {' '.join(map(str, self.prune))}" if self.prune else ""))
        try:
            run = lmbuild.run_lmplz(text_path, arpa_path, self.order, memory=self.memory, prune=self.prune,
                                    temp_dir=work, discount_fallback=fallback)
        except lmbuild.KenLMToolFailed as exc:
            if fallback or self.discount_fallback is False or not lmbuild.needs_discount_fallback(exc):
                raise
            # Modified Kneser-Ney needs n-grams seen 1..4 times at every order; a small
            # corpus may lack some, and lmplz then asks for its fallback discounts.
            self.report("lmplz cannot estimate Kneser-Ney discounts on this corpus (too small?): "
                        "rerunning with --discount_fallback")
            fallback = True
            run = lmbuild.run_lmplz(text_path, arpa_path, self.order, memory=self.memory, prune=self.prune,
                                    temp_dir=work, discount_fallback=True)
        return fallback, run

    def _metadata(self, stats, counts, reader, skips, heldout, fallback, lmplz_run, binary_run) -> ModelInfo:
        corpus = CORPUS_DESCRIPTIONS[self.corpus]
        if self.corpus == "bnc":
            corpus += " (written texts)" if self.written_only else " (written and spoken texts)"
        lmplz_args = f"-o {self.order} -S {self.memory}" + (
            f" --prune {' '.join(map(str, self.prune))}" if self.prune else "") + (
            " --discount_fallback" if fallback else "")
        build = {
            "format": self.corpus,
            "inputs": [str(Path(p).expanduser().resolve()) for p in self.inputs],
            "files_read": reader.files_read,
            "documents_read": reader.documents_read,
            "skipped": dict(sorted(skips.counts.items())),
            "heldout": {"every": self.holdout_every, **heldout},
            "lmplz": lmplz_args,
            # lmplz's own report (RSSMax, CPU) plus what the kernel measured for each tool.
            "lmplz_resources": {**lmbuild.kenlm_resources(lmplz_run.stderr), "max_rss_mb": lmplz_run.max_rss_mb},
            "build_binary": (f"-q {self.quantize_bits} -b {self.quantize_bits} trie" if self.quantize_bits
                             else "trie"),
            "build_binary_resources": {"max_rss_mb": binary_run.max_rss_mb, "real_s": binary_run.seconds},
            "plexity_plugins": __version__,
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if self.corpus == "bnc":
            build["written_only"] = self.written_only
            build["texts"] = dict(reader.texts)
        paper = PAPER_MODELS.get(self.name)
        description = (f"KenLM order-{self.order} modified Kneser-Ney model of the {corpus}, built by "
                       f"`plexity train`")
        if paper:
            description += " (the configuration of Fernández-Pichel et al., 2023)"
        return lmbuild.make_info(self.name, self.order, stats, counts, corpus=corpus,
                                 licence=CORPUS_LICENCES[self.corpus], attribution="", language="en",
                                 description=description, build=build)

    def _set_threshold(self, info: ModelInfo, staging: Path, heldout_path: Path, heldout: dict) -> None:
        from .scorer import PerplexityScorer

        sentences = heldout["sentences"]
        if sentences < 2:
            info.threshold = info.threshold_extracted = None
            info.threshold_procedure = (
                f"none: only {sentences} held-out sentence(s) (corpus too small or --holdout-every 0); "
                f"set one with `plexity calibrate --model {self.name} CLEAN_TEXT --write`")
            logger.warning("model %s has no default threshold: %s", self.name, info.threshold_procedure)
            return
        # Score every k-th held-out sentence: a bounded, evenly spread sample.
        stride = -(-sentences // MAX_HELDOUT_SENTENCES)
        self.report(f"setting the threshold from {sentences:,} held-out sentences"
                    + (f" (every {stride}th)" if stride > 1 else ""))
        scorer = PerplexityScorer(staging)
        with open(heldout_path, encoding="utf-8") as f:
            values = [scorer.perplexity(line) for i, line in enumerate(f) if i % stride == 0]
        info.threshold = lmbuild.percentile_threshold(values, self.percentile)
        info.threshold_extracted = lmbuild.percentile_threshold(values, self.percentile_extracted)
        info.threshold_procedure = (
            f"threshold: {self.percentile:g}th, threshold_extracted: {self.percentile_extracted:g}th percentile "
            f"of the perplexities of {len(values)} held-out sentences ({heldout['documents']} documents, 1 in "
            f"{self.holdout_every} by CRC-32 of the document id, never trained on"
            + (f"; every {stride}th of {sentences} sentences scored" if stride > 1 else "") + ")")
        info.build["heldout_percentiles"] = lmbuild.percentile_report(values)


# -- calibration ------------------------------------------------------------------------------------


@dataclass
class Calibration:
    """Perplexities of clean (and boilerplate) sentences under a model, and the thresholds
    the percentile rule suggests: `threshold` (methods "region", "sentences") and
    `threshold_extracted` (method "trim", on extractor output)."""

    model: str
    percentile: float
    percentile_extracted: float
    clean: list[float]
    boilerplate: list[float]
    threshold: float
    threshold_extracted: float

    def clean_kept(self, threshold: float) -> float:
        return sum(p <= threshold for p in self.clean) / len(self.clean)

    def boilerplate_dropped(self, threshold: float) -> float | None:
        if not self.boilerplate:
            return None
        return sum(p > threshold for p in self.boilerplate) / len(self.boilerplate)

    def best_separating_threshold(self) -> float | None:
        """The threshold maximising (clean kept + boilerplate dropped) / 2, for comparison."""
        if not self.boilerplate:
            return None
        clean, boilerplate = sorted(self.clean), sorted(self.boilerplate)

        def balanced(t: float) -> float:
            return (bisect.bisect_right(clean, t) / len(clean)
                    + (len(boilerplate) - bisect.bisect_right(boilerplate, t)) / len(boilerplate))

        best = max(sorted(set(clean) | set(boilerplate)), key=balanced)  # ties: the lowest
        return round(best, 1)

    def procedure(self, clean_files: list[str], boilerplate_files: list[str]) -> str:
        text = (f"threshold: {self.percentile:g}th, threshold_extracted: {self.percentile_extracted:g}th "
                f"percentile of the perplexities of {len(self.clean)} clean sentences "
                f"({', '.join(Path(f).name for f in clean_files)}) by `plexity calibrate` on "
                f"{dt.date.today().isoformat()}")
        if self.boilerplate:
            above = sum(p > self.threshold for p in self.boilerplate)
            above_extracted = sum(p > self.threshold_extracted for p in self.boilerplate)
            text += (f"; {above} and {above_extracted} of {len(self.boilerplate)} boilerplate sentences "
                     f"({', '.join(Path(f).name for f in boilerplate_files)}) lie above them")
        return text


def read_sample_lines(path: Path) -> list[str]:
    """Non-blank lines of a text file (lines starting with '#' are comments, as in
    scripts/default_model/boilerplate.txt)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc}") from exc
    text = data.decode("utf-8", errors="replace")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def calibrate(scorer, clean_files: list[str | Path], boilerplate_files: Iterable[str | Path] = (),
              percentile: float = lmbuild.THRESHOLD_PERCENTILE,
              percentile_extracted: float = lmbuild.THRESHOLD_EXTRACTED_PERCENTILE) -> Calibration:
    """Score every sentence of the clean files (and of the boilerplate files) with `scorer`
    and suggest thresholds at these percentiles of the clean sentences' perplexities."""
    for value in (percentile, percentile_extracted):
        if not 0 < value < 100:
            raise TrainError(f"a percentile is between 0 and 100 (exclusive), got {value}")
    clean = [s.perplexity for f in clean_files for line in read_sample_lines(Path(f)) for s in scorer.score(line)]
    if len(clean) < 2:
        raise CorpusError(f"need at least 2 clean sentences to calibrate, found {len(clean)} in "
                          f"{', '.join(map(str, clean_files))}")
    boilerplate = [s.perplexity for f in boilerplate_files for line in read_sample_lines(Path(f))
                   for s in scorer.score(line)]
    return Calibration(scorer.model_name, percentile, percentile_extracted, clean, boilerplate,
                       lmbuild.percentile_threshold(clean, percentile),
                       lmbuild.percentile_threshold(clean, percentile_extracted))


def metadata_path(info: ModelInfo) -> Path:
    """The model.json (or <file>.json) that holds a model's metadata, if it may be written."""
    path = Path(info.path)
    if EMBEDDED_DIR in path.resolve().parents:
        raise ModelError(f"'{info.name}' is the embedded model, which is read-only: calibrate a model you "
                         f"trained (plexity train), or pass --threshold when cleaning")
    if path.name in MODEL_FILES and (path.parent / "model.json").is_file():
        return path.parent / "model.json"
    sidecar = Path(str(path) + ".json")
    if sidecar.is_file():
        return sidecar
    raise ModelError(f"model {path} has no metadata file to write the threshold into "
                     f"(expected {path.parent / 'model.json'} or {sidecar})")


def write_threshold(info: ModelInfo, threshold: float, procedure: str, details: dict | None = None,
                    threshold_extracted: float | None = None) -> Path:
    """Store `threshold` (and `threshold_extracted`) as the model's defaults in its metadata
    file; every other field is kept."""
    json_path = metadata_path(info)
    data = json.loads(json_path.read_text(encoding="utf-8"))
    previous = {"previous_threshold": data.get("threshold"),
                "previous_threshold_extracted": data.get("threshold_extracted")}
    data["threshold"] = threshold
    if threshold_extracted is not None:
        data["threshold_extracted"] = threshold_extracted
    data["threshold_procedure"] = procedure
    build = data.setdefault("build", {})
    build["calibration"] = {**previous, **(details or {})}
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(json_path)
    return json_path
