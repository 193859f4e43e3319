"""Reading inputs, the one way every front end does: WARC records and (gzipped) document files.

- `WarcFile` turns each record of a WARC file into one outcome: an HTML payload to clean, a
  page's text (a WET record's; a cleaned WARC's, read back), or a skip reason (`RECORD_SKIPS`);
  a file that is not a WARC, ends inside a record or turns to garbage gets a file problem
  (`FILE_PROBLEMS`) naming the record after which reading stopped.  ``plexity clean``
  (`plexity_plugins.cleaning.files`) and ``plexity run``'s `WarcHtmlReader` both read through it,
  so a record is judged the same by both.
- `read_document_file` reads a ``.html``/``.txt`` file, gzipped or not, stopping at the
  size cap (a gzip bomb is never inflated past it).

Every cap is `MAX_DOCUMENT_BYTES` unless a caller gives another (``--max-document-bytes``,
``WarcHtmlReader(max_payload_bytes=...)``).  Every loop over input bytes makes progress and is
linear in the input: decoding stops at the cap, at `MAX_GZIP_MEMBERS` members and at the
reading time limit (`DEFAULT_READ_TIMEOUT`, the extraction limit's default); resynchronising
after damage tries at most `MAX_RESYNC_CANDIDATES` false starts; a record's WARC headers, its
HTTP headers and a line between records are read up to `MAX_HEADER_BYTES` (warcio reads a line,
and a header block, whatever its length: 70 MB of header lines took 2 GB).  Only regular files are read
(`open_input`): a FIFO, socket or device is `NotARegularFile`, never opened for reading.

Payloads are decoded here, not by warcio (`http_codings` says why).

Only damage in the input becomes a skip or a file problem; an error of the installation
(`plexity_plugins.errors.ENVIRONMENT_ERRORS`) propagates, and so does a failed read of the file
(`ReadError`, ``read_error``: an EIO of the disk is not bad input of the file's kind).

The reading is in the modules of this folder, each one responsibility, lowest first:

- `read_limits`: the caps, the reading time limit (`Deadline`), the progress line of a long read;
- `read_outcomes`: the names of what reading makes of a record or a file (skip reasons, file problems);
- `payload_sniffing`: what a payload's bytes are (HTML, binary, markup, blank);
- `http_codings`: a body's Transfer-Encoding and Content-Encoding undone, bounded;
- `input_files`: an input file opened (regular files only, failed reads `ReadError`), what it is by its first
  bytes, a compression that is not read;
- `record_headers`: a record's WARC and HTTP header blocks, bounded;
- `warc_resync`: where the next record starts, after damage;
- `document_files`: a ``.html``/``.txt`` file's bytes, gunzipped, capped;
- `warc_iterator`: warcio's ArchiveIterator and record loader, adapted;
- `wacz_files`: the WARC files inside a WACZ (a zip), each a file to read, bounded against zip bombs;
- `warc_files`: `WarcFile` and `WarcRecord`, a record's outcome.

This module is where all of it was before it was split: every name it held is still importable from it
(`from plexity_plugins.io.inputs import WarcFile`, private ones too), its module imported on first use
(`__getattr__`).  New code imports a name from the module that holds it.
"""

from __future__ import annotations

import importlib

# The names this module held, by the module of this folder that holds each now.
_MOVED = {
    "read_limits": ("MAX_DOCUMENT_BYTES", "DEFAULT_READ_TIMEOUT", "DEFAULT_REMOTE_TIMEOUT", "reading_limits",
                    "MAX_GZIP_MEMBERS", "MAX_HEADER_BYTES", "_CHUNK", "Deadline", "_NO_DEADLINE", "read_capped",
                    "PROGRESS_SECONDS", "ReadProgress"),
    "read_outcomes": ("NOT_RESPONSE", "HTML_RESOURCE", "NOT_HTML", "TOO_LARGE", "EMPTY_PAYLOAD", "UNDECODABLE",
                      "TRUNCATED", "RECORD_SKIPS", "NOT_PAGES", "HTML", "PAGE_TEXT", "CLEANED_TEXT",
                      "NOT_A_REGULAR_FILE", "UNREADABLE_FILE", "UNSUPPORTED_COMPRESSION", "NOT_A_WARC",
                      "TRUNCATED_FILE", "CORRUPT_FILE", "FILE_PROBLEMS", "READ_ERROR", "TRAILING_GARBAGE", "describe"),
    "payload_sniffing": ("HTML_TYPES", "_HTML_START", "_SNIFF_BYTES", "is_blank", "is_html_type", "_SIGNATURES",
                         "_SIGNATURE_STARTS", "_BINARY_BYTES", "_BINARY_SHARE", "_HTML_STARTS", "looks_like_html",
                         "_MARKUP", "_MARKUP_BYTES", "has_markup", "binary_kind", "_wide_text"),
    "http_codings": ("_inflate", "_unbrotli", "zstd_module", "_unzstd", "_ZSTD_MAGIC", "_DECODED",
                     "MAX_CONTENT_ENCODINGS", "decode_content", "_stored_decoded", "_decode_one", "_CHUNK_SIZE",
                     "_HEX_DIGITS", "_ONE_BY_ONE", "_RUN_BYTES", "dechunk", "_regular_chunks"),
    "input_files": ("open_input", "_file_type", "_Reads", "_gunzip_head", "looks_like_warc", "_MAGIC", "what_file_is",
                    "_OTHER_COMPRESSIONS", "_NOT_READ", "unsupported_compression", "judged_compression"),
    "document_files": ("read_document_file", "read_document", "_gunzip_file"),
    "record_headers": ("http_header", "_header", "LIST_FIELDS", "header_fields", "_HeaderLines", "_STATUS_LINE",
                       "_HEADER_FIELD", "_CONTINUATION", "MAX_INTERIM_RESPONSES", "_is_interim",
                       "final_response_headers", "split_unended_headers"),
    "warc_resync": ("MAX_RESYNC_CANDIDATES", "_GAP_BYTES", "_padding_only", "_GZIP_MEMBER", "_WARC_LINE",
                    "_HEADERS_END", "_CONTENT_LENGTH", "_WARC_TYPE", "_RESYNC_BLOCK", "_MEMBER_PEEK", "_MAX_HEADERS",
                    "_inflates_to_warc", "_is_warc_member", "_is_whole_record", "_container", "_STARTS",
                    "_record_starts", "next_record_start"),
    "warc_iterator": ("_record_loader", "_truncated", "_gzip_member_decompressors", "_GAP_BLOCK", "_skip_gap",
                      "_CONTINUATION_PEEK", "_member_continues_record", "_archive_iterator"),
    "warc_files": ("MAX_PROBLEM_NOTES", "WarcRecord", "_RECORD_END", "_peek", "_check_end", "_Prefixed", "_NOT_DAMAGE",
                   "WarcFile", "WARCIO_DEFAULT_TYPE", "own_content_type", "_is_plain_text", "_broken_headers"),
}
_HOLDER = {name: module for module, names in _MOVED.items() for name in names}


def __getattr__(name: str):
    """A name this module held, from the module that holds it now: an import written before the split (and anything
    pickled then, which names a class by its module) still finds it."""
    if name in _HOLDER:
        return getattr(importlib.import_module(f"{__package__}.{_HOLDER[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOLDER})
