"""datatrove's executors, with what a task leaves behind when it dies taken care of: what the three share, and
the local one.

- `LocalTaskExecutor` (here): datatrove's local executor, but a task that dies ends the run, not hangs it,
  and a full disk is one line.
- `RayTaskExecutor` (`plexity_plugins.datatrove.ray_executor`): datatrove's Ray executor's arguments, run so that
  a task's processes die with it, a task that no node can hold is an error, and a task whose node is lost is run
  again.
- `SlurmTaskExecutor` (`plexity_plugins.datatrove.slurm_executor`): datatrove's Slurm executor, which says in one
  line that there is no ``sbatch`` here instead of failing inside datatrove, quotes what its sbatch script holds,
  and says why each task of its job that did not complete did not (cancelled, out of time, its exception).

They subclass datatrove's executors and keep their contract: ``run`` launches the tasks and each
task runs datatrove's own ``_run_for_rank`` (its log, stats and completion marker), which ours
wrap without copying.  Nothing of datatrove is patched.  Each records the run's settings in its
logging folder and, when it finds other settings recorded there, stops before anything runs
(`plexity_plugins.datatrove.run_settings`): a run with other settings never resumes into another
run's completions.

What they share is here, under public names (the Ray and Slurm executors' modules import them): the settings
checked (`SettingsChecked`), a full disk of the logging folder said in one line (`FullDiskStopsTask`: local, Ray),
why a task ended (a task's log read: `read_tail`, `last_error`, `task_error`; its exit status: `task_exit_status`,
`describe_exit`, `why_task_ended`), a task's errors logged in one line (`quiet_logger` once the disk is full), the
stats read and written whole (`read_stats`, `save_stats`).  The Ray and Slurm executors' names are still importable
from this module (`__getattr__`: their modules imported on first use), as they were when all three lived in it: a
Slurm job's ``executor.pik`` pickled then names ``plexity_plugins.datatrove.executor``.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import signal
import re
import sys
import threading
import time
from copy import deepcopy
from dataclasses import dataclass

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.executor.slurm import SlurmPipelineExecutor
from datatrove.utils.logging import logger
from datatrove.utils.stats import PipelineStats

from ..errors import (DISK_FULL_STATUS, DISK_FULL_WHY, HTML_PAGES_STATUS, HTML_PAGES_WHY, INPUTS_CHANGED_STATUS,
                      TEXTS_NOT_HTML_STATUS, TEXTS_NOT_HTML_WHY, DiskFull, HtmlPagesNotText, InputFilesChanged,
                      OutputNotWritable, ReadError, TasksFailed, TextsNotHtml, cannot_write_message, disk_full_message,
                      PROCESS_LIMIT_WHY, inputs_changed_why, is_disk_full, out_of_processes, printable)
from ..runtime.cgroups import oom_kills, out_of_memory
from ..runtime.keywords import suggests_keywords
from ..runtime.lifetime import die_with_parent
from ..text.graphemes import prefix
from .folders import TaskFolder
from .run_settings import (changed_inputs, changed_task_inputs, chained, check_inputs, check_outputs, check_settings,
                           dependency_pending, reopen_lost_outputs, run_settings)


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
            tail = read_tail(log)
    except (OSError, ValueError):
        return None
    return last_error(tail)


def read_tail(log) -> str:
    """The last LOG_TAIL_BYTES of an open binary file, as text."""
    with contextlib.suppress(OSError, ValueError):
        log.seek(max(0, log.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
    return log.read(LOG_TAIL_BYTES).decode("utf-8", "replace")


def last_error(tail: str, slurm: bool = False) -> str | None:
    """The last exception line of a log's `tail` (a failed read's one line too), cut to 300 characters.  With `slurm`,
    a Slurm log's: srun's "0: " prefixes left out, and a module's own exception named with its module accepted."""
    found = None
    for line in map(str.strip, tail.splitlines()):
        if slurm:
            line = re.sub(r"^\d+: ", "", line)
        # (this package's own, named with their module in any log: "plexity_plugins.errors.ExtractorCannotStart:
        # ...", which a local run said as "exited with status 1 (the task's log says why)")
        if _EXCEPTION_LINE.match(line) or ((slurm or line.startswith("plexity_plugins."))
                                           and _QUALIFIED_EXCEPTION_LINE.match(line)):
            found = line
        elif read_error := _READ_ERROR_LINE.search(line):
            found = read_error.group(1)
    return printable(prefix(found, 300)) if found else None


