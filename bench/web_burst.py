"""`plexity serve` under a burst: N parallel large POST /api/score while GET /api/models is polled.

    python bench/web_burst.py [--requests 50] [--bytes 1900000] [--plexity PATH] [-- serve options]

Starts ``plexity serve`` on a free loopback port, sends the burst, and prints the answers'
status counts, the burst requests' times and the /api/models times measured meanwhile.
No data files: the text is made of a few English sentences (and some menu lines) repeated.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

SENTENCES = ["The council approved the budget for the new library on Tuesday evening.",
             "The building will open in the spring, the mayor said.",
             "Residents asked about the road to the river and the new bridge.",
             "Work on the site is expected to start next month.",
             "Home | News | Sport | Weather | Contact us", "Share on Facebook | Share on Twitter | Email"]


def text_of(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(SENTENCES) for _ in range(3))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(plexity: str, args: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    process = subprocess.Popen([plexity, "serve", "--port", str(port), *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/models", timeout=2).read()
            return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("plexity serve did not start")


def score(port: int, body: bytes, timeout: float = 600) -> tuple[int, dict, float]:
    """(status, headers, seconds) of one POST /api/score."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/api/score", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status, dict(response.getheaders()), time.perf_counter() - started
    finally:
        connection.close()


def models(port: int) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        connection.request("GET", "/api/models")
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        return time.perf_counter() - started
    finally:
        connection.close()


def burst(port: int, requests: int, size: int, poll: float = 0.1) -> dict:
    """Send `requests` POSTs of `size` characters at once; poll /api/models until they are answered."""
    body = json.dumps({"text": text_of(size), "format": "text"}).encode()
    answers: list[tuple[int, dict, float]] = []
    lock = threading.Lock()

    def one():
        result = score(port, body)
        with lock:
            answers.append(result)

    threads = [threading.Thread(target=one) for _ in range(requests)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    model_times = []
    while any(thread.is_alive() for thread in threads):
        model_times.append(models(port))
        time.sleep(poll)
    for thread in threads:
        thread.join()
    return {"seconds": time.perf_counter() - started, "answers": answers, "models": model_times}


def report(result: dict) -> str:
    statuses = Counter(status for status, _, _ in result["answers"])
    ok = sorted(seconds for status, _, seconds in result["answers"] if status == 200)
    refused = [{k.lower(): v for k, v in headers.items()}.get("retry-after") for status, headers, _ in result["answers"] if status == 503]
    m = sorted(result["models"])
    return (f"burst {result['seconds']:.1f} s; statuses {dict(statuses)}; 503 Retry-After {sorted(set(refused))}; "
            f"scored requests: median {statistics.median(ok) if ok else 0:.2f} s, max {ok[-1] if ok else 0:.2f} s; "
            f"/api/models x{len(m)}: median {statistics.median(m) * 1000:.0f} ms, max {m[-1] * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--bytes", type=int, default=1_900_000)
    parser.add_argument("--plexity", default=str(Path(sys.executable).with_name("plexity")))
    parser.add_argument("serve_args", nargs="*", help="more `plexity serve` options (after --)")
    args = parser.parse_args()
    process, port = start(args.plexity, ["--max-bytes", str(args.bytes + 100_000), *args.serve_args])
    try:
        print(report(burst(port, args.requests, args.bytes)))
    finally:
        process.terminate()
        process.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
