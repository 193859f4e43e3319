"""A time limit and a memory ceiling per document for extraction, the same in every front end.

A hostile page can keep an extractor busy for minutes (14 MB of sibling ``<span>``s: 216 s
in trafilatura) inside C code that no Python-level timeout interrupts, and a thread cannot
be killed.  So `TimeLimitedExtractor` runs the extractor in a child process of its own and
kills it when a document takes longer than the limit: the caller gets `ExtractionTimeout` (an
`ExtractionError`: a counted skip, like any unextractable page) and the next document gets
a fresh child.  A page can also take gigabytes (a million sibling ``<span>``s grew a child to
1.4 GB in 30 s; 45 MB of them to 4.2 GB), so while it waits the parent looks at the child's
resident memory (`resident_memory`, its RSS) every 20 ms and kills it past the ceiling:
`ExtractionMemoryLimit`, counted as ``memory_limit``.  (Not ``RLIMIT_AS``: it counts address
space, which the imports' mappings inflate by ~150 MB, and a failed allocation inside lexbor or
libxml2 is not sure to end as an exception.)
``plexity run``'s extractor steps use the same children (`plexity_plugins.datatrove.extractors`).

The children are new Python processes (never forked from a process that runs threads: Scrapy's
reactor, a web server), import the extractor once and then serve documents one at a time.  Up
to ``processes`` of them serve several calling threads at once.
"""

from __future__ import annotations

if __name__ == "__main__":  # an extraction child: Ctrl-C, which a terminal sends to its whole process group,
    import signal           # is the parent's to handle (the child ends with it), not a traceback of the child's

    signal.signal(signal.SIGINT, signal.SIG_IGN)

import atexit
import errno
import fcntl
import mmap
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Callable

from ..errors import (PROCESS_LIMIT_WHY, ExtractionError, ExtractionMemoryLimit, ExtractionTimeout,
                      ExtractorCannotStart, ExtractorDied, not_text_error)
from ..runtime import native
from ..runtime.cgroups import oom_kills, out_of_memory
from ..runtime.memory import address_space_limit, memory_of_job, mib
from ..runtime.sizes import parse_memory
from . import EXTRACTORS, check_extractor_name, extraction_floor, get_extractor

DEFAULT_EXTRACT_TIMEOUT = 30.0  # seconds per document; datatrove's extractor steps use the same in plexity run
# Bytes of resident memory (RSS) per extraction child.  768 MiB, not 1 GiB: with the calling process
# (with a 45 MB page: plexity clean 230 MB, plexity run's task 290 MB and its forkserver 60 MB, Scrapy
# 330 MB) the whole process tree stays under 1.2 GB; a 5 MB page of posts needs ~440 MB with auto.
DEFAULT_EXTRACT_MEMORY = 768 << 20
# An extraction process holds 30 MiB at rest (97 MiB with trafilatura): a lower ceiling stops every page
# it does not finish between two looks at its memory, and lets the quick ones through.
MIN_EXTRACT_MEMORY = 128 << 20
EXTRACT_MEMORY_ENV = "PLEXITY_EXTRACT_MEMORY"  # the default of every front end, when set (e.g. 512MiB)
# What the calling process may still grow by after the ceiling is decided, besides what it holds then: a datatrove
# task decides it as its extractor step starts (75 MiB resident) and peaks later at 190 MiB (its model, the language
# identifier's tables, the pages and texts it holds).
CALLER_GROWTH = 128 << 20
MEMORY_LIMIT = "memory_limit"  # the counted reason of a page stopped at the ceiling, in every front end
_WATCH_INTERVAL = 0.02  # seconds between two looks at a busy child's memory
_PIPE_BYTES = 1 << 20
# A page's length before its bytes, as multiprocessing's Connection frames a message (a signed 32-bit length;
# -1 and a 64-bit one past 2 GiB).
_LENGTH = struct.Struct("!i")
_LONG_LENGTH = struct.Struct("!Q")
# The child reads each page into one buffer kept from page to page, up to this size (a larger page gets its own):
# `Connection.recv_bytes` read a page into new bytes and copied them into a BytesIO (10-35 us per 200 KB page).
_KEPT_BUFFER_BYTES = 4 << 20
# A str page that fits in this many bytes reaches the child through memory the two processes share (a memfd,
# Linux's), and the pipe carries only `_SHARED_PAGE` and `_SHARED_FORM`.  (Through the pipe the kernel copies a
# page in and out: ~50 us of the two processes' CPU per 170 KB page.)  The parent writes there the str's own code
# units and the UTF-8 form it holds (`native.page_units`), which the child copies into a str of its own
# (`native.page_text`): decoding the page's UTF-8 took the child ~80 us a 165 KB page, copying ~10 us.  Where they
# do not fit, or the compiled path is off: the page's UTF-8 bytes, which the child decodes.  A page larger still,
# a bytes page, a system without memfd: the pipe.
_SHARED_BYTES = 4 << 20
_SHARED_PAGE = b"\xff"  # (a byte that starts no UTF-8 text, 0x80 no pickle)
# (how the shared memory holds the page: its units' kind (0-4, `native.page_units`) or `_UTF8_BYTES`, its length
# in characters or bytes, and the bytes of the UTF-8 form after its units)
_SHARED_FORM = struct.Struct("!BQQ")
_UTF8_BYTES = 0xFF
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def extract_memory_limit(value: int | str | None = None) -> int | None:
    """The memory ceiling in bytes: `value` (bytes, or a size such as ``"512MiB"``), else the
    ``PLEXITY_EXTRACT_MEMORY`` environment variable, else `DEFAULT_EXTRACT_MEMORY`; 0: none (None)."""
    source = ""
    if value is None:
        value = os.environ.get(EXTRACT_MEMORY_ENV, "").strip() or DEFAULT_EXTRACT_MEMORY
        source = f" ({EXTRACT_MEMORY_ENV})"
    if isinstance(value, str):
        try:
            value = parse_memory(value)
        except ValueError as exc:
            raise ValueError(f"the extraction memory ceiling{source}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"the extraction memory ceiling must be 0 (none) or more bytes, or a size such as "
                         f"'512MiB', got {value!r}")
    if 0 < value < MIN_EXTRACT_MEMORY:  # (`1024` meant as MiB is 1024 bytes)
        raise ValueError(f"the extraction memory ceiling{source} is {_size(int(value))}, less than an extraction "
                         f"process holds at rest: give {_size(MIN_EXTRACT_MEMORY)} or more (a size such as "
                         f"'512MiB'; a bare number is bytes), or 0 for none")
    return int(value) or None


