"""The datatrove pipeline on a real Ray cluster of three nodes on this machine: `plexity run
--executor ray`, a RayPipelineExecutor built by hand, a node killed mid-run, a run stopped
mid-way and resumed, and WARCs read over HTTP.

The cluster is a head and two worker nodes, each its own `ray start --block` (a raylet with one CPU; this machine may
have two cores) in a process apart, started once for the module (tests/ray_cluster.py); nothing of Ray runs in the
test process. Every process it starts carries a token in its environment (`cluster_processes`), so the tests can tell
a process the cluster left behind from anybody else's.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from helpers import REPO, SAMPLE, command_line, read_jsonl_dir, split_warc
from ray_cluster import (NODE_VAR, RAY_GAVE_UP, TOKEN_VAR, cluster,  # noqa: F401 - a fixture
                         cluster_processes, orphans, private_ray_folder, wait_until)
from warc_corpus import count_records, write_corpus

pytestmark = pytest.mark.ray

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
READER, EXTRACTOR = "📖 - READER: 🕷 WARC HTML", "🛢 - EXTRAC: 🌲 learned (block forest)"  # in stats.json (the default)


# -- the cluster, and what it leaves behind ----------------------------------------------

@pytest.fixture
def no_orphans(cluster):
    """Fail the test if it left a process of the cluster without its parent."""
    yield
    left = wait_until(lambda: not orphans(cluster.token), timeout=10)
    assert left is True, f"orphaned processes: {orphans(cluster.token)}"


# -- inputs and outputs ------------------------------------------------------------------

@pytest.fixture(scope="module")
def warcs(tmp_path_factory) -> Path:
    """The sample WARC in 6 shards, and the generated WARCs of every kind and damage."""
    directory = tmp_path_factory.mktemp("warcs")
    split_warc(SAMPLE, directory, 6)
    write_corpus(directory / "generated")
    return directory


def records_in(directory: Path) -> int:
    """WARC records in the files of a directory, as warcio counts them (independent of us)."""
    return sum(count_records(p) for p in sorted(directory.rglob("*.warc*")))


def plexity_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*PLEXITY, "run", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def merged_stats(logs: Path) -> dict[str, dict]:
    """{step name: {stat: total}} of a run's merged stats.json (a name without the settings that
    follow it in brackets: ``▦ dense (lexbor) [timeout 30 s, ...]``)."""
    merged = json.loads((logs / "stats.json").read_text())
    return {step["name"].split(" [")[0]: {k: v["total"] if isinstance(v, dict) else v for k, v in step["stats"].items()}
            for step in merged}


def outputs(out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """({document id: text} written, {document id: filter reason} excluded); fails if an id
    occurs twice."""
    documents, excluded = read_jsonl_dir(out / "documents"), read_jsonl_dir(out / "excluded")
    ids = [d["id"] for d in documents + excluded]
    assert len(ids) == len(set(ids)), "a document was written twice"
    return ({d["id"]: d["text"] for d in documents}, {d["id"]: d["metadata"]["filter_reason"] for d in excluded})


def completions(logs: Path) -> list[str]:
    directory = logs / "completions"
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


@pytest.fixture(scope="module")
def local_output(warcs, tmp_path_factory) -> Path:
    """What the local executor makes of the same input: the reference."""
    out = tmp_path_factory.mktemp("local")
    proc = plexity_run(str(warcs), "-o", str(out), "--executor", "local", "--tasks", "6", "--workers", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


# -- plexity run --executor ray ----------------------------------------------------------

def test_plexity_run_on_three_nodes_reads_every_record_once_and_writes_what_the_local_executor_writes(
        cluster, warcs, local_output, tmp_path, no_orphans):
    out = tmp_path / "ray"
    proc = plexity_run(str(warcs), "-o", str(out), "--executor", "ray", "--ray-address", cluster.address,
                       "--tasks", "6", "--mem-per-cpu-gb", "0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 node(s), 3 CPUs" in proc.stdout and "6/6 tasks completed (6 in this run" in proc.stdout
    stats = merged_stats(out / "logs")
    assert stats[READER]["records"] == records_in(warcs)  # every record read, by one task only
    assert outputs(out) == outputs(local_output)  # same text, same drops: the scorer and extractor in actors
    reader, extractor = stats[READER], stats[EXTRACTOR]
    documents, excluded = outputs(out)
    assert reader["documents"] == extractor["total"]
    assert extractor["forwarded"] == len(documents) + len(excluded)  # each document kept or excluded


def test_a_task_too_big_for_every_node_is_an_error_not_an_endless_wait(cluster, warcs, tmp_path):
    proc = plexity_run(str(warcs), "-o", str(tmp_path / "out"), "--executor", "ray",
                       "--ray-address", cluster.address, "--cpus-per-task", "2", timeout=120)
    assert proc.returncode == 2  # (a usage error: it said "1 task(s) did not complete ...; re-run the same command")
    assert proc.stderr.splitlines()[-1].startswith("plexity run: error: no node of the Ray cluster can run a task of "
                                                   "2 CPUs and 4 GB")
    assert "(the nodes have: 1 CPUs" in proc.stderr


def test_plexity_run_without_the_ray_extra_says_which_extra_to_install(tmp_path):
    # a missing executor: one line, exit 2, nothing written (scripts/env/datatrove_processing.sh
    # checks the same in an environment without Ray)
    code = ("import sys; sys.modules['ray'] = None\n"  # as if ray were not installed
            "from plexity_plugins.cli import main\n"
            f"sys.exit(main(['run', {str(SAMPLE)!r}, '-o', {str(tmp_path / 'out')!r}, '--executor', 'ray']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'plexity run: error: plexity run --executor ray needs Ray, which is not installed in this environment: '
        f"{sys.executable} -m pip install -e '{REPO}[ray]'"]
    assert not (tmp_path / "out").exists()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_address_where_no_ray_runs_is_one_line_at_once_not_minutes_of_retries(tmp_path):
    # (ray.init tried such an address again and again, a warning every few seconds, for over 3 minutes)
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    proc = plexity_run(str(SAMPLE), "-o", str(tmp_path / "out"), "--executor", "ray", "--ray-address", address,
                       timeout=300)
    assert proc.returncode == 2 and time.monotonic() - started < RAY_GAVE_UP
    assert proc.stderr.strip().splitlines()[-1] == (
        f"plexity run: error: no Ray cluster answers at {address} (Connection refused): start one there "
        f"(`ray start --head`), or give its head's address (--ray-address, $RAY_ADDRESS)")
    assert not (tmp_path / "out" / "logs" / "completions").exists()


def test_a_run_not_connected_whose_ray_would_join_a_stopped_cluster_is_one_line_at_once(tmp_path):
    # A script that calls no ray.init() (the docs say to connect first): Ray's own ray.init(), called by the
    # first task, joins the cluster the last `ray start` named in Ray's temp folder; one since stopped was
    # tried again and again for minutes.
    address = f"127.0.0.1:{free_port()}"
    (tmp_path / "tmp" / "ray").mkdir(parents=True)
    (tmp_path / "tmp" / "ray" / "ray_current_cluster").write_text(address)
    script = textwrap.dedent(f"""
        from datatrove.pipeline.writers import JsonlWriter
        from plexity_plugins.datatrove import RayTaskExecutor, WarcHtmlReader

        RayTaskExecutor([WarcHtmlReader({str(SAMPLE.parent)!r}, glob_pattern={SAMPLE.name!r}),
                         JsonlWriter({str(tmp_path / "out")!r})], tasks=1, logging_dir={str(tmp_path / "logs")!r}).run()
    """)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_TMPDIR": str(tmp_path / "tmp")}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and time.monotonic() - started < RAY_GAVE_UP
    assert proc.stderr.strip().splitlines()[-1] == (
        f"ConnectionError: no Ray cluster answers at {address} (Connection refused): start one there (`ray start "
        f"--head`), or connect first: ray.init(address=...) for a running cluster, ray.init(address=\"local\") "
        f"for a Ray of this machine (this address is what {tmp_path}/tmp/ray/ray_current_cluster keeps from an "
        f"earlier `ray start`, which Ray joins when no ray.init() came first; `ray stop` removes it)")
    assert not (tmp_path / "logs" / "completions").exists()


@pytest.fixture
def token_cluster():
    """The address of a one-node Ray of token authentication, started by `ray start --head` as a
    user starts one where a token exists (~/.ray/auth_token; here the token is in its environment),
    stopped by ending its processes (`ray stop` would stop every Ray of the machine)."""
    token = f"{os.getpid()}-{time.time_ns()}"
    ray_folder = private_ray_folder()  # (its sessions and its address file, removed with it: tests/ray_cluster.py)
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": os.urandom(16).hex(), TOKEN_VAR: token,
           "RAY_TMPDIR": ray_folder}
    try:
        for attempt in range(3):  # (a port found free can be taken by a test beside this one before Ray binds it)
            address = f"127.0.0.1:{free_port()}"
            start = subprocess.run([str(Path(sys.executable).parent / "ray"), "start", "--head",
                                    f"--port={address.split(':')[1]}", "--num-cpus=1", "--include-dashboard=false",
                                    "--disable-usage-stats"], env=env, capture_output=True, text=True, timeout=120)
            if start.returncode == 0:
                break
            for process in cluster_processes(token):  # (what a failed start left)
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
        assert start.returncode == 0, start.stdout[-2000:] + start.stderr[-2000:]
        yield address, env
    finally:
        for process in cluster_processes(token):
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        assert wait_until(lambda: not cluster_processes(token), timeout=20) is True
        shutil.rmtree(ray_folder, ignore_errors=True)


def test_a_cluster_of_token_authentication_says_to_set_ray_auth_mode_not_just_failed_to_connect(
        token_cluster, tmp_path):
    # Ray sends a token to an address given explicitly only under RAY_AUTH_MODE=token; without it, it said
    # "Failed to connect to Ray cluster at ...", the reason only in warnings among its retries.
    address, cluster_env = token_cluster
    env = {k: v for k, v in cluster_env.items() if k != "RAY_AUTH_MODE"}  # (the token is there, as in ~/.ray)
    env["RAY_NUM_REDIS_GET_RETRIES"] = "2"  # (Ray's retries of the refused connection: 20 by default, a second each)
    run = [*PLEXITY, "run", str(SAMPLE), "-o", str(tmp_path / "out"), "--executor", "ray", "--ray-address", address,
           "--mem-per-cpu-gb", "0.5"]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"plexity run: error: the Ray cluster at {address} uses token authentication and this run sent no token: "
        f"set RAY_AUTH_MODE=token (Ray then reads the token from $RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or "
        f"~/.ray/auth_token; `ray get-auth-token` on the head prints the cluster's)")
    env["RAY_AUTH_MODE"] = "token"  # and with it, the run runs
    proc = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 0 and "1/1 tasks completed" in proc.stdout, proc.stderr[-3000:]


# -- a RayPipelineExecutor a user builds -------------------------------------------------

# datatrove's own RayPipelineExecutor with our steps, and a step that says which node ran the task.
DATATROVE_RAY_RUN = '''
import os, sys
import ray
from datatrove.executor.ray import RayPipelineExecutor
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter, WarcHtmlReader

address, warcs, out = sys.argv[1:4]

def where(data, rank: int = 0, world_size: int = 1):  # which node ran the task
    for doc in data:
        doc.metadata["node"] = os.environ.get("PLEXITY_TEST_RAY_NODE")
        yield doc

ray.init(address=address, logging_level="WARNING")
RayPipelineExecutor(
    pipeline=[WarcHtmlReader(warcs), HtmlTagsExtractor(), where,
              PerplexitySentenceFilter(method="regions", exclusion_writer=JsonlWriter(f"{out}/excluded")),
              JsonlWriter(f"{out}/documents")],
    tasks=6, logging_dir=f"{out}/logs", cpus_per_task=1, mem_per_cpu_gb=0.5,
).run()
ray.shutdown()
'''


def test_our_steps_under_datatrove_s_own_ray_executor_run_on_every_node(cluster, warcs, tmp_path, no_orphans):
    out = tmp_path / "out"
    (tmp_path / "run.py").write_text(DATATROVE_RAY_RUN)
    proc = subprocess.run([sys.executable, "run.py", cluster.address, str(warcs), str(out)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert completions(out / "logs") == [f"{rank:05d}" for rank in range(6)]
    documents = read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded")
    assert {d["metadata"]["node"] for d in documents} == {"head", "n2", "n3"}
    assert len({d["id"] for d in documents}) == len(documents)
    assert merged_stats(out / "logs")[READER]["records"] == records_in(warcs)


def test_the_ray_example_runs_against_an_existing_cluster(cluster, tmp_path, no_orphans):
    out = tmp_path / "example"
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "datatrove_ray.py"), str(REPO / "examples"),
                           str(out), "--address", cluster.address, "--tasks", "2", "--mem-per-cpu-gb", "0.5"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert completions(out / "logs") == ["00000", "00001"]
    assert len(read_jsonl_dir(out / "documents")) + len(read_jsonl_dir(out / "excluded")) == 12


# docs/ray.md's script, its paths relative (datatrove's own JsonlWriter and the logging dir among them)
RELATIVE_PATHS_RUN = '''
import sys
import ray
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import DenseExtractor, PerplexitySentenceFilter, RayTaskExecutor, WarcHtmlReader

out = sys.argv[2]
ray.init(address=sys.argv[1], logging_level="WARNING")
RayTaskExecutor(pipeline=[WarcHtmlReader("examples/"), DenseExtractor(),
                          PerplexitySentenceFilter(exclusion_writer=JsonlWriter(f"{out}/excluded")),
                          JsonlWriter(f"{out}/documents")],
                tasks=2, cpus_per_task=1, mem_per_cpu_gb=0.5, logging_dir=f"{out}/logs").run()
ray.shutdown()
'''


def test_relative_paths_mean_the_driver_s_folder_on_nodes_started_in_another(cluster, tmp_path, no_orphans):
    # The cluster's nodes were started in this session's folder, the script runs in another: a
    # relative path meant the worker's folder, where the tasks wrote; the driver then failed
    # reading their stats (FileNotFoundError) and a re-run found nothing done.
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "sample.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "run.py").write_text(RELATIVE_PATHS_RUN)
    out = f"out-relative-{os.getpid()}"  # (a name no other run uses, in the nodes' folder either)
    command = [sys.executable, "run.py", cluster.address, out]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (Path.cwd() / out).exists()  # nothing in the nodes' folder
    assert completions(tmp_path / out / "logs") == ["00000", "00001"]
    documents = read_jsonl_dir(tmp_path / out / "documents") + read_jsonl_dir(tmp_path / out / "excluded")
    assert len(documents) == 12
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0 and "All 2 tasks appear to be completed already" in again.stderr, again.stderr[-3000:]


# A run whose only step fills the disk of its logging folder (argv[3]) as the task ends.
FILLING_RUN = '''
import os, sys
import ray
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.datatrove import RayTaskExecutor

address, logs, filler = sys.argv[1:4]

class FillTheDisk(PipelineStep):
    name = "fill the disk"
    def __init__(self, filler):
        super().__init__()
        self.filler = filler
    def run(self, data, rank=0, world_size=1):
        descriptor = os.open(self.filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(descriptor, bytes(4096)):
                pass
        except OSError:
            pass
        finally:
            os.close(descriptor)
        yield from ()

ray.init(address=address, logging_level="WARNING")
RayTaskExecutor(pipeline=[FillTheDisk(filler)], tasks=1, logging_dir=logs, mem_per_cpu_gb=0.5).run()
'''


def test_a_stats_json_the_full_disk_cut_short_is_not_left_behind(cluster, tmp_path, disk_of, no_orphans):
    # The logging folder's own disk fills up as the task ends (its logs, stats and completions are on another: the
    # symlinks), so the run's stats.json is the write that finds it full.  The driver wrote it in place: a 0-byte
    # stats.json was left, which `plexity report` reads; now as the local run writes it (whole or not at all:
    # `save_stats`).
    disk = disk_of("64k")
    logs = disk.path / "logs"
    logs.mkdir()
    for name in ("logs", "stats", "completions"):
        (tmp_path / name).mkdir()
        (logs / name).symlink_to(tmp_path / name)
    (tmp_path / "run.py").write_text(FILLING_RUN)
    proc = subprocess.run([sys.executable, "run.py", cluster.address, str(logs), str(disk.path / "filler")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1 and "No space left on device" in proc.stderr.splitlines()[-1], proc.stderr[-3000:]
    assert completions(logs) == ["00000"]
    left = sorted(p.name for p in logs.iterdir())  # (no stats.json cut short, nor the part it was written as)
    assert "stats.json" not in left and not [name for name in left if name.endswith(".part")], left


@pytest.mark.parametrize("where", ["stats", "logs"])
def test_a_logging_folder_whose_disk_is_full_stops_the_tasks_as_a_local_run_and_the_rerun_completes_them(
        cluster, tmp_path, small_disk, where, no_orphans):
    # The task's stats (or its log, which datatrove's Ray executor copies there once the task has run; its completion
    # marker is written after that) go to a full disk (the symlink): the rest of the logging folder has room.  The stats were
    # left as 0-byte files and the run said "error: Expecting value: line 1 column 1 (char 0)", exit status 2; a
    # full disk under the log raised FullDiskStop past the task's handler, and "0 of 2 task(s) did not complete"
    # with both marked complete.  Now as a local run (tests/test_run_faults.py): one line, exit status 4, nothing
    # half written, and the same command again completes them.
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out, logs = tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    (small_disk / where).mkdir()
    (logs / where).symlink_to(small_disk / where)
    command = [str(shards), "-o", str(out), "--logging-dir", str(logs), "--extractor", "tags", "--executor", "ray",
               "--ray-address", cluster.address, "--tasks", "2", "--mem-per-cpu-gb", "0.5"]
    full = plexity_run(*command)
    assert full.returncode == 4, full.stderr[-3000:]
    errors = [line for line in full.stderr.splitlines() if line.startswith("plexity run: error:")]
    assert len(errors) == 1 and "no space left on device" in errors[0] and "2 of 2 task(s) did not complete" \
        in errors[0], full.stderr[-3000:]
    assert "Traceback" not in full.stderr and "Logging error" not in full.stderr
    assert completions(logs) == []
    if where == "stats":  # (no 0-byte stats/NNNNN.json, which the merge failed on)
        assert list((small_disk / where).iterdir()) == []
    assert not [p for p in logs.rglob("*") if p.name.endswith(".part")]

    subprocess.run(["mount", "-o", "remount,size=20m", str(small_disk)], check=True)
    again = plexity_run(*command)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2/2 tasks completed (2 in this run" in again.stdout
    assert sorted(p.name for p in (small_disk / where).iterdir()) == (
        ["00000.json", "00001.json"] if where == "stats" else ["task_00000.log", "task_00001.log"])


def _writers_of(path: Path) -> list[int]:
    """The processes other than this one that hold `path` open (a named pipe: its writer), from /proc."""
    pids = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        with contextlib.suppress(OSError):
            if os.readlink(fd) == str(path) and int(fd.parts[2]) != os.getpid():
                pids.append(int(fd.parts[2]))
    return pids


def test_a_task_is_marked_complete_only_once_its_log_is_in_the_logging_folder(cluster, tmp_path, no_orphans):
    # datatrove's Ray executor marks a task complete, then copies its log to the logging folder; the driver counts a
    # task marked for COMPLETED_GRACE seconds as complete and cancels it.  A log copy that then found the disk full
    # unmarked the task, but on a loaded node (Ray's workers run at niceness 15) not always within the grace: the
    # task was cancelled marked, and a run that stopped both its tasks said "1 of 2 task(s) did not complete" (the
    # flaky [logs] case above).  Here the task's log is a named pipe this test has filled: the task's copy opens it
    # and cannot write until the test reads, so when the test sees the task holding it, no marker may exist yet.
    # (Reading as the copy opened the pipe was not enough: a log of 2 KB fits a pipe's buffer, the copy and the
    # marker could both come before a loaded test looked.)
    import fcntl

    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 1)
    out, logs = tmp_path / "out", tmp_path / "logs"
    (logs / "logs").mkdir(parents=True)
    pipe = logs / "logs" / "task_00000.log"
    os.mkfifo(pipe)
    read_end = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    write_end = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    filler = fcntl.fcntl(write_end, 1031, 4096)  # (F_SETPIPE_SZ: the buffer at its least, a page)
    assert os.write(write_end, b"\0" * filler) == filler  # (full: the task's first write of its log waits)
    seen: dict = {}
    run_over = threading.Event()

    def read_the_log():
        try:
            while not _writers_of(pipe) and not run_over.wait(0.05):
                pass
            seen["markers"] = completions(logs) if not run_over.is_set() else None
        finally:
            os.close(write_end)  # (the log's end is the task's close now)
            os.set_blocking(read_end, True)
            with os.fdopen(read_end, "rb") as log:
                seen["log"] = log.read()[filler:].decode("utf-8", "replace")

    reader = threading.Thread(target=read_the_log, daemon=True)
    reader.start()
    try:
        run = plexity_run(str(shards), "-o", str(out), "--logging-dir", str(logs), "--extractor", "tags",
                          "--executor", "ray", "--ray-address", cluster.address, "--tasks", "1",
                          "--mem-per-cpu-gb", "0.5")
    finally:
        run_over.set()  # (the task never opened its log: let the reader go)
        reader.join(timeout=30)
    assert run.returncode == 0, run.stderr[-3000:]
    assert seen.get("markers") == [], seen  # no marker while the task held its log, unwritten
    assert "Processing done for rank=0" in seen["log"]  # (the whole log came through the pipe)
    assert completions(logs) == ["00000"] and "1/1 tasks completed (1 in this run" in run.stdout


# -- a node lost mid-run -----------------------------------------------------------------

# plexity run's pipeline and executor, with a step that stops on the node called "victim",
# in the first task that gets there, until that node is killed (then never again).
PAUSING_RUN = '''
import os, sys, time
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, completed_tasks, make_executor, ray_connection

warcs, out, flag, address = sys.argv[1:5]

class PauseOnVictim(PipelineStep):
    name = "pause on victim"
    def __init__(self, flag):
        super().__init__()
        self.flag = flag
    def run(self, data, rank=0, world_size=1):
        for doc in data:
            if os.environ.get("PLEXITY_TEST_RAY_NODE") == "victim" and not os.path.exists(self.flag):
                with open(self.flag, "w") as f:
                    f.write(str(rank))
                time.sleep(600)
            yield doc

pipeline = build_pipeline(warcs, out)  # plexity run's default extractor (dense)
pipeline.insert(2, PauseOnVictim(flag))  # after the extractor: its child process is running
executor = make_executor(pipeline, "ray", tasks=6, logging_dir=str(Path(out) / "logs"), mem_per_cpu_gb=0.5)
with ray_connection(address):
    executor.run()
print(f"{completed_tasks(Path(out) / 'logs')}/6 tasks completed")
'''


def start_pausing_run(cluster, warcs: Path, tmp_path: Path):
    """Add a node called "victim", start the pausing run as a driver of its own, and wait until
    it pauses there with the five other tasks done; (driver process, out, paused rank)."""
    victim = cluster.add_node("victim")
    cluster.wait_for_nodes()
    script, out, flag = tmp_path / "run.py", tmp_path / "out", tmp_path / "paused"
    script.write_text(textwrap.dedent(PAUSING_RUN))
    driver = subprocess.Popen([sys.executable, str(script), str(warcs), str(out), str(flag), cluster.address],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
    assert wait_until(lambda: flag.exists() and len(completions(out / "logs")) == 5, timeout=120), \
        driver.stdout.read() if driver.poll() is not None else "the run did not pause on the victim node"
    # the victim's task runs there: its Ray worker and the task's process (forked: it keeps the
    # worker's process title), and the extractor's child (`python -m plexity_plugins.extractors.sandbox`)
    processes = [command_line(p) for p in cluster_processes(cluster.token, node="victim")]
    task_processes = [c for c in processes if c and c[0].startswith("ray::plexity_task")]
    extractor_children = [c for c in processes if "plexity_plugins.extractors.sandbox" in c]
    assert len(task_processes) >= 2 and extractor_children, [c[:3] for c in processes]
    return victim, driver, out, int(flag.read_text())


def test_a_node_killed_mid_run_its_task_is_redone_elsewhere_and_nothing_written_twice(
        cluster, warcs, local_output, tmp_path, no_orphans):
    victim, driver, out, paused_rank = start_pausing_run(cluster, warcs, tmp_path)
    cluster.kill_node(victim)  # its raylet: SIGKILL
    # every process of the node ends with it (the task's process and its extractor child too)
    assert wait_until(lambda: not cluster_processes(cluster.token, node="victim"), timeout=15)
    output, _ = driver.communicate(timeout=180)
    assert driver.returncode == 0, output[-3000:]
    assert "6/6 tasks completed" in output  # datatrove resubmitted the lost task to a live node
    assert completions(out / "logs") == [f"{rank:05d}" for rank in range(6)]
    assert outputs(out) == outputs(local_output)
    assert merged_stats(out / "logs")[READER]["records"] == records_in(warcs)


def test_a_run_stopped_with_a_node_is_resumed_by_running_it_again_which_redoes_only_the_lost_task(
        cluster, warcs, local_output, tmp_path, no_orphans):
    victim, driver, out, paused_rank = start_pausing_run(cluster, warcs, tmp_path)
    driver.kill()  # the run itself is lost (its machine, Ctrl+C twice) with the node
    cluster.kill_node(victim)
    driver.communicate(timeout=60)
    assert wait_until(lambda: not cluster_processes(cluster.token, node="victim"), timeout=15), \
        [command_line(p)[:4] for p in cluster_processes(cluster.token, node="victim")]
    done = completions(out / "logs")
    assert f"{paused_rank:05d}" not in done and len(done) == 5
    written = {p.name: p.stat().st_mtime_ns for p in (out / "documents").iterdir() if p.name[:5] in done}

    again = subprocess.run(driver.args, capture_output=True, text=True, timeout=300, cwd=REPO)  # the same run
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Will run pipeline on 1 incomplete ranks out of 6 total" in again.stderr
    assert "6/6 tasks completed" in again.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "documents").iterdir() if p.name[:5] in done} == written
    assert merged_stats(out / "logs")[READER]["records"] == records_in(warcs)
    assert outputs(out) == outputs(local_output)


# -- WARCs over HTTP ---------------------------------------------------------------------

class _TokenHandler(http.server.SimpleHTTPRequestHandler):
    """Static files (with directory listings), for requests bearing the token only."""

    token = "Bearer s3cr3t"

    def do_GET(self):
        if self.headers.get("Authorization") != self.token:
            self.send_error(401, "a token is needed")
            return
        super().do_GET()

    def do_HEAD(self):
        if self.headers.get("Authorization") != self.token:
            self.send_error(401, "a token is needed")
            return
        super().do_HEAD()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def http_warcs(warcs):
    """The WARCs served over HTTP on 127.0.0.1, to requests with the token."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_TokenHandler,
                                                                                  directory=str(warcs.parent)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/{warcs.name}/"
    server.shutdown()
    server.server_close()


