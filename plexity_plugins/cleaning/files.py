"""Cleaning files on disk: text, HTML and WARC inputs (the engine of `plexity clean`)."""

from __future__ import annotations

import glob
import gzip
import itertools
import json
import logging
import os
from stat import S_ISDIR
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..io.atomic_files import AtomicFile, write_atomic
from ..extractors import DEFAULT_EXTRACTOR, ExtractionError, decode_html_counted
from ..extractors.sandbox import DEFAULT_EXTRACT_TIMEOUT, MEMORY_LIMIT, TimeLimitedExtractor, say_once
from ..errors import (ENVIRONMENT_ERRORS, ExtractionMemoryLimit, NotARegularFile, ReadError, TooLarge, Undecodable,
                      printable)
from .policy import (ALL_SENTENCES_DROPPED, CLEAN_MIN_CHARS, DROPPED, EXTRACTION_FAILED, DocumentPolicy, DroppedLog,
                     Verdict, metadata, warc_headers)
from ..io.document_files import read_document
from ..io.mhtml_files import NotMhtml, mhtml_page
from ..io.input_files import _Reads, judged_compression, open_input, wat_file
from ..io.payload_sniffing import binary_kind, looks_like_html
from ..io.read_limits import MAX_DOCUMENT_BYTES, PROGRESS_SECONDS, ReadProgress
from ..io.read_outcomes import (CLEANED_TEXT, CORRUPT_FILE, NOT_A_REGULAR_FILE, NOT_A_WARC, NOT_HTML, NOT_MHTML,
                                NOT_PAGES, PAGE_RESOURCE, PAGE_TEXT, READ_ERROR, TOO_LARGE, TRAILING_GARBAGE, TRUNCATED,
                                UNREADABLE_FILE, UNSUPPORTED_COMPRESSION, WAT_FILE, describe)
from ..io.wacz_files import WaczFile
from ..io.warc_files import WarcFile, WarcRecord
from ..scoring.scorer import PerplexityScorer, sanitize
from .settings_record import threshold_setting
from .stats import DROPPED_FILE, STATS_FILE, RunStats
from ..io.folders import unlisted_folder_message, walk
from .file_kinds import ARC_SUFFIXES, KNOWN_NAMES, html_by_bytes, kind_of, kind_of_file, saved_page_of
from ..io.warc_writer import cleaned_conversion_record, cleaned_response_record, copy_record, wet_page_headers

logger = logging.getLogger(__name__)

CLI_NAMES = {"min_chars": "--min-chars", "min_kept_fraction": "--min-kept-fraction",
             "other_languages": "--other-languages"}
NOT_TEXT = "not_text"  # a .txt file whose bytes are a PDF, an image, an archive ...


UNKNOWN_FILE_TYPE = "unknown_file_type"  # a file whose name has none of the suffixes above
KNOWN_TYPES = f"one of the {KNOWN_NAMES}, nor an HTML page by its first bytes"
GZIP_MAGIC = b"\x1f\x8b"


def unknown_file_type(path: str | os.PathLike) -> str:
    """Why a file of none of the known names is not read, in one line (`misnamed_warc`'s, for a WARC;
    `misnamed_page`'s, for a gzipped page; `dataset_file`'s, for a dataset of documents).  (A WAT is a skip of its
    own: `wat_file`.)"""
    return (misnamed_warc(path) or misnamed_page(path) or dataset_file(path) or misnamed_text(path)
            or f"not {KNOWN_TYPES}")


_TEXT_HEAD = 4096  # (what is read of such a file to tell)
_CONTROLS = {chr(c) for c in range(32)} - set("\t\n\r\f")


def misnamed_text(path: str | os.PathLike) -> str | None:
    """For a file of plain text whose name says no kind (``notes``, ``dump.out``, ``robots.txt.orig``), judged by its
    first bytes (UTF-8 text: no control character but white space, no binary format): the name that reads it; else
    None.  (It was "not one of the .txt, .text ... files", naming no way on.)"""
    head = _first_bytes(path, _TEXT_HEAD)
    if not head.strip() or binary_kind(head) is not None or head.lstrip()[:1] in (b"{", b"["):  # (JSON: a dataset?)
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # (not a character cut by the read's end)
            return None
        text = head[:exc.start].decode("utf-8")
    if any(char in _CONTROLS for char in text):
        return None
    return f"plain text by its bytes: rename it to {Path(path).name}.txt to read it"


# A dataset of documents, one a row with its text in a field (datatrove's JsonlWriter's and ParquetWriter's
# output, FineWeb's files): (suffixes, its format, the reader of it: datatrove's, each bad row counted,
# `plexity_plugins.datatrove.dataset_readers`).
_DATASETS = (((".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson", ".ndjson.gz"), "JSON lines", "JsonlDocumentReader"),
             ((".parquet",), "Parquet", "ParquetDocumentReader"))
DATASETS_HOW = "docs/datatrove.md#text-datasets"
# A ``.json`` file may be JSON lines (C4's ``c4-train.00000-of-01024.json.gz``, a Hugging Face dataset's export) or one
# JSON document (a config, a list): its bytes decide (`json_lines_of_documents`), the first line of at most
# `JSON_LINE_BYTES` decompressed, read from at most as many bytes of the file.
JSON_SUFFIXES = (".json", ".json.gz")
JSON_LINE_BYTES = 1 << 20


