"""What a run was built with, recorded beside its completion markers and checked before it resumes.

datatrove resumes a run by its completion markers (``LOGGING_DIR/completions/NNNNN``): a task
that has one is skipped.  Run again with another extractor, model or threshold into the same
folders, and the completed tasks' old results would be answered as the new run's.  So every
run records its settings in ``LOGGING_DIR/plexity-settings.json`` when it starts, and a later
run into the same logging folder compares its own first:

- the same settings: it resumes, as datatrove does (only the tasks without a marker run);
- other settings: it stops before anything runs, with `SettingsChanged` naming each setting
  that differs (``plexity run`` says it in one line, with its two ways out: a new output
  folder, or ``--overwrite`` to start over).

A run's settings are the settings of each of its steps, in order (`step_settings`): plexity's
steps say theirs (the reader's input and size cap, the extractor and its limits, the filter's
model with the SHA-256 of its file, method, threshold and document policy, the writer's format
and folder); another datatrove step is recorded by its class and the arguments it keeps (its
public attributes of plain values, its folders by name); a reader also by the files it finds
(their number, the SHA-256 of their names and each one's size: a file rewritten under the same name is
another input); then the number of tasks (which file each task
reads depends on it) and the plexity_plugins version.  plexity's steps also carry their main
settings in their name, which is what datatrove's log and stats show for a step.

plexity's executors (`LocalTaskExecutor`, `RayTaskExecutor`, `SlurmTaskExecutor`) check when
the run starts, and each task checks again when it starts (a Slurm task may start hours after
it was submitted).  With datatrove's own executors, call `check_run_settings(executor)` before
``executor.run()``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..cleaning.settings_record import SETTINGS_FILE, differences, model_settings  # noqa: F401 (steps import them)
from ..cleaning.settings_record import DOCUMENTS_FORMAT, as_recorded, read_record
from ..errors import (DependencyNotRun, LoggingFolderNotShared, NoInputFiles, SettingsChanged, SharedOutputFiles,
                      UnrecordedResults)


def step_settings(step, inputs: bool = True) -> dict[str, Any]:
    """What a pipeline step was built with: ``{"step": its class, ...}``.  plexity's steps define
    ``settings()``; another datatrove step is recorded by its arguments as it keeps them (its
    public attributes of plain values: `_arguments`), a writer with its output folder and file
    names.  A reader of a folder also by the files it finds there (`input_files`): which file each
    task reads follows from their list; with `inputs` false (a stage chained after another, reading
    what that one writes: `chained`) not."""
    settings = {"step": type(step).__name__}
    own = getattr(step, "settings", None)
    if callable(own):
        settings.update(own())
    elif users_function(step):  # (a function given as a step: datatrove runs it on the documents)
        settings["functions"] = {"step": function_code(step)}
    else:
        settings.update(_arguments(step))
        if getattr(step, "output_folder", None) is not None:  # a datatrove writer
            settings["output"] = folder_name(step.output_folder)
            template = getattr(getattr(step, "output_filename", None), "template", None)
            if template is not None:
                settings["output_filename"] = template
    if inputs:
        settings.update(input_files(step))
    return settings


_PLAIN = (str, int, float, bool, type(None))


def _plain(value) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(map(_plain, value))
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v) for k, v in value.items())


def _arguments(step) -> dict[str, Any]:
    """A datatrove step's public attributes of plain values (numbers, strings, lists and dicts of
    them: the arguments it keeps, ``favour_precision``, ``limit``, ``glob_pattern`` ...) and its
    folders by name; functions and other objects are not compared."""
    found, functions = {}, {}
    for name, value in sorted(vars(step).items()):
        if name.startswith("_") or name in ("stats", "output_folder", "output_filename"):
            continue
        value = unordered(value)
        if _plain(value):
            found[name] = value
        elif hasattr(value, "list_files") and hasattr(value, "path"):  # a DataFolder
            found[name] = folder_name(value)
        elif users_function(value):  # LambdaFilter's filter_function, a reader's or writer's adapter ...
            functions[name] = function_code(value)
    if functions:  # (under one key, which a record of an older version lacks: `LATER_SETTINGS`)
        found["functions"] = functions
    return found


def unordered(value):
    """A step's argument that is a tuple or list of names, whose order says nothing, as its sorted list (datatrove's
    `FineWebQualityFilter` keeps ``stop_chars`` as ``tuple(a set)``, in an order of the strings' hashes, which changes
    with each process: each re-run of the same pipeline stopped with `SettingsChanged`, naming a thousand
    characters); else the value as it is.  (A set is not recorded, as before: a record without it would differ.)"""
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
        return sorted(value)
    return value


def users_function(value) -> bool:
    """A function (or a method of one) of the user's code, not datatrove's nor plexity's own (a writer's default
    adapter): what a pipeline's author changes between runs."""
    import types

    function = value.__func__ if isinstance(value, types.MethodType) else value
    if not isinstance(function, types.FunctionType):
        return False
    module = getattr(function, "__module__", None) or ""
    return not module.split(".")[0] in ("datatrove", "plexity_plugins")


