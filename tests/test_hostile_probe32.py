"""Hostile-input probe 32: kinds of bad input the earlier probes did not try, each through the front
ends it reaches.

WARC files cut right after a record's WARC headers (a crawler that died between writing a record's
headers and its block), or inside them once its type is known: warcio's HTTP parser found nothing
where the block should start and raised EOFError, which warcio's iterator takes for the end of the
file.  The record was lost without a count, and the file was not named damaged (`plexity clean`:
"6 WARC records", no ``damaged_files``; `plexity run`'s reader: ``records: 2``, no corrupt file).  Now
the record is a ``truncated`` skip ("the file ends after its WARC headers: its block is missing") and the
file ``truncated``, in .warc and .warc.gz alike; cut inside its WARC headers before its Content-Length, it was a
``truncated`` record of a ``corrupt`` file ("no Content-Length: where the record ends is unknown"), and is now
one of a ``truncated`` file ("the file ends in its WARC headers").  A record cut inside its HTTP headers was counted
``not_html`` by `plexity run` (`plexity clean` found it short only once it had copied it: ``truncated``); now it is
``truncated`` in both.  A response record with neither a WARC-Target-URI
nor a Content-Type made warcio call ``None.startswith``: the file was named corrupt ("AttributeError:
'NoneType' object has no attribute 'startswith'") and the record was lost in its bytes skipped; now it
is a record, counted (``not_html``: its block is not read as HTTP).

End tags that make elements: HTML's tree builder makes a ``<br>`` of each ``</br>`` and an empty ``<p>`` of each
``</p>`` with no ``<p>`` open, so a page of a million stray ``</p>`` (4 MB) is a million elements in lexbor's tree;
the bound of a page's tags (`extractors.markup.MAX_TAGS`) counted start tags only and let it through.  ``dense``
took 21 s and 646 MB, ``fast`` 6.9 s and 350 MB (3 million: the 768 MiB memory ceiling after 10 s, a
``memory_limit`` skip); a million ``</br>``, 5.7 and 7.3 s.  Now those end tags count as the tags they make (a
``</p>`` against the ``<p>`` start tags before it), and such a page is refused before it is parsed, in milliseconds,
naming the bound, as a page of as many start tags is.

trafilatura's justext fallback (run on a page whose own extraction it finds too short) looks for each short
paragraph's neighbours by walking the paragraphs one by one from it: a run of k short paragraphs costs k² steps.
1,000 nested ``<b>``s before 10,000 ``<p>x</p>`` (90 kB) took ``trafilatura`` and ``auto`` past the 30 s time limit
(an ``extraction_failed`` skip after 31.6 s of a core; 5,000 paragraphs: 6.3 s).  Now trafilatura's justext
revises its classes with `extractors.trafilatura._revise_paragraph_classification`, the same classes in linear time:
the 90 kB page takes 3 s, the text the same.  justext also made a paragraph's text again each of the ~35 times it was
asked for it, with a Python call for each run of whitespace: 10 MB of words in a ``<textarea>`` (which trafilatura's
own extraction leaves out, so justext is run) took ``trafilatura`` 21 s of a core (20 MB: past the limit).  Now each
paragraph's text is made once, without a call per run (`_paragraph_text`, `_normalize_whitespace`): 3.7 s, the text
the same.

``Transfer-Encoding: chunked`` bodies whose lines end in a bare LF (``32\n...``: servers that write them so; RFC 9112
lets a reader take them, browsers do), or that end after whole chunks or inside a size line with no last chunk (a
connection closed, a crawler's limit): de-chunking gave the body back as stored, and the chunk sizes became the
page's text ("The council approved the budget for 32 the new library"), in every command.  Now such lines are read,
and a body cut short is the chunks read.

A ``.html.gz`` of millions of empty gzip members, then a page: members that inflate to nothing never reach the size
cap, and each cost a copy of the rest of the block read; 40 MB took `plexity clean` 9.2 s to read (a gigabyte,
minutes), for one page.  A Content-Encoding body is undecodable past `MAX_GZIP_MEMBERS` (1,000) members; a document
file now is too: ``unreadable_file`` ("Undecodable: more than 1,000 gzip members"), at once.

A segmented WARC record (WARC 1.1: its first segment a response with ``WARC-Segment-Number: 1``, its rest in
``continuation`` records): the first segment was read as a whole page, the start of one passed for all of it,
uncounted, and a compressed body cut across segments was ``undecodable``.  Now it is a page the crawler kept only
the start of (``segmented``), as a ``WARC-Truncated`` one is: counted in ``pages_cut_by_crawler``, named in the
document's ``warc_truncated``, a compressed body read as far as it goes.

Pages nested within `nesting.MAX_DEPTH` (128 levels) but large: resiliparse's main-content pass costs the page's size
times its depth, and the bound was on the depth alone.  10 MB of text in 120 nested ``<div>``s took ``dense`` 9.7 s
of a core (50 MB, the size cap, past the 30 s limit); 190,000 ``<b>``s (1.7 MB, within the tag bound) 120 levels deep
10.6 s, ``fast`` 8.2 s.  Now a large page is nested less deep (`nesting.depth_limit`: characters x levels and tags x
levels bounded): 2.8 s and 0.3 s; no development page is nested less deep for it.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import re
import time

import pytest

from plexity_plugins.errors import ExtractionError
from plexity_plugins.extractors.markup import read_markup, read_markup_python
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor
from plexity_plugins.errors import Undecodable
from plexity_plugins.io.inputs import MAX_GZIP_MEMBERS, WarcFile, dechunk, read_document
from helpers import executed_lines, run_plexity
from warc_corpus import ARTICLE, page, record_bytes


def _good(i: int) -> bytes:
    return record_bytes(f"http://t/good-{i}", page(ARTICLE, f"Good {i}.").encode())


def _outcomes(data: bytes, name: str) -> tuple[list[tuple[str, str | None]], WarcFile]:
    warc = WarcFile(io.BytesIO(data), name=name)
    return [(item.uri, item.skip) for item in warc], warc


# -- a file cut after a record's WARC headers ------------------------------------------------------------------------

def _cut_after_headers(extra: int) -> tuple[bytes, bytes]:
    """A good record, then one cut `extra` bytes after the end of its WARC headers' last line (-200, -150: in its
    WARC headers, before its Content-Length; -2: inside its Content-Length line; 0: before the blank line; 2: after
    it, no block; 14 and 40: in its HTTP headers); as .warc and .warc.gz."""
    cut = record_bytes("http://t/cut", page(ARTICLE, "Cut.").encode())
    end = cut.index(b"\r\n\r\n")  # (Content-Length is the last WARC header line)
    cut = cut[:end + extra]
    return _good(0) + cut, gzip.compress(_good(0)) + gzip.compress(cut)


@pytest.mark.parametrize("extra", [-200, -150, -2, 0, 2, 4, 14, 40])
def test_a_file_cut_after_a_records_warc_headers_counts_the_record_and_names_the_file_truncated(extra):
    for data, name in zip(_cut_after_headers(extra), ("cut.warc", "cut.warc.gz")):
        outcomes, warc = _outcomes(data, name)
        # (before: [("http://t/good-0", None)], problem None: the cut record lost, the file not named; cut in its
        # HTTP headers, the record was not_html, truncated only once plexity clean had copied it)
        assert outcomes == [("http://t/good-0", None), ("http://t/cut", "truncated")], name
        assert warc.problem == "truncated" and warc.problem_detail == "truncated after record 1", name


def test_plexity_clean_and_plexity_run_count_the_record_cut_after_its_headers(tmp_path):
    (tmp_path / "in").mkdir()
    plain, gzipped = _cut_after_headers(4)
    (tmp_path / "in" / "cut.warc").write_bytes(plain)
    (tmp_path / "in" / "cut.warc.gz").write_bytes(gzipped)
    (tmp_path / "in" / "cut-http.warc").write_bytes(_cut_after_headers(40)[0])
    result = run_plexity("clean", "-o", str(tmp_path / "clean"), str(tmp_path / "in"), timeout=120)
    assert result.returncode == 0, result.stderr
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["records"] == 6 and stats["documents"] == 3  # (before: 4 records, 3 documents)
    assert stats["skip_reasons"] == {"truncated": 3}
    assert stats["damaged_files"] == {"truncated": 3}  # (before: 1)

    from plexity_plugins.datatrove import WarcHtmlReader

    reader = WarcHtmlReader(str(tmp_path / "in"))
    documents = list(reader.run())
    assert [d.metadata["url"] for d in documents] == ["http://t/good-0"] * 3
    assert reader.stats["records"].total == 6  # (before: 4)
    # (before: none truncated, one not_html, one corrupt file)
    assert reader.stats["skipped_truncated"].total == 3 and reader.stats["corrupt_files_truncated"].total == 3


# -- a response record without a WARC-Target-URI or a Content-Type ---------------------------------------------------

def test_a_response_record_without_a_target_uri_or_content_type_is_a_counted_record():
    anonymous = _good(1).replace(b"WARC-Target-URI: http://t/good-1\r\n", b"")
    anonymous = anonymous.replace(b"Content-Type: application/http; msgtype=response\r\n", b"")
    assert b"Target-URI: http://t/good-1" not in anonymous and b"msgtype" not in anonymous
    for data, name in ((_good(0) + anonymous + _good(2), "anonymous.warc"),
                       (b"".join(map(gzip.compress, (_good(0), anonymous, _good(2)))), "anonymous.warc.gz")):
        outcomes, warc = _outcomes(data, name)
        # (before: the middle record missing, the file corrupt, "AttributeError: 'NoneType' object ...")
        assert outcomes == [("http://t/good-0", None), ("", "not_html"), ("http://t/good-2", None)], name
        assert warc.problem is None and warc.bytes_skipped == 0, name


# -- end tags that make elements -------------------------------------------------------------------------------------

def test_the_end_tags_counted_are_those_that_make_an_element():
    assert read_markup("<p>a</p>" * 3)[1] == 3  # (a </p> that closes a <p> makes nothing)
    assert read_markup("</p>" * 3)[1] == 3  # (before: 0)
    assert read_markup("<p></p></p><P>x</P></p>")[1] == 4
    assert read_markup("</br></BR ></bR/>")[1] == 3
    assert read_markup("</pp></b></div></brr>")[1] == 0
    assert read_markup("</p>" * 10, -1, 3)[1] == 4  # (past the bound the pass stops, as for start tags)


def test_the_compiled_pass_counts_end_tags_as_python_does():
    pieces = ["<p>", "<P ", "</p>", "</P ", "</p", "</br>", "</BR/>", "</b>", "<br>", "<div>", "</div>", "x", " ", ">",
              "<!--", "-->", "<script>", "</script>", "'", '"', "a=", "\u00e9"]
    rng = random.Random(32)
    for _ in range(3000):
        page = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        for attributes, tags, total in ((-1, -1, -1), (1, 3, -1), (-1, 2, 1)):
            assert read_markup(page, attributes, tags, total) == read_markup_python(page, attributes, tags, total), (
                page, attributes, tags, total)


ARTICLE_PAGE = page(ARTICLE)


@pytest.mark.parametrize("name", ["dense", "fast"])
@pytest.mark.parametrize("flood", ["</p>", "</br>"])
def test_a_page_of_a_million_stray_end_tags_is_refused_at_once_naming_the_bound(name, flood):
    extractor = TimeLimitedExtractor(name, timeout=10)
    try:
        extractor(ARTICLE_PAGE)  # (the child started and the extractor imported, outside the time measured)
        started = time.perf_counter()
        # (before: dense 21 s and 646 MB for the </p>s, here past the 10 s limit; fast 6.9 s and 350 MB)
        with pytest.raises(ExtractionError, match=f"the page has more than 200,000 tags, past what {name} reads"):
            extractor("<html><body>" + ARTICLE + flood * 1_000_000 + "</body></html>")
        seconds = time.perf_counter() - started
    finally:
        extractor.close()
    assert seconds < 2, f"{seconds:.1f} s"


# -- trafilatura's justext fallback ----------------------------------------------------------------------------------

class _Paragraph:  # (what justext's revision reads and writes of a paragraph)
    def __init__(self, cf_class: str, heading: bool, text: str):
        self.cf_class, self.heading, self.text, self.class_type = cf_class, heading, text, ""


def test_the_linear_revision_gives_justexts_classes():
    from justext.core import revise_paragraph_classification

    from plexity_plugins.extractors.trafilatura import _revise_paragraph_classification

    rng = random.Random(32)
    for _ in range(5000):
        spec = [(rng.choice(["short", "short", "neargood", "good", "bad"]), rng.random() < 0.3,
                 "x" * rng.choice([0, 1, 50, 150, 250])) for _ in range(rng.randint(0, 30))]
        theirs, ours = [_Paragraph(*p) for p in spec], [_Paragraph(*p) for p in spec]
        revise_paragraph_classification(theirs)
        _revise_paragraph_classification(ours)
        assert [p.class_type for p in ours] == [p.class_type for p in theirs], spec


def test_the_revision_of_a_run_of_short_paragraphs_is_linear():
    from plexity_plugins.extractors.trafilatura import _revise_paragraph_classification

    def work(n: int) -> int:
        return executed_lines(_revise_paragraph_classification, [_Paragraph("short", False, "x") for _ in range(n)])

    assert work(4000) < 2.2 * work(2000)  # (justext's: 4 times)


def test_trafilatura_reads_a_page_of_many_short_paragraphs_in_time():
    page = ("<html><body>" + "".join(f"<b id={i}>" for i in range(1000)) + "<p>x</p>" * 6000 + "<p>" + ARTICLE
            + "</p></body></html>")
    extractor = TimeLimitedExtractor("trafilatura", timeout=5)
    try:
        extractor(ARTICLE_PAGE)  # (the child started and trafilatura imported, outside the limit)
        # (before: ~9 s here, 6,000 short paragraphs walked 6,000 times each in justext; 10,000: past 30 s)
        assert ARTICLE in extractor(page)
    finally:
        extractor.close()


# -- chunked bodies with bare LFs, or cut short ----------------------------------------------------------------------

def _chunked(body: bytes, size: int = 50, eol: bytes = b"\r\n", last: bytes = b"0\r\n\r\n") -> bytes:
    return b"".join(b"%x%s%s%s" % (len(body[i:i + size]), eol, body[i:i + size], eol)
                    for i in range(0, len(body), size)) + last


CHUNKED_PAGE = page(ARTICLE).encode()


@pytest.mark.parametrize("data", [
    _chunked(CHUNKED_PAGE, eol=b"\n", last=b"0\n\n"),  # bare LFs
    _chunked(CHUNKED_PAGE, last=b""),  # no last chunk: cut after a whole one
    _chunked(CHUNKED_PAGE, last=b"1"), _chunked(CHUNKED_PAGE, last=b"1f;ext"),  # cut in a size line
    _chunked(CHUNKED_PAGE, last=b"\r"),
], ids=["bare-lf", "no-last-chunk", "cut-in-size", "cut-in-extension", "cut-in-crlf"])
def test_a_chunked_body_with_bare_lfs_or_cut_short_gives_its_bytes_not_its_chunk_sizes(data):
    assert dechunk(data) == CHUNKED_PAGE  # (before: the data as stored, chunk sizes and all)


def test_plexity_run_and_plexity_clean_read_such_a_body_without_its_chunk_sizes(tmp_path):
    (tmp_path / "in").mkdir()
    records = [record_bytes(f"http://t/{name}", data, headers=[("Transfer-Encoding", "chunked")]) for name, data in
               (("lf", _chunked(CHUNKED_PAGE, eol=b"\n", last=b"0\n\n")), ("cut", _chunked(CHUNKED_PAGE, last=b"")))]
    (tmp_path / "in" / "chunked.warc.gz").write_bytes(b"".join(map(gzip.compress, records)))

    from plexity_plugins.datatrove import WarcHtmlReader

    documents = list(WarcHtmlReader(str(tmp_path / "in")).run())
    assert [d.text.encode() for d in documents] == [CHUNKED_PAGE] * 2  # (before: "32\n<html>...", "32\r\n<html>...")
    result = run_plexity("clean", "-o", str(tmp_path / "clean"), "--extractor", "tags", str(tmp_path / "in"),
                         timeout=120)
    assert result.returncode == 0, result.stderr
    from warcio.archiveiterator import ArchiveIterator

    with open(tmp_path / "clean" / "chunked.warc.gz", "rb") as f:
        texts = [r.content_stream().read().decode() for r in ArchiveIterator(f) if r.rec_type == "response"]
    assert len(texts) == 2 and all(ARTICLE in t and "32" not in t for t in texts), texts


# -- a document file of many gzip members ----------------------------------------------------------------------------

def test_a_document_file_of_more_gzip_members_than_a_body_may_hold_is_unreadable_at_once(tmp_path):
    page_bytes = page(ARTICLE).encode()
    flood = tmp_path / "in" / "flood.html.gz"
    flood.parent.mkdir()
    flood.write_bytes(gzip.compress(b"") * 200_000 + gzip.compress(page_bytes))  # (4 MB)
    with pytest.raises(Undecodable, match="more than 1,000 gzip members"):  # (before: read, 0.9 s)
        read_document(flood)
    members = tmp_path / "in" / "members.html.gz"  # (as many as a body may hold: read)
    step = -(-len(page_bytes) // MAX_GZIP_MEMBERS)
    members.write_bytes(b"".join(gzip.compress(page_bytes[i:i + step]) for i in range(0, len(page_bytes), step))
                        + gzip.compress(b"") * (MAX_GZIP_MEMBERS - -(-len(page_bytes) // step)))
    assert read_document(members) == (page_bytes, 0)
    result = run_plexity("clean", "-o", str(tmp_path / "out"), str(tmp_path / "in"), timeout=120)
    assert result.returncode == 0, result.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["files"] == 1 and stats["files_skipped"] == 1 and stats["documents"] == 1
    assert stats["skip_reasons"] == {"unreadable_file": 1}
    assert stats["skipped_file_details"] == [f"{flood}: Undecodable: more than 1,000 gzip members"]


# -- a segmented record ----------------------------------------------------------------------------------------------

def _segmented(body: bytes, headers=()) -> bytes:
    """A response whose block is cut after 200 bytes into two segments: the first a response record, the second a
    continuation record (WARC 1.1, 'Segmentation')."""
    whole = record_bytes("http://t/segmented", body, headers=list(headers))
    head, block = whole[:-4].split(b"\r\n\r\n", 1)
    first, rest = block[:len(block) - 200], block[len(block) - 200:]
    first_head = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % len(first), head)
    first_head += b"\r\nWARC-Segment-Number: 1"
    second_head = (b"WARC/1.1\r\nWARC-Type: continuation\r\nWARC-Target-URI: http://t/segmented\r\n"
                   b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n"
                   b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Segment-Number: 2\r\n"
                   b"WARC-Segment-Total-Length: %d\r\nContent-Length: %d" % (len(block), len(rest)))
    return b"".join(gzip.compress(h + b"\r\n\r\n" + b + b"\r\n\r\n")
                    for h, b in ((first_head, first), (second_head, rest)))


def test_the_first_segment_of_a_segmented_record_is_a_page_the_crawler_cut():
    body = page(ARTICLE, *(f"Item {i} of the minutes, motion {i * 7919 % 1000}." for i in range(200))).encode()
    for data, kind in ((_segmented(body), "plain"),
                       (_segmented(gzip.compress(body), [("Content-Encoding", "gzip")]), "gzip")):
        warc = WarcFile(io.BytesIO(gzip.compress(_good(0)) + data), name="segmented.warc.gz")
        items = [(item.uri, item.skip, item.cut_by_crawler, item.payload) for item in warc]
        assert [i[:3] for i in items] == [("http://t/good-0", None, None), ("http://t/segmented", None, "segmented"),
                                          ("http://t/segmented", "not_response", None)], kind
        assert ARTICLE.encode() in items[1][3] and body.startswith(items[1][3]), kind  # (before, gzip: undecodable)
        assert warc.pages_cut_by_crawler == 1 and warc.problem is None, kind  # (before: 0)


# -- a large page nested within the depth bound ----------------------------------------------------------------------

def _levels(tree) -> int:
    """How many levels deep lexbor's tree nests its elements (<html> the first)."""
    depth = 0
    while tree.document.query_selector(":root" + " > *" * depth) is not None:
        depth += 1
    return depth


