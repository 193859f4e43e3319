"""`plexity report`: the HTML report (and PNG histogram) of a run (`plexity_plugins.cleaning.report`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cleaning.stats import STATS_FILE

DEFAULT_REPORT = "plexity-report.html"


def _run_stats(merged: list, folder):
    """A `plexity run` folder's counts and settings (`plexity_plugins.datatrove.run_counts.report_stats`)."""
    from ..runtime.extras import require_extra

    require_extra("datatrove", "plexity report of a plexity run folder")
    from ..datatrove.run_counts import report_stats

    return report_stats(merged, folder)


def _run_logging_dir(folder: Path) -> Path | None:
    """The logging folder of the `plexity run` that wrote `folder` with --logging-dir elsewhere (it records
    that folder in `folder`), when `folder` itself holds no stats."""
    from .run import recorded_logging_dir

    if not folder.is_dir() or (folder / STATS_FILE).is_file() or (folder / "logs" / "stats.json").is_file():
        return None
    from ..cleaning.report import task_stats_folder

    logs = recorded_logging_dir(folder)
    return logs if logs is not None and ((logs / "stats.json").is_file() or task_stats_folder(logs)) else None


def _check_current_folder_writable(stats: Path) -> None:
    """Without --output the report goes to the current folder: one this user may not write (a cron job's or a
    service's `/`, a shared checkout) said as that, with the --output that writes the report beside the stats.
    Before, "cannot write plexity-report.html: permission denied: choose an output this user may write to" named
    neither the folder nor the option."""
    import os

    here = Path.cwd()
    if os.access(here, os.W_OK | os.X_OK):
        return
    beside = (stats if stats.is_dir() else stats.parent) / DEFAULT_REPORT
    raise ValueError(f"without --output the report is written in the current folder, {here}, which this user may "
                     f"not write: give --output, as in -o {beside}")


def cmd_report(args: argparse.Namespace) -> int:
    from ..cleaning.report import histogram_path, incomplete, load_report_data, write_report

    args.stats = _run_logging_dir(Path(args.stats)) or args.stats  # (`plexity run -o out --logging-dir L`)
    if args.output is None:
        args.output = DEFAULT_REPORT
        _check_current_folder_writable(Path(args.stats))
    if Path(args.output).is_dir():  # (`-o reports/`: the report goes in it, under its default name)
        args.output = str(Path(args.output) / DEFAULT_REPORT)
    if args.png and Path(args.png).is_dir():  # (`--png figures/`: the PNG goes in it, named as the report)
        args.png = str(Path(args.png) / Path(args.output).with_suffix(".png").name)
    earlier = histogram_path(args.output, args.png)
    earlier = earlier if earlier.is_file() else None
    data = load_report_data(args.stats, run_stats=_run_stats)
    html_path, png_path = write_report(data, args.output, args.png)
    print(f"report: {html_path}")
    if partial := incomplete(data.stats):  # (said where it is read first, as in the report)
        print(f"plexity report: {partial}", file=sys.stderr)
    if png_path:
        print(f"histogram: {png_path}")
    else:
        removed = f" (the earlier {earlier}, another report's, was removed)" if earlier else ""
        print(f"plexity report: these stats have no perplexity histogram: no PNG written{removed}", file=sys.stderr)
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="static HTML report (and PNG histogram) of a `plexity clean` or `plexity run` output",
        description="A self-contained HTML report of a run: perplexity histogram with the threshold, kept and "
                    "dropped counts, sample dropped sentences per perplexity band.")
    p.add_argument("stats", metavar="STATS_OR_OUTPUT_DIR",
                   help=f"{STATS_FILE}, or the output directory of `plexity clean` holding it; or the output "
                        "directory of `plexity run` (its logs/stats.json: counts only, no histogram)")
    p.add_argument("--output", "-o", default=None,
                   help=f"the HTML report, or a folder to write it in (default: {DEFAULT_REPORT}, in the current "
                        f"folder)")
    p.add_argument("--png", default=None,
                   help="the histogram PNG, or a folder to write it in (default: the report's name with .png)")
    p.set_defaults(func=cmd_report)
