"""How much reading one input may take, and how far it has got: the caps and the time limit every loop over
input bytes stops at, and the progress line of a long read.

- `MAX_DOCUMENT_BYTES` (a document's size, decompressed), `reading_limits` (a caller's caps, checked),
  `MAX_GZIP_MEMBERS`, `MAX_HEADER_BYTES`; `read_capped` reads a stream up to a cap.
- `Deadline`: the time limit of reading one record (`DEFAULT_READ_TIMEOUT`), `TooSlow` past it;
  `DEFAULT_REMOTE_TIMEOUT`: how long a server may send nothing of an input read over HTTP(S).
- `ReadProgress`: a line every `PROGRESS_SECONDS` while one file is read.

Apart from the readers, so that each of them (WARC records, Content-Encoding bodies, document files) stops at the
same caps, and a command takes its options' defaults from here without importing a reader.
"""

from __future__ import annotations

import os
import time

from ..errors import TooLarge, TooSlow

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
MAX_HEADER_BYTES = 1 << 20  # a record's WARC headers, or its HTTP headers (servers take 8-64 kB)
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



def read_capped(stream, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`; TooLarge if there are more."""
    # (what is left of the cap asked for at once: a record's stream, a warcio LimitReader, gives its Content-Length
    # or less, in one bytes; asked 64 KB at a time, a 170 KB page was read in three and joined, copied once more)
    parts, size = [], 0
    while True:
        block = stream.read(limit + 1 - size)
        if not block:
            return b"".join(parts)
        parts.append(block)
        size += len(block)
        if size > limit:
            raise TooLarge(f"more than {limit:,} bytes")


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
