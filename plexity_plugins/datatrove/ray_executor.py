"""`RayTaskExecutor`: datatrove's Ray executor's arguments, run so that a task's processes die with it, a task
that no node can hold is an error, and a task whose node is lost is run again; and the checks of the Ray cluster a
run joins (`check_ray_address`, `check_cluster_ray_would_join`, `check_task_fits`) and the folder of a Ray it
starts (`local_ray_folder`).  ``ray`` itself is imported only when a run starts.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

from datatrove.executor.ray import RayPipelineExecutor
from datatrove.utils.logging import logger
from datatrove.utils.stats import PipelineStats

from ..errors import FullDiskStop, LoggingFolderNotShared, TasksFailed, printable
from ..runtime.keywords import suggests_keywords
from ..runtime.lifetime import die_with_parent
from ..text.graphemes import prefix
from .executor import (FullDiskStopsTask, SettingsChecked, read_stats, save_stats, task_exit_status,
                       why_task_ended)
from .run_settings import check_settings_recorded


RETRIES = 3  # times a task whose node or worker process was lost is run again (as datatrove: 3)
# seconds a task whose ranks are all marked complete is given to return its result before it is counted complete and
# cancelled (`_run_on_ray`: its node may have died as it returned)
COMPLETED_GRACE = 10


class MarkedOnceLogged:
    """For datatrove's Ray executor: a task's completion marker written once its log is in the logging folder.

    datatrove's Ray ``_run_for_rank`` marks the task complete and then copies its log there; the driver counts a task
    whose ranks stay marked `COMPLETED_GRACE` seconds as complete and cancels it (`_run_on_ray`).  A task whose log
    copy then found the disk full removed its marker (`FullDiskStopsTask`), but on a loaded node (Ray runs its workers
    at niceness 15, so any busy program takes their CPU) that took longer than the grace: the task was cancelled in
    between, its marker left, and the run said "1 of 2 task(s) did not complete" of two it had stopped, the re-run
    redoing one (its log never written).  Marked last, a task marked complete has nothing left to do but return."""

    _unmarked: list[int] | None = None  # (while a task runs: its ranks to mark once datatrove's method returns)

    def _run_for_rank(self, rank: int, local_rank: int = 0, *args, **kwargs) -> PipelineStats:
        self._unmarked = []
        try:
            stats = super()._run_for_rank(rank, local_rank, *args, **kwargs)
            done = self._unmarked
        finally:
            self._unmarked = None
        for each in done:  # (an error here, a full disk, is the task's as any other: `FullDiskStopsTask`)
            super().mark_rank_as_completed(each)
        return stats

    def mark_rank_as_completed(self, rank: int) -> None:
        if self._unmarked is not None:
            self._unmarked.append(rank)
        else:
            super().mark_rank_as_completed(rank)


@suggests_keywords
class RayTaskExecutor(FullDiskStopsTask, SettingsChecked, MarkedOnceLogged, RayPipelineExecutor):
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
      only such nodes leave mid-run, it says so and stops after ``node_wait`` seconds without one (default
      `NO_NODE_GRACE`, 30: long enough for a node restarted; give the minutes your autoscaler takes to add one).
    - ``nodes_per_task`` must be 1 (a task on several nodes is datatrove's executor's own).
    - A full disk of the logging folder stops a task as it stops a local one (`FullDiskStopsTask`): its stats
      written whole or not at all, the task not marked complete, `TasksFailed` saying "no space left on device".
      A task is marked complete only once its log is copied to the logging folder (`MarkedOnceLogged`).

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

    def __init__(self, *args, node_wait: float | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.working_dir = os.getcwd()  # (travels with the executor to the tasks)
        try:
            self.node_wait = NO_NODE_GRACE if node_wait is None else float(node_wait)
        except (TypeError, ValueError):
            self.node_wait = math.nan
        if not self.node_wait >= 0:  # (NaN too)
            raise ValueError(f"node_wait is {node_wait!r}: give the seconds a run waits for a node that can run its "
                             f"tasks, 0 or more")

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
        stats = sum((read_stats(self.logging_dir, rank) for rank in range(self.world_size)), start=PipelineStats())
        save_stats(self.logging_dir, "stats.json", stats)  # (whole or not at all, as a local run's)
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
    marked_complete: dict = {}  # object ref -> when its ranks were first seen marked complete, its result not back
    try:
        while waiting or running:
            while waiting and len(running) < executor.workers:
                ranks = waiting.pop(0)
                running[task.remote(executor_ref, ranks, executor.working_dir)] = (ranks, time.monotonic())
            finished, _ = ray.wait(list(running), num_returns=1, timeout=2)
            if not finished:
                # A task whose ranks are all marked complete has done its work, whether or not its result comes
                # back (its node died as it returned: Ray would wait to run it again, and the run ended "0 task(s)
                # did not complete").  It is given COMPLETED_GRACE to return first: cancelled as soon as its ranks
                # were marked, a task still removing its scratch folder (a loaded machine) was killed before it did,
                # and left the folder for good where no later task ran on the node.
                now = time.monotonic()
                for ref, (ranks, _) in list(running.items()):
                    if all(executor.is_rank_completed(rank) for rank in ranks):
                        if now - marked_complete.setdefault(ref, now) < COMPLETED_GRACE:
                            continue
                        running.pop(ref)
                        completed += 1
                        with contextlib.suppress(Exception):  # (its retry, were a node to come)
                            ray.cancel(ref, force=True)
            if not finished and running:  # (the only node that could run them lost mid-run: Ray waits, forever)
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


NO_NODE_GRACE = 30  # seconds a run waits for a node that can run its tasks to come back (restarted): `node_wait`


def _check_some_node_fits(executor: RayTaskExecutor, since: float | None, ranks: list[int]) -> float | None:
    """While tasks wait: None when a live node can run a task, else when none could first; ValueError once none
    could for ``executor.node_wait`` seconds.  A run whose only node that could run its tasks died mid-run waited,
    silent, for ever: the check before the run (`check_task_fits`) no longer held."""
    try:
        check_task_fits(executor.cpus_per_task, executor.mem_per_cpu_gb * executor.cpus_per_task)
        return None
    except ValueError as exc:
        now = time.monotonic()
        wait = getattr(executor, "node_wait", NO_NODE_GRACE)  # (an executor pickled before it had one)
        if since is None:
            logger.warning(f"task(s) {sorted(ranks)} wait: {exc} (a node that could run them left the cluster; the run "
                           f"stops unless one joins within {wait:g} s)")
            return now
        if now - since < wait:
            return since
        raise ValueError(f"task(s) {sorted(ranks)} cannot run: {exc}; none has for {wait:g} s (a node that "
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
        sweep_stale_scratch(executor)
        check_settings_recorded(executor.logging_dir, f"task(s) {ranks} on {socket.gethostname()}")
        first = 0 if executor.log_first else 1  # local rank 0 logs to the console
        # Each process unpickles its own executor, as datatrove's pool does: an fsspec filesystem
        # (http, s3) this worker already opened cannot be used across a fork.
        processes = []
        memory = (_reserved_memory(), len(ranks))  # (what Ray gave this task, shared by its ranks' processes)
        try:
            for local_rank, rank in enumerate(ranks, start=first):
                scratch = _make_scratch(executor, rank)
                processes.append((rank, scratch, None))
                process = multiprocess.Process(target=_ray_task_main,
                                               args=(pickled_executor, rank, local_rank, working_dir, scratch, memory))
                process.start()
                processes[-1] = (rank, scratch, process)
        except BaseException:
            for _, scratch, process in processes:
                if process is None:  # (a started one's: it ends with this worker)
                    shutil.rmtree(scratch, ignore_errors=True)
            raise
    failed = {}
    for rank, scratch, process in processes:
        try:
            process.join()
            if process.exitcode != 0:
                _keep_task_log(executor, rank, scratch, process.exitcode)
                failed[rank] = why_task_ended(executor, rank, process.exitcode, error=_reported_error(scratch),
                                              elsewhere=_worker_log())
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if failed:
        raise RanksFailed(failed)


# (`reserve_task_memory`: how the extraction ceiling's note names a Ray task's memory)
TASK_MEMORY_WORDS = "this Ray task's {} (the memory it reserved)"


def _reserved_memory() -> float | None:
    """The bytes of Ray's ``memory`` resource this task was given (``cpus_per_task * mem_per_cpu_gb`` GB, or what
    ``ray_remote_kwargs`` says), None if none (0), outside a Ray worker, or Ray cannot tell."""
    import ray

    # (asked outside a Ray worker, get_runtime_context() starts or joins a cluster with ray.init(): a task run
    # directly in a process of its own waited for a cluster it never asked for)
    if not ray.is_initialized():
        return None
    try:
        return ray.get_runtime_context().get_assigned_resources().get("memory")
    except Exception:  # noqa: BLE001 - (Ray cannot tell) no reservation
        return None


def _keep_task_log(executor: RayTaskExecutor, rank: int, scratch: str, exitcode: int) -> None:
    """The log of a task process that ended before datatrove's executor copied it from the temporary folder to the
    logging folder (killed by a signal: the out-of-memory killer; or that copy failed), copied there before the
    scratch folder goes: the task's log says what it did."""
    local = Path(scratch, _LOCAL_LOGS, f"task_{rank:05d}.log")
    with contextlib.suppress(OSError, FullDiskStop):
        if local.is_file() and (exitcode < 0 or not executor.logging_dir.exists(f"logs/task_{rank:05d}.log")):
            _copy_log(local, executor.logging_dir, rank)


