"""Speed work must not change what is kept: the repository's page set cleans exactly as recorded.

tests/golden/pages_clean.json holds, for every page of tests/golden/pages.py (the sample WARC's
pages, pages assembled from its text, other-language pages and edge cases: all owned by this
repository), the text the tags extractor and `PerplexityScorer().clean()` made of it, the
sentence counts and each sentence's perplexity.
When behaviour changes on purpose, regenerate it with `.venv/bin/python bench/golden.py`
and commit it with the change.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _golden_module():
    spec = importlib.util.spec_from_file_location("bench_golden", REPO / "bench" / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


golden = _golden_module()


@pytest.fixture(scope="module")
def actual():
    """The page set cleaned by the current code."""
    return golden.compute()


def test_the_page_set_is_the_recorded_one(actual):
    expected = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    assert len(actual["pages"]) >= 50
    assert sorted(actual["pages"]) == sorted(expected["pages"])


def test_cleaning_the_page_set_gives_the_golden_outputs(actual):
    expected = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    diffs = golden.differences(expected, actual)
    assert not diffs, (
        "cleaning the page set changed (regenerate tests/golden/ with bench/golden.py only if "
        "the change is intended):\n" + "\n".join(diffs))


def test_the_golden_file_covers_english_and_passed_through_pages():
    pages = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))["pages"]
    filtered = [p for p in pages.values() if p["passthrough"] is None]
    assert sum(p["sentences_kept"] for p in filtered) > 0
    assert sum(p["sentences_dropped"] for p in filtered) > 0
    assert any(p["passthrough"] for p in pages.values()), "no page was passed through as another language"


def test_a_changed_output_is_reported_with_the_page_and_the_place(actual):
    key = sorted(k for k, p in actual["pages"].items() if len(p["text"]) > 20 and p["perplexities"])[0]
    changed = json.loads(json.dumps(actual))
    changed["pages"][key]["text"] = changed["pages"][key]["text"][:10] + "\x00" + changed["pages"][key]["text"][11:]
    changed["pages"][key]["perplexities"][0] *= 1.01
    diffs = golden.differences(actual, changed)
    assert any(key in d and "character 10" in d for d in diffs)
    assert any(key in d and "sentence 0 perplexity" in d for d in diffs)
