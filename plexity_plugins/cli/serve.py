"""`plexity serve`: the web demo on a local port."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from ..web import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BYTES, DEFAULT_WEB_EXTRACTOR  # (no Starlette needed for --help)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False




def cmd_serve(args: argparse.Namespace) -> int:
    from ..runtime.extras import require_extra

    require_extra("web", "plexity serve")
    import uvicorn

    from ..web.app import LOOPBACK_HOSTS, create_app

    loopback = _is_loopback(args.host)
    allowed_hosts = args.allowed_host or (LOOPBACK_HOSTS if loopback else None)
    app = create_app(model=args.model, extractor=args.extractor, max_bytes=args.max_bytes,
                     allowed_hosts=allowed_hosts, extract_timeout=args.extract_timeout, workers=args.workers,
                     queue=args.queue, extract_memory=args.extract_memory, body_timeout=args.body_timeout,
                     warm_up=True)
    if not loopback:
        print(f"plexity serve: warning: listening on {args.host}, reachable from other machines; "
              f"the demo has no authentication", file=sys.stderr)
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"plexity serve: http://{shown_host}:{args.port}/  (Ctrl+C to stop)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info" if args.verbose else "warning",
                access_log=args.verbose, server_header=False)
    return 0


def add_parser(subparsers) -> None:
    from ..extractors import EXTRACTORS
    from .options import parse_memory

    p = subparsers.add_parser(
        "serve", help="web demo: paste text or HTML, see each sentence's perplexity and what is dropped",
        description="A one-page web demo and its JSON API (POST /api/score). It never fetches URLs.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--model", "-m", default=None,
                   help="default model, name or path (default: the embedded model); the page can pick "
                        "any model `plexity models` lists")
    p.add_argument("--extractor", choices=EXTRACTORS, default=DEFAULT_WEB_EXTRACTOR,
                   help=f"HTML to text for pasted HTML when the request names none (default: "
                        f"{DEFAULT_WEB_EXTRACTOR}: every visible block, so the filter's work shows)")
    p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES,
                   help=f"largest request body accepted, larger ones get HTTP 413 (default: {DEFAULT_MAX_BYTES})")
    p.add_argument("--extract-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="stop extracting a pasted page after this long: HTTP 422 (default: 30; 0: no limit)")
    p.add_argument("--extract-memory", type=parse_memory, default=None, metavar="SIZE",
                   help="stop extracting a pasted page when its extraction process holds more memory: HTTP 400 "
                        "(default: $PLEXITY_EXTRACT_MEMORY, else 768MiB; 0: no ceiling)")
    p.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT, metavar="SECONDS",
                   help=f"a request body must have arrived within this long, before it waits for a scoring "
                        f"thread; a slower one gets HTTP 408 (default: {DEFAULT_BODY_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--workers", type=int, default=2,
                   help="threads scoring requests (default: 2); the page and /api/models never wait for them")
    p.add_argument("--queue", type=int, default=8,
                   help="requests waiting for a scoring thread; one more gets HTTP 503 with Retry-After "
                        "(default: 8)")
    p.add_argument("--allowed-host", action="append", default=None, metavar="HOST",
                   help="Host header value to accept (repeatable; default: loopback names when bound to "
                        "a loopback address, else any)")
    p.set_defaults(func=cmd_serve)