def _copy_log(local: Path, logging_dir, rank: int) -> None:
    with logging_dir.open(f"logs/task_{rank:05d}.log", "w") as log:
        log.write(local.read_text(encoding="utf-8", errors="backslashreplace"))


# -- the scratch folders of tasks whose Ray worker was killed -------------------------------------------------------
# A task's scratch folder goes in `plexity_task`'s `finally`, which a killed worker never reaches (its node's raylet
# killed, Ray's out-of-memory killer, `ray.cancel(force=True)` as a run is stopped or a task runs past `time`): each
# such kill left a `plexity-taskNNNNN-*` folder, the task's log in it, in the node's temporary folder for good.  So
# each folder names its owner, and the next task on the node removes those whose owner is gone.

_SCRATCH_PREFIX = "plexity-task"
_OWNER_FILE = "owner.json"  # (in a task's scratch folder: the Ray worker it belongs to, and its run's logging folder)


def _make_scratch(executor: RayTaskExecutor, rank: int) -> str:
    """A scratch folder for task `rank` (this user's alone: 0700), naming this Ray worker as its owner."""
    scratch = tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{rank:05d}-")
    if (owner := _process_identity(os.getpid())) is not None:  # (else, not Linux: never swept)
        logs = executor.logging_dir
        owner |= {"rank": rank, "logging_dir": logs.fs.unstrip_protocol(logs.path)}
        with contextlib.suppress(OSError):  # (a full disk: the task goes on; its folder, unnamed, is never swept)
            Path(scratch, _OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")
    return scratch


def _process_identity(pid: int) -> dict | None:
    """A live process, told apart from any other of any machine sharing this temporary folder: this boot of this
    machine, the pid namespace (a container's pids are not the host's), the pid, and the process's start time (a pid
    is used again); None when `pid` is gone or /proc cannot tell."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
        started = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]  # (field 22, starttime)
    except (OSError, IndexError):
        return None
    return {"boot": boot, "pid_namespace": namespace, "pid": pid, "start": started}


def sweep_stale_scratch(executor: RayTaskExecutor) -> list[str]:
    """Remove the scratch folders of this user's tasks, in this worker's temporary folder, whose Ray worker is gone
    (killed before its own clean-up), first copying each one's log to its run's logging folder where that has no newer
    log of the task (a killed task's log was never copied: it said what the task did until it was killed).  A folder
    of another user, another machine or container, a live worker, or without its owner named is kept; so is one whose
    log cannot be copied (its run's logging folder is another run's, not on a local disk).  Returns those removed."""
    me = _process_identity(os.getpid())
    if me is None:
        return []
    removed = []
    with contextlib.suppress(OSError), os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            if not entry.name.startswith(_SCRATCH_PREFIX):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                owner = json.loads(Path(entry.path, _OWNER_FILE).read_text(encoding="utf-8"))
                if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
                        or (owner["boot"], owner["pid_namespace"]) != (me["boot"], me["pid_namespace"])
                        or (_process_identity(owner["pid"]) or {}).get("start") == owner["start"]):
                    continue
                rank = int(owner["rank"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if _save_stale_log(executor, owner["logging_dir"], rank, Path(entry.path, _LOCAL_LOGS,
                                                                          f"task_{rank:05d}.log")):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
                logger.info(f"removed {entry.path}, the temporary folder of task {rank} of a Ray worker that was "
                            f"killed (pid {owner['pid']})")
    return removed


def _save_stale_log(executor: RayTaskExecutor, logging_url: str, rank: int, local: Path) -> bool:
    """Whether a killed task's log `local` is where its run's logs are: copied to its logging folder (this run's, or
    a local folder) unless that holds a newer log of the task (a retry's), or there is none to copy."""
    from datatrove.io import get_datafolder

    logs = executor.logging_dir
    if logging_url != logs.fs.unstrip_protocol(logs.path):
        if not (logging_url.startswith("file://") and os.path.isdir(logging_url.removeprefix("file://"))):
            return False  # (another run's, elsewhere: left for a task of that run)
        logs = get_datafolder(logging_url.removeprefix("file://"))
    name = f"logs/task_{rank:05d}.log"
    try:
        if not local.is_file():
            return True
        if logs.exists(name):
            try:
                newer = logs.modified(name).timestamp() >= local.stat().st_mtime
            except Exception:  # noqa: BLE001 - a filesystem that cannot tell: the log there is kept
                newer = True
            if newer:
                return True
        _copy_log(local, logs, rank)
        return True
    except (Exception, FullDiskStop):  # noqa: BLE001 - any filesystem's error (a full disk): the folder is kept
        return False


def _reported_error(scratch: str) -> str | None:
    """The one line a task process that failed left in its scratch folder (`_ray_task_main`), if any."""
    try:
        return Path(scratch, _ERROR_FILE).read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def _worker_log() -> str | None:
    """Where this Ray worker's stderr goes (Ray's ``logs/worker-*.err`` of its session), said as where to look."""
    try:
        path = os.readlink("/proc/self/fd/2")
    except OSError:
        return None
    return f"Ray's worker log {path} has its output" if path.startswith("/") else None


class RanksFailed(RuntimeError):
    """A Ray task's ranks that did not complete, each with why (`why_task_ended`): the driver names them as a local
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


_ERROR_FILE = "error.txt"  # (in a task's scratch folder: the one line its process failed with)
_LOCAL_LOGS = "ray_logs/logs"  # (there too: where datatrove's Ray executor writes a task's log as it runs)


def _ray_task_main(pickled_executor: bytes, rank: int, local_rank: int, working_dir: str | None = None,
                   scratch: str | None = None, memory: tuple[float | None, int] = (None, 1)) -> None:
    """One task, in a process of its own.  Its temporary files go to `scratch`, a folder of this task's alone:
    datatrove's Ray executor writes each task's log first to ``{tempfile.gettempdir()}/ray_logs/logs/task_NNNNN.log``,
    a name every run and user of the node shared.  Another user's ``/tmp/ray_logs`` (root's first run left it
    0755) stopped every task of this one before its log existed, and two runs at once wrote the same file.

    `memory`: the bytes the Ray task reserved and how many processes share them (its ranks): the job's memory of its
    extraction child's default ceiling (`extraction_ceiling`), as a Slurm job's --mem is.  Sized by the node's memory,
    a task reserving 512 MiB let its child grow to 768 MiB on a large page: past what Ray placed it by, where Ray's
    memory monitor kills workers when the node runs low, and the task may be the one killed, at every retry."""
    import dill

    from ..extractors.sandbox import share_job_memory
    from ..runtime.memory import reserve_task_memory

    reserve_task_memory(memory[0], TASK_MEMORY_WORDS)  # (this process runs this task alone: forked for it)
    share_job_memory(memory[1], "ranks")

    if scratch:
        tempfile.tempdir = scratch  # (this process's only: it runs this one task)
    with contextlib.suppress(OSError):  # (forked in it; under another start method, not)
        os.chdir(working_dir or os.getcwd())
    executor = dill.loads(pickled_executor)
    time.sleep(random.randint(0, executor.randomize_start_duration))
    try:
        executor._run_for_rank(rank, local_rank)
    except Exception as exc:  # the exit status tells the Ray task why (a full disk: `FullDiskStopsTask`)
        if scratch:  # (for the Ray task to say, should the task's log not name it: it may not exist)
            why = printable(prefix(f"{type(exc).__name__}: {str(exc).strip()}".splitlines()[0], 300))
            with contextlib.suppress(OSError):
                Path(scratch, _ERROR_FILE).write_text(why, encoding="utf-8")
            if not Path(scratch, _LOCAL_LOGS, f"task_{rank:05d}.log").is_file():  # (no log of it: Ray's worker log)
                print(f"plexity task {rank}: {why}", file=sys.stderr, flush=True)
        sys.exit(task_exit_status(exc))



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
    named_in = ray_temp_root() / "ray" / "ray_current_cluster"
    try:
        address = named_in.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return
    if address:
        check_ray_address(address, give=(
            f"connect first: ray.init(address=...) for a running cluster, ray.init(address=\"local\") for a "
            f"Ray of this machine (this address is what {named_in} keeps from an earlier `ray start`, which "
            f"Ray joins when no ray.init() came first; `ray stop` removes it)"))


def ray_temp_root() -> Path:
    """Where Ray keeps its folder ``ray`` (sessions, sockets, logs): $RAY_TMPDIR, else $TMPDIR, else /tmp (Ray's
    own rule)."""
    return Path(os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp")


def local_ray_folder() -> Path | None:
    """The folder for a Ray of this machine that this process starts (``ray.init``'s ``_temp_dir``): None, Ray's
    own ``ray`` folder, where this user may write in it or it is not there yet; else ``ray-UID`` beside it.  A
    ``ray`` folder of another user's that this one may not write (an administrator's ``ray start`` left it so)
    stopped the run: "cannot write /tmp/ray/session_...: permission denied".  (``ray-UID``, not a user's name: Ray's
    socket paths below it must stay under 108 bytes.)"""
    default = ray_temp_root() / "ray"
    if not default.exists() or os.access(default, os.W_OK | os.X_OK):
        return None
    return ray_temp_root() / f"ray-{os.getuid()}"


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
