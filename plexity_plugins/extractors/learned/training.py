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

    rows, labels, weights = _labelled(examples)
    names = list(feature_names)
    data = lightgbm.Dataset(np.asarray(rows, dtype=np.float64), np.asarray(labels), weight=np.asarray(weights),
                            feature_name=names, categorical_feature=[i for i, n in enumerate(names) if n in CATEGORICAL],
                            free_raw_data=False)
    return lightgbm.train({**PARAMS, **(params or {})}, data, num_boost_round=trees)


# -- the linear model beside the forest (forest.py's "linear") --------------------------------------

# The forest has `1 - LINEAR_SHARE` of a block's log-odds, the linear model over the same features the rest (less
# the network's `NETWORK_SHARE`, below: `blend`).  The trees fit what the training sources share and what they do
# not; a linear model over the features cannot bend to one source's conventions, and the two err on different
# blocks: left out, at LightGBM's seeds 7 and 8, every source read better with both, half each, than with the
# forest alone (docs/training.md).
LINEAR_SHARE = 0.5
# A numeric feature whose values reach past this (either sign) is read on a log scale (counts, lengths).
LINEAR_LOG_FROM = 10.0
# The categorical features' most frequent values each get a weight; the others none.
LINEAR_CATEGORIES = 40
# The L2 penalty on the standardized features' weights, the blocks' weights summing to 1.
LINEAR_L2 = 1e-4


def _labelled(examples: list[Example]):
    """(rows, labels, weights) of the labelled blocks of `examples`, weighed as `fit` weighs them."""
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
    return rows, labels, weights


class _Inputs:
    """The labelled blocks of some pages as the linear model and the network read them: one column per
    numeric feature that varies (on a log scale where its values reach past `LINEAR_LOG_FROM`; a value
    that is not finite reads as 0), one per such feature that is ever not finite (1 where it is not),
    one per frequent value of each categorical feature (1 where the feature equals it); and each
    column's mean and spread."""

    def __init__(self, examples: list[Example], feature_names):
        import numpy as np

        rows, labels, weights = _labelled(examples)
        names = list(feature_names)
        x = np.asarray(rows, dtype=np.float64)
        self.y = np.asarray(labels, dtype=np.float64)
        w = np.asarray(weights, dtype=np.float64)
        self.w = w / w.sum()
        finite = np.isfinite(x)
        values = np.where(finite, x, 0.0)
        low = np.where(finite, x, np.inf).min(axis=0)
        high = np.where(finite, x, -np.inf).max(axis=0)
        # (a feature that never varies, or is never finite, says nothing: no term)
        self.numeric = [i for i, name in enumerate(names) if name not in CATEGORICAL and low[i] < high[i]]
        self.logged = [i for i in self.numeric if np.abs(values[:, i]).max(initial=0.0) > LINEAR_LOG_FROM]
        for i in self.logged:
            values[:, i] = np.copysign(np.log1p(np.abs(values[:, i])), values[:, i])
        self.missing = [i for i in self.numeric if not finite[:, i].all()]
        self.categories = {}
        for i, name in enumerate(names):
            if name in CATEGORICAL:
                seen, counts = np.unique(x[finite[:, i], i], return_counts=True)
                order = sorted(range(len(seen)), key=lambda k: (-counts[k], seen[k]))[:LINEAR_CATEGORIES]
                self.categories[i] = [float(seen[k]) for k in order]
        self.low, self.high = low, high
        columns = [values[:, i] for i in self.numeric] + [(~finite[:, i]).astype(np.float64) for i in self.missing]
        columns += [(x[:, i] == value).astype(np.float64) for i, seen in self.categories.items() for value in seen]
        z = np.column_stack(columns)
        self.mean, self.spread = z.mean(axis=0), z.std(axis=0)
        self.spread[self.spread < 1e-12] = np.inf  # (a column of one value: its weight 0)
        self.z = (z - self.mean) / self.spread  # (standardized)


