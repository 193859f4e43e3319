"""``dense``: one lexbor parse per page; the page's item chosen by what the HTML declares and by
where its paragraphs are densest, never by lists of class or id names.

How a page is read (`html_to_text_dense`; docs/extraction.md tells the same steps for users and
what each was measured to do):

1. **Link lists go first**: short blocks (under 100 characters) that are mostly link text (over
   80%), anywhere on the page: menus, tag clouds, share bars, related-link lists
   (`drop_link_dense`, trafilatura's link-density test).
2. **The page's main content** by resiliparse's main-content heuristic (it drops navigation,
   headers, footers and sidebars).  When the page declares itself one article or one product
   (schema.org or Open Graph, `declarations.declares_article_or_product`), its comment sections are not
   the page's text and go too.  **A page that hides most of its text is shown** (`_reveal_hidden`):
   hidden elements are usually menus and dialogs, but when the visible text is under half of all
   the text, the page's text itself waits for a script (tabs, accordions, a page hidden until it
   has loaded) and hidden elements are read as visible ones.  Only pages whose hidden elements
   hold more words than the main content pay for this test.
3. **The page's item**, by evidence in this order: the one element marked
   ``itemprop="articleBody"``; else the ``<article>`` with the most words of its own, unless
   another ``<article>`` sits in a parent of the same tag and class (posts of a thread, cards of a
   listing: no single item); else the one ``<main>`` (or ``role="main"``); else the container
   where the page's paragraphs are densest (`_densest`, Readability's scoring without its
   class-name weights).
4. **The item's text**: every visible line of the item, without what HTML itself says is not its
   text (``nav``, ``aside``, ``header``, ``footer``, ``form``, controls, ``hidden``,
   ``aria-hidden``, inline ``display: none`` or ``visibility: hidden``, ARIA
   navigation/complementary/banner/contentinfo roles).  On a page that declares one article or
   product, an item found by markup is read by resiliparse's heuristic instead (no byline, date
   or comments) when that keeps at least half of its words (a heuristic that drops most of an
   item has misread it); list items of more than `LIST_ITEM_WORDS` words that it left out come
   back unless they are mostly link text (`_with_list_items`: the heuristic drops lists of
   sentences, which are an article's text).
5. **Item or page**: the item's text when it holds at least `SHARE` of the page's main-content
   words (`DECLARED_SHARE` when the page declares its one article or product and the item is its
   markup); else the page's main content (a listing, a thread, a service page of several
   sections: the item was only one part of it).
6. **Fragments go** (`drop_fragments`), by block shape.  A fragment is a line that does not end as
   a sentence or a clause does (Chinese and Japanese full stops included) and is not a line of the
   page's preformatted blocks; it goes when it has
   - at most `SHORT_WORDS` words and is not a list item, on every page (a label, a button, a tab,
     a price, the heading of a box);
   - at most `CLOSING_WORDS` words, list items included, after the text's last paragraph (a line
     of `PARAGRAPH_WORDS` words or more): what closes a page around its text;
   - on a page that declares one article or product, at most `FRAGMENT_WORDS` words, unless it is
     a list item or a heading; on a page that declares a discussion (`declares_discussion`), at
     most `DISCUSSION_FRAGMENT_WORDS` words: a poster's name, a date, a vote count.
   List items keep the first rule because lists of short items are a listing's or an article's
   content; the third rule is kept to declared pages because on listings and product grids short
   lines are the content.
7. **A reading that finds almost nothing has misread the page**: when the page's main content or
   the item's text holds under `TOO_FEW` words, the visible text of the page (or of the whole
   item) is taken instead if it holds ten times more (content in ``<header>`` cards, a page the
   heuristic empties, an item behind an overlay).  The page's reading is checked before it is
   weighed against the item's (step 5): a small item beside an emptied main content is not the
   page's text.
8. **On a declared page a line said twice is said once** (`_unrepeated`): on a page that declares
   one article, one product or a discussion, a line of words the text already holds is the same
   block rendered again (a price block per screen size, options per variant, a quoted post) and
   goes; lines without letters and table cells stay.  Not on other pages: there a repetition can
   be the page's own (posters' names on an undeclared forum).

Every step runs in lexbor (CSS selectors, resiliparse's text extraction); Python touches only the
paragraphs, the articles, the short link blocks, the hidden elements, the headings, the lines of
the text and (on declared pages that need them) list items with links and table cells, never
recursing, with walks up the tree bounded by `_MAX_HOPS`.  What grows with nesting depth is
resiliparse's main-content pass, as for ``fast``: the tree is nested at most `nesting.MAX_DEPTH`
levels deep (`nesting.parse_tree`).
"""

