"""What a payload's bytes are, by their start: HTML or not (`is_html_type`: the crawler's identified type, else the
Content-Type, else the bytes), a binary format declared text (`binary_kind`: a PDF, an image, an archive, NUL and
control bytes), an HTML page rather than text (`looks_like_html`), any markup at all (`has_markup`), blank
(`is_blank`).

Tests of bytes or text, with no reading in them: the WARC reader judges a record's payload by them, and the front
ends that take documents otherwise (datatrove's filter, Scrapy's items, ``plexity serve``'s uploads, a training
corpus) judge theirs by the same tests.
"""

from __future__ import annotations

import re

HTML_TYPES = ("text/html", "application/xhtml+xml")

# Start of a payload that is HTML although no Content-Type says so (old crawls).  A comment ends at its first
# ``-->`` (``(?!-->).``, not ``.*?``: a lazy dot could end it at any later one, and n comments not followed by one
# of these tags were tried in 2**n ways: 24 of them, 44 s for one record; 30, most of an hour).
_HTML_START = re.compile(rb"^\s*(?:<!--(?:(?!-->).)*-->\s*)*<(!doctype\s+html|html|head|body|meta|title)\b",
                         re.I | re.S)
_SNIFF_BYTES = 4096


def is_blank(data: str | bytes) -> bool:
    """Whether `data` is empty or white space only: ``not data.strip()`` without strip()'s copy of all
    of it (a page that ends in a newline, as most do, was copied whole just to be tested: 12-37 us of
    a 167 KB article page, its bytes and then its str, again in the extractor step)."""
    return not data or data.isspace()  # (the same white space as strip()'s: str's Unicode one, bytes' ASCII one)


def is_html_type(content_type: str | None, identified: str | None = None, head: bytes = b"") -> bool:
    """HTML by WARC-Identified-Payload-Type where the crawler identified the payload (it looked at
    the bytes; datatrove's WarcReader decides by it alone), else by the HTTP Content-Type, else
    by the payload's start."""
    identified = (identified or "").strip().lower()
    if identified:
        return any(t in identified for t in HTML_TYPES)
    declared = (content_type or "").lower()
    if declared.strip():
        return any(t in declared for t in HTML_TYPES)
    return bool(_HTML_START.match(head[:_SNIFF_BYTES]))


