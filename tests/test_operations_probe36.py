"""A long run that meets trouble midway, as a data engineer meets it: an input file taken away while the run
reads the others, a run killed outright and then looked at with `plexity report`, a paused Scrapy crawl resumed
from its JOBDIR.  Whatever happened is said, nothing is lost unsaid, and the same command picks up where the
run stopped.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import PLEXITY, SAMPLE, completions, html_uris, read_jsonl_dir, split_warc

# A `plexity run` pipeline (tags extractor, 4 tasks, one a shard) whose task 0 moves shard-2 away at its first
# document, the first time only: a file deleted, or moved by a sync, while the run reads the others.
TAKE_A_FILE_AWAY = '''
import os, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, make_executor

shards, out, aside, workers = sys.argv[1:5]

class TakeAFileAway(PipelineStep):
    name = "take a file away"
    def __init__(self, shards, aside):
        super().__init__()
        self.shards, self.aside = shards, aside
    def run(self, data, rank=0, world_size=1):
        for n, doc in enumerate(data):
            if rank == 0 and n == 0 and not os.path.exists(self.aside):
                os.rename(os.path.join(self.shards, "shard-2.warc.gz"), self.aside)
            yield doc

pipeline = build_pipeline(shards, out, extractor="tags")
pipeline.insert(-1, TakeAFileAway(shards, aside))
try:
    make_executor(pipeline, "local", tasks=4, workers=int(workers), logging_dir=str(Path(out) / "logs")).run()
except Exception as exc:
    print(f"RUN FAILED: {type(exc).__name__}: {exc}", flush=True)
    sys.exit(1)
'''


def test_an_input_file_taken_away_midway_fails_the_tasks_after_naming_it_and_back_in_place_the_run_completes(
        tmp_path):
    """A run lists its input files as it starts and shares them among its tasks by their order.  A file deleted
    (or moved away by a sync) while the first task ran shifted the files of the tasks after it: the last task found
    none ("No files found ... for rank=3", a warning in the log), the file's records went to no task, and the run
    said "4/4 tasks completed", exit 0.  Now each task compares the files it finds with those its run listed: a task
    that finds them changed does not run, and the run fails naming the file; with the file back the same command
    runs those tasks, and every record is written exactly once."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 4)
    uris = html_uris(shards)
    out, aside = tmp_path / "out", tmp_path / "shard-2.aside"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(TAKE_A_FILE_AWAY))
    # (one worker: the tasks after the first start once it has taken the file away; with two, one of them may have
    # started, and read shard-2 whole, before)
    for workers in ("1",):
        command = [sys.executable, str(script), str(shards), str(out / workers), str(aside), workers]
        run = subprocess.run(command, capture_output=True, text=True, timeout=240)
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
        assert "RUN FAILED: " in run.stdout and "its input files changed since the run started (removed: " \
            "shard-2.warc.gz)" in run.stdout, run.stdout[-3000:]
        # (task 1 reads shard-1, as its run listed it; task 2's file is gone: it does not run, nor, with one worker,
        # those after it.  Each task took its files from a fresh listing, and the ones after shard-2's removal read
        # shard-3 and none: all stopped)
        assert completions(out / workers / "logs") == ["00000", "00001"]

        aside.rename(shards / "shard-2.warc.gz")  # back in place (and not taken again: the step does it once)
        aside.touch()
        again = subprocess.run(command, capture_output=True, text=True, timeout=240)
        aside.unlink()
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert completions(out / workers / "logs") == ["00000", "00001", "00002", "00003"]
        written = [d["metadata"]["url"] for d in read_jsonl_dir(out / workers / "documents")
                   + read_jsonl_dir(out / workers / "excluded")]
        assert sorted(written) == sorted(uris)  # every record exactly once


