"""``tags``: the text of every visible element, one line per block element (pyplexity's tag
remover, but keeping block breaks, which the filter uses as boundaries)."""

from __future__ import annotations

import re

from .limits import parse_html
from .text import composed

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

def _is_hidden(element) -> bool:
    attrib = element.attrib
    if "hidden" in attrib or attrib.get("aria-hidden") == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))

@composed
def html_to_text_tags(html: str | bytes) -> str:
    """Visible text, one line per block element, whitespace inside a line collapsed."""
    root = parse_html(html, "tags")  # (ExtractionError past libxml2's huge limits: it reads no further)
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
    return "\n".join(line for line in lines if line)

