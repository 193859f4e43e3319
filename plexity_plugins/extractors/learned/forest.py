"""The learned reader's model: a forest of binary decision trees (gradient boosting), stored as
plain JSON so that the package needs no machine-learning library to use it.

The file (``forest.json`` in this package, written by scripts/reader_model/build.py) holds::

    {"features": [names...], "trees": [tree, ...], "threshold": t, "card": {...}}

and each tree holds parallel lists, one entry per node (node 0 is the root)::

    "feature":  index of the feature the node tests, or -1 for a leaf
    "threshold": the number it compares with (numerical nodes)
    "categories": the feature values that go left (categorical nodes), else null
    "missing":  "nan" (a NaN feature goes `default_left`), "zero" (0 or NaN go `default_left`)
                or "none" (NaN is read as 0)
    "default_left": true or false
    "left", "right": child node indices
    "value":    the leaf's value (leaves)

A block's score is the sum of its leaves' values over the trees; its probability of being the
page's text is the logistic of that sum.  The rules are LightGBM's (`from_lightgbm` converts a
trained booster), so a converted model predicts exactly what LightGBM predicts.
"""

from __future__ import annotations

import math

_ZERO = 1e-35  # LightGBM's kZeroThreshold


class Forest:
    """A forest read from its JSON form (see the module's docstring)."""

    def __init__(self, spec: dict):
        self.features: list[str] = list(spec["features"])
        self.trees: list[dict] = spec["trees"]
        self.threshold: float = float(spec.get("threshold", 0.5))
        for tree in self.trees:
            tree["_categories"] = [frozenset(c) if c is not None else None for c in tree["categories"]]

    def score(self, row) -> float:
        """The sum of `row`'s leaf values (a row: one value per feature, NaN where missing)."""
        total = 0.0
        for tree in self.trees:
            total += tree["value"][_leaf(tree, row)]
        return total

    def probabilities(self, rows) -> list[float]:
        return [1.0 / (1.0 + math.exp(-self.score(row))) for row in rows]


def _leaf(tree: dict, row) -> int:
    feature, threshold, categories = tree["feature"], tree["threshold"], tree["_categories"]
    missing, default_left, left, right = tree["missing"], tree["default_left"], tree["left"], tree["right"]
    node = 0
    while feature[node] >= 0:
        value = row[feature[node]]
        wanted = categories[node]
        if wanted is not None:  # categorical: a NaN or negative value goes right
            go_left = value == value and value >= 0 and int(value) in wanted
        else:
            kind = missing[node]
            if value != value and kind != "nan":
                value = 0.0
            if (kind == "zero" and abs(value) <= _ZERO) or (kind == "nan" and value != value):
                go_left = default_left[node]
            else:
                go_left = value <= threshold[node]
        node = left[node] if go_left else right[node]
    return node


def from_lightgbm(booster, threshold: float = 0.5) -> dict:
    """The JSON form of a trained LightGBM booster (binary objective)."""
    dump = booster.dump_model()
    trees = []
    for info in dump["tree_info"]:
        tree = {"feature": [], "threshold": [], "categories": [], "missing": [], "default_left": [], "left": [],
                "right": [], "value": []}

        def add(node: dict) -> int:
            index = len(tree["feature"])
            for key in tree:
                tree[key].append(None)
            if "leaf_value" in node or "split_index" not in node:
                tree["feature"][index] = -1
                tree["value"][index] = float(node.get("leaf_value", 0.0))
                tree["threshold"][index] = 0.0
                tree["missing"][index] = "none"
                tree["default_left"][index] = False
                tree["left"][index] = tree["right"][index] = -1
                return index
            tree["feature"][index] = int(node["split_feature"])
            if node["decision_type"] == "==":
                tree["categories"][index] = sorted(int(c) for c in str(node["threshold"]).split("||"))
                tree["threshold"][index] = 0.0
            else:
                tree["threshold"][index] = float(node["threshold"])
            tree["missing"][index] = str(node.get("missing_type", "None")).lower()
            tree["default_left"][index] = bool(node.get("default_left", False))
            tree["value"][index] = 0.0
            tree["left"][index] = add(node["left_child"])
            tree["right"][index] = add(node["right_child"])
            return index

        add(info["tree_structure"])
        trees.append(tree)
    return {"features": list(dump["feature_names"]), "trees": trees, "threshold": threshold}
