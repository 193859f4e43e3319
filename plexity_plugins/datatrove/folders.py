"""The logging folder of our executors' tasks: a datatrove `DataFolder` whose files never look
whole when they are not, and whose full disk stops the task in one line.

datatrove's executor writes the task's log (``logs/task_NNNNN.log``, a loguru sink), its stats
(``stats/NNNNN.json``), its completion marker and the run's ``stats.json`` and
``executor.json`` through ``logging_dir.open``.  Two things go wrong there on a full disk:

- loguru catches what a sink raises and prints a traceback to stderr for every record it could
  not write (datatrove adds the sink with loguru's default ``catch=True``): hundreds of lines,
  and the task runs on without a log;
- a JSON file left half written (or empty) breaks the merge of a later run.

`TaskFolder` opens the same files: a write to a task's log that finds the disk full stops the
task with `FullDiskStop` (a ``BaseException``, as ``KeyboardInterrupt``: the one kind loguru lets
through, and which no step's ``except Exception`` takes for a bad page; the executor turns it into
`plexity_plugins.errors.DiskFull`), and the JSON files are written as ``.NAME.part`` and renamed
when closed without an error.  What we would propose upstream: docs/development.md.
"""

from __future__ import annotations

import contextlib

from datatrove.io import DataFolder

from ..errors import FullDiskStop, is_disk_full
from ..io.atomic_files import part_name

LOGS = "logs/"  # the tasks' logs: loguru's sinks
WRITTEN_IN_PLACE = ("completions/",)  # empty markers: nothing to be half written


class TaskFolder(DataFolder):
    """A datatrove `DataFolder` for a task's logging dir (see the module's docstring)."""

    @classmethod
    def of(cls, folder: DataFolder) -> TaskFolder:
        """The same folder (path and filesystem) as a `TaskFolder`."""
        return folder if isinstance(folder, cls) else cls(folder.path, fs=folder.fs)

    def open(self, path, mode="rb", *args, **kwargs):
        if not any(flag in mode for flag in "wax"):
            return super().open(path, mode, *args, **kwargs)
        if str(path).startswith(LOGS):
            if "b" not in mode:  # (a task's log names the input's files: `caf\udce9.warc.gz`, a Latin-1 name, is
                # no UTF-8, and under LC_ALL=POSIX the locale's encoding was ASCII: the first such line ended the task)
                kwargs.setdefault("encoding", "utf-8")
                kwargs.setdefault("errors", "backslashreplace")
            return _StopWhenFull(super().open(path, mode, *args, **kwargs))
        if str(path).startswith(WRITTEN_IN_PLACE):
            return super().open(path, mode, *args, **kwargs)
        part = part_name(str(path))
        return _WholeOrNothing(self, str(path), part, super().open(part, mode, *args, **kwargs))


class _StopWhenFull:
    """A file whose first write, flush or close that finds the disk full raises `FullDiskStop`;
    after that it takes nothing more (what a task logs while it stops is dropped)."""

    def __init__(self, file):
        self._file = file
        self._stopped = False

    def write(self, data):
        if not self._stopped:
            return self._guard(self._file.write, data)
        return 0

    def flush(self):
        if not self._stopped:
            self._guard(self._file.flush)

    def close(self):
        if not self._stopped:
            self._guard(self._file.close)

    @property
    def closed(self) -> bool:
        return self._stopped or self._file.closed

    def _guard(self, operation, *args):
        try:
            return operation(*args)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            self._stopped = True
            with contextlib.suppress(OSError):  # (its buffer cannot be written either)
                self._file.close()
            raise FullDiskStop(f"{exc}") from exc

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()

    def __getattr__(self, name):
        return getattr(self._file, name)


class _WholeOrNothing:
    """Written as ``.NAME.part``, renamed to NAME when closed without an error, removed otherwise."""

    def __init__(self, folder: DataFolder, name: str, part: str, file):
        self._file, self._folder, self._name, self._part = file, folder, name, part
        self._done = False

    def write(self, data):
        return self._file.write(data)

    def close(self):
        if self._done:
            return
        self._done = True
        try:
            self._file.close()
            self._folder.mv(self._part, self._name)
        except BaseException:
            self._discard()
            raise

    @property
    def closed(self) -> bool:
        return self._done

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self._done = True
            with contextlib.suppress(OSError):
                self._file.close()
            self._discard()

    def _discard(self):
        with contextlib.suppress(Exception):
            self._folder.rm(self._part)

    def __getattr__(self, name):
        return getattr(self._file, name)
