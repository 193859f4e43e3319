"""`plexity models`: list the models; `plexity models import`: install a KenLM file you have."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import NoHomeFolder, printable
from ..text.model_tokenizers import TOKENIZERS


def add_parser(sub) -> None:
    p = sub.add_parser("models", help="list available models and their metadata; `plexity models import` "
                                      "installs a KenLM file you have")
    p.set_defaults(func=cmd_models)
    subparsers = p.add_subparsers(dest="models_command", metavar="SUBCOMMAND")
    # (`plexity models list`: what `plexity models` does, under the name people try first)
    subparsers.add_parser("list", help="list the models (as `plexity models`)").set_defaults(func=cmd_models)
    add_import_parser(subparsers)


def cmd_models(args: argparse.Namespace) -> int:
    from ..scoring.models import PAPER_MODELS, list_models, model_dir

    models = list_models()
    # one row a model, then its corpus and licence whole, each on a line of its own (a licence is
    # not to be cut short)
    print(f"{'name':22} {'order':>5} {'tokens':>11} {'threshold':>10}  {'tokenizer':15} lang")
    for info in models:
        tokens = f"{info.tokens:,}" if info.tokens else "?"
        threshold = f"{info.threshold:g}" if info.threshold else "-"
        # (a model's card and folder name are its author's: an ESC or a line break in them, printed as it was, set the
        # terminal's title, cleared it or forged a line of this listing)
        print(f"{printable(info.name):22} {info.order or '?':>5} {tokens:>11} {threshold:>10}  "
              f"{printable(str(info.tokenizer_version or '?')):15} {printable(str(info.language or '?'))}")
        print(f"    corpus: {printable(str(info.corpus))}")
        print(f"    licence: {printable(str(info.licence))}")
        if info.threshold and (info.build or {}).get("threshold_too_few"):  # (set from too few sentences)
            print(f"    threshold: {printable(str(info.build['threshold_too_few']))}")
    installed = {info.name for info in models}
    missing = [name for name in PAPER_MODELS if name not in installed]
    if missing:
        print(f"\nnot installed (build with `plexity train`): {', '.join(missing)}")
    try:
        folder = model_dir()
    except NoHomeFolder as exc:  # (a container's arbitrary UID without HOME: the embedded models still score)
        print(f"model directory: none ({exc})")
        folder = None
    # (a PLEXITY_MODEL_DIR misspelt in its path read as a folder of no models, its trained models "not installed")
    if folder is not None:
        absent = "" if folder.is_dir() else " (not there yet: `plexity train` makes it)" if "PLEXITY_MODEL_DIR" not in \
            os.environ else " (PLEXITY_MODEL_DIR names no folder: no model is found there)"
        print(f"model directory: {folder}{absent}")
    from ..runtime.native import status

    print(f"scoring path: {status()}")
    others = sorted({info.tokenizer_version for info in models} - {None, "plexity-tok-1"})
    if others:  # the compiled path implements plexity-tok-1 only
        print(f"  (models with tokenizer {', '.join(others)}: the kenlm module)")
    return 0


def add_import_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "import", help="install a KenLM file you have (e.g. CCNet's xx.arpa.bin + xx.sp.model) as a model",
        description=("Install a KenLM model with its declared tokenizer, so that --model NAME scores it right. "
                     "For the CCNet / edugp Wikipedia models: --tokenizer ccnet --sp-model xx.sp.model "
                     "(or ccnet-datatrove to reproduce datatrove's KenlmModel numbers, which turn a run of "
                     "digits into a single 0)."))
    p.add_argument("name", help="the model's name (then --model NAME)")
    p.add_argument("--kenlm", required=True, metavar="FILE", help="KenLM binary or ARPA file (e.g. en.arpa.bin)")
    p.add_argument("--tokenizer", required=True, choices=TOKENIZERS,
                   help="how its training text was tokenised: ccnet for CCNet / edugp models")
    p.add_argument("--sp-model", default=None, metavar="FILE", help="the SentencePiece model (e.g. en.sp.model)")
    p.add_argument("--language", "-l", default="", help="ISO 639-1 code of the model's language (e.g. en, de)")
    p.add_argument("--calibrate", nargs="+", default=[], metavar="CLEAN_TEXT",
                   help="held-out clean text (one paragraph a line): set the sentence thresholds from it")
    p.add_argument("--threshold", type=float, default=None,
                   help="sentence threshold (methods region, regions and sentences)")
    p.add_argument("--threshold-extracted", type=float, default=None, help="sentence threshold for method trim")
    p.add_argument("--document-threshold", type=float, default=None,
                   help="default maximum document perplexity (e.g. CCNet's per-language tail cut-off)")
    p.add_argument("--licence", default="unknown", help="the model's licence, recorded in its metadata")
    p.add_argument("--copy", action="store_true", help="copy the KenLM file instead of linking to it")
    p.add_argument("--output-dir", default=None, help="install here instead of $PLEXITY_MODEL_DIR / the cache dir")
    p.add_argument("--force", action="store_true", help="replace an installed model of the same name")
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from ..errors import ModelError, TokenizerError, TrainError, path_error_message
    from ..training.model_import import import_model

    def report(message: str) -> None:
        print(f"plexity models import: {message}", file=sys.stderr, flush=True)

    try:
        result = import_model(args.name, args.kenlm, args.tokenizer, args.sp_model, args.language, args.calibrate,
                              args.threshold, args.threshold_extracted, args.document_threshold, copy=args.copy,
                              output_dir=args.output_dir, force=args.force, licence=args.licence, report=report)
    except (ModelError, TrainError, TokenizerError, OSError) as exc:
        message = path_error_message(exc) if isinstance(exc, OSError) else exc  # (one line, not "[Errno 13] ...")
        print(printable(f"plexity models import: error: {message}"), file=sys.stderr)
        return 2
    print(result.summary())
    return 0
