"""`plexity run` when things break under it: a worker killed mid-file, a full disk.

The run must end (never hang), say which task did not complete and why, leave no process
behind, mark no failed task as complete, and the same command again must give every record
exactly once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import PLEXITY, SAMPLE, completions, html_uris, read_jsonl_dir, split_warc

# A `plexity run` pipeline (tags extractor, 4 tasks, 2 workers) whose task 2 SIGKILLs its own
# worker process at its second document, the first time only: the out-of-memory killer's way.
# Task 2's extractor subprocess is alive at that moment.
KILL_ONE_WORKER = '''
import os, signal, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, make_executor

shards, out, flag = sys.argv[1:4]

class KillWorkerOnce(PipelineStep):
    name = "kill once"
    def __init__(self, flag):
        super().__init__()
        self.flag = flag
    def run(self, data, rank=0, world_size=1):
        for n, doc in enumerate(data):
            if rank == 2 and n == 1 and not os.path.exists(self.flag):
                open(self.flag, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)  # this worker only
            yield doc

pipeline = build_pipeline(shards, out, extractor="tags")
pipeline.insert(-1, KillWorkerOnce(flag))
try:
    make_executor(pipeline, "local", tasks=4, workers=2, logging_dir=str(Path(out) / "logs")).run()
except Exception as exc:
    print(f"RUN FAILED: {type(exc).__name__}: {exc}", flush=True)
    sys.exit(1)
'''


def processes_in_session(session: int) -> list[str]:
    """'pid command' of every live process of a session (a run started with start_new_session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) == session and fields[0] != "Z":
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name} {command[:120]}")
        except (OSError, ValueError, IndexError):
            continue
    return found


def processes_left(session: int, within: float) -> list[str]:
    """`processes_in_session` once the session is empty or `within` seconds have passed: a
    process that is to die with the run has that long (checked each 20 ms, not waited out)."""
    deadline = time.monotonic() + within
    while (left := processes_in_session(session)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def test_a_killed_worker_ends_the_run_naming_its_task_and_a_rerun_completes_it(tmp_path):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 4)
    out = tmp_path / "out"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(KILL_ONE_WORKER))
    command = [sys.executable, str(script), str(shards), str(out), str(tmp_path / "killed")]

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=240)  # datatrove's own pool hung here forever
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
    assert process.returncode == 1, output[-3000:]
    assert "RUN FAILED: TasksFailed: 1 task(s) did not complete (task 2: its worker process was killed by SIGKILL" \
        in output, output[-3000:]
    assert processes_left(process.pid, within=0.5) == []  # the killed task's extractor subprocess too
    assert completions(out / "logs") == ["00000", "00001", "00003"]  # the other tasks went on
    assert not (out / "logs" / "stats.json").exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert completions(out / "logs") == ["00000", "00001", "00002", "00003"]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded")]
    assert sorted(written) == sorted(html_uris(shards))
    assert len(written) == len(set(written)) == 12


@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_disk_stops_the_run_with_a_clear_error_and_a_rerun_redoes_the_failed_tasks(small_disk, tmp_path,
                                                                                           workers):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    logs = tmp_path / "logs"  # on a disk with room: only the output disk is full
    command = PLEXITY + ["run", str(shards), "--output-dir", str(small_disk), "--logging-dir", str(logs),
                         "--extractor", "tags", "--workers", str(workers)]

    full = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert full.returncode == 4  # (the disk is full: not 1, a task's own error)
    errors = [line for line in full.stderr.splitlines() if line.startswith("plexity run: error:")]
    assert len(errors) == 1 and "no space left on device" in errors[0] and "2 of 2 task(s) did not complete" \
        in errors[0], full.stderr[-3000:]
    assert "Traceback" not in full.stderr and "Logging error" not in full.stderr
    assert completions(logs) == []  # no task is marked complete
    # and no output under its final name: a failed task's files are removed, not left half written
    # (the note of the run's logging folder, written before any task, is no output)
    assert [p.name for p in small_disk.rglob("*") if p.is_file() and p.name != ".plexity-logging-dir"] == ["filler"]

    subprocess.run(["mount", "-o", "remount,size=20m", str(small_disk)], check=True)
    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert completions(logs) == ["00000", "00001"]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(small_disk / "documents")
               + read_jsonl_dir(small_disk / "excluded")]
    assert sorted(written) == sorted(html_uris(shards))


def _busy_shards(folder: Path, shards: int = 2, records: int = 600) -> list[str]:
    """WARC shards whose tasks take `plexity run` a few seconds each (600 pages of 30 kB a shard)."""
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    folder.mkdir()
    uris = []
    for s in range(shards):
        members = []
        for i in range(records):
            uri = f"http://t/{s}/{i}"
            uris.append(uri)
            members.append(gzip.compress(record_bytes(uri, page(*[f"{ARTICLE} Part {j} of {i}." for j in range(60)])
                                                      .encode())))
        (folder / f"shard-{s}.warc.gz").write_bytes(b"".join(members))
    return uris


def _sizes(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in folder.rglob("*") if p.is_file()} if folder.exists() else {}


