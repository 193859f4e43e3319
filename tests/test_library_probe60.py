"""The library embedded in a program of one's own (probe 60): what such a program does that our front ends do not.

A Ctrl-C in the middle of a call, a program started with its standard streams closed (a daemon, `<&-`), one that
set SIGPIPE back to its default (as command-line tools do for `| head`), threads of a daemon still working when the
program exits.  Each script runs in a process of its own, with the real extraction child and the embedded model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, /proc, signals")

# An extractor function of the program's own (TimeLimitedExtractor takes any it can import): a page that starts with
# "slow" says it started (a file), then takes two seconds.
SLOW_EXTRACTOR = '''
import os, pathlib, time

def slow(html):
    if html.startswith("slow"):
        (pathlib.Path(os.environ["STARTED"]) / "started").touch()
        time.sleep(2)
    return "text of " + html
'''


def _run(tmp_path, script: str, *, stdin=None, stdout=None, stderr=None, pass_fds=()) -> subprocess.CompletedProcess:
    """`script` run by this Python with this checkout's package (and `tmp_path`'s modules) on its path."""
    (tmp_path / "slow_extractor.py").write_text(SLOW_EXTRACTOR)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]), STARTED=str(tmp_path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path, env=env, timeout=120,
                          stdin=stdin, stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=stderr if stderr is not None else subprocess.PIPE, pass_fds=pass_fds)


INTERRUPTED = '''
import _thread, json, os, pathlib, threading, time
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor
from slow_extractor import slow

extract = TimeLimitedExtractor(slow, timeout=30)
first = extract("page A")
started = pathlib.Path(os.environ["STARTED"]) / "started"

def ctrl_c_once_started():
    while not started.exists():
        time.sleep(0.01)
    _thread.interrupt_main()  # (what Ctrl-C does: KeyboardInterrupt in the main thread)

threading.Thread(target=ctrl_c_once_started).start()
try:
    extract("slow page")
    interrupted = False
except KeyboardInterrupt:
    interrupted = True
print(json.dumps({"first": first, "interrupted": interrupted, "later": [extract("page B"), extract("page C")]}))
'''


def test_a_call_interrupted_by_ctrl_c_does_not_give_its_text_to_the_next_page(tmp_path):
    """A notebook's stop button or a Ctrl-C while a page was being extracted: the child, still busy with that page,
    was given the next one, and answered each later page with the text of the page before it ("page B" came back
    as "text of slow page", "page C" as "text of page B").  A child interrupted mid-page is ended; the next call
    starts another."""
    done = _run(tmp_path, INTERRUPTED)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    result = json.loads(done.stdout.decode().splitlines()[-1])
    assert result == {"first": "text of page A", "interrupted": True, "later": ["text of page B", "text of page C"]}


CLOSED_STREAMS = '''
import sys
from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

page = ("<html><body><nav>Home | News</nav><p>The city council approved the budget on Tuesday after a long debate "
        "about school funding.</p><p>It adds two libraries over the next three years.</p></body></html>")
extract = TimeLimitedExtractor("learned", timeout=30)
text = PerplexityScorer(method="trim").clean(extract(page)).text
extract.close()
with open(3, "w") as out:  # (its stdout may be closed)
    out.write(text.splitlines()[0])
'''


@pytest.mark.parametrize("closed", [(0,), (0, 1, 2)], ids=["stdin", "stdin-stdout-stderr"])
def test_a_program_started_with_its_standard_streams_closed_extracts_its_pages(tmp_path, closed):
    """A program started with stdin closed (`python service.py <&-`, a daemon that closed its streams): os.pipe()
    gave the extraction child's page pipe descriptor 0, which the child's stdin (/dev/null) then replaced, and every
    page was ExtractorDied "the extractor process died ([Errno 32] Broken pipe)".  The pipes are moved above the
    standard streams' numbers."""
    read, write = os.pipe()
    os.set_inheritable(write, True)
    # (a shell's `<&-`: the descriptors closed in the child before it runs Python; the answer comes on fd 3)
    closing = "; ".join(f"os.close({fd})" for fd in closed)
    launcher = (f"import os, sys; os.dup2({write}, 3); {closing}; "
                f"os.execv(sys.executable, [sys.executable, '-c', {textwrap.dedent(CLOSED_STREAMS)!r}])")
    done = _run(tmp_path, launcher, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(write,))
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert text == "The city council approved the budget on Tuesday after a long debate about school funding."


