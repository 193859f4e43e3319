"""`die_with_parent()`: a helper process that ends when the process that started it ends.

A process whose parent is SIGKILLed (the out-of-memory killer, ``ray.kill``, a Ray raylet
that died and took its workers with it) is not told: it is adopted by init and runs on.  A
datatrove task process orphaned so goes on reading and writing the very output files that
the task's retry, elsewhere, is writing; an extractor child orphaned so waits forever for a
page.  On Linux the kernel can send a signal to a process when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); elsewhere this does nothing.
"""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with(prctl, parent_pid: int) -> bool:
    """Ask the kernel for SIGKILL when `parent_pid`, this process's parent, ends; if it has already gone, die."""
    if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent_pid:  # the parent died before the prctl: nobody will signal
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def die_with_parent(parent_pid: int | None) -> bool:
    """Make the calling process receive SIGKILL when its parent (`parent_pid`, the pid of the
    process that forked it) ends.  If the parent has already gone, die now.  Returns whether
    the kernel will do it (Linux only; `parent_pid` None: nothing to watch).

    (The signal comes when the parent's *thread* that forked this process ends: call it in
    processes forked by a thread that outlives them, as the main thread of a task does.)"""
    prctl = _prctl() if parent_pid is not None else None
    return prctl is not None and _die_with(prctl, parent_pid)


def dying_with_this_process():
    """A ``preexec_fn`` for `subprocess.Popen` that gives the child `die_with_parent` of this process: a tool
    (lmplz, build_binary) then ends when a SIGKILL ends its caller, instead of running on, orphaned, into a
    folder the next run removes.  prctl is found here, before the fork: the child only calls it (no import, no
    dlopen in a forked child of a process with threads).  None where the kernel cannot do it."""
    prctl, parent = _prctl(), os.getpid()
    return None if prctl is None else lambda: _die_with(prctl, parent)
