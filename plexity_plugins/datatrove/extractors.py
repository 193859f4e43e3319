"""The extractors of ``plexity clean`` as datatrove extractor steps, checked at task start."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

from datatrove.pipeline.extractors.base import BaseExtractor
from datatrove.utils.logging import logger
from datatrove.utils.typeshelper import StatHints

from ..extractors import html_to_text_auto, html_to_text_fast, html_to_text_tags, html_to_text_trafilatura
from ..lifetime import die_with_parent
from ..policy import EMPTY_INPUT, ENVIRONMENT_ERRORS, NO_TEXT_EXTRACTED, InstallationError, environment_message
from ..sandbox import answer

_CHECK_PAGE = "<html><body><p>plexity start-up check: the extractor can run.</p></body></html>"


class _ForkedExtractor:
    """Extraction in a child process with a time limit per document, as datatrove's
    ``ExtractorSandbox`` does it (a child from multiprocessing's default start method, the
    first one the kernel kills when memory runs out, killed and replaced after a timeout or a
    death; the page goes over as UTF-8 bytes), except for a page the extractor fails on: its
    exception comes back to the caller (datatrove's ``clean_error``, one warning) and the child
    goes on.  In datatrove's sandbox the exception ended the child (a traceback on stderr for
    every such page), the page counted as ``broken_process`` and a new child was forked.

    `extract_document` raises TimeoutError past the limit and EOFError when the child died."""

    def __init__(self, extract, timeout: float):
        self.extract, self.timeout = extract, timeout
        self.process = self.connection = None
        self._parent_pid = None

    def _serve(self, connection) -> None:  # the child
        # Not left behind when the task process is killed (a Ray actor whose node died, the
        # OOM killer): the kernel kills this child with it; and without the parent's end of
        # the pipe, which it inherited, a parent gone also ends recv() below.
        die_with_parent(self._parent_pid)
        self.connection.close()
        if sys.platform.startswith("linux"):
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000\n")
            except OSError:
                pass
        self.extract("")  # warm up: imports and first-call set-up are not a page's time
        connection.send(None)
        while True:
            try:
                html = connection.recv_bytes().decode("utf-8", "surrogatepass")
            except EOFError:  # the task is done
                return
            answer(connection, self.extract, html)  # the page's exception: the caller counts it

    def _start(self) -> None:
        self._parent_pid = os.getpid()
        self.connection, child = multiprocessing.Pipe()
        self.process = multiprocessing.Process(target=self._serve, args=(child,), daemon=True)
        self.process.start()
        child.close()
        try:
            ready = self.connection.poll(max(self.timeout, 60)) and self.connection.recv() is None
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.close()
            raise EOFError("the extractor process did not start")

    def extract_document(self, html: str) -> str:
        if self.process is None:
            self._start()
        try:
            self.connection.send_bytes(html.encode("utf-8", "surrogatepass"))
            deadline = time.monotonic() + self.timeout
            while not self.connection.poll(max(0.0, min(5.0, deadline - time.monotonic()))):
                if not self.process.is_alive():
                    raise EOFError("the extractor process died (killed, or out of memory)")
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"extraction took longer than {self.timeout:g} s")
            status, result = self.connection.recv()
        except (TimeoutError, EOFError):
            self.close()
            raise
        except OSError as exc:  # the pipe broke: the child is gone
            self.close()
            raise EOFError(f"the extractor process died ({exc})") from exc
        if status == "error":
            raise result
        return result

    def close(self) -> None:
        if self.process is not None:
            try:
                self.connection.close()
            except OSError:  # (closed already: a generator finalised at exit, after a full disk)
                pass
            self.process.kill()
            self.process.join(5)
            self.process = self.connection = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class _PlexityExtractor(BaseExtractor):
    """A function of `plexity_plugins.extract` (`to_text`) as a datatrove extractor step.

    It runs once in the task's own process before the sandbox (`_ForkedExtractor`) takes over.
    The sandbox counts every exception as one document's ``clean_error`` (and a child that
    dies as ``broken_process``), so a broken installation (the extractor's module cannot be
    imported) would otherwise lose every document as if it were damaged input; here it stops
    the task instead, saying what to install."""

    to_text = None  # staticmethod(the function of plexity_plugins.extract)

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return self.to_text(text)

    def run(self, data, rank: int = 0, world_size: int = 1):
        try:
            self.extract(_CHECK_PAGE)
        except ENVIRONMENT_ERRORS as exc:
            raise InstallationError(f"{self.name}: {environment_message(exc)}", exc) from exc
        # As datatrove's BaseExtractor.run (same counters, same messages), with `_ForkedExtractor`.
        with _ForkedExtractor(self.extract, self.timeout) as extractor:
            for doc in data:
                self.stat_update(StatHints.total)
                with self.track_time():
                    empty_input = not (doc.text or "").strip()
                    try:
                        doc.text = extractor.extract_document(doc.text)
                        self.stat_update("extracted")
                    except TimeoutError:
                        self.stat_update("timeout")
                        logger.warning("⏰ Timeout while cleaning record text. Skipping record.")
                        continue
                    except EOFError:
                        self.stat_update("broken_process")
                        logger.warning("Process died unexpectedly, will create new process for next document")
                        continue
                    except Exception as e:
                        self.stat_update("clean_error")
                        if not self._warned_error:
                            logger.warning(f'❌ Error "{e}" while cleaning record text. Skipping record. '
                                           f"This message will only appear once.")
                            self._warned_error = True
                        continue
                if doc.text:
                    self.stat_update(StatHints.forwarded)
                    self.update_doc_stats(doc)
                    yield doc
                else:  # (datatrove's extractors drop it; named, as the filter's empty_<reason>)
                    self.stat_update(StatHints.dropped, f"dropped_{EMPTY_INPUT if empty_input else NO_TEXT_EXTRACTED}")


class HtmlTagsExtractor(_PlexityExtractor):
    """The text of every visible HTML element, one line per block element.

    pyplexity's tag remover, keeping block breaks (the sentence filter uses them as
    boundaries): exactly ``plexity clean --extractor tags``
    (`plexity_plugins.extractors.html_to_text_tags`).  Keeps all visible text, boilerplate
    included, and leaves its removal to `PerplexitySentenceFilter`; datatrove's
    ``Trafilatura`` extractor is the other choice (`TrafilaturaExtractor`).

    As every datatrove extractor, it runs in a sandboxed subprocess: a document whose
    extraction times out or fails is dropped and counted (``timeout``, ``clean_error``);
    one that yields no text is counted as ``dropped``.  A broken installation stops the
    task instead (`InstallationError`).

    Args:
        timeout: seconds allowed per document (a 10 MB page takes about a second)
    """

    name = "🏷 HTML tags"
    to_text = staticmethod(html_to_text_tags)


class TrafilaturaExtractor(_PlexityExtractor):
    """trafilatura's main text, with the settings of ``plexity clean --extractor trafilatura``
    (`plexity_plugins.extractors.html_to_text_trafilatura`: tables kept, no deduplication, no
    comments), so that ``plexity run`` and ``plexity clean`` extract the same text.

    Unlike datatrove's ``Trafilatura`` step it does not log trafilatura's ERROR messages for
    an empty document (datatrove's sandbox warms up on an empty string, which made every
    successful run print two ERROR lines): such a document yields no text and is counted as
    ``dropped`` by the step, like any document without text.  Works with trafilatura 1.8-1.11
    (what ``datatrove[processing]`` pins) and 2.x.  A trafilatura that cannot be imported
    (e.g. lxml without ``lxml_html_clean``) stops the task with a message saying what to
    install, instead of being counted as one ``broken_process`` per document.

    Args:
        timeout: seconds allowed per document (extraction runs in datatrove's sandboxed
            subprocess; a document over time is dropped and counted as ``timeout``)
    """

    name = "⛏ Trafilatura (plexity)"
    to_text = staticmethod(html_to_text_trafilatura)


class FastExtractor(_PlexityExtractor):
    """Main content by resiliparse (lexbor parser): ``plexity clean --extractor fast``.

    `plexity_plugins.extractors.html_to_text_fast`: resiliparse's main-content heuristic drops
    navigation, headers, footers and sidebars; one line per block.  Many times faster than
    trafilatura; its quality with and without `PerplexitySentenceFilter` is in the README's
    "Cleaning quality".  Timeouts, failures and empty results are counted as in every datatrove
    extractor (``timeout``, ``clean_error``, ``dropped``); a resiliparse that cannot be imported
    stops the task (`InstallationError`).

    Args:
        timeout: seconds allowed per document
    """

    name = "⚡ fast (resiliparse)"
    to_text = staticmethod(html_to_text_fast)


class AutoExtractor(_PlexityExtractor):
    """trafilatura's main text, or fast's where trafilatura left out part of the page:
    ``plexity clean --extractor auto``, the default of ``plexity run`` and ``plexity clean``.

    `plexity_plugins.extractors.html_to_text_auto`: both extractions run; fast's text is taken when
    it is no shorter and its lines that trafilatura lacks hold over a quarter of trafilatura's
    words (the other posts of a thread, the other sections of a service page, the rest of a
    listing), except on a page that declares itself one article or one product, where fast must
    find over five times the words (`plexity_plugins.extractors.prefer_fuller`).  On the benchmarks
    in the README it is better than trafilatura on the whole web (forums, catalogues, service
    pages, CleanEval's pages) and the same on English news articles, at a few ms a page more.
    Counted like every datatrove extractor (``timeout``, ``clean_error``, ``dropped``); a
    trafilatura or resiliparse that cannot be imported stops the task.

    Args:
        timeout: seconds allowed per document (both extractions together)
    """

    name = "⛏ auto (trafilatura, else fast)"
    to_text = staticmethod(html_to_text_auto)
