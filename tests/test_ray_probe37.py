"""`plexity run --executor ray` and `RayTaskExecutor` when a task fails or the run is stopped, on the Ray cluster of
tests/ray_cluster.py (one for the module): a failed task is named with why, as the local executor names it,
SIGTERM stops the run as Ctrl-C does, a run whose only node big enough is lost waits `--node-wait` for another (runs
the task there when one joins, stops naming it when none does), and an address where another server answers is one
line at once."""

from __future__ import annotations

import contextlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import psutil
import pytest

from helpers import PLEXITY, REPO, SAMPLE, command_line, completions, read_jsonl_dir
from ray_cluster import RAY_GAVE_UP, cluster, cluster_processes, wait_until  # noqa: F401 - a fixture

pytestmark = pytest.mark.ray

# A pipeline whose task 1 raises, until the flag file exists.
FAILING_RUN = '''
import os, sys
import ray
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import HtmlTagsExtractor, RayTaskExecutor, WarcHtmlReader

address, warcs, out, flag = sys.argv[1:5]

def fail_in_task_1(data, rank=0, world_size=1, flag=flag):
    for doc in data:
        if rank == 1 and not os.path.exists(flag):
            raise ValueError("a page this step cannot take")
        yield doc

ray.init(address=address, logging_level="WARNING")
RayTaskExecutor([WarcHtmlReader(warcs), HtmlTagsExtractor(), fail_in_task_1, JsonlWriter(f"{out}/documents")],
                tasks=2, mem_per_cpu_gb=0.5, logging_dir=f"{out}/logs").run()
'''


def hold_tasks(cluster, node: str) -> list[psutil.Process]:
    """The processes of the task running on `node`, suspended: its task cannot end before the node is killed."""
    held = [p for p in cluster_processes(cluster.token, node=node) if command_line(p)[:1] == ["ray::plexity_task"]]
    for process in held:
        with contextlib.suppress(psutil.NoSuchProcess):  # (one that has just ended: nothing to hold)
            process.suspend()
    return held


def end_held(held: list[psutil.Process]) -> None:
    """Held processes killed with their node: held, they cannot end by Ray's means, as a lost machine's go with it."""
    for process in held:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()


