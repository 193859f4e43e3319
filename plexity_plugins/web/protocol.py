"""uvicorn's HTTP/1.1 protocol (h11) with two of the API's promises kept below the app.

uvicorn answers a request it cannot parse (a garbled request line, a negative Content-Length)
itself, before any app sees it, with a plain-text 400; and it has no time limit on a request's
headers: a client that connects and sends nothing, or a header line now and then, holds its
connection for ever (uvicorn's keep-alive timeout starts only after a first answer, and any byte
stops it), so enough of them take every file descriptor the server may open.  `protocol_class`
gives the protocol `plexity serve` runs uvicorn with:

- a request uvicorn cannot parse is answered 400 in the API's JSON shape, ``{"error": message}``;
- a request's headers must have arrived within ``header_timeout`` seconds of the connection (or
  of the first byte after the previous answer): past it a client that sent part of them is
  answered 408 in JSON, and a connection that sent nothing is closed.  The body then has its own
  time limit (`app._read_body`);
- an answer the client stops reading is dropped: while the answer waits in the server's buffer
  (writing paused), a client that has taken none of it for ``header_timeout`` seconds is
  disconnected.  (Five clients that posted 2 MB of one-letter lines and read nothing held their
  77 MB answers, 630 MB, for as long as they stayed connected.)
- the answers waiting for slow readers are bounded together: past ``answers_held`` bytes in all, the
  connection whose answer has waited longest is ended (never the newest: one answer, however large, is
  sent).  Eight clients that each posted 2 MB of one-letter lines and then read 4 kB a second (progress
  enough for the limit above) held the server at 1.2 GB, for the hours their reading would have taken;
- a request answered before its body was read to the end (413, 408, 415, a 404) is not read on:
  the answer is followed by the end of the connection, and what the client goes on sending is
  thrown away unparsed for at most `LINGER_SECONDS` (time to read the answer before the socket is
  closed, whose unread bytes would reset it), also when the client asked for the connection to
  close (``Connection: close``, as Python's urllib sends: uvicorn closed it at once, and urllib's
  client of a 30 MB body met "Connection reset by peer", not its 413).  uvicorn read such a body to
  its end, for as long as it came: 6.8 GB and 15 s of the server's CPU for one refused 100 GB upload,
  over 30 s, after which the header time limit sent a second answer, a 408, on the connection.
"""

from __future__ import annotations

import json
import struct

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

REASONS = {400: b"Bad Request", 408: b"Request Timeout"}
# the largest answer is ~40 times its body (2 MB of one-letter lines, 80 MB of sentences): answers waiting
# for slow readers may hold about three of those, in all
ANSWERS_HELD_PER_BODY_BYTE = 128
# a refused body's sender is read on (and what it sends thrown away) until it has been silent LINGER_SECONDS,
# sent LINGER_BYTES (or twice the largest body) or LINGER_MOST_SECONDS passed, as nginx's lingering close: a
# connection closed with bytes unread is reset, and a reset can take the answer from a client still sending
LINGER_SECONDS = 2.0
LINGER_MOST_SECONDS = 30.0
LINGER_BYTES = 64 * 2**20


# A client that speaks HTTP/2 from its first byte (``curl --http2-prior-knowledge``, gRPC-style clients) sends this
# preface; it is answered in HTTP/2 as RFC 9113 has a server that needs HTTP/1.1 answer: its SETTINGS, then GOAWAY
# with HTTP_1_1_REQUIRED (0xd), which a client such as curl takes to retry in HTTP/1.1.  (It was parsed as an
# HTTP/1.1 request and answered twice in HTTP/1.1, "invalid Host header None", then a 400: curl said "Empty reply
# from server".)
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_DEBUG = b"plexity serve speaks HTTP/1.1: send the request in HTTP/1.1"
H2_REFUSAL = (b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # SETTINGS, none
              + struct.pack(">I", 8 + len(_H2_DEBUG))[1:] + b"\x07\x00\x00\x00\x00\x00"  # GOAWAY on stream 0
              + struct.pack(">II", 0, 0xD) + _H2_DEBUG)


def _unsent(transport) -> int:
    """Bytes of an answer still in the kernel's send queue (Linux's SIOCOUTQ; 0 elsewhere): a slow
    reader takes them first, before the server's own buffer goes down, so its progress shows here."""
    try:
        import fcntl
        import termios

        sock = transport.get_extra_info("socket")
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]
    except (ImportError, AttributeError, OSError, ValueError):
        return 0