def _busy_run(tmp_path: Path, stderr=subprocess.DEVNULL, workers: int = 2
              ) -> tuple[subprocess.Popen, list[str], list[str], Path]:
    """`plexity run` on `_busy_shards`, in a session of its own, returned once `workers` tasks are
    writing their documents: (the process, its command, the shards' URIs, its output folder)."""
    shards = tmp_path / "shards"
    uris = _busy_shards(shards)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(shards), "--output-dir", str(out), "--extractor", "tags", "--workers",
                         str(workers), "--min-chars", "0"]
    # SIGINT at its default in the run, as in a terminal's foreground job, whatever this test inherited:
    # a suite started in the background (`nohup ... &`, `cmd &` in a script) ignores SIGINT, an ignored
    # signal stays ignored across exec, and Python then keeps ignoring it (no KeyboardInterrupt)
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    parts = out / "documents"  # (each task writes its output under a .part name until it ends)
    while time.monotonic() < deadline and len(list(parts.glob(".*.part")) if parts.exists() else []) < workers:
        time.sleep(0.02)
    return run, command, uris, out


@contextlib.contextmanager
def _reaped(run: subprocess.Popen):
    """Whatever the test asserts inside, no process of the run's session outlives it."""
    try:
        yield
    finally:
        for line in processes_in_session(run.pid):
            os.kill(int(line.split()[0]), 9)


def _rerun_gives_each_record_once(command: list[str], out: Path, uris: list[str]) -> None:
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded")]
    assert sorted(written) == sorted(uris)  # every record exactly once


def test_killing_the_run_kills_its_workers_so_nothing_writes_after_and_a_rerun_gives_each_record_once(tmp_path):
    run, command, uris, out = _busy_run(tmp_path)
    with _reaped(run):
        # both tasks are writing their documents
        assert run.poll() is None and completions(out / "logs") == [], "the tasks ended before the kill"
        os.killpg(run.pid, 9)  # the run's process group, as a scheduler or a terminal does
        run.wait(10)
        assert processes_left(run.pid, within=1) == []  # the task workers and their extractors died with it
        before = _sizes(out)
        time.sleep(1.5)
        assert _sizes(out) == before  # nothing writes after the kill
    _rerun_gives_each_record_once(command, out, uris)


def test_ctrl_c_stops_the_run_in_one_line_and_the_same_command_resumes(tmp_path):
    run, command, uris, out = _busy_run(tmp_path, stderr=subprocess.PIPE)
    with _reaped(run):
        assert run.poll() is None and completions(out / "logs") == [], "the tasks ended before Ctrl+C"
        os.kill(run.pid, 2)  # SIGINT, as a terminal's Ctrl+C sends it to the run (its tasks lead groups of their own)
        _, err = run.communicate(timeout=30)
        assert run.returncode == 130 and "Traceback" not in err
        assert err.strip().splitlines()[-1] == ("plexity run: interrupted: the tasks that completed are kept; the same "
                                                "command runs the others")
        assert processes_left(run.pid, within=1) == []
    _rerun_gives_each_record_once(command, out, uris)


def test_one_worker_run_killed_alone_leaves_no_process_holding_its_folder(tmp_path):
    # (the out-of-memory killer kills one process: datatrove's one-worker run kept a forked
    # multiprocess Manager that outlived it, holding the output folder's lock, so the re-run
    # was refused as "in use by another run")
    run, command, uris, out = _busy_run(tmp_path, workers=1)
    with _reaped(run):
        assert run.poll() is None and completions(out / "logs") == [], "the task ended before the kill"
        os.kill(run.pid, 9)  # the run's own process only
        run.wait(10)
        assert processes_left(run.pid, within=1) == []
    _rerun_gives_each_record_once(command, out, uris)


def _step_that_fails_on_its_first_document(data, rank=0, world_size=1):
    for document in data:
        raise ValueError(f"the step could not read {document.id}")
        yield document


def test_a_task_that_failed_is_said_with_the_error_its_log_ends_with(tmp_path):
    """A task whose step raised was said as "its worker process exited with status 1 (the task's log says why)":
    which log, and why, the user looked up in each task's log.  Now the line gives the exception the task's log
    ends with."""
    from datatrove.pipeline.readers import JsonlReader

    from plexity_plugins.datatrove import LocalTaskExecutor, TasksFailed

    (tmp_path / "in").mkdir()
    for name in ("a", "b"):
        (tmp_path / "in" / f"{name}.jsonl").write_text(f'{{"id": "{name}", "text": "The council met."}}\n')
    executor = LocalTaskExecutor([JsonlReader(str(tmp_path / "in")), _step_that_fails_on_its_first_document],
                                 tasks=2, workers=2, logging_dir=str(tmp_path / "logs"))
    with pytest.raises(TasksFailed) as failed:
        executor.run()
    assert failed.value.failures == {
        0: "its worker process exited with status 1: ValueError: the step could not read a (the task's log says more)",
        1: "its worker process exited with status 1: ValueError: the step could not read b (the task's log says more)"}
