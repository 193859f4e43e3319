"""Reading inputs, the one way every front end does: WARC records and (gzipped) document files.

- `WarcFile` turns each record of a WARC file into one outcome: an HTML payload to clean,
  or a skip reason (`RECORD_SKIPS`); a file that is not a WARC, ends inside a record or
  turns to garbage gets a file problem (`FILE_PROBLEMS`) naming the record after which
  reading stopped.  ``plexity clean`` (`plexity_plugins.cleaning.files`) and ``plexity run``'s
  `WarcHtmlReader` both read through it, so a record is judged the same by both.
- `read_document_file` reads a ``.html``/``.txt`` file, gzipped or not, stopping at the
  size cap (a gzip bomb is never inflated past it).

Every cap is `MAX_DOCUMENT_BYTES` unless a caller gives another (``--max-document-bytes``,
``WarcHtmlReader(max_payload_bytes=...)``).  Payloads are decoded here, not by warcio:
warcio's Content-Encoding decoding inflates without a limit, hides a corrupt gzip body
(it writes to stderr and returns what it had) and breaks on brotli >= 1.2 (it sets
``unused_data`` on the decompressor, which brotli 1.2's no longer allows), which used to
end the reading of the whole file at the first ``Content-Encoding: br`` record.

Only damage in the input becomes a skip or a file problem; an error of the installation
(`plexity_plugins.errors.ENVIRONMENT_ERRORS`) propagates.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ENVIRONMENT_ERRORS, InstallationError, TooLarge, Undecodable

MAX_DOCUMENT_BYTES = 50_000_000  # per document, decompressed: 50 MB

HTML_TYPES = ("text/html", "application/xhtml+xml")

# Why a record gives no HTML payload (each record gets exactly one outcome).
NOT_RESPONSE = "not_response"  # request, metadata, warcinfo, revisit ... records
NOT_HTML = "not_html"  # images, PDF, ...
TOO_LARGE = "too_large"  # payload (decompressed) over the cap
EMPTY_PAYLOAD = "empty_payload"
UNDECODABLE = "undecodable"  # a Content-Encoding (gzip, deflate, br) body that does not decode
TRUNCATED = "truncated"  # fewer payload bytes than its Content-Length
RECORD_SKIPS = (NOT_RESPONSE, NOT_HTML, TOO_LARGE, EMPTY_PAYLOAD, UNDECODABLE, TRUNCATED)

# Why reading a file stopped before its end.
NOT_A_WARC = "not_a_warc"  # no WARC record at its start: nothing read
TRUNCATED_FILE = "truncated"  # ends inside a record (a cut gzip member, a short payload)
CORRUPT_FILE = "corrupt"  # unreadable from some record on
FILE_PROBLEMS = (NOT_A_WARC, TRUNCATED_FILE, CORRUPT_FILE)

# Start of a payload that is HTML although no Content-Type says so (old crawls).
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|meta|title)\b", re.I | re.S)
_SNIFF_BYTES = 4096
_CHUNK = 1 << 16


def is_html_type(content_type: str | None, identified: str | None = None, head: bytes = b"") -> bool:
    """HTML by the HTTP Content-Type, else WARC-Identified-Payload-Type, else by the payload's start."""
    declared = (content_type or identified or "").lower()
    if declared.strip():
        return any(t in declared for t in HTML_TYPES)
    return bool(_HTML_START.match(head[:_SNIFF_BYTES]))


def http_header(record, name: str) -> str | None:
    headers = record.http_headers
    return headers.get_header(name) if headers is not None else None


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


def _inflate(wbits: int, data: bytes, limit: int) -> bytes:
    """`data` inflated by zlib (`wbits`: gzip, zlib or raw deflate), never producing more than
    `limit` + 1 bytes; gzip members that follow are inflated too (concatenated gzip), bytes
    after the end that are not a gzip member are ignored, as browsers do."""
    decompressor = zlib.decompressobj(wbits)
    out = bytearray()
    while data:
        out += decompressor.decompress(data, limit + 1 - len(out))
        if len(out) > limit:
            raise TooLarge(f"inflates to more than {limit:,} bytes")
        data = decompressor.unconsumed_tail
        if decompressor.eof:
            data = decompressor.unused_data
            if not (wbits > 16 and data.startswith(b"\x1f\x8b")):
                break
            decompressor = zlib.decompressobj(wbits)
    if not decompressor.eof:
        out += decompressor.flush()
        if not decompressor.eof:
            raise Undecodable("the compressed body ends early")
    return bytes(out)


