"""`WarcHtmlReader`: HTML responses of WARC files as datatrove Documents, nothing lost silently."""

from __future__ import annotations

import re
from typing import Callable

from datatrove.io import DataFileLike, DataFolderLike
from datatrove.pipeline.readers.base import BaseDiskReader
from datatrove.utils.logging import logger

from ..extract import decode_html
from ..warc import HTML_TYPES, http_content_type

# Start of a payload that is HTML although no Content-Type says so (old crawls).
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|meta|title)\b", re.I | re.S)
MAX_PAYLOAD_BYTES = 50_000_000


class TruncatedWarc(EOFError):
    """The WARC file ends inside a record (a cut gzip member or a short payload)."""


def _checked_archive_iterator(fileobj):
    """warcio's ArchiveIterator, but raising TruncatedWarc where warcio silently stops at a
    truncated last gzip member."""
    from warcio.archiveiterator import ArchiveIterator

    class CheckedArchiveIterator(ArchiveIterator):
        def close(self):
            decompressor = self.reader.decompressor if self.reader is not None else None
            truncated = decompressor is not None and not getattr(decompressor, "eof", True)
            super().close()
            if truncated:
                raise TruncatedWarc("the last gzip member is truncated")

    return CheckedArchiveIterator(fileobj)


def _is_html(content_type: str | None, identified: str | None, head: bytes) -> bool:
    declared = (content_type or identified or "").lower()
    if declared.strip():
        return any(t in declared for t in HTML_TYPES)
    return bool(_HTML_START.match(head[:4096]))


class WarcHtmlReader(BaseDiskReader):
    """Reads the HTML response records of WARC files (``.warc``, ``.warc.gz``) as Documents.

    Like datatrove's ``WarcReader`` (same arguments, same Document id/url/date), but made
    for crawls that contain anything:

    - the charset comes from the HTTP Content-Type, then ``<meta charset>``, else UTF-8,
      undecodable bytes replaced (``plexity_plugins.extract.decode_html``);
    - a truncated or corrupt file (a cut gzip member, garbage) ends that file with a logged
      warning and a ``corrupt_files`` count: the records before it are kept, the task goes on;
    - every record that does not become a Document is counted by reason:
      ``skipped_not_response`` (request, metadata, warcinfo ... records),
      ``skipped_not_html`` (images, PDF, ...), ``skipped_empty_payload``,
      ``skipped_too_large``; ``records`` counts them all.

    It needs neither libmagic nor cchardet (datatrove's reader sniffs with both).

    Args:
        data_folder: a str, tuple or DataFolder: where the WARC files are
        paths_file: optionally a file with one path per line (relative to `data_folder`)
        limit: maximum number of documents to read per task (-1: all)
        skip: number of documents to skip at the start of each task's input
        file_progress / doc_progress: show progress bars
        adapter, text_key, id_key, default_metadata: as in datatrove's readers
        recursive: search `data_folder` recursively
        glob_pattern: files to read, relative to `data_folder` (default: ``*.warc`` and
            ``*.warc.gz`` files, recursively)
        shuffle_files: shuffle the files of each task's shard
        max_payload_bytes: larger HTTP payloads are skipped (``skipped_too_large``)

    Metadata: ``url``, ``date``, ``content_type``, ``charset``, ``file_path``.
    """

    name = "🕷 WARC HTML"
    _requires_dependencies = ["warcio", "w3lib"]

    def __init__(
        self,
        data_folder: DataFolderLike,
        paths_file: DataFileLike | None = None,
        limit: int = -1,
        skip: int = 0,
        file_progress: bool = False,
        doc_progress: bool = False,
        adapter: Callable = None,
        text_key: str = "text",
        id_key: str = "id",
        default_metadata: dict = None,
        recursive: bool = True,
        glob_pattern: str | None = "**/*.warc*",
        shuffle_files: bool = False,
        max_payload_bytes: int = MAX_PAYLOAD_BYTES,
    ):
        super().__init__(data_folder, paths_file, limit, skip, file_progress, doc_progress, adapter, text_key,
                         id_key, default_metadata, recursive, glob_pattern, shuffle_files)
        self.max_payload_bytes = max_payload_bytes

    def _skip(self, reason: str, filepath: str, uri: str | None) -> None:
        self.stat_update(f"skipped_{reason}")
        logger.debug(f"skipped {filepath} {uri or ''}: {reason}")

    def read_file(self, filepath: str):
        # No decompression here: warcio reads gzip member by member, so records before a
        # truncated member are still read.
        with self.data_folder.open(filepath, "rb", compression=None) as f:
            records = _checked_archive_iterator(f)
            index = 0
            while True:
                try:
                    record = next(records, None)
                    if record is None:
                        break
                    with self.track_time():
                        data = self._process_record(record, filepath)
                except Exception as exc:  # warcio/gzip raise assorted errors on corrupt input
                    self.stat_update("corrupt_files")
                    logger.warning(f"corrupt WARC {filepath} after {index} records: {type(exc).__name__}: "
                                   f"{exc}; the rest of this file is skipped")
                    break
                index += 1
                if data is None:
                    continue
                document = self.get_document_from_dict(data, filepath, index - 1)
                if document is not None:
                    yield document

    def _process_record(self, record, filepath: str) -> dict | None:
        self.stat_update("records")
        headers = record.rec_headers
        uri = headers.get_header("WARC-Target-URI")
        if record.rec_type != "response":
            self._skip("not_response", filepath, uri)
            return None
        content_type = http_content_type(record)
        stream = record.content_stream()
        body = stream.read(self.max_payload_bytes + 1)
        if len(body) > self.max_payload_bytes:
            self._skip("too_large", filepath, uri)
            return None
        if getattr(record.raw_stream, "limit", 0) > 0:  # fewer bytes than its Content-Length
            raise TruncatedWarc(f"record {uri} is truncated")
        if not _is_html(content_type, headers.get_header("WARC-Identified-Payload-Type"), body):
            self._skip("not_html", filepath, uri)
            return None
        if not body.strip():
            self._skip("empty_payload", filepath, uri)
            return None
        html, charset = decode_html(body, content_type)
        if not html.strip():
            self._skip("empty_payload", filepath, uri)
            return None
        return {
            "text": html,
            "id": headers.get_header("WARC-Record-ID"),
            "url": uri,
            "date": headers.get_header("WARC-Date"),
            "content_type": content_type,
            "charset": charset,
        }
