"""A real crawl: the example Scrapy project (examples/scrapy_project) crawls a small site
served on 127.0.0.1, with `scrapy crawl` in a subprocess, and its items are cleaned by
the perplexity filter enabled in its settings.py.

The site (examples/scrapy_project/demo_site.py): two news articles wrapped in boilerplate,
a page in German, an image, a page whose bytes do not match its declared charset, a very
large page, links to missing pages.  The tests read the exported items, the crawl's stats
(written as JSON by the project's JsonStatsDump extension) and the dropped-sentence file.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import EXAMPLES

PROJECT = EXAMPLES / "scrapy_project"
sys.path.insert(0, str(PROJECT))
from demo_site import ARTICLES, BOILERPLATE, BROKEN_CHARSET, GERMAN, build_site, serve  # noqa: E402

LARGE_PAGE_BYTES = 3_000_000


@dataclass
class Crawl:
    base: str
    items: dict[str, dict]  # by URL path
    stats: dict[str, object]
    dropped: list[dict]
    log: str

    def plexity(self, key: str) -> object:
        return self.stats.get("plexity/" + key, 0)


def crawl_site(out: Path, large_bytes: int, *settings: str) -> Crawl:
    """Runs `scrapy crawl site` from the example project against the local site."""
    with serve(build_site(large_bytes)) as base:
        command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={base}",
                   "-O", str(out / "items.jsonl"), "-s", f"STATS_JSON_FILE={out / 'stats.json'}",
                   "-s", f"PLEXITY_DROPPED_FILE={out / 'dropped.jsonl'}"]
        for setting in settings:
            command += ["-s", setting]
        process = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-5000:]
    items = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text(encoding="utf-8").splitlines()]
    stats = json.loads((out / "stats.json").read_text())
    return Crawl(base, {item["url"].removeprefix(base.rstrip("/")): item for item in items}, stats, dropped,
                 process.stderr)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Crawl:
    return crawl_site(tmp_path_factory.mktemp("crawl"), LARGE_PAGE_BYTES)


def test_the_crawl_finishes_without_errors(crawl):
    # (the project enables the filter through its add-on alone: ADDONS in settings.py)
    assert crawl.stats["finish_reason"] == "finished"
    assert "log_count/ERROR" not in crawl.stats, crawl.log[-5000:]
    assert crawl.plexity("model") == "en-default"


def test_articles_are_kept_and_their_boilerplate_removed(crawl):
    for path, paragraphs in ARTICLES.items():
        text = crawl.items[path]["text"]
        assert all(paragraph in text for paragraph in paragraphs), text
        assert not [line for line in BOILERPLATE if line in text], text


def test_the_boilerplate_was_removed_by_the_filter_and_written_out(crawl):
    # The project extracts every visible line (PLEXITY_EXTRACTOR = "tags"): the filter
    # found the article among them (method "regions") and wrote out what it dropped.
    assert crawl.plexity("method") == "regions"
    for path in ARTICLES:
        counts = crawl.items[path]["plexity"]
        assert counts["plexity_sentences_kept"] == len(ARTICLES[path])
        dropped_here = [r for r in crawl.dropped if r["source"].endswith(path)]
        assert len(dropped_here) == counts["plexity_sentences_dropped"]
        assert {r["reason"] for r in dropped_here} == {"outside_main_content_region"}
        dropped_text = " ".join(r["text"] for r in dropped_here)
        assert all(line in dropped_text for line in BOILERPLATE)


def test_the_page_in_german_passes_through_unfiltered(crawl):
    item = crawl.items["/de/bibliothek.html"]
    assert item["plexity"]["plexity_passthrough"] == "language:de"
    assert all(sentence in item["text"] for sentence in GERMAN)
    assert crawl.plexity("items_passthrough") == crawl.plexity("items_passthrough/language:de") == 1


def test_the_page_with_a_broken_charset_is_decoded_and_cleaned(crawl):
    # Declared charset unknown, bytes Latin-1: Scrapy guesses a decoding; the article is
    # ASCII and survives, the mis-decoded "Café crème" line at its end is cut off.
    text = crawl.items["/bakery.html"]["text"]
    assert all(sentence in text for sentence in BROKEN_CHARSET)
    assert "Caf" not in text and not [line for line in BOILERPLATE if line in text]


def test_the_image_is_fetched_but_is_not_an_item(crawl):
    assert "/media/chart" not in crawl.items
    assert crawl.stats["site/non_html_responses"] == 1


def test_the_very_large_page_is_cleaned_whole(crawl):
    item = crawl.items["/reports/annual.html"]
    assert len(item["html"]) >= LARGE_PAGE_BYTES
    assert "the council said that the roads had been repaired before the winter" in item["text"]
    assert "district 9000," in item["text"]  # from the end of the page, far past the start
    assert item["plexity"]["plexity_sentences_kept"] > 9000


def test_every_item_is_counted_once_and_every_drop_has_its_reason(crawl):
    p = crawl.plexity
    assert p("items_seen") == crawl.stats["item_scraped_count"] + crawl.stats["item_dropped_count"]
    assert p("items_seen") == p("items_cleaned") + p("items_passthrough") + p("items_dropped") \
        + p("items_without_input")
    assert p("items_cleaned") == 4  # two articles, the bakery, the report
    # The home page is a list of links: nothing is left of it.
    assert p("items_dropped") == p("items_dropped/too_short") == 1
    assert "/" not in crawl.items
    item_drops = [r for r in crawl.dropped if "perplexity" not in r]
    assert [(r["source"], r["reason"]) for r in item_drops] == [(crawl.base, "too_short")]
    # sentences_kept: those of the items in the feed; sentences_dropped: those the filter dropped (a row each in
    # the dropped file), and the one it kept of the home page (its 12 characters), dropped with it
    assert p("sentences_kept") == sum(item["plexity"]["plexity_sentences_kept"] for item in crawl.items.values())
    sentence_drops = [r for r in crawl.dropped if "perplexity" in r]
    from_dropped_home_page = sum(r["source"] == crawl.base for r in sentence_drops)
    from_items = sum(item["plexity"]["plexity_sentences_dropped"] for item in crawl.items.values())
    assert len(sentence_drops) == from_items + from_dropped_home_page == p("sentences_dropped") - 1


def test_a_non_asyncio_reactor_crawls_the_same(tmp_path, crawl):
    # The worker thread hands results back through a Deferred instead of an asyncio Future.
    other = crawl_site(tmp_path, 20_000, "TWISTED_REACTOR=twisted.internet.selectreactor.SelectReactor")
    assert "log_count/ERROR" not in other.stats, other.log[-5000:]
    assert "SelectReactor" in other.log
    for path in ARTICLES:
        assert other.items[path]["text"] == crawl.items[path]["text"]


def test_the_pipeline_enabled_in_item_pipelines_instead_of_the_add_on_crawls_the_same(tmp_path, crawl):
    pipeline = json.dumps({"plexity_plugins.scrapy.PerplexityFilterPipeline": 300})
    other = crawl_site(tmp_path, LARGE_PAGE_BYTES, "ADDONS={}", f"ITEM_PIPELINES={pipeline}")
    assert "log_count/ERROR" not in other.stats, other.log[-5000:]
    assert "PlexityAddon" not in other.log
    assert {path: item["text"] for path, item in other.items.items()} == \
        {path: item["text"] for path, item in crawl.items.items()}


def test_an_xml_feed_writes_a_null_plexity_field_as_an_empty_element_not_the_text_none(tmp_path):
    # Scrapy's XML exporter wrote None as the text "None" (<plexity_reason>None</plexity_reason> in every kept
    # item), which an XML reader takes for a value; the add-on makes the xml format PlexityXmlItemExporter's.
    from xml.etree import ElementTree

    with serve(build_site(20_000)) as base:
        command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={base}",
                   "-O", str(tmp_path / "items.xml"), "-s", "FEED_EXPORT_FIELDS=url,text,plexity",
                   "-s", f"STATS_JSON_FILE={tmp_path / 'stats.json'}"]
        process = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-5000:]
    items = {item.findtext("url").removeprefix(base.rstrip("/")): item
             for item in ElementTree.parse(tmp_path / "items.xml").getroot()}
    fields = items["/news/library.html"].find("plexity")
    assert fields.findtext("plexity_verdict") == "kept"
    assert fields.find("plexity_reason") is not None and fields.findtext("plexity_reason") == ""
    assert items["/de/bibliothek.html"].find("plexity").findtext("plexity_passthrough") == "language:de"
    texts = [element.text for item in items.values() for element in item.iter()]
    assert "None" not in texts and len(items) == len(ARTICLES) + 3


def test_a_dropped_item_is_logged_as_its_url_and_reason_not_its_page(tmp_path):
    # the 3 MB page is dropped as too_large: Scrapy's "Dropped:" line would print the item whole
    crawl = crawl_site(tmp_path, LARGE_PAGE_BYTES, "PLEXITY_MAX_DOCUMENT_BYTES=1000000")
    assert crawl.plexity("items_dropped/too_large") == 1
    dropped = [line for line in crawl.log.splitlines() if "Dropped: plexity: too_large" in line]
    assert len(dropped) == 1 and dropped[0].endswith("/reports/annual.html)")
    following = crawl.log.split(dropped[0], 1)[1].splitlines()[1]
    assert following.startswith("<") and following.endswith(": not shown>")  # the item, as its URL
    assert max(map(len, crawl.log.splitlines())) < 2_000
    assert len(crawl.log) < LARGE_PAGE_BYTES / 10


# -- a page given as bytes, with its response's charset ----------------------------------

RUSSIAN = [
    "Городской совет утвердил бюджет новой публичной библиотеки в понедельник вечером.",
    "Библиотека откроется весной, в ней будет большой зал для детей и сад для чтения.",
]
BYTES_SPIDER = '''
import scrapy

class BytesSpider(scrapy.Spider):
    """Yields each page's bytes three times: with its Content-Type header, with Scrapy's response.encoding,
    and with neither."""
    name = "bytes"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "given": "header", "html": response.body,
               "encoding": response.headers.get("Content-Type")}
        yield {"url": response.url, "given": "response.encoding", "html": response.body,
               "encoding": response.encoding}
        yield {"url": response.url, "given": "nothing", "html": response.body}
'''


def run_spider(directory: Path, spider: str, site: dict[str, tuple[str, bytes]], *settings: str) -> tuple[list, str]:
    """`scrapy runspider` of the spider source `spider` (its argument `url`: the site's home page), the filter
    enabled by its add-on; returns the exported items and the log."""
    (directory / "spider.py").write_text(spider, encoding="utf-8")
    with serve(site) as base:
        command = [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}", "-O", "items.jsonl",
                   "-s", "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}", "-s", "PLEXITY_EXTRACTOR=tags",
                   "-s", "TELNETCONSOLE_ENABLED=False"]
        for setting in settings:
            command += ["-s", setting]
        process = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-5000:]
    items = [json.loads(line) for line in (directory / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    return items, process.stderr


def test_a_page_given_as_bytes_is_decoded_by_its_responses_charset(tmp_path):
    # Served as windows-1251 by its Content-Type header alone, without a <meta charset>: the pipeline
    # decodes the bytes by the item's "encoding" field (PLEXITY_ENCODING_FIELD) as a browser by the header.
    page = "<html><head><title>Библиотека</title></head><body>" + "".join(f"<p>{s}</p>" for s in RUSSIAN) \
        + "</body></html>"
    items, log = run_spider(tmp_path, BYTES_SPIDER, {"/": ("text/html; charset=windows-1251", page.encode("cp1251"))},
                            "PLEXITY_MIN_CHARS=0", "FEED_EXPORT_FIELDS=given,text,plexity")
    assert " ERROR: " not in log and "holds bytes" not in log, log[-5000:]  # (FEED_EXPORT_FIELDS leaves them out)
    items = {item["given"]: item for item in items}
    for given in ("header", "response.encoding"):
        assert items[given]["text"] == "\n".join(RUSSIAN)
        assert items[given]["plexity"]["plexity_replaced_chars"] == 0
        assert items[given]["plexity"]["plexity_passthrough"] == "language:ru"  # (the model is English)
    # Without it, the bytes are read by the page alone: no <meta charset>, so the encoding the bytes are in, as a
    # browser's detector finds it (uchardet: windows-1251)
    assert items["nothing"]["text"] == "\n".join(RUSSIAN)
    assert items["nothing"]["plexity"]["plexity_replaced_chars"] == 0


def test_a_page_given_as_bytes_to_a_json_feed_is_said_once_with_the_setting_that_leaves_it_out(tmp_path):
    # Scrapy's JSON encoder fails on bytes: each item is left out of `-O items.jsonl`, a traceback each
    page = "<html><body>" + "".join(f"<p>{s}</p>" for s in ARTICLES["/news/library.html"]) + "</body></html>"
    items, log = run_spider(tmp_path, BYTES_SPIDER, {"/": ("text/html; charset=utf-8", page.encode())})
    assert items == [] and log.count("TypeError: Object of type bytes is not JSON serializable") == 3  # (Scrapy)
    said = [line for line in log.splitlines() if "holds bytes" in line]
    assert len(said) == 1 and said[0].endswith(
        "WARNING: plexity: 'html' (PLEXITY_INPUT_FIELD) holds bytes, which the JSON feed items.jsonl cannot write "
        "(Scrapy's 'Object of type bytes is not JSON serializable', the item left out): leave the field out, "
        "FEED_EXPORT_FIELDS = ['url', 'text', 'plexity'] (said once)"), said


PAGE_AND_TITLE_SPIDER = '''
import scrapy

class PageSpider(scrapy.Spider):
    """Yields the page's bytes and its title as text."""
    name = "page"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "html": response.body, "title": response.xpath("//title/text()").get(),
               "encoding": response.encoding}
