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
- `plexity run` and `WarcHtmlReader` (their glob, **/*.warc*, takes a WAT) read a WAT to its end for no document, and
  a run of WATs only exited 0 with nothing; now both commands skip it by its name, unread, as `wat_file`.

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

from helpers import SAMPLE, read_jsonl_dir, run_plexity, run_step_stats
from plexity_plugins.errors import ReadError
from plexity_plugins.io.wacz_files import WaczFile
from bad_http_server import read_all, serve, warc_with_big_first_record  # noqa: F401 - (serve: a fixture)
from web_archives import FailingDisk, what_warcio_finds, write_wacz, write_wat

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


WAT_WHY = ("a WAT file (Common Crawl's metadata of a crawl's records, as JSON: headers and links, no page's text): "
           "nothing in it to clean; the pages are in its WARC (.warc.gz), their text in its WET (.warc.wet.gz)")


def test_the_reader_skips_a_wat_file_by_its_name_without_reading_a_record_of_it(tmp_path):
    """Before: `WarcHtmlReader` (its glob, **/*.warc*, takes a WAT) read every record of it to its end for no document:
    records 4, skipped_not_response 4 here; 50,000 records (41 MB) took 3.4 s
    (docs/guarantees-input.md).  Now it is a file skip of its own, `wat_file`, as `unsupported_compression` is."""
    from plexity_plugins.datatrove import WarcHtmlReader

    write_wat(tmp_path / "segment" / "wat" / "CC-MAIN-00000.warc.wat.gz", records=3)
    reader = WarcHtmlReader(str(tmp_path / "segment"))
    assert list(reader.run()) == []
    counted = {name: stat.total for name, stat in reader.stats.stats.items() if name != "time"}
    assert counted == {"input_files": 1, "wat_file": 1, "documents": 0}


def test_a_run_of_only_wat_files_ends_as_a_run_that_could_read_no_input_in_either_command(tmp_path):
    """Before: `plexity run CC-MAIN-00000.warc.wat.gz` read it, found no page, and exited 0 with an empty output;
    `plexity clean` of its folder called it an `unknown_file_type`.  Now both name it `wat_file` and exit 1 as
    for any input that gave nothing (a folder of .warc.bz2 files), saying what a WAT is."""
    wat = write_wat(tmp_path / "segment" / "CC-MAIN-00000.warc.wat.gz")

    cleaned = run_plexity("clean", str(tmp_path / "segment"), "-o", str(tmp_path / "cleaned"))
    assert cleaned.returncode == 1  # (no input could be read)
    stats = json.loads((tmp_path / "cleaned" / "plexity-stats.json").read_text())
    assert (stats["files_skipped"], stats["skip_reasons"], stats["documents"]) == (1, {"wat_file": 1}, 0)
    assert stats["skipped_file_details"] == [f"{wat}: {WAT_WHY}"]  # (before it was named: "a gzipped WARC by ...")

    ran = run_plexity("run", str(wat), "-o", str(tmp_path / "run"), "--workers", "1")  # (the file itself given)
    assert ran.returncode == 1, ran.stderr[-3000:]
    assert (f"plexity run: error: no input could be read: {wat.name}: {WAT_WHY} (what the run wrote of it was "
            f"removed: {tmp_path / 'run'} takes another command)") in ran.stderr
    assert "files not read: 1 (wat_file 1)" in ran.stdout and "0 WARC records read" in ran.stdout


def test_a_common_crawl_segments_folder_gives_its_warcs_pages_and_names_its_wat_skipped_in_either_command(tmp_path):
    """A segment's folder as Common Crawl lays it out (warc/, wat/): the WARC's pages, the WAT a counted, named file
    skip, in the run's summary and in `plexity report`, and `plexity clean`'s stats under the same name.  Before: the
    run read the WAT's records (skipped_not_response) and its report said nothing of it; clean counted it
    `unknown_file_type`."""
    segment = tmp_path / "CC-MAIN-2024-22" / "segments" / "1715971057216.39"
    (segment / "warc").mkdir(parents=True)
    (segment / "warc" / "CC-MAIN-00000.warc.gz").write_bytes(SAMPLE.read_bytes())
    write_wat(segment / "wat" / "CC-MAIN-00000.warc.wat.gz", records=5)

    ran = run_plexity("run", str(segment), "-o", str(tmp_path / "run"), "--workers", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    reader, _, _ = run_step_stats(tmp_path / "run", extractor="learned")
    assert (reader["input_files"], reader["wat_file"], reader["documents"]) == (2, 1, 12)
    assert reader["records"] == 27  # (the sample WARC's: no record of the WAT read)
    assert "files not read: 1 (wat_file 1)" in ran.stdout
    report = run_plexity("report", str(tmp_path / "run"), "-o", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    assert ('<table id="file-skip-reasons">\n<tr><td>wat_file</td><td class="n">1</td></tr>'
            in (tmp_path / "report.html").read_text())

    cleaned = run_plexity("clean", str(segment), "-o", str(tmp_path / "cleaned"))
    assert cleaned.returncode == 0, cleaned.stderr[-3000:]
    stats = json.loads((tmp_path / "cleaned" / "plexity-stats.json").read_text())
    assert (stats["files"], stats["files_skipped"], stats["skip_reasons"]) == (1, 1, {"wat_file": 1})
    assert stats["documents"] == 12


def test_wet_files_beside_their_wat_files_are_still_wet_input_written_as_wet_files():
    """`plexity run --format warc` writes WET files (``.warc.wet.gz``) when every input is one; a WAT beside them
    (a segment's wet/ and wat/) made it write ``.warc.gz`` before, though the WAT gives nothing to write."""
    from plexity_plugins.cli.run import is_wet_input

    assert is_wet_input(["wet/CC-MAIN-00000.warc.wet.gz", "wat/CC-MAIN-00000.warc.wat.gz"])
    assert not is_wet_input(["wat/CC-MAIN-00000.warc.wat.gz"])  # (nothing read: no WET either)
    assert not is_wet_input(["warc/CC-MAIN-00000.warc.gz", "wet/CC-MAIN-00000.warc.wet.gz"])
