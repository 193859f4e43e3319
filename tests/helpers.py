"""What several test modules share: the sample WARC, running `plexity`, splitting WARCs, reading
what a run wrote, and a count of the Python lines a call executes (work measured without a clock)."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from plexity_plugins.io.inputs import WarcFile, http_header, is_html_type, open_input

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
# The error of a page nested past libxml2's huge limit, in libxml2's own words: 2.14 and later (and our own check
# under 2.12, which has no limit) say 2048, 2.13 (lxml 5.4's wheels) counts one level more and says 2049.
PAST_DEPTH_LIMIT = r"HTML parser limit: Excessive depth in document: 204[89]\b"


def split_warc(source: Path, out_dir: Path, shards: int) -> list[str]:
    """Deal the response records of `source` round-robin into `shards` WARC files; their URIs."""
    out_dir.mkdir(parents=True, exist_ok=True)
    handles = [open(out_dir / f"shard-{i}.warc.gz", "wb") for i in range(shards)]
    writers = [WARCWriter(h, gzip=True) for h in handles]
    uris = []
    with open(source, "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response":
                writers[len(uris) % shards].write_record(record)
                uris.append(record.rec_headers.get_header("WARC-Target-URI"))
    for h in handles:
        h.close()
    return uris


def warc_record_types(path: Path) -> list[str]:
    """The types of the records of the WARC file at `path`, in order."""
    with open(path, "rb") as f:
        return [record.rec_type for record in ArchiveIterator(f)]


def is_html_response(record) -> bool:
    """A WARC response record (warcio's) that declares HTML (Content-Type, else
    WARC-Identified-Payload-Type), as `plexity_plugins.io.payload_sniffing` judges a declared type."""
    return record.rec_type == "response" and is_html_type(
        http_header(record, "Content-Type"), record.rec_headers.get_header("WARC-Identified-Payload-Type"))


def html_uris(warc_dir: Path) -> list[str]:
    """URIs of the HTML responses in the WARC files of a directory."""
    uris = []
    for path in sorted(warc_dir.glob("*.warc.gz")):
        with open(path, "rb") as f:
            uris += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f) if is_html_response(r)]
    return uris


def read_jsonl_dir(directory: Path) -> list[dict]:
    docs = []
    for path in sorted(directory.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            docs += [json.loads(line) for line in f]
    return docs


def read_warc_dir(directory: Path) -> dict[str, str]:
    """{uri: payload text} of the response records written by WarcResponseWriter."""
    docs = {}
    for path in sorted(directory.glob("*.warc.gz")):
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type == "response":
                    docs[record.rec_headers.get_header("WARC-Target-URI")] = \
                        record.content_stream().read().decode("utf-8")
    return docs


def run_plexity(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `plexity ...`; output through files and waiting for the process itself, because
    datatrove's extractor subprocesses may outlive it for a moment holding inherited pipes."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.run([*PLEXITY, *args], stdout=out, stderr=err, text=True, timeout=timeout, cwd=REPO)
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())


def sample_through_run_and_clean(tmp_path: Path, *options: str) -> tuple[list[str], dict, float]:
    """The sample WARC through `plexity run` (one local worker) and `plexity clean`, with `options`:
    the run's step names, `plexity clean`'s stats, and the share of the sample's article
    paragraphs (examples/sample_truth.json) found in the run's texts (every page read)."""
    run = run_plexity("run", str(SAMPLE), "--output-dir", str(tmp_path / "run"), "--executor", "local",
                      "--workers", "1", *options)
    assert run.returncode == 0, run.stderr[-3000:]
    steps = [step["name"] for step in json.loads((tmp_path / "run" / "logs" / "stats.json").read_text())]
    ran = {}
    for path in (tmp_path / "run" / "documents").glob("*.jsonl*"):
        with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as f:
            ran.update((doc["metadata"]["url"], doc["text"]) for doc in map(json.loads, f))
    clean = run_plexity("clean", str(SAMPLE), "--output-dir", str(tmp_path / "clean"), "-q", *options)
    assert clean.returncode == 0, clean.stderr[-3000:]
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    truth = json.loads((REPO / "examples" / "sample_truth.json").read_text())
    article = [p[-40:] in ran[uri] for uri in ran for p in truth[uri]["article"]]
    assert len(ran) >= 10
    return steps, stats, sum(article) / len(article)


