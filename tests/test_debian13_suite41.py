"""The whole suite on Debian 13 (trixie, Python 3.13.5; scripts/check_debian13.sh --test, 2026-12-05) found two
things a user meets on a full disk there that Debian 12's Python 3.11 did not show:

- `plexity run` on a full disk, datatrove 0.6.0: beside its one line "no space left on device", an "Exception ignored
  in: <fsspec...LocalFileOpener>" traceback per task, from the files the stopped writer left open, closed as the
  worker's frames were freed (the file's buffer refused by the same full disk);
- `plexity models > FILE` / `plexity score - > FILE` on a full disk: exit status 120 and "Exception ignored on
  flushing sys.stdout" (3.13 kept the output in the buffer to the end), not the one line and status 4.

Reproduced here: a step that leaves a file open on a full disk, and `plexity models > FILE` with FILE on a full
disk.  Both tests failed on Python 3.13.5 before the fixes and pass after (measured in that root); on Python 3.11
they pass either way (the worker's frames freed without the print, the print failing at once).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import PLEXITY, SAMPLE, split_warc

LEAVES_A_FILE_OPEN = textwrap.dedent('''
    import errno, os, sys
    from pathlib import Path
    from datatrove.pipeline.base import PipelineStep
    from plexity_plugins.cli.run import build_pipeline, make_executor

    shards, out, full = sys.argv[1:4]

    class LeavesAFileOpen(PipelineStep):
        """As datatrove 0.6's writers: a file opened, written to its buffer, left open when a write fails."""
        name = "leaves a file open"
        def run(self, data, rank=0, world_size=1):
            left_open = open(os.path.join(full, f"part-{rank}.txt"), "w")
            left_open.write("x" * 100)  # (in the buffer: written as it is closed, which the full disk refuses)
            for doc in data:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), left_open.name)
                yield doc

    pipeline = build_pipeline(shards, out, extractor="tags")
    pipeline.insert(-1, LeavesAFileOpen())
    try:
        make_executor(pipeline, "local", tasks=2, workers=2, logging_dir=str(Path(out) / "logs")).run()
    except Exception as exc:
        print(f"RUN FAILED: {type(exc).__name__}", file=sys.stderr)
''')


def test_a_task_stopped_by_a_full_disk_with_a_file_left_open_says_so_without_a_traceback(tmp_path, small_disk):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    done = subprocess.run([sys.executable, "-c", LEAVES_A_FILE_OPEN, str(shards), str(tmp_path / "out"),
                           str(small_disk)], capture_output=True, text=True, timeout=120)
    assert "task 0 did not complete: no space left on device" in done.stderr, done.stderr[-3000:]
    assert "RUN FAILED: TasksFailed" in done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]


def test_a_full_disk_met_by_the_standard_output_as_the_command_ends_is_said_in_one_line(small_disk):
    # (`plexity models > FILE`, FILE on a full disk: its few lines stay in Python's buffer until the end, as they did
    # to /dev/full on 3.13)
    with open(small_disk / "models.txt", "w") as stdout:
        done = subprocess.run(PLEXITY + ["models"], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 4, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "plexity models: error: no space left on device (writing the standard output): free some space or send the "
        "output elsewhere, then run the same command again"]