def describe_exit(code: int | None, error: str | None = None, ran_out: str | None = None) -> str:
    """Why a task's process that ended with exit status `code` (negative: killed by that signal) did not complete
    its task, in words; `error`, the exception its log ends with (`last_error`), quoted; `ran_out`, the memory the
    out-of-memory killer found gone, when it ended a process of this cgroup meanwhile (`cgroups.out_of_memory`)."""
    if code == -signal.SIGKILL and ran_out:
        return (f"its worker process was killed by the out-of-memory killer: it ran out of {ran_out}; give the job "
                f"more memory, or run fewer workers (--workers)")
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
    if error and out_of_processes(error):  # (a container's pids.max: what to raise)
        return f"its worker process exited with status {code}: {error}: {PROCESS_LIMIT_WHY}"
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


class SettingsChecked:
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
                changes = changed_task_inputs(self.pipeline, settings, rank, self.world_size)
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


class FullDiskStopsTask:
    """For a datatrove executor: its logging folder a `TaskFolder` (its stats written whole or not at all, a log
    write that finds the disk full the task's end), and a task stopped by a full disk said in one line (`DiskFull`),
    not marked complete.  The local and Ray executors' tasks both run this: on Ray, a ``stats/NNNNN.json`` the full
    disk cut short was left as 0 bytes, and the run said "error: Expecting value: line 1 column 1 (char 0)" (exit
    status 2) reading it; a log the full disk refused (datatrove's Ray executor copies it there once the task has
    run) raised `FullDiskStop` past the task's ``except Exception``, and the task marked complete said "0 of 2
    task(s) did not complete"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.logging_dir = TaskFolder.of(self.logging_dir)

    def _run_for_rank(self, rank: int, local_rank: int = 0, *args, **kwargs) -> PipelineStats:
        """datatrove's, with a full disk said in one line (`DiskFull`)."""
        try:  # (logged in one line: `SettingsChecked._run_for_rank`)
            return super()._run_for_rank(rank, local_rank, *args, **kwargs)
        except BaseException as exc:  # (FullDiskStop is one: see TaskFolder)
            if not is_disk_full(exc):
                raise
            quiet_logger()  # (said once, by whoever runs the task: no traceback per log record)
            # (its log was cut short after its marker was written, as datatrove's local executor closes the log last:
            # the task is not complete, the re-run redoes it; a Ray task is marked after its log: `MarkedOnceLogged`)
            with contextlib.suppress(OSError):
                self.logging_dir.rm(f"completions/{rank:05d}")
            raise DiskFull(errno.ENOSPC, f"task {rank}: {disk_full_message(exc)}") from None


def why_task_ended(executor, rank: int, exitcode: int | None, ran_out: str | None = None,
                   error: str | None = None, elsewhere: str | None = None) -> str:
    """Why the process of task `rank`, which ended with `exitcode` (`task_exit_status`), did not complete it.
    `ran_out`: as `describe_exit`'s; `error`: the error the process itself sent back (what stopped it before its
    log could say), said when its log names none; `elsewhere`: where its output went when it wrote no log (a Ray
    worker's log file).  A task that stopped before its log was written was said "(the task's log says why)" of a
    log that did not exist."""
    if exitcode == INPUTS_CHANGED_STATUS:
        settings = getattr(executor, "_plexity_settings", None) or run_settings(executor.pipeline, executor.world_size,
                                                                                not chained(executor))
        return inputs_changed_why(changed_inputs(executor.pipeline, settings))
    # (what the task's log ends with: an exception, or a failed read in its own words)
    logged = task_error(executor.logging_dir, rank) if exitcode == 1 else None
    if (exitcode == 1 and logged is None and not (error and out_of_processes(error))
            and not _task_log_exists(executor.logging_dir, rank)):
        log = executor.logging_dir.resolve_paths(f"logs/task_{rank:05d}.log")
        where = f"; {elsewhere}" if elsewhere else ""
        if error:
            return f"its worker process exited with status 1: {error} (it wrote no task log, {log}{where})"
        return f"its worker process exited with status 1 before writing its task log ({log}){where}"
    return describe_exit(exitcode, logged or error, ran_out)


def _task_log_exists(logging_dir, rank: int) -> bool:
    try:
        return logging_dir.exists(f"logs/task_{rank:05d}.log")
    except OSError:
        return True  # (cannot tell: say what a log would say)


