"""``trafilatura``: trafilatura's main-text extraction, quiet about empty documents and retried
past libxml2's default nesting limit (with its huge limits; a page past those is refused)."""

from __future__ import annotations

import copy
import logging
import re

import lxml.etree

from ..errors import ExtractionError
from ..io.decoding import html_text
from .markup import MAX_TAGS_TRAFILATURA, checked
from .limits import parse_checked_html
from .text import composed

logger = logging.getLogger(__name__)

_TRAFILATURA_CONFIG = None
# An element as deep as libxml2's default limit lets trafilatura's parser nest (256 levels, <html> the first): it
# stopped reading the page there (or the page is exactly that deep).  (The tree, not the parser's log: trafilatura's
# one parser is shared by threads, and so is its log.)
_AT_DEFAULT_DEPTH = lxml.etree.XPath("boolean(/*" + "/*" * 255 + ")")

# trafilatura's table handling asks len() of the row it builds at each cell it adds, and lxml counts an element's
# children one by one: its time is the square of a row's cells (a 1 MB page of one row of 99,000 cells took it past
# the 30 s limit, 40,000 cells 4 to 12 s).  A page with an element of more cells than this (139 times the most on
# the development pages, 36) is refused, naming the bound; found by one XPath pass, made only on a page that holds
# that many cell tags at all (a regular expression: 0.2 ms a page, the XPath 1 ms).
MAX_ROW_CELLS = 5_000
_CELL_TAG = re.compile("<t[dh]", re.I)
_WIDE_ROW = lxml.etree.XPath(f"boolean(//*[count(td|th) > {MAX_ROW_CELLS}])")


def _check_rows(page: str, tree) -> None:
    """`ExtractionError` for a page whose `tree` (trafilatura's parse) has an element of more than `MAX_ROW_CELLS`
    table cells.

    Args:
        page: the page's text.
        tree: its parsed tree, or None.
    """
    if tree is not None and len(_CELL_TAG.findall(page)) > MAX_ROW_CELLS and _WIDE_ROW(tree):
        raise ExtractionError(f"the page has a table row of more than {MAX_ROW_CELLS:,} cells, past what "
                              f"trafilatura reads in time; another extractor (dense, fast) reads it")


# trafilatura logs these at ERROR level for a document that is empty or has no parsable tree:
# expected on a crawl (an empty body, a page of nothing but scripts), harmless (the extractor
# then returns no text, which the front ends count: no_text_extracted / emptied), and alarming
# when shown as ERROR in a run that went fine.  They are logged at DEBUG by our logger instead
# and counted in `TRAFILATURA_EMPTY_DOCUMENTS` (the front ends count the empty result itself).
_TRAFILATURA_EMPTY_MESSAGES = ("lxml parsing failed", "lxml parser bytestring", "parsed tree length",
                               "empty HTML tree", "too small/incorrect", "discarding data")
_TRAFILATURA_LOGGERS = ("trafilatura.utils", "trafilatura.core", "trafilatura.htmlprocessing",
                        "trafilatura.main_extractor", "trafilatura.baseline", "trafilatura.external")
TRAFILATURA_EMPTY_DOCUMENTS = 0


