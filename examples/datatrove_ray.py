#!/usr/bin/env python3
"""Remove boilerplate from WARC files with a datatrove pipeline on a Ray cluster.

    python examples/datatrove_ray.py [INPUT] [OUTPUT_DIR] [--address ADDRESS] [--tasks N]
        [--cpus-per-task C] [--mem-per-cpu-gb G]

INPUT is a folder of .warc / .warc.gz files (searched recursively; default: examples/, i.e.
the sample WARC), local or an fsspec URL (s3://bucket/crawl/, hf://datasets/..., https://...:
each task reads its files where it runs; credentials: docs/ray.md).  --address is the cluster
to run on ("auto" for one started with `ray start` on this machine, HOST:6379, ray://HOST:10001;
default: $RAY_ADDRESS, else the one `ray start` started here, else a Ray of this machine's
CPUs started for the run).  A cluster that does not answer there (one `ray start` left its
address of and that has stopped since) is one line and exit status 2, before Ray starts.

Each task is a Ray task holding --cpus-per-task CPUs and that many times --mem-per-cpu-gb GB;
it reads its share of the WARC files, extracts the text with the dense extractor (the page's
declared or densest item), removes high-perplexity sentences with the
embedded English model, and writes:

    OUTPUT_DIR/documents/00000.jsonl.gz ...   cleaned documents (text + plexity_* metadata)
    OUTPUT_DIR/excluded/00000.jsonl.gz ...    documents dropped (metadata.filter_reason)
    OUTPUT_DIR/logs/                          per-task logs and stats, completions/, stats.json

OUTPUT_DIR must be on a filesystem every node sees (here, one machine: any folder).  A task
whose node dies is run again on another node; running this again after an interrupted run
runs only the tasks without a completion marker in OUTPUT_DIR/logs/completions.
plexity_plugins (with its model) must be installed on every node, at the same Ray version.
"""

import argparse
import sys
from pathlib import Path

import ray
from datatrove.pipeline.writers import JsonlWriter

from plexity_plugins.datatrove import (DenseExtractor, NoInputFiles, PerplexitySentenceFilter, RayTaskExecutor,
                                       SettingsChanged, WarcHtmlReader)
from plexity_plugins.datatrove.ray_executor import check_cluster_ray_would_join, check_ray_address

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("input", nargs="?", default=str(HERE))
    parser.add_argument("output_dir", nargs="?", default="cleaned-ray")
    parser.add_argument("--address", default=None, help="the Ray cluster (default: $RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--tasks", type=int, default=4, help="shards of the input files")
    parser.add_argument("--cpus-per-task", type=int, default=1)
    parser.add_argument("--mem-per-cpu-gb", type=float, default=2)
    args = parser.parse_args()
    out = Path(args.output_dir).resolve()

    try:  # (a cluster that does not answer: one line now, where ray.init tries again for some twelve minutes)
        if args.address:
            check_ray_address(args.address, give="give its head's address (--address, $RAY_ADDRESS)")
        else:  # $RAY_ADDRESS, or the cluster the last `ray start` here left its address of, if it still runs
            check_cluster_ray_would_join()
    except ConnectionError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    ray.init(address=args.address)  # None: $RAY_ADDRESS, a local cluster, or a new Ray stopped at exit
    # datatrove's RayPipelineExecutor's arguments; its task processes die with their Ray worker
    # instead of running on as orphans when a node is lost, and a lost task is run again.
    executor = RayTaskExecutor(
        pipeline=[
            WarcHtmlReader(args.input, glob_pattern="**/*.warc*"),
            DenseExtractor(),
            # Loaded lazily: each task's process opens the (memory-mapped) model once.
            PerplexitySentenceFilter(method="trim", exclusion_writer=JsonlWriter(str(out / "excluded"))),
            JsonlWriter(str(out / "documents")),
        ],
        tasks=args.tasks,
        cpus_per_task=args.cpus_per_task,
        mem_per_cpu_gb=args.mem_per_cpu_gb,
        logging_dir=str(out / "logs"),
    )
    try:
        executor.run()
    except (NoInputFiles, SettingsChanged) as exc:  # found before any task ran: one line
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    finally:
        ray.shutdown()
    completions = out / "logs" / "completions"  # (none when no task completed)
    done = len(list(completions.iterdir())) if completions.is_dir() else 0
    print(f"{done}/{args.tasks} tasks completed; cleaned documents in {out / 'documents'}, "
          f"stats in {out / 'logs' / 'stats.json'}")
    if done < args.tasks:
        raise SystemExit("some tasks did not complete: run the same command again to run only them")


if __name__ == "__main__":
    main()
