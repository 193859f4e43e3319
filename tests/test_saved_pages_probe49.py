"""Pages a user saved with a browser, given to `plexity clean` and to the Python API, probed 2026-12-06: real headless
Chromium (tests/browser.py) loads pages from a site on 127.0.0.1 (UTF-8 with an image, a style sheet and a script;
windows-1252 and Shift_JIS said only in a meta tag) and saves each as Chrome's "Webpage, Single File" does
(DevTools' ``Page.captureSnapshot``: the MHTML Chrome writes, the HTML part quoted-printable, the image base64).

What a user met: every ``.mhtml`` and ``.mht`` was skipped as ``unknown_file_type`` ("no input could be read", exit
1), and the images, styles and scripts of a page saved "Webpage, Complete" (``page_files/`` beside ``page.html``)
were each an ``unknown_file_type`` too, in the words for a file of no kind.  Now an MHTML's page (its root part,
its charset and its Content-Location honoured) is cleaned into ``page.mhtml.txt``, only its bytes up to the page's
end are read (Chrome writes the page first: the images after it never count against ``--max-document-bytes``), a
``.mhtml`` holding no page is ``not_mhtml``, and the files of a page saved complete are ``page_resource``.
"""

from __future__ import annotations

import base64
import json
import os
import quopri
import shutil
import struct
import zlib
from email import message_from_bytes
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from pathlib import Path

import pytest

from browser import chromium
from helpers import QuietHandler, http_server, run_plexity

pytestmark = pytest.mark.browser

ARTICLE = ("<p>The city council approved the budget on Tuesday after a long debate about school funding.</p>"
           "<p>The plan adds two libraries and repairs forty miles of road over the next three years.</p>")
LEADS = {"utf8": "The café in Zürich opened its façade to a naïve visitor.",
         "cp1252": "The crème brûlée was “the best in town”, the owner said.",
         "sjis": "市議会は火曜日に予算を承認した。"}
IMAGE_SIDE = 1024  # (a PNG of random pixels: 3 MB, base64 4 MB in the MHTML, after the page)


def _png(side: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    pixels = b"".join(b"\0" + os.urandom(side * 3) for _ in range(side))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels, 1)) + chunk(b"IEND", b""))


