"""From HTML to text: charset decoding and the extractors the filter runs after.

- ``tags``: the text of every visible element, one line per block element (pyplexity's
  tag remover, but keeping block breaks, which the filter uses as boundaries).
- ``trafilatura``: trafilatura's main-text extraction.
- ``fast``: resiliparse's main-content extraction (lexbor parser): trafilatura's job at many
  times its speed (figures in the README's "Cleaning quality").
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

EXTRACTORS = ("tags", "trafilatura", "fast", "none")
DEFAULT_EXTRACTOR = "trafilatura"

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


def _parse(html: str | bytes):
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    html = html.replace("\x00", "")
    if not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError) as exc:
        # lxml refuses str input with an XML encoding declaration; go through bytes.
        try:
            return lxml.html.document_fromstring(html.encode("utf-8"), parser=lxml.html.HTMLParser(encoding="utf-8"))
        except (lxml.etree.ParserError, ValueError):
            raise ExtractionError(f"unparsable HTML: {exc}") from exc


def html_to_text_tags(html: str | bytes) -> str:
    """Visible text, one line per block element, whitespace inside a line collapsed."""
    root = _parse(html)
    if root is None:
        return ""
    parts: list[str] = []

    def inline(text: str, in_pre: bool) -> str:
        # A newline in the HTML source is a space to a browser, except inside <pre>.
        return text if in_pre else text.replace("\n", " ")

    def walk(element, in_pre: bool) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.lower()
        skip = tag in SKIP_TAGS or not tag or _is_hidden(element)
        if not skip:
            block = tag in BLOCK_TAGS
            inner_pre = in_pre or tag == "pre"
            if block:
                parts.append("\n")
            if element.text:
                parts.append(inline(element.text, inner_pre))
            for child in element:
                walk(child, inner_pre)
            if block:
                parts.append("\n")
        # The tail is text after the element, inside the parent: always visible.
        if element.tail:
            parts.append(inline(element.tail, in_pre))

    walk(root, False)
    text = _SPACES.sub(" ", "".join(parts))
    lines = (line.strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


_TRAFILATURA_CONFIG = None


def html_to_text_trafilatura(html: str | bytes) -> str:
    """trafilatura's main text (paragraphs on their own lines); "" when it finds none."""
    global _TRAFILATURA_CONFIG
    import trafilatura
    from trafilatura.settings import DEFAULT_CONFIG

    if _TRAFILATURA_CONFIG is None:
        config = copy.deepcopy(DEFAULT_CONFIG)
        # Its timeout uses SIGALRM, which only works in the main thread (Scrapy, servers).
        config["DEFAULT"]["EXTRACTION_TIMEOUT"] = "0"
        _TRAFILATURA_CONFIG = config
    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    text = trafilatura.extract(html, config=_TRAFILATURA_CONFIG, include_comments=False,
                               include_tables=True, deduplicate=False)
    return text or ""


def html_to_text_fast(html: str | bytes) -> str:
    """resiliparse's main content (its heuristic drops navigation, headers, footers and
    sidebars), one line per block, whitespace inside a line collapsed; "" when none."""
    from resiliparse.extract.html2text import extract_plain_text

    if isinstance(html, bytes):
        html, _ = decode_html(html)
    if not html.strip():
        return ""
    # No alt texts, form fields or bullets: only the text a reader sees as the page's own.
    text = extract_plain_text(html, main_content=True, alt_texts=False, form_fields=False, list_bullets=False)
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _identity(text: str | bytes) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text


def get_extractor(name: str) -> Callable[[str | bytes], str]:
    """The extractor function for `name` (one of EXTRACTORS)."""
    try:
        return {"tags": html_to_text_tags, "trafilatura": html_to_text_trafilatura, "fast": html_to_text_fast,
                "none": _identity}[name]
    except KeyError:
        raise ValueError(f"unknown extractor {name!r}: choose one of {', '.join(EXTRACTORS)}") from None
