"""plexity run's pool of workers (a worker runs task after task, keeping its extraction child) when things break
under it: real runs, real signals."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import time
from pathlib import Path

from helpers import PLEXITY, REPO, completions, read_jsonl_dir
from warc_corpus import ARTICLE, page, record_bytes


def _files(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True)
    uris = [f"http://t/{n}" for n in range(count)]
    for n, uri in enumerate(uris):
        (folder / f"f{n}.warc.gz").write_bytes(gzip.compress(record_bytes(uri, page(ARTICLE).encode())))
    return uris


def _workers(run: int) -> list[int]:
    """The run's worker processes (its children but the extraction children and a forkserver)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == run and b"extractors.sandbox" not in command:
            found.append(int(entry.name))
    return found


def _session_left(session: int, within: float) -> list[int]:
    """The live processes of a session (a run started with start_new_session), once none is left or after `within` s."""
    deadline = time.monotonic() + within
    while True:
        left = []
        for entry in Path("/proc").iterdir():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                left.append(int(entry.name))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def test_a_worker_killed_between_tasks_gives_its_next_task_to_a_new_worker(tmp_path):
    """A worker killed while it waited for its next task (the out-of-memory killer takes the largest process, busy
    or not): the task it was to run next was said "task 2: its worker process was killed by SIGKILL", exit 1, for a
    task that never ran (a process per task, before the pool, had no such moment).  It now goes to a new worker; the
    run completes."""
    uris = _files(tmp_path / "in", 6)
    out = tmp_path / "out"
    run = subprocess.Popen(PLEXITY + ["run", str(tmp_path / "in"), "-o", str(out), "--extractor", "tags",
                                      "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not completions(out / "logs") and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.002)
        os.kill(run.pid, signal.SIGSTOP)  # the run holds on: the workers end the tasks they started, then wait
        logs = out / "logs" / "logs"
        while time.monotonic() < deadline:  # (every task started, its log opened, is complete)
            started = len(list(logs.glob("task_*.log")))
            time.sleep(0.2)
            if len(completions(out / "logs")) == started == len(list(logs.glob("task_*.log"))):
                break
        assert len(completions(out / "logs")) < 6, "the tasks ended before the workers could be caught waiting"
        os.kill(_workers(run.pid)[0], signal.SIGKILL)
        os.kill(run.pid, signal.SIGCONT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 0, err[-3000:]
    assert "a worker process ended between tasks (its worker process was killed by SIGKILL" in err, err[-3000:]
    assert completions(out / "logs") == [f"{n:05d}" for n in range(6)]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded")]
    assert sorted(written) == uris
    assert _session_left(run.pid, within=1) == []


# A pipeline run as `plexity run` runs it (its SIGTERM handler in place), whose task 1 is sent SIGTERM at its first
# document, its worker's alone (a `kill` of one process), the first time only.
TERM_ONE_WORKER = '''
import os, signal, sys
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli import interrupted_by_sigterm
from plexity_plugins.datatrove import LocalTaskExecutor, WarcHtmlReader, HtmlTagsExtractor
from datatrove.pipeline.writers import JsonlWriter

folder, out, flag = sys.argv[1:4]

class TermOnce(PipelineStep):
    name = "term once"
    def run(self, data, rank=0, world_size=1):
        for doc in data:
            if rank == 1 and not os.path.exists(flag):
                open(flag, "w").close()
                os.kill(os.getpid(), signal.SIGTERM)
            yield doc

with interrupted_by_sigterm("run"):
    LocalTaskExecutor([WarcHtmlReader(folder), HtmlTagsExtractor(), TermOnce(), JsonlWriter(out + "/documents")],
                      tasks=3, workers=2, logging_dir=out + "/logs", start_method="fork").run()
'''


def test_a_worker_sent_sigterm_is_said_so_without_a_traceback(tmp_path):
    """A worker of a run sent SIGTERM (a `kill` of its pid) raised the run's own SIGTERM handler's KeyboardInterrupt:
    a traceback, and "task 1: its worker process exited with status 1 (the task's log says why)", which it did not.
    It now ends as a process sent SIGTERM does, and the run says so; the same command completes the task."""
    import sys

    uris = _files(tmp_path / "in", 3)
    script = tmp_path / "pipeline.py"
    script.write_text(TERM_ONE_WORKER)
    command = [sys.executable, str(script), str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "flag")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # (the script's folder is its path's first: this clone's package)
    first = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert first.returncode == 1
    assert "TasksFailed: 1 task(s) did not complete (task 1: its worker process was killed by SIGTERM)" \
        in first.stderr, first.stderr[-3000:]
    assert "KeyboardInterrupt" not in first.stderr, first.stderr[-3000:]
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(tmp_path / "out" / "documents")]
    assert sorted(written) == uris
