"""Leftovers of earlier probes: a failed `plexity run` task's last line said "did not complete" twice; model names
and paths in the hints a user copies; S3 reads bounded by --remote-timeout; the requests a remote task makes."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import QuietHandler, http_server

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins"]


class _TwoFiles(QuietHandler):
    """A listing of a.warc.gz and b.warc.gz; b's GET answered 500 (its HEAD, the run's check, 200)."""

    def _answer(self, body: bool):
        name = self.path.strip("/")
        data = b'<a href="a.warc.gz">a</a>\n<a href="b.warc.gz">b</a>\n' if not name else SAMPLE.read_bytes()
        status = 500 if body and name == "b.warc.gz" else 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(data) if status == 200 else 0))
        self.end_headers()
        if body and status == 200:
            self.wfile.write(data)


@pytest.fixture
def two_files():
    with http_server(_TwoFiles) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/"


def test_a_failed_tasks_last_line_names_the_task_what_happened_and_what_to_do_once(two_files, tmp_path):
    """Before: "plexity run: 1 task(s) did not complete (TasksFailed: 1 task(s) did not complete (task 1: ReadError:
    ...); their output is incomplete and not marked complete: run the same command again to redo only them); re-run
    the same command to run only those"."""
    done = subprocess.run(PLEXITY + ["run", two_files, "-o", str(tmp_path / "out"), "--workers", "2", "--extractor",
                                     "tags"], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)})
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.splitlines()[-1] == (
        f"plexity run: 1 task(s) did not complete (task 1: ReadError: {two_files}b.warc.gz: cannot open it at byte 0: "
        f"the server answered 500 Internal Server Error); re-run the same command to run only those")


