"""Pages per second of a scrapy-playwright crawl with the pipeline and without it, paired.

Serves N article pages on 127.0.0.1 whose text a script writes into the page (the HTML as sent holds only the
navigation and footer), and crawls them with scrapy-playwright rendering each in Debian's Chromium
(``PLAYWRIGHT_LAUNCH_OPTIONS = {"executable_path": CHROMIUM}``) and the add-on, alternately with the pipeline and
with ``PLEXITY_ENABLED = False``, each crawl in its own process, then once with the pipeline and Scrapy's own
download handler (the HTML as sent).  Reports per crawl the pages a second (the spider's open to its close: the
browser's start included, the model's load not), the CPU of the crawl's process tree per page (Scrapy, Node,
Chromium, the extraction child) and how many items' text holds the script-written article.

Needs scrapy-playwright (``pip install scrapy-playwright``: 170 MB with Playwright's Node driver; not one of this
project's dependencies) and a Chromium (scripts/ci/50-chromium.sh):

    .venv/bin/python bench/scrapy_playwright.py [--pages 200] [--rounds 3] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from scrapy_crawl import _sentence  # noqa: E402  (bench/scrapy_crawl.py: the long crawl's sentences)

NAV = ("<header><nav><ul><li><a href='/'>Home</a></li><li>News</li><li>Sport</li><li>Weather</li></ul></nav>"
       "<div class='cookie'>We use cookies to improve your experience. Accept all</div></header>")
FOOTER = "<footer><p>Most read: Story 1, Story 2</p><p>© 2026 Example News. All rights reserved.</p></footer>"
MARK = "rendered by script"  # (in each article's first sentence: found in an item's text, the script ran)


def page(n: int) -> bytes:
    """Page `n`: its article's paragraphs are written by a script (a client-rendered site)."""
    rng = random.Random(n)
    paragraphs = [f"Story {n} was {MARK} in the browser, as the town's readers see it."]
    paragraphs += [f"{_sentence(rng)} {_sentence(rng)} {_sentence(rng)}" for _ in range(rng.randint(3, 9))]
    script = ("document.getElementById('story').innerHTML = "
              + json.dumps("".join(f"<p>{p}</p>" for p in paragraphs)) + ";")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Story {n}</title></head><body>{NAV}"
            f"<main><article><h1>Story {n}</h1><div id='story'></div></article></main>{FOOTER}"
            f"<script>{script}</script></body></html>").encode()


class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        number = self.path.strip("/").split(".")[0]
        if not number.isdigit():  # (the browser's /favicon.ico, a request it may leave before the answer)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = page(int(number))
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


SPIDER = '''
import json, time
import scrapy

class Rendered(scrapy.Spider):
    name = "rendered"

    async def start(self):
        for n in range(int(self.pages)):
            yield scrapy.Request(f"{self.base}/{n}.html", meta={"playwright": True})

    def parse(self, response):
        yield {"url": response.url, "html": response.body, "encoding": response.headers.get("Content-Type")}

    def closed(self, reason):
        stats = self.crawler.stats.get_stats()
        seconds = time.time() - stats["start_time"].timestamp()
        with open("stats.json", "w") as out:
            json.dump({"seconds": seconds, "pages": stats.get("response_received_count", 0), "reason": reason,
                       "errors": stats.get("log_count/ERROR", 0)}, out)
'''


def crawl(base: str, pages: int, folder: Path, chromium: str, enabled: bool, browser: bool = True) -> dict:
    """One crawl in its own process: its pages a second, CPU per page and the items holding the article (without
    the browser, `browser=False`: Scrapy's own download handler, the HTML as sent)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spider.py").write_text(SPIDER, encoding="utf-8")
    handler = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    settings = {
        "ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0}, "PLEXITY_ENABLED": enabled,
        "DOWNLOAD_HANDLERS": {"http": handler, "https": handler} if browser else {},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": chromium, "args": ["--no-sandbox", "--disable-gpu"]},
        "FEEDS": {"items.jsonl": {"format": "jsonlines", "fields": ["url", "text"], "overwrite": True}},
        "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "INFO",
    }
    command = [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"base={base}", "-a", f"pages={pages}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={json.dumps(value) if isinstance(value, dict) else value}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode or not (folder / "stats.json").exists():
        raise SystemExit(f"the crawl failed ({done.returncode}):\n{done.stderr[-3000:]}")
    stats = json.loads((folder / "stats.json").read_text())
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    items = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    rendered = sum(MARK in (item.get("text") or "") for item in items) if enabled else None
    return {"pages": stats["pages"], "items": len(items), "seconds": stats["seconds"],
            "pages_per_s": stats["pages"] / stats["seconds"], "cpu_ms_per_page": 1000 * cpu / max(1, stats["pages"]),
            "rendered_text": rendered, "errors": stats["errors"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    runs: dict[str, list[dict]] = {"pipeline": [], "without": []}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):  # (alternated: the machine's load falls on both alike)
            for name, enabled in (("pipeline", True), ("without", False)):
                run = crawl(base, args.pages, Path(scratch) / f"{name}-{round_}", args.chromium, enabled)
                runs[name].append(run)
                print(name, json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in run.items()}),
                      flush=True)
        plain = crawl(base, args.pages, Path(scratch) / "plain", args.chromium, True, browser=False)
    server.shutdown()
    print("| crawl | pages/s (each run) | CPU per page | items holding the script's text |")
    print("|---|---|---|---|")
    for name, done in runs.items():
        rates = ", ".join(f"{run['pages_per_s']:.1f}" for run in done)
        cpu = statistics.median(run["cpu_ms_per_page"] for run in done)
        rendered = (f"{sum(run['rendered_text'] for run in done)} of {sum(run['pages'] for run in done)}"
                    if name == "pipeline" else "–")
        print(f"| {args.pages} pages, {name} | {rates} | {cpu:.0f} ms | {rendered} |")
    print(f"| {args.pages} pages, pipeline, Scrapy's own download (no browser) | {plain['pages_per_s']:.1f} | "
          f"{plain['cpu_ms_per_page']:.0f} ms | {plain['rendered_text']} of {args.pages} |")
    ratios = [w["pages_per_s"] / p["pages_per_s"] for p, w in zip(runs["pipeline"], runs["without"])]
    print(f"without / with the pipeline, per pair: {', '.join(f'{r:.2f}' for r in ratios)}")


if __name__ == "__main__":
    main()