def task_exit_status(exc: BaseException) -> int:
    """The exit status a task process ends with for the error that stopped it (its parent says why in its words:
    `describe_exit`); datatrove's ``_run_for_rank`` logged it."""
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


def quiet_logger() -> None:
    """Only errors on stderr, nothing in the log file (the disk is full)."""
    from datatrove.utils.logging import DATATROVE_COLORIZE_LOGS

    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="ERROR")


def read_stats(folder, rank: int) -> PipelineStats:
    """Task `rank`'s stats (``stats/NNNNN.json`` in the logging folder `folder`), to be merged into ``stats.json``
    (`save_stats`)."""
    with folder.open(f"stats/{rank:05d}.json", "r") as f:
        return PipelineStats.from_json(json.load(f))



# -- the local executor ------------------------------------------------------------------------

@suggests_keywords
class LocalTaskExecutor(FullDiskStopsTask, SettingsChecked, LocalPipelineExecutor):
    """datatrove's `LocalPipelineExecutor`, with worker processes of its own and every death noticed.

    With several workers, datatrove's executor runs tasks in a ``multiprocess`` Pool, which waits
    forever for a task whose worker was SIGKILLed (the out-of-memory killer, a node problem): the
    run hangs after "3/4 tasks completed".  Here the tasks run in at most ``workers`` worker
    processes, one task after another in each, their extraction child kept from one task to the
    next (`_worker_main`); the run waits on the processes themselves, so a task that dies is seen
    at once, and a task that fails ends its worker (the next task gets a new one).  The other tasks
    go on; at the end the run raises `TasksFailed`, naming each task that did not complete and why.
    A re-run redoes exactly those (completed tasks have their completion markers, the failed ones none).

    Each worker process leads a process group of its own, and when it ends (normally or not) what
    is left of that group is killed: the extractor subprocess of a killed task is not left behind.  And each
    dies with the run (``PR_SET_PDEATHSIG``, `plexity_plugins.runtime.lifetime`): a run killed with its
    process group leaves no task writing after it.

    A full disk (the outputs' or the logging dir's) stops a task with one line, not a traceback
    per log record that no longer fits, and the stats files are written whole or not at all (a
    0-byte ``stats/NNNNN.json`` would break the merge of a later run): `FullDiskStopsTask`.

    Same arguments as `LocalPipelineExecutor`; one worker runs the tasks in this process, as
    datatrove does.  The run's settings are recorded and checked (`SettingsChanged`).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        check_task_counts(self)  # (now, not as the run starts: a script fails where the executor is made)

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
        stats = sum((read_stats(self.logging_dir, rank) for rank in ranks
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
    """Run the ranks' tasks in at most ``executor.workers`` worker processes, each running one task after another
    (`_worker_main`), sent to it one at a time; returns why each task that did not complete did not.  A worker whose
    task fails ends with it (its exit status says why) and the next task gets a new worker.  (A process per task
    cost ~0.19 s of CPU a task to start it and its extraction child: 1,000 small files, one task each, 187 s of
    CPU; a worker keeps its child from task to task, `keep_between_uses`.)  A worker that dies after a task and
    before it has started the next (killed while it waits) is replaced, and its next task goes to the new one: that
    task never ran, and nothing failed."""
    import multiprocess  # what datatrove's executor uses: dill pickles lambdas in pipelines
    import multiprocess.connection

    context = multiprocess.get_context(executor.start_method)
    task_executor = _task_payload(executor)
    waiting = list(ranks)
    running: dict = {}  # worker process -> _Worker
    free_local_ranks = list(range(executor.workers))
    failures: dict[int, str] = {}
    kills = oom_kills()  # (a worker SIGKILLed once the out-of-memory killer has acted here: said as that)

    def finished(process, rank: int) -> None:
        nonlocal done
        if executor.is_rank_completed(rank):
            done += 1
            logger.info(f"{done}/{executor.world_size} tasks completed.")
        else:  # (its task returned without its completion marker)
            failures[rank] = why_task_ended(executor, rank, 0)
            logger.error(f"task {rank} did not complete: {failures[rank]}")

    def next_task(process) -> None:
        worker = running[process]
        worker.rank, worker.started = (waiting.pop(0) if waiting else None), False
        with contextlib.suppress(OSError):  # (a worker that died meanwhile: seen below)
            worker.connection.send(worker.rank)

    try:
        while waiting or running:
            while waiting and len(running) < executor.workers:
                local_rank = free_local_ranks.pop(0)
                # (forked: this process is the worker's parent; forkserver: the server is)
                parent = os.getpid() if executor.start_method == "fork" else None
                ours, theirs = context.Pipe()
                process = context.Process(target=_worker_main, args=(task_executor, local_rank, theirs, parent),
                                          name=f"plexity-worker-{local_rank}")
                running[process] = _Worker(local_rank, ours)  # (before start(): a Ctrl-C in it stops it)
                with _ctrl_c_held():
                    process.start()
                theirs.close()
                next_task(process)
            # A process's sentinel stays open while its extractor subprocess (which inherited
            # it) lives: so also ask each process itself (waitpid) whether it has ended.
            multiprocess.connection.wait([p.sentinel for p in running] + [w.connection for w in running.values()],
                                         timeout=0.2)
            for process, worker in list(running.items()):
                with contextlib.suppress(EOFError, OSError):
                    while worker.rank is not None and worker.connection.poll():  # its task started, or done
                        what, rank = worker.connection.recv()
                        if what == "started":
                            worker.started = True
                        elif what == "error":  # (then `rank` is the error's text)
                            worker.error = rank
                        else:
                            finished(process, rank)
                            worker.completed += 1
                            next_task(process)
                if process.is_alive():
                    continue
                process.join()
                running.pop(process)
                worker.connection.close()
                free_local_ranks.append(worker.local_rank)
                _kill_group(process.pid)  # (what its tasks left: its extraction child)
                rank = worker.rank
                if rank is not None and not worker.started and worker.completed:
                    # (died waiting for it, after a task of its own: the task goes to a new worker.  It was said
                    # "task 2: its worker process was killed by SIGKILL", run exit 1, for a task that never ran.  A
                    # worker that dies before its first task, as it starts, is that task's failure: no loop.)
                    waiting.insert(0, rank)
                    why = describe_exit(process.exitcode, ran_out=out_of_memory(kills))
                    logger.warning(f"a worker process ended between tasks ({why}): "
                                   f"task {rank}, not started, goes to a new one")
                elif rank is not None:  # (died in its task, or its task failed: its exit status says why)
                    failures[rank] = why_task_ended(executor, rank, process.exitcode, out_of_memory(kills),
                                                    worker.error)
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
                process.kill()  # (one just started may not lead its group yet, `_worker_main`'s setpgid: missed above)
            for process in started:
                process.join(timeout=5)
                _kill_group(process.pid)
            for worker in running.values():
                worker.connection.close()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
    return failures


@dataclass
class _Worker:
    """A worker process of `_run_in_processes`, as the run sees it."""

    local_rank: int
    connection: object  # (the run's end of the pipe: ranks sent, "started" and "done" received)
    rank: int | None = None  # the task it was sent (None: told to end)
    error: str | None = None  # what stopped its task before the task's log could say it
    started: bool = False  # whether it said it started that task
    completed: int = 0  # the tasks it has completed


@contextlib.contextmanager
def _ctrl_c_held():
    """A Ctrl-C (SIGINT) that lands in the block acted on after it, in the main thread: one that landed inside a
    task's ``start()``, its process forked but not yet given its pid, left that task running when the run stopped
    (the stop kills the tasks whose pid it knows).  Elsewhere, nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)  # (to the handler restored: KeyboardInterrupt, or what the caller set)


