"""`plexity train` in a job whose memory is limited (a container's or a Slurm job's cgroup, ``ulimit -v``): lmplz
takes a share of RAM (``-S 20%``) of the machine's RAM, whatever the job's limit.  On this machine's 24 GiB that was
4.8 GB: in a 1 GiB cgroup the out-of-memory killer ended lmplz in 0.6 s ("lmplz failed (exit -9)" and its progress
bar), under ``ulimit -v`` it could not allocate ("MallocException ... Cannot allocate memory for 3869287400 bytes").
Now a share is of the least of RAM, the cgroup's limit and RLIMIT_AS, given to lmplz as a size and said; a size of
more than that is refused before the corpus is read, and an lmplz that runs out of memory is one line saying what
to give.  Real lmplz and build_binary, real cgroups (made and removed by each test), real address-space limits."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, cgroup_oom_kills, plexity_in
from plexity_plugins.training import kenlm_tools

NEWS = "".join(f"The council approved the budget for library number {i} on Tuesday. The library opens in the spring "
               f"and stays open late on weekdays. Residents asked whether school {i} would be sold.\n"
               for i in range(300))
ADDRESS_SPACE_SAID = "of address space this process may map (RLIMIT_AS, ulimit -v)"


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "news.txt"
    path.write_text(NEWS)
    return path


def under_address_space(mib: int, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` with an address-space limit (RLIMIT_AS, as ``ulimit -v``) of `mib` MiB."""
    limit = mib << 20
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))


def train_args(tmp_path: Path, corpus: Path, *options: str) -> list[str]:
    return ["-m", "plexity_plugins", "train", "--corpus", "text", "--order", "2", "--name", "news",
            "--output-dir", str(tmp_path / "models"), *options, str(corpus)]


def test_a_share_of_memory_is_a_size_of_the_address_space_a_job_may_map_not_of_the_machines_ram():
    said = under_address_space(2048, "-c", "from plexity_plugins.training.kenlm_tools import lmplz_sort_memory\n"
                                           "for given in ('20%', '50%', '1G', '0.5G'): print(lmplz_sort_memory(given))")
    assert said.returncode == 0, said.stderr
    assert said.stdout.splitlines() == [
        f"('409M', '20% of the 2,048 MiB {ADDRESS_SPACE_SAID}')",
        f"('1024M', '50% of the 2,048 MiB {ADDRESS_SPACE_SAID}')",
        "('1G', '')", "('512M', '')"]


def test_a_size_the_job_cannot_have_is_one_line_before_the_corpus_is_read(tmp_path, corpus):
    done = under_address_space(1024, *train_args(tmp_path, corpus, "--memory", "2G"))
    assert (done.returncode, done.stderr) == (2, f"plexity train: error: --memory 2G: more than the 1,024 MiB "
                                                 f"{ADDRESS_SPACE_SAID}; give a share (20%) or a size below it, e.g. "
                                                 f"--memory 204M\n")


def test_under_ulimit_v_the_default_share_is_of_the_limit_and_the_model_is_built(tmp_path, corpus):
    """Before: -S 20% of the machine's RAM, and lmplz's MallocException after the corpus was read (exit 1)."""
    done = under_address_space(2048, *train_args(tmp_path, corpus))
    assert done.returncode == 0, done.stderr
    assert f"plexity train: running lmplz -o 2 -S 409M: 20% of the 2,048 MiB {ADDRESS_SPACE_SAID}\n" in done.stderr
    assert (tmp_path / "models" / "news" / "model.bin").is_file()


