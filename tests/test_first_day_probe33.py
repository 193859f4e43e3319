"""A stranger's first day, probe 33: a data engineer trains a model on the text they have (files gathered from
several places, some not UTF-8), then uses it everywhere: the command line, `plexity serve`'s JSON API, datatrove
and Scrapy. Each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

NEWS = ["The council approved the budget for the new library on Tuesday evening.",
        "The library opens in the spring and stays open late on weekdays.",
        "Residents asked whether the old school on the main street would be sold.",
        "Scientists measured the temperature of the river every morning for ten years.",
        "Their report shows that the water is cleaner than it has been for a generation."]


def plexity(*args, env: dict | None = None, cwd: Path | None = None, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, input=stdin,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def news_lines(count: int) -> list[str]:
    return [f"{NEWS[i % len(NEWS)]} Item {i}." for i in range(count)]


# -- plexity train on text gathered from several places, one file of it in Latin-1 ----------------------

def latin1_corpus(folder: Path) -> Path:
    """A gzipped corpus of 600 lines (about 50 KB: the decoder reads 8 KiB ahead of the line reached) whose line
    500 holds a word in Latin-1, as a page saved by an old tool or a Windows editor holds it."""
    lines = news_lines(600)
    lines[499] = "The caf\u00e9 on the corner sold bread to the people of the town for a hundred years."
    folder.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode("latin-1")
    (folder / "old.txt.gz").write_bytes(gzip.compress(data))
    return folder / "old.txt.gz"


def test_a_training_file_that_is_not_utf8_is_named_at_its_line_with_the_line_that_converts_it(tmp_path):
    # Before: "corpus/old.txt.gz: not UTF-8 (after line 441): 'utf-8' codec can't decode byte 0xe9 in position
    # 1241: invalid continuation byte": the line the reader had reached, not the bad one (the decoder reads ahead
    # in 8 KiB chunks), a position in that chunk, and no word of what to do.
    old = latin1_corpus(tmp_path / "corpus")
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet", old,
                     env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"plexity train: error: {old}: not UTF-8 at line 500, byte 8 (b'\\xe9 on'...): convert it first, e.g. from "
        f"windows-1252 (Latin-1): gzip -dc {old} | iconv -f windows-1252 -t utf-8 > old.utf8.txt; or give "
        f"--skip-bad-files to leave the file out")
    assert not (tmp_path / "models" / "news").exists()

    converted = subprocess.run(f"gzip -dc {old} | iconv -f windows-1252 -t utf-8 > old.utf8.txt", shell=True,
                               cwd=tmp_path)  # (the line it gives, as given)
    assert converted.returncode == 0
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet",
                     tmp_path / "old.utf8.txt", env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 0, result.stderr


def test_a_file_skipped_with_skip_bad_files_gives_the_model_none_of_its_lines(tmp_path):
    # Before: the 499 lines before the Latin-1 byte were trained on and held out from, and the summary said
    # "documents: 520 read ...; skipped: 1 unreadable file": a file counted as left out, most of it in the model.
    old = latin1_corpus(tmp_path / "corpus")
    (tmp_path / "corpus" / "new.txt").write_text("".join(line + "\n" for line in news_lines(20)))
    truncated = tmp_path / "corpus" / "cut.txt.gz"  # (a download cut short: its gzip stream ends early)
    whole = gzip.compress("".join(line + "\n" for line in news_lines(3000)).encode())
    truncated.write_bytes(whole[:len(whole) // 2])
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet", "--skip-bad-files",
                     "--write-dropped", tmp_path / "corpus", env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 0, result.stderr
    build = json.loads((tmp_path / "models" / "news" / "model.json").read_text())["build"]
    assert build["documents_read"] == 20 and build["skipped"] == {"unreadable file": 2}
    dropped = [json.loads(line) for line in (tmp_path / "models" / "news" / "train-dropped.jsonl").open()]
    assert {Path(row["file"]).name: row["detail"].split(": ", 1)[1][:24] for row in dropped} == {
        "cut.txt.gz": "cannot read: Compressed ", old.name: "not UTF-8 at line 500, b"}


# -- plexity serve with the model one trained: "default" in a request --------------------------------------

def test_the_json_apis_default_model_is_the_embedded_one_whatever_the_servers_model(tmp_path):
    # Before: `plexity serve --model news` answered {"model": "default"} with `news`, the server's model, where
    # `--model default` is the embedded en-default on every command (plexity score, clean, run; the Scrapy and
    # datatrove steps) and the API's table offers "default" beside the names `plexity models` lists: the same
    # request scored with another model under another server, with nothing to say so but the answer's "model".
    from conftest import build_tiny_model
    from web_server import post, start_server, stop_server

    build_tiny_model(tmp_path / "models" / "news", name="news")
    process, url = start_server(["--model", "news"], env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    try:
        text = "The council approved the budget on Tuesday."
        answers = {model: post(url, {"text": text, "model": model})[1]["model"]
                   for model in (None, "news", "default", "en-default")}
    finally:
        stop_server(process)
    assert answers == {None: "news", "news": "news", "default": "en-default", "en-default": "en-default"}
    score = plexity("score", "--model", "default", text, env={"PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert "; model en-default;" in score.stdout.splitlines()[0]  # (the command line's "default": the same)


# -- datatrove: WarcHtmlReader in the place of datatrove's WarcReader --------------------------------------

def test_warc_html_reader_takes_datatroves_compression_argument_in_its_place(tmp_path):
    # Before: docs/datatrove.md says WarcHtmlReader's arguments are datatrove's WarcReader's, but a pipeline that
    # changed `WarcReader("crawl", compression="gzip")` for it stopped where it was built: "TypeError:
    # WarcHtmlReader.__init__() got an unexpected keyword argument 'compression'"; a third positional argument,
    # datatrove's compression, was taken as `limit`.
    pytest.importorskip("datatrove")
    import shutil

    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter

    from helpers import SAMPLE, read_jsonl_dir
    from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")
    crawl = str(tmp_path / "crawl")
    assert list(WarcReader.__init__.__code__.co_varnames[:4]) == ["self", "data_folder", "paths_file", "compression"]
    for compression in ("infer", "gzip", None):
        out = tmp_path / f"out-{compression}"
        LocalTaskExecutor(pipeline=[
            WarcHtmlReader(crawl, None, compression), LearnedExtractor(), PerplexitySentenceFilter(),
            JsonlWriter(str(out))], tasks=1, logging_dir=str(tmp_path / f"logs-{compression}")).run()
        assert len(read_jsonl_dir(out)) == 12
    with pytest.raises(ValueError, match=r"does not read zstd-compressed WARC files .* zstdcat f.warc.zst \| gzip"):
        WarcHtmlReader(crawl, compression="zstd")
    with pytest.raises(ValueError, match=r"compression must be one of 'infer', 'gzip' or None .* got 'bz2'"):
        WarcHtmlReader(crawl, compression="bz2")


class FailsOnce:
    """A pipeline step that fails its task 1 while `marker` exists: a task that failed (a node lost, a full disk),
    to be resumed by the same script once the cause is gone."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __call__(self, data, rank: int = 0, world_size: int = 1):
        if rank == 1 and os.path.exists(self.marker):
            raise RuntimeError("task 1 failed")
        yield from data


