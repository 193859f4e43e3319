"""The suite's per-test time limit, with pytest-xdist (pyproject.toml: `timeout`, `faulthandler_timeout`).

A hung test ends in one of two ways.  Usually SIGALRM (pytest-timeout) raises in it: it fails, its fixtures' teardown
stops what it started (a Ray cluster, Slurm, a crawl), and the worker goes on.  A hang the signal cannot end (C code
that never returns to Python) is ended by faulthandler: every thread's stack, then the worker process exits and
pytest-xdist starts another.  This module is what the second way needs: tests/conftest.py takes its hook in, and
tests/test_time_limit.py loads it (`-p time_limit`) into the runs it starts.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """The test a crashed worker was running is not run again.  With `--dist loadfile`, pytest-xdist puts the crashed
    worker's file back in its queue whole, the crashed test still to do: the next worker ran it again and hung as
    long again, until xdist gave up after 8 crashed workers (2 workers: 8 x the limit, past CI's time) without
    running the file's other tests.  Marked done here, it fails once (this report) and the file's others run."""
    for scope, work in list(getattr(sched, "workqueue", {}).items()):  # (loadfile's {file: {test: done}})
        if crashitem in work:
            work[crashitem] = True
            if all(work.values()):
                del sched.workqueue[scope]
