"""The `plexity serve` web demo: one page, and the JSON API behind it.

    GET  /             the page (static/index.html; all JS/CSS served from this package)
    GET  /api/models   the models a request may name, the extractors, the input size cap
    POST /api/decode   an HTML file's bytes (Content-Type: application/octet-stream) -> {"text", "charset"},
                       decoded as every front end decodes a page (`plexity_plugins.extractors.decode_html`)
    POST /api/score    {"text", "format": "text"|"html", "threshold", "model", "extractor", "method"}
                       -> every sentence with its span, perplexity, block and verdict, and the
                          cleaned text (the page re-runs the method itself as the threshold moves)

Security, because the page is fed pasted web pages:
- nothing is ever fetched from a URL (pyplexity's demo fetched any URL it was given:
  server-side request forgery); the page takes pasted text or a local file only;
- request bodies above `max_bytes` are refused with 413 before they are read in full;
- a file or text that is not text at all (a PDF, an image: `refuse_binary`) is refused with 422, and so is
  HTML that cannot be extracted within the server's limits (time, memory, the parser's), with ``"limit"``
  naming the server's option (as 408 and 413 do);
- malformed JSON or fields -> 400 with a message, unknown model -> 404, never a traceback;
  every error, Starlette's own (no such route 404, wrong method 405, refused Host 400) and an
  uncaught one (500, `internal_error`; its traceback goes to the server's log) too,
  is JSON ``{"error": message}`` (`error_response`);
- a request may name only listed models, not paths on the server's disk;
- POST /api/score requires ``Content-Type: application/json`` (so a cross-site HTML form
  cannot post to it) and the Host header must be a loopback name (DNS rebinding), or, when bound to
  another address, an IP address or this machine's name (`plexity serve` sets that; --allowed-host names others);
- the page builds its DOM with textContent only, and a Content-Security-Policy allows
  scripts, styles and connections to this origin only.

Load: a request's body is read first, within ``body_timeout`` seconds (a slower one gets 408),
and only then does the request take a place in the scoring queue: clients that send a byte now
and then hold no place.  Scoring (reading the JSON, extraction, scoring, writing the answer's
JSON) runs in a pool of its own (`ScoringQueue`: ``workers`` threads, at most ``queue``
requests waiting), never on the event loop and never in the thread pool the other routes use; a
request that finds the queue full is answered at once with 503 and ``Retry-After``.  So
``GET /api/models`` and the page answer while a burst of large requests is scored.  Decoding a
file (POST /api/decode) runs in that pool too.  The bodies held at once, arriving or waiting, are
bounded (`BodyBudget`: 503 past it), and so are the answers waiting for slow readers (`protocol`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import itertools
import json
import math
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..cleaning.policy import empty_reason
from ..scoring import methods
from ..extractors import EXTRACTORS, ExtractionError, decode_html
from ..extractors.sandbox import DEFAULT_EXTRACT_TIMEOUT, TimeLimitedExtractor, say_once
from ..errors import ApiError, ExtractionMemoryLimit, ExtractionTimeout, ModelError
from ..io.payload_sniffing import binary_kind, text_binary_kind
from ..runtime.memory import return_freed_memory
from ..scoring.models import ALIASES as MODEL_ALIASES, DEFAULT_MODEL, list_models, resolve, sp_model_path
from ..scoring.scorer import PerplexityScorer, sanitize
from ..text.sentences import split_with_blocks

# The demo shows what perplexity filtering does to a whole page, so by default HTML is
# turned into text by the tag remover (every visible block), not by trafilatura, which
# already removes most boilerplate before the filter sees it.
from . import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BYTES, DEFAULT_WEB_EXTRACTOR  # noqa: E402,F401

STATIC_DIR = Path(__file__).parent / "static"
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def error_response(status: int, message: str, headers: dict | None = None, limit: str | None = None) -> JSONResponse:
    """Every error the API answers with, its own and Starlette's (404, 405, a refused Host): ``{"error": message}``,
    and ``"limit"``: the server's option, for a request past one of its limits (408, 413, 422)."""
    return JSONResponse({"error": message, **({"limit": limit} if limit else {})}, status_code=status, headers=headers)


def api_error_response(exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.message, limit=exc.limit)


