"""Every error type of plexity_plugins, and the one-line messages and exit statuses they end in.

Three kinds of trouble, kept apart everywhere:

- **The input is bad** (a page past the parser's limits, a payload too large or undecodable):
  a counted, named skip; the run goes on.  `ExtractionError` and its kinds, `TooLarge`,
  `Undecodable`.
- **The installation is broken** (a module that cannot be imported, a model that cannot be
  read, memory exhausted): the run stops with one line saying what to install or fix, exit
  status 3.  `ENVIRONMENT_ERRORS`, `InstallationError`, `MissingExtraError`, `ModelError`,
  `ExtractorCannotStart`; `environment_message` words them.
- **The disk cannot be read** (EIO while reading an input): `ReadError`, never taken for bad input;
  the file's reading stops, and the file is named (``read_error``).
- **The disk is full** (ENOSPC, EDQUOT): one line, exit status 4, no output under its final
  name unless it is whole.  `is_disk_full`, `disk_full_message`, `DiskFull`.

This module imports nothing of the package: every layer may use it.
"""

from __future__ import annotations

import errno
import numbers
import os

# -- exit statuses of the `plexity` command ------------------------------------------------------

FAILED_STATUS = 1  # some work did not complete (plexity run: tasks that a re-run redoes), or no input was readable
USAGE_STATUS = 2  # bad arguments or input the command cannot take; other settings than the results'; no executor
INSTALLATION_STATUS = 3  # the installation lacks something (a module, an extra, a model file)
DISK_FULL_STATUS = 4  # the disk (or quota) is full; also a datatrove task process's exit status


# -- the input ---------------------------------------------------------------------------------

# Control characters as their escapes (not TAB): a message naming a WARC's URI or a file's name holds the input's
# characters, and ESC, BEL, CR or a line break written as they are could set the terminal's title, clear it, or
# forge a log line ("\rWARNING ...: all good").
_CONTROL_ESCAPES = {c: chr(c).encode("unicode_escape").decode("ascii")
                    for c in (*range(0x20), *range(0x7F, 0xA0)) if c != 0x09}


def printable(text: str) -> str:
    """`text` for a log line: its control characters escaped (``\\x1b``, ``\\r``, ``\\n``), the rest as it is."""
    return text.translate(_CONTROL_ESCAPES)


COLUMN_LIBRARIES = ("polars", "pandas", "pyarrow", "numpy")  # (whose columns a map may hand over whole)


def is_missing(value: object) -> bool:
    """A dataset's or a DataFrame's empty cell, as its map hands it over: None (a dataset's, polars' null), NaN (a
    float column's, and pandas 3's ``str`` column's: `Series.tolist()` gives ``nan``), pandas' NA or NaT."""
    return value is None or type(value).__name__ in ("NAType", "NaTType") or \
        (isinstance(value, numbers.Real) and value != value)


_PAGE_FIELDS = ("html", "text", "content", "body", "page")  # (the field a record's message names, if it has one)


def _record_fields(value: object) -> list | None:
    """The field names of a record (a dict, a namedtuple, a pyspark Row: a tuple with ``__fields__``), else None."""
    if isinstance(value, dict):
        return list(value)
    fields = getattr(value, "_fields", None) or getattr(value, "__fields__", None) if isinstance(value, tuple) else None
    return list(fields) if fields else None


