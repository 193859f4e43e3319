"""The link-density test every main-content extractor here applies: short blocks that are mostly
link text are navigation (menus, tag clouds, share bars, "Read more" and related-link lists), not
a page's text.  (trafilatura's test, on resiliparse's lexbor tree.)"""

from __future__ import annotations

from .text import nonspace

# The blocks tested: those holding a link (a div only when no block is inside it: an outer div is
# long, and its short inner blocks are tested themselves).
_LINK_BLOCKS = "p:has(a), ul:has(a), ol:has(a), div:has(a):not(:has(div, p, ul, ol))"


def drop_link_dense(element) -> None:
    """Inside `element`, removes the short blocks (under 100 characters) that are mostly link text
    (over 80%): trafilatura's link density test."""
    chosen = []
    for block in element.query_selector_all(_LINK_BLOCKS).values():
        chars = nonspace(block.text or "")  # (whitespace not counted)
        if not chars or chars >= 100:
            continue
        links = block.get_elements_by_tag_name("a").values()
        if sum(nonspace(a.text or "") for a in links) > 0.8 * chars:
            chosen.append(block)
    outer = []
    for block in chosen:  # in document order: a block's descendants come right after it
        if not (outer and outer[-1].contains(block)):
            outer.append(block)
    for block in outer:
        block.remove()  # (as block.parent.remove_child(block), without making the parent's Python object)