async def http_error(request: Request, exc: HTTPException) -> Response:
    """Starlette's refusals (no such route, a method the route does not take) in the API's JSON shape."""
    if exc.status_code == 404:
        message = f"not found: {request.url.path}"
    elif exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
        message = f"{request.method} is not allowed on {request.url.path}: use {exc.headers['Allow']}"
    else:
        message = exc.detail
    return error_response(exc.status_code, message, exc.headers)


async def internal_error(request: Request, exc: Exception) -> Response:
    """An uncaught error (a bug) in the API's JSON shape: its kind and the first line of its message.

    The client gets no traceback; the server's log has it (Starlette raises the error on after this
    answer, and uvicorn logs it with its traceback, "Exception in ASGI application").  The security
    headers are set here: this answer is sent from outside `SecurityHeadersMiddleware`.
    """
    detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    kind = type(exc).__name__ + (f": {detail}" if detail else "")
    return error_response(500, f"internal error ({kind}); the server's log has the details", SECURITY_HEADERS)


HOST_ALLOWED = "plexity.host_allowed"  # a scope key: JSONTrustedHostMiddleware's check passed


_IP_HOST = re.compile(r"\[([0-9A-Fa-f:.]+)\](?::[0-9]*)?|([0-9.]+)(?::[0-9]*)?")


def is_ip_address_host(host: str | None) -> bool:
    """Whether a Host header names an IP address (``192.168.1.5:8000``, ``[::1]``), not a name: DNS rebinding needs
    a name the attacker's DNS answers for, so a browser that reaches the server by its address was sent there by
    its user."""
    found = _IP_HOST.fullmatch(host or "")
    if found is None:
        return False
    try:
        ipaddress.ip_address(found.group(1) or found.group(2))
    except ValueError:
        return False
    return True


class JSONTrustedHostMiddleware(TrustedHostMiddleware):
    """Starlette's Host header check (against DNS rebinding), refusing with the API's JSON error.

    The check stays Starlette's own: a request it lets through is marked in its scope, and the
    plain-text 400 it answers an unmarked one with is replaced by `error_response`'s.  With `ip_addresses`, a Host
    that is an IP address is let through too (`is_ip_address_host`).
    """

    def __init__(self, app, allowed_hosts: list[str], ip_addresses: bool = False):
        async def allowed(scope, receive, send):
            scope[HOST_ALLOWED] = True
            await app(scope, receive, send)

        self.ip_addresses = ip_addresses
        self.allowed_app = allowed
        super().__init__(allowed, allowed_hosts=allowed_hosts)

    async def __call__(self, scope, receive, send):
        if self.ip_addresses and scope["type"] in ("http", "websocket") \
                and is_ip_address_host(Headers(scope=scope).get("host")):
            return await self.allowed_app(scope, receive, send)
        refused = False

        async def send_unless_refused(message):
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 400 and not scope.get(HOST_ALLOWED):
                refused = True
            if not refused:
                await send(message)

        await super().__call__(scope, receive, send_unless_refused)
        if refused:
            host = Headers(scope=scope).get("host")
            await error_response(400, f"invalid Host header {host!r}: not a name this server answers to "
                                      f"(start it with --allowed-host NAME, once for each name it is reached by: the names "
                                      f"given replace the defaults)")(scope, receive, send)


_ABSOLUTE_FORM = re.compile(r"(?i)https?://([^/?#]*)(.*)", re.S)
_ABSOLUTE_FORM_RAW = re.compile(rb"(?i)https?://[^/?#]*(.*)", re.S)