def dataset_file(path: str | os.PathLike, local: bool = True) -> str | None:
    """For a dataset file of documents (``part.jsonl.gz``, ``train.parquet`` by its name; ``c4-train.00000-of-01024
    .json.gz`` by its first line, `json_lines_of_documents`, where `local`: a remote file's name alone is judged),
    which neither ``plexity clean`` nor ``plexity run`` reads: what it is and the pipeline that cleans its text; else
    None."""
    name = os.path.basename(os.fspath(path)).lower()
    for suffixes, kind, reader in _DATASETS:
        if name.endswith(suffixes):
            return _dataset_says(kind, reader)
    if local and name.endswith(JSON_SUFFIXES) and json_lines_of_documents(path):
        return _dataset_says("JSON lines", "JsonlDocumentReader")
    return None


def _dataset_says(kind: str, reader: str) -> str:
    return (f"a dataset of documents ({kind}), not pages or a crawl: clean its text with datatrove, "
            f"{reader}(its folder) -> PerplexitySentenceFilter() -> a writer ({DATASETS_HOW})")


def json_lines_of_documents(path: str | os.PathLike, bound: int = JSON_LINE_BYTES) -> bool:
    """Whether a regular file (gzipped or not, by its bytes) is JSON lines of documents: its first non-blank line,
    whole within the first `bound` bytes decompressed, is a JSON object with a string ``text`` (what
    JsonlDocumentReader reads by default).  One JSON document written over several lines (``{`` alone on its first),
    a list, a line longer than `bound`: no.  At most `bound` bytes of the file are read (a FIFO: none)."""
    head = _first_bytes(path, bound)
    if head.startswith(GZIP_MAGIC):
        head = _inflated_start(head, bound) or b""
    # (a line the bound cuts is no JSON: no object ends before its closing brace)
    first = next((line for line in head.removeprefix(b"\xef\xbb\xbf").split(b"\n") if line.strip()), b"")
    try:
        row = json.loads(first)
    except (ValueError, RecursionError):  # (not UTF-8 either; nested past Python's recursion)
        return False
    return isinstance(row, dict) and isinstance(row.get("text"), str)


PAGES, DATASET = "pages", "dataset"  # (`other_input`'s answers)


def other_input(path: str | os.PathLike, local: bool = True) -> str | None:
    """What a file given to ``plexity run`` is when it is no crawl but another command's input, whatever glob took
    it: `PAGES` for an HTML page, a saved page (MHTML) or a text file by its name (``plexity clean`` cleans them),
    `DATASET` for a dataset of documents (`dataset_file`: a ``.json`` file by its first line); None for the rest,
    which the WARC reader judges by their bytes (a WARC named ``crawl.gz`` is read).  The rule a folder's files
    beside its WARC files are named by, and a glob's files are left out of the run's tasks by.  `local`: `path`
    is a local file's (else its name alone is judged)."""
    if kind_of(Path(path)) in ("html", "mhtml", "text"):
        return PAGES
    return DATASET if dataset_file(path, local) else None


def misnamed_warc(path: str | os.PathLike) -> str | None:
    """For a WARC by its bytes named otherwise (``crawl.gz`` gzipped, ``crawl`` not: a crawler's or a
    download's name): what it is and the name to give it; else None.  Only a regular file's first
    bytes are read (a FIFO would wait for ever)."""
    path = Path(path)
    try:
        with open_input(path) as f:
            head = f.read(64)
            if head.startswith(GZIP_MAGIC):
                f.seek(0)
                with gzip.GzipFile(fileobj=f) as inflated:
                    head = GZIP_MAGIC + inflated.read(16)
    except (OSError, EOFError, zlib.error, NotARegularFile):
        head = b""
    if head.startswith(GZIP_MAGIC + b"WARC/1."):
        return f"a gzipped WARC by its bytes: rename it to {_renamed(path, '.warc.gz')} to read it"
    if head.startswith(b"WARC/1."):
        return f"a WARC by its bytes: rename it to {_renamed(path, '.warc')} to read it"
    return None


def misnamed_page(path: str | os.PathLike) -> str | None:
    """For a gzipped HTML page whose name says no kind (``about.gz``, ``page``: a download saved as the server
    compressed it): what it is and the name to give it; else None (it was "not one of the ... files", naming no way
    on, where a gzipped WARC so named is told its name)."""
    if not _first_bytes(path, len(GZIP_MAGIC)).startswith(GZIP_MAGIC):  # (a folder's images: 2 bytes read of each)
        return None
    inflated = _inflated_start(_first_bytes(path))
    if inflated is not None and html_by_bytes(inflated):
        return f"a gzipped HTML page by its bytes: rename it to {_renamed(Path(path), '.html.gz')} to read it"
    return None


def renamed_for_compression(path: Path, head: bytes) -> str:
    """For a page or text file whose name and bytes disagree on gzip, `head` its first bytes: the name that reads
    it, as ``: rename it to NAME to read it``; "" where renaming would not make it text.  Gzip bytes named without
    ``.gz`` (``index.html``: a download saved as the server compressed it) -> ``index.html.gz``; bytes not gzipped
    named ``.gz`` (``page.html.gz``: a download a tool decompressed, keeping its name) -> ``page.html``.  (The skip
    said "its bytes are gzip", or "not a gzipped file", and no more.)"""
    name, gzipped = path.name, path.name.lower().endswith(".gz")
    if head.startswith(GZIP_MAGIC) and not gzipped:
        inflated, renamed = _inflated_start(head), name + ".gz"
    elif not head.startswith(GZIP_MAGIC) and gzipped:
        inflated, renamed = head, name[:-len(".gz")]
    else:
        return ""
    readable = inflated and binary_kind(inflated) is None and kind_of(path.with_name(renamed)) == kind_of(path)
    return f": rename it to {renamed} to read it" if readable else ""  # (.xhtml.gz, .mhtml.gz are not read)