def not_text_error(value: object, expected: str = "str or bytes") -> TypeError:
    """The TypeError for an input that is not text; a missing value (`is_missing`: the empty cell of a dataset or a
    DataFrame, which `ds.map` and `Series.map` hand over as it is) said to be one, with the ways round it, and a
    whole column or an expression (a polars or pandas Series, a pl.col(...)) said to be many cells, a record (a Spark
    Row, a dict) to hold fields, and a pyarrow cell to be one.  (The extractors said "'NoneType' object has no
    attribute 'isascii'", the scorer "got float", either "got Series"; a Spark Row was said to be a column.)"""
    kind = type(value).__name__
    if is_missing(value):
        return TypeError(f"expected {expected}, got {value!r}: a missing value (a dataset's or a DataFrame's empty "
                         f"cell): filter such rows out first (ds.filter(lambda row: row['text'] is not None), "
                         f"Series.dropna(), polars' drop_nulls()) or map around them (Series.map(f, "
                         f"na_action='ignore'), polars' map_elements skips nulls)")
    library = type(value).__module__.partition(".")[0]
    fields = _record_fields(value)
    if fields is not None:  # (a Spark Row, a Dask bag's JSON record, pandas' itertuples: a row, not a column)
        named = f"{library} {kind}" if library in (*COLUMN_LIBRARIES, "pyspark") else kind  # (not a script's name)
        field = next((name for name in _PAGE_FIELDS if name in fields), fields[0] if fields else "html")
        return TypeError(f"expected {expected}, got a {named}: a record of fields ({', '.join(map(str, fields[:6]))}"
                         f"{' ...' if len(fields) > 6 else ''}), not one cell's value: give it one field's value, "
                         f"row[{field!r}]")
    if library == "pyarrow" and hasattr(value, "as_py") and not hasattr(value, "__len__"):  # (iterating an array)
        return TypeError(f"expected {expected}, got a pyarrow {kind}: one cell as pyarrow holds it: give its value, "
                         f"value.as_py() (or the column's to_pylist())")
    if isinstance(value, (list, tuple)) or (library in COLUMN_LIBRARIES and (hasattr(value, "__len__")
                                                                             or kind == "Expr")):
        named = kind if library == "builtins" else f"{library} {kind}"
        return TypeError(f"expected {expected}, got a {named}: a column or an expression, not one cell's value: call "
                         f"it on each cell (polars: pl.col(name).map_elements(f); pandas: Series.map(f); in a batch: "
                         f"[f(value) for value in batch])")
    return TypeError(f"expected {expected}, got {kind}")


class TooLarge(ValueError):
    """More bytes than the cap."""


class Undecodable(ValueError):
    """A Content-Encoding body that does not decode."""


class TooSlow(Undecodable):
    """Decoding a payload took longer than the reading time limit."""


class NotARegularFile(OSError):
    """A FIFO, socket, device or directory where a file was expected (never opened for reading:
    opening a FIFO waits for a writer for ever)."""


class ReadError(OSError):
    """The system failed to read an input file that was opened (EIO: a bad sector, a network or FUSE
    mount that lost its server): not bad input of the file's kind, and not the file's fault.  Reading
    the file stops there; `plexity clean` names it ``read_error`` and goes on to the next file (then
    exits 1), a datatrove task fails with it (the others go on; a re-run redoes it)."""


class ResyncGaveUp(Exception):
    """Resynchronising after damage in a WARC file met too many false record starts: reading
    stops there."""


class ExtractionError(ValueError):
    """A page no extractor can read (past the parser's limits, or unparsable)."""


class ExtractionTimeout(ExtractionError):
    """The extractor took longer than the time limit on one document."""


class ExtractionMemoryLimit(ExtractionError):
    """The extractor needed more memory than the ceiling on one document."""


class ExtractorDied(ExtractionError):
    """The extractor's process ended without an answer (killed from outside, crashed)."""


# -- the installation --------------------------------------------------------------------------

class ModelError(Exception):
    """A model cannot be found, read or used; the message says why and what to do."""


class MissingExtraError(ImportError):
    """A part of plexity_plugins was used whose optional dependencies are not installed."""


class MissingExtra(MissingExtraError):
    """sentencepiece is not installed: a broken installation, not bad input."""


class TokenizerError(ValueError):
    """A tokenizer cannot be set up from what the model declares (message says why)."""


class InstallationError(RuntimeError):
    """The installation lacks something a document needs (a module, a model file, a runnable
    interpreter for the extraction child ...): the run stops, it never counts a page as failed."""

    def __init__(self, message: str, cause: BaseException | None = None):
        super().__init__(message)
        self.cause = cause


class ExtractorCannotStart(InstallationError):
    """The extractor's process could not be started, or ended before it was ready: a broken
    installation (an interpreter this user may not run, a package the child cannot import), not a
    page's fault (not an `ExtractionError`: the run stops instead of skipping every page)."""


class NoHomeFolder(InstallationError):
    """The user cache dir cannot be found: HOME unset (or relative) and this UID without an /etc/passwd entry, as
    a container run under an arbitrary UID (OpenShift, `docker run --user 123456`) is; the message says what to
    set.  platformdirs' own "could not determine the home directory for '~/.cache'" came as a traceback."""


