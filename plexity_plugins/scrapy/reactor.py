"""The pipeline's worker thread as Scrapy's reactor sees it: a worker's result awaited on an asyncio loop or on a
plain Twisted reactor, a call as the reactor stops (a forced shutdown, Ctrl-C twice), and Scrapy's engine held back
while items wait for the worker (`HeldBack`)."""

from __future__ import annotations

import weakref
from concurrent.futures import Future
from typing import Any


def _on_forced_shutdown(callback) -> Any:
    """`callback` called as the Twisted reactor stops (a trigger's id, for removeSystemEventTrigger), or None
    without one (Scrapy's reactorless mode: its forced shutdown cancels the crawl's tasks, and with them each
    item's wait for the worker thread)."""
    import sys

    if "twisted.internet.reactor" not in sys.modules:  # (none installed)
        return None
    from twisted.internet import reactor

    return reactor.addSystemEventTrigger("before", "shutdown", callback)


def _asyncio_available() -> bool:
    """Whether coroutines here run on an asyncio loop (await Futures) or on a plain
    Twisted reactor (await Deferreds)."""
    import asyncio

    # A running asyncio loop first, as Scrapy 2.15's is_asyncio_available does: before 2.13, Scrapy's check of the
    # reactor installed Twisted's default one where none was (the pipeline driven by asyncio.run, not by a crawl),
    # said "not asyncio", and a Deferred awaited in an asyncio task stopped it: "Task got bad yield".
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        pass
    try:
        from scrapy.utils.asyncio import is_asyncio_available  # Scrapy >= 2.14
    except ImportError:
        from scrapy.utils.reactor import is_asyncio_reactor_installed as is_asyncio_available
    return is_asyncio_available()


def _deferred_from_future(future: Future):
    """A Deferred fired in the reactor thread when a concurrent.futures Future completes."""
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred

    deferred = Deferred()

    def fire(done: Future) -> None:
        if done.cancelled():  # (by a forced shutdown, `_cancel_waiting_items`: the crawl is over)
            return
        error = done.exception()
        if error is not None:
            deferred.errback(error)
        else:
            deferred.callback(done.result())

    future.add_done_callback(lambda done: reactor.callFromThread(fire, done))
    return deferred


_HELD_BACK: "weakref.WeakKeyDictionary[Any, HeldBack]" = weakref.WeakKeyDictionary()  # (a crawler's, for `StartWaits`)


class HeldBack:
    """Scrapy's engine paused (it starts no new download) while `limit` items or more wait for the worker thread(s),
    resumed as soon as fewer do.  Scrapy bounds the responses its scraper holds only by their bodies' bytes
    (SCRAPER_SLOT_MAX_ACTIVE_SIZE, 5 MB: thousands of small pages), and each page waiting for the cleaner is held
    with its response, decoded text and parsed tree, ~10 times its body (23 KB for a page of 2 KB).  A limit of
    CONCURRENT_REQUESTS (+ the threads) never starves the cleaner: where it is the bottleneck, the requests in flight
    refill the queue faster than it empties (their latency under CONCURRENT_REQUESTS / its rate)."""

    def __init__(self, engine, limit: int, crawler=None):
        self.engine = engine if callable(getattr(engine, "pause", None)) else None  # (no crawl: a pipeline alone)
        self.limit = limit
        self.waiting = 0  # items waiting for the worker thread, or in it
        self._paused = False  # (by us: one paused before, engine.pause() in the telnet console, stays paused)
        self._room: list = []  # (`StartWaits`'s waits for fewer than `limit` items: Futures or Deferreds)
        self._released = False
        if crawler is not None and self.engine is not None:
            _HELD_BACK[crawler] = self

    @staticmethod
    def of(crawler) -> "HeldBack | None":
        """The crawl's, once its pipeline has opened with a worker thread."""
        return _HELD_BACK.get(crawler)

    async def room(self) -> None:
        """Returns once fewer than `limit` items wait (at once where they do already)."""
        while self.waiting >= self.limit and self.engine is not None and not self._released:
            if _asyncio_available():
                import asyncio

                wait = asyncio.get_running_loop().create_future()
            else:
                from twisted.internet.defer import Deferred

                wait = Deferred()
            self._room.append(wait)
            await wait

    def release(self) -> None:
        """Every wait for room ended, and none begins (the pipeline closing)."""
        self._released = True
        self._wake()

    def _wake(self) -> None:
        waits, self._room = self._room, []
        for wait in waits:
            if hasattr(wait, "set_result"):  # (an asyncio Future; one whose task was cancelled is done)
                if not wait.done():
                    wait.set_result(None)
            elif not wait.called:
                wait.callback(None)

    def enter(self) -> None:
        self.waiting += 1
        if (self.waiting >= self.limit and self.engine is not None and not self._paused
                and not getattr(self.engine, "paused", False)):
            self.engine.pause()
            self._paused = True

    def leave(self) -> None:
        self.waiting -= 1
        if self._room and self.waiting < self.limit:
            self._wake()
        if self._paused and self.waiting < self.limit:
            self._paused = False
            self.engine.unpause()
            # (the response of the item leaving wakes the engine as it finishes; an item of the spider's start()
            # has none: woken here, not at the engine's next 5 s heartbeat)
            nextcall = getattr(getattr(self.engine, "_slot", None), "nextcall", None)
            if nextcall is not None:
                nextcall.schedule()


class StartWaits:
    """Spider middleware: an item a spider's `start()` yields itself (pages stored before, cleaned again) waits while
    the pipeline's worker has `HeldBack.limit` items waiting, before Scrapy sends it on.  Pausing the engine does not
    hold these back: they need no download, and Scrapy takes the next from `start()` as soon as it has sent one to the
    pipelines (all 500 of a test's spider waited for the worker at once).  Requests pass at once.  `PlexityAddon`
    enables it; Scrapy before 2.13 has no `start()` (its `start_requests` yields requests only)."""

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler) -> "StartWaits":
        return cls(crawler)

    async def process_start(self, start):
        from scrapy import Request

        async for item_or_request in start:
            if not isinstance(item_or_request, Request):
                held = HeldBack.of(self.crawler)
                if held is not None:
                    await held.room()
            yield item_or_request
