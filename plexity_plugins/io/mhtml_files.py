"""A page a browser saved as one file, MHTML (``.mhtml``, ``.mht``: Chrome's and Edge's "Webpage, Single File",
Internet Explorer's "Web Archive, single file", DevTools' ``Page.captureSnapshot``): a MIME ``multipart/related``
message whose root part is the page's HTML (quoted-printable or base64), the other parts its images, styles and
frames.  `mhtml_page` gives the root part's bytes, its Content-Type (its charset, if it says one) and its
Content-Location (the page's URL).

The parts are read in order and only up to the root part's end (Chrome writes it first): the images after it are
never read, and every part before it is let go once passed, so one page costs its HTML, never a gigabyte.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from email import message_from_bytes
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import collapse_rfc2231_value

from ..errors import TooLarge
from .input_files import what_file_is
from .payload_sniffing import _HTML_START
from .read_limits import _CHUNK, MAX_DOCUMENT_BYTES, MAX_HEADER_BYTES

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_HEADER_END = re.compile(rb"\r?\n\r?\n")


class NotMhtml(ValueError):
    """A file named as MHTML that holds no page: no MIME message, or a root part that is not HTML."""


@dataclass(frozen=True)
class MhtmlPage:
    body: bytes  # the page's HTML, its transfer encoding (quoted-printable, base64) undone
    content_type: str | None  # its part's Content-Type header ("text/html; charset=windows-1252"), for decode_html
    url: str | None  # its Content-Location (Chrome's Snapshot-Content-Location where the part has none)


class _Reader:
    """`fileobj` read in chunks into `buf`, at most `limit` bytes in all (`TooLarge` past them)."""

    def __init__(self, fileobj, limit: int):
        self.fileobj, self.limit, self.buf, self.read_bytes, self.ended = fileobj, limit, bytearray(), 0, False

    def more(self) -> bool:
        """Read another chunk; False at the end of the file."""
        if self.ended:
            return False
        chunk = self.fileobj.read(_CHUNK)
        self.ended = not chunk
        self.read_bytes += len(chunk)
        if self.read_bytes > self.limit:
            raise TooLarge(f"its page does not end within {self.limit:,} bytes")
        self.buf += chunk
        return bool(chunk)

    def find(self, pattern: bytes | re.Pattern, start: int = 0, within: int | None = None) -> tuple[int, int] | None:
        """(start, end) of `pattern` in `buf` at or after `start`, reading on until it is there; None at the end (or
        past `within` bytes of `buf`)."""
        longest = len(pattern) if isinstance(pattern, bytes) else 4  # (what a match may hold of the bytes searched)
        while within is None or len(self.buf) <= within:
            if isinstance(pattern, bytes):
                at = self.buf.find(pattern, start)
                if at >= 0:
                    return at, at + len(pattern)
            else:
                match = pattern.search(self.buf, start)
                if match:
                    return match.span()
            start = max(start, len(self.buf) - longest)  # (each byte searched once: a 50 MB part is no 800 searches)
            if not self.more():
                return None
        return None


def mhtml_page(source, limit: int = MAX_DOCUMENT_BYTES) -> MhtmlPage:
    """The page in the MHTML file `source` (its bytes, or a binary file object read from where it is).

    Raises `NotMhtml` (what the file is instead, in words), or `TooLarge` when more than `limit` bytes come before
    the page's end.  A file named ``.mhtml`` that is an HTML page by its first bytes (a page renamed) is that page.
    """
    reader = _Reader(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source, limit)
    end = reader.find(_HEADER_END, within=MAX_HEADER_BYTES)
    if end is None:
        return _not_mime(reader)
    headers = BytesHeaderParser(policy=compat32).parsebytes(bytes(reader.buf[:end[1]]))
    if headers["Content-Type"] is None:
        return _not_mime(reader)
    kind = headers.get_content_type()
    snapshot_url = _header(headers, "Snapshot-Content-Location") or _header(headers, "Content-Location")
    if kind in _HTML_TYPES:  # (a single-part MHTML: the message is the page)
        while reader.more():
            pass
        return _page(bytes(reader.buf), snapshot_url)
    boundary = _param(headers, "boundary")
    if not kind.startswith("multipart/") or not boundary:
        missing = " without a boundary" if kind.startswith("multipart/") else ""
        raise NotMhtml(f"a MIME message of {kind}{missing}, not a saved page")
    start = _param(headers, "start")  # (RFC 2387: the root part's Content-ID; without it, the first part)
    delimiter = b"\n--" + boundary.encode("ascii", "replace")
    found = reader.find(delimiter, end[1] - 1)
    while found is not None:
        line_end = reader.find(b"\n", found[1])
        if reader.buf[found[1]:found[1] + 2] == b"--" or line_end is None:  # the closing delimiter
            break
        part_start = line_end[1]
        found = reader.find(delimiter, part_start)
        part_end = found[0] if found else len(reader.buf)
        part_headers = BytesHeaderParser(policy=compat32).parsebytes(
            bytes(reader.buf[part_start:min(part_end, part_start + MAX_HEADER_BYTES)]))
        content_id = (_header(part_headers, "Content-ID") or "").strip().strip("<>")
        if start is None or content_id == start.strip().strip("<>"):
            if part_headers.get_content_type() not in _HTML_TYPES:
                raise NotMhtml(f"an MHTML file whose page is {part_headers.get_content_type()}, not HTML")
            return _page(bytes(reader.buf[part_start:part_end]).rstrip(b"\r"),
                         _header(part_headers, "Content-Location") or snapshot_url)
        if found is not None:  # (a part passed over is let go: the buffer holds one part at most)
            del reader.buf[:found[0]]
            found = (0, found[1] - found[0])
    raise NotMhtml(f"an MHTML file without its page ({'no part of Content-ID ' + start if start else 'no part'})")


def _page(part: bytes, url: str | None) -> MhtmlPage:
    """The page in a MIME part (its headers and body), its transfer encoding undone."""
    message = message_from_bytes(part, policy=compat32)
    body = message.get_payload(decode=True)
    url = _header(message, "Content-Location") or url
    return MhtmlPage(body=body if isinstance(body, bytes) else b"", content_type=_header(message, "Content-Type"),
                     url=("".join(str(url).split()) or None) if url else None)  # (a folded header's line breaks out)


def _header(headers, name: str) -> str | None:
    """A header's value as a string (the email package gives a `Header` for one holding bytes beyond ASCII)."""
    value = headers[name]
    return None if value is None else str(value)


def _param(headers, name: str) -> str | None:
    """A parameter of the Content-Type header, as one string (RFC 2231's encoded and continued ones too)."""
    value = headers.get_param(name)
    return None if value is None else str(collapse_rfc2231_value(value))


def _not_mime(reader: _Reader) -> MhtmlPage:
    """A file with no MIME headers at its start: the page it is when it starts as HTML does, else `NotMhtml`."""
    head = bytes(reader.buf[:1024])
    if not _HTML_START.match(head):
        raise NotMhtml(f"not an MHTML file (no MIME headers): {what_file_is(head)}")
    while reader.more():
        pass
    return MhtmlPage(body=bytes(reader.buf), content_type=None, url=None)
