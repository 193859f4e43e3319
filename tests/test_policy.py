"""One document policy: `plexity clean`, the datatrove step and the Scrapy pipeline give the
same verdict, reason and ``plexity_*`` metadata for the same page and settings."""

from __future__ import annotations

import asyncio
import json
import io
from pathlib import Path

import pytest
from datatrove.data import Document
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from plexity_plugins import PerplexityScorer
from plexity_plugins.cleaning import policy
from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter, WarcHtmlReader
from plexity_plugins.cleaning.files import FileCleaner, collect_inputs
from plexity_plugins.scrapy import PerplexityFilterPipeline

ARTICLE = ["The city council approved the budget for the new public library on Monday evening.",
           "The library will open in the spring, and it will have a large room for children and a garden.",
           "Residents asked the council whether the old building on the main street would be sold."]
MENU = ["Home | News | Sport | Weather | Contact", "Accept all cookies", "Share on Facebook",
        "Related articles", "Advertisement", "Subscribe ▸ Login ▸ Menu ▸ RSS ▸ Sitemap"]
GERMAN = ("Der Stadtrat hat am Montagabend den Haushalt für die neue öffentliche Bibliothek beschlossen. "
          "Die Bibliothek soll im Frühjahr eröffnen und einen großen Raum für Kinder sowie einen Lesegarten haben.")


def html(*blocks: str) -> str:
    return "<html><body>" + "".join(f"<p>{b}</p>" for b in blocks) + "</body></html>"


# (url, page, the verdict, the reason) at SETTINGS
PAGES = [
    ("http://t/article", html(*MENU[:3], *ARTICLE, *MENU[3:]), policy.KEPT, None),
    ("http://t/menu", html(*MENU), policy.DROPPED, policy.TOO_SHORT),
    ("http://t/mostly-menu", html(ARTICLE[0], *MENU * 4), policy.DROPPED, policy.TOO_LITTLE_KEPT),
    ("http://t/german", html(GERMAN), policy.PASSED_THROUGH, None),
    ("http://t/no-text", "<html><body><script>var a = 1;</script><img src=x.png></body></html>",
     policy.DROPPED, policy.NO_TEXT_EXTRACTED),
]
SETTINGS = {"min_chars": 50, "min_kept_fraction": 0.5, "other_languages": "keep"}
METHOD = "regions"  # the tags extractor gives every visible line: its default method finds the article


@pytest.fixture(scope="module")
def warc(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("policy") / "pages.warc.gz"
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for url, page, _, _ in PAGES:
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(page.encode()),
                                                          http_headers=headers))
    return path


def through_plexity_clean(warc: Path, tmp_path: Path) -> dict[str, dict]:
    scorer = PerplexityScorer(method=METHOD)
    cleaner = FileCleaner(scorer, tmp_path / "clean", extractor="tags", **SETTINGS)
    cleaner.run(collect_inputs([warc], tmp_path / "clean"), progress=False)
    with open(tmp_path / "clean" / warc.name, "rb") as f:
        return {r.rec_headers.get_header("WARC-Target-URI"):
                {key: r.rec_headers.get_header(header) for key, header in policy.WARC_HEADERS.items()}
                for r in ArchiveIterator(f)}


def through_datatrove(warc: Path) -> dict[str, dict]:
    reader = WarcHtmlReader(str(warc.parent), glob_pattern=warc.name)
    extractor = HtmlTagsExtractor()
    step = PerplexitySentenceFilter(method=METHOD, **SETTINGS)
    out = {}
    for doc in reader():
        doc.text = extractor.extract(doc.text)  # (what the sandboxed step runs, without the sandbox)
        if not doc.text:  # datatrove's extractor step drops it itself (its `dropped` count)
            out[doc.metadata["url"]] = {"plexity_verdict": policy.DROPPED, "plexity_reason": policy.NO_TEXT_EXTRACTED,
                                        "by": "extractor"}
            continue
        doc = Document(text=doc.text, id=doc.id, metadata={"url": doc.metadata["url"]})
        step.filter(doc)
        out[doc.metadata["url"]] = {k: v for k, v in doc.metadata.items() if k.startswith("plexity_")}
    return out


