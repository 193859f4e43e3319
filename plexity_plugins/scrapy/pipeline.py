"""`PerplexityFilterPipeline`, the item pipeline: each item's page extracted and cleaned in a worker thread, the
text, counts and document perplexity written into the item, or the item dropped with its reason (`PlexityDropItem`,
logged as its URL: `shorten_drop_logs`), every outcome counted in the crawl's stats; the crawl's start (the model
opened, a resumed JOBDIR's settings compared) and its close (the dropped file named)."""

from __future__ import annotations

import asyncio
import atexit
import os
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from itemadapter import ItemAdapter
from scrapy import Item
from scrapy.exceptions import DropItem, NotConfigured

from ..cleaning import policy
from ..scoring import methods
from ..extractors import DEFAULT_EXTRACTOR, EXTRACTORS, ExtractionError, extractor_model, html_text_counted
from ..errors import (ENVIRONMENT_ERRORS, ExtractionMemoryLimit, ModelError, PlexitySettingError, disk_full_message,
                      environment_message, is_disk_full, path_error_message, printable)
from ..cleaning.settings_record import (SETTINGS_FILE, compare_or_record, model_settings, threshold_setting,
                                       threshold_text)
from ..io.payload_sniffing import binary_kind, has_markup, looks_like_html, text_binary_kind
from ..io.read_limits import MAX_DOCUMENT_BYTES
from ..io.read_outcomes import TOO_LARGE
from ..runtime.sizes import parse_memory, parse_size
from ..extractors.sandbox import DEFAULT_EXTRACT_TIMEOUT, MEMORY_LIMIT, TimeLimitedExtractor, say_once
from ..cleaning.policy import DEFAULT_MIN_CHARS, DocumentPolicy, DroppedLog, Verdict
from ..scoring.multilingual import LanguageModels, make_scorer, require_thresholds
from ..scoring.scorer import PerplexityScorer
from .dropped_file import _dropped_file_setting
from .feeds import XML_EXPORTER_PATH, PlexityFields, _is_utf8, _json_feeds_with, _scrapy_xml_feeds
from .items import MAX_SOURCE_CHARS, _item_source, _not_an_item, _one, _what_to_give, item_content_type
from .log import CANNOT_START, logger
from .reactor import HeldBack, _asyncio_available, _deferred_from_future, _on_forced_shutdown
from .settings import (SETTING_NAMES, SETTING_NAMES_IN_ERRORS, _choice_setting, _field_setting, _model_setting,
                       _typed_setting, _unknown_settings)


STATS_PREFIX = "plexity/"
ITEM_NOT_WRITABLE = "item_not_writable"
INPUT_FORMATS = ("html", "text")


class PlexityDropItem(DropItem):
    """An item the pipeline dropped: its `source` (URL) and `reason` are what gets logged,
    never the item itself (a page of megabytes)."""

    def __init__(self, message: str, source: str, reason: str):
        super().__init__(message)
        self.source = source
        self.reason = reason


def shorten_drop_logs(formatter) -> None:
    """Make `formatter` (the crawler's LogFormatter) log an item dropped by this pipeline as its
    URL and reason: Scrapy's "Dropped: ..." message otherwise prints the whole item, page
    included (an 80 MB log for a crawl of 43 pages).  Other drops are logged as before."""
    original = formatter.dropped
    if getattr(original, "_plexity_short", False):
        return

    def dropped(item, exception, *args, **kwargs):
        if isinstance(exception, PlexityDropItem):
            item = printable(f"<{type(item).__name__} {exception.source}: not shown>")
        return original(item, exception, *args, **kwargs)

    dropped._plexity_short = True
    formatter.dropped = dropped


@dataclass
class _Outcome:
    """What the worker thread returns: the policy's verdict, or why extraction failed."""

    verdict: Verdict | None = None
    reason: str | None = None
    detail: str = ""
    seconds: float = 0.0


# What Scrapy keeps in a JOBDIR of a crawl that ran there (its dupefilter's, scheduler's and SpiderState's)
SCRAPY_JOB_STATE = ("requests.seen", "requests.queue", "spider.state")


