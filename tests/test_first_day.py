"""A new user's first day, as they meet it: the set-up's words, what `plexity train` tells them to
run and that it works, and the exit status and the one line of each command that cannot do what
was asked (issue 39).  Everything runs as a user runs it: scripts with bash, the `plexity`
command as a subprocess."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def bash(script: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120):
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


# -- set-up ------------------------------------------------------------------------------------

def test_a_set_up_step_says_what_it_does_how_long_it_took_and_speaks_while_it_runs():
    result = bash(f"source {REPO}/scripts/lib.sh && step 'compiling something' bash -c 'echo Collecting numpy; sleep 2.5'",
                  env={"SETUP_NOTE_EVERY": "1"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "setup: compiling something ..."
    # a long step is never silent (bash's SECONDS counts whole seconds: the first note says 1 or 2 s, more if loaded)
    assert any(re.fullmatch(r"setup:   \.\.\. [1-9] s \(now: Collecting numpy\)", line) for line in lines), lines
    assert re.fullmatch(r"setup:   \.\.\. done in [2-9] s", lines[-1])  # (2.5 s of work; more on a loaded machine)


def test_a_failing_set_up_step_shows_its_output_and_stops_the_set_up(tmp_path):
    result = bash(f"source {REPO}/scripts/lib.sh && step 'installing' bash -c 'echo ERROR: no wheel for x; exit 7'"
                  f" && echo went on", env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 1 and "went on" not in result.stdout
    assert "ERROR: no wheel for x" in result.stderr
    said = "setup: failed: installing (exit 7; the last lines of its output are above; full log: "
    assert said in result.stderr
    log = result.stderr.split(said)[1].split(")")[0]  # (kept for the user, in $TMPDIR)
    assert Path(log).parent == tmp_path and Path(log).read_text() == "ERROR: no wheel for x\n"


def test_set_up_refuses_an_unknown_option_and_explains_its_options():
    result = bash(f"bash {REPO}/scripts/setup.sh --kenlm")
    assert result.returncode == 2
    assert result.stderr.strip() == "setup: unknown option --kenlm (options: --kenlm-tools, --test)"
    usage = bash(f"bash {REPO}/scripts/setup.sh --help").stdout
    assert "--kenlm-tools" in usage and "plexity train" in usage


def test_build_kenlm_without_cmake_names_the_set_up_option_that_installs_it(tmp_path):
    bin_dir = tmp_path / "bin"  # bash and the basics, no cmake, no g++
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        os.symlink(subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip(), bin_dir / tool)
    result = subprocess.run(["bash", str(REPO / "scripts" / "build_kenlm.sh"), str(tmp_path / "kenlm")],
                            capture_output=True, text=True, env={"PATH": str(bin_dir), "PYTHON": sys.executable,
                                                                 "HOME": str(tmp_path)})  # (no build to copy)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"build_kenlm: cmake g++ missing: run `bash {REPO}/scripts/setup.sh --kenlm-tools`,"
                                     f" which installs what the build needs and builds the tools")


def test_build_kenlm_copies_the_default_folder_s_build_only_when_it_is_of_this_kenlm_version_and_machine(tmp_path):
    """Another BIN_DIR gets the tools `setup.sh` built in the default folder, not a second build;
    a default folder whose BUILD names another kenlm version is not copied (here no cmake: the
    script then says what a build needs)."""
    built = Path(os.environ.get("PLEXITY_KENLM_BIN") or Path.home() / ".cache/plexity_plugins/kenlm/bin")
    if not (built / "lmplz").exists():
        pytest.fail(f"no lmplz in {built}: `bash scripts/setup.sh --test` builds it")
    bin_dir = tmp_path / "path"  # bash and the basics, no cmake, no g++
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "cat", "mkdir", "install"):
        os.symlink(subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip(), bin_dir / tool)
    default = tmp_path / "home" / ".cache" / "plexity_plugins" / "kenlm" / "bin"
    default.mkdir(parents=True)
    for tool in ("lmplz", "build_binary"):
        shutil.copy2(built / tool, default / tool)
    version = re.search(r'KENLM_VERSION:-([0-9.]+)', (REPO / "scripts" / "build_kenlm.sh").read_text()).group(1)
    this_build = subprocess.check_output(
        ["bash", "-c", f'echo "kenlm {version}, KENLM_MAX_ORDER=6, $OSTYPE $HOSTTYPE"'], text=True)
    env = {"PATH": str(bin_dir), "PYTHON": sys.executable, "HOME": str(tmp_path / "home")}

    def build_into(folder: str):
        return subprocess.run(["bash", str(REPO / "scripts" / "build_kenlm.sh"), str(tmp_path / folder)],
                              capture_output=True, text=True, env=env)

    (default / "BUILD").write_text(this_build.replace(version, version + ".1"))
    other_version = build_into("a")
    assert other_version.returncode == 2 and "cmake g++ missing" in other_version.stderr
    assert not (tmp_path / "a").exists()
    (default / "BUILD").write_text(this_build)
    copied = build_into("b")
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.strip() == (f"KenLM tools installed in {tmp_path / 'b'}"
                                     f" (copied from the same build in {default})")
    assert (tmp_path / "b" / "lmplz").read_bytes() == (built / "lmplz").read_bytes()
    assert (tmp_path / "b" / "BUILD").read_text() == this_build  # so that it is copied again from there too


@pytest.mark.environments
def test_plexity_train_without_kenlm_tools_names_a_command_that_makes_it_work(tmp_path):
    """After the README's first command (this checkout's .venv has what it installs), `plexity
    train` without KenLM's tools says what to run; that is run as said, from another folder; then
    `plexity train` works.  (The tools are installed for real, into a folder of the test's own: copied
    from the build `setup.sh --test` made in the default folder, where it is of the same kenlm version
    and machine, else built from kenlm's source.)"""
    # The README's first command must have set up .venv from these sources: else the command below would
    # reinstall every Python package (minutes, in the environment this suite may be running from) first.
    stamp = REPO / ".venv" / ".plexity-setup"  # "EXTRAS FINGERPRINT" (scripts/setup.sh)
    recorded = stamp.read_text().split() if stamp.is_file() else []
    current = bash(f"source scripts/lib.sh && venv_fingerprint {os.environ.get('PYTHON', 'python3')}", cwd=REPO)
    if recorded[1:] != [current.stdout.strip()]:
        pytest.fail(f"{REPO / '.venv'} was not set up from these sources (its .plexity-setup: {recorded or 'none'}):"
                    f" run `bash {REPO / 'scripts' / 'setup.sh'}` first")
    env = {"PLEXITY_KENLM_BIN": str(tmp_path / "kenlm-bin"), "PLEXITY_MODEL_DIR": str(tmp_path / "models")}
    corpus = tmp_path / "news.txt"
    corpus.write_text("The council approved the budget for the new library on Tuesday.\n"
                      "The library opens in the spring and stays open late on weekdays.\n" * 40)
    train = [sys.executable, "-m", "plexity_plugins.cli", "train", "--corpus", "text", "--order", "3", "--name", "news",
             "--holdout-every", "0", str(corpus)]
    before = subprocess.run(train, capture_output=True, text=True, env={**os.environ, **env})
    assert before.returncode == 3 and before.stdout == "", before.stderr
    command = re.search(r"install lmplz and build_binary with `([^`]+)`", before.stderr).group(1)
    assert command == f"bash {REPO / 'scripts' / 'setup.sh'} --kenlm-tools"
    installed = bash(command, cwd=tmp_path, env=env, timeout=1500)  # from another folder: the path is absolute
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    # (less the lines a step longer than a minute prints each minute: "setup:   ... 1 min 00 s (now: ...)")
    said = [line for line in installed.stdout.splitlines()
            if not re.fullmatch(r"setup:   \.\.\. (\d+ s|\d+ min \d\d s)( \(now: .*\))?", line)]
    assert any(line.startswith("setup: Python packages: .venv is up to date") for line in said)  # nothing reinstalled
    start = said.index("setup: KenLM's lmplz and build_binary (cmake, from kenlm's source; about a minute) ...")
    assert re.fullmatch(rf"setup:   KenLM tools installed in {re.escape(str(tmp_path / 'kenlm-bin'))}"
                        r"( \(copied from the same build in .*\))?", said[start + 1]), said[start + 1]
    assert re.fullmatch(r"setup:   \.\.\. done in (\d+ s|\d+ min \d\d s)", said[start + 2])
    assert re.fullmatch(r"setup: done in (\d+ s|\d+ min \d\d s)", said[-1])
    after = subprocess.run(train, capture_output=True, text=True, env={**os.environ, **env})
    assert after.returncode == 0, after.stderr
    assert (tmp_path / "models" / "news" / "model.json").is_file()


# -- plexity run: a re-run never answers other settings with old results ------------------------

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
EXAMPLES = REPO / "examples"


def plexity(*args, cwd: Path | None = None, env: dict | None = None, timeout: float = 300):
    return subprocess.run([*PLEXITY, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})})


