"""Writes the crawl's stats to a JSON file when the spider closes (STATS_JSON_FILE), so
scripts and tests read them without parsing the log."""

from __future__ import annotations

import json

from scrapy import signals
from scrapy.exceptions import NotConfigured


class JsonStatsDump:
    def __init__(self, crawler, path: str):
        self.crawler = crawler
        self.path = path

    @classmethod
    def from_crawler(cls, crawler):
        path = crawler.settings.get("STATS_JSON_FILE")
        if not path:
            raise NotConfigured("STATS_JSON_FILE is not set")
        extension = cls(crawler, path)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider, reason):
        stats = dict(self.crawler.stats.get_stats())
        stats["finish_reason"] = reason
        with open(self.path, "w", encoding="utf-8") as out:
            json.dump(stats, out, indent=2, sort_keys=True, default=str)
