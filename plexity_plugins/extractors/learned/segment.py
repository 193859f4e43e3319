"""HTML to blocks in one pass: the units the learned reader labels, with what each block's
elements are and how much text and link text each element holds.

A page is read as a stream of tags and text (no tree is built): a stack of open elements, with
HTML's usual implied ends (a ``<p>`` closes an open ``<p>``, an ``<li>`` the open ``<li>`` of its
list, a cell the open cell of its row, and so on) and an end tag closing the nearest open
element of its name.  A **block** is the text between two block-level tags (``p``, ``div``,
``li``, ``td``, ``h1``, ...) or line breaks (``<br>``; inside ``<pre>`` a line of the block),
whitespace collapsed (kept inside ``<pre>``); its **element** is the innermost open block-level
element.  Every element records its
tag, its parent, the words and link words of its subtree and how many blocks and elements it
holds: the evidence (text density, link density, declared structure) that the features of
`features.py` read.

The procedure is specified here and in `segment` so that the compiled port
(`plexity_plugins._native`, `native/`) can give exactly the same blocks; tests hold the two equal.

Bounded for hostile pages: work is linear in the page, the stack of open elements is at most
`MAX_DEPTH` deep, inline ones `MAX_INLINE_DEPTH` (deeper elements are read as text of the innermost
one), an end tag looks at most `MAX_CLOSE_SEARCH` elements down the stack for its match, and a page
is read up to its
`MAX_BLOCKS`-th block or `MAX_ELEMENTS`-th element (what follows is not read, and
``Page.truncated`` says so: the extractor then refuses the page, `learned.read_whole`): a 50 MB
page of ``<p>a`` would otherwise be 12 million blocks, and their rows of features gigabytes.
(The largest of 2,144 development pages has 6,571 blocks and 9,444 elements.)
"""

from __future__ import annotations

import html as _html
import json
import re

from ..nesting import comment_end
from ..text import CHARS_PER_HAN_WORD, han_extra

MAX_DEPTH = 256
# Inline elements are open at most this deep: the last levels are kept for block-level ones, so that a
# paragraph under hundreds of inline tags is still a paragraph (it used to be read as part of the
# block around them, and the reader dropped it).
MAX_INLINE_DEPTH = MAX_DEPTH - 16
MAX_CLOSE_SEARCH = 64
MAX_BLOCKS = 50_000
MAX_ELEMENTS = 200_000

# Elements that start and end a block (HTML's block-level and table elements).
BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset figcaption "
    "figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li listing main menu nav ol "
    "noscript optgroup option p pre search section summary table tbody td tfoot th thead tr ul".split())
# Elements without an end tag.
VOID_TAGS = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
# Elements whose content is not markup: skipped to their end tag (``title``'s is the page's title):
# a script's where browsers find it (`_find_script_end`), a template's, svg's or math's counting
# their nesting (`_find_nested_end`), any other's the first.
# (``noscript`` is read: what a page shows without scripts is what a crawler got, often the whole
# text of a page that a script renders.)
RAW_TAGS = frozenset("script style textarea title xmp iframe noembed noframes template plaintext svg math".split())
# Ruby annotations: the reading printed above a character (Japanese furigana, Chinese pinyin), not
# the text; skipped to the next tag (their end tag may be left out).
ANNOTATION_TAGS = frozenset(("rt", "rp"))
# Implied ends: a start tag of the key closes the open elements of the value, looking down the
# stack no further than the first of the ``scope`` elements.
_CLOSES_P = frozenset("address article aside blockquote center details dialog dir div dl fieldset figcaption figure "
                      "footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary table "
                      "ul li dd dt".split())
# What a page says of its own kind, counted for `features.page_kind`: schema.org's types (JSON-LD
# ``@type``, microdata ``itemtype``) by family, and start tags of a few elements.
SCHEMA_FAMILIES = ("article", "product", "listing", "discussion", "howto", "service", "web")
_SCHEMA_TYPES = {
    "article": "article newsarticle blogposting report scholarlyarticle techarticle blog liveblogposting "
               "opinionnewsarticle analysisnewsarticle reportagenewsarticle socialmediaposting",
    "product": "product offer aggregateoffer productgroup vehicle book softwareapplication individualproduct",
    "listing": "itemlist collectionpage searchresultspage offercatalog",
    "discussion": "discussionforumposting qapage question answer comment",
    "howto": "faqpage howto recipe howtostep",
    "service": "service localbusiness organization contactpage aboutpage restaurant event place course jobposting "
               "person",
    "web": "webpage website breadcrumblist sitenavigationelement",
}
SCHEMA_FAMILY = {name: k for k, family in enumerate(SCHEMA_FAMILIES) for name in _SCHEMA_TYPES[family].split()}
COUNTED_TAGS = ("article", "h2", "time", "input", "img", "li", "p")
_COUNTED = {tag: k for k, tag in enumerate(COUNTED_TAGS)}
_LIST_SCOPE = frozenset("ul ol menu dir table body html".split())
_TABLE_SCOPE = frozenset("table body html".split())

