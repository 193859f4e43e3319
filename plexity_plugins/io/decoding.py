"""Bytes to text: the charset of an HTML body, shared by every extractor and front end.

The order is the WHATWG encoding rules' (what browsers do), in one function, `html_encoding`:

1. a byte order mark (UTF-8, UTF-16, UTF-32), which is then not part of the text;
2. the HTTP ``Content-Type`` header's charset;
3. the charset declared in the first bytes of the page (``<meta charset>``, ``<meta
   http-equiv="Content-Type">``, ``<?xml ... encoding=...?>``); a declaration of UTF-16 or UTF-32
   found there means UTF-8: bytes that can be read as ASCII to find the declaration are not
   UTF-16 or UTF-32 (a real UTF-16 page starts with a BOM, rule 1);
4. else UTF-8.

A label that names no charset is no declaration (as a browser ignores a label it does not know):
Python's codecs that are not charsets (``base64``, ``zlib``, ``rot13``: bytes to bytes; ``idna``,
``punycode``, ``undefined``: they raise whatever the error handler; ``unicode_escape``: it reads
backslashes) are found by their names as Python's codec registry finds any other (`_charset`).
Undecodable bytes become U+FFFD: decoding never raises.
"""

from __future__ import annotations

import codecs
import functools
import re

from ..runtime import native


def _wide(encoding: str) -> bool:
    name = codecs.lookup(encoding).name
    return name.startswith(("utf-16", "utf-32"))


_ESCAPE_CODECS = ("unicode-escape", "raw-unicode-escape")


@functools.lru_cache(maxsize=64)
def _charset(encoding: str | None) -> str | None:
    """`encoding` (a codec name w3lib found for a label) if it is a charset: its codec decodes any
    bytes to text, replacing what it cannot decode, and is not one of Python's escape codecs; else
    None."""
    if not encoding:
        return None
    try:
        if codecs.lookup(encoding).name in _ESCAPE_CODECS:
            return None
        bytes(range(256)).decode(encoding, "replace")
    except (LookupError, UnicodeError):
        return None
    return encoding


def html_encoding(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(Python codec name, length of the byte order mark) of an HTML body, by the rules above."""
    from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

    encoding, bom = read_bom(body)
    if encoding:
        return encoding, len(bom)
    encoding = _charset(http_content_type_encoding(content_type)) if content_type else None
    if encoding:
        # (the WHATWG label "utf-16" is little-endian; Python's codec would guess)
        return ("utf-16-le" if codecs.lookup(encoding).name == "utf-16" else
                "utf-32-le" if codecs.lookup(encoding).name == "utf-32" else encoding), 0
    encoding = _charset(html_body_declared_encoding(body))
    if encoding and not _wide(encoding):
        return encoding, 0
    return "utf-8", 0


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding) of an HTML body: BOM, then the Content-Type header, then the page's own
    declaration (UTF-16/32 there meaning UTF-8), else UTF-8; undecodable bytes become U+FFFD
    (never raises)."""
    text, encoding, _ = decode_html_replaced(body, content_type)
    return text, encoding


def decode_html_replaced(body: bytes, content_type: str | None = None) -> tuple[str, str, int]:
    """(text, encoding, characters replaced): `decode_html`, with the U+FFFD it had to insert (those
    the bytes spelled are not counted): the ``replaced_chars`` every front end counts for a page's bytes."""
    from w3lib.encoding import to_unicode

    encoding, bom = html_encoding(body, content_type)
    if codecs.lookup(encoding).name == "utf-8":
        # (valid UTF-8, nearly every page: decoded keeping its bytes as the str's UTF-8 form, which
        # sending the page to the extraction child and parsing it would otherwise encode again;
        # valid, so nothing replaced: no count to scan for)
        text = native.utf8_text(memoryview(body)[bom:])
        if text is not None:
            return text, encoding, 0
    text = to_unicode(body[bom:], encoding)
    return text, encoding, max(0, text.count("\ufffd") - body.count("\ufffd".encode()))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def html_text(html: str | bytes) -> str:
    """A page as every extractor parses it: bytes decoded (`decode_html`); a str's lone surrogates
    (a JSON ``\\ud800`` escape puts them in a str; no encoding holds them) U+FFFD, as undecodable
    bytes are: libxml2 stopped reading a page at the first one, the rest of it lost, and resiliparse's
    parse raised."""
    if isinstance(html, bytes):
        return decode_html(html)[0]
    if html.isascii():  # (a flag lookup in CPython)
        return html
    try:
        html.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", html)
    return html


def decode_html_counted(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `decode_html`, counting the U+FFFD it had to insert."""
    text, _, replaced = decode_html_replaced(body, content_type)
    return text, replaced
