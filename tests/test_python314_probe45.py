"""Debian testing (forky, Python 3.14.8), probed 2026-12-05 in a debootstrap root (scripts/check_debian13.sh with
SUITE=forky): libmagic1, which the set-up installs for python-magic, is there libmagic1t64 (Debian's move to a
64-bit time_t; Ubuntu 24.04 made the same), which provides libmagic1.  `dpkg -s libmagic1` does not know a name
only provided, so the set-up said it missing on every run, after it was installed: to a user who is not root, "run
`sudo apt-get install libmagic1`", for ever.  A package an installed one provides is installed now.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from helpers import REPO


def _database_where_libmagic1_is_provided(folder: Path) -> Path:
    """A copy of this machine's dpkg database in which libmagic1 is installed as forky has it: libmagic1t64,
    providing libmagic1 (Debian 12's and 13's libmagic1 renamed so; forky's own as it is)."""
    status = Path("/var/lib/dpkg/status").read_text()
    if not re.search(r"^Package: libmagic1t64\n", status, re.M):
        status, renamed = re.subn(r"^Package: libmagic1\n((?:.+\n)*?)(Version: (\S+)\n)",
                                  r"Package: libmagic1t64\n\1\2Provides: libmagic1 (= \3)\n", status, flags=re.M)
        assert renamed == 1  # (the set-up installed it here)
    for sub in ("info", "updates"):
        (folder / sub).mkdir(parents=True)
    (folder / "status").write_text(status)
    return folder


def _missing(database: Path, *packages: str) -> str:
    done = subprocess.run(["bash", "-c", 'source scripts/lib.sh && missing_packages "$@"', "bash", *packages],
                          cwd=REPO, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                                       "DPKG_ADMINDIR": str(database)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_package_that_an_installed_one_provides_is_not_said_missing(tmp_path):
    database = _database_where_libmagic1_is_provided(tmp_path / "dpkg")
    assert subprocess.run(["dpkg", "-s", "libmagic1"], env={"DPKG_ADMINDIR": str(database), "PATH": "/usr/bin:/bin"},
                          capture_output=True).returncode != 0  # (dpkg itself does not know it by that name)
    assert _missing(database, "libmagic1", "bash") == ""
    # (what neither is nor is provided is still missing, and a name only inside another's is not taken for it)
    assert _missing(database, "libmagic1", "no-such-package", "magic1") == "no-such-package magic1 "
