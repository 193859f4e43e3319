"""`plexity calibrate`: a model's perplexities on clean (and boilerplate) text, and a threshold."""

from __future__ import annotations

import argparse
import sys

from ..errors import printable
from ..training import thresholds
from .options import add_model_args, single_model


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="suggest (and store) a model's default threshold from held-out clean text",
        description=(
            "Score every sentence of held-out clean text (one paragraph or sentence a line; not text the "
            "model was trained on) and optionally boilerplate samples (one a line; '#' starts a comment), "
            "print the perplexity percentiles and suggest a threshold: the given percentile of the clean "
            "sentences, the rule every trained model's default follows."))
    p.add_argument("clean", nargs="+", metavar="CLEAN_TEXT", help="held-out clean text files")
    add_model_args(p, threshold=False, language_map=None)
    p.add_argument("--boilerplate", "-b", nargs="+", action="extend", default=[], metavar="FILE",
                   help="boilerplate samples, one a line (e.g. scripts/default_model/boilerplate.txt)")
    p.add_argument("--percentile", "-p", type=float, default=thresholds.THRESHOLD_PERCENTILE,
                   help="suggest this percentile of the clean sentences as the threshold "
                        f"(default {thresholds.THRESHOLD_PERCENTILE:g})")
    p.add_argument("--percentile-extracted", type=float, default=thresholds.THRESHOLD_EXTRACTED_PERCENTILE,
                   help="... and this one as threshold_extracted, used by method trim "
                        f"(default {thresholds.THRESHOLD_EXTRACTED_PERCENTILE:g})")
    p.add_argument("--write", action="store_true",
                   help="store the suggested thresholds as the model's defaults in its model.json")
    p.set_defaults(func=cmd_calibrate)


def _row(values: list[float]) -> dict[str, float] | None:
    return thresholds.percentile_report(values) if len(values) >= 2 else None


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..errors import ModelError, path_error_message
    from ..scoring.scorer import PerplexityScorer
    from ..training import TrainError, calibrate, metadata_path, write_threshold

    try:
        scorer = PerplexityScorer(single_model(args))
        if args.write:  # (where --write cannot write, said before the held-out text is read and scored)
            metadata_path(scorer.info)
        result = calibrate(scorer, args.clean, args.boilerplate, args.percentile, args.percentile_extracted)
    except (TrainError, ModelError) as exc:
        print(printable(f"plexity calibrate: error: {exc}"), file=sys.stderr)
        return 2
    info = scorer.info
    print(f"model {scorer.model_name} ({info.path}); current default threshold: {info.threshold}, "
          f"threshold_extracted: {info.threshold_extracted}")
    clean, boiler = _row(result.clean), _row(result.boilerplate)
    print(f"{'percentile':>10} {'clean':>12}" + (f" {'boilerplate':>12}" if boiler else ""))
    for point in clean:
        print(f"{point:>10} {clean[point]:>12.1f}" + (f" {boiler[point]:>12.1f}" if boiler else ""))
    print(f"{'sentences':>10} {len(result.clean):>12}" + (f" {len(result.boilerplate):>12}" if boiler else ""))
    too_few = result.too_few()
    if too_few:  # (stderr, as every command's warnings: a script that reads the table still hears it)
        print(f"plexity calibrate: warning: {too_few}; give more held-out clean text", file=sys.stderr)
    if result.other_language():
        print(printable(f"plexity calibrate: warning: {result.other_language()}"), file=sys.stderr)

    def effect(threshold: float) -> str:
        text = f"keeps {100 * result.clean_kept(threshold):.1f}% of the clean sentences"
        dropped = result.boilerplate_dropped(threshold)
        if dropped is not None:
            text += f", drops {100 * dropped:.1f}% of the boilerplate"
        return text

    print(f"suggested threshold: {result.threshold} ({result.percentile:g}th percentile of the clean "
          f"sentences): {effect(result.threshold)}")
    print(f"suggested threshold_extracted: {result.threshold_extracted} ({result.percentile_extracted:g}th "
          f"percentile): {effect(result.threshold_extracted)}")
    best = result.best_separating_threshold()
    if best is not None:
        print(f"for comparison, the threshold that best separates these samples: {best}: {effect(best)}")
    if args.write:
        procedure = result.procedure(args.clean, args.boilerplate)
        details = {"clean_sentences": len(result.clean), "boilerplate_sentences": len(result.boilerplate),
                   "clean_percentiles": clean, "boilerplate_percentiles": boiler}
        try:
            path = write_threshold(info, result.threshold, procedure, details, result.threshold_extracted,
                                   too_few=too_few)
        except (ModelError, OSError) as exc:
            message = path_error_message(exc) if isinstance(exc, OSError) else exc  # (one line, not "[Errno 13] ...")
            print(printable(f"plexity calibrate: error: {message}"), file=sys.stderr)
            return 2
        print(f"wrote default threshold {result.threshold} and threshold_extracted "
              f"{result.threshold_extracted} to {path}")
    else:
        print("(pass --write to store them as the model's defaults)")
    return 0
