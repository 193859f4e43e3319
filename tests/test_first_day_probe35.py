"""A stranger's first day, probe 35: the product run somewhere that is not a root shell in the repository: another
user, a locale that is not UTF-8 (cron's and many containers' LC_ALL=C/POSIX), a command started by cron, a pipe
or a script, and the Python API inside other hosts. Each dead end met now works or says what is wrong and what
to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import other_user

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


# -- another user, whose HOME is not theirs to write ----------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="making a user who is not root takes root")
def test_a_user_who_cannot_write_the_model_directory_or_the_current_folder_is_told_which_and_what_to_give():
    """A user who is not root, started as cron or a service starts them (`env -i`, HOME unset or not theirs:
    `/nonexistent`), in a folder they cannot write (`/`), with `umask 077`.  `plexity models` and `plexity clean` into
    a folder of theirs work as they do for root.  `plexity models import` (and `plexity train`, which installs where
    it does) met "cannot write /nonexistent: permission denied: choose an output this user may write to", naming a
    folder they never gave; so did a shared model folder of someone else's given as PLEXITY_MODEL_DIR.  Now the one
    line names the model directory, why it is that one, and the ways out, --output-dir and PLEXITY_MODEL_DIR; and
    --output-dir installs a model that user then scores with.  `plexity report DIR` from such a folder said
    "cannot write plexity-report.html: permission denied", naming neither the folder nor --output: now it names
    both, with the --output that writes the report beside the stats; and the report no longer comes after two
    matplotlib warnings about a config folder it could not make under that HOME.  `plexity calibrate --write` of a
    model in someone else's folder read and scored all the held-out text, printed its table, then said "cannot
    write .../model.json.tmp: permission denied: choose an output this user may write to": now it says at once
    where --write would write and what to do instead.  A folder below the input this user may not list was passed
    over unsaid by `plexity clean` and `plexity run` (its WARC files silently not cleaned): now each says so."""
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="plexity-probe35-"))
    scratch.chmod(0o1777)
    shared = scratch / "shared-models"
    shared.mkdir(mode=0o755)
    model = REPO / "plexity_plugins" / "data" / "en-default" / "model.bin"
    command = [sys.executable, "-m", "plexity_plugins"]
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": "/nonexistent"}
    install = [*command, "models", "import", "mine", "--kenlm", model, "--tokenizer", "plexity-tok-1",
               "--threshold", "500"]
    try:
        with other_user("plx35") as run:
            listed = run([*command, "models"], env=base)
            assert listed.returncode == 0 and b"not there yet" in listed.stdout, listed.stderr
            umask = ["sh", "-c", 'umask 077 && exec "$@"', "sh"]
            cleaned = run([*umask, *command, "clean", SAMPLE, "-o", scratch / "cleaned", "-q"], env=base)
            assert cleaned.returncode == 0, cleaned.stderr
            assert (scratch / "cleaned" / "sample.warc.gz").stat().st_mode & 0o077 == 0  # (the user's umask kept)
            reported = run([*command, "report", scratch / "cleaned"], env=base)  # (from `/`, as cron starts it)
            assert reported.returncode == 2, reported.stderr
            assert reported.stderr.decode().splitlines() == [
                f"plexity report: error: without --output the report is written in the current folder, /, which "
                f"this user may not write: give --output, as in -o {scratch / 'cleaned' / 'plexity-report.html'}"]
            reported = run([*command, "report", scratch / "cleaned", "-o", scratch / "cleaned"], env=base)
            assert reported.returncode == 0 and (scratch / "cleaned" / "plexity-report.html").is_file()
            assert (scratch / "cleaned" / "plexity-report.png").is_file() and reported.stderr == b""  # (no matplotlib
            # warnings of a config folder it could not make under HOME)

            refused = run(install, env=base)
            assert refused.returncode == 2, refused.stderr
            line = refused.stderr.decode().strip()
            assert line.startswith("plexity models import: error: cannot install a model in the model directory "
                                   "/nonexistent/.cache/plexity_plugins/models (the user cache dir, under HOME "
                                   "/nonexistent): permission denied"), line
            assert "--output-dir DIR" in line and "PLEXITY_MODEL_DIR" in line and "\n" not in line

            refused = run(install, env={**base, "PLEXITY_MODEL_DIR": shared})
            assert refused.returncode == 2, refused.stderr
            assert f"the model directory {shared} (PLEXITY_MODEL_DIR): permission denied" in refused.stderr.decode()
            assert list(shared.iterdir()) == []

            theirs = shared / "theirs"  # (a model folder of root's, which this user may read and not write)
            theirs.mkdir(mode=0o755)
            for name in ("model.bin", "model.json"):
                (theirs / name).write_bytes((model.parent / name).read_bytes())
            (scratch / "held-out.txt").write_text("The council approved the budget on Tuesday.\n" * 50)
            calibrated = run([*command, "calibrate", "--model", theirs, scratch / "held-out.txt", "--write"],
                             env=base)
            assert calibrated.returncode == 2 and calibrated.stdout == b"", calibrated.stdout  # (before any work)
            assert calibrated.stderr.decode().splitlines() == [
                f"plexity calibrate: error: --write stores the thresholds in {theirs / 'model.json'}, whose folder "
                f"this user may not write: calibrate a copy of the model (cp -r {theirs} DIR, then --model DIR), or "
                f"pass --threshold when cleaning"]
            crawl = scratch / "crawl"  # (a WARC beside a folder of root's that this user may not list)
            (crawl / "locked").mkdir(parents=True, mode=0o755)
            crawl.chmod(0o755)
            (crawl / "a.warc.gz").write_bytes(SAMPLE.read_bytes())
            (crawl / "locked" / "b.warc.gz").write_bytes(SAMPLE.read_bytes())
            (crawl / "locked").chmod(0o700)
            said = f"folder {crawl / 'locked'} could not be read (permission denied):"
            cleaned = run([*command, "clean", crawl, "-o", scratch / "crawl-cleaned", "-q"], env=base)
            assert cleaned.returncode == 0 and f"{said} the files in it are left out" in cleaned.stderr.decode()
            ran = run([*command, "run", crawl, "-o", scratch / "crawl-run"], env=base)
            assert ran.returncode == 0, ran.stderr[-2000:]
            assert f"plexity run: warning: {said} the WARC files in it are left out" in ran.stderr.decode()
            installed = run([*install, "--output-dir", scratch / "models"], env=base)
            assert installed.returncode == 0, installed.stderr
            scored = run([*command, "score", "--plain", "--model", scratch / "models" / "mine",
                          "The council approved the budget."], env=base)
            assert scored.returncode == 0 and float(scored.stdout.split()[-1]) > 0, scored.stderr
            # The language tables (~1 s of a core to build) were cached under HOME, which this user may not write:
            # every process that identified a language built them again, unsaid.  They are cached in a temporary
            # folder of this user's own.
            german = run([*command, "score", "Der Gemeinderat hat den Haushalt für die Bibliothek beschlossen."],
                         env=base)
            assert german.returncode == 0, german.stderr
            uid = int(run(["id", "-u"], env=base).stdout)
            private = Path(tempfile.gettempdir()) / f"plexity_plugins-{uid}"
            assert [p.name.split("-")[0] for p in (private / "langid").iterdir()] == ["py3langid"]
            assert private.stat().st_uid == uid and private.stat().st_mode & 0o777 == 0o700
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
        if "private" in locals():
            shutil.rmtree(private, ignore_errors=True)


# -- ended by SIGTERM, as `timeout`, a batch system or a container's stop ends a command ----------------------

def test_plexity_clean_ended_by_sigterm_says_so_and_leaves_what_ctrl_c_leaves(tmp_path):
    """`timeout -s TERM 1h plexity clean crawl -o out` (or a batch system's end of job, `docker stop`): before,
    SIGTERM ended the process where it was, silently: the output folder stayed claimed (`.plexity.lock`), the file
    being written lay there as `.NAME.part`, and plexity-stats.json said that no file had been read.  Now SIGTERM is
    Ctrl-C, as it already was for `plexity train`: one line says what is kept, the exit status is 130, no lock or
    partial file is left, and the stats count the files whose outputs are whole."""
    import json
    import signal
    import time

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for i in range(400):
        os.link(SAMPLE, crawl / f"s{i:03d}.warc.gz")
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "plexity_plugins", "clean", crawl, "-o", out, "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 60
    while len(list(out.glob("s*.warc.gz"))) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGTERM)  # (as `timeout` sends it: to the command's whole process group)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.decode().splitlines() == [
        'plexity clean: interrupted: the outputs written so far are whole; plexity-stats.json says "completed": '
        'false; the same command cleans every file again (plexity run resumes where it stopped)']
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("s")) == ["plexity-stats.json"]
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is False and stats["skip_reasons"] == {}
    assert stats["files"] == len(list(out.glob("s*.warc.gz"))) >= 3


# -- a current folder that was removed -------------------------------------------------------------------------

def test_a_command_run_in_a_folder_removed_since_says_so_and_what_to_do(tmp_path):
    """A shell whose folder another shell removed (a build directory cleaned, a job's scratch folder gone) ran
    `plexity clean crawl.warc.gz -o out` and met "plexity clean: error: [Errno 2] No such file or directory",
    naming no file (so did `plexity run` and `plexity report`).  Now the line says that the current folder is gone,
    and what to do; an absolute output still works from there."""
    gone = tmp_path / "gone"
    gone.mkdir()
    # (the folder is removed by the shell started in it, as another shell would remove it)
    script = (f'rmdir "{gone}" && "$@" -o out -q; echo "status $?"; "$@" -q -o "{tmp_path / "elsewhere"}"; '
              f'echo "status $?"')
    done = subprocess.run(["sh", "-c", script, "sh", sys.executable, "-m", "plexity_plugins", "clean", SAMPLE],
                          cwd=gone, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stderr.splitlines() == [
        "plexity clean: error: the current folder is no longer there (removed after the shell entered it), so no "
        "relative path can be followed: cd to a folder that exists, or give absolute paths"]
    assert [line for line in done.stdout.splitlines() if line.startswith("status")] == ["status 2", "status 0"]
    assert (tmp_path / "elsewhere" / "sample.warc.gz").is_file()


# -- standard streams closed by the caller ---------------------------------------------------------------------

def test_a_closed_standard_stream_is_dev_null_and_no_file_of_the_command_takes_its_place(tmp_path):
    """A script or a daemon that starts plexity with a standard stream closed (`2>&-`, `<&-`): with stderr closed,
    `plexity clean`'s output-folder lock became descriptor 2 (what a C library writes to stderr went into it), and
    its error lines were printed on stdout, mixed with what a script reads there; `plexity score -` with stdin
    closed ended in a traceback ("'NoneType' object has no attribute 'buffer'", exit 1).  Now a closed stream is
    /dev/null, as a daemon's are: the error is not on stdout, stdin reads as empty (exit 2, as documented), and
    the lock is another descriptor."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = f'"{sys.executable}" -m plexity_plugins'
    script = (f'{command} clean /nonexistent.warc.gz -o "{tmp_path}/a" 2>&-; echo "status $?"; '
              f'{command} score - <&-; echo "status $?"; '
              f'''{command} clean "{SAMPLE}" -o "{tmp_path}/b" -q 2>&- >/dev/null & pid=$!; '''
              f'''while [ ! -e "{tmp_path}/b/.plexity.lock" ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done; '''
              f'''readlink /proc/$pid/fd/2; wait $pid; echo "status $?"''')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert [line for line in done.stdout.splitlines() if "status" in line] == ["status 2", "status 2", "status 0"], \
        (done.stdout, done.stderr)
    assert "error" not in done.stdout and "lock" not in done.stdout, done.stdout
    assert done.stderr.splitlines() == ["plexity score: stdin is empty: nothing to score"]


# -- a WARC whose name is not UTF-8 ------------------------------------------------------------------------------

def test_plexity_run_of_a_glob_naming_a_file_that_is_not_utf8_runs_and_logs_it(tmp_path):
    """`plexity run 'caf\\xe9*.warc.gz'` (a crawl saved under a Latin-1 name, as wget saves one) stopped before any
    task: "plexity run: error: 'utf-8' codec can't encode character '\\udce9'" (the output folder's lock recorded
    the command line); and a task reading such a file wrote no "Reading input file" line to its log but a
    traceback of loguru's to the terminal for each line it could not write, as every line of a task's log under
    LC_ALL=POSIX (PYTHONUTF8=0: the log was opened in the locale's ASCII) that holds one of datatrove's emoji.
    Now the run completes, and the task's log, in UTF-8, names the file with its byte escaped."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / os.fsdecode(b"caf\xe9.warc.gz")).write_bytes(SAMPLE.read_bytes())
    done = plexity("run", os.fsdecode(b"caf\xe9*.warc.gz"), "-o", tmp_path / "out", cwd=crawl, env=POSIX,
                   clean_env=True)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and b"Logging error" not in done.stderr, done.stderr[-2000:]
    log = (tmp_path / "out" / "logs" / "logs" / "task_00000.log").read_text(encoding="utf-8")
    assert "Reading input file caf\\udce9.warc.gz, 1/1" in log
    assert "\U0001f4d6 - READER" in log


# -- python -OO ------------------------------------------------------------------------------------------------

def test_the_examples_run_under_python_oo_which_strips_docstrings(tmp_path):
    """`python -OO examples/datatrove_local.py` (a host that runs Python with docstrings stripped, or
    PYTHONOPTIMIZE=2 in its environment) ended in "AttributeError: 'NoneType' object has no attribute 'split'":
    each example built its --help from its docstring.  Now they run; the package itself never needed them."""
    script = " && ".join(f'"{sys.executable}" -OO {REPO / "examples" / name} --help >/dev/null'
                         for name in ("datatrove_local.py", "make_sample_warc.py"))
    done = subprocess.run(["bash", "-c", f'{script} && "{sys.executable}" -OO -m plexity_plugins clean {SAMPLE} '
                           f'-o "{tmp_path / "out"}" -q >/dev/null'],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "sample.warc.gz").is_file()
