"""A language -> model map: each text is cleaned with its own language's model.

    PerplexitySentenceFilter(model={"en": "en-default", "de": "ccnet-de"})   # datatrove
    plexity clean --model en=en-default --model de=ccnet-de ...               # CLI
    PLEXITY_MODEL = {"en": "en-default", "de": "ccnet-de"}                   # Scrapy

A text's language is the one an upstream step declared (datatrove's ``LanguageFilter``
sets ``doc.metadata["language"]``; GlotLID's "deu_Latn" counts as "de"), else the one
`plexity_plugins.text.language.language_among` identifies (with at least `language.MIN_PROBABILITY`, or below it
one the map has a model of, as a model alone takes such a text).  A text whose language has no model is passed
through unfiltered with ``passthrough = "language:<code>"`` (``language:unknown`` when
it could not be identified, e.g. too short), which the front ends count per language;
the key ``"*"`` names a model for every other (or unidentified) language.
"""

from __future__ import annotations

import logging
import math
import shlex
from collections.abc import Mapping
from os import PathLike

from . import methods
from ..errors import ModelError
from ..text.language import checked_language_code, identify, language_among, language_code
from .scorer import CleanResult, DocumentScore, PerplexityScorer, checked_threshold, passthrough_result, sanitize
from ..text.sentences import DEFAULT_MAX_CHARS

logger = logging.getLogger(__name__)

ANY_LANGUAGE = "*"


def parse_model_args(values: list[str] | str | None) -> str | dict[str, str] | None:
    """``--model`` values: one name or path, or ``LANG=MODEL`` pairs (a map)."""
    if values is None or isinstance(values, str):
        return values
    if len(values) == 1 and "=" not in values[0]:
        return values[0]
    mapping: dict[str, str] = {}
    for value in values:
        language, sep, model = value.partition("=")
        if not sep or not language.strip() or not model.strip():
            raise ValueError(f"--model {value!r}: with several models, each is LANG=MODEL (e.g. de=ccnet-de)")
        if language.strip() in mapping:
            raise ValueError(f"--model: language {language.strip()!r} given twice")
        mapping[language.strip()] = model.strip()
    return mapping


def require_thresholds(scorer) -> None:
    """ModelError now, where a model of `scorer` (one, or each of a language map's) has no
    threshold to clean with, given or calibrated: not at its first document, mid-run.  Every front end calls it
    where it makes its scorers (`plexity clean` did not: a map's model without one stopped the run at its language's
    first page, after the files before it were cleaned)."""
    scorers = getattr(scorer, "scorers", None)
    if not scorers:
        scorer.threshold  # noqa: B018 - raises ModelError naming the model
        return
    for language, one in scorers.items():
        try:
            one.threshold  # noqa: B018
        except ModelError:
            # (the single model's advice, --threshold, would set that threshold for every model of the map)
            name = shlex.quote(one.model_argument)
            raise ModelError(
                f"model '{one.model_name}' (mapped to {language!r}) has no default threshold in its metadata: with a "
                f"language map, a threshold given (--threshold, threshold=..., PLEXITY_THRESHOLD) is every model's; "
                f"give this one its own from clean text of its language: `plexity calibrate --model {name} "
                f"CLEAN_TEXT --write`") from None


# (language, model, declared language) said already in this process: a front end makes one map per method
_SAID_MAPPED_TO_ANOTHER: set[tuple[str, str, str]] = set()


def _warn_of_another_language(language: str, scorer: PerplexityScorer, scorers: Mapping[str, PerplexityScorer]
                              ) -> None:
    """A model mapped to another language than its card's is allowed (a Norwegian model for Danish, a Croatian
    one for Bosnian, as a user chooses) but said, once a process, with what it does: the text of the card's
    language goes to its own key's model, or passes through.  (It was said three times by `plexity clean`, one map
    per method, and only that the two differ.)"""
    declared = scorer.info.language
    code = language_code(declared) if declared else None
    if language == ANY_LANGUAGE or not code or code == language:
        return
    key = (language, scorer.model_name, code)
    if key in _SAID_MAPPED_TO_ANOTHER:
        return
    _SAID_MAPPED_TO_ANOTHER.add(key)
    own = scorers.get(code) or scorers.get(ANY_LANGUAGE)
    fate = (f"texts in {code!r} go to {own.model_name}" if own is not None
            else f"texts in {code!r} pass through unfiltered (language:{code})")
    logger.warning("model %s is declared as language %r but mapped to %r: it cleans the texts in %r, and %s; "
                   "if it is a model of %r, map it as %s=%s", scorer.model_name, declared, language, language, fate,
                   code, code, scorer.model_name)


