"""`PerplexitySentenceFilter`: the shared scorer as a datatrove filter step."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from os import PathLike

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter

from ..multilingual import make_scorer
from ..scorer import PerplexityScorer
from ..sentences import DEFAULT_MAX_CHARS

# One scorer per worker process and model settings: the KenLM model is opened (memory-mapped)
# once per process, although executors hand every task a fresh copy of the step.
_PROCESS_SCORERS: dict[tuple, PerplexityScorer] = {}

OTHER_LANGUAGE_ACTIONS = ("keep", "drop")


def threshold_is_per_model(threshold: float) -> bool:
    """A language -> model map without a common threshold reports NaN: each model uses its own."""
    return threshold != threshold


class PerplexitySentenceFilter(BaseFilter):
    """Removes high-perplexity sentences (boilerplate) from each document's text.

    The document's text is split into sentences, each is scored with a KenLM model, and the
    sentences above the threshold are removed (`PerplexityScorer.clean`).  A document is
    dropped, with a reason, when too little of it remains.

    Args:
        model: model name, path, or None for the embedded default model (`plexity models`); or a
            language -> model map, ``{"en": "en-default", "de": "ccnet-de"}``: each document is
            cleaned with its language's model, one without a model is passed through
            (``passthrough_language:xx``; see `plexity_plugins.multilingual`).
        method: how sentences are chosen (`plexity_plugins.decide`): "trim" (default; for text
            from a main-content extractor such as datatrove's Trafilatura, the best variant on
            our benchmark), "region" (after `HtmlTagsExtractor` or for raw text) or
            "sentences" (the paper's per-sentence rule).
        threshold: perplexity above which text counts as boilerplate; None = the model's
            calibrated default for the method.
        annotate: remove nothing; wrap each would-be-removed sentence in
            ``<ppl score="...">``; documents are then never dropped (the would-be reason is in
            the metadata as ``plexity_would_drop``).
        max_sentence_chars: longer unpunctuated runs are cut into pieces of this size.
        allow_tokenizer_mismatch: accept a model built with another tokenizer version.
        min_chars: drop the document ("too_short") when fewer characters of sentences remain.
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
            ``metadata["filter_reason"]``.
        batch_size: as in datatrove's BaseFilter (documents are scored one by one anyway).

    Metadata added to every document: ``plexity_model``, ``plexity_threshold``, ``plexity_method``,
    ``plexity_sentences``, ``plexity_sentences_dropped``, ``plexity_chars_before``,
    ``plexity_chars_after``, ``plexity_ppl_mean``, ``plexity_ppl_median`` (None without
    sentences), ``plexity_doc_perplexity`` (the whole text's perplexity before cleaning,
    `PerplexityScorer.document_perplexity`; None when passed through), and
    ``plexity_passthrough`` (e.g. "language:de") when it was passed through.

    Counters (``stat_update``): besides BaseFilter's ``total``, ``forwarded``, ``dropped`` and
    ``dropped_<reason>``: ``sentences_kept``, ``sentences_dropped``, ``chars_kept``,
    ``chars_dropped``, ``replaced_chars``, ``passthrough`` and ``passthrough_<reason>``.
    """

    name = "🧮 Perplexity sentences"
    _requires_dependencies = ["kenlm", "blingfire"]

    def __init__(
        self,
        model: str | PathLike | Mapping[str, str | PathLike | None] | None = None,
        threshold: float | None = None,
        method: str = "trim",
        annotate: bool = False,
        max_sentence_chars: int = DEFAULT_MAX_CHARS,
        allow_tokenizer_mismatch: bool = False,
        min_chars: int = 50,
        min_kept_fraction: float = 0.0,
        language_check: bool = True,
        other_languages: str = "keep",
        record_dropped_sentences: bool = False,
        exclusion_writer: DiskWriter | None = None,
        batch_size: int = 1,
    ):
        super().__init__(exclusion_writer=exclusion_writer, batch_size=batch_size)
        if other_languages not in OTHER_LANGUAGE_ACTIONS:
            raise ValueError(f"other_languages must be one of {OTHER_LANGUAGE_ACTIONS}, got {other_languages!r}")
        if not 0.0 <= min_kept_fraction <= 1.0:
            raise ValueError(f"min_kept_fraction must be between 0 and 1, got {min_kept_fraction!r}")
        kwargs = {"threshold": threshold, "method": method, "max_sentence_chars": max_sentence_chars,
                  "allow_tokenizer_mismatch": allow_tokenizer_mismatch, "language_check": language_check}
        # Resolved here, so that a wrong model name fails at pipeline construction, not in a
        # worker; KenLM itself is opened lazily (see `scorer`).
        self._scorer = make_scorer(model, **kwargs)
        self.model_name = self._scorer.model_name
        self.threshold = self._scorer.threshold
        self.method = method
        paths = (self._scorer.info.path if isinstance(self._scorer, PerplexityScorer)
                 else tuple((lang, s.info.path) for lang, s in self._scorer.scorers.items()))
        self._scorer_key = (paths, self.threshold, method, max_sentence_chars,
                            allow_tokenizer_mismatch, language_check)
        self.annotate = annotate
        self.min_chars = min_chars
        self.min_kept_fraction = min_kept_fraction
        self.other_languages = other_languages
        self.record_dropped_sentences = record_dropped_sentences

    @property
    def scorer(self) -> PerplexityScorer:
        """The scorer of this worker process (KenLM opened on first use, once per process)."""
        return _PROCESS_SCORERS.setdefault(self._scorer_key, self._scorer)

    def _drop_reason(self, sentence_chars: int, kept_chars: int) -> str | None:
        if kept_chars < self.min_chars:
            return "too_short"
        if sentence_chars and kept_chars / sentence_chars < self.min_kept_fraction:
            return "too_little_kept"
        return None

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        if not doc.text or not doc.text.strip():
            self._annotate_metadata(doc, len(doc.text or ""), None)
            return False, "no_text"
        chars_before = len(doc.text)
        threshold = None if threshold_is_per_model(self.threshold) else self.threshold
        result = self.scorer.clean(doc.text, threshold=threshold, annotate=self.annotate,
                                   language=doc.metadata.get("language"))
        self.stat_update("replaced_chars", value=result.replaced_chars)
        passthrough = getattr(result, "passthrough", None)
        if passthrough:
            self.stat_update("passthrough", f"passthrough_{passthrough}")
            keep = self.other_languages == "keep"
            if keep:
                doc.text = result.text
            self._annotate_metadata(doc, chars_before, result, passthrough)
            return True if keep else (False, "other_language")

        self.stat_update("sentences_kept", value=result.sentences_kept)
        self.stat_update("sentences_dropped", value=result.sentences_dropped)
        self.stat_update("chars_kept", value=result.chars_kept)
        self.stat_update("chars_dropped", value=result.chars_dropped)
        doc.text = result.text
        self._annotate_metadata(doc, chars_before, result)
        reason = self._drop_reason(result.chars_kept + result.chars_dropped, result.chars_kept)
        if reason and self.annotate:
            doc.metadata["plexity_would_drop"] = reason
            return True
        if reason:
            return False, reason
        return True

    def _annotate_metadata(self, doc: Document, chars_before: int, result, passthrough: str | None = None) -> None:
        perplexities = result.perplexities if result is not None else []
        meta = doc.metadata
        meta["plexity_model"] = (result.model if result is not None else None) or self.model_name
        meta["plexity_threshold"] = result.threshold if result is not None else self.threshold
        meta["plexity_method"] = self.method
        meta["plexity_sentences"] = len(perplexities)
        meta["plexity_sentences_dropped"] = result.sentences_dropped if result is not None else 0
        meta["plexity_chars_before"] = chars_before
        meta["plexity_chars_after"] = len(doc.text or "")
        meta["plexity_ppl_mean"] = round(statistics.fmean(perplexities), 1) if perplexities else None
        meta["plexity_ppl_median"] = round(statistics.median(perplexities), 1) if perplexities else None
        meta["plexity_doc_perplexity"] = result.document_perplexity if result is not None else None
        if passthrough:
            meta["plexity_passthrough"] = passthrough
        if self.record_dropped_sentences and result is not None:
            meta["plexity_dropped_sentences"] = [
                {"start": s.start, "end": s.end, "perplexity": round(s.perplexity, 1), "text": s.text}
                for s in result.dropped
            ]
