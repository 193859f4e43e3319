"""Inputs given as http:// URLs, served badly: a server on 127.0.0.1 that stalls, resets, sends fewer bytes than
it says, answers 503 once, or does not answer ranges (`plexity_plugins.datatrove.remote_files`).

Each failure of the server is a task failure whose line names the URL, the byte and what happened, and the
re-run reads again exactly what was lost; a password in the input URL is shown nowhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from bad_http_server import read_all, serve, warc_with_big_first_record  # noqa: E402,F401 - (serve: a fixture)
from plexity_plugins.errors import ReadError  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins"]


def plexity_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(PLEXITY + ["run", *args, "--extractor", "tags"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_a_warc_over_5_mib_from_a_server_that_answers_no_range_is_read_whole(serve, tmp_path):
    """Python's http.server (docs/ray.md's example) answers no range.  Before: fsspec read a file in 5 MiB ranges,
    and every task of a file over 5 MiB failed at its second, "ValueError: The HTTP server doesn't appear to
    support range requests" (naming no file; a re-run did the same).  Now the file is read as one stream."""
    warc_with_big_first_record(tmp_path / "big.warc.gz", 6 * 2**20)
    url = serve({"big.warc.gz": (tmp_path / "big.warc.gz", "norange")})
    documents, stats = read_all(url + "big.warc.gz")
    assert documents == 1 and stats["skipped_not_html"] == 1 and stats["records"] == 2


def test_a_server_that_stalls_mid_body_fails_the_task_after_remote_timeout_naming_the_stall(serve, tmp_path):
    """Headers and half the WARC, then nothing, the connection open.  Before: the task waited 300 s (aiohttp's
    limit on a whole request, which no option of plexity run set; a slow server that never stalled failed the
    same way), then failed naming no file.  Now --remote-timeout (default 60 s) ends it, in one line."""
    url = serve({"a.warc.gz": (SAMPLE, "stall")}) + "a.warc.gz"
    proc = plexity_run(url, "-o", str(tmp_path / "out"), "--remote-timeout", "1")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1] == (
        f"plexity run: 1 task(s) did not complete (ReadError: {url}: reading stopped at byte 26,685: the server sent "
        f"nothing for 1 s (stalled; the reader's remote_timeout, plexity run --remote-timeout)); re-run the same "
        f"command to run only those")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("mode, what", [("reset", "the connection was reset"),
                                        ("short", "the connection ended before the response did (fewer bytes than "
                                                  "its Content-Length)")])
def test_a_reset_or_a_short_body_is_a_read_error_naming_the_url_and_what_happened(serve, mode, what):
    """Before: aiohttp's words, naming no file: "ClientPayloadError: Response payload is not completed:
    <ContentLengthError: 400, message='Not enough data ...'>" (no HTTP 400 was ever answered).  Now a
    `ReadError` (the task fails, a re-run reads the file again) that says which URL and what happened."""
    url = serve({"a.warc.gz": (SAMPLE, mode)}) + "a.warc.gz"
    with pytest.raises(ReadError) as raised:
        read_all(url)
    assert re.fullmatch(rf"{re.escape(url)}: reading stopped at byte [\d,]+: {re.escape(what)}", str(raised.value))


