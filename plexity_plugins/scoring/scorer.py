"""The shared perplexity scorer behind the CLI, the datatrove step and the Scrapy pipeline.

Perplexity of one sentence
--------------------------
The sentence is tokenised by the model's own tokenizer (`plexity_plugins.text.model_tokenizers`:
``plexity-tok-1``, `plexity_plugins.text.plexity_tokenizer`, or CCNet's normaliser + SentencePiece)
into tokens ``w1 .. wn``.
KenLM gives the base-10 log-probability of each token given the preceding ones
within the sentence, starting from the sentence-start context ``<s>``, and of the
end-of-sentence token ``</s>``::

    log10 P(S) = sum_{i=1..n} log10 P(wi | <s> w1 .. w(i-1))  +  log10 P(</s> | <s> w1 .. wn)
    perplexity(S) = 10 ** ( -log10 P(S) / (n + 1) )

(context truncated to the model's order minus one).  ``</s>`` counts as a token,
so the denominator is ``n + 1``.  A word outside the model's vocabulary (OOV) is
scored as KenLM's ``<unk>`` token, with the probability lmplz gave ``<unk>``, and
counts in ``n`` like any other token; `SentenceScore.oov` says how many there were.
This is KenLM's own "perplexity including OOVs" (``kenlm.Model.perplexity``).

Which sentences are dropped is decided by a method (`plexity_plugins.scoring.methods`):
``region`` (default) keeps the best contiguous run of blocks, ``regions`` the best runs
(for the tag remover's text), ``trim`` drops junk at the edges of already-extracted text,
``sentences`` is the paper's per-sentence rule.  The threshold is the model's calibrated
default unless one is given: its ``threshold`` for ``region``, ``regions`` and
``sentences``, its ``threshold_extracted`` for ``trim``.

Text in another language than the model's (see `plexity_plugins.text.language`) is passed
through unfiltered and flagged, because an English model scores every sentence of,
say, a German page as boilerplate.

A document's perplexity (`PerplexityScorer.document_perplexity`, `DocumentScore`) pools its
lines the same way: ``10 ** (-sum(log10 P(line)) / sum(tokens(line) + 1))``; for a CCNet
model the whole normalised document is one line, as in cc_net and datatrove.
"""

from __future__ import annotations

import codecs
import math
import numbers
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from . import methods
from .from_pyplexity import keyword_hints, pyplexity_methods
from ..io.decoding import unlabelled_encoding, utf16_by_its_nuls
from ..runtime import native
from ..text.language import language_code, other_language
from .models import (ModelInfo, check_tokenizer, file_versions, get_tokenizer, load_kenlm, load_native, model_argument,
                     resolve)
from ..errors import ModelError, not_text_error
from ..text.sentences import DEFAULT_MAX_CHARS, split_sentences, split_with_blocks
from ..runtime.keywords import suggests_keywords

_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Line breaks other than \n (and \r\n, kept as it is), as Python's str.splitlines knows them: a
# block ends at each, as at \n (one character for one: offsets hold).  Not for CCNet models
# (keep_nul), whose normaliser is cc_net's own.
_LINE_BREAK_CHARS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"\r(?!\n)|[{_LINE_BREAK_CHARS[1:]}]")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def checked_threshold(value) -> float:
    """`value` as a float if it is a positive perplexity, else ValueError (a string, a bool, NaN, 0 ...).  (A numpy
    number, a threshold swept with `np.arange` or `np.linspace`, was kept as it was: JSON cannot write it, and a
    datatrove run stopped with a traceback, "Object of type int64 is not JSON serializable", recording its
    settings; a document's `plexity_threshold` held it.)"""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"threshold must be a positive perplexity (a number), got {value!r}")
    return float(value)


@dataclass(slots=True)
class SentenceScore:
    """One scored sentence: ``text == source[start:end]``.  (Not frozen: a frozen
    dataclass takes four times as long to create, and `clean` creates one per dropped
    sentence.)"""

    start: int
    end: int
    text: str
    perplexity: float
    tokens: int
    oov: int | None = None  # None where not computed (`clean` leaves it out: see `score`)
    reason: str | None = None  # why `clean` dropped it


def perplexity_of(logprob: float, tokens: int) -> float:
    """Perplexity of a sentence from its log10 P and token count (``</s>`` counts: n + 1)."""
    return 10.0 ** (-logprob / (tokens + 1))