def function_code(value) -> str:
    """A user's function as a run records it: its name and a checksum of what it does (its bytecode, the constants,
    names and nested functions it uses, its defaults and the plain values it closes over; not its line numbers
    nor its comments): ``LambdaFilter(lambda doc: len(doc.text) > 200)`` after ``> 100`` is another run. (Functions
    were not compared: the script run again after the lambda was changed answered with the old results.)"""
    import hashlib
    import types

    function = value.__func__ if isinstance(value, types.MethodType) else value

    def constant_part(constant):
        if isinstance(constant, types.CodeType):
            return code_parts(constant)
        if isinstance(constant, frozenset):  # (`x in {"a", "b"}`: a set's order is its elements' hashes, which
            return sorted(map(repr, constant))  # differ from one process to the next for strings)
        return repr(constant)

    def code_parts(code) -> list:
        return [code.co_code.hex(), code.co_names, code.co_varnames, code.co_freevars,
                *map(constant_part, code.co_consts)]

    parts = [code_parts(function.__code__), repr(function.__defaults__ if _plain(function.__defaults__) else None)]
    for cell in function.__closure__ or ():
        try:
            content = cell.cell_contents
        except ValueError:  # (an empty cell)
            content = None
        parts.append(repr(content) if _plain(content) else type(content).__name__)
    digest = hashlib.sha256(json.dumps(parts, default=repr).encode()).hexdigest()[:12]
    return f"{function.__name__} (code sha256:{digest})"


def input_files(step) -> dict[str, Any]:
    """For a step that reads the files of a folder (datatrove's readers, ours): how many it finds
    and the SHA-256 of their names, so that a file added or taken away is another run (the files
    are shared among the tasks by their order); and each file's size (`input_file_sizes`), so that a
    file rewritten under the same name (a crawl fetched again, a copy cut short by an interrupted
    transfer and then copied whole) is another run too, where the completed tasks read the old one.
    The sizes come with the folder's listing (one request for a remote folder, no file opened).
    A reader given a paths file is recorded by the files it lists (`paths_file_files`).  {} for other
    steps, and where the folder or the paths file cannot be read.

    Args:
        step: a pipeline step; a reader has ``data_folder`` (a DataFolder), ``recursive``, ``glob_pattern``.
    """
    import hashlib

    files = reader_files(step)
    if files is None:
        return {}
    # (a name that is not UTF-8, b"caf\xe9.warc.gz", is listed with surrogates: hashed as its bytes)
    names = "\n".join(files).encode("utf-8", "surrogateescape")
    return {"input_files": len(files), "input_files_sha256": hashlib.sha256(names).hexdigest(),
            "input_file_sizes": {name: size for name, size in files.items() if isinstance(size, int)}}


def reader_files(step) -> dict[str, int | None] | None:
    """The files a reader step reads, by name, with their sizes (`listed_files`, or `paths_file_files` for a reader
    given a paths file); None for another step, and where its folder or paths file cannot be read.  An HTTP(S)
    folder's listing that fails otherwise than by "not found" raises `remote_files.listing_failed`, naming the URL:
    a task took a stalled server for a folder without files and failed with "its input files changed since the run
    started (1 file(s) listed then, 0 now)", and a 503 said aiohttp's ``ClientResponseError: 503, ...``."""
    folder = getattr(step, "data_folder", None)
    if folder is None or not hasattr(folder, "list_files"):
        return None
    try:
        if getattr(step, "paths_file", None):
            return paths_file_files(step.paths_file, folder)
        listed = listed_files(folder, recursive=getattr(step, "recursive", True),
                              glob_pattern=getattr(step, "glob_pattern", None))
        takes = getattr(step, "takes", None)  # (`WarcHtmlReader.leave_out_other_inputs`: a glob's pages, datasets)
        return {name: size for name, size in listed.items() if takes(name)} if takes else listed
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - aiohttp's: a stall (an OSError), a 503 (none)
        from .remote_files import is_http, listing_failed

        if is_http(folder.fs) and not getattr(step, "paths_file", None):
            raise listing_failed(exc, folder_name(folder), getattr(step, "remote_timeout", None)) from exc
        if isinstance(exc, OSError):
            return None
        raise