# Tag vocabulary of the features: an element's tag as a number (0: any other tag).
TAGS = ("other", "a", "address", "article", "aside", "b", "blockquote", "body", "button", "caption", "center",
        "code", "dd", "details", "div", "dl", "dt", "em", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "html", "i", "label", "legend", "li", "main", "nav", "ol",
        "option", "p", "pre", "section", "select", "small", "span", "strong", "summary", "table", "tbody", "td",
        "th", "time", "tr", "u", "ul", "cite", "font", "dialog", "menu", "hgroup", "search", "thead", "tfoot",
        "noscript")
TAG_ID = {tag: i for i, tag in enumerate(TAGS)}

_HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
_ATTRIBUTE = re.compile(r"""([^\s"'=<>/`]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""")
_NAME = re.compile(r"[^\s/>]*")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
# Roles and landmarks HTML itself gives (generic semantics, never names from pages).
ROLE_IDS = {"main": 1, "article": 2, "navigation": 3, "complementary": 4, "banner": 5, "contentinfo": 6,
            "menu": 7, "menubar": 7, "list": 8, "listitem": 8, "dialog": 9, "alertdialog": 9, "search": 3,
            "tablist": 7, "tab": 7, "button": 10, "link": 10}


class Element:
    """An open or closed element of the page: tag, parent, and counts of its subtree."""

    __slots__ = ("tag", "parent", "depth", "block", "role", "hidden", "declared", "words", "link_words", "blocks",
                 "elements", "links", "first_block", "last_block", "chars", "long_blocks", "long_words",
                 "signature")

    def __init__(self, tag: str, parent: int, depth: int, block: bool):
        self.tag = tag
        self.parent = parent
        self.depth = depth
        self.block = block
        self.role = 0          # ROLE_IDS of its role attribute
        self.hidden = False    # hidden attribute, aria-hidden=true, inline display:none / visibility:hidden
        self.declared = False  # itemprop=articleBody / text (schema.org's item text)
        self.words = 0         # words of its subtree
        self.link_words = 0    # ... of which inside links
        self.chars = 0         # characters (not whitespace) of its subtree
        self.blocks = 0        # blocks of its subtree
        self.long_blocks = 0   # ... holding a sentence end and 10 words or more
        self.long_words = 0    # words of those blocks
        self.signature = ""    # its tag and class attribute: what repeats in a list of like items
        self.elements = 0      # elements of its subtree (itself excluded)
        self.links = 0         # <a href> elements of its subtree
        self.first_block = -1
        self.last_block = -1


class Block:
    """A run of text between two block-level tags."""

    __slots__ = ("text", "element", "words", "link_words", "chars", "links", "inline", "lines")

    def __init__(self, text: str, element: int, words: int, link_words: int, chars: int, links: int, inline: int,
                 lines: int):
        self.text = text
        self.element = element        # index of its innermost block-level element
        self.words = words
        self.link_words = link_words  # words inside <a>
        self.chars = chars            # characters that are not whitespace
        self.links = links            # <a> elements that gave it text
        self.inline = inline          # bit set of the inline context (INLINE_BITS) of its words
        self.lines = lines            # lines in it (<br> breaks inside <pre>)


INLINE_BITS = {"a": 1, "b": 2, "strong": 2, "em": 4, "i": 4, "button": 8, "label": 8, "select": 8, "time": 16,
               "small": 32, "code": 64, "cite": 128, "h1": 256, "h2": 256, "h3": 256, "h4": 256, "h5": 256,
               "h6": 256}


class Page:
    """The blocks and elements of a page, and what its head declares."""

    __slots__ = ("blocks", "elements", "title", "chars", "truncated", "declared", "summaries", "og_type",
                 "canonical", "og_url", "schema_counts", "tag_counts")

    def __init__(self):
        self.blocks: list[Block] = []
        self.elements: list[Element] = [Element("#root", -1, 0, True)]
        self.title = ""
        self.chars = 0
        self.truncated = False  # read only up to MAX_BLOCKS blocks or MAX_ELEMENTS elements
        self.declared: list[str] = []   # the text a JSON-LD item declares (articleBody, text)
        self.summaries: list[str] = []  # the page's descriptions (meta description, og / twitter)
        self.og_type = ""    # the first og:type's content, stripped, ASCII lower case
        self.canonical = ""  # the first <link rel=canonical>'s href that starts with "http", stripped
        self.og_url = ""     # the first og:url's content that starts with "http", stripped
        self.schema_counts = [0] * len(SCHEMA_FAMILIES)  # schema.org types named, by family
        self.tag_counts = [0] * len(COUNTED_TAGS)        # start tags of COUNTED_TAGS read


