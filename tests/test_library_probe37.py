"""The Python API inside a user's own long-lived program: threads, forks, and the process's state.

A data engineer imports the scorer, the extractors and the datatrove steps into a service of their own:
one object shared by a thread pool, a process forked after the objects were made (a multiprocessing 'fork'
pool, a pre-forking server), the datatrove executor run from a worker thread (``run_in_executor``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from helpers import REPO, SAMPLE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork, /proc")


def _run(script: str, *args: str, timeout: float = 60) -> dict:
    """Run `script` in a Python process of its own (this checkout's package) and return the JSON it prints last."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# An extractor used once in the parent (its child is started and idle), then the process forks.
FORKED = '''
import json, os, sys
import multiprocessing
import psutil
from tests.helpers import iter_warc_html
from plexity_plugins.extractors import get_extractor
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

pages = [body.decode("utf-8", "replace") for _, body, _ in iter_warc_html(sys.argv[1])][:4]
expected = [get_extractor("dense")(page) for page in pages]
extract = TimeLimitedExtractor("dense")
assert extract(pages[0]) == expected[0]
(parents_child,) = psutil.Process().children()

def in_fork(_=None):
    """What a forked process gets, and the extraction children it starts (its own, not its parent's)."""
    texts = [extract(page) for page in pages]
    own = [child.pid for child in psutil.Process().children()]
    extract.close()
    return texts == expected, own

pid = os.fork()
if pid == 0:
    same, own = in_fork()
    os._exit(0 if same and len(own) == 1 and own[0] != parents_child.pid else 3)
_, status = os.waitpid(pid, 0)
with multiprocessing.get_context("fork").Pool(2) as pool:  # (two forks at once, as a worker pool)
    pooled = pool.map(in_fork, range(4))
print(json.dumps({"fork_status": os.waitstatus_to_exitcode(status), "pool_same": [same for same, _ in pooled],
                  "pool_children": [own for _, own in pooled], "parents_child": parents_child.pid,
                  "parents_child_alive": parents_child.is_running() and parents_child.status() != "zombie",
                  "parent_same": [extract(page) for page in pages] == expected,
                  "parent_children": [child.pid for child in psutil.Process().children()]}))
'''


def test_a_forked_process_extracts_in_a_child_of_its_own():
    """A TimeLimitedExtractor (the Scrapy pipeline's, `plexity serve`'s) used before a fork: the fork used its
    parent's extraction child, through the same pipes, and two forks at once (a 'fork' pool of two) wrote their
    pages into it between each other's: the child died of it ("the extractor process died (exit status 0)" in the
    pool, then "Broken pipe" in the parent).  Now a fork starts its own child and leaves its parent's alone."""
    seen = _run(FORKED, str(SAMPLE))
    assert seen["fork_status"] == 0  # (3: the fork read its pages through its parent's child)
    assert seen["pool_same"] == [True] * 4
    assert all(len(own) == 1 and own[0] != seen["parents_child"] for own in seen["pool_children"])
    assert seen["parents_child_alive"] and seen["parent_same"]
    assert seen["parent_children"] == [seen["parents_child"]]


def test_threads_that_identify_a_language_first_at_once_load_the_identifier_once():
    """8 threads of a service sharing a scorer, its first texts in another language at once: each loaded the
    language identifier (lru_cache does not hold the others back), 8 loads, 15 s and 690 MiB at their peak on a
    first run (its tables not cached yet) where one takes 2 s and 135 MiB."""
    from plexity_plugins.text import language

    language.identifier.cache_clear()
    start = threading.Barrier(8)
    got = []

    def first_use():
        start.wait()
        got.append(language.identifier())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(got) == 8 and len({id(identifier) for identifier in got}) == 1
    assert got[0] is language.identifier()


# The executor run from a thread of the user's (a web service's, `loop.run_in_executor`'s); an exception reaches
# that thread while its tasks run (as a library's timeout raises one in a thread).
EXECUTOR_IN_A_THREAD = '''
import ctypes, gzip, json, os, sys, threading, time
import psutil
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import LocalTaskExecutor

class Stopped(Exception):
    pass

def slow(data, rank=0, world_size=1):
    for document in data:
        time.sleep(60)
        yield document

if __name__ == "__main__":
    folder = sys.argv[1]
    os.makedirs(f"{folder}/in")
    for part in range(2):
        with gzip.open(f"{folder}/in/part-{part}.jsonl.gz", "wt") as f:
            f.write(json.dumps({"id": str(part), "text": "The council approved the budget."}) + "\\n")
    raised = []

    def run():
        try:
            LocalTaskExecutor(pipeline=[JsonlReader(f"{folder}/in"), slow, JsonlWriter(f"{folder}/out")], tasks=2,
                              workers=2, logging_dir=f"{folder}/logs", start_method="fork").run()
        except BaseException as exc:
            raised.append(repr(exc))

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    while len(psutil.Process().children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    tasks = psutil.Process().children()
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Stopped))
    thread.join(30)
    running = [task.pid for task in tasks if task.is_running() and task.status() != "zombie"]
    unreaped = [task.pid for task in tasks if task.is_running() and task.status() == "zombie"]
    for task in tasks:
        if task.is_running():
            task.kill()
    print(json.dumps({"tasks": len(tasks), "raised": raised, "running": running, "unreaped": unreaped}))
'''


def test_the_executor_run_from_a_thread_says_its_own_error_and_stops_its_tasks(tmp_path):
    """`LocalTaskExecutor.run()` in a thread that is not the main one: an error while its tasks ran was replaced by
    "ValueError: signal only works in main thread" (it set SIGINT's handler while stopping them), and the tasks
    were left behind, unreaped.  Now the thread gets its own error and the tasks are stopped."""
    seen = _run(EXECUTOR_IN_A_THREAD, str(tmp_path), timeout=90)
    assert seen["tasks"] == 2
    assert seen["raised"] == ["Stopped()"]
    assert seen["running"] == [] and seen["unreaped"] == []


# Ctrl-C (SIGINT to the main thread) while three tasks run; how long until the caller has its KeyboardInterrupt.
INTERRUPTED = '''
import gzip, json, os, signal, sys, threading, time
import psutil
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import LocalTaskExecutor

def slow(data, rank=0, world_size=1):
    for document in data:
        time.sleep(60)
        yield document

if __name__ == "__main__":
    folder, tasks = sys.argv[1], 3
    os.makedirs(f"{folder}/in")
    for part in range(tasks):
        with gzip.open(f"{folder}/in/part-{part}.jsonl.gz", "wt") as f:
            f.write(json.dumps({"id": str(part), "text": "The council approved the budget."}) + "\\n")
    sent = []

    def interrupt():
        deadline = time.monotonic() + 30
        while len(psutil.Process().children()) < tasks and time.monotonic() < deadline:
            time.sleep(0.05)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        LocalTaskExecutor(pipeline=[JsonlReader(f"{folder}/in"), slow, JsonlWriter(f"{folder}/out")], tasks=tasks,
                          workers=tasks, logging_dir=f"{folder}/logs", start_method="fork").run()
    except KeyboardInterrupt:
        print(json.dumps({"seconds": time.monotonic() - sent[0], "left": len(psutil.Process().children())}))
'''


def test_ctrl_c_stops_a_run_of_several_workers_at_once(tmp_path):
    """Ctrl-C of a `LocalTaskExecutor` run (or `plexity run`) while its tasks ran: each task was killed and then
    waited for 1 s before it was reaped (its group still held it, unreaped), one after the other: the caller had
    its KeyboardInterrupt 3 s later with three workers, 8 s with eight.  Now they are all killed, then reaped."""
    seen = _run(INTERRUPTED, str(tmp_path))
    assert seen["left"] == 0
    assert seen["seconds"] < 1.5  # (3.0 before; 0.01 now)


# Ctrl-C lands while the third task is being started: after its process is forked, before its start returns (the
# moment the test above sends it, when the third child appears: under load it landed there).  The signal is sent
# from inside the fork's return in the parent, so that the moment is the same every time.
INTERRUPTED_IN_START = INTERRUPTED.replace("""    threading.Thread(target=interrupt, daemon=True).start()
""", """    real_fork, forks = os.fork, []

    def fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
            if len(forks) == tasks:
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.5)  # (the KeyboardInterrupt, if any, is raised here, inside start())
        return pid

    os.fork = fork
""")


def test_ctrl_c_while_a_task_is_being_started_stops_that_task_too(tmp_path):
    """A Ctrl-C that landed inside a task's start (its process forked, its start not yet returned) left that task
    running: its process had no pid recorded yet, and the run's stop passed it over (1 of 3 left).  A Ctrl-C is
    now held while a task starts and acted on once it is recorded: every task is stopped."""
    seen = _run(INTERRUPTED_IN_START, str(tmp_path))
    assert seen["left"] == 0


# A program that logs with loguru, and gives every record a field of its own with a patcher, runs a pipeline in its
# own process (one worker) between two records of its own.
LOGURU_PATCHER = '''
import gzip, json, os, sys
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from loguru import logger
from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter

folder = sys.argv[1]
os.makedirs(f"{folder}/in")
with gzip.open(f"{folder}/in/part-0.jsonl.gz", "wt") as f:
    f.write(json.dumps({"id": "0", "text": "The council approved the budget on Tuesday."}) + "\\n")
logger.configure(patcher=lambda record: record["extra"].update(request="r-1"))
LocalTaskExecutor(pipeline=[JsonlReader(f"{folder}/in"), PerplexitySentenceFilter(), JsonlWriter(f"{folder}/out")],
                  tasks=1, workers=1, logging_dir=f"{folder}/logs").run()
seen = []
logger.add(lambda message: seen.append(message.record["extra"].get("request")))  # (datatrove removed our sinks)
logger.info("after the run")
print(json.dumps({"request": seen}))
'''


def test_a_run_in_the_callers_process_keeps_its_loguru_patcher(tmp_path):
    """`LocalTaskExecutor(workers=1).run()` runs its tasks in the caller's process, which may log with loguru and
    give each record fields of its own with ``logger.configure(patcher=...)``: the run replaced that patcher with
    one that did nothing, for the rest of the program.  Now it is kept (and runs during the tasks too)."""
    assert _run(LOGURU_PATCHER, str(tmp_path))["request"] == ["r-1"]


SLOW_EXTRACTOR = '''
import os, pathlib, time

def slow(html):
    """Its page's text, after a minute, once it has said that it started on it (not on the warm-up page)."""
    if html.startswith("slow"):
        (pathlib.Path(__file__).parent / f"started-{os.getpid()}").touch()
        time.sleep(60)
    return html
'''


def test_closing_an_extractor_while_threads_use_it_ends_their_calls_with_an_extraction_error(tmp_path, monkeypatch):
    """A service that shuts down calls `close()` while its threads are extracting: close ended the children and
    closed their pipes, and so did each thread, which saw its child die: a pipe closed twice (the second time it
    could be another file's, opened since), and `close()` raised "OSError: [Errno 9] Bad file descriptor" (or the
    thread did).  Now close ends them all at once, and each thread's call ends with an ExtractionError."""
    import psutil

    from plexity_plugins.errors import ExtractionError, ExtractorCannotStart
    from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

    (tmp_path / "slow_extractor.py").write_text(SLOW_EXTRACTOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    from slow_extractor import slow

    extract = TimeLimitedExtractor(slow, timeout=120, processes=3)
    raised = []
    # (this process's other children, a forkserver or multiprocessing's resource tracker that an earlier test in this
    # worker started, live on: only the extractor's are asked to end)
    others = set(psutil.Process().children())

    def call():
        try:
            extract("slow page")
        except Exception as exc:  # noqa: BLE001 - what each thread's call ended with
            raised.append(exc)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(list(tmp_path.glob("started-*"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    children = [child for child in psutil.Process().children() if child not in others]
    assert len(children) == 3, children
    extract.close()
    for thread in threads:
        thread.join(10)
    assert len(raised) == 3 and all(isinstance(exc, (ExtractionError, ExtractorCannotStart)) for exc in raised), raised
    assert not [child for child in psutil.wait_procs(children, timeout=5)[1]]
    assert extract("a page after") == "a page after"  # (a new child)
    extract.close()


# A program that extracts (with its own extractor and a datatrove step), forks once, and ends without closing them
# (as most do).
ENDS_WITHOUT_CLOSING = '''
import os, sys
from datatrove.data import Document
from tests.helpers import iter_warc_html
from plexity_plugins.datatrove import DenseExtractor
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

page = next(body.decode("utf-8", "replace") for _, body, _ in iter_warc_html(sys.argv[1]))
extract = TimeLimitedExtractor("dense")
extract(page)
pid = os.fork()
if pid == 0:
    extract(page)
    sys.exit(0)
os.waitpid(pid, 0)
list(DenseExtractor().run(iter([Document(text=page, id="a")]), 0, 1))
print("{}")
'''


def test_a_program_that_ends_without_closing_its_extractors_ends_their_children_without_warnings():
    """With -W default (or -X dev, as test runners set), a program that ended without closing its extractors said
    "ResourceWarning: subprocess N is still running" for each (their children's `Popen`s finalized before the
    extractors that would have ended them), and its forked process for the parent's child it had copied.  Now
    the extractors are closed at exit, and a fork's copies are known not to be its children."""
    command = [sys.executable, "-W", "default::ResourceWarning", "-c", textwrap.dedent(ENDS_WITHOUT_CLOSING),
               str(SAMPLE)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ResourceWarning" not in done.stderr, done.stderr[-3000:]


# A thread loads the language identifier (the tables not cached yet: ~2 s) when the process forks.  (Its modules
# imported before: a fork while another thread imports a module waits for that module's import lock, in any program.)
FORKED_WHILE_LOADING = '''
import os, signal, sys, threading, time
import numpy, py3langid.langid
from plexity_plugins.text import language

loading = threading.Thread(target=language.identifier)
loading.start()
time.sleep(0.2)
pid = os.fork()
if pid == 0:
    signal.alarm(15)  # (a fork that waits for the lock its parent's thread held: killed)
    os._exit(0 if language.identifier().classify("Der Hund läuft über die Straße.")[0] == "de" else 3)
_, status = os.waitpid(pid, 0)
loading.join()
print(os.waitstatus_to_exitcode(status))
'''


def test_a_process_forked_while_a_thread_loads_the_language_identifier_loads_its_own(tmp_path):
    """The identifier is loaded under a lock (threads wait for one load): a process forked while another thread
    held it would wait for it forever.  The forked process has a lock of its own, and loads the identifier."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(FORKED_WHILE_LOADING)], cwd=REPO, capture_output=True,
                          text=True, timeout=90, env={**os.environ, "PLEXITY_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["0"], done.stderr[-3000:]  # (-14: SIGALRM, the fork waited for the lock)