class _TrafilaturaEmptyDocumentFilter(logging.Filter):
    """Turns trafilatura's ERROR messages about empty documents into our DEBUG messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        global TRAFILATURA_EMPTY_DOCUMENTS
        message = record.getMessage()
        if record.levelno >= logging.WARNING and any(m in message for m in _TRAFILATURA_EMPTY_MESSAGES):
            TRAFILATURA_EMPTY_DOCUMENTS += 1
            logger.debug("trafilatura (empty document, no text extracted): %s", message)
            return False
        return True


def _quiet_trafilatura_empty_documents() -> None:
    # A filter works on the logger that emits, not on its parent: one per trafilatura module.
    for name in _TRAFILATURA_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(f, _TrafilaturaEmptyDocumentFilter) for f in target.filters):
            target.addFilter(_TrafilaturaEmptyDocumentFilter())


def _hashable_justext_stoplist() -> None:
    """trafilatura's justext fallback (run on every short page) passes its stoplist of all
    languages, a tuple of 154,484 words, to justext's ``lru_cache``d ``define_stoplist``, which
    hashes the whole tuple on every call: 7.5 ms per page, most of a small page's extraction
    time.  The same words as a frozenset (which keeps its hash) make that a cache lookup; the
    set of stopwords, so the output, is the same."""
    from trafilatura import external

    if not isinstance(external.JT_STOPLIST, frozenset):
        external.JT_STOPLIST = frozenset(external.JT_STOPLIST or external.jt_stoplist_init())


def _revise_paragraph_classification(paragraphs, max_heading_distance=200):
    """justext's ``revise_paragraph_classification`` (jusText 3.0), the same classes in linear time.  justext looks
    for each short (and each near-good) paragraph's neighbours by walking the paragraphs one by one from it, so a run
    of k short paragraphs costs k² steps: 1,000 nested ``<b>``s before 10,000 ``<p>x</p>`` (a 90 kB page, whose
    own extraction trafilatura found too short and handed to justext) took trafilatura past the 30 s limit, 90 s
    without it.  Here each neighbour is found in one pass each way, before the paragraphs it looks at change, as in
    justext (its "classify short" reads the classes before any short one is revised; its "revise neargood" reads,
    before a paragraph, the ones already revised)."""
    from justext.core import GOOD_OR_BAD

    n = len(paragraphs)

    def good_within_distance(i: int) -> bool:  # (justext's own walk: at most max_heading_distance characters)
        j, distance = i + 1, 0
        while j < n and distance <= max_heading_distance:
            if paragraphs[j].class_type == "good":
                return True
            distance += len(paragraphs[j].text)
            j += 1
        return False

    def nearest(classes, wanted, reverse):
        """For each paragraph, the class of the nearest one before it (`reverse`: after it) whose class is in
        `wanted`, else "bad"."""
        found, last = [None] * n, "bad"
        for i in (range(n - 1, -1, -1) if reverse else range(n)):
            found[i] = last
            if classes[i] in wanted:
                last = classes[i]
        return found

    for i, paragraph in enumerate(paragraphs):  # good headings (the paragraphs after it not copied yet, as in justext)
        paragraph.class_type = paragraph.cf_class
        if paragraph.heading and paragraph.class_type == "short" and good_within_distance(i):
            paragraph.class_type = "neargood"

    classes = [paragraph.class_type for paragraph in paragraphs]
    prev_good_bad, next_good_bad = nearest(classes, GOOD_OR_BAD, False), nearest(classes, GOOD_OR_BAD, True)
    near = GOOD_OR_BAD | {"neargood"}
    prev_any, next_any = nearest(classes, near, False), nearest(classes, near, True)
    for i, paragraph in enumerate(paragraphs):  # (classify short)
        if classes[i] != "short":
            continue
        before, after = prev_good_bad[i], next_good_bad[i]
        if before == "good" and after == "good":
            paragraph.class_type = "good"
        elif before == "bad" and after == "bad":
            paragraph.class_type = "bad"
        elif (before == "bad" and prev_any[i] == "neargood") or (after == "bad" and next_any[i] == "neargood"):
            paragraph.class_type = "good"
        else:
            paragraph.class_type = "bad"

    # (revise neargood: no short paragraph is left, so the one before each is revised already, and the nearest
    # good or bad one after it is one of the classes read now)
    next_good_bad = nearest([paragraph.class_type for paragraph in paragraphs], GOOD_OR_BAD, True)
    for i, paragraph in enumerate(paragraphs):
        if paragraph.class_type != "neargood":
            continue
        before = paragraphs[i - 1].class_type if i > 0 else "bad"
        paragraph.class_type = "bad" if (before, next_good_bad[i]) == ("bad", "bad") else "good"

    for i, paragraph in enumerate(paragraphs):  # more good headings
        if paragraph.heading and paragraph.class_type == "bad" and paragraph.cf_class != "bad" \
                and good_within_distance(i):
            paragraph.class_type = "good"


# (a run of whitespace holding a line break, whole: its first match.  Begun only where a run begins: tried at each
# space of a run without one, the pattern ran to the run's end each time, quadratic: 60,000 spaces before a word and
# a line break took trafilatura 18 s, 200,000 past its 30 s limit.)
_NEWLINE_RUN = re.compile(r"(?<!\s)\s*[\n\r]\s*")
_SPACE_RUN = re.compile(r"[^\S\n\r]+")


def _normalize_whitespace(text: str) -> str:
    """justext's ``normalize_whitespace`` (each run of whitespace one LF if it holds a CR or LF, else one space),
    without its Python call for each run: two passes of the regular expression engine."""
    if "\n" in text or "\r" in text:
        text = _NEWLINE_RUN.sub("\n", text)
    return _SPACE_RUN.sub(" ", text)


def _paragraph_text(paragraph) -> str:
    """justext's ``Paragraph.text`` (its text nodes joined, whitespace normalized), made once for the nodes it has:
    justext made it again at each of the ~35 times it is asked for a paragraph, with a Python call for each run of
    whitespace, so a page whose own extraction trafilatura found too short and that held 10 MB of words in one
    paragraph (a ``<textarea>``) took trafilatura 21 s of a core (20 MB: past the 30 s limit).  (Its nodes are only
    ever appended to: their count says whether the text made is still the paragraph's.)"""
    nodes = paragraph.text_nodes
    made = paragraph.__dict__.get("_plexity_text")
    if made is None or made[0] != len(nodes):
        made = paragraph._plexity_text = (len(nodes), _normalize_whitespace("".join(nodes).strip()))
    return made[1]


def _linear_justext() -> None:
    """trafilatura's justext fallback revises its paragraphs' classes with `_revise_paragraph_classification`, and
    makes each paragraph's text once (`_paragraph_text`), normalizing whitespace without a Python call per run."""
    from justext import paragraph
    from trafilatura import external

    external.revise_paragraph_classification = _revise_paragraph_classification
    paragraph.Paragraph.text = property(_paragraph_text)
    paragraph.normalize_whitespace = _normalize_whitespace  # (`Paragraph.append_text`'s, each text node's)


def html_to_text_trafilatura(html: str | bytes) -> str:
    """trafilatura's main text (paragraphs on their own lines); "" when it finds none."""
    # (libxml2's cost is the square of an element's attributes; trafilatura's ~40 us of a core a tag)
    return trafilatura_text(checked(html_text(html), "trafilatura", MAX_TAGS_TRAFILATURA))


@composed
def trafilatura_text(page: str) -> str:
    """`html_to_text_trafilatura` of a page `markup.checked` has given back (at most `MAX_TAGS_TRAFILATURA` tags)."""
    global _TRAFILATURA_CONFIG
    import trafilatura
    from trafilatura.settings import DEFAULT_CONFIG
    from trafilatura.utils import load_html

    if _TRAFILATURA_CONFIG is None:
        _quiet_trafilatura_empty_documents()
        _hashable_justext_stoplist()
        _linear_justext()
        config = copy.deepcopy(DEFAULT_CONFIG)
        # Its timeout uses SIGALRM, which only works in the main thread (Scrapy, servers).
        config["DEFAULT"]["EXTRACTION_TIMEOUT"] = "0"
        _TRAFILATURA_CONFIG = config
    if not page.strip():
        return ""
    options = {"config": _TRAFILATURA_CONFIG, "include_comments": False, "include_tables": True,
               "deduplicate": False}
    tree = load_html(page)  # (trafilatura's own parse, the one `extract` makes)
    _check_rows(page, tree)
    if tree is None or not _AT_DEFAULT_DEPTH(tree):
        return trafilatura.extract(page if tree is None else tree, **options) or ""
    # trafilatura's parser has libxml2's default limits: it reads no further than 256 levels of nesting, and holds the
    # page's first part (whose text, or none, would pass for the page's).  With the huge limits libxml2 reads 2,048
    # levels; a page past those too is refused (`parse_checked_html`) before trafilatura's passes over the tree.
    root = parse_checked_html(page)
    return (trafilatura.extract(root, **options) or "") if root is not None else ""
