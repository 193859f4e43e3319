"""Writers for ``plexity run``: `WarcResponseWriter` (cleaned documents written back as WARC
response records) and `JsonlDocumentWriter` (datatrove's JSONL writer, faster).

Both write each file under a temporary name (``.NAME.part``, `plexity_plugins.io.atomic_files`) and
rename it when the step ends without an error: a task stopped by a full disk, an error or a
kill leaves no file under its real name that looks complete (datatrove's own writers leave
the part written; the task's completion marker is what says it is whole).  A re-run of the
task writes the same temporary name again and renames it.
"""

from __future__ import annotations

from typing import IO, Callable

from datatrove.io import DataFolderLike, OutputFileManager
from datatrove.pipeline.writers import JsonlWriter
from datatrove.pipeline.writers.disk_base import DiskWriter

from .. import __version__
from ..io.atomic_files import PART_PREFIX, PART_SUFFIX
from ..cleaning.policy import WARC_HEADERS, warc_headers
from ..io.warc_writer import cleaned_response_record


class PartFileManager(OutputFileManager):
    """datatrove's OutputFileManager, but each file is opened as ``.NAME.part`` and renamed to
    NAME by `commit` (or removed by `discard`)."""

    def get_file(self, filename):
        if filename not in self._output_files:
            from fsspec.utils import infer_compression

            # (the compression follows the final name: ".part" says nothing about it)
            compression = infer_compression(filename) if self.compression == "infer" else self.compression
            self._output_files[filename] = self.fs.open(_part_name(filename), mode=self.mode,
                                                        compression=compression)
        return self._output_files[filename]

    def commit_file(self, filename: str, file) -> None:
        file.close()  # its last bytes reach the disk here, or a full disk raises
        self.fs.mv(_part_name(filename), filename)

    def commit(self) -> None:
        """Close every file and give it its name."""
        while self._output_files:
            filename, file = next(iter(self._output_files.items()))
            del self._output_files[filename]
            try:
                self.commit_file(filename, file)
            except BaseException:
                self._discard_one(filename, file)
                self.discard()
                raise

    def discard(self) -> None:
        """Close and remove every file not committed yet (never raises)."""
        while self._output_files:
            filename, file = self._output_files.popitem()
            self._discard_one(filename, file)

    def _discard_one(self, filename: str, file) -> None:
        import contextlib

        with contextlib.suppress(Exception):
            file.close()
        with contextlib.suppress(Exception):
            self.fs.rm(_part_name(filename))

    def close(self) -> None:  # (datatrove's own close: commits, as a complete step's end)
        self.commit()


def _part_name(filename: str) -> str:
    head, _, name = filename.rpartition("/")
    return f"{head}/{PART_PREFIX}{name}{PART_SUFFIX}" if head else f"{PART_PREFIX}{name}{PART_SUFFIX}"


class CompleteFilesMixin:
    """For a datatrove DiskWriter: files under temporary names, renamed only when the step ends
    without an error (`PartFileManager`)."""

    def _use_part_files(self) -> None:
        old = self.output_mg
        self.output_mg = PartFileManager(old.fs, mode=old.mode, compression=old.compression)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is None:
            self.output_mg.commit()
        else:  # an error (a full disk ...) or the generator closed early: nothing looks complete
            self.output_mg.discard()

    def close_file(self, filename):
        # a file finished by max_file_size rotation: complete, so renamed now
        if self.max_file_size > 0 and filename not in self.output_mg.get_open_files():
            filename = self._get_filename_with_file_id(filename)
        self.output_mg.commit_file(filename, self.output_mg.pop(filename))


class JsonlDocumentWriter(CompleteFilesMixin, JsonlWriter):
    """datatrove's ``JsonlWriter``, the same lines written, faster: its default adapter first
    deep-copies the whole document (``dataclasses.asdict``: a third of the writer's time per
    document) into a dict that is serialised at once and never changed; this one builds the same
    dict (text, id, metadata; empty ones left out) from the document itself.  A document with
    media, or ``expand_metadata=True``, goes through datatrove's own adapter.  Arguments as
    ``JsonlWriter``'s.  Each file is written as ``.NAME.part`` and renamed when the step
    ends without an error (`CompleteFilesMixin`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._use_part_files()

    def _default_adapter(self, document) -> dict:
        if document.media or self.expand_metadata:
            return super()._default_adapter(document)
        return {key: value for key, value in (("text", document.text), ("id", document.id),
                                              ("metadata", document.metadata)) if value}


# Metadata written as WARC headers of each record (when present), as X-Plexity-<Name>: the
# same headers `plexity clean` writes.
HEADER_FIELDS = WARC_HEADERS


class WarcResponseWriter(CompleteFilesMixin, DiskWriter):
    """Writes each Document as a WARC ``response`` record whose HTTP payload is its text
    (``text/plain; charset=utf-8``), as pyplexity's cleaned WARCs and ``plexity clean`` do.

    The record keeps the document's URL (``metadata["url"]``, else its id) and date, refers
    to the original record (``WARC-Refers-To``: the document id, a WARC-Record-ID when read
    by `WarcHtmlReader`) and carries the filter's metadata as ``X-Plexity-*`` headers.  Each
    output file starts with a ``warcinfo`` record.  With a ``.gz`` file name every record is
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
        super().__init__(output_folder, output_filename=output_filename, compression=None, adapter=adapter,
                         mode="wb", max_file_size=max_file_size)
        self._use_part_files()
        self.gzip = self.output_filename.template.endswith(".gz")
        self._warc_writers: dict[int, object] = {}

    def _writer_for(self, file_handler: IO, filename: str):
        from warcio.warcwriter import WARCWriter

        writer = self._warc_writers.get(id(file_handler))
        if writer is None or writer.out is not file_handler:
            writer = WARCWriter(file_handler, gzip=self.gzip)
            writer.write_record(writer.create_warcinfo_record(
                filename, {"software": f"plexity_plugins {__version__} (datatrove)",
                     "format": "WARC File Format 1.1", "description": "boilerplate removed by perplexity"}))
            self._warc_writers[id(file_handler)] = writer
        return writer

    def _write(self, document: dict, file_handler: IO, filename: str):
        writer = self._writer_for(file_handler, filename)
        metadata = document.get("metadata") or {}
        extra = warc_headers(metadata)
        doc_id = document.get("id")
        writer.write_record(cleaned_response_record(
            writer, document.get("text") or "", uri=metadata.get("url") or str(doc_id), date=metadata.get("date"),
            source_record_id=doc_id if str(doc_id or "").startswith("<urn:") else None, extra_headers=extra))
