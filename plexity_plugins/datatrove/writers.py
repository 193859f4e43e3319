"""Writers for ``plexity run``: `WarcResponseWriter` (cleaned documents written back as WARC
response records) and `JsonlDocumentWriter` (datatrove's JSONL writer, faster)."""

from __future__ import annotations

from typing import IO, Callable

from datatrove.io import DataFolderLike
from datatrove.pipeline.writers import JsonlWriter
from datatrove.pipeline.writers.disk_base import DiskWriter

from .. import __version__
from ..policy import WARC_HEADERS, warc_headers
from ..warc import cleaned_response_record


class JsonlDocumentWriter(JsonlWriter):
    """datatrove's ``JsonlWriter``, the same lines written, faster: its default adapter first
    deep-copies the whole document (``dataclasses.asdict``: a third of the writer's time per
    document) into a dict that is serialised at once and never changed; this one builds the same
    dict (text, id, metadata; empty ones left out) from the document itself.  A document with
    media, or ``expand_metadata=True``, goes through datatrove's own adapter.  Arguments as
    ``JsonlWriter``'s."""

    def _default_adapter(self, document) -> dict:
        if document.media or self.expand_metadata:
            return super()._default_adapter(document)
        return {key: value for key, value in (("text", document.text), ("id", document.id),
                                              ("metadata", document.metadata)) if value}


# Metadata written as WARC headers of each record (when present), as X-Plexity-<Name>: the
# same headers `plexity clean` writes.
HEADER_FIELDS = WARC_HEADERS


class WarcResponseWriter(DiskWriter):
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
    """

    default_output_filename: str = "${rank}.warc.gz"
    name = "🗄 WARC"

    def __init__(self, output_folder: DataFolderLike, output_filename: str = None, adapter: Callable = None,
                 max_file_size: int = -1):
        # warcio compresses record by record itself, so the file is opened uncompressed
        super().__init__(output_folder, output_filename=output_filename, compression=None, adapter=adapter,
                         mode="wb", max_file_size=max_file_size)
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
