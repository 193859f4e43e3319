"""Bytes to text: the charset of an HTML body, shared by every extractor and front end.

The order is the WHATWG encoding rules' (what browsers do), in one function, `html_encoding`:

1. a byte order mark (UTF-8, UTF-16, UTF-32), which is then not part of the text;
2. the HTTP ``Content-Type`` header's charset;
3. the charset declared in the first bytes of the page (``<meta charset>``, ``<meta
   http-equiv="Content-Type">``, ``<?xml ... encoding=...?>``); a declaration of UTF-16 or UTF-32
   found there means UTF-8: bytes that can be read as ASCII to find the declaration are not
   UTF-16 or UTF-32 (a real UTF-16 page starts with a BOM, rule 1);
4. else UTF-8.

A charset of 2 or 3 that is the WHATWG's "replacement" encoding (``iso-2022-kr``, ``hz-gb-2312``,
``iso-2022-cn`` ...: `REPLACEMENT`) makes the page a single U+FFFD, as browsers show it.

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


# The WHATWG Encoding Standard's labels that Python's codecs and w3lib do not know (73 of its 221:
# "iso-8859-8-i", Hebrew pages' usual label, "x-cp1251", "koi8-ru", "x-gbk", "windows-949" ...), by
# the Python codec of the encoding each names.  (They fell to UTF-8, and such a page's text to U+FFFD.)
_WHATWG_LABELS = {
    "iso8859-2": "iso88592 iso_8859-2:1987", "iso8859-3": "iso88593 iso_8859-3:1988",
    "iso8859-4": "iso88594 iso_8859-4:1988", "iso8859-5": "iso88595 iso_8859-5:1988",
    "iso8859-6": "csiso88596e csiso88596i iso-8859-6-e iso-8859-6-i iso88596 iso_8859-6:1987",
    "iso8859-7": "iso88597 iso_8859-7:1987 sun_eu_greek",
    "iso8859-8": "csiso88598e iso-8859-8-e iso88598 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    "iso8859-10": "iso885910", "iso8859-13": "iso885913", "iso8859-14": "iso885914",
    "iso8859-15": "csisolatin9 iso885915", "koi8-r": "koi koi8", "koi8-u": "koi8-ru",
    "mac-roman": "csmacintosh mac x-mac-roman", "cp874": "dos-874 iso885911", "cp1250": "x-cp1250",
    "cp1251": "x-cp1251", "cp1252": "ansi_x3.4-1968 iso88591 iso_8859-1:1987 x-cp1252", "cp1253": "x-cp1253",
    "cp1254": "iso88599 iso_8859-9:1989 x-cp1254", "cp1255": "x-cp1255", "cp1256": "x-cp1256",
    "cp1257": "x-cp1257", "cp1258": "x-cp1258", "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gb18030": "csgb2312 gb_2312 x-gbk", "big5hkscs": "cn-big5 x-x-big5", "euc_jp": "cseucpkdfmtjapanese x-euc-jp",
    "cp949": "cseuckr csksc56011987 iso-ir-149 ks_c_5601-1989 ksc_5601 windows-949",
    "utf-16-be": "unicodefffe", "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff",
}
# The WHATWG's "replacement" encoding: the labels of encodings whose escape sequences can hide markup from a
# reader that does not decode them (ISO-2022-KR, ISO-2022-CN, HZ-GB-2312).  Browsers decode a page declared in
# one to a single U+FFFD, never its bytes (a security rule of the Encoding Standard); so do we (Python's
# iso2022_kr and hz codecs, which w3lib found for three of these labels, read such a page's text).
REPLACEMENT = "replacement"
_WHATWG_LABELS[REPLACEMENT] = "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement"
_REPLACED_CODECS = ("iso2022_kr", "hz")  # (Python's codecs that w3lib finds for some of these labels, and others)
_WHATWG = {label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()}
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.I)
_DECLARED_CHARSET = re.compile(r"""<meta\b[^>]*?charset\s*=\s*["']?\s*([^\s"';,/>]+)"""
                               r"""|<\?xml\b[^>]*?encoding\s*=\s*["']\s*([^\s"']+)""", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)