def _task_payload(executor: LocalTaskExecutor) -> LocalTaskExecutor | bytes:
    """What a task process is given: the executor, or, where the task process is not forked from a program that
    has a file (a notebook's kernel, ``python -c``, a script read from standard input), the executor pickled with
    dill's ``recurse``.  A started ('forkserver', the default, or 'spawn') process imports a script's ``__main__``
    again, from its file; a notebook's has none, so a function of the notebook's (a `LambdaFilter`'s), pickled by
    value, found none of the notebook's names in the task: ``NameError: name 're' is not defined`` in each task,
    for a module the notebook had imported.  ``recurse`` pickles the names such a function uses along with it."""
    if executor.start_method == "fork" or getattr(sys.modules.get("__main__"), "__file__", None):
        return executor
    import dill

    return dill.dumps(executor, recurse=True)


def _worker_main(executor: LocalTaskExecutor | bytes, local_rank: int, tasks, parent: int | None = None) -> None:
    """A worker process: runs each rank `tasks` (a connection) sends, one after another, each on a fresh copy of
    the pipeline (a step's counters and state are its task's), and says when it starts a rank's task and when that
    has returned; ends when sent None or when the run is gone.  A task that fails ends the worker, with the exit
    status that says why (`task_exit_status`).  The extraction child is kept from one task to the next
    (`keep_between_uses`), and ends with the worker."""
    # Dies with its parent: a task whose run is killed (SIGKILL of the run's process group, which
    # does not hold this process: it leads a group of its own, see _kill_group) must not go on
    # writing its output, which a re-run is about to write again.  Its extractor child dies with it.
    die_with_parent(parent or os.getppid())
    os.setpgid(0, 0)  # a group of its own: see _kill_group
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (a forked task has its parent's, `_ctrl_c_held`'s)
    # (and SIGTERM ends it, said by the run as such: forked, it had `plexity run`'s handler, a KeyboardInterrupt, and a
    # worker sent SIGTERM printed a traceback and was said "exited with status 1 (the task's log says why)")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from ..extractors.sandbox import keep_between_uses, share_job_memory

    keep_between_uses()
    status = None
    with _closes_refused_by_a_full_disk():  # (as the failed task's frames are freed, at the end of `except`)
        try:
            if isinstance(executor, bytes):  # (`_task_payload`)
                import dill

                executor = dill.loads(executor)
            # (the job's memory shared by the workers, each with its extraction child: their default ceiling)
            share_job_memory(executor.workers)
            pipeline = executor.pipeline
            while True:
                try:
                    rank = tasks.recv()
                except EOFError:  # (the run is gone)
                    return
                if rank is None:
                    return
                tasks.send(("started", rank))  # (from here on, its death is this task's failure)
                try:
                    executor.pipeline = deepcopy(pipeline)
                except Exception as exc:  # (before the task's log: said to the run, or said nowhere; at a container's
                    tasks.send(("error", f"{type(exc).__name__}: {exc}"))  # pids.max, fsspec's thread cannot start)
                    raise
                try:
                    executor._run_for_rank(rank, local_rank)
                except Exception as exc:
                    # (said to the run too, which says it where the task wrote no log: a check of its inputs that
                    # failed, a remote folder's listing stalled, was "exited with status 1 before writing its task
                    # log" alone; where the log says it, the run says the log's line)
                    with contextlib.suppress(OSError):  # (the run gone)
                        tasks.send(("error", f"{type(exc).__name__}: {exc}"))
                    raise
                tasks.send(("done", rank))
        except Exception as exc:  # the exit status tells the parent why
            status = task_exit_status(exc)
        finally:  # (its kept extraction child ended and waited for: a multiprocess child runs no atexit)
            keep_between_uses(False)
    sys.exit(status)


