"""Charsets as browsers read them (WHATWG), the same in every front end.

A UTF-8 page that declares UTF-16 in its own bytes (``<meta charset="utf-16">``, ``<?xml ...
encoding="UTF-16"?>``) used to be decoded as UTF-16: CJK garbage kept as text by auto and fast,
an empty output with tags and trafilatura.  A declaration found by reading the bytes as ASCII
cannot be true of UTF-16, so browsers read such a page as UTF-8; a real UTF-16 page starts with
a byte order mark, which comes first.  Then the HTTP header, then the page's declaration.
"""

from __future__ import annotations

import asyncio
import codecs
import io
import json
import subprocess
import sys
import urllib.request

import pytest

from plexity_plugins.extractors import decode_html, get_extractor


def scrapy_item(html: str | bytes, encoding: str | None = None):
    """(the item, the crawler) of the Scrapy pipeline given one page (`tags`, nothing dropped), and its
    Content-Type in the item's `encoding` field if given."""
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags", "PLEXITY_METHOD": "regions",
                                         "PLEXITY_THRESHOLD": 1e12, "PLEXITY_MIN_CHARS": 0})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        item = {"url": "http://t/cafe", "html": html, **({"encoding": encoding} if encoding else {})}
        return asyncio.run(pipeline.process_item(item)), crawler
    finally:
        pipeline.close_spider()


TEXT = "Grüße aus Köln: the council approved the budget for the new library on Tuesday evening."


def page(head: str = "", prolog: str = "") -> str:
    return f"{prolog}<html><head>{head}<title>News</title></head><body><p>{TEXT}</p></body></html>"


# UTF-8 bytes declaring a wide encoding, each way a page can declare one
DECLARING_WIDE = {
    "meta-charset": page('<meta charset="utf-16">').encode(),
    "meta-http-equiv": page('<meta http-equiv="Content-Type" content="text/html; charset=UTF-16LE">').encode(),
    "xml-declaration": page(prolog='<?xml version="1.0" encoding="UTF-16"?>').encode(),
    "meta-utf-32": page('<meta charset="utf-32">').encode(),
}
UTF16_WITH_BOM = ("\ufeff" + page('<meta charset="utf-16">')).encode("utf-16-le")
# declared Windows-1252 by the header, UTF-8 by the page: the header wins ("ü" is one byte)
HEADER_OVER_META = (page('<meta charset="utf-8">').encode("cp1252"), "text/html; charset=windows-1252")
CASES = {**{name: (body, None) for name, body in DECLARING_WIDE.items()},
         "utf-16-bom": (UTF16_WITH_BOM, None), "header-over-meta": HEADER_OVER_META}


@pytest.mark.parametrize("name", DECLARING_WIDE)
def test_a_wide_declaration_in_the_bytes_means_utf8(name):
    text, encoding = decode_html(DECLARING_WIDE[name])
    assert TEXT in text and encoding == "utf-8"


def test_the_byte_order_mark_comes_first_and_is_not_text():
    assert decode_html(UTF16_WITH_BOM) == (page('<meta charset="utf-16">'), "utf-16-le")
    assert decode_html(("\ufeff" + page()).encode("utf-16-be"), "text/html; charset=iso-8859-1")[0] == page()
    assert decode_html(b"\xef\xbb\xbf" + page().encode(), "text/html; charset=windows-1252") == (page(), "utf-8")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf_16_page_without_bom_or_label_is_read_by_its_nuls_in_every_front_end(codec, tmp_path):
    # A page saved as "Unicode" by a Windows tool and stripped of its BOM, served without a charset: its NULs are
    # valid UTF-8, so it was read as "<\0h\0t\0m\0l\0" and every extractor emptied it (`emptied`, no error).
    # Every other byte NUL is UTF-16 (the rule a text file's bytes already had, `utf16_by_its_nuls`).
    body = page().encode(codec)
    assert decode_html(body) == (page(), codec)
    assert decode_html(body, "text/html") == (page(), codec)
    assert TEXT in get_extractor("tags")(body)
    (tmp_path / "page.html").write_bytes(body)
    subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", tmp_path / "page.html", "-o", tmp_path / "out",
                    "--extractor", "tags", "--threshold", "1e12", "-q"], check=True, capture_output=True)
    assert "Grüße aus Köln" in (tmp_path / "out" / "page.html.txt").read_text(encoding="utf-8")
    assert decode_html(page('<meta charset="utf-8">').encode()) == (page('<meta charset="utf-8">'), "utf-8")


