"""From HTML to text: charset decoding and the extractors the filter runs after.

- ``tags``: the text of every visible element, one line per block element (pyplexity's
  tag remover, but keeping block breaks, which the filter uses as boundaries).
- ``trafilatura``: trafilatura's main-text extraction.
- ``fast``: resiliparse's main-content extraction (lexbor parser): trafilatura's job at many
  times its speed (figures in the README's "Cleaning quality").
- ``auto`` (the default): trafilatura's text, or fast's when fast finds text that trafilatura
  left out (`prefer_fuller`).
- ``none``: the input already is text.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Callable

import lxml.etree
import lxml.html

logger = logging.getLogger(__name__)

EXTRACTORS = ("auto", "trafilatura", "fast", "tags", "none")
DEFAULT_EXTRACTOR = "auto"
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
# A page's declaration of its one item: schema.org JSON-LD or microdata, or Open Graph's og:type.
# Each form is looked for with str.find on its literal start, then matched there (regex scans of a
# 240 KB page took 1.2 ms; one case-insensitive alternation 14 ms).
_ITEM_TYPES = r"(?:Article|NewsArticle|BlogPosting|ReportageNews|AnalysisNewsArticle|Product)"
_ITEM_DECLARATIONS = {
    "@type": re.compile(r"""@type["']\s*:\s*\[?\s*["'](?:https?://schema\.org/)?""" + _ITEM_TYPES + r"""["']"""),
    "itemtype": re.compile(r"""itemtype\s*=\s*["']?https?://schema\.org/""" + _ITEM_TYPES + r"""\b"""),
    "og:type": re.compile(r"""og:type["']?\s+content\s*=\s*["'](?:og:)?(?:article|product)"""),
}
# Open Graph with its attributes the other way round: content="product" property="og:type"
_OG_ITEM_BEFORE = re.compile(r"""content\s*=\s*["'](?:og:)?(?:article|product)[^"']*["']\s+property\s*=\s*["']$""")

# Elements whose content is never visible text.
SKIP_TAGS = frozenset({
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "math",
    "iframe", "object", "embed", "canvas", "audio", "video", "source", "track", "map", "select",
    "option", "datalist", "textarea", "input", "button",
})
# Elements that start a new line (HTML block-level and similar).
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "br", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
    "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu",
    "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
    "tr", "ul",
})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_SPACES = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


class ExtractionError(ValueError):
    pass


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding) of an HTML body: BOM, then the Content-Type header, then
    <meta charset>, else UTF-8; undecodable bytes become U+FFFD (never raises)."""
    from w3lib.encoding import html_to_unicode

    encoding, text = html_to_unicode(content_type, body)
    return text, encoding


def decode_html_counted(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `decode_html`, counting the U+FFFD it had to insert."""
    text, _ = decode_html(body, content_type)
    return text, max(0, text.count("\ufffd") - body.count("\ufffd".encode()))


def _is_hidden(element) -> bool:
    attrib = element.attrib
    if "hidden" in attrib or attrib.get("aria-hidden") == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


# libxml2 stops at 256 levels of nesting and at a text node (or script, attribute) of ~10 MB unless
# told XML_PARSE_HUGE (lxml's huge_tree), and past a limit it returns an *empty* document, not a
# truncated one.  Inputs are capped in size before they get here, so the huge limits (2,048
# levels, no buffer limit) are safe; a page beyond even those is refused with the limit named.
_LIMIT_MESSAGES = ("Excessive depth", "Resource limit exceeded", "XML_PARSE_HUGE")


def _parser_limit(parser) -> str | None:
    """libxml2's message if the last parse by `parser` stopped at one of its limits."""
    for entry in parser.error_log:
        if any(m in entry.message for m in _LIMIT_MESSAGES):
            return entry.message.strip()
    return None


