"""A time limit per document for extraction, the same in every front end.

A hostile page can keep an extractor busy for minutes (14 MB of sibling ``<span>``s: 216 s
in trafilatura) inside C code that no Python-level timeout interrupts, and a thread cannot
be killed.  So `TimeLimitedExtractor` runs the extractor in a child process of its own and
kills it when a document takes longer than the limit: the caller gets `ExtractionTimeout` (an
`ExtractionError`: a counted skip, like any unextractable page) and the next document gets
a fresh child.  ``plexity run`` gets the same from datatrove's extractor sandbox.

The children are new Python processes (never forked from a process that runs threads: Scrapy's
reactor, a web server), import the extractor once and then serve documents one at a time.  Up
to ``processes`` of them serve several calling threads at once.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Callable

from .extractors import ExtractionError, get_extractor

DEFAULT_EXTRACT_TIMEOUT = 30.0  # seconds per document; datatrove's extractor steps use the same in plexity run


class ExtractionTimeout(ExtractionError):
    """The extractor took longer than the time limit on one document."""


_WARM_UP_PAGE = "<html><body><p>The extractor starts.</p><p>It reads a first page.</p></body></html>"


def answer(send, extract: Callable[[str], str], html: str) -> None:
    """In a child: extract one page and send back ("ok", text), or ("error", the exception) for
    the parent to decide on (an exception that does not pickle as an ExtractionError naming it).
    The child of every front end's sandbox answers this way (also `plexity_plugins.datatrove`'s)."""
    try:
        send.send(("ok", extract(html)))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which decides
        try:
            send.send(("error", exc))
        except Exception:  # an exception that does not pickle
            send.send(("error", ExtractionError(f"{type(exc).__name__}: {exc}")))


def _serve(receive, send, extractor_name: str) -> None:
    """Child process: extract each document received; send back ("ok", text) or ("error", exc)."""
    extract = get_extractor(extractor_name)
    try:  # import and initialise the extractor now: its first call is slow, and not the first page's fault
        extract(_WARM_UP_PAGE)
    except Exception as exc:  # noqa: BLE001 - e.g. an ImportError: the parent re-raises it
        send.send(("error", exc))
        return
    send.send(("ready", None))
    while True:
        try:
            html = receive.recv()
        except EOFError:  # the parent went away
            return
        answer(send, extract, html)


class _Child:
    """One extractor process: ``python -m plexity_plugins.sandbox`` with two pipes of its own.

    (A plain subprocess, not multiprocessing's spawn or forkserver: those import the caller's
    ``__main__`` again in the child, which re-runs a user's script that has no main guard.)"""

    def __init__(self, extractor_name: str):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "plexity_plugins.sandbox", extractor_name, str(to_child_r), str(from_child_w)],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._send = Connection(to_child_w, readable=False)
        self.connection = Connection(from_child_r, writable=False)
        self.ready = False

    def wait_ready(self) -> None:
        if not self.ready:
            status, value = self._receive(None)  # start-up: not counted in a document's time
            if status == "error":
                raise value
            self.ready = True

    def _receive(self, timeout: float | None):
        if timeout is not None and not self.connection.poll(timeout):
            raise ExtractionTimeout(f"extraction took longer than {timeout:g} s")
        try:
            return self.connection.recv()
        except EOFError:
            try:
                code = self.process.wait(1)
            except subprocess.TimeoutExpired:
                code = None
            raise ExtractionError(f"the extractor process died (exit status {code})") from None

    def extract(self, html: str | bytes, timeout: float) -> str:
        self.wait_ready()
        self._send.send(html)
        status, value = self._receive(timeout)
        if status == "error":
            raise value
        return value

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)
        self._send.close()
        self.connection.close()


class TimeLimitedExtractor:
    """``extractor(html) -> text``, each call limited to `timeout` seconds.

    Args:
        extractor: an extractor name (`plexity_plugins.extractors.EXTRACTORS`).
        timeout: seconds per document; a longer extraction is stopped (its process killed)
            and raises `ExtractionTimeout`. 0 or None: no limit, extraction runs in the
            calling thread (no child process).
        processes: child processes at most (calls from more threads wait for one).

    Callable from any thread.  `close()` ends the children (also done at interpreter exit).
    """

    def __init__(self, extractor: str, timeout: float | None = DEFAULT_EXTRACT_TIMEOUT, processes: int = 1):
        if timeout is not None and timeout < 0:
            raise ValueError(f"the extraction time limit must be 0 (none) or more seconds, got {timeout!r}")
        self.name = extractor
        self.timeout = timeout or None
        self.processes = max(1, processes)
        self._direct: Callable[[str | bytes], str] = get_extractor(extractor)  # (validates the name)
        self._idle: queue.LifoQueue[_Child] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.processes)
        self._children: list[_Child] = []
        self._lock = threading.Lock()

    def __call__(self, html: str | bytes) -> str:
        if self.timeout is None or self.name == "none":
            return self._direct(html)
        with self._slots:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                child = self._start()
            try:
                text = child.extract(html, self.timeout)
            except BaseException as exc:
                # busy past the limit, dead, or never started: the next call gets a new one
                if isinstance(exc, ExtractionTimeout) or not child.ready or not child.alive():
                    self._discard(child)
                else:  # the extractor's own error on this page: the child goes on
                    self._idle.put(child)
                raise
            self._idle.put(child)
            return text

    def warm_up(self) -> None:
        """Start one child and wait until its extractor is imported (at start-up, not in the first page)."""
        if self.timeout is not None and self.name != "none":
            with self._slots:
                child = self._start()
                child.wait_ready()
                self._idle.put(child)

    def _start(self) -> _Child:
        child = _Child(self.name)
        with self._lock:
            self._children.append(child)
        return child

    def _discard(self, child: _Child) -> None:
        child.kill()
        with self._lock:
            self._children.remove(child)

    def close(self) -> None:
        with self._lock:
            children, self._children = self._children, []
        for child in children:
            child.kill()
        while not self._idle.empty():
            self._idle.get_nowait()

    def __getstate__(self):  # pickles as its settings (for datatrove steps, forked workers)
        return {"name": self.name, "timeout": self.timeout, "processes": self.processes}

    def __setstate__(self, state):
        self.__init__(state["name"], state["timeout"] or 0, state["processes"])

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass



if __name__ == "__main__":  # a child: python -m plexity_plugins.sandbox EXTRACTOR READ_FD WRITE_FD
    _serve(Connection(int(sys.argv[2]), writable=False), Connection(int(sys.argv[3]), readable=False), sys.argv[1])
