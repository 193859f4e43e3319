"""A pyplexity user's first day, probe 41: pyplexity's (0.2.12) commands, options and Python names, typed here as
its users first type them.  Each answered with argparse's or Python's bare words ("invalid choice", "unrecognized
arguments", "cannot import name"), naming nothing to use instead; now each names our equivalent and
docs/from-pyplexity.md, and nothing is read or written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def plexity(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def pages(tmp_path: Path) -> Path:
    folder = tmp_path / "html_source"
    folder.mkdir()
    (folder / "a.html").write_text("<html><body><p>The council approved the budget on Tuesday.</p></body></html>")
    return folder


@pytest.mark.parametrize("command, meant", [
    (["perplexity", "this is normal text"], 'plexity score "TEXT"'),
    (["bulk-perplexity", "html_source", "--output-dir", "cleaned"], "plexity clean INPUT_DIR -o OUTPUT_DIR"),
    (["-v", "tag-remover", "html_source"], "plexity clean INPUT_DIR -o OUTPUT_DIR --extractor tags --threshold inf"),
    (["fileserver", "--base-dir", "html_source"], "plexity run INPUT_DIR -o OUTPUT_DIR --executor slurm"),
])
def test_a_pyplexity_command_names_the_command_that_does_its_job(tmp_path, command, meant):
    """`plexity perplexity "this is normal text"` said "argument COMMAND: invalid choice: 'perplexity' (choose from
    'score', 'clean', ...)": which of them scores a sentence was left to guess, and `bulk-perplexity` (clean) and
    `tag-remover` (clean --extractor tags) are not guessed from their names."""
    pages(tmp_path)
    result = plexity(*command, cwd=tmp_path)
    assert result.returncode == 2
    word = command[1] if command[0] == "-v" else command[0]
    assert f"plexity: error: '{word}' is a pyplexity command: here it is {meant}" in result.stderr, result.stderr
    assert "docs/from-pyplexity.md" in result.stderr
    assert "invalid choice" not in result.stderr
    assert not (tmp_path / "cleaned").exists() and not (tmp_path / "out_dir").exists()


def test_pyplexity_options_name_ours_and_say_8000_does_not_carry_over(tmp_path):
    """`plexity clean html_source -o cleaned --perpl-limit 8000 --warc-input` said only "unrecognized arguments":
    no word of --threshold, nor that 8000, pyplexity's default for its own models, means nothing to a KenLM model,
    nor that WARC files need no flag."""
    pages(tmp_path)
    result = plexity("clean", "html_source", "-o", "cleaned", "--perpl-limit", "8000", "--warc-input", cwd=tmp_path)
    assert result.returncode == 2
    assert "--perpl-limit is pyplexity's: here plexity clean's and plexity run's --threshold T" in result.stderr
    assert "8000 was for its own models and does not carry over" in result.stderr
    assert "--warc-input is pyplexity's: not needed" in result.stderr
    assert not (tmp_path / "cleaned").exists()


def test_pyplexity_distributed_options_are_named_once_with_plexity_run(tmp_path):
    """`--distributed --n-workers 4 --node 2 --url master --port 8866` (pyplexity's cluster mode, its file server
    handing out files) said "unrecognized arguments"; one sentence now names plexity run's --workers and executors."""
    pages(tmp_path)
    result = plexity("clean", "html_source", "-o", "cleaned", "--distributed", "--n-workers", "4", "--node", "2",
                     "--url", "master", "--port=8866", cwd=tmp_path)
    assert result.returncode == 2
    assert ("--distributed, --n-workers, --node, --url, --port are pyplexity's: plexity run INPUT_DIR -o OUTPUT_DIR "
            "spreads WARC files over --workers N local processes") in result.stderr, result.stderr
    assert result.stderr.count("pyplexity's") == 1
    # an option of ours is still ours: plexity serve --port is not pyplexity's
    assert "pyplexity" not in plexity("serve", "--port", "x", cwd=tmp_path).stderr


@pytest.mark.parametrize("name, meant", [
    ("PerplexityModel", "plexity_plugins.PerplexityScorer(model): .perplexity(sentence)"),
    ("PerplexityProcessor", "PerplexityScorer(model, threshold=T, method='sentences'): .clean(text).text"),
])
def test_importing_a_pyplexity_name_names_the_scorer(tmp_path, name, meant):
    """`from plexity_plugins import PerplexityModel` (pyplexity's README: `from pyplexity import PerplexityModel`,
    the package name changed) said "cannot import name 'PerplexityModel' from 'plexity_plugins'"."""
    result = subprocess.run([sys.executable, "-c", f"from plexity_plugins import {name}"], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: {name} is pyplexity's: here it is ") and meant in last, last
    assert "docs/from-pyplexity.md" in last
    # the package's own names and errors are as before
    check = subprocess.run([sys.executable, "-c", "import plexity_plugins as p; print(p.PerplexityScorer.__name__, "
                            "hasattr(p, 'NoSuchName'))"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert check.stdout.split() == ["PerplexityScorer", "False"], check.stderr
