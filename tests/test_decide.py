"""The decision methods: ``trim`` (what it drops at the edges of a main-content extractor's text, and
what not) and ``regions`` (several content regions of raw tag text)."""

import math

import pytest

from helpers import executed_lines
from plexity_plugins.scoring import methods

THRESHOLD = 5000.0


def blocks(*spec: tuple[int, float]) -> tuple[list[int], list[float], list[int]]:
    """(ids, logprobs, tokens) of one sentence per block, each (tokens, perplexity) as asked."""
    ids, logprobs, tokens = [], [], []
    for block, (n, ppl) in enumerate(spec):
        ids.append(block)
        tokens.append(n)
        logprobs.append(-(n + 1) * math.log10(ppl))  # pooled over n tokens + the sentence end
    return ids, logprobs, tokens


@pytest.fixture(params=["compiled or reference", "reference"])
def keep_trim(request):
    return methods.keep_trim if request.param == "compiled or reference" else methods.keep_trim_python


def test_short_unusual_lines_at_the_edges_of_prose_are_dropped(keep_trim):
    byline, paragraph, read_more = (4, 40000.0), (60, 300.0), (3, 90000.0)
    kept = keep_trim(*blocks(byline, paragraph, paragraph, paragraph, read_more), THRESHOLD)
    assert kept == [False, True, True, True, False]


def test_a_list_of_short_unusual_items_is_kept_whole(keep_trim):
    # A product grid or a spec sheet: every block is short and far above the threshold,
    # so none stands out from the page: the extractor kept them, and so does trim.
    items = [(5, 30000.0), (4, 60000.0), (6, 45000.0), (5, 52000.0), (3, 80000.0), (5, 38000.0)]
    assert keep_trim(*blocks(*items), THRESHOLD) == [True] * len(items)


def test_a_schedule_after_a_paragraph_is_kept(keep_trim):
    rows = [(13, 31000.0)] * 8
    kept = keep_trim(*blocks((40, 400.0), *rows), THRESHOLD)
    assert all(kept)


def test_an_edge_block_must_stand_out_from_the_page_as_well_as_pass_the_threshold(keep_trim):
    median = 8000.0  # a page of unusual text: its median block is above the threshold
    page = [(30, median)] * 3
    assert keep_trim(*blocks((4, 1.9 * median), *page), THRESHOLD)[0] is True
    assert keep_trim(*blocks((4, 2.1 * median), *page), THRESHOLD)[0] is False


def test_long_blocks_are_never_trimmed(keep_trim):
    long_unusual = (methods.TRIM_MAX_TOKENS, 1e6)
    assert keep_trim(*blocks(long_unusual, (50, 200.0), (50, 200.0)), THRESHOLD) == [True, True, True]


def test_one_junk_line_before_one_paragraph_is_dropped(keep_trim):
    # Of two blocks the lower median is the paragraph's: the junk line still stands out.
    assert keep_trim(*blocks((4, 60000.0), (50, 400.0)), THRESHOLD) == [False, True]


# -- ``regions``: several content regions ------------------------------------------------
#
# Raw tag text of a listing, a forum thread or a service page holds several content runs
# with boilerplate between them; ``region`` keeps only the best one.  ``regions`` keeps the
# best run and every further run worth at least `REGIONS_FRACTION` of it.

MENU_ITEM = (3, 80000.0)  # "Home", "Contact us": short and far above the threshold
PARAGRAPH = (60, 300.0)


def test_a_listing_of_many_medium_regions_is_kept():
    # Each item's snippet is worth less than the junk around it ("Read more", a date, share
    # buttons) costs, so the single best run is one item; every item is about as good, so
    # all of them are kept, and the junk between them is not.
    snippet, junk = (20, 1500.0), [(3, 100000.0)] * 4
    page = [*[MENU_ITEM] * 5]
    for _ in range(6):
        page += [snippet, *junk]
    region = methods.keep_region_python(*blocks(*page), THRESHOLD)
    regions = methods.keep_regions(*blocks(*page), THRESHOLD)
    snippets = [i for i, b in enumerate(page) if b == snippet]
    assert sum(region) == 1
    assert [i for i, kept in enumerate(regions) if kept] == snippets


def test_a_menu_run_between_two_regions_is_dropped():
    # A second part of the page (a second section, the answers below a question) cut off
    # by a long run of navigation: ``region`` cannot bridge the menu and keeps the first
    # part only; ``regions`` keeps both parts and still drops the menu.
    nav = [(11, 50000.0)] * 12  # "Subscribe to our newsletter for the latest offers", ...
    second = [(50, 400.0)] * 2
    page = [*[PARAGRAPH] * 3, *nav, *second]
    region = methods.keep_region_python(*blocks(*page), THRESHOLD)
    regions = methods.keep_regions(*blocks(*page), THRESHOLD)
    assert region == [True] * 3 + [False] * (len(nav) + len(second))
    assert regions == [True] * 3 + [False] * len(nav) + [True] * len(second)


def test_a_single_article_is_kept_as_region_keeps_it():
    # One article between a header menu and a footer: a short fluent line far from the
    # article ("Thanks for reading!") is a run of its own but far below a fraction of the
    # article's, so it goes, as with ``region``; so does a share prompt inside the article.
    thanks = (8, 900.0)
    share = (4, 60000.0)
    page = [*[MENU_ITEM] * 6, PARAGRAPH, PARAGRAPH, share, PARAGRAPH, *[MENU_ITEM] * 5, thanks, MENU_ITEM]
    region = methods.keep_region_python(*blocks(*page), THRESHOLD)
    assert methods.keep_regions(*blocks(*page), THRESHOLD) == region
    assert [i for i, kept in enumerate(region) if kept] == [6, 7, 9]


