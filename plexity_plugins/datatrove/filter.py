"""`PerplexitySentenceFilter`: the shared scorer as a datatrove filter step."""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from os import PathLike

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter
from datatrove.utils.logging import logger

from ..cleaning import policy
from ..errors import HtmlPagesNotText
from ..io.read_limits import MAX_DOCUMENT_BYTES, reading_limits
from ..io.payload_sniffing import binary_kind, looks_like_html
from ..cleaning.policy import DEFAULT_MIN_CHARS, DocumentPolicy
from ..scoring.multilingual import LanguageModels, make_scorer, require_thresholds
from ..scoring.scorer import PerplexityScorer
from ..scoring.methods import method_for_page_text
from .readers import decoding_replaced, is_page_text
from ..cleaning.settings_record import threshold_setting, threshold_text
from .run_settings import model_settings, step_settings, with_settings
from ..text.sentences import DEFAULT_MAX_CHARS
from ..runtime.keywords import suggests_keywords

# One scorer per worker process and model settings: the KenLM model is opened (memory-mapped)
# once per process, although executors hand every task a fresh copy of the step.
_PROCESS_SCORERS: dict[tuple, PerplexityScorer] = {}

OTHER_LANGUAGE_ACTIONS = policy.OTHER_LANGUAGE_ACTIONS
INPUT_NOT_TEXT = "input_not_text"  # why a document whose text is no str or bytes is dropped (as Scrapy's)
TOO_LARGE = "too_large"  # why a document whose text is over max_document_bytes is dropped (as Scrapy's)

LOOKS_LIKE_HTML = "looks_like_html"  # the counter of texts that are HTML pages (no extractor before the filter)
# A task whose first texts are all HTML pages stops: the pipeline has no extractor before the filter.
# (Later or scattered pages are counted: one page in a long task must not stop it.)
FIRST_TEXTS_ALL_HTML = 3


def not_text(text) -> str | None:
    """Why a document's `text` is no text ("its text is a list, not str or bytes", "its text is
    PDF, not text": bytes, or characters, that start as a PDF, an image, an archive, or rich in
    NUL and control codes, as `plexity clean` judges a .txt file), else None."""
    if text is None:
        return None
    if not isinstance(text, (str, bytes)):
        return f"its text is a {type(text).__name__}, not str or bytes"
    head = text[:4096] if isinstance(text, bytes) else text[:1024].encode("utf-8", "replace")
    kind = binary_kind(head)
    return f"its text is {kind}, not text" if kind else None


def excluded_as_text(doc: Document) -> None:
    """Make the text of a dropped document a str, as the exclusion writer gets it (a ``str`` is left as it is):
    bytes decoded as UTF-8 (U+FFFD for what is not), None as "" (no text: it was written as the text "null"),
    anything else (a list of paragraphs) as its JSON.
    datatrove's writers take a str: JsonlWriter stopped the task on bytes ("Type is not JSON serializable"),
    ParquetWriter on a list or bytes among str texts ("Expected bytes, got a 'list' object")."""
    text = doc.text
    if text is None:
        doc.text = ""
    elif isinstance(text, bytes):
        doc.text = text.decode("utf-8", "replace")
    elif not isinstance(text, str):
        doc.text = json.dumps(text, ensure_ascii=False, default=str)


def exclusion_writer_checked(writer) -> DiskWriter | None:
    """A filter's `exclusion_writer`: None or a datatrove writer; anything else (a folder's name,
    ``"out/excluded"``) is a ValueError when the step is built, not a TypeError at the first
    dropped document, after the run has started."""
    if writer is not None and not isinstance(writer, DiskWriter):
        raise ValueError(f"exclusion_writer is {writer!r}: a datatrove writer that receives the dropped "
                         f"documents, e.g. JsonlWriter(\"out/excluded\"), or None")
    return writer


# The plexity_* fields a later perplexity step of the pipeline replaced, oldest first (`write_fields`).
EARLIER = "plexity_earlier"


