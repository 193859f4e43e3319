"""`ModelTrainer`, the engine of `plexity train`: corpus documents -> a KenLM model installed
where `--model NAME` finds it.

It holds 1 document in 20 out (CRC-32 of its key, as the embedded model's build does),
tokenises the rest with the scorer's tokenizer, runs lmplz and build_binary (`kenlm_tools`),
sets the default thresholds at percentiles of the held-out sentences' perplexities (the 99th
for ``threshold``, the 99.9th for ``threshold_extracted``: `thresholds.THRESHOLD_PERCENTILE`,
`thresholds.THRESHOLD_EXTRACTED_PERCENTILE`) and writes model.json.
"""

from __future__ import annotations

import datetime as dt
import logging
import numbers
import resource
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .. import __version__
from . import kenlm_tools, thresholds
from ..io.atomic_files import FolderAppeared, owned_folder, remove_stale, staged_folder
from ..scoring.models import (DEFAULT_MODEL, EMBEDDED_DIR, ORDERS, PAPER_MODELS, ModelInfo, install_dir,
                              model_argument, writable_install_dir)

logger = logging.getLogger(__name__)

from .corpora import CORPORA, CORPUS_DESCRIPTIONS, CORPUS_LICENCES, CorpusReader, SkipLog, input_paths, make_reader
from ..errors import CorpusError, TrainError, is_disk_full, printable
from ..text.language import base_language, checked_language_code
from ..text.plexity_tokenizer import TOKENIZER_VERSION

# Under it a plexity-tok-1 corpus is not cut into words (English prose: ~20 tokens a sentence; a sentence of
# Chinese: its text and its full stop).
MIN_TOKENS_PER_SENTENCE = 3
# Over it a plexity-tok-1 corpus has its words cut apart: its rule 3 (`\w+`) ends a token at a character that is no
# letter to `re`, and the vowel signs and viramas of Indic scripts, Thai's vowel and tone marks and Persian's
# zero-width non-joiner are none: "दिल्ली भारत की राजधानी है।" is 20 tokens for 5 words, a Bengali sentence 21 for 3,
# a Thai phrase 10 for 2 (English prose: 1.1 to 1.3, punctuation included).  The model then learns letters.
MAX_TOKENS_PER_WORD = 2.0
MAX_HELDOUT_SENTENCES = 50_000  # enough for a stable 99.9th percentile (50 sentences above it); bounds the scoring time
DROPPED_FILE = "train-dropped.jsonl"

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
    check_model_name(name)  # (first: the example below would print it, and the name alone may be what is wrong)
    missing = [option for option, value in (("--corpus", corpus), ("--order", order)) if not value]
    if missing:  # (name the one not given: "--corpus and --order" after --corpus text read as a contradiction)
        needed = " and ".join(missing) + (" are" if len(missing) > 1 else " is")
        raise TrainError(f"{needed} needed for a model named '{name}' (only the paper's names "
                         f"{', '.join(PAPER_MODELS)} imply --corpus and --order), e.g. plexity train --corpus "
                         f"{corpus or 'text'} --order {order or 3} --name {name} ...")
    return corpus, order


def already_installed(name: str, dest: Path) -> str:
    """Why a model of `name` is not installed in `dest` without --force (`plexity train`, `plexity models import`)."""
    return f"model '{name}' already exists in {dest}: pass --force to replace it"


def installed_meanwhile(name: str, dest: Path) -> str:
    """Why a model built without --force is not installed: another run of the same name installed its own in `dest`
    while this one ran (two trainings started one after the other, a bigram and a trigram under one name: the later
    one replaced the other's model without --force, both saying "installed")."""
    return (f"model '{name}' was installed in {dest} by another run while this one ran; it is left as that run "
            f"installed it, and this model is not installed: pass --force to replace it, or give another --name")


MAX_NAME_BYTES = 200  # a folder's name is 255 bytes at most, and the staging folder's is .NAME.partial-XXXXXXXX