def test_a_task_that_fails_is_named_with_its_exception_and_the_same_run_redoes_only_it(cluster, tmp_path):
    # (the run logged Ray's error whole, its traceback in terminal colours, and `run` returned as if all was well:
    # `plexity run` said "1 task(s) did not complete", naming none; a full disk was "exited with status 1")
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    for name in ("a", "b"):
        (warcs / f"{name}.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "run.py").write_text(FAILING_RUN)
    command = [sys.executable, "run.py", cluster.address, str(warcs), str(tmp_path / "out"), str(tmp_path / "flag")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert (  # (Ray's copy of the task's log lines may come after it, or amid it)
        "plexity_plugins.errors.TasksFailed: 1 task(s) did not complete (task 1: its worker process exited with "
        "status 1: ValueError: a page this step cannot take (the task's log says more)); their output is incomplete "
        "and not marked complete: run the same command again to redo only them") in proc.stderr, proc.stderr[-3000:]
    said = [line.split(" - ", 1)[1] for line in proc.stderr.splitlines() if "executor:_run_on_ray" in line]
    assert said == ["task 1 did not complete: its worker process exited with status 1: ValueError: a page this step "
                    "cannot take (the task's log says more)"]
    assert completions(tmp_path / "out" / "logs") == ["00000"]
    (tmp_path / "flag").touch()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert again.returncode == 0 and "Will run pipeline on 1 incomplete ranks out of 2 total" in again.stderr, \
        again.stderr[-3000:]
    assert completions(tmp_path / "out" / "logs") == ["00000", "00001"]


def test_sigterm_stops_the_run_and_its_tasks_as_ctrl_c_does(cluster, tmp_path):
    # (ray.init put its own handler in place of the command's: the run ended with exit 1 and Ray's
    # "*** SIGTERM received ..." stack, no word of what was kept or how to go on)
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    (warcs / "big.warc.gz").write_bytes(SAMPLE.read_bytes() * 60)  # (gzip members one after another: one WARC)
    run = subprocess.Popen(PLEXITY + ["run", str(warcs), "-o", str(tmp_path / "out"), "--executor", "ray",
                                      "--ray-address", cluster.address, "--mem-per-cpu-gb", "0.5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})

    def task_running():  # (its process, forked from the Ray worker: two of that title, one the other's parent)
        tasks = [p for p in cluster_processes(cluster.token) if command_line(p)[:1] == ["ray::plexity_task"]]
        with contextlib.suppress(psutil.NoSuchProcess):  # (one ended meanwhile: look again)
            return any(p.ppid() in {t.pid for t in tasks} for p in tasks)
        return False

    assert wait_until(lambda: run.poll() is not None or task_running(), timeout=120) and run.poll() is None
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err[-3000:]
    assert err.strip().splitlines()[-1] == ("plexity run: interrupted: the tasks that completed are kept; the same "
                                            "command runs the others")
    assert "SIGTERM received" not in err
    assert wait_until(lambda: not task_running(), timeout=20)  # the task stopped with the run
    assert completions(tmp_path / "out" / "logs") == []


def test_an_address_where_another_server_answers_is_one_line_at_once_not_minutes_of_retries(tmp_path):
    # (the dashboard's port, say: ray.init tried it again and again, "Failed to get cluster ID from GCS server")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{server.server_port}"
    try:
        started = time.monotonic()
        proc = subprocess.run(PLEXITY + ["run", str(SAMPLE), "-o", str(tmp_path / "out"), "--executor", "ray",
                                         "--ray-address", address], capture_output=True, text=True, timeout=300,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 2 and time.monotonic() - started < RAY_GAVE_UP  # (1.2 s alone, 20 s under load)
    # (gRPC's HTTP/2 preface: Python 3.14's http.server answers it with a status line, "505 Invalid HTTP version";
    # before 3.14, with its error page alone)
    answered = b"HTTP/1.0 " if sys.version_info >= (3, 14) else b"<!DOCTYPE"
    assert proc.stderr.strip().splitlines()[-1] == (
        f"plexity run: error: what answers at {address} is not a Ray cluster (it answered {answered}, not gRPC): "
        f"give the port of the head's `ray start --head --port` (6379 by default; not the dashboard's, 8265), or give "
        f"its head's address (--ray-address, $RAY_ADDRESS)")
    assert not (tmp_path / "out" / "logs" / "completions").exists()


def test_a_run_whose_only_node_big_enough_dies_stops_saying_so_not_waits_for_ever(cluster, tmp_path):
    # (the lost task was run again by Ray on a node of 2 CPUs, which no node had any more: the run waited, silent)
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    # (40 copies: the task is held once it runs, below, so it cannot end, completed, before its node is killed)
    (warcs / "big.warc.gz").write_bytes(SAMPLE.read_bytes() * 40)
    big = cluster.add_node("big", num_cpus=2)
    cluster.wait_for_nodes()
    # (--node-wait 5: how long it waits for a node that could run the task to join; 30 s by default)
    run = subprocess.Popen(PLEXITY + ["run", str(warcs), "-o", str(tmp_path / "out"), "--executor", "ray",
                                      "--ray-address", cluster.address, "--cpus-per-task", "2", "--mem-per-cpu-gb",
                                      "0.25", "--node-wait", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert wait_until(lambda: run.poll() is not None or any(
            command_line(p)[:1] == ["ray::plexity_task"] for p in cluster_processes(cluster.token, node="big")),
            timeout=120) and run.poll() is None
        held = hold_tasks(cluster, "big")
        cluster.kill_node(big)
        end_held(held)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, err[-3000:]
    assert ("plexity run: 1 task(s) did not complete (ValueError: task(s) [0] cannot run: no node of the Ray cluster "
            "can run a task of 2 CPUs and 0.5 GB of memory (the nodes have: ") in err, err[-3000:]
    assert "; none has for 5 s (a node that could run them left the cluster)" in err, err[-3000:]
    assert "wait: no node of the Ray cluster can run a task of 2 CPUs" in err  # (said as it began to wait)
    assert "(a node that could run them left the cluster; the run stops unless one joins within 5 s)" in err


def test_a_node_that_joins_within_the_node_wait_runs_the_lost_task_and_the_run_completes(cluster, tmp_path):
    # What --node-wait is for: the only node big enough for the task is lost mid-task, the run says it waits, and a
    # node as big joins (the node restarted, or an autoscaler's new one): Ray runs the task again there, whole.
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    # (40 copies: the task is held once it runs, below, so it cannot end before its node is killed; and read whole
    # again where it runs next)
    (warcs / "big.warc.gz").write_bytes(SAMPLE.read_bytes() * 40)
    big = cluster.add_node("big", num_cpus=2)
    cluster.wait_for_nodes()
    out, err_path = tmp_path / "out", tmp_path / "run.err"
    with open(err_path, "w") as err_file:
        run = subprocess.Popen(PLEXITY + ["run", str(warcs), "-o", str(out), "--executor", "ray", "--ray-address",
                                          cluster.address, "--cpus-per-task", "2", "--mem-per-cpu-gb", "0.25",
                                          "--node-wait", "120"], stdout=subprocess.PIPE, stderr=err_file, text=True,
                               cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert wait_until(lambda: run.poll() is not None or any(
            command_line(p)[:1] == ["ray::plexity_task"] for p in cluster_processes(cluster.token, node="big")),
            timeout=120) and run.poll() is None
        held = hold_tasks(cluster, "big")  # (held mid-task: what is lost with the node is a task not yet done)
        cluster.kill_node(big)
        end_held(held)
        assert wait_until(lambda: run.poll() is not None or "the run stops unless one joins within 120 s)"
                          in err_path.read_text(), timeout=60) and run.poll() is None, err_path.read_text()[-3000:]
        again = cluster.add_node("big-again", num_cpus=2)
        try:
            output, _ = run.communicate(timeout=300)
        finally:
            cluster.kill_node(again)  # (the module's other tests count on no node of 2 CPUs but their own)
    finally:
        if run.poll() is None:
            run.kill()
    err = err_path.read_text()
    assert run.returncode == 0, err[-3000:]
    assert "1/1 tasks completed" in output and "did not complete" not in err, err[-3000:]
    # (the WARC is the sample 40 times: each document 40 times, the lost task's files written again, not appended)
    times = Counter(d["id"] for d in read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded"))
    assert times and set(times.values()) == {40}, times


def test_a_task_whose_node_dies_after_it_completed_is_counted_completed_not_a_failed_run(cluster, tmp_path):
    # (its rank was marked complete, but its result never reached the driver: the run waited for a node that could run
    # it again, then ended "0 task(s) did not complete (ValueError: task(s) [0] cannot run ...)", exit 1)
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    (warcs / "a.warc.gz").write_bytes(SAMPLE.read_bytes())
    big = cluster.add_node("big", num_cpus=2)
    cluster.wait_for_nodes()
    out = tmp_path / "out"
    run = subprocess.Popen(PLEXITY + ["run", str(warcs), "-o", str(out), "--executor", "ray", "--ray-address",
                                      cluster.address, "--cpus-per-task", "2", "--mem-per-cpu-gb", "0.25"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert wait_until(lambda: run.poll() is not None or completions(out / "logs"), timeout=120, poll=0.001)
        # The task's processes held where its rank is complete, before it returns: then its node dies, and they with it.
        held = hold_tasks(cluster, "big")
        assert run.poll() is None, "the task's result came back before its node could be killed"
        cluster.kill_node(big)
        end_held(held)
        output, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err[-3000:]
    assert "1/1 tasks completed" in output and "did not complete" not in err, err[-3000:]
