"""The ``auto`` extractor, the default of every front end: trafilatura's text, or fast's where
trafilatura left out part of the page (`plexity_plugins.extractors.prefer_fuller`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import PAST_DEPTH_LIMIT
from hostile_pages import pages as hostile_pages
from article_page import ARTICLE, PAGE  # the same article page
from plexity_plugins.datatrove import AutoExtractor
from plexity_plugins.extractors import (DEFAULT_EXTRACTOR, EXTRACTORS, FALLBACK_RATIO, NEW_TEXT_FRACTION, ExtractionError,
                                     declares_article_or_product, decode_html, get_extractor, html_to_text_auto,
                                     html_to_text_fast, html_to_text_trafilatura, prefer_fuller)

REPO = Path(__file__).resolve().parent.parent
PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]


def test_auto_stays_selectable_and_trims_like_the_other_main_content_extractors():
    from plexity_plugins.scoring.methods import method_for_extractor

    assert DEFAULT_EXTRACTOR == "learned" and "auto" in EXTRACTORS and get_extractor("auto") is html_to_text_auto
    assert method_for_extractor("auto") == "trim"


def test_trafilatura_s_text_is_kept_unless_fast_finds_more_than_a_quarter_again_of_new_text():
    main = "\n".join(["one two three four five six seven eight", "the rest of the article here now"])  # 14 words
    assert NEW_TEXT_FRACTION == 0.25
    three_new = main + "\nthree new words"  # 3 new words: not over a quarter of 14
    four_new = main + "\nfour new words here"  # 4: over 3.5
    assert prefer_fuller(main, three_new) == main
    assert prefer_fuller(main, four_new) == four_new
    # lines are compared with their whitespace collapsed: re-spaced lines are not new text
    assert prefer_fuller(main, main.replace(" ", "   ") + "\nthree new words") == main
    # fast's text shorter than trafilatura's: trafilatura's, whatever fast has that it lacks
    assert prefer_fuller(main, "a different text of nine words in one line") == main
    assert prefer_fuller("", "anything at all") == "anything at all"  # trafilatura found nothing
    assert prefer_fuller("", "") == ""


def test_on_a_page_declaring_one_product_or_article_fast_s_text_must_also_have_over_five_times_the_words():
    main = "A cotton shirt in blue and white stripes, machine washable."  # 10 words
    shop = main + "\nCustomers also bought\n" + "\n".join(f"Other shirt number {i} at a price" for i in range(5))
    assert FALLBACK_RATIO == 5 and 10 < len(shop.split()) <= 50
    assert prefer_fuller(main, shop) == shop
    assert prefer_fuller(main, shop, lambda: True) == main
    assert prefer_fuller(main, shop, lambda: False) == shop
    much = shop + "\n" + "\n".join(f"A review of the shirt, number {i}" for i in range(3))
    assert len(much.split()) > 50 and prefer_fuller(main, much, lambda: True) == much

    def not_asked():
        raise AssertionError("asked although fast's text is not taken")
    assert prefer_fuller(main, main + "\ntwo more", not_asked) == main


@pytest.mark.parametrize("declaration", [
    '<meta property="og:type" content="product">',
    "<meta content='product.item' property='og:type' />",
    '<meta property="og:type" content="article" />',
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", "name": "Shirt"}</script>',
    '<script type="application/ld+json">{"@type":["NewsArticle","Thing"]}</script>',
    '<script type="application/ld+json">{"@type": "BlogPosting"}</script>',
    '<div itemscope itemtype="http://schema.org/Product">',
    '<article itemscope itemtype="https://schema.org/Article">',
])
def test_a_page_declares_one_article_or_product_in_schema_org_json_ld_microdata_or_open_graph(declaration):
    assert declares_article_or_product(f"<html><head>{declaration}</head><body><p>x</p></body></html>")


@pytest.mark.parametrize("declaration", [
    "<meta content='website' property='og:type'>",
    '<script type="application/ld+json">{"@type": "ItemList", "itemListElement": []}</script>',
    '<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>',
    '<div itemscope itemtype="https://schema.org/ProductModel">',
    "<p>Our product range: @type is not JSON here</p>",
])
def test_other_declarations_are_not_one_article_or_product(declaration):
    assert not declares_article_or_product(f"<html><head>{declaration}</head><body><p>Product</p></body></html>")


_STORY = "<p>The council approved the budget for the new library on Tuesday evening after a long debate about its cost and its location near the river.</p>"
_REPLY = ("<div class='comment'><p>Reply number {}: I went to the meeting and I think the library will be good "
          "for the children of the town, who have nowhere to read now.</p></div>")


def _story_with_comments(head: str) -> str:
    comments = "".join(_REPLY.format(i) for i in range(6))
    return (f"<html><head><title>Library</title>{head}</head><body><div><h1>New library</h1>{_STORY * 4}</div>"
            f"<div id='comments'>{comments}</div></body></html>")


def test_auto_reads_the_page_s_own_declaration_before_taking_fast_s_comments():
    # trafilatura leaves the comment section out, resiliparse keeps it: 168 new words over 102
    plain = _story_with_comments("")
    trafilatura, fast = html_to_text_trafilatura(plain), html_to_text_fast(plain)
    assert "Reply number" not in trafilatura and "Reply number 5" in fast
    assert len(trafilatura.split()) < len(fast.split()) <= FALLBACK_RATIO * len(trafilatura.split())
    assert html_to_text_auto(plain) == fast  # nothing declared: a page of several parts
    declared = _story_with_comments('<meta property="og:type" content="article">')
    assert html_to_text_auto(declared) == html_to_text_trafilatura(declared)  # one article: its comments stay out


def test_on_an_article_auto_is_trafilatura():
    text = html_to_text_auto(PAGE)
    assert text == html_to_text_trafilatura(PAGE) and all(line in text for line in ARTICLE)
    assert html_to_text_auto(PAGE.encode("utf-8")) == text


def test_where_trafilatura_finds_nothing_auto_takes_fast_s_text():
    # The page's only text in what trafilatura takes for a comment section (comments are left out): it keeps nothing
    html = f'<html><body><div class="comments"><p>{ARTICLE[0]}</p></div></body></html>'
    assert html_to_text_trafilatura(html) == ""
    fast = html_to_text_fast(html)
    assert ARTICLE[0] in fast and html_to_text_auto(html) == fast


def test_a_utf16_page_without_a_bom_is_read_however_it_is_labelled():
    name, body, content_type = next(page for page in hostile_pages() if page[0] == "utf16-no-bom")
    # served as plain text/html, no charset, its NULs make it UTF-16: trafilatura reads it, and auto takes that
    html, _ = decode_html(body, content_type)
    assert "council approved the budget" in html_to_text_trafilatura(html) == html_to_text_auto(html)
    # mislabelled UTF-8 by its header, each ASCII letter is followed by a NUL: the readers take NULs out of a page
    # (`markup.checked`), so the ASCII page reads as it was written (trafilatura kept nothing of it before)
    html, _ = decode_html(body, "text/html; charset=utf-8")
    assert "council approved the budget" in html_to_text_trafilatura(html) == html_to_text_auto(html)
    assert "council approved the budget" in html_to_text_fast(html)


def test_a_page_past_trafilatura_s_parser_limit_fails_with_its_message_without_running_fast():
    # (resiliparse's main-content heuristic takes time quadratic in the nesting depth: 20,000
    # levels took 11 s; trafilatura's error names the limit at once)
    # (20,000 levels: past libxml2's 2,048, in fewer tags than trafilatura reads; the hostile page of 100,000 levels
    # has more, and is refused for them, at once too)
    page = "<html><body>" + "<div>" * 20_000 + "<p>" + ARTICLE[0] + "</p>" + "</div>" * 20_000 + "</body></html>"
    with pytest.raises(ExtractionError, match=PAST_DEPTH_LIMIT):
        html_to_text_auto(page)
    name, body, content_type = next(page for page in hostile_pages() if page[0] == "deep-100000")
    with pytest.raises(ExtractionError, match="the page has more than 100,000 tags, past what trafilatura reads"):
        html_to_text_auto(decode_html(body, content_type)[0])


def test_the_datatrove_step_extracts_like_plexity_clean():
    assert AutoExtractor().extract(PAGE) == html_to_text_auto(PAGE)
