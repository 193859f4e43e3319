"""``PLEXITY_DROPPED_FILE``, the JSON-lines file of every dropped sentence and item: the setting checked before the
crawl starts (a path or a ``file://`` URI, ``%(name)s`` and ``%(time)s`` filled in, a folder that takes a file, a
file no other process's crawl writes now).  The pipeline claims the file for one crawl of its process
(`plexity_plugins.scrapy.pipeline._claim_dropped_file`) and writes it (`plexity_plugins.cleaning.policy.DroppedLog`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import PlexitySettingError, cannot_write_message, path_error_message


def _dropped_file_setting(value, spider_name: str | None = None) -> str | None:
    """PLEXITY_DROPPED_FILE, checked before the crawl: the file is renamed into place when the spider closes,
    so a directory there would fail only then, losing the crawl's log.  A missing directory is made, as
    `plexity clean` makes its --output-dir (and Scrapy its feeds' directories).  ``%(name)s`` and ``%(time)s``
    are filled in as in a feed's URI (`_file_name_params`)."""
    if not value:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {value!r}: a file's path")
    if "%(" in str(value):  # (as `-o items-%(time)s.jsonl` names a feed: a file literally named so was written)
        try:
            value = str(value) % _file_name_params(spider_name)
        except (KeyError, ValueError, TypeError) as exc:
            raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {str(value)!r}: only %(name)s (the spider's) and "
                                      f"%(time)s (the crawl's start) are filled in ({type(exc).__name__}: {exc})") \
                from None
    path = Path(_local_path(str(value))).expanduser()  # (a settings.py's "~/crawl/dropped.jsonl" made a folder "~")
    if path.is_dir():
        raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {str(value)!r}: a directory, not a file")
    from ..io.atomic_files import part_in_use

    if part_in_use(path):  # (two crawls wrote one file: the second's start truncated the first's rows)
        raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {str(value)!r}, which another crawl is writing now: "
                                  f"give each crawl its own file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission
        raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {str(value)!r}: its directory cannot be made "
                                  f"({path_error_message(exc)})") from None
    try:  # (a folder that takes no file, read-only or not this user's, failed at the first dropped item)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:  # (said of the folder: the probe's own name means nothing to the user)
        refused = OSError(exc.errno, exc.strerror, str(path.parent))
        raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {str(value)!r}: "
                                  f"{cannot_write_message(refused) or path_error_message(refused)}") from None
    return str(path)


def _local_path(value: str) -> str:
    """PLEXITY_DROPPED_FILE as a local path: a ``file://`` URI, as a Scrapy feed's is written (``FEEDS =
    {"file:///data/items.jsonl": ...}``), is its path (`local_path`, as the command line reads one); another URI
    (``s3://``, ``ftp://``: feed storages of Scrapy's) is refused, naming what to give. (Both were taken as relative
    paths: ``file:///data/dropped.jsonl`` wrote ``./file:/data/dropped.jsonl``, a folder named ``file:`` in the
    crawl's folder, and the log named it.)"""
    import re

    from ..runtime.extras import local_path

    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", value)
    if not scheme or scheme.group(1).lower() in ("file", "local"):
        try:
            return local_path(value)
        except ValueError as exc:
            raise PlexitySettingError(f"PLEXITY_DROPPED_FILE: {exc}") from None
    raise PlexitySettingError(f"PLEXITY_DROPPED_FILE is {value!r}: give a file on this machine (a path, or a file:// "
                              f"URI), and copy it to {scheme.group(1)}:// when the crawl ends")


def _file_name_params(spider_name: str | None) -> dict[str, str]:
    """What a file name's ``%(name)s`` and ``%(time)s`` stand for, as in a Scrapy feed's URI: the spider's name, and
    the crawl's start in UTC, to the second, with "-" for ":" (2026-12-02T14-58-39+00-00)."""
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).replace(microsecond=0)
    return {"name": spider_name or "", "time": now.isoformat().replace(":", "-")}
