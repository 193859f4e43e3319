"""A time limit per document for extraction, the same in every front end.

A hostile page can keep an extractor busy for minutes (14 MB of sibling ``<span>``s: 216 s
in trafilatura) inside C code that no Python-level timeout interrupts, and a thread cannot
be killed.  So `TimeLimitedExtractor` runs the extractor in a child process of its own and
kills it when a document takes longer than the limit: the caller gets `ExtractionTimeout` (an
`ExtractionError`: a counted skip, like any unextractable page) and the next document gets
a fresh child.  ``plexity run`` gets the same from datatrove's extractor sandbox.

The children are started with ``spawn`` (never forked from a process that runs threads:
Scrapy's reactor, a web server), import the extractor once and then serve documents one at a
time.  Up to ``processes`` of them serve several calling threads at once.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
from typing import Callable

from .extract import ExtractionError, get_extractor

DEFAULT_EXTRACT_TIMEOUT = 30.0  # seconds per document; datatrove's extractor steps use the same in plexity run


class ExtractionTimeout(ExtractionError):
    """The extractor took longer than the time limit on one document."""


def _serve(connection, extractor_name: str) -> None:
    """Child process: extract each document received; send back ("ok", text) or ("error", exc)."""
    extract = get_extractor(extractor_name)
    connection.send(("ready", None))
    while True:
        try:
            html = connection.recv()
        except EOFError:  # the parent went away
            return
        try:
            connection.send(("ok", extract(html)))
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which decides
            try:
                connection.send(("error", exc))
            except Exception:  # an exception that does not pickle
                connection.send(("error", ExtractionError(f"{type(exc).__name__}: {exc}")))


class _Child:
    def __init__(self, extractor_name: str):
        context = multiprocessing.get_context("spawn")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_serve, args=(child_end, extractor_name), daemon=True,
                                       name=f"plexity-extract-{extractor_name}")
        self.process.start()
        child_end.close()
        self._ready = False

    def wait_ready(self) -> None:
        if not self._ready:
            self._receive(None)  # start-up: importing the extractor is not the document's time
            self._ready = True

    def _receive(self, timeout: float | None):
        if timeout is not None and not self.connection.poll(timeout):
            raise ExtractionTimeout(f"extraction took longer than {timeout:g} s")
        try:
            return self.connection.recv()
        except EOFError:
            self.process.join(1)
            code = self.process.exitcode
            raise ExtractionError(f"the extractor process died (exit status {code})") from None

    def extract(self, html: str | bytes, timeout: float) -> str:
        self.wait_ready()
        self.connection.send(html)
        status, value = self._receive(timeout)
        if status == "error":
            raise value
        return value

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.connection.close()


class TimeLimitedExtractor:
    """``extractor(html) -> text``, each call limited to `timeout` seconds.

    Args:
        extractor: an extractor name (`plexity_plugins.extract.EXTRACTORS`).
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
            except (ExtractionTimeout, ExtractionError, EOFError, OSError) as exc:
                if isinstance(exc, ExtractionTimeout) or not child.process.is_alive():
                    self._discard(child)  # busy past the limit, or dead: the next call gets a new one
                else:
                    self._idle.put(child)
                raise
            except BaseException:
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

