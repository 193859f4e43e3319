"""Sentence splitting with character offsets, offline and fast.

Sentences come from BlingFire's finite-state sentence breaker (a C library shipped in
the `blingfire` wheel: no data to download, ~20 MB/s).  We call its C entry point
directly because the Python wrapper's byte-to-character offset mapping walks every
byte in Python and is four times slower than the splitting itself.

On top of BlingFire:
- every newline is a hard boundary: a line is a block (the tag remover emits one line
  per block element), and a sentence never spans two blocks;
- a piece longer than `max_chars` (text with no sentence punctuation, minified junk) is
  cut at whitespace so that no single "sentence" swallows a whole page.

Spans are `(start, end)` character offsets into the input, with surrounding
whitespace excluded, so `text[start:end]` is the sentence verbatim.
"""

from __future__ import annotations

import ctypes
import functools
import re
import unicodedata

from ..runtime import native

DEFAULT_MAX_CHARS = 1000

_bf_split = native.blingfire_library().TextToSentencesWithOffsets
_bf_split.restype = ctypes.c_int
_NON_SPACE_RUN = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]+")


def _blingfire_spans(text: str) -> list[tuple[int, int]]:
    """BlingFire's sentence spans in character offsets (may span newlines)."""
    data = text.encode("utf-8")
    size = len(data)
    # Buffer sizes as in BlingFire's own wrapper: the C code may write that far.
    capacity = size * 2 + 16
    out = ctypes.create_string_buffer(capacity)
    starts = (ctypes.c_int32 * capacity)()
    ends = (ctypes.c_int32 * capacity)()
    n_out = _bf_split(data, size, out, starts, ends, capacity)
    if n_out <= 0 or n_out > capacity:
        # BlingFire declined (should not happen for valid UTF-8): treat as one piece.
        return [(0, len(text))]
    count = out.raw[:n_out].count(b"\n") + 1
    byte_spans = list(zip(starts[:count], (e + 1 for e in ends[:count])))
    if text.isascii():
        return byte_spans
    # Map byte offsets to character offsets in one left-to-right pass.
    spans = []
    byte_pos = char_pos = 0
    for b_start, b_end in byte_spans:
        char_pos += len(data[byte_pos:b_start].decode("utf-8", "replace"))
        c_start = char_pos
        char_pos += len(data[b_start:b_end].decode("utf-8", "replace"))
        spans.append((c_start, char_pos))
        byte_pos = b_end
    return spans


def _cut_long(text: str, start: int, end: int, max_chars: int, out: list) -> None:
    """Append `text[start:end]` to `out`, cut at whitespace into pieces <= max_chars."""
    if end - start <= max_chars:
        out.append((start, end))
        return
    piece_start = piece_end = None
    for m in _NON_SPACE_RUN.finditer(text, start, end):
        w_start, w_end = m.span()
        if piece_start is None:
            piece_start, piece_end = w_start, w_end
        elif w_end - piece_start > max_chars:
            out.append((piece_start, piece_end))
            piece_start, piece_end = w_start, w_end
        else:
            piece_end = w_end
        # A single "word" longer than max_chars is cut hard.
        while piece_end - piece_start > max_chars:
            out.append((piece_start, piece_start + max_chars))
            piece_start += max_chars
    if piece_start is not None:
        out.append((piece_start, piece_end))


# BlingFire needs ~40 bytes of memory per byte of text at once (its own buffers): a 50 MB page
# would take 2 GB.  Longer texts are split a piece of about this many characters at a time, each
# piece ending at a line break (a hard sentence boundary anyway), which keeps the peak near
# 40 MB.  The spans equal the whole-text split on real text (tests/test_sentences.py); only odd
# whitespace right at a cut (a vertical tab or zero-width space beside the newline) may differ.
# A line longer than a piece stays whole, up to SPLIT_LINE_CHARS (~160 MB of BlingFire's buffers);
# a longer one is cut there, at a space (else anywhere): a sentence that runs across that cut
# becomes two (45 MB on one line took 1.9 GB before).
SPLIT_PIECE_CHARS = 1_000_000
SPLIT_LINE_CHARS = 4_000_000
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?)]}\"'")


