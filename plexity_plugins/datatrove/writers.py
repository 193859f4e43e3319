"""Writers for ``plexity run``: `WarcResponseWriter` (cleaned documents written back as WARC
response records) and `JsonlDocumentWriter` (datatrove's JSONL writer, faster).

Both write each file under a temporary name (``.NAME.part``, `plexity_plugins.io.atomic_files`) and
rename it when the step ends without an error: a task stopped by a full disk, an error or a
kill leaves no file under its real name that looks complete (datatrove's own writers leave
the part written; the task's completion marker is what says it is whole).  A re-run of the
task writes the same temporary name again and renames it.  This goes through datatrove's
public pieces: the writer's output file manager (`PartFileManager`, an ``OutputFileManager``
over the same folder) and the writer's ``__exit__``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import posixpath
from typing import IO, Callable

from datatrove.io import DataFolderLike, OutputFileManager
from datatrove.pipeline.writers import JsonlWriter
from datatrove.pipeline.writers.disk_base import DiskWriter

from .. import __version__
from ..cleaning.policy import WARC_HEADERS, warc_headers
from ..io.atomic_files import part_name
from ..io.decoding import without_surrogates
from ..io.warc_writer import (DEFAULT_WARC_VERSION, WET_PAGE_HEADERS, cleaned_conversion_record,
                               cleaned_response_record, warcinfo_record)
from .local_paths import anchored
from .readers import PAGE_TEXT_WARC_TYPE
from ..runtime.keywords import suggests_keywords


class _UnderPartNames:
    """An output folder as an ``OutputFileManager`` uses it (``open``), each file opened under its
    temporary name; the compression follows the final name (".part" says nothing about it)."""

    def __init__(self, folder):
        self.folder = folder

    def open(self, filename: str, mode: str = "wb", compression: str | None = "infer"):
        if compression == "infer":
            from fsspec.utils import infer_compression

            compression = infer_compression(filename)
        if compression == "gzip" and "b" in mode:
            # fsspec's gzip writer (isal's when installed), its header naming the final file and no time, as
            # `gzip -n` writes it: it named the temporary file (`gunzip -N 00000.jsonl.gz` made
            # `.00000.jsonl.gz.part`) and held the clock, so the same documents were other bytes at every run
            from fsspec.compression import compr

            raw = self.folder.open(part_name(filename), mode=mode, compression=None)
            return compr["gzip"](raw, mode="wb", filename=posixpath.basename(str(filename)), mtime=0)
        return self.folder.open(part_name(filename), mode=mode, compression=compression)


def close_through(file) -> None:
    """Close `file` and each file it writes through, innermost last, so that its last bytes reach the disk (or a
    full disk raises) here.  A compressed file fsspec opens (``DataFolder.open(..., compression="gzip")``: a text
    wrapper over a GzipFile over the file) leaves the file under the GzipFile open when closed: its last buffered
    bytes, the gzip trailer among them, were written when it was collected, after the file had its name and the
    task its completion marker; on a full disk that write failed unsaid, and a completed task's
    ``00001.jsonl.gz`` ended 45,056 bytes in, cut."""
    chain = []
    while file is not None and file not in chain:
        chain.append(file)
        file = getattr(file, "buffer", None) if isinstance(file, io.TextIOBase) else getattr(file, "fileobj", None)
    for each in chain:
        each.close()


class PartFileManager(OutputFileManager):
    """datatrove's ``OutputFileManager``, each file written as ``.NAME.part``: `commit` closes them
    and gives each its name (what datatrove's ``close`` does at the end of a step that ended
    well); `discard` removes them."""

    def __init__(self, folder, mode: str = "wt", compression: str | None = "infer"):
        super().__init__(_UnderPartNames(folder), mode=mode, compression=compression)
        self.folder = folder
        self.closed_by_datatrove: list[str] = []  # closed, not yet named: rotated out (max_file_size) or committing
        self._rotated: list = []  # the files datatrove's writer closed itself (rotated out)

    def pop(self, filename):
        # (datatrove's writer pops a file to close it when it starts the next one: the files under it are closed
        # by `commit`, before the names are given: `close_through`)
        self.closed_by_datatrove.append(filename)
        file = super().pop(filename)
        self._rotated.append(file)
        return file

    def commit(self) -> None:
        """Close every file and give it its name."""
        try:
            for filename in list(self.get_open_files()):
                file = super().pop(filename)
                self.closed_by_datatrove.append(filename)  # (removed by discard if it cannot be closed)
                close_through(file)  # its last bytes reach the disk here, or a full disk raises
            while self._rotated:
                close_through(self._rotated.pop(0))
            while self.closed_by_datatrove:
                filename = self.closed_by_datatrove[0]
                if self.folder.isdir(filename):  # (a move onto a folder moves into it: task completed, file lost)
                    path = self.folder.resolve_paths(filename)
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
                self.folder.mv(part_name(filename), filename)
                self.closed_by_datatrove.pop(0)
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Close and remove every file not committed yet (never raises)."""
        for filename in list(self.get_open_files()):
            file = super().pop(filename)
            self.closed_by_datatrove.append(filename)
            with contextlib.suppress(Exception):
                close_through(file)
        while self._rotated:
            with contextlib.suppress(Exception):
                close_through(self._rotated.pop(0))
        for filename in self.closed_by_datatrove:
            with contextlib.suppress(Exception):
                self.folder.rm(part_name(filename))
        self.closed_by_datatrove.clear()

    def close(self) -> None:  # (datatrove's writer closes its files at the end of a step that ended well)
        self.commit()


