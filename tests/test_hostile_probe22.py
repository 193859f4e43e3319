"""Hostile-input probe 22: kinds of bad input the earlier probes did not try, each through the front
ends it reaches.

Charset labels that name one of Python's codecs but no charset (``charset=base64``, ``zlib``,
``rot13``, ``hex``: bytes-to-bytes codecs; ``idna``, ``punycode``, ``undefined``: they raise
whatever the error handler; ``unicode_escape``), in the HTTP header or the page's ``<meta>``:
w3lib takes any name Python's codec registry knows, and decoding raised.  One such page failed a
`plexity run` task (LookupError; the good records of its file with it, on every re-run), escaped the
Scrapy pipeline uncounted (items_seen 2, cleaned 1, dropped 0), was a 500 from ``/api/decode`` and
an ``extraction_failed`` skip in `plexity clean`.  A browser ignores a label it does not know: so
does decoding now, and the page is read as UTF-8 (or by the header's charset, when only the page's
label is bogus).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.request
import warnings
import zlib

import pytest

from plexity_plugins.extractors import decode_html, decode_html_counted
from helpers import within
from warc_corpus import ARTICLE, page, record_bytes

NOT_CHARSETS = ["base64", "zlib", "rot13", "hex", "bz2", "quopri", "uu", "idna", "punycode", "undefined",
                "unicode_escape", "raw_unicode_escape"]
BODY = page(ARTICLE, "Caf\u00e9 cr\u00e8me.")


@pytest.mark.parametrize("label", NOT_CHARSETS)
def test_a_label_of_a_codec_that_is_no_charset_is_no_declaration(label):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (unicode_escape warns of each backslash it cannot read)
        assert decode_html(BODY.encode(), f"text/html; charset={label}") == (BODY, "utf-8")
        declared = f"<meta charset='{label}'>" + BODY
        assert decode_html(declared.encode(), "text/html") == (declared, "utf-8")
        # only the page's label is bogus: the header's charset is taken
        assert decode_html(declared.encode("cp1252"), "text/html; charset=windows-1252") == (declared, "cp1252")
        assert decode_html_counted(declared.encode()) == (declared, 0)


def _bogus_warc(path) -> list[str]:
    """Two good records around a record of each bogus label (header, and meta); their URIs."""
    records = [record_bytes("http://t/good-0", page(ARTICLE, "Zero.").encode())]
    uris = ["http://t/good-0"]
    for label in ("base64", "idna", "undefined"):
        uris += [f"http://t/header-{label}", f"http://t/meta-{label}"]
        records.append(record_bytes(uris[-2], page(ARTICLE).encode(), content_type=f"text/html; charset={label}"))
        records.append(record_bytes(uris[-1], (f"<meta charset='{label}'>" + page(ARTICLE)).encode(),
                                    content_type="text/html"))
    records.append(record_bytes("http://t/good-1", page(ARTICLE, "One.").encode()))
    path.write_bytes(b"".join(gzip.compress(r) for r in records))
    return uris + ["http://t/good-1"]


def test_plexity_runs_reader_reads_every_record_of_a_file_with_bogus_labels(tmp_path):
    from plexity_plugins.datatrove import WarcHtmlReader

    (tmp_path / "in").mkdir()
    uris = _bogus_warc(tmp_path / "in" / "bogus.warc.gz")
    documents = list(WarcHtmlReader(str(tmp_path / "in")).run())  # (before: LookupError, the task failed)
    assert [d.metadata["url"] for d in documents] == uris
    assert all(ARTICLE in d.text for d in documents)


def test_the_scrapy_pipeline_cleans_a_page_with_a_bogus_label():
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_EXTRACTOR": "tags"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        item = asyncio.run(pipeline.process_item({"url": "u", "html": ("<meta charset='base64'>" + BODY).encode()}))
    finally:
        pipeline.close_spider()
    assert "The council approved the budget" in item["text"]
    assert crawler.stats.get_value("plexity/items_cleaned") == crawler.stats.get_value("plexity/items_seen") == 1


def test_the_web_demo_decodes_a_file_with_a_bogus_label():
    from web_server import start_server, stop_server

    process, url = start_server([])
    try:
        request = urllib.request.Request(url + "/api/decode", data=("<meta charset='rot13'>" + BODY).encode(),
                                         method="POST", headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:  # (before: 500, LookupError)
            data = json.loads(response.read())
    finally:
        stop_server(process)
    assert data == {"text": "<meta charset='rot13'>" + BODY, "charset": "utf-8"}


# -- header blocks and lines of any length ---------------------------------------------------------------------------
# warcio reads a line whole, and a header block line by line to its blank line, whatever their length: a .warc.gz of
# 118 KB holding one record of 10 million HTTP header lines took 2 GB and 20 s; a line of 100 MB between two records
# of an uncompressed WARC (or in a record's WARC headers) was read by concatenating 16 kB blocks, still running after
# 120 s.  Now each is read up to MAX_HEADER_BYTES (1 MiB): a record whose HTTP headers are longer is a too_large
# skip; WARC headers longer, or such a line where a record should start, make the file corrupt there, and reading
# resumes at the next record.

def _raw_record(uri: str, block: bytes, warc_headers: bytes = b"", rec_type: bytes = b"response") -> bytes:
    return (b"WARC/1.0\r\nWARC-Type: " + rec_type + b"\r\nWARC-Record-ID: <urn:uuid:" + uri.encode() + b">\r\n"
            b"WARC-Target-URI: " + uri.encode() + b"\r\n" + warc_headers
            + b"Content-Type: application/http; msgtype=response\r\nContent-Length: " + str(len(block)).encode()
            + b"\r\n\r\n" + block + b"\r\n\r\n")


def _good(i: int) -> bytes:
    return record_bytes(f"http://t/good-{i}", page(ARTICLE, f"Good {i}.").encode())


HTTP_START = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
LONG = 30_000_000
LONG_HEADERS = {  # name: (records between two good ones, gzipped, the long record's skip or None: the file corrupt)
    "http-header-lines": (_raw_record("http://t/long", HTTP_START + b"X-A: b\r\n" * (LONG // 8) + b"\r\n"
                                      + page(ARTICLE).encode()), True, "too_large"),
    "http-header-line": (_raw_record("http://t/long", HTTP_START + b"X-A: " + b"a" * LONG + b"\r\n\r\n"
                                     + page(ARTICLE).encode()), True, "too_large"),
    "http-header-lines-uncompressed": (_raw_record("http://t/long", HTTP_START + b"X-A: b\r\n" * (LONG // 8)
                                                   + b"\r\n" + page(ARTICLE).encode()), False, "too_large"),
    # (a request is no page, but partly read it cannot be copied whole: skipped too)
    "request-header-lines": (_raw_record("http://t/long", b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * (LONG // 8) + b"\r\n",
                                         rec_type=b"request"), True, "too_large"),
    "warc-header-lines": (_raw_record("http://t/long", HTTP_START + b"\r\n" + page(ARTICLE).encode(),
                                      b"X-A: b\r\n" * (LONG // 8)), True, None),
    "warc-header-line-uncompressed": (_raw_record("http://t/long", HTTP_START + b"\r\n" + page(ARTICLE).encode(),
                                                  b"X-A: " + b"a" * LONG + b"\r\n"), False, None),
    "a-line-between-records": (b"z" * LONG + b"\r\n", False, None),
}


@pytest.mark.parametrize("name", LONG_HEADERS)
def test_a_header_block_or_a_line_of_any_length_is_read_up_to_its_bound(name):
    import io
    import tracemalloc

    from plexity_plugins.io.inputs import WarcFile

    middle, gzipped, skip = LONG_HEADERS[name]
    records = [_good(0), middle, _good(1)]
    data = b"".join(gzip.compress(r, 1) for r in records) if gzipped else b"".join(records)
    tracemalloc.start()
    try:
        with within(20):
            warc = WarcFile(io.BytesIO(data))
            read = [(r.uri, r.skip, r.detail) for r in warc]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20, f"{peak / 1e6:.0f} MB"  # (before: 143-173 MB here; 2 GB for 70 MB of header lines)
    outcomes = {uri: skip for uri, skip, _ in read}
    assert outcomes["http://t/good-0"] is None and outcomes["http://t/good-1"] is None
    if skip:
        assert [uri for uri, _, _ in read] == ["http://t/good-0", "http://t/long", "http://t/good-1"]
        assert outcomes["http://t/long"] == skip and "HTTP headers are over 1,048,576 bytes" in read[1][2]
        assert warc.problem is None
    else:
        assert [uri for uri, _, _ in read] == ["http://t/good-0", "http://t/good-1"]
        assert warc.problem == "corrupt" and warc.records_recovered == 1, warc.problem_detail
        if name != "a-line-between-records":
            assert "record 2: its WARC headers are over 1,048,576 bytes" in warc.problem_detail


# -- lone surrogates in a page given as a str ------------------------------------------------------------------------
# A JSON "\ud800" escape puts a lone surrogate in a str (a POST to /api/score, a Scrapy item built from an API's JSON,
# a JSONL document): libxml2 stopped reading the page at the first one (tags, trafilatura: "The council approved the
# bud", the rest lost; /api/score answered an empty text, all_sentences_dropped) and resiliparse's parse raised
# (dense, fast, auto: extraction_failed; a 500 from /api/score).  Each is U+FFFD now, as an undecodable byte is.

SURROGATES = page(ARTICLE).replace("budget", "bud\ud800get\udfff")


@pytest.mark.parametrize("extractor", ["learned", "dense", "auto", "trafilatura", "fast", "tags"])
def test_every_extractor_reads_a_page_with_lone_surrogates_to_its_end(extractor):
    from plexity_plugins.extractors import get_extractor

    text = get_extractor(extractor)(SURROGATES)
    assert "bud\ufffdget\ufffd for the new library" in text and "the mayor said it would be finished" in text


def test_the_web_api_scores_a_page_with_a_lone_surrogate_escape():
    from web_server import post, start_server, stop_server

    process, url = start_server([])
    try:
        answers = {extractor: post(url, json.dumps({"text": SURROGATES, "format": "html", "extractor": extractor}))
                   for extractor in ("tags", "dense")}  # (json.dumps escapes them: "\ud800")
    finally:
        stop_server(process)
    for extractor, (status, answer, _) in answers.items():
        assert status == 200, (extractor, answer)  # (before: dense a 500)
        assert "the mayor said it would be finished soon" in answer["clean_text"], extractor


# -- a file name that is not UTF-8 -----------------------------------------------------------------------------------
# b"caf\xe9.warc.gz" (a name from a Latin-1 system) is listed with surrogates: `plexity run` stopped before running
# ("error: 'utf-8' codec can't encode characters in position 3-4: surrogates not allowed", hashing the input's names),
# and then its task failed writing the documents' file_path (orjson: "str is not valid UTF-8"), the good file's
# documents with it.  The names are hashed as their bytes, and the metadata holds the name with its bytes escaped.

def test_plexity_run_reads_a_warc_whose_name_is_not_utf8(tmp_path):
    import os
    import subprocess
    import sys

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.warc.gz").write_bytes(gzip.compress(_good(0)))
    (folder / os.fsdecode(b"caf\xe9.warc.gz")).write_bytes(gzip.compress(_good(1)))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "run", str(folder), "-o", str(out),
                           "--extractor", "tags", "--min-chars", "0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    documents = [json.loads(line) for path in sorted((out / "documents").glob("*.jsonl.gz"))
                 for line in gzip.decompress(path.read_bytes()).splitlines()]
    paths = sorted(d["metadata"]["file_path"] for d in documents)
    assert paths == [str(folder / "caf\\xe9.warc.gz"), str(folder / "good.warc.gz")]


def _gzip_bomb(start: bytes, fill: bytes, megabytes: int) -> bytes:
    """A single gzip member: `start`, then `megabytes` MB of `fill` bytes (a few kB per MB compressed)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = fill * (1 << 20)
    return compressor.compress(start) + b"".join(compressor.compress(block) for _ in range(megabytes)) \
        + compressor.flush()


