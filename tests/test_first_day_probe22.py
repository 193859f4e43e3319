"""A stranger's first day, probe 22: the dead ends a newcomer met, each now working or one line
that says what is wrong and what to do, with a non-zero exit status."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def run(*args, cwd: Path | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ})


def plexity(*args, cwd: Path | None = None, timeout: float = 300):
    return run("-m", "plexity_plugins.cli", *args, cwd=cwd, timeout=timeout)


def error_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_python_dash_m_plexity_plugins_is_the_plexity_command():
    # (it said "No module named plexity_plugins.__main__; 'plexity_plugins' is a package and cannot be
    # directly executed")
    result = run("-m", "plexity_plugins", "score", "--plain", "The council approved the budget on Tuesday.")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split()[-1]) > 0
    usage = run("-m", "plexity_plugins", "--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: plexity ")


@pytest.mark.parametrize("first, second", [([], ["--logging-dir", "{out}/logs2"]),
                                           (["--logging-dir", "{out}/logs2"], []),
                                           (["--logging-dir", "{tmp}/a"], ["--logging-dir", "{tmp}/b"])],
                         ids=["default-then-other", "other-then-default", "other-then-another"])
def test_a_re_run_into_the_same_output_dir_with_another_logging_dir_stops(tmp_path, first, second):
    # Before, the second run (another extractor, another --logging-dir) found no record in its new
    # logging folder and rewrote DIR/documents with its results; the first command, run again, then
    # "resumed" (0 tasks in this run) and answered learned/trim with the tags/regions documents.
    out = tmp_path / "run"

    def options(extra):
        return [o.format(out=out, tmp=tmp_path) for o in extra]

    assert plexity("run", EXAMPLES, "-o", out, *options(first)).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "documents").iterdir()}
    result = plexity("run", EXAMPLES, "-o", out, "--extractor", "tags", *options(second))
    assert result.returncode == 2 and result.stdout == ""
    logs = Path(options(second)[1]) if second else out / "logs"
    first_logs = Path(options(first)[1]) if first else out / "logs"
    assert error_line(result) == (f"plexity run: error: {out / 'documents'} holds the results of a run with other "
                                  f"settings (the run logged in {first_logs} wrote them; {logs} has no record of "
                                  f"them): give a new --output-dir, or add --overwrite to delete those results and "
                                  f"start over")
    assert {p.name: p.read_bytes() for p in (out / "documents").iterdir()} == before  # nothing touched
    again = plexity("run", EXAMPLES, "-o", out, "--extractor", "tags", "--overwrite", *options(second))
    assert again.returncode == 0, again.stderr


def test_overwrite_with_another_logging_dir_leaves_no_completions_of_the_default_one_to_resume(tmp_path):
    # After the stop above, --overwrite ran the tags run and left DIR/logs' completion markers of the learned
    # run: `plexity run crawl -o DIR` then "resumed" (0 tasks in this run) with the tags documents.
    out = tmp_path / "run"
    assert plexity("run", EXAMPLES, "-o", out).returncode == 0
    other = plexity("run", EXAMPLES, "-o", out, "--extractor", "tags", "--logging-dir", tmp_path / "logs2",
                    "--overwrite")
    assert other.returncode == 0, other.stderr
    assert not (out / "logs" / "completions").exists() and not (out / "logs" / "plexity-settings.json").exists()
    first = plexity("run", EXAMPLES, "-o", out)
    assert first.returncode == 2  # the tags documents are there, and DIR/logs has no record of them
    assert error_line(first).startswith(f"plexity run: error: {out / 'documents'} holds the results of a run with "
                                        f"other settings (the run logged in {tmp_path / 'logs2'} wrote them; "
                                        f"{out / 'logs'} has no record of them): ")


def test_a_datatrove_pipeline_re_run_with_another_logging_dir_into_the_same_output_stops(tmp_path):
    # The same with plexity's executors and datatrove's (check_run_settings): the README script run again
    # with another step and another logging_dir rewrote out/documents, and the first script, run again,
    # resumed with those documents.
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import (HtmlTagsExtractor, LearnedExtractor, LocalTaskExecutor,
                                           PerplexitySentenceFilter, SettingsChanged, WarcHtmlReader,
                                           check_run_settings)

    def steps(extractor):
        return [WarcHtmlReader(str(EXAMPLES), glob_pattern="sample.warc.gz"), extractor,
                PerplexitySentenceFilter(), JsonlWriter(str(tmp_path / "out" / "documents"))]

    LocalTaskExecutor(steps(LearnedExtractor()), tasks=1, logging_dir=str(tmp_path / "out" / "logs")).run()
    says = re.escape(f"{tmp_path / 'out' / 'documents'} holds the results of a run with other settings (no record "
                     f"of them in {tmp_path / 'logs2'}: a run with another logging folder wrote them)")
    with pytest.raises(SettingsChanged, match=says):
        LocalTaskExecutor(steps(HtmlTagsExtractor()), tasks=1, logging_dir=str(tmp_path / "logs2")).run()
    with pytest.raises(SettingsChanged, match=says):
        check_run_settings(LocalPipelineExecutor(steps(HtmlTagsExtractor()), tasks=1,
                                                 logging_dir=str(tmp_path / "logs2")))
    assert not (tmp_path / "logs2" / "plexity-settings.json").exists()


def test_a_first_run_into_an_output_dir_whose_documents_folder_is_empty_runs(tmp_path):
    (tmp_path / "run" / "documents").mkdir(parents=True)
    assert plexity("run", EXAMPLES, "-o", tmp_path / "run").returncode == 0


# -- datatrove steps built with arguments of the wrong kind -------------------------------------

def test_warc_html_reader_takes_a_size_as_its_cap_and_refuses_what_is_no_cap_when_it_is_built():
    # Before, max_payload_bytes="50MB" (as --max-document-bytes is written), -1 or read_timeout="30"
    # were taken, and every record was skipped: 0 documents, the task a success.
    from plexity_plugins.datatrove import WarcHtmlReader

    reader = WarcHtmlReader(str(EXAMPLES), glob_pattern="sample.warc.gz", max_payload_bytes="50MB")
    assert len(list(reader(None, 0, 1))) == 12
    assert reader.settings()["max_payload_bytes"] == 50_000_000
    for wrong, says in [({"max_payload_bytes": -1}, "max_payload_bytes must be a number of bytes, 1 or more, or a "
                                                    "size such as '50MB', got -1"),
                        ({"max_payload_bytes": "lots"}, "max_payload_bytes: not a size: 'lots'"),
                        ({"read_timeout": "30"}, "read_timeout must be 0 (no limit) or more seconds, got '30'"),
                        ({"read_timeout": -1}, "read_timeout must be 0 (no limit) or more seconds, got -1")]:
        with pytest.raises(ValueError, match=re.escape(says)):
            WarcHtmlReader(str(EXAMPLES), **wrong)


def test_a_filter_given_a_folder_for_its_exclusion_writer_says_so_when_it_is_built():
    # Before, PerplexitySentenceFilter(exclusion_writer="out/excluded") was taken and the task stopped at
    # the first dropped document: TypeError: 'str' object does not support the context manager protocol.
    from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter

    for step in (PerplexitySentenceFilter, PerplexityDocumentFilter):
        with pytest.raises(ValueError, match=re.escape("exclusion_writer is 'out/excluded': a datatrove writer that "
                                                       "receives the dropped documents, e.g. "
                                                       "JsonlWriter(\"out/excluded\"), or None")):
            step(exclusion_writer="out/excluded")


@pytest.mark.parametrize("wrong, says", [
    ({"min_chars": "50"}, "min_chars must be a whole number of characters, 0 or more, got '50'"),
    ({"min_chars": -1}, "min_chars must be a whole number of characters, 0 or more, got -1"),
    ({"min_kept_fraction": "0.5"}, "min_kept_fraction must be a number between 0 and 1, got '0.5'"),
    ({"min_kept_fraction": 2}, "min_kept_fraction must be a number between 0 and 1, got 2"),
])
def test_the_document_policy_names_the_argument_of_the_wrong_kind(wrong, says):
    # Before, min_chars="50" was "TypeError: '>=' not supported between instances of 'str' and 'int'"
    from plexity_plugins.datatrove import PerplexitySentenceFilter

    with pytest.raises(ValueError, match=re.escape(says)):
        PerplexitySentenceFilter(**wrong)


@pytest.mark.parametrize("wrong, says", [
    ({"timeout": "30"}, "the extraction time limit must be 0 (none) or more seconds, got '30'"),
    ({"timeout": -3}, "the extraction time limit must be 0 (none) or more seconds, got -3"),
    ({"memory_limit": "lots"}, "the extraction memory ceiling: not a size: 'lots'"),
    ({"memory_limit": -1}, "the extraction memory ceiling must be 0 (none) or more bytes, or a size such as "
                           "'512MiB', got -1"),
])
def test_an_extractor_step_refuses_limits_of_the_wrong_kind_when_it_is_built(wrong, says):
    # Before, timeout="30" was "Unknown format code 'g' for object of type 'str'", timeout=-3 was taken
    # and failed every task when it ran, and memory_limit="lots" was blamed on PLEXITY_EXTRACT_MEMORY.
    from plexity_plugins.datatrove import LearnedExtractor

    with pytest.raises(ValueError, match=re.escape(says)):
        LearnedExtractor(**wrong)


def test_a_bad_plexity_extract_memory_is_named_as_the_environment_variable(monkeypatch):
    from plexity_plugins.datatrove import LearnedExtractor

    monkeypatch.setenv("PLEXITY_EXTRACT_MEMORY", "lots")
    with pytest.raises(ValueError, match=re.escape("the extraction memory ceiling (PLEXITY_EXTRACT_MEMORY): not a "
                                                   "size: 'lots'")):
        LearnedExtractor()


# -- a typo in an option ------------------------------------------------------------------------

@pytest.mark.parametrize("args, command, says", [
    (["clean", EXAMPLES / "sample.warc.gz", "-o", "{tmp}/out", "--extracter", "tags"], "plexity clean",
     "unrecognized arguments: --extracter tags (did you mean --extractor? plexity clean --help lists the options)"),
    (["score", "--plian", "The cat sat."], "plexity score",
     "unrecognized arguments: --plian (did you mean --plain? plexity score --help lists the options)"),
    (["models", "import", "n", "--kenlm", "x.bin", "--tokenizer", "ccnet", "--sp-modle", "x"],
     "plexity models import", "unrecognized arguments: --sp-modle x (did you mean --sp-model? plexity models "
                              "import --help lists the options)"),
    (["--bogus", "models"], "plexity", "unrecognized arguments: --bogus (plexity --help lists the options)"),
], ids=["clean", "score", "models-import", "top-level"])
def test_an_unknown_option_is_said_in_its_commands_words_with_the_option_meant(tmp_path, args, command, says):
    # Before: the top-level usage ("usage: plexity [-h] [--version] [-v] COMMAND ...") and "plexity: error:
    # unrecognized arguments: --extracter tags", neither the command's options nor the one meant.
    result = plexity(*[str(a).format(tmp=tmp_path) for a in args])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"usage: {command} ")
    assert error_line(result) == f"{command}: error: {says}"
    assert not (tmp_path / "out").exists()


# -- Scrapy settings ----------------------------------------------------------------------------

def test_scrapy_with_a_misspelt_plexity_setting_says_so_first_in_one_line_and_exits_1():
    # Before, Scrapy ignored PLEXITY_EXTRACTR (nothing reads it) and the crawl ran with the default extractor.
    result = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "site", "-a", "start_url=http://127.0.0.1:9/",
                             "-s", "PLEXITY_EXTRACTR=tags"], cwd=EXAMPLES / "scrapy_project", capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " CRITICAL: " in line or " ERROR: " in line]
    assert errors[0].endswith("[plexity_plugins.scrapy] CRITICAL: plexity: the crawl cannot start: 'PLEXITY_EXTRACTR' "
                              "is no setting of plexity's: did you mean PLEXITY_EXTRACTOR? (the settings: "
                              "docs/scrapy.md)")


def test_every_documented_scrapy_setting_is_one_the_pipeline_knows():
    from plexity_plugins.scrapy import SETTINGS

    table = (REPO / "docs" / "scrapy.md").read_text().split("| setting | default | meaning |")[1].split("\n\n")[0]
    assert set(re.findall(r"`(PLEXITY_[A-Z_]+)`", table.replace("`, `", "` `"))) == set(SETTINGS)


# -- plexity report -----------------------------------------------------------------------------

def test_a_report_without_a_histogram_leaves_no_earlier_reports_png_beside_it(tmp_path):
    # Before, `plexity report cleaned` then `plexity report run` (no histogram) left the first report's
    # plexity-report.png beside the second's plexity-report.html, said to have written no PNG.
    cleaned, out = tmp_path / "cleaned", tmp_path / "run"
    assert plexity("clean", EXAMPLES / "sample.warc.gz", "-o", cleaned, "--quiet").returncode == 0
    assert plexity("run", EXAMPLES, "-o", out).returncode == 0
    first = plexity("report", cleaned, cwd=tmp_path)
    assert first.returncode == 0 and (tmp_path / "plexity-report.png").is_file()
    second = plexity("report", out, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert not (tmp_path / "plexity-report.png").exists()
    assert error_line(second) == ("plexity report: these stats have no perplexity histogram: no PNG written (the "
                                  "earlier plexity-report.png, another report's, was removed)")


# -- plexity train ------------------------------------------------------------------------------

def test_plexity_train_names_only_the_option_missing(tmp_path):
    # Before, `plexity train --corpus text --name news news.txt` said "--corpus and --order are needed",
    # --corpus given.
    (tmp_path / "news.txt").write_text("The council approved the budget on Tuesday.\n")
    result = plexity("train", "--corpus", "text", "--name", "news", tmp_path / "news.txt")
    assert result.returncode == 2
    assert error_line(result) == ("plexity train: error: --order is needed for a model named 'news' (only the "
                                  "paper's names bigrams-bnc, trigrams-bnc, bigrams-cord19, trigrams-cord19 imply "
                                  "--corpus and --order), e.g. plexity train --corpus text --order 3 --name news ...")


# -- a model directory without its metadata -----------------------------------------------------

def test_a_model_directory_without_model_json_is_judged_by_its_kenlm_file(tmp_path):
    # Before: "DIR has a model file but no model.json metadata", and nothing said what to do, nor that
    # the file was no KenLM model at all.
    bare, junk = tmp_path / "bare", tmp_path / "junk"
    bare.mkdir()
    junk.mkdir()
    shutil.copy(REPO / "plexity_plugins" / "data" / "en-default" / "model.bin", bare / "model.bin")
    (junk / "model.bin").write_text("hello\n")
    result = plexity("score", "--model", bare, "The cat sat.")
    assert result.returncode == 2
    assert error_line(result).startswith(f"plexity score: error: {bare / 'model.bin'} is a bare KenLM file: ")
    assert f"`plexity models import NAME --kenlm {bare / 'model.bin'} --tokenizer ccnet" in error_line(result)
    result = plexity("score", "--model", junk, "The cat sat.")
    assert result.returncode == 2
    assert error_line(result).startswith(f"plexity score: error: {junk / 'model.bin'} is not a model: neither a "
                                         f"KenLM binary nor an ARPA file")


def test_an_unquoted_glob_the_shell_expanded_for_plexity_run_is_named_as_such(tmp_path):
    # README: `plexity run 'crawl/*.warc.gz' -o out`; unquoted, the shell hands plexity run every file, and it
    # said only "unrecognized arguments: crawl/b.warc.gz".
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for name in ("a.warc.gz", "b.warc.gz"):
        shutil.copy(EXAMPLES / "sample.warc.gz", crawl / name)
    result = subprocess.run(f"{sys.executable} -m plexity_plugins run crawl/*.warc.gz -o out", shell=True,
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert error_line(result) == ("plexity run: error: unrecognized arguments: crawl/b.warc.gz (more paths than "
                                  "plexity run takes: a glob the shell expanded? quote it, as in 'crawl/*.warc.gz', "
                                  "for plexity run to expand it; plexity run --help lists the options)")
    assert not (tmp_path / "out").exists()
    quoted = subprocess.run(f"{sys.executable} -m plexity_plugins run 'crawl/*.warc.gz' -o out", shell=True,
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert quoted.returncode == 0, quoted.stderr


# -- the datatrove examples ---------------------------------------------------------------------

@pytest.mark.parametrize("example, extra", [("datatrove_local.py", []), ("datatrove_slurm.py", ["--partition", "p"])])
def test_a_datatrove_example_given_a_folder_that_is_not_there_says_so_in_one_line(tmp_path, example, extra):
    # Before (datatrove_local.py): the pipeline ran, its task failed, and two tracebacks ended with
    # "RuntimeError: No files found on .../crawl!", exit 1, a logs folder left in the output.
    result = run(EXAMPLES / example, tmp_path / "crawl", tmp_path / "out", *extra)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert error_line(result) == (f"{example}: error: {tmp_path / 'crawl'} is not a folder: give the folder of "
                                  f"your .warc / .warc.gz files")
    assert not (tmp_path / "out").exists()


# -- a model of the wrong kind ------------------------------------------------------------------

def test_a_model_of_the_wrong_kind_is_named_as_the_model():
    # Before: "TypeError: expected str, bytes or os.PathLike object, not int", naming no argument.
    from plexity_plugins import PerplexityScorer
    from plexity_plugins.errors import ModelError

    with pytest.raises(ModelError, match=re.escape("model is 5: a model name (`plexity models` lists them) or a "
                                                   "path")):
        PerplexityScorer(5)


def test_scrapy_with_a_plexity_model_of_the_wrong_kind_names_the_setting():
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    with pytest.raises(PlexitySettingError, match=re.escape("PLEXITY_MODEL is 5: a model name or path, or a "
                                                            "language -> model map")):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_MODEL": 5}))


def test_plexity_model_dir_that_is_a_file_is_named_as_the_knob(tmp_path):
    # Before: `plexity models import` said "[Errno 20] Not a directory: '.../models.txt/mine'" and
    # `plexity models` listed "model directory: .../models.txt" as if it were one.
    from plexity_plugins.runtime.paths import user_cache_dir

    knob = tmp_path / "models.txt"
    knob.write_text("not a folder\n")
    env = {**os.environ, "PLEXITY_MODEL_DIR": str(knob)}
    for args in (["models"], ["models", "import", "mine", "--kenlm", EXAMPLES / "sample.warc.gz", "--tokenizer",
                              "plexity-tok-1", "--language", "en"]):
        result = subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True,
                                text=True, env=env, timeout=120)
        assert result.returncode == 2
        assert error_line(result).endswith(f"error: PLEXITY_MODEL_DIR is {knob}, which is not a folder: set it to the "
                                           f"folder of your models, or unset it (then {user_cache_dir() / 'models'})")


# -- plexity run: a cluster executor's option without that executor ----------------------------

@pytest.mark.parametrize("options, says", [
    (["--partition", "debug"], "--partition is an option of --executor slurm, and this run's executor is local: "
                               "give --executor slurm, or leave --partition out"),
    (["--ray-address", "auto"], "--ray-address is an option of --executor ray, and this run's executor is local: "
                                "give --executor ray, or leave --ray-address out"),
    (["--cpus-per-task", "2"], "--cpus-per-task is an option of --executor slurm and ray, and this run's executor "
                               "is local: give --executor slurm, or leave --cpus-per-task out"),
    (["--executor", "ray", "--wait"], "--wait is an option of --executor slurm, and this run's executor is ray: "
                                      "give --executor slurm, or leave --wait out"),
], ids=["partition", "ray-address", "cpus", "wait-with-ray"])
def test_a_cluster_executors_option_without_that_executor_is_refused(tmp_path, options, says):
    # Before, `plexity run crawl/ -o out --partition debug` (--executor slurm forgotten) ran the job on this
    # machine, exit 0, and --ray-address, --wait, --cpus-per-task were ignored the same way.
    result = plexity("run", EXAMPLES, "-o", tmp_path / "run", *options)
    assert result.returncode == 2 and result.stdout == ""
    assert error_line(result) == f"plexity run: error: {says}"
    assert not (tmp_path / "run").exists()


def test_plexity_clean_of_an_empty_folder_says_what_it_cleans(tmp_path):
    # Before: "plexity clean: no input files found", no "error:", nor what it looks for.
    (tmp_path / "crawl").mkdir()
    result = plexity("clean", tmp_path / "crawl", "-o", tmp_path / "out")
    assert result.returncode == 2
    assert error_line(result) == (f"plexity clean: error: no file to clean: {tmp_path / 'crawl'} holds none: give "
                                  f".txt, .text, .html, .htm, .warc, .warc.wet or .arc files (or .gz), .xhtml, .xht or "
                                  f".shtml pages, .mhtml or .mht saved pages, .wacz web archives, or folders holding "
                                  f"them")
    assert not (tmp_path / "out").exists()


def test_scrapy_with_a_wrong_pipeline_priority_says_so_first_in_one_line_and_exits_1():
    # Before, the add-on's setting was said only in asyncio's "Task exception was never retrieved" traceback.
    result = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "site", "-a", "start_url=http://127.0.0.1:9/",
                             "-s", "PLEXITY_PIPELINE_PRIORITY=high"], cwd=EXAMPLES / "scrapy_project",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " CRITICAL: " in line or " ERROR: " in line]
    assert errors[0].endswith("[plexity_plugins.scrapy] CRITICAL: plexity: the crawl cannot start: "
                              "PLEXITY_PIPELINE_PRIORITY is 'high': a whole number")


def test_plexity_models_import_of_a_folder_says_it_is_one(tmp_path):
    # Before: "KenLM file DIR does not exist", of a folder that exists.
    result = plexity("models", "import", "mine", "--kenlm", tmp_path, "--tokenizer", "plexity-tok-1",
                     "--output-dir", tmp_path / "models")
    assert result.returncode == 2
    assert error_line(result) == (f"plexity models import: error: {tmp_path} is a folder: --kenlm is the KenLM file "
                                  f"(xx.arpa.bin, model.bin, .arpa)")


# -- the JSON API -------------------------------------------------------------------------------

def test_the_json_api_refuses_a_misspelt_field_naming_the_one_meant():
    # Before, {"text": ..., "treshold": 500} was answered (200) with the model's own threshold, the field ignored.
    from starlette.testclient import TestClient

    from plexity_plugins.web.app import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1")
    answer = client.post("/api/score", json={"text": "The cat sat on the mat.", "treshold": 500})
    assert answer.status_code == 400
    assert answer.json() == {"error": 'unknown field "treshold" (did you mean "threshold"?): the fields are text, '
                                      'format, threshold, model, extractor, method'}
    assert client.post("/api/score", json={"text": "The cat sat on the mat.", "threshold": 500}).status_code == 200


def test_plexity_report_into_a_folder_writes_the_report_in_it(tmp_path):
    # Before: "plexity report: error: [Errno 21] Is a directory: 'reports'".
    cleaned, reports = tmp_path / "cleaned", tmp_path / "reports"
    reports.mkdir()
    assert plexity("clean", EXAMPLES / "sample.warc.gz", "-o", cleaned, "--quiet").returncode == 0
    result = plexity("report", cleaned, "-o", reports)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"report: {reports / 'plexity-report.html'}",
                                          f"histogram: {reports / 'plexity-report.png'}"]
    assert (reports / "plexity-report.html").is_file() and (reports / "plexity-report.png").is_file()


def test_overwrite_clears_the_logging_dir_of_the_run_that_wrote_the_output_dir_too(tmp_path):
    # --overwrite cleared this run's --logging-dir and DIR/logs, not the first run's own --logging-dir: the first
    # command, run again, "resumed" (0 tasks in this run) and answered learned/trim with the tags documents.
    out, first_logs = tmp_path / "run", tmp_path / "logs-a"
    assert plexity("run", EXAMPLES, "-o", out, "--logging-dir", first_logs).returncode == 0
    other = plexity("run", EXAMPLES, "-o", out, "--extractor", "tags", "--logging-dir", tmp_path / "logs-b",
                    "--overwrite")
    assert other.returncode == 0, other.stderr
    assert not (first_logs / "completions").exists() and not (first_logs / "plexity-settings.json").exists()
    first = plexity("run", EXAMPLES, "-o", out, "--logging-dir", first_logs)
    assert first.returncode == 2  # the tags documents are there, and logs-a has no record of them
    assert error_line(first).startswith(f"plexity run: error: {out / 'documents'} holds the results of a run with "
                                        f"other settings (the run logged in {tmp_path / 'logs-b'} wrote them; "
                                        f"{first_logs} has no record of them): ")


def readme_datatrove_script() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## datatrove"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readmes_datatrove_script_run_elsewhere_says_which_folder_it_did_not_find_before_any_task(tmp_path):
    # (every task failed with datatrove's traceback ending "RuntimeError: No files found on .../examples!")
    script = tmp_path / "clean_crawl.py"
    script.write_text(readme_datatrove_script())
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert error_line(result) == (
        f"plexity_plugins.errors.NoInputFiles: WarcHtmlReader has no file to read: {tmp_path / 'examples'} does "
        f"not exist (a relative path is taken from the folder this runs in, {tmp_path}): give the folder of the "
        f"input files, as an absolute path or one relative to where this runs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean_crawl.py"]  # nothing written, no out/logs
    (tmp_path / "examples").mkdir()
    empty = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert error_line(empty).endswith(f"{tmp_path / 'examples'} holds no file matching **/*.warc*: give the folder "
                                      f"of the input files or their glob")
    shutil.copy(EXAMPLES / "sample.warc.gz", tmp_path / "examples")
    ran = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]


def test_check_run_settings_finds_a_datatrove_reader_without_files_before_the_run(tmp_path):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import PerplexitySentenceFilter, check_run_settings
    from plexity_plugins.errors import NoInputFiles

    executor = LocalPipelineExecutor([JsonlReader(str(tmp_path / "nowhere")), PerplexitySentenceFilter(),
                                      JsonlWriter(str(tmp_path / "out"))], tasks=1, logging_dir=str(tmp_path / "logs"))
    with pytest.raises(NoInputFiles, match=f"^JsonlReader has no file to read: {tmp_path / 'nowhere'} does not exist"):
        check_run_settings(executor)


def test_a_model_without_a_threshold_names_the_calibrate_command_that_gives_it_one(tmp_path):
    # (it said `plexity calibrate --write`, which needs the model and clean text besides)
    from conftest import build_tiny_model

    model = build_tiny_model(tmp_path / "models" / "fresh", name="fresh", threshold=None)
    result = plexity("clean", EXAMPLES / "sample.warc.gz", "-o", tmp_path / "out", "--model", model)
    assert result.returncode == 2
    # (a model given by its folder is named by it: `--model fresh` finds no model of that name)
    assert error_line(result).endswith(f"or calibrate it on clean text with `plexity calibrate --model {model} "
                                       "CLEAN_TEXT --write`")


def test_models_import_says_each_warning_once(tmp_path):
    # (each was printed twice: as a log record and as the command's own line)
    from conftest import build_tiny_model

    model = build_tiny_model(tmp_path / "built", name="built")
    result = subprocess.run([sys.executable, "-m", "plexity_plugins", "models", "import", "m", "--kenlm",
                             str(model / "model.bin"), "--tokenizer", "plexity-tok-1", "--language", "",
                             "--output-dir", str(tmp_path / "models")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert said.count("no built-in sentences for language '(none)'") == 1


def test_the_local_example_says_an_empty_input_folder_or_other_settings_in_one_line(tmp_path):
    # (each ended in a traceback: NoInputFiles, SettingsChanged)
    example = EXAMPLES / "datatrove_local.py"
    (tmp_path / "empty").mkdir()
    empty = run(example, tmp_path / "empty", tmp_path / "out-empty", timeout=120)
    assert empty.returncode == 2 and empty.stderr.strip() == (
        f"datatrove_local.py: error: WarcHtmlReader has no file to read: {tmp_path / 'empty'} holds no file matching "
        f"**/*.warc*: give the folder of the input files or their glob")
    assert run(example, EXAMPLES, tmp_path / "out", timeout=300).returncode == 0
    other = run(example, EXAMPLES, tmp_path / "out", "--tasks", "2", timeout=120)
    assert other.returncode == 2 and other.stderr.strip() == (
        f"datatrove_local.py: error: {tmp_path / 'out' / 'logs'} holds the results of a run with other settings "
        f"(tasks: 1 -> 2): run into new output and logging folders, or delete these to start over")


def test_ctrl_c_in_plexity_clean_is_one_line_without_the_extraction_processs_traceback(tmp_path):
    # A terminal's Ctrl-C goes to the whole foreground process group, the extraction child included: it
    # printed its own KeyboardInterrupt traceback above the command's one line.
    import signal
    import time

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for i in range(150):
        shutil.copy(EXAMPLES / "sample.warc.gz", crawl / f"copy{i:03d}.warc.gz")
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-m", "plexity_plugins", "clean", str(crawl), "-o", str(out), "-q"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (as in a terminal)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(out.glob("copy*"))) < 5:
            time.sleep(0.02)
        os.killpg(run.pid, signal.SIGINT)  # the foreground group, as a terminal's Ctrl-C
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130 and "Traceback" not in err, err
    assert err.strip() == ('plexity clean: interrupted: the outputs written so far are whole; plexity-stats.json '
                           'says "completed": false; the same command cleans every file again (plexity run resumes '
                           'where it stopped)')  # (so that a user of a large folder knows before re-running it)
