"""The environment variables plexity reads, and those set near them: a misspelt variable is read by no one, and
its setting was silently without effect (``PLEXITY_MODELS_DIR=/data/models plexity clean --model news ...`` said
"unknown model 'news' ... not installed in ~/.cache/plexity_plugins/models", the folder it had been told not to use)."""

from __future__ import annotations

import difflib
import os

# The variables a user sets (docs/models.md, docs/training.md, docs/guarantees-input.md, docs/development.md,
# docs/performance.md).  (PLEXITY_CALLER_PACKAGE is the extraction child's, set by its parent: none of a user's.)
USER_VARIABLES = ("PLEXITY_MODEL_DIR", "PLEXITY_KENLM_BIN", "PLEXITY_EXTRACT_MEMORY", "PLEXITY_CACHE_DIR",
                  "PLEXITY_PURE_PYTHON")
INTERNAL_VARIABLES = ("PLEXITY_CALLER_PACKAGE",)


def misspelt_variables(environ=None) -> list[tuple[str, str]]:
    """(variable set, the one it is close to) for each ``PLEXITY_*`` variable of the environment that plexity does
    not read but whose name is within a letter or two of one it does."""
    environ = os.environ if environ is None else environ
    found = []
    for name in sorted(environ):
        if not name.startswith("PLEXITY_") or name in USER_VARIABLES:
            continue
        # (0.88: PLEXITY_MODEL, a Scrapy setting's name, is no misspelt PLEXITY_MODEL_DIR; PLEXITY_MODELS_DIR is)
        close = difflib.get_close_matches(name, USER_VARIABLES, n=1, cutoff=0.88)
        if close:
            found.append((name, close[0]))
    return found


def option_variables(options: list[str], environ=None) -> list[tuple[str, str]]:
    """(variable set, the option meant) for each ``PLEXITY_*`` variable of the environment that plexity does not read
    but whose name is one of a command's `options` (``PLEXITY_THRESHOLD``: ``--threshold``), the name of the Scrapy
    setting of that option, which Scrapy takes from its settings, never from the environment: ``export
    PLEXITY_THRESHOLD=3000`` before `plexity clean` cleaned at the model's default, silently."""
    environ = os.environ if environ is None else environ
    found = []
    for name in sorted(environ):
        if not name.startswith("PLEXITY_") or name in USER_VARIABLES:
            continue
        option = "--" + name[len("PLEXITY_"):].lower().replace("_", "-")
        negative = "--no-" + option[2:]  # (PLEXITY_LANGUAGE_CHECK: --no-language-check)
        meant = option if option in options else negative if negative in options else None
        if meant is not None:
            found.append((name, meant))
    return found


def misspelt_note(meant: str, environ=None) -> str:
    """"; PLEXITY_MODELS_DIR is set, ... did you mean PLEXITY_MODEL_DIR?" for a message about `meant`, or ""."""
    names = [name for name, close in misspelt_variables(environ) if close == meant]
    return "".join(f"; {name} is set, which plexity does not read: did you mean {meant}?" for name in names)
