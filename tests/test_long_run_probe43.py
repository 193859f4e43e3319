"""A long run's resources: what a days-long `plexity run` repeats must not leave anything behind each time.

bench/soak.py measured 200,000 records through `plexity run --workers 2` flat (docs/performance.md, "A long run stays
flat"); a corpus with hostile pages also replaces its extraction child at every page past the time limit, which the
soak's pages never met.  A descriptor, a mapping of the page memory or an unwaited child left per replacement would
end such a run days in (EMFILE, or the process limit).  A guard: it passed on the code it was written for.
"""

from __future__ import annotations

import os

import pytest

from plexity_plugins.errors import ExtractionTimeout
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

# ~1.5 MB of paragraphs: far longer to read than the time limit below, on any machine
SLOW_PAGE = "<html><body>" + "<p>The council approved the budget for the new library on Tuesday.</p>\n" * 20_000 + \
            "</body></html>"


def descriptors() -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # (the listing's own descriptor, closed since)
            pass
    return sorted(found)


def child_processes() -> list[str]:
    pid = os.getpid()
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return f.read().split()


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="reads /proc")
def test_children_replaced_at_the_time_limit_leave_no_descriptor_mapping_or_process_behind():
    others = set(child_processes())  # (a test run earlier in this process may have left its own: not this test's)
    extract = TimeLimitedExtractor("learned", timeout=0.001)
    try:
        with pytest.raises(ExtractionTimeout):
            extract(SLOW_PAGE)
        fds, maps = len(descriptors()), open("/proc/self/maps").read().count("memfd")
        for _ in range(4):  # each: the child killed, waited for, and a new one started for the next page
            with pytest.raises(ExtractionTimeout):
                extract(SLOW_PAGE)
        assert len(descriptors()) == fds, descriptors()
        assert open("/proc/self/maps").read().count("memfd") == maps
        assert len(set(child_processes()) - others) <= 1  # (the one still starting, if any: none left unwaited)
    finally:
        extract.close()
