"""The datatrove pipeline on a real single-node Slurm (scripts/slurm.sh, started by the tests' own
fixture on free ports and stopped after them), and resuming after a
worker was killed, with the Slurm and the local executor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers import (PLEXITY, REPO, SAMPLE, completions, html_uris, read_jsonl_dir, read_warc_dir, split_warc,
                     wait_for_slurm_jobs)

PARTITION = "debug"


@pytest.fixture(scope="module")
def slurm(slurm_cluster):
    """The session's private single-node Slurm (conftest.slurm_cluster): its partition."""
    return slurm_cluster


def job_name(label: str) -> str:
    """A job name of this test session only (other sessions may share the cluster)."""
    return f"plexity-test-{os.getpid()}-{label}"


@pytest.mark.slurm
def test_slurm_array_job_output_equals_the_local_output(slurm, tmp_path):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 4)
    local_out, slurm_out = tmp_path / "local", tmp_path / "slurm"
    local = subprocess.run([sys.executable, str(REPO / "examples" / "datatrove_local.py"), str(shards),
                            str(local_out), "--tasks", "4", "--workers", "2"],
                           capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr[-3000:]
    launch = subprocess.run([sys.executable, str(REPO / "examples" / "datatrove_slurm.py"), str(shards),
                             str(slurm_out), "--partition", slurm, "--tasks", "4", "--job-name", job_name("equal")],
                            capture_output=True, text=True, timeout=120)
    assert launch.returncode == 0 and "submitted Slurm job" in launch.stdout, launch.stderr[-3000:]
    wait_for_slurm_jobs(job_name("equal"))

    assert completions(slurm_out / "logs") == ["00000", "00001", "00002", "00003"]
    script = (slurm_out / "logs" / "launch_script.slurm").read_text()
    assert "#SBATCH --array=0-3" in script and "source " in script  # one array job, venv activated
    assert (slurm_out / "logs" / "stats.json").is_file()  # the merge job ran after the array
    merge = (slurm_out / "logs" / "launch_merge_stats.slurm").read_text()  # (its script, to read: it was not saved)
    assert "#SBATCH --dependency=afterok:" in merge and "merge_stats " in merge, merge
    local_docs = {d["metadata"]["url"]: d["text"] for d in read_jsonl_dir(local_out / "documents")}
    assert read_warc_dir(slurm_out / "documents") == local_docs
    excluded = lambda out: sorted((d["id"], d["metadata"]["filter_reason"]) for d in read_jsonl_dir(out / "excluded"))
    assert excluded(slurm_out) == excluded(local_out)
    assert len(local_docs) + len(excluded(local_out)) == len(html_uris(shards))


def set_partition_state(partition: str, state: str) -> None:
    subprocess.run(["scontrol", "update", f"PartitionName={partition}", f"State={state}"], check=True)


def run_in_own_group(command: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `command`; once it has exited, kill what it left behind (a killed run leaves its
    helper processes, e.g. the multiprocessing manager, orphaned and holding its pipes)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        process.wait(timeout=timeout)
    finally:
        try:
            os.killpg(process.pid, 9)
        except ProcessLookupError:
            pass
    output = process.stdout.read()
    return subprocess.CompletedProcess(command, process.returncode, output, output)


# A pipeline that SIGKILLs its own worker at the second document of task 2, the first time
# only: a worker lost midway (OOM killer, node failure) after it had written some output.
KILLER_SCRIPT = '''
import os, signal, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, make_executor

shards, out, executor, flag, job_name = sys.argv[1:6]

class KillWorkerOnce(PipelineStep):  # pickled by value for Slurm: self-contained
    name = "kill once"
    def __init__(self, flag):
        super().__init__()
        self.flag = flag
    def run(self, data, rank=0, world_size=1):
        import os, signal
        for n, doc in enumerate(data):
            if rank == 2 and n == 1 and not os.path.exists(self.flag):
                open(self.flag, "w").close()
                os.killpg(os.getpgrp(), signal.SIGKILL)  # the task and its extractor process
            yield doc

pipeline = build_pipeline(shards, out, extractor="tags")
pipeline.insert(-1, KillWorkerOnce(flag))  # before the writer: task 2 has written one document
# local: one worker, so that the kill (of the whole run: its process group) comes before task 3 starts;
# Slurm: each array task is a job of its own, and two at a time take half as long as one by one
make_executor(pipeline, executor, tasks=4, workers=1 if executor == "local" else 2,
              logging_dir=str(Path(out) / "logs"), partition="debug", job_name=job_name).run()
'''


@pytest.mark.parametrize("executor", ["local", pytest.param("slurm", marks=pytest.mark.slurm)])
def test_rerun_after_a_killed_worker_runs_only_the_missing_task_and_loses_nothing(executor, request, tmp_path):
    slurm = request.getfixturevalue("slurm") if executor == "slurm" else None
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 4)
    out = tmp_path / f"out-{executor}"
    logs = out / "logs"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(KILLER_SCRIPT))
    command = [sys.executable, str(script), str(shards), str(out), executor, str(tmp_path / "killed"),
               job_name("resume")]

    if executor == "slurm":  # the job waits in the queue until the partition is up again
        set_partition_state(slurm, "DOWN")
        request.addfinalizer(lambda: set_partition_state(slurm, "UP"))
    first = run_in_own_group(command)
    if executor == "local":
        assert first.returncode == -9  # the worker (here: the whole run) was killed
        assert completions(logs) == ["00000", "00001"]  # task 3 never started
    else:
        assert first.returncode == 0, first.stderr[-3000:]
        # the same run submitted again while its job waits in the queue: refused, in one line, before
        # anything is submitted or (--overwrite) deleted; it submitted the four tasks again, to run
        # beside the first job's and over their ranks_to_run.json
        queued = subprocess.run(PLEXITY + ["run", str(shards), "-o", str(out), "--executor", "slurm", "--partition",
                                           slurm, "--extractor", "tags", "--job-name", job_name("resume"),
                                           "--overwrite"], capture_output=True, text=True, timeout=120)
        jobs = sorted({int(job) for job in subprocess.run(["squeue", "-h", "-n", job_name("resume"), "-o", "%A"],
                                                          capture_output=True, text=True).stdout.split()})
        assert queued.returncode == 2 and queued.stderr.splitlines() == [
            f"plexity run: error: {logs} is being written by Slurm job {jobs[0]} (4 task(s) pending or running): "
            f"wait for it to end (squeue -j {jobs[0]}), or cancel it (scancel {jobs[0]}), then run the same "
            f"command again"], queued.stderr[-3000:]
        # so is one into the same output folder with another logging folder (it holds no record of the job)
        elsewhere = subprocess.run(PLEXITY + ["run", str(shards), "-o", str(out), "--executor", "slurm", "--partition",
                                              slurm, "--logging-dir", str(tmp_path / "other-logs")],
                                   capture_output=True, text=True, timeout=120)
        assert elsewhere.returncode == 2 and queued.stderr.splitlines()[0] in elsewhere.stderr, elsewhere.stderr
        assert len(jobs) == 2  # the array and its stats merge: nothing more was submitted
        set_partition_state(slurm, "UP")
        wait_for_slurm_jobs(job_name("resume"))
        assert completions(logs) == ["00000", "00001", "00003"]  # the other array tasks went on
        assert not (logs / "stats.json").exists()  # the merge job waits for a complete array
    # the killed task's output was cut short: it is under its temporary name only, never its own
    assert (tmp_path / "killed").exists() and (out / "documents" / ".00002.jsonl.gz.part").exists()
    assert not (out / "documents" / "00002.jsonl.gz").exists()
    done_before = {name: (out / "documents" / f"{name}.jsonl.gz").stat().st_mtime_ns for name in completions(logs)}

    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    if executor == "slurm":
        assert json.loads((logs / "ranks_to_run.json").read_text()) == [2]  # only the missing task
        wait_for_slurm_jobs(job_name("resume"))
        assert (logs / "stats.json").is_file()
    assert completions(logs) == ["00000", "00001", "00002", "00003"]
    assert not list(out.rglob("*.part"))  # the re-run wrote the same temporary name and renamed it
    for name, mtime in done_before.items():  # completed tasks were not run again
        assert (out / "documents" / f"{name}.jsonl.gz").stat().st_mtime_ns == mtime

    # every HTML record of the input is in the output exactly once: kept or excluded
    written = [d["metadata"]["url"] for d in read_jsonl_dir(out / "documents")]
    written += [d["metadata"]["url"] for d in read_jsonl_dir(out / "excluded")]
    assert sorted(written) == sorted(html_uris(shards))
    assert len(written) == len(set(written)) == 12


