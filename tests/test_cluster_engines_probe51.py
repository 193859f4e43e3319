"""The Python API inside the engines corpus builders run on a cluster besides datatrove and Ray: Spark (PySpark) and
Dask (distributed).  Neither is a dependency, so what they do to a worker process is done here with plain processes:
a Dask worker runs each task in a thread of its pool, a PySpark worker in its main thread, and either is killed
(SIGKILL) when its nanny or executor gives up on it (a memory limit, a lost task, ``client.restart()``).

Measured with the engines themselves (PySpark 4.3 ``local[2]``, Dask 2026.8 ``LocalCluster``): see "In Spark or
Dask" in docs/python-api.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, SIGKILL")

# An extractor the child imports (module level), slow on the pages that ask for it: the moment the worker dies is
# then one the test chooses, while the child works on a page or while it starts.
SLOW_EXTRACTOR = '''
import os, pathlib, time

if os.environ.get("SLOW_START"):  # (the child imports this as it starts; its worker is killed meanwhile)
    (pathlib.Path(__file__).parent / f"starting-{os.getpid()}").touch()
    time.sleep(2)


def slow(html):
    """The page as its text, two seconds after it said it started on it (not on the warm-up page)."""
    if html.startswith("slow"):
        (pathlib.Path(__file__).parent / f"started-{os.getpid()}").touch()
        time.sleep(2)
    return html
'''

# A worker as Dask runs a task: the extractor made and called in a thread of the worker's pool.  (PySpark's worker
# calls from its main thread: its children are then killed with it by the kernel, but for an instant after the
# worker's pipes are closed, in which a child that finished its page met the same broken pipe: 1 run in 8.)
WORKER = '''
import os, sys
from concurrent.futures import ThreadPoolExecutor

from plexity_plugins.extractors.sandbox import TimeLimitedExtractor
from slow_extractor import slow

os.environ["SLOW_START"] = sys.argv[1]  # (for the child, which imports slow_extractor again)


def task():
    return TimeLimitedExtractor(slow, timeout=30)("slow page")


ThreadPoolExecutor(1).submit(task).result()
'''


def _wait_for(folder, pattern: str, within: float) -> int:
    """The pid of the process that touched `pattern`-PID in `folder`."""
    deadline = time.monotonic() + within
    while not (found := list(folder.glob(pattern))):
        assert time.monotonic() < deadline, f"no {pattern} after {within} s"
        time.sleep(0.02)
    return int(found[0].name.rsplit("-", 1)[1])


def _ended(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("moment", ["while it extracts a page", "while it starts"])
def test_an_extraction_child_whose_worker_is_killed_ends_without_a_traceback(tmp_path, moment):
    """A Dask worker killed (SIGKILL) while its extraction child read a page: the child, which the kernel does not end
    with a thread's caller, finished the page, found its answer's pipe broken and printed "BrokenPipeError: [Errno
    32] Broken pipe" with its traceback into the worker's stderr, the cluster's log, as if the extraction had
    crashed; so did one whose worker died while it started (its "ready" went nowhere).  It now ends quietly, as it
    does when it finds its page pipe closed."""
    (tmp_path / "slow_extractor.py").write_text(SLOW_EXTRACTOR)
    stderr = tmp_path / "stderr"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]))
    with open(stderr, "wb") as errors:  # (the child's stderr is its worker's, as in a Dask worker)
        worker = subprocess.Popen([sys.executable, "-c", WORKER, "1" if moment == "while it starts" else ""],
                                  cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        child = _wait_for(tmp_path, "started-*" if moment == "while it extracts a page" else "starting-*", 60)
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        assert _ended(child, 30), "the extraction child outlived its worker"
    finally:
        worker.kill()
        worker.wait()
    assert stderr.read_text() == ""
