"""A corpus at scale on one machine: what grows with the number of input files and tasks, and a long read said.

Shapes at small n (operations counted, never timed): no task lists the input folder (the run does, as it starts); a
worker keeps one extraction child for its tasks; a file read for long says how far it is."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import fsspec.implementations.local
from datatrove.pipeline.writers import JsonlWriter
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from plexity_plugins.datatrove import LocalTaskExecutor, WarcHtmlReader
from plexity_plugins.datatrove.extractors import _PlexityExtractor
from plexity_plugins.extractors import sandbox
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor, kept_between_uses

PAGE = b"<html><body><p>The council approved the budget for the new library on Tuesday.</p></body></html>"


def write_warcs(folder: Path, files: int, records: int = 1) -> None:
    folder.mkdir(parents=True)
    for i in range(files):
        with open(folder / f"f{i:03d}.warc.gz", "wb") as f:
            writer = WARCWriter(f, gzip=True)
            for j in range(records):
                status = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(f"http://t/{folder.name}/{i}/{j}", "response",
                                                              payload=io.BytesIO(PAGE), http_headers=status))


def listings_of(folder: Path, tmp_path: Path, monkeypatch, name: str) -> int:
    """How many times a run of one task per file lists `folder` itself (fsspec's local ``ls`` of it)."""
    calls = []
    ls = fsspec.implementations.local.LocalFileSystem.ls

    def counted(self, path, *args, **kwargs):
        if str(path).rstrip("/") == str(folder):
            calls.append(path)
        return ls(self, path, *args, **kwargs)

    monkeypatch.setattr(fsspec.implementations.local.LocalFileSystem, "ls", counted)
    tasks = len(list(folder.iterdir()))
    executor = LocalTaskExecutor([WarcHtmlReader(str(folder)), JsonlWriter(str(tmp_path / f"{name}-out"))],
                                 tasks=tasks, workers=1, logging_dir=str(tmp_path / f"{name}-logs"))
    executor.run()
    assert len(list((tmp_path / f"{name}-logs" / "completions").iterdir())) == tasks
    monkeypatch.undo()
    return len(calls)


def test_a_task_lists_the_input_folder_once(tmp_path, monkeypatch):
    """Each task listed the whole input folder twice (its check that the files are the run's, then datatrove's
    reader for its shard): with one task per file, plexity run's default, 2·n² entries (3,000 files: 18 million
    stats; 10,000 files ~0.2 s a task).  The reader now takes its shard from the check's listing."""
    write_warcs(tmp_path / "three", 3)
    write_warcs(tmp_path / "six", 6)
    three = listings_of(tmp_path / "three", tmp_path, monkeypatch, "three")
    six = listings_of(tmp_path / "six", tmp_path, monkeypatch, "six")
    assert six - three <= 3, (three, six)  # one listing per task more (it was two)


def test_the_shard_from_the_check_is_datatroves(tmp_path):
    """The shards taken from the check's listing are those datatrove's own listing gives: every record read once."""
    write_warcs(tmp_path / "in" / "a", 4, records=2)
    write_warcs(tmp_path / "in" / "b" / "c", 3, records=1)
    executor = LocalTaskExecutor([WarcHtmlReader(str(tmp_path / "in")), JsonlWriter(str(tmp_path / "out"))],
                                 tasks=3, workers=1, logging_dir=str(tmp_path / "logs"))
    executor.run()
    urls = [json.loads(line)["metadata"]["url"] for f in sorted((tmp_path / "out").glob("*.jsonl.gz"))
            for line in gzip.open(f, "rt")]
    assert len(urls) == len(set(urls)) == 11


def test_a_file_read_for_long_says_how_far_it_is(tmp_path):
    """A task said nothing between its start and its end: a 1 GB WARC read for minutes without a line.  It says its
    records and how far into the file it is, every `progress_seconds` (60 by default)."""
    from datatrove.utils.logging import logger

    write_warcs(tmp_path / "in", 1, records=5)
    reader = WarcHtmlReader(str(tmp_path / "in"))
    reader.progress_seconds = 0
    lines = []
    handler = logger.add(lambda message: lines.append(str(message)), level="INFO", format="{message}")
    try:
        documents = list(reader.run())
    finally:
        logger.remove(handler)
    assert len(documents) == 5
    said = [line for line in lines if line.startswith("reading f000.warc.gz")]
    assert len(said) == 5 and "5 records" in said[-1] and "(100%)" in said[-1], lines


def test_many_small_files_one_task_each_are_said_with_the_tasks_to_give(tmp_path):
    """One task per file, the default, on 1,000 WARC files of 2 pages: 161 s (187 s of CPU), against 14 s as 20
    tasks; said as the run starts, with a --tasks to give.  Not for fewer files, nor for large ones."""
    from plexity_plugins.cli.run import small_files_note

    write_warcs(tmp_path / "small", 120)
    small = sorted(str(p) for p in (tmp_path / "small").iterdir())
    note = small_files_note(small, workers=2)
    assert note and note.startswith("120 WARC files of 0 kB on average") and "--tasks 8 " in note, note
    assert small_files_note(small[:99], workers=2) is None
    (tmp_path / "large").mkdir()
    for i in range(120):
        with open(tmp_path / "large" / f"f{i}.warc", "wb") as f:
            f.truncate(9_000_000)  # (sparse: no disk used)
    assert small_files_note(sorted(str(p) for p in (tmp_path / "large").iterdir()), workers=2) is None


def test_plexity_clean_says_how_far_into_a_long_warc_it_is(tmp_path, capsys):
    """plexity clean's bar moves by files: a 1 GB WARC (7 minutes) held it still, and off a terminal (a log file)
    nothing was said until the summary.  It says the records read and how far into the file, every 60 s."""
    from plexity_plugins.cleaning.files import FileCleaner, collect_inputs
    from plexity_plugins.scoring.scorer import PerplexityScorer

    write_warcs(tmp_path / "in", 1, records=3)
    cleaner = FileCleaner(PerplexityScorer(), tmp_path / "clean", extractor="tags", min_chars=0)
    cleaner.progress_seconds = 0
    stats = cleaner.run(collect_inputs([tmp_path / "in"], tmp_path / "clean"))
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("plexity clean: reading ")]
    assert stats.records == 3 and len(said) == 3, said
    assert said[-1].endswith("f000.warc.gz: 3 records, 0 of 0 MB (100%) in 0 s"), said