def _unbrotli(data: bytes, limit: int) -> bytes:
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
                out += decompressor.process(b"", output_buffer_limit=limit + 1 - len(out))
        except TypeError:  # older brotli: feed it small pieces, so that one cannot inflate far
            for start in range(0, len(data), 1024):
                out += decompressor.process(data[start:start + 1024])
                if len(out) > limit:
                    break
    except brotli.error as exc:
        raise Undecodable(f"brotli: {exc}") from None
    if len(out) > limit:
        raise TooLarge(f"inflates to more than {limit:,} bytes")
    if not decompressor.is_finished():
        raise Undecodable("the brotli body ends early")
    return bytes(out)


def decode_content(data: bytes, encoding: str | None, limit: int) -> bytes:
    """The payload under its Content-Encoding (gzip, x-gzip, deflate, br; others as they are).

    As browsers and warcio do, a body that does not even start as the declared encoding is
    taken as already decoded (crawlers often store the decoded body with the header kept).
    """
    encoding = (encoding or "").strip().lower()
    if not data or encoding not in ("gzip", "x-gzip", "deflate", "br"):
        return data
    if encoding in ("gzip", "x-gzip"):
        if not data.startswith(b"\x1f\x8b"):
            return data
        wbits = (16 + zlib.MAX_WBITS,)
    elif encoding == "deflate":
        wbits = (zlib.MAX_WBITS, -zlib.MAX_WBITS)  # zlib-wrapped, or raw deflate as some servers send
    else:
        try:
            return _unbrotli(data, limit)
        except Undecodable:
            if _HTML_START.match(data[:_SNIFF_BYTES]):  # stored decoded
                return data
            raise
    error = None
    for bits in wbits:
        try:
            return _inflate(bits, data, limit)
        except zlib.error as exc:
            error = exc
    if encoding == "deflate" and _HTML_START.match(data[:_SNIFF_BYTES]):
        return data
    raise Undecodable(f"{encoding}: {error}")


def dechunk(data: bytes) -> bytes:
    """The body of a ``Transfer-Encoding: chunked`` payload; the data unchanged when it is
    not chunked after all (the crawler stored it de-chunked with the header kept)."""
    out = bytearray()
    pos = 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            return data
        size_field = data[pos:end].split(b";", 1)[0].strip()
        try:
            size = int(size_field, 16)
        except ValueError:
            return data
        if size == 0:
            return bytes(out)
        chunk = data[end + 2:end + 2 + size]
        out += chunk
        if len(chunk) < size:  # cut short: what there is
            return bytes(out)
        pos = end + 2 + size
        if data[pos:pos + 2] == b"\r\n":
            pos += 2


# -- WARC files ---------------------------------------------------------------------------

@dataclass
class WarcRecord:
    """One record of a WARC file and what reading made of it.

    `payload` is the decoded HTTP payload of an HTML response (bytes, charset not yet
    applied), else None and `skip` says why.  `record` is warcio's record; for a
    not_response or not_html record its payload has not been read yet, so it can still be
    copied (``WARCWriter.write_record``) before the next record is read.
    """

    number: int  # 1-based, in file order
    record: object
    uri: str
    content_type: str | None
    payload: bytes | None = None
    skip: str | None = None
    detail: str = ""
    offset: int | None = None  # where the record (its gzip member) starts in the file
    _limit_reader: object = field(init=False, repr=False)

    def __post_init__(self):
        self._limit_reader = self.record.raw_stream  # (before any sniffing wraps it)

    def short_by(self) -> int:
        """How many payload bytes, of those its Content-Length announces, the file lacked
        (once the payload has been read or copied)."""
        return max(0, getattr(self._limit_reader, "limit", 0) or 0)

    @property
    def record_id(self) -> str | None:
        return self.record.rec_headers.get_header("WARC-Record-ID")

    @property
    def date(self) -> str | None:
        return self.record.rec_headers.get_header("WARC-Date")


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