def _whatwg_header(content_type: str) -> str | None:
    match = _HEADER_CHARSET.search(content_type)
    return _WHATWG.get(match.group(1).lower()) if match else None


def _whatwg_declared(body: bytes) -> str | None:
    """The codec of a label of `_WHATWG` that the page declares in its first 1024 bytes (outside comments,
    before its body), which w3lib's scan found no codec for."""
    head = _COMMENT.sub("", body[:1024].decode("latin-1"))
    head = head[:head.lower().find("<body")] if "<body" in head.lower() else head
    match = _DECLARED_CHARSET.search(head)
    return _WHATWG.get((match.group(1) or match.group(2)).lower()) if match else None


def html_encoding(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(Python codec name, length of the byte order mark) of an HTML body, by the rules above."""
    from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

    encoding, bom = read_bom(body)
    if encoding:
        return encoding, len(bom)
    encoding = (_whatwg_header(content_type) or _charset(http_content_type_encoding(content_type))
                if content_type else None)
    if encoding and _is_replacement(encoding):
        return REPLACEMENT, 0
    if encoding:
        # (the WHATWG label "utf-16" is little-endian; Python's codec would guess)
        return ("utf-16-le" if codecs.lookup(encoding).name == "utf-16" else
                "utf-32-le" if codecs.lookup(encoding).name == "utf-32" else encoding), 0
    encoding = _charset(html_body_declared_encoding(body)) or _whatwg_declared(body)
    if encoding and _is_replacement(encoding):
        return REPLACEMENT, 0
    if encoding and not _wide(encoding):
        return encoding, 0
    return "utf-8", 0


def _is_replacement(encoding: str) -> bool:
    return encoding == REPLACEMENT or codecs.lookup(encoding).name in _REPLACED_CODECS


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
    if encoding == REPLACEMENT:  # (the WHATWG's replacement decoder: one U+FFFD for any bytes, nothing for none)
        return ("\ufffd", encoding, 1) if body else ("", encoding, 0)
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
    return html_text_counted(html)[0]


def html_text_counted(html: str | bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `html_text`, counting the U+FFFD it put in, a str's lone surrogates
    as a page's undecodable bytes (`decode_html_replaced`): the ``replaced_chars`` a front end counts
    for a page given as a str or as bytes (`content_type`: the response's, for bytes).  A front end
    that counts calls it before the extractor, whose own `html_text` then finds nothing to replace."""
    if isinstance(html, bytes):
        text, _, replaced = decode_html_replaced(html, content_type)
        return text, replaced
    # (a flag lookup in CPython; and a str that holds its UTF-8 form, as a page utf8_text decoded
    # does, has no lone surrogate: it is not encoded again to find out)
    if html.isascii() or native.has_utf8_form(html):
        return html, 0
    try:
        html.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.subn("\ufffd", html)
    return html, 0


def declared_content_type(declared: str | bytes | None) -> str | None:
    """What a crawler says a response's encoding is, as the HTTP ``Content-Type`` value that `html_encoding`
    reads (rule 2): a Content-Type value (``text/html; charset=windows-1251``; bytes, as Scrapy's
    ``response.headers`` hold it, are read as Latin-1, as Scrapy reads them) as it is; a bare label
    (``windows-1251``, Scrapy's ``response.encoding``) as that charset; None or blank: None."""
    if isinstance(declared, bytes):
        declared = declared.decode("latin-1")
    declared = (declared or "").strip()
    if not declared:
        return None
    if any(sign in declared for sign in "/;="):
        return declared
    return f"charset={declared}"


def decode_html_counted(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `decode_html`, counting the U+FFFD it had to insert."""
    text, _, replaced = decode_html_replaced(body, content_type)
    return text, replaced
