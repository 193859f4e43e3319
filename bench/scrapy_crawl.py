"""A long Scrapy crawl as a corpus builder runs one: memory, throughput, the crawl's end, a pause and resume.

Serves a generated site of --pages pages on 127.0.0.1 from a Twisted web server in its own process (pages built
in memory: the server is not the bottleneck), and crawls it with the example project (examples/scrapy_project,
the add-on enabled, the default `learned` extractor unless --extractor) into a JSON-lines feed with
PLEXITY_DROPPED_FILE.  The pages: articles in boilerplate (~75 %), link listings (dropped too_short), German and
French articles (passed through), empty pages, and every 1,000th page a hostile one (a 2 MB page, 5,000 nested
divs, binary bytes served as text/html).  Every page links to three more, so the spider finds them all.

For each crawl: wall time, items/s, the CPU of the whole process tree (resource.getrusage of children: the crawl
and its extraction child), RSS of the crawl process and of its children sampled every --sample seconds, the
reactor's longest stall (a 10 ms LoopingCall), the downloader's active requests (mean share of
CONCURRENT_REQUESTS), the most items Scrapy's scraper held in its item pipelines at once (pages waiting for the
cleaner) and the share of the ticks it held any, and the accounting: every page the spider yielded is in the feed
or a dropped row of the dropped file, with its reason, and the stats agree.

    .venv/bin/python bench/scrapy_crawl.py --pages 2000 20000 [--without] [--pause-at 0.5] [--out DIR]

--without also crawls each size with PLEXITY_ENABLED=False (the same crawl without the pipeline); --pause-at F
runs the largest size once more with JOBDIR, interrupted (SIGINT, as Ctrl-C once) after F of its pages, then
resumed with the same command.  Prints one JSON line per crawl.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scrapy_stall import TICK, StallMeter  # (bench/scrapy_stall.py: the reactor's meter)

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "examples" / "scrapy_project"

WORDS = {
    "subject": ["The council", "A researcher", "The company", "Our reporter", "The teacher", "The committee",
                "A local farmer", "The museum", "The team", "A spokesperson for the city", "The new owner",
                "Engineers at the plant", "The hospital", "Several residents", "The school board"],
    "verb": ["announced", "described", "reviewed", "criticised", "welcomed", "explained", "questioned",
             "published", "defended", "presented", "postponed", "approved"],
    "object": ["a plan to repair the old bridge", "the results of a two-year study of the river",
               "the budget for next year", "a proposal to open the library on Sundays",
               "new rules for parking in the town centre", "the decision to close the factory",
               "a report on the quality of drinking water", "the design of the new station",
               "changes to the bus timetable", "an exhibition of photographs from the war"],
    "tail": ["on Tuesday evening", "after a long debate", "in a statement to the press",
             "at a public meeting in the town hall", "despite objections from neighbours",
             "before the summer holidays", "in front of a small crowd", "without giving further details"],
}
GERMAN = ["Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen.",
          "Die Bürger fragten nach der Straße zum Fluss, und der Bürgermeister versprach eine Antwort.",
          "Im Frühjahr soll das Gebäude eröffnet werden, sagte die Sprecherin der Stadtverwaltung.",
          "Viele Familien freuen sich auf den Garten und den großen Lesesaal für Kinder."]
FRENCH = ["Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque du quartier.",
          "Les habitants ont posé des questions sur la route qui mène à la rivière et au vieux moulin.",
          "Le maire a promis que les travaux seraient terminés avant la fin de l'année prochaine.",
          "Une exposition de photographies anciennes ouvrira ses portes au mois de septembre."]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS[part]) for part in ("subject", "verb", "object", "tail")) + "."


def page(n: int, pages: int) -> tuple[bytes, bytes]:
    """Page `n` of the site: (Content-Type, body)."""
    rng = random.Random(n)
    links = "".join(f"<li><a href='/p/{k}.html'>Story {k}</a></li>" for k in (3 * n + 1, 3 * n + 2, 3 * n + 3)
                    if k < pages)
    nav = ("<header><nav><ul><li><a href='/p/0.html'>Home</a></li><li>News</li><li>Sport</li><li>Weather</li>"
           "</ul></nav><div class='cookie'>We use cookies to improve your experience. Accept all</div></header>")
    footer = f"<footer><ul>{links}</ul><p>© 2026 Example News. All rights reserved.</p></footer>"
    html = "text/html; charset=utf-8"
    if n and n % 1000 == 500:  # a 2 MB article
        body = "".join(f"<p>{_sentence(rng)} {_sentence(rng)}</p>" for _ in range(9000))
        return html.encode(), f"<html><body>{nav}<article>{body}</article>{footer}</body></html>".encode()
    if n and n % 1000 == 700:  # nested past any parser's depth
        return html.encode(), (f"<html><body>{nav}" + "<div>" * 5000 + "deep" + "</div>" * 5000
                               + f"{footer}</body></html>").encode()
    if n and n % 1000 == 900:  # binary bytes served as HTML (a misconfigured server)
        blob = bytes(rng.getrandbits(8) for _ in range(20000))
        return html.encode(), b"\x89PNG\r\n\x1a\n" + blob + f"<a href='/p/{3 * n + 1}.html'>x</a>".encode()
    kind = n % 20
    if kind in (1, 2, 3):  # a listing: links and headlines
        items = "".join(f"<li><a href='/p/{(n * 7 + i) % pages}.html'>Headline {i}</a></li>" for i in range(30))
        return html.encode(), f"<html><body>{nav}<ul>{items}</ul>{footer}</body></html>".encode()
    if kind in (4, 5):  # another language
        lines = GERMAN if kind == 4 else FRENCH
        lang = "de" if kind == 4 else "fr"
        text = "".join(f"<p>{rng.choice(lines)} {rng.choice(lines)}</p>" for _ in range(6))
        return html.encode(), (f"<html lang='{lang}'><body>{nav}<article><h1>Nachrichten</h1>{text}</article>"
                               f"{footer}</body></html>").encode()
    if kind == 6:  # a page without text
        return html.encode(), f"<html><body>{nav}{footer}</body></html>".encode()
    text = "".join(f"<p>{_sentence(rng)} {_sentence(rng)} {_sentence(rng)}</p>" for _ in range(rng.randint(3, 9)))
    return html.encode(), (f"<html><head><title>Story {n}</title></head><body>{nav}<main><article><h1>Story {n}"
                           f"</h1>{text}</article></main><aside>Most read: Story 1, Story 2</aside>{footer}"
                           f"</body></html>").encode()


def serve(pages: int, port_file: str) -> None:
    """The site, from Twisted's web server (one process, the pages built on first request and kept)."""
    from twisted.internet import reactor
    from twisted.web import resource as web, server

    cache: dict[int, tuple[bytes, bytes]] = {}

    class Site(web.Resource):
        isLeaf = True

        def render_GET(self, request):
            path = request.path.decode()
            if path == "/robots.txt":
                request.setHeader(b"content-type", b"text/plain")
                return b"User-agent: *\nAllow: /\n"
            if path == "/":
                path = "/p/0.html"
            try:
                n = int(path.removeprefix("/p/").removesuffix(".html"))
            except ValueError:
                n = -1
            if not 0 <= n < pages:
                request.setResponseCode(404)
                return b"not found"
            if n not in cache:
                cache[n] = page(n, pages)
            content_type, body = cache[n]
            request.setHeader(b"content-type", content_type)
            return body

    port = reactor.listenTCP(0, server.Site(Site()), interface="127.0.0.1")
    Path(port_file).write_text(f"http://127.0.0.1:{port.getHost().port}/")
    reactor.run()