# Formats a payload declared text/html can turn out to be, by the bytes they start with (as
# browsers sniff them: WHATWG MIME Sniffing, "matching an image/audio/archive type pattern").
_SIGNATURES = ((b"%PDF-", "PDF"), (b"%!PS-Adobe-", "PostScript"), (b"\x89PNG\r\n\x1a\n", "PNG"),
               (b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"), (b"II*\x00", "TIFF"),
               (b"MM\x00*", "TIFF"), (b"\x00\x00\x01\x00", "ICO"), (b"wOFF", "WOFF"), (b"wOF2", "WOFF2"),
               (b"PK\x03\x04", "ZIP"), (b"PK\x05\x06", "ZIP"), (b"\x1f\x8b\x08", "gzip"),
               (b"\xfd7zXZ\x00", "xz"), (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"Rar!\x1a\x07", "RAR"),
               (b"\x28\xb5\x2f\xfd", "zstd"), (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Office document"),
               (b"\x7fELF", "ELF"), (b"\x00asm", "WebAssembly"), (b"OggS\x00", "Ogg"), (b"fLaC", "FLAC"),
               (b"\x1a\x45\xdf\xa3", "Matroska/WebM"), (b"ID3\x02", "MP3"), (b"ID3\x03", "MP3"),
               (b"ID3\x04", "MP3"))
_SIGNATURE_STARTS = tuple(signature for signature, _ in _SIGNATURES)  # (one startswith for the page that has none)
# Bytes that no text holds (WHATWG MIME Sniffing's "binary data bytes"; not TAB, LF, FF, CR, ESC).
_BINARY_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_BINARY_SHARE = 0.05  # of the first kilobyte: text has none, random bytes have ~10 %


_HTML_STARTS = ("<!doctype html", "<html", "<head", "<body")


def looks_like_html(text: str | bytes) -> bool:
    """Whether `text` is an HTML page rather than text: it starts (after white space and a BOM)
    with ``<!DOCTYPE html``, ``<html``, ``<head`` or ``<body``, or an XML declaration followed by
    ``<html`` soon after."""
    start = text[:1024] if isinstance(text, str) else text[:1024].decode("utf-8", "replace")
    start = start.lstrip("\ufeff \t\r\n")
    # (its first characters lowered, not 1 KB of them: a text that is not ASCII lowers slowly, ~3 us a document)
    lead = start[:len("<!doctype html")].lower()
    if lead.startswith("<?xml"):
        start = start.lower()
        return "<html" in start or "<!doctype html" in start
    return lead.startswith(_HTML_STARTS)


# A tag (<p>, </div>, <br/>) or a comment: what every HTML page holds somewhere, and text seldom does.
_MARKUP = re.compile(r"<(?:[A-Za-z][\w:-]*(?:\s[^<>]*)?/?|/[A-Za-z][\w:-]*\s*)>|<!--")
_MARKUP_BYTES = re.compile(_MARKUP.pattern.encode())  # (a page given as bytes)


def has_markup(text: str | bytes) -> bool:
    """Whether `text` holds any HTML tag or comment: an HTML page does, a page's text already (a WET
    record's, a JSONL row's ``text``) does not, and an extractor reads nothing of it (``learned`` and
    ``trafilatura`` give no text; the others join its lines)."""
    return (_MARKUP_BYTES if isinstance(text, (bytes, bytearray)) else _MARKUP).search(text) is not None


def binary_kind(head: bytes) -> str | None:
    """What a payload is when its first bytes say it is not text (a PDF, an image, an archive,
    bytes rich in NULs and control codes), else None.  Text that starts as HTML, and UTF-16 or
    UTF-32 text (with or without a byte order mark), is never binary."""
    if head.startswith(_SIGNATURE_STARTS):
        return next(kind for signature, kind in _SIGNATURES if head.startswith(signature))
    if head[4:8] == b"ftyp":
        return "MP4"
    if head.startswith(b"RIFF") and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return head[8:12].decode().strip()
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "bzip2"
    head = head[:1024]
    if not head or _HTML_START.match(head) or _wide_text(head):
        return None
    if len(head.translate(None, _BINARY_BYTES)) < len(head) * (1 - _BINARY_SHARE):
        return "binary data (NUL and control bytes)"
    return None


# Signatures as a text decoded with replacement shows them (Scrapy's response.text of a PNG served as text/html:
# "\ufffdPNG\r\n\x1a\n"), those with enough ASCII left to tell (not JPEG's, all U+FFFD)
_DECODED_SIGNATURES = tuple((decoded, kind) for decoded, kind in ((signature.decode("utf-8", "replace"), kind)
                                                                  for signature, kind in _SIGNATURES)
                            if sum(char < "\x80" for char in decoded) >= 2)
_BINARY_CHARS = dict.fromkeys(_BINARY_BYTES)  # (str.translate: deleted)


def text_binary_kind(text: str) -> str | None:
    """`binary_kind` of a page already decoded (Scrapy's ``response.text``), by its characters: a byte no charset
    read is one U+FFFD there, so its signature (``\ufffdPNG``) and its share of control codes are judged as they
    are.  Its UTF-8 (each U+FFFD three bytes) hid both: one binary page in twenty, decoded, passed as text and its
    garbage was kept as sentences."""
    head = text[:1024]
    for signature, kind in _DECODED_SIGNATURES:
        if head.startswith(signature):
            return kind
    kind = binary_kind(head.encode("utf-8", "surrogatepass"))
    if kind is not None or not head or _HTML_START.match(head.encode("utf-8", "surrogatepass")):
        return kind
    if len(head.translate(_BINARY_CHARS)) < len(head) * (1 - _BINARY_SHARE):
        return "binary data (NUL and control bytes)"
    return None


def _wide_text(head: bytes) -> bool:
    """UTF-16 or UTF-32 text: a byte order mark, or NULs in every other (every fourth) byte."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\0" not in head:  # (no column can be NULs: the test below, without its slices, on nearly every page)
        return False
    for step in (2, 4):
        columns = [head[i::step] for i in range(step)]
        nul_share = [c.count(0) / max(1, len(c)) for c in columns]
        if sum(share > 0.9 for share in nul_share) == step - 1 and min(nul_share) < 0.1:
            return True
    return False
