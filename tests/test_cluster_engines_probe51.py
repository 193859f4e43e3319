"""The Python API inside the engines corpus builders run on a cluster besides datatrove and Ray: Spark (PySpark) and
Dask (distributed).  Neither is a dependency, so what they do to a worker process is done here with plain processes:
a Dask worker runs each task in a thread of its pool, a PySpark worker in its main thread, and either is killed
(SIGKILL) when its nanny or executor gives up on it (a memory limit, a lost task, ``client.restart()``).

Measured with the engines themselves (PySpark 4.3 ``local[2]``, Dask 2026.8 ``LocalCluster``): see "In Spark or
Dask" in docs/python-api.md.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections import namedtuple

import pyarrow as pa
import pytest

from helpers import REPO, extraction_children
from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors import html_to_text_learned
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, SIGKILL")
PAGE = "<html><body><p>The council approved the budget on Tuesday after a long debate about schools.</p></body></html>"

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


@LINUX
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


def _callers():
    """The scorer, an extractor in this process, and one in a child (which refuses before it starts one)."""
    extract = TimeLimitedExtractor("learned", timeout=30)
    return extract, (PerplexityScorer(method="trim").clean, html_to_text_learned, extract)


def test_a_record_given_where_a_cell_is_taken_is_said_to_hold_fields():
    """A Spark RDD of Rows mapped with ``lambda row: scorer.clean(row)``, a Dask bag of JSON records, pandas'
    itertuples: the record was "got dict", and a Row (a tuple with names) or a namedtuple "a column or an
    expression, not one cell's value: call it on each cell".  Now it is said to be a record, with its fields and the
    call to make.  (pyspark's Row, tried with PySpark 4.3: "got a pyspark Row: a record of fields (url, html) ...")"""
    Row = namedtuple("Row", ["url", "html"])  # (pandas' itertuples gives these)
    records = [json.loads(json.dumps({"url": "http://t/1", "html": PAGE})),  # (a bag of JSON lines)
               pa.table({"url": ["http://t/1"], "html": [PAGE]}).to_pylist()[0], Row("http://t/1", PAGE)]
    extract, callers = _callers()
    try:
        for record in records:
            for call in callers:
                with pytest.raises(TypeError, match=r"got a (dict|Row): a record of fields \(url, html\), not one "
                                                    r"cell's value: give it one field's value, row\['html'\]$"):
                    call(record)
        assert extract._children == []  # (refused before a child was started)
        assert "approved the budget" in extract(records[0]["html"])
    finally:
        extract.close()


def test_a_pyarrow_cell_is_said_to_be_one_with_its_value_to_give():
    """Iterating a pyarrow column (Spark's ``mapInArrow``, a Dask partition read as Arrow) gives pyarrow scalars: "got
    StringScalar" said nothing of what to do.  Now: give ``value.as_py()``."""
    extract, callers = _callers()
    cell = next(iter(pa.array([PAGE])))
    try:
        for call in callers:
            with pytest.raises(TypeError, match=r"got a pyarrow StringScalar: one cell as pyarrow holds it: give its "
                                                r"value, value\.as_py\(\)"):
                call(cell)
        assert "approved the budget" in extract(cell.as_py())
    finally:
        extract.close()


# A worker under an address-space limit, as PySpark sets one (RLIMIT_AS) on each Python worker when
# spark.executor.pyspark.memory is given: the extraction child inherits it.
LIMITED_WORKER = '''
import resource, sys

limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from plexity_plugins.errors import ExtractorCannotStart
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

try:
    print(TimeLimitedExtractor("trafilatura")(sys.argv[2]))
except ExtractorCannotStart as error:
    print("ExtractorCannotStart:", error)
'''


@LINUX
def test_an_extraction_child_that_cannot_import_its_extractor_within_the_workers_address_space_limit_says_so():
    """PySpark's `spark.executor.pyspark.memory=160m` limits each Python worker's address space, its extraction child's
    too, where trafilatura's imports need ~240 MB: the first page raised a bare `MemoryError`, no word of why (or an
    ImportError, "failed to map segment from shared object", when an extension module was what did not fit).  Now the
    child's start fails as an installation's does, `ExtractorCannotStart`, naming the limit and who sets it; with
    400 MiB the same page is read."""
    page = ("<html><body><article><p>The council approved the budget on Tuesday after a long debate about school "
            "funding and roads.</p><p>It adds two libraries over the next three years, the mayor said.</p></article>"
            "</body></html>")
    said = {}
    for limit in (120, 160, 400):
        done = subprocess.run([sys.executable, "-c", LIMITED_WORKER, str(limit), page], cwd=REPO, capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
        assert done.returncode == 0, done.stderr[-3000:]
        said[limit] = done.stdout.strip()
    # (at 160 MiB the import fails in Python, MemoryError or ImportError, in most runs, and fits in a few: its
    # mappings are placed at random; at 120 numpy's OpenBLAS gives up and the child exits: said as a death at start)
    if not said[160].startswith("The council approved"):
        assert said[160].startswith("ExtractorCannotStart: the extraction process could not start: it ran out of "
                                    "memory while it imported the trafilatura extractor, within the address-space "
                                    "limit (RLIMIT_AS, ulimit -v) of 160 MiB that it inherits from this process "
                                    "(PySpark's spark.executor.pyspark.memory sets one on its workers): raise it"), \
            said[160]
    assert said[120].startswith("ExtractorCannotStart: the extraction process could not start: "), said[120]
    assert ("it ran out of memory while it imported the trafilatura extractor, within the address-space limit "
            "(RLIMIT_AS, ulimit -v) of 120 MiB" in said[120]
            or "it may have run out of memory, within the address-space limit (RLIMIT_AS, ulimit -v) of 120 MiB"
            in said[120]), said[120]
    assert said[400].startswith("The council approved the budget on Tuesday"), said[400]


def test_the_copies_of_one_extractor_unpickled_in_a_worker_share_its_child():
    """Dask's ``client.map(clean, pages)`` of a function closing over an extractor made on the client: each task
    unpickles its own copy of the function, the extractor with it, and the worker keeps its tasks.  Each copy started
    an extraction child of its own (~0.2 s a page: 300 pages took 70.7 s in 2 workers, 6.9 s now) and 300 pages left
    300 children running.  Now the copies of one extractor in a process share its children, which end with the last
    copy; a copy's own ``close()`` (a task's ``finally``) leaves them to the others."""
    # (the function's, sent with each task; settings of its own: no other test's copies share its child)
    payload = pickle.dumps(TimeLimitedExtractor("learned", timeout=31))
    before = extraction_children()
    copies = [pickle.loads(payload) for _ in range(5)]  # (the tasks a worker holds)
    texts = [copy(PAGE) for copy in copies]
    assert len(extraction_children() - before) == 1
    assert texts == [texts[0]] * 5 and "approved the budget" in texts[0]
    copies[0].close()
    assert copies[1](PAGE) == texts[0]
    assert len(extraction_children() - before) == 1
    del copies
    gc.collect()
    assert extraction_children() - before == set()


@LINUX
def test_an_extension_that_fails_its_start_without_an_error_under_an_address_space_limit_is_said_as_memory():
    # (a CI run on a loaded machine: under 160 MiB the child's start failed with CPython's "SystemError: error return
    # without exception set", an extension module's allocation that failed unsaid, and the caller got that bare
    # SystemError; without a limit the same error is no memory's and is raised as it is)
    check = ("import resource, sys\n"
             "from plexity_plugins.extractors.sandbox import _out_of_address_space\n"
             "error = SystemError('<built-in function x> returned NULL without setting an exception')\n"
             "unsaid = SystemError('error return without exception set')\n"
             "before = _out_of_address_space(unsaid)\n"
             "resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))\n"
             "print(before, _out_of_address_space(unsaid), _out_of_address_space(error))\n")
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.stdout.split() == ["False", "True", "False"], done.stderr[-3000:]
