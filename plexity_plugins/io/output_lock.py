"""One run at a time per output folder: `own_output_folder`.

Two ``plexity clean`` runs into one folder wrote the same ``.part`` files, and the second failed
on the first's rename, leaving ``"completed": false`` over a finished file; a ``plexity run``
started while a killed one's workers still wrote could run a task twice into one file.  The owner
holds an exclusive ``flock`` on ``.plexity.lock`` in the folder: the kernel lets it go when the
owner's last process ends, however it ends (a SIGKILL included), so a lock is never left stale,
and ``plexity run``'s forked workers, which share it, keep the folder owned while they live.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from ..errors import FolderNotMade, OutputFolderInUse

LOCK_NAME = ".plexity.lock"


@contextlib.contextmanager
def own_output_folder(folder: str | os.PathLike, option: str = "--output-dir"):
    """Own `folder` (made if missing) for the duration of the block, or raise `OutputFolderInUse`
    at once, naming the run that owns it.  The lock file is removed when the block ends."""
    import fcntl

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():  # (mkdir would say only "[Errno 17] File exists")
        raise NotADirectoryError(f"{option} {folder} is a file, not a folder: choose a folder for the outputs")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # (said by errors.path_error_message: which folder, and why)
        raise FolderNotMade(exc, folder, option) from exc
    path = folder / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise OutputFolderInUse(f"the output folder {folder} is in use by another run ({owner}): wait for it to "
                                    f"end, or choose another {option}") from None
        try:  # (the file may have been removed by its last owner between our open and our lock: lock the new one)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        command = " ".join(["plexity", *sys.argv[1:3]]) if sys.argv else "plexity"
        try:  # (who owns it, for the message of a second run; the lock holds without it: a full disk)
            os.ftruncate(fd, 0)
            line = f"pid {os.getpid()}, {command}, since {time.strftime('%H:%M:%S')}\n"
            # (a file name that is not UTF-8 in the command, `plexity run 'caf\xe9*.warc.gz'`, as its escape: encoded
            # strictly, it stopped the run before it began, "'utf-8' codec can't encode character '\udce9'")
            os.pwrite(fd, line.encode("utf-8", "backslashreplace"), 0)
        except OSError:
            pass
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # (still locked: a run that opened it meanwhile sees another inode, and retries)
        os.close(fd)