class AbsoluteFormMiddleware:
    """A request whose target is in absolute form (``POST http://127.0.0.1:8000/api/score HTTP/1.1``, as a client
    sends through a proxy) is answered as the path it names: uvicorn gave the app the whole URL as the path, and
    every such request was a 404 ("not found: /http://127.0.0.1:8000/api/score").  RFC 9112 3.2.2: a server must
    accept the absolute form, and take the host the target names, not the Host header's (so the Host check, against
    DNS rebinding, judges that host)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            found = _ABSOLUTE_FORM.fullmatch(scope["path"])
            if found is not None:
                authority, path = found.group(1).rpartition("@")[2], found.group(2) or "/"
                raw = _ABSOLUTE_FORM_RAW.fullmatch(scope.get("raw_path") or b"")
                scope = {**scope, "path": path, "raw_path": raw.group(1) or b"/" if raw else path.encode(),
                         "headers": [(name, value) for name, value in scope["headers"] if name != b"host"]
                         + [(b"host", authority.encode("latin-1", "replace"))]}
        await self.app(scope, receive, send)


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every response (a plain ASGI middleware)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def model_files_signature(spec) -> tuple | None:
    """What identifies the files of the model `spec` names now (its KenLM file, its model.json and SentencePiece
    file: their inode, size and modification time), or None when it names none: a model trained again under its
    name (``plexity train --force`` moves new files into place) or given another threshold (``plexity calibrate
    --write`` rewrites its model.json) has another."""
    try:
        info = resolve(spec)
    except ModelError:
        return None
    kenlm = Path(info.path)
    found = []
    for path in (kenlm, kenlm.parent / "model.json", sp_model_path(info)):
        try:
            stat = path.stat() if path is not None else None
        except OSError:
            stat = None
        found.append(None if stat is None else (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


class ScorerCache:
    """One PerplexityScorer per model name and method, opened on first use and kept while the model's files stay
    the same (`model_files_signature`): a model trained again or calibrated while the server runs is opened anew,
    with its new threshold, as `/api/models` lists it (the scorer opened first answered, old model and threshold,
    beside the list's new ones).

    Only models that `plexity models` lists (plus the server's own --model, which may be
    a path) can be asked for: a request never names a file on the server's disk.
    """

    def __init__(self, default_model: str | None = None):
        info = resolve(default_model)  # fails early, at start-up, for a bad --model
        self.default_name = info.name
        self._server_model = {info.name: default_model if default_model is not None else DEFAULT_MODEL}
        self._scorers: dict[tuple[str, str], tuple[PerplexityScorer, tuple | None]] = {}
        self._lock = threading.Lock()

    def available(self) -> dict[str, dict]:
        models = {info.name: info for info in list_models()}
        # (the server's --model, listed as it answers: a path to a model whose model.json bears an installed model's
        # name, a copy calibrated otherwise, was listed with the installed one's threshold and answered with its own)
        models[self.default_name] = resolve(self._server_model[self.default_name])
        return {
            name: {"name": name, "threshold": info.threshold,
                   "threshold_extracted": getattr(info, "threshold_extracted", None), "order": info.order,
                   "corpus": info.corpus, "description": info.description,
                   "language": info.language or None, "tokenizer": info.tokenizer_version}
            for name, info in models.items()
        }

    def get(self, name: str | None, method: str = methods.DEFAULT_METHOD) -> PerplexityScorer:
        # (null: the server's --model; "default" is the embedded model, as `--model default` is everywhere: a
        # request naming it was answered by the server's --model, another model under the embedded one's alias)
        name = self.default_name if name in (None, "") else MODEL_ALIASES.get(name, name)
        key = (name, method)
        spec = self._server_model.get(name, name)
        with self._lock:
            cached = self._scorers.get(key)
        if cached is not None:  # (a name listed when it was opened: its files are looked at, nothing else is)
            signature = model_files_signature(spec)
            if signature is not None and signature == cached[1]:
                return cached[0]
        available = self.available()
        if name not in available:
            raise ApiError(404, f"unknown model {name!r}; available: {', '.join(sorted(available))}")
        signature = model_files_signature(spec)
        with self._lock:
            cached = self._scorers.get(key)
            if cached is None or cached[1] != signature or signature is None:
                try:
                    # (a binary model is memory-mapped: one per method costs no extra memory)
                    # opened now (what `clean` uses), under the lock, not in two threads at once
                    scorer = PerplexityScorer(spec, method=method).open()
                except ModelError as exc:
                    raise ApiError(400, str(exc)) from exc
                self._scorers[key] = (scorer, signature)
            return self._scorers[key][0]


DEFAULT_WORKERS = 2  # scoring threads (the extraction children are at most 2 per extractor too)
DEFAULT_QUEUE = 8  # requests waiting for a scoring thread; more get 503


class ScoringQueue:
    """A bounded queue in front of a pool of scoring threads.

    `admit` takes a place (one of ``workers + queue``) or returns False when every place is
    taken; `submit` runs a function on a scoring thread and gives the place back when the
    function ends (not before, even if the client has gone); `release` gives back a place
    that was not used.
    `retry_after` is the seconds a refused client should wait: the queue's length times the
    recent time per request, divided by the workers (at least 1).
    """

    def __init__(self, workers: int = DEFAULT_WORKERS, queue: int = DEFAULT_QUEUE):
        if workers < 1 or queue < 0:
            raise ValueError(f"the scoring pool needs 1 or more workers and a queue of 0 or more, "
                             f"got {workers} and {queue}")
        self.workers = workers
        self.capacity = workers + queue
        self._taken = 0
        self._lock = threading.Lock()
        self._seconds = 1.0  # moving average of a request's time on a scoring thread
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="plexity-score")

    def admit(self) -> bool:
        with self._lock:
            if self._taken >= self.capacity:
                return False
            self._taken += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._taken -= 1

    def submit(self, function, *args) -> asyncio.Future:
        def timed():
            started = time.perf_counter()
            try:
                return function(*args)
            finally:
                self._seconds = 0.8 * self._seconds + 0.2 * (time.perf_counter() - started)

        future = self._pool.submit(timed)
        future.add_done_callback(lambda _: self.release())
        return asyncio.wrap_future(future)

    def retry_after(self) -> int:
        return max(1, math.ceil(self._seconds * self.capacity / self.workers))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


IDLE_TRIM_SECONDS = 1.0  # a quiet spell after which the memory freed is given back


class BodyBudget:
    """The bytes of request bodies the server holds at once: those arriving, and those read whose request
    waits for a scoring thread or is being scored.  `hold` counts a request's body as it arrives and gives
    it back when the request ends; a body that would take the total past `limit` is refused with 503 at once.

    Without it nothing bounded the bodies arriving at once (each waits up to --body-timeout, holding no place
    in the queue): 400 clients that each sent 2 MB of a body and waited held 1 GB of the server's memory.
    Only the event loop uses it (no lock).
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self._trim = None  # the `return_freed_memory` due once the server has been idle IDLE_TRIM_SECONDS

    @contextlib.contextmanager
    def hold(self):
        taken = 0

        def take(n: int) -> None:
            nonlocal taken
            if self.held + n > self.limit:
                raise ApiError(503, f"busy: the request bodies arriving or waiting to be scored fill the "
                                    f"{self.limit:,} bytes the server holds at once (2 x (--workers + --queue) x "
                                    f"--max-bytes); try again in a moment")
            self.held += n
            taken += n

        try:
            yield take
        finally:
            self.held -= taken
            if taken and not self.held:
                self._when_idle()

    def _when_idle(self) -> None:
        """Give a burst's freed memory back to the system once no body has been held for
        `IDLE_TRIM_SECONDS` (its answers sent meanwhile); at most once a quiet spell."""
        if self._trim is not None:
            self._trim.cancel()

        def trim() -> None:
            self._trim = None
            if not self.held:
                return_freed_memory()  # (on the loop: ~1-40 ms once a quiet spell, no thread to stop after)

        self._trim = asyncio.get_running_loop().call_later(IDLE_TRIM_SECONDS, trim)


ACCEPT_WARNING_SECONDS = 10.0  # between two warnings that connections cannot be accepted


def warn_when_out_of_descriptors(loop: asyncio.AbstractEventLoop) -> None:
    """One warning line every `ACCEPT_WARNING_SECONDS` while `loop` cannot accept connections for want of file
    descriptors (more connections than ``ulimit -n``), in place of asyncio's traceback for each connection it
    cannot accept: its accept loop goes on through the listening backlog (2,048) on Python 3.11, and 200 idle
    connections to a server of ``ulimit -n 128`` wrote 49 MB of tracebacks in 30 s.  Every other error goes to
    the loop's handler as before (but the retry of an accept that comes after the server closed, dropped)."""
    previous = loop.get_exception_handler()
    last = -math.inf
    limit = _open_files()  # (now: out of descriptors, even an import fails)

    def handler(loop, context) -> None:
        nonlocal last
        error = context.get("exception")
        if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE) \
                and "accept" in context.get("message", ""):
            if time.monotonic() - last >= ACCEPT_WARNING_SECONDS:
                last = time.monotonic()
                print(f"plexity serve: warning: cannot accept connections: {error.strerror} ({limit}); "
                      f"new ones wait until others end (an idle one is closed after --body-timeout)",
                      file=sys.stderr, flush=True)
            return
        if isinstance(error, ValueError) and "_start_serving" in repr(context.get("handle")) \
                and str(error) == "Invalid file descriptor: -1":
            # (the accept asyncio retries a moment after running out of descriptors, come after the server was
            # stopped and its socket closed: nothing is left to accept; it was a traceback at every Ctrl+C after
            # the warning above)
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _open_files() -> str:
    try:
        import resource

        return f"ulimit -n: {resource.getrlimit(resource.RLIMIT_NOFILE)[0]} files"
    except (ImportError, OSError, ValueError):
        return "the system's limit on open files"