@pytest.mark.parametrize("body, levels", [
    ("<div>" * 120 + ("word " * 200 + "<br>") * 10_000, 39),  # 10 MB of text: 400,000,000 / 10 MB levels
    ("<div>" * 60 + "x<b>y</b>" * 190_000, 42),  # 190,000 tags: 8,000,000 / 190,000 levels
], ids=["10-mb-of-text-120-deep", "190000-tags-60-deep"])
def test_a_large_page_is_nested_less_deep_for_resiliparse(body, levels):
    from plexity_plugins.extractors import nesting

    html = "<html><body>" + body + "<p>" + ARTICLE + "</p></body></html>"
    tree = nesting.parse_tree(html, "dense")
    assert _levels(tree) <= levels  # (before: 123 and 63 levels)
    assert nesting.depth_limit(html) == levels and nesting.depth_limit(page(ARTICLE)) == nesting.MAX_DEPTH
    assert ARTICLE in tree.body.text and tree.body.text.count("word") == html.count("word")


def test_justexts_whitespace_is_normalized_as_justext_does():
    from justext.utils import normalize_whitespace

    from plexity_plugins.extractors.trafilatura import _normalize_whitespace

    pieces = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000", "\u200b",
              "a", "\u00e9"]
    rng = random.Random(32)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert _normalize_whitespace(text) == normalize_whitespace(text), repr(text)


def test_trafilatura_makes_a_paragraphs_text_once():
    from plexity_plugins.extractors.trafilatura import html_to_text_trafilatura

    def work(words: int) -> int:
        html = "<html><body><textarea>" + "word " * words + "</textarea><p>" + ARTICLE + "</p></body></html>"
        return executed_lines(html_to_text_trafilatura, html)

    work(100)  # (trafilatura imported, and justext's paragraphs given their text)
    # (before: 21 Python lines a word, each paragraph's text made again with a call for each space; now 1)
    assert work(40_000) - work(20_000) < 5 * 20_000
