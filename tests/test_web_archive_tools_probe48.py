"""Web archives as more real producers write them, probed 2026-12-06: Webrecorder's `wacz create` (PyPI wacz 0.6.0,
with and without --detect-pages and --text), pywb 2.10.0's recording (path-based, proxy, with its Redis revisits),
a WACZ over HTTP, and Common Crawl's WAT files.  docs/guarantees-input.md says what each gave.

What a user met:
- `wacz create -o crawl.wacz a/data.warc.gz b/data.warc.gz` writes both WARCs as archive/data.warc.gz (zipfile warns
  "Duplicate name"; `wacz validate` then calls the WACZ invalid).  `plexity clean` cleaned the first member into
  crawl.wacz/archive/data.warc.gz and the second over it, its stats counting both: the first crawl's pages lost
  without a word; `plexity run`'s documents gave both the same `file_path`.  Now the second is
  archive/data (2).warc.gz (`io.wacz_files`).
- A WACZ over a server that answers no range (Python's http.server) was fetched from its start again for each
  member: each WARC's first bytes are read to see what it is, then read again, a step back that opened the URL anew
  (a 6.4 MB WACZ of six WARCs was read as 63 MB, in 12 requests).  Now a step back into the last MiB read is read
  from it: the zip is read to its end once (its directory) and from its start once (its members).
- A server that reset the connection as a WACZ's first bytes came (or a disk failing there) was counted
  `unreadable_file`, "a WACZ that cannot be read from a stream ...: copy it here first", the run completing
  without it; now it is a `ReadError`, the task failed and read again by a re-run, as for a WARC.
- `plexity clean crawl.warc.wat.gz` (a Common Crawl WAT) said "a gzipped WARC by its bytes: rename it to
  crawl.warc.wat.warc.gz to read it", though nothing in a WAT is a page; now it names a WAT and where the pages are.

The WACZ in tests/fixtures/web_archives was written by the real tool (wacz 0.6.0, in a venv of its own: it brings
frictionless, pydantic, rich and 26 more packages, so it is no test dependency) from two crawls of
test_archiving_tools_probe47's site on 127.0.0.1, each written as data.warc.gz: GNU wget's
(`wget -r -l 2 --delete-after --warc-file=data http://127.0.0.1:PORT/`) and warcio's capture_http (its test's
pages, /twice.html twice); then `wacz create -o two-warcs-of-one-name.wacz --detect-pages --text wget/data.warc.gz
warcio/data.warc.gz`.
"""

from __future__ import annotations

import errno
import io
import json
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from helpers import read_jsonl_dir, run_plexity, run_step_stats
from plexity_plugins.errors import ReadError
from plexity_plugins.io.wacz_files import WaczFile
from bad_http_server import read_all, serve, warc_with_big_first_record  # noqa: F401 - (serve: a fixture)
from web_archives import FailingDisk, what_warcio_finds, write_wacz

WACZ = Path(__file__).resolve().parent / "fixtures" / "web_archives" / "two-warcs-of-one-name.wacz"


def _cleaned_texts(folder: Path) -> Counter:
    """{(the WARC's path in `folder`, URL, text): n} of the cleaned records plexity clean wrote."""
    texts = Counter()
    for path in sorted(folder.rglob("*.warc.gz")):
        with open(path, "rb") as f:
            texts.update((str(path.relative_to(folder)), r.rec_headers.get_header("WARC-Target-URI"),
                          r.content_stream().read().decode())
                         for r in ArchiveIterator(f) if r.rec_headers.get_header("X-Plexity-Verdict"))
    return texts