class _Reader:
    """The state of one pass over a page (see the module's docstring)."""

    def __init__(self):
        self.page = Page()
        self.stack = [0]          # indices into page.elements; 0 is the root
        self.text: list[str] = []  # pieces of the current block
        self.words = 0
        self.link_words = 0
        self.links = 0
        self.inline = 0
        self.lines = 1
        self.in_link = 0          # open <a> elements
        self.in_pre = 0
        self.link_counted = False  # the current <a> already gave this block words

    # -- text ---------------------------------------------------------------------------

    def add_text(self, raw: str) -> None:
        text = unescape(raw) if "&" in raw else raw
        if not self.in_pre:
            text = collapse(text)
        if not text:
            return
        words = count_words(text)
        self.text.append(text)
        self.words += words
        if self.in_link and words:
            self.link_words += words
            if not self.link_counted:
                self.links += 1
                self.link_counted = True
        if words:
            bits = 0
            elements = self.page.elements
            for index in self.stack[-8:]:
                bits |= INLINE_BITS.get(elements[index].tag, 0)
            self.inline |= bits

    def line_break(self) -> None:
        self.text.append("\n")
        self.lines += 1

    def flush(self) -> None:
        """End the current block (at a block-level tag)."""
        if not self.text:
            return
        text = "".join(self.text)
        self.text = []
        if self.in_pre:
            lines = [line.rstrip() for line in text.split("\n")]
        else:
            # (the same as " ".join(line.split()) (\s and str.split's whitespace are one set), without
            # the list of a long line's words)
            lines = [" ".join(line.split()) if len(line) <= _LIST_CHARS else collapse(line).strip(" ")
                     for line in text.split("\n")]
        text = "\n".join(line for line in lines if line.strip())
        words, link_words, links, inline = self.words, self.link_words, self.links, self.inline
        self.words = self.link_words = self.links = self.inline = 0
        self.lines = 1
        self.link_counted = False
        if not text:
            return
        elements = self.page.elements
        element = next(i for i in reversed(self.stack) if elements[i].block)
        chars = len(text) - text.count(" ") - text.count("\n")
        block = Block(text, element, words, link_words, chars, links, inline, text.count("\n") + 1)
        index = len(self.page.blocks)
        self.page.blocks.append(block)
        self.page.chars += chars
        # counted on the innermost open element; added to its parent's when it closes (`_pop_to`)
        e = elements[self.stack[-1]]
        e.words += words
        e.link_words += link_words
        e.chars += chars
        e.blocks += 1
        if words >= 10 and _ends_sentence(text):
            e.long_blocks += 1
            e.long_words += words
        if e.first_block < 0:
            e.first_block = index
        e.last_block = index

    # -- tags -----------------------------------------------------------------------------

    def open(self, tag: str, attributes: str) -> None:
        block = tag in BLOCK_TAGS
        if block:
            self.flush()
            self._implied_ends(tag)
        if tag in VOID_TAGS:
            if tag == "br":
                if self.in_pre:
                    self.line_break()
                else:
                    # (the lines a page sets apart by breaks are as often different things, a byline,
                    # a credit, a related title under the text, as one paragraph's lines: each its own
                    # block, labelled on its own evidence)
                    self.flush()
            return
        if len(self.stack) >= (MAX_DEPTH if block else MAX_INLINE_DEPTH):
            return
        elements = self.page.elements
        parent = self.stack[-1]
        element = Element(tag, parent, len(self.stack), block)
        element.signature = tag
        if attributes:
            _read_attributes(element, attributes, self.page)
        index = len(elements)
        elements.append(element)
        elements[parent].elements += 1
        if tag == "a":
            self.in_link += 1
            self.link_counted = False
            element.links = 1
        elif tag == "pre":
            self.in_pre += 1
        self.stack.append(index)

    def _implied_ends(self, tag: str) -> None:
        if tag in _CLOSES_P:
            self._close_in_scope(("p",), frozenset(("button", "table", "td", "th", "body", "html")))
        if tag == "li":
            self._close_in_scope(("li",), _LIST_SCOPE)
        elif tag in ("dt", "dd"):
            self._close_in_scope(("dt", "dd"), frozenset(("dl", "body", "html")))
        elif tag in ("td", "th"):
            self._close_in_scope(("td", "th"), _TABLE_SCOPE | {"tr"})
        elif tag == "tr":
            self._close_in_scope(("tr", "td", "th"), _TABLE_SCOPE)
        elif tag in ("option", "optgroup"):
            self._close_in_scope(("option",), frozenset(("select", "body", "html")))

    def _close_in_scope(self, names: tuple[str, ...], scope: frozenset) -> None:
        elements = self.page.elements
        for depth in range(len(self.stack) - 1, max(0, len(self.stack) - 1 - MAX_CLOSE_SEARCH), -1):
            tag = elements[self.stack[depth]].tag
            if tag in names:
                self._pop_to(depth)
                return
            if tag in scope:
                return

    def close(self, tag: str) -> None:
        if tag in BLOCK_TAGS or tag == "br":
            self.flush()
        if tag == "br":  # </br> is <br>
            self.line_break()
            return
        elements = self.page.elements
        for depth in range(len(self.stack) - 1, max(0, len(self.stack) - 1 - MAX_CLOSE_SEARCH), -1):
            if elements[self.stack[depth]].tag == tag:
                self._pop_to(depth)
                return

    def _pop_to(self, depth: int) -> None:
        """Close the element at `depth` of the stack and every element above it."""
        elements = self.page.elements
        while len(self.stack) > depth:
            if elements[self.stack[-1]].block:
                self.flush()
            element = elements[self.stack.pop()]
            _add_to(elements[self.stack[-1]], element)
            if element.tag == "a":
                self.in_link -= 1
                self.link_counted = False
            elif element.tag == "pre":
                self.in_pre -= 1


