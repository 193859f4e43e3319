"""WARCs as the archiving tools a user crawls with write them, probed 2026-12-06: GNU wget (`--warc-file`, compressed
or not, split by `--warc-max-size`, `--warc-cdx`, then a second crawl with `--warc-dedup`) and warcio's own
`capture_http`, each against a site on 127.0.0.1 that sends what real sites send (UTF-8, windows-1252 declared only
in a meta tag, gzip and brotli bodies, a chunked one, a redirect, a 404 page, a PDF, an image, a page fetched twice,
a large page).

What a user met: a deduplicating crawl's `revisit` records (a page unchanged since the capture the crawler wrote
before) were counted with the requests and metadata as `not_response`, and nothing said the crawl had revisits;
a 404 page's body ("No such page here.") and a redirect's were cleaned into documents as if they were the site's
pages (Scrapy's spiders never see them; Common Crawl keeps them out of its WARCs of pages).  Now a revisit is
`revisit` and a 3xx, 4xx or 5xx response `redirect_or_error`: copied by `plexity clean`, skipped by `plexity run`,
each counted by name.  Every 200 HTML response's text comes out once; wget's `warcinfo`, `request`, `metadata` and
`resource` (its log, its arguments) records are `not_response`; the PDF and the image `not_html`.

wget: `scripts/setup.sh --test` installs it, and docs/guarantees-input.md says what its WARCs give, so a test machine
without it fails here, naming it.  warcprox 2.13.1 (a throwaway venv, its proxy allowed to reach 127.0.0.1) was
probed by hand the same way: its revisit (the page fetched twice) is the same record and gives the same counts.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import brotli
import pytest
from warcio.archiveiterator import ArchiveIterator

from helpers import QuietHandler, http_server, read_jsonl_dir, run_plexity, run_step_stats
from web_archives import what_warcio_finds

ARTICLE = ("The city council approved the budget on Tuesday after a long debate about school funding. "
           "The plan adds two libraries and repairs forty miles of road over the next three years.")
PAGE_LEADS = {  # (each page's own first sentence, so that its text is told from the others')
    "/": "Welcome to the town's news, where every story of the week is listed.",
    "/utf8.html": "The café in Zürich opened its façade to a naïve visitor.",
    "/cp1252.html": "The crème brûlée was “the best in town”, the owner said.",
    "/gzip.html": "This story was sent compressed with gzip by the server.",
    "/br.html": "This story was sent compressed with brotli by the server.",
    "/chunked.html": "This story was sent in chunks by the server.",
    "/twice.html": "This story is fetched twice in a crawl.",
}
OTHER = ["/redirect", "/missing.html", "/doc.pdf", "/img.png", "/large.html"]


def _page(lead: str, charset_meta: str = "", paragraphs: int = 1, links: str = "") -> str:
    body = f"<p>{lead}</p>" + f"<p>{ARTICLE}</p>" * paragraphs + links
    return f"<!DOCTYPE html><html><head>{charset_meta}<title>News</title></head><body>{body}</body></html>"


class _Site(QuietHandler):
    """The site: its index links every page; the same bytes each time (a gzip body without a time), so a second
    crawl finds each page unchanged."""

    def _answer(self, body: bool):
        path = self.path
        if path == "/redirect":
            return self._send(301, {"Location": "/utf8.html", "Content-Type": "text/html"},
                              b"<html><body><h1>Moved Permanently</h1><p>The page has moved.</p></body></html>", body)
        if path == "/missing.html" or path == "/robots.txt":
            return self._send(404, {"Content-Type": "text/html; charset=utf-8"},
                              _page("No such page here.").encode(), body)
        if path == "/doc.pdf":
            return self._send(200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\n%%EOF\n", body)
        if path == "/img.png":
            return self._send(200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + bytes(64), body)
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/":
            links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in [*PAGE_LEADS, *OTHER] if p != "/")
            return self._send(200, html, _page(PAGE_LEADS["/"], links=f"<ul>{links}</ul>").encode(), body)
        if path == "/large.html":  # (400 KB: wget's --warc-max-size puts it in a file of its own)
            return self._send(200, html, _page("The long report.", paragraphs=2000).encode(), body)
        if path == "/cp1252.html":  # (the charset said only in the page)
            meta = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
            return self._send(200, {"Content-Type": "text/html"}, _page(PAGE_LEADS[path], meta).encode("cp1252"),
                              body)
        page = _page(PAGE_LEADS[path]).encode()
        if path == "/gzip.html":
            return self._send(200, {**html, "Content-Encoding": "gzip"}, gzip.compress(page, mtime=0), body)
        if path == "/br.html":
            return self._send(200, {**html, "Content-Encoding": "br"}, brotli.compress(page), body)
        if path == "/chunked.html":
            self.send_response(200)
            for name, value in {**html, "Transfer-Encoding": "chunked"}.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(b"".join(b"%x\r\n%s\r\n" % (len(page[i:i + 64]), page[i:i + 64])
                                          for i in range(0, len(page), 64)) + b"0\r\n\r\n")
            return None
        return self._send(200, html, page, body)

    def _send(self, status: int, headers: dict, data: bytes, body: bool):
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)


@pytest.fixture(scope="module")
def site():
    with http_server(_Site) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


def _texts_by_path(records) -> Counter:
    """{(URL path, text's first line): how many documents} of (url, text) pairs."""
    return Counter(("/" + url.split(":", 2)[2].split("/", 1)[1], text.split("\n")[0]) for url, text in records)


def _expected_texts(pages: Counter) -> Counter:
    first_lines = {**PAGE_LEADS, "/large.html": "The long report."}
    return Counter({(path, first_lines[path]): n for path, n in pages.items()})


def _check_clean_and_run(crawl: Path, tmp_path: Path) -> tuple[dict, dict]:
    """`plexity clean` and `plexity run` of the folder of WARCs: every page once, every other record counted by
    name, the counts adding up to warcio's.  Their stats: clean's, and the run's reader's."""
    outcomes, pages = what_warcio_finds(crawl)
    assert outcomes["page"] and outcomes["redirect_or_error"] and outcomes["not_html"]

    cleaned = run_plexity("clean", str(crawl), "-o", str(tmp_path / "cleaned"), timeout=300)
    assert cleaned.returncode == 0, cleaned.stderr[-3000:]
    stats = json.loads((tmp_path / "cleaned" / "plexity-stats.json").read_text())
    assert stats["copied_reasons"] == {k: n for k, n in outcomes.items() if k != "page"}
    assert (stats["documents"], stats["documents_skipped"], stats["damaged_files"]) == (outcomes["page"], 0, {})
    assert stats["records"] == sum(outcomes.values()) == stats["documents"] + stats["records_copied"]
    texts = []
    for path in (tmp_path / "cleaned").glob("*.warc*"):
        with open(path, "rb") as f:
            texts += [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read().decode())
                      for r in ArchiveIterator(f) if r.rec_headers.get_header("X-Plexity-Verdict")]
    assert _texts_by_path(texts) == _expected_texts(pages)
    assert all(ARTICLE.split(". ")[1] in text for _, text in texts)
    copied = ", ".join(f"{reason} {n}" for reason, n in Counter(stats["copied_reasons"]).most_common())
    assert f"({stats['records_copied']} copied: {copied})" in cleaned.stdout + cleaned.stderr

    ran = run_plexity("run", str(crawl), "-o", str(tmp_path / "run"), "--workers", "1", timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    reader, _, _ = run_step_stats(tmp_path / "run", extractor="learned")
    assert {k[len("skipped_"):]: n for k, n in reader.items() if k.startswith("skipped_")} == stats["copied_reasons"]
    assert (reader["records"], reader["documents"]) == (stats["records"], outcomes["page"])
    documents = read_jsonl_dir(tmp_path / "run" / "documents") + read_jsonl_dir(tmp_path / "run" / "excluded")
    assert _texts_by_path((d["metadata"]["url"], d["text"]) for d in documents) == _expected_texts(pages)
    return stats, reader


def _wget(*args: str, cwd: Path) -> None:
    wget = shutil.which("wget")
    assert wget, "wget is not installed: bash scripts/setup.sh --test installs it (apt-get install wget)"
    done = subprocess.run([wget, "-nv", "-r", "-l", "2", "--delete-after", "--tries", "1", "--timeout", "10", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 8), done.stderr[-2000:]  # (8: the server answered an error, the 404 page)


def test_wget_crawls_and_a_deduplicating_recrawl_give_every_page_once_and_name_revisits_and_error_pages(
        site, tmp_path):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    # first crawl: compressed, split into files of ~10 kB (the large page and wget's own records apart), a CDX;
    # second: uncompressed, each page unchanged since the first crawl written as a revisit
    _wget("--warc-file=first", "--warc-cdx", "--warc-max-size=10k", site + "/", cwd=crawl)
    _wget("--warc-file=second", "--no-warc-compression", f"--warc-dedup={crawl / 'first.cdx'}", site + "/",
          cwd=crawl)
    (crawl / "first.cdx").unlink()  # (not a WARC: plexity clean would name it a skipped file)
    warcs = sorted(p.name for p in crawl.glob("*.warc*"))
    assert len(warcs) > 3 and "second.warc" in warcs and "first-meta.warc.gz" in warcs
    with open(crawl / "second.warc", "rb") as f:
        types = Counter(r.rec_type for r in ArchiveIterator(f))
    assert types["revisit"] >= len(PAGE_LEADS) and types["resource"] == 2 and types["metadata"] == 1, types
    # (wget's log, its arguments: resource records of text/plain; its manifest: metadata)

    stats, reader = _check_clean_and_run(crawl, tmp_path)
    assert stats["copied_reasons"]["revisit"] == reader["skipped_revisit"] == types["revisit"]


def test_warcio_capture_http_gives_every_page_once_and_names_error_pages(site, tmp_path):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    script = ("import sys\nfrom warcio.capture_http import capture_http\n"
              "import requests  # (after capture_http, as warcio's README says: it patches http.client)\n"
              "with capture_http(sys.argv[1]):\n"
              "    for path in sys.argv[3:]:\n"
              "        requests.get(sys.argv[2] + path, timeout=10)\n")
    paths = [*PAGE_LEADS, *OTHER, "/twice.html"]
    done = subprocess.run([sys.executable, "-c", script, str(crawl / "capture.warc.gz"), site, *paths],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    stats, _ = _check_clean_and_run(crawl, tmp_path)
    # (requests follows the redirect: the 301 is named, the page it leads to is cleaned; the chunked body was stored
    # chunked, and comes out once)
    assert stats["copied_reasons"]["redirect_or_error"] == 2
