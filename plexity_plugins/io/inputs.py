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

Payloads are decoded here, not by warcio: warcio's Content-Encoding decoding inflates without a
limit, hides a corrupt gzip body (it writes to stderr and returns what it had) and breaks on
brotli >= 1.2 (it sets ``unused_data`` on the decompressor, which brotli 1.2's no longer allows),
which used to end the reading of the whole file at the first ``Content-Encoding: br`` record.

Only damage in the input becomes a skip or a file problem; an error of the installation
(`plexity_plugins.errors.ENVIRONMENT_ERRORS`) propagates, and so does a failed read of the file
(`ReadError`, ``read_error``: an EIO of the disk is not bad input of the file's kind).
"""

from __future__ import annotations

import gzip
import importlib
import io
import operator
import os
import re
import shlex
import stat
import time
import zlib
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

from ..errors import (ENVIRONMENT_ERRORS, InstallationError, NotARegularFile, ReadError, ResyncGaveUp, TooLarge,
                      TooSlow, Undecodable, printable)
from .warc_writer import is_cleaned_record

MAX_DOCUMENT_BYTES = 50_000_000  # per document, decompressed: 50 MB
DEFAULT_READ_TIMEOUT = 30.0  # seconds to decode one record's payload: the extraction time limit's default
# seconds a server may send no byte of an input read over HTTP(S) (`plexity_plugins.datatrove.remote_files`)
DEFAULT_REMOTE_TIMEOUT = 60.0


def reading_limits(max_payload_bytes, read_timeout) -> tuple[int, float | None]:
    """The caps of reading one record, checked: `max_payload_bytes` a number of bytes, 1 or more, or
    a size (``"50MB"``, as ``--max-document-bytes``); `read_timeout` seconds, 0 or more (0 or None: no
    limit).  Anything else is a ValueError naming the argument: a string cap compared with each
    payload's length skipped every record, a negative one too, as undecodable or too large."""
    from ..runtime.sizes import parse_size

    if isinstance(max_payload_bytes, str):
        try:
            max_payload_bytes = parse_size(max_payload_bytes)
        except ValueError as exc:
            raise ValueError(f"max_payload_bytes: {exc}") from None
    if isinstance(max_payload_bytes, bool) or not isinstance(max_payload_bytes, (int, float)) \
            or not max_payload_bytes >= 1 or max_payload_bytes == float("inf"):
        raise ValueError(f"max_payload_bytes must be a number of bytes, 1 or more, or a size such as '50MB', "
                         f"got {max_payload_bytes!r}")
    if read_timeout is not None and (isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float))
                                     or not read_timeout >= 0):
        raise ValueError(f"read_timeout must be 0 (no limit) or more seconds, got {read_timeout!r}")
    return int(max_payload_bytes), read_timeout
MAX_GZIP_MEMBERS = 1_000  # gzip members in one Content-Encoding: gzip body (a server sends one)
MAX_RESYNC_CANDIDATES = 100_000  # false record starts looked at before resynchronising gives up
MAX_PROBLEM_NOTES = 10  # damages a WARC file's problem_detail names one by one (then: how many more, and the last)
MAX_HEADER_BYTES = 1 << 20  # a record's WARC headers, or its HTTP headers (servers take 8-64 kB)

HTML_TYPES = ("text/html", "application/xhtml+xml")

# Why a record gives no HTML payload (each record gets exactly one outcome).
NOT_RESPONSE = "not_response"  # request, metadata, warcinfo, revisit ... records
# A resource record holding HTML: a page's bytes stored without its HTTP response (warcit's WARCs of a folder of
# files, an FTP fetch); not read, as datatrove's WarcReader does not read one (a conversion record holding HTML,
# which it reads, is read).  Common Crawl writes none.
HTML_RESOURCE = "html_resource"
NOT_HTML = "not_html"  # images, PDF, ...
TOO_LARGE = "too_large"  # payload (decompressed) over the cap, or HTTP headers over MAX_HEADER_BYTES
EMPTY_PAYLOAD = "empty_payload"
UNDECODABLE = "undecodable"  # a Content-Encoding (gzip, deflate, br, zstd) body that does not decode
TRUNCATED = "truncated"  # damaged: fewer bytes than its Content-Length, or not ending where it says
RECORD_SKIPS = (NOT_RESPONSE, NOT_HTML, HTML_RESOURCE, TOO_LARGE, EMPTY_PAYLOAD, UNDECODABLE, TRUNCATED)
# Records that are no page to clean: `plexity clean` copies them as they are, `plexity run` counts them apart from
# the documents skipped.
NOT_PAGES = (NOT_RESPONSE, NOT_HTML, HTML_RESOURCE)

# What a record's payload is: a page's HTML (a response), or a page's text already: a WET file's
# ``conversion`` record, text/plain (Common Crawl's text of a page, every visible line of it), or a
# cleaned WARC's record read back (a response of text/plain with X-Plexity-* headers, as ``plexity
# clean`` and ``plexity run --format warc`` write it: `warc_writer.is_cleaned_record`), text already
# cut down to the page's content, which is cleaned as an extractor's text is.
HTML = "html"
PAGE_TEXT = "page_text"
CLEANED_TEXT = "cleaned_text"

# Why a file is not read at all.
NOT_A_REGULAR_FILE = "not_a_regular_file"  # a FIFO, socket or device (opening a FIFO waits for ever)
UNREADABLE_FILE = "unreadable_file"  # a symlink loop, a dangling link, no permission, a damaged .gz
UNSUPPORTED_COMPRESSION = "unsupported_compression"  # a WARC compressed otherwise than by gzip: .warc.bz2 ...

# Why reading a file stopped before its end.
NOT_A_WARC = "not_a_warc"  # no WARC record at its start: nothing read
TRUNCATED_FILE = "truncated"  # ends inside a record (a cut gzip member, a short payload)
CORRUPT_FILE = "corrupt"  # unreadable from some record on
FILE_PROBLEMS = (NOT_A_WARC, TRUNCATED_FILE, CORRUPT_FILE)
READ_ERROR = "read_error"  # the system failed to read it (EIO): `ReadError`, raised, never one of FILE_PROBLEMS
TRAILING_GARBAGE = "trailing_garbage"  # a .gz document file: bytes after its gzip stream, ignored

# Start of a payload that is HTML although no Content-Type says so (old crawls).  A comment ends at its first
# ``-->`` (``(?!-->).``, not ``.*?``: a lazy dot could end it at any later one, and n comments not followed by one
# of these tags were tried in 2**n ways: 24 of them, 44 s for one record; 30, most of an hour).
_HTML_START = re.compile(rb"^\s*(?:<!--(?:(?!-->).)*-->\s*)*<(!doctype\s+html|html|head|body|meta|title)\b",
                         re.I | re.S)
_SNIFF_BYTES = 4096
_CHUNK = 1 << 16


