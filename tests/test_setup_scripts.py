"""The set-up scripts' shared pieces, run for real: copying a checkout without git (a tarball),
and the Slurm script's port check and stop."""

from __future__ import annotations

import os
import re
import socket
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_setup_for_tests_installs_git_curl_bzip2_and_wget():
    # the environment tests copy the checkout with git; the docs' JSON API example uses curl
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert "packages+=(git curl ca-certificates)" in setup
    # tests/test_other_compressions.py runs `bzcat ... | gzip > ...` as plexity writes it
    assert "packages+=(bzip2)" in setup
    # tests/test_archiving_tools_probe47.py crawls with wget and reads its WARCs
    assert "packages+=(wget)" in setup


def test_copy_checkout_works_without_git(tmp_path):
    # A tarball checkout: no .git, and git not on PATH.  Sources are copied, build products not.
    src = tmp_path / "src"
    for name in ("pyproject.toml", "plexity_plugins/scoring/scorer.py", ".venv/bin/python", "plexity_plugins/__pycache__/x.pyc",
                 "build/lib/x.py", "cleaned/out.txt", "examples/sample.warc.gz"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text("x")
    no_git = tmp_path / "bin"
    no_git.mkdir()
    for tool in ("tar", "rm", "mkdir", "bash"):
        os.symlink(subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip(), no_git / tool)
    result = subprocess.run(["bash", "-c", f'source {REPO}/scripts/lib.sh && copy_checkout "$1" "$2"', "-",
                             str(src), str(tmp_path / "dest")], capture_output=True, text=True,
                            env={"PATH": str(no_git)})
    assert result.returncode == 0, result.stderr
    copied = sorted(str(p.relative_to(tmp_path / "dest")) for p in (tmp_path / "dest").rglob("*") if p.is_file())
    assert copied == ["examples/sample.warc.gz", "plexity_plugins/scoring/scorer.py", "pyproject.toml"]


def test_slurm_script_names_a_port_clash(tmp_path):
    # check_port as scripts/slurm.sh defines it, against a port something listens on
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        script = (REPO / "scripts" / "slurm.sh").read_text()
        functions = "\n".join(re.search(pattern, script, re.S | re.M).group(0) for pattern in (
            r"^die\(\).*?$", r"^port_in_use\(\).*?$", r"^check_port\(\) \{.*?^\}"))
        result = subprocess.run(["bash", "-c", f"{functions}\ncheck_port {port} slurmctld"], capture_output=True,
                                text=True)
    assert result.returncode == 1
    assert f"port {port} is in use (another Slurm?)" in result.stderr
    free = subprocess.run(["bash", "-c", f"{functions}\ncheck_port {port} slurmctld && echo free"],
                          capture_output=True, text=True)
    assert free.stdout.strip() == "free"



def test_what_the_examples_write_is_git_ignored():
    # examples/datatrove_local.py's default output, the README's and the docs' outputs
    ignored = set((REPO / ".gitignore").read_text().splitlines())
    assert {"/cleaned/", "/cleaned-local/", "/out/", "/site/", "/examples/scrapy_project/items.jsonl"} <= ignored
    assert 'default="cleaned-local"' in (REPO / "examples" / "datatrove_local.py").read_text()


def test_a_new_venv_says_it_kept_the_old_pip_when_pypi_cannot_be_reached(tmp_path):
    # pip's `install --upgrade pip` exits 0 there ("Requirement already satisfied"): the step said it was done
    unreachable = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": "",
                   "PIP_EXTRA_INDEX_URL": "", "PIP_RETRIES": "0", "PIP_NO_INDEX": ""}
    result = subprocess.run(["bash", "-c", f"source {REPO}/scripts/lib.sh && step 'Python environment: python3 -m venv "
                             f".venv, then the latest pip' new_venv python3"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env={**os.environ, **unreachable})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    kept = (tmp_path / ".venv" / "bin" / "python").exists() and subprocess.run(
        [str(tmp_path / ".venv" / "bin" / "python"), "-m", "pip", "--version"], capture_output=True,
        text=True).stdout.split()[1]
    assert lines[1] == (f"setup:   venv: kept pip {kept} (the one venv installs), not the latest: "
                        f"PyPI could not be reached")
    assert re.fullmatch(r"setup:   \.\.\. done in \d+ s", lines[-1])


@pytest.mark.slurm
def test_slurm_stop_ends_the_private_cluster_s_running_jobs_too(tmp_path):
    """A job still running when `slurm.sh stop` stopped the daemons went on, its job step adopted by init and waiting
    for ever for a slurmd to report to (the test session's Slurm left such steps, and their jobs, after it ended).
    Now a private cluster's jobs are cancelled first, and a step left all the same is ended."""
    import psutil

    directory = tempfile.mkdtemp(prefix="plexity-slurm-stop-")  # (outside pytest's 0700 folders: munged's socket)
    os.chmod(directory, 0o755)
    env = {**os.environ, "PLEXITY_SLURM_DIR": directory, "SLURM_CONF": os.path.join(directory, "slurm.conf")}
    script = str(REPO / "scripts" / "slurm.sh")
    try:
        started = subprocess.run(["bash", script, "start"], capture_output=True, text=True, timeout=120, env=env)
        assert started.returncode == 0, started.stdout + started.stderr
        job = tmp_path / "job.sh"
        job.write_text(f"#!/bin/bash\nexec sleep 97.{os.getpid()}\n")
        subprocess.run(["sbatch", "-p", "debug", "-o", str(tmp_path / "job.out"), str(job)], env=env, check=True,
                       capture_output=True)
        deadline = time.monotonic() + 60
        while "RUNNING" not in subprocess.run(["squeue", "-h", "-o", "%T"], env=env, capture_output=True,
                                              text=True).stdout:
            assert time.monotonic() < deadline, "the job did not start"
            time.sleep(0.2)
    finally:
        subprocess.run(["bash", script, "stop"], capture_output=True, text=True, timeout=60, env=env)
    time.sleep(0.5)
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline", "environ"])
            if p.info["cmdline"] and (f"97.{os.getpid()}" in " ".join(p.info["cmdline"])
                                      or (p.info["environ"] or {}).get("SLURM_CONF") == env["SLURM_CONF"])]
    assert left == []
    shutil.rmtree(directory)  # (kept when the test fails: its Slurm logs)
