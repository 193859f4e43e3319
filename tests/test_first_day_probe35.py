"""A stranger's first day, probe 35: the product run somewhere that is not a root shell in the repository: another
user, a locale that is not UTF-8 (cron's and many containers' LC_ALL=C/POSIX), a command started by cron, a pipe
or a script, and the Python API inside other hosts. Each dead end met now works or says what is wrong and what
to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"


def plexity(*args, env: dict | None = None, cwd: Path | None = None, clean_env: bool = False, **kwargs):
    """`python -m plexity_plugins ARGS`; with `clean_env`, in an environment as bare as cron's (`env -i PATH=...`)."""
    base = {"PATH": "/usr/bin:/bin"} if clean_env else dict(os.environ)
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(os.fsencode, map(str, args))],
                          capture_output=True, timeout=300, cwd=cwd,
                          env={**base, "PYTHONPATH": str(REPO), **(env or {})}, **kwargs)


# -- a locale that is not UTF-8 ----------------------------------------------------------------------------------

POSIX = {"LC_ALL": "POSIX", "PYTHONUTF8": "0"}


def test_under_a_posix_locale_text_outside_ascii_is_printed_escaped_and_the_command_succeeds(tmp_path):
    """Under cron's or a container's locale (LC_ALL=POSIX, PYTHONUTF8=0: Python's stdout is ASCII), `plexity clean`
    of the sample crawl did its work, then exited 2 at the summary's first quoted sentence with a character outside
    ASCII: "plexity clean: error: 'ascii' codec can't encode character '\\xb0'" (the '54°F Cloudy' of a weather
    widget), and `plexity score --sentences` of a French sentence printed its header and the same error.  Now what
    the terminal cannot show is printed as its escape (`54\\xb0F`), the command exits 0, and a file name that is not
    UTF-8 (`caf\\xe9.html`, as wget saves a Latin-1 URL) is still printed as its own bytes.  The text given on the
    command line is the text the user typed: it was scored as the escapes Python decoded its bytes into under that
    locale (each byte of `é` an unknown character: 268,639 for a sentence that scores 28,247)."""
    name = b"caf\xe9 page.html"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / os.fsdecode(name)).write_bytes(b"<html><body><p>The council approved the budget.</p>"
                                                      b"<footer>Share \xc2\xb7 Email</footer></body></html>")
    (tmp_path / "in" / "sample.warc.gz").write_bytes(SAMPLE.read_bytes())
    cleaned = plexity("clean", tmp_path / "in", "-o", tmp_path / "out", "--extractor", "tags",
                      env=POSIX, clean_env=True)
    assert cleaned.returncode == 0, cleaned.stderr
    assert b"'54\\xb0F Cloudy'" in cleaned.stdout
    assert (tmp_path / "out" / os.fsdecode(name + b".txt")).exists()

    sentence = "Le conseil a approuvé le budget. Ça va — très bien."
    scores = [plexity("score", "--sentences", sentence, env=env, clean_env=True)
              for env in (POSIX, {"LANG": "C.UTF-8"})]
    assert [s.returncode for s in scores] == [0, 0], scores[0].stderr
    assert "approuv\\xe9 le budget. \\xc7a va \\u2014 tr\\xe8s bien." in scores[0].stdout.decode("ascii")
    assert sentence in scores[1].stdout.decode("utf-8")
    assert scores[0].stdout.splitlines()[-3:] == [
        line.encode("ascii", "backslashreplace") for line in scores[1].stdout.decode().splitlines()[-3:]]
