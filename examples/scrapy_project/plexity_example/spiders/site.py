"""Crawls one site from its start URL(s), following links within it, and yields every
HTML page as {"url": ..., "html": ...} for the perplexity filter to clean.

    scrapy crawl site -a start_url=https://example.org/            # or several, comma-separated
    scrapy crawl site -s START_URLS=https://example.org/,https://example.net/
"""

from __future__ import annotations

from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import UsageError
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor


class SiteSpider(scrapy.Spider):
    name = "site"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        given = getattr(spider, "start_url", None)
        urls = given.split(",") if given else crawler.settings.getlist("START_URLS")
        urls = [url.strip() for url in urls if url.strip()]
        # A crawl that cannot start fails here, before it starts: `scrapy crawl` exits 1 (a CloseSpider
        # from start() closed it as a finished crawl, exit 0, and a script went on to its empty output).
        if not urls:
            _cannot_start(spider, "give a start URL: -a start_url=URL (or the START_URLS setting)")
        for url in urls:
            if not _is_page_url(url):  # (Scrapy's "Missing scheme in request url" came with a traceback)
                _cannot_start(spider, f"{url!r} is not a start URL: give it whole, "
                                      f"-a start_url=https://{url.split('://')[-1].lstrip('/') or 'example.org/'}")
        spider.start_urls = urls
        # Stay on the start URLs' hosts: the offsite middleware drops requests to others.
        spider.allowed_domains = sorted({urlsplit(url).hostname for url in urls})
        spider.link_extractor = LinkExtractor()
        return spider

    async def start(self):
        # Unlike the default, start requests go through the duplicate filter too, so a
        # link back to the home page does not fetch it a second time.
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        if not isinstance(response, HtmlResponse):  # images, PDFs, feeds ...: not pages
            self.crawler.stats.inc_value("site/non_html_responses")
            return
        yield {"url": response.url, "html": response.text}
        for link in self.link_extractor.extract_links(response):
            yield response.follow(link, callback=self.parse)


def _cannot_start(spider: scrapy.Spider, message: str):
    """The crawl stops before it starts, `message` the log's first error; Scrapy then prints the
    exception's traceback from its start-up, and `scrapy crawl` exits 1."""
    spider.logger.error(message)
    raise UsageError(message)


def _is_page_url(url: str) -> bool:
    """Whether `url` names a web page: http or https, and a host."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)