@dataclass
class CleanResult:
    """What `PerplexityScorer.clean` kept and dropped.

    The decision, sentence by sentence (all lists in sentence order, empty when the text
    was passed through unscored):

    - `source`: the text the spans index into (the input after `sanitize`);
    - `spans`: ``(start, end)`` of each sentence in `source`;
    - `token_counts`: tokens of each sentence (without ``</s>``);
    - `blocks`: the block (line) number of each sentence;
    - `keep`: whether each sentence was kept;
    - `perplexities`: the perplexity of each sentence.

    These are the scorer's own lists, handed over without copying: a pipeline that only
    counts pays nothing for them.  `dropped` (one `SentenceScore` per dropped sentence,
    with its text and reason) is built on first access; `dropped_perplexities` gives
    their perplexities alone, cheaply.
    """

    text: str
    threshold: float
    method: str = methods.DEFAULT_METHOD
    sentences_kept: int = 0
    sentences_dropped: int = 0
    chars_kept: int = 0
    chars_dropped: int = 0
    perplexities: list[float] = field(default_factory=list)  # every sentence, in order
    replaced_chars: int = 0  # invalid UTF-8 bytes, NULs and lone surrogates replaced
    # Why the text was passed through unfiltered, e.g. "language:de"; None if it was filtered.
    passthrough: str | None = None
    # The whole text's perplexity (`PerplexityScorer.document_perplexity`); None if passed through or empty.
    document_perplexity: float | None = None
    model: str | None = None  # the model that scored it (a language -> model map picks one per text)
    source: str = field(default="", repr=False)
    spans: list[tuple[int, int]] = field(default_factory=list, repr=False)
    token_counts: list[int] = field(default_factory=list, repr=False)
    blocks: list[int] = field(default_factory=list, repr=False)
    keep: list[bool] = field(default_factory=list, repr=False)
    reason: str | None = None  # why the method drops a sentence (`methods.REASONS`)
    _dropped: list[SentenceScore] | None = field(default=None, repr=False, compare=False)

    @property
    def sentences(self) -> int:
        return self.sentences_kept + self.sentences_dropped

    @property
    def dropped(self) -> list[SentenceScore]:
        """The dropped sentences, in order (OOV counts are not computed: see `score`)."""
        if self._dropped is None:
            text, ppl, counts, reason = self.source, self.perplexities, self.token_counts, self.reason
            self._dropped = [SentenceScore(a, b, text[a:b], ppl[i], counts[i], None, reason)
                             for i, (a, b) in enumerate(self.spans) if not self.keep[i]]
        return self._dropped

    @property
    def dropped_perplexities(self) -> list[float]:
        """The perplexity of each dropped sentence, in order."""
        return [p for p, kept in zip(self.perplexities, self.keep) if not kept]


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # (UTF-32 LE's BOM starts as UTF-16 LE's)