def write_fields(doc: Document, fields: dict, step: str) -> None:
    """Write a perplexity step's `fields` into the document's metadata: the later step's fields win
    (they describe the text as it now is), and the values an earlier step left there under the same
    names (a second filter of the pipeline; a filter of the run that wrote the document) are kept, not
    lost: appended to ``metadata["plexity_earlier"]`` as one dict of those fields, with
    ``replaced_by``, the name of the step that replaced them."""
    meta = doc.metadata
    replaced = {key: meta[key] for key in fields if key in meta}
    if replaced:
        meta[EARLIER] = [*(meta.get(EARLIER) or []), {"replaced_by": step, **replaced}]
    meta.update(fields)


def declared_language(doc: Document) -> str | None:
    """The language an upstream step set (``metadata["language"]``, datatrove's LanguageFilter),
    if it is a label at all: a number or a list there is ignored (the text's language is then
    identified) instead of stopping the task.  Its script in ``metadata["language_script"]`` (FineWeb-2's rows:
    "hin" and "Latn") is part of it, as in GlotLID's "hin_Latn" (`plexity_plugins.text.language.language_code`)."""
    language, script = doc.metadata.get("language"), doc.metadata.get("language_script")
    if not isinstance(language, str):
        return None
    if isinstance(script, str) and script.strip() and not any(sep in language for sep in "_-"):
        return f"{language.strip()}_{script.strip()}"
    return language


def too_large_warning(doc: Document, max_document_bytes: int) -> None:
    """The one warning a task gives of texts over `max_document_bytes`, naming the first."""
    unit = "bytes" if isinstance(doc.text, bytes) else "characters"
    logger.warning(f"document {doc.id!r}: its text holds {len(doc.text):,} {unit}, over max_document_bytes "
                   f"({max_document_bytes:,}): dropped as {TOO_LARGE} (said once; counted in dropped_{TOO_LARGE})")


