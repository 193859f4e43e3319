"""The `plexity` command line: one module per command, each with `add_parser(subparsers)`
(the arguments) and its `cmd_*` function (the work); `main` dispatches and turns errors into
exit codes (2: bad input or usage, 3: the installation lacks something, 4: the disk is full)."""

from __future__ import annotations

import argparse
import atexit
import codecs
import contextlib
import gc
import importlib
import logging
import os
import signal
import sys
import threading

from .. import __version__
from .from_pyplexity import command_hint, option_hints
from ..errors import (DISK_FULL_STATUS, ENVIRONMENT_ERRORS, INSTALLATION_STATUS, PROCESS_LIMIT_WHY, InstallationError,
                      MissingExtraError, ModelError, disk_full_message, environment_message, is_disk_full,
                      out_of_processes, path_error_message, printable)

# In the order `plexity --help` lists them.
COMMAND_MODULES: list[str] = [f"plexity_plugins.cli.{name}" for name in
                              ("score", "clean", "models", "train", "calibrate", "serve", "report", "run")]


# What an interrupted command left, said after "interrupted"
INTERRUPTED = {"run": ": the tasks that completed are kept; the same command runs the others",
               "clean": ": the outputs written so far are whole; plexity-stats.json says \"completed\": false; "
                        "the same command cleans every file again (plexity run resumes where it stopped)",
               "train": ": nothing was installed, and the partial model and work files are removed"}


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that keeps its commands by name (`unknown_arguments` finds the command an
    unknown option was given to); its subcommands' parsers are of this class too (argparse's
    default ``parser_class``)."""

    commands: dict[str, argparse.ArgumentParser] = {}

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(**kwargs)
        self.commands = action.choices
        return action


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="plexity", description="Perplexity-based boilerplate removal with KenLM.")
    parser.add_argument("--version", action="version", version=f"plexity_plugins {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_parser(sub)
    return parser


def misspelt_command(word: str, commands: list[str]) -> str | None:
    """The error for `plexity WORD` when WORD is a command mistyped (``cleen``), naming the one meant, as a mistyped
    option is named (argparse's "invalid choice" listed every command and guessed none); else None."""
    import difflib

    meant = difflib.get_close_matches(word, commands, n=1, cutoff=0.75)
    return (f"argument COMMAND: invalid choice: '{word}' (did you mean {meant[0]}? plexity --help lists the commands)"
            if meant else None)


# The unknown arguments an error names: a crawl's 5,000 files, unquoted, were one line of 5,000 paths, its hint (the
# glob to quote) at its end
UNKNOWN_SHOWN = 5


def unknown_arguments(parser: argparse.ArgumentParser, argv: list[str], unknown: list[str]) -> None:
    """Exit 2 in the words of the command given them: its usage, then ``plexity clean: error:
    unrecognized arguments: --extracter tags (did you mean --extractor? plexity clean --help lists
    the options)`` (argparse said it in the top-level usage, `plexity [-h] [--version] [-v] COMMAND
    ...`, without the command's options)."""
    import difflib
    import re

    command = parser
    for word in argv[:argv.index(unknown[0])] if unknown[0] in argv else argv:
        command = getattr(command, "commands", {}).get(word, command)
    options = sorted(set(re.findall(r"--[a-z][a-z-]*", command.format_help())))
    guesses = [match for word in unknown if word.startswith("--")
               for match in difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.8)]
    hint = f"did you mean {' or '.join(dict.fromkeys(guesses))}? " if guesses else ""
    hint += "".join(f"{meant}; " for meant in option_hints(unknown))  # (--perpl-limit 8000 ...)
    if command is not parser and any(word in ("-v", "--verbose") for word in unknown):  # (plexity's, not the command's)
        hint += f"-v goes before the command: plexity -v {command.prog.split(' ', 1)[-1]} ...; "
    if any(not word.startswith("-") and os.path.exists(word) for word in unknown):  # `plexity run crawl/*.warc.gz`
        hint += (f"more paths than {command.prog} takes: a glob the shell expanded? quote it, as in "
                 f"'crawl/*.warc.gz', for {command.prog} to expand it; ")
    shown = unknown if len(unknown) <= UNKNOWN_SHOWN else [*unknown[:UNKNOWN_SHOWN], f"... ({len(unknown):,} in all)"]
    command.error(f"unrecognized arguments: {' '.join(shown)} ({hint}{command.prog} --help lists the options)")