def fit_linear(examples: list[Example], feature_names=FEATURES) -> dict:
    """A logistic regression over the labelled blocks of `examples` (weighed as `fit` weighs them),
    as forest.py's ``"linear"`` (its weights on the features as they are: standardizing is folded in).

    Each numeric feature that varies is one term (on a log scale where its values reach past
    `LINEAR_LOG_FROM`, held within the values seen; a value that is not finite reads as 0 and sets a
    term of its own, folded into ``missing``); each categorical feature's `LINEAR_CATEGORIES` most
    frequent values one each (`_Inputs`).  Fitted by L-BFGS (scipy, which LightGBM brings) with
    `LINEAR_L2`; deterministic."""
    import numpy as np
    from scipy.optimize import minimize

    inputs = _Inputs(examples, feature_names)
    z = np.hstack([inputs.z, np.ones((len(inputs.z), 1))])
    y, w = inputs.y, inputs.w

    def loss(b):
        score = z @ b
        p = 1.0 / (1.0 + np.exp(-score))
        value = float(np.sum(w * (np.logaddexp(0.0, score) - y * score))) + 0.5 * LINEAR_L2 * float(b[:-1] @ b[:-1])
        gradient = z.T @ (w * (p - y))
        gradient[:-1] += LINEAR_L2 * b[:-1]
        return value, gradient

    b = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500}).x
    scaled = b[:-1] / inputs.spread  # (each column's weight on its unstandardized value)
    bias = float(b[-1] - scaled @ inputs.mean)
    numeric, missing, categories = inputs.numeric, inputs.missing, inputs.categories
    n, k = len(numeric), len(missing)
    missing_weight = dict(zip(missing, scaled[n:n + k]))
    linear = {"bias": bias, "feature": numeric, "log": [int(i in inputs.logged) for i in numeric],
              "weight": [float(v) for v in scaled[:n]],
              "missing": [float(missing_weight.get(i, 0.0)) for i in numeric],
              "low": [float(inputs.low[i]) for i in numeric], "high": [float(inputs.high[i]) for i in numeric],
              "category_feature": list(categories), "category_values": [], "category_weights": []}
    at = n + k
    for i, seen in categories.items():
        linear["category_values"].append(seen)
        linear["category_weights"].append([float(v) for v in scaled[at:at + len(seen)]])
        at += len(seen)
    return linear


# -- the network beside them (forest.py's "network") -------------------------------------------------

# One hidden layer of ReLU units over the linear model's inputs (`_Inputs`): it sees what the linear model
# cannot (a feature that matters only with another) and errs on other blocks than the trees.  It takes
# `NETWORK_SHARE` of a block's log-odds from the linear model's share, and its own log-odds are held within
# `NETWORK_BOUND`: unbounded, a source left out read worse at some seeds (CleanEval -0.016 to -0.028 at
# LightGBM's seeds 8 and 9, docs/training.md); bounded, the left-out mean rose at each of seeds 7, 8 and 9.
NETWORK_UNITS = 32
NETWORK_SHARE = 0.25
NETWORK_BOUND = 3.0
# Adam over minibatches of the blocks (float32), the step falling linearly to 0; an L2 penalty on the weights.
NETWORK_EPOCHS = 6
NETWORK_BATCH = 256
NETWORK_RATE = 2e-3
NETWORK_L2 = 1e-5


