"""`PerplexityDocumentFilter`: keep documents by their whole-text perplexity (CCNet's score)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from os import PathLike
from types import MappingProxyType

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter

from ..cleaning import policy
from ..cleaning.stats import each_threshold
from ..io.read_limits import MAX_DOCUMENT_BYTES, reading_limits
from ..scoring.multilingual import LanguageModels, make_scorer
from ..scoring.scorer import PerplexityScorer
from .filter import (INPUT_NOT_TEXT, TOO_LARGE, declared_language, excluded_as_text, exclusion_writer_checked,
                     not_text, too_large_warning, write_fields)
from .run_settings import model_settings, step_settings, with_settings
from ..runtime.keywords import suggests_keywords

# One scorer per worker process and settings (as in filter.py): the model is opened once.
_PROCESS_SCORERS: dict[tuple, PerplexityScorer | LanguageModels] = {}


def _document_thresholds(scorer: LanguageModels) -> dict[str, float]:
    """Each model's ``document_threshold`` in a language map, by model name: a document perplexity's scale is the
    model's own (CCNet's cut-offs are per language), so with no max_perplexity given each language's documents are
    held to their model's (a map took none: a step of ccnet-en and ccnet-de, each imported with its cut-off, was
    refused as having no bound, and one max_perplexity for both held one language to the other's scale)."""
    found: dict[str, float] = {}
    for language, one in scorer.scorers.items():
        cut = one.info.document_threshold
        if cut is None:
            continue
        if found.get(one.model_name, cut) != cut:  # (two models of one name: the name returned cannot tell them)
            raise ValueError(f"two models of the language map are named {one.model_name!r} with different "
                             f"document_threshold values: give max_perplexity, or install them under other names")
        found[one.model_name] = float(cut)
    return found


