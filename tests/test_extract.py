"""HTML to text: the extractors every front end shares, on trafilatura 1.8-1.11 and 2.x alike."""

from __future__ import annotations

import logging
import time
import unicodedata

import pytest

from plexity_plugins import extractors as extract
from plexity_plugins.extractors import trafilatura as trafilatura_extractor
from helpers import PAST_DEPTH_LIMIT, iter_warc_html
from conftest import EXAMPLES

SAMPLE = EXAMPLES / "sample.warc.gz"

ARTICLE = ("<html><body><nav><a href='/'>Home</a> | <a href='/news'>News</a></nav><article><h1>Library</h1>"
           + "".join(f"<p>The council approved the budget for the new library on day {i}. The building will "
                     f"open in the spring, the mayor said, and it will have a reading room.</p>" for i in range(6))
           + "</article><footer>© 2024 Example</footer></body></html>")


def test_trafilatura_extracts_the_article_paragraphs():
    text = extract.html_to_text_trafilatura(ARTICLE)
    assert text.count("The council approved the budget") == 6
    assert "Home | News" not in text


def test_trafilatura_extracts_every_sample_page():
    pages = list(iter_warc_html(SAMPLE))
    assert len(pages) == 12
    for uri, body, content_type in pages:
        text = extract.html_to_text_trafilatura(extract.decode_html(body, content_type)[0])
        assert len(text) > 200, uri


@pytest.mark.parametrize("page", ["", "   ", "<html></html>", "<!-- nothing -->", "<html><body></body></html>",
                                  "\x00\x00", "<?xml version='1.0'?><html/>"])
def test_an_empty_document_gives_no_text_and_no_error_message(page, caplog):
    caplog.set_level(logging.DEBUG)
    assert extract.html_to_text_trafilatura(page) == ""
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not errors, [f"{r.name}: {r.getMessage()}" for r in errors]


@pytest.mark.parametrize("page", ["<!-- only a comment -->", "<!DOCTYPE html>", "<?xml version='1.0'?>",
                                  "<?php echo 1; ?>"])
@pytest.mark.parametrize("name", [n for n in extract.EXTRACTORS if n != "none"])
def test_markup_without_an_element_is_a_page_without_text_for_every_extractor(name, page):
    # libxml2 calls such a document empty; the tags extractor used to raise "unparsable HTML:
    # Document is empty" for it (extraction_failed in plexity clean, a 400 from plexity serve,
    # whose default it is) where every other extractor found no text (no_text_extracted)
    assert extract.get_extractor(name)(page) == ""


def test_trafilaturas_empty_document_errors_become_our_counted_debug_messages(caplog):
    extract.html_to_text_trafilatura(ARTICLE)  # (installs the filter)
    before = trafilatura_extractor.TRAFILATURA_EMPTY_DOCUMENTS
    caplog.set_level(logging.DEBUG)
    logging.getLogger("trafilatura.utils").error("lxml parsing failed: %s", "Document is empty")
    logging.getLogger("trafilatura.core").error("empty HTML tree: %s", None)
    logging.getLogger("trafilatura.core").error("something else went wrong")  # not ours to hide
    assert trafilatura_extractor.TRAFILATURA_EMPTY_DOCUMENTS == before + 2
    shown = [(r.name, r.levelname) for r in caplog.records]
    assert ("trafilatura.core", "ERROR") in shown
    assert ("trafilatura.utils", "ERROR") not in shown
    assert sum(1 for r in caplog.records if r.name == "plexity_plugins.extractors.trafilatura" and r.levelno == logging.DEBUG) == 2


def test_the_tags_extractor_keeps_every_visible_block_on_its_own_line():
    text = extract.html_to_text_tags(ARTICLE)
    lines = text.split("\n")
    assert lines[0] == "Home | News"
    assert lines[-1] == "© 2024 Example"
    assert sum(line.startswith("The council approved") for line in lines) == 6


def test_an_unknown_extractor_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="learned, dense, auto, trafilatura, fast, tags, none"):
        extract.get_extractor("readability")


def _nested(depth: int) -> str:
    return "<html><body>" + "<div>" * depth + ARTICLE[ARTICLE.index("<article>"):ARTICLE.index("<footer>")] \
        + "</div>" * depth + "</body></html>"


@pytest.mark.parametrize("name", ["tags", "trafilatura", "auto"])
def test_an_article_nested_300_deep_is_extracted_past_libxml2s_default_limit_of_256(name):
    # (with libxml2's default limits the whole document comes out empty)
    text = extract.get_extractor(name)(_nested(300))
    assert text.count("The council approved the budget") == 6


@pytest.mark.parametrize("name", ["tags", "trafilatura", "auto"])
def test_nesting_beyond_even_the_huge_limit_is_refused_with_the_limit_named(name):
    with pytest.raises(extract.ExtractionError, match=PAST_DEPTH_LIMIT):
        extract.get_extractor(name)(_nested(5000))


