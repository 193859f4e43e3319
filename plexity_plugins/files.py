"""Cleaning files on disk: text, HTML and WARC inputs (the engine of `plexity clean`)."""

from __future__ import annotations

import gzip
import json
import logging
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .extract import ExtractionError, decode_html_counted, get_extractor
from .scorer import CleanResult, PerplexityScorer, sanitize
from .stats import RunStats
from .warc import cleaned_response_record, http_content_type, is_html_response

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".txt.gz")
HTML_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")
WARC_SUFFIXES = (".warc", ".warc.gz")
STATS_FILE = "plexity-stats.json"
DROPPED_FILE = "plexity-dropped.jsonl"


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    if name.endswith(HTML_SUFFIXES):
        return "html"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return None


@dataclass(frozen=True)
class InputFile:
    path: Path
    relative: Path  # where its output goes, relative to the output directory
    kind: str | None


def collect_inputs(inputs: list[str | os.PathLike], output_dir: str | os.PathLike | None = None) -> list[InputFile]:
    """Files named, and files found recursively in directories named, in a stable order.

    Raises FileNotFoundError for an input that does not exist, and ValueError when two
    inputs would write the same output or an input would be overwritten by its own
    output.  The output directory itself is never searched for inputs.  Files of unknown
    kind inside a directory are returned with kind None (the caller counts the skip).
    """
    out = Path(output_dir).resolve() if output_dir is not None else None
    found: list[InputFile] = []
    for item in inputs:
        root = Path(item)
        if root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if out is None or (Path(dirpath) / d).resolve() != out)
                for filename in sorted(filenames):
                    path = Path(dirpath) / filename
                    found.append(InputFile(path, path.relative_to(root), kind_of(path)))
        elif root.is_file():
            found.append(InputFile(root, Path(root.name), kind_of(root)))
        else:
            raise FileNotFoundError(f"input {root} does not exist")
    if out is not None:
        targets: dict[Path, Path] = {}
        for f in found:
            if f.kind is None:
                continue
            target = (out / output_name(f)).resolve()
            if target == f.path.resolve():
                raise ValueError(f"the output for {f.path} would overwrite it: choose another --output-dir")
            if target in targets:
                raise ValueError(f"{targets[target]} and {f.path} would both be written to {target}: "
                                 f"give their common parent directory as the input instead")
            targets[target] = f.path
    return found


def output_name(item: "InputFile") -> Path:
    """Where an input's output goes, relative to the output directory."""
    return item.relative if item.kind == "warc" else Path(str(item.relative) + ".txt")


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.lower().endswith(".gz"):
        data = gzip.decompress(data)
    return data


