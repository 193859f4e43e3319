"""Training the learned reader: blocks labelled from a page's known text, a LightGBM forest over
their features, and its JSON form (`forest.py`).

Two kinds of truth label a page's blocks (`label_blocks`):

- the page's **gold text** (a benchmark's cleaned text): a block is the page's text when at least
  `LABEL_SHARE` of its words are matched, in order, to the gold text's words;
- **snippets** (trafilatura's evaluation set): a block holding part of a ``with`` snippet is text,
  one holding part of a ``without`` snippet is not, the others are not labelled.

Each page weighs the same in training, whatever its number of blocks; within a page a block
weighs the square root of its words (a few long paragraphs decide a page's score as much as
many short lines).  LightGBM is needed only here (``pip install lightgbm``); the package predicts
with `forest.Forest`.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field

from .features import CATEGORICAL, FEATURES

LABEL_SHARE = 0.5
WEIGHT_POWER = 0.5
# LightGBM's settings, fixed (seeded and deterministic: the same data give the same forest).  Each
# tree sees half of the features: trees that cannot lean on the same few carry over better to a
# benchmark left out of training (the left-out mean rose at each of five seeds against 0.8 of
# them; docs/training.md).
PARAMS = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 40,
          "feature_fraction": 0.5, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0, "seed": 7,
          "deterministic": True, "force_row_wise": True, "num_threads": 1, "verbose": -1, "cat_smooth": 10,
          "max_cat_to_onehot": 8, "min_sum_hessian_in_leaf": 1e-4}
TREES = 100
# A block is text when the forest gives it this probability or more.  The build also reads each
# left-out source at each of `THRESHOLDS` (docs/figures/reader-left-out.md): their mean is flat from
# 0.4 to 0.55, within what LightGBM's seed moves it.
THRESHOLD = 0.5
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


@dataclass
class Example:
    """One page's blocks for training: feature rows, labels (1 text, 0 not, -1 unknown), words."""

    rows: list[list[float]]
    labels: list[int]
    words: list[int]
    weight: float = 1.0  # the page's weight (its source's share)
    texts: list[str] = field(default_factory=list)
    declared: list[str] = field(default_factory=list)  # the page's JSON-LD text strings (`or_declared`)
    ends: list[int] = field(default_factory=list)  # where each block's section would end (`reading.section_ends`)

    def choose(self, probabilities: list[float], threshold: float, added: list[bool] | None = None) -> list[bool]:
        """The blocks the reader keeps with these probabilities and threshold (`learned.choose`, with
        the page's own list of like items, headings' sections, footers and dialogs)."""
        from . import choose_from_rows  # (the reader's own decision)

        rows = self.rows
        return choose_from_rows(probabilities, threshold, self.words, lambda index: [row[index] for row in rows],
                                self.ends, added)


def aligned_shares(texts: list[str], gold: str) -> list[float]:
    """The share of each block's words (``\\w+``, lower-cased) matched in order to `gold`'s words
    (difflib's matching blocks over the two word sequences)."""
    vocabulary: dict[str, int] = {}
    block_words = [[w.lower() for w in _WORD.findall(t)] for t in texts]
    owner = [i for i, words in enumerate(block_words) for _ in words]
    page = [vocabulary.setdefault(w, len(vocabulary)) for words in block_words for w in words]
    truth = [vocabulary.setdefault(w.lower(), len(vocabulary)) for w in _WORD.findall(gold)]
    matched = [0] * len(texts)
    for match in difflib.SequenceMatcher(None, page, truth, autojunk=False).get_matching_blocks():
        for k in range(match.a, match.a + match.size):
            matched[owner[k]] += 1
    return [matched[i] / len(words) if words else 0.0 for i, words in enumerate(block_words)]


def snippet_labels(texts: list[str], with_: list[str], without: list[str]) -> list[int]:
    """1 for a block holding part of a `with_` snippet, 0 for one holding part of a `without`
    snippet, -1 for the others and for blocks that hold both (whitespace collapsed, as the
    snippets are matched)."""
    parts = [_SPACE.sub(" ", t).strip() for t in texts]
    starts, at = [], 0
    for part in parts:
        starts.append(at)
        at += len(part) + 1
    joined = " ".join(parts)
    labels = [-1] * len(texts)
    both = set()
    for snippets, value in ((without, 0), (with_, 1)):
        for snippet in snippets:
            snippet = _SPACE.sub(" ", snippet).strip()
            if not snippet:
                continue
            at = joined.find(snippet)
            while at >= 0:
                first = bisect.bisect_right(starts, at) - 1
                last = bisect.bisect_right(starts, at + len(snippet) - 1) - 1
                for i in range(first, last + 1):
                    if labels[i] not in (-1, value):
                        both.add(i)
                    labels[i] = value
                at = joined.find(snippet, at + 1)
    for i in both:
        labels[i] = -1
    return labels


def label_blocks(texts: list[str], gold: str | None = None, with_: list[str] = (),
                 without: list[str] = ()) -> list[int]:
    """Each block's label from the page's gold text, else from its snippets."""
    if gold is not None:
        return [1 if share >= LABEL_SHARE else 0 for share in aligned_shares(texts, gold)]
    return snippet_labels(texts, list(with_), list(without))


