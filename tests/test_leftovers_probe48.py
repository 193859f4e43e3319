"""What a `RayTaskExecutor` run leaves in a node's temporary folder when a Ray worker is killed (its node's raylet,
Ray's out-of-memory killer, a task cancelled): each task's scratch folder (`plexity-taskNNNNN-*`, its log in it) went
in the task's `finally`, which a killed worker never reaches, so every kill left one for good (the test suite left
some 60 in /tmp).  Now the next task on the node removes those whose worker is gone, the killed task's log copied
first to its run's logging folder; nobody else's folder is touched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from helpers import REPO, SAMPLE, command_line
from ray_cluster import cluster, cluster_processes, wait_until  # noqa: F401 - a fixture

# Two tasks, one at a time; task 0's worker is killed as it reads (flag written), and Ray does not run it again.
KILLED_RUN = '''
import sys, time
import ray
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import HtmlTagsExtractor, RayTaskExecutor, WarcHtmlReader

address, warcs, out, flag = sys.argv[1:5]

def pause_in_task_0(data, rank=0, world_size=1, flag=flag):
    for doc in data:
        if rank == 0:
            open(flag, "w").close()
            time.sleep(600)
        yield doc

ray.init(address=address, logging_level="WARNING")
RayTaskExecutor([WarcHtmlReader(warcs), HtmlTagsExtractor(), pause_in_task_0, JsonlWriter(f"{out}/documents")],
                tasks=2, workers=1, mem_per_cpu_gb=0.5, logging_dir=f"{out}/logs",
                ray_remote_kwargs={"max_retries": 0}).run()
'''


@pytest.mark.ray
def test_a_killed_workers_scratch_folder_goes_with_the_next_task_and_its_log_is_kept(cluster, tmp_path):
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    for name in ("a", "b"):
        (warcs / f"{name}.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "run.py").write_text(textwrap.dedent(KILLED_RUN))
    out, flag = tmp_path / "out", tmp_path / "paused"
    run = subprocess.Popen([sys.executable, "run.py", cluster.address, str(warcs), str(out), str(flag)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert wait_until(lambda: run.poll() is not None or flag.exists(), timeout=120) and run.poll() is None
        left = list(cluster.tmp.glob("plexity-task00000-*"))
        assert len(left) == 1 and (left[0] / "ray_logs" / "logs" / "task_00000.log").is_file()
        tasks = [p for p in cluster_processes(cluster.token) if command_line(p)[:1] == ["ray::plexity_task"]]
        worker = next(p for p in tasks if any(c.pid in {t.pid for t in tasks} for c in p.children()))
        worker.send_signal(signal.SIGKILL)  # (as the out-of-memory killer does: no clean-up of its own)
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1 and "task 0 did not complete" in err, err[-3000:]
    # task 1, next on this machine, removed task 0's folder; the log of what task 0 did until it was killed is where a
    # task's log is (before: no logs/task_00000.log, and the folder, with the log, in the node's temporary folder)
    assert list(cluster.tmp.glob("plexity-task*")) == []
    log = (out / "logs" / "logs" / "task_00000.log").read_text()
    assert "Launching pipeline for rank=0" in log and "Reading input file a.warc.gz" in log
    assert "Processing done for rank=1" in (out / "logs" / "logs" / "task_00001.log").read_text()


# One task whose process lingers a few seconds after its rank is marked complete (a thread its last step started, which
# the process waits for as it exits), as a task's last steps are slow on a loaded machine.
LINGERING_RUN = '''
import sys
import ray
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import HtmlTagsExtractor, RayTaskExecutor, WarcHtmlReader

address, warcs, out = sys.argv[1:4]

def linger_after_the_last_document(data, rank=0, world_size=1):
    import threading, time  # (the function goes to the task by value, without this script's imports)

    yield from data
    threading.Thread(target=time.sleep, args=(6,)).start()  # (not a daemon: the task's process waits for it)

ray.init(address=address, logging_level="WARNING")
RayTaskExecutor([WarcHtmlReader(warcs), HtmlTagsExtractor(), linger_after_the_last_document,
                 JsonlWriter(f"{out}/documents")], tasks=1, mem_per_cpu_gb=0.5, logging_dir=f"{out}/logs").run()
'''


@pytest.mark.ray
def test_a_task_slow_to_return_after_its_rank_completed_still_removes_its_scratch_folder(cluster, tmp_path):
    # (before: the driver, seeing the rank marked complete and no result within its 2 s poll, cancelled the task as
    # one whose node had died as it returned; its worker killed before its clean-up, the folder stayed for good where
    # no later task ran on the node: a CI run of tests/test_nonroot_ray_probe42.py on a loaded machine found one)
    (tmp_path / "run.py").write_text(textwrap.dedent(LINGERING_RUN))
    (tmp_path / "warcs").mkdir()
    (tmp_path / "warcs" / "a.warc.gz").write_bytes(SAMPLE.read_bytes())
    run = subprocess.run([sys.executable, "run.py", cluster.address, str(tmp_path / "warcs"), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Processing done for rank=0" in (tmp_path / "out" / "logs" / "logs" / "task_00000.log").read_text()
    assert list(cluster.tmp.glob("plexity-task*")) == []

def test_only_this_users_folders_whose_worker_is_gone_are_removed(tmp_path, monkeypatch):
    from plexity_plugins.datatrove import RayTaskExecutor
    from plexity_plugins.datatrove.ray_executor import _process_identity, sweep_stale_scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    executor = RayTaskExecutor([], tasks=1, logging_dir=str(tmp_path / "logs"))
    ended = subprocess.Popen(["sleep", "60"])
    gone = _process_identity(ended.pid)
    ended.kill()
    ended.wait()
    here = _process_identity(os.getpid())

    def scratch(name: str, owner: dict | None, rank: int = 0) -> Path:
        folder = tmp_path / f"plexity-task{rank:05d}-{name}"
        (folder / "ray_logs" / "logs").mkdir(parents=True)
        (folder / "ray_logs" / "logs" / f"task_{rank:05d}.log").write_text(f"the log of {name}\n")
        if owner is not None:
            url = f"file://{tmp_path / 'logs'}"
            (folder / "owner.json").write_text(json.dumps({**owner, "rank": rank, "logging_dir": url}))
        return folder

    killed = scratch("killed", gone, rank=3)
    reused = scratch("pid-used-again", {**here, "start": "1"}, rank=4)  # (this pid, but a process started before)
    kept = [scratch("live", here),  # a live worker's (another run's, or this one's)
            scratch("other-machine", {**gone, "boot": "another boot"}),  # (a temporary folder machines share)
            scratch("other-container", {**gone, "pid_namespace": "pid:[1]"}),
            scratch("unnamed-owner", None)]  # (not said: kept)
    others = scratch("another-user", gone)
    os.chown(others, 65534, 65534)

    assert sorted(sweep_stale_scratch(executor)) == [str(killed), str(reused)]
    assert sorted(p.name for p in tmp_path.glob("plexity-task*")) == sorted(p.name for p in [*kept, others])
    assert (tmp_path / "logs" / "logs" / "task_00003.log").read_text() == "the log of killed\n"
    assert (tmp_path / "logs" / "logs" / "task_00004.log").read_text() == "the log of pid-used-again\n"

    # a newer log of the task there (its retry's, elsewhere) is not overwritten by a killed attempt's
    newer = scratch("killed-before-its-retry", gone, rank=5)
    os.utime(newer / "ray_logs" / "logs" / "task_00005.log", (1, 1))
    (tmp_path / "logs" / "logs" / "task_00005.log").write_text("the retry's log\n")
    assert sweep_stale_scratch(executor) == [str(newer)]
    assert (tmp_path / "logs" / "logs" / "task_00005.log").read_text() == "the retry's log\n"