async def _read_body(request: Request, max_bytes: int, timeout: float | None = None, take=None) -> bytes:
    """The request's body: 413 past `max_bytes`, 408 when it has not all arrived within `timeout` seconds;
    each chunk is counted by `take` (`BodyBudget.hold`) as it arrives.  415 for a body sent compressed (a
    ``Content-Encoding`` but identity): the server decodes none (a gzip body was read as JSON: "malformed JSON:
    'utf-8' codec can't decode byte 0x8b", or by /api/decode as a file of gzip bytes)."""
    codings = [c.strip().lower() for value in request.headers.getlist("content-encoding") for c in value.split(",")]
    coding = next((c for c in codings if c not in ("", "identity")), None)
    if coding is not None:
        raise ApiError(415, f"the request body is sent with Content-Encoding: {coding[:40]}: send it uncompressed "
                            f"(the server decodes no Content-Encoding)")
    try:
        return await asyncio.wait_for(_receive_body(request, max_bytes, take), timeout or None)
    except asyncio.TimeoutError:
        raise ApiError(408, f"the request body did not arrive within {timeout:g} s (the server's "
                            f"--body-timeout)", limit="--body-timeout") from None
    except ClientDisconnect:  # (an answer to no one; it was an uncaught error, a traceback in the server's log)
        raise ApiError(400, "the client went away before its request body had all arrived") from None


