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

A forest may also hold a linear model (``"linear"``, written by `training.blend`), whose score is
added to the trees' after them::

    "linear": {"bias": b, "feature": [index...], "log": [0 or 1...], "weight": [w...], "missing": [m...],
               "low": [l...], "high": [h...],
               "category_feature": [index...], "category_values": [[v...]...], "category_weights": [[w...]...]}

the bias first; then each numeric term: a value that is not finite (NaN, infinite) adds its
``missing``, another is held within ``[low, high]`` (the values the model was trained on: it says
nothing past them, and its sum stays bounded) and adds ``weight * value``, or ``weight *
copysign(log1p(|value|), value)`` where ``log`` is 1; then each categorical term: the weight of the
first of its values the feature equals (none, nothing).

It may also hold a network of one hidden layer (``"network"``, written by `training.blend`), whose
score is added after the linear model's::

    "network": {"feature": [index...], "log": [0 or 1...], "low": [l...], "high": [h...],
                "missing_feature": [index...], "category_feature": [index...], "category_value": [v...],
                "weight": [[w per unit] per input], "bias": [b per unit], "output": [o per unit],
                "output_bias": c, "bound": B}

Its inputs, in this order: each numeric feature (0 where not finite, else held within ``[low, high]``
and read on a log scale where ``log`` is 1, as the linear model reads it), 1 where each
``missing_feature`` is not finite (else 0), 1 where each ``category_feature`` equals its
``category_value`` (else 0).  Each unit is ``max(0, bias + sum of weight * input)`` (the inputs
added in order, those that are 0 skipped), the network's score ``output_bias + sum of output *
unit`` (the units in order, those that are 0 skipped), held within ``[-B, B]``.
"""

from __future__ import annotations

import math

_ZERO = 1e-35  # LightGBM's kZeroThreshold


class Forest:
    """A forest read from its JSON form (see the module's docstring).

    Its trees are turned into one Python function of a row (nested ``if``s, the leaves' values
    added in the trees' order), compiled at the first score: walking the JSON node by node cost
    a 50,000-block page over 10 s in the pure-Python path; the function takes a few times less,
    with the same sums to the bit (the compiled path's, tests/test_learned_native.py)."""

    def __init__(self, spec: dict):
        self.features: list[str] = list(spec["features"])
        self.trees: list[dict] = spec["trees"]
        self.threshold: float = float(spec.get("threshold", 0.5))
        self.linear: dict | None = spec.get("linear")
        self.network: dict | None = spec.get("network")
        self._score = None

    def score(self, row) -> float:
        """The sum of `row`'s leaf values, and its linear model's score where it has one (a row: one
        value per feature, NaN where missing)."""
        if self._score is None:
            self._score = _compiled_score(self.trees, self.linear)
        if self.network is not None:
            return self._score(row) + network_totals(self.network, [row])[0]
        return self._score(row)

    def __getstate__(self) -> dict:  # (the compiled function does not pickle; it is made again)
        return dict(self.__dict__, _score=None)

    def probabilities(self, rows) -> list[float]:
        if self._score is None:
            self._score = _compiled_score(self.trees, self.linear)
        score = self._score
        if self.network is None or not rows:
            return [1.0 / (1.0 + math.exp(-score(row))) for row in rows]
        # (the network's scores cannot fail; then each row in order, as without it: the first row that fails is
        # the error, whichever way it fails)
        extras = network_totals(self.network, rows)
        return [1.0 / (1.0 + math.exp(-(score(row) + extra))) for row, extra in zip(rows, extras)]


def network_inputs(network: dict, rows):
    """The network's inputs of `rows` (a numpy matrix, a row a block; the module's docstring), one row each."""
    import numpy as np

    count = rows.shape[0]
    columns = []
    for feature, log, low, high in zip(network["feature"], network["log"], network["low"], network["high"]):
        v = rows[:, int(feature)]
        finite = np.isfinite(v)
        held = np.minimum(np.maximum(np.where(finite, v, 0.0), float(low)), float(high))
        if log:  # (libm's log1p, as the compiled path's: numpy's may differ in the last bit)
            held = np.array([math.copysign(math.log1p(math.fabs(a)), a) for a in held.tolist()], dtype=np.float64)
        columns.append(np.where(finite, held, 0.0))
    for feature in network["missing_feature"]:
        columns.append(np.where(np.isfinite(rows[:, int(feature)]), 0.0, 1.0))
    for feature, value in zip(network["category_feature"], network["category_value"]):
        columns.append(np.where(rows[:, int(feature)] == float(value), 1.0, 0.0))
    return np.column_stack(columns) if columns else np.zeros((count, 0))


def network_totals(network: dict, rows) -> list[float]:
    """The network's score of each row (the module's docstring), the rows side by side (numpy) but each row's
    terms added one by one in the documented order: the same sums, to the bit, as the compiled path's."""
    import numpy as np

    x = network_inputs(network, np.asarray(rows, dtype=np.float64).reshape(len(rows), -1))
    weight = np.asarray(network["weight"], dtype=np.float64).reshape(x.shape[1], -1)
    units = np.tile(np.asarray(network["bias"], dtype=np.float64), (len(rows), 1))
    for i in range(x.shape[1]):  # (a 0 input adds a signed 0: nothing, once the unit is held at 0 or above)
        units += x[:, i:i + 1] * weight[i]
    units = np.where(units > 0.0, units, 0.0)
    totals = np.full(len(rows), float(network["output_bias"]))
    for u, output in enumerate(network["output"]):
        totals += units[:, u] * float(output)
    bound = float(network["bound"])
    return np.minimum(np.maximum(totals, -bound), bound).tolist()


# Python's tokenizer refuses more than 100 levels of indentation: a subtree deeper than this
# becomes a function of its own (LightGBM's trees of 31 leaves are at most 30 deep).
_MAX_DEPTH = 50


def _compiled_score(trees: list[dict], linear: dict | None = None):
    """One function ``score(row)`` computing the sum of `row`'s leaf values over `trees`, then the
    `linear` model's terms (the module's docstring), in the compiled path's order."""
    constants: dict[str, object] = {"copysign": math.copysign, "log1p": math.log1p, "fabs": math.fabs}

    def number(x: float) -> str:
        if math.isfinite(x):
            return repr(float(x))
        name = f"_c{len(constants)}"
        constants[name] = float(x)
        return name

    def condition(tree: dict, node: int) -> str:
        """Python for "the row goes left at `node`", by LightGBM's rules."""
        value = f"row[{int(tree['feature'][node])}]"
        categories = tree["categories"][node]
        left = bool(tree["default_left"][node])
        if categories is not None:  # a NaN or negative value goes right
            name = f"_c{len(constants)}"
            constants[name] = frozenset(int(c) for c in categories)
            return f"(v := {value}) == v and v >= 0 and int(v) in {name}"
        threshold = float(tree["threshold"][node])
        kind = tree["missing"][node]
        if kind == "nan":  # a NaN goes the default way, any other value by the threshold
            return f"not ({value} > {number(threshold)})" if left else f"{value} <= {number(threshold)}"
        if kind == "zero":  # NaN is 0, and 0 goes the default way
            zero = f"-{_ZERO!r} <= v <= {_ZERO!r}"
            if left:
                return f"(v := {value}) != v or {zero} or v <= {number(threshold)}"
            return f"(v := {value}) == v and not ({zero}) and v <= {number(threshold)}"
        # "none": NaN is read as 0
        if 0.0 <= threshold:
            return f"not ({value} > {number(threshold)})"
        return f"{value} <= {number(threshold)}"

    functions: list[list[str]] = []

    def emit(tree: dict, node: int, depth: int, lines: list[str], leaf: str) -> None:
        pad = " " * depth
        if tree["feature"][node] < 0:
            lines.append(f"{pad}{leaf}{number(float(tree['value'][node]))}")
            return
        if depth > _MAX_DEPTH:  # the subtree's leaf value, from a function of its own
            name = f"_subtree{len(functions)}"
            own = [f"def {name}(row):"]
            functions.append(own)
            emit(tree, node, 1, own, "return ")
            lines.append(f"{pad}{leaf}{name}(row)")
            return
        lines.append(f"{pad}if {condition(tree, node)}:")
        emit(tree, int(tree["left"][node]), depth + 1, lines, leaf)
        lines.append(f"{pad}else:")
        emit(tree, int(tree["right"][node]), depth + 1, lines, leaf)

    score = ["def score(row):", " total = 0.0"]
    for tree in trees:
        emit(tree, 0, 1, score, "total += ")
    if linear is not None:
        score.append(f" total += {number(float(linear['bias']))}")
        for feature, log, weight, missing, low, high in zip(linear["feature"], linear["log"], linear["weight"],
                                                            linear["missing"], linear["low"], linear["high"]):
            held = f"min(max(v, {number(float(low))}), {number(float(high))})"
            value = f"copysign(log1p(fabs(c := {held})), c)" if log else held
            score.append(f" v = row[{int(feature)}]")
            score.append(f" total += {number(float(missing))} if v - v != 0.0 else {number(float(weight))} * {value}")
        for feature, values, weights in zip(linear["category_feature"], linear["category_values"],
                                            linear["category_weights"]):
            score.append(f" v = row[{int(feature)}]")
            for k, (value, weight) in enumerate(zip(values, weights)):
                score.append(f" {'if' if k == 0 else 'elif'} v == {number(float(value))}: "
                             f"total += {number(float(weight))}")
    score.append(" return total")
    namespace = dict(constants)
    source = "\n".join(line for function in functions + [score] for line in function)
    exec(compile(source, "<learned forest>", "exec"), namespace)
    return namespace["score"]


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