def check_model_name(name: str) -> None:
    """A name `plexity train` and `plexity models import` can install a model under, and `--model` give back: one
    printable line, no path, not hidden, not too long for a folder's name.  (A name holding a line break or an ESC
    was installed as a folder of that name, the summary's lines broken or the terminal's state changed by it; a name
    of 300 letters was "[Errno 36] File name too long: '.../plexity_plugins/data/xxx...'".)"""
    # (a space, a quote, '=' or '$' in a name broke every hint printing `--model NAME` and every command typing it:
    # `--model a=b` is a language map)
    if not name or name.startswith(".") or not all(c.isalnum() or c in "-_." for c in name):
        raise TrainError(f"invalid model name '{printable(name)}': use letters, digits, '-', '_' or '.'")
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        raise TrainError(f"model name of {len(name.encode('utf-8', 'surrogateescape'))} bytes: a name is "
                         f"{MAX_NAME_BYTES} bytes at most (it names the model's folder)")
    if name in (DEFAULT_MODEL, "default") or (EMBEDDED_DIR / name).is_dir():
        raise TrainError(f"'{name}' is the embedded model's name, which always takes precedence: choose another")


def _checked_temp_dir(temp_dir: str | Path | None) -> Path | None:
    """--temp-dir as a folder path, refused now (before the corpus is read) when it, or a folder on its way, is a
    file: as --output-dir is (`install_dir`), in one line naming the option."""
    if not temp_dir:
        return None
    path = Path(temp_dir).expanduser()
    for folder in (path, *path.parents):
        if folder.exists():
            if not folder.is_dir():
                where = "is" if folder == path else f"is under {folder}, which is"
                raise TrainError(f"--temp-dir {temp_dir} {where} a file, not a folder: give a folder for the "
                                 f"training text, the ARPA file and lmplz's sort files (default: beside the model)")
            break
    return path


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
                     f"{self.heldout_sentences:,} held-out sentences"
                     + (": too few, extrapolated" if self.info.build.get("threshold_too_few") else "") + ")"
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
            f"  use it with --model {shlex.quote(model_argument(self.directory, self.info.name))}",
        ])