def _parse(html: str | bytes):
    """(root element or None for an empty document, libxml2's limit message if it hit one)."""
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    html = html.replace("\x00", "")
    if not html.strip():
        return None, None
    parser = lxml.html.HTMLParser(huge_tree=True)
    try:
        root = lxml.html.document_fromstring(html, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        # lxml refuses str input with an XML encoding declaration; go through bytes.
        parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True)
        try:
            root = lxml.html.document_fromstring(html.encode("utf-8"), parser=parser)
        except (lxml.etree.ParserError, ValueError):
            limit = _parser_limit(parser)
            raise ExtractionError(f"HTML parser limit: {limit}" if limit else f"unparsable HTML: {exc}") from exc
    return root, _parser_limit(parser)


def html_to_text_tags(html: str | bytes) -> str:
    """Visible text, one line per block element, whitespace inside a line collapsed."""
    root, limit = _parse(html)
    if root is None:
        return ""
    parts: list[str] = []

    def inline(text: str, in_pre: bool) -> str:
        # A newline in the HTML source is a space to a browser, except inside <pre>.
        return text if in_pre else text.replace("\n", " ")

    # Depth-first, with a stack of its own: pages nest up to libxml2's 2,048 levels, deeper
    # than Python's recursion limit.  An entry is (element, in <pre>, None) to enter an element,
    # or (element, in <pre> around it, closes a block) to leave it.
    stack: list[tuple] = [(root, False, None)]
    while stack:
        element, in_pre, leaving_block = stack.pop()
        if leaving_block is None:
            tag = element.tag if isinstance(element.tag, str) else ""
            tag = tag.lower()
            if not (tag in SKIP_TAGS or not tag or _is_hidden(element)):
                block = tag in BLOCK_TAGS
                inner_pre = in_pre or tag == "pre"
                if block:
                    parts.append("\n")
                if element.text:
                    parts.append(inline(element.text, inner_pre))
                stack.append((element, in_pre, block))
                stack.extend((child, inner_pre, None) for child in reversed(element))
                continue
        elif leaving_block:
            parts.append("\n")
        # The tail is text after the element, inside the parent: always visible.
        if element.tail:
            parts.append(inline(element.tail, in_pre))

    text = _SPACES.sub(" ", "".join(parts))
    lines = (line.strip() for line in text.split("\n"))
    text = "\n".join(line for line in lines if line)
    if limit and not text:
        raise ExtractionError(f"HTML parser limit: {limit}")
    return text


_TRAFILATURA_CONFIG = None

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


def html_to_text_trafilatura(html: str | bytes) -> str:
    """trafilatura's main text (paragraphs on their own lines); "" when it finds none."""
    global _TRAFILATURA_CONFIG
    import trafilatura
    from trafilatura.settings import DEFAULT_CONFIG

    if _TRAFILATURA_CONFIG is None:
        _quiet_trafilatura_empty_documents()
        config = copy.deepcopy(DEFAULT_CONFIG)
        # Its timeout uses SIGALRM, which only works in the main thread (Scrapy, servers).
        config["DEFAULT"]["EXTRACTION_TIMEOUT"] = "0"
        _TRAFILATURA_CONFIG = config
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    options = {"config": _TRAFILATURA_CONFIG, "include_comments": False, "include_tables": True,
               "deduplicate": False}
    text = trafilatura.extract(html, **options)
    if not text:
        # trafilatura's parser has libxml2's default limits: a page nested 256 deep comes out
        # empty.  Only then (it costs a parse): parse it with the huge limits and try again.
        probe = lxml.html.HTMLParser(remove_comments=True, remove_pis=True)
        try:
            lxml.html.document_fromstring(html, parser=probe)
        except (lxml.etree.ParserError, ValueError):
            pass
        if _parser_limit(probe):
            root, limit = _parse(html)
            text = trafilatura.extract(root, **options) if root is not None else ""
            if not text:
                raise ExtractionError(f"HTML parser limit: {limit or _parser_limit(probe)}")
    return text or ""