class CompleteFilesMixin:
    """For a datatrove ``DiskWriter``: files under temporary names (`PartFileManager`), renamed
    only when the step ends without an error."""

    def _use_part_files(self) -> None:
        old = self.output_mg
        self.output_mg = PartFileManager(self.output_folder, mode=old.mode, compression=old.compression)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is None:
            return super().__exit__(exc_type, exc_val, exc_tb)  # datatrove's: close, which commits
        self.output_mg.discard()  # an error (a full disk ...) or the generator closed early
        return None


def encodable(writer: DiskWriter, document: dict) -> dict:
    """`document` (an adapter's dict) with its lone surrogates U+FFFD (`without_surrogates`: in its id and
    metadata, which no step before cleans, a JSONL dataset's ``\\ud800`` escape made the writer raise and the
    task fail), counted in the writer's ``surrogates_replaced``.

    Args:
        writer: the step writing it (its stats count them).
        document: the dict its adapter made of the Document.
    """
    document, replaced = without_surrogates(document)
    if replaced:
        writer.stat_update("surrogates_replaced", value=replaced)
    return document


VALUES_AS_JSON = "values_as_json"  # documents with a value JSON has no type for, written as `as_json` makes it


def as_json(value):
    """A value orjson has no type for, as JSON holds it (orjson's ``default``): a date or time ISO 8601 (pandas' NaT
    null), a Decimal its digits as a str (exact), bytes as text (UTF-8, each other byte ``\\xNN``), a timedelta its
    seconds, a set a list, a numpy value or array as Python's, anything else its ``str``.  A Parquet dataset's
    decimal, binary or duration column, read by datatrove's ParquetReader, stopped the task: "Type is not JSON
    serializable: decimal.Decimal"."""
    import datetime
    import decimal

    import numpy as np

    if isinstance(value, (datetime.date, datetime.time)):
        return None if value != value else value.isoformat()  # (NaT is not equal to itself)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else np.datetime_as_string(value)
    if isinstance(value, (np.generic, np.ndarray)):
        item = value.tolist()
        return item if not isinstance(item, (bytes, decimal.Decimal)) else as_json(item)
    return str(value)


def writer_settings(writer: DiskWriter, fmt: str) -> dict:
    from .run_settings import folder_name, function_code, users_function

    settings = {"format": fmt, "output": folder_name(writer.output_folder),
                "output_filename": writer.output_filename.template, "max_file_size": writer.max_file_size}
    if users_function(getattr(writer, "adapter", None)):  # (what each document is written as: another run's output)
        settings["functions"] = {"adapter": function_code(writer.adapter)}
    return settings