def make_scorer(model, **kwargs):
    """A `PerplexityScorer` for one model, a `LanguageModels` for a language -> model map."""
    if isinstance(model, Mapping):
        return LanguageModels(model, **kwargs)
    return PerplexityScorer(model, **kwargs)


class LanguageModels:
    """Cleans each text with the model of its language (duck-types `PerplexityScorer.clean`).

    Args:
        models: language code (ISO 639-1, as py3langid and datatrove give them) -> model name
            or path; ``"*"`` for any other language.
        threshold, method, max_sentence_chars, allow_tokenizer_mismatch: as for
            `PerplexityScorer`, for every model (threshold None: each model's own default).
        language_check: identify the language of texts no upstream step labelled (without
            it, such texts go to the ``"*"`` model, or pass through as ``language:unknown``).
    """

    def __init__(self, models: Mapping[str, str | PathLike | None], threshold: float | None = None,
                 method: str = methods.DEFAULT_METHOD, max_sentence_chars: int = DEFAULT_MAX_CHARS,
                 allow_tokenizer_mismatch: bool = False, language_check: bool = True):
        if not models:
            raise ValueError("a language -> model map needs at least one entry")
        self.scorers: dict[str, PerplexityScorer] = {}
        for language, model in models.items():
            if language != ANY_LANGUAGE:
                language = checked_language_code(language)
            if language in self.scorers:
                raise ValueError(f"the language -> model map names language {language!r} twice")
            # The map already routes by language: each model's own check would only repeat it.
            scorer = PerplexityScorer(model, threshold=threshold, method=method, max_sentence_chars=max_sentence_chars,
                                      allow_tokenizer_mismatch=allow_tokenizer_mismatch, language_check=False)
            self.scorers[language] = scorer
        for language, scorer in self.scorers.items():
            _warn_of_another_language(language, scorer, self.scorers)
        self.method = method
        self._threshold = checked_threshold(threshold) if threshold is not None else None  # (a float: JSON writes it)
        self.language_check = language_check
        self.max_sentence_chars = max_sentence_chars

    @property
    def model_name(self) -> str:
        return ",".join(f"{language}={scorer.model_name}" for language, scorer in self.scorers.items())

    @property
    def threshold(self) -> float:
        """The threshold given for all models; NaN when each model uses its own."""
        return self._threshold if self._threshold is not None else math.nan

    @property
    def models(self) -> dict[str, str]:
        return {language: scorer.model_name for language, scorer in self.scorers.items()}

    def language_of(self, text: str) -> str | None:
        if not self.language_check:
            return None
        return language_among(text, self.scorers.keys() - {ANY_LANGUAGE})

    def scorer_for(self, text: str, language: str | None = None) -> tuple[str | None, PerplexityScorer | None]:
        """(the text's language, the scorer of its model, or None)."""
        language = language_code(language) or self.language_of(text)
        return language, self.scorers.get(language) or self.scorers.get(ANY_LANGUAGE)

    def clean(self, text: str | bytes, threshold: float | None = None, annotate: bool = False,
              language: str | None = None) -> CleanResult:
        text, replaced = sanitize(text)
        language, scorer = self.scorer_for(text, language)
        if scorer is None:
            return passthrough_result(text, threshold if threshold is not None else self._threshold, self.method,
                                      replaced, f"language:{language or 'unknown'}")
        return scorer.clean(text, threshold=threshold, annotate=annotate)

    def score_document(self, text: str | bytes, language: str | None = None
                       ) -> tuple[DocumentScore | None, str | None, str | None]:
        """As `PerplexityScorer.score_document`, under the text's language's model."""
        language, scorer = self.scorer_for(sanitize(text)[0], language)
        if scorer is None:
            return None, f"language:{language or 'unknown'}", None
        return scorer.score_document(text)

    def open(self) -> "LanguageModels":
        """Opens every model now (`PerplexityScorer.open`), and the language identifier."""
        for scorer in self.scorers.values():
            scorer.open()
        if self.language_check:
            identify("The language identifier is loaded now, not with the first text.")
        return self


__all__ = ["ANY_LANGUAGE", "LanguageModels", "make_scorer", "parse_model_args"]
