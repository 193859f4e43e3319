"""`JsonlDocumentReader`, `ParquetDocumentReader`: datatrove's JSONL and Parquet readers, every row a document or a
counted, named skip, a damaged file named and counted, one line's memory bounded (docs/guarantees-input.md)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import io
import json
import zlib

from datatrove.data import Media
from datatrove.io import DataFolderLike
from datatrove.pipeline.readers import JsonlReader, ParquetReader
from datatrove.utils.logging import logger
from fsspec.compression import compr
from fsspec.utils import infer_compression

from ..errors import printable
from ..io.input_files import open_input
from ..io.read_limits import MAX_DOCUMENT_BYTES, reading_limits
from ..io.read_outcomes import CORRUPT_FILE, TRUNCATED_FILE, describe
from ..runtime.keywords import suggests_keywords
from .local_paths import anchored
from .readers import REPLACED_CHARS_KEY, open_counted

# Why a row gave no document, each counted as ``skipped_<reason>`` by the reader that met it.
NOT_JSON = "not_json"  # a line that is no JSON (cut short, a BOM'd UTF-16 file, garbage)
NOT_AN_OBJECT = "not_an_object"  # a JSON line that is a list, a string, null ...: no fields
NO_TEXT = "no_text"  # its text missing, null or "" (datatrove's readers skip it, counting it nowhere)
TEXT_NOT_STR = "text_not_str"  # its text a number, a bool, a list, a dict: datatrove's reader failed on a number
BAD_MEDIA = "bad_media"  # a "media" field datatrove's reader failed on (not a list of its Media dicts)
TOO_LARGE = "too_large"  # a line longer than max_document_bytes: not held in memory
NOT_PARQUET = "not_parquet"  # a .parquet that pyarrow cannot open (no footer: cut, empty, another format)

GZIP_MAGIC, ZSTD_MAGIC = b"\x1f\x8b", b"\x28\xb5\x2f\xfd"
SKIP_CHUNK = 1 << 20  # bytes read at a time past a line over the cap


def _decompression_errors() -> tuple:
    errors = [EOFError, zlib.error, gzip.BadGzipFile]
    # (fsspec's zstd, in the order fsspec picks it: Python 3.14's, its backport, else the zstandard package)
    for module in ("compression.zstd", "backports.zstd", "zstandard"):
        try:
            errors.append(__import__(module, fromlist=["ZstdError"]).ZstdError)
            break
        except (ImportError, AttributeError):
            continue
    import lzma

    return (*errors, lzma.LZMAError)


DECOMPRESSION_ERRORS = _decompression_errors()


def _damage(exc: Exception) -> bool:
    """Whether pyarrow's `exc` says the file is damaged ("Couldn't deserialize thrift", an OSError without an errno;
    ArrowInvalid), not that the system failed to read it (an errno: EIO, which stops the task, a re-run redoes it)."""
    return not isinstance(exc, OSError) or exc.errno is None


class _CountedRows:
    """What both readers share: each row a document with a str text (bytes, of a binary column, left to the filter,
    which decodes them), or a counted, named skip; a file that cannot be read to its end counted and named."""

    def _skip(self, reason: str, filepath: str, where: str, detail: str) -> None:
        self.stat_update(f"skipped_{reason}")
        warned = self.__dict__.setdefault("_plexity_warned", set())
        if reason not in warned:  # (once per reason and task: a file of a million bad rows is one line each)
            warned.add(reason)
            logger.warning(printable(f"skipped {filepath} {where}: {detail}; such rows are counted as "
                                     f"skipped_{reason} (said once)"))

    def _text_key_hint(self, data: dict) -> str:
        """Where a row without `text_key` likely holds its text, as the argument to give: the key whose value is the
        longest string (a dataset's "content", "raw_content", "body"); "" when the key is there (an empty text) or
        no other key holds a string.  The skip said only the row's keys, not which argument reads another."""
        if self.text_key in data:
            return ""
        strings = {key: len(value) for key, value in data.items()
                   if isinstance(value, str) and value.strip() and key != self.id_key}
        if not strings:
            return ""
        likely = max(strings, key=strings.get)
        return f": if the text is in {likely!r}, give the reader text_key={likely!r}"

    def _open_raw(self, filepath: str, stack: contextlib.ExitStack):
        """The file's bytes, opened (a local one only if it is a regular file: opening a FIFO waits for ever); None,
        counted as ``not_a_regular_file`` or ``unreadable_file`` with a warning, when it cannot be."""
        def opened():
            if self.data_folder.is_local():
                return open_input(self.data_folder.resolve_paths(filepath))
            return self.data_folder.open(filepath, "rb", compression=None)

        f = open_counted(self, filepath, opened)
        return stack.enter_context(f) if f is not None else None

    def _damaged(self, filepath: str, problem: str, detail: str) -> None:
        self.stat_update("corrupt_files", f"corrupt_files_{problem}")
        logger.warning(printable(f"damaged {filepath}: {detail}"))

    def _row_document(self, data, filepath: str, where: str, id_in_file: int, replaced: int = 0):
        """The Document of one row's `data` (a dict), or None, counted (`where`: "line 5", "row 4")."""
        if not isinstance(data, dict):
            self._skip(NOT_AN_OBJECT, filepath, where, f"a JSON {type(data).__name__}, not an object")
            return None
        keys = list(data)
        document = self.get_document_from_dict(data, filepath, id_in_file)
        if document is None:
            self._skip(NO_TEXT, filepath, where, f"no text in {self.text_key!r} (its keys: {keys[:20]})"
                                                 f"{self._text_key_hint(data)}")
            return None
        if not isinstance(document.text, (str, bytes)):
            self._skip(TEXT_NOT_STR, filepath, where, f"its text is not a string ({type(document.text).__name__})")
            return None
        if len(document.text) > self.max_document_bytes:
            self._skip(TOO_LARGE, filepath, where, f"its text holds {len(document.text):,} characters, over "
                                                    f"max_document_bytes ({self.max_document_bytes:,})")
            return None
        if replaced:  # (undecodable bytes of its line, U+FFFD: counted by the filter, as WarcHtmlReader's are)
            document.metadata[REPLACED_CHARS_KEY] = replaced
        return document


@suggests_keywords
class JsonlDocumentReader(_CountedRows, JsonlReader):
    """datatrove's ``JsonlReader`` (same arguments, same Documents), made for files that hold anything.  Each line
    that is not blank becomes a Document or a skip counted as ``skipped_<reason>``, with one warning per reason and
    task naming the file and the line: ``not_json`` (not JSON, a line cut short), ``not_an_object`` (a list, a string,
    null), ``no_text`` (text missing, null or empty), ``text_not_str`` (a number, a bool, a list, a dict: datatrove's
    reader stopped the task on a number), ``bad_media``, ``too_large`` (a line over `max_document_bytes`, read in
    pieces and never held whole).  ``rows`` = ``documents`` + Σ ``skipped_*``.

    Where datatrove's reader differs: a line whose bytes are not UTF-8 is read with U+FFFD for them (counted by
    `PerplexitySentenceFilter` as ``replaced_chars``; datatrove's reader dropped the rest of the file); a UTF-8 BOM
    is read past; a JSON ``\\ud800`` escape (a lone surrogate, which orjson refuses) is read, and replaced by the
    filter and the writers; a compressed file is read by its first bytes (gzip, zstd, or none) whatever its name
    says; a file cut short or damaged inside its compression keeps the documents before the damage and is counted
    in ``corrupt_files`` and ``corrupt_files_truncated`` / ``corrupt_files_corrupt`` with a warning naming it and
    the line (datatrove's reader stopped the task); one that cannot be opened is counted as ``unreadable_file``.

    The other arguments are datatrove's ``JsonlReader``'s.

    Args:
        data_folder: a str, tuple or DataFolder: where the JSONL files are
        max_document_bytes: a longer line is skipped (``skipped_too_large``) without being held in memory; bytes or
            a size (``"50MB"``); default 50 MB, as ``plexity clean --max-document-bytes``
    """

    name = "🐿 Jsonl (counted)"

    def __init__(self, data_folder: DataFolderLike, *args, max_document_bytes: int | str = MAX_DOCUMENT_BYTES,
                 **kwargs):
        super().__init__(anchored(data_folder), *args, **kwargs)
        self.max_document_bytes, _ = reading_limits(max_document_bytes, None)

    def _opened(self, filepath: str, stack: contextlib.ExitStack):
        """The file's lines as bytes (None: not opened, counted).  Its compression, where `compression` is "infer",
        is its first bytes' (gzip, zstd; else its name's, .bz2, .xz ...: a .gz that is not gzip is read as it is),
        and gzip is inflated by Python's gzip, which gives every line before a damaged or cut member (fsspec's
        reader lost the last buffer's)."""
        raw = self._open_raw(filepath, stack)
        if raw is None:
            return None
        # (buffered: its first bytes peeked at, no seek, which a remote stream may not do; and fsspec's remote files,
        # S3's and HTTP's, take no limit in readline(): a TypeError at the first line)
        raw = stack.enter_context(io.BufferedReader(raw))
        kind = self.compression
        if kind == "infer":
            head = raw.peek(4)[:4]
            if head.startswith(GZIP_MAGIC):
                kind = "gzip"
            elif head == ZSTD_MAGIC:
                kind = "zstd"
            else:
                kind = infer_compression(filepath)
                kind = None if kind in ("gzip", "zstd") else kind
        if kind == "gzip":
            return stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        return stack.enter_context(compr[kind](raw, mode="rb")) if kind else raw

    def read_file(self, filepath: str):
        with contextlib.ExitStack() as stack:
            f = self._opened(filepath, stack)
            if f is None:
                return
            line_number = 0
            while True:
                try:
                    line = f.readline(self.max_document_bytes + 1)
                    if len(line) > self.max_document_bytes and not line.endswith(b"\n"):
                        line_number += 1
                        self.stat_update("rows")
                        self._pass_line(f)
                        self._skip(TOO_LARGE, filepath, f"line {line_number}",
                                   f"a line over max_document_bytes ({self.max_document_bytes:,} bytes)")
                        continue
                except DECOMPRESSION_ERRORS as exc:
                    problem = TRUNCATED_FILE if isinstance(exc, EOFError) else CORRUPT_FILE
                    self._damaged(filepath, problem, f"{describe(exc)} after line {line_number}: the lines before "
                                                     f"it were read")
                    return
                if not line:
                    return
                line_number += 1
                if not line.strip():  # (a blank line, a trailing CR: no row)
                    continue
                self.stat_update("rows")
                with self.track_time():
                    document = self._line_document(line, filepath, line_number)
                if document is not None:
                    yield document

    @staticmethod
    def _pass_line(f) -> None:
        """Read past the rest of a line over the cap, a piece at a time."""
        while True:
            piece = f.readline(SKIP_CHUNK)
            if not piece or piece.endswith(b"\n"):
                return

    def _line_document(self, line: bytes, filepath: str, line_number: int):
        import orjson

        if line_number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        replaced = 0
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            # (orjson refuses a lone surrogate's escape and bytes that are not UTF-8: Python's json reads both)
            text = line.decode("utf-8", "replace")
            replaced = text.count("\ufffd") - line.count("\ufffd".encode())
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                self._skip(NOT_JSON, filepath, f"line {line_number}", f"not JSON ({exc}; it starts {text[:40]!r})")
                return None
        if isinstance(data, dict) and data.get("media"):
            why = self._decoded_media(data)
            if why:
                self._skip(BAD_MEDIA, filepath, f"line {line_number}", why)
                return None
        # (the id datatrove's reader gives a row without one: the file's path and the line's index, blank lines too)
        return self._row_document(data, filepath, f"line {line_number}", line_number - 1, replaced)

    @staticmethod
    def _decoded_media(data: dict) -> str | None:
        """Decode the row's media bytes as datatrove's reader does; why it cannot, else None."""
        try:
            for media in data["media"]:
                if media.get("media_bytes") is not None:
                    media["media_bytes"] = base64.decodebytes(media["media_bytes"].encode("ascii"))
                Media(**media)
        except (TypeError, KeyError, AttributeError, ValueError, binascii.Error) as exc:
            return f"its media cannot be read ({type(exc).__name__}: {exc})"
        return None


@suggests_keywords
class ParquetDocumentReader(_CountedRows, ParquetReader):
    """datatrove's ``ParquetReader`` (same arguments, same Documents), every row a Document or a skip counted as
    ``skipped_<reason>`` (``no_text``, ``text_not_str``: a number column, a list; ``too_large``: a text over
    `max_document_bytes`), with one warning per reason and task naming the file and the row.  A file pyarrow cannot
    open (empty, cut short: no footer, not Parquet) is counted in ``corrupt_files`` and ``corrupt_files_not_parquet``,
    one damaged further on in ``corrupt_files_corrupt`` (its rows before the damage kept), each with a warning naming
    it: datatrove's reader stopped the task.  Memory: pyarrow reads `batch_size` rows (1,000) at a time, whole; rows
    of megabytes want a smaller `batch_size`.

    The other arguments are datatrove's ``ParquetReader``'s.

    Args:
        data_folder: a str, tuple or DataFolder: where the Parquet files are
        max_document_bytes: a row whose text is longer (in characters, or bytes of a binary column) is skipped
            (``skipped_too_large``); bytes or a size (``"50MB"``); default 50 MB
    """

    name = "📒 Parquet (counted)"

    def __init__(self, data_folder: DataFolderLike, *args, max_document_bytes: int | str = MAX_DOCUMENT_BYTES,
                 **kwargs):
        super().__init__(anchored(data_folder), *args, **kwargs)
        self.max_document_bytes, _ = reading_limits(max_document_bytes, None)

    def read_file(self, filepath: str):
        import pyarrow as pa
        import pyarrow.parquet as pq

        with contextlib.ExitStack() as stack:
            f = self._open_raw(filepath, stack)
            if f is None:
                return
            try:
                pqf = pq.ParquetFile(f)
            except (pa.ArrowException, OSError) as exc:
                if not _damage(exc):
                    raise
                self._damaged(filepath, NOT_PARQUET, f"not a Parquet file pyarrow can open ({exc}): nothing read")
                return
            with pqf:
                names = pqf.schema_arrow.names
                # (datatrove's column list names a text or id column the file may not have: pyarrow refused it)
                columns = None if self.read_metadata else [c for c in (self.text_key, self.id_key) if c in names]
                row = read = 0  # (rows; documents, which datatrove's reader numbers a row without an id by)
                batches = pqf.iter_batches(batch_size=self.batch_size, columns=columns)
                while True:
                    try:
                        batch = next(batches, None)
                    except (pa.ArrowException, OSError) as exc:
                        if not _damage(exc):
                            raise
                        self._damaged(filepath, CORRUPT_FILE, f"{type(exc).__name__}: {exc} after row {row}: the "
                                                              f"rows before it were read")
                        return
                    if batch is None:
                        return
                    documents = []
                    with self.track_time("batch"):
                        for data in batch.to_pylist():
                            self.stat_update("rows")
                            document = self._row_document(data, filepath, f"row {row}", read)
                            row += 1
                            if document is not None:
                                documents.append(document)
                                read += 1
                    yield from documents
