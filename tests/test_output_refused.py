"""An output the system refuses to write (a read-only file system, no permission) is said in one line
by every front end: what could not be written and why, and what to do; not the system's
"[Errno 30] Read-only file system: 'out'"."""

from __future__ import annotations

import pytest

from helpers import SAMPLE, run_plexity

READ_ONLY = "read-only file system: choose an output on another file system"


@pytest.mark.parametrize("command", [["clean", str(SAMPLE), "--output-dir", "{disk}/out"],
                                     ["run", str(SAMPLE), "--output-dir", "{disk}/out"],
                                     ["run", str(SAMPLE), "--output-dir", "{tmp}/out", "--logging-dir", "{disk}/logs"]],
                         ids=["clean", "run", "run-logs"])
def test_the_cli_names_the_output_it_cannot_write_and_why(read_only_disk, tmp_path, command):
    args = [word.format(disk=read_only_disk, tmp=tmp_path) for word in command]
    result = run_plexity(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity {command[0]}: error: cannot write {args[-1]}: {READ_ONLY}"]


@pytest.mark.parametrize("command, option, folder", [
    (["clean", str(SAMPLE), "-o", "/proc/x"], "--output-dir", "/proc/x"),
    (["run", str(SAMPLE), "-o", "/proc/x/out"], "--output-dir", "/proc/x/out"),
    (["run", str(SAMPLE), "-o", "{tmp}/out", "--logging-dir", "/proc/x"], "--logging-dir", "/proc/x")],
    ids=["clean", "run", "run-logs"])
def test_an_output_folder_that_cannot_be_made_is_named_with_why(tmp_path, command, option, folder):
    # Before: "plexity run: error: [Errno 2] No such file or directory: '/proc/x'": not which option, nor why
    # (/proc takes no new folder: mkdir says ENOENT there, though /proc is)
    result = run_plexity(*[word.format(tmp=tmp_path) for word in command])
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"plexity {command[0]}: error: {option} {folder} cannot be made: /proc takes no new folder (making /proc/x: "
        f"no such file or directory): choose another {option}"]


def test_the_report_names_the_file_it_cannot_write(read_only_disk, tmp_path):
    cleaned = run_plexity("clean", str(SAMPLE), "--output-dir", str(tmp_path / "cleaned"), "--quiet")
    assert cleaned.returncode == 0, cleaned.stderr
    result = run_plexity("report", str(tmp_path / "cleaned"), "-o", str(read_only_disk / "report.html"))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"plexity report: error: cannot write {read_only_disk}/report.png: "
                                          f"{READ_ONLY}"]


def test_a_datatrove_task_whose_output_is_refused_stops_with_one_line(read_only_disk, tmp_path):
    from plexity_plugins.datatrove import HtmlTagsExtractor, JsonlDocumentWriter, LocalTaskExecutor, WarcHtmlReader
    from plexity_plugins.errors import OutputNotWritable

    executor = LocalTaskExecutor([WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name, limit=3),
                                  HtmlTagsExtractor(), JsonlDocumentWriter(str(read_only_disk / "out"))],
                                 tasks=1, logging_dir=str(tmp_path / "logs"))
    with pytest.raises(OutputNotWritable) as raised:
        executor.run()
    line = f"cannot write {read_only_disk / 'out'}: {READ_ONLY}"
    assert str(raised.value) == f"task 0: {line}"
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert log.rstrip().endswith(line) and "Traceback" not in log  # (datatrove's own: the system's words, traced)


def test_a_scrapy_dropped_file_in_a_read_only_folder_stops_the_crawl_before_it_starts(read_only_disk):
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    # (it failed at the first dropped item, with the system's words and a traceback)
    path = read_only_disk / "dropped.jsonl"
    with pytest.raises(PlexitySettingError) as raised:
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_DROPPED_FILE": str(path)}))
    assert str(raised.value) == f"PLEXITY_DROPPED_FILE is {str(path)!r}: cannot write {read_only_disk}: {READ_ONLY}"


def test_an_output_file_whose_name_a_folder_has_fails_its_task_naming_it_and_loses_nothing(tmp_path):
    """documents/00000.jsonl.gz made a folder (a copy gone wrong, a user's own): before, the task's file was moved
    into that folder as .00000.jsonl.gz.part and the task marked complete, its documents lost unsaid.  Now the task
    fails naming the file, and once the folder is moved away the same command writes it."""
    out = tmp_path / "out"
    (out / "documents" / "00000.jsonl.gz").mkdir(parents=True)
    first = run_plexity("run", str(SAMPLE), "--output-dir", str(out), "--extractor", "tags")
    assert first.returncode == 1, first.stderr[-2000:]
    assert (f"cannot write {out}/documents/00000.jsonl.gz: is a directory: a folder has that name: move it away, or "
            f"choose another output") in first.stderr.splitlines()[-1]
    assert list((out / "documents" / "00000.jsonl.gz").iterdir()) == []
    (out / "documents" / "00000.jsonl.gz").rmdir()
    again = run_plexity("run", str(SAMPLE), "--output-dir", str(out), "--extractor", "tags")
    assert again.returncode == 0, again.stderr[-2000:]
    assert (out / "documents" / "00000.jsonl.gz").is_file()


def test_plexity_clean_names_the_folder_that_has_its_output_file_s_name(tmp_path):
    """Before: "[Errno 21] Is a directory: '.../.sample.warc.gz.part' -> '.../sample.warc.gz'"."""
    (tmp_path / "out" / "sample.warc.gz").mkdir(parents=True)
    result = run_plexity("clean", str(SAMPLE), "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"plexity clean: error: cannot write {tmp_path}/out/sample.warc.gz: is a directory: a folder has that name: "
        f"move it away, or choose another output")
