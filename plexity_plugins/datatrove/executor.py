"""datatrove's executors, with what a task leaves behind when it dies taken care of.

- `LocalTaskExecutor`: datatrove's local executor, but a task that dies ends the run, not hangs it.
- `RayTaskExecutor`: datatrove's Ray executor, but a task's process dies with its Ray actor, and
  a task that no node can hold is an error, not an endless wait.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import time
from collections import deque

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.executor.ray import RayPipelineExecutor, RayTaskManager
from datatrove.utils.logging import DATATROVE_COLORIZE_LOG_FILES, DATATROVE_COLORIZE_LOGS, logger, log_pipeline
from datatrove.utils.stats import PipelineStats

from ..runtime.lifetime import die_with_parent
from ..errors import DISK_FULL_STATUS, DISK_FULL_WHY, DiskFull, TasksFailed, disk_full_message, is_disk_full

LOG_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} | <level>{level: <8}</level> | {name}:{function}:{line} - <level>{message}</level>"


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (the out-of-memory killer sends this)" if -code == signal.SIGKILL else ""
        return f"its worker process was killed by {name}{hint}"
    if code == DISK_FULL_STATUS:
        return DISK_FULL_WHY
    return f"its worker process exited with status {code} (the task's log says why)"


class LocalTaskExecutor(LocalPipelineExecutor):
    """datatrove's `LocalPipelineExecutor`, with one process per task and every death noticed.

    With several workers, datatrove's executor runs tasks in a ``multiprocess`` Pool, which waits
    forever for a task whose worker was SIGKILLed (the out-of-memory killer, a node problem): the
    run hangs after "3/4 tasks completed".  Here each task runs in a process of its own, at most
    ``workers`` at a time; the run waits on the processes themselves, so a task that dies is seen
    at once.  The other tasks go on; at the end the run raises `TasksFailed`, naming each task
    that did not complete and why.  A re-run redoes exactly those (completed tasks have their
    completion markers, the failed ones none).

    Each task process leads a process group of its own, and when it ends (normally or not) what
    is left of that group is killed: the extractor subprocess of a killed task (datatrove runs
    extraction in a sandboxed child) is not left behind.

    A full disk (the outputs' or the logs') stops a task with one line, not a traceback per
    log record that no longer fits: the task's log file is a sink that raises instead of
    printing its own error, and its stats are written under a temporary name and renamed (a
    0-byte ``stats/NNNNN.json`` would break the merge of a later run).

    Same arguments as `LocalPipelineExecutor`; one worker runs the tasks in this process, as
    datatrove does.
    """

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> PipelineStats:
        """datatrove's `PipelineExecutor._run_for_rank` (same log, stats and completion marker),
        with a full disk reported in one line (`DiskFull`)."""
        if self.is_rank_completed(rank):
            logger.info(f"Skipping {rank=} as it has already been completed.")
            return PipelineStats()
        self._set_distributed_environment(node_rank)
        logfile = None
        try:
            logfile = self._task_logger(rank, local_rank)
            log_pipeline(self.pipeline)
            pipelined_data = None
            for step in self.pipeline:
                pipelined_data = step(pipelined_data, rank, self.world_size) if callable(step) else step
            if pipelined_data:
                deque(pipelined_data, maxlen=0)
            logger.success(f"Processing done for {rank=}")
            stats = PipelineStats(self.pipeline)
            save_stats(self.logging_dir, f"stats/{rank:05d}.json", stats)
            logger.info(stats.get_repr(f"Task {rank}"))
            self.mark_rank_as_completed(rank)
        except Exception as exc:
            if is_disk_full(exc):
                _quiet_logger()  # (said once, by whoever runs the task: no traceback per log record)
                raise DiskFull(errno.ENOSPC, f"task {rank}: {disk_full_message(exc)}") from None
            logger.exception(exc)
            raise
        finally:
            _close_task_log(logfile)
        return stats

    def _task_logger(self, rank: int, local_rank: int):
        """datatrove's task logging (`add_task_logger`): INFO on stderr (first worker), DEBUG in
        logs/task_NNNNN.log; the file sink raises when it cannot write (loguru would print a
        traceback per record instead)."""
        logger.remove()
        logfile = self.logging_dir.open(f"logs/task_{rank:05d}.log", "w")
        logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="INFO" if local_rank == 0 else "ERROR",
                   format=LOG_FORMAT)
        logger.add(logfile, colorize=DATATROVE_COLORIZE_LOG_FILES, level="DEBUG", format=LOG_FORMAT, catch=False)
        logger.info(f"Launching pipeline for {rank=}")
        return logfile

    def run(self):
        if self.workers == 1 or self.depends is not None:
            return super().run()
        self._launched = True
        ranks = range(self.local_rank_offset, self.local_rank_offset + self.local_tasks)
        if all(map(self.is_rank_completed, ranks)):
            logger.info(f"Not doing anything as all {self.local_tasks} tasks have already been completed.")
            return PipelineStats()
        self.save_executor_as_json()
        to_run = self.get_incomplete_ranks(ranks)
        if skipped := self.local_tasks - len(to_run):
            logger.info(f"Skipping {skipped} already completed tasks")

        import multiprocess  # what datatrove's executor uses: dill pickles lambdas in pipelines
        import multiprocess.connection

        context = multiprocess.get_context(self.start_method)
        waiting = list(to_run)
        running: dict = {}  # process -> (rank, local rank)
        free_local_ranks = list(range(self.workers))
        failures: dict[int, str] = {}
        done = skipped
        try:
            while waiting or running:
                while waiting and len(running) < self.workers:
                    rank = waiting.pop(0)
                    local_rank = free_local_ranks.pop(0)
                    process = context.Process(target=_task_main, args=(self, rank, local_rank),
                                              name=f"plexity-task-{rank}")
                    process.start()
                    running[process] = (rank, local_rank)
                # A process's sentinel stays open while its extractor subprocess (which inherited
                # it) lives: so also ask each process itself (waitpid) whether it has ended.
                multiprocess.connection.wait([p.sentinel for p in running], timeout=0.2)
                for process in [p for p in running if not p.is_alive()]:
                    process.join()
                    rank, local_rank = running.pop(process)
                    free_local_ranks.append(local_rank)
                    _kill_group(process.pid)
                    if process.exitcode == 0 and self.is_rank_completed(rank):
                        done += 1
                        logger.info(f"{done}/{self.world_size} tasks completed.")
                    else:
                        failures[rank] = _describe_exit(process.exitcode)
                        logger.error(f"task {rank} did not complete: {failures[rank]}")
        finally:
            for process, (rank, _) in running.items():  # interrupted (Ctrl+C): stop what still runs
                _kill_group(process.pid)
                process.join(timeout=5)
        stats = sum((PipelineStats.from_json(_read_json(self.logging_dir, rank)) for rank in to_run
                     if rank not in failures and self.logging_dir.isfile(f"stats/{rank:05d}.json")),
                    start=PipelineStats())
        if failures:
            raise TasksFailed(failures)
        save_stats(self.logging_dir, "stats.json", stats)
        logger.success(stats.get_repr(f"All {self.local_tasks} tasks"))
        return stats


def save_stats(folder, name: str, stats: PipelineStats) -> None:
    """datatrove stats JSON, written as ``.NAME.part`` and renamed: whole or absent, never a
    0-byte file that a later merge fails on."""
    head, _, base = name.rpartition("/")
    part = f"{head}/.{base}.part" if head else f".{base}.part"
    try:
        with folder.open(part, "wt") as f:
            stats.save_to_disk(f)
        folder.mv(part, name)
    except BaseException:
        try:
            folder.rm(part)
        except Exception:  # noqa: BLE001 - not written at all
            pass
        raise


def _quiet_logger() -> None:
    """Only errors on stderr, nothing in the log file (the disk is full)."""
    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="ERROR", format=LOG_FORMAT)


def _close_task_log(logfile) -> None:
    """datatrove's `close_task_logger`; a log file that cannot take its last lines is let go."""
    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS)
    if logfile is not None:
        try:
            logfile.close()
        except OSError:
            pass