def test_a_run_resumed_after_a_failed_task_counts_every_task_in_its_stats(tmp_path):
    # Before: the script run again after task 1 of 2 had failed ran task 1 alone, then logged "Stats: All 2 tasks"
    # with task 1's counts, and wrote them, the 12 documents of one file, to logs/stats.json (which `plexity report`
    # reads), beside 24 documents in its output: datatrove's executor merges the tasks it ran, where `plexity run`
    # and datatrove's Slurm and Ray executors merge every task's.
    import shutil

    from datatrove.pipeline.writers import JsonlWriter

    from helpers import SAMPLE, read_jsonl_dir
    from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader

    (tmp_path / "crawl").mkdir()
    for name in ("a", "b"):
        shutil.copy(SAMPLE, tmp_path / "crawl" / f"{name}.warc.gz")
    marker = tmp_path / "fail"
    marker.touch()

    def run():
        return LocalTaskExecutor(pipeline=[
            WarcHtmlReader(str(tmp_path / "crawl")), LearnedExtractor(), FailsOnce(marker), PerplexitySentenceFilter(),
            JsonlWriter(str(tmp_path / "out" / "documents"))], tasks=2, workers=1, logging_dir=str(tmp_path / "logs"),
        ).run()

    with pytest.raises(RuntimeError, match="task 1 failed"):
        run()
    marker.unlink()
    stats = run()
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 24
    merged = {step["name"]: step["stats"] for step in json.loads((tmp_path / "logs" / "stats.json").read_text())}
    assert merged["📖 - READER: 🕷 WARC HTML"]["documents"]["total"] == 24
    assert merged["💽 - WRITER: 🐿 Jsonl"]["total"]["total"] == 24
    assert stats.stats[0].stats["documents"].total == 24  # (and what run() returns)
    result = plexity("report", tmp_path / "logs" / "stats.json", "-o", tmp_path / "report.html")
    assert result.returncode == 0, result.stderr


# -- Scrapy: PLEXITY_DROPPED_FILE written as a feed's URI -------------------------------------------------

DROPPED_SPIDER = '''
import scrapy

class PagesSpider(scrapy.Spider):
    name = "pages"
    custom_settings = {"ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0}, "TELNETCONSOLE_ENABLED": False,
                       "LOG_LEVEL": "INFO", "PLEXITY_EXTRACTOR": "tags"}

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url + "page.html"]

    def parse(self, response):
        yield {"url": response.url, "html": response.text}
'''