'''


def xml_feed_of(directory: Path, page: bytes, *settings: str, content_type: str = "text/html; charset=utf-8"
                ) -> tuple[list, str]:
    """`PAGE_AND_TITLE_SPIDER` run on one page (served as `content_type`), its items in an XML feed: (the items, read
    by ElementTree, as {field: text}; the log)."""
    from xml.etree import ElementTree

    (directory / "spider.py").write_text(PAGE_AND_TITLE_SPIDER, encoding="utf-8")
    with serve({"/": (content_type, page)}) as base:
        command = [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}", "-O", "items.xml",
                   "-s", "PLEXITY_EXTRACTOR=tags", "-s", "PLEXITY_MIN_CHARS=0", "-s", "TELNETCONSOLE_ENABLED=False",
                   *[part for setting in settings for part in ("-s", setting)]]
        process = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-5000:]
    root = ElementTree.parse(directory / "items.xml").getroot()
    return [{element.tag: element.text or "" for element in item} for item in root], process.stderr


def test_an_xml_feed_writes_a_page_given_as_bytes_as_its_text_and_no_character_xml_cannot_hold(tmp_path):
    # Scrapy's XML exporter wrote bytes as Python's repr, b'<html>...\\xd0\\x91...', and a title's form feed as it
    # was, which no XML reader reads past ("not well-formed (invalid token)"): PlexityXmlItemExporter, the add-on's
    page = "<html><head><title>Библиотека\x0c</title></head><body>" + "".join(f"<p>{s}</p>" for s in RUSSIAN) \
        + "</body></html>"
    items, log = xml_feed_of(tmp_path, page.encode(), "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}")
    assert len(items) == 1 and "XmlItemExporter" not in log, log[-5000:]
    assert items[0]["html"] == page.replace("\x0c", "\ufffd")
    assert items[0]["title"] == "Библиотека\ufffd"
    assert items[0]["text"] == "\n".join(RUSSIAN)


JAPANESE = ["市議会は火曜日に新しい図書館の予算を承認した。", "図書館は春に開館する。"]  # (too short to guess its encoding)


def test_an_xml_feed_decodes_a_page_s_bytes_with_the_charset_its_response_was_served_with(tmp_path):
    # A page served as EUC-JP that declares no charset itself: the pipeline decoded it with the item's encoding
    # field (PLEXITY_ENCODING_FIELD, here Scrapy's response.encoding), the exporter without it: as UTF-8, U+FFFD for
    # the bytes that are none ("\ufffd\u07bd\ufffd\ufffd" for the title "図書館" in the feed's html).
    page = "<html><head><title>図書館</title></head><body>" + "".join(f"<p>{s}</p>" for s in JAPANESE) \
        + "</body></html>"
    items, log = xml_feed_of(tmp_path, page.encode("euc-jp"), "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}",
                             content_type="text/html; charset=EUC-JP")
    assert len(items) == 1 and items[0]["encoding"] == "euc_jp", log[-5000:]
    assert items[0]["title"] == "図書館" and items[0]["text"] == "\n".join(JAPANESE)  # (Scrapy's, the pipeline's)
    assert items[0]["html"] == page  # (the exporter's, now the same)


def test_the_pipeline_alone_with_scrapy_s_xml_exporter_says_once_which_exporter_writes_none_and_bytes(tmp_path):
    # Without the add-on, the xml format is Scrapy's exporter: a kept item's plexity_reason written "None", a page's
    # bytes b'...', unsaid; the pipeline says so once, naming the FEED_EXPORTERS that writes them right.
    page = "<html><body>" + "".join(f"<p>{s}</p>" for s in ARTICLES["/news/library.html"]) + "</body></html>"
    pipeline = json.dumps({"plexity_plugins.scrapy.PerplexityFilterPipeline": 300})
    items, log = xml_feed_of(tmp_path, page.encode(), "ADDONS={}", f"ITEM_PIPELINES={pipeline}")
    said = [line for line in log.splitlines() if "XmlItemExporter" in line]
    assert len(said) == 1 and said[0].endswith(
        "WARNING: plexity: the XML feed items.xml is written by Scrapy's XmlItemExporter, which writes a None field "
        "(plexity_reason of a kept item) as the text None, and bytes as Python's b'...': FEED_EXPORTERS = {'xml': "
        "'plexity_plugins.scrapy.PlexityXmlItemExporter'} writes them as an empty element and as text (the add-on, "
        "plexity_plugins.scrapy.PlexityAddon, sets it)"), log[-5000:]
    assert items[0]["html"].startswith("b'<html>")  # (what it said)
    exporters = json.dumps({"xml": "plexity_plugins.scrapy.PlexityXmlItemExporter"})
    items, log = xml_feed_of(tmp_path, page.encode(), "ADDONS={}", f"ITEM_PIPELINES={pipeline}",
                             f"FEED_EXPORTERS={exporters}")
    assert "XmlItemExporter" not in log and items[0]["html"] == page, log[-5000:]


# -- the example project's spider without its start URL --------------------------------

def crawl_that_cannot_start(tmp_path: Path, *given: str) -> tuple[subprocess.CompletedProcess, str]:
    """`scrapy crawl site` with the arguments `given`; (the process, the log's first error)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "site", *given, "-s", f"STATS_JSON_FILE={tmp_path / 's.json'}"]
    process = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    errors = [line for line in process.stderr.splitlines() if " ERROR: " in line]
    return process, errors[0] if errors else ""


@pytest.mark.parametrize("given", [[], ["-a", "start_url="], ["-s", "START_URLS= , "]],
                         ids=["nothing", "an empty start_url", "blank START_URLS"])
def test_the_spider_without_a_start_url_fails_saying_what_to_give(tmp_path, given):
    # (before: closed as a finished crawl, finish reason no_start_url, and exit 0: `scrapy crawl ... && next`
    # went on to an empty output)
    process, first_error = crawl_that_cannot_start(tmp_path, *given)
    assert process.returncode == 1, process.stderr[-5000:]
    assert first_error.endswith("[site] ERROR: give a start URL: -a start_url=URL (or the START_URLS setting)"), \
        process.stderr[-5000:]
    assert not (tmp_path / "s.json").exists()  # no crawl: nothing was requested, no stats


@pytest.mark.parametrize("given, said", [
    ("example.org", "'example.org' is not a start URL: give it whole, -a start_url=https://example.org"),
    ("http://127.0.0.1:9/,example.org/news", "'example.org/news' is not a start URL: give it whole, "
                                             "-a start_url=https://example.org/news"),
])
def test_the_spider_with_a_start_url_without_its_scheme_fails_saying_so(tmp_path, given, said):
    # (before: Scrapy's "Missing scheme in request url" with a traceback, or a TypeError from start-up;
    # then a crawl closed as bad_start_url with exit 0)
    process, first_error = crawl_that_cannot_start(tmp_path, "-a", f"start_url={given}")
    assert process.returncode == 1, process.stderr[-5000:]
    assert first_error.endswith(f"[site] ERROR: {said}"), process.stderr[-5000:]
    assert not (tmp_path / "s.json").exists()


# -- what a spider yields by mistake -----------------------------------------------------

MISTAKEN_SPIDER = '''
import scrapy

