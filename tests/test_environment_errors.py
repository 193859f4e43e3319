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


def test_plexity_run_stops_before_any_task_and_marks_nothing_complete(tmp_path, broken_env):
    out = tmp_path / "out"
    proc = subprocess.run([*PLEXITY, "run", str(SAMPLE), "--output-dir", str(out), "--executor", "local",
                           "--extractor", "trafilatura"], capture_output=True, text=True, env=broken_env,
                          timeout=300)
    assert proc.returncode == 3  # (its extraction child is started once first: it cannot import trafilatura)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "lxml_html_clean" in lines[0] and "install" in lines[0], proc.stderr
    completions = out / "logs" / "completions"
    assert not completions.exists() or not any(completions.iterdir())
    assert not list((out / "documents").glob("*")) if (out / "documents").exists() else True


def test_the_datatrove_reader_lets_an_installation_error_through(tmp_path, monkeypatch):
    from plexity_plugins.datatrove import WarcHtmlReader, readers

    def out_of_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(readers, "decode_html_replaced", out_of_memory)  # (its decoding of each page)
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


def test_the_datatrove_step_stops_its_task_when_its_child_cannot_import_the_extractor(monkeypatch, broken_env):
    # (its check runs the extractor in its child alone, as each page does: the task's process imports none)
    from datatrove.data import Document

    from plexity_plugins.datatrove import TrafilaturaExtractor
    from plexity_plugins.errors import InstallationError

    monkeypatch.setenv("PYTHONPATH", broken_env["PYTHONPATH"])
    step = TrafilaturaExtractor()
    with pytest.raises(InstallationError, match="lxml_html_clean.*install|install.*lxml_html_clean"):
        list(step.run(iter([Document(text="<p>The council met.</p>", id="0")])))
    assert step.stats["total"].total == 0 and step.stats["broken_process"].total == 0


def test_the_scrapy_pipeline_raises_instead_of_dropping_items():
    pipeline = _pipeline(PLEXITY_EXTRACTOR="tags")
    pipeline.open_spider()

    def broken(html):
        raise ModuleNotFoundError("No module named 'lxml.etree'", name="lxml.etree")

    extract, pipeline.extract = pipeline.extract, broken
    try:
        with pytest.raises(ModuleNotFoundError):  # propagates: not a DropItem
            asyncio.run(pipeline.process_item({"url": "http://x", "html": "<p>The council met.</p>"}))
    finally:
        pipeline.extract = extract
        pipeline.close_spider()  # (its extraction child, started by open_spider: not left to the next test)
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


# -- the extraction child cannot start -----------------------------------------------------------

# `plexity` run by an interpreter whose executable the extraction child cannot run (as for a user
# without access to it: exec fails with EACCES). Before, every page counted as extraction_failed
# and `plexity clean` exited 0 with "completed": true and nothing cleaned.
UNRUNNABLE_CHILD = ("import sys\n"
                    "sys.executable = sys.argv.pop(1)\n"
                    "from plexity_plugins.cli import main\n"
                    "sys.exit(main(sys.argv[1:]))\n")


@pytest.fixture
def unrunnable(tmp_path) -> list[str]:
    """The command prefix of a `plexity` whose extraction children cannot be started."""
    interpreter = tmp_path / "python-without-access"
    interpreter.write_text("")
    interpreter.chmod(0o644)  # (no execute bit: not even root may run it)
    script = tmp_path / "plexity_unrunnable.py"
    script.write_text(UNRUNNABLE_CHILD)
    return [sys.executable, str(script), str(interpreter)]


def _one_error_line(stderr: str, command: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"plexity {command}: error:"), stderr
    assert "could not start" in lines[0] and "Traceback" not in stderr
    return lines[0]


def test_plexity_clean_stops_before_any_page_when_the_extraction_child_cannot_start(tmp_path, unrunnable):
    out = tmp_path / "out"
    done = subprocess.run([*unrunnable, "clean", str(SAMPLE), "-o", str(out), "-q"], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert done.returncode == 3
    _one_error_line(done.stderr, "clean")
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is False and stats["documents"] == 0 and not stats["skip_reasons"]
    assert not (out / "sample.warc.gz").exists()
    # text needs no extraction: the same installation cleans it
    (tmp_path / "a.txt").write_text("The council approved the budget for the new library on Tuesday.")
    text = subprocess.run([*unrunnable, "clean", str(tmp_path / "a.txt"), "-o", str(tmp_path / "text"), "-q"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert text.returncode == 0, text.stderr


def test_plexity_run_stops_before_launching_a_task(tmp_path, unrunnable):
    out = tmp_path / "out"
    done = subprocess.run([*unrunnable, "run", str(SAMPLE), "-o", str(out)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 3, done.stdout + done.stderr
    _one_error_line(done.stderr, "run")
    assert not (out / "logs" / "completions").exists() and not (out / "documents").exists()


def test_plexity_serve_stops_at_start_up(unrunnable):
    from web_server import free_port

    done = subprocess.run([*unrunnable, "serve", "--port", str(free_port())], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 3
    _one_error_line(done.stderr, "serve")


def test_the_scrapy_pipeline_and_the_datatrove_step_raise_instead_of_counting_each_page(tmp_path, monkeypatch):
    from datatrove.data import Document

    from plexity_plugins.datatrove import HtmlTagsExtractor
    from plexity_plugins.errors import InstallationError

    interpreter = tmp_path / "python-without-access"
    interpreter.write_text("")
    monkeypatch.setattr(sys, "executable", str(interpreter))
    pipeline = _pipeline(PLEXITY_EXTRACTOR="tags", PLEXITY_EXTRACT_TIMEOUT=30)
    with pytest.raises(InstallationError, match="could not start"):
        pipeline.open_spider()
    pipeline.close_spider()
    step = HtmlTagsExtractor()
    documents = [Document(text="<p>The council met.</p>", id=str(i)) for i in range(3)]
    with pytest.raises(InstallationError, match="could not start"):
        list(step.run(iter(documents)))
    assert step.stats["clean_error"].total == 0 and step.stats["broken_process"].total == 0
