#!/usr/bin/env python3
"""Remove boilerplate from WARC files with a datatrove pipeline on this machine.

    python examples/datatrove_local.py [INPUT_DIR] [OUTPUT_DIR] [--tasks N] [--workers M]

INPUT_DIR holds .warc / .warc.gz files (searched recursively; default: examples/, i.e. the
sample WARC).  Every HTML response becomes a Document; its text is extracted with the tag
remover, high-perplexity sentences (menus, share buttons, cookie notices ...) are removed
with the embedded English model, and the cleaned documents are written as JSONL:

    OUTPUT_DIR/documents/00000.jsonl.gz ...   cleaned documents (text + plexity_* metadata)
    OUTPUT_DIR/excluded/00000.jsonl.gz ...    documents dropped (metadata.filter_reason)
    OUTPUT_DIR/logs/                          datatrove logs, per-task stats, stats.json

Running it again resumes: completed tasks are skipped.  Copy this file and change the
steps: another extractor (LearnedExtractor, plexity run's default, or DenseExtractor, with method="trim"), a
model (PerplexitySentenceFilter(model="trigrams-bnc", threshold=...)), WarcResponseWriter to write cleaned WARCs.
"""

import argparse
import sys
from pathlib import Path

from datatrove.pipeline.writers import JsonlWriter

from plexity_plugins.datatrove import (HtmlTagsExtractor, LocalTaskExecutor, NoInputFiles, PerplexitySentenceFilter,
                                       SettingsChanged, WarcHtmlReader)

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("input_dir", nargs="?", default=str(HERE))
    parser.add_argument("output_dir", nargs="?", default="cleaned-local")
    parser.add_argument("--tasks", type=int, default=1, help="shards of the input files")
    parser.add_argument("--workers", type=int, default=1, help="tasks running at once")
    args = parser.parse_args()
    if not Path(args.input_dir).is_dir():  # (else every task fails: "No files found", a traceback each)
        parser.error(f"{args.input_dir} is not a folder: give the folder of your .warc / .warc.gz files")
    out = Path(args.output_dir).resolve()

    # datatrove's LocalPipelineExecutor, its tasks run in at most --workers processes: a worker killed by the
    # out-of-memory killer ends the run with a message instead of hanging it (same arguments).
    executor = LocalTaskExecutor(
        pipeline=[
            WarcHtmlReader(args.input_dir, glob_pattern="**/*.warc*"),
            HtmlTagsExtractor(),
            PerplexitySentenceFilter(  # embedded model, its calibrated threshold
                method="regions",  # after the tag remover: keep the content runs of blocks
                min_chars=50,
                exclusion_writer=JsonlWriter(str(out / "excluded")),
            ),
            JsonlWriter(str(out / "documents")),
        ],
        tasks=args.tasks,
        workers=args.workers,
        logging_dir=str(out / "logs"),
    )
    try:
        executor.run()
    except (NoInputFiles, SettingsChanged) as exc:  # found before any task ran: one line
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(f"cleaned documents in {out / 'documents'}, stats in {out / 'logs' / 'stats.json'}")


if __name__ == "__main__":
    main()