class MistakenSpider(scrapy.Spider):
    """Yields its links' requests as one generator, not one by one (yield response.follow_all(...), no "from"),
    and the page's text alone, not in an item."""
    name = "mistaken"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "html": response.text}
        yield response.follow_all(css="a")
        yield response.text
'''


def test_a_generator_or_a_str_a_spider_yields_by_mistake_is_dropped_saying_so_not_an_exporter_error(tmp_path):
    # (passed on, the feed exporter failed on each with a traceback, "No adapter found for objects of type ...")
    home = "<html><body>" + "".join(f"<p>{line}</p>" for line in ARTICLES["/news/library.html"]) \
        + '<a href="/news/library.html">more</a></body></html>'
    items, log = run_spider(tmp_path, MISTAKEN_SPIDER, {"/": ("text/html; charset=utf-8", home.encode())})
    assert " ERROR: " not in log and "Traceback" not in log, log[-5000:]
    assert "Dropped: plexity: not_an_item: the spider yielded a generator, not an item: yield each of its requests " \
           "or items (yield from ...) (generator)" in log
    assert "Dropped: plexity: not_an_item: the spider yielded a str, not an item ('<html><body><p>" in log
    assert "'plexity/items_dropped/not_an_item': 2" in log
    assert [item["text"] for item in items] == ["\n".join(ARTICLES["/news/library.html"])]


# -- a crawl stopped by Ctrl-C -----------------------------------------------------------

STOPPED_SPIDER = '''
import scrapy

