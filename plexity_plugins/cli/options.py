"""Arguments several commands share: the model(s) and threshold, byte sizes."""

from __future__ import annotations

import argparse
import math

from ..runtime import sizes


def add_model_args(parser: argparse.ArgumentParser, threshold: bool = True,
                   language_map: str | None = "to clean each text with its language's model") -> None:
    """--model (and --threshold); `language_map`: what a LANG=MODEL map does in this command, or
    None where it takes one model only (`single_model`)."""
    # Repeated LANG=MODEL values make a language -> model map (`plexity_plugins.scoring.multilingual`);
    # `main` turns the list into a name, a map or None.
    repeat = (f"; repeat as LANG=MODEL (--model en=en-default --model de=ccnet-de) {language_map}"
              if language_map else "")
    parser.add_argument("--model", "-m", default=None, action="append",
                        help=f"model name or path (default: the embedded model; see `plexity models`){repeat}")
    if threshold:
        parser.add_argument("--threshold", "-t", type=float, default=None,
                            help="perplexity above which a sentence is dropped (default: the model's)")


def single_model(args: argparse.Namespace, maps: str = "") -> str | None:
    """The one model of --model; `maps`: where this command takes a LANG=MODEL map instead, said when one is given."""
    if isinstance(args.model, dict):
        raise ValueError(f"`plexity {args.command}` takes one model, not a LANG=MODEL map{maps}")
    return args.model


def parse_memory(text: str) -> int:
    """A memory ceiling (`plexity_plugins.runtime.sizes.parse_memory`), as an argument type."""
    try:
        return sizes.parse_memory(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_size(text: str) -> int:
    """A byte count (`plexity_plugins.runtime.sizes.parse_size`), as an argument type."""
    try:
        return sizes.parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    """A whole number of 1 or more (tasks, workers), as an argument type."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: 1 or more")
    return value


def positive_float(text: str) -> float:
    """A number above 0 (GB of memory per CPU), as an argument type."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"not a number above 0: {text!r}")
    return value


def _seconds(text: str, refused: str) -> float:
    """`text` as seconds, 0 or more; else an argument error saying `refused` and the text."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise argparse.ArgumentTypeError(refused.format(text=text))
    return seconds


def wait_seconds(text: str) -> float:
    """How long to wait, in seconds (0: not at all), as an argument type."""
    return _seconds(text, "not a time to wait: {text!r} (seconds, 0 or more)")


def parse_seconds(text: str) -> float:
    """A time limit in seconds, as an argument type: 0 (no limit) or more."""
    return _seconds(text, "not a time limit: {text!r} (seconds, 0 or more; 0: no limit)")


# the options' names in the document policy's refusal (`plexity_plugins.cleaning.policy.check_other_languages`)
LANGUAGE_OPTION_NAMES = {"other_languages": "--other-languages drop", "language_check": "--no-language-check"}


def check_language_options(args: argparse.Namespace, scorer=None) -> None:
    """--other-languages drop needs the language check: refused with --no-language-check (the command
    line has no upstream language labels: nothing would be found in another language, or, with a
    LANG=MODEL map, everything unlabelled would be), and with `scorer`, a model that records no language."""
    from ..cleaning.policy import check_other_languages

    if args.other_languages != "drop":
        return
    if args.no_language_check:
        raise ValueError("--other-languages drop with --no-language-check: without the language check no document "
                         "is found in another language: leave out --no-language-check to drop them, or "
                         "--other-languages drop to filter every document with the model")
    if scorer is not None:
        check_other_languages(scorer, args.other_languages, LANGUAGE_OPTION_NAMES)