def _after_nesting(depth: int) -> str:
    """A paragraph, then one nested `depth` deep, then one after them: libxml2 reads no further than its limit."""
    return ("<html><body><p>The reading room opens at nine on weekdays.</p>" + "<div>" * depth
            + "<p>The council approved the budget for the new library.</p>" + "</div>" * depth
            + "<p>The mayor said it will open in the spring.</p></body></html>")


@pytest.mark.parametrize("name", ["trafilatura", "auto"])
def test_a_page_past_libxml2s_default_limit_is_read_whole_not_as_its_first_part(name):
    # (before: trafilatura's own parse stopped at 256 levels, and the page's first paragraph passed for its text)
    text = extract.get_extractor(name)(_after_nesting(300))
    assert "The council approved the budget" in text and "open in the spring" in text


@pytest.mark.parametrize("name", ["tags", "trafilatura", "auto"])
def test_a_page_past_even_the_huge_limit_is_refused_not_read_as_its_first_part(name):
    # (before: the first paragraph, the rest of the page silently lost)
    with pytest.raises(extract.ExtractionError, match=PAST_DEPTH_LIMIT):
        extract.get_extractor(name)(_after_nesting(3000))


@pytest.mark.parametrize("name", ["tags", "trafilatura", "auto"])
def test_a_page_past_the_huge_limit_is_refused_in_milliseconds(name):
    # 1,000 nested tables (3,000 levels to libxml2): trafilatura's passes over the tree libxml2 read, 2,047 levels
    # deep, took 5 to 7 s of a core (25 s on a loaded machine) before the error
    page = "<html><body>" + "<table><tr><td>" * 1_000 + "text" + "</td></tr></table>" * 1_000 + "</body></html>"
    extractor = extract.get_extractor(name)
    extractor(ARTICLE)  # (imported and warmed up, outside the time measured)
    started = time.process_time()
    with pytest.raises(extract.ExtractionError, match=PAST_DEPTH_LIMIT):
        extractor(page)
    assert time.process_time() - started < 0.5


def test_a_script_over_libxml2s_10_mb_text_limit_does_not_empty_the_page():
    page = ARTICLE.replace("</article>", "</article><script>" + "x" * 11_000_000 + "</script>")
    assert extract.html_to_text_tags(page).count("The council approved the budget") == 6


def test_a_short_page_does_not_cost_trafilatura_a_hash_of_every_language_s_stopwords():
    # A page shorter than trafilatura's minimum goes to its justext fallback, which looked up
    # the stopwords of all languages (a tuple of 154,484 words) in an lru_cache: the whole
    # tuple was hashed again for every page, 7.5 ms of a 9 ms extraction.
    from justext.core import define_stoplist
    from trafilatura import external

    page = "<html><body><p>The library will open in the spring. Work starts next month.</p></body></html>"
    assert extract.html_to_text_trafilatura(page) == ("The library will open in the spring. "
                                                      "Work starts next month.")
    stoplist = external.JT_STOPLIST
    assert isinstance(stoplist, frozenset) and len(stoplist) > 100_000  # the same words, hash kept
    define_stoplist(stoplist)
    hits, misses = define_stoplist.cache_info().hits, define_stoplist.cache_info().misses
    for _ in range(100):
        define_stoplist(stoplist)
    # each later page finds its stopwords in justext's cache: no new set built (its hash is kept)
    assert define_stoplist.cache_info().hits == hits + 100 and define_stoplist.cache_info().misses == misses


KUSHTIA_WHOLE = "\u0995\u09c1\u09b7\u09cd\u099f\u09bf\u09df\u09be"  # কুষ্টিয়া, its য় one code point (U+09DF)


@pytest.mark.parametrize("name", [n for n in extract.EXTRACTORS if n != "none"])
def test_every_extractor_gives_text_in_composed_form_however_the_page_spells_it(name):
    # U+09DF is not Unicode's composed form of য় (that is য + ়, U+09AF U+09BC), and é spelled
    # e + a combining accent is not é's: benchmarks' reference texts and trafilatura's output
    # are in the composed form (NFC), so the same words must match whichever way a page spells them.
    sentences = (f"<p>{KUSHTIA_WHOLE} district council met on Saturday morning to discuss the new school budget.</p>"
                 "<p>Le comite\u0301 a vote\u0301 le budget de la ville apre\u0300s un long de\u0301bat sur les "
                 "e\u0301coles et les routes.</p>")
    html = f"<html><head><title>t</title></head><body><article>{sentences * 3}</article></body></html>"
    text = extract.get_extractor(name)(html)
    assert "comité a voté" in text and unicodedata.normalize("NFC", KUSHTIA_WHOLE) in text
    assert KUSHTIA_WHOLE not in text and unicodedata.is_normalized("NFC", text)
