"""An HTTP body's codings undone, bounded: ``Transfer-Encoding: chunked`` (`dechunk`), and the Content-Encodings
gzip, x-gzip, deflate, br and zstd, one or several in the order applied (`decode_content`).

Every decoder stops at the caller's cap (`TooLarge`), at `MAX_GZIP_MEMBERS` gzip members or zstd frames, and at
the record's `Deadline` (`TooSlow`); a body that does not decode is `Undecodable`.

Payloads are decoded here, not by warcio: warcio's Content-Encoding decoding inflates without a limit, hides a
corrupt gzip body (it writes to stderr and returns what it had) and breaks on brotli >= 1.2 (it sets
``unused_data`` on the decompressor, which brotli 1.2's no longer allows), which used to end the reading of the
whole file at the first ``Content-Encoding: br`` record.
"""

from __future__ import annotations

import importlib
import operator
import re
import zlib
from itertools import repeat

from ..errors import InstallationError, TooLarge, TooSlow, Undecodable
from .payload_sniffing import _HTML_START, _SNIFF_BYTES, _wide_text, binary_kind
from .read_limits import _CHUNK, _NO_DEADLINE, MAX_GZIP_MEMBERS, Deadline


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
