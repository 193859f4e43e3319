"""This process's cgroups (Linux): the folders of a controller's cgroup and of the ones above it, the memory a
container may use (`memory_limit`), and how many of its processes the out-of-memory killer has ended (`oom_kills`).

A container (``docker run --memory``, a Kubernetes pod's limit, Slurm's ``--mem`` with its cgroup plugin) is a cgroup
whose limit the kernel enforces by killing a process of it, with SIGKILL: to the process that sees its child or worker
die, that is "exit status -9", which said nothing of memory.  cgroup v1 (``memory.limit_in_bytes``,
``memory.oom_control``) and v2 (``memory.max``, ``memory.events``) are both read, as `cores` reads the CPU quota.
"""

from __future__ import annotations

import functools
import os

# cgroup v1 says "no limit" as the largest multiple of the page size that fits in a signed 64-bit number
_NO_LIMIT = 1 << 60


def cgroup_folders(controller: str) -> list[tuple[str, int]]:
    """(folder, 1 or 2: the cgroup version) of this process's cgroup for `controller` (``"cpu"``, ``"memory"``) and of
    each one above it up to where its hierarchy is mounted, its own first, v1's then v2's (whose files say whether the
    controller is on there); [] where there are no cgroups to read (not Linux)."""
    try:
        with open("/proc/self/cgroup") as f:
            memberships = [line.rstrip("\n").split(":", 2) for line in f]
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return []
    found = []
    for fields in mounts:
        if "-" not in fields:
            continue
        root, mount_point = fields[3], fields[4]
        fstype, options = fields[fields.index("-") + 1], fields[-1].split(",")
        if fstype == "cgroup2":
            path, version = next((p for h, c, p in memberships if h == "0" and c == ""), None), 2
        elif fstype == "cgroup" and controller in options:
            path, version = next((p for _, c, p in memberships if controller in c.split(",")), None), 1
        else:
            continue
        if path is None:
            continue
        # (the path is from the hierarchy's root; the mount may show only a part of it, as in a container)
        relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
        folder = os.path.normpath(os.path.join(mount_point, relative))
        while folder.startswith(mount_point):
            found.append((folder, version))
            if folder == mount_point:
                break
            folder = os.path.dirname(folder)
    return sorted(found, key=lambda entry: entry[1])  # (stable: each hierarchy's own cgroup before its parents)


@functools.lru_cache(maxsize=4)
def _memory_folders(pid: int) -> tuple[tuple[str, int], ...]:
    """`cgroup_folders("memory")`, read once per process (`pid`: a fork reads its own; reading mountinfo took
    ~0.1 ms, and an extraction child's start looks at the count of OOM kills)."""
    return tuple(cgroup_folders("memory"))


def memory_limit() -> int | None:
    """The bytes of memory this process's cgroups let it and its cgroup's other processes use: the smallest limit of
    its memory cgroup and the ones above it (v1 and v2); None without a limit or cgroups to read."""
    limits = []
    for folder, version in _memory_folders(os.getpid()):
        try:
            with open(os.path.join(folder, "memory.limit_in_bytes" if version == 1 else "memory.max")) as f:
                value = f.read().strip()
        except OSError:
            continue
        if value.isdigit() and int(value) < _NO_LIMIT:
            limits.append(int(value))
    return min(limits) if limits else None


def oom_kills() -> int | None:
    """How many processes of this process's own memory cgroup the out-of-memory killer has ended (v1's
    ``memory.oom_control``, v2's ``memory.events``: ``oom_kill``), None where the kernel does not count them."""
    for folder, version in _memory_folders(os.getpid()):
        try:
            with open(os.path.join(folder, "memory.oom_control" if version == 1 else "memory.events")) as f:
                for line in f:
                    name, _, value = line.partition(" ")
                    if name == "oom_kill" and value.strip().isdigit():
                        return int(value)
        except OSError:
            continue
    return None


def out_of_memory(kills_before: int | None) -> str | None:
    """When the out-of-memory killer has ended a process of this process's memory cgroup since it counted
    `kills_before` (`oom_kills`): what ran out, in words ("this container's memory (its cgroup's limit: 512 MiB)",
    "the machine's memory"); else None."""
    if kills_before is None:
        return None
    kills = oom_kills()
    if kills is None or kills <= kills_before:
        return None
    limit = memory_limit()
    if limit is None:
        return "the machine's memory"
    return f"this container's memory (its cgroup's limit: {limit / 2**20:,.0f} MiB)"