async def _receive_body(request: Request, max_bytes: int, take=None) -> bytes:
    too_large = ApiError(413, f"request body too large: the limit is {max_bytes:,} bytes "
                              f"(start the server with a larger --max-bytes to raise it)", limit="--max-bytes")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise ApiError(400, "invalid Content-Length header")
        if int(length) > max_bytes:
            raise too_large
    body = bytearray()
    async for chunk in request.stream():  # chunked uploads are counted as they arrive
        if len(body) + len(chunk) > max_bytes:
            raise too_large
        if take is not None:
            take(len(chunk))
        body += chunk
    return bytes(body)


JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false",
              type(None): "null"}


REQUEST_FIELDS = ("text", "format", "threshold", "model", "extractor", "method")  # of POST /api/score


def _parse_request(body: bytes) -> dict:
    if not body.strip():
        raise ApiError(400, 'the request body is empty: send a JSON object, e.g. {"text": "..."}')
    try:
        data = json.loads(body)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer of over 4,300 digits
        if "integer string conversion" in str(exc):  # (Python's message told the client to call a Python function)
            raise ApiError(400, f"malformed JSON: a number of more than {sys.get_int_max_str_digits():,} digits") \
                from None
        raise ApiError(400, f"malformed JSON: {exc}") from None
    except RecursionError:
        raise ApiError(400, "malformed JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ApiError(400, f'the request must be a JSON object, e.g. {{"text": "..."}}, not {JSON_TYPES[type(data)]}')
    unknown = [name for name in data if name not in REQUEST_FIELDS]
    if unknown:  # (a misspelt field was ignored: {"treshold": 500} answered with the model's threshold)
        import difflib

        meant = difflib.get_close_matches(unknown[0], REQUEST_FIELDS, n=1, cutoff=0.7)
        raise ApiError(400, f"unknown field {json.dumps(unknown[0])[:40]}"
                            f"{f' (did you mean {json.dumps(meant[0])}?)' if meant else ''}: the fields are "
                            f"{', '.join(REQUEST_FIELDS)}")
    text = data.get("text")
    if not isinstance(text, str):
        raise ApiError(400, '"text" must be a string')
    form = data.get("format")
    if form is None:
        form = "text"
    elif form not in ("text", "html"):  # (not 0, "" or []: they used to mean "text")
        raise ApiError(400, f'"format" must be "text", "html" or null, not {json.dumps(form)[:40]}')
    threshold = data.get("threshold")
    if threshold is not None:
        try:  # (a huge integer overflows a float: OverflowError)
            valid = not isinstance(threshold, bool) and isinstance(threshold, (int, float)) \
                and math.isfinite(threshold) and threshold > 0
            threshold = float(threshold) if valid else None
        except OverflowError:
            valid = False
        if not valid:
            raise ApiError(400, '"threshold" must be a positive number or null')
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise ApiError(400, '"model" must be a string or null')
    extractor = data.get("extractor")
    if extractor is not None and extractor not in EXTRACTORS:
        raise ApiError(400, f'"extractor" must be one of {", ".join(EXTRACTORS)} or null')
    method = data.get("method")
    if method is not None and method not in methods.METHODS:
        raise ApiError(400, f'"method" must be one of {", ".join(methods.METHODS)} or null')
    return {"text": text, "format": form, "threshold": threshold, "model": model, "extractor": extractor,
            "method": method}


SNIFF_CHARS = 4096  # the start of a file or text that `binary_kind` judges, as `plexity clean` does


def refuse_binary(data: bytes | str, what: str) -> None:
    """422 when `data` is not text at all: a PDF, an image, an archive, bytes rich in NULs and
    control codes (`io.payload_sniffing.binary_kind`, the test by which `plexity clean` skips such a file
    as ``not_html``/``not_text``), instead of scoring its bytes as sentences."""
    head = data[:SNIFF_CHARS]
    kind = text_binary_kind(head) if isinstance(head, str) else binary_kind(head)  # (a str: as decoded)
    if kind is not None:
        raise ApiError(422, f"{what} is not text or HTML: its bytes are {kind} (plexity reads HTML and plain "
                            f"text; plexity clean skips such a file as not_html)")


SENTENCE_BATCH = 10_000  # sentences turned into JSON at a time (`score_answer`)


def _json(value) -> bytes:
    """`value` as Starlette's JSONResponse writes it (compact, UTF-8, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def score_answer(scorer: PerplexityScorer, text: str, threshold: float | None = None,
                 input_empty: bool | None = None) -> bytes:
    """The JSON answer of POST /api/score: every sentence of `text` with its span, perplexity, block
    and verdict, and the cleaned text.

    All of it is `PerplexityScorer.clean`'s own result (`CleanResult.spans`,
    `token_counts`, `blocks`, `keep`, `perplexities`): one scoring pass, nothing
    recomputed.  Token counts and block numbers let the page re-run the method (`scoring.methods`)
    as the threshold moves; perplexities are sent unrounded so that it reaches the same
    verdicts.  Text passed through unscored (not the model's language) is only split, for
    display: every sentence kept, without a perplexity.
    ``empty`` says why the cleaned text is empty, as `plexity clean` counts it (`policy.empty_reason`;
    `input_empty` tells pasted HTML without text from an empty paste), None when it is not.

    The sentences are written `SENTENCE_BATCH` at a time, never all as dicts at once: a 2 MB body of
    690,000 one-letter lines made 690,000 dicts (265 MB) beside their 77 MB of JSON, and the
    server grew by 480 MB for that one request.
    """
    try:
        result = scorer.clean(text, threshold=threshold)
    except ModelError as exc:  # e.g. a model without a default threshold and none given
        raise ApiError(400, str(exc)) from exc
    empty = empty_reason(result, text, input_empty)
    text = sanitize(text)[0]
    if result.passthrough:
        rows = (((start, end), None, None, block, True)
                for (start, end), block in zip(*split_with_blocks(text, scorer.max_sentence_chars)))
    else:
        rows = zip(result.spans, result.perplexities, result.token_counts, result.blocks, result.keep)
    rest = _json({"clean_text": result.text, "threshold": result.threshold,
                  "model": scorer.model_name, "method": scorer.method, "text": text, "passthrough": result.passthrough,
                  "empty": empty,
                  "method_params": {"negative_token_cap": methods.NEGATIVE_TOKEN_CAP,
                                    "short_block_tokens": methods.SHORT_BLOCK_TOKENS,
                                    "trim_max_tokens": methods.TRIM_MAX_TOKENS,
                                    "trim_relative": methods.TRIM_RELATIVE,
                                    "regions_fraction": methods.REGIONS_FRACTION}})
    parts = [b'{"sentences":[']
    while batch := [{"text": text[start:end], "start": start, "end": end, "perplexity": value, "tokens": n,
                     "block": block, "kept": kept}
                    for (start, end), value, n, block, kept in itertools.islice(rows, SENTENCE_BATCH)]:
        if len(parts) > 1:
            parts.append(b",")
        parts.append(_json(batch)[1:-1])
    del result, rows  # (the scores' lists, before the answer is joined: not both at their peak)
    parts += [b"],", rest[1:]]
    return b"".join(parts)


def create_app(model: str | None = None, extractor: str = DEFAULT_WEB_EXTRACTOR,
               max_bytes: int = DEFAULT_MAX_BYTES, allowed_hosts: list[str] | None = None,
               extract_timeout: float | None = DEFAULT_EXTRACT_TIMEOUT, workers: int = DEFAULT_WORKERS,
               queue: int = DEFAULT_QUEUE, extract_memory: int | str | None = None,
               body_timeout: float | None = DEFAULT_BODY_TIMEOUT, warm_up: bool = False,
               ip_address_hosts: bool = False) -> Starlette:
    """The demo's ASGI app.

    Args:
        model: the default model (name or path; None = the embedded model).
        extractor: HTML-to-text extractor used when a request names none.
        max_bytes: largest request body accepted; larger ones get 413.
        allowed_hosts: Host header values accepted (None = any).
        ip_address_hosts: with `allowed_hosts`, accept a Host that is an IP address too (`is_ip_address_host`).
        extract_timeout: seconds allowed to extract one page (a longer one is stopped: 422);
            0 or None: no limit.
        workers: threads scoring requests (`ScoringQueue`).
        queue: requests waiting for a scoring thread; one more is answered 503 with Retry-After.
        extract_memory: bytes of resident memory (RSS) an extraction process may hold (a page past it:
            422); None: ``PLEXITY_EXTRACT_MEMORY``, else 768 MiB; 0: no ceiling.
        body_timeout: seconds a request body may take to arrive, before the request takes a
            place in the queue (a slower one: 408); 0 or None: no limit.
        warm_up: start the default extractor's child and open the default model now: an installation that cannot
            start it raises here (`ExtractorCannotStart`), at start-up, not at the first request.
    """
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor {extractor!r}: choose one of {', '.join(EXTRACTORS)}")
    scorers = ScorerCache(model)
    # Extraction in child processes stopped past the time limit (at most two at once per
    # extractor: the machine's cores, not the thread pool's 40 threads).
    extractors = {name: TimeLimitedExtractor(name, timeout=extract_timeout, processes=2, memory_limit=extract_memory)
                  for name in EXTRACTORS}
    say_once(extractors[extractor].memory_note,  # (the job's memory lowered its default ceiling ...)
             lambda note: print(f"plexity serve: warning: {note}", file=sys.stderr, flush=True))
    if warm_up:
        extractors[extractor].warm_up()
        # (the default model opened now, not by the first request: it took 0.15 s for the embedded one, and a server
        # answering its readiness check sooner than its first request)
        scorers.get(None)
    scoring = ScoringQueue(workers, queue)
    # (a body for each place in the queue, and as many arriving: the bodies held are bounded, not their senders)
    bodies = BodyBudget(2 * scoring.capacity * max_bytes)

    def refusal(exc: ApiError) -> Response:
        response = api_error_response(exc)
        if exc.status == 503:  # (busy: a retry may succeed, after about this long)
            response.headers["Retry-After"] = str(scoring.retry_after())
        if exc.status == 415:  # (RFC 9110 15.5.16: the content codings the server takes, none)
            response.headers["Accept-Encoding"] = "identity"
        return response

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    async def api_models(request: Request) -> Response:
        available = await run_in_threadpool(scorers.available)
        return JSONResponse({"models": list(available.values()), "default": scorers.default_name,
                             "extractors": list(EXTRACTORS), "default_extractor": extractor,
                             "methods": list(methods.METHODS),
                             "max_bytes": max_bytes})

    async def api_decode(request: Request) -> Response:
        try:
            content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type != "application/octet-stream":
                raise ApiError(415, "send the file's bytes as Content-Type: application/octet-stream")
            with bodies.hold() as take:
                raw = await _read_body(request, max_bytes, body_timeout, take)
                # (on a scoring thread: a 2 MB Latin-1 file took 0.5 s to decode (0.1 s now), on the event loop every
                # other request waited for it; ten at once held GET /api/models for 2.8 s)
                return Response(await off_loop(decode, raw), media_type="application/json")
        except ApiError as exc:
            return refusal(exc)

    def decode(raw: bytes) -> bytes:
        refuse_binary(raw, "the file")
        text, charset = decode_html(raw)
        return _json({"text": text, "charset": charset})

    async def off_loop(function, *args):
        """`function(*args)` on a scoring thread, once it has a place in the queue (503 when it is full)."""
        if not scoring.admit():  # full: refused at once
            raise ApiError(503, f"busy: {scoring.capacity} requests are being scored or waiting; try again in a "
                                f"moment")
        # (the place is given back when the work ends, not before, even if the client has gone)
        return await scoring.submit(function, *args)

    async def api_score(request: Request) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return error_response(415, "send the request as Content-Type: application/json")
        try:
            with bodies.hold() as take:  # (given back when the request ends: its body is freed then)
                return await score(await _read_body(request, max_bytes, body_timeout, take))  # (before a place)
        except ApiError as exc:
            return refusal(exc)

    async def score(body: bytes) -> Response:

        def work() -> bytes:  # all of the CPU work, JSON both ways included, off the event loop
            query = _parse_request(body)
            refuse_binary(query["text"], '"text"')
            form_extractor = query["extractor"] or extractor
            # as `plexity clean` does: trim a main-content extractor's output, find the regions of tag text
            method = query["method"] or (methods.method_for_extractor(form_extractor)
                                         if query["format"] == "html" else methods.DEFAULT_METHOD)
            scorer = scorers.get(query["model"], method)
            text, input_empty = query["text"], None
            if query["format"] == "html":
                input_empty = not text.strip()  # (else text but none extracted: no_text_extracted)
                # 422, Unprocessable Content: the request is well formed (not a 400), its body within --max-bytes
                # (not a 413: that is the body's size), but this page cannot be read within the server's limits,
                # and sent again it would not be either (not a 503, which a client retries; a 504 is a gateway's)
                try:
                    text = extractors[form_extractor](text)
                except ExtractionTimeout as exc:  # (the options named: what the server's operator can raise)
                    raise ApiError(422, f"could not extract text from the HTML in time: {exc} (the server's "
                                        f"--extract-timeout)", limit="--extract-timeout") from exc
                except ExtractionMemoryLimit as exc:
                    raise ApiError(422, f"could not extract text from the HTML: {exc} (the server's "
                                        f"--extract-memory)", limit="--extract-memory") from exc
                except ExtractionError as exc:  # (past the parser's own limits: nested too deeply)
                    raise ApiError(422, f"could not extract text from the HTML: {exc}") from exc
            return score_answer(scorer, text, query["threshold"], input_empty)

        return Response(await off_loop(work), media_type="application/json")

    routes = [
        Route("/", index),
        Route("/api/models", api_models),
        Route("/api/decode", api_decode, methods=["POST"]),
        Route("/api/score", api_score, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    middleware = [Middleware(SecurityHeadersMiddleware), Middleware(AbsoluteFormMiddleware)]
    if allowed_hosts:
        middleware.append(Middleware(JSONTrustedHostMiddleware, allowed_hosts=allowed_hosts,
                                     ip_addresses=ip_address_hosts))
    @contextlib.asynccontextmanager
    async def lifespan(app):
        warn_when_out_of_descriptors(asyncio.get_running_loop())
        yield
        scoring.close()
        for limited in extractors.values():
            limited.close()

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                     exception_handlers={HTTPException: http_error, Exception: internal_error})
