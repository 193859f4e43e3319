"""The learned reader's hot path, compiled where it can be: a page's blocks (`read_blocks`), their
features (`feature_rows`) and the forest's probabilities (`Forest`).  The caller never sees which
path ran.

The compiled path is ``plexity_plugins.runtime._native`` (native/learned_reader.cpp), a port of
`segment`, `features`, `forest`, the second look's rows and `learned.kept` (`Forest.chooser`) that gives exactly their
results (tests/test_learned_native.py holds them equal: the same texts, elements and title, bit-equal features and
probabilities, the same blocks kept).  The
Python modules are the reference and the fallback where the extension is not built, or with
``PLEXITY_PURE_PYTHON=1``.

Rows of features travel as ``bytes``: float64, row-major, ``len(FEATURES)`` values a block
(``numpy.frombuffer(rows).reshape(-1, len(FEATURES))`` reads them, `rows_as_lists` too).
"""

from __future__ import annotations

from array import array

from ...runtime import native
from . import segment as _segment
from .features import FEATURES, block_features
from .forest import Forest as _ReferenceForest
from . import page_threshold as _page_threshold
from .page_threshold import PageThreshold, threshold_row
from .second_look import SecondLook

WIDTH = len(FEATURES)


def _compiled():
    """The compiled functions, or None (not built, turned off, or built from other sources)."""
    segment_html = native.compiled("segment_html")
    forest = native.compiled("Forest")
    second_look_rows = native.compiled("second_look_rows")
    if segment_html is None or forest is None or second_look_rows is None or getattr(
            native._native, "LEARNED_FEATURE_COUNT", None) != WIDTH or not hasattr(segment_html(""), "section_ends"):
        return None, None, None
    if getattr(native._native, "LEARNED_MAX_INLINE_DEPTH", None) != _segment.MAX_INLINE_DEPTH:
        return None, None, None  # (built before the inline bound: it would read deep pages otherwise)
    return segment_html, forest, second_look_rows


_SEGMENT_HTML, _NATIVE_FOREST, _SECOND_LOOK_ROWS = _compiled()
COMPILED = _SEGMENT_HTML is not None
# (the compiled `learned.kept`: built from older sources, the extension lacks it, and the reference decides)
_CHOOSER = native.compiled("LearnedChooser") if COMPILED else None


def read_blocks(page_html: str):
    """(each block's text, the page): the page is what `feature_rows` and `title` take."""
    if _SEGMENT_HTML is not None:
        page = _SEGMENT_HTML(page_html)
        return page.texts(), page
    page = _segment.segment(page_html)
    return [block.text for block in page.blocks], page


def section_ends(page) -> list[int]:
    """`segment.section_ends` of a page of `read_blocks`."""
    if isinstance(page, _segment.Page):
        return _segment.section_ends(page)
    return page.section_ends()


def title(page) -> str:
    return page.title


def feature_rows(page, declares_item: bool = False, logprobs: list[float] | None = None) -> bytes:
    """`features.block_features` of the page from `read_blocks`, as float64 bytes (row-major)."""
    if isinstance(page, _segment.Page):
        rows = block_features(page, declares_item, logprobs)
        return array("d", [value for row in rows for value in row]).tobytes()
    return page.features(bool(declares_item), logprobs)


def rows_as_lists(rows: bytes) -> list[list[float]]:
    values = memoryview(rows).cast("B").cast("d")
    return [list(values[i:i + WIDTH]) for i in range(0, len(values), WIDTH)]


class Forest:
    """The forest of `forest.py`'s JSON form (parsed), reading rows of `FEATURES`: its nodes
    name features by the forest's own ``features`` list, which may be any of `FEATURES` in any
    order (a model trained without some of them)."""

    def __init__(self, spec: dict):
        columns = {name: i for i, name in enumerate(FEATURES)}
        missing = [name for name in spec["features"] if name not in columns]
        if missing:
            raise ValueError(f"the forest reads features the reader does not make: {missing[:5]}")
        to_column = [columns[name] for name in spec["features"]]
        trees = [dict(tree, feature=[to_column[f] if f >= 0 else f for f in tree["feature"]])
                 for tree in spec["trees"]]
        spec = dict(spec, features=list(FEATURES), trees=trees)
        if spec.get("linear") is not None:  # (its terms' features by the same list)
            linear = spec["linear"]
            spec["linear"] = dict(linear, feature=[to_column[int(f)] for f in linear["feature"]],
                                  category_feature=[to_column[int(f)] for f in linear["category_feature"]])
        if spec.get("network") is not None:  # (and the network's inputs)
            network = spec["network"]
            spec["network"] = dict(network, **{key: [to_column[int(f)] for f in network[key]]
                                               for key in ("feature", "missing_feature", "category_feature")})
        self.threshold: float = float(spec.get("threshold", 0.5))
        # (a reader's own threshold a page, where it has one: page_threshold.py)
        page = spec.get("page_threshold")
        self.page_threshold = PageThreshold(page) if page is not None else None
        # (and its second look at the blocks it drops, where it has one: second_look.py)
        second = spec.get("second_look")
        self.second_look = SecondLook(second, _NATIVE_FOREST, _SECOND_LOOK_ROWS) if second is not None else None
        self._native = _NATIVE_FOREST(spec) if _NATIVE_FOREST is not None else None
        self._reference = None if self._native is not None else _ReferenceForest(spec)
        self._page_spec = page
        self._choosers: dict = {}

    def probabilities(self, rows: bytes) -> list[float]:
        """Each row's probability of being the page's text."""
        if self._native is not None:
            return self._native.probabilities(rows, WIDTH)
        return self._reference.probabilities(rows_as_lists(rows))

    def chooser(self, policy: tuple):
        """The compiled `learned.kept` of this reader under `policy` (learned/__init__.py's rules, as (key,
        value) pairs; the reader's threshold, its page threshold's bounds and its second look's levels are added
        here), made once; None where the extension is not built."""
        if _CHOOSER is None or self._native is None:
            return None
        chooser = self._choosers.get(policy)
        if chooser is None:
            page, second = self.page_threshold, self.second_look
            chooser = self._choosers[policy] = _CHOOSER(
                self._native, _NATIVE_FOREST(self._page_spec) if page is not None else None,
                second._native if second is not None else None,
                dict(policy, threshold=self.threshold, lowest=page.lowest if page else 0.0,
                     highest=page.highest if page else 1.0, look_from=second.look_from if second else 0.0,
                     add_at=second.add_at if second else 1.0, evidence=_page_threshold.EVIDENCE_COLUMNS,
                     word_shares=_page_threshold.WORD_SHARES, levels=_page_threshold.LEVELS))
        return chooser

    def decision(self, rows, probabilities: list[float], words: list[int]) -> tuple[float, list[bool] | None]:
        """(the page's threshold, which blocks the second look adds to those at or above it, or
        None where the reader has no second look) for the page of `rows` (bytes of
        `feature_rows`, or lists; its blocks' `probabilities` and `words`)."""
        if not probabilities or (self.page_threshold is None and self.second_look is None):
            return self.threshold, None
        if isinstance(rows, (bytes, bytearray, memoryview)):
            first = memoryview(rows).cast("B").cast("d")[:WIDTH].tolist()
        else:  # (rows as lists: the build's)
            first = list(rows[0])
        page = threshold_row(first, probabilities, words)
        threshold = self.page_threshold.at(page) if self.page_threshold is not None else self.threshold
        if self.second_look is None:
            return threshold, None
        return threshold, self.second_look.added(rows, probabilities, words, page, threshold)