class CrawlMeter(StallMeter):
    """Scrapy extension (bench only): `StallMeter`'s reactor gaps, and the downloader's active requests, every TICK."""

    def __init__(self, crawler):
        super().__init__(crawler)
        self.active: list[int] = []
        self.held: list[int] = []

    def tick(self):
        super().tick()
        engine = self.crawler.engine
        if engine is not None and engine.downloader is not None:
            self.active.append(len(engine.downloader.active))
            if engine.scraper.slot is not None:  # (items in the item pipelines: waiting for the cleaner)
                self.held.append(engine.scraper.slot.itemproc_size)

    def closed(self, spider, reason):
        if self.loop.running:
            self.loop.stop()
        gaps = sorted(self.gaps)
        limit = self.crawler.settings.getint("CONCURRENT_REQUESTS")
        self.crawler.stats.set_value("bench/result", {
            "max_stall_s": round(gaps[-1] - TICK, 3) if gaps else None,
            "p99_gap_s": round(gaps[int(0.99 * (len(gaps) - 1))], 3) if gaps else None,
            "mean_active_requests": round(sum(self.active) / max(1, len(self.active)), 2),
            "most_items_held": max(self.held, default=0),
            "items_held_share": round(sum(1 for held in self.held if held) / max(1, len(self.held)), 3),
            "concurrent_requests": limit})


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as kids:
            return [int(kid) for kid in kids.read().split()]
    except OSError:
        return []


