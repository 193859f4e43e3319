#!/usr/bin/env python3
"""Throughput of `plexity run --executor local` at 1 and 2 workers on the sample data.

    python bench/run_throughput.py [--copies 48] [--extractor tags] [--repeat 2]

The sample WARC (examples/sample.warc.gz) is copied into --copies shards, so that there
are enough tasks to keep two workers busy; every run starts from an empty output
directory.  Wall time includes process start-up, model loading and datatrove's
bookkeeping, i.e. what a user sees.  Prints one line per worker count (best of --repeat).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=48)
    parser.add_argument("--extractor", default="tags")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with open(SAMPLE, "rb") as f:
        pages = sum(1 for r in ArchiveIterator(f) if r.rec_type == "response"
                    and "html" in (r.http_headers.get_header("Content-Type") or ""))
    mb = SAMPLE.stat().st_size * args.copies / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        shards = Path(tmp) / "in"
        shards.mkdir()
        for i in range(args.copies):
            shutil.copy(SAMPLE, shards / f"sample-{i}.warc.gz")
        print(f"{args.copies} shards x {pages} pages = {args.copies * pages} pages ({mb:.2f} MB gzip), "
              f"extractor {args.extractor}")
        for workers in (1, 2):
            best = None
            for _ in range(args.repeat):
                out = Path(tmp) / f"out-{workers}"
                shutil.rmtree(out, ignore_errors=True)
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "run", str(shards), "--output-dir",
                                str(out), "--executor", "local", "--workers", str(workers), "--extractor",
                                args.extractor], check=True, capture_output=True)
                elapsed = time.perf_counter() - started
                best = elapsed if best is None else min(best, elapsed)
            docs = args.copies * pages
            print(f"workers={workers}: {best:.1f} s, {docs / best:.1f} pages/s, {mb / best:.3f} MB/s (gzip WARC)")


if __name__ == "__main__":
    main()