def test_the_header_comes_before_the_pages_declaration():
    text, encoding = decode_html(*HEADER_OVER_META)
    assert TEXT in text and encoding == "cp1252"
    # without a header, the page's own declaration (a narrow one) is followed
    latin = page('<meta charset="iso-8859-1">').encode("cp1252")
    assert TEXT in decode_html(latin)[0]
    assert decode_html(page().encode()) == (page(), "utf-8")  # nothing declared: UTF-8


# WHATWG labels that Python's codecs and w3lib did not know: such pages fell to UTF-8, their text to U+FFFD
WHATWG_ONLY = {"iso-8859-8-i": ("שלום עולם, המועצה אישרה את התקציב", "iso8859-8"),
               "x-cp1251": ("Совет утвердил бюджет новой библиотеки", "cp1251"),
               "koi8-ru": ("Рада затвердила бюджет нової бібліотеки", "koi8-u"),
               "x-gbk": ("议会批准了新图书馆的预算", "gb18030"),
               "windows-949": ("의회는 새 도서관 예산을 승인했다", "cp949"),
               "x-mac-cyrillic": ("Совет утвердил бюджет", "mac-cyrillic"),
               "ISO_8859-1:1987": ("Grüße aus Köln", "cp1252"),
               "unicode": ("Grüße aus Köln", "utf-16-le")}


@pytest.mark.parametrize("label", WHATWG_ONLY)
def test_every_whatwg_label_names_its_encoding_in_the_header_and_in_the_page(label):
    words, codec = WHATWG_ONLY[label]
    body = f"<html><head><title>t</title></head><body><p>{words}</p></body></html>"
    text, encoding = decode_html(body.encode(codec), f"text/html; charset={label}")
    assert words in text and codecs.lookup(encoding).name == codecs.lookup(codec).name
    if codec.startswith("utf-16"):  # (declared in the page itself, a wide encoding means UTF-8)
        return
    declared = body.replace("<head>", f'<head><!-- <meta charset="utf-8"> --><meta charset="{label}">')
    text, encoding = decode_html(declared.encode(codec))
    assert words in text and codecs.lookup(encoding).name == codecs.lookup(codec).name


# Labels that only Python's codecs know: a browser ignores them, so the next rule decides (the page's own
# declaration, else the bytes: UTF-8, or windows-1252 when none of them is UTF-8).  Python's codec decoded them:
# iso-2022-jp-2's, utf-7's (a markup-hiding encoding).
PYTHON_ONLY = {"iso-2022-jp-2": "議会は新しい図書館の予算を承認した".encode("iso2022_jp_2"),
               "utf-7": "Grüße <p>".encode("utf-7"), "utf-32": "Grüße".encode("utf-32-le"), "cp037": b"\xc1\xc2"}


@pytest.mark.parametrize("label", PYTHON_ONLY)
def test_a_label_the_whatwg_does_not_know_is_no_declaration(label):
    from plexity_plugins.io.decoding import decode_html_replaced

    body = PYTHON_ONLY[label]
    assert decode_html_replaced(body, f"text/html; charset={label}") == decode_html_replaced(body)  # (no label)
    assert decode_html_replaced(body)[1] in ("utf-8", "cp1252")  # (the bytes decide: not the label's codec)
    declared = f'<meta charset="{label}">'.encode() + body  # (in the page itself: the same)
    assert decode_html_replaced(declared)[1] == decode_html_replaced(body)[1]
    # the page's own declaration of a WHATWG label comes next
    latin = '<meta charset="iso-8859-1"><p>Grüße</p>'.encode("cp1252")
    assert decode_html_replaced(latin, f"text/html; charset={label}") == (latin.decode("cp1252"), "cp1252", 0)


