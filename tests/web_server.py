"""`plexity serve` for the tests that need a server: started on a free loopback port, stopped after."""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


URL_LINE = re.compile(r"plexity serve: (http://127\.0\.0\.1:\d+)/ ")  # (the line it prints once it listens)
# Seconds a server has to start and answer: a deadline, not a figure (~2 s alone; beside two busy processes 30 s ran
# out twice, a 2-core CI machine runs two test processes at once)
START_WITHIN = 120


def start_server(args: list[str], env: dict | None = None,
                 command: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """`plexity serve` on a free loopback port; returns (process, base URL) once it answers.
    `command` runs instead of the `plexity` script (given ``serve --port 0`` and `args`).

    The server takes any free port (``--port 0``) and the URL is read from the line it prints: a port
    found free here and then given to it could be taken meanwhile by a server of a test running beside
    this one (the suite runs on every core), and the requests would go to that server."""
    plexity = command or [str(Path(sys.executable).with_name("plexity"))]
    process = subprocess.Popen([*plexity, "serve", "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, **(env or {})})
    started: queue.Queue = queue.Queue()

    def read_until_the_url() -> None:  # (a thread: select cannot see the lines the pipe's reader has buffered)
        for line in process.stdout:
            started.put(line)
            if URL_LINE.match(line):
                return
        started.put(None)  # (it exited)

    threading.Thread(target=read_until_the_url, daemon=True).start()
    deadline = time.monotonic() + START_WITHIN
    url, said = None, []
    while url is None:
        try:
            line = started.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            process.wait()
            raise RuntimeError(f"plexity serve exited: {''.join(said)}")
        said.append(line)
        found = URL_LINE.match(line)
        url = found.group(1) if found else None
    while url is not None and time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"plexity serve exited: {''.join(said)}{process.stdout.read()}")
        try:
            urllib.request.urlopen(url + "/api/models", timeout=2).read()
            process.said_at_start = "".join(said)  # (for `server_log`)
            return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"plexity serve did not answer within {START_WITHIN} s: {''.join(said)}")


def server_log(process: subprocess.Popen) -> str:
    """Everything a server from `start_server` printed, once it has stopped (`stop_server`)."""
    return process.said_at_start + process.stdout.read()


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def post(url: str, body: bytes | str | dict, content_type: str = "application/json",
         headers: dict | None = None) -> tuple[int, dict, dict]:
    """(status, JSON answer, headers) of a POST to /api/score."""
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    request = urllib.request.Request(url + "/api/score", data=body, method="POST",
                                     headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        raw = error.read()
        assert b"Traceback" not in raw
        return error.code, json.loads(raw), dict(error.headers)
