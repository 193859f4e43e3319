"""`SlurmTaskExecutor`: datatrove's Slurm executor, which says in one line that there is no ``sbatch`` here
instead of failing inside datatrove, quotes what its sbatch script holds, submits nothing while its last job into
the same logging folder is not over, and says why each task of its job that did not complete did not (cancelled,
out of time, its exception: read from Slurm, the task's log and its Slurm log).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from datatrove.executor.slurm import SlurmPipelineExecutor

from ..errors import DISK_FULL_ERRNOS, DISK_FULL_WHY, JobStillQueued
from ..runtime.extras import require_executor
from ..runtime.keywords import suggests_keywords
from .executor import SettingsChecked, describe_exit, last_error, read_tail, task_error


SLURM_JOB_RECORD = "plexity-slurm-job"  # in the logging folder: the array job last launched into it
MERGE_SCRIPT = "launch_merge_stats.slurm"  # in the logging folder: the merge job's sbatch script
WAITING_STATES = "pending,running,suspended,configuring,completing,requeued,resizing"  # (squeue -t)


@suggests_keywords
class SlurmTaskExecutor(SettingsChecked, SlurmPipelineExecutor):
    """datatrove's `SlurmPipelineExecutor` (same arguments), which, run where there is no Slurm
    (no ``sbatch`` on ``PATH``), says so in one line (`ExecutorUnavailable`) before anything is
    written or launched, instead of datatrove's ``FileNotFoundError`` from deep inside its launch;
    which records the run's settings and checks them before submitting the job and when each
    array task starts (`SettingsChanged`); and which submits nothing while the array job it launched
    into the same logging folder still has tasks pending or running (`JobStillQueued`): a re-run
    made then (the first command returns as soon as Slurm took the job) submitted the same tasks
    again, to run beside the first job's, and replaced the ranks_to_run.json that the first job's
    waiting tasks read their ranks from.  Its sbatch script has its paths and job name quoted
    (`get_launch_file_contents`), the merge job's is kept as the array job's is (`launch_merge_stats`), and
    once its job is over, `task_failures` says why each task that did not complete did not."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.venv_path = venv_activate(self.venv_path)  # (now: a script fails where the executor is made)
        if "\\" in str(self.slurm_logs_folder):  # (Slurm drops it from a log path: each task failed, logging nowhere)
            raise ValueError(f"{self.slurm_logs_folder} has a backslash in its path, which Slurm cannot write a task's "
                             f"log under (it reads a backslash in --output as an escape): give a folder without one")

    def run(self):
        if "SLURM_ARRAY_TASK_ID" in os.environ:  # running inside the job: its tasks one after another, here
            from ..extractors.sandbox import keep_between_uses

            keep_between_uses()  # (a process of the job's own: one extraction child for its tasks)
            return super().run()
        require_executor("slurm", type(self).__name__)
        if isinstance(self.depends, SlurmTaskExecutor) and not self.depends.job_id:
            self.depends.run()  # (with its checks and job record; datatrove's launch_job then takes its job id)
        self.check_no_job_queued()
        self._check_run_settings()
        try:
            result = super().run()
        except BaseException:
            # sbatch refused it after datatrove rewrote ranks_to_run.json: the job recorded (over) ran other
            # ranks, which `last_job_failures` would take for its own
            if self.job_id is None:
                with contextlib.suppress(OSError):
                    self.logging_dir.rm(SLURM_JOB_RECORD)
            raise
        if self.job_id not in (None, -1):
            with self.logging_dir.open(SLURM_JOB_RECORD, "w") as f:
                f.write(f"{self.job_id}\n")
        return result

    def get_sbatch_args(self, max_array: int = 1) -> dict:
        """datatrove's sbatch arguments, a `mem_per_cpu_gb` that is not a whole number given in MiB (0.5:
        ``--mem-per-cpu=512M``): datatrove wrote ``--mem-per-cpu=0.5G``, which sbatch refused ("Invalid --mem-per-cpu
        specification"), a traceback after the launch script was written; a task needs far less than a GB
        (docs/datatrove.md, "Memory on Slurm")."""
        sbatch_args = super().get_sbatch_args(max_array)
        if sbatch_args.get("mem-per-cpu") == f"{self.mem_per_cpu_gb}G":  # (datatrove's; one given in sbatch_args kept)
            sbatch_args["mem-per-cpu"] = sbatch_memory(self.mem_per_cpu_gb)
        return sbatch_args

    def get_launch_file_contents(self, sbatch_args: dict, run_script: str) -> str:
        """datatrove's sbatch script, with its values quoted: a folder with a space in its path (``--output=/data/my
        crawl/...``) or a job name with one was refused by sbatch ("Invalid directive found in batch script"), one
        with a quote too ("Unmatched `'`"), and one with a ``$`` submitted, to fail in every task (bash expanded it
        in the command line's executor.pik path).  A job that waits on another (the merge job on the array, with
        ``afterok``; a stage on its ``depends``) is cancelled by Slurm once the other failed
        (``--kill-on-invalid-dep=yes``, unless ``sbatch_args`` says otherwise): it stayed pending for ever,
        "DependencyNeverSatisfied", one more each re-run, where slurm.conf has no ``kill_invalid_depend``."""
        sbatch_args = {**sbatch_args, "kill-on-invalid-dep": sbatch_args.get("kill-on-invalid-dep", "yes")}
        quoted = {key: _sbatch_quoted(value) if isinstance(value, str) else value for key, value in sbatch_args.items()}
        paths = sorted({self.logging_dir.resolve_paths(name) for name in ("executor.pik", "stats", "stats.json")})
        for path in paths:  # (each a whole word of the command line: stats is not cut out of stats.json)
            run_script = re.sub(rf"(?<= ){re.escape(path)}(?= |$)", lambda _: shlex.quote(path), run_script)
        if "launch_pickled_pipeline" in run_script:  # (the array's tasks, not the merge job)
            run_script = completed_despite_slurm(run_script, self.logging_dir.resolve_paths("executor.pik"))
        script = super().get_launch_file_contents(quoted, run_script)
        script = script.replace(f'echo "Starting data processing job {self.job_name}"',
                                f"echo {shlex.quote(f'Starting data processing job {self.job_name}')}", 1)
        if self.venv_path and not self.env_command and not self.condaenv:
            script = script.replace(f"source {self.venv_path}\n", f"source {shlex.quote(self.venv_path)}\n", 1)
        if getattr(self, "_launching_merge", False):  # (saved before sbatch sees it: a refused one can be read too)
            with self.logging_dir.open(MERGE_SCRIPT, "w") as f:
                f.write(script)
        return script

    def launch_merge_stats(self) -> None:
        """datatrove's merge job (``merge_stats``, run once the array job succeeded, into ``stats.json``), its sbatch
        script saved as ``launch_merge_stats.slurm`` beside the array's ``launch_script.slurm``: datatrove submits
        it from a temporary file, gone once submitted, so a merge job that failed or never ran could not be read."""
        self._launching_merge = True
        try:
            super().launch_merge_stats()
        finally:
            del self._launching_merge

    def check_no_job_queued(self) -> None:
        """`JobStillQueued` while the array job last launched into this logging folder is not over."""
        check_no_slurm_job_queued(self.logging_dir)

    def task_failures(self, job_id: str | None = None) -> dict[int, str]:
        """Why each task of the array job this executor launched (or of `job_id`, launched into the same logging
        folder) has no completion marker, once the job is over: the exception its log or its Slurm log ends with,
        else what Slurm did to it (cancelled, stopped at its time limit, out of memory ...).  `plexity run --wait`
        said "2 task(s) did not complete", naming none."""
        current = job_id is None  # (an earlier job's --time and memory may have been others)
        job_id = str(self.job_id) if current else job_id
        if job_id in ("None", "-1") or not self.logging_dir.isfile("ranks_to_run.json"):
            return {}
        with self.logging_dir.open("ranks_to_run.json", "r") as f:
            ranks = json.load(f)
        states = slurm_task_states(job_id)
        one_job = len(ranks) <= self.tasks_per_job * self.max_array_size  # (more: several jobs, the last one's id kept)
        failures = {}
        for index in range(0, len(ranks), self.tasks_per_job):
            array = index // self.tasks_per_job
            slurm_log = Path(self.slurm_logs_folder) / f"{job_id}_{array}.out"
            for rank in ranks[index:index + self.tasks_per_job]:
                if self.is_rank_completed(rank):
                    continue
                error = task_error(self.logging_dir, rank)
                if not one_job:
                    failures[rank] = describe_exit(1, error) if error else "it did not complete (see its Slurm log)"
                    continue
                state = states.get(array) or slurm_log_state(slurm_log)
                if state in ("FAILED", "CANCELLED") and slurm_log_state(slurm_log) == "OUT_OF_MEMORY":
                    state = "OUT_OF_MEMORY"  # (a memory limit's kill is one of these to Slurm: its log says which)
                if state is None and states and not slurm_log.exists():  # (Slurm forgets a pending task it cancels)
                    state = "CANCELLED_PENDING"
                error = error or slurm_log_error(slurm_log)
                why = _describe_slurm_state(state, error, self if current else None, slurm_log)
                failures[rank] = f"Slurm task {job_id}_{array}: {why}"
        return failures

    def last_job_failures(self) -> tuple[str, dict[int, str]] | None:
        """(the array job last launched into this logging folder, `task_failures` of it) before this run launches
        another, if it left tasks incomplete: a re-run said "1 already completed", not what became of the others."""
        if not self.logging_dir.isfile(SLURM_JOB_RECORD):
            return None
        with self.logging_dir.open(SLURM_JOB_RECORD, "r") as f:
            job_id = f.read().strip()
        failures = self.task_failures(job_id) if job_id else {}
        return (job_id, failures) if failures else None