def _piece_end(text: str, start: int, limit: int) -> int:
    """Where the piece of `text` starting at `start` ends: after a line break at or before
    start + limit, preferably one between two plain characters; else at the end of the line,
    unless the line runs on past start + SPLIT_LINE_CHARS: then after a space before that, or
    there."""
    end = start + limit
    if end >= len(text):
        return len(text)
    fallback = -1
    nl = text.rfind("\n", start, end)
    for _ in range(1000):  # a plain line break is near; bounded search
        if nl <= start:
            break
        if fallback < 0:
            fallback = nl
        if nl + 1 < len(text) and text[nl - 1] in _PLAIN and text[nl + 1] in _PLAIN:
            return nl + 1
        nl = text.rfind("\n", start, nl)
    if fallback > start:
        return fallback + 1
    longest = start + SPLIT_LINE_CHARS
    nl = text.find("\n", end, longest)  # one line longer than the piece: it stays whole,
    if nl >= 0:
        return nl + 1
    if longest >= len(text):
        return len(text)
    space = text.rfind(" ", longest - SPLIT_LINE_CHARS // 10, longest)  # up to SPLIT_LINE_CHARS: cut at a space
    return space + 1 if space > start else longest


def block_ids(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The block (line) number of each sentence span (spans never cross a newline)."""
    ids: list[int] = []
    block = -1
    prev_end = 0
    for start, end in spans:
        if block < 0 or "\n" in text[prev_end:start]:
            block += 1
        ids.append(block)
        prev_end = end
    return ids


# BlingFire's lexer tries a match at every character, each running on while the text could still match one of its
# patterns, up to ~1,000 characters: in prose a few characters (~0.1 us of CPU a character, English or CJK), but in
# a run of marks, or of letters and marks without a space (`xx?xx?...`, `12&12&...`, dialogue run together), and
# on through spaces and line breaks between marks, hundreds: ~1 us a character, ~3 in short lines of `?`.  It runs
# in the calling process, out of reach of the extraction time limit (the 3 MB text of a page of "&amp;" took 20 s).
# These rules keep it near prose, in a text of BREAKER_CHECK_CHARS or more (a shorter one takes at most ~0.8 s, and
# most pages are not looked at):
# - a line (a hard sentence boundary) longer than MARK_LINE_CHARS of whose non-space characters more than a third
#   are marks is no prose in any script: BlingFire is given its marks as letters (no break inside it then; it is
#   cut as any overlong sentence is, at max_chars); so are those of a stretch of more than MARK_LINE_CHARS marks
#   and spaces, across lines, but for its first and last STRETCH_EDGE characters, where prose ends or begins;
# - a run of more than RUN_CHARS characters without a space is given to BlingFire with a space (U+200B, a space to
#   BlingFire, none to str.isspace, so that spans and trimming are unchanged) every RUN_CHARS characters or
#   fewer, in place of a letter or digit that has RUN_MARGIN letters or digits on each side (CJK prose: between
#   letters, away from any mark a break is decided at), else of one after a letter or digit (BlingFire breaks after
#   a mark, and a character after the space it starts a sentence with would be lost); a window with neither (marks
#   only) is left as it is, for the first rule.  Prose of scripts that space their words has no such run; a CJK
#   paragraph is one, and keeps its sentences (tests/test_sentences.py).
MARK_LINE_CHARS = 100
BREAKER_CHECK_CHARS = 100_000
RUN_CHARS = 64
RUN_MARGIN = 4
STRETCH_EDGE = 3
_LONG_LINE = re.compile(r"[^\n]{%d,}" % (MARK_LINE_CHARS + 1))
_LONG_LINE_AFTER = re.compile(r"\n(%s)" % _LONG_LINE.pattern)
_LONG_RUN = re.compile(r"\S{%d,}" % (RUN_CHARS + 1))
_LONG_RUN_AFTER = re.compile(r"\s(%s)" % _LONG_RUN.pattern)
_ALNUM = r"[^\W_]"
_QUIET_CUT = re.compile(r"(?<=%s{%d})%s(?=%s{%d})" % (_ALNUM, RUN_MARGIN, _ALNUM, _ALNUM, RUN_MARGIN))
_ANY_CUT = re.compile(r"(?<=%s)%s" % (_ALNUM, _ALNUM))
_BREAKER_SPACE = "\u200b"


def _long_spans(text: str, pattern: re.Pattern, after: re.Pattern) -> list[tuple[int, int]]:
    """Where `pattern` (a run of characters of one class) matches in `text`: at its start, and after a separator
    (`after`: the separator, then the run as group 1).  re then looks for a separator, not at each character in
    turn, which took as long again as BlingFire on prose."""
    first = pattern.match(text)
    spans = [first.span()] if first is not None else []
    spans += [match.span(1) for match in after.finditer(text)]
    return spans


@functools.cache
def _marks():
    """A pattern of one punctuation mark or symbol (Unicode's P and S categories, in the BMP; not the combining
    marks of Indic scripts' vowels, which are neither letters nor digits to `re`)."""
    marks = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c))[0] in "PS"]
    return re.compile("[" + "".join(re.escape(c) for c in marks) + "]")