@pytest.mark.parametrize("start, fill, problem, detail", [
    (b"", b"\0", "not_a_warc", "not a WARC file: a gzip file holding binary data"),
    (b"WARC/1.0\r\nWARC-Type: response\r\nX-A: ", b"a", "corrupt", "record 1: its WARC headers are over 1,048,576"),
], ids=["zeros", "one-header"])
def test_a_warc_gz_that_inflates_to_one_endless_line_is_read_in_bounded_memory(start, fill, problem, detail):
    # a 1 MB .warc.gz of 1 GB without a line break: warcio read it as one line (before: 3.2 GB and still reading
    # after 60 s at 2 GB)
    import io
    import resource

    from plexity_plugins.io.inputs import WarcFile

    data = _gzip_bomb(start, fill, 1000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    warc = WarcFile(io.BytesIO(data))
    with within(20):
        assert list(warc) == []
    assert (warc.problem, warc.problem_detail[:len(detail)]) == (problem, detail)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 100_000, f"{grown / 1000:.0f} MB"  # (kB)


# -- a Content-Length of digits int() does not read ------------------------------------------------------------------
# "²" is a digit to str.isdigit, not to int(): the check passed it, warcio read the length as 0, and the record (its
# page the next record's place) was counted not_html in plexity run.  It is damaged: truncated, naming its length.

@pytest.mark.parametrize("gzipped", [True, False], ids=["warc.gz", "warc"])
@pytest.mark.parametrize("length", ["\u00b2", "3\u00b2\u00b9"])
def test_a_content_length_of_superscript_digits_is_not_a_number_of_bytes(gzipped, length):
    import io

    from plexity_plugins.io.inputs import WarcFile

    records = [_good(0), record_bytes("http://t/odd", page(ARTICLE).encode(), content_length=length), _good(1)]
    warc = WarcFile(io.BytesIO(b"".join(gzip.compress(r) for r in records) if gzipped else b"".join(records)))
    read = {r.uri: (r.skip, r.detail) for r in warc}
    assert read == {"http://t/good-0": (None, ""), "http://t/good-1": (None, ""),
                    "http://t/odd": ("truncated", f"its Content-Length is not a number of bytes ({length!r})")}
    assert warc.problem == "corrupt"


# -- a page that starts with many comments ---------------------------------------------------------------------------
# The pattern that knows HTML by its start (`payload_sniffing._HTML_START`, asked of every payload by `binary_kind`)
# let a comment end at any later "-->": n comments not followed by <html>, <head> ... were tried in 2**n ways.  A record
# whose page starts with 24 comment lines and then a <div> took plexity clean 44 s; 30, most of an hour.

COMMENTS = b"<!-- c -->\n" * 300


def test_a_page_that_starts_with_many_comments_is_read_in_linear_time():
    import io

    from plexity_plugins.io.inputs import WarcFile, binary_kind, is_html_type

    body = COMMENTS + b"<div><p>" + ARTICLE.encode() + b"</p></div>"
    with within(10):
        assert binary_kind(body) is None and not is_html_type(None, None, body)  # (no tag it knows HTML by)
        assert is_html_type(None, None, COMMENTS + b"<!DOCTYPE html><html>")
        records = [_good(0), record_bytes("http://t/comments", body), _good(1)]
        read = [(r.uri, r.skip) for r in WarcFile(io.BytesIO(b"".join(gzip.compress(r) for r in records)))]
    assert read == [("http://t/good-0", None), ("http://t/comments", None), ("http://t/good-1", None)]


# -- control characters in what a warning names ----------------------------------------------------------------------
# A record's WARC-Target-URI is the crawl's: `plexity clean` wrote it into its warnings as it came, so an ESC ] 0 ; ...
# BEL set the terminal's title, ESC [ 2 J cleared it and a CR overwrote the warning with a line of the page's
# choosing.  The command line's log lines escape control characters now.

def test_plexity_clean_writes_a_uri_s_control_characters_escaped_in_its_warnings(tmp_path):
    import subprocess
    import sys

    uri = "http://t/\x1b]0;PWNED\x07\x1b[2J\rWARNING fake: all good"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "esc.warc.gz").write_bytes(gzip.compress(_good(0)) + gzip.compress(
        record_bytes(uri, b"", content_type="text/html")))  # (an empty page: a skip, and its warning)
    done = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(folder), "-o",
                           str(tmp_path / "out"), "--extractor", "tags"], capture_output=True, timeout=120)
    stderr = done.stderr.decode()  # (as written: no newline translation)
    assert done.returncode == 0, stderr
    warnings_ = [line for line in stderr.split("\n") if "empty_payload" in line]
    assert len(warnings_) == 1 and "http://t/\\x1b]0;PWNED\\x07\\x1b[2J\\rWARNING" in warnings_[0], stderr
    assert not set(stderr) & {"\x1b", "\x07", "\r"}


def test_plexity_run_writes_a_uri_s_control_characters_escaped_in_its_warnings(tmp_path):
    # (datatrove's logger, to the terminal and the task's log: the extractor step names a document by its URL)
    import subprocess
    import sys

    uri = "http://t/\x1b]0;PWNED\x07\x1b[2J\rWARNING fake: all good"
    deep = b"<html><body>" + b"<div>" * 5000 + b"x" + b"</div>" * 5000 + b"</body></html>"  # (past lxml's depth)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "esc.warc.gz").write_bytes(gzip.compress(_good(0)) + gzip.compress(record_bytes(uri, deep)))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "run", str(folder), "-o", str(out),
                           "--extractor", "tags"], capture_output=True, timeout=300)
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr[-3000:]
    logs = stderr + "".join(path.read_text() for path in (out / "logs" / "logs").glob("*.log"))
    assert "document http://t/\\x1b]0;PWNED\\x07\\x1b[2J\\rWARNING" in logs, logs[-3000:]
    assert not set(logs) & {"\x1b", "\x07", "\r"}
