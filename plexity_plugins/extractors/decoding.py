"""Bytes to text: the charset of an HTML body, shared by every extractor and front end."""

from __future__ import annotations


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