def through_scrapy() -> dict[str, dict]:
    crawler = get_crawler(settings_dict={
        "PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags", "PLEXITY_METHOD": METHOD,
        "PLEXITY_MIN_CHARS": SETTINGS["min_chars"], "PLEXITY_MIN_KEPT_FRACTION": SETTINGS["min_kept_fraction"],
        "PLEXITY_OTHER_LANGUAGES": SETTINGS["other_languages"], "PLEXITY_ANNOTATE": False})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    out = {}
    for url, page, _, _ in PAGES:
        try:
            item = asyncio.run(pipeline.process_item({"url": url, "html": page}))
            out[url] = item["plexity"]
        except DropItem as drop:
            out[url] = {"dropped": str(drop)}
    return out


def test_the_three_front_ends_give_the_same_verdicts_and_metadata(warc, tmp_path):
    clean = through_plexity_clean(warc, tmp_path)
    datatrove = through_datatrove(warc)
    scrapy = through_scrapy()
    for url, _, verdict, reason in PAGES:
        meta = datatrove[url]
        assert (meta["plexity_verdict"], meta["plexity_reason"] or None) == (verdict, reason), url  # ("": none)
        if meta.get("by") == "extractor":
            assert (clean[url]["plexity_verdict"], clean[url]["plexity_reason"]) == (verdict, reason)
            assert scrapy[url]["dropped"].startswith(f"plexity: {reason}: "), url
            continue
        # (datatrove's "" and NaN, `typed_metadata`, one type per field for ParquetWriter, are None elsewhere)
        meta = {key: None if value == "" or value != value else value for key, value in meta.items()}
        # plexity clean: the same fields, as the X-Plexity-* headers of its cleaned record
        assert clean[url] == {key: None if meta[key] is None else str(meta[key]) for key in policy.WARC_HEADERS}, url
        # Scrapy: the item's stats field is the same dict; a dropped item is dropped for the same reason
        if verdict == policy.DROPPED:
            assert scrapy[url]["dropped"].startswith(f"plexity: {reason}: "), url
        else:
            assert scrapy[url] == meta, url


def test_a_dropped_log_line_stays_one_line_for_every_line_reader():
    from plexity_plugins.cleaning.policy import json_line

    row = {"text": "a\u2028b\x85c\u2029d\x1ce\nf"}
    line = json_line(row)
    assert line.endswith("\n") and len(line.splitlines()) == 1
    assert json.loads(line) == row


def test_a_dropped_log_line_with_lone_surrogates_is_written_and_reads_back_the_same():
    # (a source read with errors="surrogateescape", a JSON "\\udce9" escape: no UTF-8 file took it raw)
    from plexity_plugins.cleaning.policy import json_line

    row = {"source": "caf\udce9.html", "text": "caf\u00e9 \ud800"}
    line = json_line(row)
    assert line.encode("utf-8") and json.loads(line) == row
    assert "caf\u00e9" in line  # (other characters kept readable)


# (page, why its cleaned text is empty: None when it is not) with min_chars=0, so that nothing
# is dropped for being short and every empty output is written, with its reason counted
EMPTY_PAGES = [
    ("http://t/article", html(*MENU[:3], *ARTICLE, *MENU[3:]), None),
    ("http://t/empty", "", policy.EMPTY_INPUT),
    ("http://t/no-text", "<html><body><script>var a = 1;</script><img src=x.png></body></html>",
     policy.NO_TEXT_EXTRACTED),
    ("http://t/menu", html(*MENU), policy.ALL_SENTENCES_DROPPED),
]


