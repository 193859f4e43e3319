"""Which sentences to keep, given their perplexities: the filtering methods.

- ``sentences``: the paper's rule: each sentence alone, dropped when its perplexity is
  above the threshold.
- ``region`` (default for plain text): boilerplate comes in runs and so does
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
- ``regions`` (default for the tag remover's text): ``region`` keeps one run, so it loses
  the rest of a listing, of a forum thread or of a service page with several sections.
  ``regions`` keeps the best run and every
  further run (iterated Kadane, never across a run already taken) whose sum is at least
  `REGIONS_FRACTION` of the best one's: an article's comment thread or teaser list scores
  far below the article and still goes, while the items of a listing, all about equally
  good, are all kept.  A block counts against only above the threshold or, if higher, the
  perplexity of the page's median token (`regions_limit`): on a product grid, a catalogue
  or a schedule every block is short and unusual, so with the global threshold alone all
  of them count against; judged against the page itself, its ordinary half does not (if
  the page has any fluent block at all).  On an article the median token lies in the
  paragraphs, below the threshold, and nothing changes.  The median token is not a
  fitted constant: it is the point where half the page's text counts for it.  Pure Python
  (no compiled port): it runs once per document and costs little beside scoring.
- ``trim`` (for text already cut down by a main-content extractor such as
  trafilatura): the extractor has chosen the region; only the leading and trailing
  runs of short blocks above the threshold (bylines, "Read more", credits, share
  prompts) are dropped.  "Above" is relative to the page as well: a block must also
  be over `TRIM_RELATIVE` times the page's median block perplexity.  On a product
  grid, a catalogue, a schedule or a list of specs every block is short and unusual,
  so the median is high and nothing is an outlier: the global threshold alone cut
  such pages to their first lines, or to nothing.

What each method gives on the benchmark pages, and how `REGIONS_FRACTION` was chosen:
docs/quality.md ("How the methods decide").
"""

from __future__ import annotations

import math
import statistics

from ..runtime import native

METHODS = ("region", "regions", "trim", "sentences")
DEFAULT_METHOD = "region"
NEGATIVE_TOKEN_CAP = 10
SHORT_BLOCK_TOKENS = 10  # tokens, counting the end-of-sentence token of each sentence
TRIM_MAX_TOKENS = 20
TRIM_RELATIVE = 2.0  # an edge block must be this far above the page's median block perplexity
# ``regions``: a further run is kept when its sum is at least this fraction of the best run's (the
# smallest at which an article's comment threads and teaser lists stay out: docs/quality.md).
REGIONS_FRACTION = 0.35

REASONS = {
    "sentences": "sentence_perplexity_above_threshold",
    "region": "outside_main_content_region",
    "regions": "outside_main_content_region",  # the same reason: outside the page's main content
    "trim": "edge_block_perplexity_above_threshold",
}


MAIN_CONTENT_EXTRACTORS = ("auto", "dense", "learned", "trafilatura", "fast")


def method_for_page_text() -> str:
    """The method for a page's whole visible text that no extractor has cut down, as a WET
    record (Common Crawl's text of a page) holds it: the tag remover's kind of text, so its
    method (docs/quality.md: tags + ``regions`` against tags + ``region``)."""
    return method_for_extractor("tags")


def method_for_extractor(extractor: str | None) -> str:
    """The method that suits text from `extractor`: the output of a main-content extractor,
    learned, auto, dense, trafilatura or fast, is already the main content: only trim it; the tag remover's text
    (every visible line of a page): find its content regions; plain text: find the region."""
    if extractor in MAIN_CONTENT_EXTRACTORS:
        return "trim"
    return "regions" if extractor == "tags" else "region"


def _blocks(ids: list[int], logprobs: list[float], tokens: list[int]) -> tuple[list[float], list[int]]:
    """Per block: pooled perplexity and token count (sentence-end tokens included)."""
    n_blocks = ids[-1] + 1 if ids else 0
    lp = [0.0] * n_blocks
    count = [0] * n_blocks
    for block, logprob, n in zip(ids, logprobs, tokens):
        lp[block] += logprob
        count[block] += n + 1
    return [10.0 ** (-l / c) for l, c in zip(lp, count)], count


