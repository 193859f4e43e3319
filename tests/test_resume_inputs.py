"""A resumed `plexity run` never answers with results made from other input files: the run's record
(`LOGGING_DIR/plexity-settings.json`) knows the input files by name and size, and a file rewritten
under the same name since the completed tasks read it stops the re-run, naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import SAMPLE, completions, read_jsonl_dir, run_plexity, split_warc


def run(crawl: Path, out: Path, *options: str):
    return run_plexity("run", str(crawl), "--output-dir", str(out), "--tasks", "2", *options)


@pytest.fixture
def crawl(tmp_path) -> Path:
    """Two WARCs of different pages (one a task: `--tasks 2`), the second cut short as an interrupted copy
    leaves it."""
    folder = tmp_path / "crawl"
    split_warc(SAMPLE, tmp_path / "whole", 2)
    folder.mkdir()
    shutil.copy(tmp_path / "whole" / "shard-0.warc.gz", folder / "a.warc.gz")
    cut = (tmp_path / "whole" / "shard-1.warc.gz").read_bytes()
    (folder / "b.warc.gz").write_bytes(cut[: len(cut) // 3])
    return folder


def test_a_file_copied_again_whole_under_the_same_name_stops_the_re_run_naming_it(crawl, tmp_path):
    out = tmp_path / "run"
    first = run(crawl, out)
    assert first.returncode == 0, first.stderr[-2000:]
    from_cut = len(read_jsonl_dir(out / "documents"))
    cut_size = (crawl / "b.warc.gz").stat().st_size
    shutil.copy(tmp_path / "whole" / "shard-1.warc.gz", crawl / "b.warc.gz")  # (the copy done again, whole)
    whole_size = (crawl / "b.warc.gz").stat().st_size
    again = run(crawl, out)
    # Before: "2/2 tasks completed (0 in this run", exit 0, the cut file's few pages answered as the whole file's
    assert again.returncode == 2
    assert (f"holds the results of a run with other settings (input files rewritten since the completed tasks "
            f"read them: b.warc.gz {cut_size:,} -> {whole_size:,} bytes): give a new --output-dir, or add "
            f"--overwrite") in again.stderr.strip().splitlines()[-1]
    over = run(crawl, out, "--overwrite")
    assert over.returncode == 0 and "2/2 tasks completed (2 in this run" in over.stdout
    assert len(read_jsonl_dir(out / "documents")) > from_cut  # (the whole file's pages, this time)


def test_a_killed_run_is_not_resumed_on_a_rewritten_file(crawl, tmp_path):
    # (task 1 did not complete: killed, its marker never written; task 0 read a.warc.gz, rewritten since)
    out = tmp_path / "run"
    assert run(crawl, out).returncode == 0
    (out / "logs" / "completions" / "00001").unlink()
    shutil.copy(tmp_path / "whole" / "shard-1.warc.gz", crawl / "a.warc.gz")
    again = run(crawl, out)
    assert again.returncode == 2 and "input files rewritten since the completed tasks read them: a.warc.gz" in \
        again.stderr
    assert completions(out / "logs") == ["00000"]  # nothing ran


@pytest.mark.parametrize("copy", [shutil.copytree, lambda a, b: shutil.copytree(a, b, copy_function=shutil.copy)],
                         ids=["cp -p", "cp"])
def test_the_same_files_copied_anew_resume(crawl, tmp_path, copy):
    # (another modification time, the same sizes: the same files, as far as a listing tells)
    out = tmp_path / "run"
    assert run(crawl, out).returncode == 0
    copy(crawl, tmp_path / "copy")
    shutil.rmtree(crawl)
    (tmp_path / "copy").rename(crawl)
    again = run(crawl, out)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "2/2 tasks completed (0 in this run" in again.stdout


def test_an_older_record_without_the_sizes_is_compared_on_what_it_has_then_gains_them(crawl, tmp_path):
    out = tmp_path / "run"
    assert run(crawl, out).returncode == 0
    record = out / "logs" / "plexity-settings.json"
    older = json.loads(record.read_text())
    for step in older["steps"]:
        step.pop("input_file_sizes", None)
    record.write_text(json.dumps(older))
    resumed = run(crawl, out)  # (the same names and number of files: it resumes, as it did before)
    assert resumed.returncode == 0 and "(0 in this run" in resumed.stdout
    assert json.loads(record.read_text())["steps"][0]["input_file_sizes"] == {
        "a.warc.gz": (crawl / "a.warc.gz").stat().st_size, "b.warc.gz": (crawl / "b.warc.gz").stat().st_size}
    shutil.copy(tmp_path / "whole" / "shard-1.warc.gz", crawl / "b.warc.gz")  # (from now on, it is seen)
    assert run(crawl, out).returncode == 2


def test_many_rewritten_files_are_named_five_and_counted():
    from plexity_plugins.cleaning.settings_record import differences

    old = {"steps": [{"step": "WarcHtmlReader", "input_file_sizes": {f"{i}.warc.gz": 100 for i in range(8)}}]}
    new = {"steps": [{"step": "WarcHtmlReader", "input_file_sizes": {f"{i}.warc.gz": 200 for i in range(8)}}]}
    assert differences(old, new) == [
        "input files rewritten since the completed tasks read them: 0.warc.gz 100 -> 200 bytes, 1.warc.gz 100 -> "
        "200 bytes, 2.warc.gz 100 -> 200 bytes, 3.warc.gz 100 -> 200 bytes, 4.warc.gz 100 -> 200 bytes and 3 more"]


@pytest.mark.parametrize("where", ["local", "memory"])
@pytest.mark.parametrize("recursive, glob_pattern", [(True, None), (False, None), (True, "**/*.warc*"),
                                                     (True, ".gz"), (False, "*.warc.gz")])
def test_the_sizes_come_with_the_files_datatrove_reads_from_one_listing(tmp_path, where, recursive, glob_pattern):
    # (local and fsspec folders alike: the names are datatrove's list_files', in its order; no file is opened)
    from datatrove.io import get_datafolder

    from plexity_plugins.datatrove.run_settings import listed_files

    folder = get_datafolder(str(tmp_path) if where == "local" else f"memory://{tmp_path.name}")
    for name, size in (("a.warc.gz", 3), ("sub/b.warc.gz", 5), ("c.txt", 7)):
        with folder.open(name, "wb") as f:
            f.write(b"x" * size)
    listed = listed_files(folder, recursive=recursive, glob_pattern=glob_pattern)
    assert list(listed) == folder.list_files(recursive=recursive, glob_pattern=glob_pattern)
    assert all(listed[name] == {"a.warc.gz": 3, "sub/b.warc.gz": 5, "c.txt": 7}[name] for name in listed)


def test_a_datatrove_reader_of_jsonl_rewritten_under_the_same_name_stops_check_run_settings(tmp_path):
    # (datatrove's own reader and executor: the same record, by the files' names and sizes)
    import gzip

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import SettingsChanged, check_run_settings

    def write(name: str, texts: list[str]) -> None:
        with gzip.open(tmp_path / "in" / name, "wt") as f:
            f.writelines(json.dumps({"id": str(i), "text": text}) + "\n" for i, text in enumerate(texts))

    def executor() -> LocalPipelineExecutor:
        return LocalPipelineExecutor([JsonlReader(str(tmp_path / "in")), JsonlWriter(str(tmp_path / "out"))],
                                     tasks=2, logging_dir=str(tmp_path / "logs"))

    (tmp_path / "in").mkdir()
    write("a.jsonl.gz", ["The council met on Tuesday."])
    write("b.jsonl.gz", ["The library opens in spring."])
    first = executor()
    check_run_settings(first)
    first.run()
    check_run_settings(executor())  # (the same files: it resumes)
    write("b.jsonl.gz", ["The library opens in spring.", "A second page fetched since, in the same file."])
    with pytest.raises(SettingsChanged, match=r"input files rewritten since the completed tasks read them: "
                                              r"b\.jsonl\.gz \d+ -> \d+ bytes\): run into new output"):
        check_run_settings(executor())


def test_a_run_with_a_model_per_language_resumes_its_tasks_though_its_threshold_is_nan(tmp_path):
    # (a language map has no one threshold: NaN, which is not equal to itself; its tasks, comparing the record
    # with their settings, stopped with "threshold: nan -> nan")
    crawl = tmp_path / "crawl"
    split_warc(SAMPLE, crawl, 2)
    done = run(crawl, tmp_path / "run", "--model", "en=en-default", "--model", "de=en-default")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2/2 tasks completed (2 in this run" in done.stdout, done.stdout