# No alt texts, form fields or bullets: only the text a reader sees as the page's own.
_FAST_OPTIONS = {"main_content": True, "alt_texts": False, "form_fields": False, "list_bullets": False}


# A page with more <article> elements than this is a listing or a thread, not one article (and
# the count bounds the work on hostile pages).
_MAX_ARTICLES = 100


def _closest_article(element):
    while element is not None and element.tag != "article":
        element = element.parent
    return element


def _shape(element) -> tuple:
    parent = element.parent
    return (parent.tag, parent.getattr("class")) if parent is not None else ()


# trafilatura's names for an article's content container (the first stage of its BODY_XPATH:
# entry-content, post-content, article-body ...), matched as it does (a regular expression
# search in the id or class attribute of an article, div, main or section element).
_BODY_ID = re.compile(r"(?:entry|article|art)-content|article__content|article(?:-|__)?body|articleBody|body-text")
_BODY_CLASS = re.compile(
    r"post[-_]text|post-body|post-?entry|post[-_]?content|postContent|post_inner_wrapper|article-?text|articleText"
    r"|(?:entry|page|text|article|art)-content|article__content|article(?:-|__)?body|articleBody|ArticleContent"
    r"|body-text|article__container")
_BODY_TAGS = frozenset({"article", "div", "main", "section"})
# Every element whose id or class could match, for lexbor to find (iterating over all elements
# in Python would cost more): each alternative of _BODY_ID contains "-content", "rticle" or
# "body-text"; each of _BODY_CLASS "post", "rticle", "-content" or "body-text", or is
# class="entry" (lexbor walks the tree once per selector: the fewer, the faster).
_NAMED_CANDIDATES = ", ".join(["article", '[class="entry"]'] + [f'[{attribute}*="{part}"]' for attribute in ("id", "class")
                                                              for part in ("-content", "rticle", "body-text")]
                              + ['[class*="post"]'])
_DECLARED_CANDIDATES = '[itemprop~="articleBody"], ' + _NAMED_CANDIDATES


# Its second stage, tried after <article>: story-body, story-content, single-content ...
_STORY_ID = re.compile(r"^primary|story-body")
_STORY_CLASS = re.compile(r"(?i:fulltext)|^article |post-bodycopy|story-?content|(?:theme|blog|section|single)-content"
                          r"|single-post|main-column|wpb_text_column|story-body|field-body")
_STORY_CANDIDATES = ", ".join(
    ["[role=article]", "[id=article]", "[id=story]", "[id^=primary]", "[id*=story-body]"]
    + [f"[class*={part}]" for part in ("ulltext", "ULLTEXT", "ullText", "rticle", "ody", "ontent", "ingle",
                                       "olumn", "ostarea", "cell", "text", "story")])


def _is_story_body(element) -> bool:
    if element.tag not in _BODY_TAGS:
        return False
    cls, ident = element.getattr("class") or "", element.getattr("id") or ""
    return (element.getattr("role") == "article" or ident in ("article", "story")
            or cls in ("postarea", "art-postcontent", "text", "cell", "story")
            or bool(_STORY_ID.search(ident)) or bool(_STORY_CLASS.search(cls)))


def _is_named_body(element) -> bool:
    if element.tag not in _BODY_TAGS:
        return False
    cls, ident = element.getattr("class") or "", element.getattr("id") or ""
    return (cls in ("post", "entry") or ident == "articleContent" or bool(_BODY_ID.search(ident))
            or bool(_BODY_CLASS.search(cls)))


def _first_unrepeated(named: list):
    """The first of `named`, unless another one of the same tag and class, outside it, repeats
    it (the posts of a thread); else None."""
    if not named:
        return None
    first = named[0]
    key = (first.tag, first.getattr("class"))
    if any((other.tag, other.getattr("class")) == key and not first.contains(other) for other in named[1:]):
        return None
    return first