from __future__ import annotations

import re

from .declarations import declares_article_or_product
from ..io.decoding import html_text
from .links import drop_link_dense
from .nesting import parse_tree
from .text import composed, find_all, lines as _lines, nonspace
from .text import script_marked_words as _marked_words, script_words as _words

_OPTIONS = {"alt_texts": False, "form_fields": False, "list_bullets": False}
# List items are marked (resiliparse's bullets) so that `drop_fragments` knows them without asking
# the tree; it takes the marks off again.
_MARKED = {**_OPTIONS, "list_bullets": True}
# The item's text must hold this share of the page's main-content words to be taken alone.
SHARE = 0.5
# ... or this share, when the page declares one article or product and the item is its markup.
DECLARED_SHARE = 0.2
# A heuristic reading of a declared item is taken when it keeps this share of the item's words.
KEEP = 0.5
# More <article> elements than this: a listing or a thread (and a bound on the work).
_MAX_ARTICLES = 100
# Walks up the tree (a paragraph to its container, an article to the article around it) stop
# after this many steps: the evidence is local, and a page nested thousands deep stays linear.
_MAX_HOPS = 12
# What hides an element until a script shows it: the ``hidden`` attribute, inline CSS.
HIDDEN = ("[hidden]", '[style*="display:none"]', '[style*="display: none"]', '[style*="visibility:hidden"]',
          '[style*="visibility: hidden"]')
# What HTML says is not an item's text (generic semantics, not names gathered from pages).
NOT_TEXT = ("nav", "aside", "header", "footer", "form", "button", "select", "[role=navigation]",
            "[role=complementary]", "[role=banner]", "[role=contentinfo]", "[aria-hidden=true]",
            # (resiliparse drops hidden elements only in its main-content mode)
            *HIDDEN)
_HIDDEN = ", ".join(HIDDEN)
# The elements that hold paragraphs for `_densest`.
_CONTAINERS = frozenset({"div", "section", "article", "main", "td", "body"})
_MIN_PARAGRAPH = 25
# `drop_fragments` (step 6; each constant chosen on the dev halves: docs/extraction.md): on every
# page, a line of at most this many words is a fragment ...
SHORT_WORDS = 3
# ... and after the text's last paragraph (a line of PARAGRAPH_WORDS words or more), a line of at
# most CLOSING_WORDS words ...
PARAGRAPH_WORDS = 40
CLOSING_WORDS = 6
# ... and on a page that declares one article or product, at most this many words ...
FRAGMENT_WORDS = 4
# ... and on a page that declares a discussion, where the metadata around each post is longer
# ("asked Mar 28, 2014 at 11:38"), at most this many.
DISCUSSION_FRAGMENT_WORDS = 6
# `html_to_text_dense`, step 7: a reading under this many words is checked against a fuller one.
TOO_FEW = 100
# A line of words (step 8) holds a letter.
_LETTER = re.compile(r"[^\W\d_]")
# `_with_list_items`: a list item of more than this many words is text ...
LIST_ITEM_WORDS = 8
# ... unless over this share of its characters are link text.
LINKED = 0.5
# A page's declaration that it is a discussion (a thread, a question and its answers): schema.org's
# QAPage or DiscussionForumPosting, in JSON-LD or microdata.  Looked for with `text.find_all` first
# (a regex scan of a whole page costs a millisecond).  As `declarations._ITEM_DECLARATIONS`, no two runs of
# spaces meet (``\s*\[?\s*`` is quadratic in a run of spaces after ``"@type":``).
_DISCUSSION_TYPES = ("QAPage", "DiscussionForumPosting")
_DISCUSSION = re.compile(r"""(?:@type["']\s*:\s*+(?:\[\s*+)?["'](?:https?://schema\.org/)?|"""
                         r"""itemtype\s*=\s*["']?https?://schema\.org/)(?:QAPage|DiscussionForumPosting)\b""")
