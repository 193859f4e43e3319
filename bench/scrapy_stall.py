"""How long does cleaning a very large page stall Scrapy's reactor?

Crawls the example project's demo site (examples/scrapy_project/demo_site.py) whose
report page is made ~10 MB, once per PLEXITY_THREADS value, each crawl in its own
process (a reactor cannot be restarted).  A LoopingCall ticks every 10 ms on the reactor
thread during the crawl; a late tick is a stall: the reactor could not download, parse
or schedule anything meanwhile.  Reports the longest stall, the 99th percentile of tick
gaps, the crawl's wall time and the time spent cleaning, for each extractor of --extractors
(the default extractor first).

    .venv/bin/python bench/scrapy_stall.py [--large-mb 10] [--threads 0 1 2] [--extractors learned trafilatura]
                                           [--figures DIR]

A full run (the default arguments) writes the table of docs/scrapy.md to docs/figures/scrapy_stall.md
and the figures to docs/figures/scrapy_stall.json (any run with --figures DIR).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "examples" / "scrapy_project"
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402  (bench/figures.py)

TICK = 0.010


class StallMeter:
    """Scrapy extension: ticks every TICK seconds on the reactor and keeps the gaps."""

    def __init__(self, crawler):
        from twisted.internet.task import LoopingCall
        from scrapy import signals

        self.crawler = crawler
        self.gaps: list[float] = []
        self.last = None
        self.loop = LoopingCall(self.tick)
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def tick(self):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def opened(self, spider):
        self.started = time.perf_counter()
        self.loop.start(TICK, now=True)

    def closed(self, spider, reason):
        self.loop.stop()
        gaps = sorted(self.gaps)
        stats = self.crawler.stats
        self.crawler.stats.set_value("bench/result", {
            "max_stall_s": round(gaps[-1] - TICK, 3) if gaps else None,
            "p99_gap_s": round(gaps[int(0.99 * (len(gaps) - 1))], 3) if gaps else None,
            "crawl_s": round(time.perf_counter() - self.started, 2),
            "clean_s": round(stats.get_value("plexity/clean_seconds", 0), 2),
            "items": stats.get_value("item_scraped_count", 0),
            "dropped": stats.get_value("item_dropped_count", 0),
        })


def child(url: str, threads: int, extractor: str) -> None:
    from scrapy.crawler import CrawlerProcess

    from plexity_example.spiders.site import SiteSpider

    process = CrawlerProcess({
        "ITEM_PIPELINES": {"plexity_plugins.scrapy.PerplexityFilterPipeline": 300},
        "EXTENSIONS": {StallMeter: 500},
        "PLEXITY_THREADS": threads,
        "PLEXITY_EXTRACTOR": extractor,
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
    })
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start_url=url)
    process.start()
    print(json.dumps(crawler.stats.get_value("bench/result")))


def main() -> None:
    from plexity_plugins.extractors import DEFAULT_EXTRACTOR

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large-mb", type=float, default=10.0)
    parser.add_argument("--threads", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--extractors", nargs="+", default=[DEFAULT_EXTRACTOR, "trafilatura"])
    parser.add_argument("--figures", type=Path, default=None,
                        help="write scrapy_stall.md and scrapy_stall.json here (default: docs/figures/ on a full run)")
    parser.add_argument("--child", nargs=3, metavar=("URL", "THREADS", "EXTRACTOR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2])
        return
    from demo_site import build_site, serve

    site = build_site(int(args.large_mb * 1_000_000))
    large_mb = len(site["/reports/annual.html"][1]) / 1e6
    print(f"large page: {large_mb:.1f} MB, tick {TICK * 1000:.0f} ms, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()}", flush=True)
    runs = []
    with serve(site) as url:
        for extractor in args.extractors:
            for threads in args.threads:
                out = subprocess.run([sys.executable, __file__, "--child", url, str(threads), extractor],
                                     capture_output=True, text=True, check=True)
                runs.append(dict(json.loads(out.stdout.strip().splitlines()[-1]), extractor=extractor,
                                 threads=threads))
                print(json.dumps(runs[-1]), flush=True)
    results = {"provenance": figures.provenance("bench/scrapy_stall.py"), "large_page_mb": round(large_mb, 1),
               "pages": len(site), "tick_s": TICK, "cpus": os.cpu_count(), "runs": runs}
    table = render_markdown(results)
    print("\n" + table)
    defaults = {"large_mb": 10.0, "threads": [0, 1, 2], "extractors": [DEFAULT_EXTRACTOR, "trafilatura"]}
    full_run = all(getattr(args, name) == value for name, value in defaults.items())
    figures.publish({"scrapy_stall": table}, results, "scrapy_stall",
                    args.figures or (figures.FIGURES if full_run else None))


def render_markdown(results: dict) -> str:
    """docs/figures/scrapy_stall.md: one row per extractor and PLEXITY_THREADS value."""
    lines = [figures.header_line(results["provenance"]), "",
             "| extractor | `PLEXITY_THREADS` | longest reactor stall | p99 tick gap | crawl "
             f"({results['pages'] - 1} pages + {results['large_page_mb']:.0f} MB) | time in cleaning "
             "| items kept / dropped |",
             "|---|---|---|---|---|---|---|"]
    for r in results["runs"]:
        lines.append(f"| {r['extractor']} | {r['threads']} | {r['max_stall_s']:.2f} s | "
                     f"{r['p99_gap_s'] * 1000:.0f} ms | {r['crawl_s']:.1f} s | {r['clean_s']:.1f} s | "
                     f"{r['items']} / {r['dropped']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
