"""A small local website to try the example project on (also used by the tests and by
bench/scrapy_stall.py), served on 127.0.0.1:

    python demo_site.py &                       # prints the URL
    scrapy crawl site -a start_url=http://127.0.0.1:PORT/ -O items.jsonl

Articles wrapped in boilerplate (navigation, cookie notice, share bars, footer), a page
in German, an image, a page whose bytes do not match its declared charset, and a very
large page.  `ARTICLES` and `BOILERPLATE` are the truth the tests check the output against.
"""

from __future__ import annotations

import http.server
import struct
import threading
import zlib
from contextlib import contextmanager

ARTICLES = {
    "/news/library.html": [
        "The city council approved the budget for the new public library on Monday evening.",
        "The library will open in the spring, and it will have a large room for children and a garden for reading.",
        "Residents asked the council whether the old building on the main street would be sold.",
        "The mayor said that the decision would be made after a public meeting in the autumn.",
    ],
    "/news/river.html": [
        "Scientists from the university have measured the temperature of the river every morning for ten years.",
        "Their report, published this week, shows that the water is cleaner than it has been for a generation.",
        "Fish that had not been seen in the river since the war have returned to its upper reaches.",
        "The authors say that the farms along the valley have changed the way they use the land.",
    ],
}

# Lines a reader would call boilerplate; none may survive the crawl's cleaning.
BOILERPLATE = [
    "Skip to main content",
    "Home | News | Sport | Weather | Contact",
    "Accept all cookies",
    "Share on Facebook",
    "Tweet",
    "Share this article",
    "Click here to subscribe to our newsletter",
    "Related articles",
    "Advertisement",
    "© 2024 The Valley Gazette. All rights reserved.",
]

GERMAN = [
    "Der Stadtrat hat am Montagabend den Haushalt für die neue öffentliche Bibliothek beschlossen.",
    "Die Bibliothek soll im Frühjahr eröffnen und einen großen Raum für Kinder sowie einen Lesegarten haben.",
    "Die Bürgermeisterin sagte, die Entscheidung über das alte Gebäude falle nach einer Versammlung im Herbst.",
]

BROKEN_CHARSET = [
    "The bakery on the corner has sold bread to the people of the town for more than a hundred years.",
    "Its owner said that the price of flour had risen, but that the shop would stay open for the winter.",
    "Customers came from the villages around the town to buy the cakes that she made every Friday.",
]

LARGE_SENTENCES = [
    "In the report for district {n}, the council said that the roads had been repaired before the winter.",
    "The people of village {n} asked for a new school, and the council promised to build it within two years.",
    "Farmers near bridge {n} said that the river had flooded their fields twice during the spring.",
]


def _page(title: str, paragraphs: list[str], lang: str = "en", extra_body: str = "") -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title></head>
<body>
<a href="#main">Skip to main content</a>
<nav><ul><li><a href="/">Home</a> | <a href="/news/library.html">News</a> | <a href="/sport">Sport</a>
 | <a href="/weather">Weather</a> | <a href="/contact">Contact</a></li></ul></nav>
<div class="cookie-banner"><p>Accept all cookies</p></div>
<main id="main"><article>
<h1>{title}</h1>
<div class="share"><p>Share on Facebook</p><p>Tweet</p></div>
{body}
<p>Share this article</p>
<p>Click here to subscribe to our newsletter</p>
{extra_body}
</article></main>
<aside><h2>Related articles</h2><ul><li><a href="/news/river.html">River</a></li>
<li><a href="/news/library.html">Library</a></li><li><a href="/de/bibliothek.html">Bibliothek</a></li></ul>
<p>Advertisement</p></aside>
<footer><p>© 2024 The Valley Gazette. All rights reserved.</p></footer>
</body></html>
"""


def _png() -> bytes:
    """A real 1x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
            + chunk(b"IEND", b""))


def large_page(target_bytes: int) -> str:
    """An article of varied sentences (trafilatura drops repeated paragraphs) of about `target_bytes`."""
    paragraphs, size, n = [], 0, 0
    while size < target_bytes:
        n += 1
        paragraph = " ".join(s.format(n=n) for s in LARGE_SENTENCES)
        paragraphs.append(paragraph)
        size += len(paragraph) + 8
    return _page("Annual report of the districts", paragraphs)


def build_site(large_bytes: int = 5_000_000) -> dict[str, tuple[str, bytes]]:
    """{path: (content type, body)}."""
    links = "".join(f'<p><a href="{p}">{p}</a></p>' for p in (
        *ARTICLES, "/de/bibliothek.html", "/media/chart", "/bakery.html", "/reports/annual.html", "/missing.html"))
    site = {
        "/": ("text/html; charset=utf-8", f"<html><body><h1>The Valley Gazette</h1>{links}</body></html>".encode()),
        "/de/bibliothek.html": ("text/html; charset=utf-8", _page("Neue Bibliothek", GERMAN, lang="de").encode()),
        # An image behind a link without a file extension, so the crawler does fetch it.
        "/media/chart": ("image/png", _png()),
        # Declares a charset that does not exist; the bytes are Latin-1 (é = 0xE9), not UTF-8.
        "/bakery.html": ("text/html; charset=x-no-such-charset",
                         _page("The bakery", BROKEN_CHARSET, extra_body="<p>Caf\u00e9 cr\u00e8me</p>")
                         .replace('<meta charset="utf-8">', "").encode("latin-1")),
        "/reports/annual.html": ("text/html; charset=utf-8", large_page(large_bytes).encode()),
    }
    for path, paragraphs in ARTICLES.items():
        site[path] = ("text/html; charset=utf-8", _page(path.rsplit("/", 1)[1], paragraphs).encode())
    return site


@contextmanager
def serve(site: dict[str, tuple[str, bytes]]):
    """Serves `site` on 127.0.0.1 on an ephemeral port; yields the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = site.get(self.path.split("?", 1)[0])
            if page is None:
                self.send_error(404)
                return
            content_type, body = page
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # keep test output quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--large-bytes", type=int, default=5_000_000, help="size of the very large page")
    options = parser.parse_args()
    with serve(build_site(options.large_bytes)) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
