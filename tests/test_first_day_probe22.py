"""A stranger's first day, probe 22: the dead ends a newcomer met, each now working or one line
that says what is wrong and what to do, with a non-zero exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def run(*args, cwd: Path | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ})


def plexity(*args, cwd: Path | None = None, timeout: float = 300):
    return run("-m", "plexity_plugins.cli", *args, cwd=cwd, timeout=timeout)


def error_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_python_dash_m_plexity_plugins_is_the_plexity_command():
    # (it said "No module named plexity_plugins.__main__; 'plexity_plugins' is a package and cannot be
    # directly executed")
    result = run("-m", "plexity_plugins", "score", "--plain", "The council approved the budget on Tuesday.")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split()[-1]) > 0
    usage = run("-m", "plexity_plugins", "--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: plexity ")