def test_scrapy_dropped_file_given_as_a_feeds_file_uri_is_that_file_and_another_uri_is_refused(tmp_path):
    # Before: PLEXITY_DROPPED_FILE = "file:///data/dropped-%(name)s.jsonl", written as the FEEDS URIs beside it are,
    # was taken as a relative path: the rows went to ./file:/data/dropped-pages.jsonl, a folder named "file:" in
    # the folder the crawl ran in; "s3://bucket/dropped.jsonl" made ./s3:/bucket/dropped.jsonl the same way.
    sys.path.insert(0, str(REPO / "examples" / "scrapy_project"))
    from demo_site import serve

    page = ("<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
            f"<p>{NEWS[0]}</p><p>{NEWS[1]}</p><footer>Share on Facebook | Share on X | Email</footer></body></html>")
    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / "spider.py").write_text(DROPPED_SPIDER)
    wanted = tmp_path / "data" / "dropped-pages.jsonl"
    with serve({"/page.html": ("text/html; charset=utf-8", page.encode())}) as base:
        def crawl(dropped: str):
            return subprocess.run([sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}",
                                   "-s", f"PLEXITY_DROPPED_FILE={dropped}"], cwd=tmp_path / "crawl",
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "PYTHONPATH": str(REPO)})

        written = crawl(f"file://{tmp_path}/data/dropped-%(name)s.jsonl")
        refused = crawl("s3://bucket/dropped.jsonl")
    assert written.returncode == 0, written.stderr[-3000:]
    assert f"INFO: plexity: dropped sentences and items written to {wanted}\n" in written.stderr
    assert any(json.loads(line).get("text") == "Home News" for line in wanted.read_text().splitlines())
    assert refused.returncode == 1
    assert ("CRITICAL: plexity: the crawl cannot start: PLEXITY_DROPPED_FILE is 's3://bucket/dropped.jsonl': give a "
            "file on this machine (a path, or a file:// URI), and copy it to s3:// when the crawl ends"
            ) in refused.stderr
    # (no file:, no s3:; Python 3.13's Scrapy leaves spider.py's compiled __pycache__ beside it, no output)
    assert sorted(path.name for path in (tmp_path / "crawl").iterdir() if path.name != "__pycache__") == ["spider.py"]


# -- plexity run given file:// URLs, as fsspec and datatrove take them ------------------------------------

def test_plexity_run_takes_file_urls_for_its_input_and_its_output(tmp_path):
    # Before: `plexity run file:///data/crawl -o out` said "input file:///data/crawl does not exist", of a folder
    # that does, though s3://, hf:// and https:// URLs are read (fsspec's file:// was looked for as a relative
    # path); and `-o file:///data/out` wrote the run to ./file:/data/out, a folder named "file:" where it ran.
    import shutil

    from helpers import SAMPLE, read_jsonl_dir

    (tmp_path / "crawl").mkdir()
    (tmp_path / "here").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")
    result = plexity("run", (tmp_path / "crawl").as_uri(), "-o", (tmp_path / "out").as_uri(), cwd=tmp_path / "here")
    assert result.returncode == 0, result.stderr
    assert f"cleaned documents: {tmp_path / 'out' / 'documents'}" in result.stdout
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 12
    assert list((tmp_path / "here").iterdir()) == []  # (no file: folder)
    again = plexity("run", f"{(tmp_path / 'crawl').as_uri()}/*.warc.gz", "-o", tmp_path / "out", cwd=tmp_path / "here")
    assert again.returncode == 0 and "1/1 tasks completed (0 in this run" in again.stdout  # (the same input)

    cleaned = plexity("clean", (tmp_path / "crawl").as_uri(), "-o", (tmp_path / "cleaned").as_uri(),
                      cwd=tmp_path / "here")  # (and plexity clean, the same: "input file:/... does not exist")
    assert cleaned.returncode == 0, cleaned.stderr
    assert (tmp_path / "cleaned" / "a.warc.gz").is_file() and list((tmp_path / "here").iterdir()) == []


