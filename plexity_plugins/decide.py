"""Which sentences to keep, given their perplexities: the filtering methods.

- ``sentences``: the paper's rule: each sentence alone, dropped when its perplexity is
  above the threshold.
- ``region`` (default for raw page text): boilerplate comes in runs and so does
  content (BoilerNet's observation), so decide per block (a line: the tag remover
  writes one per block element) and keep the single best contiguous run of blocks.
  A block's perplexity pools its sentences (token-weighted, like one long sentence);
  its weight is ``tokens x (log10 T - log10 perplexity)``: long fluent paragraphs
  count a lot, short menu items little, and anything above the threshold T counts
  against.  Above T the token count is capped at `NEGATIVE_TOKEN_CAP`, so that one
  long but unusual paragraph (a list of scores, a string of names) does not split an
  article in two.  The kept region is the maximum-sum run of blocks (Kadane), the
  classic "densest content region" idea (Finn et al.'s body text extraction), with
  perplexity instead of tag counts as the evidence.  Inside the region, short blocks
  (under `SHORT_BLOCK_TOKENS`) above the threshold are dropped too: a "Share on
  Facebook" between two paragraphs is bridged by the region but is still junk.
- ``trim`` (for text already cut down by a main-content extractor such as
  trafilatura): the extractor has chosen the region; only the leading and trailing
  runs of short blocks above the threshold (bylines, "Read more", credits, share
  prompts) are dropped.  "Above" is relative to the page as well: a block must also
  be over `TRIM_RELATIVE` times the page's median block perplexity.  On a product
  grid, a catalogue, a schedule or a list of specs every block is short and unusual,
  so the median is high and nothing is an outlier: the global threshold alone cut
  such pages to their first lines, or to nothing (WCXB, see the README).

Measured on the development pages (see bench/quality.py and the README): ``region``
on raw tag text doubles the precision of keeping everything with small recall loss;
``sentences`` loses recall on every ordinary paragraph that holds names or numbers.
"""

from __future__ import annotations

import math
import statistics

from . import native

METHODS = ("region", "trim", "sentences")
DEFAULT_METHOD = "region"
NEGATIVE_TOKEN_CAP = 10
SHORT_BLOCK_TOKENS = 10  # tokens, counting the end-of-sentence token of each sentence
TRIM_MAX_TOKENS = 20
TRIM_RELATIVE = 2.0  # an edge block must be this far above the page's median block perplexity

REASONS = {
    "sentences": "sentence_perplexity_above_threshold",
    "region": "outside_main_content_region",
    "trim": "edge_block_perplexity_above_threshold",
}


MAIN_CONTENT_EXTRACTORS = ("trafilatura", "fast")


def method_for_extractor(extractor: str | None) -> str:
    """The method that suits text from `extractor` (the output of a main-content extractor,
    trafilatura or fast, is already the main content: only trim it; raw tag text and plain
    text: find the region)."""
    return "trim" if extractor in MAIN_CONTENT_EXTRACTORS else "region"


def _blocks(ids: list[int], logprobs: list[float], tokens: list[int]) -> tuple[list[float], list[int]]:
    """Per block: pooled perplexity and token count (sentence-end tokens included)."""
    n_blocks = ids[-1] + 1 if ids else 0
    lp = [0.0] * n_blocks
    count = [0] * n_blocks
    for block, logprob, n in zip(ids, logprobs, tokens):
        lp[block] += logprob
        count[block] += n + 1
    return [10.0 ** (-l / c) for l, c in zip(lp, count)], count


def _max_region(weights: list[float]) -> tuple[int, int] | None:
    """(first, last) block of the maximum-sum run, or None if no run is positive."""
    best, best_span = 0.0, None
    running, start = 0.0, 0
    for i, w in enumerate(weights):
        if running <= 0:
            running, start = w, i
        else:
            running += w
        if running > best:
            best, best_span = running, (start, i)
    return best_span


def keep_region(ids, logprobs, tokens, threshold: float) -> list[bool]:
    """Keep flag of each sentence by the ``region`` method (compiled when available)."""
    if native.ENABLED:
        return native.keep_region(ids, logprobs, tokens, threshold, NEGATIVE_TOKEN_CAP, SHORT_BLOCK_TOKENS)
    return keep_region_python(ids, logprobs, tokens, threshold)


def keep_trim(ids, logprobs, tokens, threshold: float) -> list[bool]:
    """Keep flag of each sentence by the ``trim`` method (compiled when available)."""
    if native.ENABLED:
        return native.keep_trim(ids, logprobs, tokens, threshold, TRIM_MAX_TOKENS, TRIM_RELATIVE)
    return keep_trim_python(ids, logprobs, tokens, threshold)


def keep_region_python(ids, logprobs, tokens, threshold: float) -> list[bool]:
    """`keep_region` in pure Python: the reference for the compiled one."""
    ppl, count = _blocks(ids, logprobs, tokens)
    log_t = math.log10(threshold)
    weights = []
    for p, n in zip(ppl, count):
        margin = log_t - math.log10(p)
        weights.append(n * margin if margin > 0 else min(n, NEGATIVE_TOKEN_CAP) * margin)
    span = _max_region(weights)
    if span is None:
        return [False] * len(ids)
    first, last = span
    kept_blocks = [first <= b <= last and not (ppl[b] > threshold and count[b] < SHORT_BLOCK_TOKENS)
                   for b in range(len(ppl))]
    return [kept_blocks[block] for block in ids]


def trim_limit(ppl: list[float], threshold: float) -> float:
    """The perplexity above which an edge block is junk: the threshold, or `TRIM_RELATIVE`
    times the page's median block perplexity if that is higher (the lower median: of two
    blocks, a short junk line and a paragraph, the paragraph's)."""
    return max(threshold, TRIM_RELATIVE * statistics.median_low(ppl)) if ppl else threshold


def keep_trim_python(ids, logprobs, tokens, threshold: float) -> list[bool]:
    """`keep_trim` in pure Python: the reference for the compiled one."""
    ppl, count = _blocks(ids, logprobs, tokens)
    limit = trim_limit(ppl, threshold)
    junk = [p > limit and n < TRIM_MAX_TOKENS for p, n in zip(ppl, count)]
    first = 0
    while first < len(junk) and junk[first]:
        first += 1
    last = len(junk) - 1
    while last >= first and junk[last]:
        last -= 1
    return [first <= block <= last for block in ids]


def keep_sentences(perplexities: list[float], threshold: float) -> list[bool]:
    return [p <= threshold for p in perplexities]
