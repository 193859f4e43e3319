"""A WARC record's header blocks, read bounded and as browsers read them.

- `header_fields`: a block's fields by lower-cased name, a list field sent twice joined (`LIST_FIELDS`);
  `http_header`, one field of a record's HTTP headers.
- `_HeaderLines`: the lines of a block, at most `MAX_HEADER_BYTES` of them (warcio reads any line, and any number
  of lines, whole: 70 MB of header lines took 2 GB).
- `final_response_headers`: the final response's headers after interim (1xx) ones, at most
  `MAX_INTERIM_RESPONSES`; `split_unended_headers`: an HTTP block whose headers run on with no blank line, or an
  HTTP/0.9 response, cut where its headers end.

Apart from the WARC reader: warcio's record loader as adapted here (`warc_iterator`) reads a record's headers
through `_HeaderLines`, and the reader (`warc_files`) judges a record's payload by its headers.
"""

from __future__ import annotations

import io
import re

from ..errors import TooLarge
from .read_limits import MAX_HEADER_BYTES


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
