"""Probe 39: a locked-down container, as Kubernetes/OpenShift and batch clusters run jobs: an arbitrary UID with no
/etc/passwd entry and HOME unset, the whole filesystem read-only but the output folder (no .pyc writes; the package
a read-only copy on PYTHONPATH; /tmp unwritable, TMPDIR unset or set to a writable folder).  Each command either
works or says in one line what is wrong and what to set.  The container is a mount namespace (``unshare -m``) whose
root is remounted read-only, entered as UID 123456 (``setpriv``): that takes root, as CI runs the tests."""

from __future__ import annotations

import os
import shutil
import sys


from locked_container import REPO, SAMPLE, UID, container, needs_root, plexity  # noqa: F401 - the fixture

pytestmark = needs_root


def test_the_container_is_locked_down_and_plexity_clean_works_there(container):
    """The set-up itself: no passwd entry, /tmp and the package read-only; `plexity clean` of the sample works."""
    run, out = container
    probe = run([sys.executable, "-c", "import os, tempfile, getpass\n"
                 "print(os.getuid(), os.access('/tmp', os.W_OK))\n"
                 "try:\n    getpass.getuser()\n"
                 "except (KeyError, OSError) as e:\n    print('no user', type(e).__name__)"])
    assert probe.stdout.split("\n")[:2] == [f"{UID} False", "no user KeyError"] or \
        probe.stdout.startswith(f"{UID} False\nno user"), probe.stderr
    cleaned = run(plexity("clean", SAMPLE, "-o", out / "cleaned"))
    assert cleaned.returncode == 0, cleaned.stderr
    assert (out / "cleaned" / "sample.warc.gz").is_file()


def test_without_a_home_folder_models_lists_the_embedded_ones_and_train_installs_with_output_dir(container):
    """HOME unset and no /etc/passwd entry (OpenShift's arbitrary UID): `plexity models` ended in platformdirs'
    traceback "RuntimeError: could not determine the home directory for '~/.cache'", as did every `plexity serve`
    request that scored (HTTP 500, "internal error"); `plexity train --output-dir DIR` trained the whole model, then
    failed with that error setting its threshold, leaving nothing; the KenLM tools were looked for in a relative
    "~/.cache/...".  Now `models` lists the embedded model and says there is no model directory and what to set;
    train installs into --output-dir; the tools' folder, unfound, is one line naming PLEXITY_KENLM_BIN."""
    run, out = container
    models = run(plexity("models"))
    assert models.returncode == 0, models.stderr
    assert "en-default" in models.stdout
    assert "model directory: none (no home folder for this user (HOME is unset and UID 123456 has no /etc/passwd " \
           "entry)" in models.stdout and "set PLEXITY_MODEL_DIR, or HOME or XDG_CACHE_HOME" in models.stdout

    (out / "corpus.txt").write_text("The council approved the budget on Tuesday.\nThe plan adds two libraries.\n" * 200)
    train = ["train", "--corpus", "text", "--order", "3", "--discount-fallback", out / "corpus.txt", "--name", "tiny",
             "--output-dir", out / "models"]
    no_tools = run(plexity(*train))
    assert no_tools.returncode == 3, no_tools.stderr
    assert "no user cache dir for KenLM's tools: set PLEXITY_KENLM_BIN" in no_tools.stderr
    assert len(no_tools.stderr.strip().splitlines()) == 1, no_tools.stderr

    from plexity_plugins.training.kenlm_tools import find_tool

    tools = out / "kenlm"
    tools.mkdir()
    for name in ("lmplz", "build_binary"):
        shutil.copy(find_tool(name), tools / name)
    (out / "tmp").mkdir()
    for path in (tools, out / "tmp", *tools.iterdir(), out / "corpus.txt"):
        os.chown(path, UID, UID)
    trained = run(plexity(*train), env={"PLEXITY_KENLM_BIN": tools, "TMPDIR": out / "tmp"})
    assert trained.returncode == 0, trained.stderr
    assert (out / "models" / "tiny" / "model.json").is_file()
    scored = run(plexity("score", "--model", out / "models" / "tiny", "The council approved the budget."))
    assert scored.returncode == 0 and "model tiny" in scored.stdout, scored.stderr


def test_without_a_writable_temporary_folder_run_says_to_set_tmpdir_and_works_with_it(container):
    """/tmp read-only and TMPDIR unset: `plexity run` stopped with "error: [Errno 2] No usable temporary directory
    found in ['/tmp', '/var/tmp', '/usr/tmp', ...]" (datatrove's dill makes one at import), saying nothing of
    what to do.  Now the line says to set TMPDIR; with TMPDIR a writable folder, the run completes (`plexity clean`
    needs none)."""
    run, out = container
    glob = str(REPO / "examples" / "*.warc.gz")
    stopped = run(plexity("run", glob, "-o", out / "run", "--workers", "2"))
    assert stopped.returncode == 2, stopped.stderr
    assert "no temporary folder this user may write (tried ['/tmp', '/var/tmp', '/usr/tmp'" in stopped.stderr
    assert "set TMPDIR to a folder this user may write" in stopped.stderr
    (out / "tmp").mkdir()
    os.chown(out / "tmp", UID, UID)
    done = run(plexity("run", glob, "-o", out / "run2", "--workers", "2"), env={"TMPDIR": out / "tmp"})
    assert done.returncode == 0, done.stderr
    assert "1/1 tasks completed" in done.stdout + done.stderr