def _first_bytes(path: str | os.PathLike, size: int = 65536) -> bytes:
    """A regular file's first `size` bytes; b"" for what cannot be read or is no regular file (a FIFO waits)."""
    try:
        with open_input(Path(path)) as f:
            return f.read(size)
    except (OSError, NotARegularFile):
        return b""


def _inflated_start(data: bytes, size: int = 4096) -> bytes | None:
    """The first `size` bytes the start of a gzip stream, `data`, inflates to; None where it does not inflate."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, size)
    except zlib.error:
        return None


def _renamed(path: Path, suffix: str) -> str:
    stem = path.name[:-len(".gz")] if path.name.lower().endswith(".gz") else path.name
    return stem + suffix


@dataclass(frozen=True)
class InputFile:
    path: Path
    relative: Path  # where its output goes, relative to the output directory
    kind: str | None


def glob_folder(spec: str) -> Path:
    """The folder a glob searches: its path up to the first part holding a wildcard."""
    parts = Path(spec).parts
    first_magic = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    return Path(*parts[:first_magic]) if first_magic else Path(".")


def _identity_of(*path) -> tuple[int, int] | None:
    """(device, inode) of the folder at `path` (its links followed), None when there is none."""
    try:
        st = os.stat(os.path.join(*path))
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if S_ISDIR(st.st_mode) else None


def make_folders(folder: Path) -> None:
    """`folder.mkdir(parents=True, exist_ok=True)` without its recursion (one call a missing level: an output nested
    as deep as a 1,000-level input raised RecursionError)."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir(exist_ok=True)


def _files_below(folder: Path):
    """The paths of what `walk` finds below `folder` that is no folder (files, FIFOs, dangling links), in its order."""
    return (Path(dirpath) / name for dirpath, _, names in walk(folder) for name in names)


def left_out_by_glob(folder: str | os.PathLike, kinds: tuple[str, ...], what: str, out: Path | None = None,
                     looked_at: int = 10_000, shown: int = 3) -> str:
    """For a glob that matched nothing in `folder`: the files of `kinds` (`kind_of`; `what` names them) below it,
    but for those in the output folder `out` (among its first `looked_at` entries: a vast folder is no long wait),
    and how to read them, in words that follow the "matches nothing" message; "" when there are none.  (A suffix
    mistyped, ``*.warc`` for ``.warc.gz`` files, or a glob of one level for files in subfolders, left no lead.)"""
    folder = Path(folder)
    if not folder.is_dir():
        return ""
    entries = list(itertools.islice(_files_below(folder), looked_at))
    found = sorted(p for p in entries if kind_of(p) in kinds and p.is_file()
                   and (out is None or not p.resolve().is_relative_to(out)))
    if not found:
        return ""
    names = ", ".join(str(p.relative_to(folder)) for p in found[:shown]) + (", ..." if len(found) > shown else "")
    count = f"{len(found):,}{' or more' if len(entries) >= looked_at else ''}"
    return (f"; {folder} holds {count} {what} that the glob leaves out ({names}): give the folder itself to read "
            f"every one, or a glob that matches them")


def _globs_expanded(inputs: list[str | os.PathLike], out: Path | None) -> list[str | os.PathLike]:
    """`inputs`, a quoted glob that names no file (``'crawl/*.warc.gz'``, as ``plexity run`` takes one) replaced
    by what it matches, each as if named (a folder searched whole: what the glob matches inside it is left to that
    search), but for what lies in the output directory `out` (an earlier run's outputs, as a folder's search
    leaves them out); FileNotFoundError for one that matches nothing."""
    expanded: list[str | os.PathLike] = []
    for item in inputs:
        if os.path.lexists(item) or not glob.has_magic(str(item)):
            expanded.append(item)
            continue
        try:
            matches = sorted(glob.glob(str(item), recursive=True))
        except RecursionError:  # (glob's ** recurses once a level: a folder nested ~1,000 levels deep)
            raise ValueError(f"{item}: its folders are nested too deeply for a glob: give the folder itself, which "
                             f"is read whole") from None
        if not matches:
            raise FileNotFoundError(f"input {item} does not exist, and as a glob it matches no file"
                                    + left_out_by_glob(glob_folder(str(item)), ("warc", "wacz", "mhtml", "html",
                                                                                                "text"),
                                                     "file(s) plexity clean reads", out))
        matches = [Path(m) for m in matches if out is None or not Path(m).resolve().is_relative_to(out)]
        folders = {m for m in matches if m.is_dir()}
        # (a folder it matches is searched whole, as if named: what it matches inside that folder is in it already)
        expanded.extend(m for m in matches if not any(parent in folders for parent in m.parents))
    return expanded


