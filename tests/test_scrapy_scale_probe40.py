"""Probe 40: a long Scrapy crawl as a corpus builder runs one (20,000 generated pages served on 127.0.0.1,
bench/scrapy_crawl.py, figures in docs/scrapy.md).  What a crawl that long met, each kept here as a short test on
the real pipeline (a real Crawler, the embedded model, Scrapy's own responses); the measurement itself is the bench
script's, not a test's."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from plexity_plugins.scrapy import PerplexityFilterPipeline


@pytest.fixture(scope="module")
def pipeline():
    pipeline = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_THREADS": 0}))
    pipeline.open_spider()
    yield pipeline
    pipeline.close_spider()


def _served_as_html(body: bytes, n: int) -> dict:
    """The item the example spider yields for a response served as ``text/html``: Scrapy's decoded text."""
    response = HtmlResponse(f"http://127.0.0.1/p/{n}.html", body=body,
                            headers={"Content-Type": "text/html; charset=utf-8"})
    return {"url": response.url, "html": response.text}


@pytest.mark.parametrize("signature", [b"\x89PNG\r\n\x1a\n", b"xx"], ids=["png", "no-signature"])
def test_binary_bytes_served_as_html_are_dropped_as_not_text_once_scrapy_decoded_them(pipeline, signature):
    """Binary bytes served as text/html (a misconfigured server: one page in a thousand of the crawl), given as
    ``response.text``: Scrapy's decoding made every unreadable byte U+FFFD, and the pipeline judged the text's UTF-8,
    where the PNG signature read ``\\xef\\xbf\\xbdPNG`` and each U+FFFD three bytes hid the control codes: one such
    page in twenty (seeds 5, 10 and 13 of these) was extracted, and its garbage kept as 18 "sentences" in the feed.
    Now each is dropped as ``input_not_text``, as its bytes are."""
    for seed in range(16):
        rng = random.Random(seed)
        body = signature + bytes(rng.getrandbits(8) for _ in range(20000))
        with pytest.raises(DropItem, match="input_not_text"):
            asyncio.run(pipeline.process_item(_served_as_html(body, seed)))


def test_a_page_of_text_is_not_taken_for_binary_data(pipeline):
    """The other side: pages of text (Cyrillic, with a tab and form feed, with a few U+FFFD of a bad byte) are
    never dropped as binary data (whatever the extractor then finds in these small pages)."""
    article = ("<p>The city council approved the budget for the new public library on Monday evening, after a long "
               "debate that lasted until midnight.</p>") * 3
    for body in (f"<html><body>{article}</body></html>".encode(),
                 f"<body>\t\f{article}<p>Совет одобрил бюджет новой библиотеки.</p></body>".encode(),
                 b"\xff\xfe bad start " + f"<article>{article}</article>".encode()):
        try:
            asyncio.run(pipeline.process_item(_served_as_html(body, 1)))
        except DropItem as drop:
            assert "input_not_text" not in str(drop)


def test_the_web_api_refuses_a_binary_file_a_client_decoded_and_posted_as_text():
    """The same rule in `plexity serve` (`refuse_binary`, one rule with the pipeline's): a PNG a client read as
    text and posted was judged by its UTF-8, the signature ``\\ufffdPNG`` unknown, and scored as sentences."""
    from web_server import post, start_server, stop_server

    body = b"\x89PNG\r\n\x1a\n" + bytes(random.Random(5).getrandbits(8) for _ in range(20000))
    process, url = start_server([], env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    try:
        status, data, _ = post(url, {"text": body.decode("utf-8", "replace"), "format": "html"})
    finally:
        stop_server(process)
    assert status == 422 and data["error"].startswith('"text" is not text or HTML: its bytes are PNG'), data