class Deadline:
    """The time limit of reading one record: `check()` raises `TooSlow` once `seconds` have
    passed since `start()` (None or 0: no limit)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds or None
        self.until: float | None = None

    def start(self) -> "Deadline":
        self.until = time.monotonic() + self.seconds if self.seconds else None
        return self

    def check(self) -> None:
        if self.until is not None and time.monotonic() > self.until:
            raise TooSlow(f"decoding took longer than {self.seconds:g} s (the reading time limit)")


_NO_DEADLINE = Deadline(None)


def is_blank(data: str | bytes) -> bool:
    """Whether `data` is empty or white space only: ``not data.strip()`` without strip()'s copy of all
    of it (a page that ends in a newline, as most do, was copied whole just to be tested: 12-37 us of
    a 167 KB article page, its bytes and then its str, again in the extractor step)."""
    return not data or data.isspace()  # (the same white space as strip()'s: str's Unicode one, bytes' ASCII one)


def is_html_type(content_type: str | None, identified: str | None = None, head: bytes = b"") -> bool:
    """HTML by WARC-Identified-Payload-Type where the crawler identified the payload (it looked at
    the bytes; datatrove's WarcReader decides by it alone), else by the HTTP Content-Type, else
    by the payload's start."""
    identified = (identified or "").strip().lower()
    if identified:
        return any(t in identified for t in HTML_TYPES)
    declared = (content_type or "").lower()
    if declared.strip():
        return any(t in declared for t in HTML_TYPES)
    return bool(_HTML_START.match(head[:_SNIFF_BYTES]))


# Formats a payload declared text/html can turn out to be, by the bytes they start with (as
# browsers sniff them: WHATWG MIME Sniffing, "matching an image/audio/archive type pattern").
_SIGNATURES = ((b"%PDF-", "PDF"), (b"%!PS-Adobe-", "PostScript"), (b"\x89PNG\r\n\x1a\n", "PNG"),
               (b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"), (b"II*\x00", "TIFF"),
               (b"MM\x00*", "TIFF"), (b"\x00\x00\x01\x00", "ICO"), (b"wOFF", "WOFF"), (b"wOF2", "WOFF2"),
               (b"PK\x03\x04", "ZIP"), (b"PK\x05\x06", "ZIP"), (b"\x1f\x8b\x08", "gzip"),
               (b"\xfd7zXZ\x00", "xz"), (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"Rar!\x1a\x07", "RAR"),
               (b"\x28\xb5\x2f\xfd", "zstd"), (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Office document"),
               (b"\x7fELF", "ELF"), (b"\x00asm", "WebAssembly"), (b"OggS\x00", "Ogg"), (b"fLaC", "FLAC"),
               (b"\x1a\x45\xdf\xa3", "Matroska/WebM"), (b"ID3\x02", "MP3"), (b"ID3\x03", "MP3"),
               (b"ID3\x04", "MP3"))
_SIGNATURE_STARTS = tuple(signature for signature, _ in _SIGNATURES)  # (one startswith for the page that has none)
# Bytes that no text holds (WHATWG MIME Sniffing's "binary data bytes"; not TAB, LF, FF, CR, ESC).
_BINARY_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_BINARY_SHARE = 0.05  # of the first kilobyte: text has none, random bytes have ~10 %


_HTML_STARTS = ("<!doctype html", "<html", "<head", "<body")


def looks_like_html(text: str | bytes) -> bool:
    """Whether `text` is an HTML page rather than text: it starts (after white space and a BOM)
    with ``<!DOCTYPE html``, ``<html``, ``<head`` or ``<body``, or an XML declaration followed by
    ``<html`` soon after."""
    start = text[:1024] if isinstance(text, str) else text[:1024].decode("utf-8", "replace")
    start = start.lstrip("\ufeff \t\r\n")
    # (its first characters lowered, not 1 KB of them: a text that is not ASCII lowers slowly, ~3 us a document)
    lead = start[:len("<!doctype html")].lower()
    if lead.startswith("<?xml"):
        start = start.lower()
        return "<html" in start or "<!doctype html" in start
    return lead.startswith(_HTML_STARTS)


# A tag (<p>, </div>, <br/>) or a comment: what every HTML page holds somewhere, and text seldom does.
_MARKUP = re.compile(r"<(?:[A-Za-z][\w:-]*(?:\s[^<>]*)?/?|/[A-Za-z][\w:-]*\s*)>|<!--")
_MARKUP_BYTES = re.compile(_MARKUP.pattern.encode())  # (a page given as bytes)


def has_markup(text: str | bytes) -> bool:
    """Whether `text` holds any HTML tag or comment: an HTML page does, a page's text already (a WET
    record's, a JSONL row's ``text``) does not, and an extractor reads nothing of it (``learned`` and
    ``trafilatura`` give no text; the others join its lines)."""
    return (_MARKUP_BYTES if isinstance(text, (bytes, bytearray)) else _MARKUP).search(text) is not None


def binary_kind(head: bytes) -> str | None:
    """What a payload is when its first bytes say it is not text (a PDF, an image, an archive,
    bytes rich in NULs and control codes), else None.  Text that starts as HTML, and UTF-16 or
    UTF-32 text (with or without a byte order mark), is never binary."""
    if head.startswith(_SIGNATURE_STARTS):
        return next(kind for signature, kind in _SIGNATURES if head.startswith(signature))
    if head[4:8] == b"ftyp":
        return "MP4"
    if head.startswith(b"RIFF") and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return head[8:12].decode().strip()
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "bzip2"
    head = head[:1024]
    if not head or _HTML_START.match(head) or _wide_text(head):
        return None
    if len(head.translate(None, _BINARY_BYTES)) < len(head) * (1 - _BINARY_SHARE):
        return "binary data (NUL and control bytes)"
    return None


def _wide_text(head: bytes) -> bool:
    """UTF-16 or UTF-32 text: a byte order mark, or NULs in every other (every fourth) byte."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\0" not in head:  # (no column can be NULs: the test below, without its slices, on nearly every page)
        return False
    for step in (2, 4):
        columns = [head[i::step] for i in range(step)]
        nul_share = [c.count(0) / max(1, len(c)) for c in columns]
        if sum(share > 0.9 for share in nul_share) == step - 1 and min(nul_share) < 0.1:
            return True
    return False


def http_header(record, name: str) -> str | None:
    return _header(record.http_headers, name)


def _header(headers, name: str) -> str | None:
    return headers.get_header(name) if headers is not None else None


# Fields whose value is a list (RFC 9110 5.3): sent more than once, they are one list, in the order sent.
LIST_FIELDS = frozenset(("content-encoding", "transfer-encoding"))


def header_fields(headers) -> dict[str, str]:
    """A header block's (warcio's StatusAndHeaders, or None) fields by lower-cased name, each its first value,
    as warcio's get_header answers: the names lowered once (each get_header lowers them all again: ~12 of
    them a record, ~130 lower() a page).  A field of `LIST_FIELDS` sent more than once is its values joined
    by commas, as RFC 9110 combines them (``Transfer-Encoding: gzip`` then ``Transfer-Encoding: chunked`` is
    ``gzip, chunked``: the first alone left the chunk sizes in the page's text)."""
    fields: dict[str, str] = {}
    for name, value in headers.headers if headers is not None else ():
        name = name.lower()
        if name in fields and name in LIST_FIELDS:
            fields[name] = f"{fields[name]}, {value}"
        else:
            fields.setdefault(name, value)
    return fields


# -- bounded reading and decoding ----------------------------------------------------------

def read_capped(stream, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`; TooLarge if there are more."""
    parts, size = [], 0
    while True:
        block = stream.read(min(_CHUNK, limit + 1 - size))
        if not block:
            return b"".join(parts)
        parts.append(block)
        size += len(block)
        if size > limit:
            raise TooLarge(f"more than {limit:,} bytes")


def _inflate(wbits: int, data: bytes, limit: int, deadline: Deadline = _NO_DEADLINE, cut: bool = False) -> bytes:
    """`data` inflated by zlib (`wbits`: gzip, zlib or raw deflate), never producing more than
    `limit` + 1 bytes; gzip members that follow are inflated too (concatenated gzip, up to
    `MAX_GZIP_MEMBERS`), bytes after the end that are not a gzip member are ignored, as browsers do.
    A body that ends early is `Undecodable`, unless `cut` (the crawler said it kept only its
    start): then what it inflates to, as a browser shows it.

    The input is fed a block at a time and followed by its offset (zlib's ``unused_data`` after
    each member is a copy of the rest: fed whole, ten megabytes of empty members took minutes)."""
    decompressor = zlib.decompressobj(wbits)
    out = bytearray()
    view = memoryview(data)
    position, members = 0, 1
    while position < len(view):
        deadline.check()
        block = view[position:position + _CHUNK]
        out += decompressor.decompress(block, limit + 1 - len(out))
        if len(out) > limit:
            raise TooLarge(f"inflates to more than {limit:,} bytes")
        position += len(block) - len(decompressor.unconsumed_tail) - len(decompressor.unused_data)
        if decompressor.eof:
            if not (wbits > 16 and view[position:position + 2] == b"\x1f\x8b"):
                break
            members += 1
            if members > MAX_GZIP_MEMBERS:
                raise Undecodable(f"more than {MAX_GZIP_MEMBERS:,} gzip members")
            decompressor = zlib.decompressobj(wbits)
    if not decompressor.eof:
        out += decompressor.flush()
        if not decompressor.eof and not cut:
            raise Undecodable("the compressed body ends early")
    return bytes(out)


def _unbrotli(data: bytes, limit: int, deadline: Deadline = _NO_DEADLINE, cut: bool = False) -> bytes:
    try:
        import brotli
    except ImportError as exc:
        raise InstallationError("a Content-Encoding: br payload needs the brotli module: pip install brotli",
                                exc) from exc
    decompressor = brotli.Decompressor()
    out = bytearray()
    try:
        try:  # brotli >= 1.2: bounded output
            out += decompressor.process(data, output_buffer_limit=limit + 1)
            while len(out) <= limit and not decompressor.is_finished() and not decompressor.can_accept_more_data():
                deadline.check()
                out += decompressor.process(b"", output_buffer_limit=limit + 1 - len(out))
        except TypeError:  # older brotli: feed it small pieces, so that one cannot inflate far
            for start in range(0, len(data), 1024):
                deadline.check()
                out += decompressor.process(data[start:start + 1024])
                if len(out) > limit:
                    break
    except brotli.error as exc:
        raise Undecodable(f"brotli: {exc}") from None
    if len(out) > limit:
        raise TooLarge(f"inflates to more than {limit:,} bytes")
    if not decompressor.is_finished() and not (cut and out):
        raise Undecodable("the brotli body ends early")
    return bytes(out)


def zstd_module():
    """A zstd decompressor's module: Python 3.14's, the backports.zstd package's (Scrapy needs it), or
    None (then a zstd body is a counted skip naming what to install)."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _unzstd(data: bytes, limit: int, deadline: Deadline = _NO_DEADLINE, cut: bool = False) -> bytes:
    """`data`'s zstd frames decompressed (at most `MAX_GZIP_MEMBERS`), never more than `limit` + 1 bytes."""
    module = zstd_module()
    if module is None:
        raise Undecodable("Content-Encoding zstd, and no zstd decoder is installed (pip install backports.zstd)")
    out = bytearray()
    for _ in range(MAX_GZIP_MEMBERS):
        deadline.check()
        # (a window of 8 MiB at most, as RFC 9659 asks of HTTP and browsers enforce: a frame may ask for 2 GiB)
        decompressor = module.ZstdDecompressor(options={module.DecompressionParameter.window_log_max: 23})
        try:
            out += decompressor.decompress(data, limit + 1 - len(out))
            while len(out) <= limit and not decompressor.eof and not decompressor.needs_input:
                deadline.check()
                out += decompressor.decompress(b"", limit + 1 - len(out))
        except module.ZstdError as exc:
            raise Undecodable(f"zstd: {exc}") from None
        if len(out) > limit:
            raise TooLarge(f"inflates to more than {limit:,} bytes")
        if not decompressor.eof:
            if cut and out:
                return bytes(out)
            raise Undecodable("the zstd body ends early")
        data = decompressor.unused_data
        if not data.startswith(_ZSTD_MAGIC):  # (what follows the last frame is ignored, as after gzip)
            return bytes(out)
    raise Undecodable(f"more than {MAX_GZIP_MEMBERS:,} zstd frames")


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_DECODED = ("gzip", "x-gzip", "deflate", "br", "zstd")
MAX_CONTENT_ENCODINGS = 4  # codings stacked in one Content-Encoding (``gzip, br``: two)


def decode_content(data: bytes, encoding: str | None, limit: int, deadline: Deadline = _NO_DEADLINE,
                   cut: bool = False) -> bytes:
    """The payload under its Content-Encoding: gzip, x-gzip, deflate, br, zstd, or several of them in
    the order applied (``gzip, br``: undone br first); identity is none.

    As browsers and warcio do, a body that does not even start as the declared encoding is
    taken as already decoded (crawlers often store the decoded body with the header kept).  A
    coding that plexity does not decode (``compress``, ``dcb``) is taken so too where the body is
    text, and is `Undecodable`, naming it, where the body is binary (it was counted not_html).
    `cut`: the crawler kept only the body's start (a WARC-Truncated record): a compressed body
    that ends early gives what it inflates to, not `Undecodable`.
    `deadline`: past it, `TooSlow`.
    """
    codings = [c.strip() for c in (encoding or "").lower().split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > MAX_CONTENT_ENCODINGS:
        raise Undecodable(f"more than {MAX_CONTENT_ENCODINGS} Content-Encodings ({encoding.strip()[:80]!r})")
    for coding in reversed(codings):  # (the last listed was applied last)
        if not data:
            return data
        if coding not in _DECODED:
            if binary_kind(data[:_SNIFF_BYTES]) is None:  # text: stored decoded
                return data
            raise Undecodable(f"Content-Encoding {coding[:40]!r} is not one plexity decodes "
                              f"({', '.join(_DECODED)})")
        data = _decode_one(data, coding, limit, deadline, cut)
    return data


def _stored_decoded(data: bytes) -> bool:
    """Whether a br or deflate body that does not decode is the page stored decoded (the header kept):
    it starts as HTML, after a byte order mark if it has one (a UTF-8 BOM made it undecodable), or is
    UTF-16/32 text."""
    head = data[:_SNIFF_BYTES]
    return bool(_HTML_START.match(head.removeprefix(b"\xef\xbb\xbf"))) or _wide_text(head)


def _decode_one(data: bytes, encoding: str, limit: int, deadline: Deadline, cut: bool) -> bytes:
    """`data` under one coding of `_DECODED` (see `decode_content`)."""
    if encoding == "zstd":
        return _unzstd(data, limit, deadline, cut) if data.startswith(_ZSTD_MAGIC) else data
    if encoding in ("gzip", "x-gzip"):
        if not data.startswith(b"\x1f\x8b"):
            return data
        wbits = (16 + zlib.MAX_WBITS,)
    elif encoding == "deflate":
        wbits = (zlib.MAX_WBITS, -zlib.MAX_WBITS)  # zlib-wrapped, or raw deflate as some servers send
    else:
        try:
            return _unbrotli(data, limit, deadline, cut)
        except TooSlow:
            raise
        except Undecodable:
            if _stored_decoded(data):
                return data
            raise
    error = None
    for bits in wbits:
        try:
            return _inflate(bits, data, limit, deadline, cut)
        except zlib.error as exc:
            error = exc
    if encoding == "deflate" and _stored_decoded(data):
        return data
    raise Undecodable(f"{encoding}: {error}")


_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]+")
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_ONE_BY_ONE = 32  # chunks read one at a time before a run of many is taken at once (`_regular_chunks`)
_RUN_BYTES = 1 << 18  # the most bytes one run looks at (its split, ~3 MB of 1-byte chunks, is held at once)


def dechunk(data: bytes, deadline: Deadline = _NO_DEADLINE) -> bytes:
    """The body of a ``Transfer-Encoding: chunked`` payload; the data unchanged when it is
    not chunked after all (the crawler stored it de-chunked with the header kept), or when a
    size line is not hex digits (``-4``, ``0x10``: Python's int() reads both, and a negative
    size stepped back onto the same line for ever).  Each chunk moves forward.  A line ends at
    LF, with or without CR before it (some servers end them so; browsers read them); data that
    ends after whole chunks, or in a size line, is a body cut short: the chunks read.

    A body of many chunks is read a run of regular ones at a time (`_regular_chunks`, the same bytes): one
    at a time, a chunk cost 1.4 us, and a 48 MB body of 1-byte chunks took 14 s, near the time limit.

    Args:
        data: the payload as stored
        deadline: the record's reading time limit (`TooSlow` past it)
    """
    out = bytearray()
    pos = 0
    # chunks read one at a time, from `since`; how many before the next run is tried (more after each that ends
    # early: what a run looks at is paid for by what it takes, or by chunks read one at a time); the run's bytes
    one_by_one, since, wait, window = 0, 0, _ONE_BY_ONE, 0
    while True:
        deadline.check()
        if one_by_one >= wait:
            window = min(_RUN_BYTES, max(window, pos - since))
            pos, whole = _regular_chunks(data, pos, window, out)
            if whole:  # every chunk it looked at: the next run looks at twice as many bytes
                wait, window = _ONE_BY_ONE, min(_RUN_BYTES, 2 * window)
                continue
            one_by_one, since, wait, window = 0, pos, min(2 * wait, _RUN_BYTES), 0
        end = data.find(b"\n", pos)  # (a line ends at LF, CRLF or not: RFC 9112 lets a reader take a bare LF)
        if end < 0:
            # the data ends right after a chunk, or in a size line: a body cut short before its last chunk (the
            # connection closed, the crawler's limit), what there is; it was given back as stored, its chunk sizes
            # read as the page's text
            rest = data[pos:].split(b";", 1)[0].strip(b" \t\r")
            return bytes(out) if out and (not rest or _CHUNK_SIZE.fullmatch(rest)) else data
        size_field = data[pos:end].split(b";", 1)[0].strip(b" \t\r")
        if not _CHUNK_SIZE.fullmatch(size_field):
            return data
        size = int(size_field, 16)
        if size == 0:
            return bytes(out)
        chunk = data[end + 1:end + 1 + size]
        out += chunk
        if len(chunk) < size:  # cut short: what there is
            return bytes(out)
        pos = end + 1 + size
        if data[pos:pos + 2] == b"\r\n":
            pos += 2
        elif data[pos:pos + 1] == b"\n":
            pos += 1
        one_by_one += 1


def _regular_chunks(data: bytes, pos: int, window: int, out: bytearray) -> tuple[int, bool]:
    """The run of regular chunks at `pos` within the next `window` bytes, added to `out`: each a size line of hex
    digits alone, then as many bytes, then CRLF, the size not 0, as `dechunk` reads them one at a time (the bytes
    split at CRLF: a size line, its chunk, the next size line ...; a chunk that holds CRLF, a size that lies, an
    extension or a trailer end the run, and `dechunk` reads on one at a time).  No Python-level step per chunk:
    maps and joins.  Returns where the run ends, and whether it took every chunk the window holds.

    Args:
        data: the chunked payload
        pos: where a size line starts
        window: how many bytes to look at
        out: the body so far
    """
    end = data.find(b"\r\n", pos, pos + 18)  # (the first chunk, checked before the window is split)
    size = data[pos:end]
    if end < 0 or not size or size.translate(None, _HEX_DIGITS):  # an extension, a trailer, a long size line
        return pos, False
    start = end + 2 + int(size, 16)
    if data.find(b"\r\n", end + 2, start) >= 0 or data[start:start + 2] != b"\r\n":  # CRLF in it, or a lie
        return pos, False
    parts = data[pos:max(pos + window, start + 2)].split(b"\r\n")
    n = (len(parts) - 1) // 2  # (pairs whose chunk is followed by CRLF)
    sizes, chunks = parts[0:2 * n:2], parts[1:2 * n:2]
    whole = n
    if b"".join(sizes).translate(None, _HEX_DIGITS) or b"" in sizes:  # a size line of other bytes: up to it
        others = list(map(bool, map(bytes.translate, sizes, repeat(None), repeat(_HEX_DIGITS))))
        n = min(others.index(True) if True in others else n, sizes.index(b"") if b"" in sizes else n)
    lengths = list(map(int, sizes[:n], repeat(16)))
    wrong = list(map(operator.ne, lengths, map(len, chunks)))  # a size that lies, or a chunk holding CRLF
    n = min(wrong.index(True) if True in wrong else n, lengths.index(0) if 0 in lengths else n)
    if n:
        out += b"".join(chunks[:n])
        pos += sum(lengths[:n]) + sum(map(len, sizes[:n])) + 4 * n
    return pos, n == whole and n > 0


# -- WARC files ---------------------------------------------------------------------------

@dataclass
class WarcRecord:
    """One record of a WARC file and what reading made of it.

    `payload` is the decoded HTTP payload of an HTML response (bytes, charset not yet
    applied), or a page's text (`kind` PAGE_TEXT: a WET file's ``conversion`` record of text/plain;
    CLEANED_TEXT: a cleaned WARC's response record of text/plain, `warc_writer.is_cleaned_record`),
    else None and `skip` says why.  `record` is warcio's record; for a
    not_response or not_html record its payload can still be copied (``WARCWriter.write_record``)
    before the next record is read: it has not been read yet, or (a payload declared HTML whose
    bytes are binary) it was read and is given back as it came.
    """

    number: int  # 1-based, in file order
    record: object
    uri: str
    content_type: str | None
    payload: bytes | None = None
    kind: str = HTML  # what the payload is: HTML, PAGE_TEXT (a WET record's text) or CLEANED_TEXT, UTF-8
    skip: str | None = None
    detail: str = ""
    offset: int | None = None  # where the record (its gzip member) starts in the file
    reader: object = field(default=None, repr=False)  # warcio's reader of the file (what follows the record)
    fields: dict | None = field(default=None, repr=False)  # its WARC headers (`header_fields`), read once
    _limit_reader: object = field(init=False, repr=False)
    _ending: object = field(init=False, repr=False, default=...)  # wrong_length()'s answer, once asked

    def __post_init__(self):
        self._limit_reader = self.record.raw_stream  # (before any sniffing wraps it)
        if self.fields is None:
            self.fields = header_fields(self.record.rec_headers)

    def short_by(self) -> int:
        """How many payload bytes, of those its Content-Length announces, the file lacked
        (once the payload has been read or copied)."""
        return max(0, getattr(self._limit_reader, "limit", 0) or 0)

    def wrong_length(self) -> str | None:
        """Once its payload has been read or copied to the end: why the record does not end where
        its Content-Length says (the bytes after it are not a record's end: a blank line, then
        the next record, the end of its gzip member or of the file), or None.  A Content-Length
        too short ends the record inside its page, whose rest is then where the next record
        should be."""
        if self._ending is ...:
            self._ending = None if self.reader is None or self.short_by() else _check_end(self.reader)
        return self._ending

    @property
    def record_id(self) -> str | None:
        return self.fields.get("warc-record-id")

    @property
    def date(self) -> str | None:
        return self.fields.get("warc-date")

    @property
    def cut_by_crawler(self) -> str | None:
        """Why the crawler kept only the start of the page (WARC-Truncated: ``length``, ``time``
        ...; ``segmented``: the first segment of a record the writer cut into segments, whose rest is
        in ``continuation`` records, not read), or None when the record holds it whole."""
        truncated = (self.fields.get("warc-truncated") or "").strip()
        if truncated:
            return truncated
        # (read as a whole page before: the start of one, uncounted, a compressed body undecodable)
        return "segmented" if (self.fields.get("warc-segment-number") or "").strip() == "1" else None


_RECORD_END = re.compile(rb"\r?\n(?:\r?\n|WARC/)")


def _peek(reader, size: int) -> bytes:
    """The next `size` bytes of warcio's reader (within the current gzip member), left unread."""
    buff = reader.buff
    if buff is not None:  # (most often in the block already read: looked at, not copied)
        position = buff.tell()
        data = buff.read(size)
        buff.seek(position)
        if len(data) == size:
            return data
    data = reader.read(size)
    if data:
        rest = reader.buff.read() if reader.buff is not None else b""
        reader.buff = io.BytesIO(data + rest)
        reader.buff_size = len(data) + len(rest)
    return data


def _check_end(reader) -> str | None:
    """Why the record just read to its Content-Length does not end there, or None."""
    tail = _peek(reader, 16)
    if not tail or _RECORD_END.match(tail) or not tail.strip(b"\r\n"):
        return None
    return "its Content-Length is wrong: the record does not end where it says (its page goes on after it)"


class _Prefixed(io.RawIOBase):
    """`head` then the rest of `stream`: a payload stream after its start was sniffed."""

    def __init__(self, head: bytes, stream):
        super().__init__()
        self.head, self.stream = head, stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.head:
            if size is None or size < 0:
                data, self.head = self.head + self.stream.read(), b""
                return data
            data, self.head = self.head[:size], self.head[size:]
            return data
        return self.stream.read(size)


class _Reads:
    """`fileobj` for reading, its failed reads (an OSError of `read`: EIO ...) `ReadError`: whatever reads
    the file (warcio, resynchronising, a consumer copying a record) meets no damage where the disk failed."""

    def __init__(self, fileobj, name: str | None = None):
        self.fileobj, self.name = fileobj, name

    def tell(self) -> int:
        return self.fileobj.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.fileobj.seek(offset, whence)

    def fileno(self) -> int:
        return self.fileobj.fileno()

    def seekable(self) -> bool:
        seekable = getattr(self.fileobj, "seekable", None)
        return bool(seekable and seekable())

    def read(self, size: int = -1) -> bytes:
        try:
            return self.fileobj.read(size)
        except ReadError:
            raise
        except OSError as exc:
            try:
                where = f" at byte {self.fileobj.tell():,}"
            except (OSError, ValueError):
                where = ""
            raise ReadError(exc.errno, f"{self.name or 'the file'}: read error{where}: {exc.strerror or exc}") from exc


# What reading a file lets through: an error of the installation, a failed read.
_NOT_DAMAGE = (*ENVIRONMENT_ERRORS, ReadError)


PROGRESS_SECONDS = 60.0


class ReadProgress:
    """A line, given to `say`, every `seconds` while one file `f` is read: its records so far, and how far into it
    (``plexity run``'s task and ``plexity clean`` said nothing while a file was read: ~15 s a 100 MB WARC, minutes
    a 1 GB one, a progress bar over the files that did not move)."""

    def __init__(self, f, name: str, seconds: float, say):
        self.f, self.name, self.seconds, self.say = f, name, seconds, say
        self.started = self.last = time.monotonic()
        self.records = 0
        try:
            self.size = os.fstat(f.fileno()).st_size
        except (AttributeError, OSError, ValueError):  # (a remote stream: no size, no share said)
            self.size = None

    def record(self) -> None:
        self.records += 1
        now = time.monotonic()
        if now - self.last < self.seconds:
            return
        self.last = now
        where = ""
        try:
            if self.size:
                where = f", {self.f.tell() / 1e6:,.0f} of {self.size / 1e6:,.0f} MB ({self.f.tell() / self.size:.0%})"
        except (OSError, ValueError):
            pass
        self.say(f"reading {self.name}: {self.records:,} records{where} in {now - self.started:,.0f} s")


class WarcFile:
    """The records of one WARC file (``.warc`` or ``.warc.gz``, read from `fileobj`).

    Iterating yields a `WarcRecord` for every record warcio finds, each with exactly one
    outcome (a payload, or a reason in `RECORD_SKIPS`).  A record that does not end where its
    Content-Length says is damaged (``truncated``), never a payload.  Past damage (a record whose
    Content-Length is wrong, negative or not a number, garbage between records) reading
    resynchronises at the next record (`next_record_start`): the next gzip member that inflates
    to a ``WARC/1.`` line in a ``.warc.gz`` (each member is readable on its own), the next
    ``WARC/1.`` line in an uncompressed file that starts a record whose headers and length are
    consistent and that ends where the next record starts (a record written inside a page is
    not one).  `bytes_skipped` counts the bytes passed over,
    `records_recovered` the records read after a resynchronisation (lost before it).
    `pages_cut_by_crawler` counts the pages read whose record says the crawler kept only their
    start (``WARC-Truncated``: Common Crawl's 1 MiB limit, a time limit): their text is the
    start of the page, and a compressed body among them is read as far as it goes.  A
    ``.warc.gz`` gzipped as one single member (the whole file one stream) is read whole, as
    warcio's own tools read it; a record whose bytes a writer cut across gzip members is read whole
    too (a member that ends inside a record, followed by one that does not start a record, holds its rest).

    When the file is damaged, `problem` is set (a reason in `FILE_PROBLEMS`) and
    `problem_detail` says after which record (and where reading resumed, if it did);
    `records` counts the records yielded.  A file whose bytes are a bzip2, xz or zstd stream is
    no damaged file: nothing is read, `problem` is ``unsupported_compression`` and `problem_detail`
    the line that converts it (`unsupported_compression`), as for a file named ``.warc.bz2``.
    A read of the file that fails (EIO: the disk, a network mount) is no damage either: it raises
    `ReadError`, from the iteration or from a record's payload being read.

    Args:
        fileobj: the file, opened in binary mode (not decompressed: warcio reads gzip
            member by member, so the records before a damaged member are still read),
            seekable to resynchronise (an unseekable one stops at the first damage)
        max_payload_bytes: larger payloads (decompressed) are skipped as ``too_large``
        read_timeout: seconds to decode one payload (de-chunk, inflate); past it the record is
            skipped as ``undecodable`` (0 or None: no limit)
        name: the file's name as the caller shows it, for the conversion line of a file compressed
            otherwise than by gzip
    """

    def __init__(self, fileobj, max_payload_bytes: int = MAX_DOCUMENT_BYTES,
                 read_timeout: float | None = DEFAULT_READ_TIMEOUT, name: str | None = None):
        self.fileobj = _Reads(fileobj, name)
        self.name = name
        self.max_payload_bytes, self.read_timeout = reading_limits(max_payload_bytes, read_timeout)
        self.records = 0
        self.records_recovered = 0
        self.bytes_skipped = 0
        self.pages_cut_by_crawler = 0
        self.problem: str | None = None
        self.problem_detail = ""
        self._noted, self._notes = "", 0  # (`_stop`)

    def _stop(self, problem: str, detail: str) -> None:
        if self.problem is None or self.problem == NOT_A_WARC:
            self.problem = problem
        detail = printable(detail)  # (it quotes the file's bytes: no ESC, CR or BEL reaches a terminal or a log)
        # The first MAX_PROBLEM_NOTES damages one by one, then how many more and the last: each was appended to one
        # string, which a .warc.gz of 20,000 records whose Content-Lengths are all wrong (a writer that counts
        # characters, not bytes) made 3 MB long, copied at each damage: 12 of its 39 s, the square of its damages,
        # and every byte of it in the log's warning and the stats' damaged_file_details.
        self._notes += 1
        if self._notes <= MAX_PROBLEM_NOTES:
            self._noted = self.problem_detail = f"{self._noted}; {detail}" if self._noted else detail
        else:
            self.problem_detail = (f"{self._noted}; and {self._notes - MAX_PROBLEM_NOTES:,} more (the last: "
                                   f"{detail})")

    def __iter__(self):
        try:
            start = self.fileobj.tell()
            self._head = self.fileobj.read(_SNIFF_BYTES)  # what the file is, if it is no WARC
            gzipped = _container(self._head)  # (what a record start looks like, to resynchronise)
            self._size = self.fileobj.seek(0, os.SEEK_END)  # (`_bound_past_the_end`)
            self.fileobj.seek(start)
        except ReadError:
            raise
        except (OSError, AttributeError, ValueError):  # not seekable: no resynchronisation
            start, self._head = None, None
        why = unsupported_compression(self.name or "FILE", self._head) if self._head else None
        if why:  # (a bzip2 WARC named .warc.gz: warcio would call it no WARC)
            self.problem, self.problem_detail = UNSUPPORTED_COMPRESSION, why
            return
        resumed = False
        self._gzip_resumed_at, self._plain_then_gzip = -1, None  # (`_gzip_after_plain`)
        while True:
            iterator = _archive_iterator(self.fileobj)
            self._damage, self._last = None, None
            damage = yield from self._segment(iterator, resumed)
            if damage is None:
                return
            if self._plain_then_gzip is not None:  # gzip members after uncompressed records: read on, in gzip
                self.fileobj.seek(self._plain_then_gzip)
                self._plain_then_gzip = None
                continue
            # The next record after the last one read: a wrong Content-Length may have made that
            # one swallow the start of the next (an uncompressed file), or warcio may have moved
            # to the next gzip member before failing on what was left of the last one.
            after = damage if self._last is None else min(damage, self._last)
            problem, detail = self._damage
            try:
                resume = next_record_start(self.fileobj, after, gzipped) if start is not None else None
                if resume is not None and resume == damage:  # the record that failed: the one after it
                    resume = next_record_start(self.fileobj, damage, gzipped)
            except ResyncGaveUp as exc:
                self._stop(CORRUPT_FILE, f"damaged after record {self.records}; {exc}")
                return
            end = resume if resume is not None else self.fileobj.seek(0, os.SEEK_END)
            if self.records and _padding_only(self.fileobj, min(damage, end), end):
                # (NULs and blank lines alone, as a file padded to a block size ends: nothing was lost)
                if resume is None:
                    return
                self.fileobj.seek(resume)
                continue
            if resume is None:  # nothing readable after the damage: reading stops there
                if problem == CORRUPT_FILE and end > damage:  # (how much of the file that leaves unread: a plain WARC
                    # whose Content-Lengths are all wrong, whose records are none of them whole, was read to its first
                    # record, the rest of it named nowhere)
                    detail = (f"{detail}; no whole record after it: the file's last {end - damage:,} bytes, from its "
                              f"start, read no further")
                self._stop(problem, detail)
                return
            damage = min(damage, resume)
            self.bytes_skipped += resume - damage
            if problem != CORRUPT_FILE:  # ("not a WARC", "truncated" when there is more after it)
                detail = f"damaged after record {self.records}"
            self._stop(CORRUPT_FILE, f"{detail}; resumed at byte {resume:,} ({resume - damage:,} bytes skipped)")
            self.fileobj.seek(resume)
            resumed = True

    def _segment(self, iterator, resumed: bool):
        """Yield the records of `iterator` (warcio's, from the current position); at damage, note
        the problem and return the file offset where the damaged record starts (None at the end)."""
        records = iter(iterator)
        previous: WarcRecord | None = None
        while True:
            try:
                record = next(records, None)
            except _NOT_DAMAGE:
                raise
            except Exception as exc:  # warcio/zlib raise assorted errors on damaged input
                if self._gzip_after_plain(iterator, previous):
                    return iterator.damage_offset()  # (no damage: read on from there, `__iter__`)
                first = self.records == 0 and not resumed
                if isinstance(exc, TooLarge) and not (first and self._not_warc_start()):
                    # (headers over MAX_HEADER_BYTES: read on at the next record)
                    self._note(CORRUPT_FILE, f"record {self.records + 1}: {exc}")
                elif first and (not iterator.truncated or self._not_warc_start()):
                    self._note(NOT_A_WARC, self._not_a_warc(describe(exc)))
                elif iterator.truncated or _truncated(iterator) or isinstance(exc, EOFError):
                    self._note(TRUNCATED_FILE, f"truncated after record {self._complete(previous)}")
                else:
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} "
                                             f"({describe(exc)})")
                return iterator.damage_offset()
            if record is None:
                if self.records == 0 and not resumed and self._not_warc_start():
                    # (a line of text, an empty file, or a gzip member damaged in its header, which
                    # reads as empty: whole records may follow, as after other damage at the start)
                    self._note(NOT_A_WARC, self._not_a_warc("no WARC record"))
                    return iterator.damage_offset()
                # (warcio has read the previous record to its end by now: its shortness is known)
                if iterator.truncated or (previous is not None and previous.short_by()):
                    self._note(TRUNCATED_FILE, f"truncated after record {self._complete(previous)}")
                    # a Content-Length too long swallows the records after it: look for them
                    return previous.offset if previous is not None and previous.short_by() else iterator.damage_offset()
                return None
            if not str(getattr(record, "format", "warc")).startswith("warc") \
                    or not str(getattr(record.rec_headers, "protocol", "WARC/1.")).startswith("WARC/"):
                # warcio also parses ARC, and takes any line of text for an ARC header (or, after a
                # blank line, for a WARC record without a version or a header)
                if self.records == 0:
                    self._note(NOT_A_WARC, self._not_a_warc(f"warcio read it as {record.format}"))
                else:
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} "
                                             f"(not a WARC record)")
                return iterator.damage_offset()
            if previous is not None and previous.short_by():
                # (a record short of its Content-Length, and yet a record after it: its gzip member ended first, its
                # Content-Length too long or the member cut; as a Content-Length wrong in an uncompressed file
                # (`_finish`), the file is named damaged, not only the record counted `truncated`)
                self._stop(CORRUPT_FILE, f"record {previous.number}: {previous.short_by():,} bytes short of its "
                                         f"Content-Length (its gzip member ends first)")
            self.records += 1
            self.records_recovered += resumed
            fields = header_fields(record.rec_headers)
            item = WarcRecord(self.records, record, fields.get("warc-target-uri") or "",
                              http_header(record, "Content-Type"), reader=iterator.reader, fields=fields)
            item.offset = self._last = iterator.damage_offset()
            missing = getattr(record, "block_missing", None)
            broken = None if missing else _broken_headers(record, fields)
            if missing or broken:  # where this record ends is unknown: look for the next one from its start
                item.skip, item.detail = TRUNCATED, missing or broken
                if missing:  # (cut after, or inside, its WARC headers: the file, or its gzip member, ends there)
                    self._note(TRUNCATED_FILE, f"truncated after record {self.records - 1}")
                else:
                    self._note(CORRUPT_FILE, f"record {self.records}: {broken}")
                yield item
                return item.offset
            self._bound_past_the_end(item, iterator)
            try:
                self._judge(item)
            except ReadError:  # (never yielded: not counted)
                self.records -= 1
                self.records_recovered -= resumed
                raise
            except _NOT_DAMAGE:
                raise
            except Exception as exc:  # the container is damaged inside this record's payload
                item.payload, item.skip = None, TRUNCATED
                item.detail = f"unreadable payload: {describe(exc)}"
            previous = item
            yield item
            wrong = self._finish(item)
            if wrong:  # where this record really ends is unknown: look for the next one from its start
                self._note(CORRUPT_FILE, f"record {item.number}: {wrong}")
                return item.offset

    def _bound_past_the_end(self, item: WarcRecord, iterator) -> None:
        """An uncompressed record whose Content-Length runs past the end of the file ends where the next record that
        starts after it starts (`next_record_start`), if one does: its block is read up to there, not to the end of
        the file, and the record is ``truncated`` (its Content-Length wrong).  Each such record read the rest of the
        file before reading resynchronised from its start, so a file of them (every Content-Length too long) took the
        square of its size: 1,000 records (2.9 MB) 2.4 s, 10,000 (29 MB) minutes.  (In a .warc.gz the record's gzip
        member ends it; a last record cut short has no record after it and is read to the end, as before.)"""
        limit = getattr(item._limit_reader, "limit", None)
        reader = iterator.reader
        if self._head is None or reader.decompressor is not None or not isinstance(limit, int) or limit <= 0 \
                or item.offset is None:
            return
        here = self.fileobj.tell()
        position = here - reader.rem_length()  # (where the block's unread bytes start: warcio buffers ahead)
        if position + limit <= self._size:  # (the size when reading began: a record within it is not looked at)
            return
        try:
            size = self.fileobj.seek(0, os.SEEK_END)
            if position + limit <= size:
                return
            try:
                start = next_record_start(self.fileobj, item.offset, False)
            except ResyncGaveUp:
                return
        finally:
            self.fileobj.seek(here)
        if start is None or start < position:
            return
        item._limit_reader.limit = start - position
        item._ending = (f"its Content-Length is wrong: it runs {position + limit - size:,} bytes past the end of the "
                        f"file, over the next record (at byte {start:,})")

    def _gzip_after_plain(self, iterator, previous: WarcRecord | None) -> bool:
        """Whether warcio failed at a gzip member that inflates to a WARC record, right after a whole uncompressed
        record (a .warc and a .warc.gz joined by cat, or a writer that wrote some records uncompressed): warcio's
        reader, once it has read a record uncompressed, reads the rest of the file so, and such a member was no
        record to it.  The records from it on were lost ("unreadable after record N", none counted), as a
        .warc.gz's resynchronisation skips the member it failed at and a .warc's looks for uncompressed records
        only.  If so, reading goes on at the member (`_plain_then_gzip`), once for each such offset."""
        start = iterator.damage_offset()
        if iterator.reader.decompressor is not None or self._head is None or start <= self._gzip_resumed_at \
                or previous is None or previous.short_by() or previous.wrong_length() is not None \
                or not _is_warc_member(self.fileobj, start):
            return False
        self._gzip_resumed_at = self._plain_then_gzip = start
        return True

    def _finish(self, item: WarcRecord) -> str | None:
        """Read what the consumer left of the record (as warcio would next) and say why it does
        not end where its Content-Length says, if it does not."""
        try:
            while item._limit_reader.read(_CHUNK):
                pass
        except _NOT_DAMAGE:
            raise
        except Exception:  # noqa: BLE001 - damage inside the payload: warcio meets it next and it is counted
            return None
        return item.wrong_length()

    def _not_warc_start(self) -> bool:
        """Whether the file's first bytes show it is no WARC (unknown when it is not seekable)."""
        return self._head is not None and not looks_like_warc(self._head)

    def _not_a_warc(self, why: str) -> str:
        """"not a WARC file: " and what the file is, by its first bytes (else what warcio said)."""
        if self._head is not None and not looks_like_warc(self._head):
            return f"not a WARC file: {what_file_is(self._head)}"
        return f"not a WARC file ({why})"

    def _note(self, problem: str, detail: str) -> None:
        self._damage = (problem, detail)

    def _complete(self, last: WarcRecord | None) -> int:
        """How many records were read whole, when reading stopped after `last`."""
        return self.records - 1 if last is not None and last.short_by() else self.records

    def _judge(self, item: WarcRecord) -> None:
        """Set the record's payload, or its skip reason."""
        record, content_type = item.record, item.content_type
        if record.rec_type == "conversion" and self._conversion_is_text(item):
            # (a cleaned WET record read back: text already cut down, as a cleaned response's)
            self._judge_page_text(item, CLEANED_TEXT if is_cleaned_record(record) else PAGE_TEXT)
            return
        too_long = getattr(record, "headers_too_long", None)
        if too_long:  # (partly read: never copied; the rest is still read to its end, where the next record starts)
            item.skip, item.detail = TOO_LARGE, too_long
            return
        if record.rec_type in ("conversion", "resource"):
            # (a page's bytes without an HTTP response: its WARC Content-Type says what they are)
            content_type = item.content_type = own_content_type(record)
            if not self._block_is_html(item):
                item.skip = NOT_RESPONSE
                return
            if record.rec_type == "resource":  # skipped, as datatrove's WarcReader skips it, but named
                item.skip = HTML_RESOURCE
                return
        elif record.rec_type != "response":
            item.skip = NOT_RESPONSE
            return
        elif _is_plain_text(content_type) and is_cleaned_record(record):  # a cleaned WARC read back: text already
            self._judge_page_text(item, CLEANED_TEXT)
            return
        raw_stream = record.raw_stream
        identified = item.fields.get("warc-identified-payload-type")
        headers, start = record.http_headers, b""
        split = split_unended_headers(record.http_unended) if getattr(record, "http_unended", None) else None
        if split is not None:  # no blank line after its headers, or no headers: its page is in what warcio took
            headers, start = split
            content_type = item.content_type = headers.get_header("Content-Type")
        interim = b""
        if split is None and _is_interim(headers):  # 100 Continue, 103 Early Hints: the response follows them
            try:
                headers, interim = final_response_headers(headers, raw_stream)
            except TooLarge as exc:
                item.skip, item.detail = TOO_LARGE, str(exc)
                return
            record.raw_stream = raw_stream = _Prefixed(interim, raw_stream)  # (a copy: the block as it came)
            content_type = item.content_type = _header(headers, "Content-Type")
        head = start[:_SNIFF_BYTES]
        if not (content_type or identified or "").strip() and not start:  # undeclared: sniff, keeping the bytes
            head = raw_stream.read(_SNIFF_BYTES)
            record.raw_stream = _Prefixed(head, raw_stream)
        if not is_html_type(content_type, identified, head):
            item.skip = NOT_HTML
            return
        stored = self._read_whole(item)  # (the sniffed head included)
        if stored is None:
            return
        raw = start + stored[len(interim):]
        if len(raw) > self.max_payload_bytes:
            item.skip, item.detail = TOO_LARGE, f"more than {self.max_payload_bytes:,} bytes"
            return
        cut = item.cut_by_crawler is not None
        deadline = Deadline(self.read_timeout).start()
        try:
            body = raw
            # Transfer-Encoding is a list too (``gzip, chunked``): chunked last, the others undone after it,
            # before the Content-Encoding (it was compared whole with "chunked": such a body was left as stored)
            http = header_fields(headers)
            transfer = [c.strip() for c in (http.get("transfer-encoding") or "").lower().split(",")]
            if "chunked" in transfer:
                body = dechunk(body, deadline)
            codings = [http.get("content-encoding") or ""] + [c for c in transfer if c != "chunked"]
            body = decode_content(body, ", ".join(codings), self.max_payload_bytes, deadline, cut)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return
        except Undecodable as exc:
            item.skip, item.detail = UNDECODABLE, str(exc)
            return
        if is_blank(body):
            item.skip = EMPTY_PAYLOAD
            return
        kind = binary_kind(body[:_SNIFF_BYTES])
        if kind is not None:  # declared HTML, but a PDF, an image, an archive ...: never text
            item.skip, item.detail = NOT_HTML, f"its bytes are {kind}, not HTML"
            record.raw_stream = io.BytesIO(stored)  # (for a copy: the payload as it came)
            return
        item.payload = body
        self.pages_cut_by_crawler += cut

    @staticmethod
    def _conversion_is_text(item: WarcRecord) -> bool:
        """Whether a ``conversion`` record's block is a page's text (a WET record's): by its own Content-Type,
        text/plain; without one (or with warcio's default, `own_content_type`), as datatrove's WarcReader
        judges it: by its WARC-Identified-Payload-Type, else by its bytes (kept for a copy), which are text
        unless they start as HTML (a PDF's, an image's are then `_judge_page_text`'s ``not_html``, a blank
        block its ``empty_payload``)."""
        record = item.record
        declared = own_content_type(record)
        if declared:
            return _is_plain_text(declared)
        identified = item.fields.get("warc-identified-payload-type")
        if (identified or "").strip():
            return _is_plain_text(identified)
        head = record.raw_stream.read(_SNIFF_BYTES)
        record.raw_stream = _Prefixed(head, record.raw_stream)
        return not is_html_type(None, None, head)

    @staticmethod
    def _block_is_html(item: WarcRecord) -> bool:
        """Whether a record whose block is a page's bytes, no HTTP response (conversion, resource), holds
        HTML: by its identified payload type, else its Content-Type, else its bytes (kept for a copy)."""
        record = item.record
        identified = item.fields.get("warc-identified-payload-type")
        head = b""
        if not (item.content_type or identified or "").strip():
            head = record.raw_stream.read(_SNIFF_BYTES)
            record.raw_stream = _Prefixed(head, record.raw_stream)
        return is_html_type(item.content_type, identified, head)

    def _read_whole(self, item: WarcRecord) -> bytes | None:
        """The record's block (its payload, as stored) up to the cap; None, with the skip set, when
        it is over the cap or the record is not whole (fewer bytes than its Content-Length, or its
        page goes on past it)."""
        try:
            raw = read_capped(item.record.raw_stream, self.max_payload_bytes)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return None
        if item.short_by():  # fewer bytes than its Content-Length
            item.skip, item.detail = TRUNCATED, f"{item.short_by():,} bytes short of its Content-Length"
            return None
        if item.wrong_length():  # its page goes on past its Content-Length: not a whole page
            item.skip, item.detail = TRUNCATED, item.wrong_length()
            return None
        return raw

    def _judge_page_text(self, item: WarcRecord, kind: str = PAGE_TEXT) -> None:
        """A WET record (its block is the page's text, no HTTP headers) or a cleaned record (its HTTP
        payload is): UTF-8 text, no encoding."""
        item.kind = kind
        if item.record.rec_type == "conversion":  # (a cleaned record's is its HTTP Content-Type)
            item.content_type = own_content_type(item.record)
        raw = self._read_whole(item)
        if raw is None:
            return
        if is_blank(raw):
            item.skip = EMPTY_PAYLOAD
            return
        kind = binary_kind(raw[:_SNIFF_BYTES])
        if kind is not None:  # declared text, but a PDF, an image ...: never text
            item.skip, item.detail = NOT_HTML, f"its bytes are {kind}, not text"
            item.record.raw_stream = io.BytesIO(raw)  # (for a copy: the payload as it came)
            return
        item.payload = raw
        self.pages_cut_by_crawler += item.cut_by_crawler is not None


# The Content-Type warcio writes for a record given none (its writer's default): says nothing of the block.
WARCIO_DEFAULT_TYPE = "application/warc-record"


def own_content_type(record) -> str | None:
    """A record's WARC Content-Type, if it has one of its own: None when absent, blank, or warcio's default
    (`WARCIO_DEFAULT_TYPE`)."""
    declared = (record.rec_headers.get_header("Content-Type") or "").strip()
    return declared if declared and declared.split(";", 1)[0].strip().lower() != WARCIO_DEFAULT_TYPE else None


def _is_plain_text(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "text/plain"



def _broken_headers(record, fields: dict[str, str]) -> str | None:
    """Why a record's WARC headers (`fields`: `header_fields`) cannot be trusted to say where it ends, or None."""
    declared = fields.get("content-length")
    if record.length is None or declared is None:  # (warcio would read on to the end of the file)
        return "no Content-Length: where the record ends is unknown"
    if not declared.strip().isdecimal():  # (warcio reads it as 0 and loses its place; int() takes no "²")
        return f"its Content-Length is not a number of bytes ({declared.strip()[:20]!r})"
    if len(fields) == len(record.rec_headers.headers):  # (no name twice)
        return None
    names = [name.lower() for name, _ in record.rec_headers.headers]
    if names.count("warc-type") > 1 or names.count("warc-record-id") > 1:
        return "its headers run into the next record's (a record cut short)"
    return None


def _gunzip_head(head: bytes) -> bytes | None:
    """The start of what a gzip stream holds (None if it does not inflate)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF_BYTES)
    except zlib.error:
        return None


def looks_like_warc(head: bytes) -> bool:
    """Whether a file's first bytes (gzipped or not) start as a WARC record does."""
    if head.startswith(b"\x1f\x8b"):
        head = _gunzip_head(head) or b""
    return head.lstrip(b"\r\n\t ").startswith(b"WARC/")


_MAGIC = ((b"%PDF", "a PDF document"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"GIF8", "a GIF image"), (b"PK\x03\x04", "a ZIP archive"), (b"BZh", "a bzip2 file"),
          (b"\xfd7zXZ", "an xz file"), (b"(\xb5/\xfd", "a zstd file"), (b"filedesc://", "an ARC file (WARC's "
          "predecessor, which plexity does not read)"))


def what_file_is(head: bytes) -> str:
    """What a file is, by its first bytes, for a message: "an empty file", "a text file (it
    starts 'hello')", "an HTML page", "a PDF document", "a gzip file holding ...", "binary data"."""
    if not head:
        return "an empty file"
    if head.startswith(b"\x1f\x8b"):
        inner = _gunzip_head(head)
        return "a damaged gzip file" if inner is None else f"a gzip file holding {what_file_is(inner)}"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if _HTML_START.match(head):
        return "an HTML page"
    import codecs

    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # (a character cut at the end)
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\r\n\t\f")
    if "\0" in text or controls > len(text) // 20:
        return "binary data"
    start = printable(" ".join(text.split())[:40].encode("ascii", "backslashreplace").decode("ascii"))
    return f"a text file (it starts '{start}')" if start else "a text file of blank lines"


# WARC files compressed otherwise than by gzip, which are not read: (suffix, compression, its decompressor,
# `binary_kind`'s name for its bytes).
_OTHER_COMPRESSIONS = ((".bz2", "a bzip2", "bzcat", "bzip2"), (".xz", "an xz", "xzcat", "xz"),
                       (".zst", "a zstd", "zstdcat", "zstd"))
_NOT_READ = "which plexity does not read (it reads .warc and .warc.gz): convert it with"


def unsupported_compression(name: str, head: bytes | None = None) -> str | None:
    """Why a WARC file named `name` (a path, as the caller names it) whose first bytes are `head` (None: not read) is
    not read, and how to make it readable, else None.  Its bytes judge, where they are known; else its name
    (``f.warc.bz2``, ``f.warc.wet.xz``, ``f.warc.zst``).

    WARCs are read as ``.warc`` or ``.warc.gz``: gzip, one member per record, is how crawlers write
    them, and what lets reading resume at the next record after damage.  A bzip2, xz or zstd file is
    one stream (no record boundary to resume at; a step back means decompressing from the start
    again), and ``plexity clean`` writes its output in its input's compression: such a file is a
    counted skip, whose message gives the one-line conversion.  A file misnamed is renamed to what it
    is first (``f.warc.gz`` -> ``f.warc.bz2``), then converted to its name: converting it in place,
    ``bzcat f.warc.gz | gzip > f.warc.gz``, would empty it before it is read.  A file named ``.warc.bz2``
    (``.xz``, ``.zst``) whose bytes are gzip or no compression is skipped too (its output would be named for a
    compression it is not in), with the ``mv`` that names it for what it is: the conversion its name calls for
    fails on it (and leaves an empty ``.warc.gz`` behind)."""
    lower = name.lower()
    named = next((compression for compression in _OTHER_COMPRESSIONS if lower.endswith(compression[0])
                  and lower[:-len(compression[0])].endswith((".warc", ".warc.wet"))), None)
    kind = binary_kind(head) if head else None
    actual = next((compression for compression in _OTHER_COMPRESSIONS if compression[3] == kind), None)
    stem = name[:-len(named[0])] if named else name[:-3] if lower.endswith(".gz") else name
    if named and (not head or actual == named):  # (its bytes say what its name says, or are not known)
        _, compression, decompressor, _ = named
        return (f"{compression}-compressed WARC, {_NOT_READ} "
                f"`{decompressor} {shlex.quote(name)} | gzip > {shlex.quote(stem + '.gz')}`")
    if actual:
        suffix, compression, decompressor, _ = actual
        renamed = shlex.quote(stem + suffix)
        return (f"{compression}-compressed WARC (its bytes say so, not its name), {_NOT_READ} "
                f"`mv {shlex.quote(name)} {renamed} && {decompressor} {renamed} | gzip > "
                f"{shlex.quote(stem + '.gz')}`")
    if named:  # named .warc.bz2 ..., and its bytes are gzip or no compression
        gzipped = head.startswith(b"\x1f\x8b")
        return (f"a WARC named {named[0]} whose bytes are {'gzip' if gzipped else 'not compressed'} (its bytes say so, "
                f"not its name): name it for what it is, `mv {shlex.quote(name)} "
                f"{shlex.quote(stem + ('.gz' if gzipped else ''))}`, and plexity reads it")
    return None


def judged_compression(name: str, opened) -> str | None:
    """`unsupported_compression` of the file named `name`, judged by its first bytes where its name says bzip2, xz or
    zstd (`opened()`: the file, opened for reading; one that cannot be opened is judged by its name)."""
    if unsupported_compression(name) is None:
        return None
    try:
        with opened() as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
        head = None
    return unsupported_compression(name, head)


def describe(exc: BaseException) -> str:
    """An exception in one short printable line (warcio quotes the garbage it met: its control characters
    escaped, as ESC or CR would reach a terminal and a task's log as they are)."""
    message = str(exc)
    message = message if len(message) <= 160 else message[:160] + "..."
    return f"{type(exc).__name__}: " + printable(message.replace("\n", " ").encode("ascii", "backslashreplace")
                                                 .decode("ascii"))


def _truncated(iterator) -> bool:
    """Whether warcio's reader stands inside a gzip member."""
    reader = getattr(iterator, "reader", None)
    decompressor = getattr(reader, "decompressor", None) if reader is not None else None
    return decompressor is not None and not getattr(decompressor, "eof", True)


def _gzip_member_decompressors():
    """A maker of decompressors for the gzip members of a .warc.gz: ISA-L's inflate (python-isal,
    a dependency where it has wheels) at about twice zlib's speed, the same bytes out; zlib's where
    it is not installed.  (Looked up once per file, not per member: where isal is absent, each
    import attempt would search the path again.)"""
    try:
        from isal import isal_zlib
    except ImportError:
        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    return lambda: isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)


class _HeaderLines:
    """The lines of a header block read from `stream` (warcio's parsers ask only readline of it), at
    most `MAX_HEADER_BYTES` of them: past it, TooLarge (warcio reads any line and any number of
    lines whole)."""

    def __init__(self, stream, what: str, keep: bool = False):
        self.stream, self.what, self.left = stream, what, MAX_HEADER_BYTES
        self.lines: list[bytes] | None = [] if keep else None  # (kept: at most MAX_HEADER_BYTES)
        self.ended = False  # (a read found nothing more: the end of the block, or of the file)

    def readline(self, size: int | None = None) -> bytes:
        line = self._line(self.left + 1)
        self.ended = self.ended or not line
        self.left -= len(line)
        if self.left < 0:
            raise TooLarge(f"its {self.what} headers are over {MAX_HEADER_BYTES:,} bytes")
        if self.lines is not None:
            self.lines.append(line)
        return line

    def _line(self, length: int) -> bytes:
        """The next line, up to `length` bytes, read to its end: warcio's readline, given a length (the bound, a
        LimitReader's Content-Length), cuts a line over three of its blocks or more, counting the first ones'
        bytes twice (the rest of a 34 kB header line was read as another line: dropped, or a header of its own)."""
        line = self.stream.readline(length)
        if not line or line.endswith(b"\n") or len(line) >= length:  # (a whole line: nearly always)
            return line
        pieces, size = [line], len(line)
        while pieces[-1] and not pieces[-1].endswith(b"\n") and size < length:
            pieces.append(self.stream.readline(length - size))
            size += len(pieces[-1])
        return b"".join(pieces)

    def unended(self) -> list[bytes] | None:
        """The lines read, when they ran to the end of the block with no blank line after them, or
        the first is no status line (an HTTP/0.9 response: all of it is the page)."""
        lines = self.lines
        if lines and ((not lines[-1] and any(lines)) or (lines[0].strip() and not _STATUS_LINE.match(lines[0]))):
            return lines
        return None


_STATUS_LINE = re.compile(rb"[ \t]*HTTP/", re.I)
# A header field's line (RFC 9110: a token, then a colon), and a folded one's continuation.
_HEADER_FIELD = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:")
_CONTINUATION = re.compile(rb"[ \t]+[^<\s]")


# 1xx responses before the final one (a server sends one or two; a 102 Processing each ~20 s of a slow answer)
MAX_INTERIM_RESPONSES = 64


def _is_interim(headers) -> bool:
    code = headers.get_statuscode() if headers is not None else ""
    return len(code) == 3 and code.startswith("1") and code != "101"


def final_response_headers(headers, stream):
    """The headers of the final response after interim ones (``100 Continue``, ``103 Early Hints``),
    read from `stream` (the payload after `headers`), and the bytes of the header blocks read.
    Browsers skip 1xx responses; warcio took the first for the record's, and the page's own headers
    for its payload (counted not_html).  At most `MAX_INTERIM_RESPONSES`, within `MAX_HEADER_BYTES`: past
    either, `TooLarge` naming it (past the count, the last interim response was taken for the page's: a page
    after nine ``102 Processing`` was counted not_html, no reason given)."""
    from warcio.statusandheaders import StatusAndHeadersParser

    lines = _HeaderLines(stream, "HTTP", keep=True)
    for _ in range(MAX_INTERIM_RESPONSES):
        if not _is_interim(headers):
            break
        try:
            headers = StatusAndHeadersParser([], verify=False).parse(lines)
        except EOFError:  # (nothing after it)
            break
    else:
        if _is_interim(headers):
            raise TooLarge(f"more than {MAX_INTERIM_RESPONSES} interim (1xx) responses before its final one")
    return headers, b"".join(lines.lines)


def split_unended_headers(lines: list[bytes]):
    """An HTTP block whose header lines run to its end with no blank line, cut where its headers end:
    at the first line that is no header field (``<!doctype html>``, a line of text), as the blank
    line should have.  (warcio took every line for a header, dropping those without a colon, and
    the payload was empty.)  A block whose first line is no status line is an HTTP/0.9 response, all
    page, as browsers read one (warcio took its lines up to the first blank one for headers).
    Returns (warcio's StatusAndHeaders, the payload read so far), or None when every line is a header."""
    from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser

    if not _STATUS_LINE.match(lines[0]):
        return StatusAndHeaders("", [], protocol=""), b"".join(lines)
    end = next((i for i in range(1, len(lines)) if lines[i]
                and not _HEADER_FIELD.match(lines[i]) and not (i > 1 and _CONTINUATION.match(lines[i]))), None)
    if end is None:
        return None
    head = b"".join(lines[:end])
    headers = StatusAndHeadersParser([], verify=False).parse(io.BytesIO(head + b"\r\n")) if head \
        else StatusAndHeaders("", [], protocol="")
    return headers, b"".join(lines[end:])


def _record_loader():
    """warcio's record loader, parsing a record's HTTP block by what the record is, not by how its
    URI is spelled: warcio parses it only when WARC-Target-URI starts with ``http:`` or ``https:``,
    so a response for ``HTTP://EX.COM/x`` or ``example.com/x`` kept its HTTP headers in its
    payload.  Here a request, response or revisit record's block is HTTP when its Content-Type
    says ``application/http``, or its URI's scheme (in any case) is http or https.  (The URI
    itself is only ever metadata.)"""
    from warcio.recordloader import ArcWarcRecordLoader

    class RecordLoader(ArcWarcRecordLoader):
        block_type = ""
        headers_too_long = None

        def parse_record_stream(self, stream, *args, **kwargs):
            self.headers_too_long = self.http_unended = self.block_missing = None
            record = super().parse_record_stream(stream, *args, **kwargs)
            record.headers_too_long = self.headers_too_long  # (`WarcFile._judge` skips it as too_large)
            record.http_unended = self.http_unended  # (`WarcFile._judge` finds its payload in them)
            record.block_missing = self.block_missing  # (`WarcFile._judge` skips it as truncated)
            return record

        def _ensure_target_uri_format(self, rec_headers):
            # warcio's (the <...> of wget 1.19's bug taken off, spaces percent-encoded), without its warning: one
            # WARNING line a record, the URI quoted as it came (a crawl of 1,000 such URIs: 1,000 lines on stderr in
            # plexity clean and plexity run alike; an ESC or BEL of the URI sent to the terminal)
            uri = rec_headers.get_header("WARC-Target-URI")
            if uri is not None and uri.startswith("<") and uri.endswith(">"):
                uri = uri[1:-1]
                rec_headers.replace_header("WARC-Target-URI", uri)
            if uri is not None and " " in uri:
                uri = uri.replace(" ", "%20")
                rec_headers.replace_header("WARC-Target-URI", uri)
            return uri

        def _detect_type_load_headers(self, stream, statusline=None, known_format=None):
            if statusline is not None and len(statusline) > MAX_HEADER_BYTES:
                raise TooLarge(f"a line of more than {MAX_HEADER_BYTES:,} bytes where a record should start")
            # (over the bound: TooLarge, the record unreadable; reading resumes at the next record)
            lines = _HeaderLines(stream, "WARC")
            the_format, rec_headers = super()._detect_type_load_headers(lines, statusline, known_format)
            if lines.ended:  # (no blank line after them: the file, or its gzip member, ends in them)
                self.block_missing = "the file ends in its WARC headers"
            self.block_type = ((rec_headers.get_header("Content-Type") or "").lower()
                               if the_format in ("warc", "arc2warc") else "")
            return the_format, rec_headers

        def load_http_headers(self, rec_type, uri, stream, length):
            uri = uri or ""  # (no WARC-Target-URI: warcio called None.startswith, and the whole record was lost)
            if rec_type in self.HTTP_RECORDS and ("application/http" in self.block_type
                                                  or (uri or "").lower().startswith(self.HTTP_SCHEMES)):
                uri = "http:"  # (what warcio's own check asks of it)
            lines = _HeaderLines(stream, "HTTP", keep=rec_type == "response")
            try:
                headers = super().load_http_headers(rec_type, uri, lines, length)
            except TooLarge as exc:  # (the record's end is known: it alone is skipped)
                self.headers_too_long = str(exc)
                return None
            except EOFError:
                # Nothing where its block should start, though its Content-Length is not 0: the file (or the
                # record's gzip member, with no member going on with it) ends after its WARC headers.  warcio's
                # iterator took the EOFError for the end of the file and stopped: the record was lost, the file
                # not named damaged.  (An empty revisit is warcio's own case: it returns None.)
                self.block_missing = self.block_missing or "the file ends after its WARC headers: its block is missing"
                return None
            self.http_unended = lines.unended() if headers is not None else None
            if lines.ended and (getattr(stream, "limit", 0) or 0) > 0:
                # (its headers ran to the end of the file, or of its gzip member with no member going on with it,
                # before its Content-Length: counted not_html, or not_response, by plexity run, truncated by plexity
                # clean once it had copied it)
                self.block_missing = self.block_missing or \
                    "the file ends in its HTTP headers: the rest of its block is missing"
            return headers

    return RecordLoader(verify_http=False, arc2warc=False)  # (ArchiveIterator's own settings)


_GAP_BYTES = b"\r\n\t \0"  # (blank lines; NULs: a file padded to a block size, as gzip -d allows)
_GAP_BLOCK = 1 << 14


def _padding_only(fileobj, start: int, end: int) -> bool:
    """Whether the bytes from `start` to `end` are NULs and whitespace only (at most `MAX_HEADER_BYTES`)."""
    if end - start > MAX_HEADER_BYTES:
        return False
    fileobj.seek(start)
    return not fileobj.read(end - start).strip(_GAP_BYTES)


def _skip_gap(fh, unused: bytes) -> bytes | None:
    """What follows the whitespace or NULs at the start of `unused` (the bytes after a gzip member), reading
    on from `fh` while there is only that, up to `MAX_HEADER_BYTES` of it; None at the end of
    the file."""
    rest, seen = unused.lstrip(_GAP_BYTES), len(unused)
    while not rest:
        block = fh.read(_GAP_BLOCK)
        if not block:
            return None
        seen += len(block)
        rest = block.lstrip(_GAP_BYTES)
        if seen > MAX_HEADER_BYTES:  # (more than a gap: read as warcio would, as damage)
            return rest or block
    return rest


_CONTINUATION_PEEK = 512  # bytes of the next gzip member to inflate its start from


def _member_continues_record(iterator, record_open: bool) -> bool:
    """Whether warcio's reader (of `iterator`) stands at the end of a gzip member that a gzip member
    follows which does not start a WARC record: the rest of the record being read (`record_open`), or
    the blank lines that end the record just read (a member of them alone); if so, the reader moves to
    it.  A member that does not inflate, bytes that are no gzip member, or the end of the file: no."""
    reader, fh = iterator.reader, iterator.fh
    decompressor = reader.decompressor
    if decompressor is None or not decompressor.eof:
        return False
    data = unused = decompressor.unused_data
    start = fh.tell() - len(unused)
    seekable = getattr(fh, "seekable", None)
    if len(data) < _CONTINUATION_PEEK and seekable is not None and seekable():
        # (the member ended near the end of the block read; an unseekable file is not read further:
        # the bytes read decide)
        data += fh.read(_CONTINUATION_PEEK - len(data))
    if _GZIP_MEMBER.match(data):
        peek = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            head = peek.decompress(data, 64)
        except zlib.error:
            head, peek = b"", None
        rest = peek is not None and (head or peek.eof) and not head.lstrip(b"\r\n").startswith(b"WARC/")
        if rest and (record_open or (head and peek.eof and not head.strip(b"\r\n"))):
            reader.starting_data = data
            reader._init_decomp(reader.decomp_type)
            iterator.previous_member_start, iterator.member_start = iterator.member_start, start
            return True
    if len(data) > len(unused):
        fh.seek(start + len(unused))  # (the bytes looked at are read again, as the next member's)
    return False


def _archive_iterator(fileobj):
    """warcio's ArchiveIterator, noting (in `truncated`) that it ended inside a gzip member,
    where warcio itself stops silently, and where the record being read starts
    (`damage_offset`); a .warc.gz gzipped as one member read whole (warcio's iterator stops
    there with an error meant for replay tools); its gzip members inflated by
    `_gzip_member_decompressors` (inflating is most of the time spent reading a .warc.gz)."""
    from warcio.archiveiterator import ArchiveIterator

    class CheckedArchiveIterator(ArchiveIterator):
        truncated = False
        parsing, block = False, None  # (the record being read: `record_open`)
        INC_RECORD = ""  # (warcio writes a warning to stderr for a wrong Content-Length: counted here instead)

        def close(self):
            self.truncated = self.truncated or _truncated(self)
            super().close()

        def _raise_invalid_gzip_err(self):  # one gzip member holding several records: read on
            pass

        def _next_record(self, next_line):
            reader = self.reader
            if reader.decompressor is None:
                self.record_start = self.fh.tell() - reader.rem_length() - len(next_line or b"")
            else:
                # warcio moves on to the next gzip member while bytes of the last one (after a
                # Content-Length too short) are still buffered: those are read first
                buffered = bool(next_line) or (reader.buff is not None and reader.buff.tell() < reader.buff_size)
                self.record_start = self.previous_member_start if buffered else self.member_start
            self.block, self.parsing = None, True
            try:
                record = super()._next_record(next_line)
            finally:
                self.parsing = False
            self.block = record.raw_stream  # (warcio's LimitReader: its `limit` is what the record still holds)
            return record

        def record_open(self) -> bool:
            """Whether the record being read is not whole yet: its headers are being read, or its
            Content-Length says more of its block is due."""
            return self.parsing or (getattr(self.block, "limit", 0) or 0) > 0

        def damage_offset(self) -> int:
            """Where the record being read starts: its gzip member's first byte, or its first line."""
            return self.record_start

    iterator = CheckedArchiveIterator(fileobj)
    iterator.loader = _record_loader()
    reader = iterator.reader
    iterator.member_start = iterator.previous_member_start = iterator.record_start = iterator.offset
    # warcio makes a decompressor per gzip member from its class-wide table: this reader's own
    # table, and its first member's decompressor (nothing is read yet).
    gzip_member = _gzip_member_decompressors()
    reader.DECOMPRESSORS = {**reader.DECOMPRESSORS, "gzip": gzip_member}
    if reader.decomp_type == "gzip":
        reader.decompressor = gzip_member()
    next_member = reader.read_next_member

    def read_next_member():
        # the next member starts where the bytes read from the file, less those after this member, end
        unused = getattr(reader.decompressor, "unused_data", b"") if reader.decompressor is not None else b""
        if unused and unused[:1] in _GAP_BYTES:  # blank lines or NULs after a member: not damage
            rest = _skip_gap(iterator.fh, unused)
            if rest is None:  # (only blank lines to the end: no member follows)
                return False
            iterator.previous_member_start, iterator.member_start = iterator.member_start, \
                iterator.fh.tell() - len(rest)
            reader.starting_data = rest
            reader._init_decomp(reader.decomp_type)
            return True
        start = iterator.fh.tell() - len(unused or b"")
        moved = next_member()
        if moved:
            iterator.previous_member_start, iterator.member_start = iterator.member_start, start
        return moved

    reader.read_next_member = read_next_member
    # (the ended member's decompressor last found not to go on: asked again on every read; whether
    # `empty` is filling the buffer from the next member, which asks `empty` again)
    judged, filling = [None], [False]

    def empty():
        # A writer may cut one record's bytes across gzip members: where a member ends inside a
        # record (its headers, or fewer bytes than its Content-Length), the next member goes on
        # with it, unless that one starts a record (then this one was cut short: `truncated`).
        buff = reader.buff
        if buff is not None and buff.tell() < reader.buff_size:
            return False
        decompressor = reader.decompressor
        if decompressor is None or decompressor is judged[0] or not decompressor.eof or filling[0]:
            return True
        filling[0] = True
        try:
            while True:  # (each turn moves past a member's bytes, or stops: linear in the file)
                if not _member_continues_record(iterator, iterator.record_open()):
                    judged[0] = reader.decompressor
                    return True
                reader._fillbuff()
                if reader.buff is not None and reader.buff.tell() < reader.buff_size:
                    return False
                if not reader.decompressor.eof:  # (a member that needs more bytes than the file holds)
                    return True
        finally:
            filling[0] = False

    reader.empty = empty
    next_line = reader.readline

    def readline(length=None):  # (the blank lines between records: a garbage line is read up to the bound)
        return next_line(MAX_HEADER_BYTES + 1 if length is None else length)

    reader.readline = readline
    return iterator


_GZIP_MEMBER = re.compile(rb"\x1f\x8b\x08[\x00-\x1f]")  # a gzip header: deflate, no reserved flag bits
_WARC_LINE = re.compile(rb"WARC/1\.[0-9]\r?\n")
_HEADERS_END = re.compile(rb"\r?\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*([0-9]+)[ \t]*\r?$", re.I | re.M)
_WARC_TYPE = re.compile(rb"^warc-type:", re.I | re.M)
_RESYNC_BLOCK = 1 << 20
_MEMBER_PEEK = 1 << 12
_MAX_HEADERS = 1 << 16


def _inflates_to_warc(data: bytes) -> bool:
    """Whether gzip member bytes (its start) inflate to a WARC record's first line."""
    try:
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 16)
    except zlib.error:
        return False
    return bool(_WARC_LINE.match(head))


