"""A long run that meets trouble midway, as a data engineer meets it: an input file taken away while the run
reads the others, a run killed outright and then looked at with `plexity report`, a paused Scrapy crawl resumed
from its JOBDIR.  Whatever happened is said, nothing is lost unsaid, and the same command picks up where the
run stopped.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import PLEXITY, SAMPLE, completions, html_uris, read_jsonl_dir, split_warc

# A `plexity run` pipeline (tags extractor, 4 tasks, one a shard) whose task 0 moves shard-2 away at its first
# document, the first time only: a file deleted, or moved by a sync, while the run reads the others.
TAKE_A_FILE_AWAY = '''
import os, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, make_executor

shards, out, aside, workers = sys.argv[1:5]

class TakeAFileAway(PipelineStep):
    name = "take a file away"
    def __init__(self, shards, aside):
        super().__init__()
        self.shards, self.aside = shards, aside
    def run(self, data, rank=0, world_size=1):
        for n, doc in enumerate(data):
            if rank == 0 and n == 0 and not os.path.exists(self.aside):
                os.rename(os.path.join(self.shards, "shard-2.warc.gz"), self.aside)
            yield doc

pipeline = build_pipeline(shards, out, extractor="tags")
pipeline.insert(-1, TakeAFileAway(shards, aside))
try:
    make_executor(pipeline, "local", tasks=4, workers=int(workers), logging_dir=str(Path(out) / "logs")).run()
except Exception as exc:
    print(f"RUN FAILED: {type(exc).__name__}: {exc}", flush=True)
    sys.exit(1)
'''


def test_an_input_file_taken_away_midway_fails_the_tasks_after_naming_it_and_back_in_place_the_run_completes(
        tmp_path):
    """A run lists its input files as it starts and shares them among its tasks by their order.  A file deleted
    (or moved away by a sync) while the first task ran shifted the files of the tasks after it: the last task found
    none ("No files found ... for rank=3", a warning in the log), the file's records went to no task, and the run
    said "4/4 tasks completed", exit 0.  Now each task compares the files it finds with those its run listed: a task
    that finds them changed does not run, and the run fails naming the file; with the file back the same command
    runs those tasks, and every record is written exactly once."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 4)
    uris = html_uris(shards)
    out, aside = tmp_path / "out", tmp_path / "shard-2.aside"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(TAKE_A_FILE_AWAY))
    for workers in ("2",):
        command = [sys.executable, str(script), str(shards), str(out / workers), str(aside), workers]
        run = subprocess.run(command, capture_output=True, text=True, timeout=240)
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
        assert "RUN FAILED: " in run.stdout and "its input files changed since the run started (removed: " \
            "shard-2.warc.gz)" in run.stdout, run.stdout[-3000:]
        assert not {"00002", "00003"} & set(completions(out / workers / "logs"))  # (they would read shard-3, none)

        aside.rename(shards / "shard-2.warc.gz")  # back in place (and not taken again: the step does it once)
        aside.touch()
        again = subprocess.run(command, capture_output=True, text=True, timeout=240)
        aside.unlink()
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert completions(out / workers / "logs") == ["00000", "00001", "00002", "00003"]
        written = [d["metadata"]["url"] for d in read_jsonl_dir(out / workers / "documents")
                   + read_jsonl_dir(out / workers / "excluded")]
        assert sorted(written) == sorted(uris)  # every record exactly once


def test_a_run_resumed_without_a_file_it_listed_names_the_file_taken_away(tmp_path):
    """A run that completed a task, resumed after one of its input files was deleted, stopped saying only
    "input files: 2 -> 1; input files' names: sha256:... -> sha256:...": which file, it did not say.  Now the
    file is named."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(shards), "-o", str(out), "--extractor", "tags", "--tasks", "2"]
    assert subprocess.run(command, capture_output=True, text=True, timeout=240).returncode == 0
    (shards / "shard-1.warc.gz").unlink()
    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 2
    assert "input files taken away since the completed tasks' run listed them: shard-1.warc.gz" in again.stderr, \
        again.stderr[-2000:]
