"""Arguments several commands share: the model(s) and threshold, byte sizes."""

from __future__ import annotations

import argparse
import re


def add_model_args(parser: argparse.ArgumentParser, threshold: bool = True) -> None:
    # Repeated LANG=MODEL values make a language -> model map (`plexity_plugins.scoring.multilingual`);
    # `main` turns the list into a name, a map or None.
    parser.add_argument("--model", "-m", default=None, action="append",
                        help="model name or path (default: the embedded model; see `plexity models`); repeat "
                             "as LANG=MODEL (--model en=en-default --model de=ccnet-de) to clean each text "
                             "with its language's model")
    if threshold:
        parser.add_argument("--threshold", "-t", type=float, default=None,
                            help="perplexity above which a sentence is dropped (default: the model's)")


def single_model(args: argparse.Namespace) -> str | None:
    if isinstance(args.model, dict):
        raise ValueError(f"`plexity {args.command}` takes one model, not a LANG=MODEL map")
    return args.model


_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
               "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_memory(text: str) -> int:
    """A memory ceiling: a size as `parse_size`, or 0 (no ceiling)."""
    return 0 if text.strip() == "0" else parse_size(text)


def parse_size(text: str) -> int:
    """A byte count: 50000000, 50MB, 50M, 2GiB ... (k/M/G decimal; KiB/MiB/GiB binary)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _SIZE_UNITS or float(match.group(1)) * _SIZE_UNITS[match.group(2)] < 1:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 50MB, 200KiB, 1000000)")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])