def changed_inputs(pipeline: list, settings: dict) -> list[str]:
    """How the files the readers of `pipeline` find now differ from those its run listed when it started
    (`settings`, the run's `run_settings`, made then): each file removed, added or rewritten since, by name
    (`input_file_changes`); [] when they are the same.  A task checks this as it starts (`InputFilesChanged`):
    which files it reads follows from their list, and a run that started with four files and lost one while its
    first task ran gave its last task no file and the file's records to no task, and completed."""
    import hashlib

    from ..cleaning.settings_record import input_file_changes

    steps = [step for step in pipeline if not isinstance(step, (list, tuple))]
    changes = []
    for step, recorded in zip(steps, settings.get("steps", [])):
        if "input_files_sha256" not in recorded:
            continue
        files = reader_files(step)
        if files is None:
            files = {}  # (its folder gone or unreadable: none of the files it listed is there to read)
        names = "\n".join(files).encode("utf-8", "surrogateescape")
        if hashlib.sha256(names).hexdigest() == recorded["input_files_sha256"] and \
                {name: size for name, size in files.items() if isinstance(size, int)} == \
                recorded.get("input_file_sizes", {}):
            if hasattr(step, "use_listing"):  # (its shard from this listing: one listing a task, not two)
                step.use_listing(list(files))
            continue
        old = recorded.get("input_file_sizes", {})
        found = input_file_changes(old, files) if len(old) == recorded.get("input_files") else []
        changes.extend(found or [f"{recorded.get('input_files')} file(s) listed then, {len(files)} now"])
    return changes