class WarcFile:
    """The records of one WARC file (``.warc`` or ``.warc.gz``, read from `fileobj`).

    Iterating yields a `WarcRecord` for every record warcio finds, each with exactly one
    outcome (a payload, or a reason in `RECORD_SKIPS`).  Past damage (a record whose
    Content-Length is too short, negative or not a number, garbage between records) reading
    resynchronises at the next record: the next gzip member that inflates to a ``WARC/1.``
    line in a ``.warc.gz`` (each member is readable on its own), the next line starting
    ``WARC/1.`` in an uncompressed file.  `bytes_skipped` counts the bytes passed over,
    `records_recovered` the records read after a resynchronisation (lost before it).  A
    ``.warc.gz`` gzipped as one single member (the whole file one stream) is read whole, as
    warcio's own tools read it.

    When the file is damaged, `problem` is set (a reason in `FILE_PROBLEMS`) and
    `problem_detail` says after which record (and where reading resumed, if it did);
    `records` counts the records yielded.

    Args:
        fileobj: the file, opened in binary mode (not decompressed: warcio reads gzip
            member by member, so the records before a damaged member are still read),
            seekable to resynchronise (an unseekable one stops at the first damage)
        max_payload_bytes: larger payloads (decompressed) are skipped as ``too_large``
    """

    def __init__(self, fileobj, max_payload_bytes: int = MAX_DOCUMENT_BYTES):
        self.fileobj = fileobj
        self.max_payload_bytes = max_payload_bytes
        self.records = 0
        self.records_recovered = 0
        self.bytes_skipped = 0
        self.problem: str | None = None
        self.problem_detail = ""

    def _stop(self, problem: str, detail: str) -> None:
        if self.problem is None or self.problem == NOT_A_WARC:
            self.problem = problem
        self.problem_detail = f"{self.problem_detail}; {detail}" if self.problem_detail else detail

    def __iter__(self):
        try:
            start = self.fileobj.tell()
            self.fileobj.seek(start)
        except (OSError, AttributeError, ValueError):  # not seekable: no resynchronisation
            start = None
        resumed = False
        while True:
            iterator = _archive_iterator(self.fileobj)
            self._damage, self._last = None, None
            damage = yield from self._segment(iterator, resumed)
            if damage is None:
                return
            # The next record after the last one read: a wrong Content-Length may have made that
            # one swallow the start of the next (an uncompressed file), or warcio may have moved
            # to the next gzip member before failing on what was left of the last one.
            after = damage if self._last is None else min(damage, self._last)
            # (either kind of record start: the damage may be where the file says what it is)
            resume = next_record_start(self.fileobj, after) if start is not None else None
            if resume is not None and resume == damage:  # the record that failed: the one after it
                resume = next_record_start(self.fileobj, damage)
            problem, detail = self._damage
            if resume is None:  # nothing readable after the damage: reading stops there
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
            except ENVIRONMENT_ERRORS:
                raise
            except Exception as exc:  # warcio/zlib raise assorted errors on damaged input
                if self.records == 0 and not iterator.truncated:
                    self._note(NOT_A_WARC, f"not a WARC file ({describe(exc)})")
                elif iterator.truncated or _truncated(iterator) or isinstance(exc, EOFError):
                    self._note(TRUNCATED_FILE, f"truncated after record {self._complete(previous)}")
                else:
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} "
                                             f"({describe(exc)})")
                return iterator.damage_offset()
            if record is None:
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
                    self._note(NOT_A_WARC, f"not a WARC file (it starts as {record.format})")
                else:
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} "
                                             f"(not a WARC record)")
                return iterator.damage_offset()
            self.records += 1
            self.records_recovered += resumed
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            item = WarcRecord(self.records, record, uri, http_header(record, "Content-Type"))
            item.offset = self._last = iterator.damage_offset()
            broken = _broken_headers(record)
            if broken:  # where this record ends is unknown: look for the next one from its start
                item.skip, item.detail = TRUNCATED, broken
                self._note(CORRUPT_FILE, f"record {self.records}: {broken}")
                yield item
                return item.offset
            try:
                self._judge(item)
            except ENVIRONMENT_ERRORS:
                raise
            except Exception as exc:  # the container is damaged inside this record's payload
                item.payload, item.skip = None, TRUNCATED
                item.detail = f"unreadable payload: {describe(exc)}"
            previous = item
            yield item

    def _note(self, problem: str, detail: str) -> None:
        self._damage = (problem, detail)

    def _complete(self, last: WarcRecord | None) -> int:
        """How many records were read whole, when reading stopped after `last`."""
        return self.records - 1 if last is not None and last.short_by() else self.records

    def _judge(self, item: WarcRecord) -> None:
        """Set the record's payload, or its skip reason."""
        record, content_type = item.record, item.content_type
        if record.rec_type != "response":
            item.skip = NOT_RESPONSE
            return
        raw_stream = record.raw_stream
        identified = record.rec_headers.get_header("WARC-Identified-Payload-Type")
        head = b""
        if not (content_type or identified or "").strip():  # undeclared: sniff, keeping the bytes
            head = raw_stream.read(_SNIFF_BYTES)
            record.raw_stream = _Prefixed(head, raw_stream)
        if not is_html_type(content_type, identified, head):
            item.skip = NOT_HTML
            return
        try:
            body = read_capped(record.raw_stream, self.max_payload_bytes)  # (the sniffed head included)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return
        if item.short_by():  # fewer bytes than its Content-Length
            item.skip, item.detail = TRUNCATED, f"{item.short_by():,} bytes short of its Content-Length"
            return
        if (http_header(record, "Transfer-Encoding") or "").strip().lower() == "chunked":
            body = dechunk(body)
        try:
            body = decode_content(body, http_header(record, "Content-Encoding"), self.max_payload_bytes)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return
        except Undecodable as exc:
            item.skip, item.detail = UNDECODABLE, str(exc)
            return
        if not body.strip():
            item.skip = EMPTY_PAYLOAD
            return
        item.payload = body


