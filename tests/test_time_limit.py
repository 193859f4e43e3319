"""The suite's per-test time limit (pyproject.toml, tests/time_limit.py): a hung test fails on its own, with where
it hung, and the run goes on.  Before, a test that waited for ever (a Ray task waiting for a cluster) held the whole
run until it was killed by hand, and CI would have waited out its time and reported nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import time_limit

REPO = Path(__file__).resolve().parent.parent

HANGING = '''
import os, signal, subprocess, threading, time
import pytest

@pytest.fixture
def child():
    process = subprocess.Popen(["sleep", "600"])
    with open(os.environ["CHILD_PID_FILE"], "w") as f:
        f.write(str(process.pid))
    yield process
    process.kill()  # (the teardown that stops what the test started)
    process.wait()

def wait_for_ever():
    threading.Event().wait()

def test_waits_for_ever(child):
    threading.Thread(target=wait_for_ever, name="the-helper-thread", daemon=True).start()
    wait_for_ever()

def test_stuck_where_the_signal_cannot_reach():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # (as C code that never returns to Python)
    time.sleep(600)

def test_after_them():
    pass
'''


def test_the_suite_has_a_time_limit_for_each_test(pytestconfig):
    limit = pytestconfig.getini("timeout")  # (pytest-timeout not installed: ValueError, an unknown option)
    assert limit and float(limit) > 0, "pyproject.toml sets no time limit for a test (timeout)"
    assert pytestconfig.getini("timeout_method") == "signal"  # (a hung test fails and its teardown runs)
    assert float(pytestconfig.getini("faulthandler_timeout")) > float(limit)
    assert pytestconfig.getini("faulthandler_exit_on_timeout") is True
    assert float(pytestconfig.getini("session_timeout")) > float(limit)  # (the run as a whole: no test started after)
    crashed = pytestconfig.pluginmanager.hook.pytest_handlecrashitem.get_hookimpls()  # (tests/conftest.py takes it in)
    assert time_limit.pytest_handlecrashitem in [hook.function for hook in crashed]


def test_a_hung_test_fails_with_its_stacks_and_the_run_goes_on(tmp_path):
    (tmp_path / "test_hanging.py").write_text(textwrap.dedent(HANGING))
    path = os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")]))  # (time_limit)
    env = {**os.environ, "PYTHONPATH": path, "CHILD_PID_FILE": str(tmp_path / "child.pid"), "COLUMNS": "300"}
    # The suite's own settings (pyproject.toml: xdist, the limit's method), the limits short, one worker.
    run = subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir",
                          str(tmp_path), "--basetemp", str(tmp_path / "base"), "-p", "no:cacheprovider",
                          "-p", "time_limit", "-n", "1", "-o", "timeout=1", "-o", "faulthandler_timeout=2",
                          "test_hanging.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "= 2 failed, 1 passed" in out, out  # (the file's other test ran after both)
    # In Python: the test fails at the limit, where it waited, with its other threads' stacks; its fixture's
    # teardown ran, and the process it started is gone.
    assert "FAILED test_hanging.py::test_waits_for_ever - Failed: Timeout (>1.0s) from pytest-timeout" in out, out
    assert "Stack of the-helper-thread" in out and "in wait_for_ever" in out, out
    pid = int((tmp_path / "child.pid").read_text())
    assert not os.path.exists(f"/proc/{pid}"), out
    # Where the signal cannot reach: faulthandler prints every thread's stack and ends the worker; xdist says so,
    # once (the test is not run again, on the next worker, to hang again).
    assert "Timeout (0:00:02)!" in out and " in test_stuck_where_the_signal_cannot_reach\n" in out, out
    assert "worker 'gw0' crashed while running 'test_hanging.py::test_stuck_where_the_signal_cannot_reach'" in out, out
    assert out.count("replacing crashed worker") == 1, out
