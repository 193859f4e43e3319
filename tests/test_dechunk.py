"""``Transfer-Encoding: chunked`` bodies are de-chunked to the same bytes as reading them one chunk at a time,
with no Python-level step per chunk in a run of regular ones.

Before: every chunk cost ~1.4 us of Python steps; a 48 MB body of 1-byte chunks took ~14 s, near the 30 s reading
time limit (past it the record is counted `undecodable`).  The work is measured here as the Python lines run
(`sys.settrace`), not as time: the result does not depend on the machine.
"""

from __future__ import annotations

import random
import re
import sys

import pytest

from plexity_plugins.io.inputs import dechunk

_HEX = re.compile(rb"[0-9A-Fa-f]+")


def one_at_a_time(data: bytes) -> bytes:
    """The reference: `dechunk` as it read every chunk before (plexity_plugins 05b621f), a line ended by LF with or
    without CR, and data that ends after whole chunks or in a size line read as a body cut short (probe 32)."""
    out, pos = bytearray(), 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            rest = data[pos:].split(b";", 1)[0].strip(b" \t\r")
            return bytes(out) if out and (not rest or _HEX.fullmatch(rest)) else data
        size_field = data[pos:end].split(b";", 1)[0].strip(b" \t\r")
        if not _HEX.fullmatch(size_field):
            return data
        size = int(size_field, 16)
        if size == 0:
            return bytes(out)
        chunk = data[end + 1:end + 1 + size]
        out += chunk
        if len(chunk) < size:
            return bytes(out)
        pos = end + 1 + size
        if data[pos:pos + 2] == b"\r\n":
            pos += 2
        elif data[pos:pos + 1] == b"\n":
            pos += 1


def chunked(rng: random.Random, chunks: int) -> bytes:
    """A chunked body of `chunks` chunks, some of them odd: a size in upper case or with leading zeros, an
    extension, CRLF inside a chunk, a size that lies, no CRLF after a chunk; then an end with trailers, none, a
    cut, or garbage."""
    parts = []
    for _ in range(chunks):
        data = bytes(rng.choice(b"ab<>\r\n \x00") for _ in range(rng.choice([1, 1, 2, 7, 40, rng.randrange(600)])))
        size = len(data) if rng.random() > 0.02 else max(0, len(data) + rng.choice([-3, -1, 1, 2, 500]))
        line = rng.choice([b"%x", b"%X", b"00%x", b"%x", b"%x"]) % size
        if rng.random() < 0.02:
            line += rng.choice([b";name=value", b" ", b"\t;x", b";"])
        if rng.random() < 0.005:
            line = rng.choice([b"-4", b"+4", b"0x10", b"1_0", b"", b"g"])
        parts.append(line + b"\r\n" + data + (b"\r\n" if rng.random() > 0.01 else b""))
    body = b"".join(parts)
    end = rng.choice([b"0\r\n\r\n", b"0\r\nExpires: never\r\nX-A: b\r\n\r\n", b"000;last\r\n\r\n", b"", b"zz\r\n"])
    body += end
    return body[:rng.randrange(len(body) + 1)] if rng.random() < 0.2 else body


@pytest.mark.parametrize("seed", range(12))
def test_random_chunkings_dechunk_as_one_chunk_at_a_time(seed):
    rng = random.Random(seed)
    for _ in range(60):
        data = chunked(rng, rng.choice([0, 1, 5, 40, 200, 1500]))
        assert dechunk(data) == one_at_a_time(data), data[:200]


@pytest.mark.parametrize("data", [
    b"5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n", b"<html>not chunked</html>", b"", b"\r\n", b"0\r\n\r\n",
    b"1\r\nx\r\n" * 100,  # no end: the chunks read (the body as stored before probe 32)
    b"1\r\nx\r\n" * 100 + b"0\r\n\r\n", b"1\r\nx\r\n" * 100 + b"5\r\nab",  # cut inside a chunk
    b"1\r\nx\r\n" * 100 + b"3\r\nx\r\n" + b"1\r\nx\r\n" * 100 + b"0\r\n\r\n",  # a size that lies: runs on
    b"1\r\nx\r\n" * 100 + b"-4\r\n" + b"1\r\nx\r\n" * 100,  # a negative size: the body as stored
    b"2\r\n\r\n\r\n" * 100 + b"0\r\n\r\n",  # chunks that are CRLF
    b"1\r\nxy" * 100 + b"0\r\n\r\n",  # no CRLF after a chunk
    b"1\r\nx\r\n" * 100 + b"ffffffffffffffffffff\r\nx\r\n", b"1\r\nx\r\n" * 100 + b"00000000000000000000\r\n\r\n",
], ids=["extension", "not-chunked", "empty", "crlf", "zero", "no-end", "end", "cut", "lie", "negative",
        "crlf-chunks", "no-crlf-after", "huge-size", "long-zero"])
def test_odd_chunkings_dechunk_as_one_chunk_at_a_time(data):
    assert dechunk(data) == one_at_a_time(data)


def python_lines(function, *args) -> int:
    """How many Python lines `function(*args)` runs (those of the functions it calls too)."""
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        lines += event == "line"
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(previous)
    return lines


def test_a_body_of_many_small_chunks_takes_no_python_step_per_chunk():
    data = b"1\r\nx\r\n" * 100_000 + b"0\r\n\r\n"
    assert python_lines(one_at_a_time, data) > 1_000_000  # (~12 a chunk)
    assert python_lines(dechunk, data) < 5_000  # (32 chunks one at a time, then runs of ever more bytes)


@pytest.mark.parametrize("chunk", [b"1;e\r\nx\r\n", b"1\r\nx\r\n1;e\r\ny\r\n", b"1\r\nx\r\n" * 40 + b"3\r\nx\r\n",
                                   b"3e8\r\n" + (b"<p>line</p>\r\n" * 77)[:1000] + b"\r\n"],
                         ids=["extension-each", "extension-every-other", "a-lie-every-41", "crlf-in-each"])
def test_irregular_chunks_cost_little_more_than_one_at_a_time(chunk):
    """Runs that end early are tried less and less often, and look at no more bytes than were read one at a
    time since: irregular chunks cost about what they did (a lie every 41 chunks took longer than the time limit
    when every run looked at 256 KB)."""
    data = chunk * (4_000 // chunk.count(b"\r\n")) + b"0\r\n\r\n"
    assert dechunk(data) == one_at_a_time(data)
    assert python_lines(dechunk, data) < 1.5 * python_lines(one_at_a_time, data)
