"""The extractors' counting and line collapsing, compiled where `plexity_plugins.runtime.native` is
(the functions ending in ``_python`` are the reference; tests/test_native.py holds the two equal).

They run on every page, on texts of tens of kilobytes (`dense` collapses three readings of a page
and counts their words five times): in Python, splitting a text into its words to count them
costs as much as resiliparse's reading of it.  `find_all` looks for a page's declarations in
its whole HTML.  Whitespace is ``str.split()``'s, lines are split
at ``"\\n"`` only.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Callable

from ..runtime import native

# resiliparse's mark of a list item at the start of a line (``list_bullets=True``): a bullet, or
# an ordered list's number, then a space or the end of the line.
LIST_MARKS = re.compile(r"^(?:•|\d+\.)(?: |$)", re.M)


def lines_python(text: str) -> str:
    """One line per block, whitespace inside a line collapsed, no empty lines."""
    return "\n".join(filter(None, map(" ".join, map(str.split, text.split("\n")))))


def words_python(text: str) -> int:
    """The words of `text` (``len(text.split())``)."""
    return len(text.split())


def nonspace_python(text: str) -> int:
    """The characters of `text` that are not whitespace (``len("".join(text.split()))``)."""
    return len("".join(text.split()))


def find_all_python(text: str, needle: str, limit: int = -1) -> list[int]:
    """Every position where `needle` starts in `text` (overlapping ones too), in order: those
    ``text.find(needle, at + 1)`` gives one after the other; only the first `limit` where `limit`
    is not negative (the search stops there).  (Compiled: glibc's memmem over the page's UTF-8
    form, a few times faster than ``str.find`` on a page.)"""
    found = []
    if limit == 0:
        return found
    at = text.find(needle)
    while at >= 0:
        found.append(at)
        if len(found) == limit:
            break
        at = text.find(needle, at + 1)
    return found


def marked_words_python(marked: str) -> int:
    """The words of a text that carries resiliparse's list marks, the marks not counted."""
    return len(marked.split()) - len(LIST_MARKS.findall(marked))


lines = native.compiled("collapse_lines") or lines_python
words = native.compiled("count_words") or words_python
nonspace = native.compiled("count_nonspace") or nonspace_python
marked_words = native.compiled("count_marked_words") or marked_words_python
find_all = native.compiled("find_all") or find_all_python

# Scripts written without spaces between words: a Chinese or Japanese paragraph, a Thai sentence, is one "word" to
# `words` (a heading of twelve Han characters as short as "Home").  `script_words` counts their words as their
# characters over the characters of an average word: CHARS_PER_HAN_WORD for Han and kana (Chinese words are 1.5 to
# 2 characters long, Japanese ones about 2), CHARS_PER_BRAHMIC_WORD for Thai, Lao, Khmer and Myanmar (code points,
# their vowel and tone marks included: a Thai news sentence of 100 code points holds 20 words).
CHARS_PER_HAN_WORD = 2
CHARS_PER_BRAHMIC_WORD = 5
_HAN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")
_BRAHMIC = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+")


def _runs_extra(text: str, pattern: re.Pattern, size: int) -> int:
    """The words beyond one that each run of `pattern` in `text` holds, at `size` characters a word."""
    return sum(max(0, -(-len(run) // size) - 1) for run in pattern.findall(text))


def han_extra(text: str) -> int:
    """The words beyond one that each run of Han or kana in `text` holds (one a `CHARS_PER_HAN_WORD` characters):
    what a count of ``\\w+`` runs, to which such a run is one word, misses."""
    return 0 if text.isascii() else _runs_extra(text, _HAN, CHARS_PER_HAN_WORD)


def _unspaced_extra(text: str) -> int:
    """The words `words` misses in `text`'s runs of scripts written without spaces (each run counted once there)."""
    if text.isascii():
        return 0
    return _runs_extra(text, _HAN, CHARS_PER_HAN_WORD) + _runs_extra(text, _BRAHMIC, CHARS_PER_BRAHMIC_WORD)


def script_words(text: str) -> int:
    """`words`, a run of a script written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) counted as its
    characters over an average word's (one word for each `CHARS_PER_HAN_WORD` Han or kana characters, each
    `CHARS_PER_BRAHMIC_WORD` Thai, Lao, Khmer or Myanmar code points): a Chinese paragraph has as many words as
    its English translation, about, not one."""
    return words(text) + _unspaced_extra(text)


def script_marked_words(marked: str) -> int:
    """`marked_words`, runs of scripts written without spaces counted as `script_words` counts them."""
    return marked_words(marked) + _unspaced_extra(marked)


def composed(extractor: Callable[..., str]) -> Callable[..., str]:
    """`extractor` returning its text in Unicode's composed form (NFC): a page that spells a
    letter as a base and a combining mark (e.g. Bengali য + ় for য়, e + ◌́ for é) reads as the
    same text as one that spells it whole.  NFC is the form the W3C asks of text on the Web and
    the one trafilatura returns; reference texts are written in it, and searching a corpus for
    a word finds it either way.  (A text already composed is checked, not copied.)"""
    @functools.wraps(extractor)
    def in_composed_form(*args, **kwargs) -> str:
        text = extractor(*args, **kwargs)
        return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)
    return in_composed_form
