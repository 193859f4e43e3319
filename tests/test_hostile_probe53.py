"""Comments and NULs, which the parsers' trees hold and no reader writes (`extractors.markup.checked`).

**Comments.**  lexbor and libxml2 make a node of every comment, as of an element, but the bound on a page's tags
(`markup.MAX_TAGS`, `markup.MAX_TAGS_TRAFILATURA`) counted start tags only: five million ``<!---->`` (35 MB) grew
``dense`` and ``fast`` by ~660 MiB and ``tags`` by 1.5 GiB in 8.5 s of a core, five million bogus comments ``<?x>``
(20 MB) ``dense`` by 840 MiB and ``tags`` by 1.6 GiB; through ``plexity clean`` each was a memory_limit skip after
seconds at the 768 MiB ceiling.  Now `read_markup` counts a comment as the node it makes (``<!-- -->``, and the bogus
ones HTML's tokenizer reads: ``<!x>``, ``<?x>``, ``</ x>``, a doctype; ``</>`` makes none), and such a page is
refused before it is parsed, naming the bound, in 0.06 s.  (The most comments on the 2,144 development pages is 704.)

**NULs.**  lexbor holds ~17 bytes for each NUL of a page's text and ~30 for each in a ``<script>`` (its replacement
character), against ~5 for a letter: 40 MB of NULs took ``dense`` and ``fast`` to 750 MiB, 40 MB in a script past the
768 MiB ceiling (a memory_limit skip of a page whose text is fine).  HTML's tree builder leaves NULs out of a page's
text (elsewhere they are U+FFFD, in nothing a reader writes), and libxml2's readers had them taken out already: now
`checked` takes them out for every reader that hands a page to a parser, and the page of 40 MB takes ``dense`` 100 MiB.

**A declared text past the learned reader's bounds.**  Where a page's own text is short, the learned reader adds the
text its JSON-LD declares (an ``articleBody``, read as HTML); one of more than `segment.MAX_BLOCKS` blocks refuses the
page (not read without it), but the error said "the page has more than 50,000 blocks" of a page of one paragraph, and
named ``fast`` and ``dense`` to read it, which read no JSON-LD.  Now it names the declared text.
"""

from __future__ import annotations

import json
import random

import pytest

from hostile_pages import ARTICLE
from plexity_plugins.errors import ExtractionError
from plexity_plugins.extractors import get_extractor
from plexity_plugins.extractors.markup import (MAX_TAGS, MAX_TAGS_TRAFILATURA, checked, read_markup,
                                               read_markup_python, start_tags)
from plexity_plugins.extractors.learned.segment import MAX_BLOCKS
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

COMMENTS = ["<!---->", "<!-- a comment -->", "<?x>", "<!x>", "</ x>", "</1>"]


def _page(middle: str) -> str:
    return "<html><body>" + ARTICLE + middle + "</body></html>"


def _bound(name: str) -> int:
    return MAX_TAGS_TRAFILATURA if name in ("trafilatura", "auto") else MAX_TAGS


@pytest.mark.parametrize("comment", COMMENTS)
def test_a_comment_counts_as_the_node_it_makes(comment):
    assert start_tags(_page(comment * 10)) == start_tags(_page("")) + 10
    assert read_markup_python(_page(comment * 10))[1] == start_tags(_page("")) + 10


def test_what_makes_no_node_is_not_counted():
    # ("</>" is dropped by the tokenizer; a "<" before no letter is text; a comment's and a script's insides are
    # not markup)
    assert start_tags("</></>< p>a <= b<!-- <p> --><script>'<!x>'</script>") == 2


@pytest.mark.parametrize("name", ["dense", "fast", "tags", "trafilatura", "auto"])
def test_a_page_of_more_comments_than_a_reader_reads_is_refused_naming_the_bound(name):
    # (before: read, each comment a node of the parser's tree; 5 million of them grew tags by 1.6 GiB)
    page = _page("<!---->" * _bound(name))
    extractor = TimeLimitedExtractor(name, timeout=60, memory_limit="300MiB")
    try:
        with pytest.raises(ExtractionError, match=f"the page has more than {_bound(name):,} tags, past what "):
            extractor(page)
        assert "The council approved the budget" in extractor(_page("<?x>" * 1000))
    finally:
        extractor.close()


@pytest.mark.parametrize("name", ["dense", "tags", "trafilatura"])
def test_a_page_of_as_many_tags_and_comments_as_the_bound_is_read(name):
    comments = _bound(name) - start_tags(_page(""))
    page = _page("<!-- c -->" * comments)
    assert start_tags(page) == _bound(name)
    extractor = TimeLimitedExtractor(name, timeout=60)
    try:
        assert "The council approved the budget" in extractor(page)
    finally:
        extractor.close()