def _broken_headers(record) -> str | None:
    """Why a record's WARC headers cannot be trusted to say where it ends, or None."""
    declared = record.rec_headers.get_header("Content-Length")
    if record.length is None or declared is None:  # (warcio would read on to the end of the file)
        return "no Content-Length: where the record ends is unknown"
    if not declared.strip().isdigit():  # (warcio reads it as 0 and loses its place)
        return f"its Content-Length is not a number of bytes ({declared.strip()[:20]!r})"
    names = [name.lower() for name, _ in record.rec_headers.headers]
    if names.count("warc-type") > 1 or names.count("warc-record-id") > 1:
        return "its headers run into the next record's (a record cut short)"
    return None


def describe(exc: BaseException) -> str:
    """An exception in one short printable line (warcio quotes the garbage it met)."""
    message = str(exc)
    message = message if len(message) <= 160 else message[:160] + "..."
    return f"{type(exc).__name__}: " + message.encode("ascii", "backslashreplace").decode("ascii").replace("\n", " ")


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


def _archive_iterator(fileobj):
    """warcio's ArchiveIterator, noting (in `truncated`) that it ended inside a gzip member,
    where warcio itself stops silently, and where the record being read starts
    (`damage_offset`); a .warc.gz gzipped as one member read whole (warcio's iterator stops
    there with an error meant for replay tools); its gzip members inflated by
    `_gzip_member_decompressors` (inflating is most of the time spent reading a .warc.gz)."""
    from warcio.archiveiterator import ArchiveIterator

    class CheckedArchiveIterator(ArchiveIterator):
        truncated = False
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
            return super()._next_record(next_line)

        def damage_offset(self) -> int:
            """Where the record being read starts: its gzip member's first byte, or its first line."""
            return self.record_start

    iterator = CheckedArchiveIterator(fileobj)
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
        start = iterator.fh.tell() - len(unused or b"")
        moved = next_member()
        if moved:
            iterator.previous_member_start, iterator.member_start = iterator.member_start, start
        return moved

    reader.read_next_member = read_next_member
    return iterator


_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_START = re.compile(rb"WARC/1\.[0-9]\r?\n")


def _is_warc_member(fileobj, offset: int) -> bool:
    """Whether a gzip member starting at `offset` inflates to a WARC record's first line."""
    fileobj.seek(offset)
    try:
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(fileobj.read(1 << 12), 16)
    except zlib.error:
        return False
    return bool(_WARC_START.match(head))


def next_record_start(fileobj, after: int) -> int | None:
    """The file offset of the first record that starts after offset `after`: a gzip member that
    inflates to a ``WARC/1.x`` line, or such a line; None if there is none."""
    markers = (_GZIP_MAGIC, b"WARC/1.")
    position, carry = after + 1, b""  # `carry`: the end of the previous block, for a marker across blocks
    while True:
        fileobj.seek(position)
        block = fileobj.read(1 << 20)
        if not block:
            return None
        data, base = carry + block, position - len(carry)
        candidates = sorted(found for marker in markers for found in _all(data, marker) if base + found > after)
        for found in candidates:
            offset = base + found
            if data.startswith(_GZIP_MAGIC, found):
                if _is_warc_member(fileobj, offset):
                    return offset
            elif _WARC_START.match(data, found):  # (at a line's start, or after a record cut short)
                return offset
        position += len(block)
        carry = data[-16:]


def _all(data: bytes, marker: bytes):
    found = data.find(marker)
    while found >= 0:
        yield found
        found = data.find(marker, found + 1)


# -- document files -------------------------------------------------------------------------

def read_document_file(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a text or HTML file, gunzipped if its name ends in ``.gz``.

    Raises TooLarge past `limit` bytes (after decompression; reading stops there), and
    OSError / EOFError / zlib.error for an unreadable or damaged file.
    """
    if path.name.lower().endswith(".gz"):
        with gzip.open(path, "rb") as f:  # GzipFile.read(n) inflates at most n bytes
            data = f.read(limit + 1)
    else:
        if path.stat().st_size > limit:
            raise TooLarge(f"more than {limit:,} bytes")
        data = path.read_bytes()
    if len(data) > limit:
        raise TooLarge(f"inflates to more than {limit:,} bytes")
    return data