def test_a_wacz_holding_two_warcs_of_one_name_gives_the_pages_of_both_each_named_as_a_file_of_its_own(tmp_path):
    with zipfile.ZipFile(WACZ) as wacz:  # (as wacz create wrote it: both WARCs under one name)
        members = [info for info in wacz.infolist() if info.filename.startswith("archive/")]
        assert [m.filename for m in members] == ["archive/data.warc.gz"] * 2
        assert {m.compress_type for m in members} == {zipfile.ZIP_STORED}
        unzipped = tmp_path / "unzipped"
        for folder, member in zip(("wget", "warcio"), members):  # (what `unzip` cannot do: it asks which to keep)
            (unzipped / folder).mkdir(parents=True)
            (unzipped / folder / "data.warc.gz").write_bytes(wacz.read(member))

    cleaned = run_plexity("clean", str(WACZ), "-o", str(tmp_path / "cleaned"))
    assert cleaned.returncode == 0, cleaned.stderr[-3000:]
    apart = run_plexity("clean", str(unzipped), "-o", str(tmp_path / "apart"))
    assert apart.returncode == 0, apart.stderr[-3000:]
    stats, stats_apart = (json.loads((tmp_path / out / "plexity-stats.json").read_text())
                          for out in ("cleaned", "apart"))
    for key in ("files", "records", "documents", "copied_reasons", "damaged_files"):
        assert stats[key] == stats_apart[key], key
    pages = {crawl: what_warcio_finds(unzipped / crawl)[0]["page"] for crawl in ("wget", "warcio")}
    assert stats["files"] == 2 and stats["documents"] == sum(pages.values())
    # each member cleaned into a WARC of its own, its pages all there
    out = tmp_path / "cleaned" / WACZ.name / "archive"
    assert sorted(p.name for p in out.iterdir()) == ["data (2).warc.gz", "data.warc.gz"]
    rename = {"wget/data.warc.gz": f"{WACZ.name}/archive/data.warc.gz",
              "warcio/data.warc.gz": f"{WACZ.name}/archive/data (2).warc.gz"}
    assert _cleaned_texts(tmp_path / "cleaned") == Counter(
        {(rename[path], url, text): n for (path, url, text), n in _cleaned_texts(tmp_path / "apart").items()})

    ran = run_plexity("run", str(WACZ), "-o", str(tmp_path / "run"), "--workers", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    reader, _, _ = run_step_stats(tmp_path / "run", extractor="learned")
    assert (reader["records"], reader["documents"]) == (stats["records"], stats["documents"])
    documents = read_jsonl_dir(tmp_path / "run" / "documents") + read_jsonl_dir(tmp_path / "run" / "excluded")
    assert Counter(Path(d["metadata"]["file_path"]).name for d in documents) == {"data.warc.gz": pages["wget"],
                                                                                "data (2).warc.gz": pages["warcio"]}


def test_a_wacz_over_a_server_that_answers_no_range_is_fetched_twice_not_once_a_member(serve, tmp_path):
    """Its directory is at its end: read to there once; then from its start once for its members (each WARC's first
    bytes, read to see what it is, read again from the last MiB read, not fetched again).  A server that answers
    ranges is asked for the end records, the directory and each member: the zip's bytes are read once.  (The WACZ:
    a 2 MiB WARC before the fixture's two, in the specification's layout.)"""
    crawl = tmp_path / "crawl"
    (crawl / "archive").mkdir(parents=True)
    warc_with_big_first_record(crawl / "archive" / "big.warc.gz", 2 << 20)
    with zipfile.ZipFile(WACZ) as wacz:
        for number, member in enumerate(info for info in wacz.infolist() if info.filename.startswith("archive/")):
            (crawl / "archive" / f"data-{number}.warc.gz").write_bytes(wacz.read(member))
    path = write_wacz(tmp_path / "crawl.wacz", crawl)
    local = read_all(str(path))
    url = serve({"crawl.wacz": (path, "norange"), "ranged.wacz": (path, "ok")})
    for name in ("crawl.wacz", "ranged.wacz"):
        assert read_all(url + name) == local
    # (before: 9 requests each, the server answering no range sending the zip from its start each time)
    assert serve.requests == {"crawl.wacz": 3, "ranged.wacz": 5}


def test_a_failed_read_of_a_waczs_first_bytes_is_a_read_error_not_a_wacz_that_cannot_be_streamed():
    """A server that resets the connection as a WACZ's first bytes come (seen with probe36's resetting server), or a
    disk failing there (EIO), is the server's or the disk's failure: a `ReadError` (the task fails; a re-run reads
    it again), as for a WARC.  Before, it was counted `unreadable_file`, "a WACZ that cannot be read from a stream
    (ReadError: ...: the connection was reset): copy it here first", and the run completed without the file."""
    wacz = WaczFile(io.BufferedReader(FailingDisk(WACZ, 0)), "crawl.wacz")
    with pytest.raises(ReadError) as raised:
        list(wacz)
    assert raised.value.errno == errno.EIO and str(raised.value).startswith("[Errno 5] crawl.wacz: read error at byte")
    assert wacz.problem is None


def test_a_wat_file_is_named_by_plexity_clean_and_counted_by_plexity_run_and_gives_no_document(tmp_path):
    """A WAT, as Common Crawl names and writes them (a warcinfo record, then a metadata record of JSON for each record
    of its WARC; made here with warcio: Common Crawl's own, an extract in its whirlwind-python tutorial, was read the
    same way by hand, docs/guarantees-input.md)."""
    from warcio.warcwriter import WARCWriter

    crawl = tmp_path / "segment"
    crawl.mkdir()
    with open(crawl / "CC-MAIN-00000.warc.wat.gz", "wb") as f:
        writer = WARCWriter(f, gzip=True)
        writer.write_record(writer.create_warcinfo_record("CC-MAIN-00000.warc.wat.gz", {"format": "WARC 1.0"}))
        envelope = {"Envelope": {"WARC-Header-Metadata": {"WARC-Type": "response"},
                                 "Payload-Metadata": {"HTTP-Response-Metadata": {"HTML-Metadata": {"Links": []}}}}}
        writer.write_record(writer.create_warc_record(
            "http://example.org/", "metadata", payload=io.BytesIO(json.dumps(envelope).encode()),
            warc_content_type="application/json"))

    cleaned = run_plexity("clean", str(crawl), "-o", str(tmp_path / "cleaned"))
    assert cleaned.returncode == 1  # (no input could be read)
    stats = json.loads((tmp_path / "cleaned" / "plexity-stats.json").read_text())
    assert (stats["files_skipped"], stats["documents"]) == (1, 0)
    assert stats["skipped_file_details"] == [
        f"{crawl / 'CC-MAIN-00000.warc.wat.gz'}: a WAT file (Common Crawl's metadata of a crawl's records, as JSON: "
        f"headers and links, no page's text): nothing in it to clean; the pages are in its WARC (.warc.gz), their "
        f"text in its WET (.warc.wet.gz)"]  # (before: "a gzipped WARC by its bytes: rename it to ....warc.gz")
    assert "a WAT file" in cleaned.stderr

    ran = run_plexity("run", str(crawl), "-o", str(tmp_path / "run"), "--workers", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    reader, _, _ = run_step_stats(tmp_path / "run", extractor="learned")
    assert (reader["records"], reader["skipped_not_response"], reader.get("documents", 0)) == (2, 2, 0)