def error_line(result) -> str:
    """The last line on stderr: where `plexity` says why it stopped."""
    return result.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """`plexity run examples/ --output-dir out/run`, as the README's datatrove section has it."""
    out = tmp_path_factory.mktemp("first-run") / "run"
    result = plexity("run", EXAMPLES, "--output-dir", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.mark.parametrize("options, difference", [
    (["--extractor", "tags"], "extractor: learned -> tags"),
    (["--threshold", "800"], "threshold: 5269.3 -> 800"),
    (["--method", "regions"], "method: trim -> regions"),
    (["--format", "warc"], "format: jsonl -> warc"),
    (["--extract-timeout", "5"], "timeout: 30 -> 5"),
], ids=["extractor", "threshold", "method", "format", "limit"])
def test_a_re_run_with_other_settings_stops_naming_them_and_the_two_ways_out(first_run, options, difference):
    before = sorted(p.name for p in (first_run / "documents").iterdir())
    result = plexity("run", EXAMPLES, "--output-dir", first_run, *options)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    line = error_line(result)
    assert line.startswith(f"plexity run: error: {first_run} holds the results of a run with other settings (")
    assert difference in line
    assert line.endswith("give a new --output-dir, or add --overwrite to delete those results and start over")
    assert sorted(p.name for p in (first_run / "documents").iterdir()) == before  # nothing touched


def test_a_re_run_with_another_model_names_the_model(first_run, tiny_model):
    result = plexity("run", EXAMPLES, "--output-dir", first_run, "--model", tiny_model)
    assert result.returncode == 2
    assert "model: en-default -> tiny; model checksum: sha256:" in error_line(result)


def test_the_same_settings_resume_and_run_nothing_again(first_run):
    result = plexity("run", EXAMPLES, "--output-dir", first_run)
    assert result.returncode == 0, result.stderr
    assert "1/1 tasks completed (0 in this run" in result.stdout


def test_results_whose_settings_were_not_recorded_are_not_resumed(tmp_path):
    # (an earlier version's run, or another program's, into the same folder: nothing says what made them)
    out = tmp_path / "run"
    assert plexity("run", EXAMPLES, "--output-dir", out).returncode == 0
    (out / "logs" / "plexity-settings.json").unlink()
    result = plexity("run", EXAMPLES, "--output-dir", out)
    assert result.returncode == 2
    assert ("(settings: not recorded (an older version or another program wrote these results)): give a new "
            "--output-dir, or add --overwrite") in error_line(result)
    assert plexity("run", EXAMPLES, "--output-dir", out, "--overwrite").returncode == 0


def test_a_run_that_completed_no_task_leaves_nothing_to_protect(tmp_path):
    # settings recorded, no task completed (sbatch refused the job, say): the next run records its own
    out = tmp_path / "run"
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "plexity-settings.json").write_text('{"plexity_plugins": "0.0.1", "tasks": 9, "steps": []}')
    result = plexity("run", EXAMPLES, "--output-dir", out, "--extractor", "tags")
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "logs" / "plexity-settings.json").read_text())["steps"][1]["extractor"] == "tags"