# What Slurm did to an array task that ended without completing (squeue's %T), in a user's words
SLURM_ENDS = {"CANCELLED": "it was cancelled (scancel, or an administrator)",
              "CANCELLED_PENDING": "it was cancelled before it started (scancel, or an administrator)",
              "TIMEOUT": "Slurm stopped it at its time limit{time}",
              "OUT_OF_MEMORY": "Slurm stopped it: it used more than the memory it reserved{memory}; a re-run given "
                               "more runs it again (a task of the default pipeline peaks at about 250 MiB: "
                               "docs/datatrove.md, \"Memory on Slurm\")",
              "NODE_FAIL": "its node failed", "BOOT_FAIL": "its node failed to boot",
              "PREEMPTED": "Slurm preempted it (another job took its node)", "DEADLINE": "it missed its deadline"}
# A task's exception for a full disk or quota ("OSError: [Errno 28] No space left on device")
_DISK_FULL_ERROR = re.compile(rf"\[Errno (?:{'|'.join(map(str, sorted(DISK_FULL_ERRNOS)))})\]")
# The line slurmstepd writes into a task's Slurm log when it stops it: "*** JOB 31 ON vm CANCELLED AT ... ***"
_STEPD_LINE = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(?: DUE TO (?P<why>[A-Z ]+?))? \*\*\*")
_STEPD_STATES = {None: "CANCELLED", "TIME LIMIT": "TIMEOUT", "PREEMPTION": "PREEMPTED", "NODE FAILURE": "NODE_FAIL"}
# What slurmstepd and srun write into a task's Slurm log when its memory limit ended a process of it: task/cgroup's
# "Detected 1 oom-kill event(s) in StepId=31.0 ..." and srun's "task 0: Out Of Memory" (the array task then ends
# FAILED, not OUT_OF_MEMORY: the killed process was the step's, not the batch script's); JobAcctGather's
# OverMemoryKill "StepId=31.0 exceeded memory limit (224686080 > 209715200), being killed", followed by "*** STEP
# 31.0 ON vm CANCELLED AT ... ***", which read alone said "it was cancelled (scancel, or an administrator)"
_OUT_OF_MEMORY_LINE = re.compile(r"Detected \d+ oom-kill event|task \d+: Out Of Memory|exceeded memory limit|"
                                 r"Exceeded job memory limit")


