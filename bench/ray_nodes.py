#!/usr/bin/env python3
"""`plexity run --executor ray` on Ray clusters of 1, 2 and 3 nodes on this machine: pages/s.

    .venv/bin/python bench/ray_nodes.py [--dev-dir ../shared/bench/articles-dev] [--pages 1520]
        [--files 12] [--extractor auto] [--nodes 1 2 3] [--repeat 4] [--write docs/figures/ray.md]

The input is bench/end_to_end.py's: the dev benchmark pages (read in place) written again and
again as HTTP response records into --files gzipped WARCs (cached under
~/.cache/plexity_plugins/bench/e2e/, never in the repository).  For each node count a Ray
cluster is started with `ray.cluster_utils.Cluster` (one raylet per node, all on this machine)
and `plexity run DIR --executor ray --ray-address ADDRESS --tasks FILES --workers 2` is timed
(wall clock of the whole command: connecting, every task's actor and process, the model
loads, datatrove's bookkeeping; not the cluster's start).  Every configuration runs two tasks
at a time on this machine's two cores (1 node: 2 CPUs; 2 nodes: 1 CPU each; 3 nodes: 1 CPU
each, at most 2 tasks at once), so the ratio of the figures shows what more nodes cost, not
what they would gain on more machines.  The local executor (--workers 2) is the reference.
--repeat rounds run every configuration once each, in turn (in the reverse order every other
round); the median run of each counts (this machine is shared: the table lists every run and
the load average before it).  "steps' time" is datatrove's time of every step summed over the
tasks (stats.json): the work itself; "outside the steps" is the wall time less that work spread
over the two tasks at a time: start-ups, model loads, scheduling, waiting.

Each run is checked: every WARC record read once (the reader's count = --pages) and every
document written at most once (no document id twice in documents/ + excluded/, and their
number = what the extractor forwarded).  Ray's memory monitor is off (it kills workers
when the *machine* is 95% full, which other programs on a shared machine can make it).
--write puts the table into a Markdown file, with a header line naming the command, the
commit and the date.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from end_to_end import build_warcs  # noqa: E402
from throughput import DEV_DIR, loadavg  # noqa: E402

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli", "run"]
CONCURRENT = 2  # tasks at a time, in every configuration: this machine's two cores


def check_output(out: Path, pages: int) -> dict:
    """Every record read once, every document written at most once; the counts."""
    merged = json.loads((out / "logs" / "stats.json").read_text())
    stats = {step["name"].split(": ", 1)[-1]: {k: v["total"] if isinstance(v, dict) else v
                                               for k, v in step["stats"].items()} for step in merged}
    reader = next(v for k, v in stats.items() if "WARC HTML" in k)
    extractor = next(v for k, v in stats.items() if k.startswith(("⛏", "⚡", "🏷")))
    ids = []
    for folder in ("documents", "excluded"):
        for path in sorted((out / folder).glob("*.jsonl.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                ids += [json.loads(line)["id"] for line in f]
    if reader["records"] != pages:
        raise SystemExit(f"{out}: {reader['records']} records read, not {pages}")
    if len(ids) != len(set(ids)) or len(ids) != extractor.get("forwarded", 0):
        raise SystemExit(f"{out}: {len(ids)} documents written ({len(set(ids))} distinct), "
                         f"the extractor forwarded {extractor.get('forwarded')}")
    # datatrove's time of every step, summed over tasks: the work, without what lies between tasks
    step_seconds = sum(step.get("time_stats", {}).get("total", 0) for step in merged)
    return {"records": reader["records"], "documents": len(ids), "step_seconds": round(step_seconds, 1)}


def timed_run(warcs: Path, out: Path, files: int, extractor: str, extra: list[str]) -> tuple[float, str]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*PLEXITY, str(warcs), "-o", str(out), "--tasks", str(files), "--workers", str(CONCURRENT),
           "--extractor", extractor, *extra]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def run_on_cluster(nodes: int, warcs: Path, out: Path, pages: int, files: int, extractor: str) -> dict:
    from ray.cluster_utils import Cluster

    cpus = [CONCURRENT] if nodes == 1 else [1] * nodes
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus[0],
                                                            "_system_config": {"memory_monitor_refresh_ms": 0}})
    try:
        for n in cpus[1:]:
            cluster.add_node(num_cpus=n)
        cluster.wait_for_nodes()
        load = loadavg()
        seconds, stdout = timed_run(warcs, out, files, extractor,
                                    ["--executor", "ray", "--ray-address", cluster.address, "--mem-per-cpu-gb", "1"])
        if f"{nodes} node(s)" not in stdout:
            raise SystemExit(f"the run did not see {nodes} nodes:\n{stdout[-2000:]}")
    finally:
        cluster.shutdown()
    return {"nodes": nodes, "cpus": cpus, "seconds": seconds, "loadavg_before": load, **check_output(out, pages)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    parser.add_argument("--pages", type=int, default=1520)
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--extractor", default="auto")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--repeat", type=int, default=4, help="rounds; the median run of each configuration counts")
    parser.add_argument("--write", type=Path, default=None, help="the Markdown table goes here too")
    args = parser.parse_args()
    if not (args.dev_dir / "html").is_dir():
        print(f"no dev pages in {args.dev_dir / 'html'} (give --dev-dir)", file=sys.stderr)
        return 2
    warcs = build_warcs(args.dev_dir, args.pages, args.files)
    with tempfile.TemporaryDirectory() as tmp:
        # round after round, every configuration once per round, in the reverse order every
        # other round: a slow spell of this shared machine (or a steady change of its load)
        # falls on one run of each, not on all runs of one
        configs = ["local", *args.nodes]
        runs = {config: [] for config in configs}
        for round_ in range(args.repeat):
            for config in configs if round_ % 2 == 0 else configs[::-1]:
                if config == "local":
                    load = loadavg()
                    seconds, _ = timed_run(warcs, Path(tmp) / "local", args.files, args.extractor,
                                           ["--executor", "local"])
                    row = {"nodes": "local executor", "cpus": [CONCURRENT], "seconds": seconds,
                           "loadavg_before": load, **check_output(Path(tmp) / "local", args.pages)}
                else:
                    row = run_on_cluster(config, warcs, Path(tmp) / f"ray-{config}", args.pages, args.files,
                                         args.extractor)
                print(json.dumps(row), flush=True)
                runs[config].append(row)
    # the median run of each: on a shared machine one quiet minute can make any configuration's
    # best run (every run is listed)
    median = {config: statistics.median(r["seconds"] for r in rows) for config, rows in runs.items()}
    steps = {config: statistics.median(r["step_seconds"] for r in rows) for config, rows in runs.items()}
    one = median.get(1)
    lines = ["| run | CPUs per node | median wall s | pages/s | vs 1 node | steps' time, median s "
             "| outside the steps, s | every run, s | load avg (1 min) before each |",
             "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for config, rows in runs.items():
        name = "local executor, 2 workers" if config == "local" else f"Ray, {config} node{'s' * (config > 1)}"
        ratio = f"{one / median[config]:.2f}" if one and config != "local" else ""
        lines.append(f"| {name} | {', '.join(map(str, rows[0]['cpus']))} | {median[config]:.1f} | "
                     f"{args.pages / median[config]:.1f} | {ratio} | {steps[config]:.1f} | "
                     f"{median[config] - steps[config] / CONCURRENT:.1f} | "
                     f"{', '.join(format(r['seconds'], '.1f') for r in rows)} | "
                     f"{', '.join(str(r['loadavg_before'][0]) for r in rows)} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=REPO).stdout.strip()
        command = " ".join(["bench/ray_nodes.py", *sys.argv[1:]])
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(
            f"<!-- written by `{command}` at commit {commit}, {date} -->\n\n"
            f"`plexity run --executor ray` on {args.pages} pages ({args.files} WARC files, {args.files} tasks, "
            f"extractor {args.extractor}), two tasks at a time on this machine's {os.cpu_count()} cores; "
            f"every record read once and every document written once in each run; the median of {args.repeat} "
            f"rounds.\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
