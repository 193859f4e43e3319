"""The quick start's job: cleaning examples/sample.warc.gz, checked against its known content."""

import json
import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import EXAMPLES

TRUTH = json.loads((EXAMPLES / "sample_truth.json").read_text())


def records(path):
    with open(path, "rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                 r.http_headers.get_header("Content-Type") if r.http_headers else None,
                 r.content_stream().read()) for r in ArchiveIterator(f)]


@pytest.fixture(scope="module", params=["tags", "trafilatura"])
def cleaned(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"sample-{request.param}")
    subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(EXAMPLES / "sample.warc.gz"),
                    "--output-dir", str(out), "--extractor", request.param, "-q"], check=True)
    texts = {uri: body.decode() for kind, uri, ctype, body in records(out / "sample.warc.gz")
             if kind == "response" and ctype.startswith("text/plain")}
    return request.param, out, texts


def test_every_page_comes_back_as_cleaned_text(cleaned):
    _, _, texts = cleaned
    assert set(texts) == set(TRUTH)


def test_article_paragraphs_are_kept(cleaned):
    _, _, texts = cleaned
    paragraphs = [(uri, p) for uri, t in TRUTH.items() for p in t["article"]]
    kept = [p for uri, p in paragraphs if p in texts[uri]]
    assert len(kept) >= 0.95 * len(paragraphs)


def test_menus_banners_share_bars_and_footers_are_dropped(cleaned):
    extractor, _, texts = cleaned
    lines = [(uri, b) for uri, t in TRUTH.items() for b in t["boilerplate"]]
    survivors = [b for uri, b in lines if b in texts[uri].split("\n")]
    # The tag remover hands the filter every menu item, banner and footer line; the filter
    # must remove nearly all of them (trafilatura removes most of them itself).
    assert len(survivors) <= 0.10 * len(lines), survivors
    for uri, t in TRUTH.items():
        for junk in ("Accept all", "Share on Facebook", "Privacy Policy"):
            assert not any(line.startswith(junk) for line in texts[uri].split("\n")), (extractor, uri, junk)


def test_other_records_are_copied_unchanged(cleaned):
    _, out, _ = cleaned
    before = [r for r in records(EXAMPLES / "sample.warc.gz") if not (r[2] or "").startswith("text/html")]
    after = [r for r in records(out / "sample.warc.gz") if not (r[2] or "").startswith("text/plain")]
    assert before == after
    assert any(ctype == "image/png" for _, _, ctype, _ in after)