def changed_task_inputs(pipeline: list, settings: dict, rank: int, world_size: int) -> list[str]:
    """`changed_inputs` for task `rank` of `world_size` as it starts, without listing a folder that its run listed
    whole: a reader that takes its files from a listing (`WarcHtmlReader.use_listing`) of a local folder is given the
    run's own (`settings`, the names and sizes the run recorded as it started, the same find or glob), and only this
    task's files, ``[rank::world_size]`` of it, are looked at: each must still be there with its size.  The task then
    reads exactly the files the run listed for it, whatever was added or taken away elsewhere since (a file added is
    not this run's: the run's re-run finds the folder changed, `check_settings`).  Each task listed the whole folder:
    with one task per file, ~9 us x n² (10,000 files: ~15 min of CPU), now ~n/world_size looks at a file.  A remote
    folder's task does the same where its files are fewer than the listing's requests (one request a file against
    one a `REMOTE_LISTING_PAGE` names: one task per file of 2,000 S3 objects listed them all in each task).  Other
    readers (datatrove's own, which list the folder themselves; a remote task of many files; a paths file; a record
    without every size) are checked as `changed_inputs` checks them."""
    import hashlib
    import os

    from ..cleaning.settings_record import input_file_changes

    steps = [step for step in pipeline if not isinstance(step, (list, tuple))]
    changes = []
    for step, recorded in zip(steps, settings.get("steps", [])):
        if "input_files_sha256" not in recorded:
            continue
        names = sorted(recorded.get("input_file_sizes", {}))  # (as `listed_files` sorts them)
        local = is_local(getattr(step, "data_folder", None))
        # (a remote folder's own files looked at one request each where that is fewer requests than its listing's,
        # ~one a 1,000 names: one task per file of 2,000 objects listed them all in each task, 4,000 requests)
        few = local or len(names[rank::world_size]) <= max(1, len(names) // REMOTE_LISTING_PAGE)
        listed = hasattr(step, "use_listing") and not getattr(step, "paths_file", None) and few and \
            len(names) == recorded.get("input_files") and \
            hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest() == \
            recorded["input_files_sha256"]
        if not listed:
            changes.extend(changed_inputs([step], {"steps": [recorded]}))
            continue
        old = {name: recorded["input_file_sizes"][name] for name in names[rank::world_size]}
        now = {}
        for name in old:
            size = _listed_size(os.path.join(step.data_folder.path, name)) if local else \
                _remote_size(step.data_folder, name, old[name])
            if size is not None:
                now[name] = size
        if now != old:
            changes.extend(input_file_changes(old, now) or [f"{name}: changed" for name in old
                                                            if now.get(name) != old[name]])
            continue
        step.use_listing(names)
    return changes


REMOTE_LISTING_PAGE = 1000  # the names a remote listing answers a request (S3's ListObjectsV2)


def _remote_size(folder, name: str, recorded: int) -> int | None:
    """The size of `name` in the remote `folder` (one request), None where it is gone; `recorded` where the server
    does not say (a refusal, a server gone: the task's read of it fails naming what happened)."""
    try:
        folder.invalidate_cache(name)  # (fsspec's filesystems are shared in a process: its listing, from before)
        return folder.info(name).get("size", recorded)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - the remote side's; its read says it
        return recorded


def _listed_size(path: str) -> int | None:
    """The size a listing of the folder (`listed_files`: fsspec's ``find`` of a local folder) gives the entry at
    `path`, None where it would list none (gone, a folder): a link's target's size, 0 for a link that leads nowhere
    or loops (read as an unreadable file, counted), a FIFO's or a socket's own (0: not a regular file, counted)."""
    import os
    import stat

    try:
        found = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISDIR(found.st_mode):
        return None
    if not stat.S_ISLNK(found.st_mode):
        return found.st_size
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def paths_file_files(paths_file, folder) -> dict[str, int | None]:
    """The files a paths file names, read as datatrove's readers read it (`get_shard_from_paths_file`: one a line,
    compressed or not), each with its size where `folder` is local (None elsewhere: no request per file).  A path
    added to the file and the run resumed was read by no task: the tasks share the paths by their order, and every
    task had completed (the paths file was recorded by its name alone).  OSError where it cannot be read."""
    import os

    from datatrove.io import open_file

    try:
        with open_file(paths_file, mode="rt", compression="infer") as f:
            names = [line.strip() for line in f]
    except (ValueError, ImportError) as exc:  # (a remote file whose filesystem is not installed ...: its tasks say)
        raise OSError(str(exc)) from exc
    local = is_local(folder)

    def size(name: str) -> int | None:
        path = os.path.join(folder.path, name)
        return os.path.getsize(path) if local and os.path.isfile(path) else None

    return {name: size(name) for name in names}


_GLOB_MAGIC = re.compile("[*?[]")  # (what makes a pattern a glob, as datatrove and the glob module judge it)


def _is_hugging_face(fs) -> bool:
    """Whether `fs` (a DataFolder's, perhaps behind fsspec's cache) is Hugging Face's, by its protocol."""
    inner = getattr(fs, "fs", None)  # (a CachingFileSystem holds the true one as .fs)
    fs = inner if hasattr(inner, "protocol") else fs
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return "hf" in protocols


def listed_files(folder, recursive: bool = True, glob_pattern: str | None = None) -> dict[str, int | None]:
    """The files a datatrove reader of `folder` reads, by name (relative to it, sorted as datatrove's
    ``DataFolder.list_files`` gives them, which it mirrors) with the size the listing gives (None where it
    gives none): the same find or glob, with its details, so one listing request for a remote folder.

    Args:
        folder: a datatrove DataFolder.
        recursive: search its subfolders too.
        glob_pattern: the files to take (an extension alone, ``.warc.gz``, as datatrove takes it: ``*.warc.gz``).
    """
    if glob_pattern and not _GLOB_MAGIC.search(glob_pattern):
        glob_pattern = f"*{glob_pattern}"
    # (as datatrove lists a Hugging Face dataset: without the commit details of each file; sizes stay)
    options = {"expand_info": False} if _is_hugging_face(folder.fs) else {}
    depth = None if recursive else 1
    found = (folder.find("", maxdepth=depth, detail=True, **options) if not glob_pattern
             else folder.glob(glob_pattern, maxdepth=depth, detail=True, **options))
    return {name: info.get("size") for name, info in sorted(found.items()) if info.get("type") != "directory"}


def with_settings(name: str, *settings: str) -> str:
    """A step's name with its main settings, as datatrove's log and stats show it:
    ``🧮 Perplexity sentences [en-default, trim, threshold 5269.3]``."""
    return f"{name} [{', '.join(settings)}]" if settings else name


def folder_name(folder) -> str:
    """A datatrove DataFolder as a path or URL (its protocol kept when not local), a URL's password written
    ``***`` (`without_password`: it was recorded in the settings record, in clear)."""
    from ..runtime.extras import without_password

    path = getattr(folder, "path", None)
    if path is None:
        return without_password(str(folder))
    protocol = _protocol(folder)
    if protocol in ("file", "local"):
        return path
    # (fsspec's HTTP keeps the whole URL as the path: it was recorded as http://http://host/..., http://https://...)
    whole = "://" in path and path.split("://", 1)[0].isalpha()
    return without_password(path if whole else f"{protocol}://{path}")


def is_local(folder) -> bool:
    """Whether a DataFolder is on this machine's own file system."""
    return _protocol(folder) in ("file", "local")


def _protocol(folder) -> str:
    protocol = getattr(getattr(folder, "fs", None), "protocol", "file")
    return protocol[0] if isinstance(protocol, (tuple, list)) else protocol


def run_settings(pipeline: list, tasks: int, inputs: bool = True) -> dict[str, Any]:
    from .. import __version__

    steps = [step for step in pipeline if not isinstance(step, (list, tuple))]
    settings = {"plexity_plugins": __version__, "tasks": tasks,
                "steps": [step_settings(step, inputs) for step in steps]}
    if any(type(step).__module__.startswith("plexity_plugins.") for step in steps):  # (what its documents hold)
        settings["documents_format"] = DOCUMENTS_FORMAT
    return settings


def chained(executor) -> bool:
    """Whether `executor` runs after another (datatrove's ``depends=``, or Slurm's ``depends_job_id``): its
    readers read what that one writes, which may not be there yet when it is submitted (a Slurm job waiting on
    the other), so their files are neither checked then nor recorded (the other stage's record covers them)."""
    return getattr(executor, "depends", None) is not None or bool(getattr(executor, "depends_job_id", None))


def dependency_pending(executor) -> bool:
    """Whether `executor`'s dependency has tasks still to complete (a dependency known by its Slurm job id
    alone: it may, as far as can be told)."""
    depends = getattr(executor, "depends", None)
    if depends is not None and hasattr(depends, "get_incomplete_ranks"):
        return bool(depends.get_incomplete_ranks(skip_completed=True))
    return bool(getattr(executor, "depends_job_id", None))


def recorded_settings(logging_dir) -> dict | None:
    """The settings recorded in a datatrove logging DataFolder, or None."""
    if not logging_dir.isfile(SETTINGS_FILE):
        return None
    with logging_dir.open(SETTINGS_FILE, "rt") as f:
        return read_record(f.read(), object_hook=_without_doubled_protocol)


# (the first of a protocol doubled, ``http://http://``, or of ``http://`` before ``https://``)
_DOUBLED_PROTOCOL = re.compile(r"^(?:http://(?=https://)|([a-z][a-z0-9+.-]*://)(?=\1))")


def _without_doubled_protocol(settings: dict) -> dict:
    """A remote folder as earlier versions recorded it, ``http://http://host/...`` or ``http://https://host/...``,
    read as it is now written: a run they recorded resumes rather than stopping as one of other settings."""
    return {key: _DOUBLED_PROTOCOL.sub("", value) if isinstance(value, str) else value
            for key, value in settings.items()}


def has_results(logging_dir) -> bool:
    """Whether a run completed a task in the logging folder (left a completion marker): the
    results a run with other settings must not be answered with (a task that did not complete
    is run again, its outputs rewritten)."""
    return logging_dir.isdir("completions") and bool(logging_dir.list_files("completions"))


def output_folders(pipeline: list) -> list:
    """The folders a pipeline writes: each writer's output folder, and each filter's exclusion
    writer's (DataFolders)."""
    found = []
    for step in pipeline:
        for writer in (step, getattr(step, "exclusion_writer", None)):
            folder = getattr(writer, "output_folder", None)
            if folder is not None and hasattr(folder, "list_files"):
                found.append(folder)
    return found


def check_writers_apart(pipeline: list) -> None:
    """Raise `SharedOutputFiles` when two writers of the pipeline (writer steps, filters' exclusion writers)
    write files of the same names in the same folder: `JsonlWriter("out")` as the exclusion writer and as
    the last step wrote both 00000.jsonl.gz, the second replacing the first."""
    seen: dict[tuple[str, str], str] = {}
    for step in pipeline:
        for writer, role in ((step, None), (getattr(step, "exclusion_writer", None), "the exclusion writer of")):
            folder = getattr(writer, "output_folder", None)
            template = getattr(getattr(writer, "output_filename", None), "template", None)
            if folder is None or not hasattr(folder, "list_files") or template is None:
                continue
            name = f"{role} {type(step).__name__}" if role else f"{type(writer).__name__}"
            key = (folder_name(folder).rstrip("/"), template)
            if key in seen:
                raise SharedOutputFiles(
                    f"{seen[key]} and {name} both write {key[0]}/{template}: each task's second file would "
                    f"replace its first, documents and all: give each writer its own folder (out/documents, "
                    f"out/excluded)")
            seen[key] = name


def check_outputs(logging_dir, pipeline: list) -> None:
    """Raise SettingsChanged when the logging folder records no run (no settings, no completed
    task) while a folder the pipeline writes already holds files: a run with another logging
    folder wrote them, and this one would rewrite them under that run's record, which a re-run
    of that run would then resume, answering its settings with these results.  First, two writers
    writing the same files are refused (`check_writers_apart`)."""
    check_writers_apart(pipeline)
    if recorded_settings(logging_dir) is not None or has_results(logging_dir):
        return
    for folder in output_folders(pipeline):
        try:
            written = folder.list_files()
        except OSError:  # (a remote folder that cannot be listed: nothing is known)
            continue
        if written:
            why = [f"no record of them in {folder_name(logging_dir)}: a run with another logging folder wrote them"]
            raise UnrecordedResults(folder_name(folder), why, _new_default_logging_dir(logging_dir, folder))


# The logging folder datatrove's executors make when given none: logs/<when it started>_<5 random letters>.
_DEFAULT_LOGGING_DIR = re.compile(r"(?:^|/)logs/\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_[a-z]{5}/?$")


def _new_default_logging_dir(logging_dir, folder) -> str | None:
    """What to say when `logging_dir` is the folder datatrove made for a run given no ``logging_dir`` (a new one
    each run, so that no run finds the record and completions of the one before, whose results `folder` holds),
    naming the last such folder holding a run's record; None for a logging folder given."""
    import os

    path = getattr(logging_dir, "path", "")
    if not _DEFAULT_LOGGING_DIR.search(path):
        return None
    parent = os.path.dirname(path.rstrip("/"))
    try:
        earlier = sorted(name for name in os.listdir(parent) if os.path.join(parent, name) != path.rstrip("/")
                         and os.path.isfile(os.path.join(parent, name, SETTINGS_FILE)))
    except OSError:
        earlier = []
    what = folder_name(folder)
    if earlier:
        way = (f"give the executor logging_dir={os.path.join(parent, earlier[-1])!r}, which resumes the last run "
               f"logged there, and the same folder on every run; or delete {what} to start over, with a logging_dir "
               f"given from then on")
    else:
        way = (f"delete {what} to start over, and give the executor logging_dir, the same folder on every run, to "
               f"resume from then on")
    return (f"{what} holds the results of an earlier run, and this one has no record of them: it was given no "
            f"logging_dir, so datatrove logs it in a new folder, {path}, without the record and completions of the "
            f"run before: {way}")


def check_inputs(pipeline: list) -> None:
    """Raise `NoInputFiles` when a disk reader's local folder holds no file it would read (a path
    relative to another folder than the one the script runs in, a glob that matches nothing):
    datatrove found it only in the tasks, each failing with "No files found on ...!".  Remote
    folders and readers given a paths_file are not listed here (their tasks list them)."""
    import os

    from datatrove.pipeline.readers.base import BaseDiskReader

    for step in pipeline:
        folder = getattr(step, "data_folder", None)
        if not isinstance(step, BaseDiskReader) or step.paths_file or not is_local(folder):
            continue
        try:
            if folder.list_files(recursive=step.recursive, glob_pattern=step.glob_pattern):
                continue
        except OSError:  # (unreadable: its tasks say how)
            continue
        pattern = step.glob_pattern or "*"
        parts = Path(folder.path).parts
        globbed = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), None)
        if os.path.isfile(folder.path):  # (datatrove's readers read a folder; this is no such folder)
            parent, name = os.path.split(os.path.normpath(folder.path))
            why = (f"{folder.path} is a file: a reader reads a folder, give the file as its glob: "
                   f"{type(step).__name__}({parent or '.'!r}, glob_pattern={name!r})")
        elif globbed is not None and not os.path.isdir(folder.path):  # ("crawl/*.warc.gz" as the folder)
            parent, pattern = str(Path(*parts[:globbed])) if globbed else ".", "/".join(parts[globbed:])
            why = (f"{folder.path} is a glob: a reader reads a folder, give the glob as its glob_pattern: "
                   f"{type(step).__name__}({parent!r}, glob_pattern={pattern!r})")
        elif not os.path.isdir(folder.path):
            why = (f"{folder.path} does not exist (a relative path is taken from the folder this runs in, "
                   f"{os.getcwd()}): give the folder of the input files, as an absolute path or one relative to "
                   f"where this runs")
        else:
            why = f"{folder.path} holds no file matching {pattern}: give the folder of the input files or their glob"
        raise NoInputFiles(f"{type(step).__name__} has no file to read: {why}")


