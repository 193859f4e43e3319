"""A full disk, for real (a small tmpfs filled up), in every front end that writes files.

What must hold: the command stops with one line saying the disk is full and a non-zero
status (4), no traceback; no output is left under its final name unless it is whole
(`plexity_plugins.io.atomic_files`: written as ``.NAME.part``, renamed when complete);
``plexity-stats.json`` is either absent or says ``"completed": false``, never a 0-byte file;
the same command again, with room, completes and leaves no temporary file.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from helpers import SAMPLE, split_warc

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
SENTENCES = ["The council approved the budget for the new library on Tuesday.",
             "The library will open in the spring and will stay open late on weekdays.",
             "Residents asked the council about the road to the river.",
             "Work on the site is expected to start next month."]


def article_warc(path: Path, pages: int, paragraphs: int = 20) -> None:
    """`pages` HTML responses of real sentences (each record its own gzip member if .gz)."""
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=path.name.endswith(".gz"))
        for n in range(pages):
            body = "<html><body>" + "".join(
                f"<p>{SENTENCES[(n + i) % 4]} {SENTENCES[(n + 2 * i) % 4]} Page {n}, part {i}.</p>"
                for i in range(paragraphs)) + "</body></html>"
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"http://example.com/{n}", "response",
                                                          payload=io.BytesIO(body.encode()), http_headers=http))


def files_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def one_error_line(stderr: str, command: str) -> str:
    """The single ``plexity <command>: error:`` line; nothing else that looks like a failure."""
    assert "Traceback" not in stderr and "Logging error" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith(f"plexity {command}: error:")]
    assert len(errors) == 1, stderr[-3000:]
    assert "no space left on device" in errors[0]
    return errors[0]


# -- plexity clean -------------------------------------------------------------------------

def test_plexity_clean_on_a_disk_that_fills_up_leaves_no_output_that_looks_complete(tmp_path, disk_of):
    inputs = tmp_path / "in"
    inputs.mkdir()
    article_warc(inputs / "a.warc", 150)  # ~0.7 MB of cleaned WARC: more than the disk holds
    article_warc(inputs / "b.warc.gz", 150)
    (inputs / "page.html").write_text("<p>" + " ".join(SENTENCES) + "</p>")
    disk = disk_of("256k")
    out = disk.path / "out"
    command = PLEXITY + ["clean", str(inputs), "-o", str(out), "-q", "--extractor", "tags", "--write-dropped"]

    full = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert full.returncode == 4
    one_error_line(full.stderr, "clean")
    # no cleaned WARC cut short under its name, no dropped log, no temporary file left behind
    assert files_under(out) == ["plexity-stats.json"]
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is False

    disk.resize("20m")
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert files_under(out) == ["a.warc", "b.warc.gz", "page.html.txt", "plexity-dropped.jsonl",
                                "plexity-stats.json"]
    assert json.loads((out / "plexity-stats.json").read_text())["completed"] is True
    with open(out / "a.warc", "rb") as f:
        assert sum(1 for _ in ArchiveIterator(f)) == 150


def test_plexity_clean_on_a_disk_full_from_the_start_writes_no_stats_rather_than_an_empty_file(tmp_path,
                                                                                                small_disk):
    page = tmp_path / "page.html"
    page.write_text("<p>" + " ".join(SENTENCES) + "</p>")
    out = small_disk / "out"
    done = subprocess.run(PLEXITY + ["clean", str(page), "-o", str(out), "-q"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 4
    one_error_line(done.stderr, "clean")
    assert files_under(out) == []  # not even a 0-byte plexity-stats.json



@pytest.mark.parametrize("command", [["models"], ["score", "-"]])
def test_a_command_that_writes_only_its_standard_output_to_a_full_disk_says_that_is_where(command):
    """`plexity models > FILE` or `plexity score - > FILE` on a full disk said "choose another output
    directory", an option those commands do not have: the line names the standard output."""
    with open("/dev/full", "w") as full:  # (every write to it fails with ENOSPC)
        done = subprocess.run(PLEXITY + command, input=SENTENCES[0] + "\n", stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 4
    line = one_error_line(done.stderr, command[0])
    assert "(writing the standard output): free some space or send the output elsewhere" in line, line
    assert "output directory" not in line

# -- plexity run ------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_plexity_run_with_its_logs_on_a_full_disk_says_so_in_one_line(tmp_path, small_disk, workers):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    command = PLEXITY + ["run", str(shards), "--output-dir", str(out), "--logging-dir", str(small_disk / "logs"),
                         "--extractor", "tags", "--workers", str(workers)]
    full = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert full.returncode == 4
    # (the run's settings are recorded there first: it stops before any task starts)
    assert one_error_line(full.stderr, "run") == ("plexity run: error: no space left on device: free some space or "
                                                  "choose another output directory, then run the same command again")
    assert len(full.stderr.splitlines()) < 40  # (was 746 lines and 24 tracebacks)
    assert not (out / "documents").exists() or files_under(out / "documents") == []


def test_plexity_run_s_writers_name_a_file_only_when_the_step_ended_well(tmp_path):
    from datatrove.data import Document

    from plexity_plugins.datatrove.writers import JsonlDocumentWriter, WarcResponseWriter

    for writer_class, name in ((JsonlDocumentWriter, "00000.jsonl.gz"), (WarcResponseWriter, "00000.warc.gz")):
        folder = tmp_path / writer_class.__name__
        docs = [Document(text=f"text {n}", id=f"d{n}", metadata={"url": f"http://x/{n}"}) for n in range(3)]

        def failing():
            yield from docs
            raise OSError(28, "No space left on device")

        with pytest.raises(OSError):
            list(writer_class(str(folder)).run(failing()))
        assert files_under(folder) == []  # neither the half file nor its temporary name

        list(writer_class(str(folder)).run(iter(docs)))
        assert files_under(folder) == [name]


# -- the Scrapy pipeline -----------------------------------------------------------------------

def test_the_scrapy_pipeline_s_dropped_file_on_a_full_disk_closes_the_crawl_in_one_line(tmp_path, disk_of,
                                                                                         caplog):
    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    disk = disk_of("64k")
    dropped = disk.path / "dropped.jsonl"
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                         "PLEXITY_DROPPED_FILE": str(dropped)})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    disk.fill()
    page = ("<html><body>" + "".join(f"<div>Home | News | Sport {n}</div>" for n in range(400))
            + "<p>" + " ".join(SENTENCES) + "</p></body></html>")
    with caplog.at_level("ERROR", logger="plexity_plugins.scrapy"):
        for n in range(5):  # each drops ~400 sentences: the log's buffer reaches the disk
            item = asyncio.run(pipeline.process_item({"url": f"http://x/{n}", "html": page}))
            assert "library" in item["text"]  # the item itself is cleaned as ever
        with pytest.raises(DropItem):
            asyncio.run(pipeline.process_item({"url": "http://x/empty", "html": "<p></p>"}))
        pipeline.close_spider()
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "no space left on device" in errors[0] and "dropped.jsonl was not written" \
        in errors[0]
    assert crawler.stats.get_value("plexity/disk_full")
    assert files_under(disk.path) == ["filler"]  # no dropped file that looks complete
