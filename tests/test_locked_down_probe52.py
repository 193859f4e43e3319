"""Probe 52: `plexity run` and `plexity clean` as a stranger's Kubernetes pod or Slurm job runs them.

A memory limit on the whole job (a pod's ``resources.limits.memory``, Slurm's ``--mem``: a cgroup): a default local
run started a worker per CPU whatever the memory, so a pod limited in memory alone ran as many workers as its
machine had CPUs, and the kernel's out-of-memory killer ended their pages' extraction (counted as ``memory_limit``)
or the workers (on the WCXB pages, two workers in 200 MiB lost 1 page of 375, in 160 MiB 6; eight in 256 MiB lost
11 pages of 234 and 3 tasks of 8).  Now a default run starts no more workers than the job's memory holds, one per
128 MiB, and says so; more given with --workers is warned of.  The pages the killer stopped are skips of tasks that
completed, which a re-run given more memory did not read again, unsaid: the warning now says to give --overwrite.  Real runs in real cgroups (root, a writable cgroup v1
memory controller or v2 with +memory given to this process's children; the `cgroup` fixture names what is missing).

``python -I`` (isolated: no PYTHON* variable read, no user site-packages), as a locked-down image runs its entry
point: the extraction child read the PYTHONPATH and PYTHONHOME that its caller ignored, and imported from them (a
shadowing module: "broken installation ...: reinstall plexity_plugins"; a PYTHONHOME meant for another Python: "the
extraction process could not start", exit 3).  Now the child leaves them out as its caller does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import cgroup_oom_kills, plexity_in, python_in, split_warc
from plexity_plugins.runtime.cores import usable_cores
from hostile_pages import write_big_page_warc

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
# `plexity` as an image's entry point runs it under python -I (the checkout first on its path: under -I PYTHONPATH,
# which the other tests use to import it, is not read)
ISOLATED_PLEXITY = [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r}); "
                                                f"sys.argv[0] = 'plexity'; from plexity_plugins.cli import main; "
                                                f"sys.exit(main())"]


@pytest.fixture
def two_warcs(tmp_path) -> Path:
    """The sample's pages dealt into two WARC files: two tasks, which a default run on two CPUs runs at once."""
    split_warc(SAMPLE, tmp_path / "warcs", 2)
    return tmp_path / "warcs"


@pytest.fixture
def hostile_warc(tmp_path) -> Path:
    """A WARC of a fine page, a 14 MB page that grows a `dense` child past 200 MiB, and another fine page."""
    (tmp_path / "hostile").mkdir()
    write_big_page_warc(tmp_path / "hostile" / "pages.warc.gz")
    return tmp_path / "hostile" / "pages.warc.gz"


def needs_two_cpus():
    if usable_cores() < 2:  # (on one CPU a default run starts one worker whatever its memory: nothing to tell apart)
        pytest.skip("this machine gives the tests one CPU: a default run starts one worker either way")


