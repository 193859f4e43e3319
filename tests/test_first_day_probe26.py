"""A stranger's first day, probe 26: the dead ends a newcomer met building a datatrove pipeline and
using the command line, each now working or one line that says what is wrong and what to do."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from datatrove.data import Document
from warcio.warcwriter import WARCWriter

from plexity_plugins.datatrove import LearnedExtractor
from plexity_plugins.extractors import html_to_text_tags
from helpers import SAMPLE, iter_warc_html

REPO = Path(__file__).resolve().parent.parent
ENGLISH = ("The city council approved the budget on Tuesday after a long debate about school funding.\n"
           "The plan adds two libraries and repairs forty miles of road over the next three years.\n")


def run(*args, cwd: Path | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})


def write_wet(path: Path) -> dict[str, str]:
    """A WET file as Common Crawl writes one (a conversion record of text/plain, each page's visible
    text); the texts by URI."""
    texts = {uri: html_to_text_tags(body.decode("utf-8", "replace")) for uri, body, _ in iter_warc_html(SAMPLE)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for uri, text in texts.items():
            body = text.encode()
            writer.write_record(writer.create_warc_record(uri, "conversion", payload=io.BytesIO(body), length=len(body),
                                                          warc_headers_dict={"Content-Type": "text/plain"}))
    return texts


# -- an extractor given texts that are no pages ---------------------------------------------------

DATATROVE_WET_PIPELINE = textwrap.dedent("""\
    import sys
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from plexity_plugins.datatrove import LearnedExtractor, PerplexitySentenceFilter

    if __name__ == "__main__":
        steps = [WarcReader("wet")] + ([LearnedExtractor()] if sys.argv[1] == "extractor" else [])
        filter = PerplexitySentenceFilter(method="regions") if sys.argv[1] == "regions" else PerplexitySentenceFilter()
        LocalPipelineExecutor(pipeline=steps + [filter, JsonlWriter(sys.argv[1])], tasks=1,
                              logging_dir=sys.argv[1] + "-logs").run()
    """)


def test_datatroves_warc_reader_of_wet_files_before_an_extractor_stops_the_task_saying_how_to_build_it(tmp_path):
    # Before: datatrove's WarcReader reads a WET file's text as a page, which LearnedExtractor read
    # nothing of: all 12 documents dropped (dropped_no_text_extracted: 12), not a word in the log, the run
    # a success with an empty output.
    write_wet(tmp_path / "wet" / "sample.warc.wet.gz")
    (tmp_path / "clean_wet.py").write_text(DATATROVE_WET_PIPELINE)
    result = run(tmp_path / "clean_wet.py", "extractor", cwd=tmp_path)
    assert result.returncode != 0
    assert ("TextsNotHtml: LearnedExtractor: the first 3 texts of this task hold no HTML markup (the last, document "
            "http://") in result.stderr
    assert ("they are texts already, which an extractor reads nothing of. Leave the extractor out and give "
            "PerplexitySentenceFilter the method for them (method='regions' for a WET record's, a page's every "
            "visible line); or read WET files with WarcHtmlReader") in result.stderr
    assert not list((tmp_path / "extractor-logs").glob("completions/*"))  # (not complete: a re-run runs it)
    # what the message says runs, and keeps the pages' text
    result = run(tmp_path / "clean_wet.py", "regions", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    stats = json.loads((tmp_path / "regions-logs" / "stats.json").read_text())
    assert next(s["stats"] for s in stats if "Perplexity" in s["name"])["forwarded"] == 12


def test_a_text_without_markup_among_pages_is_counted_and_the_pages_are_extracted():
    page = f"<html><body><nav>Home | News</nav><p>{ENGLISH}</p></body></html>"
    docs = [Document(text=page, id=f"page{i}") for i in range(3)] + [Document(text=ENGLISH, id="text")]
    step = LearnedExtractor()
    out = list(step.run(docs))
    # (read as a page of one paragraph, nothing but prose, the text is kept, its lines joined)
    assert [d.id for d in out] == ["page0", "page1", "page2", "text"]
    assert out[-1].text == " ".join(ENGLISH.split("\n")).strip()
    assert step.stats["no_markup"].total == 1
    assert step.stats["dropped_no_text_extracted"].total == 0


def test_text_with_a_stray_angle_bracket_is_not_taken_for_markup_and_a_tag_anywhere_is():
    from plexity_plugins.io.inputs import has_markup

    assert not has_markup("3 < 4 and 5 > 2, x<y\n" * 10)
    assert not has_markup(ENGLISH)
    assert has_markup("a text, then <br> a line break") and has_markup("<!-- a comment -->")
    assert has_markup('<p class="x">a</p>') and has_markup("</div>")


# -- WarcHtmlReader under datatrove's own executor ----------------------------------------------

DATATROVE_EXECUTOR_PIPELINE = textwrap.dedent("""\
    import sys
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter
    from plexity_plugins.datatrove import LearnedExtractor, PerplexitySentenceFilter, WarcHtmlReader

    if __name__ == "__main__":
        LocalPipelineExecutor(pipeline=[eval(sys.argv[1]), LearnedExtractor(), PerplexitySentenceFilter(),
                                        JsonlWriter("out/documents")], tasks=1, logging_dir="out/logs").run()
    """)


@pytest.mark.parametrize("given, says", [
    (str(SAMPLE), f"{SAMPLE} is a file: a reader reads a folder, give the file as its glob: "
                  f"WarcHtmlReader({str(SAMPLE.parent)!r}, glob_pattern='sample.warc.gz')"),
    (str(SAMPLE.parent / "*.warc.gz"), f"{SAMPLE.parent / '*.warc.gz'} is a glob: a reader reads a folder, give the "
                                       f"glob as its glob_pattern: WarcHtmlReader({str(SAMPLE.parent)!r}, "
                                       f"glob_pattern='*.warc.gz')")], ids=["file", "glob"])
def test_warc_html_reader_given_a_file_under_datatroves_own_executor_says_how_to_give_it(tmp_path, given, says):
    # Before: only plexity's executors (and check_run_settings) said so; under datatrove's
    # LocalPipelineExecutor, the task failed with datatrove's "RuntimeError: No files found on .../sample.warc.gz!"
    # of a file that is there.
    (tmp_path / "pipeline.py").write_text(DATATROVE_EXECUTOR_PIPELINE)
    result = run(tmp_path / "pipeline.py", f"WarcHtmlReader({given!r})", cwd=tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == ("plexity_plugins.errors.NoInputFiles: WarcHtmlReader has no "
                                                      f"file to read: {says}")
    suggested = says.rpartition(": ")[2]
    result = run(tmp_path / "pipeline.py", suggested, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list((tmp_path / "out" / "documents").iterdir())) == 1


def test_warc_html_reader_run_alone_on_a_folder_that_is_not_there_names_the_folder_it_looked_in(tmp_path,
                                                                                                monkeypatch):
    from plexity_plugins.datatrove import NoInputFiles, WarcHtmlReader

    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoInputFiles, match=rf"^WarcHtmlReader has no file to read: {tmp_path}/crawl does not exist "
                                           rf"\(a relative path is taken from the folder this runs in, {tmp_path}\)"):
        list(WarcHtmlReader("crawl").run())


# -- plexity clean of a quoted glob ---------------------------------------------------------------

def plexity(*args, cwd: Path | None = None):
    return run("-m", "plexity_plugins.cli", *args, cwd=cwd)


def error_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_plexity_clean_takes_a_quoted_glob_as_plexity_run_does(tmp_path):
    # Before: `plexity clean 'crawl/*.warc.gz' -o out` (quoted, as plexity run's docs ask) said
    # "input crawl/*.warc.gz does not exist".
    (tmp_path / "crawl" / "a").mkdir(parents=True)
    for name in ("a/one.warc.gz", "two.warc.gz"):
        (tmp_path / "crawl" / name).write_bytes(SAMPLE.read_bytes())
    (tmp_path / "crawl" / "notes.md").write_text("# not a crawl file\n")
    result = plexity("clean", "crawl/**/*.warc.gz", "-o", "out", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["one.warc.gz", "plexity-stats.json", "two.warc.gz"]
    assert json.loads((tmp_path / "out" / "plexity-stats.json").read_text())["files"] == 2
    # a glob that matches the output folder too: its files are no inputs (a re-run would clean its own outputs)
    for _ in range(2):
        result = plexity("clean", "crawl/**", "-o", "crawl/cleaned", "--quiet", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert sorted(str(p.relative_to(tmp_path / "crawl" / "cleaned"))  # (as `plexity clean crawl` writes them)
                      for p in (tmp_path / "crawl" / "cleaned").rglob("*")) == [
            "a", "a/one.warc.gz", "plexity-stats.json", "two.warc.gz"]
    result = plexity("clean", "crawl/*.warc.bz2", "-o", "out2", cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (2, (
        "plexity clean: error: input crawl/*.warc.bz2 does not exist, and as a glob it matches no file; crawl holds 4 "
        "file(s) plexity clean reads that the glob leaves out (a/one.warc.gz, cleaned/a/one.warc.gz, "
        "cleaned/two.warc.gz, ...): give the folder itself to read every one, or a glob that matches them"))


# -- a dataset of documents given to the commands --------------------------------------------------

DATASET_SAYS = ("a dataset of documents (JSON lines), not pages or a crawl: clean its text with datatrove, "
                "JsonlDocumentReader(its folder) -> PerplexitySentenceFilter() -> a writer "
                "(docs/datatrove.md#text-datasets)")


def test_a_jsonl_dataset_given_to_plexity_clean_or_run_is_named_with_the_pipeline_that_cleans_it(tmp_path):
    # Before: plexity clean said "not a .txt, .html, .htm, .warc or .warc.wet file (optionally .gz)", plexity run
    # "not a WARC file: a gzip file holding a text file (it starts '{"text": ...')", and plexity run of the
    # documents folder an earlier run wrote "give the folder of your .warc ... files": no word of how a
    # dataset of documents, datatrove's own format, is cleaned.
    (tmp_path / "dataset").mkdir()
    with gzip.open(tmp_path / "dataset" / "part.jsonl.gz", "wt") as f:
        f.write(json.dumps({"id": "1", "text": ENGLISH}) + "\n")
    result = plexity("clean", "dataset/part.jsonl.gz", "-o", "out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        1, f"plexity clean: error: no input could be read: dataset/part.jsonl.gz: {DATASET_SAYS}")
    result = plexity("run", "dataset", "-o", "run-out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        2, f"plexity run: error: no WARC files match **/*.warc* in {tmp_path / 'dataset'}: "
           f"{tmp_path / 'dataset' / 'part.jsonl.gz'}: {DATASET_SAYS}")
    result = plexity("run", "dataset/part.jsonl.gz", "-o", "run-out", cwd=tmp_path)  # (as its folder: probe55)
    assert (result.returncode, error_line(result)) == (
        2, f"plexity run: error: no WARC files match part.jsonl.gz in {tmp_path / 'dataset'}: "
           f"{tmp_path / 'dataset' / 'part.jsonl.gz'}: {DATASET_SAYS}")


# -- plexity report of a folder both commands wrote ------------------------------------------------

def test_plexity_report_of_a_folder_both_commands_wrote_asks_which_run_to_report(tmp_path):
    # Before: `plexity clean ... -o out`, later `plexity run ... -o out` (one folder, as both allow), then
    # `plexity report out` reported the plexity clean, the older run, and said nothing of the other.
    assert plexity("clean", SAMPLE, "-o", "out", "--quiet", cwd=tmp_path).returncode == 0
    assert plexity("run", SAMPLE, "-o", "out", cwd=tmp_path).returncode == 0
    result = plexity("report", "out", cwd=tmp_path)
    assert result.returncode == 2 and not (tmp_path / "plexity-report.html").exists()
    assert re.fullmatch(r"plexity report: error: out holds the stats of a plexity clean \(plexity-stats.json, written "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d\) and of a plexity run \(logs/stats.json, written \d{4}-\d\d-\d\d "
                        r"\d\d:\d\d\): name the one to report, plexity report out/plexity-stats.json or plexity "
                        r"report out/logs/stats.json", error_line(result))
    for named in ("out/plexity-stats.json", "out/logs/stats.json"):
        assert plexity("report", named, cwd=tmp_path).returncode == 0


# -- Scrapy: a text given as the page --------------------------------------------------------------

def test_scrapy_text_without_markup_given_as_html_is_counted_and_said_once_naming_the_setting(caplog):
    # Before: a spider yielding a text/plain response's text (or text it extracted itself) as "html" lost it as
    # no_text_extracted ("0 characters kept"), with no word of PLEXITY_INPUT_FORMAT.
    import asyncio

    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    pipeline = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_THREADS": 0}))
    pipeline.open_spider()
    try:
        # (read as a page of one paragraph, nothing but prose, the learned reader keeps it, its lines
        # joined; notes that are not prose, a list of lines, it finds nothing of)
        for n in range(2):
            item = asyncio.run(pipeline.process_item({"url": f"http://t/notes{n}.txt", "html": ENGLISH}))
            assert item["text"] == " ".join(ENGLISH.split("\n")).strip()
        with pytest.raises(DropItem, match="no_text_extracted"):
            asyncio.run(pipeline.process_item({"url": "http://t/list.txt", "html": "Home\nAbout us\nContact\n"}))
        page = {"url": "http://t/page", "html": f"<html><body><p>{ENGLISH}</p></body></html>"}
        assert asyncio.run(pipeline.process_item(page))["text"]
        assert asyncio.run(pipeline.process_item({"url": "http://t/bytes", "html": page["html"].encode()}))["text"]
        stats = pipeline.stats.get_stats()
        assert stats["plexity/items_no_markup"] == 3 and stats["plexity/items_cleaned"] == 4
        said = [r.getMessage() for r in caplog.records if "no HTML markup" in r.getMessage()]
        assert said == ["plexity: http://t/notes0.txt: 'html' (PLEXITY_INPUT_FIELD) holds no HTML markup, and "
                        "PLEXITY_INPUT_FORMAT is 'html': the extractor finds little or nothing of it; if the spider "
                        "yields text, set PLEXITY_INPUT_FORMAT = 'text' (said once; counted in "
                        "plexity/items_no_markup)"]
        text = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={
            "PLEXITY_THREADS": 0, "PLEXITY_INPUT_FORMAT": "text"}))
        text.open_spider()
        assert asyncio.run(text.process_item({"url": "http://t/notes.txt", "html": ENGLISH}))["text"] == ENGLISH.strip()
        assert "plexity/items_no_markup" not in text.stats.get_stats()
        text.close_spider()
    finally:
        pipeline.close_spider()


# -- Scrapy: a crawl resumed from its JOBDIR with other settings -----------------------------------

def test_scrapy_crawl_resumed_from_its_jobdir_with_other_settings_stops_naming_them(tmp_path, caplog):
    # Before: a crawl paused (Ctrl-C once, JOBDIR=job) and resumed with PLEXITY_EXTRACTOR=tags and
    # PLEXITY_THRESHOLD=500 went on: its feed held 8 items cleaned with trim at 5269.3 and 12 with regions at
    # 500, silently, as plexity run answered other settings with old results before it recorded them.
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    jobdir = str(tmp_path / "job")

    def pipeline(**settings):
        return PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"JOBDIR": jobdir, **settings}))

    pipeline()  # the first crawl records its settings where Scrapy keeps the crawl's state
    recorded = json.loads((tmp_path / "job" / "plexity-settings.json").read_text())
    assert (recorded["extractor"], recorded["method"], recorded["threshold"]) == ("learned", "trim", 5269.3)
    pipeline()  # resumed as it was: it goes on
    with pytest.raises(PlexitySettingError):
        pipeline(PLEXITY_EXTRACTOR="tags", PLEXITY_THRESHOLD=500)
    assert (f"plexity: the crawl cannot start: JOBDIR {jobdir} holds a crawl whose items were cleaned with other "
            f"settings (method: trim -> regions; threshold: 5269.3 -> 500; extractor: learned -> tags): resume it "
            f"with those settings, or give another JOBDIR (or delete {jobdir}) to crawl anew") in caplog.text
    pipeline(JOBDIR=str(tmp_path / "job2"), PLEXITY_EXTRACTOR="tags")  # another JOBDIR: another crawl


def test_responses_a_server_called_html_without_markup_are_counted_never_a_stop():
    # (WarcHtmlReader reads the responses whose Content-Type is HTML: a server's tagless "Moved" or "Not found"
    # page is its quirk, not a pipeline that reads texts)
    docs = [Document(text=f"Moved to /page{i}", id=f"r{i}", metadata={"content_type": "text/html; charset=utf-8"})
            for i in range(4)]
    step = LearnedExtractor()
    assert list(step.run(docs)) == []
    assert step.stats["no_markup"].total == 4