def _site_files() -> dict[str, tuple[str, bytes]]:
    head = "<link rel=stylesheet href='style.css'><script src='app.js'></script>"
    return {
        "/utf8.html": ("text/html; charset=utf-8", (
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Budget</title>{head}</head><body>"
            f"<nav><a href='/'>Home</a> | <a href='/news'>News</a></nav><p>{LEADS['utf8']}</p>{ARTICLE}"
            f"<img src='photo.png'></body></html>").encode()),
        "/cp1252.html": ("text/html", (  # (the charset said only in the page, as on an old site)
            "<html><head><meta http-equiv='Content-Type' content='text/html; charset=windows-1252'><title>Crème"
            f"</title></head><body><p>{LEADS['cp1252']}</p>{ARTICLE}</body></html>").encode("cp1252")),
        "/sjis.html": ("text/html", (
            "<html><head><meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'><title>予算</title>"
            f"</head><body><p>{LEADS['sjis']}</p>{ARTICLE}</body></html>").encode("shift_jis")),
        "/style.css": ("text/css", b"body { font-family: serif }"),
        "/app.js": ("application/javascript", b"console.log('loaded')"),
        "/photo.png": ("image/png", _png(IMAGE_SIDE)),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """{"utf8": (the MHTML's bytes, the page's URL), ...} as Chromium saved each page, and the site's files."""
    files = _site_files()

    class Site(QuietHandler):
        def _answer(self, body: bool):
            kind, data = files.get(self.path, ("text/plain", b"no such file"))
            self.send_response(200 if self.path in files else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

    pages = {}
    with http_server(Site) as server:
        driver = chromium(tmp_path_factory.mktemp("chromium-profile"))
        try:
            for name in LEADS:
                url = f"http://127.0.0.1:{server.server_port}/{name}.html"
                driver.get(url)
                mhtml = driver.execute_cdp_cmd("Page.captureSnapshot", {"format": "mhtml"})["data"]
                pages[name] = (mhtml.encode("ascii"), url)  # (7-bit: quoted-printable and base64)
        finally:
            driver.quit()
    return pages, files


def _clean(inputs: Path, out: Path, *options: str):
    proc = run_plexity("clean", str(inputs), "-o", str(out), "-q", "--write-dropped", *options)
    stats = json.loads((out / "plexity-stats.json").read_text())
    logged = [json.loads(line) for line in (out / "plexity-dropped.jsonl").read_text().splitlines()]
    return proc, stats, logged


def test_a_page_saved_as_mhtml_is_cleaned_as_its_page(saved, tmp_path):
    """Before: each skipped as unknown_file_type, "no input could be read", exit 1."""
    pages, _ = saved
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "utf8.mhtml").write_bytes(pages["utf8"][0])
    (folder / "cp1252.mht").write_bytes(pages["cp1252"][0])  # (Internet Explorer's and Edge's name for one)
    (folder / "sjis.mhtml").write_bytes(pages["sjis"][0])
    proc, stats, logged = _clean(folder, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    for name, lead in (("utf8.mhtml", LEADS["utf8"]), ("cp1252.mht", LEADS["cp1252"]), ("sjis.mhtml", "")):
        text = (tmp_path / "out" / f"{name}.txt").read_text()
        assert text.startswith(lead) and "forty miles of road" in text, text
        assert "=3D" not in text and "MultipartBoundary" not in text  # (no quoted-printable, no MIME)
    assert (stats["files"], stats["files_skipped"], stats["skip_reasons"]) == (3, 0, {})
    assert stats["bytes_in"] < 2_000  # (the pages' HTML, not the 4 MB image saved with one)
    # the Japanese sentence, decoded from Shift_JIS, dropped by the English model: named by the file and the page's
    # URL, as a WARC record's sentence is
    assert [(entry["source"], entry["text"]) for entry in logged] == [
        (f"{folder / 'sjis.mhtml'}#{pages['sjis'][1]}", LEADS["sjis"])]


def test_the_python_api_reads_an_mhtml_page_with_its_charset_and_url(saved):
    """Before: there was no reader of MHTML; `decode_html` of the file's bytes is MIME headers and quoted-printable."""
    from plexity_plugins.extractors import decode_html
    from plexity_plugins.io.mhtml_files import mhtml_page

    pages, _ = saved
    for name, (mhtml, url) in pages.items():
        page = mhtml_page(mhtml)
        assert page.url == url
        html = decode_html(page.body, page.content_type)[0]
        assert LEADS[name] in html and "=3D" not in html
    # Internet Explorer's .mht says the charset in the part's header, none in the page: that charset decodes it (the
    # page's bytes alone are taken for UTF-8: the sentence would be U+FFFD)
    japanese = f"<html><head><title>予算</title></head><body><p>{LEADS['sjis']}</p></body></html>"
    part = MIMEBase("text", "html", charset="euc-jp")
    part["Content-Transfer-Encoding"] = "quoted-printable"
    part.set_payload(quopri.encodestring(japanese.encode("euc_jp")).decode("ascii"))
    part["Content-Location"] = "http://example.org/yosan.html"
    message = MIMEMultipart("related", type="text/html")
    message.attach(part)
    page = mhtml_page(message.as_bytes())
    assert page.url == "http://example.org/yosan.html"
    assert LEADS["sjis"] in decode_html(page.body, page.content_type)[0]


def test_an_mhtml_is_read_up_to_its_page_not_its_images(saved, tmp_path):
    """Chrome writes the page first: a cap below the file's size (its image) still reads the page, the file is read
    only to the page's end, and a page over the cap is too_large.  Before: unknown_file_type whatever the cap."""
    mhtml = saved[0]["utf8"][0]
    assert len(mhtml) > 4_000_000
    path = tmp_path / "in" / "page.mhtml"
    path.parent.mkdir()
    path.write_bytes(mhtml)
    proc, stats, _ = _clean(path.parent, tmp_path / "out", "--max-document-bytes", "1MB")
    assert proc.returncode == 0 and stats["files"] == 1, proc.stderr
    assert LEADS["utf8"] in (tmp_path / "out" / "page.mhtml.txt").read_text()
    proc, stats, logged = _clean(path.parent, tmp_path / "out-small", "--max-document-bytes", "200")
    assert stats["skip_reasons"] == {"too_large": 1}
    assert [entry["detail"] for entry in logged] == ["its page does not end within 200 bytes"]
    from plexity_plugins.io.mhtml_files import mhtml_page

    with open(path, "rb") as f:
        mhtml_page(f)
        assert f.tell() < 200_000  # (the page and the first chunk of the image: not its 4 MB)


def test_a_page_saved_complete_is_read_and_its_files_are_named_as_its_own(saved, tmp_path):
    """Chrome's "Webpage, Complete": page.html (the page as the browser serialised it, its links to page_files/) and
    page_files/ of its image, style sheet and script.  Before: each of those an unknown_file_type, in the words for
    a file of no kind ("not one of the .txt, .text, .html ... files")."""
    pages, files = saved
    mhtml, url = pages["utf8"]
    html = message_from_bytes(mhtml).get_payload()[0].get_payload(decode=True).decode("utf-8")
    folder = tmp_path / "saved" / "page_files"
    folder.mkdir(parents=True)
    for name in ("photo.png", "style.css", "app.js"):
        (folder / name).write_bytes(files["/" + name][1])
        html = html.replace(url.rsplit("/", 1)[0] + "/" + name, "./page_files/" + name)
    (folder.parent / "page.html").write_text(f"<!-- saved from url=({len(url):04d}){url} -->\n{html}")
    images = tmp_path / "saved" / "images"  # (a folder of files beside no page of its name: still of no kind)
    images.mkdir()
    shutil.copy(folder / "photo.png", images)
    proc, stats, logged = _clean(folder.parent, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert LEADS["utf8"] in (tmp_path / "out" / "page.html.txt").read_text()
    assert stats["skip_reasons"] == {"page_resource": 3, "unknown_file_type": 1}
    details = {Path(entry["source"]).name: entry["detail"] for entry in logged if entry["reason"] == "page_resource"}
    assert details == dict.fromkeys(("app.js", "photo.png", "style.css"), "a file of the page page.html, saved "
                                    "beside it in page_files/ with its images, styles, scripts")


def test_an_mhtml_without_a_page_is_named_and_a_renamed_page_is_read(tmp_path, saved):
    """Before: both unknown_file_type."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "photo.mhtml").write_bytes(saved[1]["/photo.png"][1])
    (folder / "renamed.mht").write_text(f"<html><body><p>{LEADS['utf8']}</p>{ARTICLE}</body></html>")
    proc, stats, logged = _clean(folder, tmp_path / "out")
    assert stats["skip_reasons"] == {"not_mhtml": 1} and stats["files"] == 1
    assert [entry["detail"] for entry in logged if entry["reason"] == "not_mhtml"] == [
        "not an MHTML file (no MIME headers): a PNG image"]
    assert LEADS["utf8"] in (tmp_path / "out" / "renamed.mht.txt").read_text()


def test_the_page_is_the_part_the_message_names_as_its_root(saved):
    """RFC 2387's ``start``: the root part's Content-ID, which need not be first (a writer may put the images first);
    a root that is no page is named.  Before: there was no reader of MHTML."""
    from plexity_plugins.io.mhtml_files import NotMhtml, mhtml_page

    pages, files = saved
    image = MIMEBase("image", "png")
    image.set_payload(base64.encodebytes(files["/photo.png"][1]).decode("ascii"))
    image["Content-Transfer-Encoding"] = "base64"
    image["Content-ID"] = "<photo@saved>"
    page = message_from_bytes(pages["cp1252"][0]).get_payload()[0]
    page.replace_header("Content-ID", "<page@saved>")  # (Chrome names it <frame-...@mhtml.blink>)
    message = MIMEMultipart("related", type="text/html", start="<page@saved>")
    message.attach(image)
    message.attach(page)
    found = mhtml_page(message.as_bytes())
    assert found.url == pages["cp1252"][1] and LEADS["cp1252"].encode("cp1252") in found.body
    message.set_param("start", "<photo@saved>")
    with pytest.raises(NotMhtml, match="an MHTML file whose page is image/png, not HTML"):
        mhtml_page(message.as_bytes())


def test_a_header_holding_bytes_beyond_ascii_does_not_stop_the_reading(saved):
    """A Content-ID or Content-Location holding a raw byte beyond ASCII (a hand-edited or damaged file; a fuzzing of
    Chrome's MHTML found it): the email package gives such a header as a `Header`, which crashed the reading
    (AttributeError) before."""
    from plexity_plugins.io.mhtml_files import mhtml_page

    mhtml, url = saved[0]["cp1252"]
    damaged = mhtml.replace(b"Content-ID: <frame-", b"Content-ID: <fr\xe9me-").replace(url.encode(), b"caf\xe9.html")
    page = mhtml_page(damaged)
    assert LEADS["cp1252"].encode("cp1252") in page.body and page.url.startswith("caf")
