"""`plexity run --executor slurm --wait` when its job meets trouble, on the tests' private single-node Slurm
(conftest.slurm_cluster): an array task cancelled or failing is named with why, a job that cannot start says why
it waits, Ctrl-C stops the wait and not the job, and paths and job names with spaces, quotes or ``$`` reach Slurm
whole."""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers import PLEXITY, REPO, SAMPLE, split_warc

pytestmark = pytest.mark.slurm


def env() -> dict:
    """This process's environment (SLURM_CONF: the fixture's cluster), the tasks importing this checkout too."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def slurm(slurm_cluster):
    return slurm_cluster


@pytest.fixture
def partition_down(slurm):
    """The partition down for the test (its jobs wait in the queue until the test sets it UP), and UP after."""
    partition_state(slurm, "DOWN")
    yield slurm
    partition_state(slurm, "UP")


def partition_state(partition: str, state: str) -> None:
    subprocess.run(["scontrol", "update", f"PartitionName={partition}", f"State={state}"], check=True)


def job_name(label: str) -> str:
    return f"plexity-probe37-{os.getpid()}-{label}"


def run_command(shards, out, name: str, *more: str) -> list[str]:
    return PLEXITY + ["run", str(shards), "-o", str(out), "--executor", "slurm", "--partition", "debug",
                      "--extractor", "tags", "--job-name", name, "--wait", *more]


def test_an_output_folder_and_job_name_with_spaces_quotes_and_dollars_reach_slurm_whole(slurm, tmp_path):
    # (sbatch refused "Invalid directive found in batch script: crawl's/..." and "Unmatched `'`"; with a $ in the
    # path the job was taken and every task failed, bash having expanded it in the task's command line)
    split_warc(SAMPLE, tmp_path / "shards", 1)
    out = tmp_path / "my crawl's \"run\" $HOME ü" / "out"
    name = job_name("a \"job's\" $HOME")
    done = subprocess.run(run_command(tmp_path / "shards", out, name), capture_output=True, text=True, timeout=120,
                          env=env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1/1 tasks completed" in done.stdout
    assert (out / "documents" / "00000.jsonl.gz").is_file() and list((out / "logs" / "slurm_logs").glob("*_0.out"))
    assert name in subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j"], capture_output=True, text=True).stdout


def test_a_backslash_in_the_logging_folder_is_refused_before_anything_is_submitted(slurm, tmp_path):
    # (Slurm drops it from a task's log path: the job was taken and every task failed, leaving no log)
    split_warc(SAMPLE, tmp_path / "shards", 1)
    out = tmp_path / "back\\slash"
    done = subprocess.run(run_command(tmp_path / "shards", out, job_name("backslash")), capture_output=True,
                          text=True, timeout=120, env=env())
    assert done.returncode == 2 and "has a backslash in its path" in done.stderr.splitlines()[-1], done.stderr
    assert not out.exists()