def completions(logging_dir: Path) -> list[str]:
    directory = logging_dir / "completions"
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def run_step_stats(out: Path, extractor: str = "HTML tags") -> tuple[dict, dict, dict]:
    """The merged counters of `plexity run`'s reader, extractor (its step's name holds `extractor`)
    and filter steps."""
    merged = json.loads((out / "logs" / "stats.json").read_text())
    step = {s["name"]: {k: v["total"] if isinstance(v, dict) else v for k, v in s["stats"].items()} for s in merged}
    return tuple(next(v for k, v in step.items() if part in k) for part in ("WARC HTML", extractor, "Perplexity"))


def iter_warc_html(path: Path) -> Iterator[tuple[str, bytes, str | None]]:
    """(uri, body, content type) of every HTML response in a WARC file (as `plexity clean` reads them)."""
    with open_input(path) as src:
        for record in WarcFile(src):
            if record.payload is not None:
                yield record.uri, record.payload, record.content_type


def command_line(process) -> list[str]:
    """A `psutil.Process`'s command line, or [] once it has ended: a process can end (or be left a zombie, whose
    command line Linux no longer shows) between the listing that found it and this look at it."""
    import psutil

    try:
        return process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # (psutil.ZombieProcess is a NoSuchProcess)
        return []


def extraction_children() -> set[int]:
    """The extraction processes this process has started (`python -m plexity_plugins.extractors.sandbox`) and
    that still run (a child another test left unreaped, a zombie, is none)."""
    import psutil

    return {child.pid for child in psutil.Process().children()
            if "plexity_plugins.extractors.sandbox" in " ".join(command_line(child))}


