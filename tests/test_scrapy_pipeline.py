"""PerplexityFilterPipeline, item by item: item types, settings and every kind of bad input.

The pipeline runs on a real Crawler (its settings and stats collector) with the real
embedded model; `process_item` is a coroutine, driven here by asyncio as Scrapy's
asyncio reactor would.  Most tests use the `tags` extractor (every visible line, then
the filter finds the content, method `regions`), so that what is removed is removed by
the perplexity filter.  The end-to-end crawl is in test_scrapy_crawl.py.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import re

import attrs
import pytest
import scrapy
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.test import get_crawler

from plexity_plugins import ModelError
from plexity_plugins.errors import PlexitySettingError
from plexity_plugins.scrapy import PerplexityFilterPipeline

ARTICLE = [
    "The city council approved the budget for the new public library on Monday evening.",
    "The library will open in the spring, and it will have a large room for children and a garden for reading.",
    "Residents asked the council whether the old building on the main street would be sold.",
]
HEADER = ["Home | News | Sport | Weather | Contact", "Accept all cookies", "Share on Facebook"]
FOOTER = ["Related articles", "Advertisement"]
BOILERPLATE = HEADER + FOOTER
PAGE = ("<html><head><title>Library</title></head><body>"
        + "".join(f"<div>{line}</div>" for line in HEADER)
        + "<article>" + "".join(f"<p>{line}</p>" for line in ARTICLE) + "</article>"
        + "".join(f"<div>{line}</div>" for line in FOOTER)
        + "</body></html>")
TEXT = "\n".join(HEADER + ARTICLE + FOOTER)


def make_pipeline(**settings) -> PerplexityFilterPipeline:
    settings = {"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags", **settings}
    crawler = get_crawler(settings_dict=settings)
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    return pipeline


def run(pipeline, item):
    return asyncio.run(pipeline.process_item(item))


def stats(pipeline) -> dict:
    return {k.removeprefix("plexity/"): v for k, v in pipeline.stats.get_stats().items() if k.startswith("plexity/")}


@pytest.fixture(scope="module")
def pipeline():
    pipeline = make_pipeline()
    yield pipeline
    pipeline.close_spider()


# -- item types -------------------------------------------------------------------------

class PageItem(scrapy.Item):
    url = scrapy.Field()
    html = scrapy.Field()
    text = scrapy.Field()
    plexity = scrapy.Field()


@dataclasses.dataclass
class PageDataclass:
    url: str
    html: str
    text: str | None = None
    plexity: dict | None = None


@attrs.define
class PageAttrs:
    url: str
    html: str
    text: str | None = None
    plexity: dict | None = None


@pytest.mark.parametrize("make_item", [
    lambda: {"url": "u", "html": PAGE},
    lambda: PageItem(url="u", html=PAGE),
    lambda: PageDataclass(url="u", html=PAGE),
    lambda: PageAttrs(url="u", html=PAGE),
], ids=["dict", "scrapy.Item", "dataclass", "attrs"])
def test_every_item_type_gets_the_cleaned_text_and_its_counts(pipeline, make_item):
    from itemadapter import ItemAdapter

    item = run(pipeline, make_item())
    adapter = ItemAdapter(item)
    text = adapter["text"]
    assert all(line in text for line in ARTICLE)
    assert not any(line in text for line in BOILERPLATE)
    counts = adapter["plexity"]  # the plexity_* fields of the datatrove step's metadata
    assert counts["plexity_verdict"] == "kept" and counts["plexity_reason"] is None
    assert counts["plexity_model"] == "en-default" and counts["plexity_method"] == "regions"
    assert counts["plexity_threshold"] == pipeline.scorer.threshold
    assert counts["plexity_sentences_kept"] == 3 and counts["plexity_sentences_dropped"] == 5
    assert counts["plexity_ppl_mean"] > counts["plexity_ppl_median"] > 0  # boilerplate is the long tail
    assert counts["plexity_passthrough"] is None and counts["plexity_replaced_chars"] == 0


def test_stats_count_items_sentences_and_characters():
    pipeline = make_pipeline()
    run(pipeline, {"html": PAGE})
    run(pipeline, {"html": PAGE})
    counts = stats(pipeline)
    assert counts["items_seen"] == counts["items_cleaned"] == 2
    assert counts["sentences_dropped"] == 10 and counts["sentences_kept"] == 6
    assert counts["chars_kept"] == 2 * sum(map(len, ARTICLE))
    assert counts["model"] == "en-default" and counts["clean_seconds"] > 0


def test_sentences_and_characters_kept_are_those_of_the_items_passed_on():
    # An item dropped whole (too_short) holds sentences the filter kept, but they reach no feed: counted as
    # dropped, as Scrapy's item_scraped_count counts only what left the pipelines (they were counted as kept)
    pipeline = make_pipeline(PLEXITY_MIN_CHARS=len(ARTICLE[0]) + 1)
    kept = run(pipeline, {"html": PAGE})
    short = "<html><body><p>" + ARTICLE[0] + "</p><div>Share on Facebook</div></body></html>"
    with pytest.raises(DropItem, match="too_short"):
        run(pipeline, {"html": short})
    counts = stats(pipeline)
    assert counts["sentences_kept"] == kept["plexity"]["plexity_sentences_kept"] == 3
    assert counts["chars_kept"] == sum(map(len, ARTICLE))
    assert counts["sentences_dropped"] == kept["plexity"]["plexity_sentences_dropped"] + 2  # the short item's two
    assert counts["chars_dropped"] > len(ARTICLE[0])


def test_an_item_class_without_the_output_field_is_dropped_with_the_reason(pipeline):
    class Bare(scrapy.Item):
        html = scrapy.Field()

    with pytest.raises(DropItem, match="no_output_field: Bare has no field 'text'"):
        run(pipeline, Bare(html=PAGE))


@dataclasses.dataclass(frozen=True)
class FrozenDataclass:
    url: str
    html: str
    text: str | None = None
    plexity: dict | None = None


@attrs.frozen
class FrozenAttrs:
    url: str
    html: str
    text: str | None = None
    plexity: dict | None = None


@pytest.mark.parametrize("item_class", [FrozenDataclass, FrozenAttrs], ids=["dataclass", "attrs"])
def test_a_frozen_item_is_dropped_saying_so_before_any_work(item_class):
    # (the pipeline cannot set its text: before, FrozenInstanceError lost the item with a traceback, uncounted)
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match=f"item_not_writable: {item_class.__name__}'s field 'text' cannot be set "
                                       r"\(FrozenInstanceError: .*\): an item class the pipeline writes to "
                                       r"cannot be frozen \(http://x/\)"):
        run(pipeline, item_class(url="http://x/", html=PAGE))
    counts = stats(pipeline)
    assert counts["items_dropped"] == counts["items_dropped/item_not_writable"] == 1
    assert "sentences_kept" not in counts  # (dropped before extraction and scoring)


def test_an_item_class_without_the_stats_field_is_cleaned_with_a_warning(pipeline, caplog):
    class NoStats(scrapy.Item):
        html = scrapy.Field()
        text = scrapy.Field()

    with caplog.at_level(logging.WARNING, logger="plexity_plugins.scrapy"):
        item = run(pipeline, NoStats(html=PAGE))
    assert ARTICLE[0] in item["text"] and "plexity" not in item
    assert "NoStats has no field 'plexity'" in caplog.text


def test_an_item_loaders_lists_are_read_as_the_values_they_hold():
    # An ItemLoader without TakeFirst gives every field as a list: the page, its encoding, its language, its URL
    from scrapy.loader import ItemLoader

    loader = ItemLoader(item={})
    loader.add_value("url", "http://example.org/library")
    loader.add_value("html", CAFE_PAGE.encode("windows-1252"))
    loader.add_value("encoding", "windows-1252")
    loader.add_value("lang", "en")
    item = loader.load_item()
    assert item["html"] == [CAFE_PAGE.encode("windows-1252")] and item["lang"] == ["en"]
    cleaned = run(make_pipeline(PLEXITY_LANGUAGE_FIELD="lang"), item)
    assert all(line in cleaned["text"] for line in ARTICLE[1:]) and "Caf\u00e9 Royal" in cleaned["text"]
    assert not any(line in cleaned["text"] for line in BOILERPLATE)
    item["lang"] = ["de"]  # (the spider's word for the language is taken: not the model's, so passed through)
    assert run(make_pipeline(PLEXITY_LANGUAGE_FIELD="lang"), item)["plexity"]["plexity_passthrough"] == "language:de"
    item["html"] = ["<p>x</p>"]
    with pytest.raises(DropItem, match=r"\(http://example.org/library\)$"):  # (the URL, not "['http://...']")
        run(make_pipeline(), item)


def test_a_list_of_strings_is_cleaned_as_their_lines():
    # e.g. response.css("p::text").getall(), or an ItemLoader's add_css of several elements
    item = run(make_pipeline(PLEXITY_INPUT_FORMAT="text"), {"html": HEADER + ARTICLE + FOOTER})
    assert item["text"] == "\n".join(ARTICLE)
    item = run(make_pipeline(), {"html": [f"<p>{line}</p>" for line in HEADER + ARTICLE + FOOTER]})
    assert item["text"] == "\n".join(ARTICLE)


@pytest.mark.parametrize("given, said", [
    (lambda response: response, "HtmlResponse, not str or bytes: give response.body (and its Content-Type in the "
                                "PLEXITY_ENCODING_FIELD field)"),
    (lambda response: response.css("article"), "Selector, not str or bytes: give its HTML, .get()"),  # (a list of 1)
    (lambda response: response.css("p"), "a SelectorList of 3 values, not str or bytes: give their HTML, .getall()"),
], ids=["response", "response.css('article')", "response.css('p')"])
def test_a_response_or_selector_in_the_input_field_is_dropped_saying_what_to_give(given, said):
    from scrapy.http import HtmlResponse

    response = HtmlResponse("http://example.org/", body=PAGE.encode(), encoding="utf-8")
    with pytest.raises(DropItem, match=re.escape(f"input_not_text: field 'html' holds {said}")):
        run(make_pipeline(), {"url": "u", "html": given(response)})


@pytest.mark.parametrize("value", [[b"<p>a</p>", b"<p>b</p>"], ["<p>a</p>", 1]], ids=["bytes", "mixed"])
def test_a_list_of_anything_else_is_not_text(value):
    with pytest.raises(DropItem, match="input_not_text: field 'html' holds a list of 2 values, not str or bytes"):
        run(make_pipeline(), {"url": "u", "html": value})


# -- bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("item", [{"url": "u"}, {"url": "u", "html": None}], ids=["missing", "None"])
def test_items_without_the_input_field_pass_through_untouched_and_counted(item):
    pipeline = make_pipeline()
    before = dict(item)
    assert run(pipeline, item) is item and item == before
    assert stats(pipeline)["items_without_input"] == 1


def test_items_without_the_input_field_are_said_once_naming_the_setting(caplog):
    # (a misnamed PLEXITY_INPUT_FIELD passes every item on uncleaned: the log says so, once)
    pipeline = make_pipeline(PLEXITY_INPUT_FIELD="body")
    for _ in range(3):
        run(pipeline, {"url": "u", "html": "<p>text</p>"})
    warnings = [r.getMessage() for r in caplog.records if "PLEXITY_INPUT_FIELD" in r.getMessage()]
    assert warnings == ["plexity: an item without 'body' (PLEXITY_INPUT_FIELD) passed on uncleaned (said once; "
                        "counted in plexity/items_without_input)"]
    assert stats(pipeline)["items_without_input"] == 3


@pytest.mark.parametrize("setting", ["PLEXITY_INPUT_FIELD", "PLEXITY_OUTPUT_FIELD"])
def test_an_empty_field_name_is_a_bad_setting(setting):
    with pytest.raises(ValueError, match=f"{setting} is empty: the name of an item field"):
        make_pipeline(**{setting: ""})


def test_a_page_over_the_size_cap_is_dropped_before_any_work():
    pipeline = make_pipeline(PLEXITY_MAX_DOCUMENT_BYTES=1000)
    with pytest.raises(DropItem, match="too_large: 2,000 bytes, PLEXITY_MAX_DOCUMENT_BYTES is 1,000"):
        run(pipeline, {"url": "u", "html": b"x" * 2000})
    assert stats(pipeline)["items_dropped/too_large"] == 1
    assert run(pipeline, {"url": "u", "html": PAGE})["text"]


@pytest.mark.parametrize("item, said", [
    ("<p>a page, not an item</p>", "a str, not an item ('<p>a page, not an item</p>'): yield a dict, "
                                   "{'url': response.url, 'html': response.body}"),
    (42, "a int, not an item (42): yield a dict, {'url': response.url, 'html': response.body}"),
    (collections.namedtuple("Page", "url html")("u", PAGE),
     "a Page, not an item itemadapter reads: yield a dict, scrapy.Item, dataclass or attrs object, or register an "
     "adapter for Page (itemadapter's ItemAdapter.ADAPTER_CLASSES)"),
    (object(), "a object, not an item itemadapter reads"),
], ids=["str", "int", "namedtuple", "object"])
def test_an_object_that_is_not_an_item_is_dropped_as_scrapys_own_pipelines_refuse_it(item, said):
    # Scrapy 2.x sends whatever a callback yields (but a request or None) to the pipelines; its FilesPipeline
    # and ImagesPipeline then fail ("No adapter found for objects of type: <class 'str'>"), as does the feed
    # exporter.  Passed on untouched (before), it was lost there with a traceback, its page never cleaned.
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match=re.escape(f"plexity: not_an_item: the spider yielded {said}")):
        run(pipeline, item)
    counts = stats(pipeline)
    assert counts["items_seen"] == counts["items_dropped"] == counts["items_dropped/not_an_item"] == 1
    assert "items_not_an_item" not in counts


def _mistaken_outputs():
    """What a spider's callback yields by mistake, from a real response: its follow_all() not yielded
    from, a list of requests, the response itself."""
    from scrapy.http import HtmlResponse

    response = HtmlResponse("http://example.org/", body=PAGE.encode(), encoding="utf-8")
    return {"follow_all": response.follow_all(["/a", "/b"]), "a list": [response.follow("/a")],
            "a tuple of items": ({"html": PAGE}, {"html": PAGE}), "the response": response,
            "a map": map(response.follow, ["/a", "/b"])}


@pytest.mark.parametrize("name, said", [
    ("follow_all", "a generator, not an item: yield each of its requests or items (yield from ...)"),
    ("a list", "a list, not an item: yield each of its requests or items (yield from ...)"),
    ("a tuple of items", "a tuple, not an item: yield each of its requests or items (yield from ...)"),
    ("a map", "a map, not an item: yield each of its requests or items (yield from ...)"),
    ("the response", "a response, not an item: yield an item made of it "
                     "({'url': response.url, 'html': response.body})"),
])
def test_what_a_spider_yields_by_mistake_is_dropped_saying_what_to_yield(name, said):
    # (passed on, it failed in the feed exporter, "No adapter found", a traceback for each; its requests never sent)
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match=re.escape(f"plexity: not_an_item: the spider yielded {said}")):
        run(pipeline, _mistaken_outputs()[name])
    counts = stats(pipeline)
    assert counts["items_seen"] == counts["items_dropped"] == counts["items_dropped/not_an_item"] == 1


@pytest.mark.parametrize("value", [42, {"a": 1}, {"<p>a set</p>"}], ids=["int", "dict", "set"])
def test_a_non_text_input_field_drops_the_item_saying_what_it_held(value):
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match=rf"input_not_text: field 'html' holds {type(value).__name__}, not str or bytes"):
        run(pipeline, {"url": "u", "html": value})
    assert stats(pipeline)["items_dropped/input_not_text"] == 1


@pytest.mark.parametrize("kind", ["PDF", "gzip", "PNG", "PDF as str"])
def test_binary_bytes_in_the_input_field_are_dropped_saying_what_they_are(kind):
    """A spider that downloads a .html.gz or a PDF as it is hands over bytes that are no page: they were
    decoded as HTML and extracted (dropped as too_short, or kept as garbage with PLEXITY_MIN_CHARS 0)."""
    import gzip

    pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nstream\n" + bytes(range(256)) * 20
    value = {"PDF": pdf, "gzip": gzip.compress(PAGE.encode()), "PNG": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
             "PDF as str": pdf.decode("latin-1")}[kind]
    pipeline = make_pipeline(PLEXITY_MIN_CHARS=0)
    with pytest.raises(DropItem, match=rf"input_not_text: field 'html' holds {kind.split()[0]}, not text"):
        run(pipeline, {"url": "u", "html": value})
    assert stats(pipeline)["items_dropped/input_not_text"] == 1
    assert run(pipeline, {"url": "u", "html": PAGE.encode("utf-16")})["text"]  # (UTF-16 text is text)


def test_bytes_in_an_undeclared_encoding_are_decoded_with_replacement_and_counted():
    pipeline = make_pipeline(PLEXITY_MIN_CHARS=0)
    page = PAGE.replace("Monday evening", "Monday evening at the Caf\u00e9 Royal")
    # no charset anywhere, and UTF-8 (the title's "è") with a stray Latin-1 byte: UTF-8 with replacement
    mixed = page.replace("Library</title>", "Biblioth\u00e8que</title>").encode().replace(b"\xc3\xa9", b"\xe9")
    item = run(pipeline, {"html": mixed})
    assert "Caf\ufffd Royal" in item["text"] and ARTICLE[1] in item["text"]
    assert item["plexity"]["plexity_replaced_chars"] == 1 and stats(pipeline)["replaced_chars"] == 1
    # no charset anywhere, and no byte of it UTF-8: windows-1252, the standard's default for most locales
    item = run(pipeline, {"html": page.encode("latin-1")})
    assert "Caf\u00e9 Royal" in item["text"] and item["plexity"]["plexity_replaced_chars"] == 0


def test_bytes_with_a_meta_charset_are_decoded_by_it():
    pipeline = make_pipeline(PLEXITY_MIN_CHARS=0)
    page = PAGE.replace("<head>", '<head><meta charset="iso-8859-1">').replace(
        "Monday evening", "Monday evening at the Caf\u00e9 Royal").encode("latin-1")
    item = run(pipeline, {"html": page})
    assert item["plexity"]["plexity_replaced_chars"] == 0 and "Caf\u00e9 Royal" in item["text"]


CAFE_PAGE = PAGE.replace("Monday evening", "Monday evening at the Caf\u00e9 Royal")


@pytest.mark.parametrize("encoding", ["windows-1252", "cp1252", "x-cp1252", "text/html; charset=windows-1252",
                                      b"text/html; charset=windows-1252", ["windows-1252"]],
                         ids=["label", "codec name", "WHATWG label", "Content-Type", "Content-Type as bytes",
                              "a list of one, as an ItemLoader gives it"])
def test_bytes_are_decoded_by_the_responses_charset_in_the_encoding_field(encoding):
    # response.encoding, or response.headers.get("Content-Type"): as a browser reads the HTTP charset
    item = run(make_pipeline(), {"html": CAFE_PAGE.encode("windows-1252"), "encoding": encoding})
    assert "Caf\u00e9 Royal" in item["text"] and item["plexity"]["plexity_replaced_chars"] == 0


def test_the_responses_charset_wins_over_the_meta_charset_and_a_bom_over_both():
    lying = CAFE_PAGE.replace("<head>", '<head><meta charset="utf-8">')
    item = run(make_pipeline(), {"html": lying.encode("windows-1252"), "encoding": "windows-1252"})
    assert "Caf\u00e9 Royal" in item["text"]
    item = run(make_pipeline(), {"html": lying.encode("utf-8-sig"), "encoding": "windows-1252"})
    assert "Caf\u00e9 Royal" in item["text"]  # (not "CafÃ©": the BOM says UTF-8)


def test_an_unknown_charset_in_the_encoding_field_is_no_declaration_as_in_a_browser():
    declared = CAFE_PAGE.replace("<head>", '<head><meta charset="windows-1252">').encode("windows-1252")
    item = run(make_pipeline(), {"html": declared, "encoding": "text/html; charset=x-no-such-charset"})
    assert "Caf\u00e9 Royal" in item["text"]  # (the page's own <meta charset>)


def test_the_encoding_field_is_a_setting():
    page = CAFE_PAGE.encode("windows-1252")
    item = run(make_pipeline(PLEXITY_ENCODING_FIELD="charset"), {"html": page, "charset": "windows-1252"})
    assert "Caf\u00e9 Royal" in item["text"]
    item = run(make_pipeline(), {"html": page, "encoding": "windows-1251"})
    assert "Caf\u0439 Royal" in item["text"]  # (read as the field says: Cyrillic)
    item = run(make_pipeline(PLEXITY_ENCODING_FIELD=""), {"html": page, "encoding": "windows-1251"})
    assert "Caf\u00e9 Royal" in item["text"]  # none: the bytes alone (none of them UTF-8: windows-1252)


@pytest.mark.parametrize("codec", ["cp932", "euc_jp", "big5hkscs", "cp949", "mac-roman"])
def test_scrapy_s_response_encoding_a_python_codec_name_names_its_whatwg_encoding(codec):
    # (response.encoding is w3lib's codec for the response's label: "cp932" for Shift_JIS, no WHATWG label itself)
    words = {"cp932": "議会は予算を承認した", "euc_jp": "議会は予算を承認した", "big5hkscs": "議會批准了預算",
             "cp949": "의회는 예산을 승인했다", "mac-roman": "Café Royal"}[codec]
    pipeline = make_pipeline(PLEXITY_MIN_CHARS=0, PLEXITY_THRESHOLD=1e12, PLEXITY_METHOD="regions")
    item = run(pipeline, {"html": f"<html><body><p>{words}</p></body></html>".encode(codec), "encoding": codec})
    assert words in item["text"] and item["plexity"]["plexity_replaced_chars"] == 0


def test_the_encoding_field_is_for_bytes_only_a_str_is_text_already():
    item = run(make_pipeline(), {"html": CAFE_PAGE, "encoding": "utf-16"})
    assert "Caf\u00e9 Royal" in item["text"]


def test_an_encoding_field_holding_no_charset_is_said_once_and_the_bytes_decoded_without_it(caplog):
    pipeline = make_pipeline()
    page = CAFE_PAGE.replace("<head>", '<head><meta charset="windows-1252">').encode("windows-1252")
    for _ in range(2):
        item = run(pipeline, {"url": "http://x/", "html": page, "encoding": 1251})
        assert "Caf\u00e9 Royal" in item["text"]
    said = [r.getMessage() for r in caplog.records if "PLEXITY_ENCODING_FIELD" in r.getMessage()]
    assert said == ["plexity: http://x/: 'encoding' (PLEXITY_ENCODING_FIELD) holds int, not a Content-Type or "
                    "charset: the page's bytes are decoded without it (said once)"]


@pytest.mark.parametrize("value", ["", "   \n ", b""], ids=["empty", "whitespace", "empty bytes"])
def test_empty_input_drops_the_item_as_empty(value):
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match="empty_input"):
        run(pipeline, {"html": value})
    assert stats(pipeline)["items_dropped/empty_input"] == 1


def test_empty_input_is_kept_as_empty_text_when_min_chars_is_zero():
    item = run(make_pipeline(PLEXITY_MIN_CHARS=0), {"html": ""})
    assert item["text"] == "" and item["plexity"]["plexity_sentences_kept"] == 0


def test_a_page_without_visible_text_is_dropped_as_no_text_extracted():
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match="no_text_extracted"):
        run(pipeline, {"html": "<html><body><script>var a = 1;</script><img src=x.png></body></html>"})


def test_html_the_parser_refuses_is_dropped_as_extraction_failed():
    pipeline = make_pipeline()
    with pytest.raises(DropItem, match="extraction_failed: HTML parser limit: Excessive depth"):
        run(pipeline, {"html": "<div>" * 5_000 + "nested past libxml2's 2,048 levels"})
    assert stats(pipeline)["items_dropped/extraction_failed"] == 1
    with pytest.raises(DropItem, match="no_text_extracted"):  # markup without an element: a page without text
        run(pipeline, {"html": "<!-- only a comment -->"})


def test_a_page_past_the_learned_readers_bounds_is_dropped_saying_so():
    pipeline = make_pipeline(PLEXITY_EXTRACTOR="learned")
    with pytest.raises(DropItem, match="extraction_failed: the page has more than 50,000 blocks"):
        run(pipeline, {"html": "<p>x</p>" * 200_000})
    assert stats(pipeline)["items_dropped/extraction_failed"] == 1


def test_a_page_of_boilerplate_only_is_dropped_as_too_short():
    pipeline = make_pipeline()
    html = "<html><body>" + "".join(f"<p>{line}</p>" for line in BOILERPLATE) + "</body></html>"
    with pytest.raises(DropItem, match=r"too_short: 0 characters kept, PLEXITY_MIN_CHARS is 50 \(http://x\)"):
        run(pipeline, {"url": "http://x", "html": html})
    counts = stats(pipeline)
    assert counts["items_dropped"] == counts["items_dropped/too_short"] == 1
    assert counts["sentences_dropped"] == len(BOILERPLATE)


def test_a_page_in_another_language_passes_through_unfiltered_and_counted():
    pipeline = make_pipeline()
    german = ("Der Stadtrat hat am Montagabend den Haushalt für die neue öffentliche Bibliothek beschlossen. "
              "Die Bibliothek soll im Frühjahr eröffnen und einen großen Raum für Kinder sowie einen Lesegarten "
              "haben. Die Entscheidung über das alte Gebäude fällt nach einer Versammlung im Herbst.")
    item = run(pipeline, {"html": f"<html><body><p>{german}</p></body></html>"})
    assert item["text"] == german and item["plexity"]["plexity_passthrough"] == "language:de"
    counts = stats(pipeline)
    assert counts["items_passthrough"] == counts["items_passthrough/language:de"] == 1
    assert "items_cleaned" not in counts


@pytest.mark.parametrize("label", ["en", "EN", "en-US", "en_GB", "eng", " en\n"])
def test_the_language_field_names_the_models_language_however_it_is_spelled(label):
    # e.g. response.xpath("/html/@lang").get(), as the page wrote it (before: " en" passed through as "language: en")
    item = run(make_pipeline(PLEXITY_LANGUAGE_FIELD="lang"), {"html": PAGE, "lang": label})
    assert item["plexity"]["plexity_verdict"] == "kept" and item["plexity"]["plexity_passthrough"] is None


# -- settings ---------------------------------------------------------------------------

def test_text_input_is_cleaned_without_extraction():
    item = run(make_pipeline(PLEXITY_INPUT_FORMAT="text", PLEXITY_INPUT_FIELD="body",
                             PLEXITY_OUTPUT_FIELD="clean", PLEXITY_STATS_FIELD=""), {"body": TEXT})
    assert item["clean"] == "\n".join(ARTICLE) and set(item) == {"body", "clean"}


def test_text_input_as_invalid_utf8_bytes_is_counted():
    item = run(make_pipeline(PLEXITY_INPUT_FORMAT="text"), {"html": TEXT.encode() + "\ncafé ".encode() + b"\xe9\xff"})
    assert item["plexity"]["plexity_replaced_chars"] == 2


def test_annotate_keeps_everything_and_marks_the_boilerplate():
    item = run(make_pipeline(PLEXITY_ANNOTATE=True), {"html": PAGE})
    for line in BOILERPLATE:
        assert f'">{line}</ppl>' in item["text"]
    for line in ARTICLE:
        assert line in item["text"] and f">{line}</ppl>" not in item["text"]


def test_the_threshold_setting_overrides_the_model_default():
    item = run(make_pipeline(PLEXITY_THRESHOLD="1e9"), {"html": PAGE})
    assert item["plexity"]["plexity_sentences_dropped"] == 0 and item["plexity"]["plexity_threshold"] == 1e9
    assert all(line in item["text"] for line in BOILERPLATE)


def test_the_extractor_is_learned_unless_set():
    html = ("<html><body><nav><ul><li><a href=/>Home</a></li><li><a href=/news>News</a></li></ul></nav>"
            f"<main><article><h1>Library</h1>{''.join(f'<p>{line}</p>' for line in ARTICLE)}</article></main>"
            "</body></html>")
    default, tags = make_pipeline(PLEXITY_EXTRACTOR=None), make_pipeline(PLEXITY_EXTRACTOR="tags")
    assert default.extractor == "learned" and default.scorer.method == "trim"
    assert run(default, {"html": html})["text"] == "\n".join(ARTICLE)  # the menu was never extracted
    with_tags = run(tags, {"html": html})  # the menu and the heading extracted, then filtered out
    assert with_tags["text"] == "\n".join(ARTICLE) and with_tags["plexity"]["plexity_sentences_dropped"] == 3


def test_a_model_given_by_path_is_used(tiny_model):
    pipeline = make_pipeline(PLEXITY_MODEL=str(tiny_model), PLEXITY_INPUT_FORMAT="text", PLEXITY_MIN_CHARS=0)
    assert pipeline.stats.get_value("plexity/threshold") == 500.0  # from the model's metadata
    pipeline = make_pipeline(PLEXITY_MODEL=str(tiny_model), PLEXITY_THRESHOLD=10, PLEXITY_METHOD="sentences",
                             PLEXITY_INPUT_FORMAT="text", PLEXITY_MIN_CHARS=0)
    item = run(pipeline, {"html": "The cat sat on the mat. Share on Facebook"})
    assert item["plexity"]["plexity_model"] == "tiny" and item["plexity"]["plexity_method"] == "sentences"
    assert item["text"] == "The cat sat on the mat."


def test_the_dropped_file_lists_every_dropped_sentence_and_item_with_its_reason(tmp_path):
    path = tmp_path / "dropped.jsonl"
    pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(path))
    run(pipeline, {"url": "http://a", "html": PAGE})
    with pytest.raises(DropItem):
        run(pipeline, {"url": "http://b", "html": 7})
    pipeline.close_spider()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    sentences = [r for r in records if r["reason"] == "outside_main_content_region"]  # method regions
    assert [r["text"] for r in sentences] == BOILERPLATE
    assert all(r["source"] == "http://a" and r["perplexity"] > pipeline.scorer.threshold for r in sentences)
    assert records[-1] == {"source": "http://b", "reason": "input_not_text",
                           "detail": "field 'html' holds int, not str or bytes"}


def test_a_dropped_file_whose_folder_is_removed_mid_crawl_is_one_error_and_a_count_not_a_traceback(tmp_path,
                                                                                                    caplog):
    # Before: closing the spider raised FileNotFoundError (its .part file could not be renamed): Scrapy's traceback.
    import shutil

    folder = tmp_path / "out"
    pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(folder / "dropped.jsonl"))
    run(pipeline, {"url": "http://a", "html": PAGE})
    shutil.rmtree(folder)
    with caplog.at_level("WARNING", logger="plexity_plugins.scrapy"):
        assert ARTICLE[0] in run(pipeline, {"url": "http://b", "html": PAGE})["text"]
        pipeline.close_spider()
    message = (f"PLEXITY_DROPPED_FILE {folder / 'dropped.jsonl'} cannot be written (no such file or directory): "
               f"the crawl goes on without it, its dropped rows counted in plexity/dropped_rows_not_written")
    assert [r.getMessage() for r in caplog.records] == [f"plexity: {message}"]
    assert stats(pipeline)["dropped_file_error"] == message
    assert stats(pipeline)["dropped_rows_not_written"] == 2 * len(BOILERPLATE)  # (both items' rows: none written)
    assert not folder.exists()


DROPPED_FILE_OVER_A_SIZE_LIMIT = """
import asyncio, json, logging, resource, signal, sys
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler
from plexity_plugins.scrapy import PerplexityFilterPipeline

crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                     "PLEXITY_DROPPED_FILE": sys.argv[1]})
pipeline = PerplexityFilterPipeline.from_crawler(crawler)
pipeline.open_spider()
# (force: Scrapy 2.11's crawler has put a handler on the root logger)
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s", force=True)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (then a write past the limit fails with EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
page = sys.stdin.read()
texts = []
for n in range(40):
    texts.append(asyncio.run(pipeline.process_item({"url": f"http://x/{n}", "html": page}))["text"])
try:
    asyncio.run(pipeline.process_item({"url": "http://x/int", "html": 7}))
except DropItem:
    pass
pipeline.close_spider()
print(json.dumps({"texts": texts, "stats": crawler.stats.get_stats()}, default=str))
"""


def test_a_dropped_file_that_cannot_be_written_mid_crawl_leaves_every_item_cleaned_and_counts_its_rows(tmp_path):
    # Before: once the file's writes failed (here: past a file size limit, EFBIG), every item raised OSError
    # (Scrapy's traceback, the item lost) for the rest of the crawl.
    import subprocess
    import sys

    dropped = tmp_path / "dropped.jsonl"
    result = subprocess.run([sys.executable, "-c", DROPPED_FILE_OVER_A_SIZE_LIMIT, str(dropped)], input=PAGE,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert len(out["texts"]) == 40 and all(ARTICLE[0] in text for text in out["texts"])
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line or "Traceback" in line]
    assert len(errors) == 1 and errors[0].endswith(
        f"plexity: PLEXITY_DROPPED_FILE {dropped} cannot be written (file too large): the crawl goes on without it, "
        f"its dropped rows counted in plexity/dropped_rows_not_written")
    assert out["stats"]["plexity/dropped_rows_not_written"] == 40 * len(BOILERPLATE) + 1  # (+ the int's row)
    assert list(tmp_path.iterdir()) == []  # (no file under its name, nor its .part)


def test_a_url_with_lone_surrogates_is_written_to_the_dropped_file(tmp_path):
    # (a str made with errors="surrogateescape": writing it raised UnicodeEncodeError, the item lost uncounted)
    path = tmp_path / "dropped.jsonl"
    pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(path))
    assert ARTICLE[0] in run(pipeline, {"url": "http://x/caf\udce9", "html": PAGE})["text"]
    with pytest.raises(DropItem, match="input_not_text"):
        run(pipeline, {"url": "http://x/caf\udce9", "html": 7})
    pipeline.close_spider()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert {record["source"] for record in records} == {"http://x/caf\udce9"}
    assert records[-1]["reason"] == "input_not_text" and len(records) == 1 + len(BOILERPLATE)


def test_a_worker_thread_gives_the_same_items_as_the_reactor_thread():
    inline = run(make_pipeline(), {"html": PAGE})
    threaded_pipeline = make_pipeline(PLEXITY_THREADS=2)

    async def many():
        return await asyncio.gather(*(threaded_pipeline.process_item({"html": PAGE}) for _ in range(4)))

    items = asyncio.run(many())
    threaded_pipeline.close_spider()
    assert all(item == inline for item in items)


@pytest.mark.parametrize("setting, value, message", [
    ("PLEXITY_INPUT_FORMAT", "pdf", "PLEXITY_INPUT_FORMAT must be one of html, text, got 'pdf'"),
    ("PLEXITY_EXTRACTOR", "magic", "PLEXITY_EXTRACTOR must be one of learned, dense, auto, trafilatura, fast, tags, none, got 'magic'"),
    ("PLEXITY_THREADS", -1, "PLEXITY_THREADS must be 0 or more"),
    ("PLEXITY_THRESHOLD", -5, "PLEXITY_THRESHOLD is -5: a positive perplexity"),
    ("PLEXITY_MIN_CHARS", -1, "PLEXITY_MIN_CHARS is -1: 0 or more characters"),
    ("PLEXITY_MIN_KEPT_FRACTION", 1.5, "PLEXITY_MIN_KEPT_FRACTION is 1.5: a fraction from 0 to 1"),
    ("PLEXITY_EXTRACT_TIMEOUT", -1, r"PLEXITY_EXTRACT_TIMEOUT is -1: 0 or more seconds \(0: no limit\)"),
    ("PLEXITY_OTHER_LANGUAGES", "dropp", "PLEXITY_OTHER_LANGUAGES is 'dropp': one of keep, drop"),
])
def test_invalid_settings_stop_the_crawl_with_a_message(setting, value, message):
    with pytest.raises(ValueError, match=message):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={setting: value}))


@pytest.mark.parametrize("setting, value, takes", [
    ("PLEXITY_THRESHOLD", "abc", "a number"),
    ("PLEXITY_MIN_DOC_PERPLEXITY", "x", "a number"),
    ("PLEXITY_MIN_CHARS", "fifty", "a whole number"),
    ("PLEXITY_ANNOTATE", "yes", "True or False"),
    ("PLEXITY_LANGUAGE_CHECK", "maybe", "True or False"),
    ("PLEXITY_MAX_DOCUMENT_BYTES", "50 megs", "a size of 1 byte or more"),
    ("PLEXITY_EXTRACT_MEMORY", "lots", "a size"),
    ("PLEXITY_MODEL", "{en:en-default}", "a model name or path, or a language -> model map in JSON"),
])
def test_a_setting_of_the_wrong_kind_stops_the_crawl_in_one_line_naming_it(setting, value, takes, caplog):
    # not Python's "could not convert string to float: 'abc'", which names no setting
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={setting: value}))
    assert f"plexity: the crawl cannot start: {setting} is {value!r}: {takes}" in caplog.text


@pytest.mark.parametrize("setting, value, takes", [
    ("PLEXITY_INPUT_FIELD", ["html"], "the name of an item field, a str"),  # (before: a TypeError at every item)
    ("PLEXITY_OUTPUT_FIELD", 3, "the name of an item field, a str"),
    ("PLEXITY_STATS_FIELD", {"name": "plexity"}, "the name of an item field, a str"),
    ("PLEXITY_ENCODING_FIELD", 0, "the name of an item field, a str"),
    ("PLEXITY_LANGUAGE_FIELD", ["lang"], "the name of an item field, a str"),
    ("PLEXITY_DROPPED_FILE", 5, "a file's path"),  # (before: a TypeError from pathlib, naming no setting)
    ("PLEXITY_THREADS", 2.7, "a whole number"),  # (before: Scrapy's getint made it 2, silently)
    ("PLEXITY_MIN_CHARS", 49.5, "a whole number"),
])
def test_a_settings_py_value_of_the_wrong_type_stops_the_crawl_in_one_line_naming_it(setting, value, takes, caplog):
    # (a settings.py holds Python values, not only the strings `-s` gives)
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={setting: value}))
    assert f"plexity: the crawl cannot start: {setting} is {value!r}: {takes}" in caplog.text


def test_a_min_doc_perplexity_above_the_max_stops_the_crawl(caplog):
    # (before: every item dropped, doc_perplexity_below_min or _above_max, the crawl "finished")
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_MIN_DOC_PERPLEXITY": 100,
                                                                         "PLEXITY_MAX_DOC_PERPLEXITY": 10}))
    assert ("cannot start: PLEXITY_MIN_DOC_PERPLEXITY (100) is above PLEXITY_MAX_DOC_PERPLEXITY (10): every item "
            "would be dropped") in caplog.text


def test_a_plexity_setting_in_lower_case_is_named_as_a_misspelt_one(caplog):
    # Scrapy's settings are case-sensitive: `-s plexity_extractor=tags` was ignored, the default extractor used
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"plexity_extractor": "tags"}))
    assert "'plexity_extractor' is no setting of plexity's: did you mean PLEXITY_EXTRACTOR?" in caplog.text


def test_the_size_cap_takes_a_size_as_the_cli_does():
    pipeline = make_pipeline(PLEXITY_MAX_DOCUMENT_BYTES="1KB")
    with pytest.raises(DropItem, match="too_large: 2,000 bytes, PLEXITY_MAX_DOCUMENT_BYTES is 1,000"):
        run(pipeline, {"url": "u", "html": b"x" * 2000})


@pytest.mark.parametrize("value", [0, "0", -1])
def test_a_size_cap_of_zero_or_less_is_a_bad_setting_as_in_the_cli(value):
    # (it would drop every item as too_large; --max-document-bytes refuses it too)
    with pytest.raises(PlexitySettingError, match=f"PLEXITY_MAX_DOCUMENT_BYTES is {value!r}: a size of 1 byte or"):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_MAX_DOCUMENT_BYTES": value}))


def test_a_dropped_file_that_is_a_directory_stops_the_crawl_before_it_starts(tmp_path, caplog):
    # (it would fail only when the spider closes, the crawl's log of drops lost)
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_DROPPED_FILE": str(tmp_path)}))
    assert f"cannot start: PLEXITY_DROPPED_FILE is {str(tmp_path)!r}: a directory, not a file" in caplog.text


def test_the_dropped_files_missing_directory_is_made_as_plexity_clean_makes_its_output_dir(tmp_path):
    path = tmp_path / "new" / "dropped.jsonl"
    pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(path))
    with pytest.raises(DropItem):
        run(pipeline, {"url": "http://b", "html": 7})
    pipeline.close_spider()
    assert json.loads(path.read_text())["reason"] == "input_not_text"


def test_a_dropped_file_whose_directory_cannot_be_made_stops_the_crawl(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(PlexitySettingError, match="PLEXITY_DROPPED_FILE is .*: its directory cannot be made"):
        PerplexityFilterPipeline.from_crawler(get_crawler(
            settings_dict={"PLEXITY_DROPPED_FILE": str(tmp_path / "a-file" / "dropped.jsonl")}))


def test_an_unknown_model_stops_the_crawl_naming_it(model_dir):
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_MODEL": "nope"}))


def test_the_pipeline_can_be_switched_off_by_a_setting():
    with pytest.raises(NotConfigured):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_ENABLED": False}))


# -- the add-on ---------------------------------------------------------------------------

def _pipelines_with(settings: dict) -> dict:
    """ITEM_PIPELINES of a real Crawler after Scrapy applied its add-ons."""
    from scrapy.utils.misc import load_object

    crawler = get_crawler(settings_dict=settings)
    return {(load_object(k) if isinstance(k, str) else k): v
            for k, v in crawler.settings.getdict("ITEM_PIPELINES").items()}


def test_the_add_on_enables_the_pipeline_at_300():
    assert _pipelines_with({"ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0}}) == {PerplexityFilterPipeline: 300}


def test_the_add_ons_priority_is_a_setting():
    pipelines = _pipelines_with({"ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0},
                                 "PLEXITY_PIPELINE_PRIORITY": 650})
    assert pipelines == {PerplexityFilterPipeline: 650}


def test_the_add_on_keeps_a_priority_the_project_gave_the_pipeline_and_other_pipelines():
    pipelines = _pipelines_with({
        "ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0},
        "ITEM_PIPELINES": {"plexity_plugins.scrapy.PerplexityFilterPipeline": 120,
                           "scrapy.pipelines.images.ImagesPipeline": 1}})
    assert pipelines[PerplexityFilterPipeline] == 120
    assert len(pipelines) == 2


@pytest.mark.parametrize("own", [None, "scrapy.exporters.XmlItemExporter"], ids=["none", "the project's own"])
def test_the_add_on_makes_the_xml_feed_format_write_none_as_an_empty_element_unless_the_project_chose(own):
    settings = {"ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0}}
    if own:
        settings["FEED_EXPORTERS"] = {"xml": own}
    crawler = get_crawler(settings_dict=settings)
    assert crawler.settings.getdict("FEED_EXPORTERS")["xml"] == (own or "plexity_plugins.scrapy.PlexityXmlItemExporter")


def test_without_the_add_on_nothing_is_enabled():
    assert _pipelines_with({}) == {}


def test_dropping_other_languages_without_the_language_check_stops_the_crawl_naming_both_settings(caplog):
    # (PLEXITY_OTHER_LANGUAGES = "drop" used to drop nothing then, silently)
    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_OTHER_LANGUAGES": "drop",
                                                                         "PLEXITY_LANGUAGE_CHECK": False}))
    assert ("plexity: the crawl cannot start: PLEXITY_OTHER_LANGUAGES = 'drop' with PLEXITY_LANGUAGE_CHECK = False: "
            "without the language check no document is found in another language, so none would be dropped: leave "
            "out PLEXITY_LANGUAGE_CHECK = False to drop them") in caplog.text


def test_an_html_page_given_as_text_is_counted_and_said_once_naming_the_setting(caplog):
    # (PLEXITY_INPUT_FORMAT = "text" with a spider yielding pages: the markup was cleaned as text, silently)
    pipeline = make_pipeline(PLEXITY_INPUT_FORMAT="text", PLEXITY_MIN_CHARS=0)
    for _ in range(2):
        run(pipeline, {"url": "http://example.org/", "html": "<!DOCTYPE html>" + PAGE})
    run(pipeline, {"url": "http://example.org/text", "html": "The library opens on Monday. It has new books."})
    assert stats(pipeline)["items_looks_like_html"] == 2
    said = [r.getMessage() for r in caplog.records if "holds an HTML page" in r.getMessage()]
    assert said == ["plexity: http://example.org/: 'html' (PLEXITY_INPUT_FIELD) holds an HTML page, and "
                    "PLEXITY_INPUT_FORMAT is 'text': it is cleaned as text, markup and all; set PLEXITY_INPUT_FORMAT "
                    "= 'html' to extract its text first (said once; counted in plexity/items_looks_like_html)"]


CRAWL_KILLED_OUTRIGHT = """
import asyncio, os, signal, sys
from scrapy.utils.test import get_crawler
from plexity_plugins.scrapy import PerplexityFilterPipeline

crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                     "PLEXITY_DROPPED_FILE": sys.argv[1]})
pipeline = PerplexityFilterPipeline.from_crawler(crawler)
pipeline.open_spider()
page, part, n = sys.stdin.read(), sys.argv[2], 0
while not os.path.exists(part) or os.path.getsize(part) == 0:  # (until some rows reached the disk)
    asyncio.run(pipeline.process_item({"url": f"http://killed/{n}", "html": page}))
    n += 1
os.kill(os.getpid(), signal.SIGKILL)  # (kill -9, the out-of-memory killer: no close_spider, no exit handler)
"""


def test_the_rows_a_crawl_killed_outright_left_are_kept_aside_by_the_next_crawl_and_said(tmp_path, caplog):
    # Before: the next crawl's file replaced the killed crawl's .dropped.jsonl.part unsaid, its rows lost.
    import subprocess
    import sys

    dropped = tmp_path / "dropped.jsonl"
    part = tmp_path / ".dropped.jsonl.part"
    killed = subprocess.run([sys.executable, "-c", CRAWL_KILLED_OUTRIGHT, str(dropped), str(part)], input=PAGE,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    left = part.read_bytes()
    assert left and not dropped.exists()
    with caplog.at_level("WARNING", logger="plexity_plugins.scrapy"):
        pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(dropped))
    [kept] = [p for p in tmp_path.iterdir() if p.name.startswith("dropped.unfinished-")]
    assert kept.read_bytes() == left and kept.suffix == ".jsonl"
    assert [r.getMessage() for r in caplog.records] == [
        f"plexity: PLEXITY_DROPPED_FILE's rows of an earlier crawl that did not end (killed outright: its spider "
        f"never closed) were left in .dropped.jsonl.part: kept as {kept} (its last row may be cut short); this "
        f"crawl writes {dropped} anew"]
    run(pipeline, {"url": "http://next", "html": PAGE})
    pipeline.close_spider()
    assert {json.loads(line)["source"] for line in dropped.read_text().splitlines()} == {"http://next"}
    assert all(line.startswith('{"source": "http://killed/') for line in kept.read_text().splitlines())


def test_an_empty_part_file_a_killed_crawl_left_is_replaced_without_a_word(tmp_path, caplog):
    # (killed before any row reached the disk: nothing of it to keep)
    (tmp_path / ".dropped.jsonl.part").write_bytes(b"")
    with caplog.at_level("WARNING", logger="plexity_plugins.scrapy"):
        make_pipeline(PLEXITY_DROPPED_FILE=str(tmp_path / "dropped.jsonl")).close_spider()
    assert caplog.records == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dropped.jsonl"]


def test_a_second_crawl_given_the_dropped_file_another_crawl_writes_now_does_not_start(tmp_path, caplog):
    # Before: the second crawl's start truncated the first one's rows, both wrote into one file, and the second's
    # close failed ("cannot be written (no such file or directory)"), its rows lost: two crawls of the demo site.
    dropped = tmp_path / "dropped.jsonl"
    first = make_pipeline(PLEXITY_DROPPED_FILE=str(dropped))
    run(first, {"url": "http://first", "html": PAGE})
    with caplog.at_level("CRITICAL", logger="plexity_plugins.scrapy"), pytest.raises(PlexitySettingError):
        make_pipeline(PLEXITY_DROPPED_FILE=str(dropped))
    assert [r.getMessage() for r in caplog.records] == [
        f"plexity: the crawl cannot start: PLEXITY_DROPPED_FILE is '{dropped}', which another crawl is writing now: "
        f"give each crawl its own file"]
    first.close_spider()
    assert {json.loads(line)["source"] for line in dropped.read_text().splitlines()} == {"http://first"}
    later = make_pipeline(PLEXITY_DROPPED_FILE=str(dropped))  # (once the first crawl ended, it is free)
    later.close_spider()


def test_the_dropped_file_s_name_fills_in_name_and_time_as_a_feed_s_uri_does(tmp_path, caplog):
    # Before: `-o items-%(time)s.jsonl -s PLEXITY_DROPPED_FILE=dropped-%(time)s.jsonl` named the feed by the crawl's
    # time and wrote the dropped rows to a file named "dropped-%(time)s.jsonl", replaced by every later crawl.
    import re

    pipeline = make_pipeline(PLEXITY_DROPPED_FILE=str(tmp_path / "dropped-%(name)s-%(time)s.jsonl"))
    run(pipeline, {"url": "http://a", "html": PAGE})
    pipeline.close_spider()
    [written] = [p.name for p in tmp_path.iterdir()]
    # (the spider scrapy.utils.test.get_crawler makes: "default"; in Scrapy 2.11 "test")
    assert re.fullmatch(r"dropped-(default|test)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\+00-00\.jsonl", written), written
    with caplog.at_level("CRITICAL", logger="plexity_plugins.scrapy"), pytest.raises(PlexitySettingError):
        make_pipeline(PLEXITY_DROPPED_FILE=str(tmp_path / "dropped-%(batch_id)s.jsonl"))
    assert [r.getMessage() for r in caplog.records] == [
        f"plexity: the crawl cannot start: PLEXITY_DROPPED_FILE is '{tmp_path / 'dropped-%(batch_id)s.jsonl'}': only "
        f"%(name)s (the spider's) and %(time)s (the crawl's start) are filled in (KeyError: 'batch_id')"]
