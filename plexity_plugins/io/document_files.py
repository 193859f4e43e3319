"""A document file's bytes: a ``.html`` or ``.txt`` file, gzipped (``.gz``) or not, read up to the size cap
(`read_document`, `read_document_file`).  A gzip bomb is never inflated past the cap, more than `MAX_GZIP_MEMBERS`
members are `Undecodable`, and bytes after the gzip stream are counted (``trailing_garbage``), not read.
``plexity clean`` reads the HTML and text files it is given through it.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from ..errors import TooLarge, Undecodable
from .input_files import _Reads, open_input
from .read_limits import _CHUNK, MAX_DOCUMENT_BYTES, MAX_GZIP_MEMBERS


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