def check_settings(logging_dir, settings: dict, record: bool = True) -> None:
    """Raise SettingsChanged unless `settings` are those recorded in `logging_dir` (a DataFolder);
    record them when none are, or when the run that recorded others completed no task (it
    left no results).  Results of a run that recorded nothing (an older version, another program)
    count as other settings: nothing says what made them.  A record that lacks a setting this
    version records (`LATER_SETTINGS`: the input files' sizes) is compared on what it has, and gains
    it.  With `record` false (a task starting: its run recorded them), a record that differs is an
    error, results or not.

    Args:
        logging_dir: the run's logging DataFolder.
        settings: the run's settings (`run_settings`).
        record: whether this is the run starting (it records), or one of its tasks (it only compares).
    """
    settings = as_recorded(settings)
    recorded = recorded_settings(logging_dir)
    changed = differences(recorded, settings) if recorded is not None else None
    if not record:
        if changed:
            raise SettingsChanged(folder_name(logging_dir), changed)
        return
    if recorded == settings:
        return
    if changed == []:  # (an older record, without what this version records: it gains it, from now on)
        _write(logging_dir, settings)
        return
    if has_results(logging_dir):
        raise SettingsChanged(folder_name(logging_dir), changed if changed is not None else
                              ["settings: not recorded (an older version or another program wrote these results)"])
    _write(logging_dir, settings)


