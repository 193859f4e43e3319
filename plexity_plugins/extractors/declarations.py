"""Whether a page declares itself one article or one product: a question the ``auto``, ``dense`` and
``learned`` extractors ask.  A module of its own so that ``learned`` (the default), asking it, does not import
``auto``'s extractors with it (lxml, resiliparse: ~40 ms of each extraction process's start)."""

from __future__ import annotations

import re

from .text import find_all

# A page's declaration of its one item: schema.org JSON-LD or microdata, or Open Graph's og:type.
# Each form is looked for by its literal start (`text.find_all`: str.find, compiled), then matched there
# (regex scans of a 240 KB page took 1.2 ms; one case-insensitive alternation 14 ms).
# No two runs of spaces meet: after ``:`` one possessive run, then an optional ``[`` and its own
# (``\s*\[?\s*`` matched the same, but split a run of n spaces every way on a failed match: a
# 30 KB run took 3.5 s, 300 KB minutes, in every reader that asks, ``learned`` included).
_ITEM_TYPES = r"(?:Article|NewsArticle|BlogPosting|ReportageNews|AnalysisNewsArticle|Product)"
_ITEM_DECLARATIONS = {
    "@type": re.compile(r"""@type["']\s*:\s*+(?:\[\s*+)?["'](?:https?://schema\.org/)?""" + _ITEM_TYPES + r"""["']"""),
    "itemtype": re.compile(r"""itemtype\s*=\s*["']?https?://schema\.org/""" + _ITEM_TYPES + r"""\b"""),
    "og:type": re.compile(r"""og:type["']?\s+content\s*=\s*["'](?:og:)?(?:article|product)"""),
}
# Open Graph with its attributes the other way round: content="product" property="og:type"
_OG_ITEM_BEFORE = re.compile(r"""content\s*=\s*["'](?:og:)?(?:article|product)[^"']*["']\s+property\s*=\s*["']$""")

_FIRST_HITS = 4  # (a page's declaration is most often among the first places of its marker)


def _places(html: str, marker: str):
    """`find_all`'s positions of `marker` in `html`, in order, the first `_FIRST_HITS` looked for
    first: a page whose declaration is among them is not searched to its end."""
    first = find_all(html, marker, _FIRST_HITS)
    yield from first
    if len(first) == _FIRST_HITS:
        yield from find_all(html, marker)[_FIRST_HITS:]


def declares_article_or_product(html: str) -> bool:
    """Whether the page declares itself one article or one product (schema.org ``Article``,
    ``NewsArticle``, ``BlogPosting`` ... or ``Product`` in JSON-LD or microdata, or Open Graph's
    ``og:type`` article or product)."""
    for marker, declaration in _ITEM_DECLARATIONS.items():
        for at in _places(html, marker):
            if declaration.match(html, at) or (
                    marker == "og:type" and _OG_ITEM_BEFORE.search(html, max(0, at - 120), at)):
                return True
    return False
