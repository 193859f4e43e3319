"""Operator probe 39: `plexity serve` run as a service (systemd, a container behind a reverse proxy).

Real server processes on 127.0.0.1, started and stopped here.  What an operator met, and what is measured here:
- every request after the first on a kept-alive connection (a connection pool: requests.Session, an nginx upstream
  with keepalive, http.client) waited 40 ms for the client's delayed ACK: the socket `plexity serve` binds itself
  was made without its protocol number, so asyncio did not turn Nagle's algorithm off on the connections it
  accepted (22 requests a second on one connection, 514 now);
- SIGTERM let the answers under way finish, then ended the process killed by SIGTERM (status 143) without a word in
  the log; SIGHUP ended it at once, answers cut: now both (and Ctrl+C) stop it gracefully, in two lines, status 0;
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import signal
import statistics
import sys
import threading
import time

import pytest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from web_server import server_log, start_server, stop_server  # noqa: E402

TEXT = ("The council approved the budget for the new library on Tuesday evening.\n"
        "Share on Facebook | Share on Twitter | Email\n") * 40


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_requests_on_a_kept_alive_connection_do_not_wait_for_the_delayed_ack():
    process, url = start_server([])
    try:
        body = json.dumps({"text": TEXT}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", _port(url), timeout=10)
        times = []
        for _ in range(12):
            started = time.perf_counter()
            connection.request("POST", "/api/score", body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            assert answer.status == 200 and json.loads(answer.read())["sentences"]
            times.append(time.perf_counter() - started)
        connection.close()
        # (the first request opens the model; each later one was 44 ms: Linux delays an ACK by 40 ms at least)
        assert statistics.median(times[2:]) < 0.025, [f"{t * 1000:.1f} ms" for t in times]
    finally:
        stop_server(process)


def _big_body(lines: int) -> bytes:
    return json.dumps({"text": TEXT * lines}).encode()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_lets_the_requests_under_way_finish_says_so_and_exits_0(stop):
    """SIGTERM (a rollout, `systemctl stop`): the answers under way were finished, but uvicorn then raised SIGTERM
    again, and the process ended killed by it (status 143: a failed stop to a container's runtime), without a line
    in its log.  SIGHUP (the terminal closed, `kill -HUP` meant as a reload) ended it at once, answers cut."""
    process, url = start_server(["--workers", "1"])
    body, answers = _big_body(60), []  # (about 0.2 s each to score, one at a time)

    def ask() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", _port(url), timeout=20)
        connection.request("POST", "/api/score", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answers.append((answer.status, len(json.loads(answer.read())["sentences"])))

    clients = [threading.Thread(target=ask) for _ in range(3)]
    try:
        for client in clients:
            client.start()
        time.sleep(0.3)  # (the three are being scored or waiting for the one scoring thread)
        process.send_signal(stop)
        assert process.wait(timeout=20) == 0
        for client in clients:
            client.join(timeout=5)
        assert answers == [(200, 4800)] * 3  # every answer whole
        with pytest.raises(ConnectionRefusedError):  # (and nothing listens any more)
            socket.create_connection(("127.0.0.1", _port(url)), timeout=2)
        log = server_log(process)
        name = signal.Signals(stop).name
        assert re.search(f"plexity serve: {name}: stopping: new connections are refused, the [123] requests under way "
                         f"get 30 s \\(--body-timeout\\) to finish\nplexity serve: stopped\n", log), log
        assert "Traceback" not in log
    finally:
        stop_server(process)