SIGPIPE_DEFAULT = '''
import fcntl, json, os, signal, termios, threading, time
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # (as command-line tools do, to end quietly under `| head`)
from plexity_plugins.errors import ExtractorDied
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

extract = TimeLimitedExtractor("dense", timeout=30)
texts = [extract("<p>The council approved the budget on Tuesday after a long debate.</p>")]

# The idle child ends (the out-of-memory killer's choice, or an operator's kill) before the next page.
(child,) = extract._children
os.kill(child.process.pid, signal.SIGKILL)
child.process.wait()
texts.append(extract("<p>The library opens in the spring, after two years of work.</p>"))

# The child ends while a page is being written to it: stopped, its pipe filled, then killed.
(child,) = extract._children
os.kill(child.process.pid, signal.SIGSTOP)

def kill_once_the_pipe_is_full():
    size = fcntl.fcntl(child._to_child, 1032)  # F_GETPIPE_SZ
    while fcntl.ioctl(child._to_child, termios.FIONREAD, b"\\0\\0\\0\\0") != size.to_bytes(4, "little"):
        time.sleep(0.01)
    os.kill(child.process.pid, signal.SIGKILL)

threading.Thread(target=kill_once_the_pipe_is_full).start()
try:
    extract(b"<p>" + b"A long page. " * 1_000_000 + b"</p>")  # (13 MB: more than the pipe and the shared memory)
    died = None
except ExtractorDied as error:
    died = str(error)
texts.append(extract("<p>The river was cleaner than it had been for many years.</p>"))
print(json.dumps({"texts": texts, "died": died}))
'''


def test_a_program_with_sigpipe_at_its_default_outlives_a_dead_extraction_child(tmp_path):
    """A program that set SIGPIPE back to its default was killed by it, silently (exit status 141), at the first page
    written to an extraction child that had ended: the child that ended while idle is now replaced before the page
    is written (that page is extracted, where it was lost to "Broken pipe"), and one that ends while a page is being
    written to it is that page's ExtractorDied, as with Python's own setting (SIGPIPE ignored)."""
    done = _run(tmp_path, SIGPIPE_DEFAULT)
    assert done.returncode == 0, (done.returncode, done.stderr.decode()[-3000:])
    result = json.loads(done.stdout.decode().splitlines()[-1])
    assert result["texts"] == ["The council approved the budget on Tuesday after a long debate.",
                               "The library opens in the spring, after two years of work.",
                               "The river was cleaner than it had been for many years."]
    assert result["died"] is not None and "Broken pipe" in result["died"]


DAEMON_THREADS_AT_EXIT = '''
import sys, threading
from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors import html_to_text_learned

scorer = PerplexityScorer(method="trim").open()
page = ("<html><body><nav>Home | News</nav>" + "<p>The city council approved the budget on Tuesday after a long "
        "debate about school funding, and the library opens in the spring.</p>" * 400 + "</body></html>")
text = html_to_text_learned(page) * 5
working = threading.Barrier(5)

def clean_forever():
    scorer.clean(text)
    working.wait()  # (each thread has cleaned once: the program ends while they work on)
    while True:
        scorer.clean(html_to_text_learned(page))
        scorer.clean(text)

for _ in range(4):
    threading.Thread(target=clean_forever, daemon=True).start()
working.wait()
print("main ends", flush=True)
'''


def test_a_program_that_ends_while_daemon_threads_clean_exits_without_a_crash(tmp_path):
    """Daemon threads (a ThreadingHTTPServer's, a worker of one's own) still cleaning when the main thread ends: a
    thread taking the GIL back from the compiled scorer or the learned reader once the interpreter was shutting
    down was ended by pthread_exit, whose unwinding through a C++ destructor aborted the program ("terminate called
    without an active exception", exit status 134: 20 runs in 20 before); and exit() destroyed BlingFire's tables
    under a thread still splitting a text (a segfault, 4 runs in 40 once the first was fixed).  Such a thread now
    waits for the process's end, as Python 3.14 lets a thread that wants the GIL back wait, and the shutdown waits
    for the threads working without the GIL to reach that point (0 crashes in 130 runs)."""
    for _ in range(2):  # (each run ends its threads at another point of their work)
        done = _run(tmp_path, DAEMON_THREADS_AT_EXIT)
        assert (done.returncode, done.stdout.decode(), done.stderr.decode()[-2000:]) == (0, "main ends\n", "")


CLEANS_IN_DEL_AT_EXIT = '''
from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors import html_to_text_learned

scorer = PerplexityScorer(method="trim").open()

class Flusher:
    """A program's object that reads and cleans the page it still holds when it goes away."""
    def __del__(self):
        text = html_to_text_learned("<html><body><nav>Home | News</nav><Straße><p>The library opens in the spring, "
                                    "after two years of work.</p></Straße></body></html>")
        print("flushed:", scorer.clean(text).text, flush=True)

kept = Flusher()  # (its __del__ runs while the interpreter clears the program's globals, at its shutdown)
print("main ends", flush=True)
'''


def test_a_program_that_cleans_in_a_del_at_its_shutdown_ends_with_the_text_cleaned(tmp_path):
    """An object that reads and cleans what it still holds in its __del__, run while the interpreter clears the
    program's globals: the thread running the shutdown, taking the GIL back after the work, was parked for the
    process's end like a daemon thread, so the program never ended (the fix for daemon threads at exit did that to
    every thread once the shutdown had begun).  CPython says which threads must end; the one shutting down goes on."""
    done = _run(tmp_path, CLEANS_IN_DEL_AT_EXIT)
    assert (done.returncode, done.stdout.decode(), done.stderr.decode()[-2000:]) == (
        0, "main ends\nflushed: The library opens in the spring, after two years of work.\n", "")
