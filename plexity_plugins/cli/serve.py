"""`plexity serve`: the web demo on a local port."""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import shlex
import signal
import socket
import sys
import threading
from pathlib import Path

from ..web import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BYTES, DEFAULT_WEB_EXTRACTOR  # (no Starlette needed for --help)


# connections waiting to be accepted; asyncio also tries this many accepts in a row, each failing, while the
# process is out of file descriptors (uvicorn's 2,048: 14 s of CPU in 30 s)
LISTEN_BACKLOG = 128


# the signals that stop the server gracefully: Ctrl+C, a service manager's or a container's stop, and SIGHUP (the
# terminal closed, or `kill -HUP` meant as a reload: there is nothing to reload, a model trained again or calibrated
# is opened anew at its next request), which ended the process at once, answers half-written
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _port(text: str) -> int:
    """A TCP port, as an argument type: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {text!r} (0 to 65535; 0: any free port)")
    return port


class _OneModel(argparse.Action):
    """``--model``: one name or path.  A language map (``--model en=X --model de=Y``, as `plexity clean`
    and `plexity run` take) is refused by name: it used to be read as a model called 'en=X' (or the
    last ``--model`` won), and the error said no such model was installed."""

    def __call__(self, parser, namespace, value, option_string=None):
        if getattr(namespace, self.dest) is not None:
            parser.error(f"argument {option_string}: given twice; plexity serve takes one model (a request "
                         f"can name any other that `plexity models` lists)")
        language, sep, model = value.partition("=")
        if sep and language.strip() and model.strip() and not Path(value).exists():
            parser.error(f"argument {option_string}: {value!r} is a language map entry (LANG=MODEL), which "
                         f"plexity clean and plexity run take; plexity serve scores with one model: name it "
                         f"(e.g. --model {shlex.quote(model.strip())}), and a request can name any that `plexity "
                         f"models` lists")
        setattr(namespace, self.dest, value)


def _listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`, as uvicorn binds one (Config.bind_socket), but bound here:
    a port in use is known before the URL is printed, and port 0's real port can be shown."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except BaseException:
        sock.close()
        raise
    return sock


def _listen_advice(exc: OSError) -> str:
    """What to change when the socket cannot be bound: the port, or the host (a name that does not resolve,
    an address of another machine), which a port-only advice sent users away from."""
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return ("--host is an address of this machine: 127.0.0.1 (this machine only, the default) or 0.0.0.0 "
                "(every interface)")
    if exc.errno == errno.EACCES:
        return "ports under 1024 need root: give --port 8000 or another above 1023 (--port 0: any free one)"
    return "give another --port (--port 0: any free one)"


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, stopped by `STOP_SIGNALS` the same way, in a line of the log, with exit status 0: uvicorn
        raised SIGTERM again once it had stopped gracefully, so that the process ended killed by it (status 143, a
        failed stop to a container's runtime), and without a word at the server's log level."""

        stopped_by: int | None = None

        def handle_exit(self, sig, frame) -> None:
            if self.stopped_by is None:
                self.stopped_by = sig
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self):  # (as uvicorn's, with SIGHUP, and no signal raised again after the stop)
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets=None) -> None:
            grace = self.config.timeout_graceful_shutdown
            cause = signal.Signals(self.stopped_by).name if self.stopped_by else "stop"
            under_way = len(self.server_state.tasks)
            print(f"plexity serve: {cause}: stopping: new connections are refused, "
                  f"{'the 1 request' if under_way == 1 else f'the {under_way} requests'} under way "
                  f"get {f'{grace:g} s (--body-timeout)' if grace else 'the time they take'} "
                  f"to finish", file=sys.stderr, flush=True)
            await super().shutdown(sockets)

    return Server


def cmd_serve(args: argparse.Namespace) -> int:
    from ..runtime.extras import require_extra

    require_extra("web", "plexity serve")
    try:  # before the model and the extractor are loaded: a port in use fails at once
        sock = _listen_socket(args.host, args.port)
    except OSError as exc:
        print(f"plexity serve: error: cannot listen on {args.host} port {args.port}: "
              f"{exc.strerror or exc}: {_listen_advice(exc)}", file=sys.stderr)
        return 2
    with sock:
        return _serve(args, sock)