def _is_warc_member(fileobj, offset: int) -> bool:
    """Whether a gzip member starting at `offset` inflates to a WARC record's first line."""
    fileobj.seek(offset)
    return _inflates_to_warc(fileobj.read(_MEMBER_PEEK))


def _is_whole_record(fileobj, offset: int, size: int) -> bool:
    """Whether the ``WARC/1.x`` line at `offset` starts a record: its headers hold no other
    record's first line, a WARC-Type and a Content-Length, and that length ends it where the next
    record starts (a blank line, then ``WARC/1.`` or the end of the file).  A record written
    inside a page is followed by the rest of the page.  (One that claims to run past the end of
    the file is taken: it is read, and counted as cut short.)"""
    fileobj.seek(offset)
    head = fileobj.read(_MEMBER_PEEK)
    end = _HEADERS_END.search(head)
    if end is None and len(head) == _MEMBER_PEEK:  # (long headers: up to 64 kB)
        head += fileobj.read(_MAX_HEADERS - _MEMBER_PEEK)
        end = _HEADERS_END.search(head)
    if end is None:
        return False
    headers = head[:end.start()]
    length = _CONTENT_LENGTH.search(headers)
    if length is None or not _WARC_TYPE.search(headers) or b"\nWARC/1." in headers:
        return False
    record_end = offset + end.end() + int(length.group(1))
    if record_end >= size:
        return True
    fileobj.seek(record_end)
    tail = fileobj.read(64)
    if not _HEADERS_END.match(tail):
        return False
    rest = tail.lstrip(b"\r\n")
    return rest.startswith(b"WARC/1.") or (not rest and record_end + len(tail) >= size)


