"""Guards of the forty-third stop's work on the default pipeline's CPU per page (outputs unchanged)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# numpy's one product in a command (the language identifier's) run the way a command's start leaves OpenBLAS:
# prints the process's threads after it
_THREADS_AFTER_A_PRODUCT = """
import os
from plexity_plugins.runtime.cores import limit_blas_threads
limit_blas_threads()
import numpy as np
counts = np.log1p(np.arange(1, 601, dtype=np.float32))
table = np.ones((600, 142), dtype=np.float32)
for _ in range(50):
    counts @ table
print(len(os.listdir("/proc/self/task")))
"""


def test_a_command_s_openblas_runs_in_its_own_thread_whatever_the_cpus():
    # (with a thread per usable core, `plexity run` of articles took ~2.5 % more CPU, OpenBLAS's threads spinning
    # between pages, and the language identifier's scores differed in their last bits with the machine's CPUs)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine gives the tests one CPU: OpenBLAS starts no thread of its own either way")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-c", _THREADS_AFTER_A_PRODUCT], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["1"], done.stdout + done.stderr


def test_a_user_s_openblas_threads_are_kept():
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env.update(PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="3")
    done = subprocess.run([sys.executable, "-c", "import os\nfrom plexity_plugins.runtime.cores import "
                           "limit_blas_threads\nlimit_blas_threads()\nprint(os.environ['OPENBLAS_NUM_THREADS'])"],
                          env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["3"], done.stdout + done.stderr
