"""A new user's first day, as they meet it: the set-up's words, what `plexity train` tells them to
run and that it works, and the exit status and the one line of each command that cannot do what
was asked (issue 39).  Everything runs as a user runs it: scripts with bash, the `plexity`
command as a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def bash(script: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120):
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


# -- set-up ------------------------------------------------------------------------------------

def test_a_set_up_step_says_what_it_does_how_long_it_took_and_speaks_while_it_runs():
    result = bash(f"source {REPO}/scripts/lib.sh && step 'compiling something' bash -c 'echo Collecting numpy; sleep 2.5'",
                  env={"SETUP_NOTE_EVERY": "1"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "setup: compiling something ..."
    assert "setup:   ... 1 s (now: Collecting numpy)" in lines  # a long step is never silent
    assert re.fullmatch(r"setup:   \.\.\. done in [23] s", lines[-1])


def test_a_failing_set_up_step_shows_its_output_and_stops_the_set_up():
    result = bash(f"source {REPO}/scripts/lib.sh && step 'installing' bash -c 'echo ERROR: no wheel for x; exit 7'"
                  f" && echo went on")
    assert result.returncode == 1 and "went on" not in result.stdout
    assert "ERROR: no wheel for x" in result.stderr
    assert "setup: failed: installing (exit 7; the last lines of its output are above; full log: " in result.stderr


def test_set_up_refuses_an_unknown_option_and_explains_its_options():
    result = bash(f"bash {REPO}/scripts/setup.sh --kenlm")
    assert result.returncode == 2
    assert result.stderr.strip() == "setup: unknown option --kenlm (options: --kenlm-tools, --test)"
    usage = bash(f"bash {REPO}/scripts/setup.sh --help").stdout
    assert "--kenlm-tools" in usage and "plexity train" in usage


def test_build_kenlm_without_cmake_names_the_set_up_option_that_installs_it(tmp_path):
    bin_dir = tmp_path / "bin"  # bash and the basics, no cmake, no g++
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        os.symlink(subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip(), bin_dir / tool)
    result = subprocess.run(["bash", str(REPO / "scripts" / "build_kenlm.sh"), str(tmp_path / "kenlm")],
                            capture_output=True, text=True, env={"PATH": str(bin_dir), "PYTHON": sys.executable})
    assert result.returncode == 2
    assert result.stderr.strip() == (f"build_kenlm: cmake g++ missing: run `bash {REPO}/scripts/setup.sh --kenlm-tools`,"
                                     f" which installs what the build needs and builds the tools")


@pytest.mark.environments
def test_after_the_readme_first_command_plexity_train_names_a_command_that_makes_it_work(tmp_path):
    """A fresh checkout: the README's first command as written, then `plexity train` without
    KenLM's tools; what it says to run is run as said; then `plexity train` works."""
    checkout = tmp_path / "plexity_plugins"
    assert bash(f'source {REPO}/scripts/lib.sh && copy_checkout "{REPO}" "{checkout}"').returncode == 0
    first = re.search(r"<!-- run: setup -->\n```bash\n(.*?)\n```", (REPO / "README.md").read_text()).group(1)
    env = {"PLEXITY_KENLM_BIN": str(tmp_path / "kenlm-bin"), "PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    setup = bash(first, cwd=checkout, env=env, timeout=1500)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    said = setup.stdout.splitlines()
    for what in ("Python packages", "compiling kenlm's Python module", "compiling plexity_plugins' extension"):
        start = next(i for i, line in enumerate(said) if line.startswith(f"setup: {what}"))
        assert re.fullmatch(r"setup:   \.\.\. done in (\d+ s|\d+ min \d\d s)", said[start + 1]), said[start:start + 2]
    assert re.fullmatch(r"setup: done in (\d+ s|\d+ min \d\d s)", next(line for line in said if line.startswith(
        "setup: done in")))
    assert (checkout / "cleaned" / "sample.warc.gz").is_file()

    corpus = tmp_path / "news.txt"
    corpus.write_text("The council approved the budget for the new library on Tuesday.\n"
                      "The library opens in the spring and stays open late on weekdays.\n" * 40)
    train = f".venv/bin/plexity train --corpus text --order 3 --name news --holdout-every 0 {corpus}"
    before = bash(train, cwd=checkout, env=env)
    assert before.returncode == 3 and before.stdout == "", before.stderr
    command = re.search(r"install lmplz and build_binary with `([^`]+)`", before.stderr).group(1)
    assert command == f"bash {checkout / 'scripts' / 'setup.sh'} --kenlm-tools"
    installed = bash(command, cwd=tmp_path, env=env, timeout=1500)  # from another folder: the path is absolute
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    assert "setup: Python packages: .venv is up to date" in installed.stdout  # nothing reinstalled
    assert (tmp_path / "kenlm-bin" / "lmplz").is_file()
    after = bash(train, cwd=checkout, env=env)
    assert after.returncode == 0, after.stderr
    assert (tmp_path / "models" / "news" / "model.json").is_file()
