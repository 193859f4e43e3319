"""Shared fixtures: real KenLM models built with KenLM's own lmplz/build_binary."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest

from plexity_plugins.training import kenlm_tools

from helpers import controller_folder, private_slurm
from time_limit import pytest_handlecrashitem  # noqa: F401 - (a hook: pytest finds it here by its name)

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

TINY_CORPUS = """\
The cat sat on the mat. The dog sat on the rug. A cat and a dog sat together.
The council approved the budget for the new library. The library opens in the spring.
Residents asked the council about the new road. The mayor said the road would be finished soon.
The weather was warm and the park was full of families. Children played near the river.
Scientists measured the temperature of the river every morning. The results were published in a report.
The report said that the river was cleaner than it had been for many years.
"""


def build_tiny_model(directory: Path, name: str = "tiny", order: int = 3, threshold: float | None = 500.0,
                     corpus: str = TINY_CORPUS, binary: bool = True, **metadata) -> Path:
    """A real KenLM model from `corpus`, built by lmplz (+ build_binary), with metadata."""
    directory.mkdir(parents=True, exist_ok=True)
    text_path = directory / "train.txt"
    stats = kenlm_tools.write_training_text(corpus.split("\n"), text_path)
    arpa = directory / "model.arpa"
    kenlm_tools.run_lmplz(text_path, arpa, order, memory="64M", discount_fallback=True, temp_dir=directory)
    counts = kenlm_tools.arpa_counts(arpa)
    if binary:
        kenlm_tools.run_build_binary(arpa, directory / "model.bin", quantize_bits=None)
        arpa.unlink()
    text_path.unlink()
    info = kenlm_tools.make_info(name, order, stats, counts, corpus="tests", licence="CC0", **metadata)
    info.threshold = threshold
    info.save(directory / "model.json")
    return directory


# -- Ctrl-C in the programs the tests start -------------------------------------------------------------------
# A shell without job control starts a command in the background (`pytest &`, `nohup pytest &` in a script) with
# SIGINT ignored, and every program started from it inherits that: Python then installs no KeyboardInterrupt, and
# the tests that stop a run with Ctrl-C (SIGINT) waited out their time limit (three of them, in such a run).  The
# suite's processes take Python's handler back: a program they start begins with SIGINT's default (an ignored
# signal is inherited across exec, a handler is not).

def pytest_configure(config):
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# -- running the suite on every core (pytest-xdist: ``-n auto --dist loadfile`` in pyproject.toml) -----------
# Most tests wait on the processes they start (a `plexity` command, a crawl, a server, a Ray node's grace): one test
# at a time kept two cores half busy (0.9 of a core on average over five such files; 1.7 on two workers), so there is
# one worker more than cores (2026-12-07, two cores, the same clone, the set-up done: 2,396 tests in 16 min 48 s on
# three workers, 20 min 55 s on two; `.ci/run` then 19 min 30 s on three; four workers took 20 min 19 s where three
# took 19 min 05 s).  Each test file runs whole on one worker, so a module's fixtures (a Ray cluster, a built
# environment) are made once; a worker that runs a test using Slurm starts a private Slurm of its own (free ports, its
# own directory: several run side by side).  `-n 0` runs everything in this process.

MOST_WORKERS = 4  # (each test starts processes of its own, the Ray file a three-node cluster; measured on two cores)

# The longest files start first (seconds each took in a run on two workers, 2026-12-03), so that no worker is
# left with one of them at the end while the others have finished; the rest follow in their usual order.
LONGEST_FIRST = ("tests/test_environments.py",  # 261 s
                 "tests/test_datatrove_ray.py",  # 168 s
                 "tests/test_docs.py",  # 104 s
                 "tests/test_hostile_input.py",  # 104 s
                 "tests/test_memory_ceiling.py")  # 97 s


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    from plexity_plugins.runtime.cores import usable_cores

    return min(usable_cores() + 1, MOST_WORKERS)  # (a container's CPU limit counted, as `plexity run` counts it)


def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):  # (one process: the usual order)
        return

    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # (stable: each file's own order kept; every worker sorts the same collection alike)


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory):
    """Derived data (the language identifier's decompressed tables) goes to a directory of the
    test session's own, for this process and the ones it starts, not to the user's cache."""
    import os

    if "PLEXITY_CACHE_DIR" not in os.environ:
        os.environ["PLEXITY_CACHE_DIR"] = str(tmp_path_factory.mktemp("plexity-cache"))
    yield


@pytest.fixture(scope="session", autouse=True)
def bytecode_cache(tmp_path_factory):
    """With PYTHONDONTWRITEBYTECODE set, every process the tests start (each `plexity` command, task and
    extraction child) compiled our modules again (~0.2 s a start, docs/performance.md): they write and
    reuse .pyc files in a directory of the session's own instead (not in the checkout)."""
    import os

    if os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    yield


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_arpa_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-arpa", name="tiny-arpa", binary=False)


@pytest.fixture
def model_dir(tmp_path, monkeypatch) -> Path:
    """An empty $PLEXITY_MODEL_DIR for the test."""
    directory = tmp_path / "model-dir"
    directory.mkdir()
    monkeypatch.setenv("PLEXITY_MODEL_DIR", str(directory))
    return directory


@pytest.fixture(scope="session")
def slurm_cluster():
    """A private single-node Slurm for this test session: munged, slurmctld and slurmd started by
    `scripts/slurm.sh start` with their config, state, logs and munge socket in a temporary
    directory and on free ports (never /etc/slurm nor a Slurm already on the machine), used
    through SLURM_CONF, and stopped when the session ends.  Yields the partition name."""
    with private_slurm() as partition:
        yield partition


class SmallDisk:
    """A real small file system (tmpfs) to fill up: ENOSPC as a full disk gives it."""

    def __init__(self, path: Path):
        self.path = path

    def resize(self, size: str) -> None:
        import subprocess

        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.path)], check=True)

    def fill(self) -> None:
        """Take every free block (a file of zeros as large as the disk lets it grow)."""
        with open(self.path / "filler", "ab", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass


def mount_small_disk(mount_point: Path, size: str) -> SmallDisk:
    """Mount a tmpfs of `size` at `mount_point` (root, as CI runs the tests); skips the test,
    naming why, where this machine does not let the test mount one."""
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a full disk is a tmpfs mounted by the test: that needs root (CAP_SYS_ADMIN) and mount(8)")
    mount_point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?): {done.stderr.strip()}")
    return SmallDisk(mount_point)