def _describe_slurm_state(state: str | None, error: str | None, executor, slurm_log: Path) -> str:
    if error and _DISK_FULL_ERROR.search(error):  # (as a local run says it: the run then says it in one line)
        return DISK_FULL_WHY
    if error and state in (None, "FAILED", "COMPLETED"):  # (the task's own exception says it best)
        return describe_exit(1, error)
    why = SLURM_ENDS.get(state or "")
    if why:
        return why.format(time=f" (--time {executor.time})" if executor else "",
                          memory=f" ({reserved_memory(executor)})" if executor else "")
    where = f"its Slurm log says why: {slurm_log}" if slurm_log.is_file() else "it wrote no Slurm log"
    if state is None:
        return f"it did not complete, and Slurm no longer says how it ended ({where})"
    return f"it ended {state} without completing ({where})"


def completed_despite_slurm(run_script: str, executor_path: str) -> str:
    """The array task's command, followed where it fails by `array_task_completed`: a task whose ranks all wrote
    their completion marker ends with status 0 whatever srun said.  Under task/cgroup, the kernel's out-of-memory
    killer ending a task's extraction child (its page a counted ``memory_limit``, the task completed) made srun say
    "Out Of Memory" and exit 1: the array task ended FAILED, so Slurm cancelled the merge job (``afterok``: no
    stats.json, and a re-run, nothing left to run, launched none) and any stage depending on it."""
    call = f"import sys; from {__name__} import exit_if_completed; exit_if_completed(sys.argv[1])"
    check = f"python -c {shlex.quote(call)} {shlex.quote(executor_path)}"
    return f"{run_script} || {{ status=$?; {check} || exit $status; }}"