class FileCleaner:
    """Cleans input files into an output directory and counts everything in `stats`.

    Args:
        scorer: the shared PerplexityScorer.
        output_dir: where outputs, the stats JSON and (optionally) dropped sentences go.
        extractor: "tags", "trafilatura" or "none" for HTML; text files are always text.
        threshold, annotate: as in `PerplexityScorer.clean`.
        write_dropped: also write every dropped sentence and skipped document, with its
            reason, to ``plexity-dropped.jsonl`` in the output directory.
    """

    def __init__(self, scorer: PerplexityScorer, output_dir: Path, extractor: str = "trafilatura",
                 threshold: float | None = None, annotate: bool = False, write_dropped: bool = False,
                 text_scorer: PerplexityScorer | None = None):
        self.scorer = scorer
        # Text inputs are not extracted, so they may want another method than extracted HTML.
        self.text_scorer = text_scorer or scorer
        self.output_dir = Path(output_dir)
        self.extractor_name = extractor
        self.extract = get_extractor(extractor)
        self.threshold = threshold
        self.annotate = annotate
        self.stats = RunStats(model=scorer.model_name, threshold=threshold or scorer.threshold,
                              method=scorer.method, extractor=extractor, annotate=annotate)
        if self.text_scorer is not scorer:
            self.stats.text_method = self.text_scorer.method
            self.stats.text_threshold = threshold or self.text_scorer.threshold
        self._dropped = None
        if write_dropped:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            self._dropped = open(self.output_dir / DROPPED_FILE, "w", encoding="utf-8")

    # -- bookkeeping ----------------------------------------------------------------

    def _record_drop(self, source: str, reason: str, **extra) -> None:
        if self._dropped is not None:
            self._dropped.write(json.dumps({"source": source, "reason": reason, **extra}, ensure_ascii=False) + "\n")

    def _skip(self, source: str, reason: str) -> None:
        logger.warning("skipped %s: %s", source, reason)
        self.stats.skip(reason)
        self._record_drop(source, reason)

    def _clean_text(self, text: str | bytes, source: str, scorer: PerplexityScorer | None = None) -> CleanResult:
        result = (scorer or self.scorer).clean(text, threshold=self.threshold, annotate=self.annotate)
        self.stats.add(result)
        for sentence in result.dropped if self._dropped is not None else ():
            self._record_drop(source, sentence.reason, perplexity=round(sentence.perplexity, 1),
                              start=sentence.start, end=sentence.end, text=sentence.text)
        return result

    def _to_text(self, raw: bytes, kind: str, content_type: str | None = None) -> str:
        """Text to filter; characters that had to be replaced while decoding are counted."""
        if kind == "text" or self.extractor_name == "none":
            text, replaced = sanitize(raw)
        else:
            html, replaced = decode_html_counted(raw, content_type)
            text = self.extract(html)
        self.stats.replaced_chars += replaced
        return text

    # -- files ------------------------------------------------------------------------

    def clean_file(self, item: InputFile) -> None:
        if item.kind is None:
            logger.warning("skipped %s: not a .txt, .html, .htm or .warc file (optionally .gz)", item.path)
            self.stats.skip_file("unknown_file_type")
            self._record_drop(str(item.path), "unknown_file_type")
            return
        try:
            if item.kind == "warc":
                self._clean_warc(item)
            else:
                self._clean_document_file(item)
            self.stats.files += 1
        except (OSError, EOFError, zlib.error) as exc:
            logger.warning("skipped %s: unreadable file: %s", item.path, exc)
            self.stats.skip_file("unreadable_file")
            self._record_drop(str(item.path), f"unreadable_file: {exc}")

    def _clean_document_file(self, item: InputFile) -> None:
        raw = _read_bytes(item.path)
        self.stats.bytes_in += len(raw)
        try:
            text = self._to_text(raw, item.kind)
        except ExtractionError as exc:
            self._skip(str(item.path), f"extraction_failed: {exc}")
            return
        is_text = item.kind == "text" or self.extractor_name == "none"
        result = self._clean_text(text, str(item.path), self.text_scorer if is_text else self.scorer)
        out_path = self.output_dir / output_name(item)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        data = result.text.encode("utf-8")
        out_path.write_bytes(data)
        self.stats.bytes_out += len(data)

    def _clean_warc(self, item: InputFile) -> None:
        from warcio.archiveiterator import ArchiveIterator
        from warcio.warcwriter import WARCWriter

        out_path = self.output_dir / item.relative
        out_path.parent.mkdir(parents=True, exist_ok=True)
        compress = item.path.name.lower().endswith(".gz")
        with open(item.path, "rb") as src, open(out_path, "wb") as dst:
            writer = WARCWriter(dst, gzip=compress)
            records = ArchiveIterator(src)
            try:
                for record in records:
                    self._clean_warc_record(record, writer, item)
            except Exception as exc:  # warcio raises assorted errors on truncated/corrupt input
                self._skip(f"{item.path}@{records.get_record_offset()}", f"corrupt_warc: {type(exc).__name__}: {exc}")
        self.stats.bytes_out += out_path.stat().st_size

    def _clean_warc_record(self, record, writer, item: InputFile) -> None:
        if not is_html_response(record):
            writer.write_record(record)  # request, metadata, warcinfo, images, PDFs ...: copied
            return
        uri = record.rec_headers.get_header("WARC-Target-URI") or ""
        source = f"{item.path}#{uri}"
        raw = record.content_stream().read()
        self.stats.bytes_in += len(raw)
        headers: dict = {}
        text = ""
        if not raw.strip():
            self._skip(source, "empty_payload")
            headers["X-Plexity-Skipped"] = "empty_payload"
        else:
            try:
                text = self._to_text(raw, "html", http_content_type(record))
            except ExtractionError as exc:
                self._skip(source, f"extraction_failed: {exc}")
                headers["X-Plexity-Skipped"] = "extraction_failed"
        if not headers:
            result = self._clean_text(text, source)
            headers = {"X-Plexity-Sentences-Kept": result.sentences_kept,
                       "X-Plexity-Sentences-Dropped": result.sentences_dropped}
            text = result.text
        # Every HTML response gets its cleaned record (empty, with the reason, when skipped).
        writer.write_record(cleaned_response_record(
            writer, text, uri=uri, date=record.rec_headers.get_header("WARC-Date"),
            source_record_id=record.rec_headers.get_header("WARC-Record-ID"), extra_headers=headers,
        ))

    def run(self, inputs: list[InputFile], progress: bool = True) -> RunStats:
        from tqdm import tqdm

        started = time.perf_counter()
        self.output_dir.mkdir(parents=True, exist_ok=True)
        try:
            for item in tqdm(inputs, desc="plexity clean", unit="file", disable=not progress or None):
                self.clean_file(item)
        finally:
            if self._dropped is not None:
                self._dropped.close()
            self.stats.seconds = time.perf_counter() - started
            self.stats.write(self.output_dir / STATS_FILE)
        return self.stats


def iter_warc_html(path: Path) -> Iterator[tuple[str, bytes, str | None]]:
    """(uri, body, content type) of every HTML response in a WARC file."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as src:
        for record in ArchiveIterator(src):
            if is_html_response(record):
                yield (record.rec_headers.get_header("WARC-Target-URI") or "",
                       record.content_stream().read(), http_content_type(record))