def _task_main(executor: LocalTaskExecutor, rank: int, local_rank: int) -> None:
    os.setpgid(0, 0)  # a group of its own: see _kill_group
    try:
        executor._run_for_rank(rank, local_rank)
    except DiskFull:  # said in one line; the parent names the task
        sys.exit(DISK_FULL_STATUS)
    except Exception:  # _run_for_rank logged it; the exit status tells the parent
        sys.exit(1)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    # reap what was ours in that group (only the task process is our child)
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


def _read_json(folder, rank: int) -> dict:
    import json

    with folder.open(f"stats/{rank:05d}.json", "r") as f:
        return json.load(f)


class RayTaskExecutor(RayPipelineExecutor):
    """datatrove's `RayPipelineExecutor` (same arguments), with two mends.

    - datatrove runs each task in a process forked from its Ray actor (a ``multiprocess``
      pool of one).  When the actor dies without running its clean-up (its node's raylet
      killed, the out-of-memory killer, ``ray.kill``), that process was adopted by init and ran
      on: it went on writing the task's output files while datatrove resubmitted the task to
      another node, and then waited forever.  Here it is killed with its actor (Linux), and
      so is the extractor process it forked (`plexity_plugins.runtime.lifetime`).
    - datatrove sets up each task (a placement group, an actor, a first call to it) in a
      thread; if that fails (the actor killed as it starts: Ray's memory monitor did it here,
      on a machine short of memory), the run waited forever for the task.  Here the set-up is
      tried again (three times), then the task is given up: it has no completion marker, and
      the run ends, saying how many tasks completed.
    - A task asks Ray for ``cpus_per_task`` CPUs and ``cpus_per_task * mem_per_cpu_gb`` GB of
      memory on one node; if no node of the cluster has that much, Ray waits for such a node
      forever.  Here the run stops at once with `ValueError`, saying what the nodes have.

    As with datatrove's, the Ray cluster must be connected (``ray.init(address=...)``) before
    `run`, and the logging dir (completion markers) and the output folders must be on a
    filesystem every node sees (a shared disk, or an fsspec URL: ``s3://...``).  A task whose
    actor dies is resubmitted (up to three times) by datatrove; a task that still did not
    complete has no completion marker, and running the same pipeline again runs only such tasks.
    """

    def run(self):
        import ray

        from datatrove.executor import ray as datatrove_ray

        if ray.is_initialized():
            check_task_fits(self.cpus_per_task, self.mem_per_cpu_gb * self.cpus_per_task)
        # datatrove's run() makes its task manager by this module-level name: ours for this run
        original, datatrove_ray.RayTaskManager = datatrove_ray.RayTaskManager, _TaskManager
        try:
            return super().run()
        finally:
            datatrove_ray.RayTaskManager = original

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> PipelineStats:
        import multiprocess

        parent = multiprocess.parent_process()  # the actor, when run in datatrove's pool
        die_with_parent(parent.pid if parent is not None else None)
        return super()._run_for_rank(rank, local_rank, node_rank)


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


