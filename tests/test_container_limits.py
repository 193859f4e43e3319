"""A memory- and process-limited container (a Kubernetes pod's limit, ``docker run --memory``, Slurm's ``--mem``,
a pids.max): what a run says when the kernel enforces the limit.

Under a container's memory limit lower than the extraction ceiling (768 MiB by default) the kernel's out-of-memory
killer acts before the ceiling: it ends the extraction child (its oom_score_adj is 1000), which was counted as
``broken_process`` / ``extraction_failed`` with "the extractor process died (exit status -9)", nothing of memory.
Now the page is a ``memory_limit`` skip naming the container's limit, and a worker the killer ends is said with the
limit and ``--workers``.  At a pids.max, the extraction child that cannot be made blamed the interpreter ("check that
this user may run the Python interpreter, or reinstall"), and a task that could not start a thread before its log
was said as "(the task's log says why)" with no log.  (The default ceiling now fits a container's memory, 128 MiB in these 256, so the page is the ceiling's skip:
`test_locked_down_probe52`; these runs give the 768 MiB ceiling, kept with a warning, to meet the kernel's killer.)
Each test puts a real run in a real cgroup (root, a writable
cgroup v1 controller or v2 with it enabled for this process's children, as CI runs them) and removes it after.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from helpers import cgroup_oom_kills, plexity_in
from hostile_pages import FINE, write_big_page_warc

REPO = Path(__file__).resolve().parent.parent
@pytest.fixture(scope="module")
def hostile_warc(tmp_path_factory) -> Path:
    """A WARC of a fine page, a 14 MB page that grows a `dense` child past 200 MiB, and another fine page."""
    path = tmp_path_factory.mktemp("hostile") / "pages.warc.gz"
    write_big_page_warc(path)
    return path


def test_clean_counts_a_page_the_container_s_oom_killer_ended_as_memory_limit_naming_the_limit(
        cgroup, hostile_warc, tmp_path):
    folder = cgroup("memory", 256)
    done = plexity_in(folder, "clean", str(hostile_warc), "-o", str(tmp_path / "out"), "--extractor", "dense",
                      "--extract-memory", "768MiB")
    assert done.returncode == 0, done.stderr
    assert cgroup_oom_kills(folder) >= 1  # (the kernel acted, under the 768 MiB ceiling: not the ceiling)
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"memory_limit": 1} and stats["documents"] == 2, stats
    assert "this container's memory (its cgroup's limit: 256 MiB)" in done.stderr
    assert "out-of-memory killer" in done.stderr and "exit status -9" not in done.stderr


def test_run_counts_a_page_the_container_s_oom_killer_ended_as_memory_limit(cgroup, hostile_warc, tmp_path):
    folder = cgroup("memory", 256)
    done = plexity_in(folder, "run", str(hostile_warc.parent), "-o", str(tmp_path / "out"), "--extractor", "dense",
                      "--extract-memory", "768MiB")
    assert done.returncode == 0, done.stderr
    assert cgroup_oom_kills(folder) >= 1
    assert "lost: memory_limit 1" in done.stdout, done.stdout
    assert "1/1 tasks completed" in done.stdout
    # (the run's end says it too: it ended with exit 0 and "lost: ... broken_process 1" among the counts, and in a
    # container too small for its workers 31 ordinary pages of 1,497 went so, unsaid)
    assert re.search(r"plexity run: warning: the kernel's out-of-memory killer ended \d process\(es\) of this run: "
                     r"it ran out of this container's memory \(its cgroup's limit: 256 MiB\)", done.stderr), done.stderr
    log = (tmp_path / "out" / "logs" / "logs" / "task_00000.log").read_text()
    assert "skipped (memory_limit): extraction ran out of this container's memory (its cgroup's limit: 256 MiB)" \
        in log


def test_a_worker_the_container_s_oom_killer_ended_is_said_with_the_limit_and_workers(cgroup, hostile_warc,
                                                                                       tmp_path):
    # (without an extractor there is no child for the killer to take first: the worker holding the 14 MB page goes)
    folder = cgroup("memory", 200)
    out = tmp_path / "out"
    done = plexity_in(folder, "run", str(hostile_warc.parent), "-o", str(out), "--extractor", "none",
                      "--workers", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert cgroup_oom_kills(folder) >= 1
    assert ("task 0: its worker process was killed by the out-of-memory killer: it ran out of this container's "
            "memory (its cgroup's limit: 200 MiB); give the job more memory, or run fewer workers (--workers)") \
        in done.stderr, done.stderr
    assert "re-run the same command to run only those" in done.stderr


def test_an_extraction_child_that_a_pids_limit_stops_names_the_limit_not_the_interpreter(cgroup, tmp_path):
    folder = cgroup("pids", 1)  # (the command itself, and not one process more)
    page = tmp_path / "page.html"
    page.write_text(FINE)
    done = plexity_in(folder, "clean", str(page), "-o", str(tmp_path / "out"),
                      env={"OPENBLAS_NUM_THREADS": "1"})  # (OpenBLAS raises SIGINT when it cannot start its threads)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "pids.max" in done.stderr and "reinstall" not in done.stderr, done.stderr


def test_a_run_that_a_pids_limit_stops_names_the_limit_not_its_input(cgroup, tmp_path):
    # (listing the input starts fsspec's thread: it was "cannot list the input ...: RuntimeError: can't start new
    # thread", exit status 2, as if the input were wrong)
    folder = cgroup("pids", 1)
    done = plexity_in(folder, "run", str(REPO / "examples" / "sample.warc.gz"), "-o", str(tmp_path / "out"),
                      env={"OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "pids.max" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_numpy_s_threads_follow_the_container_s_cpu_limit_not_the_machine_s_cpus(cgroup, tmp_path):
    # (OpenBLAS started a thread per CPU of the machine as numpy was imported, and raised SIGINT when the pids.max
    # refused one: "plexity run: interrupted", exit 130, on two CPUs at a pids.max of 3)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine gives the tests one CPU: OpenBLAS starts no thread of its own either way")
    done = plexity_in([cgroup("pids", 3), cgroup("cpu", 1)], "run", str(REPO / "examples" / "sample.warc.gz"),
                      "-o", str(tmp_path / "out"), env={"OPENBLAS_NUM_THREADS": None, "OMP_NUM_THREADS": None})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OpenBLAS" not in done.stderr