def test_a_default_run_starts_no_more_workers_than_its_containers_memory_holds_and_says_so(cgroup, two_warcs,
                                                                                            tmp_path):
    needs_two_cpus()
    folder = cgroup("memory", 200)
    chosen = python_in(folder, "-c", "from plexity_plugins.cli.run import local_workers; "
                                     "print(local_workers(8, None), local_workers(8, 3))")
    assert chosen.stdout.split() == ["1", "3"], chosen.stdout + chosen.stderr  # (--workers is taken as given)

    done = plexity_in(folder, "run", str(two_warcs), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("plexity run: note: 1 worker(s), not 2 (one a CPU this process may use, or a task): this container's "
            "200 MiB (its cgroup's memory limit) holds one per 128 MiB; --workers sets them") in done.stderr
    assert "2/2 tasks completed" in done.stdout and "lost: none" in done.stdout, done.stdout
    assert cgroup_oom_kills(folder) == 0


def test_more_workers_than_the_containers_memory_holds_are_warned_of_before_the_run(cgroup, two_warcs, tmp_path):
    folder = cgroup("memory", 200)
    done = plexity_in(folder, "run", str(two_warcs), "-o", str(tmp_path / "out"), "--workers", "2")
    assert ("plexity run: warning: --workers 2, more than this container's 200 MiB (its cgroup's memory limit) holds "
            "(one per 128 MiB): the kernel's out-of-memory killer may end extraction children, their pages counted as "
            "memory_limit, or workers; give the job more memory, or run fewer workers") in done.stderr, done.stderr
    assert done.stderr.index("--workers 2, more than") < done.stderr.index("Launching pipeline")  # (before, not after)


def test_under_python_I_the_extraction_child_ignores_the_pythonhome_its_caller_ignores(tmp_path):
    """A PYTHONHOME meant for another Python (or none there at all): the caller, isolated, starts; its child read it
    and died at its start ("Fatal Python error: init_fs_encoding ..."), and the command stopped, exit 3."""
    page = tmp_path / "page.html"
    page.write_text("<html><body><article><p>The city council approved the budget on Tuesday after a long debate "
                    "about school funding.</p></article></body></html>")
    done = subprocess.run([*ISOLATED_PLEXITY, "clean", str(page), "-o", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONHOME": str(tmp_path / "another-python")})
    assert done.returncode == 0, done.stderr
    assert "approved the budget" in (tmp_path / "out" / "page.html.txt").read_text()


def test_under_python_I_a_runs_extraction_children_import_nothing_from_the_pythonpath_it_ignores(tmp_path):
    """A module on PYTHONPATH that shadows a dependency (here trafilatura): the run, isolated, imports the installed
    one; its children imported the shadow, and the run stopped with "broken installation: ImportError ...; reinstall
    plexity_plugins with its dependencies", exit 3."""
    shadow = tmp_path / "elsewhere" / "trafilatura"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('a trafilatura of another project')\n")
    done = subprocess.run([*ISOLATED_PLEXITY, "run", str(SAMPLE), "-o", str(tmp_path / "out"), "--workers", "2",
                           "--extractor", "trafilatura"], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shadow.parent)})
    assert done.returncode == 0, done.stderr
    assert "another project" not in done.stderr
    assert "1/1 tasks completed" in done.stdout and "12 with text" in done.stdout, done.stdout


def test_pages_the_containers_oom_killer_stopped_are_read_again_with_overwrite_as_the_warning_says(cgroup,
                                                                                                  hostile_warc,
                                                                                                  tmp_path):
    """Pages the job's memory stopped (the kernel's out-of-memory killer's, or, since the default ceiling fits the
    job's memory, the lowered ceiling's: 128 MiB in 256) are skips of tasks that completed: a re-run given more memory
    read none of them again ("1 already completed", the page still memory_limit), and the warning did not say what
    does."""
    out = tmp_path / "out"
    small = plexity_in(cgroup("memory", 256), "run", str(hostile_warc.parent), "-o", str(out), "--extractor", "dense")
    assert "lost: memory_limit 1" in small.stdout, small.stdout + small.stderr
    assert ("give the job more memory, or run fewer workers (--workers), and --overwrite to read those pages again "
            "(a re-run redoes only the tasks that did not complete)") in small.stderr, small.stderr

    larger = cgroup("memory", 1024)
    again = plexity_in(larger, "run", str(hostile_warc.parent), "-o", str(out), "--extractor", "dense")
    assert "1 already completed" in again.stdout and "lost: memory_limit 1" in again.stdout, again.stdout
    overwritten = plexity_in(larger, "run", str(hostile_warc.parent), "-o", str(out), "--extractor", "dense",
                             "--overwrite")
    assert overwritten.returncode == 0, overwritten.stderr
    assert "lost: none" in overwritten.stdout and "3 with text" in overwritten.stdout, overwritten.stdout
