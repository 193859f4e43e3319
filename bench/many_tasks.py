#!/usr/bin/env python3
"""What a task's start costs: many small WARC files, one task each, run by datatrove's own executor and by ours.

    .venv/bin/python bench/many_tasks.py [--files 200] [--workers 2] [--variants ...]

Writes --files WARC files of 1-3 short articles each (tests/warc_corpus.py's page and article, seeded) and runs the
README's pipeline (WarcHtmlReader -> LearnedExtractor -> PerplexitySentenceFilter -> JsonlWriter) over them:

    datatrove          a library user's script: datatrove's LocalPipelineExecutor(tasks=files, workers=W)
    datatrove-warc     the same with datatrove's WarcReader
    datatrove-8        datatrove's LocalPipelineExecutor(tasks=8, workers=W)
    datatrove-kept     `datatrove`, its pool's processes keeping one extraction child from task to task
                       (keep_between_uses(True) as each imports the script: what plexity's workers do)
    ours               the same script with plexity_plugins.datatrove.LocalTaskExecutor(tasks=files, workers=W)
    plexity-run        plexity run DIR --executor local --workers W (one task per file, its default)

Each in a new process, from an empty output folder; wall time of the whole process, CPU time of it and every process
it started (the extraction children, datatrove's forkserver and pool included).  A task's own cost is the CPU time
past that of `datatrove-8` (the same work in 8 tasks), per task past 8.  Prints a table and, last, one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from end_to_end import PLEXITY, step_documents  # noqa: E402
from throughput import loadavg  # noqa: E402
from warc_corpus import ARTICLE, page, response, write_warc  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

SCRIPT = '''
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader
from plexity_plugins.extractors.sandbox import keep_between_uses

executor, reader, tasks, workers, inputs, out, keep = sys.argv[1:8]
if keep == "1":  # (also in each of the pool's processes, which import this script as __mp_main__)
    keep_between_uses(True)

if __name__ == "__main__":
    Executor = LocalTaskExecutor if executor == "ours" else LocalPipelineExecutor
    Executor(pipeline=[
        (WarcReader if reader == "warc" else WarcHtmlReader)(inputs),
        LearnedExtractor(),
        PerplexitySentenceFilter(exclusion_writer=JsonlWriter(out + "/excluded")),
        JsonlWriter(out + "/documents"),
    ], tasks=int(tasks), workers=int(workers), logging_dir=out + "/logs").run()
'''

# Runs a command as a subreaper: the processes it leaves (datatrove's forkserver and its pool's processes, which the
# script does not wait for) are reaped here, so that their CPU time is counted in this process's children's.
REAPER = '''
import ctypes, os, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
code = subprocess.call(sys.argv[1:])
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
sys.exit(code)
'''


def run_timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """(result, wall seconds, CPU seconds of the command and every process it started, reaped or not)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", REAPER, *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


VARIANTS = ("datatrove", "datatrove-warc", "datatrove-8", "datatrove-kept", "ours", "plexity-run")


def write_files(folder: Path, files: int) -> int:
    """`files` WARC files of 1-3 pages each; returns the pages."""
    folder.mkdir(parents=True)
    rng = random.Random(39)
    sentences = [s + "." for s in ARTICLE.split(". ") if s]
    pages = 0
    for i in range(files):
        records = []
        with tempfile.TemporaryFile() as scratch:
            writer = WARCWriter(scratch, gzip=True)
            for j in range(rng.randint(1, 3)):
                body = page(*(" ".join(rng.sample(sentences, len(sentences))) for _ in range(3))).encode()
                # (the payload type, as Common Crawl's: datatrove's WarcReader sniffs these short pages as text/plain)
                records.append(response(writer, f"http://t/{i}/{j}", body,
                                        warc_headers={"WARC-Identified-Payload-Type": "text/html"}))
        write_warc(folder / f"f{i:04d}.warc.gz", records)
        pages += len(records)
    return pages


def command(variant: str, inputs: Path, out: Path, files: int, workers: int, script: Path) -> list[str]:
    if variant == "plexity-run":
        return [str(PLEXITY), "run", str(inputs), "--output-dir", str(out), "--executor", "local",
                "--workers", str(workers)]
    executor = "ours" if variant == "ours" else "datatrove"
    reader = "warc" if variant == "datatrove-warc" else "html"
    tasks = 8 if variant == "datatrove-8" else files
    keep = "1" if variant == "datatrove-kept" else "0"
    return [sys.executable, str(script), executor, reader, str(tasks), str(workers), str(inputs), str(out), keep]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    args = parser.parse_args()
    variants = args.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants: {', '.join(sorted(unknown))}")
    results = {"files": args.files, "workers": args.workers, "loadavg_start": loadavg(), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        inputs, script = Path(tmp) / "in", Path(tmp) / "pipeline.py"
        script.write_text(SCRIPT)
        results["pages"] = write_files(inputs, args.files)
        print(f"{args.files} files, {results['pages']} pages, --workers {args.workers}", flush=True)
        for variant in variants:
            out = Path(tmp) / f"out-{variant}"
            cmd = command(variant, inputs, out, args.files, args.workers, script)
            before = loadavg()
            proc, wall, cpu = run_timed(cmd)
            if proc.returncode != 0:
                raise SystemExit(f"{variant}: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
            read = step_documents(out / "logs" / "stats.json")
            tasks = 8 if variant == "datatrove-8" else args.files
            results["runs"][variant] = {"tasks": tasks, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                                        "cpu_per_task": round(cpu / tasks, 3), "documents_read": read,
                                        "loadavg_before": before, "loadavg_after": loadavg()}
            print(f"{variant:15} tasks={tasks:5} wall {wall:6.1f} s  CPU {cpu:6.1f} s  ({cpu / tasks:.3f} s a task)"
                  f"  read {read}", flush=True)
    eight = results["runs"].get("datatrove-8")
    if eight and args.files > 8:
        for variant, run in results["runs"].items():
            if run["tasks"] == args.files:
                run["cpu_per_task_past_8"] = round((run["cpu_seconds"] - eight["cpu_seconds"]) / (args.files - 8), 3)
                print(f"{variant:15} a task's own CPU: {run['cpu_per_task_past_8']:.3f} s", flush=True)
    results["loadavg_end"] = loadavg()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
