"""The memory an extraction child needs for ordinary pages, per extractor: the floor of a lowered ceiling.

    .venv/bin/python bench/extraction_floor.py [--bench DIR] [--extractors learned,dense,...] [--ceilings 128,160]

Two measures on the WCXB dev set's pages (../shared/bench/wcxb-dev/html, 1,497 pages of 7 types), each page decoded
as the front ends decode it (`decode_html`):

- peak: one process per extractor, as an extraction child is (a new Python that imports the extractor and reads
  one page after the other), resets its resident high-water mark before each page (``5`` to /proc/self/clear_refs)
  and reads it after (VmHWM of /proc/self/status): the child's peak for that page, the memory it had kept from the
  pages before included.  Printed: the child at rest (after a first page), the largest peak, the 99th percentile.
- stopped: the real sandbox (`TimeLimitedExtractor`, its child, its look at the child's memory every 20 ms) at each
  of ``--ceilings`` MiB: the pages stopped as ``memory_limit``, and the largest of them.

The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

BENCH = HERE.parent.parent / "shared" / "bench"
EXTRACTORS = ("learned", "dense", "fast", "tags", "trafilatura", "auto")

# The measuring child: argv = extractor, page files (one a line on stdin); one JSON line per page on stdout.
PEAK_CHILD = r'''
import gzip, json, sys
from plexity_plugins.extractors import decode_html, get_extractor
from plexity_plugins.errors import ExtractionError

def hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM:", "VmRSS:")):
                yield int(line.split()[1]) << 10

def reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

extract = get_extractor(sys.argv[1])
extract("<html><body><p>The extractor starts.</p><p>It reads a first page.</p></body></html>")
print(json.dumps({"rest": list(hwm())[1]}), flush=True)
for path in sys.stdin.read().split():
    raw = open(path, "rb").read()
    html = decode_html(gzip.decompress(raw) if path.endswith(".gz") else raw)[0]
    reset()
    try:
        extract(html)
        error = None
    except ExtractionError as exc:
        error = type(exc).__name__
    peak, rss = hwm()
    print(json.dumps({"page": path, "bytes": len(raw), "peak": peak, "after": rss, "error": error}), flush=True)
'''


def pages_of(bench: Path) -> list[Path]:
    return sorted((bench / "wcxb-dev" / "html").glob("*.html*"))


def peaks(extractor: str, pages: list[Path]) -> dict:
    proc = subprocess.run([sys.executable, "-c", PEAK_CHILD, extractor], input="\n".join(map(str, pages)),
                          capture_output=True, text=True, cwd=HERE.parent, check=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    rest, rows = lines[0]["rest"], lines[1:]
    ordered = sorted(rows, key=lambda row: row["peak"])
    top = ordered[-1]
    return {"rest_mib": round(rest / 2**20, 1), "max_peak_mib": round(top["peak"] / 2**20, 1),
            "max_peak_page": Path(top["page"]).name,
            "p99_peak_mib": round(ordered[int(len(rows) * 0.99)]["peak"] / 2**20, 1),
            "pages_over": {mib: sum(row["peak"] > mib << 20 for row in rows) for mib in (128, 160, 192, 224, 256)},
            "pages": len(rows)}


def stopped(extractor: str, pages: list[Path], ceiling_mib: int) -> dict:
    from plexity_plugins.errors import ExtractionError, ExtractionMemoryLimit
    from plexity_plugins.extractors import decode_html
    from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

    sandbox = TimeLimitedExtractor(extractor, timeout=120, memory_limit=ceiling_mib << 20)
    stops = []
    try:
        for path in pages:
            raw = path.read_bytes()
            html = decode_html(gzip.decompress(raw) if path.suffix == ".gz" else raw)[0]
            try:
                sandbox(html)
            except ExtractionMemoryLimit:
                stops.append((path.name, len(html.encode("utf-8", "surrogatepass"))))
            except ExtractionError:
                pass
    finally:
        sandbox.close()
    largest = max(stops, key=lambda stop: stop[1], default=None)
    return {"stopped": len(stops), "largest_stopped": largest and {"page": largest[0], "utf8_bytes": largest[1]},
            "smallest_stopped_bytes": min((size for _, size in stops), default=None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=BENCH)
    parser.add_argument("--extractors", default=",".join(EXTRACTORS))
    parser.add_argument("--ceilings", default="128", help="MiB, comma-separated: the sandbox's pages stopped at each")
    parser.add_argument("--limit", type=int, default=0, help="the first N pages only (a quick look)")
    args = parser.parse_args()
    pages = pages_of(args.bench)[:args.limit or None]
    if not pages:
        sys.exit(f"no pages in {args.bench / 'wcxb-dev' / 'html'}")
    figures = {}
    for extractor in args.extractors.split(","):
        figures[extractor] = peak = peaks(extractor, pages)
        print(f"{extractor}: at rest {peak['rest_mib']} MiB, peak {peak['max_peak_mib']} MiB "
              f"({peak['max_peak_page']}), "
              f"99th percentile {peak['p99_peak_mib']} MiB, pages whose peak is over N MiB {peak['pages_over']}",
              flush=True)
        for ceiling in map(int, args.ceilings.split(",")):
            peak[f"at_{ceiling}_mib"] = result = stopped(extractor, pages, ceiling)
            print(f"  at a {ceiling} MiB ceiling: {result['stopped']} of {len(pages)} pages stopped"
                  + (f", the largest {result['largest_stopped']['page']} ({result['largest_stopped']['utf8_bytes']:,} "
                     f"bytes), the smallest {result['smallest_stopped_bytes']:,} bytes" if result["stopped"] else ""),
                  flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