def check_settings_recorded(logging_dir, where: str) -> None:
    """`LoggingFolderNotShared` unless the run's record is in `logging_dir` as a task sees it
    where it runs (`where`: "task 3 on node n2"): plexity's executors write it before launching any
    task, so a task that does not find it runs where that path is another folder.  (The task wrote
    its output, logs and completion marker there, and the run failed when all was done, reading the
    stats it could not see; a re-run did everything again.)"""
    if logging_dir.isfile(SETTINGS_FILE):
        return
    raise LoggingFolderNotShared(
        f"{where}: the logging folder {folder_name(logging_dir)} does not hold the record this run wrote there "
        f"before launching the task: that path is another folder there (a disk of its own); the logging and "
        f"output folders must be on a disk every node and this machine share, or URLs (s3://...)")


def _count(stats: dict, name: str) -> int:
    value = stats.get(name, 0)
    value = value.get("total", 0) if isinstance(value, dict) else value
    return value if isinstance(value, (int, float)) else 0


def _writers_of(steps: list, task_stats: list) -> list[tuple]:
    """(writer, the documents the task's stats say it wrote) for each writer of the pipeline whose file names hold the
    task's rank: a step's own (its ``total``), and a filter's exclusion writer (the filter's ``dropped``)."""
    found = []
    for step, stats in zip(steps, task_stats):
        stats = stats.get("stats", {}) if isinstance(stats, dict) else {}
        for writer, written in ((step, _count(stats, "total")),
                                (getattr(step, "exclusion_writer", None), _count(stats, "dropped"))):
            template = getattr(getattr(writer, "output_filename", None), "template", "")
            if written and getattr(writer, "output_folder", None) is not None and "${rank}" in template:
                found.append((writer, written))
    return found


