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
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator

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


@contextlib.contextmanager
def staged_folder(dest: Path) -> Iterator[Path]:
    """A folder made beside `dest` (``.NAME.partial-*``) for a block to build in, moved to `dest` when the block
    ends without error, replacing what was there only then, and removed when it does not: no half-made
    folder under `dest`'s name, and an installed one kept until its replacement is complete."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    staging.chmod(0o755)  # (mkdtemp's 0700 would hide a shared model directory from other users)
    try:
        yield staging
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