class PerplexityFilterPipeline:
    """Removes high-perplexity sentences (boilerplate) from crawled pages.

    Settings (all read in `from_crawler`):
        PLEXITY_ENABLED: False disables the pipeline (NotConfigured). Default True.
        PLEXITY_MODEL: model name or path; default: the embedded model.  Or a language -> model
            map, ``{"en": "en-default", "de": "ccnet-de"}`` (a dict, or its JSON with ``-s``): each
            page is cleaned with its language's model, pages in a language without one pass
            through (``items_passthrough/language:xx``).
        PLEXITY_LANGUAGE_FIELD: item field holding the page's language code, if the spider
            knows it (used instead of identifying it). Default None.
        PLEXITY_THRESHOLD: perplexity above which text counts as boilerplate; default: the
            model's (for the method).
        PLEXITY_METHOD: "region", "regions", "trim" or "sentences" (see `plexity_plugins.scoring.methods`);
            default: "trim" after learned, dense, auto, trafilatura and fast, "regions" after tags, else
            "region"
            (as `plexity clean`).
        PLEXITY_INPUT_FIELD: item field holding the page. Default "html".
        PLEXITY_INPUT_FORMAT: "html" (extracted first) or "text". Default "html".
        PLEXITY_ENCODING_FIELD: item field holding the response's encoding for an HTML page given as bytes:
            its Content-Type header (``response.headers.get("Content-Type")``) or a charset
            (``response.encoding``).  It decides as the HTTP charset does in a browser: over the
            page's ``<meta charset>``, under a BOM (`plexity_plugins.io.decoding`). "" for none.
            Default "encoding".
        PLEXITY_EXTRACTOR: "learned", "dense", "auto", "trafilatura", "fast", "tags" or "none", for
            HTML input; default as `plexity clean` (learned: blocks kept by a small learned forest).
        PLEXITY_OUTPUT_FIELD: field that receives the cleaned text. Default "text".
        PLEXITY_STATS_FIELD: field that receives the per-item ``plexity_*`` fields (a dict,
            the same fields as the datatrove step's metadata: `plexity_plugins.cleaning.policy.metadata`);
            "" for none. Default "plexity".  It includes ``plexity_doc_perplexity``, the page's
            document perplexity before filtering (`PerplexityScorer.document_perplexity`).
        PLEXITY_DOC_PERPLEXITY_FIELD: item field that receives the document perplexity alone
            (None when passed through); "" for none. Default "".
        PLEXITY_MIN_DOC_PERPLEXITY, PLEXITY_MAX_DOC_PERPLEXITY: drop items whose document
            perplexity lies outside these bounds (``doc_perplexity_below_min`` /
            ``doc_perplexity_above_max``). Default: no bounds.
        PLEXITY_ANNOTATE: keep everything, wrapping would-be-dropped sentences in
            ``<ppl score="...">`` instead of removing them. Default False.
        PLEXITY_MIN_CHARS: an item keeping fewer characters of text is dropped (``too_short``).
            Default 50 (as the datatrove step).
        PLEXITY_MIN_KEPT_FRACTION: an item keeping a smaller share of its text is dropped
            (``too_little_kept``). Default 0.
        PLEXITY_OTHER_LANGUAGES: "keep" pages in another language than the model's
            unfiltered, or "drop" them (``other_language``). Default "keep".
        PLEXITY_LANGUAGE_CHECK: pass pages in another language than the model's through
            unfiltered (counted). Default True.
        PLEXITY_THREADS: worker threads for the CPU work; 0 runs it on the reactor thread
            (a large page then stalls the crawl). Default 1.
        PLEXITY_DROPPED_FILE: path of a JSON-lines file receiving every dropped sentence
            and every dropped item with its reason (a missing directory is made, a directory there
            stops the crawl before it starts). Default None (not written).
        PLEXITY_MAX_DOCUMENT_BYTES: a larger page (bytes; characters for a str) is dropped as
            ``too_large`` before any work; bytes or a size ("50MB"), 1 or more, as ``--max-document-bytes``.
            Default 50 MB, as ``plexity clean`` and ``plexity run``.
        PLEXITY_EXTRACT_TIMEOUT: seconds allowed to extract one page; a longer extraction is
            stopped and the item dropped (``extraction_failed``). 0: no limit. Default 30.
        PLEXITY_EXTRACT_MEMORY: bytes of resident memory (RSS) the extraction process may hold (or a
            size, "512MiB"); past it the item is dropped (``memory_limit``). 0: no ceiling.
            Default: the ``PLEXITY_EXTRACT_MEMORY`` environment variable, else 768 MiB.

    A setting of the wrong kind (``PLEXITY_THRESHOLD=abc``) stops the crawl as any bad setting does,
    naming it (`_typed_setting`).  The model is opened once per crawler, in `open_spider`.  Stats go to
    the crawler's stats collector under ``plexity/``.
    """

    def __init__(self, scorer: PerplexityScorer | LanguageModels, stats, *, input_field: str = "html",
                 input_format: str = "html", encoding_field: str | None = "encoding",
                 extractor: str = DEFAULT_EXTRACTOR, output_field: str = "text",
                 stats_field: str | None = "plexity", annotate: bool = False,
                 min_chars: int = DEFAULT_MIN_CHARS, min_kept_fraction: float = 0.0,
                 other_languages: str = "keep", threads: int = 1, dropped_file: str | None = None,
                 extract_timeout: float | None = DEFAULT_EXTRACT_TIMEOUT,
                 extract_memory: int | str | None = None,
                 max_document_bytes: int = MAX_DOCUMENT_BYTES,
                 language_field: str | None = None, doc_perplexity_field: str | None = None,
                 min_doc_perplexity: float | None = None, max_doc_perplexity: float | None = None):
        if input_format not in INPUT_FORMATS:
            raise ValueError(f"PLEXITY_INPUT_FORMAT must be one of {', '.join(INPUT_FORMATS)}, got {input_format!r}")
        if extractor not in EXTRACTORS:
            raise ValueError(f"PLEXITY_EXTRACTOR must be one of {', '.join(EXTRACTORS)}, got {extractor!r}")
        if threads < 0:
            raise ValueError(f"PLEXITY_THREADS must be 0 or more, got {threads}")
        for setting, field in (("PLEXITY_INPUT_FIELD", input_field), ("PLEXITY_OUTPUT_FIELD", output_field)):
            if not field:  # (an empty name: every item passed on untouched, or a text under the key "")
                raise ValueError(f"{setting} is empty: the name of an item field")
        self.scorer = scorer
        self.stats = stats
        self.input_field = input_field
        self.input_format = input_format
        self.encoding_field = encoding_field or None
        self.extractor = extractor
        # in child processes stopped past the time limit (`plexity_plugins.extractors.sandbox`), one per thread
        self.extract = TimeLimitedExtractor(extractor, timeout=extract_timeout, processes=max(1, threads),
                                            memory_limit=extract_memory)
        say_once(self.extract.memory_note, lambda note: logger.warning("plexity: %s", note))
        self.max_document_bytes = max_document_bytes
        self.output_field = output_field
        self.stats_field = stats_field or None
        self._warned: set[str] = set()  # (`_warn_once`)
        self.annotate = annotate
        self.min_chars = min_chars
        self.policy = DocumentPolicy(scorer, annotate=annotate, min_chars=min_chars,
                                     min_kept_fraction=min_kept_fraction, other_languages=other_languages,
                                     names=SETTING_NAMES_IN_ERRORS)
        self.threads = threads
        self.dropped_file = dropped_file
        self.language_field = language_field or None
        self.doc_perplexity_field = doc_perplexity_field or None
        self.min_doc_perplexity = min_doc_perplexity
        self.max_doc_perplexity = max_doc_perplexity
        self._executor: ThreadPoolExecutor | None = None
        self._json_feeds: list[str] = []  # (`_json_feeds_with`)
        self._text_feeds: list[str] = []  # (CSV: `_json_feeds_with(..., text=True)`)
        self._dropped = DroppedLog(None)
        self._warned_classes: set[type] = set()
        self._resumed_from: str | None = None  # the JOBDIR of a paused crawl this one resumes (`_check_jobdir`)
        self._shutdown_trigger = None  # (`_on_forced_shutdown`)
        self._dropped_claim: str | None = None  # (`_claim_dropped_file`)
        self._items_seen = 0  # (as plexity/items_seen, which a DummyStatsCollector does not keep)
        self._held_back = HeldBack(None, 1)  # (the items waiting for the worker: `open_spider`)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        try:
            _unknown_settings(settings)
            if not _typed_setting(settings, "PLEXITY_ENABLED", bool, True):
                raise NotConfigured("PLEXITY_ENABLED is False")
            pipeline = cls._from_settings(crawler, settings)
            if settings.get("JOBDIR"):  # (a crawl resumed from it, or run again into it: its items were cleaned so)
                pipeline._check_jobdir(settings.get("JOBDIR"))
        except (ValueError, ModelError) as exc:  # a wrong PLEXITY_* setting, a missing model: said first, in one line
            # (Scrapy then prints the error's traceback, from deep inside its start-up, and exits 1)
            logger.critical(CANNOT_START, exc)
            if isinstance(exc, ModelError):
                raise
            raise PlexitySettingError(str(exc)) from None
        pipeline.crawler = crawler
        if pipeline.dropped_file:
            _claim_dropped_file(pipeline, crawler)
        pipeline._json_feeds = _json_feeds_with(settings, pipeline.input_field)
        pipeline._text_feeds = _json_feeds_with(settings, pipeline.input_field, text=True)
        fields = (pipeline.stats_field, pipeline.doc_perplexity_field, pipeline.input_field)
        if scrapy_xml := _scrapy_xml_feeds(settings, [field for field in fields if field]):
            logger.warning("plexity: the XML feed %s is written by Scrapy's XmlItemExporter, which writes a None "
                           "field (plexity_reason of a kept item) as the text None, and bytes as Python's b'...': "
                           "FEED_EXPORTERS = {'xml': %r} writes them as an empty element and as text (the add-on, "
                           "plexity_plugins.scrapy.PlexityAddon, sets it)", scrapy_xml[0], XML_EXPORTER_PATH)
        shorten_drop_logs(crawler.logformatter)
        return pipeline

    @classmethod
    def _from_settings(cls, crawler, settings):
        input_format = settings.get("PLEXITY_INPUT_FORMAT", "html")
        extractor = settings.get("PLEXITY_EXTRACTOR", DEFAULT_EXTRACTOR)
        if extractor not in EXTRACTORS:
            raise ValueError(f"PLEXITY_EXTRACTOR must be one of {', '.join(EXTRACTORS)}, got {extractor!r}")
        if settings.get("PLEXITY_METHOD") and settings.get("PLEXITY_METHOD") not in methods.METHODS:
            raise ValueError(f"PLEXITY_METHOD must be one of {', '.join(methods.METHODS)}, "
                             f"got {settings.get('PLEXITY_METHOD')!r}")
        extractor = settings.get("PLEXITY_EXTRACTOR", DEFAULT_EXTRACTOR)
        # As `plexity clean`: a main-content extractor's output is already the main content, so only
        # its edges are trimmed; raw tag text gets the regions method, plain text region.
        method = settings.get("PLEXITY_METHOD") or methods.method_for_extractor(
            extractor if input_format == "html" else None)
        scorer = make_scorer(
            _model_setting(settings.get("PLEXITY_MODEL")),
            threshold=_typed_setting(settings, "PLEXITY_THRESHOLD", float),
            method=method,
            language_check=_typed_setting(settings, "PLEXITY_LANGUAGE_CHECK", bool, True),
        )
        require_thresholds(scorer)  # (a model without one failed at its first item, mid-crawl)
        pipeline = cls(
            scorer, crawler.stats,
            input_field=_field_setting(settings, "PLEXITY_INPUT_FIELD", "html"),
            input_format=input_format,
            encoding_field=_field_setting(settings, "PLEXITY_ENCODING_FIELD", "encoding"),
            extractor=extractor,
            output_field=_field_setting(settings, "PLEXITY_OUTPUT_FIELD", "text"),
            stats_field=_field_setting(settings, "PLEXITY_STATS_FIELD", "plexity"),
            annotate=_typed_setting(settings, "PLEXITY_ANNOTATE", bool, False),
            min_chars=_typed_setting(settings, "PLEXITY_MIN_CHARS", int, DEFAULT_MIN_CHARS),
            min_kept_fraction=_typed_setting(settings, "PLEXITY_MIN_KEPT_FRACTION", float, 0.0),
            other_languages=_choice_setting(settings, "PLEXITY_OTHER_LANGUAGES", ("keep", "drop"), "keep"),
            threads=_typed_setting(settings, "PLEXITY_THREADS", int, 1),
            dropped_file=_dropped_file_setting(settings.get("PLEXITY_DROPPED_FILE"),
                                               getattr(getattr(crawler, "spidercls", None), "name", None)),
            extract_timeout=_typed_setting(settings, "PLEXITY_EXTRACT_TIMEOUT", float, DEFAULT_EXTRACT_TIMEOUT),
            extract_memory=_typed_setting(settings, "PLEXITY_EXTRACT_MEMORY", parse_memory),
            max_document_bytes=_typed_setting(settings, "PLEXITY_MAX_DOCUMENT_BYTES", parse_size, MAX_DOCUMENT_BYTES),
            language_field=_field_setting(settings, "PLEXITY_LANGUAGE_FIELD", None),
            doc_perplexity_field=_field_setting(settings, "PLEXITY_DOC_PERPLEXITY_FIELD", None),
            min_doc_perplexity=_typed_setting(settings, "PLEXITY_MIN_DOC_PERPLEXITY", float),
            max_doc_perplexity=_typed_setting(settings, "PLEXITY_MAX_DOC_PERPLEXITY", float),
        )
        low, high = pipeline.min_doc_perplexity, pipeline.max_doc_perplexity
        if low is not None and high is not None and low > high:  # (every item would be dropped)
            raise PlexitySettingError(f"PLEXITY_MIN_DOC_PERPLEXITY ({low:g}) is above PLEXITY_MAX_DOC_PERPLEXITY "
                                      f"({high:g}): every item would be dropped")
        return pipeline

    def settings(self) -> dict:
        """What this crawl's items are cleaned with, as a crawl resumed from its JOBDIR records and compares it
        (`plexity_plugins.cleaning.settings_record`): the model by its files' checksum, and every setting that
        decides an item's text or verdict."""
        return {**model_settings(self.scorer), "method": self.scorer.method,
                "threshold": threshold_setting(self.scorer), "extractor": self.extractor,
                **extractor_model(self.extractor), "input_format": self.input_format, "input_field": self.input_field,
                "output_field": self.output_field, "annotate": self.annotate, "min_chars": self.min_chars,
                "min_kept_fraction": self.policy.min_kept_fraction, "other_languages": self.policy.other_languages,
                "language_check": self.scorer.language_check, "max_document_bytes": self.max_document_bytes,
                "extract_timeout": self.extract.timeout, "extract_memory": self.extract.memory_limit,
                "min_doc_perplexity": self.min_doc_perplexity, "max_doc_perplexity": self.max_doc_perplexity}

    def _check_jobdir(self, jobdir: str) -> None:
        """Record this crawl's `settings` in its JOBDIR, or, where a crawl recorded other ones (a paused crawl resumed
        with other settings), stop the crawl before it starts, naming them: the items it cleaned before, in the feed
        already, and the pages it will not crawl again, would stand beside items cleaned otherwise."""
        self._resumed_from = jobdir if (Path(jobdir) / SETTINGS_FILE).is_file() else None  # (a crawl recorded there)
        if self._resumed_from is None and any((Path(jobdir) / name).exists() for name in SCRAPY_JOB_STATE):
            # (resumed, its feed's items would stand beside items of another version or none cleaned, and its
            # PLEXITY_DROPPED_FILE, not known to be this crawl's, would be written anew: the first part's rows lost)
            raise ValueError(f"JOBDIR {jobdir} holds a paused crawl with no record of how its items were cleaned "
                             f"({SETTINGS_FILE}): an older version of plexity_plugins, which recorded none, or a "
                             f"crawl without this pipeline crawled there; resume it with what crawled it, or give "
                             f"another JOBDIR (or delete {jobdir}) to crawl anew")
        changed = compare_or_record(jobdir, self.settings())
        if changed:
            raise ValueError(f"JOBDIR {jobdir} holds a crawl whose items were cleaned with other settings "
                             f"({'; '.join(changed)}): resume it with those settings, or give another JOBDIR "
                             f"(or delete {jobdir}) to crawl anew")

    # -- spider lifecycle ---------------------------------------------------------------

    def open_spider(self, spider=None) -> None:
        # Open the model now, once, not inside the first item; and run the extractor once, so
        # that a broken installation (a missing module) stops the crawl here, not item by item.
        self.scorer.open()
        if self.input_format == "html":
            self.extract("<html><body><p>plexity start-up check</p></body></html>")
        self.stats.set_value(STATS_PREFIX + "model", self.scorer.model_name)
        self.stats.set_value(STATS_PREFIX + "method", self.scorer.method)
        # (a language map without a threshold for all: each model's own, by language; a NaN stat is no JSON)
        threshold = threshold_setting(self.scorer)
        self.stats.set_value(STATS_PREFIX + ("thresholds" if isinstance(threshold, dict) else "threshold"), threshold)
        if self.threads:
            self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="plexity")
            crawler = getattr(self, "crawler", None)
            requests = crawler.settings.getint("CONCURRENT_REQUESTS", 16) if crawler is not None else 16
            self._held_back = HeldBack(self._engine(), max(1, requests) + self.threads, crawler)
            self._shutdown_trigger = _on_forced_shutdown(self._cancel_waiting_items)
        if self.dropped_file:
            self._keep_unfinished_dropped_file()
            try:
                # (a paused crawl resumed: its earlier part's rows stay, as its feed's items do; they were replaced)
                self._dropped = DroppedLog(self.dropped_file, locked=True, carry_over=self._resumed_from is not None)
            except OSError as exc:
                self._dropped_log_failed(exc)
            # (a forced shutdown, Ctrl-C twice, stops the reactor without close_spider: done at exit)
            atexit.register(self._stopped_without_closing)
        if self._resumed_from is not None:
            kept = (f"; PLEXITY_DROPPED_FILE {self.dropped_file} goes on after the {self._dropped.rows_carried_over} "
                    f"row(s) of its earlier part" if self._dropped.enabled else "")
            logger.info("plexity: resuming the crawl recorded in JOBDIR %s%s (the plexity/ stats, as Scrapy's own, "
                        "count this part of the crawl)", self._resumed_from, kept)
        # (as the datatrove step names its settings: "threshold nan" was said of a language map)
        logger.info("plexity: model %s, method %s, %s, extractor %s, %d worker thread(s)",
                    self.scorer.model_name, self.scorer.method, threshold_text(self.scorer), self.extractor,
                    self.threads)

    def _keep_unfinished_dropped_file(self) -> None:
        """An earlier crawl killed outright (kill -9, the out-of-memory killer) left its rows in
        ``.NAME.part``, which this crawl's file would replace unsaid: kept aside, and said."""
        from ..io.atomic_files import keep_unfinished, part_path

        try:
            kept = keep_unfinished(self.dropped_file)
        except OSError as exc:  # (not ours to move: this crawl's file replaces it, said as much)
            logger.warning("plexity: %s, left by a crawl that did not end, could not be kept (%s): this crawl "
                           "replaces it", part_path(self.dropped_file), path_error_message(exc))
            return
        if kept is not None:
            logger.warning("plexity: PLEXITY_DROPPED_FILE's rows of an earlier crawl that did not end (killed "
                           "outright: its spider never closed) were left in %s: kept as %s (its last row may be "
                           "cut short); this crawl writes %s anew", part_path(self.dropped_file).name,
                           kept.absolute(), self.dropped_file)

    def close_spider(self, spider=None) -> None:
        atexit.unregister(self._stopped_without_closing)
        if self._dropped_claim is not None and _CLAIMED_DROPPED_FILES.get(self._dropped_claim) is self:
            del _CLAIMED_DROPPED_FILES[self._dropped_claim]  # (the next crawl of this process may write it)
        if self._shutdown_trigger is not None:
            from twisted.internet import reactor

            reactor.removeSystemEventTrigger(self._shutdown_trigger)
            self._shutdown_trigger = None
        self._held_back.release()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        self.extract.close()
        written = self._dropped.enabled
        try:
            self._dropped.close()  # named only now, whole (a full disk raises here)
        except OSError as exc:
            self._dropped_log_failed(exc)
        else:
            if written:  # (where it went: a relative path is the folder the crawl ran in)
                logger.info("plexity: dropped sentences and items written to %s", Path(self.dropped_file).absolute())

    def _cancel_waiting_items(self) -> None:
        """The reactor stops while the spider is open (Scrapy's forced shutdown, Ctrl-C twice; a script's own
        ``reactor.stop()``): the items waiting for the worker thread are never cleaned, the one it cleans ends.  (The
        process waited at its exit for the worker to clean every item queued, up to CONCURRENT_ITEMS of them, 100:
        a forced shutdown that took minutes.)"""
        self._shutdown_trigger = None
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def _stopped_without_closing(self) -> None:
        """At the process's exit, the spider never closed (Scrapy's forced shutdown): PLEXITY_DROPPED_FILE gets its
        name with the rows written until then, as Scrapy's feed files keep theirs with the items exported until
        then (both end early); said, with where the rows are when the file could not be named."""
        if not self._items_seen:  # (`scrapy shell`, which never closes its spider: a file of no rows replaced the
            self._dropped.close(complete=False)  # last crawl's; an earlier file is left as it is)
            return
        path = self._dropped.keep_unfinished()
        if path is not None:
            waiting = self._held_back.waiting
            never = f"; {waiting} of them, waiting for the worker thread, were never cleaned" if waiting else ""
            logger.warning("plexity: the crawl stopped without closing the spider (a forced shutdown): the dropped "
                           "sentences and items of the %d item(s) seen until then are in %s, which ends there%s",
                           self.stats.get_value(STATS_PREFIX + "items_seen", 0), path.absolute(), never)

    # -- items ------------------------------------------------------------------------

    def _warn_once(self, key: str, message: str, *args) -> None:
        """A warning said for the first item it is about only (the stats count them all)."""
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(message, *args)

    async def process_item(self, item: Any, spider=None) -> Any:
        self._inc("items_seen")
        self._items_seen += 1
        if not ItemAdapter.is_item(item):  # not a dict, Item, dataclass, attrs or pydantic object
            # (Scrapy's own FilesPipeline and ImagesPipeline fail on one, "No adapter found", and so does the
            # feed exporter: passed on, it was lost later with a traceback, its page never cleaned)
            source, what = _not_an_item(item)
            self._drop(source, "not_an_item", f"the spider yielded {what}")
        adapter = ItemAdapter(item)
        value = _one(adapter.get(self.input_field))
        if isinstance(value, (list, tuple)) and all(isinstance(part, str) for part in value):
            value = "\n".join(value)  # (the page's parts, e.g. response.css("p").getall(): as its lines)
        if value is None:
            self._inc("items_without_input")
            # (said once: a misnamed field, PLEXITY_INPUT_FIELD, passes every item on uncleaned)
            self._warn_once("without_input", "plexity: an item without %r (PLEXITY_INPUT_FIELD) passed on "
                            "uncleaned (said once; counted in plexity/items_without_input)", self.input_field)
            return item
        source = _item_source(_one(adapter.get("url")), item)
        if isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        if not isinstance(value, (str, bytes)):
            held = (f"a {type(value).__name__} of {len(value)} values" if isinstance(value, (list, tuple))
                    else type(value).__name__)
            self._drop(source, "input_not_text",
                       f"field {self.input_field!r} holds {held}, not str or bytes{_what_to_give(value)}")
        kind = binary_kind(value[:4096]) if isinstance(value, bytes) else text_binary_kind(value)
        if kind is not None:  # a PDF, an image, an archive (a gzip file downloaded as is) ...: never text
            self._drop(source, "input_not_text", f"field {self.input_field!r} holds {kind}, not text")
        if len(value) > self.max_document_bytes:  # (characters of a str: at least as many bytes)
            self._drop(source, TOO_LARGE, f"{len(value):,} {'bytes' if isinstance(value, bytes) else 'characters'}, "
                                          f"PLEXITY_MAX_DOCUMENT_BYTES is {self.max_document_bytes:,}")
        missing = self._missing_field(item, self.output_field, "PLEXITY_OUTPUT_FIELD")
        if missing:  # (a configuration error, the same for every item of the class: the crawl is closed, as for a
            if "no_output_field" not in self._warned:  # broken installation, where it dropped item after item)
                self._warned.add("no_output_field")
                self.stats.set_value(STATS_PREFIX + "no_output_field", missing)
                self._close_crawl(f"{source}: {missing} (every such item would be dropped)", "plexity_no_output_field")
            self._drop(source, "no_output_field", missing)
        if not isinstance(item, (dict, Item)):  # (a frozen dataclass or attrs class: found before the work)
            self._write(adapter, self.output_field, adapter.get(self.output_field), source)  # (its own value)
        if self.input_format == "text" and looks_like_html(value):  # (its markup would be cleaned as text)
            self._inc("items_looks_like_html")
            self._warn_once("looks_like_html", "plexity: %s: %r (PLEXITY_INPUT_FIELD) holds an HTML page, and "
                            "PLEXITY_INPUT_FORMAT is 'text': it is cleaned as text, markup and all; set "
                            "PLEXITY_INPUT_FORMAT = 'html' to extract its text first (said once; counted in "
                            "plexity/items_looks_like_html)", source, self.input_field)
        elif self.extractor == "none" and looks_like_html(value):  # (the same: the text given is the page)
            self._inc("items_looks_like_html")
            self._warn_once("looks_like_html", "plexity: %s: %r (PLEXITY_INPUT_FIELD) holds an HTML page, and "
                            "PLEXITY_EXTRACTOR is 'none': it is cleaned as text, markup and all (<p>, <a href=...> in "
                            "the item's text); choose an extractor, PLEXITY_EXTRACTOR = 'learned' (the default), to "
                            "extract its text first (said once; counted in plexity/items_looks_like_html)",
                            source, self.input_field)
        elif self.input_format == "html" and self.extractor != "none" and not has_markup(value) and value.strip():
            self._inc("items_no_markup")  # (the extractor reads little or nothing of it)
            self._warn_once("no_markup", "plexity: %s: %r (PLEXITY_INPUT_FIELD) holds no HTML markup, and "
                            "PLEXITY_INPUT_FORMAT is 'html': the extractor finds little or nothing of it; if the "
                            "spider yields text, set PLEXITY_INPUT_FORMAT = 'text' (said once; counted in "
                            "plexity/items_no_markup)", source, self.input_field)

        content_type = self._content_type(adapter, source) if isinstance(value, bytes) else None
        if isinstance(value, bytes) and self._json_feeds:  # (the feed fails on it: the item is in no feed)
            fields = [field for field in ("url", self.output_field, self.stats_field) if field]
            self._warn_once("bytes_in_json_feed", "plexity: %r (PLEXITY_INPUT_FIELD) holds bytes, which the JSON "
                            "feed %s cannot write (Scrapy's 'Object of type bytes is not JSON serializable', the "
                            "item left out): leave the field out, FEED_EXPORT_FIELDS = %r (said once)",
                            self.input_field, self._json_feeds[0], fields)
        elif isinstance(value, bytes) and self._text_feeds and not _is_utf8(value):
            # (a CSV feed writes UTF-8 bytes as text, and fails on others: the item is left out of that feed and
            # of the feeds after it, a traceback each; an XML feed writes them as text: PlexityXmlItemExporter)
            fields = [field for field in ("url", self.output_field, self.stats_field) if field]
            self._warn_once("bytes_in_text_feed", "plexity: %s: %r (PLEXITY_INPUT_FIELD) holds bytes that are not "
                            "UTF-8, which the feed %s cannot write (Scrapy's UnicodeDecodeError: the item is left out "
                            "of it and of the feeds after it): leave the field out, FEED_EXPORT_FIELDS = %r (said "
                            "once)", source, self.input_field, self._text_feeds[0], fields)
        # (until cleaned: a forced shutdown leaves them waiting, `_cancel_waiting_items`; too many pause the crawl)
        self._held_back.enter()
        try:
            language = _one(adapter.get(self.language_field)) if self.language_field else None
            outcome = await self._in_worker(self._clean, value, language if isinstance(language, str) else None,
                                            content_type)
        except ENVIRONMENT_ERRORS as exc:
            self._held_back.leave()
            self._stop_crawl(exc)
            raise
        except Exception:  # (none expected; counted on, it would hold the crawl back for good)
            self._held_back.leave()
            raise
        self._held_back.leave()  # (a forced shutdown's cancelled wait stays counted: never cleaned)

        self._inc("clean_seconds", outcome.seconds)
        verdict = outcome.verdict
        if verdict is None:
            self._drop(source, outcome.reason, outcome.detail)
        self._count(verdict, source)
        if not verdict.kept:
            self._drop(source, verdict.reason, self.policy.explain(verdict, SETTING_NAMES))
        self._check_doc_perplexity(verdict.result.document_perplexity if verdict.result else None, source)

        self._write(adapter, self.output_field, verdict.text, source)
        if self.stats_field and not self._missing_field(item, self.stats_field, "PLEXITY_STATS_FIELD", warn=True):
            fields = PlexityFields(policy.json_numbers(policy.metadata(verdict, self.scorer)))
            self._write(adapter, self.stats_field, fields, source)
        if self.doc_perplexity_field and not self._missing_field(item, self.doc_perplexity_field,
                                                                "PLEXITY_DOC_PERPLEXITY_FIELD", warn=True):
            perplexity = verdict.result.document_perplexity if verdict.result else None
            self._write(adapter, self.doc_perplexity_field, perplexity, source)
        if verdict.status == policy.PASSED_THROUGH:
            passthrough = verdict.result.passthrough
            self._inc("items_passthrough")
            self._inc(f"items_passthrough/{passthrough}")
            logger.debug("plexity: %s passed through unfiltered (%s)", source, passthrough)
        else:
            self._inc("items_cleaned")
        return item

    def _write(self, adapter: ItemAdapter, field: str, value: Any, source: str) -> None:
        """`adapter[field] = value`; an item that refuses it (a frozen dataclass or attrs class, a model whose
        validation rejects the value) is dropped as ``item_not_writable``, not lost with a traceback."""
        try:
            adapter[field] = value
        except (AttributeError, TypeError, ValueError) as exc:  # (FrozenInstanceError is an AttributeError)
            hint = ": an item class the pipeline writes to cannot be frozen" if isinstance(exc, AttributeError) else ""
            self._drop(source, ITEM_NOT_WRITABLE, f"{type(adapter.item).__name__}'s field {field!r} cannot be set "
                                                  f"({type(exc).__name__}: {exc}){hint}")

    def _check_doc_perplexity(self, perplexity: float | None, source: str) -> None:
        if perplexity is None:
            return
        if self.min_doc_perplexity is not None and perplexity < self.min_doc_perplexity:
            self._drop(source, "doc_perplexity_below_min",
                       f"document perplexity {perplexity:.1f} < PLEXITY_MIN_DOC_PERPLEXITY {self.min_doc_perplexity}")
        if self.max_doc_perplexity is not None and perplexity > self.max_doc_perplexity:
            self._drop(source, "doc_perplexity_above_max",
                       f"document perplexity {perplexity:.1f} > PLEXITY_MAX_DOC_PERPLEXITY {self.max_doc_perplexity}")

    def _content_type(self, adapter: ItemAdapter, source: str) -> str | None:
        """The response's Content-Type (or charset) from PLEXITY_ENCODING_FIELD, as `decode_html` reads the
        HTTP header's; None when the item has none (its bytes are then decoded by BOM, <meta charset>, UTF-8)."""
        if not self.encoding_field or self.input_format != "html":
            return None
        try:
            return item_content_type(adapter, self.encoding_field)
        except TypeError:
            declared = _one(adapter.get(self.encoding_field))
            self._warn_once("encoding_not_text", "plexity: %s: %r (PLEXITY_ENCODING_FIELD) holds %s, not a "
                            "Content-Type or charset: the page's bytes are decoded without it (said once)",
                            source, self.encoding_field, type(declared).__name__)
            return None

    def _clean(self, value: str | bytes, language: str | None = None, content_type: str | None = None) -> _Outcome:
        """Extraction and the policy's verdict: the CPU work, run in a worker thread; `content_type`: the
        response's, for a page given as bytes."""
        started = time.perf_counter()
        outcome = _Outcome()
        text: str | bytes = value
        decode_replaced = 0  # U+FFFD put in for undecodable bytes, or for a str's lone surrogates
        if self.input_format == "html":
            # bytes: BOM, then the response's charset (PLEXITY_ENCODING_FIELD), then <meta charset>, else the bytes
            html, decode_replaced = html_text_counted(value, content_type)
            try:
                text = self.extract(html)
            except ENVIRONMENT_ERRORS:
                raise  # a broken installation is not a bad page: it propagates (no DropItem)
            except Exception as exc:  # ExtractionError, or whatever a third-party extractor raises on odd HTML
                detail = str(exc) if isinstance(exc, ExtractionError) else f"{type(exc).__name__}: {exc}"
                memory = isinstance(exc, ExtractionMemoryLimit)
                outcome.reason, outcome.detail = MEMORY_LIMIT if memory else policy.EXTRACTION_FAILED, detail
                outcome.seconds = time.perf_counter() - started
                return outcome
        outcome.verdict = self.policy.judge(text, input_empty=not value.strip(), extra_replaced=decode_replaced,
                                            language=language)
        outcome.seconds = time.perf_counter() - started
        return outcome

    async def _in_worker(self, function, *args):
        """`function(*args)` in the worker thread, awaited without blocking the reactor."""
        if self._executor is None:
            return function(*args)
        future = self._executor.submit(function, *args)
        if _asyncio_available():
            return await asyncio.wrap_future(future)
        return await _deferred_from_future(future)  # a non-asyncio Twisted reactor

    # -- bookkeeping -----------------------------------------------------------------------

    def _inc(self, key: str, count: float = 1) -> None:
        self.stats.inc_value(STATS_PREFIX + key, count)

    def _drop(self, source: str, reason: str, detail: str) -> NoReturn:
        self._inc("items_dropped")
        self._inc(f"items_dropped/{reason}")
        self._log_dropped(self._dropped.document, source, reason, detail)
        # (logged by Scrapy as this message and the URL, not the item: `shorten_drop_logs`)
        # (Scrapy logs the message: its URL and detail are the crawl's characters, `printable`)
        shown = (source if len(source) <= MAX_SOURCE_CHARS
                 else f"{source[:MAX_SOURCE_CHARS]}... ({len(source):,} characters)")
        raise PlexityDropItem(printable(f"plexity: {reason}: {detail[:500]} ({shown})"), shown, reason)

    def _count(self, verdict: Verdict, source: str) -> None:
        for name, value in policy.counts(verdict).items():
            if value or name != "replaced_chars":
                self._inc(name, value)
        if verdict.unknown_label is not None:
            self._warn_once("unknown_label", "plexity: %s: %s", source, policy.unknown_label_note(
                verdict, f"its {self.language_field!r} (PLEXITY_LANGUAGE_FIELD)").replace(
                "counted in ", "counted in plexity/"))
        if verdict.empty:  # (dropped or not: as plexity clean's empty_reasons)
            self._inc("items_empty")
            self._inc(f"items_empty/{verdict.empty}")
        self._log_dropped(self._dropped.sentences, source, verdict.result)

    def _log_dropped(self, write, *args) -> None:
        try:
            write(*args)
        except OSError as exc:
            self._dropped_log_failed(exc)
        if self._dropped.given_up:
            self.stats.set_value(STATS_PREFIX + "dropped_rows_not_written", self._dropped.rows_not_written)

    def _dropped_log_failed(self, exc: OSError) -> None:
        """PLEXITY_DROPPED_FILE could not be written: a full disk closes the crawl (reason
        ``plexity_disk_full``) with one line; the file is not left under its name, incomplete.  Another
        error (its folder removed, made read-only, a file size limit) is said once, in one line, and
        the crawl goes on cleaning items without the file: its rows are counted in the stats
        (``plexity/dropped_rows_not_written``; ``plexity/dropped_file_error`` says why), where every
        item failed with a traceback before."""
        if not is_disk_full(exc):
            self._dropped.give_up()
            why = (exc.strerror or str(exc)).lower()
            message = (f"PLEXITY_DROPPED_FILE {self.dropped_file} cannot be written ({why}): the crawl goes on "
                       f"without it, its dropped rows counted in plexity/dropped_rows_not_written")
            self.stats.set_value(STATS_PREFIX + "dropped_file_error", message)
            self.stats.set_value(STATS_PREFIX + "dropped_rows_not_written", self._dropped.rows_not_written)
            logger.error("plexity: %s", message)
            return
        self._dropped.close(complete=False)
        self._dropped = DroppedLog(None)
        message = f"{disk_full_message(exc, self.dropped_file)}; {self.dropped_file} was not written"
        self.stats.set_value(STATS_PREFIX + "disk_full", message)
        self._close_crawl(message, "plexity_disk_full")

    def _stop_crawl(self, exc: BaseException) -> None:
        """A broken installation: every further item would fail the same way, so the crawl
        is closed (reason ``plexity_environment_error``) instead of losing item after item."""
        message = environment_message(exc)
        self.stats.set_value(STATS_PREFIX + "environment_error", message)
        self._close_crawl(message, "plexity_environment_error")

    def _close_crawl(self, message: str, reason: str) -> None:
        logger.error("plexity: %s: closing the spider", message)
        engine = self._engine()
        if engine is None:
            return
        if hasattr(engine, "close_spider_async"):  # Scrapy >= 2.14
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=reason))
        else:
            engine.close_spider(self.crawler.spider, reason)

    def _engine(self):
        """The crawl's engine; None without a crawl running (a pipeline used on its own)."""
        try:
            return self.crawler.engine
        except (AttributeError, RuntimeError):  # (a recent Scrapy raises RuntimeError before the crawl starts)
            return None

    def _missing_field(self, item: Any, field: str, setting: str, warn: bool = False) -> str | None:
        """Why `item` cannot hold `field`, the value of `setting` (a scrapy.Item, dataclass or attrs class that
        does not declare it), or None if it can."""
        names = ItemAdapter.get_field_names_from_class(type(item))
        if names is None or field in names:
            return None
        none = "" if setting == "PLEXITY_OUTPUT_FIELD" else f", or set {setting} = \"\" for none"
        declared = f" ({field} = scrapy.Field())" if isinstance(item, Item) else ""
        message = (f"{type(item).__name__} has no field {field!r}: declare it in the item class{declared}, "
                   f"or point {setting} to a field it has{none}")
        if warn and type(item) not in self._warned_classes:
            self._warned_classes.add(type(item))
            logger.warning("plexity: %s (per-item counts not stored)", message)
        return message