def test_a_run_resumed_without_a_file_it_listed_names_the_file_taken_away(tmp_path):
    """A run that completed a task, resumed after one of its input files was deleted, stopped saying only
    "input files: 2 -> 1; input files' names: sha256:... -> sha256:...": which file, it did not say.  Now the
    file is named."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(shards), "-o", str(out), "--extractor", "tags", "--tasks", "2"]
    assert subprocess.run(command, capture_output=True, text=True, timeout=240).returncode == 0
    (shards / "shard-1.warc.gz").unlink()
    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 2
    assert "input files taken away since the completed tasks' run listed them: shard-1.warc.gz" in again.stderr, \
        again.stderr[-2000:]


def _shards(folder: Path, shards: int, records: int) -> list[str]:
    """WARC shards of `records` 16 kB pages each (a task of 200 takes `plexity run` a second or so); their URIs."""
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    folder.mkdir()
    uris = []
    for s in range(shards):
        members = []
        for i in range(records):
            uris.append(f"http://t/{s}/{i}")
            body = page(*[f"{ARTICLE} Part {j} of {i}." for j in range(60)]).encode()
            members.append(gzip.compress(record_bytes(uris[-1], body)))
        (folder / f"shard-{s}.warc.gz").write_bytes(b"".join(members))
    return uris


def _report(folder: Path, html: Path) -> tuple[subprocess.CompletedProcess, str]:
    done = subprocess.run(PLEXITY + ["report", str(folder), "-o", str(html)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done, html.read_text()


def test_the_report_of_a_run_killed_midway_counts_its_completed_tasks_and_says_the_run_is_partial(tmp_path):
    """A `plexity run` killed outright (the out-of-memory killer, a node lost, kill -9) leaves its completed tasks'
    stats but no merged ``logs/stats.json`` (the run merges them as it ends): `plexity report` of it said "no
    plexity-stats.json (from `plexity clean`) or logs/stats.json (from `plexity run`)", and a report of a run whose
    task had failed showed the completed tasks' counts as the whole run's.  Now the report reads the tasks' own
    stats, says first that the run is partial (2 of 4 tasks, on stderr too), and after the same command completed
    the run it shows all of it, without that word."""
    import os
    import signal
    import time

    uris = _shards(tmp_path / "shards", 4, 200)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(tmp_path / "shards"), "-o", str(out), "--extractor", "tags", "--workers", "1",
                         "--min-chars", "0"]
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(completions(out / "logs")) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.02)
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    done_tasks = len(completions(out / "logs"))
    assert 2 <= done_tasks < 4 and not (out / "logs" / "stats.json").exists()

    said, page = _report(out, tmp_path / "partial.html")
    partial = f"this plexity run did not complete: {done_tasks} of 4 tasks completed, and these are their counts"
    assert partial in said.stderr and partial in page
    assert f'<tr data-count="records"><td>WARC records read</td><td class="n">{200 * done_tasks}</td>' in page

    assert subprocess.run(command, capture_output=True, text=True, timeout=240).returncode == 0
    said, page = _report(out, tmp_path / "whole.html")
    assert "did not complete" not in said.stderr + page and 'id="incomplete"' not in page
    assert f'<tr data-count="records"><td>WARC records read</td><td class="n">{len(uris)}</td>' in page
    assert "tasks completed</td><td class=\"n\">4 of 4" in page


def test_the_report_of_an_interrupted_plexity_clean_says_the_run_is_partial(tmp_path):
    """`plexity clean` stopped by Ctrl-C writes its stats with ``"completed": false``; `plexity report` of them
    showed the counts as a whole run's, the flag nowhere.  Now the report says first that the run did not
    complete, and so does the command, on stderr."""
    import os
    import signal
    import time

    _shards(tmp_path / "in", 3, 100)
    out = tmp_path / "cleaned"
    clean = subprocess.Popen(PLEXITY + ["clean", str(tmp_path / "in"), "-o", str(out), "--extractor", "tags"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and clean.poll() is None and not any(out.glob("*.warc.gz")):
            time.sleep(0.02)  # (one file cleaned, the others not)
        os.kill(clean.pid, signal.SIGINT)
        clean.communicate(timeout=60)
    finally:
        if clean.poll() is None:
            os.killpg(clean.pid, signal.SIGKILL)
    import json

    assert json.loads((out / "plexity-stats.json").read_text())["completed"] is False
    said, page = _report(out, tmp_path / "r.html")
    assert "this plexity clean run did not complete" in said.stderr and 'id="incomplete"' in page


PAGES_SPIDER = '''
import scrapy

class PagesSpider(scrapy.Spider):
    """The home page, then the pages it links to, one request at a time."""
    name = "pages"
    custom_settings = {"CONCURRENT_REQUESTS": 1}

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "html": response.text}
        for link in response.css("a::attr(href)").getall():
            yield response.follow(link)
'''


def test_a_paused_scrapy_crawl_resumed_from_its_jobdir_keeps_the_dropped_rows_of_its_first_part(tmp_path):
    """A crawl paused and resumed with Scrapy's JOBDIR (here stopped after 2 items, then run again with the same
    JOBDIR): its feed (``-o items.jsonl``) holds the items of both parts, but PLEXITY_DROPPED_FILE was written anew
    by the second part, and the dropped sentences of the pages the first part crawled were gone, unsaid.  Now the
    resumed crawl's file goes on after the first part's rows, and its log says it resumed and how many rows it
    kept."""
    import json

    from conftest import EXAMPLES

    sys.path.insert(0, str(EXAMPLES / "scrapy_project"))
    from demo_site import ARTICLES, BOILERPLATE, serve

    def page(links) -> bytes:
        return ("<html><body>" + "".join(f"<div>{line}</div>" for line in BOILERPLATE[:4])
                + "".join(f"<p>{line}</p>" for line in ARTICLES["/news/library.html"])
                + "".join(f'<a href="/p{j}">p{j}</a>' for j in links) + "</body></html>").encode()

    site = {"/": ("text/html; charset=utf-8", page(range(1, 5)))}
    site.update({f"/p{j}": ("text/html; charset=utf-8", page([])) for j in range(1, 5)})
    (tmp_path / "spider.py").write_text(PAGES_SPIDER, encoding="utf-8")
    with serve(site) as base:
        logs = []
        for part in (["-s", "CLOSESPIDER_ITEMCOUNT=2"], []):  # (paused after 2 items; then resumed)
            crawl = subprocess.run(
                [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}", "-o", "items.jsonl",
                 "-s", "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}", "-s", "PLEXITY_EXTRACTOR=tags",
                 "-s", "JOBDIR=job", "-s", "PLEXITY_DROPPED_FILE=dropped.jsonl", "-s", "TELNETCONSOLE_ENABLED=False",
                 *part], cwd=tmp_path, capture_output=True, text=True, timeout=180)
            assert crawl.returncode == 0, crawl.stderr[-3000:]
            logs.append(crawl.stderr)
            if not part:
                break
            first = (tmp_path / "dropped.jsonl").read_text(encoding="utf-8").splitlines()
    items = {json.loads(line)["url"] for line in (tmp_path / "items.jsonl").read_text().splitlines()}
    assert len(items) == 5  # (the feed: both parts' items)
    rows = (tmp_path / "dropped.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows[:len(first)] == first  # the first part's rows, then the second's
    assert {json.loads(row)["source"] for row in rows} == items  # every crawled page's dropped sentences
    assert "resuming" not in logs[0]
    assert (f"plexity: resuming the crawl recorded in JOBDIR job; PLEXITY_DROPPED_FILE dropped.jsonl goes on after "
            f"the {len(first)} row(s) of its earlier part") in logs[1]


def test_a_completed_tasks_output_deleted_since_is_written_again_by_the_same_command(tmp_path):
    """A run's output file deleted after its task completed (a cleanup, a folder removed while the run went on, a
    sync that took it): the same command said "4 already completed ... 4/4 tasks completed", exit 0, and the
    summary counted the task's documents, which were nowhere.  Now a resumed run finds the completed tasks whose
    stats say they wrote documents and whose file is gone, says so, and runs them again: every record once."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 3)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(shards), "-o", str(out), "--extractor", "tags", "--workers", "1"]
    assert subprocess.run(command, capture_output=True, text=True, timeout=240).returncode == 0
    (out / "documents" / "00001.jsonl.gz").unlink()

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (f"plexity run: warning: 1 completed task(s) have no output file any more, though their stats say they "
            f"wrote documents: task 1 ({out / 'documents'}); they run again") in again.stderr
    assert "2 already completed" in again.stdout and "3/3 tasks completed (1 in this run" in again.stdout
    written = [d["metadata"]["url"] for d in read_jsonl_dir(out / "documents") + read_jsonl_dir(out / "excluded")]
    assert sorted(written) == sorted(html_uris(shards))  # every record exactly once

    quiet = subprocess.run(command, capture_output=True, text=True, timeout=240)  # (nothing gone: nothing said)
    assert quiet.returncode == 0 and "no output file" not in quiet.stderr and "3 already completed" in quiet.stdout


