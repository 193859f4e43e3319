"""A locked-down container for the tests (tests/test_container_probe39.py tells the story): a mount namespace
(``unshare -m``) whose root is remounted read-only, entered as UID 123456 (``setpriv``) with no /etc/passwd entry,
HOME unset and only the output folder writable.  It takes root, as CI runs the tests: `needs_root` skips otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
UID = 123456

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"),
                                reason="a read-only container for an arbitrary UID is made with root, unshare and "
                                       "setpriv")

# (the interpreter may live under a folder only root enters, pyenv's under /root: the namespace lays a stage over
# each such folder holding only the interpreter's tree, as tests/helpers.py's other_user does)
ENTER = """set -e
out=$1; shift
n=$1; shift
while [ "$n" -gt 0 ]; do
  mkdir -p "$1/$2"; mount --bind "$3/$2" "$1/$2"; mount --rbind "$1" "$3"; shift 3; n=$((n-1))
done
mount --bind "$out" "$out"
mount -o remount,bind,ro /
exec setpriv --reuid {uid} --regid {uid} --clear-groups env -i "$@"
"""


@pytest.fixture
def container():
    """``run(argv, env)``: `argv` run in the container as UID 123456 with exactly `env` (PATH, and PYTHONPATH to a
    read-only copy of the package); returns (the completed process, the output folder, the only writable one)."""
    made = [Path(tempfile.mkdtemp(prefix="plexity-p39-"))]
    base = made[0]
    (base / "ro").mkdir()
    shutil.copytree(REPO / "plexity_plugins", base / "ro" / "plexity_plugins",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = base / "out"
    out.mkdir()
    os.chown(out, UID, UID)
    for path in [base, *(base / "ro").rglob("*")]:
        path.chmod(path.stat().st_mode | 0o005 | (0o001 if path.is_dir() else 0))
    stages = []
    for needed in {Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent}:
        blocked = next((p for p in reversed(needed.parents) if p != Path("/") and not os.stat(p).st_mode & 0o001),
                       None)
        if blocked is not None and all(blocked != b for _, _, b in stages):
            stage = Path(tempfile.mkdtemp(prefix="plexity-p39-stage-"))
            stage.chmod(0o755)
            made.append(stage)
            stages.append((str(stage), needed.relative_to(blocked).parts[0], str(blocked)))

    def run(argv, env=None):
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c", ENTER.format(uid=UID), "sh", str(out),
                   str(len(stages)), *(x for s in stages for x in s),
                   *(f"{k}={v}" for k, v in {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(base / "ro"),
                                             **(env or {})}.items()), *map(str, argv)]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)

    yield run, out
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def plexity(*args):
    return [sys.executable, "-m", "plexity_plugins", *args]

