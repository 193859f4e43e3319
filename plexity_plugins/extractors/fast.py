"""``fast``: resiliparse's main-content extraction (lexbor parser), narrowed to the article a page
declares: trafilatura's job at many times its speed."""

from __future__ import annotations

import re

from ..io.decoding import html_text
from .links import drop_link_dense
from .markup import checked
from .nesting import parse_checked_tree
from .text import composed

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
    """`fast_text` of the page (at most `markup.MAX_TAGS` tags, `markup.MAX_PAGE_ATTRIBUTES` attributes)."""
    return fast_text(checked(html_text(html), "fast"))


@composed
def fast_text(page: str) -> str:
    """resiliparse's main content (its heuristic drops navigation, headers, footers and
    sidebars), one line per block, whitespace inside a line collapsed; "" when none.

    When the page declares its article (see `_declared_body`) and that element holds at least
    half of the page's main-content words, only that element's main content is kept, without its
    <header> and <footer> (title, byline, date; author and copyright lines) and its short link
    blocks (`drop_link_dense`: on an article page they are "Read more", related and share links;
    on other pages, which declare no article, links are left alone).  One extraction serves both:
    the element is marked where it stands (`_START`, `_END`); only when the page's heuristic drops
    it there is it extracted again alone (`_declared_alone`).  `page`: one `markup.checked` has given back."""
    from resiliparse.extract.html2text import extract_plain_text
    if not page.strip():
        return ""
    tree = parse_checked_tree(page)  # (nested at most nesting.MAX_DEPTH levels deep)
    declared = _declared_body(tree)
    if declared is None:
        return _lines(extract_plain_text(tree, **_FAST_OPTIONS))
    drop_link_dense(declared)
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