class ModelTrainer:
    """Builds a KenLM model from a corpus and installs it (the engine of `plexity train`).

    Args:
        corpus: "bnc", "cord19" or "text" (see the readers).
        inputs: corpus files or directories (or one of them).
        name: the model's name; `--model NAME` finds it once installed.
        order: n-gram order.
        written_only: BNC: written texts only (the paper's choice) or all.
        memory: lmplz's and build_binary's ``-S`` (sort memory: "20%", "4G" ...); a share is of the memory they may
            use, the least of the machine's RAM, a cgroup's limit and RLIMIT_AS (`kenlm_tools.lmplz_sort_memory`).
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

    def __init__(self, corpus: str, inputs: str | Path | Iterable[str | Path], name: str, order: int,
                 written_only: bool = True, memory: str = "20%", prune: list[int] | None = None,
                 temp_dir: str | Path | None = None, discount_fallback: bool | None = None,
                 quantize_bits: int | None = 8, holdout_every: int = thresholds.HOLDOUT_EVERY,
                 percentile: float = thresholds.THRESHOLD_PERCENTILE,
                 percentile_extracted: float = thresholds.THRESHOLD_EXTRACTED_PERCENTILE,
                 output_dir: str | Path | None = None,
                 force: bool = False, skip_bad_files: bool = False, write_dropped: bool = False,
                 progress: bool = False, report: Callable[[str], None] | None = None,
                 language: str | None = None, tokenizer: str | None = None, sp_model: str | Path | None = None):
        from ..text.model_tokenizers import tokenizer_for

        check_model_name(name)
        if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order not in ORDERS:
            # (order "3" trained a model whose model.json said "3", which no command then loads; 7 and 0 failed in
            # lmplz after the whole corpus was read)
            raise TrainError(f"order {order!r}: an n-gram order is a whole number from {ORDERS[0]} to {ORDERS[-1]}")
        order = int(order)  # (a numpy integer: model.json takes a Python one)
        # The model's own tokenizer (`plexity_plugins.text.model_tokenizers`): a clear error now for a
        # missing or unreadable .sp.model, not after reading the corpus.
        self.tokenizer = tokenizer_for(tokenizer, Path(sp_model).expanduser().resolve() if sp_model else None)
        if sp_model:
            self.tokenizer.sp  # noqa: B018 - loads (and checks) the SentencePiece model
        if language:
            try:
                language = checked_language_code(language)
            except ValueError as exc:
                raise TrainError(f"--language: {exc}") from None
        self.language = language
        self._language_sample: list[str] = []
        if corpus not in CORPORA:
            raise TrainError(f"unknown corpus format {corpus!r} (expected one of {', '.join(CORPORA)})")
        try:  # (lmplz, or the threshold's percentile, would refuse it only after the whole corpus is read)
            thresholds.check_percentile(percentile, "--percentile")
            thresholds.check_percentile(percentile_extracted, "--percentile-extracted")
            # (lmplz's -S as run_lmplz will give it, checked now and said when lmplz runs)
            self.sort_memory, self.memory_said = kenlm_tools.lmplz_sort_memory(memory)
            memory = kenlm_tools.lmplz_memory(memory)
            prune = kenlm_tools.lmplz_prune(prune, order)
            quantize_bits = kenlm_tools.build_binary_bits(quantize_bits)
        except ValueError as exc:
            raise TrainError(str(exc)) from None
        if holdout_every < 0 or holdout_every == 1:  # (1 held every document out: "empty corpus" after reading it)
            raise TrainError(f"--holdout-every {holdout_every}: 1 document in N is held out for the threshold, so N is "
                             f"2 or more (0: none held out, and no default threshold)")
        self.corpus, self.inputs, self.name, self.order = corpus, input_paths(inputs), name, order
        self.written_only = written_only
        self.memory, self.prune, self.temp_dir = memory, prune, _checked_temp_dir(temp_dir)
        self.discount_fallback, self.quantize_bits = discount_fallback, quantize_bits
        self.holdout_every, self.percentile = holdout_every, percentile
        self.percentile_extracted = percentile_extracted
        self.output_dir = Path(output_dir).expanduser() if output_dir else None
        self.force, self.skip_bad_files, self.write_dropped = force, skip_bad_files, write_dropped
        self.progress = progress
        self.report = report or (lambda message: logger.info("%s", message))

    @property
    def destination(self) -> Path:
        return install_dir(self.output_dir) / self.name

    def run(self) -> TrainResult:
        started = time.perf_counter()
        # Fail before reading a big corpus, not after.
        kenlm_tools.find_tool("lmplz")
        kenlm_tools.find_tool("build_binary")
        dest = writable_install_dir(self.output_dir) / self.name
        if dest.exists() and not self.force:
            raise TrainError(already_installed(self.name, dest))
        try:
            with staged_folder(dest, self.report, replace=self.force) as staging:  # (moved into place when complete)
                result = self._build(staging, started)
        except FolderAppeared:
            raise TrainError(installed_meanwhile(self.name, dest)) from None
        result.directory = dest
        result.info.path = str(dest / "model.bin")
        result.seconds = round(time.perf_counter() - started, 1)
        return result

    def _build(self, staging: Path, started: float) -> TrainResult:
        steps: dict[str, float] = {}
        work_parent = self.temp_dir or staging.parent
        try:
            work_parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # (a bare "[Errno 2] No such file or directory: '/proc/x'" named no option)
            if not self.temp_dir or is_disk_full(exc):
                raise
            raise TrainError(f"--temp-dir {self.temp_dir}: cannot make the folder ({exc.strerror or exc}): give a "
                             f"folder this user may write to") from None
        # (owned, as the staging folder: a killed run's training text and ARPA file, GBs, are removed by the next)
        remove_stale(work_parent, f".{self.name}.work-", "work folder", self.report)
        with owned_folder(work_parent, f".{self.name}.work-") as work:
            text_path, heldout_path, arpa_path = work / "train.txt", work / "heldout.txt", work / "model.arpa"
            skips = SkipLog(staging / DROPPED_FILE if self.write_dropped else None)
            reader = make_reader(self.corpus, self.inputs, skips, self.skip_bad_files, self.written_only)
            try:
                self.report(f"reading {CORPUS_DESCRIPTIONS[self.corpus]} from {', '.join(map(str, self.inputs))}")
                t0 = time.perf_counter()
                heldout = {"documents": 0, "sentences": 0}
                stats = kenlm_tools.write_training_sentences(
                    self._training_documents(reader, heldout_path, heldout), text_path, tokenizer=self.tokenizer)
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
            if self.tokenizer.name == TOKENIZER_VERSION and stats.tokens < MIN_TOKENS_PER_SENTENCE * stats.sentences:
                self.report(f"warning: {stats.tokens / stats.sentences:.1f} tokens a sentence: {TOKENIZER_VERSION} "
                            f"splits words at spaces and punctuation, so text written without spaces (Chinese, "
                            f"Japanese, Thai) is a token a sentence and the model tells no sentence from another: "
                            f"train it with --tokenizer ccnet --sp-model FILE (a SentencePiece model of its language)")
            elif self.tokenizer.name == TOKENIZER_VERSION:
                self._warn_of_words_cut_apart()

            t0 = time.perf_counter()
            fallback, lmplz_run = self._run_lmplz(text_path, arpa_path, work)
            steps["lmplz"] = round(time.perf_counter() - t0, 1)
            counts = kenlm_tools.arpa_counts(arpa_path)
            work_mb = {"training_text": round(text_path.stat().st_size / 1e6, 1),
                       "arpa": round(arpa_path.stat().st_size / 1e6, 1)}  # disk needed in --temp-dir
            text_path.unlink()
            self.report(f"building the binary ({'trie, %d-bit' % self.quantize_bits if self.quantize_bits else 'trie'}"
                        f", build_binary -S {self.sort_memory})")
            t0 = time.perf_counter()
            binary_run = kenlm_tools.run_build_binary(arpa_path, staging / "model.bin", self.quantize_bits,
                                                      memory=self.memory)
            steps["build_binary"] = round(time.perf_counter() - t0, 1)
            arpa_path.unlink()

            info = self._metadata(stats, counts, reader, skips, heldout, fallback, lmplz_run, binary_run)
            if getattr(self.tokenizer, "sp_model", None):
                shutil.copyfile(self.tokenizer.sp_model, staging / "model.sp.model")
                info.sp_model = "model.sp.model"
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

    def _warn_of_words_cut_apart(self) -> None:
        """Warn when plexity-tok-1 cuts the training text's words apart (`MAX_TOKENS_PER_WORD`), judged on the
        sample of its first documents that language identification reads."""
        from ..text.plexity_tokenizer import tokenize

        sample = "\n".join(self._language_sample)
        words = len(sample.split())
        tokens = len(tokenize(sample))
        if words and tokens > MAX_TOKENS_PER_WORD * words:
            self.report(f"warning: {tokens / words:.1f} tokens a word: {TOKENIZER_VERSION} ends a token at a "
                        f"character that is not a letter to Python's re, and the vowel signs of Hindi, Bengali, "
                        f"Tamil and the other Indic scripts, Thai's vowel and tone marks and Persian's zero-width "
                        f"non-joiner are none, so the model learns letters, not words: train it with --tokenizer "
                        f"ccnet --sp-model FILE (a SentencePiece model of its language)")

    def _training_documents(self, reader: CorpusReader, heldout_path: Path, heldout: dict) -> Iterator[list[str]]:
        """Sentences of each training document; held-out ones go to `heldout_path`, one
        sentence a line (whitespace collapsed: the tokenizer ignores it anyway)."""
        from tqdm import tqdm

        with open(heldout_path, "w", encoding="utf-8") as out, \
                tqdm(desc=f"plexity train {self.name}", unit="doc", disable=not self.progress or None,
                     file=sys.stderr) as bar:
            for doc in reader:
                bar.update(1)
                if len(self._language_sample) < 50:
                    self._language_sample.append(" ".join(doc.sentences)[:400])
                if thresholds.is_held_out(doc.key, self.holdout_every):
                    heldout["documents"] += 1
                    for sentence in doc.sentences:
                        line = " ".join(sentence.split())
                        if line:
                            out.write(line + "\n")
                            heldout["sentences"] += 1
                    continue
                yield doc.sentences

    def _run_lmplz(self, text_path: Path, arpa_path: Path, work: Path) -> tuple[bool, kenlm_tools.ToolRun]:
        fallback = bool(self.discount_fallback)
        self.report(f"running lmplz -o {self.order} -S {self.sort_memory}"
                    + (f" --prune {' '.join(map(str, self.prune))}" if self.prune else "")
                    + (f": {self.memory_said}" if self.memory_said else ""))
        try:
            run = kenlm_tools.run_lmplz(text_path, arpa_path, self.order, memory=self.memory, prune=self.prune,
                                    temp_dir=work, discount_fallback=fallback)
        except kenlm_tools.KenLMToolFailed as exc:
            if fallback or self.discount_fallback is False or not kenlm_tools.needs_discount_fallback(exc):
                raise
            # Modified Kneser-Ney needs n-grams seen 1..4 times at every order; a small
            # corpus may lack some, and lmplz then asks for its fallback discounts.
            self.report("lmplz cannot estimate Kneser-Ney discounts on this corpus (too small?): "
                        "rerunning with --discount_fallback")
            fallback = True
            run = kenlm_tools.run_lmplz(text_path, arpa_path, self.order, memory=self.memory, prune=self.prune,
                                    temp_dir=work, discount_fallback=True)
        return fallback, run

    def _metadata(self, stats, counts, reader, skips, heldout, fallback, lmplz_run, binary_run) -> ModelInfo:
        corpus = CORPUS_DESCRIPTIONS[self.corpus]
        if self.corpus == "bnc":
            corpus += " (written texts)" if self.written_only else " (written and spoken texts)"
        lmplz_args = f"-o {self.order} -S {self.sort_memory}" + (
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
            "lmplz_resources": {**kenlm_tools.kenlm_resources(lmplz_run.stderr), "max_rss_mb": lmplz_run.max_rss_mb},
            "build_binary": f"-S {self.sort_memory} " + (f"-q {self.quantize_bits} -b {self.quantize_bits} trie"
                                                           if self.quantize_bits else "trie"),
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
        return kenlm_tools.make_info(self.name, self.order, stats, counts, corpus=corpus,
                                 licence=CORPUS_LICENCES[self.corpus], attribution="", language=self._language(),
                                 description=description, build=build, tokenizer_version=self.tokenizer.name)

    def _language(self) -> str:
        """--language, else English for the BNC and CORD-19, else the language identified on a
        sample of the training text ("" if unsure: the model then filters text in any language)."""
        from ..text.language import MIN_PROBABILITY, identify

        if self.language is not None:
            if self.language:  # (a wrong --language makes the model pass its own language's pages through)
                found, probability = identify("\n".join(self._language_sample))
                # (identification names no script: a "sr-Latn" model's text reads as "sr")
                if found is not None and probability >= MIN_PROBABILITY and found != base_language(self.language):
                    self.report(f"warning: --language {self.language}, but the training text reads as {found} "
                                f"(p={probability:.2f}): text in {found} would pass through this model unfiltered")
            return self.language
        if self.corpus in ("bnc", "cord19"):  # English corpora
            return "en"
        language, probability = identify("\n".join(self._language_sample))
        if language is None or probability < MIN_PROBABILITY:
            self.report("warning: language not identified from the training text (pass --language): the model "
                        "has no language check, and filters text in any language")
            return ""
        self.report(f"language: {language} (identified from the training text, p={probability:.2f}; "
                    f"--language sets it)")
        return language

    def _set_threshold(self, info: ModelInfo, staging: Path, heldout_path: Path, heldout: dict) -> None:
        from ..scoring.scorer import PerplexityScorer

        sentences = heldout["sentences"]
        if sentences < 2:
            info.threshold = info.threshold_extracted = None
            info.threshold_procedure = (
                f"none: only {sentences} held-out sentence(s) (corpus too small or --holdout-every 0); "
                f"set one with `plexity calibrate --model {shlex.quote(self.name)} CLEAN_TEXT --write`")
            logger.warning("model %s has no default threshold: %s", self.name, info.threshold_procedure)
            return
        # Score every k-th held-out sentence: a bounded, evenly spread sample.
        stride = -(-sentences // MAX_HELDOUT_SENTENCES)
        self.report(f"setting the threshold from {sentences:,} held-out sentences"
                    + (f" (every {stride}th)" if stride > 1 else ""))
        scorer = PerplexityScorer(staging)
        with open(heldout_path, encoding="utf-8") as f:
            values = [scorer.perplexity(line) for i, line in enumerate(f) if i % stride == 0]
        info.threshold = thresholds.percentile_threshold(values, self.percentile)
        info.threshold_extracted = thresholds.percentile_threshold(values, self.percentile_extracted)
        too_few = thresholds.too_few_for(len(values), {"threshold": self.percentile,
                                                       "threshold_extracted": self.percentile_extracted})
        info.threshold_procedure = (
            f"threshold: {self.percentile:g}th, threshold_extracted: {self.percentile_extracted:g}th percentile "
            f"of the perplexities of {len(values)} held-out sentences ({heldout['documents']} documents, 1 in "
            f"{self.holdout_every} by CRC-32 of the document id, never trained on"
            + (f"; every {stride}th of {sentences} sentences scored" if stride > 1 else "") + ")"
            + (f"; {too_few}" if too_few else ""))
        info.build["heldout_percentiles"] = thresholds.percentile_report(values)
        info.build["threshold_too_few"] = too_few  # (`plexity models` shows it)
        if too_few:
            self.report(f"warning: held out: {too_few}; give a larger corpus, or a smaller --holdout-every "
                        f"(now {self.holdout_every}: 1 document in {self.holdout_every} held out)")