def protocol_class(header_timeout: float | None, max_bytes: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with JSON answers to unparsable requests, a time limit on headers
    and on a client that reads nothing of its answer (None or 0: none), and a bound on the answers
    waiting for slow readers (`ANSWERS_HELD_PER_BODY_BYTE` times ``max_bytes``, the largest body);
    for ``uvicorn.Config(http=...)``."""
    answers_held = ANSWERS_HELD_PER_BODY_BYTE * max_bytes
    linger_bytes = max(LINGER_BYTES, 2 * max_bytes)
    waiting: dict = {}  # connections whose answer waits for their client, longest waiting first

    class JSONH11Protocol(H11Protocol):
        _deadline = None  # the headers' time limit, while it runs
        _received = False  # bytes of the next request have arrived
        _stalled = None  # the next look at a paused answer's progress (`_watch_reading`)
        _lingering = False  # answered, the connection ending: what arrives is thrown away
        _thrown = 0  # bytes thrown away meanwhile
        _last_arrival = 0.0  # when the last of them arrived
        _linger_end = 0.0  # the latest the connection is closed

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc) -> None:
            waiting.pop(self, None)
            self._disarm()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._lingering:
                self._thrown += len(data)
                self._last_arrival = self.loop.time()
                if self._thrown > linger_bytes:
                    self.transport.close()
                return
            waiting = self.cycle is None or self.cycle.response_complete  # (no request being answered)
            if waiting and not self._received and data.startswith(H2_PREFACE[:16]):  # (HTTP/2 from the start)
                self._disarm()
                self.transport.write(H2_REFUSAL)
                self.transport.close()
                return
            if waiting:
                self._arm()
                self._received = True
            super().data_received(data)
            if self.cycle is not None and not isinstance(self.cycle.transport, _ClosedAfterLingering):
                self.cycle.transport = _ClosedAfterLingering(self)
            if waiting and self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # its headers are in: the app reads the body within its own limit

        def on_response_complete(self) -> None:
            if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
                self.server_state.total_requests += 1  # (as uvicorn counts an answer)
                self._linger()  # (answered before the body's end: not read on, nor the connection kept)
                return
            super().on_response_complete()

        def _linger(self) -> None:
            if self._lingering:
                return
            self._lingering = True
            self._disarm()
            self.transport.write_eof()  # the answer, then the end: the client stops sending once it reads it
            self.flow.resume_reading()  # (kept reading, so that the client can send on and then read)
            self._last_arrival = self.loop.time()
            self._linger_end = self._last_arrival + LINGER_MOST_SECONDS
            self.loop.call_later(LINGER_SECONDS, self._end_lingering)

        def _end_lingering(self) -> None:
            """Close once the client has been silent `LINGER_SECONDS` or at `_linger_end`; else look again."""
            if self.transport.is_closing():
                return
            close_at = min(self._last_arrival + LINGER_SECONDS, self._linger_end)
            if self.loop.time() >= close_at:
                self.transport.close()
            else:
                self.loop.call_at(close_at, self._end_lingering)

        def pause_writing(self) -> None:  # (the transport's buffer is over its high-water mark)
            super().pause_writing()
            waiting[self] = True
            self._shed()
            if header_timeout and self._stalled is None:
                self._watch_reading(None)

        def _shed(self) -> None:
            """End the connections whose answers have waited longest while all of them are past `answers_held`."""
            held = sum(connection.transport.get_write_buffer_size() for connection in waiting)
            for connection in list(waiting):
                if held <= answers_held or connection is self:
                    break
                held -= connection.transport.get_write_buffer_size()
                waiting.pop(connection, None)
                connection.transport.abort()

        def resume_writing(self) -> None:
            waiting.pop(self, None)
            super().resume_writing()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None

        def _watch_reading(self, buffered: int | None) -> None:
            """Every `header_timeout` seconds while writing is paused: the client has taken some of
            its answer since the last look, or it is disconnected (its buffered answer freed)."""
            self._stalled = None
            now = self.transport.get_write_buffer_size() + _unsent(self.transport)
            if buffered is not None and now >= buffered:
                self.transport.abort()
                return
            self._stalled = self.loop.call_later(header_timeout, self._watch_reading, now)

        def _arm(self) -> None:
            if header_timeout and self._deadline is None:
                self._received = False
                self._deadline = self.loop.call_later(header_timeout, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _headers_too_slow(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
                return  # (a pipelined request started meanwhile)
            if not self._received:  # connected, or kept alive, and silent: just closed
                self.transport.close()
                return
            self._answer(408, f"the request headers did not arrive within {header_timeout:g} s (the server's "
                              f"--body-timeout)")

        def send_400_response(self, msg: str) -> None:  # (uvicorn's own answer to an unparsable request)
            self._disarm()
            self._answer(400, "not a valid HTTP/1.1 request: its request line, a header or its framing (a "
                              "Content-Length, a chunk size) could not be read")

        def _answer(self, status: int, message: str) -> None:
            body = json.dumps({"error": message}).encode()
            head = (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                    b"x-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
                    % (status, REASONS[status], len(body)))
            self.transport.write(head + body)
            self.transport.close()

    return JSONH11Protocol


class _ClosedAfterLingering:
    """The transport as a request's cycle sees it: its ``close`` lingers (`_linger`) while the client is still
    sending the request's body, as the answer to a request that asked for the connection's end (``Connection:
    close``) closes it, and is the transport itself otherwise."""

    def __init__(self, protocol) -> None:
        self._protocol = protocol
        self._transport = protocol.transport

    def close(self) -> None:
        protocol = self._protocol
        if protocol.conn.their_state is h11.SEND_BODY and not self._transport.is_closing():
            protocol._linger()
        else:
            self._transport.close()

    def __getattr__(self, name):
        return getattr(self._transport, name)