# Python's names of the standard's encodings (not WHATWG labels), with a text each encodes
PYTHON_NAMES = {"latin-1": "<p>Grüße, ¥ ½</p>", "latin_1": "<p>Grüße</p>", "ISO8859_15": "<p>Grüße, €</p>",
                "cp936": "<p>议会批准了预算</p>", "euc_jp": "<p>議会は予算を承認した</p>"}


@pytest.mark.parametrize("label", PYTHON_NAMES)
def test_a_python_name_of_one_of_the_standards_encodings_declares_that_encoding(label):
    """A server writing ``charset=latin-1`` (Python's name, not a WHATWG label) means ISO-8859-1, whose
    standard decoder is windows-1252's: its text is read, not U+FFFD, in the header and in the page."""
    from plexity_plugins.io.decoding import decode_html_replaced

    text = PYTHON_NAMES[label]
    body = text.encode(label)
    assert decode_html_replaced(body, f"text/html; charset={label}")[::2] == (text, 0)
    assert decode_html_replaced(f'<meta charset="{label}">'.encode() + body)[0].endswith(text)


def test_x_user_defined_is_decoded_by_the_standards_own_decoder():
    """ASCII as it is, 0x80-0xFF to U+F780-U+F7FF (its bytes were read as UTF-8, each high byte a U+FFFD);
    declared in the page itself, it is windows-1252, as the HTML standard's prescan reads it."""
    from plexity_plugins.io.decoding import decode_html_replaced

    body = b"<p>x\x80\xa9\xff</p>"
    assert decode_html_replaced(body, "text/html; charset=x-user-defined") == ("<p>x\uf780\uf7a9\uf7ff</p>",
                                                                              "x-user-defined", 0)
    declared = b'<meta charset="x-user-defined">' + body
    assert decode_html_replaced(declared) == (declared.decode("cp1252", "replace"), "cp1252", 0)


@pytest.mark.parametrize("extractor", ["auto", "trafilatura", "fast", "tags"])
def test_every_extractor_given_bytes_reads_them_alike(extractor):
    extract = get_extractor(extractor)
    for name, (body, content_type) in CASES.items():
        if content_type is None:
            assert TEXT in extract(body), (extractor, name)


# -- every front end ------------------------------------------------------------------------

def _warc(path, with_header: bool = True):
    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    dummy = WARCWriter(io.BytesIO())
    write_warc(path, [response(dummy, f"http://t/{name}", body, content_type or "text/html")
                      for name, (body, content_type) in CASES.items()])


def test_plexity_clean_reads_each_page_right(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    (tmp_path / "in").mkdir()
    for name, (body, content_type) in CASES.items():
        if content_type is None:  # (a file has no header)
            (tmp_path / "in" / f"{name}.html").write_bytes(body)
    _warc(tmp_path / "in" / "pages.warc.gz")
    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                          "-o", str(tmp_path / "out"), "--extractor", "tags", "--threshold", "1e12", "-q"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for name, (_, content_type) in CASES.items():
        if content_type is None:
            assert TEXT in (tmp_path / "out" / f"{name}.html.txt").read_text(), name
    with open(tmp_path / "out" / "pages.warc.gz", "rb") as f:
        texts = {r.rec_headers.get_header("WARC-Target-URI"): r.content_stream().read().decode()
                 for r in ArchiveIterator(f)}
    assert all(TEXT in texts[f"http://t/{name}"] for name in CASES), texts


def test_plexity_runs_reader_reads_each_page_right(tmp_path):
    from plexity_plugins.datatrove import WarcHtmlReader

    (tmp_path / "in").mkdir()
    _warc(tmp_path / "in" / "pages.warc.gz")
    documents = {d.metadata["url"]: d for d in WarcHtmlReader(str(tmp_path / "in")).run()}
    assert {url: d.metadata["charset"] for url, d in documents.items()} == {
        "http://t/meta-charset": "utf-8", "http://t/meta-http-equiv": "utf-8", "http://t/xml-declaration": "utf-8",
        "http://t/meta-utf-32": "utf-8", "http://t/utf-16-bom": "utf-16-le", "http://t/header-over-meta": "cp1252"}
    assert all(TEXT in d.text for d in documents.values())


def test_the_scrapy_pipeline_reads_each_page_right():
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_EXTRACTOR": "tags", "PLEXITY_THRESHOLD": 1e12,
                                         "PLEXITY_MIN_CHARS": 0})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        for name, (body, content_type) in CASES.items():
            if content_type is None:  # (an item's bytes come without a header)
                item = asyncio.run(pipeline.process_item({"url": name, "html": body}))
                assert TEXT in item["text"], name
    finally:
        pipeline.close_spider()