def _serve(args: argparse.Namespace, sock: socket.socket) -> int:
    import uvicorn

    from ..scoring.models import resolve
    from ..web.app import LOOPBACK_HOSTS, create_app
    from ..web.protocol import protocol_class

    loopback = _is_loopback(args.host)
    # Bound to another address, it took any Host: a web page the user visited could rebind its own name to this
    # machine (DNS rebinding) and use the API from the user's browser.  Its address and this machine's name are
    # what other machines reach it by; --allowed-host names others (a proxy's public name, a DNS name).
    own_names = [] if loopback else [socket.gethostname(), f"{socket.gethostname()}.local"]
    allowed_hosts = args.allowed_host or LOOPBACK_HOSTS + own_names
    app = create_app(model=args.model, extractor=args.extractor, max_bytes=args.max_bytes,
                     allowed_hosts=allowed_hosts, extract_timeout=args.extract_timeout, workers=args.workers,
                     queue=args.queue, extract_memory=args.extract_memory, body_timeout=args.body_timeout,
                     warm_up=True, ip_address_hosts=not loopback and not args.allowed_host)
    default = resolve(args.model)
    if default.threshold is None:  # (the page and every request without "threshold" would answer an error)
        print(f"plexity serve: warning: model '{default.name}' has no default threshold: every request without "
              f"\"threshold\", the page's first included, gets an error; `plexity calibrate --model "
              f"{shlex.quote(default.name)} "
              f"CLEAN_TEXT --write` gives it one", file=sys.stderr)
    if not loopback:
        names = ", ".join(args.allowed_host) if args.allowed_host else \
            f"its IP addresses, localhost or {socket.gethostname()}; --allowed-host NAME adds a name it is reached by"
        print(f"plexity serve: warning: listening on {args.host}, reachable from other machines; "
              f"the demo has no authentication; it answers requests addressed to {names}", file=sys.stderr)
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    sock.listen(LISTEN_BACKLOG)  # from now on the URL printed answers (queued until uvicorn accepts)
    port = sock.getsockname()[1]  # (the one the system chose for --port 0)
    # (on stdout, what the command answers: `plexity serve --port 0 > url.txt &` learns the port; warnings and
    # uvicorn's log stay on stderr)
    print(f"plexity serve: http://{shown_host}:{port}/  (Ctrl+C to stop)", flush=True)
    # (uvicorn's h11 protocol with JSON 400s, and --body-timeout on headers and on unread answers too)
    # (stopped, it waits for the answers under way for --body-timeout at most: a client that read its answer
    # slowly kept it running for as long as it read, 40 minutes for 80 MB at 32 kB/s)
    config = uvicorn.Config(app, host=args.host, port=port, log_level="info" if args.verbose else "warning",
                            access_log=args.verbose or args.access_log, server_header=False,
                            http=protocol_class(args.body_timeout, args.max_bytes),
                            timeout_graceful_shutdown=args.body_timeout or None, backlog=LISTEN_BACKLOG)
    if args.access_log:  # (one line a request on stdout, the rest of uvicorn's log staying at warnings on stderr)
        import logging

        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    server = _server_class()(config)
    try:  # as uvicorn.run does, on our socket
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    if server.started:
        print("plexity serve: stopped", file=sys.stderr, flush=True)
    return 0 if server.started else 3


def add_parser(subparsers) -> None:
    from ..extractors import EXTRACTORS
    from .options import parse_memory, parse_seconds, parse_size, positive_int

    p = subparsers.add_parser(
        "serve", help="web demo: paste text or HTML, see each sentence's perplexity and what is dropped",
        description="A one-page web demo and its JSON API (POST /api/score). It never fetches URLs.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8000, help="port (default: 8000; 0: any free port, printed)")
    p.add_argument("--model", "-m", default=None, action=_OneModel,
                   help="default model, name or path (default: the embedded model); the page can pick "
                        "any model `plexity models` lists")
    p.add_argument("--extractor", choices=EXTRACTORS, default=DEFAULT_WEB_EXTRACTOR,
                   help=f"HTML to text for pasted HTML when the request names none (default: "
                        f"{DEFAULT_WEB_EXTRACTOR}: every visible block, so the filter's work shows)")
    p.add_argument("--max-bytes", type=parse_size, default=DEFAULT_MAX_BYTES, metavar="SIZE",
                   help=f"largest request body accepted (e.g. 2MiB), larger ones get HTTP 413 "
                        f"(default: {DEFAULT_MAX_BYTES})")
    p.add_argument("--extract-timeout", type=parse_seconds, default=30.0, metavar="SECONDS",
                   help="stop extracting a pasted page after this long: HTTP 422 (default: 30; 0: no limit)")
    p.add_argument("--extract-memory", type=parse_memory, default=None, metavar="SIZE",
                   help="stop extracting a pasted page when its extraction process holds more memory: HTTP 422 "
                        "(default: $PLEXITY_EXTRACT_MEMORY, else 768MiB, less where the job's memory holds less; "
                        "0: no ceiling)")
    p.add_argument("--body-timeout", type=parse_seconds, default=DEFAULT_BODY_TIMEOUT, metavar="SECONDS",
                   help=f"a request's headers, and then its body, must have arrived within this long (the body "
                        f"before it waits for a scoring thread); a slower one gets HTTP 408, and a client that "
                        f"takes nothing of its answer for this long is disconnected; stopped, the server waits "
                        f"this long at most for the answers under way (default: {DEFAULT_BODY_TIMEOUT:g}; 0: no "
                        f"limit)")
    p.add_argument("--workers", type=positive_int, default=2,
                   help="threads scoring requests (default: 2); the page and /api/models never wait for them")
    p.add_argument("--queue", type=int, default=8,
                   help="requests waiting for a scoring thread; one more gets HTTP 503 with Retry-After "
                        "(default: 8)")
    p.add_argument("--access-log", action="store_true",
                   help="one line a request on stdout (client, request line, status), for a log collector "
                        "(`plexity -v serve` also logs uvicorn's start and stop on stderr)")
    p.add_argument("--allowed-host", action="append", default=None, metavar="HOST",
                   help="Host header value to accept (repeatable; default: loopback names, and when bound to "
                        "another address, IP addresses and this machine's name too)")
    p.set_defaults(func=cmd_serve)
