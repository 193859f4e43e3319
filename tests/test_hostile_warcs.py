"""The hostile WARC files of tests/hostile_warcs.py (issue 38), through the reader, `plexity clean`
and `plexity run`: none hangs, no binary payload becomes text, no page's content becomes a record,
no record whose length proved wrong is kept, and every record gets its outcome.

Before: a chunk size of ``-4`` hung reading for ever; 10 MB of empty gzip members took minutes;
30 MB of gzip magic after a damaged record hung resync; a record written inside a page became a
cleaned document; responses whose URI was spelled ``HTTP://`` or ``example.com/x`` were copied raw;
PDFs declared text/html were kept as documents; a record whose Content-Length was too short was
kept beside the intact ones.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

import hostile_warcs
from helpers import within
from plexity_plugins.io.inputs import WarcFile

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
BUILDERS = {
    "negative-chunk": hostile_warcs.negative_chunk_sizes,
    "member-flood": hostile_warcs.gzip_member_flood,
    "magic-flood-warc": hostile_warcs.magic_after_damage,
    "magic-flood-warc.gz": lambda: hostile_warcs.magic_after_damage(gzipped=True),
    "injected-warc": hostile_warcs.injected_record,
    "injected-warc.gz": lambda: hostile_warcs.injected_record(gzipped=True),
    "short-warc": hostile_warcs.short_content_length,
    "short-warc.gz": lambda: hostile_warcs.short_content_length(gzipped=True),
    "odd-uris": hostile_warcs.odd_uris,
    "binary": hostile_warcs.binary_declared_html,
}
_BUILT: dict[str, hostile_warcs.Shape] = {}


def shape(key: str) -> hostile_warcs.Shape:
    if key not in _BUILT:
        _BUILT[key] = BUILDERS[key]()
    return _BUILT[key]


@pytest.fixture(scope="module")
def shapes_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("hostile-warcs")
    for key in BUILDERS:
        item = shape(key)
        (directory / item.name).write_bytes(item.data)
    return directory


@pytest.mark.parametrize("key", BUILDERS)
def test_the_reader_gives_every_record_its_outcome_quickly(key):
    item = shape(key)
    with within(20):  # (before: for ever, or minutes)
        warc = WarcFile(io.BytesIO(item.data))
        records = list(warc)
    documents = [r.uri for r in records if r.payload is not None]
    assert documents == item.documents, warc.problem_detail
    assert not set(documents) & set(item.never)
    outcomes = {r.uri: r.skip for r in records}
    assert {uri: outcomes.get(uri) for uri in item.skips} == item.skips
    if item.problem:
        assert warc.problem == item.problem and warc.problem_detail
    else:
        assert warc.problem is None, warc.problem_detail


def test_odd_uris_are_read_as_the_http_responses_they_are():
    records = list(WarcFile(io.BytesIO(shape("odd-uris").data)))
    assert [r.uri for r in records] == hostile_warcs.ODD_URIS  # kept as they are, as metadata
    for r in records:
        assert r.content_type == hostile_warcs.HTML and r.payload.startswith(b"<html>")


def _output_records(path: Path) -> list:
    with open(path, "rb") as f:
        return [(r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("X-Plexity-Verdict"),
                 r.content_stream().read()) for r in ArchiveIterator(f)]


def test_plexity_clean_cleans_what_is_html_copies_what_is_not_and_writes_no_page_as_a_record(shapes_dir, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([*PLEXITY, "clean", str(shapes_dir), "-o", str(out), "--extractor", "tags", "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is True
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted([shape(key).name for key in BUILDERS] + ["plexity-stats.json"])  # no URI became a path
    for key in BUILDERS:
        item = shape(key)
        records = _output_records(out / item.name)
        cleaned = [uri for uri, verdict, _ in records if verdict]
        assert cleaned == item.documents, key
        uris = {uri for uri, _, _ in records}
        assert not set(cleaned) & set(item.never), key
        assert not uris & (set(item.never) - set(item.skips)), key  # a record inside a page: not even copied
        for uri, verdict, payload in records:
            assert verdict or uri not in hostile_warcs.ODD_URIS  # never copied raw
    # the binary payloads are copied as they came, byte for byte
    with open(shapes_dir / "binary.warc.gz", "rb") as f:
        originals = {r.rec_headers.get_header("WARC-Target-URI"): r.content_stream().read() for r in ArchiveIterator(f)}
    copied = {uri: payload for uri, verdict, payload in _output_records(out / "binary.warc.gz") if not verdict}
    for uri in shape("binary").never:
        assert copied[uri] == originals[uri], uri
    assert stats["copied_reasons"]["not_html"] == len(shape("binary").never)


def test_plexity_run_keeps_the_same_documents(shapes_dir, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([*PLEXITY, "run", str(shapes_dir), "-o", str(out), "--extractor", "tags",
                           "--min-chars", "0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    urls = []
    for folder in ("documents", "excluded"):
        for path in sorted((out / folder).glob("*.jsonl.gz")) if (out / folder).exists() else []:
            import gzip

            urls += [json.loads(line)["metadata"]["url"] for line in gzip.decompress(path.read_bytes()).splitlines()]
    expected = [uri for key in BUILDERS for uri in shape(key).documents]
    assert sorted(urls) == sorted(expected)
    assert not set(urls) & {uri for key in BUILDERS for uri in shape(key).never}


def test_what_a_damaged_warc_quotes_of_its_bytes_reaches_no_terminal_as_control_characters():
    # warcio quotes the line it could not read, and the reader the start of a text file named .warc: a crafted file
    # put ESC, BEL and CR as they were into `plexity run`'s terminal and task log (set the terminal's title, clear
    # it, or forge a log line); they are escaped, as the CLI's own log lines escape them
    hostile = b"\x1b]0;owned\x07\x1b[2J\rWARNING all good " * 3
    _, intact = hostile_warcs._intact("esc", 2)
    damaged = hostile_warcs._gz(intact[:1]) + gzip.compress(hostile + b"\r\n\r\n") + hostile_warcs._gz(intact[1:])
    for data in (damaged, hostile + b"hello world, no WARC here\n" * 40):
        warc = WarcFile(io.BytesIO(data))
        list(warc)
        assert warc.problem_detail and "\\x1b" in warc.problem_detail, warc.problem_detail
        assert not any(c in warc.problem_detail for c in "\x1b\x07\r\n"), warc.problem_detail