def test_overwrite_starts_over_with_the_new_settings(tmp_path):
    out = tmp_path / "run"
    assert plexity("run", EXAMPLES, "--output-dir", out).returncode == 0
    result = plexity("run", EXAMPLES, "--output-dir", out, "--format", "warc", "--overwrite")
    assert result.returncode == 0, result.stderr
    assert "1/1 tasks completed (1 in this run" in result.stdout
    assert sorted(p.name for p in (out / "documents").iterdir()) == ["00000.warc.gz"]  # the JSONL went
    recorded = json.loads((out / "logs" / "plexity-settings.json").read_text())
    assert recorded["steps"][-1]["format"] == "warc"
    again = plexity("run", EXAMPLES, "--output-dir", out, "--format", "warc")
    assert again.returncode == 0 and "(0 in this run" in again.stdout


def test_a_file_added_to_the_input_folder_is_another_run_not_a_resumed_one(tmp_path):
    # (the files are shared among the tasks by their order: the completed tasks' results would
    # not be the new list's, and the new file would never be read)
    crawl, out = tmp_path / "crawl", tmp_path / "run"
    crawl.mkdir()
    shutil.copy(EXAMPLES / "sample.warc.gz", crawl / "a.warc.gz")
    assert plexity("run", crawl, "--output-dir", out, "--tasks", "2").returncode == 0
    shutil.copy(EXAMPLES / "sample.warc.gz", crawl / "b.warc.gz")
    result = plexity("run", crawl, "--output-dir", out, "--tasks", "2")
    assert result.returncode == 2 and "(input files: 1 -> 2; input files' names: sha256:" in error_line(result)


