"""Peak memory of a process and all its descendants, sampled from /proc (Linux; no psutil).

`TreeMemory(pid)` samples every `interval` seconds in a thread: the sum of the tree's RSS
(what each process has resident, pages shared between a forked parent and child counted in
both: an upper bound) and of its PSS (each shared page split between its sharers: what the
tree adds to the machine's memory, close to what a cgroup charges).  `peak_rss` and
`peak_pss` are the largest sums seen, in bytes.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

_PAGE = os.sysconf("SC_PAGE_SIZE")


def children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    return children


def tree(pid: int) -> list[int]:
    children, found, todo = children_map(), [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, ()))
    return found


def rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class TreeMemory:
    """Samples the memory of `pid`'s process tree until `stop()` (or use it as a context manager)."""

    def __init__(self, pid: int | None = None, interval: float = 0.02):
        self.pid = pid if pid is not None else os.getpid()
        self.interval = interval
        self.peak_rss = self.peak_pss = 0
        self.peak_processes = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            pids = tree(self.pid)
            self.peak_rss = max(self.peak_rss, sum(rss(p) for p in pids))
            self.peak_pss = max(self.peak_pss, sum(pss(p) for p in pids))
            self.peak_processes = max(self.peak_processes, len(pids))
            time.sleep(self.interval)

    def start(self) -> "TreeMemory":
        self._thread.start()
        return self

    def stop(self) -> "TreeMemory":
        self._done.set()
        self._thread.join()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()


def run_measured(command: list[str], timeout: float = 600, **kwargs) -> tuple[subprocess.CompletedProcess, TreeMemory]:
    """Run `command`, sampling its process tree's memory; (the completed process, the sampler)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    with TreeMemory(process.pid) as memory:
        stdout, stderr = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), memory


def mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"
