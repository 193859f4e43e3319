"""The ``fast`` extractor (resiliparse's main content) in every front end: the function,
``plexity clean``, ``plexity run`` with datatrove, and the Scrapy pipeline."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from scrapy.utils.test import get_crawler

from plexity_plugins.datatrove import FastExtractor
from plexity_plugins.extractors import EXTRACTORS, get_extractor, html_to_text_fast
from plexity_plugins.scrapy import PerplexityFilterPipeline
from article_page import ARTICLE, PAGE
from helpers import executed_lines

REPO = Path(__file__).resolve().parent.parent
PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]

def test_fast_keeps_the_article_one_line_per_block_and_drops_navigation_and_footer():
    text = html_to_text_fast(PAGE)
    lines = text.splitlines()
    assert all(line in lines for line in ARTICLE)
    assert "Home" not in text and "Privacy" not in text and "var x" not in text
    assert get_extractor("fast") is html_to_text_fast and "fast" in EXTRACTORS


def test_fast_decodes_bytes_and_returns_nothing_for_an_empty_page():
    assert html_to_text_fast(PAGE.encode("utf-8")) == html_to_text_fast(PAGE)
    assert html_to_text_fast(b"") == "" and html_to_text_fast("  \n") == ""


def test_plexity_clean_with_the_fast_extractor_trims_like_after_trafilatura(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "page.html").write_text(PAGE)
    proc = subprocess.run([*PLEXITY, "clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"),
                           "--extractor", "fast", "-q"],
                          capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "out" / "page.html.txt").read_text()
    assert all(line in out for line in ARTICLE) and "Privacy" not in out
    assert json.loads((tmp_path / "out" / "plexity-stats.json").read_text())["method"] == "trim"


def test_the_datatrove_step_extracts_like_plexity_clean():
    assert FastExtractor().extract(PAGE) == html_to_text_fast(PAGE)


def test_plexity_run_with_the_fast_extractor_cleans_the_sample_warc(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([*PLEXITY, "run", str(REPO / "examples" / "sample.warc.gz"), "--output-dir", str(out),
                           "--executor", "local", "--extractor", "fast", "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cleaned = {}
    for path in (out / "documents").glob("*.jsonl*"):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            for line in f:
                doc = json.loads(line)
                cleaned[doc["metadata"]["url"]] = doc["text"]
    truth = json.loads((REPO / "examples" / "sample_truth.json").read_text())
    article = [p[-40:] in cleaned[uri] for uri in cleaned for p in truth[uri]["article"]]
    boilerplate = [line in cleaned[uri] for uri in cleaned for line in truth[uri]["boilerplate"]]
    # every article paragraph is kept, most boilerplate lines are gone (measured: 86/86, 73/557;
    # tags + region keeps fewer of both: 69/86, 21/557)
    assert len(cleaned) >= 10
    assert sum(article) / len(article) > 0.95 and sum(boilerplate) / len(boilerplate) < 0.2


def test_the_scrapy_pipeline_takes_the_fast_extractor_and_trims_its_output():
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "fast"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    assert pipeline.extractor == "fast" and pipeline.scorer.method == "trim"
    text = asyncio.run(pipeline.process_item({"html": PAGE}))["text"]
    assert all(line in text for line in ARTICLE) and "Home" not in text


COMMENTS = ["I have been waiting for this library for years and I am glad it finally happens.",
            "Great news for the students in our neighbourhood, they need a quiet place to read.",
            "What about the swimming pool that was promised last year, has anyone heard about it?",
            "The council should publish the full budget so that we can all see where money goes."]


def _with_comments(article_open: str, article_close: str) -> str:
    return ("<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav><main>"
            f"{article_open}<h1>Council approves library budget</h1>"
            + "".join(f"<p>{line}</p>" for line in ARTICLE) + article_close
            + "<section><h2>Reader responses</h2>"
            + "".join(f"<div><b>reader{i}</b><p>{c}</p></div>" for i, c in enumerate(COMMENTS[:2]))
            + "</section></main></body></html>")


def test_fast_keeps_only_the_declared_article_body_when_it_holds_most_of_the_text():
    for page in (_with_comments("<div itemprop='articleBody'>", "</div>"),
                 _with_comments("<article>", "</article>")):
        without = html_to_text_fast(page.replace("itemprop='articleBody'", "").replace("article>", "div>"))
        assert all(c in without for c in COMMENTS[:2])  # undeclared: resiliparse keeps the comments
        text = html_to_text_fast(page)
        assert all(line in text.splitlines() for line in ARTICLE)
        assert not any(c in text for c in COMMENTS[:2])


def test_fast_keeps_every_post_of_a_thread_of_article_elements():
    # the first post alone holds most of the words: still a thread (its posts sit in like parents)
    posts = [" ".join(ARTICLE), *COMMENTS[:2]]
    page = ("<html><body><main><h1>Library budget thread</h1>"
            + "".join(f"<div class='post'><article><p>{p}</p></article></div>" for p in posts)
            + "</main></body></html>")
    text = html_to_text_fast(page)
    assert all(p in text for p in posts)


def test_fast_does_not_count_nested_articles_as_the_declared_article_s_own_text():
    # a block of teasers, each an <article> nested in one outer <article>, beside the story's own <article>
    teasers = "".join(f"<article><p>{c}</p></article>" for c in COMMENTS)
    page = ("<html><body><main><div><article><h1>Council approves library budget</h1>"
            + "".join(f"<p>{line}</p>" for line in ARTICLE) + f"</article><article>{teasers}</article></div>"
            "</main></body></html>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)


def test_fast_keeps_only_a_container_named_as_the_article_content_as_trafilatura_names_them():
    page = _with_comments("<div class='entry-content'>", "</div>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)
    assert not any(c in text for c in COMMENTS[:2])
    # the same name repeated, one per post: a thread, every post kept
    posts = [" ".join(ARTICLE), *COMMENTS[:2]]
    thread = ("<html><body><main>" + "".join(f"<div class='post-content'><p>{p}</p></div>" for p in posts)
              + "</main></body></html>")
    assert all(p in html_to_text_fast(thread) for p in posts)


def test_fast_drops_short_link_blocks_inside_the_declared_article_and_keeps_prose_with_links():
    prose = "The plan was <a href='/plan'>published</a> last week and will be discussed again in March."
    page = _with_comments("<article>", "<p>" + prose + "</p><p><a href='/more'>Read more: the budget explained</a></p>"
                          "</article>")
    text = html_to_text_fast(page)
    assert "The plan was published last week" in text and "Read more" not in text
    # outside a declared article (a listing, a forum), link blocks are left to resiliparse
    assert "Read more" in html_to_text_fast(page.replace("article>", "div>"))


def test_fast_drops_the_header_of_a_declared_article():
    page = _with_comments("<article><header><h2>Library budget</h2><p>By A. Reporter, 3 May</p></header>",
                          "</article>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)
    assert "By A. Reporter" not in text and "Library budget" not in text


def test_fast_drops_the_footer_of_a_declared_article():
    page = _with_comments("<article>", "<footer><p>First published on 3 May 2024</p><p>© 2024 Example News</p>"
                          "</footer></article>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)
    assert "First published" not in text and "Example News" not in text


def test_fast_judges_the_declared_article_alone_when_the_page_s_heuristic_drops_it_where_it_stands():
    # resiliparse starts from the page's one role=main element when there is one: here a sidebar
    # box, so the article is not in the page's main content at all; judged alone, it is kept
    page = ("<html><body><div role='main'><p>Subscribe to our newsletter for the week's news.</p></div>"
            "<article><h1>Council approves library budget</h1>"
            + "".join(f"<p>{line}</p>" for line in ARTICLE) + "</article></body></html>")
    from resiliparse.extract.html2text import extract_plain_text

    assert ARTICLE[0] not in extract_plain_text(page, main_content=True)
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)


def test_fast_is_not_confused_by_a_page_that_holds_its_own_marker_text():
    from plexity_plugins.extractors.fast import _END, _START

    page = _with_comments("<article>", f"<p>{_START} and {_END} are words here.</p></article>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)
    assert not any(c in text for c in COMMENTS[:2])


def test_fast_falls_back_on_trafilatura_s_second_stage_names_without_article_or_first_stage_name():
    page = _with_comments("<div class='story-body'>", "</div>")
    text = html_to_text_fast(page)
    assert all(line in text.splitlines() for line in ARTICLE)
    assert not any(c in text for c in COMMENTS[:2])


def test_a_declared_article_with_forty_thousand_link_blocks_is_extracted_with_linear_work():
    """Nested link blocks are found in one pass (document order), not each against every other:
    that took 80 s on a page of 40,000, past the 30 s extraction limit (the page would have been
    lost as a timeout).  Ten times the link blocks, ten times the work."""
    prose = "<p>The council approved the budget for the new library on Tuesday evening, the mayor said.</p>"

    def page(links: int) -> str:
        return ("<html><body><article><h1>Budget</h1>" + prose * 20 + "<div>"
                + "<p><a href='/x'>link</a></p>" * links + "</div></article></body></html>")

    assert "The council approved the budget" in html_to_text_fast(page(40_000))
    assert executed_lines(html_to_text_fast, page(40_000)) < 11 * executed_lines(html_to_text_fast, page(4_000))
