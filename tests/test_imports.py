"""What a process imports is what its work needs: start-up is paid by every command, every extraction
child and every datatrove task, so a library a run does not use must not come back into it unnoticed.

Each check runs in a fresh interpreter (this one has imported everything) and reads its ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
# Libraries of other front ends and of extractors the default does not run.
NOT_THE_DEFAULTS = ("scrapy", "ray", "trafilatura", "starlette", "uvicorn", "matplotlib", "sentencepiece")


def imported_after(code: str, cwd: Path = REPO, whole: bool = False) -> set[str]:
    """The top-level names in ``sys.modules`` of a fresh interpreter after it ran `code` (`whole`: the modules'
    whole names)."""
    names = "sys.modules" if whole else "{m.split('.')[0] for m in sys.modules}"
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted({names})))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=env)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_learned_extractor_imports_neither_lxml_nor_resiliparse_nor_trafilatura():
    # (it asks `declarations` whether a page declares one article; that question lived in `auto`, which
    # brought lxml, resiliparse and the trafilatura extractor into every extraction child)
    modules = imported_after("from plexity_plugins.extractors.sandbox import _resolve\n"
                             "_resolve('learned')('<html><body><p>One paragraph of a page.</p></body></html>')")
    assert not modules & {"lxml", "resiliparse", "trafilatura", "numpy", "datatrove"}


def test_the_datatrove_steps_import_no_other_front_end():
    modules = imported_after("import plexity_plugins.datatrove")
    assert not modules & set(NOT_THE_DEFAULTS)


def test_plexity_clean_imports_no_other_front_end_and_not_datatrove(tmp_path):
    modules = imported_after(f"from plexity_plugins.cli import main\n"
                             f"assert main(['clean', {str(SAMPLE)!r}, '-o', {str(tmp_path / 'out')!r}, '-q']) == 0")
    assert not modules & {*NOT_THE_DEFAULTS, "datatrove", "huggingface_hub"}


def test_plexity_clean_and_plexity_score_import_neither_numpy_nor_tqdm(tmp_path):
    # (numpy came with BlingFire's package, ~0.09 s of each start, for a C library that needs none of it; tqdm,
    # ~0.04 s, for a progress bar it shows only on a terminal: here stderr is a pipe)
    for command in (['clean', str(SAMPLE), '-o', str(tmp_path / 'out'), '-q'], ['score', 'The council met.']):
        modules = imported_after(f"from plexity_plugins.cli import main\nassert main({command!r}) == 0")
        assert not modules & {"numpy", "tqdm", "blingfire"}, command


def test_the_extraction_child_imports_no_codec_of_an_encoding_its_page_is_not_in():
    # (the table of the standard's charset labels by Python codec looked each of ~230 labels up at import: ~50 codec
    # modules, Japanese, Chinese and Korean ones among them, ~15 ms of every process's start)
    modules = imported_after("from plexity_plugins.extractors.sandbox import _resolve\n"
                             "_resolve('learned')('<html><body><p>One paragraph of a page.</p></body></html>')",
                             whole=True)
    assert not modules & {"encodings.euc_jp", "encodings.cp949", "encodings.gb18030", "encodings.koi8_r"}


def test_making_and_copying_the_jsonl_writer_reads_no_distribution_metadata(tmp_path):
    # datatrove's check of JsonlWriter's orjson read every installed distribution's metadata (~40 ms) in each
    # process that made or unpickled the step; importing plexity_plugins.datatrove checks orjson instead
    done = subprocess.run([sys.executable, "-c", (
        "import copy, pickle\nfrom plexity_plugins.datatrove import JsonlDocumentWriter\n"
        "from datatrove.utils._import_utils import _is_distribution_available\n"
        f"writer = JsonlDocumentWriter({str(tmp_path)!r})\ncopy.deepcopy(writer)\npickle.loads(pickle.dumps(writer))\n"
        "print(_is_distribution_available.cache_info().misses)")], capture_output=True, text=True, timeout=300,
        cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


def test_plexity_clean_of_html_files_imports_no_warc_library(tmp_path):
    (tmp_path / "page.html").write_text("<html><body><p>The council approved the budget for the new library on "
                                        "Tuesday, and the building will open in the spring.</p></body></html>")
    modules = imported_after(f"from plexity_plugins.cli import main\n"
                             f"assert main(['clean', {str(tmp_path / 'page.html')!r}, '-o', "
                             f"{str(tmp_path / 'out')!r}, '-q']) == 0")
    assert not modules & {"warcio", "fsspec", "lxml", "resiliparse"}


# The learned reader's modules: the extraction child imports them; the process that starts it has no use for them.
LEARNED_READER = {"plexity_plugins.extractors.learned", "plexity_plugins.extractors.learned.features"}


def test_a_datatrove_extractor_step_imports_its_extractor_only_in_its_child():
    # (its check of the installation ran the extractor in the task's process too: ~40-80 ms of each task;
    # the child's readiness says the same, and an import error there reaches the task as it did)
    modules = imported_after("from datatrove.data import Document\n"
                             "from plexity_plugins.datatrove import LearnedExtractor\n"
                             "page = ('<html><body><article><p>The council approved the budget for the new library '\n"
                             "        'on Tuesday, and the building will open in the spring.</p>'\n"
                             "        '</article></body></html>')\n"
                             "done = list(LearnedExtractor().run(iter([Document(text=page, id='1')])))\n"
                             "assert 'council approved' in done[0].text", whole=True)
    assert modules & {*LEARNED_READER, "lxml", "plexity_plugins.extractors.trafilatura"} == set()


def test_plexity_run_and_clean_import_the_extractor_only_in_their_child(tmp_path):
    for command in ("run", "clean"):
        modules = imported_after(f"from plexity_plugins.cli import main\n"
                                 f"assert main([{command!r}, {str(SAMPLE)!r}, '-o', {str(tmp_path / command)!r}]) == 0",
                                 whole=True)
        assert modules & {*LEARNED_READER, "lxml"} == set(), command