class StoppedSpider(scrapy.Spider):
    """Yields the home page, then waits on a page that never answers: the crawl is still running when stopped."""
    name = "stopped"

    def __init__(self, url, hang, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]
        self.hang = hang

    def parse(self, response):
        if response.url == self.hang:
            return
        yield {"url": response.url, "html": response.text}
        yield scrapy.Request(self.hang)
'''


def wait_for(path: Path, text: str, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while text not in path.read_text(errors="replace"):
        assert process.poll() is None and time.monotonic() < deadline, path.read_text()[-5000:]
        time.sleep(0.1)


@contextlib.contextmanager
def stopped_crawl(directory: Path, *settings: str):
    """`scrapy runspider` of STOPPED_SPIDER with PLEXITY_DROPPED_FILE=dropped.jsonl: yields (the process, its log)
    once the home page's item is scraped, while it waits on a page that never answers."""
    (directory / "spider.py").write_text(STOPPED_SPIDER, encoding="utf-8")
    home = "<html><body>" + "".join(f"<div>{line}</div>" for line in BOILERPLATE[:4]) \
        + "".join(f"<p>{line}</p>" for line in ARTICLES["/news/library.html"]) + "</body></html>"
    log = directory / "log.txt"
    with socket.socket() as silent, serve({"/": ("text/html; charset=utf-8", home.encode())}) as base, \
            open(log, "w") as err:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # (connections are made, and never answered)
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}",
             "-a", f"hang=http://127.0.0.1:{silent.getsockname()[1]}/", "-O", "items.jsonl",
             "-s", "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}", "-s", "PLEXITY_EXTRACTOR=tags",
             "-s", "PLEXITY_DROPPED_FILE=dropped.jsonl", "-s", "TELNETCONSOLE_ENABLED=False", *settings],
            cwd=directory, stderr=err)
        try:
            wait_for(log, "Scraped from", process)
            yield process, log
            process.wait(timeout=60)
        finally:
            process.kill()


def test_a_crawl_forced_to_stop_by_ctrl_c_twice_keeps_its_dropped_rows_under_the_file_s_name(tmp_path):
    # Scrapy's forced shutdown stops the reactor without closing the spider; its feed file (items.jsonl) keeps
    # its name, and so does PLEXITY_DROPPED_FILE, with the rows written until then, said at exit (it was left
    # as a hidden .dropped.jsonl.part, to be found from the exit's message)
    with stopped_crawl(tmp_path) as (process, log):
        process.send_signal(signal.SIGINT)  # a graceful shutdown, which waits for the page that never comes
        wait_for(log, "shutting down gracefully", process)
        process.send_signal(signal.SIGINT)  # forced
    dropped = tmp_path / "dropped.jsonl"
    assert (f"plexity: the crawl stopped without closing the spider (a forced shutdown): the dropped sentences "
            f"and items of the 1 item(s) seen until then are in {dropped}, which ends there") in log.read_text()
    assert not (tmp_path / ".dropped.jsonl.part").exists()
    assert {json.loads(line)["text"] for line in dropped.read_text().splitlines()} >= set(BOILERPLATE[1:4])
    assert (tmp_path / "items.jsonl").exists()  # (Scrapy's feed: its name kept, the items it had not flushed lost)


def test_a_crawl_stopped_by_ctrl_c_once_closes_and_writes_everything(tmp_path):
    with stopped_crawl(tmp_path, "-s", "DOWNLOAD_TIMEOUT=3") as (process, log):
        process.send_signal(signal.SIGINT)  # graceful: the page that never comes times out, the spider closes
    said = log.read_text()
    assert "forced shutdown" not in said and "dropped sentences and items written to" in said
    assert {json.loads(line)["text"] for line in (tmp_path / "dropped.jsonl").read_text().splitlines()} \
        >= set(BOILERPLATE[1:4])
    [item] = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert item["text"] == "\n".join(ARTICLES["/news/library.html"])