def fit_network(examples: list[Example], feature_names=FEATURES, seed: int = PARAMS["seed"]) -> dict:
    """A network of one hidden layer (`NETWORK_UNITS` ReLU units) over the inputs of `fit_linear`, trained on
    the labelled blocks of `examples` (weighed as `fit` weighs them) for the logistic loss, as forest.py's
    ``"network"`` (standardizing folded into its first layer; `bound` `NETWORK_BOUND`).  Seeded by `seed` and
    deterministic for a given number of BLAS threads (numpy float32; its sums follow how BLAS splits a product:
    scripts/reader_model/build.py sets one thread)."""
    import numpy as np

    inputs = _Inputs(examples, feature_names)
    z = np.nan_to_num(inputs.z, nan=0.0).astype(np.float32)
    y = inputs.y.astype(np.float32)
    s = (inputs.w * len(inputs.w)).astype(np.float32)  # (the blocks' weights, their mean 1)
    count, width = z.shape
    rng = np.random.default_rng(seed)
    hidden = (rng.standard_normal((width, NETWORK_UNITS)) * np.sqrt(2.0 / width)).astype(np.float32)
    hidden_bias = np.zeros(NETWORK_UNITS, np.float32)
    output = (rng.standard_normal(NETWORK_UNITS) * np.sqrt(1.0 / NETWORK_UNITS)).astype(np.float32)
    rate_of_text = float(np.clip(np.sum(inputs.w * inputs.y), 1e-6, 1 - 1e-6))
    output_bias = np.float32(np.log(rate_of_text / (1.0 - rate_of_text)))
    parameters = [hidden, hidden_bias, output, np.array([output_bias], np.float32)]
    first = [np.zeros_like(p) for p in parameters]
    second = [np.zeros_like(p) for p in parameters]
    steps = NETWORK_EPOCHS * -(-count // NETWORK_BATCH)
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    step = 0
    for _ in range(NETWORK_EPOCHS):
        order = rng.permutation(count)
        for start in range(0, count, NETWORK_BATCH):
            batch = order[start:start + NETWORK_BATCH]
            zb, yb, sb = z[batch], y[batch], s[batch]
            hidden, hidden_bias, output, bias = parameters
            a = zb @ hidden + hidden_bias
            h = np.maximum(a, 0.0)
            score = h @ output + bias[0]
            p = 1.0 / (1.0 + np.exp(-np.clip(score, -30.0, 30.0)))
            g = sb * (p - yb) / len(batch)
            g_hidden = np.outer(g, output) * (a > 0)
            gradients = [zb.T @ g_hidden + NETWORK_L2 * hidden, g_hidden.sum(axis=0),
                         h.T @ g + NETWORK_L2 * output, np.array([g.sum()], np.float32)]
            step += 1
            rate = NETWORK_RATE * (1.0 - (step - 1) / steps)
            for k, (parameter, gradient) in enumerate(zip(parameters, gradients)):
                first[k] = beta1 * first[k] + (1 - beta1) * gradient
                second[k] = beta2 * second[k] + (1 - beta2) * gradient * gradient
                corrected = first[k] / (1 - beta1 ** step), second[k] / (1 - beta2 ** step)
                parameter -= (rate * corrected[0] / (np.sqrt(corrected[1]) + epsilon)).astype(np.float32)
    hidden, hidden_bias, output, bias = (p.astype(np.float64) for p in parameters)
    scaled = hidden / inputs.spread[:, None]  # (each input's weights on its unstandardized value)
    scaled[~np.isfinite(scaled)] = 0.0
    numeric = inputs.numeric
    return {"feature": numeric, "log": [int(i in inputs.logged) for i in numeric],
            "low": [float(inputs.low[i]) for i in numeric], "high": [float(inputs.high[i]) for i in numeric],
            "missing_feature": list(inputs.missing),
            "category_feature": [i for i, seen in inputs.categories.items() for _ in seen],
            "category_value": [value for seen in inputs.categories.values() for value in seen],
            "weight": [[float(v) for v in row] for row in scaled],
            "bias": [float(v) for v in hidden_bias - inputs.mean @ scaled],
            "output": [float(v) for v in output], "output_bias": float(bias[0]), "bound": NETWORK_BOUND}


def blend(forest: dict, linear: dict, network: dict | None = None, share: float = LINEAR_SHARE) -> dict:
    """The forest (`forest.from_lightgbm`'s JSON) with `linear` (`fit_linear`'s) beside it: each block's
    log-odds `1 - share` of the forest's and `share` of the linear model's; with `network` (`fit_network`'s),
    `NETWORK_SHARE` of them the network's, taken from the linear model's (its output and bound scaled)."""
    trees = [dict(tree, value=[v * (1.0 - share) for v in tree["value"]]) for tree in forest["trees"]]
    if network is not None:
        share -= NETWORK_SHARE
    scaled = dict(linear, bias=linear["bias"] * share, weight=[v * share for v in linear["weight"]],
                  missing=[v * share for v in linear["missing"]],
                  category_weights=[[v * share for v in weights] for weights in linear["category_weights"]])
    blended = dict(forest, trees=trees, linear=scaled)
    if network is not None:
        blended["network"] = dict(network, output=[v * NETWORK_SHARE for v in network["output"]],
                                  output_bias=network["output_bias"] * NETWORK_SHARE,
                                  bound=network["bound"] * NETWORK_SHARE)
    return blended


def fit_blocks(examples: list[Example], params: dict | None = None, trees: int = TREES) -> dict:
    """The block model forest.py reads (its JSON): a LightGBM forest (`fit`), a linear model
    (`fit_linear`) and a network (`fit_network`, seeded by LightGBM's seed), `blend`ed."""
    from .forest import from_lightgbm

    seed = {**PARAMS, **(params or {})}["seed"]
    return blend(from_lightgbm(fit(examples, trees=trees, params=params), threshold=THRESHOLD),
                 fit_linear(examples), fit_network(examples, seed=seed))


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
