"""A datatrove run on a real single-node Slurm that holds each job to its memory (scripts/slurm.sh with
PLEXITY_SLURM_MEMORY=enforce: memory a consumable resource, slurmstepd killing a step whose RSS adds up to more than
it reserved), started for this module and stopped after it.

- ``mem_per_cpu_gb=0.5`` reaches sbatch as ``--mem-per-cpu=512M``: datatrove wrote ``0.5G``, which sbatch refused
  ("Invalid --mem-per-cpu specification", a traceback).
- A task that Slurm kills for its memory is named so (`task_failures`: "it used more than the memory it reserved");
  read alone, its Slurm log's last line, ``*** STEP 31.0 ON vm CANCELLED AT ... ***``, said it was cancelled by
  scancel or an administrator, and squeue's FAILED said only to read the log.  The same script run again submits that
  task alone, and every page is in the output once.
- A `plexity run` inside a job's step (``salloc --mem ... srun``) takes the job's memory as what its workers share
  (`memory_of_job`: SLURM_MEM_PER_NODE, SLURM_MEM_PER_CPU); it read only the machine's RAM and a cgroup's limit, and
  a Slurm that enforces memory without a cgroup has none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import (REPO, SAMPLE, completions, html_uris, private_slurm, read_jsonl_dir, split_warc,
                     wait_for_slurm_jobs)

pytestmark = pytest.mark.slurm


@pytest.fixture(scope="module")
def slurm():
    """A private Slurm enforcing each job's memory, for this module (the session's own, `slurm_cluster`, does not)."""
    with private_slurm(memory="enforce") as partition:
        yield partition


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO)}


# The default pipeline of `plexity run` (WARC reader, learned extractor with its extraction child, perplexity filter,
# JSONL writer) as a datatrove user submits it, 0.5 GB per CPU; task 1 holds 400 MB more for two seconds, the first
# time only (Slurm's poll of its RSS comes every second): the pages of one unusually large document.
SCRIPT = '''
import json, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, default_venv_activate
from plexity_plugins.datatrove import SlurmTaskExecutor

shards, out, flag, name = sys.argv[1:5]

class HoldMemoryOnce(PipelineStep):  # pickled by value for Slurm: self-contained
    name = "hold memory once"
    def __init__(self, flag):
        super().__init__()
        self.flag = flag
    def run(self, data, rank=0, world_size=1):
        import os, time
        for n, doc in enumerate(data):
            if rank == 1 and n == 1 and not os.path.exists(self.flag):
                open(self.flag, "w").close()
                held = bytearray(b"x") * (400 << 20)  # (written: RSS, not a mapping of zero pages)
                time.sleep(2.5)
                del held
            yield doc

pipeline = build_pipeline(shards, out)
pipeline.insert(-1, HoldMemoryOnce(flag))
executor = SlurmTaskExecutor(pipeline=pipeline, tasks=2, logging_dir=str(Path(out) / "logs"), partition="debug",
                             time="00:10:00", job_name=name, mem_per_cpu_gb=0.5,
                             venv_path=default_venv_activate())
before = executor.last_job_failures()
executor.run()
print(json.dumps({"job": executor.job_id, "before": before}))
'''


def test_a_task_slurm_kills_for_its_memory_is_named_so_and_a_rerun_submits_it_alone(slurm, tmp_path):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(SCRIPT))
    name = f"plexity-probe53-{os.getpid()}"
    command = [sys.executable, str(script), str(shards), str(out), str(tmp_path / "held"), name]

    first = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env())
    assert first.returncode == 0, first.stderr[-3000:]
    launched = json.loads(first.stdout.splitlines()[-1])
    assert "#SBATCH --mem-per-cpu=512M" in (out / "logs" / "launch_script.slurm").read_text()
    wait_for_slurm_jobs(name)
    assert completions(out / "logs") == ["00000"]  # (task 0, in the same 512M, completed)
    assert (tmp_path / "held").exists()
    slurm_log = (out / "logs" / "slurm_logs" / f"{launched['job']}_1.out").read_text()
    assert "exceeded memory limit" in slurm_log, slurm_log[-3000:]  # (Slurm's kill, not the kernel's)

    from plexity_plugins.datatrove.slurm_executor import SlurmTaskExecutor, slurm_log_state

    import dill

    with open(out / "logs" / "executor.pik", "rb") as f:
        executor: SlurmTaskExecutor = dill.load(f)
    executor.job_id = launched["job"]
    why = (f"Slurm task {launched['job']}_1: Slurm stopped it: it used more than the memory it reserved (0.5 GB per "
           f"CPU: mem_per_cpu_gb, --mem-per-cpu-gb); a re-run given more runs it again (a task of the default "
           f"pipeline peaks at about 250 MiB: docs/datatrove.md, \"Memory on Slurm\")")
    assert executor.task_failures() == {1: why}
    # (once Slurm's controller has forgotten the job, its Slurm log alone says so)
    assert slurm_log_state(out / "logs" / "slurm_logs" / f"{launched['job']}_1.out") == "OUT_OF_MEMORY"

    second = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env())
    assert second.returncode == 0, second.stderr[-3000:]
    again = json.loads(second.stdout.splitlines()[-1])
    assert again["before"][0] == str(launched["job"])
    assert list(again["before"][1].values()) == [why.replace(" (0.5 GB per CPU: mem_per_cpu_gb, --mem-per-cpu-gb)",
                                                             "")]
    assert json.loads((out / "logs" / "ranks_to_run.json").read_text()) == [1]  # task 1 alone
    wait_for_slurm_jobs(name)
    assert completions(out / "logs") == ["00000", "00001"]
    assert (out / "logs" / "stats.json").is_file()  # (the merge job, after a complete array)
    written = [d["metadata"]["url"] for folder in ("documents", "excluded") for d in read_jsonl_dir(out / folder)]
    assert sorted(written) == sorted(html_uris(shards)) and len(written) == len(set(written))
    assert not list(out.rglob("*.part"))


PROBE = ('from plexity_plugins.runtime.memory import memory_of_job; '
         'from plexity_plugins.cli.run import local_workers, workers_memory_note; '
         'print(memory_of_job()); print(local_workers(4, None)); print(workers_memory_note(4, 3))')


@pytest.mark.parametrize("ask, words", [
    (["--mem=200M"], "this Slurm job's 200 MiB (its --mem)"),
    (["--mem-per-cpu=100M", "--cpus-per-task=2"], "this Slurm job's 200 MiB (its --mem-per-cpu 100M x 2 CPU(s))"),
])
def test_a_plexity_run_in_a_jobs_step_starts_no_more_workers_than_the_jobs_memory_holds(slurm, ask, words):
    probe = subprocess.run(["salloc", "--quiet", *ask, "srun", sys.executable, "-c", PROBE],
                           capture_output=True, text=True, timeout=60, env=env())
    assert probe.returncode == 0, probe.stderr[-3000:]
    size, workers, note = probe.stdout.splitlines()
    assert size == repr((200 << 20, words))
    assert workers == "1"  # (200 MiB holds one worker of 128 MiB, whatever the machine's RAM and CPUs)
    assert note == (f"--workers 3, more than {words} holds (one per 128 MiB): the kernel's out-of-memory killer may "
                    f"end extraction children, their pages counted as memory_limit, or workers; give the job more "
                    f"memory, or run fewer workers")


def test_plexity_run_gives_sbatch_a_fraction_of_a_gb_per_cpu_in_mib(tmp_path):
    # (it refused one: "--executor slurm takes a whole number of GB per CPU", as datatrove's 0.5G was refused by sbatch)
    from plexity_plugins.cli.run import build_pipeline, make_executor

    executor = make_executor(build_pipeline(str(SAMPLE), tmp_path / "out", extractor="tags"), "slurm", tasks=1,
                             logging_dir=str(tmp_path / "logs"), partition="debug", mem_per_cpu_gb=0.25)
    assert executor.get_sbatch_args()["mem-per-cpu"] == "256M"
    whole = make_executor(build_pipeline(str(SAMPLE), tmp_path / "out", extractor="tags"), "slurm", tasks=1,
                          logging_dir=str(tmp_path / "logs"), partition="debug", mem_per_cpu_gb=2.0)
    assert whole.get_sbatch_args()["mem-per-cpu"] == "2G"  # (whole GB as datatrove writes them)


# The hostile page's run: `plexity run`'s pipeline with `dense` over a WARC of a fine page, the 14 MB page of
# tests/hostile_pages.py (it grows a dense child by ~250 MiB) and another fine page, one task of 384M; the ceiling as
# given (argv[4]: a size, or "" for the default).
BIG_PAGE_SCRIPT = '''
import json, sys
from pathlib import Path
from plexity_plugins.cli.run import build_pipeline, default_venv_activate
from plexity_plugins.datatrove import SlurmTaskExecutor

warcs, out, name, ceiling = sys.argv[1:5]
pipeline = build_pipeline(warcs, out, extractor="dense", extract_memory=ceiling or None)
executor = SlurmTaskExecutor(pipeline=pipeline, tasks=1, logging_dir=str(Path(out) / "logs"), partition="debug",
                             time="00:10:00", job_name=name, mem_per_cpu_gb=0.375, venv_path=default_venv_activate())
executor.run()
print(json.dumps({"job": executor.job_id}))
'''


def test_the_default_ceiling_fits_a_small_jobs_memory_and_a_huge_page_is_a_counted_skip(slurm, tmp_path):
    """With the ceiling at 768 MiB, the 14 MB page grows the extraction child past the 384M job before the ceiling
    stops it, and Slurm kills the task (as it would at every re-run); by default the task lowers the ceiling to what
    the job leaves beside it, says so in its log, and completes: the page a counted ``memory_limit``, the others
    written."""
    from hostile_pages import write_big_page_warc

    from plexity_plugins.datatrove.slurm_executor import slurm_log_state

    warcs = tmp_path / "warcs"
    warcs.mkdir()
    write_big_page_warc(warcs / "big.warc.gz")
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(BIG_PAGE_SCRIPT))

    def run(out, ceiling: str):
        name = f"plexity-ceiling-{os.getpid()}-{out.name}"
        launched = subprocess.run([sys.executable, str(script), str(warcs), str(out), name, ceiling],
                                  capture_output=True, text=True, timeout=120, env=env())
        assert launched.returncode == 0, launched.stderr[-3000:]
        assert "#SBATCH --mem-per-cpu=384M" in (out / "logs" / "launch_script.slurm").read_text()
        wait_for_slurm_jobs(name)
        job = json.loads(launched.stdout.splitlines()[-1])["job"]
        return (out / "logs" / "slurm_logs" / f"{job}_0.out"), (out / "logs" / "logs" / "task_00000.log").read_text()

    slurm_log, task_log = run(tmp_path / "given", "768MiB")  # (the old default, given)
    assert completions(tmp_path / "given" / "logs") == []
    assert "exceeded memory limit" in slurm_log.read_text(), slurm_log.read_text()[-3000:]
    assert slurm_log_state(slurm_log) == "OUT_OF_MEMORY"
    assert "the extraction memory ceiling 768 MiB is more than this Slurm job's 384 MiB (its --mem-per-cpu 384M x " \
           "1 CPU(s)) leaves a child" in task_log

    out = tmp_path / "default"
    slurm_log, task_log = run(out, "")
    assert completions(out / "logs") == ["00000"], slurm_log.read_text()[-3000:]
    assert "exceeded memory limit" not in slurm_log.read_text()
    # (said once, with the job's memory named; the ceiling it chose depends on the task's memory as the step starts)
    lowered = [line for line in task_log.splitlines() if "the extraction memory ceiling is" in line]
    assert len(lowered) == 1, task_log[-3000:]
    assert ", not 768 MiB: this Slurm job's 384 MiB (its --mem-per-cpu 384M x 1 CPU(s)) holds this process (" \
           in lowered[0]
    stats = json.loads((out / "logs" / "stats.json").read_text())
    extractor = stats[1]["stats"]  # (the reader's, the extractor's, ...)
    assert extractor["memory_limit"] == 1 and extractor["memory_ceiling_lowered"] == 1
    written = [d["metadata"]["url"] for folder in ("documents", "excluded") for d in read_jsonl_dir(out / folder)]
    assert sorted(written) == ["http://t/fine", "http://t/fine2"]


# A task that completes (its completion marker written) and whose process then exits with status 3 (atexit, after
# datatrove marked it): as srun exits 1 under task/cgroup when the kernel's out-of-memory killer ended a task's
# extraction child, its page a counted memory_limit (`--extract-memory 2GiB` in a 256M job: measured, docs/datatrove.md
# "Memory on Slurm"); this Slurm has no cgroup plugin, so the failed srun is made here.
FAILS_AFTER_COMPLETING_SCRIPT = '''
import json, sys
from pathlib import Path
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.cli.run import build_pipeline, default_venv_activate
from plexity_plugins.datatrove import SlurmTaskExecutor

shards, out, name = sys.argv[1:4]

class ExitThreeAtTheEnd(PipelineStep):  # pickled by value for Slurm: self-contained
    name = "exit 3 at the end"
    def run(self, data, rank=0, world_size=1):
        import atexit, os
        atexit.register(os._exit, 3)
        yield from data

pipeline = build_pipeline(shards, out, extractor="tags")
pipeline.insert(-1, ExitThreeAtTheEnd())
executor = SlurmTaskExecutor(pipeline=pipeline, tasks=2, logging_dir=str(Path(out) / "logs"), partition="debug",
                             time="00:10:00", job_name=name, mem_per_cpu_gb=0.5, venv_path=default_venv_activate())
executor.run()
print(json.dumps({"job": executor.job_id}))
'''


def test_a_task_that_completed_succeeds_though_srun_failed_and_the_merge_job_runs(slurm, tmp_path):
    """The array task's srun failing after its ranks completed: the task ends COMPLETED, saying why in its Slurm log,
    and the merge job (afterok) writes stats.json.  It ended FAILED, Slurm cancelled the merge job
    (DependencyNeverSatisfied: no stats.json) and any stage depending on the job, and a re-run, every task complete,
    launched nothing."""
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 2)
    out = tmp_path / "out"
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(FAILS_AFTER_COMPLETING_SCRIPT))
    name = f"plexity-srun-failed-{os.getpid()}"
    launched = subprocess.run([sys.executable, str(script), str(shards), str(out), name], capture_output=True,
                              text=True, timeout=120, env=env())
    assert launched.returncode == 0, launched.stderr[-3000:]
    job = json.loads(launched.stdout.splitlines()[-1])["job"]
    wait_for_slurm_jobs(name)
    assert completions(out / "logs") == ["00000", "00001"]
    states = subprocess.run(["squeue", "-h", "-t", "all", "-n", name, "-r", "-o", "%i %T"], capture_output=True,
                            text=True).stdout.split("\n")
    assert sorted(filter(None, states))[:2] == [f"{job}_0 COMPLETED", f"{job}_1 COMPLETED"], states
    for task in (0, 1):
        slurm_log = (out / "logs" / "slurm_logs" / f"{job}_{task}.out").read_text()
        assert "+ status=3" in slurm_log, slurm_log[-3000:]  # (srun's status: the task's process's)
        assert f"plexity: task(s) {task} completed (completion marker written) though srun failed" in slurm_log
    stats = json.loads((out / "logs" / "stats.json").read_text())  # (the merge job ran)
    assert stats[0]["stats"]["input_files"] == {"total": 2, "unit": "task"}  # (both tasks merged)