def test_the_web_demo_reads_an_html_files_bytes_the_same_way():
    from web_server import start_server, stop_server

    process, url = start_server([])
    try:
        for name, (body, content_type) in CASES.items():
            if content_type is None:
                request = urllib.request.Request(url + "/api/decode", data=body, method="POST",
                                                 headers={"Content-Type": "application/octet-stream"})
                with urllib.request.urlopen(request, timeout=30) as response:
                    data = json.loads(response.read())
                assert TEXT in data["text"] and not data["text"].startswith("\ufeff"), name
        request = urllib.request.Request(url + "/api/decode", data=b"<p>x</p>", method="POST",
                                         headers={"Content-Type": "text/plain"})
        with pytest.raises(urllib.error.HTTPError) as refused:  # (a cross-site form cannot send it)
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 415
    finally:
        stop_server(process)


# A UTF-8 page with stray windows-1252 bytes ("’", "É", "“") and no charset declared anywhere: read as UTF-8 (its
# "é" is UTF-8's), so each stray byte is replaced by U+FFFD.
UNDECLARED_CP1252 = ("<html><body><p>The café ".encode() + "on the rue de l’Église said the council’s “new plan” "
                     "would bring more visitors to the square in the summer months.</p></body></html>".encode("cp1252"))
UNDECLARED_REPLACED = 5  # ’ É ’ “ ”


def test_the_characters_replaced_decoding_a_page_are_counted_the_same_in_every_front_end(tmp_path):
    """The same undecodable page counts the same replaced_chars in plexity clean (plexity-stats.json),
    plexity run's pipeline (WarcHtmlReader -> extractor -> PerplexitySentenceFilter: the filter's
    replaced_chars counter and the document's plexity_replaced_chars) and the Scrapy pipeline given
    the page's bytes (plexity/replaced_chars, plexity_replaced_chars).  plexity run counted 0: its
    reader decoded the page without counting."""
    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter, WarcHtmlReader

    assert decode_html(UNDECLARED_CP1252, "text/html")[0].count("\ufffd") == UNDECLARED_REPLACED
    (tmp_path / "in").mkdir()
    write_warc(tmp_path / "in" / "page.warc.gz",
               [response(WARCWriter(io.BytesIO()), "http://t/cafe", UNDECLARED_CP1252, "text/html")])
    settings = ["--extractor", "tags", "--method", "regions", "--threshold", "1e12", "--min-chars", "0"]

    # plexity clean
    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                          "-o", str(tmp_path / "clean"), "-q", *settings], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())["replaced_chars"] == UNDECLARED_REPLACED

    # plexity run's steps
    step = PerplexitySentenceFilter(method="regions", threshold=1e12, min_chars=0)
    documents = list(step.run(HtmlTagsExtractor().run(WarcHtmlReader(str(tmp_path / "in")).run())))
    assert [d.metadata["plexity_replaced_chars"] for d in documents] == [UNDECLARED_REPLACED]
    assert step.stats.stats["replaced_chars"].total == UNDECLARED_REPLACED

    # the Scrapy pipeline, given response.body
    item, crawler = scrapy_item(UNDECLARED_CP1252)
    assert item["plexity"]["plexity_replaced_chars"] == UNDECLARED_REPLACED
    assert crawler.stats.get_value("plexity/replaced_chars") == UNDECLARED_REPLACED
    assert item["text"] == documents[0].text  # (and the same text)


# A windows-1252 page: its "é" one byte, none of its bytes UTF-8.
CP1252_PAGE = ("<html><body><p>The café on the rue de l’Église said the council’s “new plan” would bring more "
               "visitors to the square in the summer months.</p></body></html>")


