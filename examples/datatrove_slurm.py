#!/usr/bin/env python3
"""Remove boilerplate from a WARC collection with a datatrove pipeline on a Slurm cluster.

    python examples/datatrove_slurm.py INPUT_DIR OUTPUT_DIR --partition P [--tasks N]
        [--workers M] [--time 24:00:00] [--venv /path/to/.venv]

Run it on the login node.  It submits one Slurm array job (one array task per datatrove
task; each task reads its share of the WARC files) plus a small job that merges the stats
once every task has succeeded, then returns.  INPUT_DIR and OUTPUT_DIR must be on a
filesystem the compute nodes see.  Each task activates the virtualenv (--venv; default:
the one running this script), so plexity_plugins and datatrove must be installed in it.

    OUTPUT_DIR/documents/00000.warc.gz ...    cleaned pages as WARC response records
    OUTPUT_DIR/excluded/00000.jsonl.gz ...    dropped documents, with metadata.filter_reason
    OUTPUT_DIR/logs/                          per-task logs and stats, slurm_logs/,
                                              completions/, stats.json (merged)

If a task fails (node lost, time limit, killed), run the same command again: only the
tasks without a completion marker in OUTPUT_DIR/logs/completions are submitted.  A run with
other settings into the same OUTPUT_DIR stops, naming them (OUTPUT_DIR/logs/plexity-settings.json
records them).  Without Slurm here (no `sbatch`), it says so in one line and exits 2.
Watch progress with `squeue`, or with datatrove's `jobs_status OUTPUT_DIR` (it reads each logging folder in the
folder it is given, here OUTPUT_DIR/logs; it needs `rich`, of datatrove's `cli` extra: `pip install rich`).
"""

import argparse
import sys
from pathlib import Path

from datatrove.pipeline.writers import JsonlWriter

from plexity_plugins.datatrove import (ExecutorUnavailable, HtmlTagsExtractor, JobStillQueued, NoInputFiles,
                                       PerplexitySentenceFilter, SettingsChanged, SlurmTaskExecutor, WarcHtmlReader,
                                       WarcResponseWriter)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("input_dir")
    parser.add_argument("output_dir")
    parser.add_argument("--partition", required=True)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--workers", type=int, default=-1, help="array tasks running at once (-1: no limit)")
    parser.add_argument("--time", default="24:00:00", help="time limit per task")
    parser.add_argument("--venv", default=str(Path(sys.prefix) / "bin" / "activate"),
                        help="the venv (its folder, or its bin/activate script), activated by every task")
    parser.add_argument("--job-name", default="plexity-clean")
    args = parser.parse_args()
    if not Path(args.input_dir).is_dir():  # (else every task fails: "No files found", a traceback each)
        parser.error(f"{args.input_dir} is not a folder: give the folder of your .warc / .warc.gz files")
    out = Path(args.output_dir).resolve()  # absolute: the jobs do not run in this directory

    # datatrove's SlurmPipelineExecutor, which also checks for sbatch and the run's settings first
    try:
        executor = SlurmTaskExecutor(
            pipeline=[
                WarcHtmlReader(str(Path(args.input_dir).resolve()), glob_pattern="**/*.warc*"),
                HtmlTagsExtractor(),
                # Loaded lazily: each array task opens the (memory-mapped) model once.
                PerplexitySentenceFilter(
                    method="regions",  # after the tag remover: keep the content runs of blocks
                    min_chars=50,
                    exclusion_writer=JsonlWriter(str(out / "excluded")),
                ),
                WarcResponseWriter(str(out / "documents")),
            ],
            tasks=args.tasks,
            workers=args.workers,
            job_name=args.job_name,
            partition=args.partition,
            time=args.time,
            cpus_per_task=1,
            mem_per_cpu_gb=2,
            venv_path=args.venv,
            logging_dir=str(out / "logs"),
        )
    except ValueError as exc:  # (a --venv that is not there: each task would have failed on its node)
        parser.error(str(exc))
    try:
        executor.run()  # sbatch; returns once submitted
    except (ExecutorUnavailable, JobStillQueued, NoInputFiles, SettingsChanged) as exc:  # nothing was launched
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    if executor.job_id == -1:
        print("every task is already completed: nothing submitted")
    else:
        print(f"submitted Slurm job {executor.job_id}; logs in {out / 'logs'}")


if __name__ == "__main__":
    main()