@pytest.fixture
def small_disk(tmp_path):
    """A full disk: a one-page tmpfs already holding a file (unmounted after the test)."""
    import subprocess

    disk = mount_small_disk(tmp_path / "small-disk", "4k")
    (disk.path / "filler").write_bytes(b"x")  # takes the only page
    try:
        yield disk.path
    finally:
        subprocess.run(["umount", "-l", str(disk.path)], check=False)


@pytest.fixture
def disk_of(tmp_path):
    """``disk_of(size)``: a tmpfs of `size` ("200k") to run out of space on (unmounted after)."""
    import subprocess

    mounted: list[SmallDisk] = []

    def make(size: str) -> SmallDisk:
        disk = mount_small_disk(tmp_path / f"disk-{len(mounted)}", size)
        mounted.append(disk)
        return disk

    yield make
    for disk in mounted:
        subprocess.run(["umount", "-l", str(disk.path)], check=False)


@pytest.fixture
def read_only_disk(tmp_path):
    """A file system mounted read-only (a tmpfs remounted ro): every write there is refused with
    EROFS, as on a read-only mount or share (unmounted after)."""
    import subprocess

    disk = mount_small_disk(tmp_path / "read-only", "1m")
    try:
        subprocess.run(["mount", "-o", "remount,ro", str(disk.path)], check=True)
        yield disk.path
    finally:
        subprocess.run(["umount", "-l", str(disk.path)], check=False)


@pytest.fixture
def cgroup():
    """``make(controller, limit)``: a new cgroup with a memory limit of `limit` MiB (no swap), a pids.max of `limit`
    or a CPU quota of `limit` CPUs; returns its folder.  Removed after the test."""
    made: list[Path] = []

    def make(controller: str, limit: int) -> Path:
        parent, version = controller_folder(controller)
        folder = parent / f"plexity-test-{uuid.uuid4().hex[:8]}"
        try:
            folder.mkdir()
        except OSError as exc:
            pytest.skip(f"cannot make a cgroup here: {exc}")
        made.append(folder)
        if controller == "pids":
            (folder / "pids.max").write_text(str(limit))
        elif controller == "cpu":
            if version == 1:
                (folder / "cpu.cfs_quota_us").write_text(str(limit * 100_000))
            else:
                (folder / "cpu.max").write_text(f"{limit * 100_000} 100000")
        elif version == 1:
            (folder / "memory.limit_in_bytes").write_text(str(limit << 20))
            if (folder / "memory.swappiness").exists():
                (folder / "memory.swappiness").write_text("0")
        else:
            (folder / "memory.max").write_text(str(limit << 20))
            if (folder / "memory.swap.max").exists():
                (folder / "memory.swap.max").write_text("0")
        return folder

    yield make
    for folder in made:
        for _ in range(50):  # (an extraction child ends just after its parent: the cgroup is busy until it has)
            try:
                folder.rmdir()
                break
            except OSError:
                time.sleep(0.1)
