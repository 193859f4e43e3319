"""The Python API as a corpus builder calls it from a Hugging Face `datasets` map, a pandas `Series.map` or rows
read from Parquet, probed 2026-12-06 (datasets 5.2, pandas 3.1: docs/python-api.md, "In a dataset or a DataFrame").

What a user met: a dataset's or a DataFrame's empty cell (a page that was not fetched) reaches the function as None,
NaN or pandas' NA.  The extractors said `AttributeError: 'NoneType' object has no attribute 'isascii'`, the scorer
`expected str or bytes, got float`, `decode_html` `'NoneType' object is not subscriptable`: nothing named the
missing value.  Now each raises a TypeError that says it is one and how to leave such rows out.  A page's bytes as a
`bytearray` or a `memoryview` (a buffer from a binary column) failed in every extractor, each in words of its own
(`segment_html() takes a str`, `cannot use a string pattern on a bytes-like object`, `'memoryview' object has no
attribute 'isascii'`), and in the extraction child's pipe (`cannot pickle memoryview objects`), though the scorer
took them: now they are a page's bytes to all.

(The scorer and the extractors hashing and pickling as their settings, which `datasets`' cache and `num_proc` need,
were measured right already: the docs say so, with the figures.)
"""

from __future__ import annotations

import numpy as np
import pytest

from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors import EXTRACTORS, decode_html, get_extractor
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

PAGE = ("<html><body><nav>Home | News</nav><article><p>The city council approved the budget on Tuesday after a long "
        "debate about school funding.</p><p>The plan adds two libraries and repairs forty miles of road over the "
        "next three years.</p></article></body></html>")
MISSING = [None, float("nan"), np.nan, np.float32("nan")]  # (what `ds.map`, `Series.map` and numpy hand over)
SAYS_MISSING = r"got (None|nan|np\.float32\(nan\)): a missing value .*filter such rows out first"
HTML_EXTRACTORS = [name for name in EXTRACTORS if name != "none"]


@pytest.mark.parametrize("name", HTML_EXTRACTORS)
def test_an_extractor_says_an_empty_cell_is_a_missing_value(name):
    extract = get_extractor(name)
    for value in MISSING:
        with pytest.raises(TypeError, match=SAYS_MISSING):
            extract(value)
    with pytest.raises(TypeError, match=r"^expected str or bytes \(a page\), got int$"):
        extract(3)


def test_the_scorer_says_an_empty_cell_is_a_missing_value():
    scorer = PerplexityScorer(method="trim")
    for value in MISSING:
        for method in (scorer.clean, scorer.score, scorer.document_perplexity):
            with pytest.raises(TypeError, match=SAYS_MISSING):
                method(value)


def test_decode_html_says_a_missing_body_is_one_and_a_str_needs_no_decoding():
    with pytest.raises(TypeError, match=SAYS_MISSING):
        decode_html(None)
    with pytest.raises(TypeError, match=r"a page that is a str needs no decoding\), got str"):
        decode_html(PAGE)


def test_the_extraction_child_says_so_and_reads_the_next_page():
    extract = TimeLimitedExtractor("learned", timeout=30)
    try:
        text = extract(PAGE)
        with pytest.raises(TypeError, match=SAYS_MISSING):
            extract(None)
        assert extract(PAGE) == text
        assert len(extract._children) == 1  # the same child: a row's missing value is no reason to start another
    finally:
        extract.close()


@pytest.mark.parametrize("name", HTML_EXTRACTORS)
def test_an_extractor_reads_a_pages_bytes_from_any_buffer(name):
    extract = get_extractor(name)
    body = PAGE.encode("utf-8")
    text = extract(body)
    assert "council approved the budget" in text
    assert extract(bytearray(body)) == extract(memoryview(body)) == text


def test_the_extraction_child_takes_a_memoryview_as_a_pages_bytes():
    extract = TimeLimitedExtractor("learned", timeout=30)
    try:
        assert extract(memoryview(PAGE.encode("utf-8"))) == extract(PAGE.encode("utf-8")) != ""
    finally:
        extract.close()