def test_a_page_of_unusual_text_is_judged_against_its_own_median_token():
    # A schedule or a product grid under one fluent line: every row is above the threshold,
    # so ``region`` keeps the line alone.  ``regions`` counts a block against only above the
    # perplexity of the page's median token (when that is above the threshold): the rows are
    # the page's ordinary text, and they are kept.
    intro = (6, 1000.0)  # "Opening times for the summer season."
    rows = [(12, 14000.0), (12, 9000.0)] * 4  # "Monday 9:00 - 17:00 Main hall, ground floor"
    page = [(3, 900000.0), intro, *rows, (3, 900000.0)]
    ids, logprobs, tokens = blocks(*page)
    ppl, count = [p for _, p in page], [n + 1 for n, _ in page]
    assert methods.regions_limit(ppl, count, THRESHOLD) == pytest.approx(14000.0)
    assert methods.keep_region_python(ids, logprobs, tokens, THRESHOLD) == [False, True] + [False] * 9
    assert methods.keep_regions(ids, logprobs, tokens, THRESHOLD) == [False, True] + [True] * 8 + [False]


def test_a_page_without_any_fluent_block_is_not_judged_against_itself():
    # Nothing but menus and buttons (an error page, a login wall): the median-token limit
    # would keep its "ordinary" half, so without a block at or below the threshold the
    # threshold stays, and nothing is kept, as with ``region``.
    page = [(9, 105000.0), (3, 23000.0), (3, 47000.0), (2, 40000.0), (1, 233000.0)]
    ids, logprobs, tokens = blocks(*page)
    ppl, count = [p for _, p in page], [n + 1 for n, _ in page]
    assert methods.regions_limit(ppl, count, THRESHOLD) == THRESHOLD
    assert methods.keep_regions(ids, logprobs, tokens, THRESHOLD) == [False] * len(page)


def test_the_median_token_never_lowers_the_threshold():
    ppl, count = [300.0, 400.0, 90000.0], [60, 50, 4]
    assert methods.regions_limit(ppl, count, THRESHOLD) == THRESHOLD
    assert methods.regions_limit([], [], THRESHOLD) == THRESHOLD


def max_region(weights: list[float]) -> tuple[int, int] | None:
    """(first, last) of the maximum-sum run (Kadane), or None if no run is positive."""
    best, best_span, running, start = 0.0, None, 0.0, 0
    for i, w in enumerate(weights):
        running, start = (w, i) if running <= 0 else (running + w, start)
        if running > best:
            best, best_span = running, (start, i)
    return best_span


def runs_by_iterated_kadane(weights: list[float], fraction: float) -> list[tuple[int, int]]:
    """The runs ``regions`` keeps, by their definition (quadratic): the best run, then the best
    run on each side of it and so on, never across a run already taken, while a run scores at
    least `fraction` of the best."""
    best_span = max_region(weights)
    if best_span is None:
        return []
    best = sum(weights[best_span[0]:best_span[1] + 1])
    chosen, pending = [best_span], [(0, best_span[0]), (best_span[1] + 1, len(weights))]
    while pending:
        lo, hi = pending.pop()
        span = max_region(weights[lo:hi])
        if span is None:
            continue
        first, last = span[0] + lo, span[1] + lo
        if sum(weights[first:last + 1]) < fraction * best:
            continue
        chosen.append((first, last))
        pending += [(lo, first), (last + 1, hi)]
    return sorted(chosen)


def test_the_runs_are_those_of_iterated_kadane():
    """`regions` finds its runs in one pass (Ruzzo-Tompa); they are exactly the runs that
    taking the best run and searching again on each side of it would give."""
    import random

    rng = random.Random(19)
    for _ in range(3000):
        n = rng.randint(0, 30)
        if rng.random() < 0.3:  # ties and zero weights: repeated blocks, the median block
            weights = [rng.choice([-3.0, -1.0, 0.0, 1.0, 2.0, 5.0]) for _ in range(n)]
        else:
            weights = [rng.uniform(-10, 10) for _ in range(n)]
        for fraction in (0.0, methods.REGIONS_FRACTION, 1.0):
            assert methods.kept_runs(weights, fraction) == runs_by_iterated_kadane(weights, fraction)


def test_a_page_of_many_small_runs_is_decided_in_linear_work():
    """A hostile page, good and junk blocks alternating, each good one a run of its own:
    searching again after each run (quadratic) would take most of an hour on 500,000 blocks.
    The one-pass search does about the same work per block on ten times the blocks."""
    weights = [5.0, -6.0] * 1_000
    runs = methods.kept_runs(weights, methods.REGIONS_FRACTION)
    assert len(runs) == 1_000 and runs[:2] == [(0, 0), (2, 2)]  # every good block kept, each alone
    small = executed_lines(methods.kept_runs, weights, methods.REGIONS_FRACTION)
    large = executed_lines(methods.kept_runs, weights * 10, methods.REGIONS_FRACTION)
    assert large < 11 * small  # (quadratic: 100 times)