def no_home_folder_message(needed_for: str, variable: str) -> str:
    """One line: no home folder, why, and what to set (`variable`, or HOME / XDG_CACHE_HOME)."""
    return (f"no home folder for this user (HOME is {'unset' if not os.environ.get('HOME') else 'not absolute'} and "
            f"UID {os.getuid()} has no /etc/passwd entry), so there is no user cache dir for {needed_for}: set "
            f"{variable}, or HOME or XDG_CACHE_HOME, to a folder this user may write")


# Errors that say the installation is broken, never the input: they stop the run.
ENVIRONMENT_ERRORS = (ImportError, MemoryError, ModelError, InstallationError)


def environment_message(exc: BaseException) -> str:
    """What to install or fix, for an error in `ENVIRONMENT_ERRORS`."""
    if isinstance(exc, InstallationError):
        return str(exc)
    if isinstance(exc, ImportError):
        name = getattr(exc, "name", None)
        hint = f"install the missing module ({name}: pip install it, or reinstall plexity_plugins with its extras)" \
            if name else "reinstall plexity_plugins with its dependencies"
        return f"broken installation: {type(exc).__name__}: {exc}; {hint}"
    if isinstance(exc, MemoryError):
        return "out of memory: lower --max-document-bytes or give the process more memory"
    return f"{type(exc).__name__}: {exc}"


def path_error_message(exc: OSError) -> str:
    """An OSError about a path, said as what is in the way where a file on the way to an output is what
    stops it: "[Errno 17] File exists: 'a.txt'" of `-o a.txt/report.html` named a file that is there, not
    why that is wrong."""
    name = exc.filename
    if name is None and exc.errno == errno.ENOENT and str(exc.strerror).startswith("No usable temporary directory"):
        # (tempfile's, raised at import by datatrove's dill where /tmp is read-only, as in a locked-down container)
        tried = str(exc.strerror).partition(" found in ")[2] or "/tmp"
        return (f"no temporary folder this user may write (tried {tried}): set TMPDIR to a folder this user may "
                f"write, e.g. one beside the output")
    if name is None and exc.errno == errno.ENOENT and _current_folder_gone():
        return ("the current folder is no longer there (removed after the shell entered it), so no relative path "
                "can be followed: cd to a folder that exists, or give absolute paths")
    if name is not None and exc.errno in (errno.EEXIST, errno.ENOTDIR):
        path = os.fspath(name)
        for folder in (path, *_parents(path)):
            if os.path.lexists(folder) and not os.path.isdir(folder):
                where = "" if folder == path else f"{path}: "
                return f"{where}{folder} is a file, where a folder is needed: give another path, or move the file"
    return cannot_write_message(exc) or (folder_not_made_message(exc) if isinstance(exc, FolderNotMade) else str(exc))


