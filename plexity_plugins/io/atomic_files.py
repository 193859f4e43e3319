"""Output files that never look complete when they are not, the same for every front end.

An output is written under a temporary name in its own directory (``.NAME.part``: hidden, and
on the same file system, so the final step is an atomic rename) and renamed to its name only
once it is whole.  A full disk, an error or a kill part-way leaves no file under the real name:
the old one if there was one, else nothing, and at worst a ``.NAME.part`` file, which no
reader takes for an output.

A full disk (ENOSPC, EDQUOT) is not a bad input: `disk_full_message` turns it into the one
line every front end prints before it stops with a non-zero status.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import IO, Iterator

PART_PREFIX = "."
PART_SUFFIX = ".part"

# The disk (or the user's quota) is full: every further write fails the same way.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def part_path(path: str | os.PathLike) -> Path:
    """The temporary name `path` is written under until it is complete."""
    path = Path(path)
    return path.with_name(f"{PART_PREFIX}{path.name}{PART_SUFFIX}")


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc` (or an error it was raised from) says the disk or quota is full."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def disk_full_message(exc: BaseException, where: str | os.PathLike | None = None) -> str:
    """One line for a full disk: what failed, where, and what to do."""
    filename = getattr(exc, "filename", None) or where
    code = getattr(exc, "errno", None) if getattr(exc, "errno", None) in DISK_FULL_ERRNOS else errno.ENOSPC
    place = f" (writing {filename})" if filename else ""
    return (f"{os.strerror(code).lower()}{place}: free some space or choose another output directory, "
            f"then run the same command again")


class AtomicFile:
    """A file written as ``.NAME.part`` and renamed to NAME by `commit`; `discard` removes it.

    Args:
        path: the final name.
        mode: "wb" (default) or "w" (text, UTF-8).
    """

    def __init__(self, path: str | os.PathLike, mode: str = "wb"):
        if mode not in ("wb", "w"):
            raise ValueError(f"AtomicFile writes new files only (mode 'wb' or 'w'), not {mode!r}")
        self.path = Path(path)
        self.part = part_path(self.path)
        self.file: IO = open(self.part, mode, **({} if "b" in mode else {"encoding": "utf-8"}))

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
