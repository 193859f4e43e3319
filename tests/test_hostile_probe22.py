"""Hostile-input probe 22: kinds of bad input the earlier probes did not try, each through the front
ends it reaches.

Charset labels that name one of Python's codecs but no charset (``charset=base64``, ``zlib``,
``rot13``, ``hex``: bytes-to-bytes codecs; ``idna``, ``punycode``, ``undefined``: they raise
whatever the error handler; ``unicode_escape``), in the HTTP header or the page's ``<meta>``:
w3lib takes any name Python's codec registry knows, and decoding raised.  One such page failed a
`plexity run` task (LookupError; the good records of its file with it, on every re-run), escaped the
Scrapy pipeline uncounted (items_seen 2, cleaned 1, dropped 0), was a 500 from ``/api/decode`` and
an ``extraction_failed`` skip in `plexity clean`.  A browser ignores a label it does not know: so
does decoding now, and the page is read as UTF-8 (or by the header's charset, when only the page's
label is bogus).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.request
import warnings

import pytest

from plexity_plugins.extractors import decode_html, decode_html_counted
from warc_corpus import ARTICLE, page, record_bytes

NOT_CHARSETS = ["base64", "zlib", "rot13", "hex", "bz2", "quopri", "uu", "idna", "punycode", "undefined",
                "unicode_escape", "raw_unicode_escape"]
BODY = page(ARTICLE, "Caf\u00e9 cr\u00e8me.")


@pytest.mark.parametrize("label", NOT_CHARSETS)
def test_a_label_of_a_codec_that_is_no_charset_is_no_declaration(label):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (unicode_escape warns of each backslash it cannot read)
        assert decode_html(BODY.encode(), f"text/html; charset={label}") == (BODY, "utf-8")
        declared = f"<meta charset='{label}'>" + BODY
        assert decode_html(declared.encode(), "text/html") == (declared, "utf-8")
        # only the page's label is bogus: the header's charset is taken
        assert decode_html(declared.encode("cp1252"), "text/html; charset=windows-1252") == (declared, "cp1252")
        assert decode_html_counted(declared.encode()) == (declared, 0)


def _bogus_warc(path) -> list[str]:
    """Two good records around a record of each bogus label (header, and meta); their URIs."""
    records = [record_bytes("http://t/good-0", page(ARTICLE, "Zero.").encode())]
    uris = ["http://t/good-0"]
    for label in ("base64", "idna", "undefined"):
        uris += [f"http://t/header-{label}", f"http://t/meta-{label}"]
        records.append(record_bytes(uris[-2], page(ARTICLE).encode(), content_type=f"text/html; charset={label}"))
        records.append(record_bytes(uris[-1], (f"<meta charset='{label}'>" + page(ARTICLE)).encode(),
                                    content_type="text/html"))
    records.append(record_bytes("http://t/good-1", page(ARTICLE, "One.").encode()))
    path.write_bytes(b"".join(gzip.compress(r) for r in records))
    return uris + ["http://t/good-1"]


def test_plexity_runs_reader_reads_every_record_of_a_file_with_bogus_labels(tmp_path):
    from plexity_plugins.datatrove import WarcHtmlReader

    (tmp_path / "in").mkdir()
    uris = _bogus_warc(tmp_path / "in" / "bogus.warc.gz")
    documents = list(WarcHtmlReader(str(tmp_path / "in")).run())  # (before: LookupError, the task failed)
    assert [d.metadata["url"] for d in documents] == uris
    assert all(ARTICLE in d.text for d in documents)


def test_the_scrapy_pipeline_cleans_a_page_with_a_bogus_label():
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_EXTRACTOR": "tags"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        item = asyncio.run(pipeline.process_item({"url": "u", "html": ("<meta charset='base64'>" + BODY).encode()}))
    finally:
        pipeline.close_spider()
    assert "The council approved the budget" in item["text"]
    assert crawler.stats.get_value("plexity/items_cleaned") == crawler.stats.get_value("plexity/items_seen") == 1


def test_the_web_demo_decodes_a_file_with_a_bogus_label():
    from web_server import start_server, stop_server

    process, url = start_server([])
    try:
        request = urllib.request.Request(url + "/api/decode", data=("<meta charset='rot13'>" + BODY).encode(),
                                         method="POST", headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:  # (before: 500, LookupError)
            data = json.loads(response.read())
    finally:
        stop_server(process)
    assert data == {"text": "<meta charset='rot13'>" + BODY, "charset": "utf-8"}
