"""`plexity train`: build one of the paper's models (or any other) from a raw corpus."""

from __future__ import annotations

import argparse
import sys

from ..training import thresholds
from ..scoring.models import ORDERS, PAPER_MODELS
from ..errors import INSTALLATION_STATUS, ModelError, printable


def _prune_count(text: str) -> int:
    """A --prune count; a corpus path after the counts (`--prune 0 1 1 BNC/Texts`) is said as such."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: --prune takes the words after it as its counts, "
                                         f"so give the corpus first (plexity train INPUT ... --prune 0 1 1)") from None


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "train", help="build a KenLM model from the BNC, CORD-19 or plain text and install it",
        description=(
            "Read a corpus, tokenise it with the scorer's tokenizer, build a KenLM model with lmplz and "
            "build_binary, set its default threshold from held-out documents and install it so that "
            f"--model NAME finds it. The paper's names ({', '.join(PAPER_MODELS)}) imply --corpus and "
            "--order."))
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="corpus files or directories: the BNC's Texts/ tree (*.xml), CORD-19's metadata.csv, "
                        "or text files (*.txt, one document or sentence a line)")
    p.add_argument("--name", "-n", required=True, help="model name (e.g. trigrams-bnc)")
    p.add_argument("--corpus", "-c", choices=("bnc", "cord19", "text"), default=None,
                   help="corpus format (implied by the paper's model names)")
    p.add_argument("--order", "-o", type=int, choices=ORDERS, default=None, metavar="{2..6}",
                   help="n-gram order (implied by the paper's model names)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--written-only", dest="written_only", action="store_const", const=True, default=None,
                       help="BNC: written texts only (the paper's choice; the default)")
    scope.add_argument("--all", dest="written_only", action="store_const", const=False,
                       help="BNC: written and spoken texts")
    p.add_argument("--prune", type=_prune_count, nargs="+", metavar="N", default=None,
                   help="lmplz --prune: minimum counts per order, e.g. 0 1 1 (default: no pruning)")
    p.add_argument("--memory", "-S", default="20%",
                   help="lmplz sort memory (-S): a share of the memory this job may use (RAM, or less: a cgroup's "
                        "or ulimit -v's limit) or a size like 4G (default: 20%%)")
    p.add_argument("--temp-dir", "-T", default=None,
                   help="where the training text, the ARPA file and lmplz's temporary files go "
                        "(default: beside the installed model)")
    p.add_argument("--discount-fallback", action="store_const", const=True, default=None,
                   help="always pass lmplz --discount_fallback (by default only when lmplz says the corpus "
                        "is too small for Kneser-Ney discounts)")
    p.add_argument("--quantize", type=int, default=8, metavar="BITS",
                   help="build_binary: quantise probabilities and backoffs to BITS bits (default 8; 0: none)")
    p.add_argument("--holdout-every", type=int, default=thresholds.HOLDOUT_EVERY, metavar="N",
                   help=f"hold out 1 document in N for the threshold (default {thresholds.HOLDOUT_EVERY}; 0: none)")
    p.add_argument("--percentile", type=float, default=thresholds.THRESHOLD_PERCENTILE,
                   help="default threshold: this percentile of the held-out sentences' perplexities "
                        f"(default {thresholds.THRESHOLD_PERCENTILE:g})")
    p.add_argument("--percentile-extracted", type=float, default=thresholds.THRESHOLD_EXTRACTED_PERCENTILE,
                   help="default threshold_extracted (method trim): this percentile "
                        f"(default {thresholds.THRESHOLD_EXTRACTED_PERCENTILE:g})")
    p.add_argument("--output-dir", default=None,
                   help="install into this directory instead of $PLEXITY_MODEL_DIR / the cache dir")
    p.add_argument("--force", action="store_true", help="replace an installed model of the same name")
    p.add_argument("--skip-bad-files", action="store_true",
                   help="count and skip unreadable or malformed corpus files instead of stopping")
    p.add_argument("--write-dropped", action="store_true",
                   help="write every skipped document with its reason to train-dropped.jsonl in the model dir")
    p.add_argument("--language", "-l", default=None,
                   help="ISO 639-1 code of the corpus's language, stored in the model: text in other languages "
                        "is passed through (default: identified from the training text)")
    p.add_argument("--tokenizer", choices=("plexity-tok-1", "ccnet"), default="plexity-tok-1",
                   help="tokenizer stored with the model (default plexity-tok-1; ccnet: CCNet normalisation + "
                        "the SentencePiece model of --sp-model)")
    p.add_argument("--sp-model", default=None, metavar="FILE", help="SentencePiece model for --tokenizer ccnet")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or step messages")
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    from ..errors import KenLMToolFailed, KenLMToolsMissing, TokenizerError
    from ..training import ModelTrainer, TrainError, paper_config

    def report(message: str) -> None:
        # (--quiet quiets the steps, not a warning: a --language the text contradicts makes a model that passes
        # its own language's pages through, and a scripted run is where --quiet is given)
        if not args.quiet or message.startswith("warning: "):
            print(f"plexity train: {message}", file=sys.stderr, flush=True)

    try:
        corpus, order = paper_config(args.name, args.corpus, args.order)
        if corpus != "bnc" and args.written_only is not None:
            raise TrainError("--written-only/--all apply to --corpus bnc only")
        written_only = True if args.written_only is None else args.written_only
        if args.name in PAPER_MODELS and corpus == "bnc" and not written_only:
            report(f"warning: the paper's {args.name} used written texts only; --all deviates from it")
        trainer = ModelTrainer(
            corpus, args.inputs, args.name, order, written_only=written_only, memory=args.memory,
            prune=args.prune, temp_dir=args.temp_dir, discount_fallback=args.discount_fallback,
            quantize_bits=args.quantize or None, holdout_every=args.holdout_every, percentile=args.percentile,
            percentile_extracted=args.percentile_extracted,
            output_dir=args.output_dir, force=args.force, skip_bad_files=args.skip_bad_files,
            write_dropped=args.write_dropped, progress=not args.quiet, report=report,
            language=args.language, tokenizer=args.tokenizer, sp_model=args.sp_model)
        result = trainer.run()  # (SIGTERM is Ctrl-C here: `main`)
    except KenLMToolsMissing as exc:  # the installation lacks them (as a missing extra)
        print(printable(f"plexity train: error: {exc}"), file=sys.stderr)
        return INSTALLATION_STATUS
    except (TrainError, ModelError, TokenizerError) as exc:
        print(printable(f"plexity train: error: {exc}"), file=sys.stderr)
        return 2
    except KenLMToolFailed as exc:  # (its first line ours, the tool's own lines after it: each a line of its own)
        print("\n".join(printable(line) for line in f"plexity train: error: {exc}".splitlines()), file=sys.stderr)
        return 1
    print(result.summary())
    return 0
