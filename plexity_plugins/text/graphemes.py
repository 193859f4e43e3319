"""Text cut short for a report, a log line or a stored sample, at a boundary of what a reader sees as one
character: not between a letter and its combining marks (Hindi's vowel signs, Thai's tone marks, an accent
written apart), not after a virama (the half letter of a Devanagari or Bengali conjunct), a zero-width joiner or
a Thai or Lao vowel written before its consonant, and not before an emoji's skin tone or variation selector.
Cutting at a code point alone showed "मंजूरी" cut as "मंज" + "...", the vowel sign of the next letter lost, or
a dangling virama that joins with the "..." after it."""

from __future__ import annotations

import unicodedata

_JOINERS = frozenset("\u200c\u200d")
_LEADING_VOWELS = frozenset("\u0e40\u0e41\u0e42\u0e43\u0e44\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4")  # Thai, Lao


def _inside(text: str, at: int) -> bool:
    """Whether a cut before `text[at]` falls inside what a reader sees as one character."""
    char, before = text[at], text[at - 1]
    return (unicodedata.category(char) in ("Mn", "Mc", "Me") or char in _JOINERS
            or 0xFE00 <= ord(char) <= 0xFE0F or 0x1F3FB <= ord(char) <= 0x1F3FF
            or before in _JOINERS or before in _LEADING_VOWELS or unicodedata.combining(before) == 9)


def prefix(text: str, limit: int) -> str:
    """At most `limit` characters of the start of `text`, ending where a character a reader sees ends (the
    code point cut when a cluster runs on for `limit` characters: nothing else to show)."""
    if len(text) <= limit:
        return text
    cut = limit
    while cut > 0 and _inside(text, cut):
        cut -= 1
    return text[:cut] if cut > 0 else text[:limit]