def _block_weights(ppl: list[float], count: list[int], limit: float) -> list[float]:
    """Each block's weight for ``region`` and ``regions``: tokens x (log10 limit - log10
    perplexity), the token count capped at `NEGATIVE_TOKEN_CAP` for a block above the limit."""
    log_t = math.log10(limit)
    weights = []
    for p, n in zip(ppl, count):
        margin = log_t - math.log10(p)
        weights.append(n * margin if margin > 0 else min(n, NEGATIVE_TOKEN_CAP) * margin)
    return weights


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
    weights = _block_weights(ppl, count, threshold)
    span = _max_region(weights)
    if span is None:
        return [False] * len(ids)
    first, last = span
    kept_blocks = [first <= b <= last and not (ppl[b] > threshold and count[b] < SHORT_BLOCK_TOKENS)
                   for b in range(len(ppl))]
    return [kept_blocks[block] for block in ids]


def kept_runs(weights: list[float], fraction: float) -> list[tuple[int, int]]:
    """(first, last) block of the best run and of every further run whose sum is at least
    `fraction` of the best one's, in page order.

    The runs are the page's maximal scoring runs: the best run, then the best run on each
    side of it, and so on, never across a run already taken (iterated Kadane; tests/test_decide.py
    holds that definition as the reference).  Every run deeper down on a side scores at most what
    that side's best run scores, so they are exactly the maximal runs scoring at least `fraction`
    of the best.  Found here in one pass (Ruzzo and Tompa's algorithm, 1999): iterated Kadane
    rescans what is left after each run, quadratic on a page of many small runs (a hostile page
    of 500,000 alternating blocks took most of an hour)."""
    runs = maximal_runs(weights)
    if not runs:
        return []
    best = max(total for _, _, total in runs)
    return [(first, last) for first, last, total in runs if total >= fraction * best]


def maximal_runs(weights: list[float]) -> list[tuple[int, int, float]]:
    """Every maximal scoring run of `weights` as (first, last, sum), in order: Ruzzo and
    Tompa, "A linear time algorithm for finding all maximal scoring subsequences" (ISMB 1999).

    Left to right, each positive weight opens a run; a run is merged into the nearest run to
    its left that starts at a lower cumulative sum, if that run ends at a lower cumulative sum
    than this one does (the two together score more than either).  Each run keeps a pointer
    to the nearest run on its left starting lower still, so the search skips what cannot
    match: linear time overall.  Leading and trailing zero weights are not part of a run (as
    with `_max_region`)."""
    first_of: list[int] = []
    last_of: list[int] = []
    low: list[float] = []  # cumulative sum before the run's first block
    high: list[float] = []  # cumulative sum after its last block
    left: list[int] = []  # the nearest run to the left with a lower `low`, or -1
    cumulative = 0.0
    for i, w in enumerate(weights):
        if w > 0:
            first, run_low, run_high = i, cumulative, cumulative + w
            while True:
                j = len(low) - 1
                while j >= 0 and low[j] >= run_low:
                    j = left[j]
                if j >= 0 and high[j] < run_high:  # merge runs j..this one into one run
                    first, run_low = first_of[j], low[j]
                    del first_of[j:], last_of[j:], low[j:], high[j:], left[j:]
                    continue
                first_of.append(first)
                last_of.append(i)
                low.append(run_low)
                high.append(run_high)
                left.append(j)
                break
        cumulative += w
    return [(f, l, h - lo) for f, l, lo, h in zip(first_of, last_of, low, high)]


def regions_limit(ppl: list[float], count: list[int], threshold: float) -> float:
    """The perplexity above which a block counts against for ``regions``: the threshold, or
    the perplexity of the page's median token if that is higher (the block holding the
    median token once blocks are sorted by perplexity).  Only on a page with some fluent
    text (a block at or below the threshold): a page of nothing but menus and buttons is
    not judged against itself, it keeps nothing, as with ``region``."""
    if not any(p <= threshold for p in ppl):
        return threshold
    return max(threshold, median_token_perplexity(ppl, count))


def median_token_perplexity(ppl: list[float], count: list[int]) -> float:
    """The perplexity of the block holding the page's median token, blocks sorted by perplexity:
    the level at or below which half of the page's text lies (0.0 for a page without tokens)."""
    half, seen = sum(count) / 2, 0
    for p, n in sorted(zip(ppl, count)):
        seen += n
        if seen >= half:
            return p
    return 0.0


def keep_regions(ids, logprobs, tokens, threshold: float) -> list[bool]:
    """Keep flag of each sentence by the ``regions`` method (pure Python)."""
    ppl, count = _blocks(ids, logprobs, tokens)
    limit = regions_limit(ppl, count, threshold)
    weights = _block_weights(ppl, count, limit)
    kept_blocks = [False] * len(ppl)
    for first, last in kept_runs(weights, REGIONS_FRACTION):
        for b in range(first, last + 1):
            kept_blocks[b] = not (ppl[b] > limit and count[b] < SHORT_BLOCK_TOKENS)
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