@contextlib.contextmanager
def _closes_refused_by_a_full_disk():
    """In a worker: a file that a task stopped by an error left open (datatrove 0.6's writers, when a write fails)
    and whose close, as the task's frames are freed, the full disk refuses says nothing.  On Python 3.13 it was an
    "Exception ignored in: <LocalFileOpener>" traceback per file on stderr, beside the one line that says the disk
    is full (the task's output is not kept: see `_run_in_processes`).  Any other error Python cannot raise is shown
    as before."""
    shown = sys.unraisablehook

    def hook(unraisable) -> None:
        if not is_disk_full(unraisable.exc_value):
            shown(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = shown


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


# -- the Ray and Slurm executors' names, where they were ------------------------------------------

# The names that moved to the Ray and Slurm executors' modules, by the module they are in now.
_MOVED = {**dict.fromkeys(("RayTaskExecutor", "RETRIES", "NO_NODE_GRACE", "plexity_task", "RanksFailed",
                           "RAY_ANSWER_TIMEOUT", "check_ray_address", "check_cluster_ray_would_join",
                           "check_task_fits"), "ray_executor"),
          **dict.fromkeys(("SlurmTaskExecutor", "SLURM_JOB_RECORD", "WAITING_STATES", "SLURM_ENDS",
                           "slurm_task_states", "slurm_log_state", "slurm_log_error", "venv_activate",
                           "check_no_slurm_job_queued"), "slurm_executor")}


def __getattr__(name: str):
    """A name of the Ray or Slurm executor's from this module, where it was: an import written then, and what was
    pickled then (a Slurm job's ``executor.pik``, which names a class by its module), still find it."""
    if name in _MOVED:
        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
