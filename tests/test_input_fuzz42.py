"""The inputs the coverage-guided fuzzing of the input side kept (scripts/fuzz_input.py, docs/development.md
"Fuzzing where crawled bytes enter"), replayed without atheris.

tests/fuzz_corpus/input/ holds them: one byte choosing the entry point (a WARC or ARC file as it is, the same with
each record gzipped as its own member, an HTTP body under its Transfer- and Content-Encoding, a payload and its
Content-Type to text, the sniffing of a payload's first bytes, a document file), then the bytes.  `TestOneInput`
reads each as ``plexity clean`` and ``plexity run``'s reader do: an exception other than the entry point's named
errors, a record without exactly one outcome, a payload over the cap, or more than a second of CPU fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz_corpus" / "input"


@pytest.fixture(scope="module")
def target():
    spec = importlib.util.spec_from_file_location("fuzz_input", ROOT / "scripts" / "fuzz_input.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.iterdir()))
def test_a_kept_input_is_read_to_a_named_outcome(target, name):
    target.TestOneInput((CORPUS / name).read_bytes())


def _damaged_member_warc() -> bytes:
    """Three records, each its own gzip member, the second's deflate data damaged three quarters in (past warcio's
    first block of 16 kB: it had begun to inflate)."""
    import gzip
    import random
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from warc_corpus import ARTICLE, page, record_bytes

    noise = random.Random(3).randbytes(20000).hex()  # (incompressible: the member is ~24 kB)
    members = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE, noise).encode()), mtime=0) for i in range(3)]
    damaged = bytearray(members[1])
    for k in range(len(damaged) * 3 // 4, len(damaged) * 3 // 4 + 8):
        damaged[k] ^= 0x55
    return members[0] + bytes(damaged) + members[2]


def test_a_gzip_member_damaged_partway_names_the_file_and_writes_nothing_to_stderr(capfd):
    """Found by scripts/fuzz_input.py.  Before: warcio wrote zlib's "Error -3 Invalid lookback distance found" (or
    "-6 Incorrect checksum") to stderr, naming no file (in plexity clean's terminal, a task's log), read the member
    as ending there, and the file was not named damaged (problem None): its record counted truncated, nothing else
    said of it.  Now the record is truncated naming the member, the file corrupt, the next record read."""
    import io

    from plexity_plugins.io.warc_files import WarcFile

    warc = WarcFile(io.BytesIO(_damaged_member_warc()), name="damaged.warc.gz")
    records = list(warc)
    assert [(r.uri, r.skip) for r in records] == [("http://t/0", None), ("http://t/1", "truncated"),
                                                  ("http://t/2", None)]
    assert "a gzip member does not inflate" in records[1].detail
    assert warc.problem == "corrupt" and warc.problem_detail.startswith(
        "record 2: unreadable payload: error: a gzip member does not inflate")
    assert capfd.readouterr().err == ""


def test_a_gzip_member_damaged_at_its_start_is_named_so_not_quoted_as_escaped_bytes():
    """Before: warcio reads a member whose deflate data fails on its first read as uncompressed bytes, and the file
    was "unreadable after record 1 (ArchiveLoadFailed: Invalid WARC record, first line: \\x1f\\x8b\\x08\\x00 ..."
    (160 characters of the compressed bytes, escaped).  Now it says what is damaged; the records after it are read."""
    import gzip
    import io
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from warc_corpus import ARTICLE, page, record_bytes

    from plexity_plugins.io.warc_files import WarcFile

    members = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE).encode()), mtime=0) for i in range(3)]
    damaged = bytearray(members[1])
    for k in range(12, 40):  # (just past its 10-byte gzip header)
        damaged[k] ^= 0xA5
    warc = WarcFile(io.BytesIO(members[0] + bytes(damaged) + members[2]), name="damaged.warc.gz")
    assert [(r.uri, r.skip) for r in warc] == [("http://t/0", None), ("http://t/2", None)]
    assert warc.problem == "corrupt"
    said = f"unreadable after record 1 (a gzip member at byte {len(members[0]):,} does not inflate: its compressed data"
    assert warc.problem_detail.startswith(f"{said} is damaged); resumed at byte "), warc.problem_detail