@pytest.mark.slurm
def test_overwrite_with_another_executor_waits_for_the_slurm_job_then_deletes_its_record_too(slurm, request,
                                                                                           tmp_path):
    # `--overwrite` deletes what the run wrote in its logging folder: the Slurm job's record
    # (logs/plexity-slurm-job) was kept, naming a job over and gone; and a local run with --overwrite,
    # which did not ask Slurm, deleted the files of a job still queued there (its tasks would then mark
    # their documents complete in the new run's folder).
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    record = out / "logs" / "plexity-slurm-job"
    name = job_name("overwrite")
    set_partition_state(slurm, "DOWN")  # (the job waits in the queue)
    request.addfinalizer(lambda: set_partition_state(slurm, "UP"))
    base = PLEXITY + ["run", str(shards), "-o", str(out), "--extractor", "tags"]
    launched = subprocess.run(base + ["--executor", "slurm", "--partition", slurm, "--job-name", name],
                              capture_output=True, text=True, timeout=120)
    assert launched.returncode == 0 and record.is_file(), launched.stderr[-3000:]
    job = record.read_text().strip()

    local = base + ["--executor", "local", "--overwrite"]
    refused = subprocess.run(local, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stderr.splitlines()[-1].startswith(
        f"plexity run: error: {out / 'logs'} is being written by Slurm job {job}"), refused.stderr[-3000:]
    assert record.is_file() and (out / "logs" / "ranks_to_run.json").is_file()  # nothing deleted

    subprocess.run(["scancel", "-n", name], check=True)
    wait_for_slurm_jobs(name)
    done = subprocess.run(local, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert completions(out / "logs") == ["00000", "00001"]
    assert not record.exists() and not (out / "logs" / "ranks_to_run.json").exists()


def test_an_executor_pik_pickled_before_the_executors_moved_still_loads(tmp_path):
    # datatrove pickles the executor into the logging folder's executor.pik, which the job's tasks load when they
    # start: one pickled while SlurmTaskExecutor lived in plexity_plugins.datatrove.executor names it there
    import dill

    from plexity_plugins.datatrove import SlurmTaskExecutor, WarcHtmlReader

    executor = SlurmTaskExecutor(pipeline=[WarcHtmlReader(str(tmp_path))], tasks=2, partition=PARTITION,
                                 time="01:00:00", logging_dir=str(tmp_path / "logs"))
    pickled = dill.dumps(executor, protocol=0)  # (names as lines: the module's name replaced as it was)
    before = pickled.replace(b"plexity_plugins.datatrove.slurm_executor\n", b"plexity_plugins.datatrove.executor\n")
    assert before != pickled
    loaded = dill.loads(before)
    assert type(loaded) is SlurmTaskExecutor and loaded.world_size == 2 and loaded.partition == PARTITION