@suggests_keywords
class JsonlDocumentWriter(CompleteFilesMixin, JsonlWriter):
    """datatrove's ``JsonlWriter``, the same lines written, faster: its default adapter first
    deep-copies the whole document (``dataclasses.asdict``: a third of the writer's time per
    document) into a dict that is serialised at once and never changed; this one builds the same
    dict (text, id, metadata; empty ones left out) from the document itself.  A document with
    media, or ``expand_metadata=True``, goes through datatrove's own adapter.  Arguments as
    ``JsonlWriter``'s.  Each file is written as ``.NAME.part`` and renamed when the step
    ends without an error (`CompleteFilesMixin`)."""

    def __new__(cls, *args, **kwargs):
        # Not datatrove's check of JsonlWriter's orjson (`PipelineStep.__new__`): it reads the metadata of every
        # installed distribution, ~40 ms of CPU in each process that makes or unpickles the step.  Importing
        # this package checked that orjson can be imported (`require_extra`): without it nothing runs.
        return object.__new__(cls)

    def __init__(self, output_folder: DataFolderLike, *args, **kwargs):
        super().__init__(anchored(output_folder), *args, **kwargs)  # (absolute: `local_paths`)
        self._use_part_files()

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`)."""
        return writer_settings(self, "jsonl")

    def _write(self, document: dict, file_handler: IO, filename: str):
        document = encodable(self, document)
        try:
            super()._write(document, file_handler, filename)
        except TypeError:  # (nothing written: orjson makes the whole line first)
            import orjson

            # (a value datatrove's writer has no JSON for: a Parquet decimal, binary or duration column)
            file_handler.write(orjson.dumps(document, option=orjson.OPT_APPEND_NEWLINE, default=as_json))
            self.stat_update(VALUES_AS_JSON)

    def _default_adapter(self, document) -> dict:
        if document.media or self.expand_metadata:
            return super()._default_adapter(document)
        return {key: value for key, value in (("text", document.text), ("id", document.id),
                                              ("metadata", document.metadata)) if value}


# Metadata written as WARC headers of each record (when present), as X-Plexity-<Name>: the
# same headers `plexity clean` writes.
HEADER_FIELDS = WARC_HEADERS


@suggests_keywords
class WarcResponseWriter(CompleteFilesMixin, DiskWriter):
    """Writes each Document as a WARC ``response`` record whose HTTP payload is its text
    (``text/plain; charset=utf-8``), as pyplexity's cleaned WARCs and ``plexity clean`` do.

    The record keeps the document's URL (``metadata["url"]``, else its id) and date, refers
    to the original record (``WARC-Refers-To``: the document id, a WARC-Record-ID when read
    by `WarcHtmlReader`) and carries the filter's metadata as ``X-Plexity-*`` headers, and on every
    record ``X-Plexity-Payload: text`` (`plexity_plugins.io.warc_writer.TEXT_MARKER`), whatever steps
    came before: read back by `WarcHtmlReader` and ``plexity clean`` as text, not as a crawl's page.  Each
    output file starts with a ``warcinfo`` record.  A WET record's text is written as WET holds it
    (`plexity_plugins.io.warc_writer.cleaned_conversion_record`: a ``conversion`` record of text/plain
    still referring to the page's response record).  With a ``.gz`` file name every record is
    its own gzip member (the usual ``.warc.gz`` layout, readable record by record).

    Args:
        output_folder: a str, tuple or DataFolder where the WARC files go
        output_filename: file name template (``${rank}`` is the task), default
            ``${rank}.warc.gz``; a name without ``.gz`` writes uncompressed WARC
        adapter: a function (self, Document) -> dict with ``text``, ``id``, ``metadata``
        max_file_size: start a new file (000_, 001_ ...) beyond this many bytes (-1: never)

    Each file is written as ``.NAME.part`` and renamed when the step ends without an error.
    """

    default_output_filename: str = "${rank}.warc.gz"
    name = "🗄 WARC"

    def __init__(self, output_folder: DataFolderLike, output_filename: str = None, adapter: Callable = None,
                 max_file_size: int = -1):
        # warcio compresses record by record itself, so the file is opened uncompressed
        super().__init__(anchored(output_folder), output_filename=output_filename, compression=None, adapter=adapter,
                         mode="wb", max_file_size=max_file_size)
        self._use_part_files()
        self.gzip = self.output_filename.template.endswith(".gz")
        self._warc_writers: dict[int, object] = {}

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`)."""
        return writer_settings(self, "warc")

    def _writer_for(self, file_handler: IO, filename: str):
        from warcio.warcwriter import WARCWriter

        writer = self._warc_writers.get(id(file_handler))
        if writer is None or writer.out is not file_handler:
            # (WARC/1.1 as the warcinfo says, each record: their documents' source records are not here to match)
            writer = WARCWriter(file_handler, gzip=self.gzip, warc_version=DEFAULT_WARC_VERSION)
            writer.write_record(warcinfo_record(
                writer, filename, {"software": f"plexity_plugins {__version__} (datatrove)",
                     "format": "WARC File Format 1.1", "description": "boilerplate removed by perplexity"}))
            self._warc_writers[id(file_handler)] = writer
        return writer

    def _write(self, document: dict, file_handler: IO, filename: str):
        writer = self._writer_for(file_handler, filename)
        document = encodable(self, document)
        metadata = document.get("metadata") or {}
        extra = warc_headers(metadata)
        doc_id = document.get("id")
        record_id = doc_id if str(doc_id or "").startswith("<urn:") else None
        uri, text, date = metadata.get("url") or str(doc_id), document.get("text") or "", metadata.get("date")
        if metadata.get("warc_type") == PAGE_TEXT_WARC_TYPE or any(metadata.get(k) for k in WET_PAGE_HEADERS.values()):
            # a WET record's text (or a cleaned one's, read back): written as WET holds it
            page_headers = {name: metadata[key] for name, key in WET_PAGE_HEADERS.items() if metadata.get(key)}
            writer.write_record(cleaned_conversion_record(writer, text, uri=uri, date=date, source_record_id=record_id,
                                                          page_headers=page_headers, extra_headers=extra))
            return
        writer.write_record(cleaned_response_record(writer, text, uri=uri, date=date, source_record_id=record_id,
                                                    extra_headers=extra))
