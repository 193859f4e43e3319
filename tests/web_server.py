"""`plexity serve` for the tests that need a server: started on a free loopback port, stopped after."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args: list[str], env: dict | None = None,
                 command: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """`plexity serve` on a free loopback port; returns (process, base URL) once it answers.
    `command` runs instead of the `plexity` script (given ``serve --port N`` and `args`)."""
    port = free_port()
    plexity = command or [str(Path(sys.executable).with_name("plexity"))]
    process = subprocess.Popen([*plexity, "serve", "--port", str(port), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"plexity serve exited: {process.stdout.read()}")
        try:
            urllib.request.urlopen(url + "/api/models", timeout=2).read()
            return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("plexity serve did not answer within 30 s")


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
