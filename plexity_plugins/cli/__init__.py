"""The `plexity` command line: one module per command, each with `add_parser(subparsers)`
(the arguments) and its `cmd_*` function (the work); `main` dispatches and turns errors into
exit codes (2: bad input or usage, 3: the installation lacks something, 4: the disk is full)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from .. import __version__
from ..errors import (DISK_FULL_STATUS, ENVIRONMENT_ERRORS, InstallationError, MissingExtraError, ModelError,
                      disk_full_message, environment_message, is_disk_full)

# In the order `plexity --help` lists them.
COMMAND_MODULES: list[str] = [f"plexity_plugins.cli.{name}" for name in
                              ("score", "clean", "models", "train", "calibrate", "serve", "report", "run")]


# What an interrupted command left, said after "interrupted"
INTERRUPTED = {"run": ": the tasks that completed are kept; the same command runs the others",
               "clean": ": the outputs written so far are whole; plexity-stats.json says \"completed\": false"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plexity", description="Perplexity-based boilerplate removal with KenLM.")
    parser.add_argument("--version", action="version", version=f"plexity_plugins {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if isinstance(getattr(args, "model", None), list):
        from ..scoring.multilingual import parse_model_args

        try:
            args.model = parse_model_args(args.model)
        except ValueError as exc:
            parser.error(str(exc))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args) or 0
    except BrokenPipeError:  # `plexity models | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl+C: one line, not a traceback from wherever it landed
        print(f"plexity {args.command}: interrupted{INTERRUPTED.get(args.command, '')}", file=sys.stderr)
        return 130
    except MissingExtraError as exc:  # the installation lacks an extra: say which
        print(f"plexity {args.command}: error: {exc}", file=sys.stderr)
        return 3
    except OSError as exc:
        if is_disk_full(exc):  # the disk, not the input: one line, the outputs say they are incomplete
            print(f"plexity {args.command}: error: {disk_full_message(exc)}", file=sys.stderr)
            return DISK_FULL_STATUS
        print(f"plexity {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ModelError, ValueError) as exc:
        print(f"plexity {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (*ENVIRONMENT_ERRORS, InstallationError) as exc:  # the installation, not the input: stop
        print(f"plexity {args.command}: error: {environment_message(exc)}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