def test_warc_outputs_inside_the_input_folder_are_refused(tmp_path):
    # (the next run would read them as input)
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    shutil.copy(EXAMPLES / "sample.warc.gz", crawl)
    result = plexity("run", crawl, "--output-dir", crawl / "out", "--format", "warc")
    assert result.returncode == 2 and "is inside the input folder" in error_line(result)
    assert plexity("run", crawl, "--output-dir", crawl / "out").returncode == 0  # JSONL is not read as input


@pytest.mark.parametrize("option", [["--tasks", "0"], ["--tasks", "-1"], ["--workers", "0"], ["--workers", "-3"]])
def test_no_task_or_worker_count_under_one_is_taken(tmp_path, option):
    # (with 0 workers the run used to wait, silent, for a task it would never start)
    result = plexity("run", EXAMPLES, "--output-dir", tmp_path / "run", *option, timeout=60)
    assert result.returncode == 2 and "1 or more" in error_line(result)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("option, says", [
    (["--cpus-per-task", "0"], "1 or more"), (["--cpus-per-task", "-1"], "1 or more"),
    (["--mem-per-cpu-gb", "0"], "not a number above 0"), (["--mem-per-cpu-gb", "-1"], "not a number above 0")])
@pytest.mark.parametrize("executor", ["slurm", "ray"])
def test_a_task_reserving_no_cpus_or_no_memory_is_refused_before_anything_is_launched(tmp_path, option, says,
                                                                                         executor):
    # (Ray refused such a task in every task once the run had started, and the run then said to run the
    # same command again; sbatch read `--cpus-per-task 0` as a run of its other options)
    result = plexity("run", EXAMPLES, "--output-dir", tmp_path / "run", "--executor", executor, "--partition", "debug",
                     *option, timeout=60)
    assert result.returncode == 2 and says in error_line(result) and option[0] in error_line(result)
    assert not (tmp_path / "run").exists()


# -- nothing usable is no success ---------------------------------------------------------------

def test_a_text_file_named_warc_is_called_text_and_the_run_exits_1_naming_it(tmp_path):
    fake = tmp_path / "fake.warc"
    fake.write_text("hello, this is a plain text file\n")
    result = plexity("run", fake, "--output-dir", tmp_path / "out")
    assert result.returncode == 1
    assert error_line(result) == ("plexity run: error: no input could be read: fake.warc: not a WARC file: a text "
                                  f"file (it starts 'hello, this is a plain text file') (what the run wrote of it "
                                  f"was removed: {tmp_path / 'out'} takes another command)")
    # so the corrected command, into the same folder, is not refused as other settings
    (tmp_path / "crawl").mkdir()
    shutil.copy(EXAMPLES / "sample.warc.gz", tmp_path / "crawl")
    assert plexity("run", tmp_path / "crawl", "--output-dir", tmp_path / "out").returncode == 0
    clean = plexity("clean", fake, "--output-dir", tmp_path / "cleaned", "-q")
    assert clean.returncode == 1
    assert error_line(clean) == (f"plexity clean: error: no input could be read: {fake}: not a WARC file: a text "
                                 f"file (it starts 'hello, this is a plain text file')")


def test_a_run_with_one_readable_input_among_unreadable_ones_succeeds(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "fake.warc").write_text("not a WARC\n")
    (tmp_path / "in" / "sample.warc.gz").write_bytes((EXAMPLES / "sample.warc.gz").read_bytes())
    assert plexity("run", tmp_path / "in", "--output-dir", tmp_path / "out").returncode == 0
    assert plexity("clean", tmp_path / "in", "--output-dir", tmp_path / "cleaned", "-q").returncode == 0


def test_plexity_run_on_html_files_points_to_plexity_clean(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "a.html").write_text("<html><body><p>A page.</p></body></html>")
    result = plexity("run", tmp_path / "pages", "--output-dir", tmp_path / "out")
    assert result.returncode == 2
    assert error_line(result) == (
        f"plexity run: error: no WARC files match **/*.warc* in {tmp_path / 'pages'} (it holds 1 HTML or text "
        f"file(s): plexity run reads WARC files; plexity clean {tmp_path / 'pages'} --output-dir DIR cleans HTML "
        f"and text files)")