def test_a_disk_that_fills_up_as_tasks_close_their_files_leaves_no_cut_file_marked_complete(tmp_path, disk_of):
    """The output disk filled up (a real tmpfs of 52 kB) while two tasks wrote their gzipped JSON lines: the task
    that closed its file last had its last buffered bytes (the gzip trailer among them) written only after the file
    had its name and the task its completion marker, and that write failed unsaid: a completed task's
    ``00001.jsonl.gz`` ended 45,056 bytes in, cut (``gzip: unexpected end of file``), and the re-run, finding it
    complete, never wrote it again.  Now a file's last bytes reach the disk before it is named: the task that
    cannot write them fails on the full disk, and the re-run, with room, writes every record exactly once."""
    import gzip
    import json

    uris = _shards(tmp_path / "shards", 4, 100)
    disk = disk_of("52k").path
    command = PLEXITY + ["run", str(tmp_path / "shards"), "-o", str(disk / "out"), "--logging-dir",
                         str(tmp_path / "logs"), "--extractor", "tags", "--workers", "2", "--min-chars", "0"]
    full = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert full.returncode == 4, full.stderr[-3000:]
    done = completions(tmp_path / "logs")
    assert len(done) < 4
    for path in sorted((disk / "out" / "documents").glob("*.jsonl.gz")):  # every file under its name is whole
        assert path.name.removesuffix(".jsonl.gz") in done
        with gzip.open(path, "rt") as f:
            assert len([json.loads(line) for line in f]) == 100, path.name

    subprocess.run(["mount", "-o", "remount,size=20m", str(disk)], check=True)
    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    written = [d["metadata"]["url"] for d in read_jsonl_dir(disk / "out" / "documents")]
    assert sorted(written) == sorted(uris)