def test_every_empty_output_is_counted_with_its_reason_the_same_in_every_front_end(tmp_path):
    from collections import Counter

    expected = Counter(reason for _, _, reason in EMPTY_PAGES if reason)
    # plexity clean: one output file per page, and plexity-stats.json's empty_reasons
    pages = tmp_path / "pages"
    pages.mkdir()
    for url, page, _ in EMPTY_PAGES:
        (pages / (url.rsplit("/", 1)[1] + ".html")).write_text(page)
    cleaner = FileCleaner(PerplexityScorer(method=METHOD), tmp_path / "clean", extractor="tags", min_chars=0)
    stats = cleaner.run(collect_inputs([pages], tmp_path / "clean"), progress=False)
    assert stats.documents_empty == sum(stats.empty_reasons.values()) == 3
    assert stats.empty_reasons == expected
    written = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert written["empty_reasons"] == dict(expected)
    assert [p.name for p in sorted((tmp_path / "clean").glob("*.txt")) if not p.read_text()] == \
        ["empty.html.txt", "menu.html.txt", "no-text.html.txt"]

    # datatrove: the extractor step drops a page without text itself (dropped_no_text_extracted,
    # dropped_empty_input), the filter counts the other empty ones as empty_<reason>
    extractor = HtmlTagsExtractor()
    step = PerplexitySentenceFilter(method=METHOD, min_chars=0)
    docs = [Document(text=page, id=url, metadata={"url": url}) for url, page, _ in EMPTY_PAGES]
    extracted = list(extractor.run(iter(docs)))
    list(step.run(iter(extracted)))
    counted = Counter({name.removeprefix("empty_"): value.total for name, value in step.stats.stats.items()
                       if name.startswith("empty_")})
    for reason in (policy.NO_TEXT_EXTRACTED, policy.EMPTY_INPUT):
        counted[reason] += extractor.stats.stats[f"dropped_{reason}"].total
    assert counted == expected
    assert step.stats.stats["empty"].total == 1

    # Scrapy: plexity/items_empty/<reason>
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                         "PLEXITY_METHOD": METHOD, "PLEXITY_MIN_CHARS": 0})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    for url, page, _ in EMPTY_PAGES:
        asyncio.run(pipeline.process_item({"url": url, "html": page}))
    pipeline.close_spider()
    prefix = "plexity/items_empty/"
    assert Counter({k.removeprefix(prefix): v for k, v in crawler.stats.get_stats().items()
                    if k.startswith(prefix)}) == expected
    assert crawler.stats.get_value("plexity/items_empty") == 3


def test_a_document_passed_through_is_still_no_shorter_than_min_chars():
    # Unfiltered (another language, or none identified with a language -> model map), but an empty
    # page or a scrap of one is no document: min_chars applies as to any other.
    from plexity_plugins.scoring.multilingual import LanguageModels

    judge = policy.DocumentPolicy(PerplexityScorer(method=METHOD), min_chars=60).judge
    assert judge(GERMAN).status == policy.PASSED_THROUGH
    short = judge("Der Stadtrat hat den Haushalt beschlossen, heute.")  # German, 48 characters
    assert (short.status, short.reason, short.result.passthrough) == (policy.DROPPED, policy.TOO_SHORT, "language:de")
    mapped = policy.DocumentPolicy(LanguageModels({"en": "en-default"}, method=METHOD), min_chars=60).judge
    empty = mapped("", input_empty=False)  # HTML whose extraction gave nothing: its language is unknown
    assert (empty.status, empty.reason, empty.result.passthrough) == (policy.DROPPED, policy.NO_TEXT_EXTRACTED,
                                                                      "language:unknown")
    annotated = policy.DocumentPolicy(PerplexityScorer(method=METHOD), min_chars=60, annotate=True).judge
    assert annotated("Der Stadtrat hat den Haushalt beschlossen, heute.").status == policy.PASSED_THROUGH