SETUP_ATTEMPTS = 3


class _TaskManager(RayTaskManager):
    """datatrove's `RayTaskManager`, whose task set-up is retried and, failing, fails the task's
    future (datatrove's left it pending: `RayTaskExecutor.run` waited forever)."""

    def submit_task(self, executor_ref, ranks_to_submit: list[int], remote_options: dict):
        from concurrent.futures import Future

        import ray
        from datatrove.executor.ray import RankWorker, TaskGroup, convert_remote_options_to_bundle

        pg_future = Future()

        def set_up():  # as datatrove's async_submit_task, with the failure handled
            for attempt in range(1, SETUP_ATTEMPTS + 1):
                pg = ray.util.placement_group([convert_remote_options_to_bundle(remote_options)] * self.nodes_per_task)
                workers = []
                try:
                    ray.get(pg.ready())
                    workers = [ray.remote(RankWorker).options(placement_group=pg, placement_group_bundle_index=i,
                                                              **remote_options).remote()
                               for i in range(self.nodes_per_task)]
                    node_ips = ray.get([worker.get_node_ip.remote() for worker in workers])
                except Exception as exc:  # noqa: BLE001 - Ray's errors: an actor died, a node went away
                    for worker in workers:
                        with contextlib.suppress(Exception):
                            ray.kill(worker)
                    with contextlib.suppress(Exception):
                        ray.util.remove_placement_group(pg)
                    logger.warning(f"setting up the task of ranks {ranks_to_submit} failed "
                                   f"(attempt {attempt}/{SETUP_ATTEMPTS}): {type(exc).__name__}: {exc}")
                    if attempt == SETUP_ATTEMPTS:
                        pg_future.set_exception(exc)
                        return
                    continue
                tasks = [worker.run_for_rank.remote(executor_ref, ranks_to_submit, node_ips, node_idx)
                         for node_idx, worker in enumerate(workers)]
                group = TaskGroup(tasks=tasks, workers=workers, placement_group=pg, ranks=ranks_to_submit)
                for task in tasks:
                    self.task_to_group[task] = group
                    self.timeout_manager.add_task(task)
                pg_future.set_result(tasks)
                return

        self.pg_futures.append(self.executor.submit(set_up))
        return pg_future