def array_task_completed(executor) -> list[int] | None:
    """The ranks this array task (SLURM_ARRAY_TASK_ID, RUN_OFFSET) of `executor` ran, if each has its completion
    marker, else None (datatrove's `SlurmPipelineExecutor.run` picks them so)."""
    array = int(os.environ["SLURM_ARRAY_TASK_ID"]) + executor.max_array_size * int(os.environ.get("RUN_OFFSET", 0))
    with executor.logging_dir.open("ranks_to_run.json", "r") as f:
        ranks = json.load(f)[array * executor.tasks_per_job:(array + 1) * executor.tasks_per_job]
    return ranks if all(executor.is_rank_completed(rank) for rank in ranks) else None


def exit_if_completed(executor_path: str) -> None:
    """In an array task whose command failed (`completed_despite_slurm`): exit 0, with a line in its Slurm log saying
    why, when its ranks completed, else 1."""
    import sys

    import dill
    from datatrove.io import open_file

    with open_file(executor_path, "rb") as f:
        executor = dill.load(f)
    ranks = array_task_completed(executor)
    if ranks is None:
        sys.exit(1)
    print(f"plexity: task(s) {', '.join(map(str, ranks))} completed (completion marker written) though srun failed "
          f"(a process of the task was ended, and counted: an extraction child the job's memory limit stopped is a "
          f"memory_limit skip); this array task ends with status 0, so what depends on it runs", flush=True)
    sys.exit(0)


def slurm_task_states(job_id: str) -> dict[int, str]:
    """The state of each array task of `job_id` (COMPLETED, FAILED, CANCELLED, TIMEOUT ...) by its index, as long as
    Slurm's controller still knows the job (MinJobAge, 300 s by default), else none."""
    listed = subprocess.run(["squeue", "-h", "-j", job_id, "-t", "all", "-r", "-o", "%K %T"],
                            capture_output=True, text=True)
    states = {}
    for line in listed.stdout.splitlines() if listed.returncode == 0 else []:
        index, _, state = line.strip().partition(" ")
        if index.isdigit():
            states[int(index)] = state.strip()
    return states


def slurm_log_state(path: Path) -> str | None:
    """What slurmstepd's last line in an array task's Slurm log says Slurm did to it (CANCELLED, TIMEOUT ...), if
    any: where Slurm's controller has forgotten the job (`slurm_task_states`)."""
    found = None
    for line in _log_tail(path).splitlines():
        if _OUT_OF_MEMORY_LINE.search(line):
            return "OUT_OF_MEMORY"  # (what stopped it, whatever slurmstepd's line after it says)
        if match := _STEPD_LINE.search(line):
            found = _STEPD_STATES.get(match.group("why"), "CANCELLED")
    return found


