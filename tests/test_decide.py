"""The ``trim`` method: what it drops at the edges of a main-content extractor's text, and what not."""

import math

import pytest

from plexity_plugins import decide

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
    return decide.keep_trim if request.param == "compiled or reference" else decide.keep_trim_python


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
    long_unusual = (decide.TRIM_MAX_TOKENS, 1e6)
    assert keep_trim(*blocks(long_unusual, (50, 200.0), (50, 200.0)), THRESHOLD) == [True, True, True]


def test_one_junk_line_before_one_paragraph_is_dropped(keep_trim):
    # Of two blocks the lower median is the paragraph's: the junk line still stands out.
    assert keep_trim(*blocks((4, 60000.0), (50, 400.0)), THRESHOLD) == [False, True]
