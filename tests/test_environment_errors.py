"""A broken installation is not damaged input: every front end stops, saying what to fix.

The breakage is real, not mocked: a ``trafilatura`` package that cannot be imported (as
when lxml >= 5.2 is installed without ``lxml_html_clean``) is put first on PYTHONPATH, or
``sys.modules`` makes an import fail.  Before, `plexity clean` counted every HTML record as
``corrupt_warc`` and exited 0 with 2 of 27 records written; datatrove's extractor sandbox
counted each document as ``broken_process``; the Scrapy pipeline dropped each item as
``extraction_failed``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler

from plexity_plugins.scrapy import PerplexityFilterPipeline

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
BROKEN_TRAFILATURA = ('raise ImportError("lxml.html.clean module is now a separate project lxml_html_clean", '
                      'name="lxml_html_clean")\n')


@pytest.fixture
def broken_env(tmp_path) -> dict:
    """An environment whose `import trafilatura` fails as with a missing lxml_html_clean."""
    package = tmp_path / "site" / "trafilatura"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(BROKEN_TRAFILATURA)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(REPO)])}


def test_plexity_clean_stops_with_a_message_and_claims_nothing(tmp_path, broken_env):
    out = tmp_path / "out"
    proc = subprocess.run([*PLEXITY, "clean", str(SAMPLE), "--output-dir", str(out), "-q", "--extractor", "auto"],
                          capture_output=True, text=True, env=broken_env, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert "lxml_html_clean" in proc.stderr and "install" in proc.stderr and "Traceback" not in proc.stderr
    assert not (out / "sample.warc.gz").exists()  # no half-cleaned WARC left behind
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is False and not stats["skip_reasons"]


def test_plexity_run_stops_the_task_and_marks_nothing_complete(tmp_path, broken_env):
    out = tmp_path / "out"
    proc = subprocess.run([*PLEXITY, "run", str(SAMPLE), "--output-dir", str(out), "--executor", "local",
                           "--extractor", "trafilatura"], capture_output=True, text=True, env=broken_env,
                          timeout=300)
    assert proc.returncode != 0
    assert "lxml_html_clean" in proc.stderr and "did not complete" in proc.stderr
    completions = out / "logs" / "completions"
    assert not completions.exists() or not any(completions.iterdir())
    assert not list((out / "documents").glob("*")) if (out / "documents").exists() else True


def test_the_datatrove_reader_lets_an_installation_error_through(tmp_path, monkeypatch):
    from plexity_plugins.datatrove import WarcHtmlReader, readers

    def out_of_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(readers, "decode_html", out_of_memory)
    reader = WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name)
    with pytest.raises(MemoryError):
        list(reader())
    assert reader.stats["corrupt_files"].total == 0


def _pipeline(**settings) -> PerplexityFilterPipeline:
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, **settings})
    return PerplexityFilterPipeline.from_crawler(crawler)


def test_the_scrapy_pipeline_refuses_to_start_without_its_extractor(monkeypatch, broken_env):
    # The extractor runs in a child process (its time limit): the child's environment is broken.
    monkeypatch.setenv("PYTHONPATH", broken_env["PYTHONPATH"])
    pipeline = _pipeline(PLEXITY_EXTRACTOR="trafilatura")
    with pytest.raises(ImportError, match="lxml_html_clean"):
        pipeline.open_spider()
    pipeline.close_spider()


def test_the_scrapy_pipeline_raises_instead_of_dropping_items(monkeypatch):
    pipeline = _pipeline(PLEXITY_EXTRACTOR="tags")
    pipeline.open_spider()

    def broken(html):
        raise ModuleNotFoundError("No module named 'lxml.etree'", name="lxml.etree")

    monkeypatch.setattr(pipeline, "extract", broken)
    with pytest.raises(ModuleNotFoundError):  # propagates: not a DropItem
        asyncio.run(pipeline.process_item({"url": "http://x", "html": "<p>The council met.</p>"}))
    stats = pipeline.stats.get_stats()
    assert "plexity/items_dropped" not in stats
    assert "lxml.etree" in stats["plexity/environment_error"]


def test_a_scrapy_crawl_with_a_broken_extractor_stops_at_its_start(tmp_path, broken_env):
    project = REPO / "examples" / "scrapy_project"
    sys.path.insert(0, str(project))
    from demo_site import build_site, serve

    with serve(build_site(20_000)) as base:
        proc = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={base}",
                               "-O", str(tmp_path / "items.jsonl"), "-s", "PLEXITY_EXTRACTOR=trafilatura"],
                              cwd=project, capture_output=True, text=True, env=broken_env, timeout=300)
    assert proc.returncode != 0 and "lxml_html_clean" in proc.stderr
    assert not (tmp_path / "items.jsonl").exists() or not (tmp_path / "items.jsonl").read_text()