def _add_to(parent: Element, child: Element) -> None:
    """Add a closed element's subtree counts to its parent's."""
    parent.words += child.words
    parent.link_words += child.link_words
    parent.chars += child.chars
    parent.blocks += child.blocks
    parent.long_blocks += child.long_blocks
    parent.long_words += child.long_words
    parent.elements += child.elements
    parent.links += child.links
    if child.first_block >= 0:
        if parent.first_block < 0 or child.first_block < parent.first_block:
            parent.first_block = child.first_block
        parent.last_block = max(parent.last_block, child.last_block)


# Matches are counted as a list up to this many characters of text, one at a time beyond: the list
# of a long text's matches is far larger than the text (the 2 million words of a 10 MB block, 110 MB;
# the 5 million ". " of another, 300 MB), and the ceiling of an extraction is 768 MiB.
_LIST_CHARS = 1 << 18


def section_ends(page: Page) -> list[int]:
    """Per block, the last block its section may reach if it is a heading's: the end of the
    nearest of its element's two block-level ancestors that holds more blocks than the element
    (its parent, or its grandparent where the parent holds only the heading), else the page's."""
    elements, last = page.elements, len(page.blocks) - 1
    out = []
    for block in page.blocks:
        own = elements[block.element].blocks
        at, hops, end = elements[block.element].parent, 0, last
        while at >= 0 and hops < 2:
            if elements[at].block:
                hops += 1
                if elements[at].blocks > own:
                    end = min(last, elements[at].last_block)
                    break
            at = elements[at].parent
        out.append(end)
    return out


def count_words(text: str) -> int:
    """The words of `text`: its ``\\w+`` runs, a run of Han or kana counted as one word a `CHARS_PER_HAN_WORD`
    characters (Chinese and Japanese are written without spaces: a headline of twelve characters would otherwise
    be one word, as short as "Home").  Thai and the like need no help here: ``\\w`` stops at their vowel marks."""
    return count(_WORD, text) + han_extra(text)


def count(pattern: re.Pattern, text: str) -> int:
    """``len(pattern.findall(text))``, without the list of a long text's matches."""
    if len(text) <= _LIST_CHARS:
        return len(pattern.findall(text))
    return sum(1 for _ in pattern.finditer(text))


def pieces(text: str, cut_at: re.Pattern, size: int = _LIST_CHARS):
    """(start, end) of the pieces of `text`, `size` characters or a little more, each cut where
    `cut_at` next matches (so that no token or run that it cannot match is cut)."""
    start, length = 0, len(text)
    while start < length:
        end = length
        if length - start > size:
            cut = cut_at.search(text, start + size)
            if cut:
                end = cut.start()
        yield start, end
        start = end


_NON_SPACE = re.compile(r"\S")


def collapse(text: str) -> str:
    """``_SPACE.sub(" ", text)``, a piece of a long text at a time (cut before a character that is
    not a space: no run of spaces is cut), as re.sub holds a list of every piece between matches."""
    if len(text) <= _LIST_CHARS:
        return _SPACE.sub(" ", text)
    return "".join(_SPACE.sub(" ", text[start:end]) for start, end in pieces(text, _NON_SPACE))


def _ends_sentence(text: str) -> bool:
    """Whether `text` holds a sentence end: a stop followed by a space or the end (any script's)."""
    return bool(_SENTENCE_END.search(text))


_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\u0964\u061f](?:\s|$)")