def collect_inputs(inputs: list[str | os.PathLike], output_dir: str | os.PathLike | None = None) -> list[InputFile]:
    """Files named, and files found recursively in directories named, in a stable order.

    Raises FileNotFoundError for an input that does not exist, and ValueError when two
    inputs would write the same output, an input would be overwritten by its own output,
    or a folder named is the output directory; a file named twice (by a glob and by name) is
    read once.  The output directory itself is never searched for inputs.  Files of unknown
    kind inside a directory are returned with kind None (the caller counts the skip).  What is
    not a regular file (a FIFO, a socket, a symlink loop) is returned as found: reading it is a
    counted skip, never a hang nor an error of the run.
    """
    out = Path(output_dir).resolve() if output_dir is not None else None
    out_id = _identity_of(out) if out is not None else None
    found: list[InputFile] = []
    # A walked file's path with its links followed: its folder's own (the walk enters no folder's link, so below the
    # root's resolve() its folders are themselves), the file's link followed where it is one.  Path.resolve() of each
    # lstat-ed every folder above it: the square of the depth for a tree of pages 1,500 levels deep, 50 s.
    resolved: dict[Path, Path | None] = {}
    for item in _globs_expanded(inputs, out):
        root = Path(item)
        if root.is_dir() and out is not None and root.resolve() == out:  # (its outputs: the next run's inputs)
            raise ValueError(f"--output-dir {output_dir} is the input folder {item}: a re-run would clean this run's "
                             f"outputs too (a.txt.txt, then a.txt.txt.txt): choose another --output-dir")
        if root.is_dir():
            resolved_root = _resolved(root)
            unlisted: list = []
            for dirpath, dirnames, filenames in walk(root, unlisted):
                # (the output folder told by its inode, not by each folder's resolve(): one lstat a level above it,
                # the square of the depth, 1.1 million of them for a folder 1,500 levels deep, 43 s)
                dirnames[:] = sorted(d for d in dirnames if out_id is None or _identity_of(dirpath, d) != out_id)
                for filename in sorted(filenames):
                    path = Path(dirpath) / filename
                    found.append(InputFile(path, path.relative_to(root), kind_of_file(path)))
                    if resolved_root is not None and not path.is_symlink():
                        resolved[path] = resolved_root / found[-1].relative
            for folder, exc in unlisted:  # (said, as an unreadable file is: not passed over unsaid)
                logger.warning("%s", unlisted_folder_message(folder, exc, "the files"))
        elif os.path.lexists(root):  # a file, or a FIFO, a socket, a link that leads nowhere
            found.append(InputFile(root, Path(root.name), kind_of_file(root)))
        elif str(item) == "-":  # (the shell's way to say standard input, which `plexity score -` reads)
            raise FileNotFoundError("input - is standard input, which plexity clean does not read (it names each "
                                    "output after its input file): save it to a file named for its kind, page.html, "
                                    "page.txt or crawl.warc.gz, and give that file")
        else:
            raise FileNotFoundError(f"input {root} does not exist")
    if out is not None:
        targets: dict[Path, Path] = {}
        unique: list[InputFile] = []
        for f in found:
            if f.kind is None:
                unique.append(f)
                continue
            target = out / output_name(f)  # (`out` resolved, the name relative: the folders plexity clean makes)
            if target == (resolved[f.path] if f.path in resolved else _resolved(f.path)):
                raise ValueError(f"the output for {f.path} would overwrite it: choose another --output-dir")
            if target in targets:
                if _resolved(targets[target]) == _resolved(f.path):  # named twice (a glob and a name): once
                    continue
                arc = next((p for p in (targets[target], f.path) if p.name.lower().endswith(ARC_SUFFIXES)), None)
                if arc is not None:  # (a cleaned ARC is a WARC, named so: beside a WARC of its name)
                    raise ValueError(f"{targets[target]} and {f.path} would both be written to {target} (an ARC "
                                     f"file's output is a WARC): rename {arc} (or clean it into another --output-dir)")
                raise ValueError(f"{targets[target]} and {f.path} would both be written to {target}: "
                                 f"give their common parent directory as the input instead")
            targets[target] = f.path
            unique.append(f)
        found = unique
    return found


