"""The `plexity` command line."""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import sys

from . import __version__
from .decide import METHODS
from .extract import DEFAULT_EXTRACTOR, EXTRACTORS
from .extras import MissingExtraError
from .models import ModelError
from .policy import CLEAN_MIN_CHARS, DEFAULT_MIN_CHARS, ENVIRONMENT_ERRORS, OTHER_LANGUAGE_ACTIONS, \
    InstallationError, environment_message
from .reading import MAX_DOCUMENT_BYTES
from .sandbox import DEFAULT_EXTRACT_TIMEOUT

# Further subcommands live in their own modules, each with `add_parser(subparsers)`.
COMMAND_MODULES: list[str] = ["plexity_plugins.cli_train", "plexity_plugins.cli_calibrate",
                               "plexity_plugins.web.command", "plexity_plugins.report", "plexity_plugins.run_cmd"]


def _add_model_args(parser: argparse.ArgumentParser, threshold: bool = True) -> None:
    parser.add_argument("--model", "-m", default=None,
                        help="model name or path (default: the embedded model; see `plexity models`)")
    if threshold:
        parser.add_argument("--threshold", "-t", type=float, default=None,
                            help="perplexity above which a sentence is dropped (default: the model's)")


def cmd_score(args: argparse.Namespace) -> int:
    from .scorer import PerplexityScorer

    text = sys.stdin.read() if args.text == "-" else args.text
    scorer = PerplexityScorer(args.model)
    if args.sentences:
        for record in scorer.score(text):
            print(f"{record.perplexity:.2f}\t{record.tokens}\t{record.oov}\t{record.text}")
    print(f"{scorer.perplexity(text):.2f}")
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    from .decide import method_for_extractor
    from .files import FileCleaner, collect_inputs
    from .scorer import PerplexityScorer

    method = args.method or method_for_extractor(args.extractor)
    scorer = PerplexityScorer(args.model, threshold=args.threshold, method=method)
    # Text files skip the extractor, so by default they get the method for unextracted text.
    text_method = args.method or method_for_extractor("none")
    text_scorer = (scorer if text_method == method else
                   PerplexityScorer(args.model, threshold=args.threshold, method=text_method))
    inputs = collect_inputs(args.inputs, output_dir=args.output_dir)
    if not inputs:
        print("plexity clean: no input files found", file=sys.stderr)
        return 2
    cleaner = FileCleaner(scorer, args.output_dir, extractor=args.extractor, annotate=args.annotate,
                          write_dropped=args.write_dropped, text_scorer=text_scorer, min_chars=args.min_chars,
                          min_kept_fraction=args.min_kept_fraction, other_languages=args.other_languages,
                          max_document_bytes=args.max_document_bytes, extract_timeout=args.extract_timeout)
    stats = cleaner.run(inputs, progress=not args.quiet)
    print(stats.summary())
    print(f"outputs and {'plexity-stats.json'} in {args.output_dir}")
    return 0


_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
               "kib": 2**10, "mib": 2**20, "gib": 2**30}


def _size(text: str) -> int:
    """A byte count: 50000000, 50MB, 50M, 2GiB ... (k/M/G decimal; KiB/MiB/GiB binary)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _SIZE_UNITS or float(match.group(1)) * _SIZE_UNITS[match.group(2)] < 1:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 50MB, 200KiB, 1000000)")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


def cmd_models(args: argparse.Namespace) -> int:
    from .models import PAPER_MODELS, list_models, model_dir

    models = list_models()
    print(f"{'name':22} {'order':>5} {'tokens':>11} {'threshold':>10}  {'tokenizer':14} corpus / licence")
    for info in models:
        tokens = f"{info.tokens:,}" if info.tokens else "?"
        threshold = f"{info.threshold:g}" if info.threshold else "-"
        print(f"{info.name:22} {info.order or '?':>5} {tokens:>11} {threshold:>10}  "
              f"{info.tokenizer_version or '?':14} {info.corpus[:60]} / {info.licence[:40]}")
    installed = {info.name for info in models}
    missing = [name for name in PAPER_MODELS if name not in installed]
    if missing:
        print(f"\nnot installed (build with `plexity train`): {', '.join(missing)}")
    print(f"model directory: {model_dir()}")
    from .native import status

    print(f"scoring path: {status()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plexity", description="Perplexity-based boilerplate removal with KenLM.")
    parser.add_argument("--version", action="version", version=f"plexity_plugins {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("score", help="perplexity of a sentence (last line of stdout)")
    p.add_argument("text", help="the text, or - to read stdin")
    p.add_argument("--sentences", action="store_true",
                   help="first print each sentence: perplexity, tokens, OOV tokens, text (tab-separated)")
    _add_model_args(p, threshold=False)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("clean", help="clean text, HTML and WARC files")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="files or directories (recursive)")
    p.add_argument("--output-dir", "-o", required=True, help="where cleaned files go")
    _add_model_args(p)
    p.add_argument("--extractor", choices=EXTRACTORS, default=DEFAULT_EXTRACTOR,
                   help=f"HTML to text before filtering (default: {DEFAULT_EXTRACTOR})")
    p.add_argument("--method", choices=METHODS, default=None,
                   help="region: best run of blocks (default for tags/none); trim: edges only (default "
                        "for trafilatura); sentences: the paper's per-sentence rule")
    p.add_argument("--annotate", action="store_true",
                   help='keep everything, wrap would-be-dropped sentences in <ppl score="...">')
    p.add_argument("--write-dropped", action="store_true",
                   help="write every dropped sentence/document with its reason to plexity-dropped.jsonl")
    p.add_argument("--min-chars", type=int, default=CLEAN_MIN_CHARS,
                   help=f"empty a document keeping fewer characters (reason too_short; default: "
                        f"{CLEAN_MIN_CHARS}, never; the datatrove step and Scrapy default to {DEFAULT_MIN_CHARS})")
    p.add_argument("--min-kept-fraction", type=float, default=0.0,
                   help="empty a document keeping a smaller share of its text (reason too_little_kept; default: 0)")
    p.add_argument("--other-languages", choices=OTHER_LANGUAGE_ACTIONS, default="keep",
                   help="documents in another language than the model's: keep unfiltered (default) or drop")
    p.add_argument("--max-document-bytes", type=_size, default=MAX_DOCUMENT_BYTES,
                   help=f"skip a larger document, decompressed (.gz files, WARC payloads), as too_large; "
                        f"reading stops at the cap (default: {MAX_DOCUMENT_BYTES // 10**6} MB)")
    p.add_argument("--extract-timeout", type=float, default=DEFAULT_EXTRACT_TIMEOUT, metavar="SECONDS",
                   help=f"stop extracting an HTML document after this long and skip it as extraction_failed "
                        f"(default: {DEFAULT_EXTRACT_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_clean)

    p = sub.add_parser("models", help="list available models and their metadata")
    p.set_defaults(func=cmd_models)

    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args) or 0
    except BrokenPipeError:  # `plexity models | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except MissingExtraError as exc:  # the installation lacks an extra: say which
        print(f"plexity {args.command}: error: {exc}", file=sys.stderr)
        return 3
    except (ModelError, ValueError, OSError) as exc:
        print(f"plexity {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (*ENVIRONMENT_ERRORS, InstallationError) as exc:  # the installation, not the input: stop
        print(f"plexity {args.command}: error: {environment_message(exc)}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
