"""The library used from a Jupyter notebook, in the conditions a notebook's kernel makes that a test can make without
one: a ``__main__`` module with no file (the cells' namespace, as ``python -c`` has), an asyncio loop already running
in the main thread while a cell's call runs (ipykernel's), and standard streams that are not terminals."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from datatrove.pipeline.filters import LambdaFilter
from datatrove.pipeline.writers import JsonlWriter

from plexity_plugins.datatrove import HtmlTagsExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader
from helpers import REPO, SAMPLE, completions


def test_a_function_of_the_notebook_in_a_multi_task_run_finds_the_notebooks_imports(tmp_path: Path):
    """A cell defines a filter function that uses a module the notebook imported (``re``, ``time``) and runs the
    pipeline with several workers.  Each task runs in a process started by datatrove's default 'forkserver', which
    imports a script's ``__main__`` again from its file; a notebook has none, and each task failed with
    ``NameError: name 're' is not defined`` (`TasksFailed`).  The tasks are now given the executor pickled with the
    names its functions use, and the run completes, as the same code does in a script."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for name in ("a", "b"):
        shutil.copy(SAMPLE, crawl / f"{name}.warc.gz")
    cell = textwrap.dedent(f"""
        import re
        from datatrove.pipeline.filters import LambdaFilter
        from datatrove.pipeline.writers import JsonlWriter
        from plexity_plugins.datatrove import LocalTaskExecutor, WarcHtmlReader

        def has_words(doc):
            return re.search(r"\\w+", doc.text) is not None

        LocalTaskExecutor(pipeline=[WarcHtmlReader({str(crawl)!r}), LambdaFilter(has_words),
                                    JsonlWriter({str(tmp_path / 'out')!r})],
                          tasks=2, workers=2, logging_dir={str(tmp_path / 'logs')!r}).run()
        print("completed")
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", cell], capture_output=True, text=True, env=env, timeout=120)
    assert "NameError" not in done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "completed"
    assert completions(tmp_path / "logs") == ["00000", "00001"]


def test_a_script_with_a_file_gives_its_tasks_the_executor_as_before(tmp_path: Path, monkeypatch):
    """A program that has a file (a script) is imported again by each started task, and its tasks are given the
    executor itself, pickled as datatrove pickles it; so are forked ones, which need no pickling.  (The test's own
    ``__main__`` is given a file: under pytest-xdist a worker's has none, as a notebook's.)"""
    from plexity_plugins.datatrove.executor import _task_payload

    executor = LocalTaskExecutor(pipeline=[LambdaFilter(lambda doc: True)], tasks=2, workers=2,
                                 logging_dir=str(tmp_path / "logs"))
    monkeypatch.setattr(sys.modules["__main__"], "__file__", str(tmp_path / "script.py"), raising=False)
    assert _task_payload(executor) is executor
    monkeypatch.delattr(sys.modules["__main__"], "__file__")
    assert isinstance(_task_payload(executor), bytes)


def test_a_cell_runs_a_one_worker_pipeline_while_the_kernels_loop_runs(tmp_path: Path):
    """ipykernel runs a cell in the main thread with its asyncio loop running: a run with one worker (in the
    kernel's process) completes there, and running the cell again does nothing more, as a completed run does."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    shutil.copy(SAMPLE, crawl / "a.warc.gz")

    def cell():
        return LocalTaskExecutor(pipeline=[WarcHtmlReader(str(crawl)), HtmlTagsExtractor(),
                                           PerplexitySentenceFilter(method="regions"),
                                           JsonlWriter(str(tmp_path / "out"))],
                                 tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()

    async def kernel():
        first = cell()
        again = cell()
        return first, again

    first, again = asyncio.run(kernel())
    assert first.stats and not again.stats
    assert completions(tmp_path / "logs") == ["00000"]
