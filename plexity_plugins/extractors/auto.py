"""``auto``: trafilatura's text, or fast's when fast finds text that trafilatura left out."""

from __future__ import annotations

from typing import Callable

from ..io.decoding import html_text
from .declarations import declares_article_or_product
from .fast import fast_text
from .markup import MAX_TAGS_TRAFILATURA, checked
from .text import composed
from .trafilatura import trafilatura_text

# ``auto`` takes fast's text over trafilatura's when fast is no shorter and its lines that
# trafilatura did not keep hold more than this fraction of trafilatura's word count.  Not fitted
# closely (bench/quality.py, README "Cleaning quality"): every fraction from 0.1 to 1 raised WCXB
# and CleanEval on both halves; 0.25, chosen on the dev halves, is the smallest at which no
# English news article changes.
NEW_TEXT_FRACTION = 0.25
# On a page that declares itself one article or one product, fast's extra text is what stands
# around that item (comments, related articles, reviews, recommendations): there fast's text is
# taken only when it has over this many times the words (trafilatura kept nothing or a fragment).
FALLBACK_RATIO = 5
def _line_key(line: str) -> str:
    return " ".join(line.split())


def prefer_fuller(main: str, fuller: str, declares_one_item: Callable[[], bool] | None = None) -> str:
    """`main` (trafilatura's text), unless `fuller` (fast's) is no shorter and its lines that
    `main` lacks hold more than `NEW_TEXT_FRACTION` of `main`'s words: trafilatura then left out
    part of the page (the other posts of a thread, the other sections of a service page, the
    rest of a listing, or everything), which its single-node choice of the main content is prone
    to, and resiliparse's broader main content is the better page.

    On a page that declares itself one article or one product (`declares_one_item`, asked only
    when `fuller` would be taken; see `declares_article_or_product`), trafilatura's single node
    suits the page and fast's extra text is what stands around the item (comments, related
    articles, reviews), so `fuller` must in addition have over `FALLBACK_RATIO` times `main`'s
    words."""
    main_words, fuller_words = len(main.split()), len(fuller.split())
    if fuller_words < main_words:
        return main
    kept = {_line_key(line) for line in main.splitlines()}
    new_words = sum(len(line.split()) for line in fuller.splitlines() if _line_key(line) not in kept)
    if new_words <= NEW_TEXT_FRACTION * main_words:
        return main
    if fuller_words <= FALLBACK_RATIO * main_words and declares_one_item is not None and declares_one_item():
        return main
    return fuller


@composed
def html_to_text_auto(html: str | bytes) -> str:
    """trafilatura's main text, or fast's where trafilatura left out part of the page
    (`prefer_fuller`; the page's declaration of one article or product is looked for only when
    it matters).  Costs both extractions (fast adds a few ms to trafilatura's tens).  A page
    past the parser's nesting limit fails with trafilatura's `ExtractionError`, and fast is not
    run on it."""
    html = html_text(html)
    page = checked(html, "trafilatura", MAX_TAGS_TRAFILATURA)  # (one pass over the markup for both readers)
    return prefer_fuller(trafilatura_text(page), fast_text(page), lambda: declares_article_or_product(html))

