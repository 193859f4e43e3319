"""HTTP(S) inputs once the run has listed them: a task's check of its inputs lists the folder again, as datatrove's
own reader does in a pipeline of yours, and a server may misbehave then (`remote_files.remote_bounded`,
`remote_files.listing_failed`).

A server that stalls on that listing fails the task within about --remote-timeout (the reader's ``remote_timeout``),
with one line naming the URL and the stall; a 503 names the URL and the answer; the other tasks go on and the same
command again completes the run, every page read.  (A stall, a reset, a short body or a 503 while a file is read:
tests/test_remote_inputs_probe36.py.)"""

from __future__ import annotations

import pickle
import re
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from bad_http_server import serve  # noqa: E402,F401 - (a fixture)
from helpers import read_jsonl_dir, run_plexity  # noqa: E402

from plexity_plugins.datatrove import WarcHtmlReader  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
STALLED = "the server sent nothing for 2 s (stalled; the reader's remote_timeout, plexity run --remote-timeout)"


def run_twice(url: str, out: Path, workers: int = 1):
    """`plexity run` of `url` (one task a file; with one worker, the second task's check comes after the first has
    read its file), then the same command again; both results and when (time.monotonic()) the first ended."""
    command = ("run", url, "-o", str(out), "--remote-timeout", "2", "--workers", str(workers), "--extractor", "tags")
    first = run_plexity(*command, timeout=300)
    ended = time.monotonic()
    return first, run_plexity(*command, timeout=300), ended


# The run's end is timed from the moment the server spoiled its listing, not from the run's start: a run beside two
# busy processes took 37 s (its start and its reading of pages), 5 s alone.  The stall holds for 3 minutes, so a run
# that waited for it ends 180 s after it at least; one that gave up after --remote-timeout (2 s) ends ~2 s after
# it alone, and well within STALL_BOUND on a loaded machine.
STALL_BOUND = 60


@pytest.mark.parametrize("answer, why", [("stall", STALLED), ("503", "the server answered 503 Service Unavailable")])
def test_a_task_whose_check_of_its_inputs_meets_a_stall_or_a_503_fails_naming_the_url_and_the_rerun_completes(
        serve, tmp_path, answer, why):
    """Before: the stall held the task for as long as the server kept the connection open, up to aiohttp's 300 s (a
    server that closed it after 30 s: the task then read on, 33 s for a run of 3 s; this one waits 3 minutes); a server
    silent for 300 s was taken for a folder without files: "InputFilesChanged: task 0: its input files changed since
    the run started (2 file(s) listed then, 0 now) ... (put the files back as they were ...)" after 307 s (one file:
    "RuntimeError: No files found on http://...!" after 305 s).  The 503 was ``ClientResponseError: 503,
    message='Service Unavailable', url='http://...'``."""
    url = serve({"a.warc.gz": (SAMPLE, "whole"), "b.warc.gz": (SAMPLE, "whole")}, listing=answer)
    first, again, ended = run_twice(url, tmp_path / "out")
    assert first.returncode == 1, first.stderr[-3000:]
    assert f"plexity run: 1 task(s) did not complete (OSError: cannot list the input {url.rstrip('/')}: {why}); " \
           f"re-run the same command to run only those" in first.stderr, first.stderr[-3000:]
    assert "Traceback" not in first.stderr and "1/2 tasks completed" in first.stdout
    assert ended - serve.spoiled_at[0] < STALL_BOUND  # (2 s of stall and the run's end)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 tasks, 1 already completed" in again.stdout
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 24  # (the sample's 12 pages, from each file)


def test_a_worker_process_whose_check_meets_a_stall_says_it_to_the_run(serve, tmp_path):
    """With worker processes (--workers 2), the task fails before its log is written.  Before: "(task 2: its worker
    process exited with status 1 before writing its task log (.../logs/task_00002.log))", the stall said nowhere.
    (Which task meets it depends on which worker reads a file first: one does.)"""
    url = serve({name: (SAMPLE, "whole") for name in ("a.warc.gz", "b.warc.gz", "c.warc.gz")}, listing="stall")
    first, again, ended = run_twice(url, tmp_path / "out", workers=2)
    assert first.returncode == 1 and "2/3 tasks completed" in first.stdout, first.stderr[-3000:]
    said = (rf"plexity run: 1 task\(s\) did not complete \(task \d: its worker process exited with status 1: OSError: "
            rf"cannot list the input {re.escape(url.rstrip('/'))}: {re.escape(STALLED)} \(it wrote no task log, ")
    assert re.search(said, first.stderr), first.stderr[-3000:]
    assert ended - serve.spoiled_at[0] < STALL_BOUND
    assert again.returncode == 0 and "3 tasks, 2 already completed" in again.stdout, again.stderr[-3000:]
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 36


def test_our_reader_in_a_pipeline_of_yours_lists_a_stalled_server_within_remote_timeout(serve, tmp_path):
    """WarcHtmlReader built in a pipeline of datatrove's executors, pickled to its task as they pickle it: its listing
    (datatrove's, in the task) was fsspec's session's, bounded by aiohttp's 300 s whatever ``remote_timeout`` said.
    Now the folder's filesystem is built with the reader's bound (a URL, or a (URL, options) pair: not a DataFolder
    or a filesystem you built, `remote_files.remote_bounded`)."""
    url = serve({"a.warc.gz": (SAMPLE, "whole")}, listing="stall")
    serve.requests["a.warc.gz"] = 1  # (as if a task had read it: the next listing stalls)
    folder = url.rstrip("/")
    reader = pickle.loads(pickle.dumps(WarcHtmlReader(folder, remote_timeout=2)))
    outcome = {}

    def read():
        try:
            outcome["documents"] = sum(1 for _ in reader.run())
        except Exception as exc:  # noqa: BLE001 - what the task would fail with
            outcome["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(40)
    assert not thread.is_alive(), "the listing was still waiting for the stalled server after 40 s"
    assert time.monotonic() - started < 20  # (~2 s)
    assert str(outcome.get("error")) == f"cannot list the input {folder}: {STALLED}"
    assert sum(1 for _ in reader.run()) == 12  # (the server answers again: the same reader reads the file)


def test_our_reader_given_a_folder_url_ending_in_a_slash_reads_its_files(serve):
    """Before: ``RuntimeError: No files found on http://127.0.0.1:PORT/crawl/!`` (fsspec's glob under the slash finds
    nothing; datatrove's own WarcReader failed there with a bare AssertionError); plexity run gives the URL without
    it.  Now the reader takes it off too."""
    url = serve({"a.warc.gz": (SAMPLE, "whole")})
    assert url.endswith("/crawl/")
    assert sum(1 for _ in WarcHtmlReader(url).run()) == 12
