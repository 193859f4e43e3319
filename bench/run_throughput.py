#!/usr/bin/env python3
"""Throughput of `plexity run --executor local` at 1 and 2 workers on the sample data.

    .venv/bin/python bench/run_throughput.py [--copies 48] [--extractor default] [--repeat 2] [--quick]
                                             [--figures DIR]

The sample WARC (examples/sample.warc.gz) is copied into --copies shards, so that there
are enough tasks to keep two workers busy; every run starts from an empty output
directory.  ``--extractor default`` (the default) gives no --extractor, as a user types it;
any other name runs with --extractor NAME.  Wall time includes process start-up, model loading
and datatrove's bookkeeping, i.e. what a user sees; the best of --repeat runs per worker count
counts, with its CPU seconds (the command's processes).  Every run must read every page (its
stats.json): the script stops if one reads another number.

A full run (no --quick, the default --copies and --extractor) writes the table of docs/datatrove.md
to docs/figures/run_throughput.md and the figures to docs/figures/run_throughput.json (any run with
--figures DIR).  The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import figures  # noqa: E402
from end_to_end import PLEXITY, run_timed, step_documents  # noqa: E402
from throughput import loadavg  # noqa: E402
from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from plexity_plugins.extractors import DEFAULT_EXTRACTOR, EXTRACTORS  # noqa: E402

SAMPLE = REPO / "examples" / "sample.warc.gz"
WORKERS = (1, 2)


def html_pages(warc: Path) -> int:
    """The HTML responses of a WARC: the pages `plexity run` reads from it."""
    with open(warc, "rb") as f:
        return sum(1 for r in ArchiveIterator(f) if r.rec_type == "response"
                   and "html" in (r.http_headers.get_header("Content-Type") or ""))


def run(shards: Path, out: Path, workers: int, extractor: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(PLEXITY), "run", str(shards), "--output-dir", str(out), "--executor", "local",
           "--workers", str(workers), *([] if extractor == "default" else ["--extractor", extractor])]
    load_before = loadavg()
    proc, seconds, cpu = run_timed(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    stats = out / "logs" / "stats.json"
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "command": " ".join(["plexity", *cmd[1:]]),
            "documents_read": step_documents(stats), "documents_written": step_documents(stats, "WRITER"),
            "loadavg_before": load_before, "loadavg_after": loadavg()}


def extractor_label(results: dict) -> str:
    if results["extractor"] == "default":
        return f"the default extractor ({results['default_extractor']}; no --extractor)"
    return f"`--extractor {results['extractor']}`"


def render_markdown(results: dict, header: str) -> str:
    """docs/figures/run_throughput.md: the table of docs/datatrove.md's "Throughput", from `results`."""
    rows = [[w, f"{r['seconds']:.1f} s", f"{r['pages_per_s']:.0f}", f"{r['mb_per_s']:.2f}", f"{r['cpu_seconds']:.1f} s"]
            for w, r in sorted(results["runs"].items(), key=lambda item: int(item[0]))]
    lines = ["| workers | wall time | pages/s | MB/s (gzip WARC) | CPU time |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    best = f"the best of {results['repeat']} runs" if results["repeat"] > 1 else "one run"
    note = (f"`plexity run --executor local --workers W` with {extractor_label(results)} and the embedded model "
            f"on {results['copies']} copies of examples/sample.warc.gz: {results['pages']:,} pages, "
            f"{results['megabytes']:.2f} MB gzip, every one read by every run. Wall time of the whole command, "
            f"start-up and model loading included, {best} per worker count; CPU time: that run's processes, "
            f"user + system. Two workers: {results['speedup']:.2f}× the speed of one. "
            f"{results['cpus']} CPUs, load average {results['loadavg_start']} at the start.")
    return "\n".join([header, "", *lines, "", note])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=48)
    parser.add_argument("--extractor", default="default", choices=["default", *EXTRACTORS],
                        help=f"default: no --extractor, i.e. {DEFAULT_EXTRACTOR}")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 copies, one run per worker count")
    parser.add_argument("--figures", type=Path, default=None,
                        help="write run_throughput.md and run_throughput.json here (default: docs/figures/ on a full "
                             "run: no --quick, the default --copies and --extractor)")
    args = parser.parse_args()
    full_run = not args.quick and all(getattr(args, name) == parser.get_default(name)
                                      for name in ("copies", "extractor"))
    if args.quick:
        args.copies, args.repeat = 4, 1
    provenance = figures.provenance("bench/run_throughput.py")  # before the run: the code it ran
    pages = html_pages(SAMPLE) * args.copies
    mb = SAMPLE.stat().st_size * args.copies / 1e6
    results = {"provenance": provenance, "quick": args.quick, "extractor": args.extractor,
               "default_extractor": DEFAULT_EXTRACTOR, "copies": args.copies, "pages": pages,
               "megabytes": round(mb, 2), "repeat": args.repeat, "cpus": os.cpu_count(),
               "loadavg_start": loadavg(), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        shards = Path(tmp) / "in"
        shards.mkdir()
        for i in range(args.copies):
            shutil.copy(SAMPLE, shards / f"sample-{i}.warc.gz")
        print(f"{args.copies} shards: {pages} pages ({mb:.2f} MB gzip), {extractor_label(results)}", flush=True)
        for workers in WORKERS:
            tries = [run(shards, Path(tmp) / f"out-{workers}", workers, args.extractor) for _ in range(args.repeat)]
            misread = [t for t in tries if t["documents_read"] != pages]
            if misread:
                raise SystemExit(f"{misread[0]['command']} read {misread[0]['documents_read']} pages, not {pages}")
            best = min(tries, key=lambda t: t["seconds"])
            best.update(pages_per_s=round(pages / best["seconds"], 1), mb_per_s=round(mb / best["seconds"], 3),
                        seconds_all=[t["seconds"] for t in tries])
            results["runs"][str(workers)] = best
            print(f"workers={workers}: {best['seconds']:.1f} s, {best['pages_per_s']:.1f} pages/s, "
                  f"{best['mb_per_s']:.3f} MB/s (gzip WARC), CPU {best['cpu_seconds']:.1f} s", flush=True)
    results["speedup"] = round(results["runs"]["1"]["seconds"] / results["runs"]["2"]["seconds"], 2)
    table = render_markdown(results, figures.header_line(provenance) + (" QUICK RUN." if args.quick else ""))
    print("\n" + table)
    figures.publish({"run_throughput": table}, results, "run_throughput",
                    args.figures or (figures.FIGURES if full_run else None))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