def test_plexity_run_on_ray_reads_warcs_over_http_with_credentials(cluster, http_warcs, warcs, local_output,
                                                                     tmp_path, no_orphans):
    out = tmp_path / "http"
    credentials = json.dumps({"headers": {"Authorization": _TokenHandler.token}})
    proc = plexity_run(http_warcs, "-o", str(out), "--storage-options", credentials, "--executor", "ray",
                       "--ray-address", cluster.address, "--tasks", "6", "--mem-per-cpu-gb", "0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{len(list(warcs.rglob('*.warc*')))} WARC files, 6 tasks" in proc.stdout
    assert merged_stats(out / "logs")[READER]["records"] == records_in(warcs)
    assert outputs(out) == outputs(local_output)
    assert "s3cr3t" not in (out / "logs" / "executor.json").read_text()  # credentials are not logged


def test_a_url_input_without_its_credentials_stops_with_the_server_s_answer(http_warcs, tmp_path):
    for url in (http_warcs, http_warcs + "shard-0.warc.gz"):
        proc = plexity_run(url, "-o", str(tmp_path / "out"), timeout=120)
        assert proc.returncode == 2
        assert "401, message='a token is needed'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()  # stopped before any task


def test_a_url_whose_filesystem_is_not_installed_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['s3fs'] = None\n"  # as if s3fs were not installed
            "from plexity_plugins.cli import main\n"
            f"sys.exit(main(['run', 's3://bucket/crawl/', '-o', {str(tmp_path)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert "s3://bucket/crawl/ needs a package that is not installed" in proc.stderr
    # the command that installs it here: this environment's pip, from this checkout (editable, as set up)
    assert proc.stderr.strip().endswith(f"{sys.executable} -m pip install -e '{REPO}[remote]'")


@pytest.mark.parametrize("option", ["--output-dir", "--logging-dir"])
def test_an_output_url_is_a_usage_error_not_a_local_folder_named_s3(option, tmp_path):
    # A cluster without a shared disk: the input may be a URL, so the output too, one would think;
    # s3://bucket/out was a path, written as ./s3:/bucket/out on every node.
    args = ["-o", "s3://bucket/out"] if option == "--output-dir" else ["-o", "out", "--logging-dir", "s3://b/logs"]
    proc = subprocess.run(PLEXITY + ["run", str(SAMPLE), *args, "--executor", "ray"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    url = args[-1]
    assert proc.returncode == 2 and proc.stderr.splitlines() == [
        f"plexity run: error: {option} {url} is a URL: plexity run writes to a path, on a cluster one every node "
        f"sees (a shared disk); datatrove's writers and logging_dir take URLs in a pipeline you build (docs/ray.md)"]
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing launched


def test_a_single_warc_and_a_glob_over_http(http_warcs, warcs, tmp_path):
    credentials = json.dumps({"headers": {"Authorization": _TokenHandler.token}})
    one = plexity_run(http_warcs + "shard-0.warc.gz", "-o", str(tmp_path / "one"), "--storage-options", credentials,
                      "--extractor", "tags")
    assert one.returncode == 0 and "1 WARC files" in one.stdout, one.stderr[-3000:]
    glob = plexity_run(http_warcs + "generated/mixed*", "-o", str(tmp_path / "glob"), "--storage-options",
                       credentials, "--extractor", "tags")
    assert glob.returncode == 0 and "2 WARC files" in glob.stdout, glob.stderr[-3000:]
    assert merged_stats(tmp_path / "glob" / "logs")[READER]["records"] == 28


# A pipeline whose tasks go to the node with the "isolated" resource only.
ISOLATED_RUN = '''
import sys
import ray
from plexity_plugins.datatrove import DenseExtractor, JsonlDocumentWriter, PerplexitySentenceFilter, RayTaskExecutor
from plexity_plugins.datatrove import WarcHtmlReader

address, warcs, out = sys.argv[1:4]
ray.init(address=address, logging_level="WARNING")
RayTaskExecutor(pipeline=[WarcHtmlReader(warcs), DenseExtractor(), PerplexitySentenceFilter(),
                          JsonlDocumentWriter(f"{out}/documents")],
                tasks=2, mem_per_cpu_gb=0.5, logging_dir=f"{out}/logs",
                ray_remote_kwargs={"resources": {"isolated": 1}}).run()
'''


def test_an_output_folder_a_node_does_not_share_stops_the_run_at_its_first_task(cluster, tmp_path, no_orphans):
    # The node's `local` folder is a disk of its own (a tmpfs in a mount namespace of its own), as a
    # node's /tmp or /scratch is: the tasks wrote their documents and completion markers there, and
    # the run failed only when all was done, reading the stats it could not see (FileNotFoundError).
    local = tmp_path / "local"
    local.mkdir()
    node = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         f"mount -t tmpfs tmpfs {local} && exec {Path(sys.executable).parent / 'ray'} start --address "
         f"{cluster.address} --num-cpus 1 --resources '{{\"isolated\": 1}}' --block --disable-usage-stats"],
        env={**os.environ, NODE_VAR: "isolated"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        try:
            cluster.wait_for_nodes(resource="isolated", give_up=lambda: node.poll() is not None)
        except AssertionError:
            if node.poll() is None:
                raise
        if node.poll() is not None:
            pytest.skip(f"no node in a mount namespace of its own here: {node.stderr.read()[-500:]}")
        (tmp_path / "run.py").write_text(ISOLATED_RUN)
        proc = subprocess.run([sys.executable, "run.py", cluster.address, str(REPO / "examples"), str(local / "out")],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 1  # at the first task, before it read anything
        assert re.fullmatch(rf"plexity_plugins\.errors\.LoggingFolderNotShared: task\(s\) \[[01]\] on .*: the logging "
                            rf"folder {local / 'out' / 'logs'} does not hold the record this run wrote there .*",
                            proc.stderr.splitlines()[-1]), proc.stderr[-3000:]
    finally:
        node.terminate()
        node.wait(timeout=60)
        for process in cluster_processes(cluster.token, node="isolated"):  # (what `ray start` left)
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        wait_until(lambda: not cluster_processes(cluster.token, node="isolated"), timeout=20)


# -- the extraction child's memory ceiling: the task's Ray reservation ---------------------

def test_a_task_reserving_little_memory_lowers_its_extraction_ceiling_and_a_huge_page_is_a_counted_skip(
        cluster, tmp_path, no_orphans):
    """The default ceiling (768 MiB) is sized by what the Ray task reserved (`--mem-per-cpu-gb`), as a Slurm job's is
    by its --mem: a task of 0.4 GB lowers it, says so once in its log naming the reservation, counts the task as
    ``memory_ceiling_lowered``, and the 14 MB page, which grows a `dense` child by ~250 MiB, is a counted
    ``memory_limit`` skip instead of a child grown past the task's reservation (where Ray's memory monitor kills
    workers when the node runs low).  A task of 2 GB keeps 768 MiB and reads the page."""
    from hostile_pages import write_big_page_warc

    warcs = tmp_path / "warcs"
    warcs.mkdir()
    write_big_page_warc(warcs / "big.warc.gz")

    def run(name: str, gb: str):
        out = tmp_path / name
        # (--extract-timeout: the page's memory is what is tested, not its time; on four test processes sharing two
        # cores its reading took over the default 30 s, and was a counted timeout)
        proc = plexity_run(str(warcs), "-o", str(out), "--executor", "ray", "--ray-address", cluster.address,
                           "--tasks", "1", "--extractor", "dense", "--mem-per-cpu-gb", gb, "--extract-timeout", "300")
        assert proc.returncode == 0, proc.stderr[-3000:]
        extractor = next(stats for step, stats in merged_stats(out / "logs").items() if "EXTRAC" in step)
        written = sorted(d["metadata"]["url"] for folder in ("documents", "excluded")
                         for d in read_jsonl_dir(out / folder))
        return extractor, written, (out / "logs" / "logs" / "task_00000.log").read_text(), proc.stdout + proc.stderr

    extractor, written, log, said = run("small", "0.4")
    lowered = [line for line in log.splitlines() if "the extraction memory ceiling is" in line]
    assert len(lowered) == 1, log[-3000:]
    assert ", not 768 MiB: this Ray task's 410 MiB (the memory it reserved) holds this process (" in lowered[0]
    ceiling = int(re.search(r"ceiling is (\d+) MiB", lowered[0])[1])
    assert 128 <= ceiling < 410 - 128  # (what the task leaves beside its own process, and what that still loads)
    assert extractor.get("memory_ceiling_lowered") == 1 and extractor.get("memory_limit") == 1, extractor
    assert written == ["http://t/fine", "http://t/fine2"]
    assert "1 page(s) were skipped at an extraction memory ceiling lowered to fit this job's memory" in said

    extractor, written, log, _ = run("large", "2")
    assert "the extraction memory ceiling" not in log and "memory_ceiling_lowered" not in extractor, log[-3000:]
    assert "memory_limit" not in extractor
    assert written == ["http://t/big", "http://t/fine", "http://t/fine2"], extractor


# Two ranks in one Ray task (tasks_per_job=2) whose memory `ray_remote_kwargs` sets (1 GiB, not the 4 GB of
# mem_per_cpu_gb): each rank's process shares it.
SHARED_RESERVATION_RUN = '''
import sys
import ray
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import DenseExtractor, RayTaskExecutor, WarcHtmlReader

address, warcs, out = sys.argv[1:4]
ray.init(address=address, logging_level="WARNING")
RayTaskExecutor(pipeline=[WarcHtmlReader(warcs), DenseExtractor(), JsonlWriter(f"{out}/documents")],
                tasks=2, tasks_per_job=2, mem_per_cpu_gb=4, logging_dir=f"{out}/logs",
                ray_remote_kwargs={"memory": 2**30}).run()
'''


def test_a_ray_task_s_ranks_share_the_memory_it_reserved_as_ray_remote_kwargs_set_it(cluster, tmp_path, no_orphans):
    # (1 GiB alone leaves a child more than 768 MiB beside a task's process: shared by two, it does not)
    (tmp_path / "run.py").write_text(SHARED_RESERVATION_RUN)
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), cluster.address, str(REPO / "examples"),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        log = (tmp_path / "out" / "logs" / "logs" / f"task_{rank:05d}.log").read_text()
        lowered = [line for line in log.splitlines() if "the extraction memory ceiling is" in line]
        assert len(lowered) == 1, log[-3000:]
        assert ", not 768 MiB: this Ray task's 1,024 MiB (the memory it reserved) shared by 2 ranks holds this " \
               "process (" in lowered[0]
    extractor = next(stats for step, stats in merged_stats(tmp_path / "out" / "logs").items() if "EXTRAC" in step)
    assert extractor["memory_ceiling_lowered"] == 2
