"""The tests' Ray cluster: Ray's own `ray.cluster_utils.Cluster`, a head and two worker nodes of one CPU each
(this machine may have two cores), started once for a test module (`cluster`), every process it starts marked in
its environment (`cluster_processes`), so that a test can tell a process the cluster left behind from anybody
else's.  Used by tests/test_datatrove_ray.py and tests/test_ray_probe37.py."""

from __future__ import annotations

import os
import time

import psutil
import pytest
import ray
from ray.cluster_utils import Cluster

TOKEN_VAR = "PLEXITY_TEST_RAY_CLUSTER"  # in the environment of every process of the cluster
NODE_VAR = "PLEXITY_TEST_RAY_NODE"  # which node a process belongs to


def cluster_processes(token: str, node: str | None = None) -> list[psutil.Process]:
    """The live processes started by the test cluster (of one node only, if given), the test
    session's own process aside."""
    found = []
    for process in psutil.process_iter():
        try:
            env = process.environ()
            if (process.pid != os.getpid() and env.get(TOKEN_VAR) == token
                    and (node is None or env.get(NODE_VAR) == node)
                    and process.status() != psutil.STATUS_ZOMBIE):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def orphans(token: str) -> list[str]:
    """Processes of the cluster whose parent is neither a process of the cluster nor this
    test session: adopted by init (or a subreaper) after their parent died."""
    ours = {p.pid for p in cluster_processes(token)} | {os.getpid()}
    left = []
    for process in cluster_processes(token):
        try:
            if process.ppid() not in ours:
                left.append(f"{process.pid} (parent {process.ppid()}): {' '.join(process.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            continue
    return left


def wait_until(condition, timeout: float, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(poll)


@pytest.fixture(scope="module")
def cluster():
    token = f"{os.getpid()}-{time.time_ns()}"
    os.environ[TOKEN_VAR] = token  # inherited by the raylets, hence by every worker
    # Quick health checks: a killed node is declared dead in ~1.5 s instead of ~15.  No memory
    # monitor: it kills workers when the *machine* is 95% full, which other programs on a
    # shared machine can make it (observed here: an actor killed as it started).
    system_config = {"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                     "health_check_initial_delay_ms": 0, "memory_monitor_refresh_ms": 0}
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "env_vars": {NODE_VAR: "head"},
                                                            "_system_config": system_config})
    try:
        for name in ("n2", "n3"):
            cluster.add_node(num_cpus=1, env_vars={NODE_VAR: name})
        cluster.wait_for_nodes()
        cluster.token = token
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        left = wait_until(lambda: not cluster_processes(token), timeout=20) or cluster_processes(token)
        del os.environ[TOKEN_VAR]
        if left is not True:
            for process in left:  # leave nothing running, then fail
                try:
                    process.kill()
                except psutil.NoSuchProcess:
                    pass
            pytest.fail(f"the Ray cluster left processes behind: {[p.cmdline()[:3] for p in left]}")