def fit(examples: list[Example], feature_names=FEATURES, trees: int = TREES, params: dict | None = None):
    """A LightGBM booster trained on the labelled blocks of `examples`."""
    import lightgbm
    import numpy as np

    rows, labels, weights = [], [], []
    for example in examples:
        keep = [i for i, label in enumerate(example.labels) if label in (0, 1)]
        if not keep:
            continue
        block_weights = [(example.words[i] + 1) ** WEIGHT_POWER for i in keep]
        total = sum(block_weights)
        rows.extend(example.rows[i] for i in keep)
        labels.extend(example.labels[i] for i in keep)
        weights.extend(w / total * example.weight for w in block_weights)
    if not rows or len(set(labels)) < 2:
        raise ValueError("training needs blocks of both kinds (text and not text)")
    names = list(feature_names)
    data = lightgbm.Dataset(np.asarray(rows, dtype=np.float64), np.asarray(labels), weight=np.asarray(weights),
                            feature_name=names, categorical_feature=[i for i, n in enumerate(names) if n in CATEGORICAL],
                            free_raw_data=False)
    return lightgbm.train({**PARAMS, **(params or {})}, data, num_boost_round=trees)


# -- the page's threshold (page_threshold.py) ---------------------------------------------------

# The thresholds a page's best is chosen among, and LightGBM's settings of the threshold forest (a
# regression: small trees, as it has one row a page).
PAGE_THRESHOLDS = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))  # 0.1 to 0.9
PAGE_PARAMS = {"objective": "regression", "learning_rate": 0.05, "num_leaves": 7, "min_data_in_leaf": 40,
               "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "seed": 7, "deterministic": True,
               "force_row_wise": True, "num_threads": 1, "verbose": -1}
PAGE_TREES = 100
# Thresholds whose block F1 is within this of the page's best count as its best too; the one
# nearest `THRESHOLD` is its label (most pages are flat around it: the label is not noise).
PAGE_TOLERANCE = 0.01


def block_f1(example: Example, probabilities: list[float], threshold: float) -> float:
    """The F1 over the words of a page's labelled blocks of what the reader keeps at `threshold`."""
    keep = example.choose(probabilities, threshold)
    right = wrong = missed = 0
    for k, label, words in zip(keep, example.labels, example.words):
        if label == 1:
            right, missed = (right + words, missed) if k else (right, missed + words)
        elif label == 0 and k:
            wrong += words
    return 2 * right / (2 * right + wrong + missed) if right else 0.0


def best_threshold(example: Example, probabilities: list[float]) -> float:
    """The page's threshold label: of `PAGE_THRESHOLDS` within `PAGE_TOLERANCE` of its best block
    F1, the nearest `THRESHOLD`."""
    f1 = [block_f1(example, probabilities, t) for t in PAGE_THRESHOLDS]
    best = max(f1)
    return min((t for t, v in zip(PAGE_THRESHOLDS, f1) if v >= best - PAGE_TOLERANCE),
               key=lambda t: abs(t - THRESHOLD))


def fit_page_threshold(pages: list[tuple[Example, list[float]]], params: dict | None = None) -> dict:
    """The page threshold forest (`page_threshold.PageThreshold`'s JSON) trained on (page, its
    blocks' probabilities) pairs: the pages that have text blocks labelled, each labelled with
    `best_threshold`.  The probabilities should come from a forest that never saw the page's
    source, as the shipped forest meets a new site."""
    import lightgbm
    import numpy as np

    from .forest import from_lightgbm
    from .page_threshold import HIGHEST, LOWEST, THRESHOLD_FEATURES, threshold_row

    rows, targets = [], []
    for example, probabilities in pages:
        if example.texts and any(label == 1 for label in example.labels):
            rows.append(threshold_row(example.rows[0], probabilities, example.words))
            targets.append(best_threshold(example, probabilities))
    data = lightgbm.Dataset(np.asarray(rows, dtype=np.float64), np.asarray(targets),
                            feature_name=list(THRESHOLD_FEATURES), free_raw_data=False)
    booster = lightgbm.train({**PAGE_PARAMS, **(params or {})}, data, num_boost_round=PAGE_TREES)
    spec = from_lightgbm(booster)
    del spec["threshold"]  # (a regression's answer is the threshold)
    return dict(spec, lowest=LOWEST, highest=HIGHEST)


# -- the second look (second_look.py) -----------------------------------------------------------

def fit_second_look(pages: list[tuple[Example, list[float]]], params: dict | None = None) -> dict:
    """The second look's forest (`second_look.SecondLook`'s JSON) trained on (page, its blocks'
    probabilities) pairs, over the same labelled blocks and weights as `fit`.  As for
    `fit_page_threshold`, the probabilities should come from a forest that never saw the page's
    source."""
    from .forest import from_lightgbm
    from .page_threshold import threshold_row
    from .second_look import ADD_AT, LOOK_FROM, NEIGHBOUR_FEATURES, neighbour_rows

    wide = [Example(rows=neighbour_rows(example.rows, probabilities, example.words,
                                        threshold_row(example.rows[0], probabilities, example.words)),
                    labels=example.labels, words=example.words, weight=example.weight, texts=example.texts)
            for example, probabilities in pages
            if example.texts and any(label in (0, 1) for label in example.labels)]
    spec = from_lightgbm(fit(wide, feature_names=NEIGHBOUR_FEATURES, params=params))
    del spec["threshold"]  # (its probability is averaged with the block forest's: `add_at`)
    return dict(spec, add_at=ADD_AT, look_from=LOOK_FROM)
