"""`plexity models`: list the models; `plexity models import`: install a KenLM file you have."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("models", help="list available models and their metadata; `plexity models import` "
                                      "installs a KenLM file you have")
    p.set_defaults(func=cmd_models)
    from ..training.model_import import add_parser as add_import_parser

    add_import_parser(p.add_subparsers(dest="models_command", metavar="SUBCOMMAND"))



def cmd_models(args: argparse.Namespace) -> int:
    from ..scoring.models import PAPER_MODELS, list_models, model_dir

    models = list_models()
    # one row a model, then its corpus and licence whole, each on a line of its own (a licence is
    # not to be cut short)
    print(f"{'name':22} {'order':>5} {'tokens':>11} {'threshold':>10}  {'tokenizer':15} lang")
    for info in models:
        tokens = f"{info.tokens:,}" if info.tokens else "?"
        threshold = f"{info.threshold:g}" if info.threshold else "-"
        print(f"{info.name:22} {info.order or '?':>5} {tokens:>11} {threshold:>10}  "
              f"{info.tokenizer_version or '?':15} {info.language or '?'}")
        print(f"    corpus: {info.corpus}")
        print(f"    licence: {info.licence}")
    installed = {info.name for info in models}
    missing = [name for name in PAPER_MODELS if name not in installed]
    if missing:
        print(f"\nnot installed (build with `plexity train`): {', '.join(missing)}")
    print(f"model directory: {model_dir()}")
    from ..runtime.native import status

    print(f"scoring path: {status()}")
    others = sorted({info.tokenizer_version for info in models} - {None, "plexity-tok-1"})
    if others:  # the compiled path implements plexity-tok-1 only
        print(f"  (models with tokenizer {', '.join(others)}: the kenlm module)")
    return 0