def test_plexity_run_says_how_many_html_files_beside_the_warcs_it_does_not_read(tmp_path):
    """(Before, a folder of WARCs and HTML pages was run on its WARCs alone, the pages not mentioned.)"""
    (tmp_path / "in" / "pages").mkdir(parents=True)
    (tmp_path / "in" / "sample.warc.gz").write_bytes((EXAMPLES / "sample.warc.gz").read_bytes())
    for name in ("a.html", "b.htm.gz", "c.txt"):
        (tmp_path / "in" / "pages" / name).write_bytes(b"x")
    result = plexity("run", tmp_path / "in", "--output-dir", tmp_path / "out")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (f"plexity run: 3 HTML or text file(s) beside them not read (plexity run reads WARC files; "
            f"plexity clean {tmp_path / 'in'} --output-dir DIR cleans them)") in result.stdout


# -- a missing executor is one line, before anything is launched ---------------------------------

def without_slurm(tmp_path: Path) -> dict:
    """A PATH holding this Python and nothing else: no sbatch."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python")
    return {"PATH": str(bin_dir)}


def test_executor_slurm_without_sbatch_is_one_line_exit_2_and_writes_nothing(tmp_path):
    result = plexity("run", EXAMPLES, "--output-dir", tmp_path / "out", "--executor", "slurm", "--partition", "debug",
                     env=without_slurm(tmp_path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "plexity run: error: plexity run --executor slurm needs Slurm's sbatch, which is not on PATH: run it on a "
        "login node of a Slurm cluster (or install Slurm's client on a machine that has the cluster's slurm.conf: "
        "apt-get install slurm-client on Debian)")
    assert not (tmp_path / "out").exists()


def test_the_slurm_example_without_sbatch_is_one_line_exit_2(tmp_path):
    result = subprocess.run([sys.executable, str(EXAMPLES / "datatrove_slurm.py"), str(EXAMPLES), str(tmp_path / "out"),
                             "--partition", "debug"], capture_output=True, text=True, env=without_slurm(tmp_path),
                            timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "datatrove_slurm.py: error: SlurmTaskExecutor needs Slurm's sbatch, which is not on PATH: run it on a login "
        "node of a Slurm cluster (or install Slurm's client on a machine that has the cluster's slurm.conf: "
        "apt-get install slurm-client on Debian)")
    assert not (tmp_path / "out").exists()


def test_executor_slurm_with_a_venv_that_is_not_there_is_one_line_exit_2_and_submits_nothing(tmp_path):
    # (it was submitted: every array task failed on its node, `source: No such file or directory`, and the
    # run said to run the same command again)
    env = without_slurm(tmp_path)
    sbatch = tmp_path / "bin" / "sbatch"
    sbatch.write_text("#!/bin/sh\necho called > \"$(dirname \"$0\")/sbatch-called\"\nexit 1\n")
    sbatch.chmod(0o755)
    # no such path; a folder without bin/activate
    for venv, missing in ((tmp_path / "no-such-venv", tmp_path / "no-such-venv"),
                          (tmp_path / "bin", tmp_path / "bin" / "bin" / "activate")):
        result = plexity("run", EXAMPLES, "--output-dir", tmp_path / "out", "--executor", "slurm",
                         "--partition", "debug", "--venv", venv, env=env)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            f"plexity run: error: --venv {venv}: no virtualenv there ({missing} does not exist): give "
            f"the folder of a virtualenv with plexity_plugins installed, or its bin/activate, on a filesystem the "
            f"nodes share"]
    assert not (tmp_path / "out").exists() and not (tmp_path / "bin" / "sbatch-called").exists()


def fake_squeue(tmp_path: Path, answers: list[tuple[int, str, str]]) -> Path:
    """A `squeue` on PATH giving each (status, stdout, stderr) in turn, the last one from then on; it
    counts its calls in `calls`."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    (bin_dir / "answers.json").write_text(json.dumps(answers))
    script = bin_dir / "squeue"
    script.write_text(f"""#!{sys.executable}
import json, pathlib, sys
here = pathlib.Path(__file__).parent
calls = here / "calls"
n = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(n + 1))
answers = json.loads((here / "answers.json").read_text())
status, out, err = answers[min(n, len(answers) - 1)]
sys.stdout.write(out); sys.stderr.write(err); sys.exit(status)
""")
    script.chmod(0o755)
    return bin_dir