def _read_attributes(element: Element, attributes: str, page: Page) -> None:
    for match in _ATTRIBUTE.finditer(attributes):
        name = match.group(1).lower()
        if name not in _USED_ATTRIBUTES:
            continue
        value = _attribute_value(match)
        if name == "hidden":
            element.hidden = True
        elif name == "aria-hidden":
            element.hidden = element.hidden or value.strip().lower() == "true"
        elif name == "style":
            element.hidden = element.hidden or bool(_HIDDEN_STYLE.search(value))
        elif name == "role":
            element.role = ROLE_IDS.get(value.strip().lower(), 0)
        elif name == "class":
            element.signature = element.tag + " " + " ".join(value.split())
        elif name == "itemprop":
            element.declared = element.declared or value.strip() in ("articleBody", "text", "reviewBody")
        elif name == "itemtype":
            for url in value.split():
                _count_schema_type(page, url)


_USED_ATTRIBUTES = frozenset(("hidden", "aria-hidden", "style", "role", "itemprop", "class", "itemtype"))


def _attribute_value(match: re.Match) -> str:
    """The value of an `_ATTRIBUTE` match, unquoted ("" for a name given without one)."""
    return next((g for g in match.groups()[1:] if g is not None), "")


def _attribute_values(attributes: str, names: tuple[str, ...]) -> dict[str, str]:
    """The values of the attributes of `names` (lower case) in a start tag's `attributes`; of a
    name given twice, the last."""
    values = {}
    for match in _ATTRIBUTE.finditer(attributes):
        name = match.group(1).lower()
        if name in names:
            values[name] = _attribute_value(match)
    return values


def _count_schema_type(page: Page, name: str) -> None:
    """Count a schema.org type (a name or a URL: what follows its last "/") in its family."""
    family = SCHEMA_FAMILY.get(ascii_lower(name[name.rfind("/") + 1:]))
    if family is not None:
        page.schema_counts[family] += 1


# (names and titles are compared in ASCII lower case: only A-Z change, the same in every port)
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    return text.translate(ASCII_LOWER)


def segment(page_html: str) -> Page:
    """The blocks and elements of `page_html` (see the module's docstring)."""
    reader = _Reader()
    page = reader.page
    n = len(page_html)
    at = 0
    find = page_html.find
    unbalanced: set[str] = set()  # (see `_find_raw_end`)
    # Open <noscript> elements, and where the next "</noscript" starts (found once, not again for
    # every raw element in it): a raw element in a noscript ends there at the latest.
    in_noscript, noscript_end = 0, -1
    while at < n:
        if len(page.blocks) >= MAX_BLOCKS or len(page.elements) >= MAX_ELEMENTS:
            page.truncated = True
            break
        lt = find("<", at)
        if lt < 0:
            reader.add_text(page_html[at:])
            break
        if lt > at:
            reader.add_text(page_html[at:lt])
        past = _past_markup(page_html, lt)
        if past >= 0:
            at = past
            continue
        closing = page_html.startswith("/", lt + 1)
        start = lt + 2 if closing else lt + 1
        if not _letter_at(page_html, start):  # a "<" that starts no tag is text
            reader.add_text("<")
            at = lt + 1
            continue
        name_end = _NAME.match(page_html, start).end()
        tag = page_html[start:name_end].lower()
        end = _tag_end(page_html, name_end)
        attributes = page_html[name_end:end]
        at = n if end >= n else end + 1
        if closing:
            if tag == "noscript" and in_noscript:
                in_noscript -= 1
            reader.close(tag)
            continue
        if tag == "noscript":
            in_noscript += 1
        if tag in RAW_TAGS:
            if tag in _FOREIGN_ROOTS and end < n and page_html[end - 1] == "/":
                continue  # <svg/>: a self-closed element of foreign content holds nothing
            stop = n
            if in_noscript:
                # Browsers run scripts, and to them a noscript's content is text up to its end tag:
                # a raw element left open in it (Next.js writes Google Tag Manager's <iframe .../>
                # self-closed, which HTML does not close) ends there, not at the page's end.  (Its
                # end is looked for up to there only: each noscript's content is read once.)
                if noscript_end < at:
                    noscript_end = _find_end_tag(page_html, "noscript", at)
                stop = noscript_end
            if tag == "template" and "shadowroot" in ascii_lower(attributes):
                # a declarative shadow root (shadowrootmode=open): a content that browsers show, not
                # an inert template; skipped to its first end tag as ever (the forest learned so)
                close = _find_end_tag(page_html, tag, at, stop)
            else:
                close = _find_raw_end(page_html, tag, at, unbalanced, stop)
            if tag == "title" and not page.title:
                page.title = " ".join(unescape(page_html[at:close]).split())
            elif tag == "script" and "ld+json" in attributes.lower():
                _read_declared(page, page_html, at, close)
                _read_types(page, page_html, at, close)
            if close >= n:
                at = n
            elif page_html.startswith("</", close) and ascii_lower(page_html[close + 2:close + 2 + len(tag)]) == tag:
                at = _tag_end(page_html, close + 2 + len(tag)) + 1
            else:
                at = close  # ended by an HTML tag (`_find_nested_end`) or a </noscript>: that tag is read
            continue
        if tag in ANNOTATION_TAGS:
            next_tag = find("<", at)
            at = n if next_tag < 0 else next_tag
            continue
        if tag == "meta" and attributes:
            _read_meta(page, attributes)
        elif tag == "link" and attributes and not page.canonical:
            _read_link(page, attributes)
        counted = _COUNTED.get(tag)
        if counted is not None:
            page.tag_counts[counted] += 1
        reader.open(tag, attributes)
    reader._pop_to(1)
    reader.flush()
    return page


