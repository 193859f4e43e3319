"""A helper process ends with the process that started it, however that one ends.

A task process SIGKILLed (a Ray actor whose node died, the out-of-memory killer) is not told
to its children: before, the extractor child of a killed datatrove task waited forever for a
page, adopted by init, and so did the task process datatrove's Ray executor forks per task.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import psutil
import pytest

from helpers import SAMPLE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

# A datatrove pipeline run by hand (no executor): the extractor has its child process, then
# the pipeline holds still.
HELD_PIPELINE = '''
import sys, time
from datatrove.pipeline.base import PipelineStep
from plexity_plugins.datatrove import HtmlTagsExtractor, WarcHtmlReader

class Hold(PipelineStep):
    name = "hold"
    def run(self, data, rank=0, world_size=1):
        for doc in data:
            print("holding", flush=True)
            time.sleep(600)
            yield doc

data = None
for step in (WarcHtmlReader(sys.argv[1]), HtmlTagsExtractor(), Hold()):
    data = step(data, 0, 1)
for _ in data:
    pass
'''

# What RayTaskExecutor does in the task process that datatrove's Ray actor forks.
FORKED_TASK = '''
import time
import multiprocess
from plexity_plugins.runtime.lifetime import die_with_parent

def task():
    die_with_parent(multiprocess.parent_process().pid)
    time.sleep(600)

process = multiprocess.Process(target=task)
process.start()
print(process.pid, flush=True)
time.sleep(600)
'''


def kill_and_watch(command: list[str], ready: str | None = None) -> tuple[list[int], bool]:
    """Start `command`, wait for a line of its output (`ready`, else any), SIGKILL it alone
    (not its group); (its children's pids, whether they all ended within 10 s)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line and (ready is None or ready in line), f"the program did not get ready: {line!r}"
        children = psutil.Process(process.pid).children()
        assert children, "no child process to watch"
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        gone, alive = psutil.wait_procs(children, timeout=10)
        for child in alive:  # leave nothing behind, then fail
            child.kill()
        return [c.pid for c in children], not alive
    finally:
        if process.poll() is None:
            process.kill()


def test_the_extractor_child_of_a_killed_datatrove_task_ends_with_it(tmp_path):
    script = tmp_path / "held.py"
    script.write_text(textwrap.dedent(HELD_PIPELINE))
    pids, all_ended = kill_and_watch([sys.executable, str(script), str(SAMPLE.parent)], ready="holding")
    assert all_ended, f"extractor process(es) {pids} outlived their task"


def test_a_task_process_forked_as_datatrove_s_ray_actor_does_ends_with_the_actor(tmp_path):
    script = tmp_path / "forked.py"
    script.write_text(textwrap.dedent(FORKED_TASK))
    pids, all_ended = kill_and_watch([sys.executable, str(script)])
    assert all_ended, f"task process {pids} outlived its parent"
