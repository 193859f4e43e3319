"""Docs audit 60: the `plexity` commands the pages write in their prose and in their `text` blocks (which
tests/test_docs.py does not run) are commands `plexity` takes: every option exists, every choice is one it
offers, every value is one it reads; so are the bench scripts' commands, by each script's own parser.  Fast: the
parsers alone, nothing is measured.  And the Ray example, run as written where the cluster Ray would join has
stopped, stops at once."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from plexity_plugins.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMANDS = "clean|score|run|serve|report|train|calibrate|models"
# `plexity clean ...` (after `NAME=value` variables), not `plexity run: error: ...` (a message it prints)
COMMAND = re.compile(rf"^(?:[A-Z_]+=\S+ )*plexity (?:-v )?(?:{COMMANDS})(?=\s|$)")
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def written_commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of the `plexity COMMAND ...` a page writes inline (a code span) or as a line of a `text`
    block (not one of what a command printed); not a synopsis (`[--option X]`, `...`), which test_docs_consistency.py reads."""
    found = []
    for match in FENCE.finditer(text):
        shown = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip() == "<!-- output -->"  # (printed)
        if match.group(1) == "text" and not shown:
            first = text.count("\n", 0, match.start()) + 2
            for n, line in enumerate(match.group(2).splitlines()):
                found.append((first + n, line.split("  #")[0].strip()))
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for n, line in enumerate(prose.splitlines(), 1):
        found += [(n, span) for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", line)]
    return [(n, command) for n, command in found
            if COMMAND.match(command) and not re.search(r"\[|\.\.\.|…|\\$", command)]


def parse_error(command: str) -> str | None:
    """What `plexity` says of `command`'s arguments, None if it takes them.  A page's fragment (`plexity run
    --tasks 8`) lacks the arguments the command requires, or ends at an option whose value the prose gives, or
    gives a PLACEHOLDER for a value: those are not errors."""
    argv = shlex.split(command)
    while "=" in argv[0]:
        argv.pop(0)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            _, unknown = build_parser().parse_known_args(argv[1:])
    except SystemExit as stop:
        if stop.code in (0, None):
            return None
        said = stderr.getvalue().strip().splitlines()[-1]
        if "the following arguments are required" in said:
            return None
        if re.search(r"expected (one|at least one) argument", said) and argv[-1].startswith("-"):
            return None
        value = re.search(r": '([^']*)'$", said)
        if value and re.fullmatch(r"[A-Z][A-Z_]*", value.group(1)) and "invalid choice" not in said:
            return None
        return said
    return f"unrecognized arguments: {' '.join(unknown)}" if unknown else None


def test_the_commands_are_found():  # (else the test below checks nothing)
    commands = [c for page in PAGES for _, c in written_commands(page.read_text(encoding="utf-8"))]
    assert len(commands) > 300
    assert "plexity clean page.html --output-dir cleaned --extractor tags" in commands  # inline
    assert "plexity run /shared/crawl/ -o /shared/cleaned --executor ray --ray-address auto" in commands  # text block
    assert "RAY_ADDRESS=ray://HEAD:10001 plexity run /shared/crawl/ -o /shared/cleaned --executor ray" in commands


@pytest.mark.parametrize("command, said", [
    ("plexity clean page.html -o out --extracter tags", "unrecognized arguments: --extracter"),
    ("plexity run crawl/ -o out --extractor learn", "invalid choice: 'learn'"),
    ("plexity run crawl/ -o out --workers two", "not a whole number: 'two'"),
    ("plexity score --method trim TEXT", "unrecognized arguments: --method"),
])
def test_a_command_plexity_does_not_take_is_found(command, said):
    assert said in (parse_error(command) or ""), parse_error(command)


@pytest.mark.parametrize("command", ["plexity run --tasks 8", "plexity clean --max-document-bytes",
                                     "plexity run DIR -o OUT --workers N", "PLEXITY_X=1 plexity models"])
def test_a_fragment_or_a_placeholder_is_not_an_error(command):
    assert parse_error(command) is None


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_plexity_command_a_page_writes_is_one_plexity_takes(page):
    wrong = [f"{page.name}:{n}: `{command}`: {said}" for n, command in written_commands(page.read_text(encoding="utf-8"))
             if (said := parse_error(command))]
    assert not wrong, "\n".join(wrong)


def test_the_ray_example_stops_at_once_when_the_cluster_ray_would_join_has_stopped(tmp_path):
    """docs/ray.md's `python examples/datatrove_ray.py` (no --address: "$RAY_ADDRESS, else the one `ray start` started
    here, else a Ray of this machine's CPUs") called `ray.init()` itself, which joins the address the last `ray start`
    left in Ray's folder (`ray_current_cluster`): on a machine whose `ray start` cluster had since stopped (ended
    without `ray stop`, as the tests' clusters are), it waited through Ray's retries, minutes of "Failed to connect to
    GCS" (killed after 500 s).  Now it says so in one line, exit status 2, before Ray is started."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as closed:  # (bound, never listening: a connection to it is refused)
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text(address)
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        env.update(RAY_TMPDIR=str(tmp_path), PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, str(REPO / "examples" / "datatrove_ray.py"), str(REPO / "examples"),
                               str(tmp_path / "out")], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=60)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"datatrove_ray.py: error: no Ray cluster answers at {address} (Connection refused)"), done.stderr[-3000:]


# -- the bench scripts' commands ------------------------------------------------------------------

# Parse a script's arguments as its own parser does, then stop: nothing is measured, no benchmark data is read.
PARSE_ONLY = """
import argparse, runpy, sys
def parse_only(self, args=None, namespace=None):
    parsed = parse(self, args, namespace)
    print("parsed:", sorted(vars(parsed)))
    raise SystemExit(0)
parse, argparse.ArgumentParser.parse_args = argparse.ArgumentParser.parse_args, parse_only
sys.argv = sys.argv[1:]
sys.path.insert(0, "bench")
runpy.run_path(sys.argv[0], run_name="__main__")
raise SystemExit("the script parsed no arguments")
"""


def bench_commands() -> set[tuple[str, str]]:
    """(script, arguments) of each `bench/NAME.py ...` a page writes as a code span (one may run over a line)."""
    found = set()
    for page in PAGES:
        prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text(encoding="utf-8"))
        for span in re.findall(r"(?<!`)`([^`]+?)`(?!`)", prose):
            span = " ".join(span.split())
            if "\n\n" not in span and (match := re.match(r"^(?:\S*python\S*\s+)?(bench/\w+\.py)(.*)$", span)):
                found.add((match.group(1), match.group(2).strip()))
    return found


def test_the_bench_commands_are_found():  # (else the test below checks nothing)
    commands = bench_commands()
    assert ("bench/scrapy_crawl.py", "--pages 2000 20000 --without --pause-at 0.5") in commands
    assert any(script == "bench/ray_nodes.py" and "--write" in arguments for script, arguments in commands)  # 2 lines
    assert len([c for c in commands if c[1]]) >= 12


def test_every_bench_command_a_page_writes_is_one_its_script_takes(tmp_path):
    """The pages give the bench scripts' commands that made their figures (`.venv/bin/python bench/quality.py --bench
    /work/shared/bench --figures docs/figures ...`); the lead runs them, the tests never do.  Each script exists, and
    the arguments a page gives it are ones its parser takes."""
    import subprocess
    import sys

    wrong = []
    for script, arguments in sorted(bench_commands()):
        if not (REPO / script).is_file():
            wrong.append(f"{script}: no such script")
        elif arguments:
            done = subprocess.run([sys.executable, "-c", PARSE_ONLY, script, *shlex.split(arguments)], cwd=REPO,
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0 or "parsed:" not in done.stdout:
                wrong.append(f"{script} {arguments}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    assert not wrong, "\n".join(wrong)
