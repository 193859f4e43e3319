"""A read of an input file that the system fails (EIO: a bad sector, a network or FUSE mount that lost its
server) is no bad input: it is never named ``not_a_warc``, ``truncated`` or ``corrupt``.

`WarcFile` raises `ReadError` (an OSError, errno kept, the file and the byte named) after the records it
read whole.  ``plexity clean`` keeps those records' output, names the file ``read_error`` in
``damaged_files``, goes on with the other files, and exits 1; a ``plexity run`` task fails with it (the
other tasks go on; a re-run redoes it), as datatrove's own reader lets an I/O error through.

The failing reads are real: a file object whose reads fail past an offset (in this process), and, for the
commands, a C library preloaded into them whose ``read()`` fails with EIO past an offset of one file, as a
disk with a bad sector there does (no FUSE, no device-mapper; built with the C compiler the set-up installs).  Before,
the file was named "not a WARC file (OSError: [Errno 5] Input/output error)" when the failure came in its
first 4 kB, and otherwise a record was counted ``truncated`` and the OSError crashed the reading.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plexity_plugins.errors import ReadError
from plexity_plugins.io.inputs import WarcFile
from warc_corpus import ARTICLE, page, record_bytes
from web_archives import FailingDisk

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]


def warc_of_ten(path: Path) -> list[int]:
    """Ten HTML records of about 5 kB gzipped each; returns where each record's member ends."""
    rng = random.Random(0)
    members = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE, "".join(
        rng.choice("abcdefgh ") for _ in range(8000))).encode())) for i in range(10)]
    path.write_bytes(b"".join(members))
    ends, end = [], 0
    for member in members:
        end += len(member)
        ends.append(end)
    return ends


@pytest.mark.parametrize("at", [0, 100, "middle", "near-the-end"])
def test_a_failed_read_is_a_read_error_after_the_records_read_whole(tmp_path, at):
    path = tmp_path / "disk.warc.gz"
    ends = warc_of_ten(path)
    at = {"middle": ends[4] + 1000, "near-the-end": ends[-1] - 10}.get(at, at)
    warc = WarcFile(io.BufferedReader(FailingDisk(path, at)), name="disk.warc.gz")
    read = []
    with pytest.raises(ReadError) as raised:
        for record in warc:
            read.append((record.uri, record.skip))
    assert raised.value.errno == errno.EIO
    assert str(raised.value).startswith("[Errno 5] disk.warc.gz: read error at byte ")
    # every record read whole before the failure (at least those of the 16 kB reads before it), none skipped
    assert read == [(f"http://t/{i}", None) for i in range(len(read))] and len(read) == warc.records < 10
    assert len(read) >= sum(end <= at - (1 << 14) for end in ends)
    assert warc.problem is None  # (never "not_a_warc", "truncated" or "corrupt")


def _preloaded_eio(tmp_path: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    # (scripts/setup.sh installs one to build our extension: a suite without it is a broken set-up, not a skip)
    assert compiler is not None, "no C compiler to build the failing read()"
    source = tmp_path / "eio.c"
    source.write_text(EIO_READ)
    library = tmp_path / "eio.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source), "-ldl"], check=True)
    return library


# read() fails with EIO from byte EIO_AT of the file whose path ends in EIO_FILE.
EIO_READ = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_target(int fd) {
    const char *name = getenv("EIO_FILE");
    char link[64], path[4096];
    if (!name) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    size_t len = strlen(name);
    return (size_t)n >= len && strcmp(path + n - len, name) == 0;
}

ssize_t read(int fd, void *buf, size_t count) {
    static ssize_t (*real_read)(int, void *, size_t);
    if (!real_read) real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    if (is_target(fd)) {
        off_t at = (off_t)atoll(getenv("EIO_AT") ? getenv("EIO_AT") : "0");
        off_t pos = lseek(fd, 0, SEEK_CUR);
        if (pos >= at) { errno = EIO; return -1; }
        if (pos + (off_t)count > at) count = (size_t)(at - pos);
    }
    return real_read(fd, buf, count);
}
"""


def test_plexity_clean_names_a_read_error_goes_on_and_exits_1_and_plexity_run_fails_the_task(tmp_path):
    library = _preloaded_eio(tmp_path)
    (tmp_path / "in").mkdir()
    ends = warc_of_ten(tmp_path / "in" / "failing.warc.gz")
    warc_of_ten(tmp_path / "in" / "sound.warc.gz")
    env = {**os.environ, "LD_PRELOAD": str(library), "EIO_FILE": "failing.warc.gz", "EIO_AT": str(ends[5] + 100)}

    clean = subprocess.run([*PLEXITY, "clean", str(tmp_path / "in"), "-o", str(tmp_path / "clean"),
                            "--extractor", "tags", "-q"], capture_output=True, text=True, timeout=300, env=env)
    assert clean.returncode == 1, clean.stderr
    error = clean.stderr.strip().splitlines()[-1]
    assert error.startswith("plexity clean: error: 1 file(s) could not be read to their end (read_error")
    assert "failing.warc.gz: read error at byte " in error and "Input/output error" in error
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["damaged_files"] == {"read_error": 1} and stats["files"] == 2 and stats["completed"]
    assert 10 < stats["records"] < 20 and stats["documents"] == stats["records"]  # (the sound file whole)
    assert (tmp_path / "clean" / "failing.warc.gz").stat().st_size > 0  # (the records before it, cleaned)

    run = subprocess.run([*PLEXITY, "run", str(tmp_path / "in"), "-o", str(tmp_path / "run"), "--extractor", "tags",
                          "--tasks", "2", "--min-chars", "0"], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1/2 tasks completed" in run.stdout and "re-run the same command to run only those" in run.stderr
    logs = "".join(p.read_text() for p in (tmp_path / "run" / "logs" / "logs").glob("task_*.log"))
    assert "ReadError: [Errno 5] failing.warc.gz: read error at byte" in logs
    assert "not_a_warc" not in logs and "corrupt_files" not in logs

    again = subprocess.run([*PLEXITY, "run", str(tmp_path / "in"), "-o", str(tmp_path / "run"), "--extractor", "tags",
                            "--tasks", "2", "--min-chars", "0"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr  # (the disk reads again: the failed task redone)
    assert "2/2 tasks completed (1 in this run" in again.stdout


def test_plexity_clean_names_a_read_error_in_a_page_file_as_in_a_warc(tmp_path):
    library = _preloaded_eio(tmp_path)
    (tmp_path / "in").mkdir()
    html = page(ARTICLE, "A page in a file of its own.").encode()
    (tmp_path / "in" / "failing.html.gz").write_bytes(gzip.compress(html * 20))
    (tmp_path / "in" / "sound.html").write_bytes(html)
    env = {**os.environ, "LD_PRELOAD": str(library), "EIO_FILE": "failing.html.gz", "EIO_AT": "100"}
    clean = subprocess.run([*PLEXITY, "clean", str(tmp_path / "in"), "-o", str(tmp_path / "clean"),
                            "--extractor", "tags", "-q"], capture_output=True, text=True, timeout=300, env=env)
    assert clean.returncode == 1, clean.stderr  # (before: unreadable_file, a skip like a symlink loop's; exit 0)
    assert "failing.html.gz: read error at byte " in clean.stderr.strip().splitlines()[-1]
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["damaged_files"] == {"read_error": 1} and stats["documents"] == 1 and not stats["skip_reasons"]