# (the string's body as runs of plain characters between escapes, each run and the whole
# possessive: the same matches as ``"((?:[^"\\]|\\.)*)"`` (no way of backtracking into it finds a
# '"'), whose repeat of one character at a time keeps a backtracking entry per character, ~135
# bytes each: 7 GB and 4 s for a 50 MB articleBody, 0.1 GB and 0.2 s so; tests/test_learned_native.py
# compares the two)
_DECLARED = re.compile(r'"(?:articleBody|text)"\s*:\s*"([^"\\]*+(?:\\.[^"\\]*+)*+)"')
_SUMMARY_NAMES = frozenset(("description", "og:description", "twitter:description"))
# a JSON-LD "@type": one string, or a flat list of them (no "[" before its "]": the scans of
# two failed matches never overlap, so a script of unclosed lists is read in linear time)
_TYPE = re.compile(r'"@type"\s*:\s*(?:"([^"]*)"|\[([^\[\]]*)\])')
_STRING = re.compile(r'"([^"]*)"')


def _read_declared(page: Page, page_html: str, start: int, end: int) -> None:
    """The ``articleBody`` and ``text`` strings of a JSON-LD script (JSON escapes and HTML entities
    decoded)."""
    for match in _DECLARED.finditer(page_html, start, end):
        try:
            value = json.loads('"' + match.group(1) + '"')
        except ValueError:
            continue
        if value.strip():
            page.declared.append(unescape(value))


def _read_types(page: Page, page_html: str, start: int, end: int) -> None:
    """Count the schema.org types a JSON-LD script names (its ``@type`` values, not decoded)."""
    for match in _TYPE.finditer(page_html, start, end):
        if match.group(1) is not None:
            _count_schema_type(page, match.group(1))
        else:
            for name in _STRING.findall(match.group(2)):
                _count_schema_type(page, name)


def _read_meta(page: Page, attributes: str) -> None:
    """A ``<meta>`` description's content; the first og:type and og:url."""
    values = _attribute_values(attributes, ("name", "property", "content"))
    names = (values.get("name", "").lower(), values.get("property", "").lower())
    content = values.get("content")
    if not content:
        return
    if names[0] in _SUMMARY_NAMES or names[1] in _SUMMARY_NAMES:
        page.summaries.append(unescape(content))
    elif "og:type" in names:
        if not page.og_type:
            page.og_type = ascii_lower(content.strip())
    elif "og:url" in names:
        if not page.og_url and content.strip().startswith("http"):
            page.og_url = content.strip()


def _read_link(page: Page, attributes: str) -> None:
    """The href of a ``<link rel=canonical>`` (the first that starts with "http")."""
    values = _attribute_values(attributes, ("rel", "href"))
    rel, href = values.get("rel"), values.get("href")
    if rel is not None and href is not None and ascii_lower(rel.strip()) == "canonical" \
            and href.strip().startswith("http"):
        page.canonical = href.strip()


def unescape(text: str) -> str:
    """`html.unescape`, except that a decimal reference of thousands of digits is U+FFFD like any
    other number past U+10FFFF (html.unescape raises ValueError on it: int() refuses strings of
    more than 4300 digits)."""
    try:
        return _html.unescape(text)
    except ValueError:
        return _CHARREF.sub(_one_reference, text)


# html.unescape's pattern: each match, unescaped alone, is what html.unescape makes of it in place
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


def _one_reference(match: re.Match) -> str:
    ref = match.group(0)
    if ref[1] == "#" and ref[2] not in "xX":  # decimal: its value without the leading zeros
        digits = ref[2:].rstrip(";").lstrip("0") or "0"
        if len(digits) > 7:
            return "\ufffd"
        ref = "&#" + digits + (";" if ref.endswith(";") else "")
    return _html.unescape(ref)


