"""pyplexity's command and option names, each with what does its job here (docs/from-pyplexity.md).

Many users come from pyplexity (0.2.12 on PyPI), and their first commands are its own: `plexity perplexity TEXT`,
`plexity bulk-perplexity DIR --perpl-limit 8000 --warc-input`.  argparse answered them with a bare "invalid choice"
or "unrecognized arguments"; these words name the equivalent instead.  No alias: the equivalents differ (another
model, another scale of perplexity, outputs named otherwise), and the docs page says how.  pyplexity's Python names
and model files: `plexity_plugins.scoring.from_pyplexity`."""

from __future__ import annotations

from ..scoring.from_pyplexity import LIMIT_DOES_NOT_CARRY_OVER, PAGE

# pyplexity's commands: what does the job here
COMMANDS = {
    "perplexity": 'plexity score "TEXT" (its perplexity is KenLM\'s, on another scale than pyplexity\'s)',
    "bulk-perplexity": ("plexity clean INPUT_DIR -o OUTPUT_DIR (HTML pages extracted, WARC files known by name; "
                        "--annotate marks the sentences in <ppl> tags, as bulk-perplexity did, instead of removing "
                        "them)"),
    "tag-remover": ("plexity clean INPUT_DIR -o OUTPUT_DIR --extractor tags --threshold inf (every visible line, "
                    "nothing dropped by perplexity)"),
    "fileserver": ("plexity run INPUT_DIR -o OUTPUT_DIR --executor slurm (or ray): the cluster hands out the WARC "
                   "files, no file server"),
}

_DISTRIBUTED = ("plexity run INPUT_DIR -o OUTPUT_DIR spreads WARC files over --workers N local processes, or over "
                "a Slurm or Ray cluster (--executor slurm|ray); plexity clean runs in one process")

# pyplexity's options (all its commands'): what does the job here.  Options of one meaning are named together.
OPTIONS = {
    "--perpl-limit": f"here plexity clean's and plexity run's --threshold T; {LIMIT_DOES_NOT_CARRY_OVER}",
    "--warc-input": "not needed: .warc and .warc.gz files are known by their names",
    "--no-warc-input": "not needed: each file is read as the kind its name says",
    "--distributed": _DISTRIBUTED, "--no-distributed": _DISTRIBUTED, "--n-workers": _DISTRIBUTED,
    "--node": _DISTRIBUTED, "--url": _DISTRIBUTED, "--port": _DISTRIBUTED,
    "--base-dir": "give the input folder itself",
}


def command_hint(word: str) -> str | None:
    """The error for `plexity WORD` when WORD is one of pyplexity's commands, else None."""
    meant = COMMANDS.get(word)
    return None if meant is None else (f"'{word}' is a pyplexity command: here it is {meant}; "
                                       f"pyplexity's commands and ours side by side: {PAGE}")


def option_hints(unknown: list[str]) -> list[str]:
    """What pyplexity's options among the `unknown` words are here: ``--perpl-limit is pyplexity's: here ...``."""
    names: dict[str, list[str]] = {}
    for name in dict.fromkeys(word.split("=", 1)[0] for word in unknown):
        if name in OPTIONS:
            names.setdefault(OPTIONS[name], []).append(name)
    return [f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} pyplexity's: {meant}"
            for meant, given in names.items()]