def _declared_body(tree):
    """The element the page declares as its article: its one itemprop="articleBody" element; else
    the first element named as an article's content (`_is_named_body`) and not repeated (see
    `_first_unrepeated`), when it holds at least half of the words of the <article> below, if
    any; else the <article> with the most words of its own (those of the <article>s nested in
    it, which HTML uses for comments and related posts, not counted), unless another <article>
    sits in a parent of the same tag and class (posts of a thread, cards of a listing); else,
    with no such <article>, the first unrepeated element of trafilatura's second-stage names
    (`_is_story_body`); else None."""
    body = tree.body
    if body is None:
        return None
    # One pass of lexbor over the tree for all three kinds (NodeList.values(): indexing a
    # NodeList item by item runs its query again each time).
    found = body.query_selector_all(_DECLARED_CANDIDATES).values()
    declared = [e for e in found if "articleBody" in (e.getattr("itemprop") or "").split()]
    if len(declared) == 1:
        return declared[0]
    best, best_words = None, 0
    articles = [e for e in found if e.tag == "article"]
    if articles and len(articles) <= _MAX_ARTICLES:
        own = [len((a.text or "").split()) for a in articles]
        index = {a: i for i, a in enumerate(articles)}
        for article in articles:
            outer = _closest_article(article.parent)
            if outer is not None and outer in index:
                own[index[outer]] -= len((article.text or "").split())
        i = max(range(len(articles)), key=own.__getitem__)
        shape = _shape(articles[i])
        if not any(_shape(other) == shape for other in articles if other != articles[i]):
            best, best_words = articles[i], own[i]
    named = _first_unrepeated([e for e in found if _is_named_body(e)])
    if named is not None and 2 * len((named.text or "").split()) >= best_words:
        return named
    if best is None:
        return _first_unrepeated([e for e in body.query_selector_all(_STORY_CANDIDATES).values()
                                  if _is_story_body(e)])
    return best


def _keep_only(tree, element) -> None:
    """Makes the body hold `element` alone, inside shallow copies of its ancestors (so that the
    main-content heuristic sees it where it was: same tags, classes and ids around it)."""
    body = tree.body
    top, ancestor = element, element.parent
    while ancestor is not None and ancestor != body:
        shell = ancestor.clone_node(False)
        shell.append_child(top)
        top, ancestor = shell, ancestor.parent
    body.replace_children(top)


# The blocks tested: those holding a link (a div only when no block is inside it: an outer div is
# long, and its short inner blocks are tested themselves).
_LINK_BLOCKS = "p:has(a), ul:has(a), ol:has(a), div:has(a):not(:has(div, p, ul, ol))"


def _drop_link_dense(element) -> None:
    """Inside `element`, removes the short blocks (under 100 characters) that are mostly link text
    (over 80%): trafilatura's link density test."""
    chosen = []
    for block in element.query_selector_all(_LINK_BLOCKS).values():
        text = "".join((block.text or "").split())
        if not text or len(text) >= 100:
            continue
        links = block.query_selector_all("a").values()
        if sum(len("".join((a.text or "").split())) for a in links) > 0.8 * len(text):
            chosen.append(block)
    outer = []
    for block in chosen:  # in document order: a block's descendants come right after it
        if not (outer and outer[-1].contains(block)):
            outer.append(block)
    for block in outer:
        block.parent.remove_child(block)


def _drop_sectioning(element) -> None:
    """Removes the <header> and <footer> elements inside `element`: an article's header holds its
    title, byline and date (HTML: "introductory content"), its footer the author, copyright and
    "first published" lines (HTML: "information about its section"), not its text."""
    for part in element.query_selector_all("header, footer").values():
        if part.parent is not None:
            part.parent.remove_child(part)


# Text nodes put around the declared element, so that one extraction of the page gives both the
# page's main content and the element's part of it.  (A page that holds them itself takes the
# slower path, `_declared_alone`.)
_START, _END = "plexitydeclaredstart4e1f", "plexitydeclaredend4e1f"