def _current_folder_gone() -> bool:
    """Whether the process's current folder was removed: `os.getcwd()` then fails, and a relative path's
    resolving says "[Errno 2] No such file or directory", naming nothing (`plexity clean f -o out` run in it)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


class FolderNotMade(OSError):
    """An output folder could not be made (`plexity_plugins.io.output_lock.own_output_folder`): the OSError of
    the mkdir that failed (`filename` the folder it made, the asked one or a parent), with `folder` the folder
    asked for and `option` the option that gave it, so that `path_error_message` says which folder and why
    ("[Errno 2] No such file or directory: '/proc/x'" of ``-o /proc/x/out`` said neither)."""

    def __init__(self, exc: OSError, folder: str | os.PathLike, option: str):
        super().__init__(exc.errno, exc.strerror, exc.filename)
        self.folder, self.option = os.fspath(folder), option


def folder_not_made_message(exc: FolderNotMade) -> str:
    """One line for an output folder that could not be made: which, where it stopped, why, what to do.

    Args:
        exc: the error (`FolderNotMade`).
    """
    made = os.fsdecode(exc.filename) if exc.filename is not None else exc.folder
    parent = os.path.dirname(os.path.normpath(made))
    why = (exc.strerror or os.strerror(exc.errno or 0)).lower()
    if exc.errno == errno.ENOENT and os.path.isdir(parent):  # (/proc, /sys: a folder that takes no new one)
        why = f"{parent} takes no new folder (making {made}: {why})"
    else:
        why = f"making {made}: {why}"
    return f"{exc.option} {exc.folder} cannot be made: {why}: choose another {exc.option}"


# What to do when the system refuses to write an output, by its errno (a file in the way: `path_error_message`).
_CANNOT_WRITE = {
    errno.EACCES: "choose an output this user may write to, or give this user the right to write there",
    errno.EPERM: "choose another output (an immutable file, or a system folder, takes no writes)",
    errno.EROFS: "choose an output on another file system",
    errno.EISDIR: "a folder has that name: move it away, or choose another output",
}


def cannot_write_message(exc: BaseException) -> str | None:
    """One line for an output the system refused to write: what could not be written, and why, in
    words ("cannot write out/a.txt: read-only file system: choose an output on another file system")
    instead of "[Errno 30] Read-only file system: 'out/a.txt'"; None for other errors, and for a file
    that exists and this user may not read (a refused input is no output).  An error raised from
    such an error (a step's own, around the writer's) is said as that one."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _CANNOT_WRITE and exc.filename is not None:
            # (a rename onto a folder names the file renamed first, the folder second)
            path = os.fsdecode(exc.filename2 if exc.errno == errno.EISDIR and exc.filename2 else exc.filename)
            if exc.errno != errno.EROFS and os.path.lexists(path) and not os.access(path, os.R_OK):
                return None
            return f"cannot write {path}: {os.strerror(exc.errno).lower()}: {_CANNOT_WRITE[exc.errno]}"
        exc = exc.__cause__ or exc.__context__
    return None


class OutputNotWritable(OSError):
    """A task's output could not be written (no permission, a read-only file system): said in one
    line, `cannot_write_message`'s, by the executor that ran the task."""


def _parents(path: str) -> list[str]:
    parents, parent = [], os.path.dirname(path)
    while parent and parent not in parents and parent != os.path.dirname(parent):
        parents.append(parent)
        parent = os.path.dirname(parent)
    return parents


# -- the disk ----------------------------------------------------------------------------------

# The disk (or the user's quota) is full: every further write fails the same way.
# Said where no process or thread could be made (fork's EAGAIN, "can't start new thread"): a container's pids.max
# counts threads too, and a run at it failed as "BlockingIOError: [Errno 11] Resource temporarily unavailable", or
# as "cannot list the input ...: RuntimeError: can't start new thread", which blamed the input.
PROCESS_LIMIT_WHY = ("no more processes or threads may be made: this container's limit on them (its cgroup's "
                     "pids.max) or this user's (ulimit -u) is reached; raise it, or run fewer workers (--workers)")


def out_of_processes(exc: BaseException | str | None) -> bool:
    """Whether `exc` (an exception, one it was raised from, or a logged error's text) says that no process or
    thread could be made."""
    seen = 0
    while isinstance(exc, BaseException) and seen < 8:
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            return True
        if isinstance(exc, OSError) and exc.errno == errno.EAGAIN:
            return True
        # (the chain as a traceback shows it: an error raised "from None" in an except clause, as a held output
        # folder's from flock's EAGAIN, is not that EAGAIN; it was said as a pids.max)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        seen += 1
    return isinstance(exc, str) and ("can't start new thread" in exc or "[Errno 11] Resource temporarily" in exc)


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
DISK_FULL_WHY = "no space left on device"  # why a task did not complete, in `TasksFailed`


class DiskFull(OSError):
    """A task stopped because the disk (its outputs' or its log's) is full."""