def _container(head: bytes) -> bool | None:
    """Whether a WARC file whose first bytes are `head` is gzipped (True), uncompressed (False),
    or cannot tell (None: damaged at its start, resynchronised on either kind of record start).
    Neither a gzip header nor ``WARC/`` alone is enough: a file's first bytes may have been
    overwritten with one, or garbage that begins with one written before its first record.  A
    gzipped file's first member inflates to a ``WARC/1.x`` line; an uncompressed file starts with
    one."""
    if _GZIP_MEMBER.match(head) and _inflates_to_warc(head):
        return True
    return False if _WARC_LINE.match(head) else None


# Where a record may start, by container.  Each pattern is looked for alone (search, from each match on: the
# overlapping ones too, as a gzip header may begin inside another's bytes): a lookahead of both tried at every offset
# took ~25 ms a MB, and a WARC whose last gigabyte is NULs (a crawler's preallocated file, a crash's zero-filled tail)
# 13 to 20 s to read past its last record; a pattern that starts with its bytes is found at ~1 ms a MB.
_STARTS = {True: (_GZIP_MEMBER,), False: (_WARC_LINE,), None: (_GZIP_MEMBER, _WARC_LINE)}


def _record_starts(data: bytes, gzipped: bool | None):
    """The offsets in `data` where a record may start (`_STARTS`), in order, every one."""
    found = {pattern: pattern.search(data) for pattern in _STARTS[gzipped]}
    while True:
        found = {pattern: match for pattern, match in found.items() if match is not None}
        if not found:
            return
        pattern, match = min(found.items(), key=lambda item: item[1].start())
        yield match.start()
        found[pattern] = pattern.search(data, match.start() + 1)