@pytest.mark.parametrize("name", ["trafilatura", "auto"])
def test_trafilaturas_refusal_names_dense_and_fast_only_where_they_read_the_page(name):
    # (before: a page of a million comments, past every reader's bound, was refused by trafilatura and auto
    # pointing at dense and fast, which refuse it too)
    between, past = _page("<!---->" * (MAX_TAGS_TRAFILATURA + 1)), _page("<!---->" * 1_000_000)
    with pytest.raises(ExtractionError, match=r"past what trafilatura reads; another extractor \(dense, fast\) reads"):
        get_extractor(name)(between)
    assert "The council approved the budget" in get_extractor("dense")(between)
    with pytest.raises(ExtractionError) as refused:
        get_extractor(name)(past)
    assert str(refused.value) == f"the page has more than {MAX_TAGS_TRAFILATURA:,} tags, past what trafilatura reads"
    with pytest.raises(ExtractionError, match=f"the page has more than {MAX_TAGS:,} tags, past what dense reads"):
        get_extractor("dense")(past)


@pytest.mark.parametrize("name", ["dense", "trafilatura"])
def test_the_python_reference_refuses_a_page_of_a_million_comments_naming_the_bound_too(name, monkeypatch):
    # (the path where the extension is not built: before, each comment's end was looked for as "-->" and as
    # "--!>", the search for the one it lacks going to the page's end at every comment; 40,000 "<!---->" took
    # the walk 6 s of a core, these pages were cut by the time limit, unnamed)
    monkeypatch.setenv("PLEXITY_PURE_PYTHON", "1")
    extractor = TimeLimitedExtractor(name, timeout=60)
    try:
        for comment in ("<!---->", "<!----!>"):
            with pytest.raises(ExtractionError, match=f"the page has more than {_bound(name):,} tags, past what "):
                extractor(_page(comment * 1_000_000))
    finally:
        extractor.close()


def test_the_learned_reader_still_reads_a_page_of_millions_of_comments():
    # (it reads the markup itself, and keeps no node of a comment)
    assert "The council approved the budget" in get_extractor("learned")(_page("<?x>" * 1_000_000))


def test_the_compiled_pass_counts_comments_as_python_does():
    pieces = ["<p>", "</p>", "</br>", "<!--", "-->", "--!>", "<!-->", "<!x>", "<!", "<?", "<?x>", "</", "</>", "</ ",
              "</1", "<", ">", " ", "a", "<script>", "</script>", "<!DOCTYPE html>", "<![CDATA[", "]]>", "\u00e9",
              "\U0001f600"]
    rng = random.Random(53)
    for _ in range(5000):
        page = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        for attributes, tags, total in ((-1, -1, -1), (-1, 0, -1), (-1, 1, -1), (-1, 3, -1), (1, 2, 3)):
            assert read_markup(page, attributes, tags, total) == read_markup_python(page, attributes, tags, total), (
                page, tags)


def test_the_parsers_are_given_a_page_without_its_nuls_and_an_ordinary_page_as_it_is():
    page = _page("<p title='a\x00b'>c\x00d</p><script>\x00</script>")
    assert "\x00" not in checked(page, "dense")
    assert checked(page, "dense") == page.replace("\x00", "")
    ordinary = _page("")
    assert checked(ordinary, "dense") is ordinary


@pytest.mark.parametrize("name", ["dense", "fast", "auto"])
def test_a_page_of_millions_of_nuls_is_read_within_a_low_memory_ceiling(name):
    # 12 MB of NULs in a script, 4 MB in the text: (before: lexbor's tree of it needed ~450 MiB, past the ceiling)
    page = "<html><body><script>" + "\x00" * 12_000_000 + "</script>" + "\x00" * 4_000_000 + ARTICLE + "</body></html>"
    extractor = TimeLimitedExtractor(name, timeout=60, memory_limit="250MiB")
    try:
        assert "The council approved the budget" in extractor(page.encode())
    finally:
        extractor.close()


def _declaring(*bodies: str) -> str:
    scripts = "".join('<script type="application/ld+json">' + json.dumps({"@type": "Article", "articleBody": body})
                      + "</script>" for body in bodies)
    return ("<html><head>" + scripts + "</head><body><p>The library opens at nine on weekdays and at ten on Sundays, "
            "the council said.</p></body></html>")


def test_a_declared_text_past_the_learned_readers_bounds_is_named_in_the_error():
    too_many = "<p>word of the article</p>" * (MAX_BLOCKS + 1)
    readable = "<p>" + "The council approved the budget for the new library on Tuesday evening. " * 10 + "</p>"
    learned = get_extractor("learned")
    # (before: "the page has more than 50,000 blocks ...; another extractor (fast, dense) reads it")
    for page in (_declaring(too_many), _declaring(readable, too_many)):
        with pytest.raises(ExtractionError, match=r"^the text the page declares \(a JSON-LD articleBody or text\) has "
                                                  r"more than 50,000 blocks or 200,000 elements, past what the learned "
                                                  r"reader reads$"):
            learned(page)
    assert learned(_declaring(readable)).splitlines()[1].startswith("The council approved the budget")