def plexity(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(PLEXITY + list(args), capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.mark.parametrize("name", ["a b", "en=news", "it's"])
def test_a_model_name_a_command_line_cannot_give_back_is_refused_before_anything_is_read(tmp_path, name):
    """`plexity models import "a b"` (or `plexity train --name "a b"`) installed it, and its hints said `--model a b`,
    which a shell splits; `en=news` installed a model `--model en=news` can never name (a language map entry)."""
    said = f"invalid model name '{name}': use letters, digits, '-', '_' or '.'"
    imported = plexity("models", "import", name, "--kenlm", str(tmp_path / "none.bin"), "--tokenizer", "plexity-tok-1",
                       "--output-dir", str(tmp_path / "models"))
    assert (imported.returncode, imported.stderr.strip()) == (2, f"plexity models import: error: {said}")
    (tmp_path / "corpus.txt").write_text("A sentence about the river.\n" * 20)
    trained = plexity("train", "--corpus", "text", "--name", name, str(tmp_path / "corpus.txt"), "--output-dir",
                      str(tmp_path / "models"))
    assert trained.returncode == 2 and said in trained.stderr, trained.stderr
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_the_hints_after_an_import_into_a_folder_with_a_space_run_as_printed(tmp_path, tiny_model):
    """A model installed with --output-dir "my models": "use it with --model /tmp/.../my models/mine" (and the same
    in `plexity calibrate --model ...`), which run as printed named a model "/tmp/.../my" and a file "models/mine"."""
    import shlex

    imported = plexity("models", "import", "mine", "--kenlm", str(tiny_model / "model.bin"), "--tokenizer",
                       "plexity-tok-1", "--output-dir", str(tmp_path / "my models"))
    assert imported.returncode == 0, imported.stderr
    hints = [line for line in imported.stdout.splitlines() if "--model" in line]
    assert len(hints) == 2, imported.stdout
    use = shlex.split(hints[-1].split("use it with ")[1])
    calibrate = shlex.split(hints[0].split("`")[1])
    assert use == ["--model", str(tmp_path / "my models" / "mine")] == calibrate[2:4]
    scored = plexity("score", *use, "A sentence about the river.")
    assert scored.returncode == 0, scored.stderr


def test_a_run_hint_naming_an_input_folder_with_a_space_runs_as_printed(tmp_path):
    """`plexity run "my pages"` of a folder of HTML files: "plexity clean my pages --output-dir DIR cleans HTML and
    text files" (two inputs, as a shell reads it)."""
    import shlex

    folder = tmp_path / "my pages"
    folder.mkdir()
    (folder / "a.html").write_text("<html><body><p>A sentence about the river and the town beside it.</p></body>")
    done = plexity("run", str(folder), "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    command = done.stderr.split("plexity run reads WARC files; ")[1].split(" cleans HTML")[0]
    assert shlex.split(command) == ["plexity", "clean", str(folder), "--output-dir", "DIR"], done.stderr


@pytest.fixture
def stalled_endpoint():
    """An S3 endpoint that takes every connection and answers nothing: (its URL, [when each connection came, as
    time.monotonic()])."""
    import socket
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    taken, taken_at = [], []

    def take():
        while True:
            try:
                taken.append(server.accept()[0])
                taken_at.append(time.monotonic())
            except OSError:
                return

    threading.Thread(target=take, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", taken_at
    server.close()
    for connection in taken:
        connection.close()


def test_a_stalled_s3_server_fails_the_task_after_about_remote_timeout(stalled_endpoint, monkeypatch):
    """Before: s3fs's read_timeout of 15 s, tried 5 times by botocore and 5 times by s3fs: a task held ~7 minutes
    (25 connections; with read_timeout 1 s, 58.8 s), whatever --remote-timeout said.  Now about remote_timeout (here
    0.5 s, plus s3fs's and botocore's pauses between tries: 7.0 s measured with 1 s, 63.6 s with 60 s)."""
    import time

    from plexity_plugins.datatrove import WarcHtmlReader
    from plexity_plugins.errors import ReadError

    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    reader = WarcHtmlReader(("s3://bkt/crawl", {"key": "k", "secret": "s", "skip_instance_cache": True,
                                                "client_kwargs": {"endpoint_url": stalled_endpoint[0]}}),
                            remote_timeout=0.5)
    outcome = []

    def read():
        try:
            list(reader.read_file("a.warc.gz"))
        except ReadError as exc:
            outcome.append((time.monotonic(), str(exc)))

    worker = threading.Thread(target=read, daemon=True)  # (a daemon: before, it went on for minutes)
    worker.start()
    worker.join(60)
    assert outcome, "still reading after 60 s"
    (failed_at, said), (_, taken_at) = outcome[0], stalled_endpoint
    # (a read timeout as a rule; on a loaded machine the connection itself may time out first: the same line)
    assert re.match(r"s3://bkt/crawl/a\.warc\.gz: cannot open it: the S3 server could not be reached \((Read|Connect) "
                    r"timeout on endpoint URL", said), said
    # from the first connection (0.5 s of stall; s3fs's pauses ~1.9 s, botocore's up to 1 s a retry: ~5 s alone; from
    # the read's start, 11 s beside two busy processes).  Before: 7 minutes, or 59 s with read_timeout 1 s
    assert failed_at - taken_at[0] < 20, failed_at - taken_at[0]


def test_plexity_run_lists_a_stalled_s3_input_within_about_remote_timeout(stalled_endpoint, tmp_path):
    """The run's listing as it starts: the same ~7 minutes before; now the run's one line after about
    --remote-timeout."""
    import os
    import time

    endpoint, taken_at = stalled_endpoint
    done = subprocess.run(PLEXITY + ["run", "s3://bkt/crawl/", "-o", str(tmp_path / "out"), "--remote-timeout", "0.5",
                                     "--storage-options",
                                     f'{{"key": "k", "secret": "s", "client_kwargs": {{"endpoint_url": '
                                     f'"{endpoint}"}}}}'],
                          capture_output=True, text=True, timeout=180, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path),
                               "AWS_EC2_METADATA_DISABLED": "true"})
    # timed from the listing's first connection, not from the run's start, which took 6 s alone and 60 s beside two
    # busy processes (Python's start, its imports): ~5 s from it, the tries and pauses above
    assert done.returncode == 2 and time.monotonic() - taken_at[0] < 30, done.stderr[-2000:]
    assert done.stderr.strip().startswith("plexity run: error: cannot list the input s3://bkt/crawl: the S3 server "
                                          "could not be reached (Read timeout"), done.stderr[-2000:]


def test_a_moved_kenlm_files_hint_quotes_the_models_folder_name(tmp_path):
    """A model folder `my model` whose linked KenLM file has gone: "... `plexity models import my model --kenlm
    FILE ... --force`" (a shell reads two names)."""
    import shlex

    folder = tmp_path / "my model"
    folder.mkdir()
    (folder / "model.bin").symlink_to(tmp_path / "gone.bin")
    done = plexity("score", "--model", str(folder), "A sentence about the river.")
    assert done.returncode != 0
    command = done.stderr.split("it again with `")[1].split("`")[0]
    assert shlex.split(command)[:4] == ["plexity", "models", "import", "my model"], done.stderr
