"""`plexity run`: clean WARC collections with a datatrove pipeline, locally, on Slurm or on Ray.

    WarcHtmlReader -> extractor -> PerplexitySentenceFilter -> JsonlDocumentWriter | WarcResponseWriter

Output layout (DIR = --output-dir):

    DIR/documents/00000.jsonl.gz ...   cleaned documents, one file per task (or .warc.gz; .warc.wet.gz when
                                       every input is a WET file, whose records it holds as WET's)
    DIR/excluded/00000.jsonl.gz ...    dropped documents, with metadata.filter_reason
    DIR/logs/                          datatrove's logging dir (--logging-dir): logs/, stats/,
                                       completions/, slurm_logs/, and stats.json (all tasks merged)
    DIR/.plexity-logging-dir           the logging dir of the run that last wrote here (for --overwrite)

The input may be an fsspec URL (``s3://bucket/crawl/``, ``hf://datasets/...``, ``https://...``),
read by each task where it runs; ``--storage-options`` passes credentials and settings to its
filesystem (docs/ray.md).

Re-running the same command resumes: tasks with a completion marker in DIR/logs/completions
are skipped, the others start over (their output files are rewritten, never appended to).
The run's settings are recorded in DIR/logs/plexity-settings.json: a re-run with other settings
(extractor, model, threshold, method, format, limits, input files and their sizes, tasks, version) stops before
anything runs and names them; --overwrite deletes the earlier results and starts over
(`plexity_plugins.datatrove.run_settings`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import glob as globlib
import itertools
import json
import multiprocessing
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..io.folders import ARC_SUFFIXES, WACZ_SUFFIX, WARC_GLOB, warc_glob  # (.warc, .warc.gz, WET; ARC, WACZ files)
from ..scoring.methods import METHODS
from ..errors import DISK_FULL_STATUS, FAILED_STATUS, USAGE_STATUS, disk_full_message, is_disk_full, printable
from ..extractors import DEFAULT_EXTRACTOR, EXTRACTORS
from ..cleaning.policy import DEFAULT_MIN_CHARS
from ..io.read_limits import DEFAULT_REMOTE_TIMEOUT, MAX_DOCUMENT_BYTES
from ..io.folders import unlisted_folder_message
from ..io.output_lock import own_output_folder
from ..extractors.sandbox import DEFAULT_EXTRACT_TIMEOUT, EXTRACT_MEMORY_ENV, MEMORY_LIMIT
from .options import (add_model_args, check_language_options, parse_memory, parse_size, positive_float, positive_int,
                      wait_seconds)

FORMATS = ("jsonl", "warc")
EXECUTORS = ("local", "slurm", "ray")
# The options of the cluster executors: (option, its default, the executors that read it).  Given with
# another executor, it was ignored without a word (--partition without --executor slurm ran the job here).
EXECUTOR_OPTIONS = {"cpus_per_task": ("--cpus-per-task", 1, ("slurm", "ray")),
                    "mem_per_cpu_gb": ("--mem-per-cpu-gb", 2, ("slurm", "ray")),
                    "ray_address": ("--ray-address", None, ("ray",)), "node_wait": ("--node-wait", None, ("ray",)),
                    "partition": ("--partition", None, ("slurm",)), "time": ("--time", "24:00:00", ("slurm",)),
                    "venv": ("--venv", None, ("slurm",)), "job_name": ("--job-name", "plexity", ("slurm",)),
                    "wait": ("--wait", False, ("slurm",))}
WET_SUFFIXES = (".warc.wet", ".warc.wet.gz")


# -- pipeline -------------------------------------------------------------------------

def resolve_input(spec: str, storage_options: dict | None = None,
                  remote_timeout: float | None = DEFAULT_REMOTE_TIMEOUT) -> tuple[str, str]:
    """(folder, glob pattern relative to it) for a directory, a file or a glob, local or an
    fsspec URL (`remote_timeout`: `resolve_url`'s)."""
    from ..runtime.extras import is_url, local_path

    if is_url(spec):
        return resolve_url(spec, storage_options, remote_timeout)
    spec = local_path(spec)  # (a file:// URL is local: it was looked for as a relative path, "does not exist")
    path = Path(spec)
    if path.is_dir():
        return str(path.resolve()), warc_glob(path)
    if path.is_file():
        return str(path.resolve().parent), path.name
    if globlib.has_magic(spec):
        from ..cleaning.files import glob_folder

        folder = glob_folder(spec)
        if not folder.is_dir():
            raise FileNotFoundError(f"input folder {folder} does not exist")
        return str(folder.resolve()), str(Path(*path.parts[len(folder.parts):]))
    raise FileNotFoundError(f"input {spec} does not exist (give a directory, a WARC file or a glob)")


def resolve_url(url: str, storage_options: dict | None = None,
                remote_timeout: float | None = DEFAULT_REMOTE_TIMEOUT) -> tuple[str, str]:
    """(folder URL, glob pattern) for a folder, WARC file or glob given as an fsspec URL.

    A name with ``.warc`` in its last part is a file, anything else a folder: asking the
    remote side instead (``isdir``) would download a whole WARC over HTTP to look for links.
    A file's is asked whether it is there, over HTTP(S) within `remote_timeout` (`listing_options`)."""
    from fsspec.core import split_protocol, url_to_fs

    from ..runtime.extras import require_protocol

    require_protocol(url, "plexity run's input")
    protocol, path = split_protocol(url)
    parts = path.rstrip("/").split("/")
    magic = [i for i, part in enumerate(parts) if globlib.has_magic(part)]
    if magic:
        return f"{protocol}://{'/'.join(parts[:magic[0]])}", "/".join(parts[magic[0]:])
    if ".warc" in parts[-1] or parts[-1].lower().endswith((*ARC_SUFFIXES, WACZ_SUFFIX)):
        from ..runtime.extras import without_password

        fs, fs_path = url_to_fs(url, **(listing_options(url, storage_options, remote_timeout) or {}))
        try:
            fs.info(fs_path)
        except FileNotFoundError as exc:  # (fsspec's HTTP says so of a 401 and of a redirect loop: the cause tells)
            cause = exc.__cause__  # (its class named: a redirect loop was "cannot be read: 0, message=''")
            why = remote_problem(cause, url, storage_options, remote_timeout) if cause is not None else "not found"
            raise FileNotFoundError(without_password(f"input {url} cannot be read: {why}")) from None
        except Exception as exc:  # noqa: BLE001 - s3fs's and botocore's (a 403 was "plexity run: error: Forbidden")
            why = remote_problem(exc, url, storage_options, remote_timeout)
            raise OSError(without_password(f"input {url} cannot be read: {why}")) from None
        return f"{protocol}://{'/'.join(parts[:-1])}", parts[-1]
    return f"{protocol}://{'/'.join(parts)}", WARC_GLOB


def listing_options(url: str, storage_options: dict | None, remote_timeout: float | None) -> dict | None:
    """The filesystem options plexity run lists an input `url` with: over HTTP(S), its requests bounded by
    `remote_timeout` (`http_listing_options`); else `storage_options`."""
    if not url.lower().startswith(("http://", "https://")):
        return storage_options
    from ..datatrove.remote_files import http_listing_options

    return http_listing_options(storage_options, remote_timeout or None)


def remote_problem(exc: BaseException, url: str, storage_options: dict | None, remote_timeout: float | None) -> str:
    """What an error reaching the input `url` means, in words: S3's (`s3_problem`), an HTTP(S) connection's
    (`http_problem`: a certificate refused, no server, a stall); a server's answer as aiohttp says it
    (``ClientResponseError: 401, message='Unauthorized'``, ``TooManyRedirects``)."""
    from ..datatrove.remote_files import http_problem, s3_problem

    if url.lower().startswith(("http://", "https://")) and isinstance(exc, OSError):
        return http_problem(exc, remote_timeout or None, url)
    return s3_problem(exc, bool((storage_options or {}).get("anon")))


def data_folder(folder: str, storage_options: dict | None = None):
    """What datatrove's steps take as a data folder: the path, or (URL, filesystem options)."""
    return (folder, storage_options) if storage_options else folder


def files_to_read(names: list[str]) -> list[str]:
    """The listed inputs the reader reads: all but Common Crawl's WAT files, which it skips by their names
    (`wat_file`; the run's glob, ``**/*.warc*``, takes them)."""
    from ..io.input_files import wat_file

    return [name for name in names if not wat_file(name)]


def inputs_line(names: list[str]) -> str:
    """The run's first words of its inputs: the WARC files it will read, and the WAT files it will not."""
    read = files_to_read(names)
    wats = len(names) - len(read)
    return f"{len(read)} WARC files" + (f", {wats} WAT file{'s' * (wats != 1)} not read (wat_file)" if wats else "")


def is_wet_input(names: list[str]) -> bool:
    """Every input file is a WET file by its name (``.warc.wet``, ``.warc.wet.gz``): Common Crawl's text of pages.
    A WAT beside them (a segment's wet/ and wat/) is not read (`files_to_read`), and writes nothing."""
    read = files_to_read(names)
    return bool(read) and all(name.lower().endswith(WET_SUFFIXES) for name in read)


def list_inputs(folder: str, pattern: str, storage_options: dict | None = None) -> list[str]:
    from datatrove.io import get_datafolder

    return get_datafolder(data_folder(folder, storage_options)).list_files(glob_pattern=pattern)


# each extractor's datatrove step (`plexity_plugins.datatrove`)
EXTRACTOR_STEPS = {"auto": "AutoExtractor", "dense": "DenseExtractor", "fast": "FastExtractor",
                   "learned": "LearnedExtractor", "tags": "HtmlTagsExtractor", "trafilatura": "TrafilaturaExtractor"}


def build_pipeline(input_spec: str, output_dir: str | os.PathLike, extractor: str = DEFAULT_EXTRACTOR,
                   model: str | None = None, threshold: float | None = None, method: str | None = None,
                   fmt: str = "jsonl",
                   annotate: bool = False, min_chars: int = DEFAULT_MIN_CHARS, min_kept_fraction: float = 0.0,
                   other_languages: str = "keep", extract_timeout: float = 30,
                   max_document_bytes: int = MAX_DOCUMENT_BYTES, language_check: bool = True,
                   extract_memory: int | str | None = None, storage_options: dict | None = None,
                   wet_input: bool = False, remote_timeout: float | None = None) -> list:
    """The steps of `plexity run`: read, extract, filter, write (and write what was dropped).
    `storage_options`: fsspec filesystem options (credentials ...) of an input URL.  `wet_input`: every input
    file is a WET file (`is_wet_input`), so `fmt` "warc" writes WET files, named ``.warc.wet.gz``."""
    from ..datatrove.writers import JsonlDocumentWriter

    from .. import datatrove as steps_module
    from ..datatrove import PerplexitySentenceFilter, WarcHtmlReader, WarcResponseWriter
    from ..scoring.methods import method_for_extractor

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    output_dir = Path(output_dir).resolve()
    folder, pattern = resolve_input(input_spec, storage_options,
                                    DEFAULT_REMOTE_TIMEOUT if remote_timeout is None else remote_timeout)
    steps = [WarcHtmlReader(data_folder(folder, storage_options), glob_pattern=pattern, leave_out_other_inputs=True,
                            max_payload_bytes=max_document_bytes, read_timeout=extract_timeout,
                            **({} if remote_timeout is None else {"remote_timeout": remote_timeout}))]
    limits = {"timeout": extract_timeout, "memory_limit": extract_memory}
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor {extractor!r}: choose one of {', '.join(EXTRACTORS)}")
    if extractor != "none":
        steps.append(getattr(steps_module, EXTRACTOR_STEPS[extractor])(**limits))
    steps.append(PerplexitySentenceFilter(
        model=model, threshold=threshold, method=method or method_for_extractor(extractor), page_text_method=method,
        annotate=annotate, min_chars=min_chars,
        min_kept_fraction=min_kept_fraction, other_languages=other_languages, language_check=language_check,
        exclusion_writer=JsonlDocumentWriter(str(output_dir / "excluded")),
        allow_html_pages=extractor == "none",  # (asked for: the pages cleaned as they are, as plexity clean does)
    ))
    if fmt == "warc":  # (WET in, WET out: its records are conversion records of text, as plexity clean names them)
        steps.append(WarcResponseWriter(str(output_dir / "documents"),
                                        output_filename="${rank}.warc.wet.gz" if wet_input else None))
    else:
        steps.append(JsonlDocumentWriter(str(output_dir / "documents")))
    return steps


def default_venv_activate() -> str | None:
    """The activate script of the running virtual environment, if any."""
    activate = Path(sys.prefix) / "bin" / "activate"
    return str(activate) if sys.prefix != sys.base_prefix and activate.is_file() else None


def local_start_method(pipeline: list, workers: int) -> str:
    """How the local executor starts its worker processes: forked from this one where the
    OS can, after loading what every worker would otherwise load for itself (Python's
    modules, the language identifier's ~70 MB of tables), which they then share
    copy-on-write: less memory added per extra worker, and no start-up imports
    (docs/performance.md, "Memory with workers", measures it).  Else (one worker; not Linux, where forking a
    process with system libraries loaded is not safe everywhere; a remote input, whose fsspec
    filesystem, made here, runs an event loop that refuses to work in a forked process:
    "This class is not fork-safe") datatrove's default."""
    fork_safe = sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
    remote = any(not step.data_folder.is_local() for step in pipeline if hasattr(step, "data_folder"))
    if workers <= 1 or not fork_safe or remote:
        return "forkserver"
    from ..datatrove.filter import PerplexitySentenceFilter
    from ..text.language import identifier

    if any(isinstance(step, PerplexitySentenceFilter) and step.scorer.language_check for step in pipeline):
        identifier()
    return "fork"


# The memory a local run's worker takes, with its extraction child and its room for a large page: a default run
# starts no more workers than its memory holds of these (docs/performance.md, "In a container", has the runs: on the
# WCXB pages two workers completed within 256 MiB and lost pages to the out-of-memory killer within 200 and 160, four
# within 384 and 256, eight within 512 and 384).  Before, a pod limited in memory alone ran a worker per CPU of its
# machine: eight in 256 MiB lost 11 pages of 234 and 3 tasks of 8.
MEMORY_PER_WORKER = 128 << 20


def workers_memory_holds() -> tuple[int, str]:
    """How many local workers the memory of this job holds (`memory_of_job`: the machine's RAM, or its cgroup's
    limit), at least one, and that memory in words."""
    from ..runtime.memory import memory_of_job

    size, words = memory_of_job()
    return max(1, size // MEMORY_PER_WORKER), words


def local_workers(tasks: int, workers: int | None) -> int:
    """The tasks a local run runs at once: `workers` (--workers), else one per task up to the CPUs this
    process can keep busy (`usable_cores`: its affinity, a container's CPU limit) and what its memory holds
    (`workers_memory_holds`)."""
    from ..runtime.cores import usable_cores

    return workers or min(tasks, usable_cores(), workers_memory_holds()[0])


def workers_memory_note(tasks: int, workers: int | None) -> str | None:
    """What to say when memory sets a local run's workers: fewer by default than its CPUs would run, or more given
    (--workers) than it holds; else None."""
    from ..runtime.cores import usable_cores

    held, memory = workers_memory_holds()
    per_worker = f"one per {MEMORY_PER_WORKER >> 20} MiB"
    wanted = min(tasks, usable_cores())
    if workers is None and held < wanted:
        return (f"{held} worker(s), not {wanted} (one a CPU this process may use, or a task): {memory} holds "
                f"{per_worker}; --workers sets them")
    if workers is not None and workers > held:
        return (f"--workers {workers}, more than {memory} holds ({per_worker}): the kernel's out-of-memory killer "
                f"may end extraction children, their pages counted as memory_limit, or workers; give the job more "
                f"memory, or run fewer workers")
    return None


def make_executor(pipeline: list, executor: str, tasks: int, logging_dir: str, workers: int | None = None,
                  partition: str | None = None, time_limit: str = "24:00:00", cpus_per_task: int = 1,
                  mem_per_cpu_gb: float = 2, venv: str | None = None, job_name: str = "plexity",
                  node_wait: float | None = None):
    if executor == "local":
        from ..datatrove.executor import LocalTaskExecutor

        workers = local_workers(tasks, workers)
        # (not datatrove's LocalPipelineExecutor: its pool hangs forever when a worker is killed)
        return LocalTaskExecutor(pipeline=pipeline, tasks=tasks, logging_dir=logging_dir, workers=workers,
                                 start_method=local_start_method(pipeline, workers))
    if executor == "slurm":
        from ..datatrove.slurm_executor import SlurmTaskExecutor

        if not partition:
            raise ValueError("--executor slurm needs --partition")
        if mem_per_cpu_gb == int(mem_per_cpu_gb):  # (else sbatch is given MiB: SlurmTaskExecutor.get_sbatch_args)
            mem_per_cpu_gb = int(mem_per_cpu_gb)
        if venv:  # (a wrong one was submitted, and every task failed on its node, which re-running did not mend)
            activate = Path(venv) / "bin" / "activate" if Path(venv).is_dir() else Path(venv)
            if not activate.is_file():
                raise ValueError(f"--venv {venv}: no virtualenv there ({activate} does not exist): give the folder of "
                                 f"a virtualenv with plexity_plugins installed, or its bin/activate, on a filesystem "
                                 f"the nodes share")
            venv = str(activate.resolve())
        return SlurmTaskExecutor(
            pipeline=pipeline, tasks=tasks, workers=workers or -1, logging_dir=logging_dir,
            partition=partition, time=time_limit, cpus_per_task=cpus_per_task, mem_per_cpu_gb=mem_per_cpu_gb,
            venv_path=venv or default_venv_activate(), job_name=job_name,
        )
    if executor == "ray":
        from ..datatrove.ray_executor import RayTaskExecutor

        return RayTaskExecutor(pipeline=pipeline, tasks=tasks, workers=workers or -1, logging_dir=logging_dir,
                               cpus_per_task=cpus_per_task, mem_per_cpu_gb=mem_per_cpu_gb, node_wait=node_wait)
    raise ValueError(f"unknown executor {executor!r}: choose one of {', '.join(EXECUTORS)}")


def ray_refusal(address: str, exc: ConnectionError) -> str:
    """What ``ray.init``'s "Failed to connect to Ray cluster at ..." hides in its cause, in one line:
    a cluster of token authentication (Ray 2.60 turns it on where a token exists: ~/.ray/auth_token,
    which a local Ray also writes) refuses a driver that sends none, and Ray sends one to an
    explicit address only when RAY_AUTH_MODE=token says so."""
    cause = str(exc.__cause__ or "")
    if "InvalidAuthToken" in cause or "AuthenticationError" in cause or "Authentication token" in cause:
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            return (f"the Ray cluster at {address} uses token authentication and this run sent no token: set "
                    f"RAY_AUTH_MODE=token (Ray then reads the token from $RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or "
                    f"~/.ray/auth_token; `ray get-auth-token` on the head prints the cluster's)")
        return (f"the Ray cluster at {address} refused this run's token: give the cluster's "
                f"($RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; `ray get-auth-token` on the head)")
    last = next((line.strip() for line in reversed(cause.splitlines()) if line.strip()), "")
    return f"{exc}{f' ({last})' if last else ''}"


@contextlib.contextmanager
def ray_connection(address: str | None):
    """Connect to the Ray cluster at `address` (``auto``: the one started on this machine by
    ``ray start``; ``ray://host:10001``; default: $RAY_ADDRESS), or, with neither, start a Ray
    of this machine's CPUs for the run and stop it after.  Yields a line saying which."""
    import ray

    from ..datatrove.ray_executor import check_ray_address, local_ray_folder, ray_temp_root

    address = address or os.environ.get("RAY_ADDRESS") or None
    # (ray.init puts its own SIGTERM handler in place of the command's, which ends the run as Ctrl-C does: a
    # SIGTERM then ended it with exit 1 and Ray's "*** SIGTERM received ..." stack, saying nothing of the tasks)
    sigterm = signal.getsignal(signal.SIGTERM)
    folder = None
    if address:
        check_ray_address(address, give="give its head's address (--ray-address, $RAY_ADDRESS)")
        try:
            ray.init(address=address, logging_level="WARNING")
        except ConnectionError as exc:
            raise OSError(ray_refusal(address, exc)) from None
    else:
        # "local": a new Ray, not one another program started on this machine (which
        # ray.init() would join); in a folder of this user's when Ray's own is another user's
        folder = local_ray_folder()
        try:
            ray.init(address="local", include_dashboard=False, logging_level="WARNING",
                     _temp_dir=str(folder) if folder else None)
        except PermissionError as exc:
            raise OSError(f"cannot start a Ray for this run: {exc.filename or exc}: permission denied (Ray's folder "
                          f"under {ray_temp_root()}, $RAY_TMPDIR or $TMPDIR or /tmp): set RAY_TMPDIR to a folder "
                          f"this user may write") from None
    if sigterm is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, sigterm)
    try:
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        cpus = sum(node["Resources"].get("CPU", 0) for node in nodes)
        where = f"; in {folder}, as {ray_temp_root() / 'ray'} is another user's" if folder else ""
        yield (f"Ray cluster at {address}: {len(nodes)} node(s), {cpus:g} CPUs" if address else
               f"a local Ray started for this run ({cpus:g} CPUs{where})")
    finally:
        ray.shutdown()  # disconnects; stops the Ray it started


# -- results --------------------------------------------------------------------------

def merge_stats(logging_dir: str | os.PathLike) -> dict | None:
    """Merge the per-task stats of every run so far into logging_dir/stats.json (datatrove's
    format, as its merge_stats tool writes); returns the merged stats as a dict."""
    from datatrove.utils.stats import PipelineStats

    stats_dir = Path(logging_dir) / "stats"
    files = sorted(stats_dir.glob("*.json"))
    if not files:
        return None
    from datatrove.io import get_datafolder

    from ..datatrove.executor import save_stats

    merged = sum((PipelineStats.from_json(json.loads(f.read_text())) for f in files), start=PipelineStats())
    save_stats(get_datafolder(str(logging_dir)), "stats.json", merged)  # (whole or not at all)
    return json.loads((Path(logging_dir) / "stats.json").read_text())


def completed_tasks(logging_dir: str | os.PathLike) -> int:
    directory = Path(logging_dir) / "completions"
    return len(list(directory.iterdir())) if directory.is_dir() else 0


def summary(merged: list | None, annotate: bool = False) -> str:
    from ..datatrove.run_counts import run_counts

    if not merged:
        return "no task has finished yet"
    c = run_counts(merged)
    damaged = c.get("damaged_files") or {}
    texts = c.get("documents_page_text", 0)
    cleaned = c.get("documents_cleaned_text", 0)
    unread = c.get("files_skipped", 0)
    cut = c.get("pages_cut_by_crawler", 0)
    passed = c.get("documents_passthrough", 0)
    # (by language, as `plexity clean`'s line: "another language" said not which, nor that a map passed a page through
    # because its language could not be identified, language:unknown)
    passed_by = _counts(c.get("passthrough_reasons"))
    read_as_text = [f"{texts} of them WET records' text"] * bool(texts) + \
        [f"{cleaned} of them a cleaned WARC's records, read back as text"] * bool(cleaned)
    documents = (f"{c.get('documents', 0)} documents, {', '.join(read_as_text)}, not extracted" if read_as_text
                 else f"{c.get('documents', 0)} HTML documents")
    sentences = (f"sentences {c.get('sentences_dropped', 0)} marked to drop, none removed (--annotate)" if annotate
                 else f"sentences {c.get('sentences_kept', 0)} kept / {c.get('sentences_dropped', 0)} dropped")
    return (f"{c.get('records', 0)} WARC records read, {documents} "
            f"(skipped: {_counts(c.get('skip_reasons'))}; corrupt files: {sum(damaged.values())}{_either(damaged)}"
            f"{'; files not read: %d%s' % (unread, _either(c.get('file_skip_reasons'))) if unread else ''}"
            f"{'; recovered after damage: %d' % c['records_recovered'] if c.get('records_recovered') else ''}"
            f"{'; cut short by the crawler: %d' % cut if cut else ''}); "
            f"{_extraction(c)}; "
            f"filter: {c.get('documents_filtered', 0)} in, {c.get('documents_kept', 0)} kept"
            f"{f' ({passed} of them passed through unfiltered: {passed_by})' if passed else ''}, "
            f"{c.get('documents_dropped', 0)} dropped{_either(c.get('drop_reasons'))}; {sentences}")


def _extraction(c: dict) -> str:
    """The summary's word on extraction: none with --extractor none, whose HTML pages are cleaned as text, markup and
    all (it said "extraction: 0 with text, lost: none" of a run that cleaned 24 pages' tags with their text)."""
    if "documents_extracted" not in c and c.get("documents_looks_like_html"):
        return (f"extraction: none (--extractor none): {c['documents_looks_like_html']} HTML pages cleaned as text, "
                f"markup and all")
    return f"extraction: {c.get('documents_extracted', 0)} with text, lost: {_counts(c.get('lost_reasons'))}"


def nothing_read(merged: list) -> bool:
    """Whether the run's readers read no WARC record at all."""
    from ..datatrove.run_counts import run_counts

    return run_counts(merged).get("records", 0) == 0


def _counts(counts: dict | None) -> str:
    """Counts by reason as a summary line says them, ``not_html 3, too_large 1`` (Python's dict, ``{'not_html':
    3, ...}``, was printed as it is), or ``none``."""
    return ", ".join(f"{reason} {count:,}" for reason, count in counts.items()) if counts else "none"


def _either(counts: dict | None) -> str:
    """The counts in brackets after a space where there are any, else nothing (no stray space)."""
    return f" ({_counts(counts)})" if counts else ""


# Why a job waits, as squeue says it (%r): the ordinary reasons, and what the others mean to a user of --wait
ORDINARY_PENDING = {"None", "Priority", "Resources", "Dependency", "JobArrayTaskLimit", "BeginTime"}
PENDING_HINTS = {"PartitionDown": " (its partition is down: it starts when an administrator brings it up)",
                 "PartitionInactive": " (its partition is inactive: it starts when an administrator brings it up)",
                 "JobHeldUser": " (held: `scontrol release {job}` lets it start)",
                 "JobHeldAdmin": " (held by an administrator)",
                 "PartitionConfig": " (it asks for more than the partition's nodes have: --cpus-per-task, "
                                    "--mem-per-cpu-gb; it will not start: scancel {job} and ask for less)",
                 "BadConstraints": " (it asks for more than the nodes have: --cpus-per-task, --mem-per-cpu-gb; it "
                                   "will not start: scancel {job} and ask for less)",
                 "ReqNodeNotAvail": " (no node it may use is up)",
                 "DependencyNeverSatisfied": " (it will not start: scancel {job})"}
SQUEUE_PATIENCE = 600.0  # seconds squeue may fail in a row (a controller restarting) before --wait gives up


def wait_for_slurm(job_ids: list[str], poll: float = 2.0, patience: float = SQUEUE_PATIENCE) -> None:
    """Block until none of the jobs is pending or running any more.  A squeue that fails (Slurm's
    controller restarting or too busy to answer) says nothing of the jobs: they may still run, so
    the wait goes on, and gives up after `patience` seconds of failures with OSError saying so.
    (It used to take a failure for the end of the jobs: the run said its tasks had not completed
    and to run it again, which would have run them twice.)"""
    pending = [str(j) for j in job_ids if j and str(j) != "-1"]
    failing_since = None
    said = set()
    while pending:
        result = subprocess.run(["squeue", "-h", "-o", "%A|%T|%r", "-j", ",".join(pending)], capture_output=True,
                                text=True)
        if result.returncode == 0 or "Invalid job id" in result.stderr:  # (a job gone from squeue's memory)
            if not result.stdout.strip():
                return
            failing_since = None
            for reason in {line.split("|")[2] for line in result.stdout.splitlines() if line.count("|") == 2
                           and line.split("|")[1] == "PENDING"} - ORDINARY_PENDING - said:
                said.add(reason)  # (waiting on, silent, for a job that may never start: said once a reason)
                jobs = ",".join(pending)
                hint = PENDING_HINTS.get(reason, "").format(job=jobs)
                print(f"plexity run: Slurm job {jobs} is pending: {reason}{hint}; still waiting (Ctrl-C stops waiting, "
                      f"the job stays queued)", file=sys.stderr, flush=True)
        else:
            why = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
            now = time.monotonic()
            if failing_since is None:
                failing_since = now
                print(f"plexity run: squeue failed ({why}); still waiting for Slurm job {', '.join(pending)}",
                      file=sys.stderr, flush=True)
            elif now - failing_since > patience:
                raise OSError(f"cannot ask Slurm whether job {', '.join(pending)} still runs: squeue has failed for "
                              f"{now - failing_since:.0f} s ({why}); the job may still be running: check with squeue "
                              f"before running the same command again")
        time.sleep(poll)


# -- command --------------------------------------------------------------------------

def output_paths(output_dir: Path, logging_dir: Path, merged: list | None = None) -> str:
    """The run's output folders, each named only if it exists (the exclusion writer makes
    `excluded/` only when a document was dropped), and, from the merged stats, the records that are in neither
    folder (`skipped_records`)."""
    lines = []
    for label, path in (("cleaned documents", output_dir / "documents"), ("dropped documents", output_dir / "excluded"),
                        ("logs", logging_dir), ("merged stats", logging_dir / "stats.json")):
        lines.append(f"{label}: {path}" if path.exists() else f"{label}: none")
        if label == "dropped documents" and merged:
            lines.append(skipped_records(merged))
    return "\n".join(lines)


def skipped_records(merged: list) -> str:
    """The records the reader skipped and the pages the extractor found no text in, counted in the stats and written
    to neither `documents/` nor `excluded/` (datatrove's design: only the filter's verdicts are written).  The paths
    said "dropped documents: none" of a run that skipped 10 of its 11 records, as if every record were written."""
    from ..datatrove.run_counts import run_counts

    c = run_counts(merged)
    reader, extractor = c.get("skip_reasons") or {}, c.get("lost_reasons") or {}
    skipped = sum(reader.values()) + sum(extractor.values())
    if not skipped:
        return "skipped records: none"
    why = [f"{step}: {_counts(counts)}" for step, counts in (("reader", reader), ("extractor", extractor)) if counts]
    return (f"skipped records: {skipped:,} of {c.get('records', 0):,}, in neither folder, counted in the merged stats "
            f"({'; '.join(why)})")


# What a run writes in its logging folder (datatrove's and ours): what --overwrite deletes there.
RUN_LOG_ENTRIES = ("completions", "logs", "stats", "slurm_logs", "stats.json", "executor.json", "executor.pik",
                   "launch_script.slurm", "launch_merge_stats.slurm", "ranks_to_run.json", "plexity-settings.json",
                   "plexity-slurm-job")  # (the last: SLURM_JOB_RECORD, the Slurm job launched there)


def delete_results(output_dir: Path, logging_dir: Path, overwrite: bool = False) -> None:
    """What an earlier run into these folders wrote: the documents and excluded folders, and the
    run's entries of its logging folder (nothing else there).  With `overwrite` (--overwrite) and
    another --logging-dir, those of DIR/logs too, the default one: its completion markers would
    otherwise resume the command that wrote them, answering it with this run's documents."""
    import shutil

    logs = {logging_dir, output_dir / "logs"} if overwrite else {logging_dir}
    for path in (output_dir / "documents", output_dir / "excluded", *(f / n for f in logs for n in RUN_LOG_ENTRIES)):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


# In DIR: the logging folder of the run that last wrote there (--overwrite clears that one too)
LOGGING_DIR_RECORD = ".plexity-logging-dir"


def recorded_logging_dir(output_dir: Path) -> Path | None:
    """The logging folder of the run that last wrote into `output_dir`, if it recorded one.  Not when the record
    was written for another folder, this one a copy of it (``cp -r out out2``): ``--overwrite`` into the copy
    deleted the logs, stats and completion markers of the original, ``out/logs``.  The record names the folder it
    was written for on its second line; an older record, without it, is another folder's when it names that
    folder's own ``logs``, which that folder's record names too."""
    try:
        lines = (output_dir / LOGGING_DIR_RECORD).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or not lines[0].strip():
        return None
    recorded = Path(lines[0].strip())
    here = Path(os.path.abspath(output_dir))  # (the record's are absolute; `plexity report out` gives a relative one)
    if len(lines) > 1 and lines[1].strip():
        return recorded if Path(os.path.abspath(lines[1].strip())) == here else None
    other = recorded.parent
    if recorded.name == "logs" and other != here and recorded_logging_dir(other) == recorded:
        return None
    return recorded


def delete_earlier_logs(output_dir: Path, logging_dir: Path) -> None:
    """--overwrite: the run entries of the logging folder of the run that last wrote into `output_dir`,
    when it is another --logging-dir than this run's: its completion markers would resume that run's
    command with this run's documents."""
    earlier = recorded_logging_dir(output_dir)
    if earlier is None or earlier == logging_dir or earlier == output_dir / "logs" or not earlier.is_dir():
        return  # (DIR/logs and this run's own are cleared by delete_results)
    with own_output_folder(earlier, "--logging-dir"):  # (not while that run still runs)
        delete_results(output_dir, earlier)


def check_logging_dir(output_dir: Path, logging_dir: Path) -> None:
    """The logging folder is neither the output folder (each run owns its folders: the run would wait
    on itself) nor inside the folders the writers fill (its files would be taken for results)."""
    if logging_dir == output_dir:
        raise ValueError(f"--logging-dir {logging_dir} is the --output-dir: give another folder, or leave "
                         f"--logging-dir out (its default is DIR/logs)")
    for name, what in (("documents", "cleaned"), ("excluded", "dropped")):
        if logging_dir == output_dir / name or output_dir / name in logging_dir.parents:
            where = "is" if logging_dir == output_dir / name else "is inside"
            raise ValueError(f"--logging-dir {logging_dir} {where} {output_dir / name}, where the run writes its "
                             f"{what} documents: give another folder, or leave --logging-dir out (its default "
                             f"is DIR/logs)")


def check_settings_or_stop(executor, output_dir: Path, earlier_logs: Path | None = None) -> str | None:
    """None when the run may go on (the same settings as the results in its folders, or none
    there); else the one line that says which settings differ and the two ways out.  `earlier_logs`:
    the logging folder of the run that last wrote into DIR (`recorded_logging_dir`), named when
    this run's has no record of DIR's results."""
    from ..datatrove.run_settings import check_run_settings, lost_outputs_message
    from ..errors import SettingsChanged, UnrecordedResults

    try:
        lost = check_run_settings(executor)
        if lost:  # (their markers are removed: this run does them again)
            print(printable(f"plexity run: warning: {lost_outputs_message(lost)}"), file=sys.stderr)
    except SettingsChanged as exc:  # (UnrecordedResults: its folder is DIR/documents or DIR/excluded)
        where = exc.logging_dir if isinstance(exc, UnrecordedResults) else output_dir
        why = "; ".join(exc.differences)
        logs = Path(executor.logging_dir.path)
        if isinstance(exc, UnrecordedResults) and earlier_logs is not None and earlier_logs != logs:
            why = f"the run logged in {earlier_logs} wrote them; {logs} has no record of them"
        return (f"{where} holds the results of a run with other settings ({why}): "
                f"give a new --output-dir, or add --overwrite to delete those results and start over")
    return None


def document_files(folder: str, unlisted: list | None = None) -> int:
    """How many HTML (MHTML too) and text files a local input folder holds (which `plexity run` does not read);
    `unlisted`, a list, gets each folder below it that could not be listed, with its error (`io.folders.walk`)."""
    if "://" in folder or not Path(folder).is_dir():
        return 0
    from ..cleaning.file_kinds import HTML_SUFFIXES, MHTML_SUFFIXES, TEXT_SUFFIXES
    from ..io.folders import walk

    suffixes = HTML_SUFFIXES + MHTML_SUFFIXES + TEXT_SUFFIXES
    return sum(1 for _, _, names in walk(folder, unlisted) for name in names if name.lower().endswith(suffixes))


def misnamed_warcs(folder: str, looked_at: int = 100) -> list[str]:
    """What the files of a local `folder` of no known kind (the first `looked_at`) that are WARCs by
    their bytes are, and their names to give them (`cleaning.files.misnamed_warc`)."""
    from ..cleaning.file_kinds import kind_of
    from ..cleaning.files import misnamed_warc

    if not Path(folder).is_dir():
        return []
    unknown = (p for p in sorted(Path(folder).rglob("*")) if p.is_file() and kind_of(p) is None)
    return [f"{p}: {why}" for p in itertools.islice(unknown, looked_at) if (why := misnamed_warc(p))]


def dataset_files(folder: str, looked_at: int | None = 100, outside: tuple = (), first_lines: int = 100) -> list[str]:
    """The dataset files of documents among a local `folder`'s first `looked_at` files (None: all), each with what it
    is and the pipeline that cleans it (`cleaning.files.dataset_file`: a ``.json`` file by its first line, the first
    `first_lines` of them, the others by their names alone: a folder of many large JSON files is not read a MiB
    each); none below the folders `outside` (a run's own output folders, inside its input folder: its documents are
    no input left out)."""
    from ..cleaning.files import JSON_SUFFIXES, dataset_file

    if "://" in folder or not Path(folder).is_dir():
        return []
    files = (p for p in sorted(Path(folder).rglob("*")) if p.is_file())
    first_lines_read = itertools.count()

    def read_first_line(path: Path) -> bool:
        return not path.name.lower().endswith(JSON_SUFFIXES) or next(first_lines_read) < first_lines

    found = ((p, why) for p in itertools.islice(files, looked_at) if (why := dataset_file(p, read_first_line(p))))
    return [f"{p}: {why}" for p, why in found
            if not any(Path(out) in p.parent.resolve().parents or Path(out) == p.parent.resolve() for out in outside)]


def first_and_count(datasets: list[str]) -> str:
    """The first of the dataset files found (each "path: what it is ..."), and how many more."""
    more = f" (and {len(datasets) - 1} more such file(s))" if len(datasets) > 1 else ""
    return f"{datasets[0]}{more}"


def input_path(folder: str, name: str) -> str:
    """The path (or URL) of the listed input `name` of `folder`."""
    return f"{folder.rstrip('/')}/{name}" if "://" in folder else os.path.join(folder, name)


def other_inputs(folder: str, inputs: list[str]) -> dict[str, str]:
    """The listed inputs that are another command's input, not a crawl (`cleaning.files.other_input`: pages and
    text files by their names, datasets of documents), each with what it is: the reader leaves them out of the
    tasks (``leave_out_other_inputs``), and the run names them, as it names a folder's beside its WARC files."""
    from ..cleaning.files import other_input

    local = "://" not in folder
    return {name: kind for name in inputs if (kind := other_input(input_path(folder, name), local))}


def only_datasets_message(folder: str, pattern: str, inputs: list[str], others: dict[str, str] | None = None,
                          given: str | None = None) -> str | None:
    """When every input the run would read is another command's (`other_inputs`: ``plexity run docs.jsonl``, a glob
    of ``*.jsonl.gz`` or ``*.html``): the line its folder gets (`no_warc_files_message`), before any task, which read
    each as a damaged WARC; else None (a WARC among them: the run reads it, and names the others).  `given`: the
    input as typed, for the ``plexity clean`` it names for pages."""
    from ..cleaning.files import PAGES, dataset_file

    others = other_inputs(folder, inputs) if others is None else others
    read = files_to_read(inputs)
    if not read or not all(name in others for name in read):
        return None
    message = f"no WARC files match {pattern} in {folder}"
    pages = sum(1 for name in read if others[name] == PAGES)
    if pages:  # (as a folder of them is told)
        message += (f" (it matches {pages} HTML or text file(s): plexity run reads WARC files; plexity clean "
                    f"{shlex.quote(given or input_path(folder, pattern))} --output-dir DIR cleans HTML and text "
                    f"files)")
    datasets = [f"{input_path(folder, name)}: {dataset_file(input_path(folder, name), '://' not in folder)}"
                for name in read if others[name] != PAGES]
    return f"{message}: {first_and_count(datasets)}" if datasets else message


def beside_lines(given: str, pages: int, datasets: list[str]) -> list[str]:
    """The lines naming the inputs a run leaves out beside its WARC files, with what reads them: `pages` HTML and
    text files (`plexity clean` of the input `given`), `datasets` (each "path: what it is ..."): of a folder, its
    files the WARC glob does not take; of a glob, its members that are another command's input (`other_inputs`)."""
    lines = []
    if pages:
        lines.append(f"plexity run: {pages} HTML or text file(s) beside them not read (plexity run reads WARC files; "
                     f"plexity clean {shlex.quote(given)} --output-dir DIR cleans them)")
    if datasets:
        lines.append(printable(f"plexity run: {len(datasets)} dataset file(s) beside them not read: "
                               f"{first_and_count(datasets)}"))
    return lines


def typed_folder(given: str, folder: str) -> str:
    """The folder of the input `given` (a file or a glob) as typed, for naming its files as the user knows them;
    `folder`, its resolved path (or URL), where it is a URL."""
    if "://" in given:
        return folder
    from ..cleaning.files import glob_folder
    from ..runtime.extras import local_path

    given = local_path(given)
    return str(glob_folder(given)) if globlib.has_magic(given) else str(Path(given).parent)


def no_warc_files_message(folder: str, pattern: str) -> str:
    """`plexity run` found no WARC file: say so, and point to `plexity clean` for HTML and text files."""
    from ..cleaning.files import left_out_by_glob

    message = f"no WARC files match {pattern} in {folder}"
    if pattern != WARC_GLOB and "://" not in folder:
        left_out = left_out_by_glob(folder, ("warc", "wacz"), "WARC file(s)")
        if left_out:
            return message + left_out
    misnamed = misnamed_warcs(folder)
    if misnamed:
        more = f" (and {len(misnamed) - 1} more so named)" if len(misnamed) > 1 else ""
        return f"{message}: {misnamed[0]}{more}"
    datasets = dataset_files(folder)
    if datasets:
        return f"{message}: {first_and_count(datasets)}"
    others = document_files(folder)
    if others:
        return message + (f" (it holds {others} HTML or text file(s): plexity run reads WARC files; "
                          f"plexity clean {shlex.quote(str(folder))} --output-dir DIR cleans HTML and text files)")
    if "://" in folder and pattern == WARC_GLOB:  # (a remote folder is not walked for ARCs or WACZs)
        return (message + f": give the folder of your .warc, .warc.gz or .warc.wet.gz files, or a quoted glob of them "
                          f"(ARC files, .arc.gz, by theirs: '{folder.rstrip('/')}/*.arc.gz'; WACZ files by theirs: "
                          f"'{folder.rstrip('/')}/*.wacz')")
    return message + ": give the folder of your .warc, .warc.gz or .warc.wet.gz files, or a quoted glob of them"


def empty_inputs(folder: str, inputs: list[str]) -> bool:
    """Whether every input the run would read is an empty file (``plexity run empty.warc.gz``): one stat each of a
    local folder's files, so the run stops before any task, as it stops for a dataset (a task read it, then the run
    said "no input could be read").  A remote folder's are left to its tasks: its listing gave no size here, and a
    request a file would be the tasks' own work."""
    import stat

    read = files_to_read(inputs)
    if not read or "://" in folder:
        return False
    for name in read:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size:  # (a FIFO's size is 0 too: the reader names it)
            return False
    return True


def why_no_record(f, name: str) -> str:
    """Why the WARC (or WACZ) file `f`, named `name`, gave no record, as the reader judged it."""
    from ..io.wacz_files import WaczFile, is_wacz
    from ..io.warc_files import WarcFile

    if not is_wacz(name):
        warc = WarcFile(f, name=name)
        for _ in warc:
            pass
        return warc.problem_detail or "no WARC record"
    wacz, whys = WaczFile(f, name), []
    for member in wacz:
        whys.append(f"{member.path}: {member.skip or why_no_record(member.fileobj, member.name)}")
    return wacz.problem_detail or "; ".join(whys)


def unreadable_inputs(folder: str, files: list[str], storage_options: dict | None = None, shown: int = 3) -> str:
    """Why each input (the first `shown`) gave no WARC record, in one line: as the reader judged it."""
    from datatrove.io import get_datafolder

    from ..cleaning.files import dataset_file
    from ..io.input_files import judged_compression, wat_file

    data = get_datafolder(data_folder(folder, storage_options))
    found = []
    for name in files[:shown]:
        why = (wat_file(name)  # (never opened by the reader)
               or dataset_file(name)  # (a JSONL of documents: a WARC reader calls it "a text file")
               or judged_compression(name, lambda: data.open(name, "rb", compression=None)))  # (as the reader judges)
        if why:
            found.append(f"{name}: {why}")
            continue
        try:
            with data.open(name, "rb", compression=None) as f:
                found.append(f"{name}: {why_no_record(f, name)}")
        except OSError as exc:
            found.append(f"{name}: {exc}")
    more = f"; and {len(files) - shown} more (the task logs name each)" if len(files) > shown else ""
    return "; ".join(found) + more


# A task's own CPU before its first page (its logs, stats, completion marker, its copy of the pipeline): ~0.19 s
# when each task started a process and an extraction process of its own; a worker now keeps both from task to task
# (1,000 files of 2 pages, one task each: 26 s of CPU, 177 s before; docs/performance.md).
TASK_START_SECONDS = 0.025
SMALL_FILES = 100  # files, one task each, from which a task's start is said to cost more than their pages
SMALL_FILE_BYTES = 1_000_000  # a file's mean size below which it is (~1.5 ms a 9 KB page: 0.025 s is ~150 kB of pages)
BYTES_PER_TASK = 64_000_000


def out_of_memory_note(kills_before: int | None) -> str | None:
    """What to say when the out-of-memory killer ended processes of this local run (`kills_before`: its cgroup's
    count as the run began): in a container of 200 MiB, two workers completed their tasks with 31 ordinary pages
    counted as memory_limit, exit 0, and nothing said it of the run but those counts; and a re-run given more memory
    read none of them again (their tasks had completed)."""
    from ..runtime.cgroups import oom_kills, out_of_memory

    ran_out = out_of_memory(kills_before)
    if ran_out is None:
        return None
    return (f"the kernel's out-of-memory killer ended {oom_kills() - kills_before} process(es) of this run: it ran "
            f"out of {ran_out} (the pages it stopped are counted as memory_limit); give the job more memory, or run "
            f"fewer workers (--workers), and --overwrite to read those pages again (a re-run redoes only the tasks "
            f"that did not complete)")


def lowered_ceiling_note(merged: list | None, local: bool) -> str | None:
    """What to say when pages were skipped at an extraction ceiling the job's memory lowered (`extraction_ceiling`):
    like the killer's pages, they are skips of tasks that completed, which a re-run given more memory does not read
    again (a 256 MiB container: the ceiling 128 MiB, the 14 MB page `memory_limit`, and nothing said how to get it)."""
    from ..datatrove.extractors import CEILING_LOWERED
    from ..datatrove.run_counts import step_stats

    extractor = step_stats(merged or [], "EXTRAC")
    if not extractor or not extractor.get(CEILING_LOWERED) or not extractor.get(MEMORY_LIMIT):
        return None
    more = "give the job more memory, or run fewer workers (--workers)" if local else \
        "give each task more memory (--mem-per-cpu-gb)"
    return (f"{extractor[MEMORY_LIMIT]:,} page(s) were skipped at an extraction memory ceiling lowered to fit this "
            f"job's memory (the tasks' logs say to what): {more}, and --overwrite to read those pages again (a re-run "
            f"redoes only the tasks that did not complete)")


def small_files_note(paths: list[str], workers: int) -> str | None:
    """What to give where one task per file (the default) spends more on the tasks' starts than on the files: 1,000
    WARC files of 2 pages ran in 51 s (26 s of CPU) as 1,000 tasks and in 3 s as 8 (2 workers; docs/performance.md)."""
    if len(paths) < SMALL_FILES:
        return None
    try:
        total = sum(os.path.getsize(path) for path in paths)
    except OSError:
        return None
    if total / len(paths) >= SMALL_FILE_BYTES:
        return None
    suggested = min(len(paths), max(4 * workers, -(-total // BYTES_PER_TASK)))
    return (f"{len(paths):,} WARC files of {total / len(paths) / 1e3:,.0f} kB on average, one task each (the "
            f"default): each task's start costs ~{TASK_START_SECONDS} s of CPU (its logs, stats and completion "
            f"marker), "
            f"~{len(paths) * TASK_START_SECONDS:,.0f} s of CPU in all, more than such files' pages; "
            f"--tasks {suggested} reads them in a fraction of the time (a run's tasks are fixed once it starts: "
            f"give it to a new --output-dir, or with --overwrite)")


def idle_tasks_note(tasks: int, files: int) -> str:
    """What more tasks than files do: nothing, each at the cost of a task's start (a task reads whole files; its
    "No files found" was said only in its own log)."""
    return (f"--tasks {tasks} for {files:,} WARC file(s): a task reads whole files, so {tasks - files:,} of the tasks "
            f"read nothing (each still ~{TASK_START_SECONDS} s of CPU to start) and a file is read by one core; "
            f"--tasks {files} does the same work, and a big file split into several reads on several cores")


def cmd_run(args: argparse.Namespace) -> int:
    from ..runtime.extras import require_executor, require_extra

    require_extra("datatrove", "plexity run")
    for name, (option, default, executors) in EXECUTOR_OPTIONS.items():
        if args.executor not in executors and getattr(args, name) != default:
            raise ValueError(f"{option} is an option of --executor {' and '.join(executors)}, and this run's "
                             f"executor is {args.executor}: give --executor {executors[0]}, or leave {option} out")
    if args.executor in ("slurm", "ray"):  # before anything is written or launched
        require_executor(args.executor, f"plexity run --executor {args.executor}")
    try:
        storage_options = json.loads(args.storage_options) if args.storage_options else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--storage-options is not JSON: {exc}") from None
    if storage_options is not None and not isinstance(storage_options, dict):
        raise ValueError("--storage-options must be a JSON object, e.g. '{\"anon\": true}'")
    if args.input.lower().startswith(("s3://", "s3a://")):  # (the listing's requests bounded as the tasks' are)
        from ..datatrove.remote_files import s3_options

        storage_options = s3_options(storage_options, args.remote_timeout)
    from ..extractors.sandbox import TimeLimitedExtractor
    from ..runtime.extras import is_url, local_path, without_password

    # (its extractor's import overlaps this process's of datatrove and of the model; `check_extraction` waits)
    TimeLimitedExtractor.start_aside(args.extractor, timeout=args.extract_timeout or 0,
                                     memory_limit=args.extract_memory)
    for option, folder in (("--output-dir", args.output_dir), ("--logging-dir", args.logging_dir)):
        if folder and is_url(folder):  # (a path made of it: ./s3:/bucket/out, on each node)
            raise ValueError(f"{option} {folder} is a URL: plexity run writes to a path, on a cluster one every node "
                             f"sees (a shared disk); datatrove's writers and logging_dir take URLs in a pipeline you "
                             f"build (docs/ray.md)")
    # (file:///data/out is local: it was written to ./file:/data/out)
    output_dir = Path(local_path(args.output_dir)).resolve()
    logging_dir = Path(local_path(args.logging_dir)).resolve() if args.logging_dir else output_dir / "logs"
    check_logging_dir(output_dir, logging_dir)
    folder, pattern = resolve_input(args.input, storage_options, args.remote_timeout)
    options = listing_options(folder, storage_options, args.remote_timeout)
    try:
        inputs = list_inputs(folder, pattern, options)
        if not inputs and folder.lower().startswith(("http://", "https://")):
            from fsspec.core import url_to_fs

            from ..datatrove.remote_files import raise_http_listing_error

            raise_http_listing_error(*url_to_fs(folder, **(options or {})))
    except Exception as exc:  # noqa: BLE001 - a remote side's answer (aiohttp's, botocore's errors are no OSError)
        # (s3fs's are OSErrors in botocore's words alone: "plexity run: error: The specified bucket does not exist";
        # aiohttp's, with no URL: "plexity run: error: [Errno 104] Connection reset by peer")
        if isinstance(exc, OSError) and not folder.lower().startswith(("s3://", "s3a://", "http://", "https://")):
            raise
        why = remote_problem(exc, folder, storage_options, args.remote_timeout)
        raise OSError(without_password(f"cannot list the input {folder}: {why}")) from exc
    if not inputs:
        print(printable(f"plexity run: error: {no_warc_files_message(folder, pattern)}"), file=sys.stderr)
        return USAGE_STATUS
    others = other_inputs(folder, inputs)  # (a glob's pages and datasets: no task's, named below)
    if datasets := only_datasets_message(folder, pattern, inputs, others, args.input):  # (a task read each as a WARC)
        print(printable(f"plexity run: error: {datasets}"), file=sys.stderr)
        return USAGE_STATUS
    inputs = [name for name in inputs if name not in others]
    if empty_inputs(folder, inputs):  # (as a dataset is stopped: a task read it, then the run said so)
        print(printable(f"plexity run: error: no input could be read: {unreadable_inputs(folder, inputs)}"),
              file=sys.stderr)
        return FAILED_STATUS
    if args.format == "warc" and (output_dir == Path(folder) or Path(folder) in output_dir.parents):
        # (its cleaned WARCs would be read as input by the next run, and change the run's files)
        raise ValueError(f"--output-dir {output_dir} is inside the input folder {folder}, where --format warc "
                         f"writes WARC files the next run would read as input: choose an output folder outside it")
    tasks = args.tasks or len(inputs)
    check_language_options(args)
    if args.other_languages == "drop":  # (a model that records no language: in the options' words)
        from ..scoring.multilingual import make_scorer

        check_language_options(args, make_scorer(args.model, language_check=True))
    pipeline = build_pipeline(args.input, output_dir, extractor=args.extractor, model=args.model,
                              threshold=args.threshold, method=args.method, fmt=args.format, annotate=args.annotate,
                              min_chars=args.min_chars, min_kept_fraction=args.min_kept_fraction,
                              other_languages=args.other_languages, max_document_bytes=args.max_document_bytes,
                              language_check=not args.no_language_check, extract_timeout=args.extract_timeout,
                              extract_memory=args.extract_memory, storage_options=storage_options,
                              wet_input=is_wet_input(inputs), remote_timeout=args.remote_timeout)
    executor = make_executor(pipeline, args.executor, tasks, str(logging_dir), workers=args.workers,
                             partition=args.partition, time_limit=args.time, cpus_per_task=args.cpus_per_task,
                             mem_per_cpu_gb=args.mem_per_cpu_gb, venv=args.venv, job_name=args.job_name,
                             node_wait=args.node_wait)
    in_this_process = args.executor == "local" and local_workers(tasks, args.workers) == 1
    check_extraction(args.extractor, args.extract_timeout, args.extract_memory,  # (before anything is written)
                     set_aside=in_this_process)
    if in_this_process:  # (the tasks run here, one after another: one extraction child for them all)
        TimeLimitedExtractor.keep_between_uses()
    # The logging folder is owned too: another run given it as its --logging-dir would take this run's
    # completion markers for its own (and --overwrite delete them).
    apart = output_dir not in logging_dir.parents  # (then it is the logging folder that holds the results)
    with own_output_folder(output_dir), own_output_folder(logging_dir, "--logging-dir"):
        # Whatever the executor, before --overwrite deletes what a Slurm job launched into these folders writes, and
        # its record (a local run with --overwrite deleted the files of a job still running, its tasks then marking
        # their old documents complete in the new run's folder)
        from datatrove.io import get_datafolder

        from ..datatrove.slurm_executor import check_no_slurm_job_queued
        from ..errors import JobStillQueued

        try:  # this run's logging folder, DIR/logs and that of the run that last wrote into DIR (another one)
            for logs in sorted({logging_dir, output_dir / "logs", recorded_logging_dir(output_dir)} - {None}):
                check_no_slurm_job_queued(get_datafolder(str(logs)))  # (not `folder`: the input's, read below)
        except JobStillQueued as exc:
            print(printable(f"plexity run: error: {exc}"), file=sys.stderr)
            return USAGE_STATUS
        if args.overwrite:
            delete_earlier_logs(output_dir, logging_dir)
            delete_results(output_dir, logging_dir, overwrite=True)
        stop = check_settings_or_stop(executor, logging_dir if apart else output_dir,
                                      recorded_logging_dir(output_dir))
        if stop:
            print(printable(f"plexity run: error: {stop}"), file=sys.stderr)
            return USAGE_STATUS
        with contextlib.suppress(OSError):  # (a full disk: the run itself says so, with its tasks' count)
            (output_dir / LOGGING_DIR_RECORD).write_text(f"{logging_dir}\n{output_dir}\n", encoding="utf-8")
        done_before = completed_tasks(logging_dir)
        print(f"plexity run: {inputs_line(inputs)}, {tasks} tasks, {done_before} already completed "
              f"(executor {args.executor})")
        if tasks > len(inputs) and done_before < tasks:
            print(f"plexity run: note: {idle_tasks_note(tasks, len(inputs))}", file=sys.stderr)
        if args.executor == "local" and done_before < tasks:
            note = workers_memory_note(tasks, args.workers)
            if note:
                kind = "warning" if args.workers else "note"
                print(printable(f"plexity run: {kind}: {note}"), file=sys.stderr)
        if args.tasks is None and args.executor == "local" and done_before < tasks and not is_url(folder):
            note = small_files_note([os.path.join(folder, name) for name in files_to_read(inputs)],
                                    local_workers(tasks, args.workers))
            if note:
                print(f"plexity run: note: {note}", file=sys.stderr)
        if args.executor == "slurm" and (earlier := executor.last_job_failures()):  # (what a re-run redoes, and why)
            job, failures = earlier
            listed = "; ".join(f"task {rank}: {why}" for rank, why in sorted(failures.items()))
            print(printable(f"plexity run: Slurm job {job}, launched into {logging_dir} before, did not complete "
                            f"{len(failures)} task(s) ({listed}): this run submits them again"), file=sys.stderr)
        unlisted: list = []
        if Path(local_path(args.input)).is_dir():  # (said, not lost unsaid: its files the WARC glob does not take)
            pages = document_files(args.input, unlisted)
            datasets = dataset_files(args.input, None, outside=(output_dir, logging_dir))
        else:  # (a glob's, or a file's: what it took that is not a crawl, left out of the tasks)
            from ..cleaning.files import PAGES, dataset_file

            typed = typed_folder(args.input, folder)
            pages = sum(1 for kind in others.values() if kind == PAGES)
            datasets = [f"{input_path(typed, name)}: {dataset_file(input_path(folder, name), not is_url(folder))}"
                        for name, kind in others.items() if kind != PAGES]
        for line in beside_lines(args.input, pages, datasets):
            print(line)
        for folder, exc in unlisted:  # (a folder this user may not read: passed over unsaid)
            print(printable(f"plexity run: warning: {unlisted_folder_message(folder, exc, 'the WARC files')}"),
                  file=sys.stderr)
        failed = None
        started = time.perf_counter()
        from ..runtime.cgroups import oom_kills

        kills_before = oom_kills() if args.executor == "local" else None  # (see `out_of_memory_note`)
        with ray_connection(args.ray_address) if args.executor == "ray" else contextlib.nullcontext() as connected:
            if connected:
                print(f"plexity run: {connected}", flush=True)
                if executor.get_incomplete_ranks(range(executor.world_size)):
                    from ..datatrove.ray_executor import check_task_fits

                    try:  # (a usage error, not "N task(s) did not complete ...; re-run the same command")
                        check_task_fits(executor.cpus_per_task, executor.mem_per_cpu_gb * executor.cpus_per_task)
                    except ValueError as exc:
                        print(printable(f"plexity run: error: {exc}"), file=sys.stderr)
                        return USAGE_STATUS
            try:
                executor.run()
            except Exception as exc:  # a task failed; the completed ones keep their markers
                failed = exc
    if args.executor == "slurm":
        job_id = getattr(executor, "job_id", None)
        if failed is not None and job_id in (None, -1):  # sbatch refused the job (no slurm.conf, a wrong partition ...)
            status = getattr(failed, "returncode", None)
            why = f"sbatch exited with status {status} (its own messages are above)" if status is not None else \
                f"{type(failed).__name__}: {failed}"
            print(f"plexity run: error: Slurm did not take the job: {why}; nothing was launched", file=sys.stderr)
            return USAGE_STATUS
        if job_id in (None, -1):
            print("all tasks were already completed: nothing launched")
        else:
            print(f"launched Slurm array job {job_id}; slurm logs in {logging_dir / 'slurm_logs'}")
            if not args.wait:
                print(f"when the job has run: cleaned documents in {output_dir / 'documents'}, dropped ones (if any) "
                      f"in {output_dir / 'excluded'}, merged stats in {logging_dir / 'stats.json'} (written when every "
                      f"task succeeded)")
                return 0
            try:
                wait_for_slurm([str(job_id)])
            except KeyboardInterrupt:  # (the job goes on: "the same command runs the others" was refused while it ran)
                print(f"plexity run: interrupted: stopped waiting; Slurm job {job_id} goes on (squeue -j {job_id}; "
                      f"scancel {job_id} cancels it); once it has ended, the same command runs the tasks it did not "
                      f"complete", file=sys.stderr)
                return 130
            if failed is None and (failures := executor.task_failures()):  # (each named with why, as a local run)
                from ..errors import TasksFailed

                failed = TasksFailed(failures)
    from ..errors import LoggingFolderNotShared

    if isinstance(failed, LoggingFolderNotShared):  # (running it again would do the same: the folders must change)
        print(printable(f"plexity run: error: {failed}"), file=sys.stderr)
        return FAILED_STATUS
    elapsed = time.perf_counter() - started
    done = completed_tasks(logging_dir)
    disk_full = _disk_full(failed)
    merged = None
    try:
        merged = merge_stats(logging_dir)
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        disk_full = disk_full or exc
    if disk_full is not None:  # one line: the tasks not marked complete are redone by a re-run
        print(f"plexity run: error: {disk_full_message(disk_full)} ({tasks - done} of {tasks} task(s) did not "
              f"complete; their outputs were not left under their final names)", file=sys.stderr)
        return DISK_FULL_STATUS
    print(summary(merged, annotate=args.annotate))
    print(f"{done}/{tasks} tasks completed ({done - done_before} in this run, {elapsed:.1f} s)")
    print(output_paths(output_dir, logging_dir, merged))
    if args.executor == "local" and (note := out_of_memory_note(kills_before)):
        print(printable(f"plexity run: warning: {note}"), file=sys.stderr)
    elif note := lowered_ceiling_note(merged, args.executor == "local"):
        print(printable(f"plexity run: warning: {note}"), file=sys.stderr)
    if failed is not None or done < tasks:
        from ..errors import PROCESS_LIMIT_WHY, TasksFailed, out_of_processes

        # (TasksFailed's own words are this line's: wrapped in it, they said "did not complete" twice)
        why = failed.listed if isinstance(failed, TasksFailed) else f"{type(failed).__name__}: {failed}" if failed \
            else ""
        if failed is not None and out_of_processes(failed):  # (a container's pids.max: what to raise)
            why = f"{why}: {PROCESS_LIMIT_WHY}"
        print(printable(f"plexity run: {tasks - done} task(s) did not complete{f' ({why})' if why else ''}; "
                        f"re-run the same command to run only those"), file=sys.stderr)
        return FAILED_STATUS
    if merged and nothing_read(merged):  # nothing usable is no success
        removed = ""
        if done_before == 0:  # (its markers would hold the folder for these settings: a corrected command is refused)
            with contextlib.suppress(OSError), own_output_folder(output_dir), \
                    own_output_folder(logging_dir, "--logging-dir"):
                delete_results(output_dir, logging_dir)
                removed = f" (what the run wrote of it was removed: {output_dir} takes another command)"
        print(f"plexity run: error: no input could be read: {unreadable_inputs(folder, inputs, storage_options)}"
              f"{removed}", file=sys.stderr)
        return FAILED_STATUS
    return 0


def check_extraction(extractor: str, timeout: float | None, memory: int | str | None,
                     set_aside: bool = False) -> None:
    """Start an extraction child as the tasks will, once, before any task is launched (or take the one
    `cmd_run` started at its start, and wait for it): an installation that cannot start one stops the run
    here in one line (`ExtractorCannotStart`, exit 3), instead of failing every task (or counting every page)
    over it.

    Args:
        extractor: the extractor's name (--extractor).
        timeout: seconds per document (--extract-timeout; 0 or None: none).
        memory: the memory ceiling (--extract-memory; None: the default).
        set_aside: the tasks run in this process (a local run with one worker): the child is kept, ready,
            for the first task to take (`TimeLimitedExtractor.close`), instead of it starting another.
    """
    from ..extractors.sandbox import TimeLimitedExtractor

    limited = TimeLimitedExtractor(extractor, timeout=timeout or 0, memory_limit=memory)
    ready = False
    try:
        limited.warm_up()
        ready = True
    finally:
        limited.close(set_aside=ready and set_aside)


def _disk_full(failed: BaseException | None) -> BaseException | None:
    """The full-disk error that stopped the run (in this process, or in a task's), if any."""
    from ..errors import DISK_FULL_WHY, TasksFailed

    if failed is None:
        return None
    if is_disk_full(failed):
        return failed
    # (a Slurm task's why starts with its job's name for it: "Slurm task 4127_0: no space left on device")
    if isinstance(failed, TasksFailed) and any(why.endswith(DISK_FULL_WHY) for why in failed.failures.values()):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return None


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="clean WARC files with a datatrove pipeline (local, Slurm or Ray), resumable",
        description="WarcHtmlReader -> extractor -> PerplexitySentenceFilter -> writer, as a datatrove "
                    "pipeline. Re-running the same command resumes: completed tasks are skipped.")
    p.add_argument("input", metavar="INPUT_GLOB_OR_DIR",
                   help="a directory (every *.warc / *.warc.gz below it, WET files *.warc.wet.gz too), a WARC file, "
                        "or a glob (quote it); "
                        "local or an fsspec URL (s3://bucket/crawl/, hf://datasets/..., https://...)")
    p.add_argument("--output-dir", "-o", required=True,
                   help="cleaned documents go to DIR/documents, dropped ones to DIR/excluded")
    add_model_args(p)
    p.add_argument("--method", choices=METHODS, default=None,
                   help="default: trim after learned, dense, auto, trafilatura and fast, regions after tags, region "
                        "after none (as plexity clean)")
    p.add_argument("--extractor", choices=EXTRACTORS, default=DEFAULT_EXTRACTOR,
                   help="HTML to text: learned (default: blocks kept by a small learned forest), dense (the "
                        "page's declared or densest item, one lexbor parse), auto (trafilatura, else fast where "
                        "trafilatura left out part of the page), trafilatura, fast (resiliparse), tags, or none")
    p.add_argument("--format", choices=FORMATS, default="jsonl",
                   help="output format (default: jsonl); warc writes .warc.gz files, .warc.wet.gz when every input "
                        "file is a WET file")
    p.add_argument("--annotate", action="store_true",
                   help='remove nothing; wrap would-be-removed sentences in <ppl score="...">')
    p.add_argument("--min-chars", type=int, default=DEFAULT_MIN_CHARS,
                   help=f"drop documents with fewer characters left (default: {DEFAULT_MIN_CHARS})")
    p.add_argument("--min-kept-fraction", type=float, default=0.0,
                   help="drop documents that keep less than this share of their text (default: 0)")
    p.add_argument("--max-document-bytes", type=parse_size, default=MAX_DOCUMENT_BYTES,
                   help=f"skip a larger WARC payload, decompressed, as too_large (default: "
                        f"{MAX_DOCUMENT_BYTES // 10**6} MB, as plexity clean)")
    p.add_argument("--extract-timeout", type=float, default=DEFAULT_EXTRACT_TIMEOUT, metavar="SECONDS",
                   help=f"skip a document whose extraction takes longer, counted as timeout "
                        f"(default: {DEFAULT_EXTRACT_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--extract-memory", type=parse_memory, default=None, metavar="SIZE",
                   help=f"skip a document whose extraction process holds more memory, counted as memory_limit "
                        f"(default: ${EXTRACT_MEMORY_ENV}, else 768MiB, less where the job's memory holds less; "
                        f"0: no ceiling)")
    p.add_argument("--other-languages", choices=("keep", "drop"), default="keep",
                   help="documents in another language than the model's: keep unchanged or drop")
    p.add_argument("--no-language-check", action="store_true",
                   help="filter every document with the model, whatever its language")
    p.add_argument("--storage-options", default=None, metavar="JSON",
                   help="options of the input URL's fsspec filesystem, e.g. '{\"anon\": true}' (S3), "
                        "'{\"headers\": {\"Authorization\": \"Bearer ...\"}}' (HTTP); credentials: docs/ray.md")
    p.add_argument("--remote-timeout", type=float, default=DEFAULT_REMOTE_TIMEOUT, metavar="SECONDS",
                   help=f"an http(s):// input whose server sends no byte for this long fails its task, naming the URL "
                        f"and the stall (default: {DEFAULT_REMOTE_TIMEOUT:g}; 0: no limit; no limit on a whole file); "
                        f"an s3:// one's after about as long, retries included, unless --storage-options' "
                        f"config_kwargs set read_timeout, connect_timeout or retries")
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local: worker processes on this machine (default); slurm: an array job (needs --partition); "
                        "ray: tasks on a Ray cluster (--ray-address; default: a local Ray for the run)")
    p.add_argument("--tasks", type=positive_int, default=None, help="number of tasks (default: one per input file)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="tasks running at once (default: local: the CPUs this process may use, a container's CPU "
                        "limit included, and no more than its memory holds, one per "
                        f"{MEMORY_PER_WORKER >> 20} MiB of a container's limit or the machine's RAM; slurm, ray: "
                        f"no limit)")
    p.add_argument("--logging-dir", default=None, help="datatrove logging dir (default: DIR/logs)")
    p.add_argument("--overwrite", action="store_true",
                   help="delete the results of an earlier run into these folders (DIR/documents, DIR/excluded, "
                        "the completions, stats and logs of the logging dir, of DIR/logs and of the logging dir of "
                        "the run that last wrote into DIR) and start over; without it, "
                        "a re-run with the same settings resumes and one with other settings stops")
    cluster = p.add_argument_group("slurm and ray")
    cluster.add_argument("--cpus-per-task", type=positive_int, default=EXECUTOR_OPTIONS["cpus_per_task"][1],
                         help="CPUs each task reserves (default: %(default)s)")
    cluster.add_argument("--mem-per-cpu-gb", type=positive_float, default=EXECUTOR_OPTIONS["mem_per_cpu_gb"][1],
                         help="memory each task reserves per CPU, GB, may be fractional (default: %(default)s; a "
                              "task of the default pipeline peaks at about 250 MiB)")
    ray_group = p.add_argument_group("ray")
    ray_group.add_argument("--ray-address", default=None,
                           help="the Ray cluster to run on: auto (started with `ray start` on this machine), "
                                "HOST:6379 or ray://HOST:10001 (default: $RAY_ADDRESS, else a local Ray for the run)")
    ray_group.add_argument("--node-wait", type=wait_seconds, default=None, metavar="SECONDS",
                           help="when every node that could run a task has left mid-run, how long the run waits for "
                                "one to join before it stops, naming the tasks (default: 30; give the time your "
                                "autoscaler takes to add a node)")
    slurm = p.add_argument_group("slurm")
    slurm.add_argument("--partition", help="Slurm partition (required with --executor slurm)")
    slurm.add_argument("--time", default=EXECUTOR_OPTIONS["time"][1], help="time limit per task (default: %(default)s)")
    slurm.add_argument("--venv", default=None,
                       help="virtualenv (dir or its bin/activate) the jobs activate (default: the running one)")
    slurm.add_argument("--job-name", default=EXECUTOR_OPTIONS["job_name"][1],
                       help="the Slurm job's name (default: %(default)s)")
    slurm.add_argument("--wait", action="store_true", help="wait for the Slurm job, then print the stats")
    p.set_defaults(func=cmd_run)