def test_more_tasks_than_files_is_said(tmp_path):
    """--tasks 50 on one WARC: 49 tasks read nothing, each at a task's start (~0.19 s of CPU: 25 s against 16 s for
    a 30,000-record WARC), said only as "No files found" in each one's own log.  The run says it as it starts."""
    from helpers import run_plexity

    write_warcs(tmp_path / "in", 1)
    done = run_plexity("run", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--tasks", "2", "--workers", "1",
                       "--extractor", "tags")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "plexity run: note: --tasks 2 for 1 WARC file(s): a task reads whole files, so 1 of the tasks read " \
           "nothing" in done.stderr, done.stderr[-3000:]


def test_overwrite_into_a_copied_output_folder_leaves_the_original_s_logs(tmp_path):
    """`cp -r out out2`, then `plexity run ... -o out2 --overwrite`: the copy's record of the logging folder of the
    run that last wrote there named out/logs, and --overwrite deleted the original's logs, stats and completion
    markers (met measuring --overwrite on a copy of a 1,000-task run)."""
    import shutil

    from helpers import run_plexity

    write_warcs(tmp_path / "in", 1)
    run = ("run", str(tmp_path / "in"), "--workers", "1", "--extractor", "tags")
    first = run_plexity(*run, "-o", str(tmp_path / "out"))
    assert first.returncode == 0, first.stderr[-2000:]
    shutil.copytree(tmp_path / "out", tmp_path / "out2")
    again = run_plexity(*run, "-o", str(tmp_path / "out2"), "--overwrite")
    assert again.returncode == 0, again.stderr[-2000:]
    shutil.copytree(tmp_path / "out", tmp_path / "out3")  # (its record as the versions before wrote it: one line)
    (tmp_path / "out3" / ".plexity-logging-dir").write_text(f"{tmp_path / 'out' / 'logs'}\n")
    third = run_plexity(*run, "-o", str(tmp_path / "out3"), "--overwrite")
    assert third.returncode == 0, third.stderr[-2000:]
    assert [p.name for p in (tmp_path / "out" / "logs" / "completions").iterdir()] == ["00000"]
    assert (tmp_path / "out" / "logs" / "stats.json").is_file()


def _child_pid(html: str) -> str:
    """An extractor that answers with the pid of the process that runs it (module level: the child imports it)."""
    import os

    return f"extracted in {os.getpid()}"