DOWN = (1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")


def test_wait_goes_on_while_squeue_cannot_reach_the_controller_and_ends_when_the_job_is_gone(tmp_path, monkeypatch,
                                                                                              capsys):
    # (a failed squeue was taken for the end of the job: --wait said the tasks had not completed and to run the
    # same command again, which would have run them a second time beside the first)
    from plexity_plugins.cli.run import wait_for_slurm

    bin_dir = fake_squeue(tmp_path, [DOWN, DOWN, (0, "42\n", ""), (1, "", "slurm_load_jobs error: Invalid job id "
                                                                         "specified\n")])
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    wait_for_slurm(["42"], poll=0.01)
    assert (bin_dir / "calls").read_text() == "4"  # through the failures and the running job, to the job gone
    assert capsys.readouterr().err == ("plexity run: squeue failed (slurm_load_jobs error: Unable to contact slurm "
                                       "controller (connect failure)); still waiting for Slurm job 42\n")


def test_wait_gives_up_in_one_line_when_squeue_keeps_failing_saying_the_job_may_still_run(tmp_path, monkeypatch):
    from plexity_plugins.cli.run import wait_for_slurm

    monkeypatch.setenv("PATH", f"{fake_squeue(tmp_path, [DOWN])}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(OSError, match=r"^cannot ask Slurm whether job 42 still runs: squeue has failed for \d+ s "
                                      r"\(slurm_load_jobs error: Unable to contact slurm controller \(connect "
                                      r"failure\)\); the job may still be running: check with squeue before "
                                      r"running the same command again$"):
        wait_for_slurm(["42"], poll=0.01, patience=0.2)


# -- the smaller points --------------------------------------------------------------------------

def test_plexity_models_prints_the_licence_whole():
    result = plexity("models")
    assert result.returncode == 0
    assert ("    licence: CC BY-SA 4.0 (derived from CC BY-SA Wikipedia text; other sources public domain, PSF, "
            "GPL-2+/CC BY-SA 3.0)") in result.stdout.splitlines()


def test_plexity_score_of_a_file_name_says_how_to_clean_the_file():
    result = plexity("score", "examples/sample.warc.gz", cwd=REPO)
    assert result.returncode == 0  # (the words are still scored)
    assert result.stderr.strip() == ("plexity score: note: 'examples/sample.warc.gz' is scored as the words it is, not "
                                     "as a file: `plexity clean examples/sample.warc.gz --output-dir DIR` cleans it")
    assert plexity("score", "The council met on Monday.").stderr == ""


def test_scrapy_with_a_wrong_extractor_says_so_first_in_one_line_and_exits_1():
    result = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "site", "-a", "start_url=http://127.0.0.1:9/",
                             "-s", "PLEXITY_EXTRACTOR=bogus"], cwd=EXAMPLES / "scrapy_project", capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " CRITICAL: " in line or " ERROR: " in line]
    assert errors[0].endswith("[plexity_plugins.scrapy] CRITICAL: plexity: the crawl cannot start: PLEXITY_EXTRACTOR "
                              "must be one of learned, dense, auto, trafilatura, fast, tags, none, got 'bogus'")


# -- datatrove users building their own pipeline -------------------------------------------------

def pipeline(out: Path, threshold: float | None = None) -> list:
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import DenseExtractor, PerplexitySentenceFilter, WarcHtmlReader

    return [WarcHtmlReader(str(EXAMPLES), glob_pattern="sample.warc.gz"), DenseExtractor(),
            PerplexitySentenceFilter(threshold=threshold), JsonlWriter(str(out / "documents"))]


