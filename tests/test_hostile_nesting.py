"""Pages nested deeper than the readers on lexbor's tree (``dense``, ``fast``) should pay for.

resiliparse's main-content pass costs the page's size times its depth: 20,000 nested ``<div>``s took
``dense`` 16 s, 100,000 the 30 s time limit.  Now what lexbor would nest deeper than
`nesting.MAX_DEPTH` (128) levels is flattened before it is read (its text kept), and a page whose
nesting the markup pass cannot follow and flattening cannot bound is a named skip, in milliseconds.
"""

from __future__ import annotations

import time

import pytest
from resiliparse.parse.html import HTMLTree

from hostile_pages import ARTICLE
from plexity_plugins.errors import ExtractionError
from plexity_plugins.extractors import html_to_text_dense, html_to_text_fast
from plexity_plugins.extractors import nesting

READERS = [html_to_text_dense, html_to_text_fast]


def _timed(read, html):
    # CPU time: a loaded machine gave a 0.45 s read 2.0 s of wall time
    started = time.process_time()
    text = read(html)
    return text, time.process_time() - started


@pytest.mark.parametrize("read", READERS, ids=["dense", "fast"])
@pytest.mark.parametrize("page", [
    "<div>" * 30_000 + ARTICLE + "</div>" * 30_000,  # (before: dense ~40 s, over the time limit)
    "<div>" * 30_000 + ARTICLE,  # never closed
    "<div><select></div></select>" * 20_000 + ARTICLE,  # end tags the parser ignores in a <select> (27 s)
    "<table><tr><td>" * 5_000 + ARTICLE,
    # formatting elements the parser opens again in every paragraph: 1,000 levels, 50 times
    "<p>" + "".join(f"<b id={i}>" for i in range(1_000)) + "</p>" + "<p>A line of the page.</p>" * 50 + ARTICLE,
], ids=["divs", "unclosed-divs", "selects", "tables", "formatting"])
def test_a_page_nested_thousands_deep_is_read_in_a_fraction_of_a_second(read, page):
    text, seconds = _timed(read, "<html><body>" + page + "</body></html>")
    assert "The council approved the budget" in text
    assert seconds < 1.5, f"{seconds:.1f} s"


@pytest.mark.parametrize("read", READERS, ids=["dense", "fast"])
@pytest.mark.parametrize("page", [
    # outside <svg> and <math> a CDATA section is a bogus comment, which the walk now reads past (before: it said
    # it could not tell, and lexbor parsed the page unflattened first: 7.8 s, the end tags it cannot match)
    "<![CDATA[ x ]]>" + "<span>" * 30_000 + "</x>" * 30_000 + ARTICLE,
    "<![CDATA[ x ]]>" + "<div><select></div></select>" * 30_000 + ARTICLE,  # (5.7 s)
    # in <svg> the parser reads a <style>'s text as markup, and each <div> leaves the <svg>: 30,000 levels, which
    # the walk read as the style's text, 4 levels (dense 58 s, fast 47 s); now it cannot tell, and flattens
    "<svg><style>" + "<div>" * 30_000 + ARTICLE,
    # and in <svg> a CDATA section ends at "]]>": the page is flattened before its first parse (6.4 s)
    "<svg><![CDATA[ x ]]>" + "<span>" * 30_000 + "</x>" * 30_000 + ARTICLE,
], ids=["cdata-spans", "cdata-selects", "svg-style-divs", "svg-cdata-spans"])
def test_a_page_the_walk_reads_past_or_cannot_follow_is_flattened_before_lexbor_parses_it(read, page):
    text, seconds = _timed(read, "<html><body>" + page + "</body></html>")
    assert "The council approved the budget" in text
    assert seconds < 1.5, f"{seconds:.1f} s"


def test_cdata_and_raw_text_in_svg_are_what_the_walk_cannot_tell():
    deep = "<div>" * 200
    assert nesting.markup_depth("<![CDATA[ <div> ]]>" + deep) == 202  # (a bogus comment, to the next ">")
    assert nesting.markup_depth("<svg></svg><![CDATA[ x ]]>" + deep) == 202
    assert nesting.markup_depth("<svg><![CDATA[ x ]]></svg>" + deep) == -1
    for raw in ("title", "style", "script", "textarea"):
        assert nesting.markup_depth(f"<svg><{raw}>a<b>c</{raw}></svg>" + deep) == -1  # (a tag, or text?)
        assert nesting.markup_depth(f"<svg><{raw}>a, b</{raw}></svg>" + deep) == 202  # (text, read either way)
        assert nesting.markup_depth(f"<{raw}>a<b>c</{raw}>" + deep) == 202


def test_what_lies_past_the_limit_keeps_its_text_and_its_lines():
    lines = [f"Line {k} of the text, which is deep." for k in range(400)]
    html = "<html><body>" + "".join(f"<div>{line}" for line in lines) + "</div>" * 400 + "</body></html>"
    assert html_to_text_fast(html).split("\n") == lines
    tree = nesting.parse_tree(html, "dense")
    assert tree.document.query_selector(nesting._TOO_DEEP) is None  # (lexbor itself nests it 402 deep)


def test_a_page_within_the_limit_is_parsed_as_it_is():
    html = "<html><body>" + "<div class=c>" * 120 + ARTICLE + "<br>" + "</div>" * 120 + "</body></html>"
    assert nesting.markup_depth(html) == 123  # (<html>, <body>, the 120 <div>s and the <p>)
    assert nesting.parse_tree(html, "dense").body.html == HTMLTree.parse(html).body.html


def test_a_script_the_markup_pass_cannot_follow_is_a_named_skip_in_milliseconds():
    # a script's "<!--<script>" makes the parser read the "</script>" and the "</div>" after it as text:
    # each <div> stays open, 10,000 deep (before: dense 5 s at 5,000), which no reading of the markup
    # can flatten without the parser's own states
    html = "<html><body>" + "<div><script><!--<script></script></div></script>-->" * 10_000 + ARTICLE
    assert nesting.markup_depth(html, nesting.MAX_DEPTH - 1) == -1  # (it says it cannot tell)
    for read in READERS:
        started = time.process_time()
        with pytest.raises(ExtractionError, match="HTML nesting limit: .* deeper than 128 levels"):
            read(html)
        assert time.process_time() - started < 0.5
