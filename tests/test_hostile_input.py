"""Every front end over the hostile pages of tests/hostile_pages.py: no crash, no hang, nothing lost.

`plexity clean` (each extractor, the default `learned` first; the pages as .html, .html.gz and as records of one WARC),
`plexity run`, the Scrapy pipeline and ``POST /api/score`` each take every page; each page
ends as an output or as a counted skip with its reason.  (Damaged WARC and gzip files are
tests/test_accounting.py's.)
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from hostile_pages import ARTICLE, pages
from helpers import run_step_stats
from plexity_plugins.cleaning import policy
from plexity_plugins.extractors import declares_article_or_product, html_to_text_learned
from plexity_plugins.extractors.dense import declares_discussion
from plexity_plugins.scrapy import PerplexityFilterPipeline
from plexity_plugins.cli.serve import DEFAULT_MAX_BYTES

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
PAGES = pages()
GZIPPED = {"one-line-10mb", "nul-flood", "deep-100000"}  # also written as .html.gz


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("hostile")
    with open(directory / "hostile.warc.gz", "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for name, body, content_type in PAGES:
            (directory / f"{name}.html").write_bytes(body)
            if name in GZIPPED:
                (directory / f"{name}.html.gz").write_bytes(gzip.compress(body))
            http = StatusAndHeaders("200 OK", [("Content-Type", content_type)] if content_type else [],
                                    protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"http://hostile.example/{name}", "response",
                                                          payload=io.BytesIO(body), http_headers=http))
    return directory


@pytest.mark.parametrize("extractor", ["learned", "tags", "trafilatura", "auto", "none"])
def test_plexity_clean_takes_every_hostile_page_and_accounts_for_each(hostile_dir, tmp_path, extractor):
    out = tmp_path / "out"
    done = subprocess.run([*PLEXITY, "clean", str(hostile_dir), "--output-dir", str(out), "--extractor", extractor,
                           "--write-dropped", "-q", "--extract-timeout", "20"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is True
    n_files = len(PAGES) + len(GZIPPED) + 1
    assert stats["files"] + stats["files_skipped"] == n_files
    # every page, twice (its file and its WARC record), plus the gzipped copies: a document or a skip,
    # or (the binary one's record, declared HTML) copied as not_html
    copied = stats["copied_reasons"].get("not_html", 0)
    assert copied == 1  # (random bytes are never text)
    assert stats["documents"] + stats["documents_skipped"] + copied == 2 * len(PAGES) + len(GZIPPED)
    rows = [json.loads(line) for line in (out / "plexity-dropped.jsonl").read_text().split("\n") if line]
    emptied = [r for r in rows if "perplexity" not in r and r["reason"] in policy.EMPTY_REASONS]
    skips = [r for r in rows if "perplexity" not in r and r["reason"] != "too_short" and r not in emptied]
    assert len(skips) == stats["documents_skipped"] + stats["files_skipped"]
    # (a document written empty is named too, unless its sentences are each listed)
    assert len(emptied) == stats["documents_empty"] - stats["empty_reasons"].get(policy.ALL_SENTENCES_DROPPED, 0)
    # each file: an output, or a skip naming it
    assert (out / "hostile.warc.gz").is_file()
    skipped_sources = {r["source"] for r in skips}
    for path in hostile_dir.glob("*.htm*"):
        assert (out / f"{path.name}.txt").is_file() or str(path) in skipped_sources, path.name
    # the deep page is not silently emptied: the default reads it (its elements past 256 levels
    # deep read as text of the innermost one), the others' parsers stop and the reason names the parser limit
    # (trafilatura's, auto's: its 100,002 tags, past what trafilatura reads, before its depth)
    if extractor == "learned":
        for name in ("deep-100000.html", "deep-100000.html.gz"):
            assert "budget for the new library" in (out / f"{name}.txt").read_text(), name
    elif extractor != "none":
        deep = [r for r in skips if "deep-100000" in r["source"]]
        reason = "the page has more than 100,000 tags" if extractor in ("trafilatura", "auto") else "HTML parser limit"
        assert deep and all(reason in r.get("detail", "") for r in deep)


def test_plexity_run_takes_every_hostile_page_and_accounts_for_each(hostile_dir, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([*PLEXITY, "run", str(hostile_dir / "hostile.warc.gz"), "--output-dir", str(out),
                           "--extractor", "learned"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    reader, extractor, filt = run_step_stats(out, "learned")
    skipped = sum(v for k, v in reader.items() if k.startswith("skipped_"))
    assert reader["records"] == len(PAGES) == reader["documents"] + skipped
    lost = sum(extractor.get(k, 0) for k in ("dropped", "timeout", "memory_limit", "broken_process", "clean_error"))
    assert extractor["total"] == reader["documents"] == extractor["forwarded"] + lost
    assert filt["total"] == extractor["forwarded"] == filt["forwarded"] + filt.get("dropped", 0)


@pytest.mark.parametrize("extractor", ["learned", "tags"])
def test_the_scrapy_pipeline_takes_every_hostile_page_and_counts_each(extractor):
    crawler = get_crawler(settings_dict={"PLEXITY_EXTRACTOR": extractor, "PLEXITY_THREADS": 1,
                                         "PLEXITY_EXTRACT_TIMEOUT": 20})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    kept = dropped = 0
    try:
        for name, body, _ in PAGES:
            try:
                asyncio.run(pipeline.process_item({"url": f"http://hostile.example/{name}", "html": body}))
                kept += 1
            except DropItem:
                dropped += 1
    finally:
        pipeline.close_spider()
    stats = {k.removeprefix("plexity/"): v for k, v in crawler.stats.get_stats().items() if k.startswith("plexity/")}
    assert stats["items_seen"] == len(PAGES) == kept + dropped
    assert stats.get("items_cleaned", 0) + stats.get("items_passthrough", 0) == kept
    assert stats.get("items_dropped", 0) == dropped
    if extractor == "tags":  # (lexbor's parser stops at the deep page; the learned reader reads it)
        assert stats["items_dropped/extraction_failed"] >= 1  # the page nested beyond the parser's limit


@pytest.mark.parametrize("extractor", ["learned", "tags"])
def test_the_web_api_answers_every_hostile_page_and_never_with_a_500(extractor):
    from web_server import post, start_server, stop_server

    process, url = start_server(["--extract-timeout", "20"])
    try:
        statuses = {}
        for name, body, _ in PAGES:
            request = json.dumps({"text": body.decode("utf-8", "replace"), "format": "html", "extractor": extractor})
            try:
                statuses[name] = post(url, request)[0]
            except urllib.error.URLError as exc:  # a body over --max-bytes: answered 413 and closed
                assert len(request.encode()) > DEFAULT_MAX_BYTES, (name, exc)  # while we were still sending
                statuses[name] = 413
        assert set(statuses.values()) <= {200, 413, 422}, statuses  # (a page it cannot read: 422, not 400)
        assert statuses["one-line-10mb"] == 413 and statuses["empty"] == 200
        assert post(url, {"text": "The council approved the budget.", "format": "text"})[0] == 200  # still up
    finally:
        stop_server(process)


def test_a_run_of_spaces_after_a_json_ld_type_is_read_in_linear_time():
    # ``"@type":`` and then 40,000 spaces: the pattern of a declared item had two runs of spaces
    # side by side (``\s*\[?\s*``), which its failed match split every way: 6 s here, minutes at
    # 300,000, in every reader that asks what the page declares (learned, auto, dense)
    html = ('<html><head><script type="application/ld+json">{"@type":' + " " * 40_000 + '1, "about": "QAPage"}'
            "</script></head><body>" + ARTICLE + "</body></html>")
    for read in (declares_article_or_product, declares_discussion, html_to_text_learned):
        started = time.process_time()  # (CPU time: beside two busy processes a 0.04 s read took 0.7 s of wall time)
        read(html)
        assert time.process_time() - started < 1, read.__name__
    assert declares_article_or_product(html.replace(":" + " " * 40_000 + "1", ": \n [ \"NewsArticle\"]"))


@pytest.mark.parametrize("body", ["<h1>" + "Word " * 400_000, "<p>" + ". " * 1_000_000],
                         ids=["words-in-a-heading", "sentence-ends"])
def test_the_learned_reader_s_reference_reads_a_long_block_in_memory_of_its_size(body):
    # the Python reference (the fallback where the extension is not built) listed every match of a
    # block to count them (len(findall)), every word to compare it with the title, and every piece
    # re.sub kept: 60-75 MB for these 2 MB pages, 780 MB (past the ceiling) at 20 MB
    import tracemalloc

    from plexity_plugins.extractors.learned import features, segment

    html = "<html><head><title>Word</title></head><body>" + body + "</body></html>"
    tracemalloc.start()
    try:
        page = segment.segment(html)
        features.block_features(page)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(html), f"{peak / 1e6:.0f} MB for a {len(html) / 1e6:.1f} MB page"
