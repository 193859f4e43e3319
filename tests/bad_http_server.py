"""A server on 127.0.0.1 that serves files badly, as a remote input meets them: stalls, resets, sends fewer bytes
than it says, answers 503 once, does not answer ranges, gzips again in transit, trickles, or redirects to itself
(the `serve` fixture; over TLS with a certificate given; its folder's page stalled or answered 503 once, after a
file was read: the run's listing passes and a later task's check of its inputs meets it); `read_all`, the datatrove
reader's documents and counters of a URL; and a WARC whose first record is large (`warc_with_big_first_record`).
Used by the tests of remote inputs and of WACZ files over HTTP(S)."""

from __future__ import annotations

import gzip
import http.server
import io
import os
import socket
import ssl
import struct
import threading
import time
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from helpers import QuietHandler
from plexity_plugins.datatrove import WarcHtmlReader

PAGE = b"<html><body><p>" + b"A plain sentence about the river and the town that stands beside it. " * 20 + \
    b"</p></body></html>"


def warc_with_big_first_record(path: Path, size: int) -> None:
    """A .warc.gz whose first record is an image of `size` incompressible bytes, then one HTML page."""
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for uri, payload, kind in (("http://example.org/big.jpg", os.urandom(size), "image/jpeg"),
                                   ("http://example.org/page.html", PAGE, "text/html; charset=utf-8")):
            headers = StatusAndHeaders("200 OK", [("Content-Type", kind), ("Content-Length", str(len(payload)))],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(uri, "response", payload=io.BytesIO(payload),
                                                          http_headers=headers))


class _BadServer(QuietHandler):
    """The files of `folder` at /NAME, each served as `modes[NAME]` says; a folder listing at /."""

    folder: Path
    modes: dict
    requests: dict
    stop: threading.Event
    listing: str | None  # "stall" or "503": the folder's page, once, after a file was read
    listing_spoiled: threading.Event
    spoiled_at: list  # (when it was: time.monotonic())

    def _answer(self, body: bool):
        name = self.path.split("?")[0].strip("/").removeprefix("crawl").strip("/")
        if not name and self.listing and any(self.requests.values()) and not self.listing_spoiled.is_set():
            self.listing_spoiled.set()
            self.spoiled_at.append(time.monotonic())
            if self.listing == "503":
                self._headers(503, 0, "text/plain")
            else:  # the connection open, nothing sent (for 3 minutes: longer than a test's bound on the stall)
                self.stop.wait(180)
                self.close_connection = True
            return
        if not name:  # the listing
            page = "".join(f'<a href="{n}">{n}</a>\n' for n in sorted(self.modes)).encode()
            self._headers(200, len(page), "text/html")
            if body:
                self.wfile.write(page)
            return
        mode = self.modes[name]
        if mode == "loop":  # a redirect to itself
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = (self.folder / name).read_bytes()
        self.requests[name] = self.requests.get(name, 0) + body
        if mode == "503-once" and body and self.requests[name] == 1:
            self._headers(503, 0, "text/plain")
            return
        start, status = 0, 200
        if self.headers.get("Range") and mode != "norange":
            start, status = int(self.headers["Range"].split("=")[1].split("-")[0]), 206
        part = data[start:]
        extra = [("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")] if status == 206 else []
        if mode == "gzenc":  # gzipped again in transit, whatever the client accepts
            part, extra = gzip.compress(part), extra + [("Content-Encoding", "gzip")]
        self._headers(status, len(part), "application/warc", extra)
        if not body:
            return
        if mode == "trickle":  # slow, never stalled: 8 kB every 0.2 s
            for start in range(0, len(part), 8192):
                self.wfile.write(part[start:start + 8192])
                self.wfile.flush()
                self.stop.wait(0.2)
            return
        if mode in ("stall", "reset", "short"):
            self.wfile.write(part[:len(part) // 2])
            self.wfile.flush()
            if mode == "stall":  # headers and half the body, then nothing, the connection open
                self.stop.wait(30)
            elif mode == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.rfile.close()
                self.wfile.close()
                self.connection.close()
            self.close_connection = True
            return
        self.wfile.write(part)

    def _headers(self, status: int, length: int, kind: str, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()


@pytest.fixture
def serve(tmp_path):
    """serve({name: (path, mode)}) -> the folder's URL; the server stops after the test.  `serve.requests`: {name: how
    many GETs of it were answered}.  serve(files, certificate=PEM) serves them over TLS (an https:// URL), with the
    certificate and its key in that file.  serve(files, listing="stall" or "503"): the folder's page answered so once,
    the first time it is asked for after a file was read (then as before); `serve.spoiled_at`: [when that was, as
    time.monotonic()]."""
    servers = []

    def start(files: dict, certificate: Path | None = None, listing: str | None = None) -> str:
        folder = tmp_path / f"served{len(servers)}"
        folder.mkdir()
        for name, (source, _) in files.items():
            (folder / name).write_bytes(Path(source).read_bytes())
        handler = type("Handler", (_BadServer,), {"folder": folder, "modes": {n: m for n, (_, m) in files.items()},
                                                  "requests": start.requests, "stop": threading.Event(),
                                                  "listing": listing, "listing_spoiled": threading.Event(),
                                                  "spoiled_at": start.spoiled_at})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        if certificate:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append((server, handler))
        return f"{'https' if certificate else 'http'}://127.0.0.1:{server.server_port}/crawl/"

    start.requests, start.spoiled_at = {}, []
    yield start
    for server, handler in servers:
        handler.stop.set()
        server.shutdown()
        server.server_close()


def read_all(url: str, **options) -> tuple[int, dict]:
    reader = WarcHtmlReader(url.rpartition("/")[0], glob_pattern=url.rpartition("/")[2], **options)
    documents = sum(1 for _ in reader.run())
    return documents, {key: value.total for key, value in reader.stats.stats.items()}
