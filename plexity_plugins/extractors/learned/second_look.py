"""The second look: a block the forest dropped is kept after all where its neighbours say so.

The block forest judges each block by its own row of features; what it does not see is what it
made of the blocks around it.  A paragraph scored 0.4 between two kept paragraphs is likely text;
a line scored 0.45 among menus is not.  This is the sequence context that BoilerNet and CRF
labellers use.  So a second forest (trained by scripts/reader_model/build.py) reads, for each
block, `NEIGHBOUR_FEATURES`:

- `CONTEXT`: the block forest's probability of the block and of its two neighbours on each side;
  their means over 2, 5 and 10 blocks around it, each block weighted by its words (+1); the
  highest among the 5 before and among the 5 after, and the lower of the two (the block is
  sandwiched); where it ranks among the page's words taken from the most probable down; its
  probability over the page's highest; how many blocks back and ahead the nearest block at 0.5 or
  above is (at most 20; 99 where there is none);
- `page_threshold.SPREAD`: how the probabilities spread over the page's words;
- the block's own `FEATURES`.

A block the forest scored from `LOOK_FROM` up to the threshold is added where the mean of its two
probabilities (the block forest's and the second forest's) reaches `ADD_AT`.  The second look
may only add: letting it decide every block, or only drop blocks, read some sources worse
(measured leaving one source out, docs/quality.md).  The second forest is trained on pages read
by block forests that never saw their source, as the page threshold is.  The rows are computed in
numpy here (the reference) and compiled where the extension is built (``second_look_rows``,
bit-equal).
"""

from __future__ import annotations

from array import array

from .features import FEATURES
from .forest import Forest as _TreeForest
from .page_threshold import PAGE_EVIDENCE, SPREAD

CONTEXT = ("p", "p_prev1", "p_prev2", "p_next1", "p_next2", "p_around2", "p_around5", "p_around10",
           "p_max_before5", "p_max_after5", "p_sandwich5", "p_rank_words", "p_over_max", "kept_back", "kept_ahead")
NEIGHBOUR_FEATURES = CONTEXT + SPREAD + tuple(FEATURES)
ADD_AT = 0.5
# Blocks the forest scores under this are not looked at again (the second forest would need 0.9 to
# add one): left out, at LightGBM's seeds 7 and 8, looking at them or not read every source the
# same to four decimals.  Most blocks are under it (menus, footers: 55 % of WCXB's, 80 % of the
# articles'), so the second forest reads 4 to 19 % of a page's blocks.
LOOK_FROM = 0.1
KEPT = 0.5  # a neighbour counted as kept (`kept_back`, `kept_ahead`)
FAR = 20  # blocks: nearer kept blocks are counted; none at all is `NONE`
NONE = 99.0


def _around(values, weights, reach: int, itself: bool):
    """Each block's mean of `values` over the blocks within `reach` of it, weighted by `weights`
    (itself included or not); NaN where there is none."""
    import numpy as np

    n = len(values)
    sums = np.concatenate(([0.0], np.cumsum(values * weights)))
    totals = np.concatenate(([0.0], np.cumsum(weights)))
    at = np.arange(n)
    low, high = np.maximum(at - reach, 0), np.minimum(at + reach + 1, n)
    num, den = sums[high] - sums[low], totals[high] - totals[low]
    if not itself:
        num, den = num - values * weights, den - weights
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0.5, num / np.where(den > 0.5, den, 1.0), np.nan)


