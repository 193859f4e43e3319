"""`plexity run --executor ray` as a user who is not root, on a machine where root ran a Ray run first: a real local
Ray started by the command, as a user made for the test (`other_user`); and what a Ray task that ends before its
log is in the logging folder says (`plexity_task`, the function each Ray task runs, called here without Ray)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import REPO, SAMPLE, other_user


def _processes_of(user: str) -> list[int]:
    found = subprocess.run(["pgrep", "-u", user], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


@pytest.mark.ray
@pytest.mark.skipif(os.geteuid() != 0, reason="makes a user of its own: root only")
def test_a_ray_run_of_a_user_who_is_not_root_after_roots_own_ray_run():
    # Before: every task failed, "task 0: its worker process exited with status 1 (the task's log says why)", and no
    # task log was there: datatrove's Ray executor first writes a task's log to {temp}/ray_logs/logs/task_NNNNN.log,
    # a name every user and run shares, which root's first run had made root's (0755).  Now each task's temporary
    # files are in a folder of its own, removed after.  And a Ray folder of root's that this user may not write
    # stopped the run: "cannot write {temp}/ray/session_...: permission denied"; now its own Ray is in ray-UID.
    pytest.importorskip("ray")
    temp = Path(tempfile.mkdtemp(prefix="plx42r-"))  # (the user's TMPDIR, Ray's too: a short path, for Ray's sockets)
    temp.chmod(0o1777)
    (temp / "ray_logs" / "logs").mkdir(parents=True, mode=0o755)  # what root's run of datatrove's executor leaves
    (temp / "ray").mkdir(mode=0o755)  # Ray's folder as root's `ray start` may leave it (Ray's own makes it 0777)
    out = temp / "out"
    user = None
    try:
        with other_user("plx42r") as run:
            user, uid = run(["id", "-un"]).stdout.decode().strip(), run(["id", "-u"]).stdout.decode().strip()
            env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": f"/home/{user}", "TMPDIR": str(temp)}
            done = run([sys.executable, "-m", "plexity_plugins", "run", SAMPLE, "-o", out, "--executor", "ray",
                        "--mem-per-cpu-gb", "0.5"], env=env)
            deadline = time.monotonic() + 20  # (Ray's processes end as its shutdown returns, or just after)
            while (left := _processes_of(user)) and time.monotonic() < deadline:
                time.sleep(0.5)
            for pid in left:  # (this user's: only this test started any)
                os.kill(pid, signal.SIGKILL)
            assert not left, f"Ray processes left running: {left}"
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
        assert f" CPUs; in {temp}/ray-{uid}, as {temp}/ray is another user's)\n".encode() in done.stdout, done.stdout
        assert b"1/1 tasks completed" in done.stdout, done.stdout
        documents = [json.loads(line) for path in sorted((out / "documents").iterdir())
                     for line in gzip.open(path, "rt")]
        assert documents and all(doc["text"] for doc in documents)
        assert "Processing done for rank=0" in (out / "logs" / "logs" / "task_00000.log").read_text()
        assert list((temp / "ray_logs" / "logs").iterdir()) == []  # (root's folder: not used)
        assert not list(temp.glob("plexity-task*"))  # (each task's own temporary folder: removed)
    finally:
        if user:
            for pid in _processes_of(user):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def _kill_self(data, rank: int = 0, world_size: int = 1):
    for document in data:
        os.kill(os.getpid(), signal.SIGKILL)  # (as the out-of-memory killer ends a task)
        yield document


def _executor(tmp_path: Path, *steps, tasks: int = 1):
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import HtmlTagsExtractor, RayTaskExecutor, WarcHtmlReader

    return RayTaskExecutor([WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name), HtmlTagsExtractor(), *steps,
                            JsonlWriter(str(tmp_path / "documents"))], tasks=tasks, mem_per_cpu_gb=0.5,
                           logging_dir=str(tmp_path / "logs"))


def _run_task(executor) -> str:
    import dill

    from plexity_plugins.datatrove.ray_executor import RanksFailed, plexity_task

    with pytest.raises(RanksFailed) as failed:
        plexity_task(dill.dumps(executor), [0], os.getcwd())
    return failed.value.failures[0]


def test_a_killed_ray_task_keeps_its_log(tmp_path, monkeypatch):
    # Before: a task process killed mid-task (the out-of-memory killer) left its log in the node's
    # /tmp/ray_logs/logs/task_00000.log, where the next run of any user overwrote it: none in the logging folder.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # (where the task's own temporary folder goes)
    executor = _executor(tmp_path, _kill_self)
    executor._check_run_settings()
    why = _run_task(executor)
    assert why == "its worker process was killed by SIGKILL (the out-of-memory killer sends this)"
    assert "PIPELINE" in (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert not list(tmp_path.glob("plexity-task*"))  # (the task's temporary folder: removed)


def test_a_ray_task_that_stops_before_its_log_says_why(tmp_path, monkeypatch):
    # Before: "its worker process exited with status 1 (the task's log says why)", of a log that did not exist.  Here
    # the task stops as it starts: another run, of other settings, took the logging folder meanwhile.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    executor = _executor(tmp_path)
    executor._check_run_settings()
    _executor(tmp_path, tasks=2)._check_run_settings()  # (the other run: its settings recorded in their place)
    why = _run_task(executor)
    log = tmp_path / "logs" / "logs" / "task_00000.log"
    assert not log.exists()
    assert why.startswith(f"its worker process exited with status 1: SettingsChanged: {tmp_path / 'logs'} holds the "
                          f"results of a run with other settings (tasks: "), why
    assert f"(it wrote no task log, {log}" in why, why
