"""Docs audit 36: what a user reads of a command's options says what the option does."""

from __future__ import annotations

import argparse

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