_sharers = 1  # the processes of this job that each run extraction children of their own (`share_job_memory`)
_sharers_are = "workers"  # (what they are, in the note)
_said: set[str] = set()  # the notes said in this process (`say_once`)


def share_job_memory(processes: int, who: str = "workers") -> None:
    """This process is one of `processes` that share the job's memory, each with its extraction child (a local
    ``plexity run``'s workers, a Ray task's ranks: `who`, in the note): the default ceiling is made of its share
    (`extraction_ceiling`)."""
    global _sharers, _sharers_are
    _sharers, _sharers_are = max(1, processes), who


def is_default_ceiling(value: int | str | None) -> bool:
    """Whether `value` leaves the ceiling to the default: none given, nor ``PLEXITY_EXTRACT_MEMORY``."""
    return value is None and not os.environ.get(EXTRACT_MEMORY_ENV, "").strip()


def extraction_ceiling(value: int | str | None = None, children: int = 1,
                       extractor: str | None = None) -> tuple[int | None, str | None]:
    """The memory ceiling of the extraction children this process starts, `children` at most at once, running
    `extractor` (a name of `EXTRACTORS`; None, a function's reference: the default's) (`extract_memory_limit`'s,
    decided here for every front end), and a note to say once where the job's memory bears on it (else None).

    The default, 768 MiB, is lowered where the job's memory (`memory_of_job`: a Slurm job's --mem or
    --mem-per-cpu, a Ray task's reservation, a container's limit, the machine's RAM; divided among a local run's
    workers, a Ray task's ranks: `share_job_memory`) does not hold this process (its resident memory now, and
    `CALLER_GROWTH`) and a child at the ceiling: there a
    large page grew the child past the job's memory before the ceiling stopped it, and Slurm (polling RSS) killed the
    whole task, again at every re-run (384M per task, the 14 MB page of tests/hostile_pages.py with ``dense``).
    Lowered, the page is a counted ``memory_limit`` skip.  Never below what ordinary pages of `extractor` need
    (`extraction_floor`: 128 MiB, 224 MiB for trafilatura and auto); where the job cannot give that, the note says so.
    A ceiling given (`value`, ``PLEXITY_EXTRACT_MEMORY``) is kept as given, with a note when it is more than the job
    leaves."""
    ceiling = extract_memory_limit(value)
    try:
        size, words = memory_of_job()
    except OSError:  # (a system that does not say its memory)
        return ceiling, None
    if _sharers > 1:
        words = f"{words} shared by {_sharers} {_sharers_are}"
        size //= _sharers
    own = resident_memory(os.getpid()) or 0
    left = max(0, (size - own - CALLER_GROWTH) // max(1, children))
    holds = (f"this process ({mib(own)} now, {mib(CALLER_GROWTH)} more for what it still loads)"
             + (f" and {children} children" if children > 1 else ""))
    if is_default_ceiling(value):
        if left >= DEFAULT_EXTRACT_MEMORY:
            return ceiling, None
        floor = extraction_floor(extractor)
        ceiling = max(floor, left >> 20 << 20)
        note = (f"the extraction memory ceiling is {mib(ceiling)}, not {mib(DEFAULT_EXTRACT_MEMORY)}: {words} holds "
                f"{holds}")
        note += (f" and a child of {mib(left)} at most" if left >= floor else
                 f", and leaves a child {mib(left)}; {mib(floor)}, what ordinary pages of the "
                 f"{extractor if extractor in EXTRACTORS else 'default'} extractor need, may take the job past its "
                 f"memory: give the job more memory")
        return ceiling, note + f" (--extract-memory or ${EXTRACT_MEMORY_ENV} sets a ceiling)"
    if ceiling is not None and ceiling > left:
        return ceiling, (f"the extraction memory ceiling {mib(ceiling)} is more than {words} leaves a child beside "
                         f"{holds}: {mib(left)}; a large page may take the job past its memory before the ceiling "
                         f"stops it")
    return ceiling, None


def say_once(note: str | None, say: Callable[[str], object]) -> bool:
    """`say(note)` the first time this process is given `note`; whether it did."""
    if note is None or note in _said:
        return False
    _said.add(note)
    say(note)
    return True


def extract_timeout(value: float | None) -> float | None:
    """The time limit of one extraction, checked: seconds, 0 or more; 0 or None: none (None).
    Anything else (a string, a negative number) is a ValueError when the extractor is built."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0):
        raise ValueError(f"the extraction time limit must be 0 (none) or more seconds, got {value!r}")
    return value or None


def resident_memory(pid: int) -> int | None:
    """Bytes of resident memory (RSS) of process `pid`, from /proc/PID/statm (~15 us a look);
    None where /proc is not there (not Linux: no ceiling)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


class _Answers:
    """Whether a child's pipe to the parent holds an answer (or its end, when the child died): ``poll(seconds)``,
    as `Connection.poll` asks it, of one ``select.poll`` made once.  (`Connection.poll` builds a selector, registers
    the pipe and unregisters it at every call: ~40 us of the parent's CPU per page, a fifth of its sandbox cost.)"""

    def __init__(self, fd: int):
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def poll(self, timeout: float) -> bool:
        return bool(self._poll.poll(timeout * 1000))  # (milliseconds, rounded up as Connection.poll rounds them)


def await_answer(connection, pid: int, timeout: float | None, memory_limit: int | None) -> None:
    """Wait until `connection` (from the child `pid`: a `Connection`, or its `_Answers`) has an answer (or
    its end, if the child died), watching the child: raises ExtractionTimeout past `timeout` seconds,
    ExtractionMemoryLimit when its resident memory goes over `memory_limit` bytes.  (The caller kills the
    child after either.)"""
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        wait = _WATCH_INTERVAL if memory_limit else 1.0
        if deadline is not None:
            wait = max(0.0, min(wait, deadline - time.monotonic()))
        if connection.poll(wait):
            return
        if memory_limit:
            used = resident_memory(pid)
            if used is not None and used > memory_limit:
                raise ExtractionMemoryLimit(f"extraction needed more than {_size(memory_limit)} of memory")
        if deadline is not None and time.monotonic() >= deadline:
            raise ExtractionTimeout(f"extraction took longer than {timeout:g} s")


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("GB", 10**9), ("MB", 10**6)):  # (100MB: not 97656.2 KiB)
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % (size // 64) == 0:
            return f"{n / size:g} {unit}"
    return f"{n:,} bytes"


_WARM_UP_PAGE = "<html><body><p>The extractor starts.</p><p>It reads a first page.</p></body></html>"


def answer(send, extract: Callable[[str], str], html: str) -> None:
    """In a child: extract one page and send back ("ok", text), or ("error", the exception) for
    the parent to decide on (an exception that does not pickle as an ExtractionError naming it).
    The child of every front end's sandbox answers this way."""
    try:  # (pickled as `Connection.send` would, without the ForkingPickler it builds for every message: 6 us)
        message = pickle.dumps(("ok", extract(html)), pickle.HIGHEST_PROTOCOL)
    except MemoryError:  # this page's fault, not the installation's: a counted skip
        send.send(("error", ExtractionMemoryLimit("extraction ran out of memory")))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which decides
        try:
            send.send(("error", exc))
        except Exception:  # an exception that does not pickle
            send.send(("error", ExtractionError(f"{type(exc).__name__}: {exc}")))
    else:
        send.send_bytes(message)


def pack_page(html: str | bytes) -> bytes:
    """A page as the parent sends it to its child: a str as its UTF-8 bytes (lone surrogates
    kept: ``surrogatepass``), anything else pickled.  (Pickling a str encodes it to UTF-8 all the
    same, then copies the bytes into pickle's frame; and it leaves that UTF-8 copy attached to the
    parent's str, as much memory again as the page, for as long as the document lives.)"""
    if isinstance(html, str):
        return html.encode("utf-8", "surrogatepass")
    return ForkingPickler.dumps(bytes(html) if isinstance(html, memoryview) else html)  # (a memoryview does not pickle)


def unpack_page(data: bytes | memoryview, shared: mmap.mmap | None = None) -> str | bytes:
    """`pack_page`'s page back, or `send_page`'s from the `shared` memory.  A pickle (protocol 2 and later)
    starts with byte 0x80, which no UTF-8 text starts with (it is a continuation byte), nor with 0xFF
    (`_SHARED_PAGE`): the first byte tells them apart."""
    if data[:1] == b"\x80":
        return ForkingPickler.loads(data)
    if data[:1] == _SHARED_PAGE and shared is not None:
        kind, length, utf8_size = _SHARED_FORM.unpack_from(data, 1)
        if kind != _UTF8_BYTES:
            return native.page_text(shared, kind, length, utf8_size)
        with memoryview(shared) as whole, whole[:length] as page:
            return _text(page)
    return _text(data)


def _text(data: bytes | memoryview) -> str:
    # (decoded keeping its UTF-8 form: the extractor's parser reads UTF-8, which it would
    # otherwise encode again; a page with lone surrogates is not valid UTF-8: decoded as sent)
    text = native.utf8_text(data)
    return text if text is not None else str(data, "utf-8", "surrogatepass")


def shared_memory() -> tuple[mmap.mmap, int] | None:
    """(the memory, its file descriptor, for the child) a parent shares with its child for `send_page`'s
    pages; None where the system has no memfd (not Linux) or it cannot be made: the pipe then."""
    if not hasattr(os, "memfd_create"):
        return None
    fd = None
    try:
        fd = os.memfd_create("plexity-pages", os.MFD_CLOEXEC)
        os.ftruncate(fd, _SHARED_BYTES)  # (pages of it exist once written: a small page takes little)
        return mmap.mmap(fd, _SHARED_BYTES), fd
    except OSError:
        if fd is not None:
            os.close(fd)
        return None


def send_page(fd: int, html: str | bytes, shared: mmap.mmap | None = None) -> None:
    """Write `html` to the child's pipe `fd`: its length and `pack_page`'s bytes, in one system call
    where the pipe holds them (`Connection.send_bytes` makes two of a page over 16 KB).  A str page
    that fits in the `shared` memory (`shared_memory`) goes there, and its message says how."""
    # (the child has answered the last page: it no longer reads the shared memory)
    form = native.page_units(html, shared) if shared is not None and isinstance(html, str) else None
    if form is not None:
        data = _SHARED_PAGE + _SHARED_FORM.pack(*form)
    else:
        data = pack_page(html)
        if shared is not None and isinstance(html, str) and len(data) <= len(shared):
            shared[:len(data)] = data
            data = _SHARED_PAGE + _SHARED_FORM.pack(_UTF8_BYTES, len(data), 0)
    size = len(data)
    length = _LENGTH.pack(size) if size <= 0x7FFFFFFF else _LENGTH.pack(-1) + _LONG_LENGTH.pack(size)
    written = os.writev(fd, (length, data))
    if written < len(length) + size:  # (a page larger than the pipe, or a signal in between: the rest)
        rest = memoryview(data)[written - len(length):] if written >= len(length) else \
            memoryview(length + data)[written:]
        while rest:
            rest = rest[os.write(fd, rest):]


class PageReader:
    """In a child: the pages its parent sends on `fd` (`send_page`), one at a time."""

    def __init__(self, fd: int):
        self._fd = fd
        self._buffer = memoryview(bytearray(_PIPE_BYTES))

    def next(self) -> memoryview:
        """The next page's bytes (valid until the next call); EOFError when the parent has gone.  Read
        greedily, the length and the page at once: the parent sends a page only once the last is answered."""
        buffer = self._buffer
        got = self._fill(buffer, 0, _LENGTH.size)
        (size,), start = _LENGTH.unpack_from(buffer), _LENGTH.size
        if size == -1:
            got = self._fill(buffer, got, start + _LONG_LENGTH.size)
            (size,), start = _LONG_LENGTH.unpack_from(buffer, start), start + _LONG_LENGTH.size
        end = start + size
        if end > len(buffer):  # a page larger than the buffer: a buffer of its size, kept if not too large
            larger = memoryview(bytearray(end))
            larger[:got] = buffer[:got]
            buffer = larger
            if end <= _KEPT_BUFFER_BYTES:
                self._buffer = larger
        got = self._fill(buffer, got, end)
        if got != end:
            raise EOFError(f"the parent sent {got - end} bytes more than a page")  # (never: one page at a time)
        return buffer[start:end]

    def _fill(self, buffer: memoryview, got: int, wanted: int) -> int:
        """Read into `buffer` after its first `got` bytes until it holds `wanted` or more: how many it holds."""
        while got < wanted:
            n = os.readv(self._fd, (buffer[got:],))
            if not n:
                raise EOFError
            got += n
        return got


def _resolve(extractor: str) -> Callable[[str | bytes], str]:
    """An extractor name (`plexity_plugins.extractors.EXTRACTORS`), or ``module:qualified.name``
    of a function importable by the child (a datatrove step's own `to_text`)."""
    if ":" not in extractor:
        return get_extractor(extractor)
    import importlib

    module, _, qualname = extractor.partition(":")
    function = importlib.import_module(module)
    for part in qualname.split("."):
        function = getattr(function, part)
    return function


def _reference(function: Callable) -> str:
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        raise ValueError(f"{function!r} must be a module-level function (or a static method of a module-level "
                         f"class) of an importable module: the extraction child imports it")
    return f"{module}:{qualname}"


def _serve(receive, send, extractor_name: str, shared: mmap.mmap | None = None) -> None:
    """Child process: extract each document received; send back ("ok", text) or ("error", exc).  Ends when the
    parent has gone: its page pipe closed, or its answer pipe (the parent died while this child worked on a page
    or started, and nobody reads the answer: a Dask worker killed mid-task, whose children the kernel does not
    end with it; quietly, not a BrokenPipeError's traceback in the worker's log)."""
    try:
        _serve_pages(receive, send, extractor_name, shared)
    except BrokenPipeError:
        return


def _serve_pages(receive, send, extractor_name: str, shared: mmap.mmap | None) -> None:
    if sys.platform.startswith("linux"):  # if memory runs out all the same, the kernel kills this one first
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000\n")
        except OSError:
            pass
    mixed = _other_package()
    if mixed:
        send.send(("error", ExtractorCannotStart(mixed)))
        return
    try:  # import and initialise the extractor now: its first call is slow, and not the first page's fault
        extract = _resolve(extractor_name)
        extract(_WARM_UP_PAGE)
    except Exception as exc:  # noqa: BLE001 - e.g. an ImportError: the parent re-raises it
        send.send(("error", exc))
        return
    send.send(("ready", None))
    while True:
        try:
            html = unpack_page(receive.next(), shared)
        except EOFError:  # the parent went away
            return
        answer(send, extract, html)
        # (freed before the next page is made, not after: with two pages held at once, the heap grew past the
        # one freed and gave memory back to the system, ~14 page faults of the child's per 165 KB page)
        del html


# This package's folder, and the folder that holds it.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE_ROOT = os.path.dirname(_PACKAGE)
# The child is told where the caller's package is, and stops in one line when it imported another
# (`_other_package`): two versions of this package at once are never paired silently.
_CALLER_PACKAGE = "PLEXITY_CALLER_PACKAGE"


def _installed_folders() -> set[str]:
    """The folders this interpreter imports installed packages from (its site-packages)."""
    import site

    folders = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    return {os.path.realpath(folder) for folder in folders}


def _child_environment(extractor_name: str) -> dict:
    """The extraction child's environment: the caller's, with the import path it needs to import
    what the caller imported (this package from the same folder: a checkout the caller put on its
    path in any way, or its folder, which -P drops; an installed one is found where it is installed)."""
    if ":" in extractor_name:  # a function of the caller's own modules: imported from where the caller does
        path = [p for p in sys.path if p]
    elif os.path.realpath(_PACKAGE_ROOT) not in _installed_folders():
        path = [_PACKAGE_ROOT]
    else:
        path = []
    environment = dict(os.environ)
    if sys.flags.ignore_environment:  # (python -I or -E: the PYTHON* variables the caller ignored, the child does too)
        environment = {name: value for name, value in environment.items() if not name.startswith("PYTHON")}
    inherited = environment.get("PYTHONPATH")
    return dict(environment, PYTHONPATH=os.pathsep.join([*path, *([inherited] if inherited else [])]),
                **{_CALLER_PACKAGE: _PACKAGE})


def _child_flags() -> list[str]:
    """The interpreter's options for the extraction child, so that it imports from where its caller does: -P always
    (`_Child`), -s where the caller reads no user site-packages (python -s or -I).  Not -I or -E themselves: the child
    finds a checkout through the PYTHONPATH it is given (`_child_environment`, which drops the caller's ignored one)."""
    return ["-P", *(["-s"] if sys.flags.no_user_site else [])]


def _other_package() -> str | None:
    """In the child: why it cannot serve its caller, when it imported this package from another folder than the
    caller's (another version), in one line; else None."""
    caller = os.environ.get(_CALLER_PACKAGE)
    if not caller or os.path.realpath(caller) == os.path.realpath(_PACKAGE):
        return None
    return (f"the extraction process imported plexity_plugins from {_PACKAGE_ROOT}, not from "
            f"{os.path.dirname(caller)} as this process did: give that folder on PYTHONPATH, or install it "
            f"(pip install -e)")


def _above_standard_streams(fd: int) -> int:
    """`fd`, or where it is 0, 1 or 2 a copy of it numbered 3 or above (`fd` closed).  A caller whose standard streams
    are closed (`python script.py <&-`, a daemon that closed them) gets such numbers from os.pipe(), and the child's
    stdin (/dev/null), stdout or stderr took the place of its page pipe: every page was "the extractor process died
    ([Errno 32] Broken pipe)"."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


class _broken_pipe_not_fatal:
    """A write to a child's pipe that meets a dead child raises BrokenPipeError, as Python's SIGPIPE setting (ignored)
    makes it, in a caller that set SIGPIPE back to its default too (`signal.signal(SIGPIPE, SIG_DFL)`, as command-line
    tools do for `| head`), where the signal killed the whole caller, silently (exit status 141): the signal is held
    back in this thread while it writes, and taken away if the write raised it."""

    def __enter__(self):
        self.held = hasattr(signal, "pthread_sigmask") and signal.getsignal(signal.SIGPIPE) != signal.SIG_IGN
        if self.held:
            self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPIPE})
        return self

    def __exit__(self, kind, exc, tb):
        if self.held:
            if isinstance(exc, BrokenPipeError) and signal.SIGPIPE not in self.mask:
                signal.sigtimedwait({signal.SIGPIPE}, 0)  # (the write's own, pending for this thread)
            signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        return False


def _widen(pipe_fd: int) -> None:
    """Let the pipe to the child hold a whole common page (1 MiB, Linux's most for any user, instead of
    64 KiB): a page then crosses in one write, not in turns of the two processes waking each other.
    (Only that pipe: the answers are a page's text, a few KB; and a user's pipes share a budget,
    64 MiB by default, past which the kernel makes their new pipes small: 32 children take half.)"""
    try:
        fcntl.fcntl(pipe_fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (AttributeError, OSError):  # not Linux, or over this user's pipe memory: the default size
        pass


def _out_of_address_space(exc: BaseException) -> bool:
    """Whether `exc`, a child's start-up error, says that memory ran out: a MemoryError, or an extension module's
    shared object that could not be mapped (the dynamic loader's words for it), or, under an address-space limit, an
    extension module whose start failed without saying why (its allocation failed and it set no MemoryError:
    CPython's "error return without exception set", seen once under a 160 MiB limit on a loaded machine)."""
    if isinstance(exc, SystemError) and "without exception set" in str(exc):
        return address_space_limit() is not None
    return isinstance(exc, MemoryError) or (isinstance(exc, ImportError) and "failed to map segment" in str(exc)
                                            and "not permitted" not in str(exc))  # (a noexec mount's: no memory's)


def _address_space_said() -> str:
    """What to add to a child's death at its start where this process has an address-space limit, which the child
    inherits and which most often killed it there (numpy's OpenBLAS: "Memory allocation still failed ... giving up",
    exit status 1, under 140 MiB with trafilatura); "" where it has none."""
    said = _address_space_words()
    return "" if said.startswith(":") else f"; it may have run out of memory{said}"


def _address_space_words() -> str:
    """What to say of this process's address-space limit (RLIMIT_AS), which its extraction child inherits: a limit
    too low for the child's imports (PySpark sets one on its workers) made its start fail with a bare MemoryError."""
    limit = address_space_limit()
    if limit is None:
        return ": give the job more memory"
    return (f", within the address-space limit (RLIMIT_AS, ulimit -v) of {_size(limit)} that it inherits from this "
            f"process (PySpark's spark.executor.pyspark.memory sets one on its workers): raise it (with its imports "
            f"the child maps ~50 MB with learned, dense or fast, ~240 MB with trafilatura or auto)")


class _Child:
    """One extractor process: ``python -m plexity_plugins.extractors.sandbox`` with two pipes of its own
    and the memory its pages cross in (`shared_memory`).

    (A plain subprocess, not multiprocessing's spawn or forkserver: those import the caller's
    ``__main__`` again in the child, which re-runs a user's script that has no main guard.)"""

    def __init__(self, extractor_name: str):
        self.extractor_name = extractor_name
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        to_child_r, to_child_w, from_child_r, from_child_w = map(_above_standard_streams, (
            to_child_r, to_child_w, from_child_r, from_child_w))
        _widen(to_child_w)
        self._shared, shared_fd = shared_memory() or (None, None)
        if shared_fd is not None:
            shared_fd = _above_standard_streams(shared_fd)
        fds = (to_child_r, from_child_w) + ((shared_fd,) if shared_fd is not None else ())
        # Started by the main thread (a datatrove task, plexity clean), the child is killed by the
        # kernel when this process dies, even mid-page (`die_with_parent`).  Not from another
        # thread: the signal comes when the starting *thread* ends (Scrapy's pool threads do).
        watch = [str(os.getpid())] if threading.current_thread() is threading.main_thread() else []
        # (the out-of-memory killer's count in this cgroup, to tell its SIGKILL from another's: `_death`)
        self._oom_kills = oom_kills()
        self.ran_out: str | None = None  # (what memory ran out, when the out-of-memory killer ended it)
        try:
            self.process = subprocess.Popen(
                # -P: the child imports the caller's package (`_child_environment`), not another `plexity_plugins`
                # that the current directory happens to hold (`python -m` would put the directory first on its path).
                [sys.executable, *_child_flags(), "-m", "plexity_plugins.extractors.sandbox", extractor_name,
                 str(to_child_r),
                 str(from_child_w), "-" if shared_fd is None else str(shared_fd), *watch],
                pass_fds=fds, stdin=subprocess.DEVNULL, env=_child_environment(extractor_name))
        except OSError as exc:  # the interpreter cannot be run (by this user), or no process can be made
            for fd in (*fds, to_child_w, from_child_r):
                os.close(fd)
            if self._shared is not None:
                self._shared.close()
            if exc.errno == errno.EAGAIN:  # (fork's: no process may be made, not the interpreter's fault)
                raise ExtractorCannotStart(f"the extraction process could not start ({exc.strerror}): "
                                           f"{PROCESS_LIMIT_WHY}", exc) from None
            raise ExtractorCannotStart(f"the extraction process could not start: cannot run {sys.executable} "
                                       f"({exc.strerror or exc}): check that this user may run the Python "
                                       f"interpreter, or reinstall", exc) from None
        for fd in fds:  # (the child's now; the shared memory stays mapped here)
            os.close(fd)
        self._to_child = to_child_w
        self.connection = Connection(from_child_r, writable=False)
        self._answers = _Answers(from_child_r)
        self.ready = False
        # A page sent (or being sent) whose answer has not been read: a call that ended so (Ctrl-C, any exception
        # raised into it) leaves the child busy with that page, and its answer would be the next page's.
        self.in_exchange = False
        self.forgotten = False
        self.owner = os.getpid()  # (a forked process holds a copy of this object, not the child)

    def wait_ready(self) -> None:
        if not self.ready:
            try:
                status, value = self._receive(None)  # start-up: not counted in a document's time
            except ExtractorDied as exc:
                raise ExtractorCannotStart(f"the extraction process could not start: {exc}; its error, if "
                                           f"any, is printed above{_address_space_said()}") from None
            except ExtractionMemoryLimit:  # (killed for memory before any page: not a page's fault)
                raise ExtractorCannotStart(f"the extraction process could not start: the kernel's out-of-memory "
                                           f"killer ended it, out of {self.ran_out}: give the job more memory, or "
                                           f"run fewer workers (plexity run --workers)") from None
            if status == "error":
                if _out_of_address_space(value):  # (importing its extractor: the process's limit, no page's fault)
                    raise ExtractorCannotStart(f"the extraction process could not start: it ran out of memory "
                                               f"while it imported the {self.extractor_name} extractor"
                                               f"{_address_space_words()}") from None
                raise value
            self.ready = True

    def _receive(self, timeout: float | None, memory_limit: int | None = None):
        if timeout is not None or memory_limit:
            await_answer(self._answers, self.process.pid, timeout, memory_limit)
        try:
            return self.connection.recv()
        except EOFError:
            raise self._death() from None

    def _death(self, how: str | None = None) -> ExtractionError:
        """Why the child ended without an answer: `ExtractionMemoryLimit` when the out-of-memory killer ended it (a
        container's limit under the ceiling: it acts first, and "the extractor process died (exit status -9)" said
        nothing of memory), else `ExtractorDied` saying `how` (else its exit status)."""
        try:
            code = self.process.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        if code == -signal.SIGKILL and (ran_out := out_of_memory(self._oom_kills)):
            self.ran_out = ran_out
            return ExtractionMemoryLimit(f"extraction ran out of {ran_out}: the kernel's out-of-memory killer "
                                         f"ended it (if ordinary pages meet this: give the job more memory, or run "
                                         f"fewer workers)")
        return ExtractorDied(f"the extractor process died ({how or f'exit status {code}'})")

    def extract(self, html: str | bytes, timeout: float | None, memory_limit: int | None = None) -> str:
        self.wait_ready()
        self.in_exchange = True
        try:
            with _broken_pipe_not_fatal():
                send_page(self._to_child, html, self._shared)
        except OSError as exc:  # the pipe broke: the child is gone
            raise self._death(str(exc)) from exc
        status, value = self._receive(timeout, memory_limit)
        self.in_exchange = False
        if status == "error":
            raise value
        return value

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)
        self.forget()

    def disown(self) -> None:
        """In a fork: `forget`, and its `Popen` (a copy of the parent's) has no process of this one's to wait for
        (finalized, it said "ResourceWarning: subprocess N is still running", with -X dev)."""
        self.process.returncode = 0
        self.forget()

    def forget(self) -> None:
        """Close this process's ends of the pipes and its mapping of the shared memory, leaving the child be
        (in a fork, whose copy of this object must neither kill its parent's child nor talk to it).  Once: a
        second close of a descriptor's number closes whatever file has it since."""
        if self.forgotten:
            return
        self.forgotten = True
        os.close(self._to_child)
        self.connection.close()
        if self._shared is not None:
            self._shared.close()


# The child set aside by `TimeLimitedExtractor.close(set_aside=True)`, by its extractor's settings (name, time limit,
# memory ceiling), for the next TimeLimitedExtractor of this process with the same settings to take: `plexity run`
# starts a child to check the installation before its tasks, and a task run in the same process then took it instead
# of starting a second (~0.1 s of CPU, ~0.2 s of wall clock before the first page); the command line starts one before
# its own start-up (`start_aside`); a worker of plexity's executors keeps one from task to task (`keep_between_uses`).
# One at most: setting one aside ends the one before.  Killed at exit if nobody took it (and it dies with this process
# anyway).
_set_aside: dict[tuple, _Child] = {}
# Whether the extractor steps of this process set their child aside when they end (`keep_between_uses`).
_kept_between_uses = False


def keep_between_uses(keep: bool = True) -> None:
    """In a process of plexity's own that runs task after task (a worker of `LocalTaskExecutor`, a Slurm job's task,
    `plexity run` with one worker): the extractor steps set their child aside as a task ends (`kept_between_uses`),
    for the next task's to take, instead of each task starting and checking one (~0.1 s of CPU a task).  Not in a
    library user's process, where an idle child would outlive the step.  ``keep_between_uses(False)`` ends the child
    kept (a worker that has run its last task: ended and waited for here, not left to die with the worker)."""
    global _kept_between_uses
    _kept_between_uses = keep
    if not keep:
        _end_set_aside()


def kept_between_uses() -> bool:
    """Whether this process keeps an extraction child between uses (`keep_between_uses`)."""
    return _kept_between_uses


def _take_set_aside(key: tuple) -> _Child | None:
    """The child set aside in this process for an extractor of settings `key` (ready, or still starting), if any and
    alive; one set aside for other settings, or dead, is ended (the caller starts a new one)."""
    taken = None
    while _set_aside:
        kept_key, child = _set_aside.popitem()
        if child.owner != os.getpid():  # (a fork's copy: the child is its parent's)
            child.disown()
        elif kept_key != key or not child.alive():
            child.kill()
        else:
            taken = child
    return taken


# Every TimeLimitedExtractor of this process, to end their children at exit.  (Left to `__del__`, they were ended, if
# at all, after the interpreter had begun to take itself apart: with -X dev or -W default, "ResourceWarning:
# subprocess N is still running" for each, the children's `Popen`s finalized before their extractor.)
_extractors: weakref.WeakSet = weakref.WeakSet()
# The extractor that the copies unpickled in this process share, by their settings, while any of them lives.  A Dask
# `client.map(f, pages)` of a function closing over an extractor unpickles one copy per task, and Dask keeps the
# tasks' copies: each started a child of its own, 0.2 s a page, and 300 pages left 300 children running.  (By
# settings, not by the extractor they were pickled from: a copy pickles as its settings alone, which `datasets` hashes
# for its cache, the same in every run.)
_unpickled: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_unpickled_lock = threading.Lock()


@atexit.register
def _end_children() -> None:
    for extractor in list(_extractors):
        extractor.close()
    _end_set_aside()


def _end_set_aside() -> None:
    while _set_aside:
        child = _set_aside.popitem()[1]
        if child.owner == os.getpid():
            child.kill()
        else:  # (a fork's copy)
            child.disown()


class TimeLimitedExtractor:
    """``extractor(html) -> text``, each call limited to `timeout` seconds and `memory_limit` bytes.

    Args:
        extractor: an extractor name (`plexity_plugins.extractors.EXTRACTORS`), or an extractor
            function the child can import (module level; a datatrove step's own `to_text`).
        timeout: seconds per document; a longer extraction is stopped (its process killed)
            and raises `ExtractionTimeout`. 0 or None: no limit.
        memory_limit: bytes of resident memory (RSS) the child may hold (or a size: ``"512MiB"``); past
            it the child is killed and the call raises `ExtractionMemoryLimit`.  None: the
            ``PLEXITY_EXTRACT_MEMORY`` environment variable, else 768 MiB, or less where the job's memory leaves
            less (`extraction_ceiling`; `memory_note` says so); 0: no ceiling.  With
            neither limit, extraction runs in the calling thread (no child process).
        processes: child processes at most (calls from more threads wait for one).

    Callable from any thread.  `close()` ends the children (also done at interpreter exit).  A process forked
    from this one (a 'fork' pool) starts children of its own on its first call, and leaves this one's be.
    """

    def __init__(self, extractor: str | Callable[[str | bytes], str], timeout: float | None = DEFAULT_EXTRACT_TIMEOUT,
                 processes: int = 1, memory_limit: int | str | None = None):
        self.name = extractor if isinstance(extractor, str) else _reference(extractor)
        self.timeout = extract_timeout(timeout)
        self.processes = max(1, processes)
        self.memory_default = is_default_ceiling(memory_limit)  # (pickled as such: decided where it is unpickled)
        self.memory_limit, self.memory_note = extraction_ceiling(memory_limit, self.processes, self.name)
        # The function itself only where it runs here (no limit): a sandboxed one is imported by the child alone
        self._direct: Callable[[str | bytes], str] | None = None if isinstance(extractor, str) else extractor
        if isinstance(extractor, str):
            check_extractor_name(extractor)
        self._own_children()
        self._shared: TimeLimitedExtractor | None = None  # (the extractor this copy's calls go to: `__setstate__`)
        _extractors.add(self)

    def _own_children(self) -> None:
        """No children yet, in this process (`_pid`)."""
        self._pid = os.getpid()
        self._idle: queue.LifoQueue[_Child] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.processes)
        self._children: list[_Child] = []
        self._lock = threading.Lock()

    def _after_fork(self) -> None:
        """In a process forked from the one that started the children (a multiprocessing 'fork' pool, os.fork,
        a pre-forking server): they are the parent's.  A fork that used them wrote its pages into the parent's
        child, between the parent's own, and read answers meant for either (the child died of it, or a page's text
        came back as another's); one that ended them killed the parent's.  Here they are forgotten, and this
        process starts its own.  (Its locks are new too: another thread may have held one at the fork.)"""
        if self._pid != os.getpid():
            for child in self._children:
                child.disown()
            self._own_children()

    @property
    def sandboxed(self) -> bool:
        return (self.timeout is not None or self.memory_limit is not None) and self.name != "none"

    def __call__(self, html: str | bytes) -> str:
        if not isinstance(html, (str, bytes, bytearray, memoryview)):  # (said here: a polars column of 5,000 pages
            raise not_text_error(html, "str or bytes (a page)")  # went pickled to the child, past its memory limit)
        if not self.sandboxed:
            if self._direct is None:
                self._direct = get_extractor(self.name)
            return self._direct(html)
        if self._shared is not None:
            return self._shared(html)
        self._after_fork()
        with self._slots:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                child = self._start()
            else:
                if not child.alive():  # (ended while idle, by the out-of-memory killer or a kill: not this page's
                    self._discard(child)  # fault, and a page written to it was lost, "Broken pipe")
                    child = self._start()
            try:
                text = child.extract(html, self.timeout, self.memory_limit)
            except BaseException:
                # past a limit (its answer never read), interrupted mid-page, dead, or never started: the next call
                # gets a new one.  (A child given back after a Ctrl-C answered each later page with the text of
                # the page before it.)
                if child.in_exchange or not child.ready or not child.alive():
                    self._discard(child)
                else:  # the extractor's own error on this page: the child goes on
                    self._give_back(child)
                raise
            self._give_back(child)
            return text

    def start(self) -> None:
        """Start one child without waiting for it: it imports its extractor while the caller goes on."""
        if self._shared is not None:
            self._shared.start()
        elif self.sandboxed:
            self._after_fork()
            with self._slots:
                self._idle.put(self._start())

    def warm_up(self) -> None:
        """Wait until a child has imported its extractor (at start-up, not in the first page): one `start`
        started, else a new one."""
        if self._shared is not None:
            self._shared.warm_up()
        elif self.sandboxed:
            self._after_fork()
            with self._slots:
                try:
                    child = self._idle.get_nowait()
                except queue.Empty:
                    child = self._start()
                child.wait_ready()  # (if it fails, `close` ends it with the others)
                self._give_back(child)

    @property
    def _key(self) -> tuple:  # (a default ceiling as such: decided from this process's memory, which grows)
        return self.name, self.timeout, "default" if self.memory_default else self.memory_limit

    def _start(self) -> _Child:
        child = _take_set_aside(self._key) or _Child(self.name)
        with self._lock:
            self._children.append(child)
        return child

    def _give_back(self, child: _Child) -> None:
        """`child` free for the next call; ended if `close` came while this thread used it."""
        with self._lock:
            if child in self._children:
                self._idle.put(child)
                return
        child.kill()

    def _discard(self, child: _Child) -> None:
        child.kill()
        with self._lock:
            if child in self._children:  # (else `close` took it)
                self._children.remove(child)

    def close(self, set_aside: bool = False) -> None:
        """End the children.

        Args:
            set_aside: keep one child of this process running instead, ready or still starting, for the
                next TimeLimitedExtractor of the same settings in this process to take (where
                ``plexity run``'s tasks run in the process that checked the installation, or a front end
                started it before its own start-up work: `start_aside`).

        An unpickled copy has no children of its own: those it shares with the other copies of its extractor in
        this process end with the last of them (or at exit), not while another copy may be using them.
        """
        if self._shared is not None:
            return
        self._after_fork()
        with self._lock:
            children, self._children = self._children, []
            idle = []
            while not self._idle.empty():
                idle.append(self._idle.get_nowait())
        if set_aside:
            kept = sorted((child for child in idle if child.owner == os.getpid() and child.alive()),
                          key=lambda child: not child.ready)  # (a ready one first)
            if kept:
                children.remove(kept[0])
                idle.remove(kept[0])
                while _set_aside:  # (one at most: the one before, of these settings or others, ends)
                    earlier = _set_aside.popitem()[1]
                    if earlier.owner == os.getpid():
                        earlier.kill()
                    else:
                        earlier.disown()
                _set_aside[self._key] = kept[0]
        for child in children:
            if child in idle:
                child.kill()
            else:  # in another thread's call: that thread sees it end, and closes its pipes (`_discard`).  (Closed
                child.process.kill()  # here too, they were closed twice, the second time another file's, or
                # written to after, and the call that wrote raised OSError: Bad file descriptor.)

    @classmethod
    def start_aside(cls, extractor: str, timeout: float | None = DEFAULT_EXTRACT_TIMEOUT,
                    memory_limit: int | str | None = None) -> None:
        """Start a child for `extractor` without waiting, set aside for the next TimeLimitedExtractor of
        that extractor in this process to take: it imports its extractor while the caller loads its model
        and builds its pipeline (the taker's `warm_up` waits for it, and says its error).  Settings it cannot
        take, or a child that cannot be started, are said by the taker, where the caller checks them as before."""
        try:
            early = cls(extractor, timeout=timeout, memory_limit=memory_limit)
            early.start()
        except (ValueError, ExtractorCannotStart):
            return
        early.close(set_aside=True)

    keep_between_uses = staticmethod(keep_between_uses)

    def __getstate__(self):  # pickles as its settings (for datatrove steps, forked workers)
        return {"name": self.name, "timeout": self.timeout, "processes": self.processes,
                "memory_limit": None if self.memory_default else self.memory_limit,  # (the same in every process)
                "memory_default": self.memory_default}

    def __setstate__(self, state):  # (the default ceiling decided anew in this process: `extraction_ceiling`)
        memory = None if state.get("memory_default") else state.get("memory_limit") or 0
        self.__init__(state["name"], state["timeout"] or 0, state["processes"], memory)
        if self.sandboxed:  # the copies of these settings in this process share their children (`_unpickled`)
            key = (*self._key, self.processes)
            with _unpickled_lock:
                shared = _unpickled.get(key)
                if shared is None:
                    shared = _unpickled[key] = TimeLimitedExtractor(
                        self.name, self.timeout or 0, self.processes,
                        None if self.memory_default else self.memory_limit or 0)
            self._shared = shared

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


if __name__ == "__main__":  # a child: python -m plexity_plugins.extractors.sandbox EXTRACTOR READ_FD WRITE_FD
    #                                                                              SHARED_FD|- [PARENT_PID]
    if len(sys.argv) > 5:
        from ..runtime.lifetime import die_with_parent

        die_with_parent(int(sys.argv[5]))
    _memory = None if sys.argv[4] == "-" else mmap.mmap(int(sys.argv[4]), 0, prot=mmap.PROT_READ)
    _serve(PageReader(int(sys.argv[2])), Connection(int(sys.argv[3]), readable=False), sys.argv[1], _memory)
