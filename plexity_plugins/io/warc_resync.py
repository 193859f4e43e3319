"""Where a WARC record starts, to read on after damage.

`next_record_start` finds the first record after an offset: in a ``.warc.gz`` a gzip member that inflates to a
``WARC/1.x`` line, in a ``.warc`` a ``WARC/1.x`` line that starts a whole record (never one written inside another
record's page).  It is linear in the bytes passed over, and gives up (`ResyncGaveUp`) after
`MAX_RESYNC_CANDIDATES` false starts.  `_container` tells a gzipped WARC from an uncompressed one by its first
bytes; `_padding_only` tells the NULs and blank lines a padded file ends in from damage; `holds_a_gzip_record` tells
damage that begins as a bzip2, xz or zstd stream does from a file compressed so.

Searches over a seekable file, apart from the reader that calls them when warcio fails (`warc_files.WarcFile`) and
from warcio's iterator (`warc_iterator`), which knows a gzip member's start and the gap between records by the
same patterns.
"""

from __future__ import annotations

import itertools
import os
import re
import zlib

from ..errors import ResyncGaveUp
from .read_limits import MAX_HEADER_BYTES

MAX_RESYNC_CANDIDATES = 100_000  # false record starts looked at before resynchronising gives up


_GAP_BYTES = b"\r\n\t \0"  # (blank lines; NULs: a file padded to a block size, as gzip -d allows)


def _padding_only(fileobj, start: int, end: int) -> bool:
    """Whether the bytes from `start` to `end` are NULs and whitespace only (at most `MAX_HEADER_BYTES`)."""
    if end - start > MAX_HEADER_BYTES:
        return False
    fileobj.seek(start)
    return not fileobj.read(end - start).strip(_GAP_BYTES)


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


def _is_warc_member(fileobj, offset: int, arc: bool = False) -> bool:
    """Whether a gzip member starting at `offset` inflates to a WARC record's first line (`arc`: an ARC record's)."""
    fileobj.seek(offset)
    return _inflates_to_record(fileobj.read(_MEMBER_PEEK), arc)


# An ARC record's header line (v1: URL IP date content-type length; v2 has five more fields before the length)
_ARC_LINE = re.compile(rb"\S+(?: \S+)* \S+ [0-9]{14} \S+(?: \S+)* [0-9]+\r?\n")


def _inflates_to_record(data: bytes, arc: bool) -> bool:
    """Whether gzip member bytes (its start) inflate to a record's first line: a WARC's, or (`arc`) an ARC's."""
    if not arc:
        return _inflates_to_warc(data)
    try:
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 2048)
    except zlib.error:
        return False
    return bool(_ARC_LINE.fullmatch(head[:head.find(b"\n") + 1]))


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


def holds_a_gzip_record(head: bytes) -> bool:
    """Whether a file's first bytes hold a gzip member that inflates to a WARC record's first line (the first 64 places
    a member may start).  A file whose bytes begin as a bzip2, xz or zstd stream does, and that holds one, is a
    ``.warc.gz`` damaged at its start (bytes written over its first member, or before it), not a file compressed so:
    such a stream may hold a record's text as it is (a zstd stream's literals), never a gzip member of it."""
    return any(_inflates_to_warc(head[offset:]) for offset in itertools.islice(_record_starts(head, True), 64))


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


def next_record_start(fileobj, after: int, gzipped: bool | None = None, arc: bool = False) -> int | None:
    """The file offset of the first record that starts after offset `after`, or None.

    In a ``.warc.gz`` (`gzipped` True), a gzip member that inflates to a ``WARC/1.x`` line:
    records start at member boundaries, and a page's bytes are compressed inside their own
    member.  In an uncompressed file (False), a ``WARC/1.x`` line that starts a whole record
    (`_is_whole_record`): never a record written inside another record's page.  (None: a file
    damaged at its start, either.)  Linear in the bytes passed over; raises `ResyncGaveUp` after
    `MAX_RESYNC_CANDIDATES` false starts (30 MB of gzip magic bytes took minutes).  `arc`: the file is a gzipped ARC,
    its records gzip members that inflate to an ARC header line."""
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
                whole = (_inflates_to_record(data[start:start + _MEMBER_PEEK], arc)
                         if start + _MEMBER_PEEK <= len(data) else _is_warc_member(fileobj, offset, arc))
            else:
                whole = _is_whole_record(fileobj, offset, size)
            if whole:
                return offset
        position += len(block)
        carry = data[-16:]