def test_a_file_uri_names_one_path_on_the_command_line_and_in_scrapy(tmp_path):
    # Before: the command line cut "file://" off (so `plexity clean file:///data/my%20crawl`, as `Path.as_uri()`
    # writes a folder with a space, was "no such input /data/my%20crawl", and file://localhost/data was the
    # relative path localhost/data), while Scrapy's PLEXITY_DROPPED_FILE read the same URI as RFC 8089 does.
    # Now one reading (`runtime.extras.local_path`) for both; a file:// URI of another host is refused by both.
    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.runtime.extras import local_path
    from plexity_plugins.scrapy import _dropped_file_setting
    from helpers import SAMPLE

    crawl = tmp_path / "my crawl"
    crawl.mkdir()
    (crawl / "a.warc.gz").write_bytes(SAMPLE.read_bytes())
    assert local_path(crawl.as_uri()) == str(crawl) and "%20" in crawl.as_uri()
    assert local_path(f"file://localhost{crawl}") == str(crawl) == local_path(f"FILE://{crawl}")
    assert local_path(f"local://{crawl}") == str(crawl) and local_path("data/crawl") == "data/crawl"
    assert _dropped_file_setting((crawl / "dropped.jsonl").as_uri()) == str(crawl / "dropped.jsonl")

    cleaned = plexity("clean", crawl.as_uri(), "-o", f"file://localhost{tmp_path}/cleaned out")
    assert cleaned.returncode == 0, cleaned.stderr
    assert (tmp_path / "cleaned out" / "a.warc.gz").is_file()

    refused = plexity("clean", "file://nas/data/crawl", "-o", tmp_path / "other")
    assert refused.returncode == 2 and ("'file://nas/data/crawl' is a file:// URI of another host (nas); give a "
                                        "path on this machine, file:///path or /path") in refused.stderr
    with pytest.raises(PlexitySettingError, match="PLEXITY_DROPPED_FILE: 'file://nas/x.jsonl' is a file:// URI of "
                                                  "another host"):
        _dropped_file_setting("file://nas/x.jsonl")


# -- Scrapy: a language map written as the command line's --model takes it ---------------------------------

def test_scrapy_takes_a_language_map_written_as_the_command_lines_model_option(tmp_path):
    # Before: `-s PLEXITY_MODEL=en=en-default,de=news`, written as `plexity clean --model en=en-default --model
    # de=news` takes the map, stopped the crawl with "unknown model 'en=en-default,de=news': not a file or
    # directory": only a dict or its JSON was a map.
    from conftest import build_tiny_model

    sys.path.insert(0, str(REPO / "examples" / "scrapy_project"))
    from demo_site import serve

    build_tiny_model(tmp_path / "models" / "news", name="news", language="de")
    page = f"<html><body><p>{NEWS[0]}</p><p>{NEWS[1]}</p><p>{NEWS[3]}</p></body></html>"
    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / "spider.py").write_text(DROPPED_SPIDER)
    with serve({"/page.html": ("text/html; charset=utf-8", page.encode())}) as base:
        def crawl(model: str):
            return subprocess.run([sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}",
                                   "-s", f"PLEXITY_MODEL={model}", "-O", "items.jsonl"], cwd=tmp_path / "crawl",
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "PYTHONPATH": str(REPO),
                                       "PLEXITY_MODEL_DIR": str(tmp_path / "models")})

        mapped = crawl("en=en-default,de=news")
        twice = crawl("en=en-default,en=news")
    assert mapped.returncode == 0, mapped.stderr[-3000:]
    [item] = [json.loads(line) for line in (tmp_path / "crawl" / "items.jsonl").read_text().splitlines()]
    assert item["plexity"]["plexity_model"] == "en-default" and item["text"].startswith(NEWS[0])
    assert "'plexity/thresholds': {'de': 500.0, 'en': 1692.4}" in mapped.stderr  # (each language's model)
    assert twice.returncode == 1
    assert ("CRITICAL: plexity: the crawl cannot start: PLEXITY_MODEL is 'en=en-default,en=news': language 'en' "
            "given twice") in twice.stderr


# -- plexity train on a folder that holds no text file, but a crawl or the dataset cleaned from it ----------