def text_codec(raw: bytes) -> str:
    """The codec of a text file's bytes: its byte-order mark's; else UTF-16 when every other byte
    of its start is NUL (`io.decoding.utf16_by_its_nuls`, as a page's); else UTF-8."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return codec
    return utf16_by_its_nuls(raw) or "utf-8"


@dataclass(frozen=True)
class DocumentScore:
    """A document's perplexity, pooled over its lines like cc_net's ``DocLM``::

        perplexity = 10 ** ( -sum(log10 P(line)) / sum(tokens(line) + 1) )

    (each line scored from ``<s>`` to ``</s>``, which counts as a token).  `lines` lines,
    `tokens` the denominator; `perplexity` is None for a document without lines."""

    perplexity: float | None
    logprob: float
    tokens: int
    lines: int

    @classmethod
    def pool(cls, logprobs: list[float], counts: list[int]) -> "DocumentScore":
        tokens = sum(counts) + len(counts)
        logprob = sum(logprobs)
        return cls(10.0 ** (-logprob / tokens) if tokens else None, logprob, tokens, len(counts))


def passthrough_result(text: str, threshold: float | None, method: str, replaced: int, why: str) -> CleanResult:
    """The result for text passed through unfiltered (`why`, e.g. "language:de")."""
    stripped = text.strip()
    return CleanResult(text=stripped, threshold=threshold, method=method, chars_kept=len(stripped),
                       replaced_chars=replaced, passthrough=why)


def sanitize(text: str | bytes, keep_nul: bool = False) -> tuple[str, int]:
    """Text safe to split and score, and how many characters had to be replaced.

    Bytes are decoded as UTF-8, or as UTF-16/32 when `text_codec` finds so (invalid sequences
    become U+FFFD); bytes that are not UTF-8, none of them part of a UTF-8 character, of Latin-script
    text, as windows-1252, as a page that declares no charset is read (`io.decoding.unlabelled_encoding`:
    a Latin-1 text file's every "é" was a U+FFFD); NUL becomes a space (unless `keep_nul`: CCNet's
    normaliser deletes it), lone surrogates U+FFFD, and the line breaks str.splitlines knows besides \n and \r\n (a lone
    \r, U+2028 ...) \n, where a block ends (not with `keep_nul`); so a `str` input keeps its
    length and offsets.
    """
    replaced = 0
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        codec = text_codec(raw)
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError:
            if codec == "utf-8":  # (a text file has no charset to declare: the bytes decide, as an unlabelled page's)
                codec = unlabelled_encoding(raw)
            text = raw.decode(codec, "replace")
            replaced += text.count("\ufffd") - raw.decode(codec, "ignore").count("\ufffd")
    elif not isinstance(text, str):
        raise not_text_error(text)
    if not keep_nul and "\x00" in text:
        replaced += text.count("\x00")
        text = text.replace("\x00", " ")
    if not keep_nul and any(c in text for c in _LINE_BREAK_CHARS):  # (a scan each: 100 times a regex's speed)
        text = _LINE_BREAK.sub("\n", text)
    if text.isascii():  # (a flag lookup in CPython: most web text needs no further check)
        return text, replaced
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text, n = _SURROGATE.subn("\ufffd", text)
        replaced += n
    return text, replaced


def _join_kept(text: str, spans: list[tuple[int, int]], keep: list[bool]) -> str:
    """Kept sentences verbatim; between two of them the original whitespace (or nothing) if
    they were neighbours, else the strongest break (paragraph, line, space) in between.

    Neighbours are copied as one slice of `text` (a run), not sentence by sentence: on a
    50 MB text the pieces of a per-sentence join took more memory than the text itself."""
    out: list[str] = []
    prev_index = -1
    run_start = run_end = 0  # the run of kept neighbours being built: text[run_start:run_end]
    for i, (start, end) in enumerate(spans):
        if not keep[i]:
            continue
        if prev_index >= 0:
            gap = text[run_end:start]
            if prev_index == i - 1 and (not gap or gap.isspace()):  # (no gap: a cut inside a long run)
                run_end, prev_index = end, i
                continue
            out.append(text[run_start:run_end])
            if _PARAGRAPH_BREAK.search(gap):
                out.append("\n\n")
            elif "\n" in gap:
                out.append("\n")
            else:
                out.append(" ")
        run_start, run_end, prev_index = start, end, i
    if prev_index >= 0:
        out.append(text[run_start:run_end])
    return "".join(out)


# A page's own "<ppl" or "</ppl": written "&lt;ppl", so that every marker in annotated text is ours.  (A page holding
# '</ppl> <ppl score="1.0">' ended its marker early and opened one of its choosing: a reader of the markers kept
# its dropped sentences.)
_OWN_MARKER = re.compile(r"<(?=/?ppl)", re.IGNORECASE)


def _annotate(text: str, spans: list[tuple[int, int]], keep: list[bool], ppl: list[float]) -> str:
    """The whole text, with each would-be-dropped sentence wrapped in <ppl score="..."> (the text's own ``<ppl``
    and ``</ppl`` written ``&lt;ppl``, ``&lt;/ppl``)."""
    out: list[str] = []
    pos = 0
    own = (lambda piece: _OWN_MARKER.sub("&lt;", piece)) if _OWN_MARKER.search(text) else (lambda piece: piece)
    for (start, end), kept, value in zip(spans, keep, ppl):
        if kept:
            continue
        out.append(own(text[pos:start]))
        out.append(f'<ppl score="{value:.1f}">{own(text[start:end])}</ppl>')
        pos = end
    out.append(own(text[pos:]))
    return "".join(out)


@pyplexity_methods  # (scorer.compute_sentence(s), a script ported from pyplexity: told .perplexity(s))
@suggests_keywords(hints=keyword_hints())
class PerplexityScorer:
    """Scores sentences with a KenLM model and removes the high-perplexity ones.

    Args:
        model: model name, path, or None for the embedded default (see `plexity models`).
        threshold: perplexity above which text counts as boilerplate; None = the model's
            calibrated default for the method (stored in its metadata).
        method: "region" (default), "regions" (for the tag remover's text: several content
            runs), "trim" (for text a main-content extractor produced) or "sentences" (the
            paper's per-sentence rule); see `plexity_plugins.scoring.methods`.
        max_sentence_chars: longer "sentences" (text without sentence punctuation) are
            cut at whitespace into pieces of at most this many characters.
        allow_tokenizer_mismatch: use a model built with another tokenizer version
            (with a warning) instead of refusing it.
        language_check: pass text through unfiltered (``CleanResult.passthrough``) when it
            is confidently in another language than the model's (``ModelInfo.language``).

    The KenLM model is opened on first use, memory-mapped, so a scorer pickles cheaply
    and worker processes share the model's pages.
    """

    def __init__(
        self,
        model: str | PathLike | None = None,
        threshold: float | None = None,
        method: str = methods.DEFAULT_METHOD,
        max_sentence_chars: int = DEFAULT_MAX_CHARS,
        allow_tokenizer_mismatch: bool = False,
        language_check: bool = True,
    ):
        if isinstance(model, Mapping):  # (as datatrove's and Scrapy's model settings take one)
            raise TypeError("a language -> model map is cleaned by "
                            "plexity_plugins.scoring.multilingual.LanguageModels(models), not by PerplexityScorer")
        for name, value in (("allow_tokenizer_mismatch", allow_tokenizer_mismatch), ("language_check", language_check)):
            if not isinstance(value, bool):  # ("no" from a config file is true)
                raise ValueError(f"{name} must be True or False, got {value!r}")
        self.info: ModelInfo = resolve(model)
        check_tokenizer(self.info, allow_tokenizer_mismatch)
        self.tokenizer = get_tokenizer(self.info)  # the model's own (`plexity_plugins.text.model_tokenizers`)
        if threshold is not None:
            threshold = checked_threshold(threshold)
        if not (isinstance(max_sentence_chars, numbers.Integral) and not isinstance(max_sentence_chars, bool)
                and max_sentence_chars >= 1):  # (np.int64(500) too, a sweep's: taken as Python's int below)
            raise ValueError(f"max_sentence_chars must be a positive integer, got {max_sentence_chars!r}")
        max_sentence_chars = int(max_sentence_chars)
        if method not in methods.METHODS:
            raise ValueError(f"unknown method {method!r}: choose one of {', '.join(methods.METHODS)}")
        self.method = method
        self._threshold = threshold
        self.max_sentence_chars = max_sentence_chars
        self.language_check = language_check and bool(self.info.language)
        self._lm = None
        self._native_lm = None  # False once the compiled path could not open the model

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_lm"] = state["_native_lm"] = None  # reopened lazily in the receiving process
        state["_model_files"] = file_versions(self.info)  # (a model rebuilt under its path pickles differently)
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.pop("_model_files", None)
        self.__dict__.update(state)

    @property
    def model_name(self) -> str:
        return self.info.name

    @property
    def model_argument(self) -> str:
        """What --model takes for this model: its name where the name finds it, else its folder (a model given by
        its path: `plexity calibrate --model NAME` would not find it)."""
        try:
            if not self.info.path or resolve(self.info.name).path == self.info.path:  # (the embedded model too)
                return self.info.name
        except ModelError:  # (no model of that name)
            pass
        return model_argument(Path(self.info.path).parent, self.info.name)

    @property
    def lm(self):
        if self._lm is None:
            self._lm = load_kenlm(self.info)
        return self._lm

    @property
    def threshold(self) -> float:
        if self._threshold is not None:
            return self._threshold
        value = self.info.threshold
        if self.method == "trim" and self.info.threshold_extracted is not None:
            value = self.info.threshold_extracted
        if value is None:
            raise ModelError(
                f"model '{self.info.name}' has no default threshold in its metadata: give a threshold "
                f"(threshold=..., --threshold, PLEXITY_THRESHOLD), or calibrate it on clean text with "
                f"`plexity calibrate --model {shlex.quote(self.model_argument)} CLEAN_TEXT --write`"
            )
        return float(value)

    # -- scoring -------------------------------------------------------------------

    def open(self) -> "PerplexityScorer":
        """Open now what `clean` would open on first use: the model as the scoring path
        uses it (the compiled model when the compiled path is on, else the kenlm module's)
        and, with `language_check`, the language identifier.  Warm-ups (a Scrapy crawl's
        start, the web server's first request) call this; returns the scorer."""
        if self._compiled_lm() is None:
            self.lm
        if self.language_check:
            from ..text.language import identifier

            identifier()
        return self

    def perplexity(self, sentence: str) -> float:
        """Perplexity of `sentence` taken as one sentence (no splitting); ValueError for a text
        without any (empty or whitespace: `score` gives no sentence for it, and
        `document_perplexity` None)."""
        text = sanitize(sentence)[0]
        if not text.strip():  # (its "perplexity" would be the end-of-sentence token's alone)
            raise ValueError("the text is empty or only whitespace: no sentence to score")
        (logprob,), (n,) = self._logprobs(text, [(0, len(text))])
        return perplexity_of(logprob, n)

    def _oov(self, line: str) -> int:
        """OOV tokens of one tokenised sentence (KenLM's full_scores; its probabilities are
        not summed here: `_logprobs` is the one summation)."""
        return sum(is_oov for _prob, _ngram_length, is_oov in self.lm.full_scores(line, bos=True, eos=True))

    def score(self, text: str | bytes) -> list[SentenceScore]:
        """Every sentence of `text` with its span, perplexity, token and OOV counts.

        The perplexities are exactly `clean`'s (the same summation, `_logprobs`), so
        thresholds calibrated on `score` (``plexity calibrate``) apply to `clean` as such.
        """
        text, _ = sanitize(text)
        spans = split_sentences(text, self.max_sentence_chars)
        logprobs, counts = self._logprobs(text, spans)
        lines = self.tokenizer.span_lines(text, spans)
        return [SentenceScore(a, b, text[a:b], perplexity_of(lp, n), n, self._oov(line))
                for (a, b), lp, n, line in zip(spans, logprobs, counts, lines)]

    def _compiled_lm(self):
        """The model opened by the compiled path, or None where that path is not used."""
        if self._native_lm is None:
            # (it tokenises with plexity-tok-1 only: other tokenizers score through the kenlm module)
            self._native_lm = load_native(self.info) if native.ENABLED and self.tokenizer.compiled else False
        return self._native_lm or None

    def _logprobs(self, text: str, spans: list[tuple[int, int]]) -> tuple[list[float], list[int]]:
        """log10 P and token count of each sentence span: the one summation of log
        probabilities behind `score`, `perplexity` and `clean` (single precision, as KenLM
        sums: `kenlm.Model.score`, or its compiled equal)."""
        compiled = self._compiled_lm()
        if compiled is not None:
            return native.score_spans(compiled, text, spans)
        score, count = self.lm.score, self.tokenizer.count
        lines = self.tokenizer.span_lines(text, spans)
        return [score(line, bos=True, eos=True) for line in lines], [count(line) for line in lines]

    def document_score(self, text: str | bytes) -> DocumentScore:
        """The perplexity of a whole document, pooled over its lines (see `DocumentScore`)."""
        text, _ = sanitize(text, keep_nul=self.tokenizer.whole_document)
        if self.tokenizer.whole_document:
            lines = self.tokenizer.document_lines(text)
            logprobs = [self.lm.score(line, bos=True, eos=True) for line in lines]
            counts = [self.tokenizer.count(line) for line in lines]
        else:
            logprobs, counts = self._logprobs(text, split_sentences(text, self.max_sentence_chars))
        return DocumentScore.pool(logprobs, counts)

    def document_perplexity(self, text: str | bytes) -> float | None:
        """``10 ** (-sum(log10 P(line)) / sum(tokens(line) + 1))`` over the document's lines; None
        for a document without any (see `DocumentScore`).  For a CCNet model this is cc_net's
        and datatrove's ``KenlmModel.get_perplexity`` (before their rounding to 0.1)."""
        return self.document_score(text).perplexity

    def clean(self, text: str | bytes, threshold: float | None = None, annotate: bool = False,
              language: str | None = None) -> CleanResult:
        """Remove the boilerplate sentences of `text` (by the scorer's method).

        `text` is text: an HTML page is cleaned as text, markup and all; extract it first
        (`plexity_plugins.extractors.html_to_text_learned`, the extractor ``plexity clean`` uses,
        then the method ``"trim"``).

        Kept sentences come out verbatim, with the original whitespace between
        neighbours and line/paragraph breaks preserved.  With `annotate=True` nothing is
        removed: each would-be-dropped sentence is wrapped in ``<ppl score="...">``.
        `language`: the text's language if already known (e.g. datatrove's ``LanguageFilter``
        set it); text in another language than the model's is passed through.
        """
        # (bench/throughput.py times these steps one by one: keep them in this order)
        limit = self._limit(threshold)
        source = text
        text, replaced = sanitize(text)
        passed = self._passthrough(text, limit, replaced, language)
        if passed is not None:
            return passed
        spans, blocks = split_with_blocks(text, self.max_sentence_chars)
        logprobs, counts = self._logprobs(text, spans)
        result = self._decide(text, replaced, limit, spans, blocks, logprobs, counts, annotate)
        # The document's perplexity: its sentences' pooled (free), or the whole text as one
        # line for tokenizers whose models were scored that way (CCNet's).
        document = (self.document_score(source) if self.tokenizer.whole_document
                    else DocumentScore.pool(logprobs, counts))
        result.document_perplexity = document.perplexity
        return result

    def _limit(self, threshold: float | None) -> float:
        return checked_threshold(self.threshold if threshold is None else threshold)

    def _passthrough(self, text: str, limit: float, replaced: int, language: str | None = None) -> CleanResult | None:
        """The unfiltered result for text in another language than the model's, else None.
        `language`: the text's language as an upstream step declared it (not detected again)."""
        language = self._other_language(text, language)
        if language is None:
            return None
        return passthrough_result(text, limit, self.method, replaced, f"language:{language}")

    def _other_language(self, text: str, declared: str | None) -> str | None:
        """The text's language if it is not the model's (`declared`: as an upstream step
        labelled it, trusted; else identified), None if it is or the check is off."""
        if not self.language_check:
            return None
        declared = language_code(declared) if declared else None  # (a label naming no language: identified)
        if declared:
            return declared if declared != language_code(self.info.language) else None
        return other_language(text, self.info.language)

    def score_document(self, text: str | bytes, language: str | None = None
                       ) -> tuple[DocumentScore | None, str | None, str | None]:
        """(score, None, model name), or (None, "language:xx", None) for text in another
        language than the model's (as `clean` passes it through)."""
        other = self._other_language(sanitize(text)[0], language)
        if other is not None:
            return None, f"language:{other}", None
        return self.document_score(text), None, self.info.name

    def _decide(self, text: str, replaced: int, limit: float, spans: list[tuple[int, int]], blocks: list[int],
                logprobs: list[float], counts: list[int], annotate: bool) -> CleanResult:
        """Keep or drop each sentence by the scorer's method, and the result."""
        ppl = [10.0 ** (-lp / (n + 1)) for lp, n in zip(logprobs, counts)]  # (`perplexity_of`, inlined: hot)
        if limit == math.inf:  # (every sentence lies below it: the region methods' runs of infinite weights, which
            keep = [True] * len(ppl)  # tie, kept the first line alone: less than any finite threshold kept)
        elif self.method == "sentences":
            keep = methods.keep_sentences(ppl, limit)
        elif self.method == "region":
            keep = methods.keep_region(blocks, logprobs, counts, limit)
        elif self.method == "regions":
            keep = methods.keep_regions(blocks, logprobs, counts, limit)
        else:
            keep = methods.keep_trim(blocks, logprobs, counts, limit)
        n_dropped = keep.count(False)
        chars_dropped = sum(b - a for (a, b), kept in zip(spans, keep) if not kept)
        result = CleanResult(text="", threshold=limit, method=self.method, perplexities=ppl, model=self.info.name,
                             replaced_chars=replaced, sentences_kept=len(spans) - n_dropped,
                             sentences_dropped=n_dropped, chars_kept=sum(b - a for a, b in spans) - chars_dropped,
                             chars_dropped=chars_dropped, source=text, spans=spans, token_counts=counts,
                             blocks=blocks, keep=keep, reason=methods.REASONS[self.method])
        result.text = _annotate(text, spans, keep, ppl) if annotate else _join_kept(text, spans, keep)
        return result
