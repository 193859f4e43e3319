"""rs-trafilatura's extraction for bench/quality.py, in a child process of another Python.

rs-trafilatura (Rust) has one Python binding on PyPI, trafipy, whose wheels need Python 3.12 or later; the
bench runs on our environment's Python (3.11 on Debian 12).  bench/quality.py starts this file with the
interpreter its ``--rs-python`` names (one where ``pip install trafipy`` worked) and talks to it
in JSON lines: it first writes ``{"version": ...}``, then for each line ``{"html": ...}`` read on stdin one
line ``{"text": ..., "cpu": ..., "error": ...}``, the text of trafipy's ``extract`` with its defaults and
``include_comments=False`` (as trafilatura is called), and the CPU seconds that call took in this process.
Imports nothing of plexity_plugins: the child's Python has none of it.
"""

import json
import sys
import time
from importlib.metadata import version

import trafipy


def main() -> int:
    out = sys.stdout
    out.write(json.dumps({"version": version("trafipy")}) + "\n")
    out.flush()
    for line in sys.stdin:
        html = json.loads(line)["html"]
        started = time.process_time()
        try:
            text, error = trafipy.extract(html, include_comments=False).text or "", None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException; the bench scores an empty page
            text, error = "", repr(exc)
        out.write(json.dumps({"text": text, "cpu": time.process_time() - started, "error": error}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
