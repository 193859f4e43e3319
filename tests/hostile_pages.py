"""Hostile documents, made at test time (seeded): what a crawl throws at an extractor and a scorer.

`pages()` gives (name, body bytes, declared Content-Type or None).  Each is a page a real crawl
can hold; none is valid in every way.  Sizes are kept to what a test can push through every front
end in seconds: the 10 MB ones are the largest.
"""

from __future__ import annotations

import random

ARTICLE = ("<p>The council approved the budget for the new library on Tuesday evening. "
           "The building will open in the spring, the mayor said, and it will have a reading room.</p>")


FINE = ("<html><body><article>"
        + "".join(f"<p>The council approved the budget for the new library on day {i}. The building will open "
                  f"in the spring, the mayor said.</p>" for i in range(5))
        + "</article></body></html>")


def big(size: int) -> str:
    """A page of `size` bytes: 490 elements of 1,000 attributes (490,000: under `markup.MAX_PAGE_ATTRIBUTES`), then
    text in 100,000 paragraphs (with them, under `markup.MAX_TAGS`); `dense` grows by ~250 MiB reading 14 MB of it."""
    names = "".join(f" a{k}" for k in range(1_000))
    elements = f"<i{names}>x</i>" * 490
    words = "word " * ((size - len(elements)) // 100_000 // 5)
    return "<html><body><div>" + elements + f"<p>{words}</p>" * 100_000 + "</div></body></html>"


def write_big_page_warc(path) -> None:
    """A WARC at `path` of a fine page, a 14 MB page (`big`) that grows a `dense` child past 200 MiB, and another fine
    page."""
    import io

    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    dummy = WARCWriter(io.BytesIO())
    write_warc(path, [response(dummy, "http://t/fine", FINE.encode()),
                      response(dummy, "http://t/big", big(14_000_000).encode()),
                      response(dummy, "http://t/fine2", FINE.encode())])


def pages(seed: int = 7) -> list[tuple[str, bytes, str | None]]:
    rng = random.Random(seed)
    html = "text/html; charset=utf-8"
    out: list[tuple[str, bytes, str | None]] = [
        ("empty", b"", html),
        ("whitespace", b" \n\t\r\n  ", html),
        ("invalid-utf8", b"<html><body>" + ARTICLE.encode() + bytes(rng.randrange(128, 256) for _ in range(3000))
         + b"</body></html>", html),
        ("utf16-bom", ("<html><body>" + ARTICLE + "</body></html>").encode("utf-16"), "text/html"),
        ("utf16-no-bom", ("<html><body>" + ARTICLE + "</body></html>").encode("utf-16-le"), "text/html"),
        ("lying-charset", ("<html><head><meta charset='shift_jis'></head><body>" + ARTICLE
                           + "<p>Café crème, naïve façade.</p></body></html>").encode("utf-8"),
         "text/html; charset=iso-8859-7"),
        ("unknown-charset", ("<html><body>" + ARTICLE + "</body></html>").encode(), "text/html; charset=x-no-such"),
        ("nul-flood", b"<html><body>" + b"\x00" * 2_000_000 + ARTICLE.encode() + b"</body></html>", html),
        ("one-line-10mb", b"<html><body><p>" + b"word " * 2_000_000 + b"</p></body></html>", html),
        ("deep-100000", b"<html><body>" + b"<div>" * 100_000 + ARTICLE.encode() + b"</div>" * 100_000
         + b"</body></html>", html),
        ("attribute-10mb", b"<html><body><div title='" + b"a" * 10_000_000 + b"'>" + ARTICLE.encode()
         + b"</div></body></html>", html),
        ("entity-flood", b"<html><body><p>" + b"".join(
            rng.choice([b"&#0;", b"&#xD800;", b"&#x110000;", b"&#99999999999;", b"&bogus;", b"&amp;", b"&#65;"])
            for _ in range(200_000)) + b"</p>" + ARTICLE.encode() + b"</body></html>", html),
        ("combining-flood", ("<html><body><p>a" + "\u0301" * 500_000 + "</p>" + ARTICLE
                             + "</body></html>").encode(), html),
        ("binary", bytes(rng.randrange(256) for _ in range(200_000)), html),
        ("unclosed-tags", b"<html><body><div><p><b><i>" * 2000 + ARTICLE.encode(), html),
        ("script-only", b"<html><head><script>" + b"var x = 1;" * 50_000 + b"</script></head></html>", html),
        ("xml-declaration", ("<?xml version='1.0' encoding='utf-8'?><html><body>" + ARTICLE
                             + "</body></html>").encode(), "application/xhtml+xml"),
        ("control-characters", ("<html><body>" + ARTICLE + "".join(chr(c) for c in range(1, 32)) * 100
                                + "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                                + "</body></html>").encode(), html),
        # a JSON-LD "@type" followed by 300,000 spaces (a pattern with two runs of spaces side by side
        # is quadratic here: minutes)
        ("type-then-spaces", ('<html><head><script type="application/ld+json">{"@type":' + " " * 300_000
                              + '1}</script></head><body>' + ARTICLE + "</body></html>").encode(), html),
        ("no-content-type", ("<!DOCTYPE html><html><body>" + ARTICLE + "</body></html>").encode(), None),
        # 7,000 content regions, each between runs of gibberish: a decision that searches the
        # page again after each region it keeps is quadratic here
        ("many-small-runs", ("<html><body>" + (ARTICLE + "<p>zq xv kj</p><p>vv qz jx</p><p>kq zx vj</p>") * 7000
                             + "</body></html>").encode(), html),
    ]
    return out
