"""How many workers a local run starts: the CPUs the process may use, not the machine's.

In a container given two CPUs of a 64-CPU machine (a cgroup CPU quota: ``docker run --cpus``, a
Kubernetes limit) `os.cpu_count()` says 64, and `plexity run` started 64 workers, each with its own
model and page, on two CPUs' time and the container's memory.  These tests put a real process in a
real cgroup with a CPU quota (root, as CI runs them) or on one CPU with taskset.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from plexity_plugins.runtime.cores import cgroup_cpu_quota, usable_cores

WORKERS_FOR_8_TASKS = ("from plexity_plugins.cli.run import local_workers\n"
                       "from plexity_plugins.runtime.cores import usable_cores\n"
                       "print(usable_cores(), local_workers(8, None), local_workers(8, 3))")


def cpu_cgroup_folder() -> Path:
    """Where this process's CPU cgroup is (cgroup v1's cpu controller, or v2 with the cpu controller given to
    its children); skips the test, naming why, where a test cannot make a cgroup there."""
    if os.geteuid() != 0:
        pytest.skip("a CPU quota is a cgroup the test makes: that needs root")
    memberships = [line.rstrip("\n").split(":", 2) for line in open("/proc/self/cgroup")]
    for fields in (line.split() for line in open("/proc/self/mountinfo")):
        fstype, options = fields[fields.index("-") + 1], fields[-1].split(",")
        if fstype == "cgroup" and "cpu" in options:
            path = next(p for _, c, p in memberships if "cpu" in c.split(","))
            return Path(fields[4]) / path.lstrip("/")
    for fields in (line.split() for line in open("/proc/self/mountinfo")):
        if fields[fields.index("-") + 1] == "cgroup2":
            folder = Path(fields[4]) / next(p for h, _, p in memberships if h == "0").lstrip("/")
            if "cpu" in (folder / "cgroup.subtree_control").read_text().split():
                return folder
    pytest.skip("no cgroup with the cpu controller for this process's children here (cgroup v1 cpu, or v2 with "
                "+cpu in cgroup.subtree_control)")


def write_quota(folder: Path, cpus: float) -> None:
    if (folder / "cpu.max").exists():
        (folder / "cpu.max").write_text(f"{int(cpus * 100_000)} 100000")
    else:
        (folder / "cpu.cfs_period_us").write_text("100000")
        (folder / "cpu.cfs_quota_us").write_text(str(int(cpus * 100_000)))


@pytest.fixture
def cgroup_with_quota():
    """``make(cpus, nested=False)``: a new cgroup of `cpus` CPUs' quota (a cgroup inside it when `nested`,
    without a quota of its own); returns the folder a process is put in.  Removed after the test."""
    made: list[Path] = []

    def make(cpus: float, nested: bool = False) -> Path:
        folder = cpu_cgroup_folder() / f"plexity-test-{uuid.uuid4().hex[:8]}"
        try:
            folder.mkdir()
        except OSError as exc:
            pytest.skip(f"cannot make a cgroup here: {exc}")
        made.append(folder)
        write_quota(folder, cpus)
        if nested:
            (folder / "inner").mkdir()
            made.append(folder / "inner")
            return folder / "inner"
        return folder

    yield make
    for folder in reversed(made):
        folder.rmdir()  # (its process has ended)


def run_in(folder: Path | None, code: str, prefix: tuple[str, ...] = ()) -> str:
    """`code` run by a new Python in cgroup `folder` (it moves itself there before Python starts)."""
    python = [*prefix, sys.executable, "-c", code]
    if folder is None:
        command = python
    else:
        command = ["sh", "-c", f'echo $$ > "{folder}/cgroup.procs" && exec "$@"', "sh", *python]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_container_s_cpu_limit_is_the_number_of_workers_a_local_run_starts(cgroup_with_quota):
    # (--workers given is taken as given)
    assert run_in(cgroup_with_quota(1.0), WORKERS_FOR_8_TASKS) == "1 1 3"


def test_a_limit_of_part_of_a_cpu_still_runs_one_worker_and_a_fraction_counts_up(cgroup_with_quota):
    assert run_in(cgroup_with_quota(0.3), WORKERS_FOR_8_TASKS) == "1 1 3"
    expected = min(2, len(os.sched_getaffinity(0)))  # (1.5 CPUs' time keeps two workers busy part of it)
    assert run_in(cgroup_with_quota(1.5), WORKERS_FOR_8_TASKS) == f"{expected} {expected} 3"


def test_the_limit_of_a_cgroup_above_the_process_s_own_counts_too(cgroup_with_quota):
    # (Kubernetes sets the pod's limit on the pod's cgroup, the container's process sits in one below it)
    assert run_in(cgroup_with_quota(1.0, nested=True), WORKERS_FOR_8_TASKS) == "1 1 3"


def test_a_process_kept_to_one_cpu_runs_one_worker():
    if shutil.which("taskset") is None:
        pytest.skip("taskset (util-linux) is not installed")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine gives the tests one CPU: one worker either way")
    assert run_in(None, WORKERS_FOR_8_TASKS, prefix=("taskset", "-c", "0")) == "1 1 3"


def test_without_a_limit_every_cpu_the_process_may_use_is_counted():
    if cgroup_cpu_quota() is not None:
        pytest.skip(f"these tests run under a CPU quota of {cgroup_cpu_quota()} CPUs")
    assert usable_cores() == len(os.sched_getaffinity(0))
