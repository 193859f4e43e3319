"""Generated figures: where the bench scripts write their tables, and the line that says what made them.

Each script writes ``docs/figures/NAME.md`` (Markdown tables the docs include) and ``NAME.json`` (every
figure, with its provenance) from one run, so that the docs cannot drift from the last run.  Each table is
headed by one line naming the command, the commit (``+ uncommitted changes`` when the checkout differs
from it, ``no git`` outside a checkout), the date and the versions of the libraries measured.

Standard library only: tests import it without the benchmark data.
"""

from __future__ import annotations

import datetime
import json
import platform
import shlex
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIGURES = REPO / "docs" / "figures"


def _bench_root() -> Path:
    """The benchmark data: ``shared/bench`` beside the checkout or beside one of its parent folders
    (a worktree under ``wt/NAME`` finds the same data as the main checkout)."""
    for folder in REPO.parents:
        if (folder / "shared" / "bench").is_dir():
            return folder / "shared" / "bench"
    return REPO.parent / "shared" / "bench"


BENCH = _bench_root()
# The libraries whose versions decide the figures (extraction, parsing, scoring, the pipelines).
LIBRARIES = ("plexity-plugins", "trafilatura", "resiliparse", "justext", "lxml", "datatrove", "kenlm")


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def code_version() -> str:
    """``abc1234``, ``abc1234 + uncommitted changes``, or ``no git``.  Changes under docs/figures/
    (the outputs themselves) do not count."""
    commit = _git("rev-parse", "--short", "HEAD")
    if not commit:
        return "no git"
    status = _git("status", "--porcelain", "--", ".", ":(exclude)docs/figures")
    return f"{commit} + uncommitted changes" if status else commit


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "absent"
    return versions


def provenance(script: str, argv: list[str] | None = None) -> dict:
    """What made a figure: the command as typed from the repository's root, the code, the date, the libraries."""
    argv = sys.argv[1:] if argv is None else argv
    return {"command": shlex.join([".venv/bin/python", script, *argv]), "code": code_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "versions": library_versions()}


def header_line(prov: dict) -> str:
    """The one line heading a table: command, commit, date, library versions."""
    versions = ", ".join(f"{name} {v}" for name, v in prov["versions"].items() if v != "absent")
    return f"Made by `{prov['command']}` on commit {prov['code']}, {prov['date']}; {versions}."


def write(tables: dict[str, str], data: dict, name: str, folder: Path = FIGURES) -> list[Path]:
    """Write each of `tables` (name -> Markdown) as NAME.md and `data` as `name`.json into `folder`
    (created if missing); returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for table_name, markdown in tables.items():
        paths.append(folder / f"{table_name}.md")
        paths[-1].write_text(markdown.rstrip("\n") + "\n", encoding="utf-8")
    paths.append(folder / f"{name}.json")
    paths[-1].write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return paths


def publish(tables: dict[str, str], data: dict, name: str, folder: Path | None) -> None:
    """`write` the tables and data to `folder` (a full run's docs/figures, or --figures DIR) and
    say where, or say why nothing was written (a partial run must not replace the docs' figures)."""
    if folder:
        written = write(tables, data, name, folder)
        print(f"figures written: {', '.join(str(p) for p in written)}", file=sys.stderr)
    else:
        print("not a full run: figures not written to docs/figures (pass --figures DIR to write them)",
              file=sys.stderr)


def cell(text: str) -> str:
    """`text` as a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(heads: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(cell(h) for h in heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
