"""The tests' Ray cluster: a head and two worker nodes of one CPU each (this machine may have two cores), each node
Ray's own `ray start --block` in a process of its own, started once for a test module (`cluster`), every process it
starts marked in its environment (`cluster_processes`), so that a test can tell a process the cluster left behind
from anybody else's, and the teardown ends those and no others (not `ray stop`: it stops every Ray of the machine).
Used by tests/test_datatrove_ray.py and tests/test_ray_probe37.py.

Nothing of Ray runs in the test process (no `ray.init`, no `ray.cluster_utils.Cluster`): with Ray's `Cluster` started
there, every child that process later forked with `multiprocess` died of SIGSEGV after the cluster's teardown on
Python 3.13.5 and Ray 2.60 (datatrove's `LocalPipelineExecutor`: "EOFError" from `multiprocess.Manager()`, in
whichever test file came next on that pytest worker)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

TOKEN_VAR = "PLEXITY_TEST_RAY_CLUSTER"  # in the environment of every process of the cluster
NODE_VAR = "PLEXITY_TEST_RAY_NODE"  # which node a process belongs to
RAY = str(Path(sys.executable).parent / "ray")
# Quick health checks: a killed node is declared dead in ~1.5 s instead of ~15.  No memory monitor: it kills
# workers when the *machine* is 95% full, which other programs on a shared machine can make it (observed here: an
# actor killed as it started).
SYSTEM_CONFIG = {"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                 "health_check_initial_delay_ms": 0, "memory_monitor_refresh_ms": 0}
# Without token authentication, which `ray start --head` turns on by default (Ray 2.60; tests/test_datatrove_ray.py
# starts a cluster of its own for that). Ports Ray picks (0), not its fixed defaults, which another Ray of the machine
# may hold; 150 MiB of object store, as Ray's `Cluster` gave each node.
NODE_OPTIONS = ["--num-gpus=0", f"--object-store-memory={150 * 2**20}", "--min-worker-port=0", "--max-worker-port=0",
                "--dashboard-agent-listen-port=0", "--disable-usage-stats"]
# A run that cannot reach a cluster fails "at once": well before the minutes Ray's retries took (over 3).  The bound is
# that wide because such a run starts Python and imports Ray and datatrove: 1 to 4 s alone, 33 s and more beside two
# busy processes (a 2-core CI machine runs two test processes at once).
RAY_GAVE_UP = 150

# A driver of its own (a process apart) that waits until the cluster has `count` live nodes, or one with `resource`.
NODES_UP = '''
import sys, time, ray
address, count, resource, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
ray.init(address=address, logging_level="ERROR", log_to_driver=False)
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    alive = [n for n in ray.nodes() if n["Alive"]]
    if (resource and any(resource in n["Resources"] for n in alive)) or (not resource and len(alive) == count):
        sys.exit(0)
    time.sleep(0.2)
sys.exit(f"{len(alive)} live node(s), resources {[sorted(n['Resources']) for n in alive]}")
'''


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


def private_ray_folder() -> str:
    """A new folder for a Ray of the tests' own (its RAY_TMPDIR), in the machine's temporary folder: the caller
    removes it once that Ray has ended."""
    return tempfile.mkdtemp(prefix="plexity-ray-")


def wait_until(condition, timeout: float, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(poll)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    name: str
    process: subprocess.Popen  # its `ray start --block`, which the node's Ray processes are children of
    log: Path


class RayCluster:
    """Nodes started by `ray start --block` as children of this process, `address` the head's."""

    def __init__(self, token: str, folder: Path):
        self.token, self.folder, self.nodes, self.address = token, folder, [], None
        self.descendants: list[psutil.Process] = []  # of the nodes ended
        # The nodes' temporary folder (TMPDIR: the tasks' scratch folders), the cluster's own, removed with it: a
        # task whose worker a test kills leaves its folder there, not in the machine's /tmp.  Ray's own folder stays
        # where it was (RAY_TMPDIR).
        self.tmp = folder / "tmp"
        self.tmp.mkdir()
        # Ray's own folder (RAY_TMPDIR: its sessions' logs and sockets, and `ray_current_cluster`, the address a bare
        # `ray.init()` joins), one of the cluster's too, removed with it: in the machine's /tmp/ray, every run of the
        # tests left its sessions (~15 folders) and the address of a cluster since stopped, which the machine's next
        # bare `ray.init()` tried to join for minutes.  Short (`private_ray_folder`): a socket's path holds 107 bytes.
        self.ray_tmp = private_ray_folder()

    def start_head(self) -> Node:
        for attempt in range(3):  # (a port found free can be taken by a test beside this one before Ray binds it)
            port = free_port()
            try:
                head = self._started(self._launch("head", 1, ["--head", f"--port={port}", "--include-dashboard=false",
                                                              f"--system-config={json.dumps(SYSTEM_CONFIG)}"]))
                self.address = f"127.0.0.1:{port}"
                return head
            except RuntimeError:
                if attempt == 2:
                    raise

    def add_node(self, name: str, num_cpus: int = 1) -> Node:
        return self.add_nodes([name], num_cpus)[0]

    def add_nodes(self, names: list[str], num_cpus: int = 1) -> list[Node]:
        """Worker nodes, one after the other (two `ray start` at once in one session folder can pick the same
        raylet socket name: one of them then timed out, "The current node timed out during startup")."""
        return [self._started(self._launch(name, num_cpus, [f"--address={self.address}"])) for name in names]

    def _launch(self, name: str, num_cpus: int, options: list[str]) -> Node:
        log = self.folder / f"{name}-{len(self.nodes)}.log"
        with open(log, "w") as out:
            process = subprocess.Popen([RAY, "start", "--block", f"--num-cpus={num_cpus}", *NODE_OPTIONS, *options],
                                       env={**os.environ, TOKEN_VAR: self.token, NODE_VAR: name,
                                            "RAY_AUTH_MODE": "disabled", "TMPDIR": str(self.tmp),
                                            "RAY_TMPDIR": self.ray_tmp},
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        node = Node(name, process, log)
        self.nodes.append(node)
        return node

    def _started(self, node: Node) -> Node:
        """The node once its `ray start` says it started; a RuntimeError with its output if it ended instead."""
        started = wait_until(lambda: node.process.poll() is not None or "Ray runtime started." in node.log.read_text(),
                             timeout=120)
        if node.process.poll() is not None or not started:
            self.kill_node(node)
            raise RuntimeError(f"`ray start` of node {node.name} failed: {node.log.read_text()[-3000:]}")
        return node

    def wait_for_nodes(self, timeout: float = 60, resource: str = "", give_up=lambda: False) -> None:
        """Wait until every node started and not killed is alive in the cluster (or one with `resource` is),
        asked by a driver in a process of its own; `give_up()` true ends the wait early (then an AssertionError)."""
        waiter = subprocess.Popen([sys.executable, "-c", NODES_UP, self.address, str(len(self.nodes)), resource,
                                   str(timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: waiter.poll() is not None or give_up(), timeout=timeout + 60)
        finally:
            if waiter.poll() is None:
                waiter.kill()
            _, err = waiter.communicate()
        assert waiter.returncode == 0, f"the cluster's nodes are not all up: {err[-2000:]}"

    def kill_node(self, node: Node) -> None:
        """The node dies as a machine's Ray does when its raylet is killed: its `ray start` and the processes that
        started (raylet, log monitor, ...) get SIGKILL, its reaper first (it would end the node's whole process
        group itself), not the node's workers: they end by Ray's own means, as on a real node."""
        self._end(node, graceful=False)

    def shutdown(self) -> None:
        """Every node ended as Ray's `Cluster.shutdown` ends them: SIGTERM to its raylet and the other processes its
        `ray start` started, then SIGKILL to what is left of those, its reaper and its `ray start` (SIGTERM to `ray
        start` would drain the node for up to 30 s).  The nodes end together: one wait for all, not one each."""
        self._end(*reversed(self.nodes), graceful=True)
        self.end_leftovers()

    def _end(self, *nodes: Node, graceful: bool) -> None:
        trees, reapers, others = [], [], []
        for node in nodes:
            try:
                tree = psutil.Process(node.process.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                tree = []
            children = [p for p in tree if _parent(p) == node.process.pid]
            reapers += [p for p in children if _is_reaper(p)]
            others += [p for p in children if not _is_reaper(p)]
            trees += tree
        if graceful:
            for process in others:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.terminate()
            psutil.wait_procs(others, timeout=1)  # (raylets and the GCS did not end of SIGTERM in 5 s here: no use)
        for process in [*reapers, *others]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        for node in nodes:
            node.process.kill()
            node.process.wait(timeout=30)
            self.nodes.remove(node)
        # The rest of the node (its workers, the raylet's agents) ends of itself; `shutdown` ends what is still
        # there then (Ray's agents, their environment overwritten by their process title, escape `cluster_processes`)
        self.descendants.extend(trees)

    def end_leftovers(self) -> None:
        """SIGKILL to whatever of the nodes' process trees is still there a second after their end (Ray's agents, which
        outlive their raylet by more than 5 s)."""
        _, alive = psutil.wait_procs(self.descendants, timeout=1)
        for process in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(alive, timeout=10)
        self.descendants = []


def _parent(process: psutil.Process) -> int | None:
    with contextlib.suppress(psutil.NoSuchProcess):
        return process.ppid()
    return None


def _is_reaper(process: psutil.Process) -> bool:
    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        return any("ray_process_reaper" in part for part in process.cmdline())
    return False


@pytest.fixture(scope="module")
def cluster():
    token = f"{os.getpid()}-{time.time_ns()}"
    os.environ[TOKEN_VAR] = token  # inherited by the test's drivers too
    folder = Path(tempfile.mkdtemp(prefix="plexity-ray-cluster-"))  # (the `ray start` logs, the nodes' TMPDIR)
    cluster = RayCluster(token, folder)
    try:
        cluster.start_head()
        cluster.add_nodes(["n2", "n3"])
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()
        left = wait_until(lambda: not cluster_processes(token), timeout=20) or cluster_processes(token)
        del os.environ[TOKEN_VAR]
        if left is not True:
            for process in left:  # leave nothing running, then fail
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            pytest.fail(f"the Ray cluster left processes behind: {[p.pid for p in left]} (logs: {folder})")
        shutil.rmtree(folder)
        shutil.rmtree(cluster.ray_tmp, ignore_errors=True)  # (a file an ended process still wrote at the end)