def _run_cuts(text: str) -> list[int]:
    """Where BlingFire is given a space in `text`'s runs of more than RUN_CHARS non-space characters."""
    cuts: list[int] = []
    for start, end in _long_spans(text, _LONG_RUN, _LONG_RUN_AFTER):
        while end - start > RUN_CHARS:
            # a cut in the second half of the window, so that consecutive cuts are RUN_CHARS // 2 apart or more
            low, high = start + RUN_CHARS // 2, start + RUN_CHARS
            cut = _QUIET_CUT.search(text, low, high) or _ANY_CUT.search(text, low, high)
            if cut is None:
                start = high
                continue
            cuts.append(cut.start())
            start = cut.start() + 1
    return cuts


def _mask_mark_lines(text: str) -> str:
    """`text` with the marks of each line longer than MARK_LINE_CHARS that is more than a third marks made letters."""
    parts: list[str] = []
    done = 0
    for start, end in _long_spans(text, _LONG_LINE, _LONG_LINE_AFTER):
        line = text[start:end]
        if 3 * len(_marks().findall(line)) > len("".join(line.split())):  # (its non-space characters; findall:
            parts += [text[done:start], _marks().sub("x", line)]          # half subn's time on a line of prose)
            done = end
    return "".join(parts) + text[done:] if parts else text


@functools.cache
def _mark_stretch():
    """A pattern of a stretch of more than MARK_LINE_CHARS marks and spaces (lines included) from its first mark (re
    then tries at each mark only, not at each space too: a fifth of the time on prose)."""
    marks = _marks().pattern
    return re.compile(r"%s%s\s]{%d,}" % (marks, marks[:-1], MARK_LINE_CHARS))


def _mask_mark_stretches(text: str) -> str:
    """`text` with the marks of each stretch of more than MARK_LINE_CHARS marks and spaces made letters, but for its
    first and last STRETCH_EDGE characters (where the prose before it ends and the prose after it begins)."""
    parts: list[str] = []
    done = 0
    for match in _mark_stretch().finditer(text):
        start, end = match.start() + STRETCH_EDGE, match.end() - STRETCH_EDGE
        masked, marks = _marks().subn("x", text[start:end])
        if marks:
            parts += [text[done:start], masked]
            done = end
    return "".join(parts) + text[done:] if parts else text


def _give_runs_spaces(text: str) -> str:
    """`text` with a space (U+200B) in place of a letter every RUN_CHARS characters or fewer of each longer run."""
    pieces: list[str] = []
    done = 0
    for cut in _run_cuts(text):
        pieces += [text[done:cut], _BREAKER_SPACE]
        done = cut + 1
    return "".join(pieces) + text[done:] if pieces else text


def breaker_text(text: str) -> str:
    """`text` as BlingFire is given it: in a text of `BREAKER_CHECK_CHARS` or more, the marks (punctuation and
    symbols) of each line longer than `MARK_LINE_CHARS` that is more than a third marks made letters, and those of
    each longer stretch of marks and spaces (but at its edges); a space (U+200B) put in place of a letter every
    `RUN_CHARS` characters or fewer of each longer run without a space; the same length and the same spaces and
    lines (to `str.isspace`), so that spans into it are spans into `text`.

    Args:
        text: the text (or piece of text) to split.
    """
    if len(text) < BREAKER_CHECK_CHARS:
        return text
    return _give_runs_spaces(_mask_mark_stretches(_mask_mark_lines(text)))


# Sentence ends BlingFire does not know, followed by a space: the danda and double danda (Hindi, Bengali, Sanskrit,
# Nepali, Marathi ...), Urdu's full stop, Armenian's, Ethiopic's full stop and question mark, Myanmar's section mark,
# Greek's question mark (";" or U+037E after a Greek letter); and the space between two Thai characters, which is
# where Thai, written without full stops, ends a sentence (or a clause).  A line of such text was one sentence (a
# Hindi paragraph, a Thai one: one perplexity for it all); it is cut at each, the mark kept with its sentence.
_MORE_ENDS = re.compile("(?:(?<=[\u0964\u0965\u06d4\u0589\u1362\u1367\u1368\u104b])"
                        "|(?<=[\u0370-\u03ff\u1f00-\u1fff][;\u037e]))\\s+"
                        "|(?<=[\u0e01-\u0e5b])\\s+(?=[\u0e01-\u0e5b])")
