"""Leftovers of earlier probes: a failed `plexity run` task's last line said "did not complete" twice; model names
and paths in the hints a user copies; S3 reads bounded by --remote-timeout; the requests a remote task makes."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins"]


class _TwoFiles(http.server.BaseHTTPRequestHandler):
    """A listing of a.warc.gz and b.warc.gz; b's GET answered 500 (its HEAD, the run's check, 200)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self._answer(body=False)

    def do_GET(self):
        self._answer(body=True)

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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TwoFiles)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


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