def next_record_start(fileobj, after: int, gzipped: bool | None = None) -> int | None:
    """The file offset of the first record that starts after offset `after`, or None.

    In a ``.warc.gz`` (`gzipped` True), a gzip member that inflates to a ``WARC/1.x`` line:
    records start at member boundaries, and a page's bytes are compressed inside their own
    member.  In an uncompressed file (False), a ``WARC/1.x`` line that starts a whole record
    (`_is_whole_record`): never a record written inside another record's page.  (None: a file
    damaged at its start, either.)  Linear in the bytes passed over; raises `ResyncGaveUp` after
    `MAX_RESYNC_CANDIDATES` false starts (30 MB of gzip magic bytes took minutes)."""
    size = fileobj.seek(0, os.SEEK_END)
    position, carry, checked, tried = after + 1, b"", after, 0
    # (the next record is most often a few kB on: the blocks read grow from _MEMBER_PEEK, as a 1 MiB read for each
    # damaged record took a .warc.gz of 10,000 of them 2.4 s of copying)
    block_size = _MEMBER_PEEK
    while True:
        fileobj.seek(position)
        block = fileobj.read(block_size)
        block_size = min(2 * block_size, _RESYNC_BLOCK)
        if not block:
            return None
        data, base = carry + block, position - len(carry)
        for start in _record_starts(data, gzipped):
            offset = base + start
            if offset <= checked:
                continue
            checked = offset
            tried += 1
            if tried > MAX_RESYNC_CANDIDATES:
                raise ResyncGaveUp(f"gave up looking for the next record after {MAX_RESYNC_CANDIDATES:,} false "
                                   f"starts (bytes {after + 1:,} to {offset:,})")
            if data.startswith(b"\x1f", start):
                whole = (_inflates_to_warc(data[start:start + _MEMBER_PEEK]) if start + _MEMBER_PEEK <= len(data)
                         else _is_warc_member(fileobj, offset))
            else:
                whole = _is_whole_record(fileobj, offset, size)
            if whole:
                return offset
        position += len(block)
        carry = data[-16:]


