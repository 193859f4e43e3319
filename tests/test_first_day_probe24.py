"""A stranger's first day, probe 24: the dead ends a newcomer met, each now working or one line
that says what is wrong and what to do, with a non-zero exit status."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
NEWS = ("The council approved the budget for the new library on Tuesday.\n"
        "The library opens in the spring and stays open late on weekdays.\n") * 40


def run(*args, cwd: Path | None = None, env: dict | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})})


def plexity(*args, cwd: Path | None = None, env: dict | None = None, timeout: float = 300):
    return run("-m", "plexity_plugins.cli", *args, cwd=cwd, env=env, timeout=timeout)


def error_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "news.txt"
    path.write_text(NEWS)
    return path


def train(tmp_path, corpus, *options, env: dict | None = None):
    return plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet", *options, corpus,
                   env={"PLEXITY_MODEL_DIR": str(tmp_path / "models"), **(env or {})})


# -- plexity train --memory ---------------------------------------------------------------------

def test_train_takes_a_memory_size_as_people_write_it_and_gives_lmplz_its_own_form(tmp_path, corpus):
    # Before, `--memory 64MB` (or 4g, 0.5G) reached lmplz as it was, which refused it with a C++ exception
    # ("Failed to parse 64MB into a memory size") after the whole corpus had been read.
    result = train(tmp_path, corpus, "--memory", "64MB")
    assert result.returncode == 0, result.stderr
    build = json.loads((tmp_path / "models" / "news" / "model.json").read_text())["build"]
    assert build["lmplz"].startswith("-o 2 -S 64M")
    result = train(tmp_path, corpus, "--memory", "0.0625g", "--force")  # (lmplz takes whole numbers only)
    assert result.returncode == 0, result.stderr
    build = json.loads((tmp_path / "models" / "news" / "model.json").read_text())["build"]
    assert build["lmplz"].startswith("-o 2 -S 64M")


@pytest.mark.parametrize("memory, why", [
    ("lots", ""),
    ("50", ": lmplz would read a bare number as KiB"),
    ("0%", ": a share is above 0% and at most 100%"),
    ("20M", ": lmplz needs 32M or more (its vocabulary table alone takes 24 MiB)")])
def test_a_memory_lmplz_cannot_take_is_one_line_before_the_corpus_is_read(tmp_path, corpus, memory, why):
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--memory", memory, corpus,
                     env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [f"plexity train: error: --memory {memory!r}: give a share of RAM (20%) or "
                                          f"a size (4G, 500M){why}"]  # (nothing read: no "reading plain text")
    assert not (tmp_path / "models").exists()



@pytest.mark.parametrize("prune, why", [
    (["0", "1", "1", "1"], "one count per order, at most 3 for an order-3 model (e.g. 0 1 1)"),
    (["0", "-1"], "a count is 0 (no pruning) or more"),
    (["0", "2", "1"], "a count is no lower than the one before it (lmplz keeps the shorter n-grams of every "
                      "n-gram it keeps)")])
def test_prune_counts_lmplz_cannot_take_are_one_line_before_the_corpus_is_read(tmp_path, corpus, prune, why):
    # Before: lmplz refused them after the whole corpus was read, with a C++ exception ("You specified pruning
    # thresholds for orders 1 through 4 but the model only has order 3") or "unrecognised option '-1'".
    result = plexity("train", corpus, "--corpus", "text", "--order", "3", "--name", "news", "--prune", *prune,
                     env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity train: error: --prune {' '.join(prune)}: {why}"]
    assert not (tmp_path / "models").exists()


def test_a_corpus_after_the_prune_counts_is_said_to_go_first(tmp_path, corpus):
    # Before: "argument --prune: invalid int value: 'news.txt'": --prune takes every word after it.
    result = plexity("train", "--corpus", "text", "--order", "3", "--name", "news", "--prune", "0", "1", "1", corpus,
                     env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 2
    assert error_line(result) == (f"plexity train: error: argument --prune: {str(corpus)!r} is not a count: --prune "
                                  f"takes the words after it as its counts, so give the corpus first (plexity train "
                                  f"INPUT ... --prune 0 1 1)")

# -- --output-dir that is a file ----------------------------------------------------------------

def test_an_output_dir_that_is_a_file_is_named_as_the_option_by_train_and_models_import(tmp_path, corpus):
    # Before: "plexity train: error: [Errno 17] File exists: 'notes.txt'" and "plexity models import: error:
    # [Errno 20] Not a directory: 'notes.txt/news'", naming no option.
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    said = (f"error: --output-dir {notes} is a file, not a folder: give the folder to install the model in (it "
            f"gets a folder of the model's name)")
    result = train(tmp_path, corpus, "--output-dir", notes)
    assert result.returncode == 2 and result.stderr.splitlines() == [f"plexity train: {said}"]
    kenlm = REPO / "plexity_plugins" / "data" / "en-default" / "model.bin"
    result = plexity("models", "import", "news", "--kenlm", kenlm, "--tokenizer", "plexity-tok-1",
                     "--output-dir", notes)
    assert result.returncode == 2 and result.stderr.splitlines() == [f"plexity models import: {said}"]
    assert notes.read_text() == "my notes\n"


# -- $PLEXITY_KENLM_BIN one level off -----------------------------------------------------------

def test_plexity_kenlm_bin_naming_the_build_folder_or_a_tool_says_where_the_tools_are(tmp_path, corpus):
    # Before: "KenLM's lmplz is not installed (not in .../kenlm, not on PATH ...): install lmplz and
    # build_binary with `bash scripts/setup.sh --kenlm-tools`": a build beside it, and the variable unnamed.
    from plexity_plugins.training.kenlm_tools import find_tool

    build = tmp_path / "kenlm"
    (build / "bin").mkdir(parents=True)
    for tool in ("lmplz", "build_binary"):
        shutil.copy(find_tool(tool), build / "bin" / tool)
    for given in (build, build / "bin" / "lmplz"):
        result = train(tmp_path, corpus, env={"PLEXITY_KENLM_BIN": str(given)})
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"plexity train: error: PLEXITY_KENLM_BIN is {given}, which holds no lmplz: set it to the folder of "
            f"lmplz and build_binary ({build / 'bin'} holds them), or unset it"]
    result = train(tmp_path, corpus, env={"PLEXITY_KENLM_BIN": str(build / "bin")})
    assert result.returncode == 0, result.stderr


# -- plexity calibrate reads text as plexity train does -----------------------------------------

@pytest.fixture(scope="module")
def news_model(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("calibrate")
    (root / "news.txt").write_text(NEWS)
    built = plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet",
                    "--memory", "64M", "--output-dir", root / "models", root / "news.txt")
    assert built.returncode == 0, built.stderr
    return root / "models" / "news"


def test_calibrate_reads_a_folder_and_gzipped_text_as_train_does(tmp_path, news_model):
    # Before: `plexity calibrate --model M heldout/` said "heldout does not exist or is not a file" of a
    # folder that exists, and heldout.txt.gz was "not UTF-8 text (at byte 1)", where train reads both.
    held = tmp_path / "heldout"
    (held / "2026").mkdir(parents=True)
    (held / "2026" / "a.txt").write_text("The library opens in the spring.\nThe council met on Tuesday.\n")
    (held / "b.txt.gz").write_bytes(gzip.compress(b"The budget was approved.\nThe library stays open late.\n"))
    (held / "notes.md").write_text("# not read: not a text corpus file\n")
    result = plexity("calibrate", "--model", news_model, held)
    assert result.returncode == 0, result.stderr
    assert "\n sentences            4\n" in result.stdout
    result = plexity("calibrate", "--model", news_model, held / "b.txt.gz", held / "2026" / "a.txt")
    assert result.returncode == 0, result.stderr
    assert "\n sentences            4\n" in result.stdout
    (tmp_path / "empty").mkdir()
    result = plexity("calibrate", "--model", news_model, tmp_path / "empty")
    assert result.returncode == 2
    assert error_line(result) == (f"plexity calibrate: error: empty corpus: no .txt/.txt.gz/.text/.text.gz files "
                                  f"in {tmp_path / 'empty'}")


def test_calibrate_refuses_a_warc_as_clean_text(news_model):
    # Before: "not UTF-8 text (at byte 1)" of the gzipped file; read as gzip, its records' headers and HTML
    # would have been scored as clean sentences.
    result = plexity("calibrate", "--model", news_model, EXAMPLES / "sample.warc.gz")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity calibrate: error: {EXAMPLES / 'sample.warc.gz'}: a WARC file, "
                                          f"not text; give clean text, one paragraph a line"]


# -- a datatrove reader given a file ------------------------------------------------------------

@pytest.mark.parametrize("given, what, suggested", [
    (str(EXAMPLES / "sample.warc.gz"), "a file: a reader reads a folder, give the file as its glob",
     f"WarcHtmlReader({str(EXAMPLES)!r}, glob_pattern='sample.warc.gz')"),
    (str(EXAMPLES / "*.warc.gz"), "a glob: a reader reads a folder, give the glob as its glob_pattern",
     f"WarcHtmlReader({str(EXAMPLES)!r}, glob_pattern='*.warc.gz')")], ids=["file", "glob"])
def test_a_reader_given_a_warc_file_says_how_to_read_that_file_and_that_line_runs(tmp_path, given, what, suggested):
    # Before: "WarcHtmlReader has no file to read: .../sample.warc.gz does not exist", of a file that exists
    # (and the same of crawl/*.warc.gz).
    script = tmp_path / "clean_one.py"
    script.write_text(textwrap.dedent("""\
        import sys
        from datatrove.pipeline.writers import JsonlWriter
        from plexity_plugins.datatrove import LocalTaskExecutor, WarcHtmlReader

        if __name__ == "__main__":
            reader = eval(sys.argv[1])  # (the reader as the user writes it)
            LocalTaskExecutor(pipeline=[reader, JsonlWriter("out/documents")], tasks=1, logging_dir="out/logs").run()
        """))
    result = run(script, f"WarcHtmlReader({given!r})", cwd=tmp_path)
    assert result.returncode == 1 and not (tmp_path / "out").exists()
    assert error_line(result) == (f"plexity_plugins.errors.NoInputFiles: WarcHtmlReader has no file to read: "
                                  f"{given} is {what}: {suggested}")
    result = run(script, suggested, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list((tmp_path / "out" / "documents").iterdir())) == 1


# -- Scrapy: PLEXITY_DROPPED_FILE ---------------------------------------------------------------

PAGE = """<html><body><nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article><h1>Council approves budget</h1>
<p>The city council approved the budget on Tuesday after a long debate about school funding.</p>
<p>The plan adds two libraries and repairs forty miles of road over the next three years.</p></article>
<footer>Share on Facebook | Share on X | Email</footer></body></html>"""


def scrapy_project(root: Path, settings: str) -> Path:
    """A project as a newcomer writes one: the add-on in settings.py, a spider yielding url and html."""
    (root / "proj" / "spiders").mkdir(parents=True)
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "spiders" / "__init__.py").write_text("")
    (root / "page.html").write_text(PAGE)
    (root / "proj" / "settings.py").write_text(textwrap.dedent(f"""\
        BOT_NAME = "proj"
        SPIDER_MODULES = ["proj.spiders"]
        ADDONS = {{"plexity_plugins.scrapy.PlexityAddon": 0}}
        PLEXITY_EXTRACTOR = "tags"
        LOG_LEVEL = "INFO"
        """) + settings)
    (root / "proj" / "spiders" / "pages.py").write_text(textwrap.dedent(f"""\
        import scrapy

        class Pages(scrapy.Spider):
            name = "pages"
            start_urls = [{(root / 'page.html').as_uri()!r}]

            def parse(self, response):
                yield {{"url": response.url, "html": response.text}}
        """))
    return root


def test_scrapy_dropped_file_under_home_lands_there_and_the_log_says_where(tmp_path):
    # Before: PLEXITY_DROPPED_FILE = "~/crawl/dropped.jsonl" made a folder named "~" in the folder the
    # crawl ran in, and nothing in the crawl's log said where the file went.
    home = tmp_path / "home"
    project = scrapy_project(tmp_path / "project", 'PLEXITY_DROPPED_FILE = "~/crawl/dropped.jsonl"\n')
    result = run("-m", "scrapy", "crawl", "pages", "-O", "items.jsonl", cwd=project,
                 env={"HOME": str(home), "PYTHONPATH": os.pathsep.join([str(REPO), str(project)])})
    assert result.returncode == 0, result.stderr[-3000:]
    written = home / "crawl" / "dropped.jsonl"
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert any(row.get("text") == "Home News" for row in rows)
    assert not (project / "~").exists()
    assert f"INFO: plexity: dropped sentences and items written to {written}\n" in result.stderr


# -- plexity serve --host -----------------------------------------------------------------------

@pytest.mark.parametrize("host, why", [("192.0.2.1", "Cannot assign requested address"),
                                       ("999.1.1.1", "Name or service not known")],
                         ids=["another-machines-address", "no-address"])
def test_serve_on_a_host_that_is_not_this_machine_says_which_hosts_to_give(host, why):
    # Before: "cannot listen on 192.0.2.1 port 8000: Cannot assign requested address: give another --port",
    # sending the user to change what was right.
    result = plexity("serve", "--host", host, "--port", "0", timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"plexity serve: error: cannot listen on {host} port 0: {why}: --host is an "
                                          f"address of this machine: 127.0.0.1 (this machine only, the default) or "
                                          f"0.0.0.0 (every interface)"]


# -- an output path through a file --------------------------------------------------------------

@pytest.mark.parametrize("command", [["clean", "{page}", "-o", "notes.txt/cleaned"],
                                     ["report", "{cleaned}", "-o", "notes.txt/report.html"],
                                     ["report", "{cleaned}", "-o", "notes.txt/reports/report.html"]],
                         ids=["clean", "report", "report-deeper"])
def test_an_output_path_through_a_file_names_the_file_in_the_way(tmp_path, command):
    # Before: "[Errno 20] Not a directory: 'notes.txt/cleaned'" and, of the report,
    # "[Errno 17] File exists: 'notes.txt'": a file that is there, not why that stops the command.
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "page.html").write_text(PAGE)
    cleaned = plexity("clean", "page.html", "-o", "cleaned", "--quiet", cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stderr
    args = [word.format(page="page.html", cleaned="cleaned") for word in command]
    result = plexity(*args, cwd=tmp_path)
    assert result.returncode == 2
    output = Path(args[-1])
    folder = output if command[0] == "clean" else output.parent
    where = "" if folder == Path("notes.txt") else f"{folder}: "
    assert result.stderr.splitlines() == [f"plexity {command[0]}: error: {where}notes.txt is a file, where a folder "
                                          f"is needed: give another path, or move the file"]
    assert (tmp_path / "notes.txt").read_text() == "my notes\n"


# -- plexity clean into its input folder --------------------------------------------------------

def test_plexity_clean_into_its_own_input_folder_is_refused_before_anything_is_written(tmp_path):
    # Before: `plexity clean pages -o pages` wrote pages/page.html.txt beside the page; run again, it cleaned
    # that output too (page.html.txt.txt), and again (page.html.txt.txt.txt), each run counting more files.
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "page.html").write_text(PAGE)
    for output in ("pages", "./pages/", str(pages)):
        result = plexity("clean", "pages", "-o", output, cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [f"plexity clean: error: --output-dir {output} is the input folder pages: "
                                              f"a re-run would clean this run's outputs too (a.txt.txt, then "
                                              f"a.txt.txt.txt): choose another --output-dir"]
        assert [p.name for p in pages.iterdir()] == ["page.html"]
    result = plexity("clean", "pages", "-o", "cleaned", "--quiet", cwd=tmp_path)  # (the way out it names)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cleaned" / "page.html.txt").read_text().startswith("The city council approved")


# -- an extraction memory ceiling below what extraction holds at rest ---------------------------

CEILING = ("less than an extraction process holds at rest: give 128 MiB or more (a size such as '512MiB'; a bare "
           "number is bytes), or 0 for none")


def test_a_memory_ceiling_below_an_extraction_process_at_rest_is_refused_in_every_front_end(tmp_path):
    # Before: `--extract-memory 1024` (meant as MiB: 1 KiB) let the learned reader's quick pages through and
    # stopped every trafilatura page as memory_limit ("needed more than 1 KiB"), restarting its process each
    # time: which pages were kept depended on how long each took.
    (tmp_path / "page.html").write_text(PAGE)
    result = plexity("clean", "page.html", "-o", "cleaned", "--extract-memory", "1024", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity clean: error: the extraction memory ceiling is 1 KiB, {CEILING}"]
    result = plexity("clean", "page.html", "-o", "cleaned", cwd=tmp_path, env={"PLEXITY_EXTRACT_MEMORY": "100MB"})
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity clean: error: the extraction memory ceiling "
                                          f"(PLEXITY_EXTRACT_MEMORY) is 100 MB, {CEILING}"]
    assert not (tmp_path / "cleaned").exists()
    result = plexity("clean", "page.html", "-o", "cleaned", "--extract-memory", "128MiB", cwd=tmp_path)
    assert result.returncode == 0, result.stderr

    from plexity_plugins.datatrove import LearnedExtractor

    with pytest.raises(ValueError, match=re.escape(f"the extraction memory ceiling is 100 MB, {CEILING}")):
        LearnedExtractor(memory_limit="100MB")


def test_scrapy_with_a_memory_ceiling_below_an_extraction_process_at_rest_names_the_setting(tmp_path):
    project = scrapy_project(tmp_path / "project", "PLEXITY_EXTRACT_MEMORY = 1024\n")
    result = run("-m", "scrapy", "crawl", "pages", "-O", "items.jsonl", cwd=project,
                 env={"PYTHONPATH": os.pathsep.join([str(REPO), str(project)])})
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " CRITICAL: " in line or " ERROR: " in line]
    assert errors[0].endswith(f"[plexity_plugins.scrapy] CRITICAL: plexity: the crawl cannot start: "
                              f"PLEXITY_EXTRACT_MEMORY is 1024: the extraction memory ceiling is 1 KiB, {CEILING}")


# -- --model naming a model's model.json ---------------------------------------------------------

def test_a_models_model_json_given_as_the_model_is_that_model(news_model):
    # Before: "news/model.json is not a model: neither a KenLM binary nor an ARPA file": the file that
    # describes the model, refused as a model.
    by_folder = plexity("score", "--plain", "--model", news_model, "The council approved the budget.")
    by_metadata = plexity("score", "--plain", "--model", news_model / "model.json", "The council approved the budget.")
    assert by_metadata.returncode == 0, by_metadata.stderr
    assert by_metadata.stdout == by_folder.stdout


# -- plexity report of a run with its logs elsewhere --------------------------------------------

def test_plexity_report_of_a_run_whose_logs_went_elsewhere_reads_them(tmp_path):
    # Before: `plexity run crawl -o out --logging-dir logs` then `plexity report out` said "no plexity-stats.json
    # (from `plexity clean`) or logs/stats.json (from `plexity run`) in out", though out names its logging folder.
    ran = plexity("run", EXAMPLES, "-o", "out", "--logging-dir", "run-logs", "--extractor", "tags", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    by_output = plexity("report", "out", "-o", "by-output.html", cwd=tmp_path)
    assert by_output.returncode == 0, by_output.stderr
    by_logs = plexity("report", "run-logs", "-o", "by-logs.html", cwd=tmp_path)
    assert by_logs.returncode == 0, by_logs.stderr

    def body(name: str) -> str:  # (less the line that names where it was read from)
        return "\n".join(line for line in (tmp_path / name).read_text().splitlines() if "stats.json" not in line)

    assert body("by-output.html") == body("by-logs.html")
    assert "method regions" in (tmp_path / "by-output.html").read_text()


# -- plexity serve of a model without a threshold -----------------------------------------------

def test_serve_with_a_model_without_a_threshold_says_so_when_it_starts(tmp_path):
    # Before: the server started as if all was well, and the page and every request without "threshold"
    # answered "model 'imported' has no default threshold in its metadata"; plexity clean and run refuse it.
    from web_server import post, server_log, start_server, stop_server

    kenlm = REPO / "plexity_plugins" / "data" / "en-default" / "model.bin"
    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    imported = plexity("models", "import", "imported", "--kenlm", kenlm, "--tokenizer", "plexity-tok-1", env=env)
    assert imported.returncode == 0, imported.stderr
    process, url = start_server(["--model", "imported"], env=env, command=[sys.executable, "-m", "plexity_plugins"])
    try:
        status, answer, _ = post(url, {"text": "The council approved the budget on Tuesday.", "threshold": 500})
        assert status == 200 and answer["threshold"] == 500
        status, answer, _ = post(url, {"text": "The council approved the budget on Tuesday."})
        assert status != 200 and "has no default threshold" in answer["error"]
    finally:
        stop_server(process)
    said = server_log(process).splitlines()
    assert said[0] == ("plexity serve: warning: model 'imported' has no default threshold: every request without "
                       "\"threshold\", the page's first included, gets an error; `plexity calibrate --model imported "
                       "CLEAN_TEXT --write` gives it one")


# -- two writers of a datatrove pipeline writing the same files ---------------------------------

def test_a_pipeline_whose_exclusion_writer_writes_the_kept_documents_files_stops_before_any_task(tmp_path):
    # Before: JsonlWriter("out") as the filter's exclusion writer and as the last step both wrote
    # out/00000.jsonl.gz; the second replaced the first, and the dropped document counted in the stats
    # (dropped_too_short: 1) was nowhere.
    script = tmp_path / "clean_crawl.py"
    script.write_text(textwrap.dedent(f"""\
        import sys
        from datatrove.executor import LocalPipelineExecutor
        from datatrove.pipeline.writers import JsonlWriter
        from plexity_plugins.datatrove import (HtmlTagsExtractor, LocalTaskExecutor, PerplexitySentenceFilter,
                                               WarcHtmlReader, check_run_settings)

        if __name__ == "__main__":
            pipeline = [WarcHtmlReader({str(EXAMPLES)!r}), HtmlTagsExtractor(),
                        PerplexitySentenceFilter(method="regions", threshold=300,
                                                 exclusion_writer=JsonlWriter(sys.argv[2])),
                        JsonlWriter("out")]
            if sys.argv[1] == "plexity":
                LocalTaskExecutor(pipeline=pipeline, tasks=1, logging_dir="logs").run()
            else:  # datatrove's own executor, checked as docs/datatrove.md says
                executor = LocalPipelineExecutor(pipeline=pipeline, tasks=1, logging_dir="logs")
                check_run_settings(executor)
                executor.run()
        """))
    for executor in ("plexity", "datatrove"):
        result = run(script, executor, "out", cwd=tmp_path)
        assert result.returncode == 1 and not (tmp_path / "out").exists()
        assert error_line(result) == (
            f"plexity_plugins.errors.SharedOutputFiles: the exclusion writer of PerplexitySentenceFilter and "
            f"JsonlWriter both write {tmp_path / 'out'}/${{rank}}.jsonl.gz: each task's second file would replace "
            f"its first, documents and all: give each writer its own folder (out/documents, out/excluded)")
    result = run(script, "plexity", "excluded", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    kept = gzip.decompress((tmp_path / "out" / "00000.jsonl.gz").read_bytes()).decode().splitlines()
    excluded = gzip.decompress((tmp_path / "excluded" / "00000.jsonl.gz").read_bytes()).decode().splitlines()
    assert (len(kept), len(excluded)) == (11, 1)


# -- where a model installed with --output-dir is found -----------------------------------------

def test_train_and_import_into_an_output_dir_say_the_model_argument_that_finds_the_model(tmp_path, corpus):
    # Before: `plexity train ... --output-dir mymodels --name news` printed "installed in mymodels/news" and
    # nothing more, and `models import ... --output-dir mymodels` "use it with --model news", which says
    # "unknown model 'news'": only $PLEXITY_MODEL_DIR's models go by their name.
    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    kenlm = REPO / "plexity_plugins" / "data" / "en-default" / "model.bin"
    commands = [["train", corpus, "--corpus", "text", "--order", "2", "--name", "news", "--quiet", "--memory", "64M"],
                ["models", "import", "imported", "--kenlm", kenlm, "--tokenizer", "plexity-tok-1"]]
    for command, name in zip(commands, ("news", "imported")):
        for output, said in (([], name), (["--output-dir", "mymodels"], f"mymodels/{name}")):
            result = plexity(*command, *output, cwd=tmp_path, env=env)
            assert result.returncode == 0, result.stderr
            assert result.stdout.splitlines()[-1] == f"  use it with --model {said}"
            scored = plexity("score", "--plain", "--model", said, "The council met.", cwd=tmp_path, env=env)
            assert scored.returncode == 0, scored.stderr


def test_plexity_report_png_into_a_folder_writes_it_there_named_as_the_report(tmp_path):
    # Before: "plexity report: error: [Errno 21] Is a directory: 'figures'", where -o takes a folder.
    (tmp_path / "page.html").write_text(PAGE)
    assert plexity("clean", "page.html", "-o", "cleaned", "--quiet", cwd=tmp_path).returncode == 0
    (tmp_path / "figures").mkdir()
    result = plexity("report", "cleaned", "-o", "run1.html", "--png", "figures", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["report: run1.html", "histogram: figures/run1.png"]
    assert (tmp_path / "figures" / "run1.png").read_bytes().startswith(b"\x89PNG")


# -- a folder where a file of the model is expected ---------------------------------------------

def test_a_folder_given_as_the_sentencepiece_model_is_called_a_folder(tmp_path, corpus):
    # Before: "SentencePiece model .../lm_sp does not exist", of a folder that is there (CCNet keeps its
    # .sp.model files in one).
    folder = tmp_path / "lm_sp"
    folder.mkdir()
    result = plexity("train", corpus, "--corpus", "text", "--order", "2", "--name", "news", "--tokenizer", "ccnet",
                     "--sp-model", folder, env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity train: error: SentencePiece model {folder} is a folder: give the "
                                          f".sp.model file in it (the model's tokenizer is ccnet, which needs it)"]


def test_models_import_calibrates_on_a_folder_of_held_out_text(tmp_path):
    # Before: "heldout: cannot read: [Errno 21] Is a directory: 'heldout'" (its sanity check read the
    # --calibrate files by itself), where plexity calibrate now reads folders.
    held = tmp_path / "heldout"
    held.mkdir()
    (held / "a.txt").write_text("The library opens in the spring.\nThe council met on Tuesday.\n")
    (held / "b.txt.gz").write_bytes(gzip.compress(b"The budget was approved.\nThe library stays open late.\n"))
    kenlm = REPO / "plexity_plugins" / "data" / "en-default" / "model.bin"
    result = plexity("models", "import", "imported", "--kenlm", kenlm, "--tokenizer", "plexity-tok-1",
                     "--calibrate", held, env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 0, result.stderr
    assert "  sanity check: 0.0% unknown tokens in 4 sentences" in result.stdout.splitlines()
    assert json.loads((tmp_path / "models" / "imported" / "model.json").read_text())["threshold"] > 0


# -- PerplexityDocumentFilter's bounds ----------------------------------------------------------

@pytest.mark.parametrize("bounds", [{"max_perplexity": -5}, {"max_perplexity": "500"},
                                    {"min_perplexity": float("nan")}, {"min_perplexity": True}])
def test_a_document_filter_bound_that_is_no_positive_perplexity_is_refused_when_it_is_built(bounds):
    # Before: max_perplexity=-5 was taken (every document above it: all dropped) and "500" stopped with
    # "Unknown format code 'g' for object of type 'str'", naming no argument.
    from plexity_plugins.datatrove import PerplexityDocumentFilter

    (label, bound), = bounds.items()
    with pytest.raises(ValueError, match=re.escape(f"{label} is {bound!r}: a positive perplexity, or None for no "
                                                   f"bound")):
        PerplexityDocumentFilter(**bounds)


# -- a switch given as a word -------------------------------------------------------------------

@pytest.mark.parametrize("switch", ["language_check", "annotate", "allow_tokenizer_mismatch",
                                    "record_dropped_sentences", "allow_html_pages"])
def test_a_filter_switch_given_as_a_word_is_refused_when_the_step_is_built(switch):
    # Before: language_check="no" (from a config file) was true: the step's name said "language_check no"
    # and pages in other languages were passed through as with the check on.
    from plexity_plugins.datatrove import PerplexitySentenceFilter

    with pytest.raises(ValueError, match=re.escape(f"{switch} must be True or False, got 'no'")):
        PerplexitySentenceFilter(**{switch: "no"})
    PerplexitySentenceFilter(**{switch: False})