def crawl(url: str, folder: Path, *, enabled: bool = True, extractor: str = "learned", sample: float = 2.0,
          extra: list[str] = (), interrupt_after_items: int | None = None) -> dict:
    """One `scrapy crawl site` of the example project into `folder`; the figures and accounting."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "bench"), str(PROJECT)])}
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={url}",
               "-o", str(folder / "items.jsonl"), "-s", f"STATS_JSON_FILE={folder / 'stats.json'}",
               "-s", f"LOG_FILE={folder / 'crawl.log'}", "-s", "TELNETCONSOLE_ENABLED=False",
               "-s", f"PLEXITY_EXTRACTOR={extractor}", "-s", f"PLEXITY_ENABLED={enabled}",
               "-s", "FEED_EXPORT_FIELDS=" + json.dumps(["url", "text", "plexity"]),
               "-s", 'EXTENSIONS={"plexity_example.extensions.JsonStatsDump": 500, "scrapy_crawl.CrawlMeter": 0}',
               *extra]
    if enabled:
        command += ["-s", f"PLEXITY_DROPPED_FILE={folder / 'dropped.jsonl'}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = []  # (seconds, crawl RSS, children's RSS, items in the feed)
    interrupted = False
    while process.poll() is None:
        time.sleep(sample)
        kids = _children(process.pid)
        lines = _count_lines(folder / "items.jsonl")
        samples.append((round(time.perf_counter() - started, 1), _rss(process.pid), sum(map(_rss, kids)), lines))
        if interrupt_after_items is not None and not interrupted and lines >= interrupt_after_items:
            process.send_signal(signal.SIGINT)  # Ctrl-C once: the crawl pauses, its JOBDIR kept
            interrupted = True
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = json.loads((folder / "stats.json").read_text()) if (folder / "stats.json").exists() else {}
    items = [json.loads(line) for line in (folder / "items.jsonl").open()] if (folder / "items.jsonl").exists() else []
    dropped = []
    if (folder / "dropped.jsonl").exists():
        dropped = [row for row in map(json.loads, (folder / "dropped.jsonl").open()) if "detail" in row]
    seen = stats.get("plexity/items_seen") if enabled else stats.get("item_scraped_count")
    n = len(samples)
    return {
        "enabled": enabled, "exit": process.returncode, "finish_reason": stats.get("finish_reason"),
        "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "items_seen": seen,
        "items_per_s": round((seen or 0) / wall, 1), "cpu_ms_per_item": round(1000 * cpu / max(1, seen or 0), 2),
        "clean_s": round(stats.get("plexity/clean_seconds", 0), 1),
        "rss_mb": {"first": round(samples[min(2, n - 1)][1] / 1e6) if n else None,
                   "mid": round(samples[n // 2][1] / 1e6) if n else None,
                   "last": round(samples[-1][1] / 1e6) if n else None,
                   "peak": round(max(s[1] for s in samples) / 1e6) if n else None},
        "child_rss_mb_peak": round(max(s[2] for s in samples) / 1e6) if n else None,
        "feed_items": len(items), "feed_urls_unique": len({item["url"] for item in items}),
        "dropped_items_in_file": len(dropped), "dropped_reasons_in_file": _tally(row["reason"] for row in dropped),
        "item_scraped_count": stats.get("item_scraped_count"), "item_dropped_count": stats.get("item_dropped_count"),
        "dropped_stats": {key.split("/")[-1]: value for key, value in stats.items()
                          if key.startswith("plexity/items_dropped/")},
        "passthrough": stats.get("plexity/items_passthrough"),
        "responses": stats.get("response_received_count"), "meter": stats.get("bench/result"),
        "log_tail": (folder / "crawl.log").read_text(errors="replace").splitlines()[-3:]
        if (folder / "crawl.log").exists() else [],
        "samples": samples,
    }


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as feed:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: feed.read(1 << 20), b""))
    except OSError:
        return 0


def _tally(values) -> dict:
    counts: dict = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--without", action="store_true", help="also crawl without the pipeline")
    parser.add_argument("--extractor", default="learned")
    parser.add_argument("--pause-at", type=float, default=None)
    parser.add_argument("--sample", type=float, default=2.0)
    parser.add_argument("--extra", nargs="*", default=[], help="more -s NAME=VALUE settings for every crawl")
    parser.add_argument("--out", default=None)
    parser.add_argument("--serve", nargs=2, metavar=("PAGES", "PORT_FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return
    out = Path(args.out or tempfile.mkdtemp(prefix="scrapy-crawl-"))
    out.mkdir(parents=True, exist_ok=True)
    extra = [part for setting in args.extra for part in ("-s", setting)]
    for pages in args.pages:
        port_file = out / f"site-{pages}.url"
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(pages), str(port_file)])
        try:
            while not port_file.exists() or not port_file.read_text():
                if server.poll() is not None:
                    raise SystemExit(f"the site's server exited ({server.returncode})")
                time.sleep(0.1)
            url = port_file.read_text()
            runs = [("with", True)] + ([("without", False)] if args.without else [])
            for name, enabled in runs:
                result = crawl(url, out / f"{pages}-{name}", enabled=enabled, extractor=args.extractor,
                               sample=args.sample, extra=extra)
                print(json.dumps({"pages": pages, "run": name, **{k: v for k, v in result.items()
                                                                  if k != "samples"}}), flush=True)
                (out / f"{pages}-{name}" / "samples.json").write_text(json.dumps(result["samples"]))
            if args.pause_at and pages == max(args.pages):
                job = ["-s", f"JOBDIR={out / f'{pages}-job' / 'job'}"]
                first = crawl(url, out / f"{pages}-job", extractor=args.extractor, sample=args.sample,
                              extra=extra + job, interrupt_after_items=int(args.pause_at * pages * 0.6))
                print(json.dumps({"pages": pages, "run": "paused", **{k: v for k, v in first.items()
                                                                      if k != "samples"}}), flush=True)
                second = crawl(url, out / f"{pages}-job", extractor=args.extractor, sample=args.sample,
                               extra=extra + job)
                print(json.dumps({"pages": pages, "run": "resumed", **{k: v for k, v in second.items()
                                                                       if k != "samples"}}), flush=True)
        finally:
            server.terminate()
            server.wait()
    print(f"# folders in {out}", flush=True)


if __name__ == "__main__":
    main()