class FullDiskStop(BaseException):
    """A file of a datatrove task's logging folder could not be written: the disk is full.  Stops
    the task (`plexity_plugins.datatrove.folders.TaskFolder`; the executor turns it into `DiskFull`,
    said in one line).  A BaseException, as KeyboardInterrupt: loguru, which writes the task's log,
    catches every Exception its sinks raise, and no step's ``except Exception`` takes it for a bad page."""


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc` (or an error it was raised from) says the disk or quota is full."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def disk_full_message(exc: BaseException, where: str | os.PathLike | None = None, *, to_stdout: bool = False) -> str:
    """One line for a full disk: what failed, where, and what to do.  `to_stdout`: the command writes
    nothing but its standard output (`plexity models > FILE`), so a write without a file name was to it."""
    filename = getattr(exc, "filename", None) or where
    code = getattr(exc, "errno", None) if getattr(exc, "errno", None) in DISK_FULL_ERRNOS else errno.ENOSPC
    if not filename and to_stdout:
        return (f"{os.strerror(code).lower()} (writing the standard output): free some space or send the output "
                f"elsewhere, then run the same command again")
    place = f" (writing {filename})" if filename else ""
    return (f"{os.strerror(code).lower()}{place}: free some space or choose another output directory, "
            f"then run the same command again")


# -- runs, training, the web app ---------------------------------------------------------------

class OutputFolderInUse(OSError):
    """Another run owns the output folder (`plexity_plugins.io.output_lock`): usage, exit status 2."""


class OutputFileInUse(OSError):
    """Another live process writes the same output file (its ``.NAME.part`` is locked: `io.atomic_files`)."""


class TasksFailed(RuntimeError):
    """Some tasks of a local run failed or died; the others completed (and are marked so)."""

    def __init__(self, failures: dict[int, str]):
        self.failures = failures
        # (each task and why: what `plexity run`'s last line says, once)
        self.listed = listed = "; ".join(f"task {rank}: {why}" for rank, why in sorted(failures.items()))
        # (a pipeline without an extractor stops every task the same way: running it again would too)
        then = ("correct the pipeline, then run it again" if set(failures.values()) <= set(PIPELINE_MISBUILT_WHYS)
                else "run the same command again to redo only them")
        super().__init__(f"{len(failures)} task(s) did not complete ({listed}); their output is incomplete and "
                         f"not marked complete: {then}")


class HtmlPagesNotText(ValueError):
    """The first texts a `PerplexitySentenceFilter` task sees are all HTML pages: its pipeline has no
    extractor step before the filter (`plexity_plugins.datatrove.filter`); the task stops."""


HTML_PAGES_STATUS = 5  # a task process's exit status for HtmlPagesNotText
HTML_PAGES_WHY = ("its first texts are HTML pages: no extractor step comes before PerplexitySentenceFilter "
                  "(the task's log says more)")


class TextsNotHtml(ValueError):
    """The first texts an extractor step's task sees hold no HTML markup at all: they are texts already (a WET
    file read by datatrove's ``WarcReader``, a JSONL dataset's text), which an extractor reads nothing of
    (`plexity_plugins.datatrove.extractors`); the task stops."""


TEXTS_NOT_HTML_STATUS = 6  # a task process's exit status for TextsNotHtml
TEXTS_NOT_HTML_WHY = ("its first texts hold no HTML markup: they are texts already, which an extractor step "
                      "reads nothing of (the task's log says more)")
INPUTS_CHANGED_STATUS = 7  # a task process's exit status for InputFilesChanged


class InputFilesChanged(ValueError):
    """A task starting finds other input files than its run listed when it started (a file removed, added or
    rewritten since: `plexity_plugins.datatrove.run_settings.changed_inputs`; `changes` names them).  A task of a
    local folder read by `WarcHtmlReader` looks at its own files only (`changed_task_inputs`): one of them changed;
    a task that lists the folder again (another reader, a remote folder) would read another task's files, or none,
    the files being shared by their order: a file taken away was read by no task, and the run completed saying
    nothing of it."""

    def __init__(self, rank: int, changes: list[str]):
        self.rank = rank
        self.changes = changes
        super().__init__(f"task {rank}: {inputs_changed_why(changes)}")


def inputs_changed_why(changes: list[str]) -> str:
    """Why a task whose input files changed under its run did not run (`InputFilesChanged`)."""
    return (f"its input files changed since the run started ({'; '.join(changes) or 'the task log says which'}): "
            f"it would not have read what the run listed (its own file changed, or the files the tasks share by "
            f"their order moved); the task did not run (put the files back as they were and run the same command, "
            f"or start over with --overwrite)")


# What a task stopped for that running it again would stop for too: the pipeline is to be corrected.
PIPELINE_MISBUILT_WHYS = (HTML_PAGES_WHY, TEXTS_NOT_HTML_WHY)


class SharedOutputFiles(ValueError):
    """Two writers of a pipeline write files of the same names in one folder, found before any task runs
    (`plexity_plugins.datatrove.run_settings.check_writers_apart`): each task's second file replaced its
    first, and the documents in it were lost, though counted."""


class NoInputFiles(FileNotFoundError):
    """A reader of a pipeline has no file to read, found before any task runs
    (`plexity_plugins.datatrove.run_settings.check_inputs`): datatrove said it in every task, with a
    traceback each ("No files found on ...!")."""


class DependencyNotRun(RuntimeError):
    """`check_run_settings` was given an executor whose dependency (``depends=``) has not completed: the
    files it writes may be the pipeline's input, not there yet to check (`NoInputFiles` said the folder did
    not exist, and to give another)."""


class SettingsChanged(ValueError):
    """A run's logging folder holds the completions of a run with other settings
    (`plexity_plugins.datatrove.run_settings`); `differences` names each ("threshold: 5269.3 -> 900")."""

    def __init__(self, logging_dir: str, differences: list[str]):
        self.logging_dir = logging_dir
        self.differences = differences
        super().__init__(f"{logging_dir} holds the results of a run with other settings ({'; '.join(differences)}): "
                         f"run into new output and logging folders, or delete these to start over")


class UnrecordedResults(SettingsChanged):
    """A folder a run writes holds results that its logging folder has no record of: a run with
    another logging folder wrote them (`plexity_plugins.datatrove.run_settings.check_outputs`);
    `logging_dir` is that folder.  `message`, when given, is the whole message instead (a run given no
    logging folder, which datatrove makes anew for each run: no settings of its differ)."""

    def __init__(self, logging_dir: str, differences: list[str], message: str | None = None):
        super().__init__(logging_dir, differences)
        if message is not None:
            self.args = (message,)


class JobStillQueued(RuntimeError):
    """A Slurm job launched into a run's logging folder still has tasks pending or running
    (`plexity_plugins.datatrove.SlurmTaskExecutor`): a second submission of the same run
    would run the same tasks again beside them, both writing the same files, and its ranks_to_run.json
    would give the first job's waiting tasks other ranks."""

    def __init__(self, logging_dir: str, job_id: str, tasks: int):
        self.job_id = job_id
        super().__init__(f"{logging_dir} is being written by Slurm job {job_id} ({tasks} task(s) pending or "
                         f"running): wait for it to end (squeue -j {job_id}), or cancel it (scancel {job_id}), "
                         f"then run the same command again")


class LoggingFolderNotShared(FileNotFoundError):
    """A cluster task does not find in its run's logging folder the record that the run wrote there
    before launching it (`plexity_plugins.datatrove.run_settings.check_settings_recorded`): on its
    node that path is another folder (a node's own disk), where its logs, completion marker and
    outputs would be written for the launching machine never to see."""


class ExecutorUnavailable(ValueError):
    """An executor was asked for that this machine or environment does not have (no ``sbatch``
    for Slurm, no Ray): what was asked cannot run here (``plexity run`` exits 2), and nothing was
    launched."""


class PlexitySettingError(ValueError):
    """A PLEXITY_* Scrapy setting has a value the pipeline cannot use (the message names it and
    what it may be): the crawl does not start."""


class TrainError(ValueError):
    """Training cannot go on; the message says why and what to do."""


class CorpusError(TrainError):
    """A corpus file is unreadable or not in the expected format; the message names the file."""


class KenLMToolsMissing(RuntimeError):
    """KenLM's lmplz or build_binary is not installed; the message names the one command that
    installs them (`plexity train` exits 3: the installation lacks them)."""


class KenLMToolFailed(RuntimeError):
    """lmplz or build_binary exited with an error; the message holds the tail of its stderr (`stderr`, all of it;
    `returncode`, negative for the signal that ended it)."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.returncode, self.stderr = returncode, stderr


class KenLMOutOfMemory(KenLMToolFailed):
    """lmplz or build_binary ran out of memory (the out-of-memory killer ended it, or it could not allocate); the
    message, one line, says how much it had and the --memory to give."""


class ApiError(Exception):
    """A request the web app refuses: the HTTP status and the message it answers with; `limit`, the server's
    option whose limit the request went past (``--max-bytes``), for a client to read without parsing the message."""

    def __init__(self, status: int, message: str, limit: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.limit = limit
