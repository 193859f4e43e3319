"""What an input folder can hold besides files, and two runs into one output folder (issue 38).

A FIFO named ``f.html`` hung `plexity clean` at its open; a symlink loop ended it with a traceback
and nothing cleaned, and failed every task of `plexity run` that held it, the good file's too,
on every re-run.  Only regular files are read now: anything else is a counted skip
(``not_a_regular_file``, ``unreadable_file``) that fails no task and no other file.  Two
`plexity clean` runs into one output folder both wrote the same ``.part`` file; the second now
stops at once, saying which run owns the folder.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from warc_corpus import ARTICLE, page, record_bytes

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]


@pytest.fixture
def odd_folder(tmp_path) -> Path:
    """A good .warc.gz and .html beside FIFOs, a socket, a symlink loop and a dangling symlink,
    each named as an input."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.warc.gz").write_bytes(b"".join(
        gzip.compress(record_bytes(f"http://t/good-{i}", page(ARTICLE, f"Record {i}.").encode())) for i in range(3)))
    (folder / "good.html").write_text(page(ARTICLE))
    os.mkfifo(folder / "f.html")
    os.mkfifo(folder / "g.warc")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "s.warc.gz"))
    (folder / "loop.warc").symlink_to("loop.warc")
    (folder / "loop.html").symlink_to("loop.html")
    (folder / "gone.warc").symlink_to("nowhere.warc")
    yield folder
    server.close()


def test_plexity_clean_reads_only_regular_files_and_counts_the_rest(odd_folder, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([*PLEXITY, "clean", str(odd_folder), "-o", str(out), "--extractor", "tags", "-q",
                           "--write-dropped"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is True
    assert stats["skip_reasons"]["not_a_regular_file"] == 3  # the two FIFOs and the socket
    assert stats["skip_reasons"]["unreadable_file"] == 3  # the two loops and the dangling link
    assert stats["files"] == 2 and stats["documents"] == 4
    assert sorted(p.name for p in out.iterdir()) == ["good.html.txt", "good.warc.gz", "plexity-dropped.jsonl",
                                                      "plexity-stats.json"]
    rows = [json.loads(line) for line in (out / "plexity-dropped.jsonl").read_text().splitlines()]
    skipped = {Path(r["source"]).name: r["reason"] for r in rows if r["reason"] in ("not_a_regular_file",
                                                                                   "unreadable_file")}
    assert skipped == {"f.html": "not_a_regular_file", "g.warc": "not_a_regular_file",
                       "s.warc.gz": "not_a_regular_file", "loop.warc": "unreadable_file",
                       "loop.html": "unreadable_file", "gone.warc": "unreadable_file"}


def test_a_fifo_named_on_the_command_line_is_a_counted_skip_not_a_hang(odd_folder, tmp_path):
    done = subprocess.run([*PLEXITY, "clean", str(odd_folder / "f.html"), str(odd_folder / "good.html"),
                           "-o", str(tmp_path / "out"), "-q"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"not_a_regular_file": 1} and stats["documents"] == 1


@pytest.mark.parametrize("tasks", ["1", "0"], ids=["one-task", "a-task-per-file"])
def test_plexity_run_counts_them_and_fails_no_task(odd_folder, tmp_path, tasks):
    out = tmp_path / "out"
    command = [*PLEXITY, "run", str(odd_folder), "-o", str(out), "--extractor", "tags", "--min-chars", "0"]
    if tasks != "0":
        command += ["--tasks", tasks]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    merged = json.loads((out / "logs" / "stats.json").read_text())
    reader = next(step["stats"] for step in merged if "WARC HTML" in step["name"])
    counts = {k: v["total"] if isinstance(v, dict) else v for k, v in reader.items()}
    assert counts["not_a_regular_file"] == 2  # g.warc and s.warc.gz (f.html is not a WARC name)
    assert counts["unreadable_file"] == 2  # loop.warc and gone.warc
    assert counts["documents"] == 3
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)  # a re-run has nothing left to do
    assert again.returncode == 0 and "0 in this run" in again.stdout, again.stdout[-2000:] + again.stderr[-2000:]


# -- one run per output folder ---------------------------------------------------------------

def _slow_input(folder: Path) -> Path:
    """Text that takes `plexity clean` a few seconds (scoring ~20 MB)."""
    folder.mkdir()
    (folder / "long.txt").write_text((ARTICLE + "\n") * 80_000)
    return folder


def test_a_second_run_into_an_owned_output_folder_stops_at_once_and_the_first_finishes(tmp_path):
    inputs = _slow_input(tmp_path / "in")
    out = tmp_path / "out"
    first = subprocess.Popen([*PLEXITY, "clean", str(inputs), "-o", str(out), "-q"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out / "plexity-stats.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run([*PLEXITY, "clean", str(inputs), "-o", str(out), "-q"], capture_output=True,
                                text=True, timeout=120)
        assert first.poll() is None, "the first run ended before the second started: make its input longer"
        assert second.returncode != 0
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "in use by another run" in lines[0] and str(first.pid) in lines[0], second.stderr
        _, stderr = first.communicate(timeout=300)
        assert first.returncode == 0, stderr
    finally:
        if first.poll() is None:
            first.kill()
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is True and stats["files"] == 1
    assert [p.name for p in out.iterdir() if p.name.endswith(".part")] == []
    # the folder is free again once the owner has ended, and after an owner killed with SIGKILL
    third = subprocess.Popen([*PLEXITY, "clean", str(inputs), "-o", str(out), "-q"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    # killed once it owns the folder (after 1.5 s, under two CPU hogs, it never yet did)
    lock, deadline = out / ".plexity.lock", time.monotonic() + 60
    while not (lock.exists() and lock.read_text().startswith(f"pid {third.pid},")) and time.monotonic() < deadline:
        assert third.poll() is None, third.communicate()[1]
        time.sleep(0.05)
    assert lock.read_text().startswith(f"pid {third.pid},")
    third.send_signal(signal.SIGKILL)
    third.wait()
    done = subprocess.run([*PLEXITY, "clean", str(inputs), "-o", str(out), "-q"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "plexity-stats.json").read_text())["completed"] is True


def test_plexity_run_into_an_owned_output_folder_stops_at_once(tmp_path):
    from plexity_plugins.io.output_lock import own_output_folder

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.warc.gz").write_bytes(gzip.compress(record_bytes("http://t/good", page(ARTICLE).encode())))
    out = tmp_path / "out"
    with own_output_folder(out):  # (the lock every run takes: here, held by this test's process)
        done = subprocess.run([*PLEXITY, "run", str(folder), "-o", str(out)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "in use by another run" in lines[0] and f"pid {os.getpid()}" in lines[0]
        assert not (out / "documents").exists() and not (out / "logs").exists()
    again = subprocess.run([*PLEXITY, "run", str(folder), "-o", str(out)], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert not (out / ".plexity.lock").exists()  # (removed by its last owner)
    # its logging folder is owned too: another run given it as --logging-dir stops (it would take the
    # completion markers there for its own, and --overwrite delete them)
    with own_output_folder(out / "logs", "--logging-dir"):
        done = subprocess.run([*PLEXITY, "run", str(folder), "-o", str(tmp_path / "other"), "--logging-dir",
                               str(out / "logs"), "--overwrite"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "in use by another run" in done.stderr and "--logging-dir" in done.stderr
    assert (out / "logs" / "completions").is_dir()