def reopen_tasks_whose_output_is_gone(executor) -> dict[int, list[str]]:
    """The completed tasks of a run resumed whose output files are gone (deleted, a folder removed, a disk cleaned
    up: a writer the task's stats say wrote documents has no file of the task's rank in its folder), each with the
    folders it lacks; their completion markers are removed, so that this run does them again.  (The run said "4/4
    tasks completed", exit 0, and the documents of the task whose file was gone were nowhere.)  A writer whose file
    names do not hold the task's rank (``${rank}``) is not looked at."""
    folder = executor.logging_dir
    steps = [step for step in executor.pipeline if hasattr(step, "stats")]  # (the steps a task's stats list, in order)
    if not folder.isdir("completions"):
        return {}
    listed: dict[int, set] = {}  # (each writer's folder, listed once)
    lost: dict[int, list[str]] = {}
    for name in sorted(folder.list_files("completions")):
        rank_name = name.rsplit("/", 1)[-1]
        if not rank_name.isdigit():
            continue
        try:
            with folder.open(f"stats/{rank_name}.json", "r") as f:
                task_stats = json.load(f)
        except (OSError, ValueError):
            continue  # (no stats: nothing says what it wrote)
        for writer, _ in _writers_of(steps, task_stats if isinstance(task_stats, list) else []):
            if id(writer) not in listed:
                try:
                    listed[id(writer)] = {path.rsplit("/", 1)[-1] for path in writer.output_folder.list_files()}
                except OSError:
                    listed[id(writer)] = set()
            if not any(rank_name in file for file in listed[id(writer)]):
                lost.setdefault(int(rank_name), []).append(folder_name(writer.output_folder))
    for rank in lost:
        folder.rm(f"completions/{rank:05d}")
    return lost


