"""datatrove's executors, with what a task leaves behind when it dies taken care of.

- `LocalTaskExecutor`: datatrove's local executor, but a task that dies ends the run, not hangs it,
  and a full disk is one line.
- `RayTaskExecutor`: datatrove's Ray executor's arguments, run so that a task's processes die with
  it, a task that no node can hold is an error, and a task whose node is lost is run again.
- `SlurmTaskExecutor`: datatrove's Slurm executor, which says in one line that there is no
  ``sbatch`` here instead of failing inside datatrove, quotes what its sbatch script holds, and says
  why each task of its job that did not complete did not (cancelled, out of time, its exception).

They subclass datatrove's executors and keep their contract: ``run`` launches the tasks and each
task runs datatrove's own ``_run_for_rank`` (its log, stats and completion marker), which ours
wrap without copying.  Nothing of datatrove is patched.  Each records the run's settings in its
logging folder and, when it finds other settings recorded there, stops before anything runs
(`plexity_plugins.datatrove.run_settings`): a run with other settings never resumes into another
run's completions.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import signal
import re
import shlex
import subprocess
import sys
import threading
import time
from copy import deepcopy
from pathlib import Path

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.executor.ray import RayPipelineExecutor
from datatrove.executor.slurm import SlurmPipelineExecutor
from datatrove.utils.logging import logger
from datatrove.utils.stats import PipelineStats

from ..errors import (DISK_FULL_ERRNOS, DISK_FULL_STATUS, DISK_FULL_WHY, HTML_PAGES_STATUS, HTML_PAGES_WHY,
                      INPUTS_CHANGED_STATUS, TEXTS_NOT_HTML_STATUS, TEXTS_NOT_HTML_WHY, DiskFull, HtmlPagesNotText,
                      InputFilesChanged, JobStillQueued, LoggingFolderNotShared, OutputNotWritable, ReadError,
                      TasksFailed, TextsNotHtml, cannot_write_message, disk_full_message, inputs_changed_why,
                      is_disk_full, printable)
from ..runtime.extras import require_executor
from ..runtime.lifetime import die_with_parent
from ..text.graphemes import prefix
from .folders import TaskFolder
from .run_settings import (changed_inputs, chained, check_inputs, check_outputs, check_settings,
                           check_settings_recorded, dependency_pending, reopen_lost_outputs, run_settings)


# The line Python ends a traceback with: the exception's class (dotted or not) and its message.
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Full|Failed)"
                             r"\w*(?::.*)?$")
# A failed read is logged in one line, without a traceback (`_errors_logged_in_one_line`): "... - ReadError: ...".
_READ_ERROR_LINE = re.compile(r" - (ReadError: .+)$")
# An exception of a module's own, as a traceback ends with it: "plexity_plugins.errors.InputFilesChanged: task 0: ..."
_QUALIFIED_EXCEPTION_LINE = re.compile(r"^[a-z_]\w*(?:\.\w+)*\.[A-Z]\w*: .+$")
LOG_TAIL_BYTES = 64 * 1024


def task_error(logging_dir, rank: int) -> str | None:
    """The exception a failed task's log ends with (``ValueError: ...``, the last line of its traceback), cut to
    300 characters; None when the log cannot be read or names none.  A task that failed was said as "exited with
    status 1 (the task's log says why)": which of the task logs, and why, the user had to look up."""
    try:
        with logging_dir.open(f"logs/task_{rank:05d}.log", "rb") as log:
            tail = _tail(log)
    except (OSError, ValueError):
        return None
    return _last_error(tail)


def _tail(log) -> str:
    """The last LOG_TAIL_BYTES of an open binary file, as text."""
    with contextlib.suppress(OSError, ValueError):
        log.seek(max(0, log.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
    return log.read(LOG_TAIL_BYTES).decode("utf-8", "replace")


def _last_error(tail: str, slurm: bool = False) -> str | None:
    """The last exception line of a log's `tail` (a failed read's one line too), cut to 300 characters.  With `slurm`,
    a Slurm log's: srun's "0: " prefixes left out, and a module's own exception named with its module accepted."""
    found = None
    for line in map(str.strip, tail.splitlines()):
        if slurm:
            line = re.sub(r"^\d+: ", "", line)
        if _EXCEPTION_LINE.match(line) or (slurm and _QUALIFIED_EXCEPTION_LINE.match(line)):
            found = line
        elif read_error := _READ_ERROR_LINE.search(line):
            found = read_error.group(1)
    return printable(prefix(found, 300)) if found else None


def _describe_exit(code: int | None, error: str | None = None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (the out-of-memory killer sends this)" if -code == signal.SIGKILL else ""
        return f"its worker process was killed by {name}{hint}"
    if code == DISK_FULL_STATUS:
        return DISK_FULL_WHY
    if code == HTML_PAGES_STATUS:
        return HTML_PAGES_WHY
    if code == TEXTS_NOT_HTML_STATUS:
        return TEXTS_NOT_HTML_WHY
    if error and error.startswith("ReadError: "):  # (a failed read says which file or URL, which byte, what happened)
        return error
    if error:
        return f"its worker process exited with status {code}: {error} (the task's log says more)"
    return f"its worker process exited with status {code} (the task's log says why)"


def check_task_counts(executor) -> None:
    """ValueError for a number of tasks under 1, or of workers under 1 once datatrove has read -1
    as "one per task" (Slurm's -1: no limit): with 0 workers the local run waited, silent,
    for a task it would never start; and for a cluster task's reservation of no CPUs or of
    negative memory."""
    tasks, workers = getattr(executor, "tasks", 1), getattr(executor, "workers", 1)
    if not isinstance(tasks, int) or tasks < 1:
        raise ValueError(f"tasks is {tasks!r}: a number of tasks is 1 or more")
    no_limit = workers == -1 and isinstance(executor, SlurmPipelineExecutor)
    if not isinstance(workers, int) or (workers < 1 and not no_limit):
        raise ValueError(f"workers is {workers!r}: tasks running at once are 1 or more, or -1 (as many as tasks)")
    # (a Ray or Slurm task's reservation: Ray refused it in every task, after the run had started,
    # and the run then said to run it again)
    cpus = getattr(executor, "cpus_per_task", 1)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not cpus > 0:
        raise ValueError(f"cpus_per_task is {cpus!r}: a task reserves more than 0 CPUs")
    memory = getattr(executor, "mem_per_cpu_gb", 0)
    if isinstance(memory, bool) or not isinstance(memory, (int, float)) or not memory >= 0:
        raise ValueError(f"mem_per_cpu_gb is {memory!r}: the memory a task reserves per CPU is 0 GB or more")


class _SettingsChecked:
    """For a datatrove executor: the run's settings recorded in its logging folder when it starts,
    checked against what is recorded there when it starts and when each task starts
    (`plexity_plugins.datatrove.run_settings`; `SettingsChanged` when they differ)."""

    def _check_run_settings(self) -> None:
        check_task_counts(self)
        # (travels with the executor to tasks; a chained stage's input files, what its dependency writes, not in it)
        self._plexity_settings = run_settings(self.pipeline, self.world_size, not chained(self))
        if not (chained(self) and dependency_pending(self)):  # (a Slurm job waiting on another: not written yet)
            check_inputs(self.pipeline)
        check_outputs(self.logging_dir, self.pipeline)
        check_settings(self.logging_dir, self._plexity_settings)
        reopen_lost_outputs(self)

    def save_executor_as_json(self, indent: int = 4) -> None:
        """datatrove's ``executor.json``, the password of a URL in it (an input given as
        ``https://user:password@host/...``) written ``***`` (`without_password`): it was written in clear.  A
        number that is not one (a filter's threshold under a language -> model map, NaN) is written ``null``: it
        was ``NaN``, which strict JSON readers (JavaScript's JSON.parse, serde, DuckDB) refuse."""
        from datatrove.executor.base import ExecutorJSONEncoder

        from ..runtime.extras import without_password

        text = json.dumps(self, cls=ExecutorJSONEncoder, indent=indent)
        text = json.dumps(json.loads(text, parse_constant=lambda _constant: None), indent=indent)
        text = without_password(text)
        with self.logging_dir.open("executor.json", "w") as f:
            f.write(text)

    def _check_task_settings(self, rank: int) -> None:
        settings = getattr(self, "_plexity_settings", None) or run_settings(self.pipeline, self.world_size,
                                                                            not chained(self))
        if not self.is_rank_completed(rank):
            check_settings(self.logging_dir, settings, record=False)
            if not chained(self):  # (the files the run listed as it started: a file removed since shifts the tasks')
                changes = changed_inputs(self.pipeline, settings)
                if changes:
                    raise InputFilesChanged(rank, changes)

    def _run_for_rank(self, rank: int, local_rank: int = 0, *args, **kwargs) -> PipelineStats:
        """datatrove's, with an output the system refused to write said in one line (`OutputNotWritable`)."""
        self._check_task_settings(rank)
        try:
            with _errors_logged_in_one_line():
                return super()._run_for_rank(rank, local_rank, *args, **kwargs)
        except Exception as exc:
            message = cannot_write_message(exc)
            if message is None:
                raise
            raise OutputNotWritable(f"task {rank}: {message}") from None


class LocalTaskExecutor(_SettingsChecked, LocalPipelineExecutor):
    """datatrove's `LocalPipelineExecutor`, with one process per task and every death noticed.

    With several workers, datatrove's executor runs tasks in a ``multiprocess`` Pool, which waits
    forever for a task whose worker was SIGKILLed (the out-of-memory killer, a node problem): the
    run hangs after "3/4 tasks completed".  Here each task runs in a process of its own, at most
    ``workers`` at a time; the run waits on the processes themselves, so a task that dies is seen
    at once.  The other tasks go on; at the end the run raises `TasksFailed`, naming each task
    that did not complete and why.  A re-run redoes exactly those (completed tasks have their
    completion markers, the failed ones none).

    Each task process leads a process group of its own, and when it ends (normally or not) what
    is left of that group is killed: the extractor subprocess of a killed task is not left behind.  And each
    dies with the run (``PR_SET_PDEATHSIG``, `plexity_plugins.runtime.lifetime`): a run killed with its
    process group leaves no task writing after it.

    A full disk (the outputs' or the logging dir's) stops a task with one line, not a traceback
    per log record that no longer fits (`TaskFolder`), and the stats files are written whole or
    not at all (a 0-byte ``stats/NNNNN.json`` would break the merge of a later run).

    Same arguments as `LocalPipelineExecutor`; one worker runs the tasks in this process, as
    datatrove does.  The run's settings are recorded and checked (`SettingsChanged`).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        check_task_counts(self)  # (now, not as the run starts: a script fails where the executor is made)
        self.logging_dir = TaskFolder.of(self.logging_dir)

    def _run_for_rank(self, rank: int, local_rank: int = 0, *args, **kwargs) -> PipelineStats:
        """datatrove's, with a full disk said in one line (`DiskFull`)."""
        try:  # (logged in one line: `_SettingsChecked._run_for_rank`)
            return super()._run_for_rank(rank, local_rank, *args, **kwargs)
        except BaseException as exc:  # (FullDiskStop is one: see TaskFolder)
            if not is_disk_full(exc):
                raise
            _quiet_logger()  # (said once, by whoever runs the task: no traceback per log record)
            raise DiskFull(errno.ENOSPC, f"task {rank}: {disk_full_message(exc)}") from None

    def run(self):
        if self.depends is not None:  # (first: this run's input is what it writes, its settings are checked then)
            _run_dependency(self)
        self._check_run_settings()
        ranks = range(self.local_rank_offset, self.local_rank_offset + self.local_tasks)
        if all(map(self.is_rank_completed, ranks)):
            logger.info(f"Not doing anything as all {self.local_tasks} tasks have already been completed.")
            return PipelineStats()
        self.save_executor_as_json()
        to_run = self.get_incomplete_ranks(ranks)
        if skipped := self.local_tasks - len(to_run):
            logger.info(f"Skipping {skipped} already completed tasks")
        if self.workers == 1:
            # In this process, as datatrove's does, but without its `multiprocess.Manager`: that server
            # process, forked, outlived a run killed with SIGKILL, holding the output folder's lock.
            pipeline = self.pipeline
            for rank in to_run:
                self.pipeline = deepcopy(pipeline)
                self._run_for_rank(rank, 0)
            self.pipeline = pipeline
            return self._save_stats(ranks)
        failures = _run_in_processes(self, to_run, skipped)
        if failures:
            raise TasksFailed(failures)
        return self._save_stats(ranks)

    def _save_stats(self, ranks: range) -> PipelineStats:
        """The stats of every task of the run, those completed by an earlier run included, in ``stats.json`` and
        the log's "All N tasks" (datatrove's merged only the tasks it ran: a run resumed after a failed task said
        "All 2 tasks" of one task's documents, and so did ``stats.json``, which `plexity report` reads, while
        `plexity run` and datatrove's Slurm and Ray executors merge every task's)."""
        stats = sum((_read_stats(self.logging_dir, rank) for rank in ranks
                     if self.logging_dir.isfile(f"stats/{rank:05d}.json")), start=PipelineStats())
        save_stats(self.logging_dir, "stats.json", stats)
        logger.success(stats.get_repr(f"All {self.local_tasks} tasks"))
        return stats


def _run_dependency(executor: LocalTaskExecutor) -> None:
    """Run the executor's dependency (``depends``: its completed tasks are not run again), before this run's settings
    and inputs are checked: its readers read what the dependency writes.  (The checks came first, and a second stage
    reading the first's output stopped with `NoInputFiles` before the first had run.)  A dependency that runs only
    some of its tasks here (``local_tasks``) is waited for, as datatrove waits, while the others run elsewhere; one
    that ran them all and left some incomplete stops this run, as no wait would complete them."""
    depends = executor.depends
    if not isinstance(depends, LocalPipelineExecutor):
        raise ValueError(f"depends is {depends!r}: a LocalPipelineExecutor (or LocalTaskExecutor) to run before "
                         f"this one")
    logger.info(f'Launching dependency job "{depends}"')
    depends.run()
    while incomplete := len(depends.get_incomplete_ranks(skip_completed=True)):
        if depends.local_tasks >= depends.world_size:
            raise RuntimeError(f"the executor this one depends on did not complete {incomplete} of its tasks: run it "
                               f"again first")
        logger.info(f"Dependency job still has {incomplete}/{depends.world_size} tasks. Waiting...")
        time.sleep(2 * 60)


def _run_in_processes(executor: LocalTaskExecutor, ranks: list[int], done: int) -> dict[int, str]:
    """Run each rank's task in a process of its own, at most ``executor.workers`` at a time;
    returns why each task that did not complete did not."""
    import multiprocess  # what datatrove's executor uses: dill pickles lambdas in pipelines
    import multiprocess.connection

    context = multiprocess.get_context(executor.start_method)
    waiting = list(ranks)
    running: dict = {}  # process -> (rank, local rank)
    free_local_ranks = list(range(executor.workers))
    failures: dict[int, str] = {}
    try:
        while waiting or running:
            while waiting and len(running) < executor.workers:
                rank, local_rank = waiting.pop(0), free_local_ranks.pop(0)
                # (forked: this process is the task's parent; forkserver: the server is)
                parent = os.getpid() if executor.start_method == "fork" else None
                process = context.Process(target=_task_main, args=(executor, rank, local_rank, parent),
                                          name=f"plexity-task-{rank}")
                running[process] = (rank, local_rank)  # (before it starts: a Ctrl-C inside start() stops it too)
                process.start()
            # A process's sentinel stays open while its extractor subprocess (which inherited
            # it) lives: so also ask each process itself (waitpid) whether it has ended.
            multiprocess.connection.wait([p.sentinel for p in running], timeout=0.2)
            for process in [p for p in running if not p.is_alive()]:
                process.join()
                rank, local_rank = running.pop(process)
                free_local_ranks.append(local_rank)
                _kill_group(process.pid)
                if process.exitcode == 0 and executor.is_rank_completed(rank):
                    done += 1
                    logger.info(f"{done}/{executor.world_size} tasks completed.")
                else:
                    failures[rank] = _why_task_ended(executor, rank, process.exitcode)
                    logger.error(f"task {rank} did not complete: {failures[rank]}")
    finally:
        # interrupted (Ctrl+C): stop what still runs, and let a second Ctrl+C not cut that short.  (Only the main
        # thread may set a handler: run from another, a web service's or `run_in_executor`'s, an error while tasks
        # ran became "ValueError: signal only works in main thread", and the tasks were left running.)
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if running and in_main else None
        try:
            started = [process for process in running if process.pid is not None]
            for process in started:  # (all at once, then each reaped: a task killed but not yet reaped is still
                _signal_group(process.pid)  # in its group, and `_kill_group` waited 1 s for each: 8 s for 8 workers)
                process.kill()  # (one just started may not lead its group yet, `_task_main`'s setpgid: missed above)
            for process in started:
                process.join(timeout=5)
                _kill_group(process.pid)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
    return failures


def _why_task_ended(executor, rank: int, exitcode: int | None) -> str:
    """Why the process of task `rank`, which ended with `exitcode` (`_task_exit_status`), did not complete it."""
    if exitcode == INPUTS_CHANGED_STATUS:
        settings = getattr(executor, "_plexity_settings", None) or run_settings(executor.pipeline, executor.world_size,
                                                                                not chained(executor))
        return inputs_changed_why(changed_inputs(executor.pipeline, settings))
    # (what the task's log ends with: an exception, or a failed read in its own words)
    error = task_error(executor.logging_dir, rank) if exitcode == 1 else None
    return _describe_exit(exitcode, error)


def _task_exit_status(exc: BaseException) -> int:
    """The exit status a task process ends with for the error that stopped it (its parent says why in its words:
    `_describe_exit`); datatrove's ``_run_for_rank`` logged it."""
    if isinstance(exc, DiskFull) or is_disk_full(exc):  # (said in one line; the parent names the task)
        return DISK_FULL_STATUS
    for error, status in ((HtmlPagesNotText, HTML_PAGES_STATUS), (TextsNotHtml, TEXTS_NOT_HTML_STATUS),
                          (InputFilesChanged, INPUTS_CHANGED_STATUS)):
        if isinstance(exc, error):
            return status
    return 1


def save_stats(folder, name: str, stats: PipelineStats) -> None:
    """datatrove stats JSON in `folder` (a DataFolder), whole or absent: never a 0-byte file that
    a later merge fails on."""
    with TaskFolder.of(folder).open(name, "wt") as f:
        stats.save_to_disk(f)


@contextlib.contextmanager
def _errors_logged_in_one_line():
    """While a task runs: a full disk's error, an input's read that failed (`ReadError`: EIO, a server that stalled
    or reset the connection, naming the file and the byte), and an output the system refused to write, are logged as
    one line, without a traceback (datatrove logs a task's error with ``logger.exception``)."""
    # (the caller's own patcher, if it configured one, is kept: it ran before, and after the run it was a no-op)
    previous = getattr(getattr(logger, "_core", None), "patcher", None)

    def patch(record):
        if previous is not None:
            previous(record)
        exception = record["exception"]
        if exception is None:
            return
        if is_disk_full(exception.value):
            record["exception"] = None
        elif isinstance(exception.value, ReadError):  # (a read that failed, a server's stall or reset: named in it;
            record["exception"] = None                # its traceback showed the command's variables, a URL's password)
            record["message"] = f"ReadError: {exception.value}"
        elif cannot_write_message(exception.value):
            record["exception"] = None
            record["message"] = cannot_write_message(exception.value)

    logger.configure(patcher=patch)
    try:
        yield
    finally:
        logger.configure(patcher=previous or (lambda record: None))


def _quiet_logger() -> None:
    """Only errors on stderr, nothing in the log file (the disk is full)."""
    from datatrove.utils.logging import DATATROVE_COLORIZE_LOGS

    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="ERROR")


def _task_main(executor: LocalTaskExecutor, rank: int, local_rank: int, parent: int | None = None) -> None:
    # Dies with its parent: a task whose run is killed (SIGKILL of the run's process group, which
    # does not hold this process: it leads a group of its own, see _kill_group) must not go on
    # writing its output, which a re-run is about to write again.  Its extractor child dies with it.
    die_with_parent(parent or os.getppid())
    os.setpgid(0, 0)  # a group of its own: see _kill_group
    try:
        executor._run_for_rank(rank, local_rank)
    except Exception as exc:  # the exit status tells the parent why
        sys.exit(_task_exit_status(exc))


def _signal_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int) -> None:
    _signal_group(pgid)
    # reap what was ours in that group (only the task process is our child)
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


def _read_stats(folder, rank: int) -> PipelineStats:
    with folder.open(f"stats/{rank:05d}.json", "r") as f:
        return PipelineStats.from_json(json.load(f))


# -- Ray ---------------------------------------------------------------------------------------

RETRIES = 3  # times a task whose node or worker process was lost is run again (as datatrove: 3)


class RayTaskExecutor(_SettingsChecked, RayPipelineExecutor):
    """datatrove's `RayPipelineExecutor`'s arguments, its tasks run as Ray tasks of our own.

    - Each task runs datatrove's own ``_run_for_rank`` in a process forked from a Ray worker; that
      process, and the extractor process it starts, die with the worker (Linux
      ``PR_SET_PDEATHSIG``, `plexity_plugins.runtime.lifetime`).  Under datatrove's own Ray
      executor a task's process whose actor died without its clean-up (its node's raylet
      killed, the out-of-memory killer) was adopted by init and went on writing the task's
      output files while the task was run again elsewhere.
    - A task whose worker or node is lost is run again by Ray (up to three times); one that
      fails in its pipeline is not: once the others have run, `run` raises `TasksFailed`, naming each task that
      did not complete and why, as `LocalTaskExecutor` does.  No task waits on a set-up that failed:
      there is no set-up beyond Ray's own scheduling (datatrove's executor waited forever for a
      task whose actor was killed as it started).
    - A task asks Ray for ``cpus_per_task`` CPUs and ``cpus_per_task * mem_per_cpu_gb`` GB of
      memory on one node; if no node of the cluster has that much, Ray waits for such a node
      forever.  Here the run stops at once with `ValueError`, saying what the nodes have; and when the
      only such nodes leave mid-run, it says so and stops after ``NO_NODE_GRACE`` seconds without one.
    - ``nodes_per_task`` must be 1 (a task on several nodes is datatrove's executor's own).

    ``time`` stops a task that runs longer (force-cancelled, with its processes); ``workers``,
    ``tasks_per_job``, ``log_first``, ``ray_remote_kwargs`` and ``depends`` mean what they mean
    for datatrove's.  As with datatrove's, the Ray cluster must be connected
    (``ray.init(address=...)``) before `run`, and the logging dir (completion markers) and the
    output folders must be on a filesystem every node sees (a shared disk, or an fsspec URL:
    ``s3://...``).  A task that did not complete has no completion marker: running the same
    pipeline again runs only such tasks.

    Each task runs in the folder the executor was made in (where it exists on the task's node), as a
    Slurm job runs in the folder it was submitted from: a relative path (a datatrove writer's folder,
    the logging dir) names there what it named where the pipeline was written.  Ray starts its
    workers in the folder of the node's ``ray start``, where the tasks wrote such paths' files
    instead, and the run then failed reading their stats.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.working_dir = os.getcwd()  # (travels with the executor to the tasks)

    def run(self):
        import ray

        if getattr(self, "nodes_per_task", 1) != 1:
            raise ValueError("RayTaskExecutor runs each task on one node: for nodes_per_task > 1 use "
                             "datatrove's RayPipelineExecutor")
        if self.depends:  # (first: this run's input is what it writes, its settings are checked then)
            self.depends.run()
            if incomplete := self.depends.get_incomplete_ranks():
                raise RuntimeError(f"the executor this one depends on did not complete {len(incomplete)} of its "
                                   f"tasks: run it again first")
        self._check_run_settings()
        ranks = self.get_incomplete_ranks(range(self.world_size))
        if not ranks:
            logger.info(f"All {self.world_size} tasks appear to be completed already. Nothing to run.")
            return None
        if ray.is_initialized():
            check_task_fits(self.cpus_per_task, self.mem_per_cpu_gb * self.cpus_per_task)
        else:
            check_cluster_ray_would_join()
        logger.info(f"Will run pipeline on {len(ranks)} incomplete ranks out of {self.world_size} total.")
        self.save_executor_as_json()
        jobs = [ranks[i:i + self.tasks_per_job] for i in range(0, len(ranks), self.tasks_per_job)]
        completed, failures = _run_on_ray(self, jobs)
        if completed < len(jobs):
            logger.warning(f"Only {completed}/{len(jobs)} tasks completed.")
            if failures:  # (each named with why, as a local run names them)
                raise TasksFailed(failures)
            return None
        stats = sum((_read_stats(self.logging_dir, rank) for rank in range(self.world_size)), start=PipelineStats())
        with self.logging_dir.open("stats.json", "wt") as f:
            stats.save_to_disk(f)
        logger.success(stats.get_repr(f"All {completed}/{len(jobs)} tasks."))
        return stats

    def _run_for_rank(self, rank: int, local_rank: int = 0, *args, **kwargs) -> PipelineStats:
        import multiprocess

        parent = multiprocess.parent_process()  # the Ray worker that forked this process
        die_with_parent(parent.pid if parent is not None else None)
        return super()._run_for_rank(rank, local_rank, *args, **kwargs)


def _run_on_ray(executor: RayTaskExecutor, jobs: list[list[int]]) -> tuple[int, dict[int, str]]:
    """Run each job (a list of ranks) as one Ray task, at most ``executor.workers`` at a time;
    returns how many completed, and why each rank that did not complete did not."""
    import ray

    options = {"num_cpus": executor.cpus_per_task, "num_gpus": getattr(executor, "gpus_per_task", 0),
               "memory": int(executor.mem_per_cpu_gb * executor.cpus_per_task * 1024**3), "max_retries": RETRIES,
               **(executor.ray_remote_kwargs or {})}
    task = ray.remote(plexity_task).options(**options)
    import dill

    executor_ref = ray.put(dill.dumps(executor))  # (unpickled in the task's working folder: `plexity_task`)
    waiting = list(jobs)
    running: dict = {}  # object ref -> (ranks, started)
    completed = 0
    failures: dict[int, str] = {}
    no_node_since = None  # (when the cluster was last seen with no node that can run a task)
    try:
        while waiting or running:
            while waiting and len(running) < executor.workers:
                ranks = waiting.pop(0)
                running[task.remote(executor_ref, ranks, executor.working_dir)] = (ranks, time.monotonic())
            finished, _ = ray.wait(list(running), num_returns=1, timeout=2)
            if not finished:  # (the only node that could run them lost mid-run: Ray waits for another, forever)
                no_node_since = _check_some_node_fits(executor, no_node_since, [r for rs in running.values()
                                                                                for r in rs[0]])
            for ref in finished:
                ranks, _ = running.pop(ref)
                try:
                    ray.get(ref)
                    completed += 1
                except LoggingFolderNotShared as exc:  # (every task of that node would: the run stops)
                    raise LoggingFolderNotShared(str(getattr(exc, "cause", exc))) from None
                except Exception as exc:  # noqa: BLE001 - the task's error: its ranks left incomplete, named
                    # (Ray's error was logged whole: its traceback, in terminal colours, and no reason a full disk
                    # or a dead process was told by; the run then said "5 task(s) did not complete", naming none)
                    cause = getattr(exc, "cause", None) or exc
                    if isinstance(cause, RanksFailed):
                        failures.update(cause.failures)
                    else:  # (the worker lost Ray's retries over, ...)
                        why = printable(prefix(f"{type(cause).__name__}: {str(cause).strip()}".splitlines()[0], 300))
                        failures.update({rank: why for rank in ranks if not executor.is_rank_completed(rank)})
                    for rank in ranks:
                        if rank in failures:
                            logger.error(printable(f"task {rank} did not complete: {failures[rank]}"))
            for ref, (ranks, started) in list(running.items()):
                if executor.time and time.monotonic() - started > executor.time:
                    ray.cancel(ref, force=True)
                    running.pop(ref)
                    for rank in ranks:
                        failures[rank] = f"it ran longer than {executor.time} s (time) and was stopped"
                    logger.warning(f"task(s) {ranks} ran longer than {executor.time} s and were stopped")
    finally:
        for ref in running:  # interrupted: stop what still runs
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
    return completed, failures


NO_NODE_GRACE = 30  # seconds a run waits for a node that can run its tasks to come back (restarted, autoscaled)


def _check_some_node_fits(executor: RayTaskExecutor, since: float | None, ranks: list[int]) -> float | None:
    """While tasks wait: None when a live node can run a task, else when none could first; ValueError once none
    could for NO_NODE_GRACE seconds.  A run whose only node that could run its tasks died mid-run waited, silent,
    for ever: the check before the run (`check_task_fits`) no longer held."""
    try:
        check_task_fits(executor.cpus_per_task, executor.mem_per_cpu_gb * executor.cpus_per_task)
        return None
    except ValueError as exc:
        now = time.monotonic()
        if since is None:
            logger.warning(f"task(s) {sorted(ranks)} wait: {exc} (a node that could run them left the cluster; the run "
                           f"stops unless one joins within {NO_NODE_GRACE} s)")
            return now
        if now - since < NO_NODE_GRACE:
            return since
        raise ValueError(f"task(s) {sorted(ranks)} cannot run: {exc}; none has for {NO_NODE_GRACE} s (a node that "
                         f"could run them left the cluster)") from None


def plexity_task(pickled_executor: bytes, ranks: list[int], working_dir: str | None = None) -> None:
    """One Ray task: each of `ranks` in a process of its own forked from this worker (as datatrove
    runs them: a task's state, logger and extractor child never outlive it); raises if one did
    not complete.  The executor comes pickled, to be unpickled in `working_dir` (`RayTaskExecutor`):
    datatrove's folders are made again from their paths as written."""
    import socket

    import dill
    import multiprocess

    with _in_folder(working_dir):
        executor = dill.loads(pickled_executor)
        check_settings_recorded(executor.logging_dir, f"task(s) {ranks} on {socket.gethostname()}")
        first = 0 if executor.log_first else 1  # local rank 0 logs to the console
        # Each process unpickles its own executor, as datatrove's pool does: an fsspec filesystem
        # (http, s3) this worker already opened cannot be used across a fork.
        processes = []
        for local_rank, rank in enumerate(ranks, start=first):
            process = multiprocess.Process(target=_ray_task_main,
                                           args=(pickled_executor, rank, local_rank, working_dir))
            process.start()
            processes.append((rank, process))
    failed = {}
    for rank, process in processes:
        process.join()
        if process.exitcode != 0:
            failed[rank] = _why_task_ended(executor, rank, process.exitcode)
    if failed:
        raise RanksFailed(failed)


class RanksFailed(RuntimeError):
    """A Ray task's ranks that did not complete, each with why (`_why_task_ended`): the driver names them as a local
    run does (`TasksFailed`).  Its one argument is that dict, so that it pickles back whole from the worker."""

    def __init__(self, failures: dict[int, str]):
        super().__init__(failures)
        self.failures = failures

    def __str__(self) -> str:
        return "; ".join(f"task {rank}: {why}" for rank, why in sorted(self.failures.items()))


@contextlib.contextmanager
def _in_folder(folder: str | None):
    """In `folder` where this node has it (else where the worker is: absolute paths work all the
    same), back in the worker's own folder after (a Ray worker runs other tasks next)."""
    previous = os.getcwd()
    try:
        with contextlib.suppress(OSError):
            os.chdir(folder or previous)
        yield
    finally:
        os.chdir(previous)


def _ray_task_main(pickled_executor: bytes, rank: int, local_rank: int, working_dir: str | None = None) -> None:
    import dill

    with contextlib.suppress(OSError):  # (forked in it; under another start method, not)
        os.chdir(working_dir or os.getcwd())
    executor = dill.loads(pickled_executor)
    time.sleep(random.randint(0, executor.randomize_start_duration))
    try:
        executor._run_for_rank(rank, local_rank)
    except Exception as exc:  # the exit status tells the Ray task why (a full disk was "exited with status 1")
        if is_disk_full(exc):
            _quiet_logger()  # (said once, by the driver: no traceback per log record that no longer fits)
        sys.exit(_task_exit_status(exc))


SLURM_JOB_RECORD = "plexity-slurm-job"  # in the logging folder: the array job last launched into it
WAITING_STATES = "pending,running,suspended,configuring,completing,requeued,resizing"  # (squeue -t)


class SlurmTaskExecutor(_SettingsChecked, SlurmPipelineExecutor):
    """datatrove's `SlurmPipelineExecutor` (same arguments), which, run where there is no Slurm
    (no ``sbatch`` on ``PATH``), says so in one line (`ExecutorUnavailable`) before anything is
    written or launched, instead of datatrove's ``FileNotFoundError`` from deep inside its launch;
    which records the run's settings and checks them before submitting the job and when each
    array task starts (`SettingsChanged`); and which submits nothing while the array job it launched
    into the same logging folder still has tasks pending or running (`JobStillQueued`): a re-run
    made then (the first command returns as soon as Slurm took the job) submitted the same tasks
    again, to run beside the first job's, and replaced the ranks_to_run.json that the first job's
    waiting tasks read their ranks from.  Its sbatch script has its paths and job name quoted
    (`get_launch_file_contents`), and once its job is over, `task_failures` says why each task that did
    not complete did not."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.venv_path = venv_activate(self.venv_path)  # (now: a script fails where the executor is made)
        if "\\" in str(self.slurm_logs_folder):  # (Slurm drops it from a log path: each task failed, logging nowhere)
            raise ValueError(f"{self.slurm_logs_folder} has a backslash in its path, which Slurm cannot write a task's "
                             f"log under (it reads a backslash in --output as an escape): give a folder without one")

    def run(self):
        if "SLURM_ARRAY_TASK_ID" in os.environ:  # running inside the job
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
        script = super().get_launch_file_contents(quoted, run_script)
        script = script.replace(f'echo "Starting data processing job {self.job_name}"',
                                f"echo {shlex.quote(f'Starting data processing job {self.job_name}')}", 1)
        if self.venv_path and not self.env_command and not self.condaenv:
            script = script.replace(f"source {self.venv_path}\n", f"source {shlex.quote(self.venv_path)}\n", 1)
        return script

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
                    failures[rank] = _describe_exit(1, error) if error else "it did not complete (see its Slurm log)"
                    continue
                state = states.get(array) or slurm_log_state(slurm_log)
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
              "OUT_OF_MEMORY": "Slurm stopped it: it used more than the memory it reserved{memory}",
              "NODE_FAIL": "its node failed", "BOOT_FAIL": "its node failed to boot",
              "PREEMPTED": "Slurm preempted it (another job took its node)", "DEADLINE": "it missed its deadline"}
# A task's exception for a full disk or quota ("OSError: [Errno 28] No space left on device")
_DISK_FULL_ERROR = re.compile(rf"\[Errno (?:{'|'.join(map(str, sorted(DISK_FULL_ERRNOS)))})\]")
# The line slurmstepd writes into a task's Slurm log when it stops it: "*** JOB 31 ON vm CANCELLED AT ... ***"
_STEPD_LINE = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(?: DUE TO (?P<why>[A-Z ]+?))? \*\*\*")
_STEPD_STATES = {None: "CANCELLED", "TIME LIMIT": "TIMEOUT", "PREEMPTION": "PREEMPTED", "NODE FAILURE": "NODE_FAIL"}


def _describe_slurm_state(state: str | None, error: str | None, executor, slurm_log: Path) -> str:
    if error and _DISK_FULL_ERROR.search(error):  # (as a local run says it: the run then says it in one line)
        return DISK_FULL_WHY
    if error and state in (None, "FAILED", "COMPLETED"):  # (the task's own exception says it best)
        return _describe_exit(1, error)
    why = SLURM_ENDS.get(state or "")
    if why:
        return why.format(time=f" (--time {executor.time})" if executor else "",
                          memory=f" ({executor.mem_per_cpu_gb} GB per CPU, --mem-per-cpu-gb)" if executor else "")
    where = f"its Slurm log says why: {slurm_log}" if slurm_log.is_file() else "it wrote no Slurm log"
    if state is None:
        return f"it did not complete, and Slurm no longer says how it ended ({where})"
    return f"it ended {state} without completing ({where})"


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
        if match := _STEPD_LINE.search(line):
            found = _STEPD_STATES.get(match.group("why"), "CANCELLED")
    return found


def _log_tail(path: Path) -> str:
    """The last LOG_TAIL_BYTES of a file, as text ("" when it cannot be read)."""
    try:
        with open(path, "rb") as log:
            return _tail(log)
    except OSError:
        return ""


def slurm_log_error(path: Path) -> str | None:
    """The exception, or slurmstepd's line stopping the task, that an array task's Slurm log ends with (srun's "0: "
    prefixes left out): a task that fails before its own log is opened (its settings or input files checked) says it
    only there."""
    return _last_error(_log_tail(path), slurm=True)


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
    task that is not over (Slurm no longer knowing the job: it is over)."""
    if not logging_dir.isfile(SLURM_JOB_RECORD):
        return
    with logging_dir.open(SLURM_JOB_RECORD, "r") as f:
        job_id = f.read().strip()
    listed = subprocess.run(["squeue", "-h", "-j", job_id, "-t", WAITING_STATES, "-r", "-o", "%i"],
                            capture_output=True, text=True)
    waiting = listed.stdout.split() if listed.returncode == 0 else []
    if waiting:
        raise JobStillQueued(logging_dir.path, job_id, len(waiting))


RAY_ANSWER_TIMEOUT = 5  # seconds a Ray head's port has to accept a connection


def check_ray_address(address: str, give: str, timeout: float = RAY_ANSWER_TIMEOUT) -> None:
    """ConnectionError, in one line, unless something accepts connections at a ``HOST:PORT`` or
    ``ray://HOST:PORT`` address (``auto`` and other forms are Ray's to read); `give` says where
    another address goes.  Given an address where no Ray runs, ``ray.init`` tried again and again for
    some twelve minutes (20 tries of ~36 s), logging warnings."""
    import socket

    where = address.removeprefix("ray://")
    host, colon, port = where.rpartition(":")
    if "://" in where or not colon or not host or not port.isdigit():  # (auto, and forms Ray reads its own way)
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as connection:
            answer = _grpc_answer(connection, timeout)
    except OSError as exc:
        why = "nothing answered" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ConnectionError(f"no Ray cluster answers at {address} ({why}): start one there (`ray start --head`), "
                              f"or {give}") from None
    # (another server's port, the dashboard's 8265 say: ray.init tried it again and again for minutes, warning
    # "Failed to get cluster ID from GCS server")
    if answer and not (len(answer) == 9 and answer[3] == _HTTP2_SETTINGS):
        port_of = ("Ray client's server (10001 by default)" if address.startswith("ray://") else
                   "the head's `ray start --head --port` (6379 by default; not the dashboard's, 8265)")
        raise ConnectionError(printable(f"what answers at {address} is not a Ray cluster (it answered {answer!r}, not "
                                        f"gRPC): give the port of {port_of}, or {give}"))


_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + b"\x04" + bytes(5)  # (and an empty SETTINGS frame)
_HTTP2_SETTINGS = 4  # the type of the frame a gRPC server (a Ray head, Ray client's server) answers it with


def _grpc_answer(connection, timeout: float) -> bytes:
    """The first bytes a server answers an HTTP/2 client's preface with (a gRPC server: its SETTINGS frame's 9-byte
    header); b"" when it answers nothing in time, or under TLS (RAY_USE_TLS: the preface would be refused unread)."""
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return b""
    try:
        connection.settimeout(timeout)
        connection.sendall(_HTTP2_PREFACE)
        answer = b""
        while len(answer) < 9:  # (a frame's header may come in more than one piece, over a slow network)
            piece = connection.recv(9 - len(answer))
            if not piece:
                break
            answer += piece
        return answer
    except OSError:
        return b""


def check_cluster_ray_would_join() -> None:
    """Before a run not connected to Ray: Ray's own ``ray.init()`` (which the first task calls)
    joins the cluster $RAY_ADDRESS names, or else the one the last ``ray start`` of this machine
    wrote into its temp folder's ``ray_current_cluster`` (and starts a Ray of its own only when
    neither is there).  A file left by a cluster that has since stopped made every run wait
    through Ray's minutes of retries: ConnectionError at once, saying what to do."""
    if (address := os.environ.get("RAY_ADDRESS")) and address != "auto":
        check_ray_address(address, give="set $RAY_ADDRESS to a running cluster's head, or call ray.init() first")
        return
    # (Ray's temp folder, as Ray finds it: $RAY_TMPDIR, else $TMPDIR, else /tmp)
    temp = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    named_in = Path(temp) / "ray" / "ray_current_cluster"
    try:
        address = named_in.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return
    if address:
        check_ray_address(address, give=(
            f"connect first: ray.init(address=...) for a running cluster, ray.init(address=\"local\") for a "
            f"Ray of this machine (this address is what {named_in} keeps from an earlier `ray start`, which "
            f"Ray joins when no ray.init() came first; `ray stop` removes it)"))


def check_task_fits(cpus: float, memory_gb: float) -> None:
    """Raise ValueError unless a live node of the connected Ray cluster has `cpus` CPUs and
    `memory_gb` GB of Ray's ``memory`` resource (in total: it may be busy now).  (A cluster
    whose autoscaler would start a larger node on demand needs one such node up: Ray's head
    reports an autoscaling status even with no autoscaler, so it cannot tell them apart.)"""
    import ray

    nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
    needed = {"CPU": cpus, "memory": memory_gb * 1024**3}
    if any(all(resources.get(k, 0) >= v for k, v in needed.items() if v) for resources in nodes):
        return
    have = "; ".join(f"{r.get('CPU', 0):g} CPUs, {r.get('memory', 0) / 1024**3:.1f} GB" for r in nodes) or "no node"
    raise ValueError(f"no node of the Ray cluster can run a task of {cpus:g} CPUs and {memory_gb:g} GB of memory "
                     f"(the nodes have: {have}): lower the CPUs or the memory per task")