def context_columns(probabilities, words, spread: list[float]):
    """The `CONTEXT` and `SPREAD` columns of a page's blocks (one row a block, a numpy array);
    `spread` is the SPREAD part of the page's `page_threshold.threshold_row`."""
    # (numpy only here, the reference: the compiled path and the extraction child do without it)
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    p = np.asarray(probabilities, dtype=np.float64)
    weights = np.asarray(words, dtype=np.float64) + 1.0
    n = len(p)
    edge = np.full(2, np.nan)
    around = np.concatenate((edge, p, edge))  # (NaN off the page)
    walls = np.full(5, -np.inf)
    windows = sliding_window_view(np.concatenate((walls, p, walls)), 5)
    max_before, max_after = windows[:n].max(axis=1), windows[6:6 + n].max(axis=1)
    max_before[max_before == -np.inf] = np.nan
    max_after[max_after == -np.inf] = np.nan
    order = np.argsort(-p, kind="stable")
    words_sorted = weights[order] - 1.0
    rank = np.empty(n)
    rank[order] = (np.cumsum(words_sorted) - words_sorted) / max(1.0, float(words_sorted.sum()))
    top = float(p.max())
    at = np.arange(n)
    is_kept = p >= KEPT
    last = np.maximum.accumulate(np.where(is_kept, at, -1))
    last = np.concatenate(([-1], last[:-1]))
    following = np.minimum.accumulate(np.where(is_kept, at, n)[::-1])[::-1]
    following = np.concatenate((following[1:], [n]))
    back = np.where(last >= 0, np.minimum(FAR, at - last), NONE)
    ahead = np.where(following < n, np.minimum(FAR, following - at), NONE)
    columns = [p, around[1:n + 1], around[:n], around[3:n + 3], around[4:n + 4], _around(p, weights, 2, False),
               _around(p, weights, 5, False), _around(p, weights, 10, True), max_before, max_after,
               np.minimum(max_before, max_after),  # (NaN where either is)
               rank, p / top if top > 0 else np.zeros(n), back, ahead]
    columns += [np.full(n, value) for value in spread]
    return np.column_stack(columns)


def neighbour_rows(rows, probabilities, words, threshold_row: list[float], only=None):
    """The rows of `NEIGHBOUR_FEATURES` of a page's blocks: `rows` their rows of `FEATURES` (n ×
    len(FEATURES), any form numpy reads), `threshold_row` the page's `page_threshold.threshold_row`;
    `only`: a mask of the blocks wanted (default all)."""
    import numpy as np

    context = context_columns(probabilities, words, threshold_row[len(PAGE_EVIDENCE):])
    rows = np.asarray(rows, dtype=np.float64)
    if only is not None:
        context, rows = context[only], rows[only]
    return np.hstack([context, rows])


class SecondLook:
    """The second forest of a reader's JSON (its ``second_look``: a `forest.py` forest over
    `NEIGHBOUR_FEATURES`); `compiled`, `compiled_rows`: the compiled forest's class and
    `neighbour_rows`, where they are built."""

    def __init__(self, spec: dict, compiled=None, compiled_rows=None):
        if list(spec["features"]) != list(NEIGHBOUR_FEATURES):
            raise ValueError("the second look was trained on other features than this version computes")
        self.add_at = float(spec.get("add_at", ADD_AT))
        self.look_from = float(spec.get("look_from", LOOK_FROM))
        self._native = compiled(spec) if compiled is not None else None
        self._reference = _TreeForest(spec) if self._native is None else None
        self._rows = compiled_rows if self._native is not None else None

    def added(self, rows, probabilities, words, threshold_row: list[float], threshold: float = 1.0) -> list[bool]:
        """Which blocks the second look adds (see the module's docstring; arguments as
        `neighbour_rows`, `rows` as bytes of `reading.feature_rows` or lists).  Only blocks under
        `threshold` (those not kept already) and at `look_from` or above are looked at."""
        looked = bytes(threshold > p >= self.look_from for p in probabilities)
        added = [False] * len(probabilities)
        if not any(looked):
            return added
        if self._rows is not None and isinstance(rows, (bytes, bytearray, memoryview)):
            width = memoryview(rows).nbytes // (8 * len(probabilities))  # (bytes, whatever the view's format)
            wide = self._rows(rows, width, array("d", probabilities), array("d", words),
                              array("d", threshold_row[len(PAGE_EVIDENCE):]), looked)
            second = self._native.probabilities(wide, len(NEIGHBOUR_FEATURES))
        else:
            import numpy as np

            if isinstance(rows, (bytes, bytearray, memoryview)):
                rows = np.frombuffer(rows, dtype=np.float64).reshape(len(probabilities), -1)
            wide = neighbour_rows(rows, probabilities, words, threshold_row, np.frombuffer(looked, dtype=bool))
            second = (self._native.probabilities(wide, wide.shape[1]) if self._native is not None
                      else self._reference.probabilities(wide.tolist()))
        at = (i for i, look in enumerate(looked) if look)
        for i, q in zip(at, second):
            added[i] = (q + probabilities[i]) / 2 >= self.add_at
        return added
