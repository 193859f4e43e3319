"""Every development page's text by each extractor, dumped, and two dumps compared byte for byte.

    .venv/bin/python bench/dev_texts.py dump OUT.json.gz [--extractors learned,dense,fast,trafilatura,auto]
    .venv/bin/python bench/dev_texts.py compare BEFORE.json.gz AFTER.json.gz

A change that must not touch ordinary pages (a bound on hostile markup, a faster parse) is checked by a
dump before it and one after: ``compare`` lists every page whose text differs (exit 1), else says how
many texts are the same.  The pages are every file under ``html/`` of the four sets of ``shared/bench``
(articles-dev, cleaneval-dev, traf-eval-dev, wcxb-dev: 2,144 pages), decoded as the front ends decode
a body (`decode_html`: its BOM, its meta charset, else UTF-8) and read in this process (no sandbox: the
development pages are ordinary).  A page an extractor refuses is dumped as ``error: `` and the message.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402

from plexity_plugins.errors import ExtractionError  # noqa: E402
from plexity_plugins.extractors import decode_html, get_extractor  # noqa: E402

SETS = ("articles-dev", "cleaneval-dev", "traf-eval-dev", "wcxb-dev")
DEFAULT_EXTRACTORS = ("learned", "dense", "fast", "trafilatura", "auto")


def pages(bench: Path):
    """(set/file name, decoded HTML) of every development page, in a fixed order."""
    for name in SETS:
        for path in sorted((bench / name / "html").iterdir()):
            raw = path.read_bytes()
            if path.suffix == ".gz":
                raw = gzip.decompress(raw)
            yield f"{name}/{path.name}", decode_html(raw)[0]


def dump(out: Path, extractors: list[str], bench: Path) -> None:
    functions = {name: get_extractor(name) for name in extractors}
    texts: dict[str, dict[str, str]] = {name: {} for name in extractors}
    seconds = dict.fromkeys(extractors, 0.0)
    for key, html in pages(bench):
        for name, function in functions.items():
            started = time.perf_counter()
            try:
                texts[name][key] = function(html)
            except ExtractionError as exc:
                texts[name][key] = f"error: {exc}"
            seconds[name] += time.perf_counter() - started
    out.write_bytes(gzip.compress(json.dumps({"code": figures.code_version(), "texts": texts}).encode()))
    for name in extractors:
        print(f"{name}: {len(texts[name])} pages, {seconds[name]:.1f} s")


def compare(before: Path, after: Path) -> int:
    old = json.loads(gzip.decompress(before.read_bytes()))
    new = json.loads(gzip.decompress(after.read_bytes()))
    print(f"before: {old['code']}\nafter:  {new['code']}")
    differing = 0
    for name in sorted(set(old["texts"]) & set(new["texts"])):
        a, b = old["texts"][name], new["texts"][name]
        changed = sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))
        differing += len(changed)
        print(f"{name}: {len(a)} pages, {len(changed)} texts differ" + "".join(f"\n  {key}" for key in changed[:20]))
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, default=figures.BENCH)
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--extractors", default=",".join(DEFAULT_EXTRACTORS))
    comparing = commands.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args.out, args.extractors.split(","), args.bench)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
