"""lxml parsing with libxml2's huge limits, and the error a page past them raises."""

from __future__ import annotations

import lxml.etree
import lxml.html

from ..io.decoding import html_text
from ..errors import ExtractionError
from .markup import checked


# libxml2 stops at 256 levels of nesting and at a text node (or script, attribute) of ~10 MB unless
# told XML_PARSE_HUGE (lxml's huge_tree), and past a limit it reads no further: the rest of the page
# is not in the tree (an *empty* document, or the page's first part).  Inputs are capped in size
# before they get here, so the huge limits (2,048 levels, no buffer limit) are safe; a page beyond
# even those is refused with the limit named, never read as its first part.
_LIMIT_MESSAGES = ("Excessive depth", "Resource limit exceeded", "XML_PARSE_HUGE")
# libxml2 before 2.13 (lxml's wheels before 5.4: lxml 5.0 to 5.3 bring 2.12) has no depth limit under
# XML_PARSE_HUGE: it read a page 60,000 <div>s deep whole, and trafilatura's passes over that tree ran for minutes
# (5 s at 5,000 levels).  There the tree's depth is measured, and a page deeper than 2.13's limit refused as 2.13
# and later refuse it.
HUGE_DEPTH = 2048
_UNLIMITED_DEPTH = lxml.etree.LIBXML_VERSION < (2, 13)
_COUNT_ELEMENTS = lxml.etree.XPath("count(//*)")


def parser_limit(parser) -> str | None:
    """libxml2's message if the last parse by `parser` stopped at one of its limits."""
    for entry in parser.error_log:
        if any(m in entry.message for m in _LIMIT_MESSAGES):
            return entry.message.strip()
    return None


def parse_html(html: str | bytes, reader: str):
    """The root element of `html` parsed with libxml2's huge limits, or None for an empty document (markup
    without an element: only a comment, a doctype).  No element keeps more than `markup.MAX_ATTRIBUTES`
    attributes (libxml2's cost is the square of their number).  `ExtractionError` naming `reader` for a page of
    more than `markup.MAX_TAGS` start tags or `markup.MAX_PAGE_ATTRIBUTES` attributes (before it is parsed: the
    tree, and its walk, grow with them), and naming libxml2's limit for a page past it (libxml2 read only its
    first part), in milliseconds: before a reader walks a tree 2,048 levels deep (1,000 nested tables took
    trafilatura's passes 5 s of a core)."""
    return parse_checked_html(checked(html_text(html), reader))  # (checked takes NULs out)


def parse_checked_html(html: str):
    """`parse_html` of a page `markup.checked` has given back."""
    # (CR and CRLF as LF, as HTML's input stream is read: libxml2 2.14 does so itself; 2.12, lxml 5.0-5.3's, kept
    # a lone CR in the text, where the tags extractor saw no line break)
    html = html.replace("\r\n", "\n").replace("\r", "\n")  # (and checked took NULs out)
    if not html.strip():
        return None
    parser = lxml.html.HTMLParser(huge_tree=True)
    try:
        root = lxml.html.document_fromstring(html, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        # lxml refuses str input with an XML encoding declaration; go through bytes.
        parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True)
        try:
            root = lxml.html.document_fromstring(html.encode("utf-8"), parser=parser)
        except (lxml.etree.ParserError, ValueError) as again:
            limit = parser_limit(parser)
            if limit is None and "Document is empty" in str(again):
                # markup without a single element (a comment, a doctype, an XML declaration alone):
                # a page without text, as for every other extractor, not an unreadable one
                return None
            raise ExtractionError(f"HTML parser limit: {limit}" if limit else f"unparsable HTML: {exc}") from exc
    limit = parser_limit(parser)
    if limit is None and _UNLIMITED_DEPTH and deeper_than(root, HUGE_DEPTH):
        limit = f"Excessive depth in document: {HUGE_DEPTH} (the limit of libxml2 2.13 and later)"
    if limit:
        raise ExtractionError(f"HTML parser limit: {limit}")
    return root


def deeper_than(root, levels: int) -> bool:
    """Whether an element of the tree under `root` (level 1) is more than `levels` levels deep."""
    if _COUNT_ELEMENTS(root) <= levels:  # (too few elements to be that deep: 4 µs a page where the walk takes 250)
        return False
    depth = 0
    for event, _ in lxml.etree.iterwalk(root, events=("start", "end")):
        depth += 1 if event == "start" else -1
        if depth > levels:
            return True
    return False