def _lines(text: str) -> str:
    """One line per block, whitespace inside a line collapsed, no empty lines."""
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _words(*texts: str) -> int:
    return sum(len(text.split()) for text in texts)


def _declared_alone(tree, declared, page_text: str) -> str:
    """The declared element's main content judged alone (inside shells of its ancestors), if it
    holds at least half as many words as `page_text`, the page's main content; else `page_text`.
    For a page whose main-content heuristic drops the element where it stands (a site-wide
    class on an ancestor, a single "main" container elsewhere)."""
    from resiliparse.extract.html2text import extract_plain_text

    _keep_only(tree, declared)
    inner = extract_plain_text(tree, **_FAST_OPTIONS).replace(_START, "").replace(_END, "")
    return inner if 2 * _words(inner) >= _words(page_text) else page_text


def html_to_text_fast(html: str | bytes) -> str:
    """resiliparse's main content (its heuristic drops navigation, headers, footers and
    sidebars), one line per block, whitespace inside a line collapsed; "" when none.

    When the page declares its article (see `_declared_body`) and that element holds at least
    half of the page's main-content words, only that element's main content is kept, without its
    <header> and <footer> (title, byline, date; author and copyright lines) and its short link
    blocks (`_drop_link_dense`: on an article page they are "Read more", related and share links;
    on other pages, which declare no article, links are left alone).  One extraction serves both:
    the element is marked where it stands (`_START`, `_END`); only when the page's heuristic drops
    it there is it extracted again alone (`_declared_alone`)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    declared = _declared_body(tree)
    if declared is None:
        return _lines(extract_plain_text(tree, **_FAST_OPTIONS))
    _drop_link_dense(declared)
    _drop_sectioning(declared)
    first = declared.first_child
    if first is None:
        declared.append_child(tree.create_text_node(_START))
    else:
        declared.insert_before(tree.create_text_node(_START), first)
    declared.append_child(tree.create_text_node(_END))
    text = extract_plain_text(tree, **_FAST_OPTIONS)
    if text.count(_START) == 1 and text.count(_END) == 1:
        before, rest = text.split(_START)
        if _END in rest:
            inner, after = rest.split(_END)
            return _lines(inner if 2 * _words(inner) >= _words(before, inner, after) else before + inner + after)
    return _lines(_declared_alone(tree, declared, text.replace(_START, "").replace(_END, "")))


def declares_article_or_product(html: str) -> bool:
    """Whether the page declares itself one article or one product (schema.org ``Article``,
    ``NewsArticle``, ``BlogPosting`` ... or ``Product`` in JSON-LD or microdata, or Open Graph's
    ``og:type`` article or product)."""
    for marker, declaration in _ITEM_DECLARATIONS.items():
        at = html.find(marker)
        while at >= 0:
            if declaration.match(html, at) or (
                    marker == "og:type" and _OG_ITEM_BEFORE.search(html, max(0, at - 120), at)):
                return True
            at = html.find(marker, at + 1)
    return False


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


def html_to_text_auto(html: str | bytes) -> str:
    """trafilatura's main text, or fast's where trafilatura left out part of the page
    (`prefer_fuller`; the page's declaration of one article or product is looked for only when
    it matters).  Costs both extractions (fast adds a few ms to trafilatura's tens).  A page
    past the parser's nesting limit fails with trafilatura's `ExtractionError`, and fast is not
    run on it."""
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    return prefer_fuller(html_to_text_trafilatura(html), html_to_text_fast(html),
                         lambda: declares_article_or_product(html))


def _identity(text: str | bytes) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text


def get_extractor(name: str) -> Callable[[str | bytes], str]:
    """The extractor function for `name` (one of EXTRACTORS)."""
    try:
        return {"auto": html_to_text_auto, "tags": html_to_text_tags, "trafilatura": html_to_text_trafilatura,
                "fast": html_to_text_fast, "none": _identity}[name]
    except KeyError:
        raise ValueError(f"unknown extractor {name!r}: choose one of {', '.join(EXTRACTORS)}") from None