def _resolved(path: Path) -> Path | None:
    """`path` with its links followed, or None where they lead nowhere (a symlink loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # (3.11 raises RuntimeError for a loop)
        return None


def text_file_content(text: str) -> str:
    """A cleaned text as its ``.txt`` output holds it: ending with a newline, as a text file does (without one,
    ``cat cleaned/*.txt`` joined one file's last sentence and the next one's first into one line, and ``wc -l``
    missed a line); an empty text (a document dropped) stays an empty file."""
    return text if not text or text.endswith("\n") else text + "\n"


def output_name(item: "InputFile") -> Path:
    """Where an input's output goes, relative to the output directory (an ARC file's: the WARC of its records,
    ``crawl.arc.gz`` -> ``crawl.warc.gz``)."""
    if item.kind == "wacz":  # (a folder: a cleaned WARC in it for each WARC in the WACZ, `FileCleaner._clean_wacz`)
        return item.relative
    if item.kind != "warc":
        return Path(str(item.relative) + ".txt")
    name = item.relative.name
    arc = next((suffix for suffix in ARC_SUFFIXES if name.lower().endswith(suffix)), None)
    return item.relative.with_name(name[:-len(arc)] + ".warc" + (".gz" if arc.endswith(".gz") else "")) if arc \
        else item.relative


EARLIER_FILES = 100_000


class EarlierRun:
    """What an earlier run left in an output folder, so that a run into it says what is not its own.

    Made before the run: the files there then (less the run's own stats and log).  An earlier
    run's `DROPPED_FILE` is removed when this run writes none: beside this run's stats it would read
    as this run's log.  `note` after the run: the files it did not rewrite, in one line, or None."""

    def __init__(self, folder: Path, write_dropped: bool):
        from ..io.output_lock import LOCK_NAME

        self.folder = Path(folder)
        # (the first EARLIER_FILES only: an output folder may be a big tree of other things)
        found = itertools.islice((path for path in _files_below(self.folder) if path.is_file()), EARLIER_FILES)
        self.files = {path: _identity(path) for path in found
                      if path.relative_to(self.folder).as_posix() not in (STATS_FILE, DROPPED_FILE, LOCK_NAME)}
        log = self.folder / DROPPED_FILE
        self.removed_log = not write_dropped and log.is_file()
        if self.removed_log:
            log.unlink()

    def note(self) -> str | None:
        left = sorted(path for path, identity in self.files.items() if _identity(path) == identity)
        if not left and not self.removed_log:
            return None
        parts = []
        if left:
            example = left[0].relative_to(self.folder)
            many = "at least " if len(self.files) >= EARLIER_FILES - 3 else ""
            files = f"{many}{len(left)} file{'s' if len(left) > 1 else ''}"
            parts.append(f"{self.folder} also holds {files} this run did not write (an earlier run's? e.g. "
                         f"{example}): {STATS_FILE} counts this run only")
        if self.removed_log:
            parts.append(f"the earlier run's {DROPPED_FILE} was removed (this run wrote none: --write-dropped)")
        return "note: " + "; ".join(parts)


def _identity(path: Path) -> tuple[int, int] | None:
    """A file's inode and modification time (a file rewritten by rename has another), or None if gone."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def progress_bar(inputs: list[InputFile]):
    """`inputs` under tqdm's bar on a terminal; as they are elsewhere, without importing tqdm (~40 ms of each
    `plexity clean`'s start, for a bar tqdm shows only on a terminal: its ``disable=None``)."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return inputs
    from tqdm import tqdm

    return tqdm(inputs, desc="plexity clean", unit="file")


class FileCleaner:
    """Cleans input files into an output directory and counts everything in `stats`.

    Every input ends in exactly one place: a WARC record becomes a cleaned record (the
    policy's verdict in its ``X-Plexity-*`` headers), a copied record (not a response, not
    HTML), an empty marker record (``X-Plexity-Skipped: <reason>``) or, cut short, a count
    alone (``truncated``); a damaged file is named in ``damaged_files`` ("truncated after
    record N"); a file that is not a WARC writes nothing and is counted (``not_a_warc``).

    Args:
        scorer: the shared PerplexityScorer.
        output_dir: where outputs, the stats JSON and (optionally) dropped sentences go.
        extractor: one of `plexity_plugins.extractors.EXTRACTORS` for HTML (default "learned");
            text files are always text.
        threshold, annotate: as in `PerplexityScorer.clean`.
        write_dropped: also write every dropped sentence and skipped document, with its
            reason, to ``plexity-dropped.jsonl`` in the output directory.
        text_scorer: the scorer for unextracted text (.txt inputs, extractor "none").
        page_text_scorer: the scorer for a page's whole visible text (a WET record's); by
            default `text_scorer`.
        min_chars, min_kept_fraction, other_languages: the document policy
            (`plexity_plugins.cleaning.policy.DocumentPolicy`); by default nothing is dropped.
        max_document_bytes: a larger document (decompressed: .gz files, WARC payloads) is
            skipped as ``too_large``; reading stops at the cap.
        extract_timeout: seconds allowed to extract one HTML document; a longer one is
            stopped and skipped as ``extraction_failed`` (0 or None: no limit).  Decoding a WARC
            payload has the same limit (``undecodable`` past it).
        extract_memory: bytes of resident memory (RSS) the extraction child may hold (or a size,
            ``"512MiB"``); past it the page is skipped as ``memory_limit``.  None: the
            ``PLEXITY_EXTRACT_MEMORY`` environment variable, else 768 MiB; 0: no ceiling.
    """

    def __init__(self, scorer: PerplexityScorer, output_dir: Path, extractor: str = DEFAULT_EXTRACTOR,
                 threshold: float | None = None, annotate: bool = False, write_dropped: bool = False,
                 text_scorer: PerplexityScorer | None = None, page_text_scorer: PerplexityScorer | None = None,
                 min_chars: int = CLEAN_MIN_CHARS,
                 min_kept_fraction: float = 0.0, other_languages: str = "keep",
                 max_document_bytes: int = MAX_DOCUMENT_BYTES,
                 extract_timeout: float | None = DEFAULT_EXTRACT_TIMEOUT,
                 extract_memory: int | str | None = None):
        self.scorer = scorer
        # Text inputs are not extracted, so they may want another method than extracted HTML.
        self.text_scorer = text_scorer or scorer
        self.page_text_scorer = page_text_scorer or self.text_scorer
        self.output_dir = Path(output_dir)
        self.extractor_name = extractor
        # (in a child process that is stopped past the time limit: `plexity_plugins.extractors.sandbox`)
        self.extract = TimeLimitedExtractor(extractor, timeout=extract_timeout, memory_limit=extract_memory)
        say_once(self.extract.memory_note, logger.warning)  # (the job's memory lowered its default ceiling ...)
        self.threshold = threshold
        self.annotate = annotate
        self.max_document_bytes = max_document_bytes
        self.read_timeout = extract_timeout
        self.policy = DocumentPolicy(scorer, threshold=threshold, annotate=annotate, min_chars=min_chars,
                                     min_kept_fraction=min_kept_fraction, other_languages=other_languages)
        each = threshold_setting(scorer) if threshold is None else None  # (a map's: each language's own)
        self.stats = RunStats(model=scorer.model_name, threshold=threshold or scorer.threshold,
                              thresholds=each if isinstance(each, dict) else None,
                              method=scorer.method, extractor=extractor, annotate=annotate,
                              max_document_bytes=max_document_bytes)
        if self.text_scorer is not scorer:
            self.stats.text_method = self.text_scorer.method
            self.stats.text_threshold = threshold or self.text_scorer.threshold
        if self.page_text_scorer is not scorer:
            self.stats.page_text_method = self.page_text_scorer.method
            self.stats.page_text_threshold = threshold or self.page_text_scorer.threshold
        if write_dropped:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        self.dropped = DroppedLog(self.output_dir / DROPPED_FILE if write_dropped else None)
        self.failure = EXTRACTION_FAILED  # why the last document without a verdict had none
        self.progress_seconds = PROGRESS_SECONDS  # a line this often while one WARC is read (`run`'s progress)
        self._progress_say = None

    # -- bookkeeping ----------------------------------------------------------------

    def _skip(self, source: str, reason: str, detail: str = "") -> None:
        logger.warning("skipped %s: %s%s", source, reason, f" ({detail})" if detail else "")
        self.stats.skip(reason)
        self.dropped.document(source, reason, detail)

    def _skip_file(self, source: str, reason: str, detail: str = "") -> None:
        logger.warning("skipped %s: %s%s", source, reason, f" ({detail})" if detail else "")
        self.stats.skip_file(reason, f"{source}: {detail or reason}")
        self.dropped.document(source, reason, detail)

    def _judge(self, raw: bytes, kind: str, source: str, content_type: str | None = None) -> Verdict | None:
        """The policy's verdict on a document's bytes (extracted first if HTML), or None
        when its HTML could not be parsed (counted).  A cleaned WARC's record read back
        (CLEANED_TEXT) is text an extractor already cut down: not extracted, and cleaned with
        the method for the extractor's text, as it was the first time."""
        is_text = kind in ("text", PAGE_TEXT, CLEANED_TEXT) or self.extractor_name == "none"
        try:
            if is_text:
                text, replaced = sanitize(raw)
                if kind not in ("text", PAGE_TEXT, CLEANED_TEXT) and not getattr(self, "_said_markup", False) \
                        and looks_like_html(text):  # (--extractor none: the page is cleaned as text, tags and all)
                    self._said_markup = True
                    logger.warning("%s is an HTML page, and --extractor none cleans it as text, markup and all "
                                   "(<p>, <a href=...> in its output); leave --extractor out (learned) to extract "
                                   "its text first (said once)", source)
            else:
                html, replaced = decode_html_counted(raw, content_type)
                text = self.extract(html)
        except ENVIRONMENT_ERRORS:
            raise
        except Exception as exc:  # ExtractionError, or what a third-party extractor raises on odd HTML
            detail = str(exc) if isinstance(exc, ExtractionError) else describe(exc)
            self.failure = MEMORY_LIMIT if isinstance(exc, ExtractionMemoryLimit) else EXTRACTION_FAILED
            self._skip(source, self.failure, detail)
            return None
        self.stats.replaced_chars += replaced
        scorer = (self.page_text_scorer if kind == PAGE_TEXT else self.scorer if kind == CLEANED_TEXT
                  else self.text_scorer if is_text else self.scorer)
        self.stats.documents_page_text += kind == PAGE_TEXT
        self.stats.documents_cleaned_text += kind == CLEANED_TEXT
        self.stats.documents_text += kind == "text"
        verdict = self.policy.judge(text, input_empty=not raw.strip(), scorer=scorer)
        self.stats.add(verdict)
        self.dropped.sentences(source, verdict.result)
        if verdict.status == DROPPED:
            self.dropped.document(source, verdict.reason, self.policy.explain(verdict, CLI_NAMES))
        elif verdict.empty and verdict.empty != ALL_SENTENCES_DROPPED:  # (those sentences are each listed)
            self.dropped.document(source, verdict.empty, "its output is written empty")
        return verdict

    # -- files ------------------------------------------------------------------------

    def clean_file(self, item: InputFile) -> None:
        wat = wat_file(item.path) if item.kind is None else None
        if wat:  # (by its name: as `plexity run`'s reader skips it)
            self._skip_file(str(item.path), WAT_FILE, wat)
            return
        why = judged_compression(str(item.path), lambda: open_input(item.path)) if item.kind is None else None
        if why:  # a .warc.bz2, .warc.xz, .warc.zst
            self._skip_file(str(item.path), UNSUPPORTED_COMPRESSION, why)
            return
        page = saved_page_of(item.path) if item.kind is None else None
        if page is not None:  # (no page: named as what it is, not as a file of no kind)
            self._skip_file(str(item.path), PAGE_RESOURCE, f"a file of the page {page.name}, saved beside it in "
                                                          f"{item.path.parent.name}/ with its images, styles, scripts")
            return
        if item.kind is None:
            self._skip_file(str(item.path), UNKNOWN_FILE_TYPE, unknown_file_type(item.path))
            return
        if item.kind == "warc":
            self._clean_warc(item)
        elif item.kind == "wacz":
            self._clean_wacz(item)
        else:
            self._clean_document_file(item)

    def _clean_document_file(self, item: InputFile) -> None:
        source = str(item.path)
        content_type = None
        try:
            if item.kind == "mhtml":  # (its page's HTML only, up to the cap: the images after it are not read)
                with open_input(item.path) as opened:
                    page = mhtml_page(_Reads(opened, source), self.max_document_bytes)
                raw, trailing, content_type = page.body, 0, page.content_type
                source = f"{source}#{page.url}" if page.url else source
            else:
                raw, trailing = read_document(item.path, self.max_document_bytes)
        except NotMhtml as exc:
            self._skip_file(source, NOT_MHTML, str(exc))
            return
        except TooLarge as exc:
            self.stats.files += 1
            self._skip(source, TOO_LARGE, str(exc))
            return
        except NotARegularFile as exc:  # a FIFO (opening it waits for ever), a socket, a device
            self._skip_file(source, NOT_A_REGULAR_FILE, str(exc))
            return
        except ReadError as exc:  # the system failed to read it (EIO), not its contents: as for a WARC
            self.stats.files += 1
            self._failed_read(source, exc)
            return
        except gzip.BadGzipFile as exc:  # (named .gz, its bytes are not: said with the name that reads it)
            self._skip_file(source, UNREADABLE_FILE, describe(exc) + renamed_for_compression(item.path,
                                                                                             _first_bytes(item.path)))
            return
        except (OSError, EOFError, zlib.error, Undecodable) as exc:  # unreadable (a symlink loop), or a damaged gzip
            self._skip_file(source, UNREADABLE_FILE, describe(exc))
            return
        self.stats.files += 1
        if trailing:  # (read as gzip and browsers read it: the stream, then the rest ignored)
            message = f"{source}: {trailing:,} bytes after the gzip stream that are not gzip, ignored"
            logger.warning("damaged file %s", message)
            self.stats.damaged_file(TRAILING_GARBAGE, message)
        binary = binary_kind(raw[:4096])
        if binary is not None:  # a PDF, an image ... named .html or .txt: never text
            self._skip(source, NOT_TEXT if item.kind == "text" else NOT_HTML,
                       f"its bytes are {binary}{renamed_for_compression(item.path, raw[:65536])}")
            return
        self.stats.bytes_in += len(raw)
        verdict = self._judge(raw, "html" if item.kind == "mhtml" else item.kind, source, content_type)
        if verdict is None:
            return
        out_path = self.output_dir / output_name(item)
        make_folders(out_path.parent)
        data = text_file_content(verdict.text if verdict.kept else "").encode("utf-8")
        write_atomic(out_path, data)  # (whole or not at all: a full disk leaves no half file)
        self.stats.bytes_out += len(data)

    def _open_counted(self, item: InputFile):
        """The input file opened, or None, counted, when it is no regular file or cannot be opened."""
        try:
            return open_input(item.path)
        except NotARegularFile as exc:
            self._skip_file(str(item.path), NOT_A_REGULAR_FILE, str(exc))
        except OSError as exc:
            self._skip_file(str(item.path), UNREADABLE_FILE, describe(exc))
        return None

    def _clean_warc(self, item: InputFile) -> None:
        src = self._open_counted(item)
        if src is None:
            return
        with src:
            self._clean_warc_from(src, str(item.path), self.output_dir / output_name(item),
                                  item.path.name.lower().endswith(".gz"))

    def _clean_wacz(self, item: InputFile) -> None:
        """Each WARC member of a WACZ cleaned into a WARC of its own, ``DIR/<the .wacz>/<the member>``
        (``crawl.wacz/archive/data.warc.gz``): no zip is written, so none is ever left half made."""
        src = self._open_counted(item)
        if src is None:
            return
        with src:
            wacz = WaczFile(src, str(item.path))
            try:
                for member in wacz:
                    if member.skip:
                        self._skip_file(member.name, UNREADABLE_FILE, member.skip)
                        continue
                    with member.fileobj:
                        self._clean_warc_from(member.fileobj, member.name,
                                              self.output_dir / output_name(item) / member.path, member.gzipped,
                                              member.why_ended)
            except ReadError as exc:  # (reading its directory: the disk, not the file)
                self.stats.files += 1
                self._failed_read(str(item.path), exc)
                return
        if wacz.problem is not None:  # no zip, a damaged one, or none of its members a WARC: nothing read
            self._skip_file(str(item.path), wacz.problem, wacz.problem_detail)

    def _clean_warc_from(self, src, name: str, out_path: Path, gzipped: bool, why_ended=None) -> None:
        """The WARC file `src` (named `name`) cleaned into `out_path` (gzipped or not): each record counted, a damaged
        file named.  `why_ended()`: why reading ended early though the file held no damage there, or ""."""
        writer = None
        out: AtomicFile | None = None
        failed_read: ReadError | None = None
        try:
            warc = WarcFile(src, self.max_document_bytes, self.read_timeout, name=name)
            progress = ReadProgress(src, name, self.progress_seconds, self._progress_say) \
                if self._progress_say else None
            try:
                for record in warc:
                    if progress:
                        progress.record()
                    if writer is None:  # created at the first record: a non-WARC file writes nothing
                        # (imported here, as io.warc_iterator imports warcio's reader: it imports fsspec, ~40 ms of
                        # a `plexity clean` of HTML or text files, which writes no WARC)
                        from warcio.warcwriter import WARCWriter

                        make_folders(out_path.parent)
                        out = AtomicFile(out_path)
                        writer = WARCWriter(out.file, gzip=gzipped)
                    self._clean_warc_record(record, writer, name)
            except ReadError as exc:  # the disk, not the file: the records before it are kept
                failed_read = exc
            self.stats.records += warc.records
            self.stats.records_recovered += warc.records_recovered
            self.stats.bytes_skipped += warc.bytes_skipped
            self.stats.pages_cut_by_crawler += warc.pages_cut_by_crawler
            if out is not None:
                out.commit()  # named only when whole (a full disk raises here or above)
        except BaseException:
            if out is not None:  # stopped by a full disk or an installation error: no half output
                out.discard()
            raise
        if failed_read is None and warc.problem in (NOT_A_WARC, UNSUPPORTED_COMPRESSION):
            # (the latter: a bzip2 ... WARC named .warc.gz)
            self._skip_file(name, warc.problem, warc.problem_detail)
            return
        self.stats.files += 1
        ended = why_ended() if why_ended else ""  # (a WACZ's member: its zip data damaged ...)
        if failed_read is not None:
            self._failed_read(name, failed_read)
        elif warc.problem is not None or ended:
            problem = warc.problem or CORRUPT_FILE
            detail = "; ".join(part for part in (warc.problem_detail, ended) if part)
            message = f"{name}: {detail}"
            logger.warning("damaged WARC %s", message)
            self.stats.damaged_file(problem, message)
            self.dropped.document(name, problem, detail)
        if out is not None:
            self.stats.bytes_out += out_path.stat().st_size

    def _failed_read(self, source: str, exc: ReadError) -> None:
        """A file the system failed to read (EIO), not damaged: named ``read_error`` (plexity clean exits 1 on it)."""
        logger.warning("%s", exc.strerror)
        self.stats.damaged_file(READ_ERROR, exc.strerror)
        self.dropped.document(source, READ_ERROR, exc.strerror)

    def _clean_warc_record(self, record: WarcRecord, writer, name: str) -> None:
        source = f"{name}#{record.uri}"
        if record.skip in NOT_PAGES:
            # request, metadata, warcinfo, images, PDFs ...: copied (streamed; a payload that
            # turns out damaged is taken back out of the output and counted)
            start = writer.out.tell()
            try:
                copy_record(writer, record.record)
                problem = (f"{record.short_by():,} bytes short of its Content-Length" if record.short_by()
                           else record.wrong_length())
            except ReadError:  # (the disk failed inside it: what was written of it is taken back out)
                writer.out.seek(start)
                writer.out.truncate()
                self._skip(source, READ_ERROR, "the file could not be read to the record's end")
                raise
            except ENVIRONMENT_ERRORS:
                raise
            except (EOFError, zlib.error, ValueError) as exc:
                problem = f"unreadable payload: {describe(exc)}"
            if problem:
                writer.out.seek(start)
                writer.out.truncate()
                self._skip(source, TRUNCATED, problem)
                return
            self.stats.copy(record.skip)
            return
        if record.skip == TRUNCATED:  # cut short: nothing whole to write
            self._skip(source, TRUNCATED, record.detail)
            return
        text = ""
        headers: dict = {}
        if record.skip is not None:
            self._skip(source, record.skip, record.detail)
            headers["X-Plexity-Skipped"] = record.skip
        else:
            self.stats.bytes_in += len(record.payload)
            verdict = self._judge(record.payload, record.kind, source, record.content_type)
            if verdict is None:
                headers["X-Plexity-Skipped"] = self.failure
            else:
                headers = warc_headers(metadata(verdict, self.scorer))
                text = verdict.text if verdict.kept else ""
        # Every HTML response gets its cleaned record (empty, with the reason, when skipped or dropped), every WET
        # record its cleaned WET record.
        version = record.record.rec_headers.protocol  # (its cleaned record's too: the file of one version)
        if record.record.rec_type == "conversion":
            writer.write_record(cleaned_conversion_record(
                writer, text, uri=record.uri, date=record.date, source_record_id=record.record_id,
                page_headers=wet_page_headers(record.record), extra_headers=headers, version=version))
            return
        writer.write_record(cleaned_response_record(
            writer, text, uri=record.uri, date=record.date, source_record_id=record.record_id,
            extra_headers=headers, version=version))

    def run(self, inputs: list[InputFile], progress: bool = True) -> RunStats:
        """Clean `inputs`.  The stats file is written first with ``"completed": false`` and
        rewritten at the end (each time whole, by rename): it says ``"completed": true`` only
        when every input was handled; a run stopped by a full disk or an error of the
        installation leaves it false (or, when not even that fitted on the disk, absent)."""
        started = time.perf_counter()
        # (the bar moves by files: a WARC of 1 GB held it still for minutes, and off a terminal nothing was said)
        self._progress_say = (lambda line: print(printable(f"plexity clean: {line}"), file=sys.stderr, flush=True)) \
            if progress else None
        self.output_dir.mkdir(parents=True, exist_ok=True)
        stats_path = self.output_dir / STATS_FILE
        self.stats.write(stats_path)  # "completed": false until the end
        try:
            if any(item.kind in ("html", "mhtml", "warc", "wacz") for item in inputs):
                # (its extraction child started now: an installation that cannot start it stops
                # the run here, before any page is counted as failed)
                self.extract.warm_up()
            for item in progress_bar(inputs) if progress else inputs:
                self.clean_file(item)
            self.stats.completed = True
        finally:
            self.extract.close()
            self.stats.seconds = time.perf_counter() - started
            try:
                self.dropped.close(complete=self.stats.completed)
            except OSError:  # e.g. the disk filled up as the log's last lines were written
                self.stats.completed = False
                self._write_stats_after_failure(stats_path)
                raise
            if self.stats.completed:
                self.stats.write(stats_path)
            else:
                self._write_stats_after_failure(stats_path)
        return self.stats

    def _write_stats_after_failure(self, path: Path) -> None:
        """The counts so far, ``"completed": false``; if even they do not fit on the disk, the
        file written at the start (also false) stays, and the error that stopped the run is
        the one reported."""
        try:
            self.stats.write(path)
        except OSError as exc:
            logger.warning("could not update %s: %s", path, exc)