@suggests_keywords
class PerplexityDocumentFilter(BaseFilter):
    """Scores each document as a whole and keeps those whose perplexity lies within bounds.

    The score is `PerplexityScorer.document_perplexity`: for a CCNet / edugp model what cc_net
    and datatrove's ``KenlmModel.get_perplexity`` compute (so their published cut-offs apply),
    for our own models the pooled perplexity of the document's sentences.  The text is never
    changed; `PerplexitySentenceFilter` is the step that removes sentences.

    Args:
        model: model name or path, None for the embedded model, or a language -> model map
            (``{"en": "ccnet-en", "de": "ccnet-de"}``, see `plexity_plugins.scoring.multilingual`).
        min_perplexity: drop documents scoring below this ("doc_perplexity_below_min"):
            near-duplicates of the model's training text, lists of common words.
        max_perplexity: drop documents scoring above this ("doc_perplexity_above_max").
            None: the model's ``document_threshold`` if its metadata has one (e.g. a CCNet
            cut-off given to ``plexity models import``), else no upper bound; with a map, each
            language's model's own (a language whose model has none: no upper bound).  A step without
            any bound (and not ``label_only``, nor ``other_languages="drop"``) would drop nothing:
            it is a ValueError when built, as there is no default bound to fall back on (a
            document perplexity's scale is the model's own).
        label_only: drop nothing: only write the score into the metadata (FineWeb-style
            pipelines that filter later); the would-be reason goes to
            ``metadata["plexity_doc_would_drop"]``.
        language_check: documents in another language than the model's (by
            ``doc.metadata["language"]`` when an upstream step set it, else identified) are
            not scored; with a map, languages without a model are not scored.
        other_languages: "keep" such documents (counted as ``passthrough_language:xx``) or
            "drop" them (reason "other_language").
        exclusion_writer: a datatrove writer that receives every dropped document.
        max_document_bytes: a longer text (characters of a str, bytes of bytes) is dropped as ``too_large``
            unscored, with one warning per task, even with ``label_only`` (as a text that is no text); bytes or a
            size ("50MB"); default 50 MB, as `PerplexitySentenceFilter`'s.  (A text of 100 MB took 498 MB and 20 s.)

    Metadata, in every document: ``plexity_doc_perplexity`` (NaN when not scored: JsonlWriter
    writes null), ``plexity_doc_model`` ("" when not scored), ``plexity_passthrough`` (why not
    scored, else ""), with ``label_only`` ``plexity_doc_would_drop`` ("" when kept): never None,
    one type per field, as datatrove's ParquetWriter needs; the values of those an earlier perplexity
    step wrote (a sentence filter's ``plexity_doc_perplexity``) are kept in ``plexity_earlier``
    (`filter.write_fields`).  Counters: ``scored``, ``passthrough`` and ``passthrough_<why>``,
    ``no_text``, besides BaseFilter's; a document whose text is not str
    or bytes, or is a PDF's, an image's ... (`filter.not_text`), is dropped as ``input_not_text``, one over
    ``max_document_bytes`` as ``too_large``.
    """

    name = "🧮 Perplexity document"
    # (of the class: a step pickled by an earlier version, a Slurm job's executor.pik, a Ray task's copy, has them too)
    max_document_bytes = MAX_DOCUMENT_BYTES
    _warned_too_large = False
    _max_of_model: Mapping[str, float] = MappingProxyType({})  # (a map's models' own document_threshold, by name)

    def __init__(
        self,
        model: str | PathLike | Mapping[str, str | PathLike | None] | None = None,
        min_perplexity: float | None = None,
        max_perplexity: float | None = None,
        label_only: bool = False,
        language_check: bool = True,
        other_languages: str = "keep",
        exclusion_writer: DiskWriter | None = None,
        max_document_bytes: int | str = MAX_DOCUMENT_BYTES,
    ):
        super().__init__(exclusion_writer=exclusion_writer_checked(exclusion_writer))
        self.max_document_bytes, _ = reading_limits(max_document_bytes, None)
        if other_languages not in ("keep", "drop"):
            raise ValueError(f"other_languages must be 'keep' or 'drop', got {other_languages!r}")
        for label, bound in (("min_perplexity", min_perplexity), ("max_perplexity", max_perplexity)):
            # (a negative max dropped every document; "500" failed in the step's name, "Unknown format code")
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, numbers.Real) or not bound > 0):
                raise ValueError(f"{label} is {bound!r}: a positive perplexity, or None for no bound")
        # (a numpy number, a bound swept with np.linspace, as Python's: it was refused as no positive perplexity)
        min_perplexity, max_perplexity = (None if bound is None else float(bound)
                                          for bound in (min_perplexity, max_perplexity))
        # Resolved now, so that a wrong model fails at pipeline construction; KenLM opens lazily.
        self._scorer = make_scorer(model, language_check=language_check)
        if not label_only:  # (label_only drops nothing, whatever other_languages says)
            policy.check_other_languages(self._scorer, other_languages)
        single = isinstance(self._scorer, PerplexityScorer)
        if max_perplexity is None and single:
            max_perplexity = self._scorer.info.document_threshold
        elif max_perplexity is None:
            self._max_of_model = _document_thresholds(self._scorer)
        if (min_perplexity is None and max_perplexity is None and not self._max_of_model and not label_only
                and other_languages == "keep"):
            # (without a bound the step drops only empty texts: PerplexityDocumentFilter() was a silent no-op.
            # There is no default to fall back on: a document perplexity's scale is the model's own.)
            why = (f"model {self._scorer.model_name} has no document_threshold" if single
                   else "no model of the language map has a document_threshold")
            raise ValueError(f"PerplexityDocumentFilter has no bound and would drop nothing: give max_perplexity "
                             f"and/or min_perplexity, or label_only=True to only write the score ({why})")
        if min_perplexity is not None and max_perplexity is not None and min_perplexity >= max_perplexity:
            raise ValueError(f"min_perplexity ({min_perplexity}) must be below max_perplexity ({max_perplexity})")
        self.min_perplexity = min_perplexity
        self.max_perplexity = max_perplexity
        self.label_only = label_only
        self.other_languages = other_languages
        models = (self._scorer.info.path if isinstance(self._scorer, PerplexityScorer)
                  else tuple((lang, s.info.path) for lang, s in self._scorer.scorers.items()))
        self._scorer_key = (models, language_check)
        self.language_check = language_check
        each = each_threshold(self._max_by_language())
        self.name = with_settings(type(self).name, self._scorer.model_name,
                                  f"min {min_perplexity:g}" if min_perplexity is not None else "no min",
                                  f"max {max_perplexity:g}" if max_perplexity is not None else
                                  f"max {each}" if each else "no max",
                                  *(["label only"] if label_only else []))
        self.stats.name = str(self)

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`)."""
        return {**model_settings(self._scorer), "min_perplexity": self.min_perplexity,
                "max_perplexity": self.max_perplexity if self.max_perplexity is not None or not self._max_of_model
                else self._max_by_language(), "label_only": self.label_only,
                "language_check": self.language_check, "other_languages": self.other_languages,
                "max_document_bytes": self.max_document_bytes,
                "excluded": step_settings(self.exclusion_writer) if self.exclusion_writer is not None else None}

    def _max_by_language(self) -> dict[str, float]:
        """A map's models' own document_threshold, by language, as the step's name and its settings say them."""
        return {language: self._max_of_model[one.model_name]
                for language, one in getattr(self._scorer, "scorers", {}).items()
                if one.model_name in self._max_of_model}

    @property
    def scorer(self) -> PerplexityScorer | LanguageModels:
        return _PROCESS_SCORERS.setdefault(self._scorer_key, self._scorer)

    def _reason(self, perplexity: float, model: str | None = None) -> str | None:
        if self.min_perplexity is not None and perplexity < self.min_perplexity:
            return "doc_perplexity_below_min"
        maximum = self.max_perplexity if self.max_perplexity is not None else self._max_of_model.get(model)
        if maximum is not None and perplexity > maximum:
            return "doc_perplexity_above_max"
        return None

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        unreadable = INPUT_NOT_TEXT if not_text(doc.text) else None  # (a list, a PDF's bytes: as the sentence filter)
        if not unreadable and doc.text is not None and len(doc.text) > self.max_document_bytes:  # (before any work)
            unreadable = TOO_LARGE
            if not self._warned_too_large:
                self._warned_too_large = True
                too_large_warning(doc, self.max_document_bytes)
        if unreadable:
            excluded_as_text(doc)  # (to the exclusion writer as a str, with every field, as the others)
        score, passthrough, model = (None, None, None)
        if not unreadable and doc.text and doc.text.strip():
            score, passthrough, model = self.scorer.score_document(doc.text, language=declared_language(doc))
        perplexity = score.perplexity if score is not None else None
        reason = None if passthrough or perplexity is None else self._reason(perplexity, model)
        fields = {"plexity_doc_perplexity": perplexity, "plexity_doc_model": model, "plexity_passthrough": passthrough}
        if self.label_only:
            fields["plexity_doc_would_drop"] = unreadable or reason
        # (no None, every field in every document: one type per field, as datatrove's ParquetWriter needs;
        # a field an earlier step wrote, a sentence filter's plexity_doc_perplexity, is kept: `write_fields`)
        write_fields(doc, policy.typed_metadata(fields), self.name)
        if unreadable:
            return False, unreadable
        if passthrough:
            self.stat_update("passthrough", f"passthrough_{passthrough}")
            outcome = True if self.other_languages == "keep" or self.label_only else (False, "other_language")
        elif perplexity is None:
            self.stat_update("no_text")
            outcome = True if self.label_only else (False, "no_text")
        else:
            self.stat_update("scored")
            outcome = True if self.label_only or not reason else (False, reason)
        if outcome is not True:
            excluded_as_text(doc)  # (to the exclusion writer as a str, bytes decoded)
        return outcome