def test_train_on_a_folder_of_json_lines_or_warcs_says_what_it_holds_and_how_to_make_text_of_it(tmp_path):
    # Before: `plexity train --corpus text out/documents`, the folder `plexity run` had just cleaned the user's crawl
    # into, said "empty corpus: no .txt/.txt.gz/.text/.text.gz files in out/documents", nothing of the JSON-lines
    # files it held nor of what to give; so of the crawl's own folder.
    import shutil

    from helpers import SAMPLE

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")
    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    assert plexity("run", "crawl", "-o", "out", cwd=tmp_path).returncode == 0
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "mine", "out/documents", cwd=tmp_path,
                     env=env)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "plexity train: error: empty corpus: no .txt/.txt.gz/.text/.text.gz files in out/documents; it holds 1 other "
        "file(s) (out/documents/00000.jsonl.gz): JSON lines are documents, not text: write their text out first, e.g. "
        "gzip -dc out/documents/*.jsonl.gz | jq -r .text > corpus.txt, and give that file")
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "mine", "crawl", cwd=tmp_path, env=env)
    assert result.stderr.splitlines()[-1].endswith(
        "in crawl; it holds 1 other file(s) (crawl/a.warc.gz): a crawl is not text: plexity run FOLDER -o out cleans "
        "it into out/documents, JSON lines: gzip -dc out/documents/*.jsonl.gz | jq -r .text > corpus.txt gives their "
        "text")
    if shutil.which("jq"):  # (the line it gives, as given)
        assert subprocess.run("gzip -dc out/documents/*.jsonl.gz | jq -r .text > corpus.txt", shell=True,
                              cwd=tmp_path).returncode == 0
        result = plexity("train", "--corpus", "text", "--order", "2", "--name", "mine", "--quiet", "corpus.txt",
                         cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr


# -- files saved as "UTF-8 with BOM" (Excel's CSV UTF-8, Notepad) -------------------------------------------

def test_a_corpus_saved_with_a_byte_order_mark_is_read_as_without_one(tmp_path):
    # Before: a metadata.csv saved by Excel ("CSV UTF-8" writes a BOM) stopped `plexity train --corpus cord19` with
    # "not a CORD-19 metadata.csv: missing column(s) cord_uid (header: \ufeffcord_uid, title, abstract)", the BOM
    # invisible in the message; a text file's BOM became a token of the model's vocabulary, "\ufeff", that no text
    # scored has (the scorer drops BOMs), and JSON lines saved with one were trained on as text.
    import csv

    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    with open(tmp_path / "metadata.csv", "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.DictWriter(f, fieldnames=["cord_uid", "title", "abstract"])
        writer.writeheader()
        writer.writerows({"cord_uid": f"u{i}", "title": "A study", "abstract": " ".join(news_lines(3)[i % 3:])}
                         for i in range(200))
    result = plexity("train", "--corpus", "cord19", "--order", "2", "--name", "c19", "--quiet",
                     tmp_path / "metadata.csv", env=env)
    assert result.returncode == 0, result.stderr

    text = "".join(line + "\n" for line in news_lines(300))
    (tmp_path / "plain.txt").write_text(text, encoding="utf-8")
    (tmp_path / "bom.txt").write_text(text, encoding="utf-8-sig")
    vocabulary = {}
    for name in ("plain", "bom"):
        result = plexity("train", "--corpus", "text", "--order", "2", "--name", name, "--quiet",
                         tmp_path / f"{name}.txt", env=env)
        assert result.returncode == 0, result.stderr
        vocabulary[name] = json.loads((tmp_path / "models" / name / "model.json").read_text())["vocab_size"]
    assert vocabulary["bom"] == vocabulary["plain"]

    (tmp_path / "docs.jsonl").write_text(json.dumps({"text": NEWS[0]}) + "\n", encoding="utf-8-sig")
    result = plexity("train", "--corpus", "text", "--order", "2", "--name", "docs", tmp_path / "docs.jsonl", env=env)
    assert result.returncode == 2 and "JSON lines, not text" in result.stderr


# -- environment variables spelt wrong ---------------------------------------------------------------------

def test_a_misspelt_plexity_variable_is_said_with_the_one_meant(tmp_path):
    # Before: PLEXITY_MODELS_DIR=... (for PLEXITY_MODEL_DIR) was read by no one: `plexity score --model news` said
    # "unknown model 'news' ... not installed in ~/.cache/plexity_plugins/models ... set PLEXITY_MODEL_DIR to look
    # elsewhere", the user sure they had; PLEXITY_EXTRACT_MEM=... (for PLEXITY_EXTRACT_MEMORY) changed nothing, unsaid.
    from conftest import build_tiny_model

    build_tiny_model(tmp_path / "models" / "news", name="news")
    result = plexity("score", "--model", "news", "The council approved the budget.",
                     env={"PLEXITY_MODELS_DIR": str(tmp_path / "models"), "HOME": str(tmp_path / "home")})
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == ("plexity score: warning: PLEXITY_MODELS_DIR is set, which plexity "
                                             "does not read: did you mean PLEXITY_MODEL_DIR?")
    assert result.stderr.splitlines()[-1].endswith("; set PLEXITY_MODEL_DIR to look elsewhere; PLEXITY_MODELS_DIR is "
                                                   "set, which plexity does not read: did you mean PLEXITY_MODEL_DIR?)")
    result = plexity("score", "--plain", "The council approved the budget.", env={"PLEXITY_EXTRACT_MEM": "300MiB"})
    assert result.returncode == 0 and result.stderr == ("plexity score: warning: PLEXITY_EXTRACT_MEM is set, which "
                                                        "plexity does not read: did you mean PLEXITY_EXTRACT_MEMORY?\n")
    result = plexity("score", "--plain", "The council approved the budget.", env={"PLEXITY_MODEL": "news"})
    # (a Scrapy setting's name: no misspelt PLEXITY_MODEL_DIR, but the name of an option: test_first_day_probe34.py)
    assert result.returncode == 0 and "did you mean" not in result.stderr
    assert result.stderr.endswith("give --model\n")


# -- plexity serve while the model is calibrated or trained again -------------------------------------------

def test_serve_answers_with_the_model_as_calibrated_or_trained_again_while_it_runs(tmp_path):
    # Before: a model calibrated (`plexity calibrate --write`) or trained again (`plexity train --force`) while
    # `plexity serve` ran was answered with the scorer opened first, old threshold and old perplexities, while
    # /api/models listed the new threshold: picking a threshold by looking at the demo, as docs/web.md says people
    # do, showed the model as it had been.
    import urllib.request

    from web_server import post, start_server, stop_server

    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    (tmp_path / "news.txt").write_text("".join(line + "\n" for line in news_lines(400)))
    (tmp_path / "other.txt").write_text("".join(f"{NEWS[i % 2]} Day {i}.\n" for i in range(400)))
    (tmp_path / "held.txt").write_text("".join(line + "\n" for line in NEWS))
    train = ("train", "--corpus", "text", "--order", "2", "--name", "news", "--quiet")
    assert plexity(*train, tmp_path / "news.txt", env=env).returncode == 0
    text = "The council approved the budget on Tuesday.\nShare on Facebook | Email"
    process, url = start_server(["--model", "news"], env=env)
    try:
        def answer() -> tuple:
            data = post(url, {"text": text})[1]
            listed = json.loads(urllib.request.urlopen(url + "/api/models").read())
            threshold = next(m["threshold"] for m in listed["models"] if m["name"] == "news")
            return data["threshold"], threshold, [round(s["perplexity"], 2) for s in data["sentences"]]

        first = answer()
        assert first[0] == first[1]
        assert plexity("calibrate", "--model", "news", tmp_path / "held.txt", "--percentile", "50", "--write",
                       env=env).returncode == 0
        calibrated = answer()
        assert calibrated[0] == calibrated[1] != first[0] and calibrated[2] == first[2]
        assert plexity(*train, "--force", tmp_path / "other.txt", env=env).returncode == 0
        retrained = answer()
    finally:
        stop_server(process)
    scored = plexity("score", "--plain", "--sentences", "--model", "news", text, env=env)
    assert retrained[2] != first[2] and retrained[2] == [
        round(float(line.split("\t")[0]), 2) for line in scored.stdout.splitlines()[:2]]
    assert retrained[0] == retrained[1]


# -- what a killed plexity train leaves in the models folder ------------------------------------------------

def test_the_folders_a_killed_train_leaves_are_no_model_to_list(tmp_path):
    # Before: a train killed by the out-of-memory killer leaves .news.partial-* and .news.work-* in the models
    # folder until the next train of that name (docs/training.md); meanwhile every listing of the models said
    # "WARNING ...: skipping .../.news.partial-...: ... holds no model file", on `plexity models`, on the
    # unknown-model error, on each of `plexity serve`'s /api/models requests.
    import time

    from helpers import children, slow_kenlm_tools

    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models"), "PLEXITY_KENLM_BIN": str(slow_kenlm_tools(tmp_path))}
    (tmp_path / "news.txt").write_text("".join(line + "\n" for line in news_lines(200)))
    process = subprocess.Popen([sys.executable, "-m", "plexity_plugins", "train", "--corpus", "text", "--order", "2",
                                "--name", "news", "--quiet", str(tmp_path / "news.txt")],
                               env={**os.environ, "PYTHONPATH": str(REPO), **env}, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not children(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert children(process.pid)  # (its lmplz runs: the folders are made)
    finally:
        process.kill()  # (SIGKILL, as the out-of-memory killer sends it; lmplz dies with it)
        process.wait()
    left = sorted(p.name.split("-")[0] for p in (tmp_path / "models").iterdir() if p.is_dir())
    assert left == [".news.partial", ".news.work"]
    listed = plexity("models", env=env)
    assert listed.returncode == 0 and listed.stderr == ""
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:2]] == ["en-default"]
    unknown = plexity("score", "--model", "news", "x", env=env)
    assert unknown.stderr.splitlines() == [
        f"plexity score: error: unknown model 'news': not a file or directory, and not installed in "
        f"{tmp_path / 'models'} (available: en-default; set PLEXITY_MODEL_DIR to look elsewhere)"]


# -- a datatrove step given a function: a re-run after the function changed ---------------------------------

def long_enough(doc) -> bool:
    return len(doc.text) > 2000


def test_a_pipeline_re_run_after_its_function_changed_stops_naming_it(tmp_path):
    # Before: functions were not compared: the script run again after its LambdaFilter's lambda was changed (here
    # `> 100` -> `> 2000` characters), or a function of its own given as a step, answered "Not doing anything as
    # all 1 tasks have already been completed": the old results, made with the old function, as the new ones.
    import shutil

    from datatrove.pipeline.filters import LambdaFilter
    from datatrove.pipeline.writers import JsonlWriter

    from helpers import SAMPLE
    from plexity_plugins.datatrove import (LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter,
                                           SettingsChanged, WarcHtmlReader)

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")

    def run(keep, limit: int = 3) -> None:
        def first_pages(data, rank: int = 0, world_size: int = 1):  # (a function of the script's own, as a step)
            for number, doc in enumerate(data):
                if number < limit:
                    yield doc

        LocalTaskExecutor(pipeline=[
            WarcHtmlReader(str(tmp_path / "crawl")), LearnedExtractor(), LambdaFilter(keep), first_pages,
            PerplexitySentenceFilter(), JsonlWriter(str(tmp_path / "out"))], tasks=1, workers=1,
            logging_dir=str(tmp_path / "logs")).run()

    run(lambda doc: len(doc.text) > 100)
    run(lambda doc: len(doc.text) > 100)  # (the same: resumed, nothing run)
    code = r"\(code sha256:\w{12}\)"
    with pytest.raises(SettingsChanged, match=rf"\(functions filter_function: <lambda> {code} -> <lambda> {code}\)"):
        run(lambda doc: len(doc.text) > 2000)
    with pytest.raises(SettingsChanged, match=rf"\(functions filter_function: <lambda> {code} -> long_enough {code}\)"):
        run(long_enough)
    with pytest.raises(SettingsChanged, match=rf"\(functions step: first_pages {code} -> first_pages {code}\)"):
        run(lambda doc: len(doc.text) > 100, limit=5)  # (a value the step's function closes over)


def test_the_same_script_run_again_in_a_new_process_resumes_though_its_function_holds_a_set(tmp_path):
    # A set written in a function (`x not in {"a", "b"}`) is ordered by its strings' hashes, which differ from one
    # process to the next: the checksum of the function read differently in the script's second run, which stopped
    # as another run's ("functions filter_function: <lambda> ... -> <lambda> ...") though nothing had changed.
    import shutil

    from helpers import SAMPLE

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")
    script = tmp_path / "clean.py"
    script.write_text(textwrap.dedent(f"""
        from datatrove.pipeline.filters import LambdaFilter
        from datatrove.pipeline.writers import JsonlWriter
        from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, WarcHtmlReader

        LocalTaskExecutor(pipeline=[
            WarcHtmlReader({str(tmp_path / "crawl")!r}), LearnedExtractor(),
            LambdaFilter(lambda doc: doc.metadata.get("language") not in {{"xx", "yy", "zz", "ww", "vv"}}),
            JsonlWriter({str(tmp_path / "out")!r})], tasks=1, workers=1, logging_dir={str(tmp_path / "logs")!r}).run()
    """))
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr[-2000:]
    assert "already been completed" in run.stderr


def test_a_crawl_re_read_through_another_adapter_stops_naming_it(tmp_path):
    # Before: WarcHtmlReader's adapter (datatrove's readers' argument: what each record becomes) was not recorded:
    # the script run again with another adapter answered with the documents the first one had made.
    import shutil

    from datatrove.pipeline.writers import JsonlWriter

    from helpers import SAMPLE
    from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, SettingsChanged, WarcHtmlReader

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")

    def run(cut: int) -> None:
        def first_characters(self, data, path, id_in_file):
            data = dict(data)
            return {"text": data.pop("text")[:cut], "id": data.pop("id"), "metadata": data}

        LocalTaskExecutor(pipeline=[WarcHtmlReader(str(tmp_path / "crawl"), adapter=first_characters),
                                    LearnedExtractor(), JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()

    run(5000)
    run(5000)
    with pytest.raises(SettingsChanged, match=r"\(functions adapter: first_characters \(code sha256:\w{12}\) -> "
                                              r"first_characters \(code sha256:\w{12}\)\)"):
        run(6000)


def test_documents_written_through_another_adapter_stop_the_re_run_naming_it(tmp_path):
    # Before: the adapter of plexity's writers (datatrove's writers' argument: what each document is written as)
    # was not recorded: a re-run writing through another adapter answered with the files the first had written.
    import shutil

    from helpers import SAMPLE
    from plexity_plugins.datatrove import (JsonlDocumentWriter, LearnedExtractor, LocalTaskExecutor, SettingsChanged,
                                           WarcHtmlReader)

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl" / "a.warc.gz")

    def run(fields: tuple) -> None:
        def some_fields(self, document) -> dict:
            return {"text": document.text, **{key: document.metadata[key] for key in fields}}

        LocalTaskExecutor(pipeline=[WarcHtmlReader(str(tmp_path / "crawl")), LearnedExtractor(),
                                    JsonlDocumentWriter(str(tmp_path / "out"), adapter=some_fields)],
                          tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()

    run(("url",))
    run(("url",))
    with pytest.raises(SettingsChanged, match=r"\(functions adapter: some_fields \(code sha256:\w{12}\) -> "
                                              r"some_fields \(code sha256:\w{12}\)\)"):
        run(("url", "date"))


# -- the extractor "none" given pages ---------------------------------------------------------------------

def test_pages_cleaned_with_the_extractor_none_are_said_to_keep_their_markup(tmp_path):
    # Before: `plexity clean page.html --extractor none` and a crawl with PLEXITY_EXTRACTOR = 'none' cleaned each page
    # as text, and wrote `<p>The city council ...</p>` as its text, tags and all, without a word (datatrove's filter
    # stops such a task, HtmlPagesNotText; PLEXITY_INPUT_FORMAT = 'text' given pages was said in the crawl's log).
    sys.path.insert(0, str(REPO / "examples" / "scrapy_project"))
    from demo_site import serve

    page = "\n".join(["<html><body>", "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>",
                      *(f"<p>{sentence}</p>" for sentence in NEWS), "</body></html>"])
    (tmp_path / "pages").mkdir()
    for name in ("a.html", "b.html"):
        (tmp_path / "pages" / name).write_text(page)
    result = plexity("clean", "pages", "-o", "cleaned", "--extractor", "none", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "<p>" in (tmp_path / "cleaned" / "a.html.txt").read_text()  # (as asked: the page as text)
    said = [line for line in result.stderr.splitlines() if "--extractor none" in line]
    assert said == ["WARNING plexity_plugins.cleaning.files: pages/a.html is an HTML page, and --extractor none cleans "
                    "it as text, markup and all (<p>, <a href=...> in its output); leave --extractor out (learned) to "
                    "extract its text first (said once)"]

    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / "spider.py").write_text(DROPPED_SPIDER)
    with serve({"/page.html": ("text/html; charset=utf-8", page.encode())}) as base:
        crawl = subprocess.run([sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}",
                                "-s", "PLEXITY_EXTRACTOR=none", "-s", "PLEXITY_MIN_CHARS=0"], cwd=tmp_path / "crawl",
                               capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    assert (f"WARNING: plexity: {base}page.html: 'html' (PLEXITY_INPUT_FIELD) holds an HTML page, and "
            f"PLEXITY_EXTRACTOR is 'none': it is cleaned as text, markup and all") in crawl.stderr
    assert "'plexity/items_looks_like_html': 1" in crawl.stderr

    import shutil

    from helpers import SAMPLE

    (tmp_path / "warcs").mkdir()
    shutil.copy(SAMPLE, tmp_path / "warcs" / "a.warc.gz")
    run = plexity("run", "warcs", "-o", "out", "--extractor", "none", cwd=tmp_path)  # (it said "extraction: 0 with
    assert run.returncode == 0, run.stderr  # text, lost: none" of a run that cleaned 12 pages' tags with their text)
    assert ("; extraction: none (--extractor none): 12 HTML pages cleaned as text, markup and all; filter: 12 in"
            in run.stdout)


# -- a model imported from a gzipped ARPA file ---------------------------------------------------------------

def test_a_gzipped_arpa_model_says_in_one_line_why_it_is_slow_and_how_to_make_it_fast(tmp_path):
    # Before: every command scoring with a model imported from `xx.arpa.gz` warned "compiled scorer cannot open
    # .../model.arpa.gz (Cannot read model ... (native/third_party/kenlm/util/read_compressed.cc:376 in util::ReadBase*
    # util::{anonymous}::ReadFactory(...) threw CompressedException. This looks like a gzip file but gzip support was
    # not compiled i): using the kenlm module": KenLM's message cut at 300 characters, nothing of what to do.
    from conftest import build_tiny_model

    folder = build_tiny_model(tmp_path / "built", name="news", binary=False)
    (tmp_path / "news.arpa.gz").write_bytes(gzip.compress((folder / "model.arpa").read_bytes()))
    env = {"PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    imported = plexity("models", "import", "news", "--kenlm", tmp_path / "news.arpa.gz", "--tokenizer",
                       "plexity-tok-1", "--language", "en", "--threshold", "500", env=env)
    assert imported.returncode == 0, imported.stderr
    scored = plexity("score", "--plain", "--model", "news", "The cat sat on the mat.", env=env)
    assert scored.returncode == 0, scored.stderr
    assert scored.stderr.splitlines()[0] == (
        f"WARNING plexity_plugins.scoring.models: the compiled scorer reads no gzipped ARPA file: "
        f"{tmp_path / 'models' / 'news' / 'model.arpa.gz'} is scored with the kenlm module, which parses the whole "
        f"file at every start; KenLM's build_binary makes a binary model both read at once (build_binary "
        f"model.arpa.gz model.bin, then import model.bin)")