def test_an_lmplz_that_cannot_allocate_its_memory_is_one_line_naming_the_limit_and_what_to_give(tmp_path, corpus):
    """Before: "lmplz failed (exit -6):" and fifteen lines of its progress bar and C++ exception, in one line of \\n."""
    done = under_address_space(1024, *train_args(tmp_path, corpus, "--quiet", "--memory", "1000M"))
    # (lmplz throws its MallocException, or in some runs crashes where a mapping failed: either is said so)
    how = re.escape("lmplz could not allocate its memory") + "|" + re.escape("lmplz crashed (SIGSEGV, as it does when "
                                                                            "it cannot map memory)")
    assert done.returncode == 1
    assert re.fullmatch(f"plexity train: error: ({how}) with -S 1000M, within the 1,024 MiB "
                        + re.escape(f"{ADDRESS_SPACE_SAID}: give it less, e.g. --memory 204M (lmplz takes more than "
                                    f"its -S)") + "\n", done.stderr), done.stderr
    assert list((tmp_path / "models").iterdir()) == []  # (no staging or work folder left)


def test_in_a_memory_limited_cgroup_the_default_share_is_of_its_limit_and_the_model_is_built(cgroup, tmp_path, corpus):
    """Before: -S 20% of the machine's RAM (4.8 GB here) in a 256 MiB container, and the out-of-memory killer ended
    lmplz ("lmplz failed (exit -9)")."""
    folder = cgroup("memory", 256)
    done = plexity_in(folder, *train_args(tmp_path, corpus)[2:])
    assert done.returncode == 0, done.stderr
    assert ("plexity train: running lmplz -o 2 -S 51M: 20% of this container's 256 MiB (its cgroup's memory limit)\n"
            in done.stderr)
    assert cgroup_oom_kills(folder) == 0


def test_an_lmplz_the_containers_oom_killer_ends_is_one_line_naming_the_limit_and_what_to_give(cgroup, tmp_path,
                                                                                            corpus):
    """Before: "lmplz failed (exit -9):" and its progress bar.  Here an lmplz that fills its memory at once (a
    stand-in: the real one, given less than the container has, fills it only on a corpus of gigabytes), with the real
    build_binary, in a real cgroup whose out-of-memory killer ends it."""
    tools = tmp_path / "kenlm"
    tools.mkdir()
    (tools / "lmplz").write_text(f"#!/bin/sh\nexec {sys.executable} -c \"b'x' * (1 << 30)\"\n")
    (tools / "lmplz").chmod(0o755)
    (tools / "build_binary").symlink_to(kenlm_tools.find_tool("build_binary"))
    folder = cgroup("memory", 256)
    done = plexity_in(folder, *train_args(tmp_path, corpus, "--quiet", "--memory", "200M")[2:],
                      env={"PLEXITY_KENLM_BIN": str(tools)})
    assert cgroup_oom_kills(folder) == 1
    assert (done.returncode, done.stderr) == (1, "plexity train: error: lmplz ran out of this container's memory (its "
                                                 "cgroup's limit: 256 MiB) with -S 200M: give it less, e.g. --memory "
                                                 "51M (lmplz takes more than its -S)\n")
    assert list((tmp_path / "models").iterdir()) == []


def test_build_binary_sorts_the_trie_in_the_same_share_of_the_containers_limit_and_the_model_says_so(cgroup, tmp_path,
                                                                                                     corpus):
    """Before: build_binary had no -S, so it sorted in 80% of the machine's RAM, or all of its largest order's n-grams
    if less, whatever the job's limit (the 4-grams of an 818 MB ARPA: 133 MB, and a 128 MiB cgroup's out-of-memory
    killer ended it after 25 s of reading, exit -9; docs/training.md)."""
    folder = cgroup("memory", 256)
    done = plexity_in(folder, *train_args(tmp_path, corpus)[2:])
    assert done.returncode == 0, done.stderr
    assert "plexity train: building the binary (trie, 8-bit, build_binary -S 51M)\n" in done.stderr
    build = json.loads((tmp_path / "models" / "news" / "model.json").read_text())["build"]
    assert build["build_binary"] == "-S 51M -q 8 -b 8 trie"
    assert cgroup_oom_kills(folder) == 0
