"""Properties of the sentence splitter and of the keep/drop decision, on inputs hypothesis makes up.

The splitter (`plexity_plugins.text.sentences`): never raises; its spans are in order, never
overlap, never cross a newline, are whitespace-trimmed and at most `max_chars` long, and
together they hold every character of the text but whitespace (and control characters at a
sentence's edge); block numbers start at 0 and go up
by one exactly where a newline separates two sentences.  The compiled splitter gives the
pure-Python one's spans.

The decision (`plexity_plugins.scoring.methods`): on any sequence of sentences (blocks, log10
probabilities, token counts) and any threshold, the compiled ``region`` and ``trim`` give the
Python reference's flags, one per sentence, the same for every sentence of a block.

Bounded (``max_examples``), no deadline (a loaded CI machine), and fast (a few seconds).
"""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plexity_plugins.runtime import native
from plexity_plugins.scoring import methods
from plexity_plugins.text.sentences import block_ids, split_sentences_python, split_with_blocks

compiled = pytest.mark.skipif(not native.ENABLED and bool(os.environ.get("PLEXITY_PURE_PYTHON")),
                              reason="PLEXITY_PURE_PYTHON is set: the compiled path is off on purpose")
quick = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text with what breaks splitters: newlines and other line and space characters, sentence
# punctuation, non-ASCII letters, combining marks, CJK, emoji, control characters.
TRICKY = list("\n\r\t \u00a0\u2028\u2029\u0085\x0b\x0c.!?…。;:\"'()") + \
    ["Mr. ", "e.g. ", "U.S.", "3.14", "...", "?!", "\u0301", "é", "ß", "Σ", "日本語", "😀", "\x00", "\x1c"]
texts = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(TRICKY),
                           st.sampled_from(["The council met on Tuesday.", "It rained", "A", " b "])),
                 max_size=60).map("".join)
max_chars = st.integers(min_value=1, max_value=120)


def check_spans(text: str, spans: list[tuple[int, int]], blocks: list[int], limit: int) -> None:
    assert len(spans) == len(blocks)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)  # in order, no overlap, not empty
        sentence = text[start:end]
        assert "\n" not in sentence and sentence == sentence.strip() and len(sentence) <= limit
        previous_end = end
    # every character is in a sentence but whitespace and, at a sentence's edge, control
    # characters (BlingFire trims ESC & co. like spaces: "!\x1b" is the sentence "!")
    gaps, position = [], 0
    for start, end in spans:
        gaps.append(text[position:start])
        position = end
    gaps.append(text[position:])
    assert all(c.isspace() or unicodedata.category(c) == "Cc" for gap in gaps for c in gap), gaps
    # blocks: 0, 1, ... rising by one exactly where a newline lies between two sentences
    assert blocks == block_ids(text, spans)
    assert all(b - a in (0, 1) for a, b in zip(blocks, blocks[1:])) and blocks[:1] in ([], [0])


@quick
@given(texts, max_chars)
def test_the_splitter_never_raises_and_its_sentences_cover_the_text_in_order(text, limit):
    spans, blocks = split_with_blocks(text, limit)
    check_spans(text, spans, blocks, limit)


@quick
@given(texts, max_chars)
def test_the_pure_python_splitter_keeps_the_same_promises(text, limit):
    spans = split_sentences_python(text, limit)
    check_spans(text, spans, block_ids(text, spans), limit)


@compiled
@quick
@given(texts, max_chars)
def test_the_compiled_splitter_gives_the_python_spans(text, limit):
    assert native.split(text, limit)[0] == split_sentences_python(text, limit)


@st.composite
def sentences(draw):
    """(block ids, log10 probabilities, token counts) of a made-up page."""
    n = draw(st.integers(min_value=0, max_value=40))
    ids, block = [], 0
    for i in range(n):
        block += i > 0 and draw(st.booleans())
        ids.append(block)
    tokens = draw(st.lists(st.integers(min_value=0, max_value=300), min_size=n, max_size=n))
    # per-token log10 probability from near-certain to absurd (perplexity 1 to 1e12)
    per_token = draw(st.lists(st.floats(min_value=0.0, max_value=12.0, allow_nan=False), min_size=n, max_size=n))
    logprobs = [-(t + 1) * p for t, p in zip(tokens, per_token)]
    return ids, logprobs, tokens


thresholds = st.one_of(st.sampled_from([10.0, 150.0, 1692.4, 5269.3, 1e6]),
                       st.floats(min_value=1.0001, max_value=1e9, allow_nan=False))


def one_flag_per_block(ids: list[int], keep: list[bool]) -> None:
    assert len(keep) == len(ids)
    flags: dict[int, bool] = {}
    for block, flag in zip(ids, keep):
        assert flags.setdefault(block, flag) == flag


@compiled
@quick
@given(sentences(), thresholds)
def test_the_compiled_region_decision_is_the_python_one(page, threshold):
    ids, logprobs, tokens = page
    keep = methods.keep_region(ids, logprobs, tokens, threshold)
    assert keep == methods.keep_region_python(ids, logprobs, tokens, threshold)
    one_flag_per_block(ids, keep)


@compiled
@quick
@given(sentences(), thresholds)
def test_the_compiled_trim_decision_is_the_python_one(page, threshold):
    ids, logprobs, tokens = page
    keep = methods.keep_trim(ids, logprobs, tokens, threshold)
    assert keep == methods.keep_trim_python(ids, logprobs, tokens, threshold)
    one_flag_per_block(ids, keep)
    kept = sorted({block for block, flag in zip(ids, keep) if flag})  # trim cuts edges only: one run
    assert not kept or kept == list(range(kept[0], kept[-1] + 1))


@quick
@given(sentences(), thresholds)
def test_the_regions_decision_flags_every_sentence_and_blocks_whole(page, threshold):
    ids, logprobs, tokens = page
    keep = methods.keep_regions(ids, logprobs, tokens, threshold)
    one_flag_per_block(ids, keep)
