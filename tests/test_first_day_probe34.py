"""A stranger's first day, probe 34: a researcher reproduces the paper (Fernández-Pichel et al. 2023, pyplexity)
with the Python API and `plexity train`/`calibrate`, compares models of other orders, thresholds and languages,
then scales the step up in a datatrove pipeline beside datatrove's own steps, several tasks and workers, and
reads its stats and logs. Each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build_tiny_model

REPO = Path(__file__).resolve().parent.parent


def plexity(*args, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def set_threshold(model: Path, threshold: float) -> None:
    """What `plexity calibrate --write` does to a model's sentence thresholds (both methods' alike here)."""
    data = json.loads((model / "model.json").read_text())
    data["threshold"] = data["threshold_extracted"] = threshold
    (model / "model.json").write_text(json.dumps(data))


# -- a model folder copied to make a variant ----------------------------------------------------------------

def test_a_model_folder_copied_under_another_name_is_listed_scored_and_served_by_that_name(model_dir):
    """A researcher copies a trained model's folder to calibrate a variant (`cp -r news news-95`, then
    `plexity calibrate --model news-95 ... --percentile 95 --write`). Before, the copy kept the name its
    model.json was written with: `plexity models` listed `news` twice (the name that finds the copy, `news-95`,
    nowhere), `plexity score --model news-95` said "model news", a run's stats and records said `news`, and
    `plexity serve` offered one `news` with the copy's threshold, scored with the original, and refused `news-95`
    as unknown. Now a model that a name finds is named by its folder, the name `--model` takes."""
    from plexity_plugins import PerplexityScorer
    from plexity_plugins.web.app import ScorerCache

    build_tiny_model(model_dir / "news", name="news", threshold=500.0)
    shutil.copytree(model_dir / "news", model_dir / "news-95")
    set_threshold(model_dir / "news-95", 120.0)

    listing = plexity("models").stdout.split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in listing[1:] if not line.startswith(" ")] == ["en-default", "news", "news-95"]
    assert "; model news-95;" in plexity("score", "--model", "news-95", "The cat sat on the mat.").stdout
    variant = PerplexityScorer("news-95")
    assert (variant.model_name, variant.threshold) == ("news-95", 120.0)

    served = ScorerCache()
    assert {name: model["threshold"] for name, model in served.available().items()
            if name.startswith("news")} == {"news": 500.0, "news-95": 120.0}
    assert (served.get("news").threshold, served.get("news-95").threshold) == (500.0, 120.0)


# -- a language -> model map in a datatrove pipeline ---------------------------------------------------------

def test_a_language_maps_pipeline_re_run_after_a_model_was_calibrated_again_stops_naming_its_threshold(
        tmp_path, model_dir):
    """With one model, a re-run after `plexity calibrate --write` changed its default threshold stops, naming it.
    With a language -> model map, each model cleans with its own default, and the run recorded the map's threshold
    as NaN: the same re-run resumed, answering the new threshold with the old results, and datatrove's log named
    the step `[en=news,fr=en-default, sentences, threshold nan]`. Now each language's threshold in effect is
    recorded (as the Scrapy pipeline records it for a crawl's JOBDIR) and shown in the step's name."""
    pytest.importorskip("datatrove")
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter
    from plexity_plugins.errors import SettingsChanged

    build_tiny_model(model_dir / "news", name="news", threshold=500.0)
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "part.jsonl").write_text(json.dumps(
        {"id": "1", "text": "The council approved the budget for the new library.\nShare on Facebook | Email"}) + "\n")

    def executor():
        step = PerplexitySentenceFilter(model={"en": "news", "fr": "en-default"}, method="sentences")
        return step, LocalTaskExecutor(pipeline=[JsonlReader(str(tmp_path / "dataset")), step,
                                                 JsonlWriter(str(tmp_path / "out"))],
                                       tasks=1, logging_dir=str(tmp_path / "logs"))

    step, first = executor()
    assert step.name.endswith("[en=news,fr=en-default, sentences, threshold en=500,fr=1692.4]")
    first.run()
    # (and `plexity report` of the run shows them: its threshold was "?")
    reported = plexity("report", tmp_path / "logs", "-o", tmp_path / "report.html")
    assert reported.returncode == 0, reported.stderr
    assert '<b id="threshold">en 500, fr 1692.4</b>' in (tmp_path / "report.html").read_text()
    set_threshold(model_dir / "news", 120.0)  # (as `plexity calibrate --model news ... --write` does)
    with pytest.raises(SettingsChanged, match=r"\(threshold en: 500 -> 120\)"):
        executor()[1].run()
    from plexity_plugins.cleaning.settings_record import differences

    recorded_before = {"steps": [{"step": "PerplexitySentenceFilter", "threshold": float("nan")}]}  # (NaN: the map's)
    assert differences(recorded_before, {"steps": [{"step": "PerplexitySentenceFilter",
                                                    "threshold": {"en": 500.0, "fr": 1692.4}}]}) == []


# -- reading a pipeline's stats ------------------------------------------------------------------------------

def test_plexity_report_of_a_pipeline_scoring_documents_before_cleaning_sentences_counts_the_sentences(tmp_path):
    """datatrove's merged stats list every step; `plexity report` (and a run's summary) took the first step whose
    name held "Perplexity" for the sentence filter. A pipeline that scores whole documents first (models.md's
    `PerplexityDocumentFilter`, then `PerplexitySentenceFilter`) was reported as "sentences 0, kept 0": the
    document filter's counters, which hold no sentences. Now the sentence filter's are read."""
    pytest.importorskip("datatrove")
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LocalTaskExecutor, PerplexityDocumentFilter, PerplexitySentenceFilter

    (tmp_path / "dataset").mkdir()
    texts = ["The council approved the budget for the new library on Tuesday after a long debate about school funding.",
             "The plan adds two libraries and repairs forty miles of road over the next three years.\nShare | Email"]
    (tmp_path / "dataset" / "part.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "text": text}) + "\n" for i, text in enumerate(texts)))
    LocalTaskExecutor(pipeline=[JsonlReader(str(tmp_path / "dataset")), PerplexityDocumentFilter(label_only=True),
                                PerplexitySentenceFilter(method="sentences"), JsonlWriter(str(tmp_path / "out"))],
                      tasks=1, logging_dir=str(tmp_path / "logs")).run()

    result = plexity("report", tmp_path / "logs", "-o", tmp_path / "report.html")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "report.html").read_text()
    assert '<td>sentences kept</td><td class="n">2</td>' in report
    assert '<td>sentences dropped</td><td class="n">1</td>' in report


# -- thresholds a researcher sweeps ------------------------------------------------------------------------

def test_an_infinite_threshold_keeps_every_sentence_under_every_method():
    """A researcher's baseline, "no filtering", is a threshold of infinity (`threshold=float("inf")`, `plexity clean
    --threshold inf`). Before, the default methods (`region`, `regions`) kept less with it than with any finite
    threshold: every line's weight was infinite, the runs of lines tied, and only the first line was kept ("Share
    on Facebook" dropped as outside_main_content_region, where a threshold of 1e9 kept it). Now every sentence
    lies below it and is kept, under every method."""
    from plexity_plugins import PerplexityScorer

    text = ("The council approved the budget on Tuesday after a long debate about school funding.\n"
            "Share on Facebook | Share on X | Email\nThe plan adds two libraries.")
    for method in ("region", "regions", "trim", "sentences"):
        result = PerplexityScorer(method=method, threshold=float("inf")).clean(text)
        assert (result.text, result.sentences_dropped) == (text, 0), method


def test_plexity_report_of_a_pipeline_with_datatroves_own_filters_says_what_they_dropped_and_what_was_written(
        tmp_path):
    """A researcher puts datatrove's own filters after ours and writes up what was removed from `plexity report`.
    Before, the report said "documents kept 3" (the sentence filter's) for a run that wrote 1 document: what
    datatrove's filters dropped was in datatrove's stats only. Now it shows the documents each other step dropped,
    by step, and the documents the last writer wrote. (And the files and documents datatrove's own reader read,
    the JSON lines of a text dataset: they were "unknown", only `WarcHtmlReader`'s counted.)"""
    pytest.importorskip("datatrove")
    from datatrove.pipeline.filters import LambdaFilter, RegexFilter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter

    (tmp_path / "dataset").mkdir()
    texts = ["The council approved the budget for the new library on Tuesday after a long debate about school funding.",
             "The plan adds two libraries and repairs forty miles of road over the next three years.",
             "Scientists measured the temperature of the river every morning for ten years and published it."]
    (tmp_path / "dataset" / "part.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "text": text}) + "\n" for i, text in enumerate(texts)))
    LocalTaskExecutor(pipeline=[JsonlReader(str(tmp_path / "dataset")), PerplexitySentenceFilter(),
                                RegexFilter("libraries"), LambdaFilter(lambda doc: "river" not in doc.text),
                                JsonlWriter(str(tmp_path / "out"))],
                      tasks=1, logging_dir=str(tmp_path / "logs")).run()

    result = plexity("report", tmp_path / "logs", "-o", tmp_path / "report.html")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "report.html").read_text()
    for row in ('<td>files</td><td class="n">1</td>', '<td>documents</td><td class="n">3</td>',
                '<td>documents kept</td><td class="n">3</td>',
                '<td>documents dropped by the pipeline&#x27;s other steps</td><td class="n">2</td>',
                '<td>documents written</td><td class="n">1</td>',
                '<td>🕵 Regex</td><td class="n">1</td>', '<td>👤 Lambda</td><td class="n">1</td>'):
        assert row in report


# -- two trainings of one name ------------------------------------------------------------------------------

def test_a_training_finished_after_another_of_the_same_name_does_not_replace_its_model_without_force(tmp_path):
    """A researcher starts a bigram and a trigram training under one --name by mistake (two terminals, a loop
    over orders). Each looked for an installed model when it started, found none, and both said "model 'news'
    installed": the one that finished last silently replaced the other's model, without --force. Now the one
    that finishes second finds the model installed meanwhile, installs nothing and says so (exit 2)."""
    from plexity_plugins.training import kenlm_tools

    NEWS = [f"The council approved the budget for library number {i} on Tuesday after a long debate." for i in range(300)]
    (tmp_path / "news.txt").write_text("\n".join(NEWS) + "\n")
    gate, tools = tmp_path / "gate", tmp_path / "gated-kenlm"
    tools.mkdir()  # (KenLM's own tools, lmplz waiting for the gate: the first training still runs)
    (tools / "lmplz").write_text(f'#!/bin/sh\nwhile [ ! -e {gate} ]; do sleep 0.05; done\n'
                                 f'exec {kenlm_tools.find_tool("lmplz")} "$@"\n')
    (tools / "build_binary").symlink_to(kenlm_tools.find_tool("build_binary"))
    (tools / "lmplz").chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    train = [sys.executable, "-m", "plexity_plugins", "train", "--corpus", "text", "--name", "news", "--quiet",
             "--discount-fallback", "--memory", "64M", str(tmp_path / "news.txt")]
    first = subprocess.Popen([*train, "--order", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**env, "PLEXITY_KENLM_BIN": str(tools)})
    try:
        second = subprocess.run([*train, "--order", "2"], capture_output=True, text=True, env=env, timeout=120)
        assert second.returncode == 0, second.stderr
    finally:
        gate.touch()
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 2
    assert err.splitlines()[-1] == (
        f"plexity train: error: model 'news' was installed in {tmp_path / 'models' / 'news'} by another run while this "
        f"one ran; it is left as that run installed it, and this model is not installed: pass --force to replace it, "
        f"or give another --name")
    assert json.loads((tmp_path / "models" / "news" / "model.json").read_text())["order"] == 2
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["news"]  # (no staging or work folder left)


def test_thresholds_and_bounds_swept_with_numpy_run_as_python_numbers():
    """A researcher sweeps thresholds with numpy (`for t in np.arange(1000, 5000, 1000)`). Before, the sentence
    filter took an `np.int64` threshold (and `min_chars`, `min_kept_fraction`) as they were, and the run stopped
    with a traceback as it recorded its settings, "TypeError: Object of type int64 is not JSON serializable"; the
    document filter refused `max_perplexity=np.float32(5000)` as "not a positive perplexity". Now each is taken as
    the Python number it is: the run's record and the documents' metadata hold plain numbers."""
    pytest.importorskip("datatrove")
    import numpy as np

    from plexity_plugins import PerplexityScorer
    from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter
    from plexity_plugins.scoring.multilingual import LanguageModels

    sentences = PerplexitySentenceFilter(method="sentences", threshold=np.int64(2000), min_chars=np.int64(20),
                                         min_kept_fraction=np.float32(0.25))
    documents = PerplexityDocumentFilter(min_perplexity=np.float32(10), max_perplexity=np.int64(5000))
    language_map = PerplexitySentenceFilter({"en": "en-default"}, threshold=np.float32(900))
    for step in (sentences, documents, language_map):
        json.dumps(step.settings(), allow_nan=True)  # (what a run records: it raised TypeError)
    assert (sentences.settings()["threshold"], sentences.min_chars, documents.max_perplexity) == (2000.0, 20, 5000.0)
    assert type(PerplexityScorer(threshold=np.float32(900)).clean("The cat sat on the mat.").threshold) is float
    assert type(LanguageModels({"en": "en-default"}, threshold=np.int64(900)).threshold) is float
    # (and the whole-number settings: max_sentence_chars and batch_size were refused as "not integers")
    swept = PerplexitySentenceFilter(max_sentence_chars=np.int64(500), batch_size=np.int64(4))
    assert type(swept.max_sentence_chars) is int and swept.batch_size == 4
    json.dumps(swept.settings(), allow_nan=True)
    with pytest.raises(ValueError, match="max_sentence_chars must be a positive integer, got True"):
        PerplexityScorer(max_sentence_chars=True)


def test_plexity_report_counts_a_second_sentence_filter_and_two_filters_of_one_name_each(tmp_path):
    """A researcher chains a bigram model's sentence filter and a trigram model's (or two of datatrove's
    LambdaFilters). The report read the first sentence filter's counts and left the second out of the other
    steps' drops; of two steps of one name it showed one. The drops did not add up to the documents written.
    Now every step after the first of plexity's is listed, two of one name each with its place."""
    pytest.importorskip("datatrove")
    from datatrove.pipeline.filters import LambdaFilter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter

    (tmp_path / "dataset").mkdir()
    texts = ["The council approved the budget for the new library on Tuesday after a long debate about school funding.",
             "The plan adds two libraries and repairs forty miles of road over the next three years, the mayor said.",
             "Scientists measured the temperature of the river every morning for ten years and published it.",
             "Share on Facebook | Share on X | Email | Print this page | Subscribe to our newsletter today"]
    (tmp_path / "dataset" / "part.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "text": text}) + "\n" for i, text in enumerate(texts)))
    LocalTaskExecutor(pipeline=[JsonlReader(str(tmp_path / "dataset")),
                                PerplexitySentenceFilter(method="sentences", threshold=1e9),
                                PerplexitySentenceFilter(method="sentences"),
                                LambdaFilter(lambda doc: "libraries" not in doc.text),
                                LambdaFilter(lambda doc: "river" not in doc.text),
                                JsonlWriter(str(tmp_path / "out"))], tasks=1, logging_dir=str(tmp_path / "logs")).run()

    result = plexity("report", tmp_path / "logs", "-o", tmp_path / "report.html")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "report.html").read_text()
    second = "🧮 Perplexity sentences [en-default, sentences, threshold 1692.4]"
    for row in ('<td>documents kept</td><td class="n">4</td>', f'<td>{second}</td><td class="n">1</td>',
                '<td>👤 Lambda</td><td class="n">1</td>', '<td>👤 Lambda (step 5)</td><td class="n">1</td>',
                '<td>documents dropped by the pipeline&#x27;s other steps</td><td class="n">3</td>',
                '<td>documents written</td><td class="n">1</td>'):
        assert row in report


# -- environment variables ---------------------------------------------------------------------------------

def test_a_plexity_variable_named_as_a_commands_option_is_said_with_the_option_to_give(tmp_path):
    """A researcher exports the Scrapy setting's names for a session (`export PLEXITY_THRESHOLD=3000
    PLEXITY_MODEL=news`), as the error of a model without a threshold lists `PLEXITY_THRESHOLD` beside
    `--threshold`. Before, `plexity clean` cleaned with the embedded model at its default threshold, silently. Now
    each such variable is a warning naming the option to give; one that names no option of the command is not."""
    (tmp_path / "page.txt").write_text("The council approved the budget on Tuesday after a long debate.\n")
    result = plexity("clean", tmp_path / "page.txt", "-o", tmp_path / "out",
                     env={"PLEXITY_THRESHOLD": "3000", "PLEXITY_MODEL": "news", "PLEXITY_LANGUAGE_CHECK": "false"})
    assert result.returncode == 0, result.stderr
    said = "which plexity does not read (the command line takes options; the Scrapy pipeline's PLEXITY_* settings " \
           "come from settings.py or -s): give"
    assert result.stderr.splitlines()[:3] == [
        f"plexity clean: warning: PLEXITY_LANGUAGE_CHECK is set, {said} --no-language-check",
        f"plexity clean: warning: PLEXITY_MODEL is set, {said} --model",
        f"plexity clean: warning: PLEXITY_THRESHOLD is set, {said} --threshold"]
    score = plexity("score", "The cat sat on the mat.", env={"PLEXITY_THRESHOLD": "3000"})  # (score takes none)
    assert "warning" not in score.stderr


def test_the_servers_model_given_as_a_path_is_listed_as_it_answers_beside_an_installed_model_of_its_name(model_dir,
                                                                                                       tmp_path):
    """`plexity serve --model copies/news` (a copy of the installed `news`, calibrated otherwise, given by its path:
    it goes by its model.json's name, `news`). Before, /api/models listed `news` with the installed model's
    threshold while every request for `news` was answered by the server's model, with its own. Now the list shows
    the model that answers."""
    from plexity_plugins.web.app import ScorerCache

    build_tiny_model(model_dir / "news", name="news", threshold=500.0)
    shutil.copytree(model_dir / "news", tmp_path / "copies" / "news")
    set_threshold(tmp_path / "copies" / "news", 120.0)
    served = ScorerCache(str(tmp_path / "copies" / "news"))
    assert (served.available()["news"]["threshold"], served.get("news").threshold) == (120.0, 120.0)


def test_plexity_models_says_when_its_model_directory_is_not_there(tmp_path):
    # Before: `PLEXITY_MODEL_DIR=~/modles plexity models` (the folder's name mistyped) listed the embedded models,
    # the trained ones "not installed", and "model directory: /home/me/modles" as if it held them.
    listed = plexity("models", env={"PLEXITY_MODEL_DIR": str(tmp_path / "modles")})
    assert listed.returncode == 0, listed.stderr
    assert (f"model directory: {tmp_path / 'modles'} (PLEXITY_MODEL_DIR names no folder: no model is found there)"
            in listed.stdout)
    (tmp_path / "models").mkdir()
    listed = plexity("models", env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert f"model directory: {tmp_path / 'models'}\n" in listed.stdout