# How a sentence or a clause ends (a fragment does not).
# (with the full-width marks of Chinese and Japanese, whose lines have no spaces: one "word" each)
# a line's last character: Latin, CJK, Devanagari and Bengali (danda), Arabic and Urdu, Armenian, Ethiopic, Myanmar
_ENDS_AS_TEXT = frozenset(""".!?:;)]"'”’…。．！？：；）」』】।॥؟۔։።။""")
# Invisible marks of text direction a Hebrew, Arabic or Persian line may end with after its full stop (RLM, LRM,
# embeddings and isolates): not its last character.
_BIDI_MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# resiliparse's mark of a list item: a bullet, or an ordered list's number.
_LIST_MARK = re.compile(r"(?:•|\d+\.) ")


def declares_discussion(html: str) -> bool:
    """Whether the page declares itself a discussion (schema.org ``QAPage`` or
    ``DiscussionForumPosting``, JSON-LD or microdata)."""
    return any(find_all(html, name) for name in _DISCUSSION_TYPES) and _DISCUSSION.search(html) is not None


def _fuller(text: str, read_fuller, count) -> str:
    """`text`, or `read_fuller()` when `text` has under `TOO_FEW` words and that has ten times as
    many (the module's step 7)."""
    words = count(text)
    if words >= TOO_FEW:
        return text
    fuller = read_fuller()
    return fuller if count(fuller) > 10 * words else text


def _hidden(body) -> tuple[int, list]:
    """(the words of the hidden elements under `body`, those elements): the outermost of each nest."""
    words = 0
    outer = []
    for element in body.query_selector_all(_HIDDEN).values():
        if outer and outer[-1].contains(element):
            continue
        outer.append(element)
        words += _words(element.text or "")
    return words, outer


def _reveal_hidden(tree, page_words: int) -> bool:
    """Shows the hidden elements of a page that hides most of its text (the module's step 2);
    whether it did.  Most pages stop at the first test, whether the hidden elements hold more words
    than `page_words` (the main-content reading); then the words of scripts and styles inside them
    are taken off, and only if they still do is the visible text read, to compare."""
    from resiliparse.extract.html2text import extract_plain_text

    body = tree.body
    words, hidden = _hidden(body)
    if words <= page_words:
        return False
    for element in hidden:  # (element.text holds the code of scripts and styles too)
        for tag in ("script", "style", "template"):
            for inner in element.get_elements_by_tag_name(tag).values():
                words -= _words(inner.text or "")
    if words <= page_words:
        return False
    visible = _words(extract_plain_text(tree, main_content=False, skip_elements=list(HIDDEN), **_OPTIONS))
    if visible >= words:  # the visible text is at least half of all the text
        return False
    for element in body.query_selector_all(_HIDDEN).values():
        element.delattr("hidden")
        element.delattr("style")
    return True


def _unrepeated(text: str, tree_body) -> str:
    """`text` without the lines of words it already holds (the module's step 8), except the cells
    of the tables under `tree_body` (a table repeats its values by design)."""
    seen = set()
    repeated = set()
    for line in text.split("\n"):
        if line in seen and _LETTER.search(line):
            repeated.add(line)
        seen.add(line)
    if not repeated:
        return text
    cells = {" ".join((cell.text or "").split()) for cell in tree_body.query_selector_all("td, th").values()}
    repeated -= cells
    seen = set()
    kept = []
    for line in text.split("\n"):
        if line in repeated and line in seen:
            continue
        seen.add(line)
        kept.append(line)
    return "\n".join(kept)


def _up(element, wanted):
    """The nearest ancestor of `element` (itself excluded) whose tag is in `wanted`, within
    `_MAX_HOPS` steps; else None."""
    element = element.parent
    for _ in range(_MAX_HOPS):
        if element is None or element.tag in wanted:
            return element
        element = element.parent
    return None


def _shape(element) -> tuple:
    parent = element.parent
    return (parent.tag, parent.getattr("class")) if parent is not None else ()