class _PidExtractor(_PlexityExtractor):
    name = "the extraction child's pid"
    to_text = staticmethod(_child_pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_worker_keeps_its_extraction_child_from_task_to_task(tmp_path):
    """Each task of a local run started its own process and its own extraction child, and checked it on a small page
    (~0.19 s of CPU a task: 1,000 small files, one task each, 177 s of CPU).  The tasks now run one after another in
    at most `workers` worker processes, each keeping one extraction child for its tasks: 8 tasks, 2 workers, 2
    children at most (it was 8), none left once the run is over; every record written once."""
    write_warcs(tmp_path / "in", 8)
    executor = LocalTaskExecutor([WarcHtmlReader(str(tmp_path / "in")), _PidExtractor(timeout=20),
                                  JsonlWriter(str(tmp_path / "out"))],
                                 tasks=8, workers=2, logging_dir=str(tmp_path / "logs"))
    executor.run()
    texts = [json.loads(line)["text"] for f in sorted((tmp_path / "out").glob("*.jsonl.gz"))
             for line in gzip.open(f, "rt")]
    assert len(texts) == 8 and len(list((tmp_path / "logs" / "completions").iterdir())) == 8
    children = {int(text.rsplit(" ", 1)[1]) for text in texts}
    assert 1 <= len(children) <= 2, children
    assert not [pid for pid in children if _alive(pid)], children  # (each ended with its worker)
    assert not kept_between_uses()  # (this process, a library user's, keeps none: its steps end theirs)
    assert not sandbox._set_aside


def test_a_child_kept_is_taken_only_by_an_extractor_of_the_same_settings(tmp_path):
    """A child set aside is taken by the next extractor of the same extractor, time limit and memory ceiling; one of
    other settings ends it and starts its own, and so does one that finds it dead."""
    first = TimeLimitedExtractor("tags", timeout=10)
    first.warm_up()
    kept = first._children[0].process
    first.close(set_aside=True)
    same = TimeLimitedExtractor("tags", timeout=10)
    assert same("<p>one</p>") == "one" and same._children[0].process is kept
    same.close(set_aside=True)
    other = TimeLimitedExtractor("tags", timeout=11)
    assert other("<p>two</p>") == "two" and other._children[0].process is not kept
    kept.wait(5)  # (ended, not left idle)
    other.close(set_aside=True)
    dead = next(iter(sandbox._set_aside.values()))
    dead.process.kill()
    dead.process.wait(5)
    again = TimeLimitedExtractor("tags", timeout=11)
    assert again("<p>three</p>") == "three" and again._children[0].process is not dead.process
    again.close()
    assert not sandbox._set_aside


def test_a_task_looks_at_its_own_files_not_the_whole_folder(tmp_path, monkeypatch):
    """Each task listed the whole input folder to check that its files were the run's: with one task per file,
    ~9 µs × n² (10,000 files: ~15 min of CPU).  A task of a local folder read by WarcHtmlReader now takes the run's
    own listing, recorded as it started, and looks only at its own files: no listing of the folder by any task (the
    run lists it as it starts), and a file of its own taken away or rewritten since still stops it, named."""
    from plexity_plugins.datatrove.run_settings import changed_task_inputs, run_settings

    write_warcs(tmp_path / "six", 6)
    assert listings_of(tmp_path / "six", tmp_path, monkeypatch, "six") <= 2  # (the run's, as it starts; was 2 + 6)
    reader = WarcHtmlReader(str(tmp_path / "six"))
    settings = run_settings([reader], 3, True)
    (tmp_path / "six" / "f004.warc.gz").unlink()  # (task 1's: f001, f004)
    with open(tmp_path / "six" / "f002.warc.gz", "ab") as f:  # (task 2's: f002, f005)
        f.write(b"more")
    (tmp_path / "six" / "f009.warc.gz").write_bytes(b"")  # (added: no task's; the run's re-run finds it)
    assert changed_task_inputs([reader], settings, 0, 3) == []
    assert changed_task_inputs([reader], settings, 1, 3) == ["removed: f004.warc.gz"]
    assert changed_task_inputs([reader], settings, 2, 3)[0].startswith("rewritten: f002.warc.gz ")
    reader = WarcHtmlReader(str(tmp_path / "six"))
    assert changed_task_inputs([reader], settings, 0, 3) == [] and reader._listing[0::3] == ["f000.warc.gz",
                                                                                            "f003.warc.gz"]