@suggests_keywords
class PerplexitySentenceFilter(BaseFilter):
    """Removes high-perplexity sentences (boilerplate) from each document's text.

    The document's text is split into sentences, each is scored with a KenLM model, and the
    sentences above the threshold are removed (`PerplexityScorer.clean`).  A document is
    dropped, with a reason, when too little of it remains.  The decision is the shared
    document policy (`plexity_plugins.cleaning.policy`): ``plexity clean`` and the Scrapy pipeline
    give the same verdict, reason and metadata for the same text and settings.

    Args:
        model: model name, path, or None for the embedded default model (`plexity models`); or a
            language -> model map, ``{"en": "en-default", "de": "ccnet-de"}``: each document is
            cleaned with its language's model, one without a model is passed through
            (``passthrough_language:xx``; see `plexity_plugins.scoring.multilingual`).
        method: how sentences are chosen (`plexity_plugins.scoring.methods`): "trim" (default; for text
            from a main-content extractor such as datatrove's Trafilatura, the best variant on
            our benchmark), "regions" (after `HtmlTagsExtractor`), "region" (for raw text) or
            "sentences" (the paper's per-sentence rule).
        page_text_method: the method for a WET record's text (a page's every visible line, which
            no extractor has cut down: `readers.is_page_text`); None = "regions", the method for
            `HtmlTagsExtractor`'s text, of which it is the kind.
        threshold: perplexity above which text counts as boilerplate; None = the model's
            calibrated default for the method.
        annotate: remove nothing; wrap each would-be-removed sentence in
            ``<ppl score="...">``; documents are then never dropped (the would-be reason is in
            the metadata as ``plexity_would_drop``).
        max_sentence_chars: longer unpunctuated runs are cut into pieces of this size.
        allow_tokenizer_mismatch: accept a model built with another tokenizer version.
        min_chars: drop the document ("too_short"; "empty_input" when its text is empty) when
            fewer characters of sentences remain (default 50, as the Scrapy pipeline).
        min_kept_fraction: drop the document ("too_little_kept") when the kept share of its
            sentence characters is below this (0.0 to 1.0).
        language_check: detect documents in another language than the model's (passed
            through by the scorer instead of being gutted).  A language an upstream step set in
            ``doc.metadata["language"]`` (datatrove's ``LanguageFilter``) is used as is.
        other_languages: what to do with those: "keep" them unchanged (counted as
            ``passthrough``) or "drop" them (reason "other_language").
        record_dropped_sentences: store the removed sentences, with their perplexity and
            offsets, in ``metadata["plexity_dropped_sentences"]``, for the writer to save.
        exclusion_writer: a datatrove writer that receives every dropped document, with
            ``metadata["filter_reason"]`` and every ``plexity_*`` field; a text that is not a str as one
            (`excluded_as_text`).
        allow_html_pages: clean texts that are HTML pages as text, markup and all, instead of
            stopping a task whose first texts are all such pages (a pipeline without an extractor).
        batch_size: as in datatrove's BaseFilter (documents are scored one by one anyway).
        max_document_bytes: a longer text (characters of a str, bytes of bytes) is dropped as ``too_large``
            before any work, with one warning per task; bytes or a size ("50MB"); default 50 MB, as the Scrapy
            pipeline's ``PLEXITY_MAX_DOCUMENT_BYTES`` and ``plexity clean --max-document-bytes``.  (A text of 300 MB
            from another reader took 1.86 GB and 60 s.)

    Metadata added to every document (`plexity_plugins.cleaning.policy.metadata`): ``plexity_verdict``
    (kept, dropped, passed_through), ``plexity_reason``, ``plexity_would_drop``,
    ``plexity_model``, ``plexity_method``, ``plexity_threshold``, ``plexity_sentences``,
    ``plexity_sentences_kept``, ``plexity_sentences_dropped``, ``plexity_chars_before``,
    ``plexity_chars_after``, ``plexity_chars_kept``, ``plexity_chars_dropped``,
    ``plexity_ppl_mean``, ``plexity_ppl_median`` (NaN without sentences),
    ``plexity_doc_perplexity`` (the text's document perplexity before cleaning,
    `PerplexityScorer.document_perplexity`; NaN when passed through),
    ``plexity_replaced_chars`` (characters replaced by U+FFFD: undecodable bytes, `WarcHtmlReader`'s
    decoding included, NULs, lone surrogates) and ``plexity_passthrough`` (e.g. "language:de").  Every document
    gets every field, never None: a text field without a value is "", a number field NaN (which
    datatrove's JsonlWriter writes as null), so that datatrove's ParquetWriter, which takes its
    schema from the first document, writes them all (`plexity_plugins.cleaning.policy.typed_metadata`).
    A field an earlier perplexity step already wrote (a second filter in the pipeline) is replaced, and its
    earlier value kept in ``plexity_earlier`` (`write_fields`).

    A document whose text is not str or bytes (a dataset row holding a number or a list there),
    or whose text starts as a PDF, an image, an archive or bytes rich in NUL and control codes
    (`not_text`), is dropped as ``input_not_text``, with one warning per task.
    A text that is an HTML page (`looks_like_html`) is counted as ``looks_like_html``.  When the
    first three texts of a task are all HTML pages, the pipeline has no extractor step before the
    filter: the task stops with `HtmlPagesNotText`, naming the extractor steps, not marked complete, none of those
    texts passed on (held until decided: `_held_until_decided`) (``allow_html_pages=True``: clean such pages as the
    text they are, markup and all).  A page among text, or later in the task, is cleaned as text, with one warning
    per task.

    Counters (``stat_update``): besides BaseFilter's ``total``, ``forwarded``, ``dropped`` and
    ``dropped_<reason>`` (``input_not_text`` and ``too_large`` among the reasons): ``sentences_kept``,
    ``sentences_dropped``,
    ``chars_kept``, ``chars_dropped``, ``replaced_chars``, ``passthrough``, ``passthrough_<reason>``,
    ``empty`` and ``empty_<reason>`` (why a cleaned text is empty: `policy.EMPTY_REASONS`),
    ``looks_like_html`` and ``language_label_unknown`` (a metadata ``language`` that names no language, read as none
    and said once: `plexity_plugins.text.language.read_language_label`).
    """

    name = "🧮 Perplexity sentences"
    # (of the class: a step pickled by an earlier version, a Slurm job's executor.pik, a Ray task's copy, has them too)
    max_document_bytes = MAX_DOCUMENT_BYTES
    _warned_too_large = False

    def __init__(
        self,
        model: str | PathLike | Mapping[str, str | PathLike | None] | None = None,
        threshold: float | None = None,
        method: str = "trim",
        page_text_method: str | None = None,
        annotate: bool = False,
        max_sentence_chars: int = DEFAULT_MAX_CHARS,
        allow_tokenizer_mismatch: bool = False,
        min_chars: int = DEFAULT_MIN_CHARS,
        min_kept_fraction: float = 0.0,
        language_check: bool = True,
        other_languages: str = "keep",
        record_dropped_sentences: bool = False,
        exclusion_writer: DiskWriter | None = None,
        batch_size: int = 1,
        allow_html_pages: bool = False,
        max_document_bytes: int | str = MAX_DOCUMENT_BYTES,
    ):
        # (datatrove's own check waits for the run; a numpy integer, a sweep's, is taken as Python's)
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size is {batch_size!r}: 1 or more")
        batch_size = int(batch_size)
        for name, value in (("record_dropped_sentences", record_dropped_sentences),
                            ("allow_html_pages", allow_html_pages)):
            if not isinstance(value, bool):  # (as the scorer's and the policy's own switches)
                raise ValueError(f"{name} must be True or False, got {value!r}")
        super().__init__(exclusion_writer=exclusion_writer_checked(exclusion_writer), batch_size=batch_size)
        kwargs = {"threshold": threshold, "method": method, "max_sentence_chars": max_sentence_chars,
                  "allow_tokenizer_mismatch": allow_tokenizer_mismatch, "language_check": language_check}
        # Resolved here, so that a wrong model name fails at pipeline construction, not in a
        # worker; KenLM itself is opened lazily (see `scorer`).
        self._scorer = make_scorer(model, **kwargs)
        self.page_text_method = page_text_method or method_for_page_text()
        self._page_text_scorer = (self._scorer if self.page_text_method == method
                                  else make_scorer(model, **{**kwargs, "method": self.page_text_method}))
        require_thresholds(self._scorer)  # (else the first document's worker fails, mid-run)
        self.policy = DocumentPolicy(self._scorer, annotate=annotate, min_chars=min_chars,
                                     min_kept_fraction=min_kept_fraction, other_languages=other_languages)
        self.model_name = self._scorer.model_name
        self.threshold = self._scorer.threshold
        self.method = method
        paths = (self._scorer.info.path if isinstance(self._scorer, PerplexityScorer)
                 else tuple((lang, s.info.path) for lang, s in self._scorer.scorers.items()))
        self._scorer_key, self._page_text_key = (
            (paths, threshold, m, max_sentence_chars, allow_tokenizer_mismatch, language_check)
            for m in (method, self.page_text_method))
        self.annotate = annotate
        self.min_chars = self.policy.min_chars
        self.min_kept_fraction = self.policy.min_kept_fraction
        self.other_languages = other_languages
        self.record_dropped_sentences = record_dropped_sentences
        self.max_sentence_chars = int(max_sentence_chars)  # (checked by the scorer; a numpy integer as Python's)
        self.allow_tokenizer_mismatch = allow_tokenizer_mismatch
        self.language_check = language_check
        self.allow_html_pages = allow_html_pages
        self.max_document_bytes, _ = reading_limits(max_document_bytes, None)
        self._warned_not_text = self._warned_html = self._warned_too_large = False
        self._first_texts = 0  # (texts seen, up to FIRST_TEXTS_ALL_HTML, and whether all were HTML pages)
        self._first_all_html = True
        # its settings in its name: what datatrove's log and stats show of the step
        self.name = with_settings(type(self).name, self.model_name, self.method, threshold_text(self._scorer),
                                  *self._non_default_policy())
        self.stats.name = str(self)

    def _non_default_policy(self) -> list[str]:
        defaults = {"min_chars": DEFAULT_MIN_CHARS, "min_kept_fraction": 0.0, "other_languages": "keep",
                    "annotate": False, "language_check": True}
        return [f"{key} {getattr(self, key)}" for key, default in defaults.items() if getattr(self, key) != default]

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`):
        the model with the SHA-256 of its file (each language's, with a map), the method, the
        threshold in effect, the document policy and where dropped documents go."""
        return {**model_settings(self._scorer), "method": self.method, "threshold": threshold_setting(self._scorer),
                "page_text_method": self.page_text_method,
                "min_chars": self.min_chars, "min_kept_fraction": self.min_kept_fraction,
                "other_languages": self.other_languages, "language_check": self.language_check,
                "annotate": self.annotate, "max_sentence_chars": self.max_sentence_chars,
                "allow_tokenizer_mismatch": self.allow_tokenizer_mismatch,
                "record_dropped_sentences": self.record_dropped_sentences, "allow_html_pages": self.allow_html_pages,
                "max_document_bytes": self.max_document_bytes,
                "excluded": step_settings(self.exclusion_writer) if self.exclusion_writer is not None else None}

    @property
    def scorer(self) -> PerplexityScorer | LanguageModels:
        """The scorer of this worker process (KenLM opened on first use, once per process)."""
        return _PROCESS_SCORERS.setdefault(self._scorer_key, self._scorer)

    @property
    def page_text_scorer(self) -> PerplexityScorer | LanguageModels:
        """The scorer of this worker process for WET records' text (`page_text_method`)."""
        return _PROCESS_SCORERS.setdefault(self._page_text_key, self._page_text_scorer)

    def _dropped_unread(self, doc: Document, reason: str) -> tuple[bool, str]:
        """Drop `doc` unread, for `reason`: to the exclusion writer as the other dropped documents go, its text a str,
        every plexity_* field."""
        excluded_as_text(doc)
        verdict = policy.Verdict(policy.DROPPED, "", reason=reason, chars_before=len(doc.text))
        fields = policy.typed_metadata(policy.metadata(verdict, self.scorer))
        if self.record_dropped_sentences:
            fields["plexity_dropped_sentences"] = []
        write_fields(doc, fields, self.name)
        return False, reason

    def run(self, data, rank: int = 0, world_size: int = 1):
        return super().run(self._held_until_decided(data), rank, world_size)

    def _held_until_decided(self, data):
        """`data`, its first texts held back until the task's check of them has decided (`_first_text`): they
        are passed on once a text that is no HTML page comes, else the third page stops the task, and none of them
        was cleaned or written.  (They were passed on as they came, and the two pages before the stop were written
        to the output, cleaned as text, markup and all.)  At most FIRST_TEXTS_ALL_HTML - 1 documents are held, each
        within max_document_bytes; one the check does not read (no text, not text, too large: dropped whatever it
        decides, or an empty text kept) goes on at once, ahead of those held."""
        held = []
        for doc in data:
            if self._first_texts < FIRST_TEXTS_ALL_HTML and self._first_all_html and not self.allow_html_pages:
                if self._first_text(doc):
                    held.append(doc)
                    if self._first_texts < FIRST_TEXTS_ALL_HTML and self._first_all_html:
                        continue  # (undecided)
                    yield from held
                    held.clear()
                    continue
            yield doc
        yield from held  # (a task of fewer texts: nothing to decide)

    def _first_text(self, doc: Document) -> bool:
        """Whether `doc` is one of the task's first texts (a text the filter reads, not empty); when the first
        FIRST_TEXTS_ALL_HTML are all HTML pages, the pipeline has no extractor step before the filter: stop the
        task with `HtmlPagesNotText`, naming them."""
        text = bytes(doc.text) if isinstance(doc.text, (bytearray, memoryview)) else doc.text
        if not text or not_text(text) or len(text) > self.max_document_bytes:
            return False
        self._first_texts += 1
        self._first_all_html = self._first_all_html and looks_like_html(text)
        if self._first_texts == FIRST_TEXTS_ALL_HTML and self._first_all_html:
            raise HtmlPagesNotText(
                f"{type(self).__name__}: the first {FIRST_TEXTS_ALL_HTML} texts of this task are HTML pages (the "
                f"last, document {doc.id!r}, starts {str(text).lstrip()[:30]!r}): the filter cleans text, and no "
                f"extractor step comes before it: put one between the reader and the filter (LearnedExtractor(), "
                f"HtmlTagsExtractor(), datatrove's Trafilatura() ...); or, if these texts are HTML on purpose, "
                f"give allow_html_pages=True to clean them as text, markup and all")
        return True

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        text = bytes(doc.text) if isinstance(doc.text, (bytearray, memoryview)) else doc.text
        why = not_text(text)
        if why:  # (a row whose text field holds a list of paragraphs: it stopped the task; a PDF's bytes: kept)
            if not self._warned_not_text:
                self._warned_not_text = True
                logger.warning(f"document {doc.id!r}: {why}: dropped as {INPUT_NOT_TEXT} "
                               f"(said once; counted in dropped_{INPUT_NOT_TEXT})")
            return self._dropped_unread(doc, INPUT_NOT_TEXT)
        if text is not None and len(text) > self.max_document_bytes:  # (before any work: its memory is ~6x its size)
            if not self._warned_too_large:
                self._warned_too_large = True
                too_large_warning(doc, self.max_document_bytes)
            return self._dropped_unread(doc, TOO_LARGE)
        html = bool(text) and looks_like_html(text)
        if html:
            self.stat_update(LOOKS_LIKE_HTML)
            if not self._warned_html and not self.allow_html_pages:
                self._warned_html = True
                logger.warning(f"document {doc.id!r}: its text is an HTML page, which this filter cleans as text, "
                               f"markup and all: put an extractor step before it (LearnedExtractor, "
                               f"HtmlTagsExtractor ...) (said once; counted in {LOOKS_LIKE_HTML})")
        scorer = self.page_text_scorer if is_page_text(doc) else self.scorer
        # (the U+FFFD WarcHtmlReader inserted decoding the page's bytes count too, as in plexity clean)
        verdict = self.policy.judge(text or "", scorer=scorer, language=declared_language(doc),
                                    extra_replaced=decoding_replaced(doc))
        for name, value in policy.counts(verdict).items():
            self.stat_update(name, value=value)
        if verdict.unknown_label is not None and not getattr(self, "_warned_label", False):
            self._warned_label = True  # (a step pickled before it was kept: the class has none)
            logger.warning(f"document {doc.id!r}: " + policy.unknown_label_note(verdict, "its metadata language"))
        if verdict.status == policy.PASSED_THROUGH or verdict.reason == policy.OTHER_LANGUAGE:
            self.stat_update("passthrough", f"passthrough_{verdict.result.passthrough}")
        if verdict.empty:  # (as plexity clean's empty_reasons and Scrapy's items_empty/<reason>)
            self.stat_update("empty", f"empty_{verdict.empty}")
        if verdict.kept:  # (a dropped document goes to the exclusion writer whole, to be audited)
            doc.text = verdict.text
        else:
            excluded_as_text(doc)  # (bytes, which the filter reads, as a str: datatrove's writers take no other)
        # (no None: every document has every field with one type, as datatrove's ParquetWriter needs)
        fields = policy.typed_metadata(policy.metadata(verdict, scorer))
        if self.record_dropped_sentences:
            fields["plexity_dropped_sentences"] = policy.dropped_sentences(verdict.result)
        write_fields(doc, fields, self.name)
        return True if verdict.kept else (False, verdict.reason)
