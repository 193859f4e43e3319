"""Reading (`plexity_plugins.io`, imported here by its old door, `io.inputs`): every WARC record gets exactly one
outcome, damage is named, payloads are decoded within the cap."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import time
import zlib

import brotli
import pytest
from warcio.warcwriter import WARCWriter

from plexity_plugins.io.inputs import (NOT_A_WARC, WarcFile, decode_content, dechunk, read_document,
                                       read_document_file)
from plexity_plugins.errors import TooLarge, Undecodable
from warc_corpus import ARTICLE, CAP, count_records, page, response, write_corpus, write_warc


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    directory = tmp_path_factory.mktemp("warc-corpus")
    return directory, write_corpus(directory)


def read(path, cap=CAP):
    with open(path, "rb") as f:
        warc = WarcFile(f, cap)
        records = list(warc)
    warc.payloads = {r.uri: r.payload for r in records if r.payload is not None}
    return warc, [("html" if r.payload is not None else r.skip) for r in records]


def test_every_record_gets_exactly_one_outcome_and_damage_is_named(corpus):
    directory, expected = corpus
    for name, want in expected.items():
        warc, outcomes = read(directory / name)
        assert outcomes == want["outcomes"], name
        assert warc.records == len(outcomes) == count_records(directory / name), name
        if name.startswith("mixed"):  # plain, sniffed, gzip, brotli, deflate, chunked: the same page
            assert set(warc.payloads.values()) == {page(ARTICLE).encode()}, name
        if want["problem"] is None:
            assert warc.problem is None, (name, warc.problem_detail)
        elif want["problem"] == NOT_A_WARC:
            assert warc.problem == NOT_A_WARC, name
        else:
            assert want["problem"] in warc.problem_detail, (name, warc.problem_detail)


def test_a_brotli_record_is_decoded_and_the_records_after_it_are_read(tmp_path):
    """warcio 1.8.1 + brotli >= 1.2: warcio's own decoding raises AttributeError ('unused_data')
    and used to end the file at the first Content-Encoding: br record."""
    html = page(ARTICLE).encode()
    dummy = WARCWriter(io.BytesIO())
    write_warc(tmp_path / "br.warc.gz", [response(dummy, "http://t/br", brotli.compress(html),
                                                  headers=[("Content-Encoding", "br")]),
                                         response(dummy, "http://t/after", html)])
    with open(tmp_path / "br.warc.gz", "rb") as f:
        records = list(WarcFile(f))
    assert [(r.uri, r.payload) for r in records] == [("http://t/br", html), ("http://t/after", html)]


def test_stacked_and_zstd_content_encodings_are_decoded_and_others_named(tmp_path, monkeypatch):
    """``Content-Encoding: gzip, br`` (applied in that order) and ``zstd`` are decoded (before: the
    body was left encoded and counted not_html, "its bytes are binary data"); a coding plexity does
    not decode is an undecodable record naming it, where the body is not text."""
    from plexity_plugins.io.http_codings import zstd_module

    zstd = zstd_module()  # (Python 3.14's compression.zstd, or backports.zstd before it: Scrapy's dependency)

    html = page(ARTICLE).encode()
    dummy = WARCWriter(io.BytesIO())
    cases = {  # uri: (body, Content-Encoding, the outcome: the html, or the skip and words of its detail)
        "gzip-br": (brotli.compress(gzip.compress(html)), "gzip, br", html),
        "br-gzip": (gzip.compress(brotli.compress(html)), "br,gzip", html),
        "deflate-gzip-identity": (gzip.compress(zlib.compress(html)), "deflate, gzip, identity", html),
        "zstd": (zstd.compress(html), "zstd", html),
        "zstd-frames": (zstd.compress(html[:60]) + zstd.compress(html[60:]), "zstd", html),
        "gzip-zstd": (zstd.compress(gzip.compress(html)), "GZIP , ZSTD", html),
        "zstd-stored-decoded": (html, "zstd", html),
        "zstd-bomb": (zstd.compress(bytes(CAP * 100)), "zstd", ("too_large", "more than")),
        "zstd-cut": (zstd.compress(html + bytes(range(256)) * 40)[:150], "zstd", ("undecodable", "ends early")),
        "compress": (b"\x1f\x9d\x90" + bytes(range(256)) * 4, "compress", ("undecodable", "'compress'")),
        "five-layers": (html, "gzip, gzip, gzip, gzip, gzip", ("undecodable", "more than 4")),
    }
    records = [response(dummy, f"http://t/{uri}", body, headers=[("Content-Encoding", coding)])
               for uri, (body, coding, _) in cases.items()]
    write_warc(tmp_path / "codings.warc.gz", records)
    with open(tmp_path / "codings.warc.gz", "rb") as f:
        outcomes = {r.uri[9:]: r.payload if r.payload is not None else (r.skip, r.detail) for r in WarcFile(f, CAP)}
    for uri, (_, _, want) in cases.items():
        if isinstance(want, bytes):
            assert outcomes[uri] == want, uri
        else:
            assert outcomes[uri][0] == want[0] and want[1] in outcomes[uri][1], (uri, outcomes[uri])
    # a frame that asks for a window over 8 MiB is refused, as RFC 9659 asks and browsers do
    wide = zstd.compress(bytes(20 << 20), options={zstd.CompressionParameter.window_log: 27})  # (658 bytes)
    with pytest.raises(Undecodable, match="zstd: .*too much memory"):
        decode_content(wide, "zstd", 10**8)
    # without a zstd decoder installed: a counted skip naming what to install
    monkeypatch.setitem(sys.modules, "backports.zstd", None)
    monkeypatch.setitem(sys.modules, "compression.zstd", None)
    with pytest.raises(Undecodable, match="pip install backports.zstd"):
        decode_content(zstd.compress(html), "zstd", 10_000)


def _response_block(uri: str, block: bytes, content_type: bytes = b"application/http; msgtype=response") -> bytes:
    """A response record whose HTTP block is `block`, as it is (no blank line added), in its gzip member."""
    head = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " + uri.encode() + b"\r\nWARC-Record-ID: <urn:uuid:"
            + uri.encode() + b">\r\nContent-Type: " + content_type + b"\r\nContent-Length: %d\r\n\r\n" % len(block))
    return gzip.compress(head + block + b"\r\n\r\n")


NO_BLANK_LINE = {  # uri: (HTTP block without the blank line after its headers, the payload it must give)
    "http://t/plain": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + page(ARTICLE).encode(), page(ARTICLE)),
    "http://t/doctype": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nServer: x\r\n<!DOCTYPE html>\n"
                         + page(ARTICLE).encode(), "<!DOCTYPE html>\n" + page(ARTICLE)),
    "http://t/indented": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n  <html><body>\n  <p>" + ARTICLE.encode(),
                          "  <html><body>\n  <p>" + ARTICLE),
    "http://t/text-with-colon": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nPosted at 10:30 " + ARTICLE.encode(),
                                 "Posted at 10:30 " + ARTICLE),
    "http://t/gzip": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                      + gzip.compress(page(ARTICLE).encode()), page(ARTICLE)),
    "http://t/no-headers-at-all": (page(ARTICLE).encode(), page(ARTICLE)),
}


def test_a_response_without_a_blank_line_after_its_http_headers_gives_its_page(tmp_path):
    """warcio reads every line of such a block as a header (dropping those without a colon), so its
    payload was empty: counted empty_payload, and datatrove's WarcReader drops it unsaid.  The headers
    end at the first line that is no header field; what follows is the page."""
    records = [_response_block(uri, block) for uri, (block, _) in NO_BLANK_LINE.items()]
    records += [_response_block("http://t/headers-only", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-A: b\r\n"),
                _response_block("http://t/junk-header", b"HTTP/1.1 200 OK\r\nX-Junk\r\nContent-Type: text/html\r\n\r\n"
                                + page(ARTICLE).encode()),
                _response_block("http://t/png", b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\x89PNG\r\n\x1a\n"
                                + bytes(100))]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "no-blank.warc.gz").write_bytes(b"".join(records))
    with open(tmp_path / "in" / "no-blank.warc.gz", "rb") as f:
        warc = WarcFile(f)
        outcomes = {r.uri: r.payload.decode() if r.payload is not None else r.skip for r in warc}
    assert warc.problem is None
    assert outcomes == {**{uri: want for uri, (_, want) in NO_BLANK_LINE.items()}, "http://t/headers-only":
                        "empty_payload", "http://t/junk-header": page(ARTICLE), "http://t/png": "not_html"}
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"), "-o",
                             str(tmp_path / "out"), "--extractor", "tags", "-q"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["documents"] == 7 and stats["skip_reasons"] == {"empty_payload": 1}
    assert stats["copied_reasons"] == {"not_html": 1}
    assert count_records(tmp_path / "out" / "no-blank.warc.gz") == 9  # (the copy of the png a whole record)


def test_a_transfer_encoding_list_is_undone_chunked_first(tmp_path):
    """``Transfer-Encoding: gzip, chunked`` or ``identity, chunked`` (a list, as HTTP/1.1 allows) was
    compared whole with "chunked": the body was kept chunked, its size lines in the page's text, or,
    gzipped, counted not_html."""
    html = page(ARTICLE).encode()

    def chunked(data: bytes) -> bytes:
        return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (data[:30], data[30:])) + b"0\r\n\r\n"

    dummy = WARCWriter(io.BytesIO())
    cases = {"gzip-chunked": (chunked(gzip.compress(html)), "gzip, chunked", None),
             "identity-chunked": (chunked(html), "identity, chunked", None),
             "Chunked": (chunked(html), " Chunked ", None),
             "chunked-over-br": (chunked(brotli.compress(html)), "chunked", "br")}
    write_warc(tmp_path / "te.warc.gz", [
        response(dummy, f"http://t/{uri}", body, headers=[("Transfer-Encoding", te)]
                 + ([("Content-Encoding", ce)] if ce else [])) for uri, (body, te, ce) in cases.items()])
    with open(tmp_path / "te.warc.gz", "rb") as f:
        assert {r.uri[9:]: r.payload for r in WarcFile(f)} == {uri: html for uri in cases}


def test_a_response_without_a_status_line_is_all_page_as_http_0_9(tmp_path):
    """A response block with no status line (HTTP/0.9, or a crawler that stored the page alone under
    application/http): warcio took its lines up to the first blank one for headers, and the page's
    head, title and all, was lost unsaid.  Browsers read such a response whole."""
    html = (b"<html><head><title>The title</title></head>\n\n<body><p>" + ARTICLE.encode() + b"</p>\n\n<p>"
            + ARTICLE.encode() + b"</p></body></html>")
    path = tmp_path / "http09.warc.gz"
    after = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html
    path.write_bytes(_response_block("http://t/http09", html) + _response_block("http://t/after", after))
    with open(path, "rb") as f:
        assert [(r.uri, r.payload) for r in WarcFile(f)] == [("http://t/http09", html), ("http://t/after", html)]


def test_interim_1xx_responses_before_the_page_are_skipped_as_browsers_skip_them(tmp_path):
    """A crawler that records the socket keeps ``100 Continue`` or ``103 Early Hints`` before the final
    response: warcio takes the first for the record's headers and the page's own headers for its
    payload, so the page was counted not_html (and datatrove's WarcReader dropped it unsaid)."""
    from warcio.archiveiterator import ArchiveIterator

    html = page(ARTICLE).encode()
    early = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    blocks = {"http://t/103": early + b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html,
              "http://t/100-103-gzip": b"HTTP/1.1 100 Continue\r\n\r\n" + early + b"HTTP/1.1 200 OK\r\nContent-Type: "
                                       b"text/html\r\nContent-Encoding: gzip\r\n\r\n" + gzip.compress(html),
              "http://t/103-png": early + b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n" + png,
              "http://t/100-alone": b"HTTP/1.1 100 Continue\r\n\r\n"}
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "interim.warc.gz"
    path.write_bytes(b"".join(_response_block(uri, block) for uri, block in blocks.items()))
    with open(path, "rb") as f:
        outcomes = {r.uri: r.payload if r.payload is not None else r.skip for r in WarcFile(f)}
    assert outcomes == {"http://t/103": html, "http://t/100-103-gzip": html, "http://t/103-png": "not_html",
                        "http://t/100-alone": "not_html"}
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"), "-o",
                             str(tmp_path / "out"), "--extractor", "tags", "-q"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    with open(path, "rb") as f:
        given = {r.rec_headers.get_header("WARC-Target-URI"): r.content_stream().read() for r in ArchiveIterator(f)}
    with open(tmp_path / "out" / "interim.warc.gz", "rb") as f:
        copied = {r.rec_headers.get_header("WARC-Target-URI"): r.content_stream().read() for r in ArchiveIterator(f)
                  if not r.rec_headers.get_header("X-Plexity-Verdict")}
    assert copied["http://t/103-png"] == given["http://t/103-png"]  # the copy whole, its final response in it


@pytest.mark.parametrize("encoding", ["br", "deflate"])
def test_a_page_stored_decoded_under_br_or_deflate_is_read_with_its_byte_order_mark_or_in_utf16(encoding):
    """Crawlers often store the body decoded with the header kept: a br or deflate body that does not
    decode is the page when it starts as HTML, and a UTF-8 BOM before it, or UTF-16, made it undecodable
    (gzip's and zstd's, known by their magic bytes, were read)."""
    html = page(ARTICLE).encode()
    wide = page(ARTICLE).encode("utf-16-le")
    for body in (b"\xef\xbb\xbf" + html, b"\xff\xfe" + wide, wide):
        assert decode_content(body, encoding, 10_000) == body
    with pytest.raises(Undecodable):  # (bytes that are neither: damage, as before)
        decode_content(bytes(range(256)), encoding, 10_000)


def test_content_encodings_decode_within_the_cap():
    html = page(ARTICLE).encode()
    assert decode_content(gzip.compress(html), "gzip", 10_000) == html
    assert decode_content(gzip.compress(html) + gzip.compress(html), "x-gzip", 10_000) == html + html
    assert decode_content(zlib.compress(html), "deflate", 10_000) == html
    raw_deflate = zlib.compressobj(wbits=-15)
    assert decode_content(raw_deflate.compress(html) + raw_deflate.flush(), "deflate", 10_000) == html
    assert decode_content(brotli.compress(html), "br", 10_000) == html
    assert decode_content(html, "gzip", 10_000) == html  # stored decoded, header kept
    assert decode_content(html, "br", 10_000) == html
    bomb = b"\0" * 5_000_000
    for encoding, body in (("gzip", gzip.compress(bomb)), ("br", brotli.compress(bomb)),
                           ("deflate", zlib.compress(bomb))):
        with pytest.raises(TooLarge):
            decode_content(body, encoding, 1_000_000)
    with pytest.raises(Undecodable):
        decode_content(gzip.compress(html)[:-20], "gzip", 10_000)
    with pytest.raises(Undecodable):
        decode_content(brotli.compress(html)[:-5], "br", 10_000)
    # a body the crawler declared cut: what it inflates to, the page's start
    for encoding, body in (("gzip", gzip.compress(html)), ("deflate", zlib.compress(html)),
                           ("br", brotli.compress(html))):
        start = decode_content(body[:len(body) * 2 // 3], encoding, 10_000, cut=True)
        assert start and html.startswith(start) and len(start) < len(html), encoding


def _cut_pages_warc(path, html: bytes) -> None:
    """Three responses cut in the middle of their body: two the crawler declared cut
    (``WARC-Truncated: length``, as Common Crawl marks a page past 1 MiB), one not."""
    dummy = WARCWriter(io.BytesIO())
    gzipped = gzip.compress(html)
    cut = {"WARC-Truncated": "length"}
    write_warc(path, [
        response(dummy, "http://t/gzip-cut", gzipped[:len(gzipped) // 2], headers=[("Content-Encoding", "gzip")],
                 warc_headers=cut),
        response(dummy, "http://t/plain-cut", html[:len(html) // 2], warc_headers=cut),
        response(dummy, "http://t/gzip-damaged", gzipped[:len(gzipped) // 2], headers=[("Content-Encoding", "gzip")]),
    ])


def test_a_page_the_crawler_kept_only_the_start_of_is_read_as_far_as_it_goes(tmp_path):
    """A compressed body the record declares cut (WARC-Truncated) gives what it inflates to, as
    browsers and datatrove's own reader show it; the same body without that declaration is
    damage, named. Both declared pages are counted."""
    html = page(*[ARTICLE] * 40).encode()
    _cut_pages_warc(tmp_path / "cut.warc.gz", html)
    with open(tmp_path / "cut.warc.gz", "rb") as f:
        warc = WarcFile(f)
        records = {r.uri: r for r in warc}
    gzip_cut = records["http://t/gzip-cut"].payload
    assert gzip_cut and html.startswith(gzip_cut) and len(gzip_cut) < len(html)
    assert records["http://t/plain-cut"].payload == html[:len(html) // 2]
    damaged = records["http://t/gzip-damaged"]
    assert (damaged.payload, damaged.skip, damaged.detail) == (None, "undecodable", "the compressed body ends early")
    assert warc.pages_cut_by_crawler == 2


def test_cut_pages_are_counted_in_plexity_clean_and_marked_in_datatrove_documents(tmp_path):
    from plexity_plugins.datatrove import WarcHtmlReader
    from helpers import run_plexity

    html = page(*[ARTICLE] * 40).encode()
    (tmp_path / "in").mkdir()
    _cut_pages_warc(tmp_path / "in" / "cut.warc.gz", html)
    reader = WarcHtmlReader(str(tmp_path / "in"))
    documents = {d.metadata["url"]: d.metadata.get("warc_truncated") for d in reader.run()}
    assert documents == {"http://t/gzip-cut": "length", "http://t/plain-cut": "length"}
    assert reader.stats["pages_cut_by_crawler"].total == 2
    result = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "2 pages cut short by the crawler" in result.stdout + result.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["pages_cut_by_crawler"] == 2 and stats["skip_reasons"] == {"undecodable": 1}


def test_chunked_bodies_are_joined_and_unchunked_ones_left_alone():
    assert dechunk(b"5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n") == b"hello world"
    assert dechunk(b"<html>not chunked</html>") == b"<html>not chunked</html>"


def test_document_files_are_read_up_to_the_cap_only(tmp_path):
    (tmp_path / "a.html.gz").write_bytes(gzip.compress(b"x" * 5000))
    assert len(read_document_file(tmp_path / "a.html.gz", 5000)) == 5000
    with pytest.raises(TooLarge):
        read_document_file(tmp_path / "a.html.gz", 4999)
    (tmp_path / "b.txt").write_bytes(b"y" * 100)
    with pytest.raises(TooLarge):
        read_document_file(tmp_path / "b.txt", 99)
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b"z" * 1000)[:-10])
    with pytest.raises(EOFError):
        read_document_file(tmp_path / "c.txt.gz", 5000)


def test_a_gzipped_document_with_trailing_garbage_is_read_and_the_garbage_counted(tmp_path):
    """Bytes after the gzip stream of an .html.gz are ignored, as gzip and browsers ignore them, and
    counted (before: GzipFile raised at them and the whole file was an unreadable_file)."""
    html = page(ARTICLE).encode()
    for name, data, trailing in (("garbage", gzip.compress(html) + b"<!-- junk -->\n" * 5, 70),
                                 ("nul-padded", gzip.compress(html) + bytes(512), 0),
                                 ("two-members", gzip.compress(html[:50]) + gzip.compress(html[50:]), 0),
                                 ("padding-then-garbage", gzip.compress(html) + bytes(3) + b"xy", 2),
                                 ("large-garbage", gzip.compress(html) + b"\xff" * 300_000, 300_000)):
        (tmp_path / f"{name}.html.gz").write_bytes(data)
        assert read_document(tmp_path / f"{name}.html.gz", 5000) == (html, trailing), name
    (tmp_path / "second-member-damaged.html.gz").write_bytes(gzip.compress(html) + b"\x1f\x8b\x08\x00" + bytes(40))
    with pytest.raises(zlib.error):  # (a damaged member is damage, as before)
        read_document(tmp_path / "second-member-damaged.html.gz", 5000)
    (tmp_path / "not-gzip.html.gz").write_bytes(html)
    with pytest.raises(OSError):
        read_document(tmp_path / "not-gzip.html.gz", 5000)


def test_plexity_clean_cleans_a_gzipped_page_with_trailing_garbage_and_names_it(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "page.html.gz").write_bytes(gzip.compress(page(ARTICLE, ARTICLE).encode()) + b"junk" * 10)
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(folder), "-o",
                             str(tmp_path / "out"), "--extractor", "tags", "-q"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["documents"] == 1 and stats["skip_reasons"] == {} and stats["damaged_files"] == {"trailing_garbage": 1}
    assert "40 bytes after the gzip stream" in stats["damaged_file_details"][0]
    assert "library" in (tmp_path / "out" / "page.html.gz.txt").read_text()


def test_gzip_members_inflate_alike_with_isa_l_and_with_zlib(corpus, monkeypatch):
    """.warc.gz members are inflated by ISA-L where python-isal is installed (twice zlib's
    speed), else by zlib: every file of the corpus, damaged ones included, reads the same."""
    import plexity_plugins.io.inputs as reading

    directory, expected = corpus

    def outcomes(name):
        with open(directory / name, "rb") as f:
            warc = reading.WarcFile(f, CAP)
            records = [(r.uri, r.skip, r.payload) for r in warc]
        return records, warc.problem, warc.problem_detail

    gz = next(name for name in expected if name.endswith(".gz"))
    # a fresh process that reads a .warc.gz has taken ISA-L's inflate (nothing else imports it)
    check = ("import sys\nfrom plexity_plugins.io.inputs import WarcFile\n"
             f"with open({str(directory / gz)!r}, 'rb') as f:\n    list(WarcFile(f, {CAP}))\n"
             "print('isal.isal_zlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=60).stdout.strip() == "True"
    with_isal = {name: outcomes(name) for name in expected}
    monkeypatch.setitem(sys.modules, "isal", None)  # as if it were not installed: zlib's inflate
    assert {name: outcomes(name) for name in expected} == with_isal


def test_decoding_a_payload_stops_at_the_reading_time_limit():
    from plexity_plugins.io.inputs import Deadline

    from warc_corpus import record_bytes

    body = gzip.compress(page(ARTICLE).encode()) + gzip.compress(b"") * 500
    past = Deadline(1e-9).start()
    time.sleep(0.001)  # (the deadline is behind us)
    with pytest.raises(Undecodable, match="took longer than"):
        decode_content(body, "gzip", 10**6, past)
    with pytest.raises(Undecodable, match="took longer than"):
        dechunk(b"4\r\nabcd\r\n0\r\n\r\n", past)
    record = record_bytes("http://t/slow", body, headers=[("Content-Encoding", "gzip")])
    (slow,) = list(WarcFile(io.BytesIO(record), read_timeout=1e-9))
    assert slow.skip == "undecodable" and "took longer than" in slow.detail
    (fine,) = list(WarcFile(io.BytesIO(record)))  # (the default limit: 30 s, the extraction limit's)
    assert fine.payload == page(ARTICLE).encode()


def _block_records(path) -> None:
    """A page as a response, a resource record and conversion records of HTML (a page's bytes without an HTTP
    response), and the resource and conversion records that are no page (a DNS answer, JSON, a WET text)."""
    page_bytes = page(ARTICLE, "Stored without its HTTP response.").encode()
    writer = WARCWriter(io.BytesIO())

    def block(uri, rec_type, body, content_type=None, identified=None):
        headers = {"WARC-Identified-Payload-Type": identified} if identified else {}
        return writer.create_warc_record(uri, rec_type, payload=io.BytesIO(body), warc_content_type=content_type,
                                         warc_headers_dict=headers)

    write_warc(path, [response(writer, "http://t/response", page_bytes),
                      block("http://t/resource", "resource", page_bytes, "text/html"),
                      block("http://t/resource-identified", "resource", page_bytes, identified="text/html"),
                      block("dns:t", "resource", b"20260101 t. 300 IN A 10.0.0.1\n", "text/dns"),
                      block("http://t/conversion", "conversion", page_bytes, "text/html; charset=utf-8"),
                      block("http://t/conversion-identified", "conversion", page_bytes, identified="text/html"),
                      block("http://t/conversion-json", "conversion", b'{"a": 1}', "application/json"),
                      block("http://t/wet", "conversion", b"A page's text.\n", "text/plain")])


RESOURCE_AND_CONVERSION = {"http://t/response": None, "http://t/resource": "html_resource",
                           "http://t/resource-identified": "html_resource", "dns:t": "not_response",
                           "http://t/conversion": None, "http://t/conversion-identified": None,
                           "http://t/conversion-json": "not_response", "http://t/wet": None}


def test_resource_records_of_html_are_named_and_conversion_records_of_html_read_as_datatrove_reads_them(tmp_path):
    """datatrove 0.10.1's WarcReader reads response and conversion records (a conversion of HTML as a page,
    by its identified type or its bytes), and skips a resource record, counting nothing.  The same records
    are read here; a resource record holding HTML (a page stored without its HTTP response: warcit's WARCs
    of a folder of files) is skipped too, but counted by its own name, ``html_resource``, in every front
    end (before: counted ``not_response``, and a conversion of HTML was not read)."""
    from datatrove.pipeline.readers import WarcReader

    from plexity_plugins.datatrove import WarcHtmlReader

    (tmp_path / "in").mkdir()
    _block_records(tmp_path / "in" / "blocks.warc.gz")
    with open(tmp_path / "in" / "blocks.warc.gz", "rb") as f:
        assert {r.uri: r.skip for r in WarcFile(f)} == RESOURCE_AND_CONVERSION

    ours = WarcHtmlReader(str(tmp_path / "in"))
    documents = {d.metadata["url"]: d.text for d in ours.run()}
    theirs = {d.metadata["url"]: d.text for d in WarcReader(str(tmp_path / "in")).run()}
    assert documents == theirs and set(documents) == {uri for uri, skip in RESOURCE_AND_CONVERSION.items()
                                                       if skip is None}
    assert ours.stats["skipped_html_resource"].total == 2 and ours.stats["skipped_not_response"].total == 2

    clean = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"), "-o",
                            str(tmp_path / "clean"), "--extractor", "tags", "--min-chars", "0", "-q"],
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["copied_reasons"] == {"html_resource": 2, "not_response": 2} and stats["documents"] == 4


@pytest.mark.parametrize("gzip_records", [True, False])
def test_header_lines_across_warcios_blocks_are_read_whole(tmp_path, gzip_records):
    """warcio reads a file (a gzip member) a block at a time, and its readline, given a length, cut a line
    over three blocks or more: a record's long WARC and HTTP header lines, of every length around the
    block sizes, and a response whose block ends with its headers, come out as they were written."""
    import random

    letters = random.Random(7)
    dummy = WARCWriter(io.BytesIO())
    records, want = [], []
    for i in range(40):
        warc_note = "".join(letters.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=1_900 * i + 7))
        http_note = "".join(letters.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=2_300 * i + 3))
        body = page(f"Page {i}. {ARTICLE}").encode()
        records.append(response(dummy, f"http://t/{i}", body, headers=[("X-Note", http_note)],
                                warc_headers={"WARC-Note": warc_note}))
        want.append((f"http://t/{i}", warc_note, http_note, body))
    records.append(response(dummy, "http://t/headers-only", b"", "text/html"))  # (its block ends with its headers)
    path = tmp_path / ("long-headers.warc.gz" if gzip_records else "long-headers.warc")
    write_warc(path, records, gzip_records=gzip_records)
    with open(path, "rb") as f:
        warc = WarcFile(f, 1_000_000)
        got = [(r.uri, r.fields.get("warc-note"), r.record.http_headers.get_header("X-Note"), r.payload, r.skip)
               for r in warc]
    assert got == [(*w, None) for w in want] + [("http://t/headers-only", None, None, None, "empty_payload")]
    assert warc.problem is None, warc.problem_detail
