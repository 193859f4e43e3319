"""The document policy: what every front end does with a page once its text is known.

``plexity clean`` (`plexity_plugins.cleaning.files`), the datatrove step
(`plexity_plugins.datatrove.PerplexitySentenceFilter`) and the Scrapy pipeline
(`plexity_plugins.scrapy.PerplexityFilterPipeline`) all judge a document here, so the
same page with the same settings gets the same verdict, the same reason and the same
``plexity_*`` metadata everywhere:

- `Verdict`: ``kept``, ``dropped`` (with a reason from `DROP_REASONS`) or
  ``passed_through`` (another language than the model's, kept unfiltered; still dropped when
  shorter than ``min_chars``: an empty page's language is "unknown");
- `DocumentPolicy.judge`: cleans the text with the scorer and decides;
- `metadata`: the ``plexity_*`` fields describing a verdict (datatrove metadata, the
  Scrapy item's stats field, ``X-Plexity-*`` WARC headers through `WARC_HEADERS`);
- `DroppedLog`: the JSON-lines file of dropped documents and sentences
  (``plexity clean --write-dropped``, ``PLEXITY_DROPPED_FILE``).

Errors of the installation, not of the input (`ENVIRONMENT_ERRORS`), are never counted
as a skipped document: every front end lets them stop the run (`InstallationError`).
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import re
import statistics
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # (not imported at run time: the CLI imports this module before it needs a scorer)
    from pathlib import Path

    from ..scoring.scorer import CleanResult, PerplexityScorer

KEPT = "kept"
DROPPED = "dropped"
PASSED_THROUGH = "passed_through"

# Why a document is dropped.
EMPTY_INPUT = "empty_input"  # nothing but whitespace came in
NO_TEXT_EXTRACTED = "no_text_extracted"  # the extractor found no text in the HTML
EXTRACTION_FAILED = "extraction_failed"  # the HTML could not be parsed
TOO_SHORT = "too_short"  # fewer than `min_chars` characters of sentences kept
TOO_LITTLE_KEPT = "too_little_kept"  # the kept share of the text below `min_kept_fraction`
OTHER_LANGUAGE = "other_language"  # another language than the model's, with other_languages="drop"
# A document whose language label names no language (`plexity_plugins.text.language.names_no_language`): counted, its
# text's language identified instead (no reason to drop it)
LANGUAGE_LABEL_UNKNOWN = "language_label_unknown"
DROP_REASONS = (EMPTY_INPUT, NO_TEXT_EXTRACTED, EXTRACTION_FAILED, TOO_SHORT, TOO_LITTLE_KEPT, OTHER_LANGUAGE)

# Why a judged document's cleaned text is empty (`Verdict.empty`), counted by every front end
# (``empty_reasons`` in plexity-stats.json, ``empty_<reason>`` in datatrove's stats,
# ``plexity/items_empty/<reason>`` in Scrapy's), whether or not the document is also dropped.
NO_SENTENCES = "no_sentences"  # text, but not one sentence in it to score
ALL_SENTENCES_DROPPED = "all_sentences_dropped"  # the filter dropped every sentence
EMPTY_REASONS = (EMPTY_INPUT, NO_TEXT_EXTRACTED, NO_SENTENCES, ALL_SENTENCES_DROPPED)

# One default for every front end that drops documents (the datatrove step, `plexity run`,
# the Scrapy pipeline).  `plexity clean` deliberately defaults to 0 (`CLEAN_MIN_CHARS`): it
# writes one output per input, so by default it empties nothing for being short.
DEFAULT_MIN_CHARS = 50
CLEAN_MIN_CHARS = 0

# `min_chars` counts characters as an English text spells them: a Han or kana character says what three Latin
# letters say (a Chinese paragraph is about a third as long as its English translation: 38 characters for 117 in
# tests/test_languages_probe36.py), a Hangul syllable two.  So a Chinese text of 30 characters, two sentences, is
# no shorter than an English one of 90 (it was dropped as too_short under the default 50).
WIDE_CHAR_WEIGHTS = ((re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"), 3),
                     (re.compile(r"[\uac00-\ud7a3]"), 2))


def length_for_min_chars(text: str, chars: int) -> int:
    """`chars` (the characters of `text`, as counted), a Han or kana character in `text` counting as three, a
    Hangul syllable as two (`WIDE_CHAR_WEIGHTS`): the length `min_chars` is compared with."""
    if text.isascii():
        return chars
    return chars + sum((weight - 1) * len(pattern.findall(text)) for pattern, weight in WIDE_CHAR_WEIGHTS)
OTHER_LANGUAGE_ACTIONS = ("keep", "drop")
# how the library's arguments are named in messages; front ends pass their own names (CLI options, settings)
ARGUMENT_NAMES = {"other_languages": "other_languages='drop'", "language_check": "language_check=False"}


def check_other_languages(scorer, other_languages: str, names: dict[str, str] | None = None) -> None:
    """Refuse "drop" where no document can be found in another language: one model whose language
    check is off (turned off, or the model records no language), where "drop" would silently drop
    nothing.  (A language -> model map still routes by a language an upstream step labelled, and
    drops what it has no model for: "drop" means something there.)"""
    if other_languages != "drop" or hasattr(scorer, "scorers") or scorer.language_check:
        return
    names = {**ARGUMENT_NAMES, **(names or {})}
    drop, off = names["other_languages"], names["language_check"]
    if not scorer.info.language:
        raise ValueError(f"{drop}, but model {scorer.model_name} records no language, so no document is found in "
                         f"another language and none would be dropped: record the model's language (`plexity models "
                         f"import --language`, or \"language\" in its model.json), or leave out {drop}")
    raise ValueError(f"{drop} with {off}: without the language check no document is found in another language, "
                     f"so none would be dropped: leave out {off} to drop them, or {drop} to filter every document "
                     f"with the model")

# Characters that JSON leaves raw with ensure_ascii=False but that line readers (Python's
# str.splitlines, JavaScript) take as line breaks: escaped, so that one record stays one line.  And lone
# surrogates (a str read with errors="surrogateescape", a JSON "\\udce9"), which no UTF-8 file takes: escaped,
# as ensure_ascii would, so that the record is written (not UnicodeEncodeError) and reads back the same.
_ESCAPED_IN_STRINGS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085",
                                         **{chr(code): f"\\u{code:04x}" for code in range(0xD800, 0xE000)}})


def json_line(record: dict) -> str:
    """One JSON-lines record: UTF-8 text kept readable, but no character any reader splits on, and none
    a UTF-8 file cannot hold."""
    return json.dumps(record, ensure_ascii=False).translate(_ESCAPED_IN_STRINGS) + "\n"


@dataclass
class Verdict:
    """What the policy decided for one document."""

    status: str  # KEPT, DROPPED or PASSED_THROUGH
    text: str  # the text to write (the cleaned text; for a dropped document, what was left)
    result: CleanResult | None = None
    reason: str | None = None  # why it was dropped (DROP_REASONS)
    would_drop: str | None = None  # with annotate: the reason it would have been dropped
    chars_before: int = 0  # characters of the text judged
    extra_replaced: int = 0  # replacement characters from decoding bytes before the policy
    empty: str | None = None  # why the cleaned text is empty (EMPTY_REASONS), None when it is not
    unknown_label: str | None = None  # the document's language label, when it names no language (read as none)

    @property
    def kept(self) -> bool:
        return self.status != DROPPED

    @property
    def replaced_chars(self) -> int:
        return (self.result.replaced_chars if self.result is not None else 0) + self.extra_replaced


class DocumentPolicy:
    """Cleans a document's text and decides whether the document is kept.

    Args:
        scorer: the shared PerplexityScorer (its method and threshold decide the sentences).
        threshold: overrides the scorer's threshold; None = the scorer's.
        annotate: remove nothing, wrap would-be-dropped sentences in ``<ppl score="...">``;
            documents are then never dropped for their text (the would-be reason is kept
            as ``plexity_would_drop``).
        min_chars: fewer characters of sentences kept -> dropped (``too_short``; an empty
            text is ``empty_input`` or ``no_text_extracted``).
        min_kept_fraction: a kept share of the sentence characters below this -> dropped
            (``too_little_kept``).
        other_languages: a document in another language than the model's is kept unfiltered
            ("keep": ``passed_through``) or dropped ("drop": ``other_language``); "drop" with one
            model whose language check is off is refused (`check_other_languages`).
        names: the front end's names of other_languages and language_check, for that refusal.
    """

    def __init__(self, scorer: PerplexityScorer, *, threshold: float | None = None, annotate: bool = False,
                 min_chars: int = DEFAULT_MIN_CHARS, min_kept_fraction: float = 0.0,
                 other_languages: str = "keep", names: dict[str, str] | None = None):
        if other_languages not in OTHER_LANGUAGE_ACTIONS:
            raise ValueError(f"other_languages must be one of {OTHER_LANGUAGE_ACTIONS}, got {other_languages!r}")
        check_other_languages(scorer, other_languages, names)
        if isinstance(min_chars, bool) or not isinstance(min_chars, numbers.Integral) or min_chars < 0:
            raise ValueError(f"min_chars must be a whole number of characters, 0 or more, got {min_chars!r}")
        if isinstance(min_kept_fraction, bool) or not isinstance(min_kept_fraction, numbers.Real) \
                or not 0.0 <= min_kept_fraction <= 1.0:
            raise ValueError(f"min_kept_fraction must be a number between 0 and 1, got {min_kept_fraction!r}")
        if not isinstance(annotate, bool):  # ("no" from a config file is true)
            raise ValueError(f"annotate must be True or False, got {annotate!r}")
        self.scorer = scorer
        self.threshold = threshold
        self.annotate = annotate
        self.min_chars = int(min_chars)  # (a numpy number as Python's: a run's record of it is JSON)
        self.min_kept_fraction = float(min_kept_fraction)
        self.other_languages = other_languages

    def judge(self, text: str | bytes, *, input_empty: bool | None = None, extra_replaced: int = 0,
              scorer: PerplexityScorer | None = None, language: str | None = None) -> Verdict:
        """The verdict for a document whose text (extracted, if it was HTML) is `text`.

        `input_empty` tells an empty input from HTML without text (None: the text is the
        input); `extra_replaced` counts replacement characters inserted before (decoding);
        `scorer` overrides the policy's scorer for this document; `language` is the document's
        language if an upstream step labelled it (else the scorer identifies it).
        """
        result = (scorer or self.scorer).clean(text, threshold=self.threshold, annotate=self.annotate,
                                               language=language)
        common = {"chars_before": len(text), "extra_replaced": extra_replaced,
                  "empty": empty_reason(result, text, input_empty),
                  "unknown_label": language if language and _names_no_language(language) else None}
        if result.passthrough:
            if self.other_languages == "drop":
                return Verdict(DROPPED, result.text, result, OTHER_LANGUAGE, **common)
            # (unfiltered, but no shorter than min_chars: an empty page, whose language is unknown,
            # is no document in any language)
            reason = self._too_short(result, text, input_empty)
            if reason and not self.annotate:
                return Verdict(DROPPED, result.text, result, reason, **common)
            return Verdict(PASSED_THROUGH, result.text, result, **common)
        reason = self._drop_reason(result, text, input_empty)
        if reason and not self.annotate:
            return Verdict(DROPPED, result.text, result, reason, **common)
        return Verdict(KEPT, result.text, result, would_drop=reason, **common)

    def explain(self, verdict: Verdict, names: dict[str, str] | None = None) -> str:
        """Why `verdict` dropped its document, in a few words; `names` gives the front end's
        names of the settings (e.g. ``{"min_chars": "PLEXITY_MIN_CHARS"}``)."""
        names = names or {}
        result = verdict.result
        if verdict.reason == OTHER_LANGUAGE:
            return f"{result.passthrough}, {names.get('other_languages', 'other_languages')} is drop"
        if verdict.reason == TOO_LITTLE_KEPT:
            total = result.chars_kept + result.chars_dropped
            return (f"{result.chars_kept} of {total} characters kept, "
                    f"{names.get('min_kept_fraction', 'min_kept_fraction')} is {self.min_kept_fraction:g}")
        kept = result.chars_kept if result is not None else 0
        return f"{kept} characters kept, {names.get('min_chars', 'min_chars')} is {self.min_chars}"

    def _too_short(self, result: CleanResult, text: str | bytes, input_empty: bool | None) -> str | None:
        if result.chars_kept < self.min_chars and length_for_min_chars(result.text, result.chars_kept) < self.min_chars:
            if not text.strip():
                return EMPTY_INPUT if input_empty in (None, True) else NO_TEXT_EXTRACTED
            return TOO_SHORT
        return None

    def _drop_reason(self, result: CleanResult, text: str | bytes, input_empty: bool | None) -> str | None:
        too_short = self._too_short(result, text, input_empty)
        if too_short:
            return too_short
        total = result.chars_kept + result.chars_dropped
        if total and result.chars_kept / total < self.min_kept_fraction:
            return TOO_LITTLE_KEPT
        return None


def empty_reason(result: CleanResult, text: str | bytes | None = None, input_empty: bool | None = None) -> str | None:
    """Why `result`'s cleaned text is empty (one of `EMPTY_REASONS`), or None when it is not.

    `text` is the text that was cleaned (None: unknown, judged from `result` alone) and
    `input_empty` tells an empty input from HTML without text, as in `DocumentPolicy.judge`.
    """
    if result.text.strip():
        return None
    if text is not None and not text.strip():
        return EMPTY_INPUT if input_empty in (None, True) else NO_TEXT_EXTRACTED
    if result.sentences_dropped:
        return ALL_SENTENCES_DROPPED
    return NO_SENTENCES if text is not None or result.chars_dropped else EMPTY_INPUT


def metadata(verdict: Verdict, scorer: PerplexityScorer) -> dict:
    """The ``plexity_*`` fields describing `verdict` (every key always present)."""
    result = verdict.result
    ppl = result.perplexities if result is not None else []
    return {
        "plexity_verdict": verdict.status,
        "plexity_reason": verdict.reason,
        "plexity_would_drop": verdict.would_drop,
        # (a language -> model map names the model that scored this document)
        "plexity_model": (result.model if result is not None else None) or scorer.model_name,
        "plexity_method": scorer.method,
        "plexity_threshold": result.threshold if result is not None else _threshold(scorer),
        "plexity_sentences": len(ppl),
        "plexity_sentences_kept": result.sentences_kept if result is not None else 0,
        "plexity_sentences_dropped": result.sentences_dropped if result is not None else 0,
        "plexity_chars_before": verdict.chars_before,
        "plexity_chars_after": len(verdict.text),
        "plexity_chars_kept": result.chars_kept if result is not None else 0,
        "plexity_chars_dropped": result.chars_dropped if result is not None else 0,
        "plexity_ppl_mean": round(statistics.fmean(ppl), 1) if ppl else None,
        "plexity_ppl_median": round(statistics.median(ppl), 1) if ppl else None,
        "plexity_doc_perplexity": result.document_perplexity if result is not None else None,
        "plexity_replaced_chars": verdict.replaced_chars,
        "plexity_passthrough": result.passthrough if result is not None else None,
    }


# Each ``plexity_*`` field's type, and what stands for "no value" where a front end needs every field
# of one type in every document (`typed_metadata`).
_TEXT_FIELDS = ("plexity_verdict", "plexity_reason", "plexity_would_drop", "plexity_model", "plexity_method",
                "plexity_passthrough", "plexity_doc_model", "plexity_doc_would_drop")
_NUMBER_FIELDS = ("plexity_threshold", "plexity_ppl_mean", "plexity_ppl_median", "plexity_doc_perplexity")


def typed_metadata(meta: dict) -> dict:
    """`meta` with no None left among the ``plexity_*`` fields: "" for a text field without a
    value, NaN for a number field (which JSON writers such as datatrove's JsonlWriter, orjson,
    write as null), so that every document has every field with one type.  datatrove's
    ParquetWriter takes its schema from the first document and each batch's from the batch: a
    field None there (pyarrow's null type) and a string or a number later stopped the task with
    "Table schema does not match schema used to create file"."""
    out = dict(meta)
    for key in _TEXT_FIELDS:
        if key in out and out[key] is None:
            out[key] = ""
    for key in _NUMBER_FIELDS:
        if key in out and out[key] is None:
            out[key] = float("nan")
    return out


def _threshold(scorer) -> float | None:
    value = scorer.threshold
    return None if value != value else value  # NaN: a language -> model map, each model its own


def _names_no_language(label: str) -> bool:
    from ..text.language import names_no_language  # (here: the CLI imports this module before any scoring)

    return names_no_language(label)


def counts(verdict: Verdict) -> dict[str, int]:
    """The per-document counters every front end adds up (same names everywhere).  ``sentences_kept`` and
    ``chars_kept`` are what the output holds: the sentences the filter kept in a document then dropped whole
    (``too_short`` ...) are in no output, so they count as dropped (the document's own ``plexity_sentences_kept``
    metadata is still the filter's), and kept + dropped is every sentence scored."""
    result = verdict.result
    if result is None:
        return {"replaced_chars": verdict.extra_replaced}
    sentences_kept, chars_kept = (result.sentences_kept, result.chars_kept) if verdict.kept else (0, 0)
    counted = {"sentences_kept": sentences_kept,
               "sentences_dropped": result.sentences_dropped + result.sentences_kept - sentences_kept,
               "chars_kept": chars_kept, "chars_dropped": result.chars_dropped + result.chars_kept - chars_kept,
               "replaced_chars": verdict.replaced_chars}
    if verdict.unknown_label is not None:  # (only where there is one: no new zero in every run's stats)
        counted[LANGUAGE_LABEL_UNKNOWN] = 1
    return counted


def unknown_label_note(verdict: Verdict, label_of: str) -> str:
    """The one line a front end says (once) of a language label that names no language (`label_of`: where the
    label was, "its metadata language")."""
    return (f"{label_of} is {verdict.unknown_label!r}, which names no language (neither an ISO 639 code, "
            f"\"en\", \"deu_Latn\", nor a language's English name, \"English\"): read as no label, the text's "
            f"language identified as for a document without one (said once; counted in {LANGUAGE_LABEL_UNKNOWN})")


def json_numbers(fields: dict) -> dict:
    """`fields` with each float JSON cannot write (the no-filtering baseline's threshold, inf; NaN) None: a front end
    whose fields are written by another's JSON encoder (Scrapy's feeds: ``Infinity``, which no strict reader takes)
    gets null there, as orjson writes it in the datatrove step's documents."""
    return {key: None if isinstance(value, float) and not math.isfinite(value) else value
            for key, value in fields.items()}


# Metadata written as WARC headers of a cleaned record (when not None), as X-Plexity-<Name>.
WARC_HEADERS = {
    "plexity_verdict": "X-Plexity-Verdict",
    "plexity_reason": "X-Plexity-Reason",
    "plexity_would_drop": "X-Plexity-Would-Drop",
    "plexity_model": "X-Plexity-Model",
    "plexity_threshold": "X-Plexity-Threshold",
    "plexity_sentences": "X-Plexity-Sentences",
    "plexity_sentences_kept": "X-Plexity-Sentences-Kept",
    "plexity_sentences_dropped": "X-Plexity-Sentences-Dropped",
    "plexity_chars_before": "X-Plexity-Chars-Before",
    "plexity_chars_after": "X-Plexity-Chars-After",
    "plexity_ppl_mean": "X-Plexity-Ppl-Mean",
    "plexity_ppl_median": "X-Plexity-Ppl-Median",
    "plexity_doc_perplexity": "X-Plexity-Doc-Perplexity",
    "plexity_passthrough": "X-Plexity-Passthrough",
}


def warc_headers(meta: dict) -> dict:
    """The ``X-Plexity-*`` WARC headers for the ``plexity_*`` metadata `meta`."""
    return {header: value for key, header in WARC_HEADERS.items()
            if (value := meta.get(key)) is not None and value != "" and value == value}  # (typed_metadata's NaN)


def dropped_sentences(result: CleanResult | None) -> list[dict]:
    """The dropped sentences of `result` as rows: offsets, perplexity, reason, text."""
    if result is None:
        return []
    return [{"start": s.start, "end": s.end, "perplexity": round(s.perplexity, 1), "reason": s.reason,
             "text": s.text} for s in result.dropped]


class DroppedLog:
    """A JSON-lines file with one row per dropped document or skipped record
    (``{"source", "reason", "detail"}``) and one per dropped sentence
    (``{"source", "reason", "perplexity", "start", "end", "text"}``).

    It is written under a temporary name and renamed when closed (`plexity_plugins.io.atomic_files`):
    ``close(complete=False)`` (a run that did not finish) removes it instead.  `give_up` (the file cannot be
    written, and the run goes on without it: the Scrapy pipeline) removes it too, and from then on the rows
    are counted in `rows_not_written` instead of being written, as are those it held.

    Args:
        path: the file (replaced when closed); None writes nothing (every method is then a no-op).
        locked: hold a lock on it while it is written (`AtomicFile`): a second live writer of the same file raises
            `OutputFileInUse` instead of truncating the first one's rows.
        carry_over: the rows of the file as it is now come first (`rows_carried_over` of them), as the rows of
            a paused crawl's earlier part (Scrapy's JOBDIR), which the new file would otherwise replace.
    """

    def __init__(self, path=None, locked: bool = False, carry_over: bool = False):
        from ..io.atomic_files import AtomicFile

        self._out = AtomicFile(path, "w", locked=locked) if path else None
        self._file: IO[str] | None = self._out.file if self._out is not None else None
        self.rows = 0  # given to the file (written, or in its buffer)
        self.given_up = False
        self.rows_not_written = 0
        self.rows_carried_over = 0
        if carry_over and self._file is not None and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8", errors="surrogateescape") as earlier:
                    for line in earlier:  # (line by line: bounded memory, and a last row cut short ends in a newline)
                        self._file.write(line if line.endswith("\n") else line + "\n")
                        self.rows_carried_over += 1
            except BaseException:
                self._out.discard()
                raise

    @property
    def enabled(self) -> bool:
        return self._file is not None

    def give_up(self) -> None:
        """The file cannot be written: remove what there is of it (never raises); its rows, and every later one,
        are `rows_not_written`."""
        if self._out is not None:
            out, self._out, self._file = self._out, None, None
            out.discard()
        if not self.given_up:
            self.given_up, self.rows_not_written = True, self.rows

    def keep_unfinished(self) -> Path | None:
        """For a run stopped without `close` (Scrapy's forced shutdown, whose own feed files keep their names
        and the items written): the rows written so far, each item's whole, are given the file's name too.  The
        path they are in is returned (the temporary file's when it cannot be closed or renamed, a full disk),
        None when nothing is written, for the run to say where they are and that they stop early."""
        if self._out is None:
            return None
        out, self._out, self._file = self._out, None, None
        try:
            out.commit()
        except (OSError, ValueError):
            return out.part if out.part.exists() else None
        return out.path

    def _write(self, rows: list[dict]) -> None:
        if self.given_up:
            self.rows_not_written += len(rows)
        elif self._file is not None:
            self.rows += len(rows)  # (counted first: a row whose write fails is one the file lost)
            for row in rows:
                self._file.write(json_line(row))

    def document(self, source: str, reason: str, detail: str = "") -> None:
        if self._file is not None or self.given_up:
            self._write([{"source": source, "reason": reason, "detail": detail}])

    def sentences(self, source: str, result: CleanResult | None) -> None:
        if self._file is not None or self.given_up:
            self._write([{"source": source, **row} for row in dropped_sentences(result)])

    def close(self, complete: bool = True) -> None:
        """Give the file its name (`complete`), or remove it; a full disk raises here."""
        if self._out is not None:
            out, self._out, self._file = self._out, None, None
            if complete:
                try:
                    out.commit()
                except BaseException:
                    out.discard()
                    raise
            else:
                out.discard()
