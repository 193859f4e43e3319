"""ARC files (WARC's predecessor: Common Crawl's 2008-2012 crawls, the Internet Archive's older collections), written
here by hand in the ARC v1 format (a filedesc:// record, then `URL IP date Content-type length` lines each followed by
the HTTP response; one gzip member per record in a .arc.gz).  Before: `plexity clean crawl/` skipped each as
unknown_file_type and failed, `plexity run crawl/` said "no WARC files match **/*.warc*", WarcHtmlReader read
nothing, and a .arc read by WarcFile was "not a WARC file: an ARC file ... which plexity does not read"."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from helpers import QuietHandler, http_server

from plexity_plugins.io.warc_files import WarcFile

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins"]
PAGE = b"<html><body>" + b"".join(b"<p>The council voted on the new budget for the roads and the libraries of the "
                                  b"town, item %d.</p>" % i for i in range(20)) + b"</body></html>"


def _record(url: str, content_type: str, body: bytes) -> bytes:
    http = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    return f"{url} 192.0.2.1 20080512093000 {content_type} {len(http)}\n".encode() + http + b"\n"


def _records(name: str) -> list[bytes]:
    block = b"1 0 Archive\nURL IP-address Archive-date Content-type Archive-length\n"
    filedesc = f"filedesc://{name} 0.0.0.0 20080512093000 text/plain {len(block)}\n".encode() + block + b"\n"
    return [filedesc, _record("http://example.com/council", "text/html", PAGE),
            _record("http://example.com/logo.png", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(64))]


def write_arc(path: Path) -> Path:
    """An ARC file of a page and an image: uncompressed (.arc) or one gzip member per record (.arc.gz)."""
    records = _records(path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(map(gzip.compress, records)) if path.name.endswith(".gz") else b"".join(records))
    return path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(PLEXITY + list(args), capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(cwd)})


def test_warc_file_reads_an_arc_and_an_arc_gz_as_responses(tmp_path):
    """Before: 0 records, problem not_a_warc ("an ARC file ... which plexity does not read")."""
    for name in ("crawl.arc", "crawl.arc.gz"):
        with open(write_arc(tmp_path / name), "rb") as f:
            warc = WarcFile(f, name=name)
            read = [(r.uri, r.skip, r.payload) for r in warc]
        assert warc.problem is None, (name, warc.problem_detail)
        assert [(uri, skip) for uri, skip, _ in read] == [
            ("", "not_response"), ("http://example.com/council", None), ("http://example.com/logo.png", "not_html")]
        assert read[1][2] == PAGE


def test_an_arc_cut_short_is_named_truncated_not_read_as_whole(tmp_path):
    arc = write_arc(tmp_path / "crawl.arc")
    arc.write_bytes(arc.read_bytes()[:1000])
    with open(arc, "rb") as f:
        warc = WarcFile(f, name=str(arc))
        skips = [r.skip for r in warc]
    assert skips == ["not_response", "truncated"] and warc.problem == "truncated"


def test_plexity_clean_writes_a_cleaned_warc_of_each_arc(tmp_path):
    """Before: "skipped crawl/a.arc: unknown_file_type", "no input could be read", exit 1."""
    write_arc(tmp_path / "crawl" / "a.arc")
    write_arc(tmp_path / "crawl" / "b.arc.gz")
    done = _run("clean", "crawl", "-o", "out", "--extractor", "tags", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (stats["files"], stats["records"], stats["documents"]) == (2, 6, 2)
    assert stats["copied_reasons"] == {"not_response": 2, "not_html": 2}
    for name in ("a.warc", "b.warc.gz"):  # (WARC files, named so: an ARC's records written as WARC records)
        with open(tmp_path / "out" / name, "rb") as f:
            records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(f)]
        assert records == [("warcinfo", None), ("response", "http://example.com/council"),
                           ("response", "http://example.com/logo.png")]
    assert not list((tmp_path / "out").glob("*.arc*"))


def test_plexity_run_reads_the_arc_files_of_a_folder_beside_its_warcs(tmp_path):
    """Before: the .arc.gz files were not listed (only **/*.warc*): 1 input file read, the ARCs left out unsaid."""
    write_arc(tmp_path / "crawl" / "old" / "a.arc.gz")
    (tmp_path / "crawl" / "sample.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "crawl" / "search.html").write_text("<p>not a crawl file</p>")
    done = _run("run", "crawl", "-o", "out", "--extractor", "tags", "--workers", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    reader = json.loads((tmp_path / "out" / "logs" / "stats.json").read_text())[0]["stats"]
    assert reader["input_files"]["total"] == 2 and reader["records"]["total"] == 27 + 3
    assert "corrupt_files" not in reader


def test_warc_html_reader_finds_arc_files_by_default(tmp_path):
    from plexity_plugins.datatrove.readers import WarcHtmlReader

    write_arc(tmp_path / "crawl" / "a.arc")
    write_arc(tmp_path / "crawl" / "b.arc.gz")
    docs = list(WarcHtmlReader(str(tmp_path / "crawl")).run(None, rank=0, world_size=1))
    assert [doc.metadata["url"] for doc in docs] == ["http://example.com/council"] * 2


def test_a_file_whose_first_line_is_no_arc_header_is_named_so(tmp_path):
    """Before: "not a WARC file: an ARC file (WARC's predecessor, which plexity does not read)".  A file is read as an
    ARC when its first line is an ARC header line (five fields or ten, a 14-digit date, the length last); one that
    only starts "filedesc://" is said to be an ARC whose first header line cannot be read (and a damaged WARC that
    begins so is read as the WARC it is: tests/test_fuzz_input.py)."""
    bad = tmp_path / "bad.arc"
    bad.write_bytes(b"filedesc://bad.arc 1 2\nhello\n")
    with open(bad, "rb") as f:
        warc = WarcFile(f, name=str(bad))
        assert list(warc) == []
    assert warc.problem == "not_a_warc"
    assert warc.problem_detail == "not a WARC file: an ARC file whose first header line cannot be read"


def test_an_arc_v2_records_url_and_date_are_its_own(tmp_path):
    """ARC v2 (the Internet Archive's Alexa-era files: ten fields a header line).  Before (warcio parses v1's five
    from the right): its URI "http://example.com/council%20192.0.2.1%2020080512093000%20text/html%20200%20-", its
    date 1900-12-31T23:59:59Z."""
    block = b"2 0 Alexa\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename " \
            b"Archive-length\n"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + PAGE
    arc = tmp_path / "v2.arc.gz"
    arc.write_bytes(gzip.compress(b"filedesc://v2.arc 0.0.0.0 20080512093000 text/plain 200 - - 0 v2.arc %d\n%s\n"
                                  % (len(block), block))
                    + gzip.compress(b"http://example.com/council 192.0.2.1 20080512093000 text/html 200 - - 0 "
                                    b"v2.arc %d\n%s\n" % (len(http), http)))
    with open(arc, "rb") as f:
        warc = WarcFile(f, name=str(arc))
        read = [(r.uri, r.date, r.payload) for r in warc][1]
    assert warc.problem is None and read == ("http://example.com/council", "2008-05-12T09:30:00Z", PAGE)


def test_an_arc_gz_damaged_in_one_member_reads_on_at_the_next_record(tmp_path):
    """Before: the records after the damaged member were lost ("no whole record after it: the file's last 1,474
    bytes ... read no further"): resynchronising looked for gzip members that inflate to a WARC line only."""
    members = [gzip.compress(r) for r in _records("d.arc") + [_record(f"http://example.com/p{i}", "text/html", PAGE)
                                                               for i in range(3)]]
    members[2] = members[2][:30] + b"X" * 30 + members[2][60:]  # (the image's member: its deflate data overwritten)
    arc = tmp_path / "d.arc.gz"
    arc.write_bytes(b"".join(members))
    with open(arc, "rb") as f:
        warc = WarcFile(f, name=str(arc))
        uris = [r.uri for r in warc if r.payload]
    assert uris == ["http://example.com/council"] + [f"http://example.com/p{i}" for i in range(3)]
    assert warc.problem == "corrupt" and "resumed at byte" in warc.problem_detail and warc.records_recovered == 3


class _ArcListing(QuietHandler):
    """A listing of one ARC file, old.arc.gz, and the file."""

    arc = b""

    def _answer(self, body: bool):
        data = self.arc if self.path.strip("/") == "old.arc.gz" else b'<a href="old.arc.gz">old.arc.gz</a>\n'
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)


def test_a_remote_folder_of_arc_files_is_told_their_glob_which_reads_them(tmp_path):
    """A remote folder is not walked for ARC files (its listing is the reader's): its ARCs are read by their glob.
    Before: "no WARC files match **/*.warc* in http://...: give the folder of your .warc ... files", no word of
    ARC, and the glob it would have needed read nothing ("not a WARC file: ... an ARC file")."""
    _ArcListing.arc = write_arc(tmp_path / "old.arc.gz").read_bytes()
    with http_server(_ArcListing) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        missed = _run("run", url + "/", "-o", "out1", "--extractor", "tags", cwd=tmp_path)
        assert missed.returncode != 0 and (f"(ARC files, .arc.gz, by theirs: '{url}/*.arc.gz'; WACZ files by theirs: "
                                           f"'{url}/*.wacz')") in missed.stderr
        done = _run("run", url + "/*.arc.gz", "-o", "out2", "--extractor", "tags", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    reader = json.loads((tmp_path / "out2" / "logs" / "stats.json").read_text())[0]["stats"]
    records = reader["records"]  # (one task: a number, or datatrove's summary of it)
    assert (records["total"] if isinstance(records, dict) else records) == 3


def test_an_arc_and_a_warc_of_one_name_are_refused_naming_the_arc(tmp_path):
    """crawl/b.arc.gz and crawl/b.warc.gz both clean to b.warc.gz.  Before the message was "give their common parent
    directory as the input instead", which they were."""
    write_arc(tmp_path / "crawl" / "b.arc.gz")
    (tmp_path / "crawl" / "b.warc.gz").write_bytes(SAMPLE.read_bytes())
    done = _run("clean", "crawl", "-o", "out", "--extractor", "tags", "-q", cwd=tmp_path)
    assert done.returncode == 2 and "(an ARC file's output is a WARC): rename crawl/b.arc.gz" in done.stderr
    assert not (tmp_path / "out").exists()
