"""`plexity clean` of pages saved by a browser: a SingleFile-style page (its images inline as data: URIs) and an
MHTML ("Webpage, Single File") whose page is followed by a large image, against the same page saved bare.

    .venv/bin/python bench/saved_pages.py [--data-uri-mb 20] [--mhtml-mb 1000] [--rounds 3]

Input (built in a temporary folder): one article page, saved three ways: bare (``page.html``); with `--data-uri-mb`
MB of base64 images inline as data: URIs, as SingleFile saves a page (``singlefile.html``); and as MHTML in
Chrome's layout (``page.mhtml``: the MIME headers Chrome writes, the page's part first, quoted-printable, then one
base64 image part of `--mhtml-mb` MB).  Each round, alternating, ``plexity clean FILE -o DIR -q`` runs once a file
(a new process, the default extractor); measured: its wall time, the peak resident memory of the process
(its ``ru_maxrss``, by ``wait4``) and of its extraction child (``VmHWM``, read from /proc while it runs).  The best
of `--rounds` counts for each.  The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import quopri
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ARTICLE = ("<p>The city council approved the budget on Tuesday after a long debate about school funding.</p>"
           "<p>The plan adds two libraries and repairs forty miles of road over the next three years.</p>")
PAGE = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Budget</title></head><body><nav>Home | News</nav>"
        "<p>The café in Zürich opened its façade to a naïve visitor.</p>" + ARTICLE + "{images}</body></html>")
BOUNDARY = b"----MultipartBoundary--bench----"


def build(folder: Path, data_uri_mb: int, mhtml_mb: int) -> dict[str, Path]:
    files = {"bare page": folder / "page.html", "SingleFile page": folder / "singlefile.html",
             "MHTML": folder / "page.mhtml"}
    files["bare page"].write_text(PAGE.format(images=""), "utf-8")
    image = base64.b64encode(os.urandom(750_000)).decode()  # (1 MB in base64)
    inline = "".join(f'<img src="data:image/png;base64,{image}">' for _ in range(data_uri_mb * 10**6 // len(image)))
    files["SingleFile page"].write_text(PAGE.format(images=inline), "utf-8")
    html = PAGE.format(images="<img src='http://example.org/photo.png'>").encode("utf-8")
    with open(files["MHTML"], "wb") as out:
        out.write(b"From: <Saved by Blink>\r\nSnapshot-Content-Location: http://example.org/page.html\r\n"
                  b"MIME-Version: 1.0\r\nContent-Type: multipart/related;\r\n\ttype=\"text/html\";\r\n\tboundary=\""
                  + BOUNDARY + b"\"\r\n\r\n\r\n--" + BOUNDARY + b"\r\nContent-Type: text/html\r\n"
                  b"Content-Transfer-Encoding: quoted-printable\r\nContent-Location: http://example.org/page.html\r\n"
                  b"\r\n" + quopri.encodestring(html).replace(b"\n", b"\r\n") + b"\r\n--" + BOUNDARY
                  + b"\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
                  b"Content-Location: http://example.org/photo.png\r\n\r\n")
        lines = base64.encodebytes(os.urandom(57 * 10_000)).replace(b"\n", b"\r\n")
        for _ in range(-(-mhtml_mb * 10**6 // len(lines))):
            out.write(lines)
        out.write(b"\r\n--" + BOUNDARY + b"--\r\n")
    return files


def clean(path: Path, out: Path) -> dict:
    """One ``plexity clean`` of `path`: seconds, the process's and its extraction child's peak memory (MB)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "plexity_plugins.cli", "clean", str(path), "-o", str(out), "-q"],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child_kb = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        try:
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        except OSError:
            children = []
        for child in children:
            try:
                status_lines = Path(f"/proc/{child}/status").read_text().splitlines()
            except OSError:
                continue
            child_kb = max([child_kb] + [int(line.split()[1]) for line in status_lines if line.startswith("VmHWM:")])
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"plexity clean {path} failed: {process.stderr.read().decode()}")
    stats = json.loads((out / "plexity-stats.json").read_text())
    return {"seconds": round(seconds, 2), "process_mb": round(usage.ru_maxrss / 1024),
            "extraction_child_mb": round(child_kb / 1024),
            "bytes_in": stats["bytes_in"], "kept_chars": stats["chars_kept"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-uri-mb", type=int, default=20)
    parser.add_argument("--mhtml-mb", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = build(Path(folder), args.data_uri_mb, args.mhtml_mb)
        best: dict[str, dict] = {}
        for round_ in range(args.rounds):
            for name, path in files.items():
                figures = clean(path, Path(folder) / f"out-{round_}-{path.stem}")
                figures["file_mb"] = round(path.stat().st_size / 10**6, 1)
                print(f"round {round_ + 1}, {name}: {figures}", flush=True)
                if name not in best or figures["seconds"] < best[name]["seconds"]:
                    best[name] = figures
    print(json.dumps(best))


if __name__ == "__main__":
    main()
