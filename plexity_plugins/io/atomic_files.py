"""Output files that never look complete when they are not, the same for every front end.

An output is written under a temporary name in its own directory (``.NAME.part``: hidden, and
on the same file system, so the final step is an atomic rename) and renamed to its name only
once it is whole.  A full disk, an error or a kill part-way leaves no file under the real name:
the old one if there was one, else nothing, and at worst a ``.NAME.part`` file, which no
reader takes for an output.

A full disk (ENOSPC, EDQUOT) is not a bad input: `plexity_plugins.errors.disk_full_message` turns
it into the one line every front end prints before it stops with a non-zero status.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import IO, Callable, Iterator

from ..errors import OutputFileInUse

logger = logging.getLogger(__name__)

PART_PREFIX = "."
PART_SUFFIX = ".part"

def part_path(path: str | os.PathLike) -> Path:
    """The temporary name `path` is written under until it is complete."""
    path = Path(path)
    return path.with_name(f"{PART_PREFIX}{path.name}{PART_SUFFIX}")


def part_name(name: str) -> str:
    """`part_path` of a "/"-separated name inside a folder (a datatrove DataFolder's, an fsspec URL's)."""
    head, _, base = name.rpartition("/")
    return f"{head}/{PART_PREFIX}{base}{PART_SUFFIX}" if head else f"{PART_PREFIX}{base}{PART_SUFFIX}"


class AtomicFile:
    """A file written as ``.NAME.part`` and renamed to NAME by `commit`; `discard` removes it.

    Args:
        path: the final name.
        mode: "wb" (default) or "w" (text, UTF-8).
    """

    def __init__(self, path: str | os.PathLike, mode: str = "wb", locked: bool = False):
        if mode not in ("wb", "w"):
            raise ValueError(f"AtomicFile writes new files only (mode 'wb' or 'w'), not {mode!r}")
        self.path = Path(path)
        self.part = part_path(self.path)
        encoding = {} if "b" in mode else {"encoding": "utf-8"}
        if not locked:
            self.file: IO = open(self.part, mode, **encoding)
            return
        # (locked: held while it is written, so that a second writer of the same file, another crawl with the
        # same setting, is told from a dead one's leftover; checked before truncating what the first one wrote)
        import fcntl

        fd = os.open(self.part, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
        except BlockingIOError:
            os.close(fd)
            raise OutputFileInUse(f"{self.path} is being written by another process now") from None
        except BaseException:
            os.close(fd)
            raise
        self.file = open(fd, mode, **encoding)

    def commit(self) -> None:
        """Close the file (its last bytes reach the disk or raise here) and give it its name."""
        self.file.close()
        os.replace(self.part, self.path)

    def discard(self) -> None:
        """Close and remove the temporary file, whatever state it is in (never raises)."""
        with contextlib.suppress(OSError, ValueError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.part.unlink()


def part_in_use(path: str | os.PathLike) -> bool:
    """Whether a live process writes `path` now: its ``.NAME.part`` is held, by an `AtomicFile` made `locked`."""
    import fcntl

    try:
        fd = os.open(part_path(path), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # (a file system without locks: no writer can be told)
        return False
    finally:
        os.close(fd)  # (and with it the lock taken to look)
    return False


def keep_unfinished(path: str | os.PathLike) -> Path | None:
    """A ``.NAME.part`` of `path` that a `locked` writer killed outright left (it never renamed nor removed it), moved
    aside before a new writer truncates it: ``STEM.unfinished-YYYYmmdd-HHMMSS SUFFIX`` beside `path`, by the time it
    was last written, returned.  None when there is none, it is empty (nothing lost by replacing it) or a live
    writer holds it (`part_in_use`: the new writer's `AtomicFile` then says so)."""
    path = Path(path)
    part = part_path(path)
    try:
        stat = part.stat()
    except OSError:
        return None
    if stat.st_size == 0 or part_in_use(path):
        return None
    when = time.strftime("%Y%m%d-%H%M%S", time.localtime(stat.st_mtime))
    kept = path.with_name(f"{path.stem}.unfinished-{when}{path.suffix}")
    os.replace(part, kept)
    return kept


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """``with atomic_output(path) as f: ...``: `path` appears, whole, only when the block ends
    without an error; on an error (a full disk included) nothing is left."""
    out = AtomicFile(path, mode)
    try:
        yield out.file
        out.commit()
    except BaseException:
        out.discard()
        raise


def write_atomic(path: str | os.PathLike, data: bytes | str) -> None:
    """Write `data` to `path` as a whole or not at all."""
    with atomic_output(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


LOCK_SUFFIX = ".lock"


@contextlib.contextmanager
def owned_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new folder ``parent/prefixXXXXXXXX`` for the block, removed when it ends (if still there), and owned
    meanwhile: its lock file beside it (``prefixXXXXXXXX.lock``) holds an exclusive flock, which the kernel
    lets go when this process ends, however it ends.  So a folder a SIGKILLed run left is told from one a live
    run works in (`remove_stale_folders`).  The lock file is made and locked before the folder exists."""
    import fcntl

    parent.mkdir(parents=True, exist_ok=True)
    fd, lock_name = tempfile.mkstemp(prefix=prefix, suffix=LOCK_SUFFIX, dir=parent)
    lock = Path(lock_name)
    folder = lock.with_name(lock.name.removesuffix(LOCK_SUFFIX))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # (uncontended: the name is new)
        folder.mkdir(mode=0o700)  # (as mkdtemp: its random name is the lock's, unique in parent)
        try:
            yield folder
        finally:
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def remove_stale_folders(parent: Path, prefix: str) -> list[Path]:
    """Remove the `owned_folder`s of `prefix` in `parent` whose owner is gone (a run killed with SIGKILL, or
    by the out-of-memory killer, leaves its folder and lock file): those whose lock file nobody holds.  A
    folder without a lock file is not one (an older version's, another program's) and is left.  Returns the
    folders removed."""
    import fcntl

    removed = []
    try:
        locks = sorted(parent.glob(f"{glob.escape(prefix)}*{LOCK_SUFFIX}"))  # (a model's name may hold "[")
    except OSError:
        return removed
    for lock in locks:
        try:
            fd = os.open(lock, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        except OSError:  # (removed meanwhile by its owner, or not ours to open)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # (held: a live run's)
            os.close(fd)
            continue
        try:
            folder = lock.with_name(lock.name.removesuffix(LOCK_SUFFIX))
            # (a lock without its folder may be one a run has just made and not yet locked: left, as harmless)
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
                with contextlib.suppress(OSError):
                    lock.unlink()
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def staged_folder(dest: Path, report: Callable[[str], None] | None = None, replace: bool = True) -> Iterator[Path]:
    """A folder made beside `dest` (``.NAME.partial-*``) for a block to build in, moved to `dest` when the block
    ends without error, replacing what was there only then, and removed when it does not: no half-made
    folder under `dest`'s name, and an installed one kept until its replacement is complete.  A staging folder
    of `dest` that a killed run left is removed first, and said to `report` (else logged).  With `replace`
    False, a `dest` that appeared while the block ran (another run of the same name, finished first) is kept,
    and `FolderAppeared` raised: the block's folder is removed."""
    prefix = f".{dest.name}.partial-"
    remove_stale(dest.parent, prefix, "staging folder", report)
    with owned_folder(dest.parent, prefix) as staging:
        staging.chmod(0o755)  # (0700 would hide a shared model directory from other users)
        yield staging
        if dest.exists():
            if not replace:
                raise FolderAppeared(dest)
            shutil.rmtree(dest)
        try:
            staging.rename(dest)
        except OSError as exc:  # (made between the look and the move: a folder not empty is never replaced)
            if replace or not dest.exists():
                raise
            raise FolderAppeared(dest) from exc


class FolderAppeared(FileExistsError):
    """The folder `staged_folder` was to install, made by another run while this one built its own."""

    def __init__(self, dest: Path):
        super().__init__(f"{dest} was made by another run while this one ran")
        self.dest = dest


def remove_stale(parent: Path, prefix: str, what: str, report: Callable[[str], None] | None = None) -> None:
    """`remove_stale_folders`, each folder removed said in one line to `report` (else logged); so is each folder
    of `prefix` without a lock file (an older version's, or not ours), which is left as it is."""
    def say(message: str) -> None:
        if report is not None:
            report(message)
        else:
            logger.info("%s", message)

    for folder in remove_stale_folders(parent, prefix):
        say(f"removed the {what} {folder}, left by a run that was killed")
    with contextlib.suppress(OSError):
        for folder in sorted(parent.glob(f"{glob.escape(prefix)}*")):
            if folder.name.endswith(LOCK_SUFFIX):
                continue
            lock = folder.with_name(folder.name + LOCK_SUFFIX)
            if folder.is_dir() and not lock.exists():  # (ours have their lock file made before them)
                say(f"left the {what} {folder}: it has no lock file, so whether a run still uses it is unknown "
                    f"(remove it if none does)")
