"""docs/python-api.md's page cleaning in a DataFrame: pandas against polars (eager, and a LazyFrame collected with the
streaming engine), on the same pages: time and peak memory.

    .venv/bin/python bench/frame_map.py [--pages 10000] [--rounds 2] [--bench DIR]

Needs pandas and polars (``pip install pandas polars``: neither is a dependency of ours).  Input (built in a temporary
folder): `--pages` rows of an ``html`` column in a Parquet file (row groups of 1,000), the wcxb-dev pages of
shared/bench decoded as the front ends decode a body, taken in turn until there are enough (1,497 pages, 278 KB on
average), and every 100th row empty.  Each variant reads the file and gives a frame of ``text`` and ``error`` (the
HTML not kept), each page through one function, `clean_page`: a ``TimeLimitedExtractor("learned", timeout=30)`` (an
extraction child) and ``PerplexityScorer(method="trim")``, an empty cell or a page past a limit an ``error``:

  pandas            ``pd.read_parquet``, then ``pd.DataFrame([clean_page(html) for html in df["html"]])``;
  polars            ``pl.read_parquet``, then ``pl.col("html").map_elements(clean_page, return_dtype=Struct,
                    skip_nulls=False)`` unnested;
  polars lazy       the same on ``pl.scan_parquet``, ``collect(engine="streaming")``;
  ..., batches      ``map_batches(..., is_elementwise=True)`` of a function of a batch of cells (polars hands it
                    10,000 rows at a time: without ``is_elementwise``, the whole column in one call);
  ..., 2 processes  "polars lazy" with ``TimeLimitedExtractor(..., processes=2)``: polars calls `clean_page` from
                    several threads at once, and two pages are extracted at a time.

Each round runs every variant once, alternating, each in a fresh process, timed around the read and the map.  Peak
memory: the process's high-water RSS (``VmHWM``; the extraction child's not counted).  The last line of stdout is
one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402
from dataset_map import span  # noqa: E402

VARIANTS = ("pandas", "polars", "polars lazy", "polars lazy, batches", "polars lazy, 2 processes")


def build(path: Path, bench: Path, pages: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from plexity_plugins.extractors import decode_html

    files = sorted((bench / "wcxb-dev" / "html").glob("*.html.gz"))
    if not files:
        raise SystemExit(f"no pages in {bench / 'wcxb-dev' / 'html'} (shared/bench beside the repository, or --bench)")
    html = [decode_html(gzip.decompress(path.read_bytes()))[0] for path in files]
    column = [None if row % 100 == 99 else html[row % len(html)] for row in range(pages)]
    pq.write_table(pa.table({"html": column}), path, row_group_size=1000)


def peak_rss() -> int:
    """This process's high-water RSS in bytes: VmHWM, of its own memory since its exec (``ru_maxrss`` keeps the
    high-water mark of the process that forked it: the builder's pages)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def child(path: Path, variant: str) -> None:
    from plexity_plugins import PerplexityScorer
    from plexity_plugins.errors import ExtractionError, is_missing
    from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

    scorer = PerplexityScorer(method="trim")
    extract = TimeLimitedExtractor("learned", timeout=30, processes=2 if variant.endswith("2 processes") else 1)

    def clean_page(html):
        try:
            if is_missing(html):
                raise ExtractionError("no page")
            return {"text": scorer.clean(extract(html)).text, "error": None}
        except ExtractionError as error:
            return {"text": None, "error": str(error)}

    started = time.perf_counter()
    if variant == "pandas":
        import pandas as pd

        frame = pd.read_parquet(path)
        out = pd.DataFrame([clean_page(html) for html in frame["html"]])
        rows, kept, errors = len(out), int(out["text"].str.len().sum()), int(out["error"].notna().sum())
    else:
        import polars as pl

        struct = pl.Struct({"text": pl.String, "error": pl.String})
        cleaned = pl.col("html").map_elements(clean_page, return_dtype=struct, skip_nulls=False).alias("cleaned")
        if variant == "polars":
            out = pl.read_parquet(path).select(cleaned).unnest("cleaned")
        elif variant.endswith("batches"):
            batch = pl.col("html").map_batches(lambda s: pl.Series([clean_page(html) for html in s], dtype=struct),
                                               return_dtype=struct, is_elementwise=True).alias("cleaned")
            out = pl.scan_parquet(path).select(batch).unnest("cleaned").collect(engine="streaming")
        else:
            out = pl.scan_parquet(path).select(cleaned).unnest("cleaned").collect(engine="streaming")
        rows, kept, errors = out.height, int(out["text"].str.len_chars().sum()), int(out["error"].is_not_null().sum())
    seconds = time.perf_counter() - started
    extract.close()
    print(json.dumps({"seconds": seconds, "peak_mb": peak_rss() / 1e6,
                      "rows": rows, "kept_chars": kept, "errors": errors}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bench", type=Path, default=figures.BENCH, help="the folder holding wcxb-dev")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    missing = [name for name in ("pandas", "polars") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"this benchmark needs {' and '.join(missing)}, no dependency of plexity_plugins: "
              f"pip install {' '.join(missing)}", file=sys.stderr)
        return 2
    if args.child:
        child(args.file, args.child)
        return 0
    results: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pages.parquet"
        build(path, args.bench, args.pages)
        for number in range(1, args.rounds + 1):
            for name in VARIANTS:  # (alternating: each round runs every variant once)
                proc = subprocess.run([sys.executable, __file__, "--child", name, "--file", str(path)],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(f"{name} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                results[name].append(result)
                print(f"round {number}: {name}: {result['seconds']:.1f} s, peak {result['peak_mb']:,.0f} MB, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\n{args.pages:,} pages, {args.rounds} rounds (best, and range), load average "
          f"{' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} cores:")
    print(f"{'variant':25} {'best s':>7} {'range s':>13} {'peak MB':>13} {'rows':>7} {'errors':>6} {'kept chars':>11}")
    for name in VARIANTS:
        seconds, peaks = [r["seconds"] for r in results[name]], [r["peak_mb"] for r in results[name]]
        first = results[name][0]
        print(f"{name:25} {min(seconds):7.1f} {span(seconds):>13} {span(peaks, 0):>13} {first['rows']:7,} "
              f"{first['errors']:6} {first['kept_chars']:11,}")
    print(json.dumps({"pages": args.pages, "rounds": args.rounds, "code": figures.code_version(),
                      "versions": figures.library_versions(("pandas", "polars")), "load_average": os.getloadavg(),
                      "variants": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
