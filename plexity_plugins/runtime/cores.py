"""`usable_cores()`: how many CPUs this process can keep busy, a container's CPU limit included.

``os.cpu_count()`` counts the machine's CPUs.  In a container given two CPUs of a 64-CPU machine
(``docker run --cpus 2``, a Kubernetes CPU limit: a cgroup CPU quota) it still says 64, and a local
run that started a worker per CPU ran 64, each holding its own model and page, on two CPUs' time and
the container's memory.  Here the count is the CPUs the process may run on (its affinity: ``taskset``,
a cpuset), lowered to its cgroup's CPU quota (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``, of its
cgroup or of one above it), rounded up; at least 1.
"""

from __future__ import annotations

import math
import os

from .cgroups import cgroup_folders


def usable_cores() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not Linux)
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, cores)


def cgroup_cpu_quota() -> float | None:
    """The CPUs' worth of time this process's cgroups allow (the smallest quota over its cgroup and the ones
    above it, v2 and v1), None without a quota or where there are no cgroups to read."""
    quotas = [quota for folder, version in cgroup_folders("cpu")
              if (quota := (_quota_v2 if version == 2 else _quota_v1)(folder)) is not None]
    return min(quotas) if quotas else None


def _quota_v2(folder: str) -> float | None:
    try:
        with open(os.path.join(folder, "cpu.max")) as f:
            limit, period = f.read().split()[:2]
    except (OSError, ValueError):
        return None
    return None if limit == "max" else int(limit) / int(period)


def _quota_v1(folder: str) -> float | None:
    try:
        with open(os.path.join(folder, "cpu.cfs_quota_us")) as f:
            limit = int(f.read())
        with open(os.path.join(folder, "cpu.cfs_period_us")) as f:
            period = int(f.read())
    except (OSError, ValueError):
        return None
    return None if limit <= 0 or period <= 0 else limit / period


def limit_blas_threads() -> None:
    """numpy's OpenBLAS starts a thread per CPU of the process's affinity as numpy is imported, blind to a CPU
    quota: in a pod of one CPU on a 64-CPU machine, 63 idle threads in each process that imports it, each counted by
    the pod's pids.max, past which OpenBLAS raises SIGINT (``plexity run`` said "interrupted", exit 130, at a pids.max
    of 3 on two CPUs).  Here it runs in the calling thread alone unless the user set its threads (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS); called before numpy is imported, it holds for the extraction children too (they inherit it).
    The one product a command computes with it, the language identifier's (a few hundred features by ~100
    languages a page), costs less than handing it to a thread: with a thread per usable core, ~2.5 % more CPU for a
    `plexity run` of articles, its threads spinning between pages; and split over threads, the product adds its terms
    in an order that follows the thread count, so the identifier's scores differed in their last bits between a
    machine of one CPU and one of two."""
    if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