def _log_tail(path: Path) -> str:
    """The last LOG_TAIL_BYTES of a file, as text ("" when it cannot be read)."""
    try:
        with open(path, "rb") as log:
            return read_tail(log)
    except OSError:
        return ""


def slurm_log_error(path: Path) -> str | None:
    """The exception, or slurmstepd's line stopping the task, that an array task's Slurm log ends with (srun's "0: "
    prefixes left out): a task that fails before its own log is opened (its settings or input files checked) says it
    only there."""
    return last_error(_log_tail(path), slurm=True)


def sbatch_memory(gigabytes: float) -> str:
    """`mem_per_cpu_gb` as sbatch takes it: whole GB as datatrove wrote them ("2G"), else whole MiB, rounded up
    ("512M" for 0.5; sbatch takes no fraction)."""
    if gigabytes == int(gigabytes):
        return f"{int(gigabytes)}G"
    return f"{math.ceil(gigabytes * 1024)}M"


def reserved_memory(executor) -> str:
    """The memory each task of `executor` reserved, as it was given: "0.5 GB per CPU: mem_per_cpu_gb ..." or sbatch's
    own argument ("--mem=300M") when `sbatch_args` gave another."""
    given = executor.get_sbatch_args()
    if "mem" in given:
        return f"--mem={given['mem']}"
    if given.get("mem-per-cpu") != sbatch_memory(executor.mem_per_cpu_gb):
        return f"--mem-per-cpu={given.get('mem-per-cpu')}"
    return f"{executor.mem_per_cpu_gb:g} GB per CPU: mem_per_cpu_gb, --mem-per-cpu-gb"


def _sbatch_quoted(value: str) -> str:
    """A value of an ``#SBATCH`` line as sbatch reads it back whole: in double quotes, a double quote or a backslash
    in it escaped (sbatch reads quotes and backslashes there as the shell does)."""
    if re.fullmatch(r"[\w.,:/=%+@-]*", value):
        return value
    return '"' + re.sub(r'(["\\])', r"\\\1", value) + '"'


def venv_activate(venv_path: str | os.PathLike | None) -> str | None:
    """The script each Slurm task sources (datatrove's ``venv_path``): a virtualenv's folder given (``.venv``, as
    datatrove's "path to a python venv to activate" reads) is its ``bin/activate``, absolute; one that is not there
    is a ValueError.  Sourced as it was given, a folder failed in every task ("launch_pickled_pipeline: No such file
    or directory"), after the job was submitted."""
    if venv_path is None or str(venv_path) == "":
        return None
    given = Path(venv_path)
    activate = given / "bin" / "activate" if given.is_dir() else given
    if not activate.is_file():
        raise ValueError(f"venv_path is {str(venv_path)!r}: no virtualenv there ({activate} does not exist): give the "
                         f"folder of a virtualenv with plexity_plugins installed, or its bin/activate, on a filesystem "
                         f"the nodes share")
    return str(activate.resolve())


def check_no_slurm_job_queued(logging_dir) -> None:
    """`JobStillQueued` while the array job last launched into `logging_dir` (a DataFolder) has a
    task that is not over (Slurm no longer knowing the job: it is over).  Where there is no ``squeue`` (a local or
    Ray run on a machine outside the Slurm cluster), nothing can be asked: nothing is said."""
    if not logging_dir.isfile(SLURM_JOB_RECORD) or shutil.which("squeue") is None:
        return
    with logging_dir.open(SLURM_JOB_RECORD, "r") as f:
        job_id = f.read().strip()
    listed = subprocess.run(["squeue", "-h", "-j", job_id, "-t", WAITING_STATES, "-r", "-o", "%i"],
                            capture_output=True, text=True)
    waiting = listed.stdout.split() if listed.returncode == 0 else []
    if waiting:
        raise JobStillQueued(logging_dir.path, job_id, len(waiting))