def test_a_steps_settings_are_in_its_name_as_datatroves_log_shows_it(tmp_path):
    from plexity_plugins.datatrove import LocalTaskExecutor

    LocalTaskExecutor(pipeline(tmp_path), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert "🔻 - FILTER: 🧮 Perplexity sentences [en-default, trim, threshold 5269.3]" in log
    assert "🛢 - EXTRAC: ▦ dense (lexbor) [timeout 30 s, memory 768 MiB]" in log


def test_plexitys_executor_stops_a_run_with_other_settings_before_it_runs(tmp_path):
    from plexity_plugins.datatrove import LocalTaskExecutor, SettingsChanged

    LocalTaskExecutor(pipeline(tmp_path), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()
    with pytest.raises(SettingsChanged, match=r"threshold: 5269.3 -> 900\): run into new output and logging folders, "
                                              r"or delete these to start over"):
        LocalTaskExecutor(pipeline(tmp_path, threshold=900), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()
    # the same settings: resumed (nothing runs again: the task's log is not rewritten)
    log = tmp_path / "logs" / "logs" / "task_00000.log"
    written = log.stat().st_mtime_ns
    LocalTaskExecutor(pipeline(tmp_path), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()
    assert log.stat().st_mtime_ns == written


def test_plexitys_local_executor_refuses_zero_workers_where_it_is_made(tmp_path):
    from plexity_plugins.datatrove import LocalTaskExecutor

    for workers in (0, -2):
        with pytest.raises(ValueError, match=f"workers is {workers}: tasks running at once are 1 or more"):
            LocalTaskExecutor(pipeline(tmp_path), tasks=2, workers=workers, logging_dir=str(tmp_path / "logs"))


@pytest.mark.parametrize("reservation, says", [({"cpus_per_task": 0}, "cpus_per_task is 0: a task reserves more "
                                                "than 0 CPUs"),
                                                ({"mem_per_cpu_gb": -1}, "mem_per_cpu_gb is -1: the memory a task "
                                                 "reserves per CPU is 0 GB or more")])
def test_plexitys_ray_executor_refuses_a_task_reserving_nothing_before_it_asks_ray(tmp_path, reservation, says):
    pytest.importorskip("ray")
    from plexity_plugins.datatrove import RayTaskExecutor

    executor = RayTaskExecutor(pipeline(tmp_path), tasks=1, logging_dir=str(tmp_path / "logs"), **reservation)
    with pytest.raises(ValueError, match=says):
        executor.run()  # (no Ray is connected: the check comes first)
    assert not (tmp_path / "logs" / "completions").exists()


def test_plexitys_ray_executor_takes_how_long_a_run_waits_for_a_node_and_refuses_a_negative_wait(tmp_path):
    from plexity_plugins.datatrove import RayTaskExecutor
    from plexity_plugins.datatrove.ray_executor import NO_NODE_GRACE

    logs = str(tmp_path / "logs")
    assert RayTaskExecutor(pipeline(tmp_path), tasks=1, logging_dir=logs).node_wait == NO_NODE_GRACE == 30
    assert RayTaskExecutor(pipeline(tmp_path), tasks=1, logging_dir=logs, node_wait=600).node_wait == 600
    for wait in (-1, float("nan"), "a minute"):
        with pytest.raises(ValueError, match=r"node_wait is .*: give the seconds a run waits for a node that can"):
            RayTaskExecutor(pipeline(tmp_path), tasks=1, logging_dir=logs, node_wait=wait)


def test_datatroves_own_steps_are_compared_by_the_arguments_they_keep(tmp_path):
    # A datatrove reader of another folder, or its extractor with other options, is another run.
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import PerplexitySentenceFilter, SettingsChanged, check_run_settings

    def steps(folder, precision=True):
        # (timeout: datatrove's 1 s per page, exceeded on a loaded machine, and on Python 3.14 its extractor cannot
        # start its process again after a timeout: the task failed, "cannot pickle 'weakref.ReferenceType'")
        return [WarcReader(str(folder), glob_pattern="*.warc.gz"), Trafilatura(favour_precision=precision, timeout=60),
                PerplexitySentenceFilter(), JsonlWriter(str(tmp_path / "documents"))]

    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(EXAMPLES / "sample.warc.gz", other)
    first = LocalPipelineExecutor(steps(EXAMPLES), tasks=1, logging_dir=str(tmp_path / "logs"))
    check_run_settings(first)
    first.run()
    check_run_settings(LocalPipelineExecutor(steps(EXAMPLES), tasks=1, logging_dir=str(tmp_path / "logs")))
    with pytest.raises(SettingsChanged, match="data_folder: .*examples -> .*other"):
        check_run_settings(LocalPipelineExecutor(steps(other), tasks=1, logging_dir=str(tmp_path / "logs")))
    with pytest.raises(SettingsChanged, match="favour_precision: True -> False"):
        check_run_settings(LocalPipelineExecutor(steps(EXAMPLES, precision=False), tasks=1,
                                                 logging_dir=str(tmp_path / "logs")))


def test_check_run_settings_gives_datatroves_own_executor_the_same_check(tmp_path):
    from datatrove.executor import LocalPipelineExecutor

    from plexity_plugins.datatrove import SettingsChanged, check_run_settings

    first = LocalPipelineExecutor(pipeline(tmp_path), tasks=1, logging_dir=str(tmp_path / "logs"))
    check_run_settings(first)
    first.run()
    again = LocalPipelineExecutor(pipeline(tmp_path, threshold=900), tasks=1, logging_dir=str(tmp_path / "logs"))
    with pytest.raises(SettingsChanged, match="threshold: 5269.3 -> 900"):
        check_run_settings(again)


# -- options that contradict each other ---------------------------------------------------------

@pytest.mark.parametrize("command", ["clean", "run"])
def test_other_languages_drop_with_no_language_check_is_refused_in_one_line_before_anything_is_written(
        tmp_path, command):
    # (no document was found in another language then: --other-languages drop dropped nothing, silently)
    result = plexity(command, EXAMPLES, "--output-dir", tmp_path / "out", "--other-languages", "drop",
                     "--no-language-check")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        f"plexity {command}: error: --other-languages drop with --no-language-check: without the language check no "
        f"document is found in another language: leave out --no-language-check to drop them, or --other-languages "
        f"drop to filter every document with the model")
    assert not (tmp_path / "out").exists()


def test_other_languages_drop_with_a_model_recording_no_language_names_the_model(tmp_path):
    from conftest import build_tiny_model

    # (as `plexity models import` without --language makes one)
    model = build_tiny_model(tmp_path / "imported", name="imported", language="")
    for command in ("clean", "run"):
        result = plexity(command, EXAMPLES, "--output-dir", tmp_path / command, "--model", model,
                         "--other-languages", "drop")
        assert result.returncode == 2 and not (tmp_path / command).exists()
        assert error_line(result) == (
            f"plexity {command}: error: --other-languages drop, but model imported records no language, so no "
            "document is found in another language and none would be dropped: record the model's language "
            "(`plexity models import --language`, or \"language\" in its model.json), or leave out "
            "--other-languages drop")


def test_plexity_run_on_a_folder_without_warc_files_says_what_to_give(tmp_path):
    (tmp_path / "crawl").mkdir()
    result = plexity("run", tmp_path / "crawl", "--output-dir", tmp_path / "out")
    assert result.returncode == 2 and not (tmp_path / "out").exists()
    assert error_line(result) == (f"plexity run: error: no WARC files match **/*.warc* in {tmp_path / 'crawl'}: give "
                                  f"the folder of your .warc, .warc.gz or .warc.wet.gz files, or a quoted glob of them")


def test_a_warc_named_without_its_suffix_is_named_for_what_it_is_with_its_name_to_give(tmp_path):
    """`crawl.gz` (a gzipped WARC, as a download may name it) and `crawl` (one not gzipped) are no
    file type by their names: both commands say what they are by their bytes and the name to give."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    shutil.copy(EXAMPLES / "sample.warc.gz", crawl / "crawl.gz")
    clean = plexity("clean", crawl, "--output-dir", tmp_path / "cleaned")
    assert clean.returncode == 1 and error_line(clean) == (
        f"plexity clean: error: no input could be read: {crawl / 'crawl.gz'}: a gzipped WARC by its bytes: "
        f"rename it to crawl.warc.gz to read it")
    run = plexity("run", crawl, "--output-dir", tmp_path / "out")
    assert run.returncode == 2 and error_line(run) == (
        f"plexity run: error: no WARC files match **/*.warc* in {crawl}: {crawl / 'crawl.gz'}: a gzipped WARC "
        f"by its bytes: rename it to crawl.warc.gz to read it")
    (crawl / "crawl").write_bytes(gzip.decompress((crawl / "crawl.gz").read_bytes()))
    (crawl / "crawl.gz").unlink()
    clean = plexity("clean", crawl, "--output-dir", tmp_path / "cleaned-2")
    assert error_line(clean).endswith(f"{crawl / 'crawl'}: a WARC by its bytes: rename it to crawl.warc to read it")


def test_the_examples_of_dropped_sentences_name_each_sentence_once(tmp_path):
    # (a crawl of one site drops its header on every page: the summary showed it five times over)
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for i in range(3):
        shutil.copy(EXAMPLES / "sample.warc.gz", crawl / f"copy{i}.warc.gz")
    result = plexity("clean", crawl, "--output-dir", tmp_path / "out", "-q", "--extractor", "fast")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("sentences dropped: "))
    # (three copies of the sample: the one sentence `fast` leaves the filter to drop three times, named once)
    assert line == "sentences dropped: 3 (75 characters), e.g. 'Riverside Community Notes' (323,058)"


@pytest.mark.parametrize("logs, says", [
    ("{out}", "--logging-dir {out} is the --output-dir: give another folder, or leave --logging-dir out (its "
              "default is DIR/logs)"),
    ("{out}/documents/logs", "--logging-dir {out}/documents/logs is inside {out}/documents, where the run writes "
                             "its cleaned documents: give another folder, or leave --logging-dir out (its default "
                             "is DIR/logs)")],
    ids=["the-output-dir", "inside-documents"])
def test_a_logging_dir_that_is_the_output_dir_or_in_its_documents_is_refused_naming_why(tmp_path, logs, says):
    # (the output dir: "in use by another run (pid ...)", the run's own pid; documents/: "holds the results of a
    # run with other settings", its own lock file taken for results)
    out = tmp_path / "out"
    result = plexity("run", EXAMPLES, "--output-dir", out, "--logging-dir", logs.format(out=out))
    assert result.returncode == 2 and not out.exists()
    assert error_line(result) == f"plexity run: error: {says.format(out=out)}"
