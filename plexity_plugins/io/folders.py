"""Walking a folder tree of any depth."""

from __future__ import annotations

import os


def walk(top: str | os.PathLike):
    """`os.walk(top)` (top-down, the caller may prune the folder names it is given, symlinks to folders not followed,
    folders that cannot be listed passed over), without its recursion: Python 3.11's os.walk and Path.rglob recurse
    once a level, and a folder nested 1,000 levels deep (a crawler trap, /a/a/a/..., mirrored by wget) stopped
    `plexity clean` with a RecursionError traceback.  Each folder's names come as os.walk gives them, its folders
    walked in the order they are left in."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirnames, filenames, links = [], [], set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield folder, dirnames, filenames
        stack.extend(os.path.join(folder, name) for name in reversed(dirnames) if name not in links)