# (what one of those ends needs, looked for first: English text with a ";" and an accent or a dash, a third of the
# dev pages, was looked through, a third more of the split's time; one class of characters is the quickest search)
_MORE_ENDS_MARKS = re.compile("[\u0964\u0965\u06d4\u0589\u1362\u1367\u1368\u104b\u0e01-\u0e5b\u037e]")
_GREEK_QUESTION = re.compile("[\u0370-\u03ff\u1f00-\u1fff];")


def _may_have_more_ends(text: str) -> bool:
    return not text.isascii() and (_MORE_ENDS_MARKS.search(text) is not None
                                   or (";" in text and _GREEK_QUESTION.search(text) is not None))


def split_more_ends(text: str, spans: list[tuple[int, int]], blocks: list[int]) -> tuple[list, list]:
    """`spans` (and their `blocks`) cut at the sentence ends of `_MORE_ENDS`, the space between two pieces left out
    of both: Hindi's danda, Urdu's, Armenian's, Ethiopic's and Myanmar's full stops, Greek's question mark, Thai's
    space between sentences.  Text without such a mark (English) is returned as it is, looked at once."""
    if not _may_have_more_ends(text):
        return spans, blocks
    out_spans: list[tuple[int, int]] = []
    out_blocks: list[int] = []
    for (start, end), block in zip(spans, blocks):
        for match in _MORE_ENDS.finditer(text, start, end):
            out_spans.append((start, match.start()))
            out_blocks.append(block)
            start = match.end()
        out_spans.append((start, end))
        out_blocks.append(block)
    return out_spans, out_blocks


def _split_whole(text: str, max_chars: int) -> tuple[list[tuple[int, int]], list[int]]:
    text = breaker_text(text)
    if native.ENABLED:
        return split_more_ends(text, *native.split(text, max_chars))
    spans = split_sentences_python(text, max_chars)
    return split_more_ends(text, spans, block_ids(text, spans))


def split_with_blocks(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[list[tuple[int, int]], list[int]]:
    """`split_sentences` and the block (line) number of each span (`block_ids`)."""
    if len(text) <= SPLIT_PIECE_CHARS:
        return _split_whole(text, max_chars)
    spans: list[tuple[int, int]] = []
    blocks: list[int] = []
    start = 0
    while start < len(text):
        end = _piece_end(text, start, SPLIT_PIECE_CHARS)
        piece_spans, piece_blocks = _split_whole(text[start:end], max_chars)
        if piece_spans:
            # the piece's first block goes on the last one's line, unless a line break comes between
            first = piece_spans[0][0] + start
            base = 0 if not blocks else blocks[-1] + ("\n" in text[spans[-1][1]:first])
            spans += [(a + start, b + start) for a, b in piece_spans]
            blocks += [b + base for b in piece_blocks]
        start = end
    return spans, blocks


def split_sentences(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[tuple[int, int]]:
    """Sentence spans of `text`: newline-bounded, whitespace-trimmed, at most `max_chars` long."""
    return split_with_blocks(text, max_chars)[0]


def split_sentences_python(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[tuple[int, int]]:
    """`split_sentences` in pure Python: the reference for the compiled `native.split`."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    spans: list[tuple[int, int]] = []
    if not text or text.isspace():
        return spans
    append = spans.append
    for start, end in _blingfire_spans(text):
        chunk = text[start:end]
        if "\n" in chunk:
            pieces = [(start + m.start(), start + m.end()) for m in _LINE.finditer(chunk)]
        else:
            pieces = ((start, end),)
        for p_start, p_end in pieces:
            # Trim surrounding whitespace so the span is the sentence verbatim.
            piece = text[p_start:p_end] if len(pieces) > 1 else chunk
            stripped = piece.strip()
            if len(stripped) != len(piece):
                if not stripped:
                    continue
                p_start += len(piece) - len(piece.lstrip())
                p_end = p_start + len(stripped)
            if p_end - p_start <= max_chars:
                append((p_start, p_end))
            else:
                _cut_long(text, p_start, p_end, max_chars, spans)
    return spans
