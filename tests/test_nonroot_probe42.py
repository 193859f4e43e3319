"""A user who is not root, on a Debian machine where a system package the set-up needs is missing, and
`apt-get update` once per set-up.  Run for real: the set-up's own scripts, a user made for the test, dpkg reading a
copy of this machine's package database that lacks the packages (DPKG_ADMINDIR), apt-get against an unreachable
mirror in folders of its own (APT_CONFIG): nothing on the machine is installed or changed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from helpers import other_user

REPO = Path(__file__).resolve().parent.parent


def _scripts_and_a_database_without(*packages: str) -> Path:
    """A folder other users may read holding a copy of the checkout's scripts/ and, in `dpkg/`, this machine's dpkg
    database less `packages` (what `dpkg -s` reads under DPKG_ADMINDIR)."""
    folder = Path(tempfile.mkdtemp(prefix="plexity-probe42-"))
    folder.chmod(0o755)
    shutil.copytree(REPO / "scripts", folder / "checkout" / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    database = folder / "dpkg"
    for sub in ("info", "updates"):
        (database / sub).mkdir(parents=True)
    entries = Path("/var/lib/dpkg/status").read_text().split("\n\n")
    names = "|".join(map(re.escape, packages))
    # (the package, or the one that provides it: libmagic1 is libmagic1t64 on Debian forky)
    kept = [e for e in entries if not re.match(rf"Package: ({names})\n", e)
            and not re.search(rf"^Provides: (.*, )?({names})( \(.*?\))?(,|$)", e, re.M)]
    assert len(entries) - len(kept) == len(packages)  # (each of them was installed here)
    (database / "status").write_text("\n\n".join(kept))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def test_a_user_who_is_not_root_is_told_the_one_command_that_installs_the_missing_packages():
    # Before: apt-get's "Could not open lock file ... (13: Permission denied)", "are you root?", then "setup: failed:
    # system packages ... full log: /tmp/tmp.X"; with --test, a hook's package missing was met after the two
    # minutes of the Python install.  Now one line naming every missing package and the command, before anything.
    folder = _scripts_and_a_database_without("libmagic1", "chromium")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent", "DPKG_ADMINDIR": folder / "dpkg"}
    setup = folder / "checkout" / "scripts" / "setup.sh"
    try:
        with other_user("plx42") as run:
            plain = run(["bash", setup], env=env)
            tests = run(["bash", setup, "--test"], env=env)
            # with every package there (the machine's database), a hook says what it found: its version line was
            # "ci/slurm: " for such a user (slurmctld is in /usr/sbin, not on that PATH)
            hook = run(["bash", folder / "checkout" / "scripts" / "ci" / "60-slurm.sh"], env=env)
        venv_made = (folder / "checkout" / ".venv").exists()
    finally:
        shutil.rmtree(folder)
    for done, missing in ((plain, "libmagic1"), (tests, "libmagic1 chromium")):
        assert done.returncode == 1 and done.stdout == b"", done.stdout + done.stderr
        assert done.stderr.decode().splitlines() == [
            f"setup: not root: these system packages are missing and only root can install them: run `sudo apt-get "
            f"update && sudo apt-get install -y --no-install-recommends {missing}` (or ask your administrator to), "
            f"then this command again"]
    assert not venv_made
    assert hook.returncode == 0 and re.fullmatch(rb"ci/slurm: slurm(-wlm)? [0-9.]+\n", hook.stdout), hook.stdout


def test_apt_get_update_runs_once_per_set_up_whatever_a_fixed_name_in_tmp_says():
    # Before: /tmp/.plexity-apt-updated, left by an earlier day's set-up (or made by any user), kept apt-get update
    # from ever running again: stale lists, and an install of a package since replaced on the mirror got 404s.
    work = Path(tempfile.mkdtemp(prefix="plexity-probe42-apt-"))
    for sub in ("lists/partial", "cache/archives/partial", "sources.list.d", "dpkg"):
        (work / sub).mkdir(parents=True)
    (work / "dpkg" / "status").touch()
    (work / "sources.list").write_text("deb http://127.0.0.1:9/debian bookworm main\n")  # (nothing listens on 9)
    (work / "apt.conf").write_text(
        f'Dir::State::Lists "{work}/lists"; Dir::Cache "{work}/cache"; Dir::State::status "{work}/dpkg/status";\n'
        f'Dir::Etc::SourceList "{work}/sources.list"; Dir::Etc::SourceParts "{work}/sources.list.d";\n'
        'Acquire::Retries "0"; APT::Sandbox::User "root";\n')
    stale = Path("/tmp/.plexity-apt-updated")
    made_stale = not stale.exists()
    stale.touch()

    def install(**env):
        return subprocess.run(["bash", "-c", f"source {REPO}/scripts/lib.sh && apt_install plexity-no-such-package"],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "APT_CONFIG": str(work / "apt.conf"), **env})

    try:
        alone = install()  # (a hook run by itself)
        first = install(PLEXITY_APT_UPDATED=str(work / "updated"))  # (the set-up's first apt_install)
        again = install(PLEXITY_APT_UPDATED=str(work / "updated"))  # (a hook after it in the same set-up)
    finally:
        shutil.rmtree(work)
        if made_stale:
            stale.unlink()
    for done in (alone, first):
        assert "127.0.0.1:9" in done.stderr, done.stderr  # (apt-get update tried the mirror)
    assert "127.0.0.1:9" not in again.stderr, again.stderr
    for done in (alone, first, again):
        assert done.returncode == 100 and "Unable to locate package plexity-no-such-package" in done.stderr
