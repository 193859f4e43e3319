"""Docs audit 36: what a user reads of a command's options says what the option does."""

from __future__ import annotations

import argparse
import subprocess
import sys

from plexity_plugins.cli import build_parser


def test_models_import_threshold_help_names_every_method_it_sets():
    """`plexity models import --help` said `--threshold` is the sentence threshold of "methods region,
    sentences", while docs/models.md (and the scorer) use it for `regions` too: a user importing a model for
    the tag remover's text was told the threshold did not apply.  Now the help names region, regions and
    sentences (`--threshold-extracted` is trim's)."""
    parser = build_parser()
    for word in ("models", "import"):
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    option = next(a for a in parser._actions if "--threshold" in a.option_strings)
    assert "region, regions and sentences" in option.help, option.help


def test_a_misspelt_pure_python_switch_is_a_warning(tmp_path):
    """docs/cli.md: a `PLEXITY_*` variable a letter or two from one plexity reads is a warning naming it.
    `PLEXITY_PURE_PYTHN=1 plexity models` (docs/performance.md's `PLEXITY_PURE_PYTHON=1`, misspelt) said nothing
    and scored on the compiled path; now it warns, naming PLEXITY_PURE_PYTHON."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PLEXITY_PURE_PYTHN": "1", "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.run([sys.executable, "-m", "plexity_plugins", "score", "--plain", "The council met."],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "PLEXITY_PURE_PYTHN is set, which plexity does not read: did you mean PLEXITY_PURE_PYTHON?" in run.stderr


def test_a_file_plexity_clean_does_not_read_is_told_every_name_it_reads(tmp_path):
    """`plexity clean` of a file it does not read said "not a .txt, .html, .htm, .warc or .warc.wet file", though it
    reads .text, .xhtml, .xht and .shtml files too (docs/cli.md lists them): the names come from the suffixes it
    reads."""
    from plexity_plugins.cleaning.file_kinds import HTML_SUFFIXES, TEXT_SUFFIXES, WARC_SUFFIXES

    (tmp_path / "f.pdfx").write_bytes(b"x\x00")  # (no text: a text file is told the .txt name that reads it instead)
    done = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "f.pdfx"), "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    line = done.stderr.strip().splitlines()[-1]
    for suffix in TEXT_SUFFIXES + HTML_SUFFIXES + WARC_SUFFIXES:
        assert suffix.removesuffix(".gz") in line, (suffix, line)


def test_plexity_score_given_a_language_map_without_document_names_the_option_that_takes_one():
    """`plexity score --model en=en-default "..."` said it "takes one model, not a LANG=MODEL map", though with
    --document it takes one (its --help says so): the line says so too."""
    done = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "score", "--model", "en=en-default",
                           "The council approved the budget."], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == ("plexity score: error: `plexity score` takes one model, not a LANG=MODEL map: give "
                                   "its language's model (--model en-default); with --document it takes a map, and "
                                   "scores the text with its language's model")