def test_a_503_for_one_file_of_two_fails_its_task_and_the_rerun_reads_exactly_it(serve, tmp_path):
    """One file of two answered 503, then served.  Its task fails naming the URL and the answer; the same command
    again runs that task only, and the run's records are those of both files."""
    url = serve({"a.warc.gz": (SAMPLE, "ok"), "b.warc.gz": (SAMPLE, "503-once")})
    out = tmp_path / "out"
    first = plexity_run(url, "-o", str(out))
    assert first.returncode == 1, first.stderr[-2000:]
    assert f"(task 1: ReadError: {url}b.warc.gz: cannot open it at byte 0: the server answered 503 Service " \
           f"Unavailable)" in first.stderr.splitlines()[-1]  # (before: "its worker process exited with status 1")
    assert "1/2 tasks completed" in first.stdout
    again = plexity_run(url, "-o", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "2/2 tasks completed (1 in this run" in again.stdout
    stats = json.loads((out / "logs" / "stats.json").read_text())
    reader = next(step for step in stats if step["name"].startswith("📖"))
    assert reader["stats"]["records"]["total"] == 2 * 27


def test_a_password_in_the_input_url_is_shown_and_recorded_nowhere(serve, tmp_path):
    """http://user:password@host/...: before, executor.json and plexity-settings.json held the password, and a
    failed task's traceback (its variables) printed it.  Now it is written ``***`` everywhere."""
    url = serve({"a.warc.gz": (SAMPLE, "ok"), "b.warc.gz": (SAMPLE, "stall")}).replace("//", "//reader:pw-9f3a@")
    out = tmp_path / "out"
    proc = plexity_run(url, "-o", str(out), "--remote-timeout", "1")
    assert proc.returncode == 1
    assert "reader:***@127.0.0.1" in proc.stderr
    assert "pw-9f3a" not in proc.stdout + proc.stderr
    written = [p for p in out.rglob("*") if p.is_file() and b"pw-9f3a" in p.read_bytes()]
    assert written == []
    assert (out / "logs" / "executor.json").is_file() and (out / "logs" / "plexity-settings.json").is_file()


def test_a_slow_server_that_never_stalls_is_read_to_the_end(serve):
    """8 kB every 0.2 s: the whole file takes longer than remote_timeout, each wait does not.  The limit is on the
    time without a byte, not on the file's (aiohttp's 300 s on a whole request failed a slow server)."""
    url = serve({"a.warc.gz": (SAMPLE, "trickle")}) + "a.warc.gz"
    documents, stats = read_all(url, remote_timeout=1)
    assert stats["records"] == 27 and documents == 12


@pytest.mark.parametrize("mode", ["ok", "norange", "gzenc"])
def test_a_damaged_warc_over_http_is_resynchronised_as_on_disk(serve, tmp_path, mode):
    """Reading resumes after damage by seeking: over HTTP a seek asks for a range, or, from a server that answers
    none, reads the file again from its start; a file gzipped again in transit (Content-Encoding: gzip on a
    .warc.gz), whose length is not said, is read to its end to know it.  Each way the counts are those of the file
    read from disk."""
    damaged = bytearray(SAMPLE.read_bytes())
    damaged[20000:20400] = b"A" * 400
    (tmp_path / "damaged.warc.gz").write_bytes(damaged)
    on_disk = read_all(str(tmp_path / "damaged.warc.gz"))
    assert on_disk[1]["records_recovered"] > 0
    url = serve({"damaged.warc.gz": (tmp_path / "damaged.warc.gz", mode)}) + "damaged.warc.gz"
    assert read_all(url) == on_disk


def test_a_redirect_loop_is_named(serve, tmp_path):
    """A file's URL that redirects to itself.  Before: "input http://.../a.warc.gz cannot be read: 0, message='',
    url=..." (aiohttp's TooManyRedirects, its class not said).  Now its class is said, as for a folder."""
    url = serve({"a.warc.gz": (SAMPLE, "loop")}) + "a.warc.gz"
    proc = plexity_run(url, "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].startswith(
        f"plexity run: error: input {url} cannot be read: TooManyRedirects: 0, message=''")


def test_an_http_input_is_recorded_as_its_url_and_a_run_recorded_with_the_doubled_protocol_resumes(serve, tmp_path):
    """Before: the settings record (and datatrove's executor.json) named the input ``http://http://127.0.0.1:...``
    (fsspec's HTTP keeps the URL as the path, and the protocol was put before it again).  Now the URL as given; a
    run an earlier version recorded the old way resumes instead of stopping as one of other settings."""
    url = serve({"a.warc.gz": (SAMPLE, "ok")})
    out = tmp_path / "out"
    first = plexity_run(url, "-o", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    record = out / "logs" / "plexity-settings.json"
    inputs = [step["input"] for step in json.loads(record.read_text())["steps"] if "input" in step]
    assert inputs == [url.rstrip("/")]
    assert "http://http://" not in (out / "logs" / "executor.json").read_text()
    record.write_text(record.read_text().replace('"http://', '"http://http://'))  # (as an earlier version wrote it)
    again = plexity_run(url, "-o", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1 tasks, 1 already completed" in again.stdout and "1/1 tasks completed (0 in this run" in again.stdout