def lost_outputs_message(lost: dict[int, list[str]], shown: int = 5) -> str:
    """What `reopen_tasks_whose_output_is_gone` found, in one line."""
    tasks = ", ".join(f"task {rank} ({', '.join(folders)})" for rank, folders in list(lost.items())[:shown])
    more = f" and {len(lost) - shown} more" if len(lost) > shown else ""
    return (f"{len(lost)} completed task(s) have no output file any more, though their stats say they wrote "
            f"documents: {tasks}{more}; they run again")


def check_run_settings(executor, record: bool = True) -> dict[int, list[str]]:
    """Compare the settings of a datatrove executor's pipeline with those its logging folder
    recorded (`check_settings`): call it before ``executor.run()`` when the executor is one of
    datatrove's own (plexity's executors call it themselves); and that the folders it writes hold
    no results its logging folder has no record of (`check_outputs`), and that its readers have files
    to read (`check_inputs`).  Returns the completed tasks whose output files are gone, made to run again
    (`reopen_tasks_whose_output_is_gone`)."""
    if record:
        from datatrove.executor.local import LocalPipelineExecutor

        pending = chained(executor) and dependency_pending(executor)
        if pending and isinstance(executor, LocalPipelineExecutor):  # (which runs its dependency within run())
            raise DependencyNotRun(
                f"check_run_settings: this executor's dependency (depends=) has not completed, and what it writes may "
                f"be this pipeline's input: run it first, depends.run(), then check_run_settings(executor) and "
                f"executor.run(); or use plexity's LocalTaskExecutor, which runs its dependency before its checks")
        if not pending:  # (a Slurm job submitted to wait on its dependency: its input is not written yet)
            check_inputs(executor.pipeline)
        check_outputs(executor.logging_dir, executor.pipeline)
    check_settings(executor.logging_dir, run_settings(executor.pipeline, executor.world_size, not chained(executor)),
                   record=record)
    return reopen_lost_outputs(executor) if record else {}


def reopen_lost_outputs(executor) -> dict[int, list[str]]:
    """`reopen_tasks_whose_output_is_gone`, said in the run's log."""
    from datatrove.utils.logging import logger

    lost = reopen_tasks_whose_output_is_gone(executor)
    if lost:
        logger.warning(lost_outputs_message(lost))
    return lost


def _write(logging_dir, settings: dict) -> None:
    """Whole or not at all (a temporary name, then renamed)."""
    part = f".{SETTINGS_FILE}.part"
    with logging_dir.open(part, "wt") as f:
        json.dump(settings, f, indent=2)
        f.write("\n")
    logging_dir.mv(part, SETTINGS_FILE)