# -- document files -------------------------------------------------------------------------

def open_input(path: str | os.PathLike):
    """`path` opened for reading in binary mode, if it is a regular file.

    Raises `NotARegularFile` for a FIFO, socket, device or directory (opening a FIFO waits for a
    writer for ever; the check is made again on the open file, which is opened without waiting),
    and OSError for what cannot be opened (a symlink loop, a dangling link, no permission)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotARegularFile(f"not a regular file ({_file_type(os.stat(path).st_mode)})")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # (replaced since the check above)
            raise NotARegularFile(f"not a regular file ({_file_type(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a file"


def read_document_file(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a text or HTML file, gunzipped if its name ends in ``.gz`` (`read_document`,
    without the count of bytes after the gzip stream)."""
    return read_document(path, limit)[0]


def read_document(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> tuple[bytes, int]:
    """The bytes of a text or HTML file, gunzipped if its name ends in ``.gz``, and how many bytes
    after its gzip stream were not read (trailing garbage: ignored, as gzip and browsers ignore it;
    0 for a file not gzipped).

    Raises TooLarge past `limit` bytes (after decompression; reading stops there),
    `NotARegularFile` for a FIFO, socket or device, `ReadError` for a read the system failed (EIO),
    and OSError / EOFError / zlib.error / Undecodable (more than `MAX_GZIP_MEMBERS` gzip members) for an
    unreadable or damaged file.
    """
    gzipped = path.name.lower().endswith(".gz")
    with open_input(path) as opened:
        raw = _Reads(opened, str(path))
        data, trailing = _gunzip_file(raw, limit) if gzipped else (raw.read(limit + 1), 0)
    if len(data) > limit:
        raise TooLarge(f"{'inflates to ' if gzipped else ''}more than {limit:,} bytes")
    return data, trailing


def _gunzip_file(raw, limit: int) -> tuple[bytes, int]:
    """What the gzip members at the start of `raw` inflate to (at most `limit` + 1 bytes; NUL padding
    between and after them skipped, as gzip does), and how many bytes follow them that are not a gzip
    member (GzipFile raised on those, and the whole file was lost).  More than `MAX_GZIP_MEMBERS` members are
    `Undecodable`, as in a Content-Encoding body: members that inflate to nothing never reach the cap, and 40 MB of
    empty ones took 9 s (a gigabyte, minutes)."""
    out = bytearray()
    data = raw.read(_CHUNK)
    if data and not data.startswith(b"\x1f\x8b"):
        raise gzip.BadGzipFile(f"not a gzipped file (it starts {data[:8]!r})")
    members = 0
    while data:
        members += 1
        if members > MAX_GZIP_MEMBERS:
            raise Undecodable(f"more than {MAX_GZIP_MEMBERS:,} gzip members")
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not decompressor.eof:  # one member
            out += decompressor.decompress(data, limit + 1 - len(out))
            if len(out) > limit:
                return bytes(out), 0
            data = decompressor.unused_data if decompressor.eof else raw.read(_CHUNK)
            if not data and not decompressor.eof:
                raise EOFError("the gzip stream ends early (the file is cut short)")
        data = data.lstrip(b"\0")
        while len(data) < 2:  # (a member's start may be split between two reads)
            more = raw.read(_CHUNK)
            if not more:
                break
            data = (data + more).lstrip(b"\0")
        if data and not data.startswith(b"\x1f\x8b"):
            return bytes(out), len(data) + os.fstat(raw.fileno()).st_size - raw.tell()
    return bytes(out), 0
