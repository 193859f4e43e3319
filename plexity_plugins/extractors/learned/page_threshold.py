"""The page's threshold: how probable a block must be, on this page, to be kept.

The block forest ranks a page's blocks better than it calibrates them from one kind of page to
another: on a catalogue or a listing every item may score 0.2 to 0.4 and the menus 0.05, on an
article the comments may score 0.55.  Knowing the gold, the best threshold of each page would
raise the block F1 of WCXB's halves from 0.845 to 0.909.  So a second small forest (regression,
trained by scripts/reader_model/build.py) reads the page's evidence and how the forest's
probabilities spread over its words, and gives the page its threshold.

Its evidence (`THRESHOLD_FEATURES`): the block features that are the page's own (the same in every
row: `PAGE_EVIDENCE`), then the spread of the block probabilities (`SPREAD`): their maximum,
their mean and their mean over the page's words, the probability reached at 5 % to 70 % of the
page's words taken from the most probable down, and the share of the page's words at or above
0.2 to 0.7.  Its answer is held within `LOWEST` and `HIGHEST`.

It is trained on pages read by block forests that never saw their source (the left-out forests of
the build), since that is how the shipped forest meets a new site.
"""

from __future__ import annotations

from operator import mul

from .features import FEATURES
from .forest import Forest as _TreeForest

PAGE_EVIDENCE = ("page_words", "page_blocks", "page_link_share", "page_long_blocks", "best_share", "declares_item",
                 "region50_share", "region80_share", "region95_share", "page_prose_share", "top_group_share",
                 "top_group_link_share", "og_kind") + tuple(
    name for name in FEATURES if name.startswith(("schema_", "url_", "count_")))
WORD_SHARES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7)
LEVELS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
SPREAD = (("p_max", "p_mean", "p_word_mean") + tuple(f"p_at_{round(100 * s)}_words" for s in WORD_SHARES)
          + tuple(f"words_at_{round(100 * t)}" for t in LEVELS))
THRESHOLD_FEATURES = PAGE_EVIDENCE + SPREAD
LOWEST, HIGHEST = 0.15, 0.85

EVIDENCE_COLUMNS = tuple(FEATURES.index(name) for name in PAGE_EVIDENCE)  # (their columns in a block's row)


def threshold_row(first_row, probabilities: list[float], words: list[int]) -> list[float]:
    """The row of `THRESHOLD_FEATURES` of a page: `first_row` is its first block's row of
    `FEATURES` (any block's: these columns are the page's), `probabilities` and `words` every
    block's."""
    total = max(1.0, float(sum(words)))
    order = sorted(range(len(probabilities)), key=probabilities.__getitem__, reverse=True)
    # One walk down the blocks, the most probable first: where the words reached pass each share,
    # the probability there; where the probability falls under each level, the words above it.
    at_share: list[float] = []
    at_level = [0.0] * len(LEVELS)
    level = len(LEVELS) - 1  # (the highest first)
    running = 0.0
    for i in order:
        p = probabilities[i]
        while level >= 0 and p < LEVELS[level]:
            at_level[level] = running / total
            level -= 1
        running += words[i]
        while len(at_share) < len(WORD_SHARES) and running / total >= WORD_SHARES[len(at_share)]:
            at_share.append(p)
    while level >= 0:
        at_level[level] = running / total
        level -= 1
    at_share += [probabilities[order[-1]]] * (len(WORD_SHARES) - len(at_share))
    spread = [probabilities[order[0]], sum(probabilities) / len(probabilities),
              sum(map(mul, probabilities, words)) / total]
    return [first_row[c] for c in EVIDENCE_COLUMNS] + spread + at_share + at_level


class PageThreshold:
    """The threshold forest of a reader's JSON (its ``page_threshold``: a `forest.py` forest
    whose features are `THRESHOLD_FEATURES`)."""

    def __init__(self, spec: dict):
        if list(spec["features"]) != list(THRESHOLD_FEATURES):
            raise ValueError("the page threshold was trained on other page features than this version computes")
        self._forest = _TreeForest(spec)
        self.lowest = float(spec.get("lowest", LOWEST))
        self.highest = float(spec.get("highest", HIGHEST))

    def of(self, first_row, probabilities: list[float], words: list[int]) -> float:
        """The page's threshold (see `threshold_row` for the arguments)."""
        return self.at(threshold_row(first_row, probabilities, words))

    def at(self, row: list[float]) -> float:
        """The threshold of the page whose `threshold_row` is `row`."""
        return min(self.highest, max(self.lowest, self._forest.score(row)))