def _single_article(articles: list):
    """The <article> with the most words of its own (those of <article>s nested in it, which HTML
    uses for comments and related posts, not counted), unless another <article> sits in a parent
    of the same tag and class (posts of a thread, cards of a listing); else None."""
    if not articles or len(articles) > _MAX_ARTICLES:
        return None
    if len(articles) == 1:  # (no other to weigh it against, nor to share its shape)
        return articles[0]
    own = [_words(a.text or "") for a in articles]
    index = {a: i for i, a in enumerate(articles)}
    for article in articles:
        outer = _up(article, ("article",))
        if outer is not None and outer in index:
            own[index[outer]] -= _words(article.text or "")
    best = max(range(len(articles)), key=own.__getitem__)
    shape = _shape(articles[best])
    if any(_shape(other) == shape for other in articles if other != articles[best]):
        return None
    return articles[best]


def _densest(body):
    """The container where the page's paragraphs are densest (Readability's scoring, without its
    class-name weights): each <p> of `_MIN_PARAGRAPH` characters or more adds 1, one per comma and
    one per 100 characters (at most 3) to its nearest container, and half as much to that
    container's own; of the five best, the one whose score times the share of its text outside
    links is highest (a comment thread or a block of teasers is full of links); None on a page
    without such paragraphs."""
    scores: dict = {}
    grands: dict = {}  # container -> its container (paragraphs share containers: walked up once)
    for paragraph in body.get_elements_by_tag_name("p").values():
        text = paragraph.text or ""
        if len(text) < _MIN_PARAGRAPH:
            continue
        score = 1 + text.count(",") + min(len(text) // 100, 3)
        parent = _up(paragraph, _CONTAINERS)
        if parent is None:
            continue
        scores[parent] = scores.get(parent, 0) + score
        grand = grands[parent] if parent in grands else grands.setdefault(parent, _up(parent, _CONTAINERS))
        if grand is not None:
            scores[grand] = scores.get(grand, 0) + score / 2
    if not scores:
        return None

    def outside_links(element) -> float:
        text = nonspace(element.text or "") or 1
        linked = sum(nonspace(a.text or "") for a in element.get_elements_by_tag_name("a").values())
        return scores[element] * (1 - min(1.0, linked / text))

    return max(sorted(scores, key=scores.__getitem__, reverse=True)[:5], key=outside_links)


def _texts(body, selector: str, longest: int) -> set:
    """The texts (whitespace collapsed) of the elements matching `selector` that have at most
    `longest` words."""
    texts = set()
    for element in body.query_selector_all(selector).values():
        text = element.text
        if text and len(text.split()) <= longest:
            texts.add(" ".join(text.split()))
    return texts


def _code_lines(body) -> set:
    """The lines of the page's preformatted blocks (code: a short line there is not a fragment)."""
    lines = set()
    for block in body.get_elements_by_tag_name("pre").values():
        lines.update(" ".join(line.split()) for line in (block.text or "").split("\n"))
    return lines


def drop_fragments(marked: str, structure: set, longest: int = 0, code: set = frozenset()) -> str:
    """The text without its fragments (the module's step 6): lines that do not end as text does
    and are short: at most `SHORT_WORDS` words, unless list items (`marked` carries resiliparse's
    list marks, which come off here); after the text's last paragraph (`PARAGRAPH_WORDS` words or
    more), at most `CLOSING_WORDS`; and when the page declares its item, at most `longest`, unless
    list items or in `structure` (the page's short headings).  Lines of `code` always stay."""
    lines = []  # (line, its words, whether it is a list item)
    item = False  # the line follows a mark alone on its line (a list item whose text is a block)
    last = -1  # the text's last paragraph
    for line in marked.split("\n"):
        mark = _LIST_MARK.match(line + " ") if line[:1] == "•" or line[:1].isdigit() else None
        if mark and mark.end() > len(line):
            item = True
            continue
        if mark:
            line, item = line[mark.end():], True
        words = _words(line)
        if words >= PARAGRAPH_WORDS:
            last = len(lines)
        lines.append((line, words, item))
        item = False
    longest_fragment = max(SHORT_WORDS, CLOSING_WORDS, longest)
    kept = []
    for index, (line, words, listed) in enumerate(lines):
        if words <= longest_fragment and line.rstrip(_BIDI_MARKS)[-1:] not in _ENDS_AS_TEXT and line not in code and (
                (words <= SHORT_WORDS and not listed)
                or (0 <= last < index and words <= CLOSING_WORDS)
                or (words <= longest and not listed and line not in structure)):
            continue
        kept.append(line)
    return "\n".join(kept)


def _linked_items(tree_body) -> set:
    """The texts of the list items under `tree_body` that are mostly link text (related-story
    lists: their titles are long, so the link-density test of step 1 left them)."""
    linked = set()
    for item in tree_body.query_selector_all("li:has(a)").values():
        text = " ".join((item.text or "").split())
        links = sum(len(a.text or "") for a in item.get_elements_by_tag_name("a").values())
        if links > LINKED * len(text):
            linked.add(text)
    return linked


def _with_list_items(text: str, read: str, tree_body) -> str:
    """`read` (resiliparse's reading of the item), with the item's list items it left out back in
    place: resiliparse's heuristic drops lists of sentences, which are an article's text, unless
    they are short or mostly links."""
    kept = set(read.split("\n"))
    missing = [line for line in text.split("\n")
               if line not in kept and _LIST_MARK.match(line) and len(line.split()) > LIST_ITEM_WORDS]
    if not missing:
        return read
    linked = _linked_items(tree_body)
    back = {line for line in missing if line[_LIST_MARK.match(line).end():] not in linked}
    return "\n".join(line for line in text.split("\n") if line in kept or line in back)


def page_item(body) -> tuple:
    """(the page's item, how it was found: "markup", "main" or "density"); (None, None) when the
    page has none (see the module's step 3)."""
    declared = body.query_selector_all('[itemprop~="articleBody"]').values()
    if len(declared) == 1:
        return declared[0], "markup"
    article = _single_article(body.get_elements_by_tag_name("article").values())
    if article is not None:
        return article, "markup"
    mains = body.query_selector_all('main, [role="main"]').values()
    if len(mains) == 1:
        return mains[0], "main"
    densest = _densest(body)
    return (densest, "density") if densest is not None else (None, None)


@composed
def html_to_text_dense(html: str | bytes) -> str:
    """The page's item, or its main content when the item is only part of it (see the module's
    docstring); one line per block, whitespace inside a line collapsed; "" when none."""
    from resiliparse.extract.html2text import extract_plain_text
    html = html_text(html)
    if not html.strip():
        return ""
    tree = parse_tree(html, "dense")  # (nested at most nesting.MAX_DEPTH levels deep, at most markup.MAX_TAGS tags)
    body = tree.body
    if body is None:
        return ""
    declares = declares_article_or_product(html)
    drop_link_dense(body)
    # the longest fragment around a declared item, or 0 when the page declares none (step 6)
    fragments = FRAGMENT_WORDS if declares else DISCUSSION_FRAGMENT_WORDS if declares_discussion(html) else 0

    def visible(tree) -> str:  # what is left of the tree, without what HTML says is not text
        return _lines(extract_plain_text(tree, main_content=False, skip_elements=list(NOT_TEXT), **_MARKED))

    def main_content(tree) -> str:  # resiliparse's main-content heuristic (step 2)
        return _lines(extract_plain_text(tree, main_content=True, comments=not declares, **_MARKED))

    page = main_content(tree)
    if _reveal_hidden(tree, _words(page)):
        page = main_content(tree)
    # read before the item replaces the page: a fragment is judged by the whole page's structure
    code = _code_lines(body)
    structure = _texts(body, "h1, h2, h3, h4, h5, h6", fragments) if fragments else set()
    item, how = page_item(body)
    page = _fuller(page, lambda: visible(tree), _marked_words)
    if item is None or item == body:
        page = drop_fragments(page, structure, fragments, code)
        return _unrepeated(page, body) if fragments else page
    body.replace_children(item)
    text = _fuller(visible(tree), lambda: _lines(extract_plain_text(tree, main_content=False, **_MARKED)),
                   _marked_words)
    if declares and how in ("markup", "main"):
        # comments=False: as for the page (step 2), a declared item's comments are not its text
        read = _lines(extract_plain_text(tree, main_content=True, post_meta=False, comments=False, **_MARKED))
        if _marked_words(read) >= KEEP * _marked_words(text):
            text = _with_list_items(text, read, body)
    needed = DECLARED_SHARE if declares and how == "markup" else SHARE
    text = text if _marked_words(text) >= needed * _marked_words(page) else page
    text = drop_fragments(text, structure, fragments, code)
    return _unrepeated(text, body) if fragments else text
