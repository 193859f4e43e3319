"""`plexity run --executor slurm --wait` when its job meets trouble, on the tests' private single-node Slurm
(conftest.slurm_cluster): an array task cancelled or failing is named with why, a job that cannot start says why
it waits, Ctrl-C stops the wait and not the job, and paths and job names with spaces, quotes or ``$`` reach Slurm
whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

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


def queued_array(name: str, tasks: int, timeout: float = 60) -> str:
    """The id of the array job called `name` once its `tasks` tasks are in the queue: the lowest such id, as the
    run's merge job has the same name and is an array job too (of one task, 0), submitted after it. (Slurm 24.11's
    squeue lists that one first: the test took it for the run's, an id one higher than the run's.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = subprocess.run(["squeue", "-h", "-n", name, "-r", "-o", "%F %K"], capture_output=True,
                                text=True).stdout.split("\n")
        indexes: dict[str, set[str]] = {}
        for line in listed:
            if len(line.split()) == 2 and line.split()[1].isdigit():
                indexes.setdefault(line.split()[0], set()).add(line.split()[1])
        arrays = [job for job, found in indexes.items() if "0" in found]
        if arrays and len(indexes[min(arrays, key=int)]) >= tasks:
            return min(arrays, key=int)
        time.sleep(0.2)
    raise AssertionError(f"no array job {name} of {tasks} tasks queued: {listed}")


def test_wait_names_a_task_cancelled_before_it_started_and_the_same_command_runs_only_it(partition_down, tmp_path):
    # (it said "1 task(s) did not complete; re-run the same command to run only those", naming none)
    split_warc(SAMPLE, tmp_path / "shards", 2)
    command = run_command(tmp_path / "shards", tmp_path / "out", job_name("cancel"))
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    job = queued_array(job_name("cancel"), 2)
    subprocess.run(["scancel", f"{job}_1"], check=True)
    partition_state(partition_down, "UP")
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1, err[-3000:]
    cancelled = f"task 1: Slurm task {job}_1: it was cancelled before it started (scancel, or an administrator)"
    assert cancelled in err

    # the same command again says first what became of it (it said "1 already completed", no more); here sbatch
    # refuses it (a wrong partition), after writing the ranks it would have run
    refused = subprocess.run(command[:command.index("debug")] + ["nope"] + command[command.index("debug") + 1:],
                             capture_output=True, text=True, timeout=120, env=env())
    assert refused.returncode == 2 and (f"plexity run: Slurm job {job}, launched into {tmp_path / 'out' / 'logs'} "
                                        f"before, did not complete 1 task(s) ({cancelled}): this run submits them "
                                        f"again") in refused.stderr, refused.stderr[-3000:]
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env())
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((tmp_path / "out" / "logs" / "ranks_to_run.json").read_text()) == [1]  # only the missing one
    assert "2/2 tasks completed (1 in this run" in again.stdout
    # (the refused launch's ranks were read as the job's: "task 1: Slurm task N_0: it ended COMPLETED ...")
    assert f"Slurm job {job}," not in again.stderr, again.stderr[-3000:]


def test_wait_names_a_failed_task_with_the_exception_its_slurm_log_ends_with(partition_down, tmp_path):
    # (an input file rewritten while the job waited: each task stops before its own log is opened, saying why in
    # its Slurm log only; the run said "2 task(s) did not complete")
    split_warc(SAMPLE, tmp_path / "shards", 1)
    run = subprocess.Popen(run_command(tmp_path / "shards", tmp_path / "out", job_name("fail")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    job = queued_array(job_name("fail"), 1)
    with open(tmp_path / "shards" / "shard-0.warc.gz", "ab") as f:
        f.write(b"junk")
    partition_state(partition_down, "UP")
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1, err[-3000:]
    assert (f"task 0: Slurm task {job}_0: its worker process exited with status 1: plexity_plugins.errors."
            f"InputFilesChanged: task 0: its input files changed since the run started (rewritten: shard-0.warc.gz")\
        in err, err[-3000:]


def test_the_merge_job_of_an_array_that_failed_is_cancelled_by_slurm_not_left_pending(partition_down, tmp_path):
    # The merge job waits on the array (afterok): once a task failed, it stayed pending for ever, reason
    # "DependencyNeverSatisfied", one more each re-run, on a Slurm without DependencyParameters=kill_invalid_depend
    # (as most sites, and this one); each job is now submitted with --kill-on-invalid-dep=yes.
    split_warc(SAMPLE, tmp_path / "shards", 1)
    name = job_name("merge")
    run = subprocess.Popen(run_command(tmp_path / "shards", tmp_path / "out", name),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    queued_array(name, 1)
    with open(tmp_path / "shards" / "shard-0.warc.gz", "ab") as f:
        f.write(b"junk")  # (the task fails: InputFilesChanged)
    partition_state(partition_down, "UP")
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1 and "InputFilesChanged" in err, err[-3000:]
    deadline, left = time.monotonic() + 20, ["?"]
    while left and time.monotonic() < deadline:
        left = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i %T %r"], capture_output=True,
                              text=True).stdout.splitlines()
        time.sleep(0.5)
    try:
        assert left == [], f"left in the queue: {left}"
    finally:
        subprocess.run(["scancel", "-n", name])
    assert "#SBATCH --kill-on-invalid-dep=yes\n" in (tmp_path / "out" / "logs" / "launch_script.slurm").read_text()


def test_wait_says_why_a_job_waits_and_ctrl_c_stops_the_wait_not_the_job(partition_down, tmp_path):
    # (it waited, silent, for a job on a partition that was down; Ctrl-C then said "the same command runs the
    # others", which it refused while the job was queued)
    split_warc(SAMPLE, tmp_path / "shards", 1)
    run = subprocess.Popen(run_command(tmp_path / "shards", tmp_path / "out", job_name("wait")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    job = queued_array(job_name("wait"), 1)
    try:
        deadline = time.monotonic() + 30
        while "PartitionDown" not in subprocess.run(["squeue", "-h", "-j", job, "-o", "%r"], capture_output=True,
                                                    text=True).stdout and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2.5)  # (the wait's next look at the queue: every 2 s)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        assert run.returncode == 130
        assert (f"plexity run: Slurm job {job} is pending: PartitionDown (its partition is down: it starts when an "
                f"administrator brings it up); still waiting (Ctrl-C stops waiting, the job stays queued)") in err
        assert (f"plexity run: interrupted: stopped waiting; Slurm job {job} goes on (squeue -j {job}; scancel {job} "
                f"cancels it)") in err, err[-3000:]
        assert subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip()
    finally:
        if run.poll() is None:  # (failed: not left waiting, a zombie of this worker's once it ends)
            run.kill()
            run.wait()
        subprocess.run(["scancel", "-n", job_name("wait")])


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


def test_a_task_that_fills_the_output_disk_is_said_in_one_line_as_a_local_run_says_it(slurm, disk_of, tmp_path):
    # (each task was "its worker process exited with status 1: OSError: [Errno 28] No space left on device", exit
    # 1; a local run says it in one line, exit 4)
    split_warc(SAMPLE, tmp_path / "shards", 1)
    disk = disk_of("20k")
    (disk.path / "out").mkdir()
    disk.fill()
    done = subprocess.run(run_command(tmp_path / "shards", disk.path / "out", job_name("full"), "--logging-dir",
                                      str(tmp_path / "logs")), capture_output=True, text=True, timeout=120, env=env())
    assert done.returncode == 4, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1] == (
        "plexity run: error: no space left on device: free some space or choose another output directory, then run "
        "the same command again (1 of 1 task(s) did not complete; their outputs were not left under their final "
        "names)")