def executed_lines(function, *args, **kwargs) -> int:
    """How many lines of Python `function(*args, **kwargs)` executes (``sys.settrace``'s line
    events): the work a call does, counted, where a time would depend on the machine."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return trace

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        function(*args, **kwargs)
    finally:
        sys.settrace(old)
    return count


class Hung(BaseException):
    """Raised by `within` (a BaseException: the reader's own handlers must not count it as damage)."""


@contextlib.contextmanager
def within(seconds: int):
    """Raise `Hung` in the block still running after `seconds` (SIGALRM: the main thread only)."""
    def hung(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    started = time.monotonic()
    # (the alarm is the suite's time limit for the test too, pytest-timeout's: its time left is set again after)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.01))


# -- KenLM tools that take long: a real process to signal ----------------------------------------------------

def children(pid: int) -> list[int]:
    """The processes `pid` started, less multiprocessing's resource tracker: on Python 3.14, whose default start
    method is forkserver, a multiprocessing lock (tqdm makes one) starts it, a child beside the work's (lmplz)."""
    found = [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
             for child in (task / "children").read_text().split()]
    return [child for child in found if b"multiprocessing.resource_tracker" not in _cmdline(child)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # (ended meanwhile)
        return b""


def slow_kenlm_tools(tmp_path: Path) -> Path:
    """A folder of KenLM tools (for PLEXITY_KENLM_BIN) whose lmplz takes long: a real process to signal, where the
    real lmplz is done in a second on the test's corpus."""
    tools = tmp_path / "kenlm"
    tools.mkdir()
    (tools / "lmplz").write_text("#!/bin/sh\nexec sleep 300\n")
    (tools / "lmplz").chmod(0o755)
    (tools / "build_binary").write_text("#!/bin/sh\nexit 1\n")
    (tools / "build_binary").chmod(0o755)
    return tools


@contextlib.contextmanager
def other_user(prefix: str = "plx") -> Iterator[callable]:
    """A new user who is not root, made for the block (``useradd -m``) and removed after (``userdel -r``); yields
    ``run(argv, env=..., cwd=...)``, which runs `argv` as that user with exactly `env` (as ``env -i`` does) and
    returns the completed process (bytes).  This interpreter, its virtual environment or this checkout may live under
    a folder other users cannot enter (pyenv's, or a clone, under a 0700 /root): then the command runs in a mount
    namespace of its own where each such folder is a traversable one holding only the trees the command needs
    (``unshare -m``), the machine's folders untouched.  Only root can do this: callers skip when not root."""
    import os
    import shutil

    name = f"{prefix}{os.getpid() % 100000}"
    subprocess.run(["useradd", "-m", name], check=True, capture_output=True)
    stages: list[Path] = []
    try:
        needed = {Path(sys.executable).absolute(), Path(os.path.realpath(sys.executable)), Path(sys.prefix),
                  Path(sys.base_prefix), REPO}
        children: dict[Path, set[str]] = {}  # a folder others cannot enter -> its children on the needed paths
        for path in needed:
            blocked = next((p for p in reversed(path.parents) if p != Path("/") and not os.stat(p).st_mode & 0o001),
                           None)
            if blocked is not None:
                children.setdefault(blocked, set()).add(path.relative_to(blocked).parts[0])
        wrap: list[str] = []
        if children:  # (mirror: each blocked folder's needed children bind-mounted into a stage laid over it)
            mounts, arguments = [], []
            for blocked, names in sorted(children.items()):
                stage = Path(tempfile.mkdtemp(prefix="plexity-user-root-"))
                stages.append(stage)
                stage.chmod(0o755)
                for child in sorted(names):
                    (stage / child).mkdir()
                    arguments += [str(blocked / child), str(stage / child)]
                    mounts.append(f'mount --bind "${{{len(arguments) - 1}}}" "${{{len(arguments)}}}"')
                arguments += [str(stage), str(blocked)]
                mounts.append(f'mount --rbind "${{{len(arguments) - 1}}}" "${{{len(arguments)}}}"')
            script = " && ".join(mounts) + f" && shift {len(arguments)} && exec \"$@\""
            wrap = ["unshare", "-m", "sh", "-c", script, "sh", *arguments]

        def run(argv, env: dict | None = None, cwd: str | Path = "/", **kwargs) -> subprocess.CompletedProcess:
            command = [*wrap, "runuser", "-u", name, "--", "env", "-i",
                       *(f"{k}={v}" for k, v in (env or {}).items()), *map(str, argv)]
            return subprocess.run(command, capture_output=True, timeout=120, cwd=cwd, **kwargs)

        yield run
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True)
        for stage in stages:
            shutil.rmtree(stage, ignore_errors=True)


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A test server's handler: HTTP/1.1, no log lines, HEAD and GET answered by ``_answer(body)``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self._answer(body=False)

    def do_GET(self):
        self._answer(body=True)

    def _answer(self, body: bool):
        raise NotImplementedError


@contextlib.contextmanager
def http_server(handler) -> Iterator[http.server.ThreadingHTTPServer]:
    """A threading HTTP server of `handler` on 127.0.0.1 (a free port), serving until the block ends."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def controller_folder(controller: str) -> tuple[Path, int]:
    """This process's cgroup of `controller` (``memory``, ``pids``) and its version; skips the test, naming why,
    where a test cannot make a cgroup there."""
    if os.geteuid() != 0:
        pytest.skip(f"a {controller} limit is a cgroup the test makes: that needs root")
    memberships = [line.rstrip("\n").split(":", 2) for line in open("/proc/self/cgroup")]
    mounts = [line.split() for line in open("/proc/self/mountinfo")]
    for fields in mounts:
        if fields[fields.index("-") + 1] == "cgroup" and controller in fields[-1].split(","):
            path = next(p for _, c, p in memberships if controller in c.split(","))
            return Path(fields[4]) / path.lstrip("/"), 1
    for fields in mounts:
        if fields[fields.index("-") + 1] == "cgroup2":
            folder = Path(fields[4]) / next(p for h, _, p in memberships if h == "0").lstrip("/")
            if controller in (folder / "cgroup.subtree_control").read_text().split():
                return folder, 2
    pytest.skip(f"no cgroup with the {controller} controller for this process's children here (cgroup v1, or v2 "
                f"with +{controller} in cgroup.subtree_control)")


def cgroup_oom_kills(folder: Path) -> int:
    """How many processes of cgroup `folder` the out-of-memory killer has ended (v1 or v2)."""
    for name in ("memory.oom_control", "memory.events"):
        if (folder / name).exists():
            for line in (folder / name).read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    return 0


def plexity_in(folder: Path | list[Path], *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``plexity ARGS`` run in cgroup `folder` (or in each of several, of other controllers): it moves itself there
    before Python starts.  `env`: variables set (None: unset)."""
    return python_in(folder, "-m", "plexity_plugins", *args, env=env)


def python_in(folder: Path | list[Path], *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` (this interpreter) run in cgroup `folder`, as `plexity_in`."""
    moves = " && ".join(f'echo $$ > "{f}/cgroup.procs"' for f in (folder if isinstance(folder, list) else [folder]))
    command = ["sh", "-c", f'{moves} && exec "$@"', "sh", sys.executable, *args]
    environment = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    environment = {name: value for name, value in environment.items() if value is not None}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)


@contextlib.contextmanager
def private_slurm(memory: str = ""):
    """`slurm_cluster`'s private Slurm, SLURM_CONF naming it (and the one it named before, after); `memory`
    "enforce": one that holds each job to its --mem (scripts/slurm.sh, PLEXITY_SLURM_MEMORY).  Slurm that cannot
    start is a failure, not a skip (scripts/ci/60-slurm.sh installs it)."""
    import shutil

    # (outside pytest's 0700 temporary directories: munged, running as its own user, must reach
    # its socket there)
    directory = tempfile.mkdtemp(prefix="plexity-slurm-")
    os.chmod(directory, 0o755)
    env = {**os.environ, "PLEXITY_SLURM_DIR": directory, "PLEXITY_SLURM_MEMORY": memory}
    script = str(REPO / "scripts" / "slurm.sh")
    previous = os.environ.get("SLURM_CONF")
    try:
        result = subprocess.run(["bash", script, "start"], capture_output=True, text=True, timeout=120, env=env)
        assert result.returncode == 0, f"could not start Slurm: {result.stdout}{result.stderr}"
        os.environ["SLURM_CONF"] = os.path.join(directory, "slurm.conf")
        yield "debug"
    finally:
        subprocess.run(["bash", script, "stop"], capture_output=True, text=True, timeout=60, env=env)
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        shutil.rmtree(directory, ignore_errors=True)


def wait_for_slurm_jobs(name: str, timeout: float = 240) -> None:
    """Wait until no Slurm job called `name` is pending or running (the Slurm the environment's SLURM_CONF names)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i %T"], capture_output=True, text=True).stdout
        if not out.strip():
            return
        time.sleep(0.2)  # (squeue is quick: a job that ends is seen within a fifth of a second)
    raise AssertionError(f"Slurm jobs {name} still queued after {timeout} s:\n{out}")


# -- datatrove: documents labelled with a language, filtered by the default step ----------------------------------

# A dataset of one article (a sentence of prose and one of junk) under each label of argv[2] (JSON), filtered by
# PerplexitySentenceFilter() under datatrove's LocalPipelineExecutor into argv[1]; prints the filter's counts of
# passed-through documents and of labels read as none, and each document's verdict.
LABELLED_DOCUMENTS_RUN = '''
import json, sys
from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import PerplexitySentenceFilter

article = ("The council approved the budget for the new library on Tuesday after a long debate about school "
           "funding.\\nZxq vbnm qwpo lkjh ggfd trew.")
if __name__ == "__main__":
    out, labels = sys.argv[1], json.loads(sys.argv[2])
    LocalPipelineExecutor(pipeline=[
        [Document(text=article, id=label, metadata={"language": label}) for label in labels],
        PerplexitySentenceFilter(),
        JsonlWriter(f"{out}/docs", compression=None),
    ], tasks=1, logging_dir=f"{out}/logs").run()
    with open(f"{out}/logs/stats.json") as f:
        stats = next(step["stats"] for step in json.load(f) if "Perplexity" in step["name"])
    with open(f"{out}/docs/00000.jsonl") as f:
        docs = {row["id"]: row["metadata"] for row in map(json.loads, f)}
    print(json.dumps({"stats": {key: value for key, value in stats.items()
                                if key.startswith(("passthrough", "language_label"))},
                      "verdicts": {key: [meta["plexity_verdict"], meta["plexity_passthrough"]]
                                   for key, meta in docs.items()}}))
'''


def labelled_documents_run(out: Path, labels: list[str]) -> dict:
    """`LABELLED_DOCUMENTS_RUN` of `labels` into `out`: {"stats": ..., "verdicts": {label: [verdict, passthrough]}}."""
    done = subprocess.run([sys.executable, "-c", LABELLED_DOCUMENTS_RUN, str(out), json.dumps(labels)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
