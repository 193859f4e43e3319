"""docs/python-api.md's "In Spark or Dask": the same pages cleaned by a plain loop, by PySpark (``local[2]``,
``mapPartitions``) and by Dask (a ``LocalCluster`` of 2 worker processes of 1 thread, a bag's ``map_partitions``),
each partition's extraction child ended with it or set aside for the next partition of its worker.

    .venv/bin/python bench/cluster_engines.py [--pages 1497] [--partitions 16] [--rounds 2] [--bench DIR]

Needs pyspark (and Java: ``apt-get install openjdk-17-jre-headless``) and ``dask[distributed]``, no dependency of
ours.  Input: the wcxb-dev pages of shared/bench, by file name: each partition reads its own files, decodes each as
the front ends do and cleans it with one ``PerplexityScorer(method="trim")`` and one
``TimeLimitedExtractor("learned", timeout=30)`` for the partition (`clean_files`, the docs' `clean_partition` on
files), closed with ``close()`` or ``close(set_aside=True)``.  Each round runs every variant once, alternating, each
in a fresh process, timed around the job (not the engine's start).  Workers' memory: each worker process's RSS and
high-water RSS after the job (its extraction child's not counted).  The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402
from dataset_map import span  # noqa: E402

VARIANTS = [(engine, ending) for engine in ("loop", "spark", "dask") for ending in ("close", "set aside")]


def clean_files(paths):
    """The number of characters kept of each page of a partition (its files' names)."""
    from plexity_plugins import PerplexityScorer
    from plexity_plugins.extractors import decode_html
    from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

    scorer = PerplexityScorer(method="trim")
    extract = TimeLimitedExtractor("learned", timeout=30)
    try:
        for path in paths:
            yield len(scorer.clean(extract(decode_html(gzip.decompress(Path(path).read_bytes()))[0])).text)
    finally:
        extract.close(set_aside=os.environ.get("BENCH_SET_ASIDE") == "1")


def worker_memory(_=None) -> tuple[int, int, int]:
    """(pid, RSS MB, high-water RSS MB) of the calling process."""
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f)
    return os.getpid(), int(status["VmRSS"].split()[0]) // 1024, int(status["VmHWM"].split()[0]) // 1024


def child(engine: str, files: list[str], partitions: int) -> dict:
    if engine == "loop":
        started = time.perf_counter()
        kept = sum(sum(clean_files(files[n::partitions])) for n in range(partitions))
        return {"seconds": time.perf_counter() - started, "kept_chars": kept, "workers": [worker_memory()]}
    if engine == "spark":
        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        rdd = spark.sparkContext.parallelize(files, partitions)
        started = time.perf_counter()
        kept = rdd.mapPartitions(clean_files).sum()
        seconds = time.perf_counter() - started
        workers = sorted(set(rdd.mapPartitions(lambda rows: [worker_memory()]).collect()))
        spark.stop()
        return {"seconds": seconds, "kept_chars": kept, "workers": [w for w in workers if w[2] > 100]}  # (the job's)
    import dask.bag
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        started = time.perf_counter()
        kept = dask.bag.from_sequence(files, npartitions=partitions).map_partitions(clean_files).sum().compute()
        seconds = time.perf_counter() - started
        workers = list(client.run(worker_memory).values())
    return {"seconds": seconds, "kept_chars": kept, "workers": workers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1497)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bench", type=Path, default=figures.BENCH, help="the folder holding wcxb-dev")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    missing = [name for name in ("pyspark", "dask", "distributed") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"this benchmark needs {', '.join(missing)}, no dependency of plexity_plugins: "
              f"pip install pyspark 'dask[distributed]' (and Java for Spark)", file=sys.stderr)
        return 2
    files = [str(path) for path in sorted((args.bench / "wcxb-dev" / "html").glob("*.html.gz"))[:args.pages]]
    if not files:
        raise SystemExit(f"no pages in {args.bench / 'wcxb-dev' / 'html'} (shared/bench beside the repository, "
                         f"or --bench)")
    if args.child:
        print(json.dumps(child(args.child, files, args.partitions)))
        return 0
    environment = dict(os.environ, PYSPARK_PYTHON=sys.executable,  # (Spark's workers: this Python, not PATH's)
                       PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "bench"), os.environ.get("PYTHONPATH", "")]))
    results: dict[str, list[dict]] = {f"{engine}, {ending}": [] for engine, ending in VARIANTS}
    for number in range(1, args.rounds + 1):
        for engine, ending in VARIANTS:  # (alternating: each round runs every variant once)
            proc = subprocess.run([sys.executable, __file__, "--child", engine, "--pages", str(args.pages),
                                   "--partitions", str(args.partitions), "--bench", str(args.bench)],
                                  capture_output=True, text=True, env=dict(environment, BENCH_SET_ASIDE=str(
                                      int(ending == "set aside"))))
            if proc.returncode != 0:
                raise SystemExit(f"{engine} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            results[f"{engine}, {ending}"].append(result)
            print(f"round {number}: {engine}, {ending}: {result['seconds']:.1f} s, {result['kept_chars']:,} chars "
                  f"kept, workers (pid, RSS, peak MB) {result['workers']}, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\n{len(files):,} pages in {args.partitions} partitions, {args.rounds} rounds (best, and range), load "
          f"average {' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} cores:")
    for name, runs in results.items():
        seconds = [run["seconds"] for run in runs]
        print(f"{name:18} {len(files) / min(seconds):6.1f} pages/s  {span(seconds):>13} s  "
              f"{runs[0]['kept_chars']:,} chars kept")
    print(json.dumps({"pages": len(files), "partitions": args.partitions, "rounds": args.rounds,
                      "code": figures.code_version(), "versions": figures.library_versions(("pyspark", "dask")),
                      "load_average": os.getloadavg(), "variants": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
