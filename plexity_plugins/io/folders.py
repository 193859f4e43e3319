"""Walking a folder tree of any depth."""

from __future__ import annotations

import os


def walk(top: str | os.PathLike, unlisted: list | None = None):
    """`os.walk(top)` (top-down, the caller may prune the folder names it is given, symlinks to folders not followed,
    folders that cannot be listed passed over), without its recursion: Python 3.11's os.walk and Path.rglob recurse
    once a level, and a folder nested 1,000 levels deep (a crawler trap, /a/a/a/..., mirrored by wget) stopped
    `plexity clean` with a RecursionError traceback.  Each folder's names come as os.walk gives them, its folders
    walked in the order they are left in.  `unlisted`, a list, gets each folder that could not be listed, with its
    error: a folder this user may not read was passed over unsaid, its files silently not cleaned."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            if unlisted is not None:
                unlisted.append((folder, exc))
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


def unlisted_folder_message(folder: str, exc: OSError, what: str) -> str:
    """One line for a folder below an input folder that could not be listed: which, why, and that `what` (the files
    the command reads) in it are left out."""
    why = (exc.strerror or str(exc)).lower() if isinstance(exc, OSError) else str(exc)
    return f"folder {folder} could not be read ({why}): {what} in it are left out"


WARC_GLOB = "**/*.warc*"  # a folder's WARC files: .warc, .warc.gz and WET files (.warc.wet.gz), recursively
ARC_SUFFIXES = (".arc", ".arc.gz")  # ARC files, WARC's predecessor (Common Crawl's 2008-2012 crawls), read as WARCs
# ... and its ARC files too: one glob cannot say ".warc* or .arc*" (fsspec's has no {a,b}), so this one takes any name
# with ".arc" or "warc" in it (a "notes.archive.zip" too, read and counted as not_a_warc)
WARC_AND_ARC_GLOB = "**/*[.w]arc*"
WACZ_SUFFIX = ".wacz"  # a WACZ: a zip of a crawl's WARCs (`wacz_files`), read as the WARCs it holds
# ... and its WACZ files too: ".warc*", ".arc*" and ".wacz" as one glob (any name with ".arc", "warc" or "wacz" in it,
# and a few more spellings, "warz", "wacc", read and counted as not_a_warc)
WARC_ARC_AND_WACZ_GLOB = "**/*[.w]a[rc][cz]*"


def warc_glob(folder: str | os.PathLike) -> str:
    """The glob of a local `folder`'s WARC files: `WARC_GLOB`, or `WARC_AND_ARC_GLOB` where the folder (below it,
    at any depth) holds a ``.arc`` or ``.arc.gz`` file, or `WARC_ARC_AND_WACZ_GLOB` where it holds a ``.wacz``.  (A
    folder of WARCs alone keeps the glob it always had, and one of WARCs and ARCs the one it had since: an earlier
    run's recorded settings still match it, so the run resumes.)"""
    arc = False
    for _, _, names in walk(folder):
        lower = [name.lower() for name in names]
        if any(name.endswith(WACZ_SUFFIX) for name in lower):
            return WARC_ARC_AND_WACZ_GLOB
        arc = arc or any(name.endswith(ARC_SUFFIXES) for name in lower)
    return WARC_AND_ARC_GLOB if arc else WARC_GLOB
