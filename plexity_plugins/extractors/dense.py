"""``dense``: one lexbor parse, main content chosen by structural evidence only (work in progress)."""

from __future__ import annotations

from .decoding import decode_html

_OPTIONS = {"main_content": True, "alt_texts": False, "form_fields": False, "list_bullets": False}
_MAX_ARTICLES = 100


def _words(*texts: str) -> int:
    return sum(len(text.split()) for text in texts)


def _lines(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _closest(element, tag):
    while element is not None and element.tag != tag:
        element = element.parent
    return element


def _shape(element) -> tuple:
    parent = element.parent
    return (parent.tag, parent.getattr("class")) if parent is not None else ()


def _best_article(articles):
    """The <article> with the most words of its own, unless another sits in a parent of the same shape."""
    if not articles or len(articles) > _MAX_ARTICLES:
        return None, 0
    own = [len((a.text or "").split()) for a in articles]
    index = {a: i for i, a in enumerate(articles)}
    for article in articles:
        outer = _closest(article.parent, "article")
        if outer is not None and outer in index:
            own[index[outer]] -= len((article.text or "").split())
    i = max(range(len(articles)), key=own.__getitem__)
    shape = _shape(articles[i])
    if any(_shape(other) == shape for other in articles if other != articles[i]):
        return None, 0
    return articles[i], own[i]


_CONTAINERS = frozenset({"div", "section", "article", "main", "td", "body"})


def _densest(body, min_chars=25):
    """Readability's core: each paragraph scores its parent (and half its grandparent) by its
    length; the best-scored container."""
    scores = {}
    for p in body.query_selector_all("p").values():
        text = p.text or ""
        n = len(text)
        if n < min_chars:
            continue
        score = 1 + text.count(",") + min(n // 100, 3)
        parent = p.parent
        while parent is not None and parent.tag not in _CONTAINERS:
            parent = parent.parent
        if parent is None:
            continue
        scores[parent] = scores.get(parent, 0) + score
        grand = parent.parent
        while grand is not None and grand.tag not in _CONTAINERS:
            grand = grand.parent
        if grand is not None:
            scores[grand] = scores.get(grand, 0) + score / 2
    if not scores:
        return None
    return max(scores, key=scores.__getitem__)


def declared_item(tree, use_main=True, use_density=True):
    body = tree.body
    if body is None:
        return None
    declared = body.query_selector_all('[itemprop~="articleBody"]').values()
    if len(declared) == 1:
        return declared[0]
    best, _ = _best_article(body.query_selector_all("article").values())
    if best is not None:
        return best
    if use_main:
        mains = body.query_selector_all('main, [role="main"]').values()
        if len(mains) == 1:
            return mains[0]
    if use_density:
        return _densest(body)
    return None


_LINK_BLOCKS = "p:has(a), ul:has(a), ol:has(a), div:has(a):not(:has(div, p, ul, ol))"


def _drop_link_dense(element) -> None:
    chosen = []
    for block in element.query_selector_all(_LINK_BLOCKS).values():
        text = "".join((block.text or "").split())
        if not text or len(text) >= 100:
            continue
        links = block.query_selector_all("a").values()
        if sum(len("".join((a.text or "").split())) for a in links) > 0.8 * len(text):
            chosen.append(block)
    outer = []
    for block in chosen:
        if not (outer and outer[-1].contains(block)):
            outer.append(block)
    for block in outer:
        block.parent.remove_child(block)


def _drop_sectioning(element) -> None:
    for part in element.query_selector_all("header, footer").values():
        if part.parent is not None:
            part.parent.remove_child(part)


_START, _END = "plexitydeclaredstart4e1f", "plexitydeclaredend4e1f"


def _keep_only(tree, element) -> None:
    body = tree.body
    top, ancestor = element, element.parent
    while ancestor is not None and ancestor != body:
        shell = ancestor.clone_node(False)
        shell.append_child(top)
        top, ancestor = shell, ancestor.parent
    body.replace_children(top)


def extract(html, *, options=None, use_main=True, use_density=True, share=0.5, link_dense=True, sectioning=True):
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    options = {**_OPTIONS, **(options or {})}
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    declared = declared_item(tree, use_main, use_density)
    if declared is None or declared == tree.body:
        return _lines(extract_plain_text(tree, **options))
    if link_dense:
        _drop_link_dense(declared)
    if sectioning:
        _drop_sectioning(declared)
    first = declared.first_child
    if first is None:
        declared.append_child(tree.create_text_node(_START))
    else:
        declared.insert_before(tree.create_text_node(_START), first)
    declared.append_child(tree.create_text_node(_END))
    text = extract_plain_text(tree, **options)
    if text.count(_START) == 1 and text.count(_END) == 1:
        before, rest = text.split(_START)
        if _END in rest:
            inner, after = rest.split(_END)
            return _lines(inner if _words(inner) >= share * _words(before, inner, after) else before + inner + after)
    page = text.replace(_START, "").replace(_END, "")
    _keep_only(tree, declared)
    inner = extract_plain_text(tree, **options).replace(_START, "").replace(_END, "")
    return _lines(inner if _words(inner) >= share * _words(page) else page)


def html_to_text_dense(html: str | bytes) -> str:
    return extract(html)


# Generic HTML semantics of what is not an item's text: navigation, complementary content,
# page/section headers and footers, forms and controls.
_NOT_TEXT = ["nav", "aside", "header", "footer", "form", "button", "select", "[role=navigation]",
             "[role=complementary]", "[role=banner]", "[role=contentinfo]", "[aria-hidden=true]", "[hidden]"]


def extract2(html, *, use_main=True, use_density=True, share=0.5, link_dense=True, skip=None, page_opts=None):
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    page = _lines(extract_plain_text(tree, **{**_OPTIONS, **(page_opts or {})}))
    declared = declared_item(tree, use_main, use_density)
    if declared is None or declared == tree.body:
        return page
    if link_dense:
        _drop_link_dense(declared)
    tree.body.replace_children(declared)
    inner = _lines(extract_plain_text(tree, **{**_OPTIONS, "main_content": False},
                                      skip_elements=_NOT_TEXT if skip is None else skip))
    return inner if _words(inner) >= share * _words(page) else page


def extract3(html, *, use_main=True, use_density=True, share=0.5, link_dense=True, keep=0.5, page_opts=None,
             item_opts=None):
    """Page main content P; the item's text by resiliparse's heuristic inside it (M) unless that
    drops most of the item's text (A, generic semantics only)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    page = _lines(extract_plain_text(tree, **{**_OPTIONS, **(page_opts or {})}))
    declared = declared_item(tree, use_main, use_density)
    if declared is None or declared == tree.body:
        return page
    if link_dense:
        _drop_link_dense(declared)
    tree.body.replace_children(declared)
    every = _lines(extract_plain_text(tree, **{**_OPTIONS, "main_content": False}, skip_elements=_NOT_TEXT))
    main = _lines(extract_plain_text(tree, **{**_OPTIONS, **(item_opts or {})}))
    inner = main if _words(main) >= keep * _words(every) else every
    return inner if _words(inner) >= share * _words(page) else page


def extract4(html, *, declared_share=0.2, share=0.5, density_selector="p", **kw):
    """extract2, with a weaker share rule when the page declares one article or product
    (schema.org, og:type) and the item is declared by markup (articleBody, <article>)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    from .auto import declares_article_or_product

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    page = _lines(extract_plain_text(tree, **_OPTIONS))
    body = tree.body
    if body is None:
        return page
    how = None
    declared = body.query_selector_all('[itemprop~="articleBody"]').values()
    if len(declared) == 1:
        item, how = declared[0], "markup"
    else:
        item, _ = _best_article(body.query_selector_all("article").values())
        how = "markup" if item is not None else None
        if item is None:
            mains = body.query_selector_all('main, [role="main"]').values()
            if len(mains) == 1:
                item, how = mains[0], "main"
        if item is None:
            item, how = _densest(body), "density"
    if item is None or item == body:
        return page
    _drop_link_dense(item)
    body.replace_children(item)
    inner = _lines(extract_plain_text(tree, **{**_OPTIONS, "main_content": False}, skip_elements=_NOT_TEXT))
    needed = declared_share if how == "markup" and declares_article_or_product(html) else share
    return inner if _words(inner) >= needed * _words(page) else page


def _item(body):
    declared = body.query_selector_all('[itemprop~="articleBody"]').values()
    if len(declared) == 1:
        return declared[0], "markup"
    item, _ = _best_article(body.query_selector_all("article").values())
    if item is not None:
        return item, "markup"
    mains = body.query_selector_all('main, [role="main"]').values()
    if len(mains) == 1:
        return mains[0], "main"
    return _densest(body), "density"


def extract5(html, *, declared_share=0.2, share=0.5, item_main=True, keep=0.5, item_opts=None, page_opts=None):
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    from .auto import declares_article_or_product

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    page = _lines(extract_plain_text(tree, **{**_OPTIONS, **(page_opts or {})}))
    body = tree.body
    if body is None:
        return page
    item, how = _item(body)
    if item is None or item == body:
        return page
    _drop_link_dense(item)
    body.replace_children(item)
    inner = _lines(extract_plain_text(tree, **{**_OPTIONS, "main_content": False}, skip_elements=_NOT_TEXT))
    if item_main:
        main = _lines(extract_plain_text(tree, **{**_OPTIONS, **(item_opts or {})}))
        if _words(main) >= keep * _words(inner):
            inner = main
    needed = declared_share if how == "markup" and declares_article_or_product(html) else share
    return inner if _words(inner) >= needed * _words(page) else page


def _densest2(body, min_chars=25, grand=0.5, links=True):
    scores = {}
    for p in body.query_selector_all("p").values():
        text = p.text or ""
        n = len(text)
        if n < min_chars:
            continue
        score = 1 + text.count(",") + min(n // 100, 3)
        parent = p.parent
        while parent is not None and parent.tag not in _CONTAINERS:
            parent = parent.parent
        if parent is None:
            continue
        scores[parent] = scores.get(parent, 0) + score
        if grand:
            g = parent.parent
            while g is not None and g.tag not in _CONTAINERS:
                g = g.parent
            if g is not None:
                scores[g] = scores.get(g, 0) + score * grand
    if not scores:
        return None
    if links:
        top = sorted(scores, key=scores.__getitem__, reverse=True)[:5]
        def adjusted(e):
            text = len("".join((e.text or "").split())) or 1
            linked = sum(len("".join((a.text or "").split())) for a in e.query_selector_all("a").values())
            return scores[e] * (1 - min(1, linked / text))
        return max(top, key=adjusted)
    return max(scores, key=scores.__getitem__)


def extract6(html, *, declared_share=0.2, share=0.5, grand=0.5, links=True, article_nocomments=False,
             page_links=False, item_main_product=False, declared_main=False, keep=0.5, main_opts=None,
             item_links=True, main_how=("markup", "main", "density")):
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    from .auto import declares_article_or_product

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    tree = HTMLTree.parse(html)
    declares = declares_article_or_product(html)
    if page_links and tree.body is not None:
        _drop_link_dense(tree.body)
    page = _lines(extract_plain_text(tree, **_OPTIONS, **({"comments": False} if declares and article_nocomments else {})))
    body = tree.body
    if body is None:
        return page
    declared = body.query_selector_all('[itemprop~="articleBody"]').values()
    how = "markup"
    if len(declared) == 1:
        item = declared[0]
    else:
        item, _ = _best_article(body.query_selector_all("article").values())
        if item is None:
            mains = body.query_selector_all('main, [role="main"]').values()
            if len(mains) == 1:
                item, how = mains[0], "main"
        if item is None:
            item, how = _densest2(body, grand=grand, links=links), "density"
    if item is None or item == body:
        return page
    if item_links:
        _drop_link_dense(item)
    body.replace_children(item)
    inner = _lines(extract_plain_text(tree, **{**_OPTIONS, "main_content": False}, skip_elements=_NOT_TEXT))
    if declared_main and declares and how in main_how:
        main = _lines(extract_plain_text(tree, **{**_OPTIONS, **(main_opts or {})}))
        if _words(main) >= keep * _words(inner):
            inner = main
    needed = declared_share if how == "markup" and declares else share
    return inner if _words(inner) >= needed * _words(page) else page