def unknown_before_required(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The arguments no command knows in `argv`, found as if the commands required nothing: argparse checks the
    required options first, so a mistyped one (``plexity clean page.html --ouput-dir cleaned``) was answered "the
    following arguments are required: --output-dir/-o", the word typed named nowhere.  [] when argv fails otherwise
    (the parse proper says why)."""
    import io

    parsers, required = [parser], []
    while parsers:  # (every command's, `models import`'s too)
        command = parsers.pop()
        parsers.extend(getattr(command, "commands", {}).values())
        if command is not parser:
            required += [action for action in command._actions if action.required]
    for action in required:
        action.required = False
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return parser.parse_known_args(argv)[1]
    except SystemExit:  # (an error of another kind, --help, --version: the parse proper does it)
        return []
    finally:
        for action in required:
            action.required = True


class PrintableFormatter(logging.Formatter):
    """Each log message one printable line (`printable`: a message naming a WARC's URI holds the crawl's
    characters); a traceback, appended after the message, as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))


def _bytes_or_escape(exc: UnicodeError) -> tuple[bytes, int]:
    """The error handler ``plexity-printable``: a lone surrogate of a name that is not UTF-8 as the byte it stands
    for (surrogateescape's), any other character the stream's encoding lacks as its escape (backslashreplace's)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for char in exc.object[exc.start:exc.end]:
        out += (bytes([ord(char) - 0xDC00]) if 0xDC80 <= ord(char) <= 0xDCFF
                else char.encode("ascii", "backslashreplace"))
    return bytes(out), exc.end


codecs.register_error("plexity-printable", _bytes_or_escape)


def _names_printable() -> None:
    """Standard output that cannot encode a character writes its escape, as standard error does, instead of raising.
    A file name that is not UTF-8 is a str of lone surrogates (``caf\\udce9.html``, as wget saves a Latin-1 URL): with
    PYTHONIOENCODING=utf-8 (strict), plexity clean's last line naming such a damaged file ended the command,
    "plexity clean: error: 'utf-8' codec can't encode characters ...: surrogates not allowed", exit 2.  Under a locale
    that is not UTF-8 (cron's or a container's LC_ALL=C/POSIX with PYTHONUTF8=0: ASCII with surrogateescape),
    `plexity clean` exited 2 after its work, at the first dropped sentence it quoted ("'ascii' codec can't encode
    character '\\xb0'"), and `plexity score --sentences` of a word with an accent printed nothing of it: such a
    stream writes a surrogate as its byte (the name's own bytes, as before) and any other character as its escape."""
    for stream in (sys.stdout, sys.stderr):
        errors = getattr(stream, "errors", None)
        if errors in ("strict", "surrogateescape") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace" if errors == "strict" else "plexity-printable")
            except (ValueError, OSError):  # (a stream closed, or one that takes no reconfiguring)
                pass


def _drop_stdout() -> None:
    """What standard output still holds, which its full disk refused, is dropped: Python's own flush as it exits
    would fail again ("Exception ignored on flushing sys.stdout", exit status 120 instead of ours)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


# The commands that SIGTERM ends as Ctrl-C does (`plexity serve` is a service: SIGTERM is its ordinary stop)
SIGTERM_INTERRUPTS = ("clean", "run", "train", "calibrate", "report", "score", "models")


@contextlib.contextmanager
def interrupted_by_sigterm(command: str):
    """SIGTERM (`kill`, `timeout`, a batch system's end of job, a container's stop) as Ctrl-C: the default ends the
    process there, silently, leaving what Ctrl-C's handling removes or finishes: `plexity train`'s staging and work
    folders (the training text and ARPA file: GBs for the BNC) and lmplz running; `plexity clean`'s output folder
    claimed (its lock), the file being written as ``.NAME.part`` and plexity-stats.json saying no file was read;
    and no word of it, where Ctrl-C says what was kept and how to go on."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if command not in SIGTERM_INTERRUPTS or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _closed_standard_streams_to_devnull() -> None:
    """Standard input, output or error closed by the caller (`plexity clean ... 2>&-`, `<&-`, a daemon's start)
    opened on /dev/null, as a daemon's are: the next file the command opened took the free number, so that what is
    written to descriptor 2 (a C library's warning) went into it (`plexity clean`'s output-folder lock was fd 2), the
    error lines meant for stderr were printed on stdout (Python's print to a None stderr), and `plexity score -`
    with stdin closed ended in a traceback ("'NoneType' object has no attribute 'buffer'")."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False, errors="backslashreplace"))


def main(argv: list[str] | None = None) -> int:
    # At exit the interpreter collects garbage over every object the process still holds: 0.18 s of CPU after a
    # `plexity run` (a sixth of its start-up and end), for nothing (the command closed its files, its extraction
    # children are ended, the memory goes back with the process).  Frozen out of those collections then.
    _closed_standard_streams_to_devnull()
    from ..runtime.cores import limit_blas_threads

    limit_blas_threads()  # (before numpy is imported: a container's CPU limit, not the machine's CPUs)
    atexit.unregister(gc.freeze)  # (once per process, however often main is called)
    atexit.register(gc.freeze)
    try:  # the compiled extension first: one built from other sources stops every command here, in one line
        importlib.import_module("plexity_plugins.runtime.native")
        parser = build_parser()
    except InstallationError as exc:  # a stale extension (`runtime.native`): one line, not a traceback
        print(printable(f"plexity: error: {exc}"), file=sys.stderr)
        return 3
    _names_printable()
    argv = sys.argv[1:] if argv is None else list(argv)
    word = next((word for word in argv if not word.startswith("-")), None)  # (the command: plexity takes no values)
    if word is not None and word not in parser.commands:  # `plexity perplexity TEXT`: "invalid choice" named none
        meant = command_hint(word) or misspelt_command(word, list(parser.commands))
        if meant:
            parser.error(meant)
    unknown = unknown_before_required(parser, argv)  # (`--ouput-dir out` was told "--output-dir is required")
    if unknown:
        unknown_arguments(parser, argv, unknown)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        unknown_arguments(parser, argv, unknown)
    if isinstance(getattr(args, "model", None), list):
        from ..scoring.multilingual import parse_model_args

        try:
            args.model = parse_model_args(args.model)
        except ValueError as exc:
            parser.error(str(exc))
    from ..runtime.environment import misspelt_variables, option_variables

    for name, meant in misspelt_variables():  # (read by no one: its setting was without effect, silently)
        print(printable(f"plexity {args.command}: warning: {name} is set, which plexity does not read: did you mean "
                        f"{meant}?"), file=sys.stderr)
    command = getattr(parser, "commands", {}).get(args.command)
    if command is not None:
        import re

        for name, option in option_variables(re.findall(r"--[a-z][a-z-]*", command.format_help())):
            print(printable(f"plexity {args.command}: warning: {name} is set, which plexity does not read (the command "
                            f"line takes options; the Scrapy pipeline's PLEXITY_* settings come from settings.py or "
                            f"-s): give {option}"), file=sys.stderr)
    handler = logging.StreamHandler()
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    try:
        with interrupted_by_sigterm(args.command):
            status = args.func(args) or 0
            # (here, not as Python exits: on 3.13 `plexity models > FILE` on a full disk failed only there, "Exception
            # ignored on flushing sys.stdout", exit status 120, where 3.11 raised at the print; said as below)
            sys.stdout.flush()
            return status
    except BrokenPipeError:  # `plexity models | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl+C: one line, not a traceback from wherever it landed
        print(f"plexity {args.command}: interrupted{INTERRUPTED.get(args.command, '')}", file=sys.stderr)
        return 130
    except MissingExtraError as exc:  # the installation lacks an extra: say which
        print(printable(f"plexity {args.command}: error: {exc}"), file=sys.stderr)
        return 3
    except OSError as exc:
        if out_of_processes(exc):  # (a container's pids.max: "cannot list the input ...: can't start new thread")
            print(printable(f"plexity {args.command}: error: {exc}: {PROCESS_LIMIT_WHY}"), file=sys.stderr)
            return INSTALLATION_STATUS
        if is_disk_full(exc):  # the disk, not the input: one line, the outputs say they are incomplete
            # (a command without an output option writes only its standard output)
            to_stdout = not any(getattr(args, name, None) for name in ("output_dir", "output"))
            if to_stdout:
                _drop_stdout()
            print(printable(f"plexity {args.command}: error: {disk_full_message(exc, to_stdout=to_stdout)}"),
                  file=sys.stderr)
            return DISK_FULL_STATUS
        print(printable(f"plexity {args.command}: error: {path_error_message(exc)}"), file=sys.stderr)
        return 2
    except (ModelError, ValueError) as exc:
        print(printable(f"plexity {args.command}: error: {exc}"), file=sys.stderr)
        return 2
    except (*ENVIRONMENT_ERRORS, InstallationError) as exc:  # the installation, not the input: stop
        print(printable(f"plexity {args.command}: error: {environment_message(exc)}"), file=sys.stderr)
        return 3
    except RuntimeError as exc:  # ("can't start new thread": a container's pids.max, a traceback before)
        if not out_of_processes(exc):
            raise
        print(printable(f"plexity {args.command}: error: {exc}: {PROCESS_LIMIT_WHY}"), file=sys.stderr)
        return INSTALLATION_STATUS


if __name__ == "__main__":
    sys.exit(main())