def _tag_end(page_html: str, at: int) -> int:
    """The position of the ``>`` that ends the tag whose attributes start at `at`, or the page's
    length.  A quote right after ``=`` (spaces between allowed) opens a value, which may hold
    ``>``, up to the same quote; any other quote is part of a name.  Quotes are looked for only
    before the next ``>`` and each search moves forward only: linear in the tag, whatever follows
    it (a page without quotes is not searched to its end at every tag)."""
    n = len(page_html)
    find = page_html.find
    gt = find(">", at)
    if gt < 0:
        return n
    dq, sq = find('"', at, gt), find("'", at, gt)  # -1: none before gt
    while True:
        quote_at = dq if sq < 0 or 0 <= dq < sq else sq
        if quote_at < 0:
            return gt
        before = quote_at - 1
        while before >= at and page_html[before].isspace():
            before -= 1
        if before >= at and page_html[before] == "=":
            close = find(page_html[quote_at], quote_at + 1)
            if close < 0:
                return n
            at = close + 1
        else:
            at = quote_at + 1
        if gt < at:
            gt = find(">", at)
            if gt < 0:
                return n
            dq, sq = find('"', at, gt), find("'", at, gt)
            continue
        if 0 <= dq < at:
            dq = find('"', at, gt)
        if 0 <= sq < at:
            sq = find("'", at, gt)


def _letter_at(page_html: str, at: int) -> bool:
    """Whether an ASCII letter is at `at` (a tag's name starts with one)."""
    char = page_html[at:at + 1]
    return char.isascii() and char.isalpha()


def _past_markup(page_html: str, lt: int) -> int:
    """Where reading goes on when the "<" at `lt` opens markup that is not an element: past a
    comment, a declaration (``<!...>``), a processing instruction (``<?...>``) or a bogus comment
    (``</`` and no letter, to the next ``>``), or the page's end; -1 when it opens a tag or is
    text."""
    nxt = page_html[lt + 1:lt + 2]
    if nxt == "!" and page_html.startswith("<!--", lt):
        return comment_end(page_html, lt + 4)
    if nxt in ("!", "?") or (nxt == "/" and not _letter_at(page_html, lt + 2)):
        end = page_html.find(">", lt + 2)
        return len(page_html) if end < 0 else end + 1
    return -1


def _find_raw_end(page_html: str, tag: str, at: int, unbalanced: set[str] | None = None, stop: int | None = None
                  ) -> int:
    """Where the end tag (``</tag``) of the raw element `tag` whose content starts at `at` starts,
    or the page's length (or `stop`: looked for before it only): a script's by `_find_script_end`,
    a template's, svg's or math's by `_find_nested_end`, any other's is the first.

    `unbalanced` (the page's, from `segment`): the nested tags whose count once ran to the page's
    end without coming back to 0; from then on their first end tag closes them, as it does a
    raw element's.  (A page of ``<template><template></template>`` repeated reads the rest of
    the page for every one of them otherwise: quadratic.)"""
    stop = len(page_html) if stop is None else stop
    if tag == "script":
        return _find_script_end(page_html, at, stop)
    if tag in _NESTED and tag not in (unbalanced or ()):
        close, balanced = _find_nested_end(page_html, tag, at, stop)
        if not balanced and unbalanced is not None and stop == len(page_html):
            unbalanced.add(tag)
        return close
    return _find_end_tag(page_html, tag, at, stop)


# HTML's script data states (WHATWG tokenizer): in the "escaped" state, entered at a "<!--" of the
# script's data, a "<script" opens the "double escaped" state, in which a "</script" goes back to
# the escaped state instead of ending the script; a "-->" goes back to the data state from either
# (the two dashes of the "<!--" count: "<!-->" opens and closes).  What each state looks for,
# the first match the next event: one pass over the script, whatever it holds.
_SCRIPT_DATA, _ESCAPED, _DOUBLE_ESCAPED = 0, 1, 2
_SCRIPT_EVENTS = (re.compile(r"<!--|</script[\s/>]", re.I),
                  re.compile(r"-->|</script[\s/>]|<script[\s/>]", re.I),
                  re.compile(r"-->|</script[\s/>]", re.I))


def _find_script_end(page_html: str, at: int, stop: int) -> int:
    """Where the ``</script`` that ends a script whose content starts at `at` starts, or `stop`
    (as browsers read it: `_SCRIPT_EVENTS`): ``<script><!-- document.write('<script
    src=x></script>'); //--></script>`` ends at its last ``</script>``."""
    state = _SCRIPT_DATA
    while True:
        match = _SCRIPT_EVENTS[state].search(page_html, at, stop)
        if match is None:
            return stop
        event = match.group()
        if event[1] == "/":            # </script
            if state != _DOUBLE_ESCAPED:
                return match.start()
            state, at = _ESCAPED, match.end()
        elif event[1] == "!":          # <!--
            state, at = _ESCAPED, match.start() + 2
        elif event[0] == "-":          # -->
            state, at = _SCRIPT_DATA, match.end()
        else:                          # <script
            state, at = _DOUBLE_ESCAPED, match.end()


