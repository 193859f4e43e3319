"""The extractors of ``plexity clean`` as datatrove extractor steps, checked at task start."""

from __future__ import annotations

from datatrove.pipeline.extractors.base import BaseExtractor
from datatrove.utils.logging import logger
from datatrove.utils.typeshelper import StatHints

from ..extractors import extractor_model, get_extractor
from ..cleaning.policy import EMPTY_INPUT, NO_TEXT_EXTRACTED
from ..errors import (ENVIRONMENT_ERRORS, ExtractionMemoryLimit, ExtractionTimeout, ExtractorDied, InstallationError,
                      TextsNotHtml, environment_message, printable)
from ..io.payload_sniffing import has_markup, is_blank
from ..extractors.sandbox import (MEMORY_LIMIT, TimeLimitedExtractor, extract_memory_limit, extract_timeout,
                                  is_default_ceiling, kept_between_uses)
from ..io.decoding import html_text_counted
from .filter import INPUT_NOT_TEXT, not_text
from .readers import REPLACED_CHARS_KEY, decoding_replaced, is_page_text, is_text_already
from .run_settings import with_settings
from ..runtime.keywords import suggests_keywords

_CHECK_PAGE = "<html><body><p>plexity start-up check: the extractor can run.</p></body></html>"


class _Named:
    """A step's `to_text`: the function of its `extractor` name, imported on first use (a task's process
    leaves it to the extraction child, which imports it alone; lxml with the trafilatura one)."""

    def __get__(self, step, owner):
        return None if owner.extractor is None else get_extractor(owner.extractor)


# What a document's extraction ends in when it gives no text, besides the extractor's own error on
# the page (``clean_error``): the counter (the names datatrove's own extractors count).
_SKIPS = ((ExtractionTimeout, "timeout"), (ExtractionMemoryLimit, MEMORY_LIMIT), (ExtractorDied, "broken_process"))
NO_MARKUP = "no_markup"  # the counter of texts without any HTML markup given to the step (texts already)
FIRST_TEXTS_NO_MARKUP = 3  # a task whose first texts all lack markup stops (`TextsNotHtml`), as the filter's rule
# Every counter of a document the step forwards nothing for: no text (datatrove's own ``dropped``),
# a skip above, or the extractor's error.
LOST_COUNTERS = ("dropped", *(name for _, name in _SKIPS), "clean_error")
# The counter of tasks whose default memory ceiling their job's memory lowered (the task's log says to what, and why)
CEILING_LOWERED = "memory_ceiling_lowered"
# Documents extracted before the step hands them on, in order: the filter after it then scores them one after the
# other, its language model and language identifier's tables still in the processor's caches (between two pages
# the page's reading and extraction had pushed them out: 0.2-0.3 ms more of the filter's CPU a news page, of
# ~3.5 ms).  The batch holds extracted texts (a page's HTML is let go once extracted): a few hundred kB.
HAND_ON_BATCH = 32


