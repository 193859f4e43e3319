"""Log lines and error lines that quote the input (a file's name, an item's URL, an error that quotes a page) have
its control characters escaped (`plexity_plugins.errors.printable`), in every front end: ESC, BEL and CR written as
they are set a terminal's title, clear it, or forge a log line ("\\rWARNING ...: all good").

Before: the datatrove reader's ``skipped {filepath}: ...`` and ``damaged WARC {filepath}: ...``, the extractor
step's ``skipped (clean_error: {exc})``, the Scrapy pipeline's warnings and dropped items' messages, and the CLI's
``error:`` lines wrote them as they were.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import os
import subprocess
import sys

import pytest
from datatrove.data import Document
from datatrove.utils.logging import logger as loguru_logger

from plexity_plugins.datatrove import WarcHtmlReader
from plexity_plugins.datatrove.extractors import _PlexityExtractor
from warc_corpus import ARTICLE, page, record_bytes

HOSTILE = "\x1b]0;owned\x07\x1b[2J\rWARNING all good"
CONTROLS = "\x1b\x07\r\n"


def _clean(line: str) -> bool:
    return not any(c in line for c in CONTROLS)


@pytest.fixture
def loguru_lines():
    """What datatrove's logger (loguru) writes, one message a line."""
    lines: list[str] = []
    sink = loguru_logger.add(lambda message: lines.append(message.record["message"]), level="DEBUG")
    yield lines
    loguru_logger.remove(sink)


def test_the_reader_escapes_a_file_name_it_skips_or_finds_damaged(tmp_path, loguru_lines):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    os.mkfifo(crawl / f"{HOSTILE}.warc")  # not a regular file: skipped, named
    intact = record_bytes("http://t/a", page(ARTICLE).encode())
    (crawl / f"{HOSTILE}-2.warc.gz").write_bytes(gzip.compress(intact) + gzip.compress(intact)[:60])  # truncated
    list(WarcHtmlReader(str(crawl)).run())
    # (datatrove's own "Reading input file" line is datatrove's: written as its BaseDiskReader writes it)
    said = [line for line in loguru_lines if "owned" in line and not line.startswith("Reading input file")]
    assert any(line.startswith("skipped ") for line in said), loguru_lines
    assert any(line.startswith("damaged WARC ") for line in said), loguru_lines
    assert all(_clean(line) and "\\x1b]0;owned\\x07" in line for line in said), said


def _fails_quoting_the_page(html: str) -> str:
    """Fails on a page with ESC, quoting it (as lxml's and trafilatura's errors quote what they met)."""
    if "\x1b" in html:
        raise ValueError(f"cannot read {html[:60]}")
    return html


class _QuotingExtractor(_PlexityExtractor):
    name = "an extractor whose error quotes the page"
    to_text = staticmethod(_fails_quoting_the_page)


def test_the_extractor_step_escapes_an_error_that_quotes_the_page(loguru_lines):
    doc = Document(text=f"<html><body><p>{HOSTILE}</p></body></html>", id="d1", metadata={})
    assert list(_QuotingExtractor(timeout=10).run([doc])) == []
    said = [line for line in loguru_lines if "clean_error" in line]
    assert said and all(_clean(line) and "\\x1b]0;owned" in line for line in said), loguru_lines


def test_the_scrapy_pipeline_escapes_an_items_url_in_its_warnings_and_drops(caplog):
    import scrapy
    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    class Item(scrapy.Item):
        url = scrapy.Field()
        html = scrapy.Field()
        charset = scrapy.Field()
        text = scrapy.Field()

    settings = {"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags", "PLEXITY_ENCODING_FIELD": "charset"}
    pipeline = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict=settings))
    pipeline.open_spider()
    try:
        with caplog.at_level(logging.DEBUG, logger="plexity_plugins.scrapy"):
            url = f"http://t/{HOSTILE}"
            with pytest.raises(DropItem) as dropped:  # a page without text (said by Scrapy: the message)
                asyncio.run(pipeline.process_item(Item(url=url, html=b"<p></p>", charset=7)))
    finally:
        pipeline.close_spider()
    said = [r.getMessage() for r in caplog.records if "owned" in r.getMessage()]
    assert said and all(_clean(line) for line in said), said  # the warning: the charset field holds an int
    assert "owned" in str(dropped.value) and _clean(str(dropped.value)), str(dropped.value)


def test_the_cli_escapes_an_input_name_in_its_error_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / f"{HOSTILE}.html"),
                             "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "owned" in result.stderr, result.stderr
    assert _clean(result.stderr.rstrip("\n")) and "\\x1b]0;owned" in result.stderr, result.stderr