@pytest.mark.parametrize("content_type", ["text/html; charset=x-nonsense", "text/html"])
def test_a_windows_1252_page_with_an_unknown_label_or_none_is_read_as_windows_1252_in_every_front_end(
        tmp_path, content_type):
    """Before: read as UTF-8, its 6 accented letters and quotes U+FFFD, in plexity clean, plexity run's reader and
    the Scrapy pipeline.  An unknown label is no label (the WHATWG's rule); with none, the HTML standard lets the
    reader look at the bytes before its default: none of them is UTF-8, so windows-1252, the default of most
    locales.  (One function decides for every front end: `io.decoding.html_encoding`.)"""
    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter, WarcHtmlReader

    body, text = CP1252_PAGE.encode("cp1252"), CP1252_PAGE.removeprefix("<html><body><p>").removesuffix(
        "</p></body></html>")
    assert decode_html(body, content_type) == (CP1252_PAGE, "cp1252")
    (tmp_path / "in").mkdir()
    write_warc(tmp_path / "in" / "page.warc.gz",
               [response(WARCWriter(io.BytesIO()), "http://t/cafe", body, content_type)])
    settings = ["--extractor", "tags", "--method", "regions", "--threshold", "1e12", "--min-chars", "0"]

    # plexity clean
    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                          "-o", str(tmp_path / "clean"), "-q", *settings], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())["replaced_chars"] == 0
    from warcio.archiveiterator import ArchiveIterator
    with open(tmp_path / "clean" / "page.warc.gz", "rb") as f:
        [cleaned] = [r.content_stream().read().decode() for r in ArchiveIterator(f) if r.rec_type == "response"]
    assert cleaned == text

    # plexity run's reader and steps
    step = PerplexitySentenceFilter(method="regions", threshold=1e12, min_chars=0)
    [document] = list(step.run(HtmlTagsExtractor().run(WarcHtmlReader(str(tmp_path / "in")).run())))
    assert document.metadata["charset"] == "cp1252" and document.text == text
    assert document.metadata["plexity_replaced_chars"] == 0

    # the Scrapy pipeline, given response.body and the Content-Type header
    item, crawler = scrapy_item(body, content_type)
    assert item["text"] == text and item["plexity"]["plexity_replaced_chars"] == 0


@pytest.mark.parametrize("codec, text", [("cp1251", "Городской совет утвердил бюджет новой библиотеки."),
                                         ("cp1253", "Το δημοτικό συμβούλιο ενέκρινε τον προϋπολογισμό."),
                                         ("euc_jp", "議会は新しい図書館の予算を承認した。")])
def test_an_unlabelled_page_of_another_script_in_a_legacy_encoding_is_read_in_the_encoding_uchardet_finds(
        codec, text):
    # (windows-1252 would read its letters as Latin ones, "Ãîðîäñêîé": the bytes' words hold no ASCII letter, unlike
    # a Latin-script page's "café"; UTF-8 read them as U+FFFD, the page's text lost: see test_languages_probe36.py)
    from plexity_plugins.io.decoding import decode_html_replaced

    body = f"<html><body><p>{text}</p></body></html>".encode(codec)
    for content_type in (None, "text/html; charset=x-nonsense"):
        decoded, encoding, replaced = decode_html_replaced(body, content_type)
        assert text in decoded and replaced == 0


def test_an_unlabelled_page_of_a_few_bytes_beyond_ascii_that_are_not_utf_8_stays_utf_8_its_loss_counted():
    # (uchardet names an encoding for any bytes: two are no evidence)
    from plexity_plugins.io.decoding import decode_html_replaced

    body = "<html><body><p>Совет: да.</p></body></html>".encode("cp1251")
    _, encoding, replaced = decode_html_replaced(body)
    assert encoding == "utf-8" and replaced == 7


@pytest.mark.parametrize("codec, text, expected", [
    ("cp1252", "Les élèves sont allés à l'école près de la forêt.", "cp1252"),
    ("cp1251", "Городской совет утвердил бюджет.", "cp1251")])