# Elements whose content nests: a <template> in a template, an <svg> in an svg (a <math> in math) is
# closed by its own end tag, not the outer one's.  Their content is read as markup (tags, comments)
# only to count those start and end tags; in a template's, the raw elements of HTML are skipped as
# anywhere else (a "</template>" in a script of a template is the script's text).
_NESTED = frozenset(("template", "svg", "math"))
_FOREIGN_ROOTS = frozenset(("svg", "math"))
# In an svg or a math, these HTML start tags (and the end tags </p> and </br>) end every foreign
# element open, as browsers do (WHATWG, "in foreign content"): an <svg> left open does not hide the
# rest of the page.  Not in the elements that hold HTML (`_HOLDS_HTML`), where they are HTML's.
# (<font>, which ends them only with some attributes, is left out: it keeps the svg, as before.)
_ENDS_FOREIGN = frozenset("b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i "
                          "img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt "
                          "u ul var".split())
_ENDS_FOREIGN_CLOSING = frozenset(("p", "br"))
_HOLDS_HTML = {"svg": frozenset(("foreignobject", "desc", "title")),
               "math": frozenset(("mi", "mo", "mn", "ms", "mtext", "annotation-xml"))}
_RAW_IN_TEMPLATE = RAW_TAGS - _NESTED


def _find_nested_end(page_html: str, tag: str, at: int, stop: int) -> tuple[int, bool]:
    """(where the ``</tag`` that closes the `tag` element (template, svg or math) whose content
    starts at `at` starts, counting the start and end tags of `tag` between (a self-closed ``<svg
    />`` or ``<math/>`` opens nothing; a ``<template/>`` does, as in HTML); tags are read as the
    page's (quoted values, comments), and in a template the raw elements but the nested ones are
    skipped whole.  If the count never comes back to 0 (an inner element left open), the first
    ``</tag`` read, else `stop` (read up to there): a page left unbalanced loses no more than when
    nesting was not counted; and whether the count came back to 0).  In an svg or a math, a tag
    of `_ENDS_FOREIGN` outside the elements of `_HOLDS_HTML` ends it where that tag starts (as
    ended: True).  One pass: every step moves past a tag, comment or raw element."""
    n = stop
    find = page_html.find
    raw = _RAW_IN_TEMPLATE if tag == "template" else ()
    self_closes = tag in _FOREIGN_ROOTS
    holds_html = _HOLDS_HTML.get(tag, ())
    depth, first, in_html = 1, -1, 0
    while True:
        lt = find("<", at, n)
        if lt < 0:
            break
        past = _past_markup(page_html, lt)
        if past >= 0:
            at = past
            continue
        closing = page_html.startswith("/", lt + 1)
        start = lt + 2 if closing else lt + 1
        if not _letter_at(page_html, start):
            at = lt + 1
            continue
        name_end = _NAME.match(page_html, start).end()
        name = ascii_lower(page_html[start:name_end])  # (as the compiled path: ASCII letters only)
        end = _tag_end(page_html, name_end)
        at = n if end >= n else end + 1
        if closing:
            if name == tag:
                depth -= 1
                if depth == 0:
                    return lt, True
                if first < 0:
                    first = lt
            elif name in holds_html:
                in_html = max(0, in_html - 1)
            elif self_closes and not in_html and name in _ENDS_FOREIGN_CLOSING:
                return lt, True
        elif name == tag:
            if not (self_closes and end < n and page_html[end - 1] == "/"):
                depth += 1
        elif name in holds_html:
            if not (end < n and page_html[end - 1] == "/"):
                in_html += 1
        elif self_closes and not in_html and name in _ENDS_FOREIGN:
            return lt, True
        elif name in raw:
            close = _find_raw_end(page_html, name, at, stop=n)
            at = n if close >= n else _tag_end(page_html, close + 2 + len(name)) + 1
    return (n if first < 0 else first), False


def _find_end_tag(page_html: str, tag: str, at: int, stop: int | None = None) -> int:
    """Where ``</tag`` starts (case-insensitive) at or after `at`, or the page's length (or `stop`:
    looked for before it only)."""
    pattern = _END_TAGS.get(tag)
    if pattern is None:
        pattern = _END_TAGS[tag] = re.compile(r"</" + re.escape(tag) + r"[\s/>]", re.I)
    stop = len(page_html) if stop is None else stop
    match = pattern.search(page_html, at, stop)
    return match.start() if match else stop


_END_TAGS: dict[str, re.Pattern] = {}
