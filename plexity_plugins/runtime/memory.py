"""`return_freed_memory()`: give the memory a process has freed back to the system (glibc only); `usable_memory()`:
the memory a process started from this one may use (`address_space_limit()`: its RLIMIT_AS, one of the limits;
`memory_of_job()`: what it and the processes it starts may use together: the machine's RAM, a Slurm job's memory,
a Ray task's reservation (`reserve_task_memory`), a cgroup's limit).

glibc's malloc keeps what a program frees for its next allocations: after a burst of large
requests a long-running server's resident memory stays near the burst's peak (`plexity serve`
after 16 concurrent 2 MB bodies: 250 MB, 146 MB before the burst).  ``malloc_trim(0)`` returns the
free pages of every arena (to 182 MB there).  Elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import functools
import os
import sys

from .cgroups import memory_limit


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's malloc_trim, else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim  # (absent in musl: AttributeError)
    except (OSError, AttributeError):
        return None


def return_freed_memory() -> bool:
    """Return the pages malloc holds free to the system; whether it could (glibc).  ctypes lets go
    of the GIL for the call (a few milliseconds after a burst)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def mib(size: int) -> str:
    """`size` bytes in MiB, in words ("384 MiB")."""
    return f"{size / 2**20:,.0f} MiB"


def address_space_limit() -> int | None:
    """This process's address-space limit in bytes (RLIMIT_AS, ``ulimit -v``; a child inherits it), or None: none,
    or a system without one."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # (not a POSIX system)
        return None
    return None if limit == resource.RLIM_INFINITY else limit


def slurm_job_memory(environ=os.environ) -> tuple[int, str] | None:
    """The memory a Slurm job holds on this node, from the variables sbatch and salloc set for it and its steps
    (megabytes): ``SLURM_MEM_PER_NODE`` (--mem), else ``SLURM_MEM_PER_CPU`` (--mem-per-cpu) times the job's CPUs
    here (``SLURM_CPUS_ON_NODE``); with what set it, in words (a "{}" for the size).  None outside a job, or where
    the job asked for no memory (0: all of the node's).  Where Slurm enforces it without a cgroup
    (``JobAcctGatherParams=OverMemoryKill``, polling the step's RSS), this is the only place the limit shows; a
    bare ``srun --mem`` outside sbatch or salloc sets neither variable (only its cgroup, where there is one, says)."""
    if "SLURM_JOB_ID" not in environ:
        return None
    node, per_cpu = environ.get("SLURM_MEM_PER_NODE", ""), environ.get("SLURM_MEM_PER_CPU", "")
    if node.isdigit() and int(node) > 0:
        return int(node) << 20, "this Slurm job's {} (its --mem)"
    cpus = environ.get("SLURM_CPUS_ON_NODE", "1")
    if per_cpu.isdigit() and int(per_cpu) > 0 and cpus.isdigit() and int(cpus) > 0:
        return int(per_cpu) * int(cpus) << 20, f"this Slurm job's {{}} (its --mem-per-cpu {per_cpu}M x {cpus} CPU(s))"
    return None


_task_memory: tuple[int, str] | None = None  # (`reserve_task_memory`)


def reserve_task_memory(size: float | None, words: str) -> None:
    """This process runs a task that its scheduler reserved `size` bytes for (a Ray task's ``memory`` resource: Ray
    enforces none, but its memory monitor kills workers when their node runs low, and a task grown past its
    reservation may be the one killed), said in `words` (a "{}" for the size); None or 0: none.  `memory_of_job`
    counts it as it counts a Slurm job's memory.  Set in a process that runs that one task (its reservation is not
    another task's)."""
    global _task_memory
    _task_memory = (int(size), words) if size and size > 0 else None


def memory_of_job() -> tuple[int, str]:
    """The bytes this process and the processes it starts may use together, and what sets them, in words: the least
    of the machine's RAM, a Slurm job's memory (`slurm_job_memory`: its --mem, --mem-per-cpu), a task's reservation
    (`reserve_task_memory`: a Ray task's) and this process's cgroup's memory limit (`memory_limit`: a container's, a
    Slurm job's under task/cgroup), which counts them all."""
    found = []
    try:
        found.append((os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "the machine's {} of RAM"))
    except (ValueError, OSError, AttributeError):  # (a system without these names)
        pass
    slurm = slurm_job_memory()
    if slurm is not None:  # (before the cgroup: a Slurm job's cgroup holds the same limit, named better as the job's)
        found.append(slurm)
    if _task_memory is not None:
        found.append(_task_memory)
    limit = memory_limit()
    if limit is not None:
        found.append((limit, "this container's {} (its cgroup's memory limit)"))
    if not found:
        raise OSError("cannot tell how much memory this machine has")
    size, words = min(found, key=lambda entry: entry[0])  # (the first of equal ones)
    return size, words.format(mib(size))


def usable_memory() -> tuple[int, str]:
    """The bytes a process started from this one may use, and what sets them, in words: the least of
    `memory_of_job` (the machine's RAM, this process's cgroup's memory limit) and its address-space limit (RLIMIT_AS:
    ulimit -v), which a child inherits.  A tool that takes a share of RAM reads the machine's alone (lmplz's -S 20%:
    51 GB of a 256 GB node in a 4 GB job)."""
    size, words = memory_of_job()
    address_space = address_space_limit()
    if address_space is not None and address_space < size:
        return address_space, f"the {mib(address_space)} of address space this process may map (RLIMIT_AS, ulimit -v)"
    return size, words
