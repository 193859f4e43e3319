"""The inputs the sanitizer fuzzing of the compiled extension kept (scripts/fuzz_native.sh, docs/development.md
"Fuzzing the compiled extension"), replayed on the normal build.

tests/fuzz_corpus/ holds them: one byte choosing the entry point (the learned reader, sentence splitting and
scoring, the extractors' markup and text helpers, the UTF-8 and page-copy helpers, the forest and the second
look's rows), then the page.  `scripts/fuzz_native.py`'s `TestOneInput` runs each through the compiled code and,
where a Python reference exists, compares the two: a crash, a wrong result or an unnamed error fails here.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz_corpus"

pytestmark = pytest.mark.skipif(os.environ.get("PLEXITY_PURE_PYTHON") == "1",
                                reason="PLEXITY_PURE_PYTHON=1: the compiled path is off on purpose")


@pytest.fixture(scope="module")
def target():
    spec = importlib.util.spec_from_file_location("fuzz_native", ROOT / "scripts" / "fuzz_native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.iterdir() if p.is_file()))  # (input/: test_input_fuzz42)
def test_a_kept_fuzz_input_reads_as_the_python_reference_does(target, name):
    target.TestOneInput((CORPUS / name).read_bytes())