def test_an_unlabelled_page_s_script_is_judged_where_its_first_byte_beyond_ascii_is(codec, text, expected):
    # (judged on the words of 256 KiB from there, not of the whole page: a 2 MB Latin-1 upload took 0.34 s
    # of the GIL; a page opening with 300 KB of ASCII script is judged on its text, not on the script)
    from plexity_plugins.io.decoding import decode_html_replaced

    script = "<script>" + "var x = 1;\n" * 30_000 + "</script>"
    body = f"<html><head>{script}</head><body><p>{text}</p></body></html>".encode(codec)
    assert decode_html_replaced(body)[1] == expected


# A page given as a str whose JSON "\ud800" escapes left lone surrogates: no encoding holds them, and every
# extractor reads each as U+FFFD (`html_text`), as undecodable bytes are read.
SURROGATE_PAGE = ("<html><body><p>The caf\ud800 on the rue de l\udfffEglise said the council's new plan would bring "
                  "more visitors to the square in the summer months.</p></body></html>")


def test_lone_surrogates_in_a_str_page_are_counted_as_replaced_in_every_front_end():
    """The Scrapy pipeline given a str page and plexity run's steps given a Document whose text holds
    lone surrogates count each one replaced, as they count a page's undecodable bytes
    (`html_text_counted`, the one place both call; before, replaced but counted 0)."""
    from datatrove.data import Document

    from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter

    item, crawler = scrapy_item(SURROGATE_PAGE)
    assert "caf\ufffd on the rue de l\ufffdEglise" in item["text"]
    assert item["plexity"]["plexity_replaced_chars"] == 2 and crawler.stats.get_value("plexity/replaced_chars") == 2

    step = PerplexitySentenceFilter(method="regions", threshold=1e12, min_chars=0)
    pages = [Document(text=SURROGATE_PAGE, id="0"),
             Document(text=SURROGATE_PAGE, id="1", metadata={"replaced_chars": 3})]  # (3 its reader replaced)
    documents = list(step.run(HtmlTagsExtractor().run(pages)))
    assert [d.text for d in documents] == [item["text"]] * 2
    assert [d.metadata["plexity_replaced_chars"] for d in documents] == [2, 2 + 3]  # (with its reader's)
    assert step.stats.stats["replaced_chars"].total == 2 + 5


# The WHATWG's "replacement" encoding: its labels name encodings whose escape sequences can hide markup
# (ISO-2022-KR, ISO-2022-CN, HZ-GB-2312); a browser decodes a page declared in one to one U+FFFD, never its bytes.
REPLACEMENT_LABELS = ["iso-2022-kr", "csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "replacement",
                      "ISO-2022-KR"]
KOREAN = "<html><body><p>의회는 새 도서관 예산을 승인했다</p></body></html>"


@pytest.mark.parametrize("label", REPLACEMENT_LABELS)
def test_a_page_in_a_replacement_encoding_is_one_replacement_character(label):
    from plexity_plugins.io.decoding import decode_html_replaced

    body = KOREAN.encode("iso2022_kr")  # (Python's codec decoded it: the text a browser never shows)
    assert decode_html_replaced(body, f"text/html; charset={label}") == ("\ufffd", "replacement", 1)
    declared = f'<html><head><meta charset="{label}"></head>'.encode() + body
    assert decode_html_replaced(declared) == ("\ufffd", "replacement", 1)
    assert decode_html_replaced(b"", f"text/html; charset={label}") == ("", "replacement", 0)  # (nothing: nothing)
    # a byte order mark comes first, as ever
    assert decode_html_replaced(b"\xef\xbb\xbf" + KOREAN.encode(), f"text/html; charset={label}")[:2] == (KOREAN,
                                                                                                          "utf-8")


def test_plexity_runs_reader_counts_a_replacement_encodings_page_as_one_replaced_character(tmp_path):
    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    from plexity_plugins.datatrove import WarcHtmlReader

    (tmp_path / "in").mkdir()
    record = response(WARCWriter(io.BytesIO()), "http://t/kr", KOREAN.encode("iso2022_kr"),
                      "text/html; charset=iso-2022-kr")
    write_warc(tmp_path / "in" / "kr.warc.gz", [record])
    [document] = WarcHtmlReader(str(tmp_path / "in")).run()
    assert document.text == "\ufffd" and document.metadata["charset"] == "replacement"
    assert document.metadata["replaced_chars"] == 1
