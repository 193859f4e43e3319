"""Operator probe 39: `plexity serve` run as a service (systemd, a container behind a reverse proxy).

Real server processes on 127.0.0.1, started and stopped here.  What an operator met, and what is measured here:
- every request after the first on a kept-alive connection (a connection pool: requests.Session, an nginx upstream
  with keepalive, http.client) waited 40 ms for the client's delayed ACK: the socket `plexity serve` binds itself
  was made without its protocol number, so asyncio did not turn Nagle's algorithm off on the connections it
  accepted (22 requests a second on one connection, 514 now);
"""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from web_server import start_server, stop_server  # noqa: E402

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
