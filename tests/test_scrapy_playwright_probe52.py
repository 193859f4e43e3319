"""Probe 52: the pipeline under scrapy-playwright, as Scrapy users crawl pages a script writes (docs/scrapy.md,
JavaScript-rendered pages).  scrapy-playwright is not one of this project's dependencies (170 MB with Playwright's
Node driver): the probe's crawls with it and Debian's Chromium are recorded in docs/scrapy.md
(bench/scrapy_playwright.py), and what it found of ours is reproduced here with plain Scrapy, a real crawl of
127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import QuietHandler, http_server

REPO = Path(__file__).resolve().parent.parent

ARTICLE = ("<html><body><nav>Home | News | Contact</nav><article><p>The council approved the budget for the new "
           "library after a long debate on Tuesday evening, and residents asked how the old bridge would be "
           "repaired.</p></article></body></html>").encode()


class Site(QuietHandler):
    def _answer(self, body: bool):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(ARTICLE)))
        self.end_headers()
        if body:
            self.wfile.write(ARTICLE)


# A spider as one of scrapy-playwright's is written, `page.content()` (a coroutine) given without `await`: here the
# page's content is a coroutine of the spider's own, as Playwright's Page.content is.
NOT_AWAITED = '''
import scrapy


class Page:
    def __init__(self, html):
        self.html = html

    async def content(self):
        return self.html


class Rendered(scrapy.Spider):
    name = "rendered"
    start_urls = [URL]

    async def parse(self, response):
        page = Page(response.text)
        yield {"url": response.url, "html": page.content()}
'''


def crawl(directory: Path, spider: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`scrapy runspider` of `spider` (URL: the site's) with the add-on, and its stats."""
    with http_server(Site) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/story.html"
        (directory / "spider.py").write_text(f"URL = {url!r}\n" + spider, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-s", "TELNETCONSOLE_ENABLED=False",
             "-s", 'ADDONS={"plexity_plugins.scrapy.PlexityAddon": 0}', "-s", "STATS_DUMP=True",
             "-s", "PLEXITY_DROPPED_FILE=dropped.jsonl", "-s", "PLEXITY_EXTRACTOR=tags"],
            cwd=directory, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for line in (directory / "dropped.jsonl").read_text().splitlines()]
    return done, {row["reason"]: row for row in rows if "detail" in row}


def test_a_page_content_not_awaited_is_dropped_saying_to_await_it(tmp_path):
    """`{"html": page.content()}` in a scrapy-playwright spider gives the pipeline a coroutine, not the page: it was
    dropped as "field 'html' holds coroutine, not str or bytes", which does not say what was wrong (the callback
    forgot `await`); now the line says to await it, naming the coroutine."""
    done, dropped = crawl(tmp_path, NOT_AWAITED)
    assert done.returncode == 0, done.stderr[-3000:]
    said = "field 'html' holds coroutine, not str or bytes (Page.content() not awaited): await it in an async def"
    assert said in dropped["input_not_text"]["detail"]
    assert f"Dropped: plexity: input_not_text: {said}" in done.stderr
    assert "'plexity/items_dropped/input_not_text': 1" in done.stderr