# PLEXITY_DROPPED_FILE of each crawl of this process from its start to its spider's close (`_claim_dropped_file`)
_CLAIMED_DROPPED_FILES: "weakref.WeakValueDictionary[str, PerplexityFilterPipeline]" = weakref.WeakValueDictionary()


def _claim_dropped_file(pipeline: PerplexityFilterPipeline, crawler) -> None:
    """Two crawls of one process (``CrawlerProcess`` running two spiders) given the same PLEXITY_DROPPED_FILE: the
    second does not start, as a second process's crawl does not (`_dropped_file_setting`).  Both were made before
    either opened its file, so the second started, found the file taken, and went on without it, its rows lost
    (counted) and said of "another process"."""
    path = os.path.realpath(pipeline.dropped_file)
    other = _CLAIMED_DROPPED_FILES.get(path)
    if other is not None and other is not pipeline:
        spider = getattr(getattr(other, "crawler", None), "spidercls", None)
        named = f" (spider {spider.name!r})" if getattr(spider, "name", None) else ""
        message = (f"PLEXITY_DROPPED_FILE is {pipeline.dropped_file!r}, which another crawl of this process "
                   f"writes{named}: give each crawl its own file, e.g. 'dropped-%(name)s.jsonl'")
        logger.critical(CANNOT_START, message)
        raise PlexitySettingError(message)
    _CLAIMED_DROPPED_FILES[path] = pipeline
    pipeline._dropped_claim = path