@suggests_keywords
class _PlexityExtractor(BaseExtractor):
    """An extractor of `plexity_plugins.extractors` (`extractor`, `to_text`) as a datatrove extractor step.

    Documents are extracted in the child processes of `plexity_plugins.extractors.sandbox`, the ones
    ``plexity clean`` and the Scrapy pipeline use, with the same time limit and memory ceiling:
    a document past either is dropped and counted (``timeout``, ``memory_limit``), a child that
    dies as ``broken_process``, the extractor's own error on a page as ``clean_error`` (one
    warning); the next document gets a fresh child where needed.  A WET record's text (the page's
    text already: `readers.is_page_text`) is passed on as it is, counted as ``page_texts``, and so is
    a cleaned WARC's record read back (`readers.is_cleaned_text`), counted as ``cleaned_texts``.  A text
    without any HTML markup is counted as ``no_markup`` (one warning); a task whose first texts all lack it
    stops with `TextsNotHtml` (`check_markup`).  The
    extractor runs once before the first document, in its child (`check_installation`): a broken
    installation (its module cannot be imported) would otherwise lose every document as if it were
    damaged input; here it stops the task instead, saying what to install.  Documents go on to the next
    step in order, `HAND_ON_BATCH` at a time (the filter after it scores them with its tables in the
    processor's caches).

    The step is datatrove's ``BaseExtractor`` (its arguments, its ``extract``) with a ``run`` of its
    own: datatrove's runs every extractor in its own sandbox, a fork of the task's process with a
    time limit and no memory ceiling, and takes no other."""

    extractor = None  # its name in `plexity_plugins.extractors.EXTRACTORS` (else `to_text` runs in the child)
    to_text = _Named()  # staticmethod(its function) in a step of another extractor

    def __init__(self, timeout: float = 30, memory_limit: int | str | None = None):
        extract_timeout(timeout)  # (a string or a negative number: a ValueError here, not when a task runs)
        super().__init__(timeout)
        # (resolved here, where the pipeline is built: the value travels with the step to Slurm nodes; the default
        # is decided again in each task, where the job's memory may lower it: `extraction_ceiling`)
        self.memory_limit = extract_memory_limit(memory_limit)
        self.memory_default = is_default_ceiling(memory_limit)
        self.warned_of_errors = False
        self.warned_of_no_markup = False
        self.warned_of_not_text = False
        self.first_texts = 0  # (texts seen, up to FIRST_TEXTS_NO_MARKUP, and whether all lacked markup)
        self.first_without_markup = True
        # its limits in its name: what datatrove's log and stats show of the step
        memory = f"memory {self.memory_limit / 2**20:g} MiB" if self.memory_limit else "no memory limit"
        self.name = with_settings(type(self).name, f"timeout {self.timeout:g} s" if self.timeout else "no timeout",
                                  memory)
        self.stats.name = str(self)

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`)."""
        return {"extractor": self.extractor or type(self).__name__, **extractor_model(self.extractor),
                "timeout": self.timeout, "memory_limit": self.memory_limit}

    def extract(self, text: str) -> str:
        return self.to_text(text)

    def run(self, data, rank: int = 0, world_size: int = 1):
        default = getattr(self, "memory_default", False)  # (a step pickled before it was kept)
        extractor = TimeLimitedExtractor(self.extractor or self.to_text, timeout=self.timeout or 0,
                                         memory_limit=None if default else self.memory_limit or 0)
        if extractor.memory_note:  # (its job's memory holds less than the ceiling: said in each task's log)
            if default and extractor.memory_limit != self.memory_limit:
                self.stat_update(CEILING_LOWERED)
            logger.warning(extractor.memory_note)
        batch = []  # (handed on `HAND_ON_BATCH` at a time, in order)
        try:
            self.check_installation(extractor)
            for doc in data:
                if self._extracted(extractor, doc):
                    batch.append(doc)
                    if len(batch) >= HAND_ON_BATCH:
                        yield from batch
                        batch.clear()
            yield from batch
        finally:  # (in a worker of plexity's executors, kept for its next task: `keep_between_uses`)
            extractor.close(set_aside=kept_between_uses())

    def _extracted(self, extractor: TimeLimitedExtractor, doc) -> bool:
        """Whether `doc` goes on, its text extracted (a WET record's text, a cleaned record's as it is); else it is
        dropped, and counted."""
        self.stat_update(StatHints.total)
        if is_text_already(doc):  # a WET record's text, a cleaned record's: the page's text already
            self.stat_update("page_texts" if is_page_text(doc) else "cleaned_texts")
            self.stat_update(StatHints.forwarded)
            return True
        if self.extractor is not None and not self.readable_text(doc):  # (dropped, and counted)
            return False
        with self.track_time():
            empty_input = is_blank(doc.text)
            if self.extractor is not None and not empty_input and isinstance(doc.text, str):
                self.check_markup(doc)  # (ours read HTML; a subclass's own to_text may read anything)
            if self.extractor is not None:  # (one of ours, which reads them as U+FFFD: counted here)
                self.replace_lone_surrogates(doc)
            text = self.extract_in_child(extractor, doc)
        if text is None:  # skipped, and counted
            return False
        doc.text = text
        if not doc.text:  # (datatrove's extractors drop it; named, as the filter's empty_<reason>)
            self.stat_update(StatHints.dropped, f"dropped_{EMPTY_INPUT if empty_input else NO_TEXT_EXTRACTED}")
            return False
        self.stat_update(StatHints.forwarded)
        self.update_doc_stats(doc)
        return True

    def readable_text(self, doc) -> bool:
        """Whether `doc`'s text is one an extractor of ours reads (a str, bytes; a bytearray or memoryview is made
        bytes); else it is dropped and counted as the filter counts it: a text that is None as an empty one
        (``dropped_empty_input``), another type (a JSON row's list of paragraphs, a number) as
        ``dropped_input_not_text``, with one warning.  Before, a list or a number stopped the task (AttributeError:
        'list' object has no attribute 'isspace'), its other documents lost; None and a bytearray were each an
        extractor's error (``clean_error``: "'NoneType' object has no attribute 'isascii'")."""
        text = doc.text
        if isinstance(text, (str, bytes)):
            return True
        if isinstance(text, (bytearray, memoryview)):
            doc.text = bytes(text)
            return True
        if text is None:
            self.stat_update(StatHints.dropped, f"dropped_{EMPTY_INPUT}")
            return False
        if not self.warned_of_not_text:
            self.warned_of_not_text = True
            logger.warning(f"document {_named(doc)}: {not_text(text)}: dropped as {INPUT_NOT_TEXT} (said once; "
                           f"counted in dropped_{INPUT_NOT_TEXT})")
        self.stat_update(StatHints.dropped, f"dropped_{INPUT_NOT_TEXT}")
        return False

    def check_markup(self, doc) -> None:
        """Count a text without any HTML markup (`has_markup`) as ``no_markup``, with one warning: the
        extractor finds no page in it.  When the task's first texts all lack it (and no server called them
        HTML: metadata ``content_type``, as `WarcHtmlReader` gives it), the pipeline reads texts that are not
        pages (datatrove's ``WarcReader`` on WET files, a JSONL dataset's text): raise `TextsNotHtml`, saying
        how to build it, rather than lose every document as ``no_text_extracted``."""
        markup = has_markup(doc.text)
        if self.first_texts < FIRST_TEXTS_NO_MARKUP:
            self.first_texts += 1
            # (a response its server called HTML, as WarcHtmlReader's documents say: a server's quirk, not a
            # pipeline reading texts; counted, never a stop)
            declared = "html" in str(doc.metadata.get("content_type") or "").lower()
            self.first_without_markup = self.first_without_markup and not markup and not declared
            if self.first_texts == FIRST_TEXTS_NO_MARKUP and self.first_without_markup:
                raise TextsNotHtml(
                    f"{type(self).__name__}: the first {FIRST_TEXTS_NO_MARKUP} texts of this task hold no HTML "
                    f"markup (the last, document {_named(doc)}, starts {doc.text.lstrip()[:30]!r}): they are "
                    f"texts already, which an extractor reads nothing of. Leave the extractor out and give "
                    f"PerplexitySentenceFilter the method for them (method='regions' for a WET record's, a page's "
                    f"every visible line); or read WET files with WarcHtmlReader, which marks their text, and the "
                    f"extractor passes it on")
        if not markup:
            self.stat_update(NO_MARKUP)
            if not self.warned_of_no_markup:
                self.warned_of_no_markup = True
                logger.warning(f"document {_named(doc)}: its text holds no HTML markup, so the extractor finds "
                               f"little or nothing of it (said once; counted in {NO_MARKUP})")

    @staticmethod
    def replace_lone_surrogates(doc) -> None:
        """A page's lone surrogates (a JSON ``\\ud800`` escape in a reader's input puts them in its str) U+FFFD, as
        the extractor would read them, counted in the Document's ``replaced_chars`` with the characters its
        reader replaced, which `PerplexitySentenceFilter` counts (`html_text_counted`, as the Scrapy pipeline)."""
        if isinstance(doc.text, str):
            doc.text, replaced = html_text_counted(doc.text)
            if replaced:
                doc.metadata[REPLACED_CHARS_KEY] = decoding_replaced(doc) + replaced

    def check_installation(self, extractor: TimeLimitedExtractor | None = None) -> None:
        """Run the extractor once where it will run, before any document: in `extractor`'s child, which
        extracts a small page before it says it is ready (then left ready for the first document), or in this
        process when nothing limits it (or `extractor` is None).  An extractor that cannot run (a module that
        cannot be imported) stops the task with `InstallationError`, saying what to install."""
        try:
            if extractor is not None and extractor.sandboxed:
                extractor.warm_up()
            else:
                self.extract(_CHECK_PAGE)
        except ENVIRONMENT_ERRORS as exc:
            raise InstallationError(f"{self.name}: {environment_message(exc)}", exc) from exc

    def extract_in_child(self, extractor: TimeLimitedExtractor, doc) -> str | None:
        """`doc`'s text, extracted in the sandbox's child; None when the document is skipped
        (counted; an error of the installation is not a skip: it propagates)."""
        try:
            text = extractor(doc.text)
        except ENVIRONMENT_ERRORS:
            raise
        except Exception as exc:
            counter = next((name for kind, name in _SKIPS if isinstance(exc, kind)), "clean_error")
            self.stat_update(counter)
            if counter != "clean_error":
                logger.warning(f"document {_named(doc)} skipped ({counter}): {printable(str(exc))}")
            elif not self.warned_of_errors:  # (the extractor's own error: said once, then counted; its message
                # may quote the page, as lxml's and trafilatura's do: `printable`)
                logger.warning(f"document {_named(doc)} skipped (clean_error: {printable(str(exc))}); further "
                               f"documents the extractor fails on are only counted")
                self.warned_of_errors = True
            return None
        self.stat_update("extracted")
        return text


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
        memory_limit: bytes of resident memory (RSS) the extraction child may hold (or a size,
            ``"512MiB"``); a document past it is dropped and counted as ``memory_limit``.
            Default: ``PLEXITY_EXTRACT_MEMORY``, else 768 MiB, less where the job's memory holds less
            (`extraction_ceiling`); 0: no ceiling.
    """

    name = "🏷 HTML tags"
    extractor = "tags"


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
        timeout: seconds allowed per document (extraction runs in a sandboxed subprocess; a
            document over time is dropped and counted as ``timeout``)
        memory_limit: as `HtmlTagsExtractor`'s (``memory_limit`` counted)
    """

    name = "⛏ Trafilatura (plexity)"
    extractor = "trafilatura"


class DenseExtractor(_PlexityExtractor):
    """The page's item, or its main content: ``plexity clean --extractor dense``.

    `plexity_plugins.extractors.html_to_text_dense`: one lexbor parse; short link lists dropped;
    the item the page declares (schema.org articleBody, a single <article>, <main>) or the
    container where its paragraphs are densest, read without what HTML says is not its text
    (nav, aside, header, footer, forms, hidden), when it holds enough of the page's main content
    (resiliparse's), else that main content.  No lists of class or id names.  The default before
    `LearnedExtractor` (docs/extraction.md).  Counted like every datatrove extractor
    (``timeout``, ``clean_error``, ``dropped``); a resiliparse that cannot be imported stops the
    task (`InstallationError`).

    Args:
        timeout: seconds allowed per document
        memory_limit: as `HtmlTagsExtractor`'s (``memory_limit`` counted)
    """

    name = "▦ dense (lexbor)"
    extractor = "dense"


class LearnedExtractor(_PlexityExtractor):
    """The page's text chosen block by block by a small learned model: ``plexity clean --extractor
    learned``.

    `plexity_plugins.extractors.html_to_text_learned`: one pass cuts the page into blocks; each
    block gets a row of evidence (its shape, link and text density of its elements, declared
    roles, position, repetition, the page's kind, the text the page declares) and a forest of
    decision trees, trained on four benchmarks' pages and shipped in the package (its card:
    ``plexity_plugins/extractors/learned/card.json``), keeps the blocks it finds to be the page's
    text.  Compiled where the extension is built.  The extractor of ``plexity run`` and ``plexity
    clean`` by default (docs/extraction.md).  Counted like every datatrove extractor
    (``timeout``, ``clean_error``, ``dropped``).

    Args:
        timeout: seconds allowed per document
        memory_limit: as `HtmlTagsExtractor`'s (``memory_limit`` counted)
    """

    name = "🌲 learned (block forest)"
    extractor = "learned"


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
        memory_limit: as `HtmlTagsExtractor`'s (``memory_limit`` counted)
    """

    name = "⚡ fast (resiliparse)"
    extractor = "fast"


class AutoExtractor(_PlexityExtractor):
    """trafilatura's main text, or fast's where trafilatura left out part of the page:
    ``plexity clean --extractor auto`` (the default before ``dense``, which matches its quality
    at about five times its speed).

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
        memory_limit: as `HtmlTagsExtractor`'s (``memory_limit`` counted)
    """

    name = "⛏ auto (trafilatura, else fast)"
    extractor = "auto"


def _named(doc) -> str:
    """A document as a log line names it: its URL where it has one (a WARC record's id tells a reader little)."""
    url = doc.metadata.get("url")
    return printable(f"{url} ({doc.id})" if url else str(doc.id))  # (the crawl's characters: no ESC, no CR)
