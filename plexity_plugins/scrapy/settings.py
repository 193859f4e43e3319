"""Reading the ``PLEXITY_*`` settings from a crawl's Scrapy settings: every name there is (another one stops the
crawl, naming the one meant), each value read as its kind and within its range (a wrong one stops the crawl, naming
the setting), the item fields' names, ``PLEXITY_MODEL``'s forms, and the settings the policy's reasons name.
(``PLEXITY_DROPPED_FILE`` is read in `dropped_file`.)"""

from __future__ import annotations

import json
import os

from ..errors import PlexitySettingError
from ..extractors.sandbox import extract_memory_limit
from ..runtime.sizes import parse_memory, parse_size


SETTING_NAMES = {"min_chars": "PLEXITY_MIN_CHARS", "min_kept_fraction": "PLEXITY_MIN_KEPT_FRACTION",
                 "other_languages": "PLEXITY_OTHER_LANGUAGES"}
SETTING_NAMES_IN_ERRORS = {"other_languages": "PLEXITY_OTHER_LANGUAGES = 'drop'",
                           "language_check": "PLEXITY_LANGUAGE_CHECK = False"}
# Every PLEXITY_* setting the pipeline and the add-on read (docs/scrapy.md's table): another one is
# a typo, which Scrapy itself would ignore (`_unknown_settings`).
SETTINGS = ("PLEXITY_MODEL", "PLEXITY_THRESHOLD", "PLEXITY_METHOD", "PLEXITY_INPUT_FIELD", "PLEXITY_INPUT_FORMAT",
            "PLEXITY_ENCODING_FIELD", "PLEXITY_EXTRACTOR", "PLEXITY_OUTPUT_FIELD", "PLEXITY_STATS_FIELD",
            "PLEXITY_DOC_PERPLEXITY_FIELD", "PLEXITY_MIN_DOC_PERPLEXITY", "PLEXITY_MAX_DOC_PERPLEXITY",
            "PLEXITY_LANGUAGE_FIELD", "PLEXITY_ANNOTATE", "PLEXITY_MIN_CHARS", "PLEXITY_MIN_KEPT_FRACTION",
            "PLEXITY_OTHER_LANGUAGES", "PLEXITY_LANGUAGE_CHECK", "PLEXITY_THREADS", "PLEXITY_DROPPED_FILE",
            "PLEXITY_MAX_DOCUMENT_BYTES", "PLEXITY_EXTRACT_TIMEOUT", "PLEXITY_EXTRACT_MEMORY",
            "PLEXITY_PIPELINE_PRIORITY", "PLEXITY_ENABLED")


def _misspelt_prefix(name: str) -> str | None:
    """The setting meant by a name whose prefix is misspelt but whose rest is one of `SETTINGS`' (``PLEXTIY_MIN_CHARS``,
    ``PLEXITY-MIN-CHARS``, ``plexty_model``), else None.  Only a rest that is exactly a setting's, after a prefix a
    letter or two from PLEXITY, is taken for one: another add-on's settings are not ours (``COMPLEXITY_MODEL``,
    ``PERPLEXITY_THRESHOLD`` are left alone)."""
    import difflib

    head, _, rest = name.upper().replace("-", "_").partition("_")
    meant = f"PLEXITY_{rest}"
    if meant not in SETTINGS or name.upper().startswith("PLEXITY_"):
        return None
    return meant if difflib.SequenceMatcher(None, head, "PLEXITY").ratio() >= 0.85 else None


def _unknown_settings(settings) -> None:
    """A PLEXITY_* setting that is none of `SETTINGS` (``PLEXITY_EXTRACTR``), or a setting of ours under a misspelt
    prefix (``PLEXTIY_EXTRACTOR``), stops the crawl naming the setting meant: Scrapy ignores a setting nothing reads,
    so the typo went unsaid and the default was used."""
    import difflib

    # (any case: Scrapy's settings are case-sensitive, so `-s plexity_extractor=tags` was ignored too)
    for name in sorted(str(name) for name in settings):
        if str(name).upper().startswith("PLEXITY_") and name not in SETTINGS:
            meant = difflib.get_close_matches(name.upper(), SETTINGS, n=1, cutoff=0.8)
        elif meant := _misspelt_prefix(name):
            meant = [meant]
        else:
            continue
        said = f": did you mean {meant[0]}?" if meant else ""
        raise PlexitySettingError(f"{name!r} is no setting of plexity's{said} (the settings: docs/scrapy.md)")


def _field_setting(settings, name: str, default: str | None) -> str | None:
    """A PLEXITY_*_FIELD setting: the name of an item field, a str ("" where the setting allows none); unset:
    `default`.  Another value (``["html"]`` in a settings.py) failed at every item, or wrote under a key no
    exporter reads."""
    value = settings.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise PlexitySettingError(f"{name} is {value!r}: the name of an item field, a str")
    return value


def _model_setting(value):
    """PLEXITY_MODEL: a name or path, a dict (language -> model), that dict as JSON (``-s``), or LANG=MODEL pairs
    as the command line's ``--model`` takes them (``-s PLEXITY_MODEL=en=en-default,de=de-news``: it was looked for
    as a model named 'en=en-default', "unknown model")."""
    import re

    if isinstance(value, str) and "=" in value and not value.lstrip().startswith("{"):
        pairs = [pair for pair in re.split(r"[,\s]+", value.strip()) if pair]
        if all(re.fullmatch(r"(\*|[A-Za-z]{2,3}(?:[_-][A-Za-z0-9]+)?)=\S+", pair) for pair in pairs):
            from ..scoring.multilingual import parse_model_args

            try:
                value = parse_model_args(pairs)
            except ValueError as exc:
                raise PlexitySettingError(f"PLEXITY_MODEL is {value!r}: {str(exc).replace('--model: ', '')}") from None
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise PlexitySettingError(f"PLEXITY_MODEL is {value!r}: a model name or path, or a language -> model "
                                      f'map in JSON ({{"en": "en-default"}}); {exc}') from None
    if hasattr(value, "copy_to_dict"):  # a scrapy BaseSettings given as a dict setting
        value = value.copy_to_dict()
    if value and not isinstance(value, (str, os.PathLike, dict)):
        raise PlexitySettingError(f"PLEXITY_MODEL is {value!r}: a model name or path, or a language -> model map "
                                  f'({{"en": "en-default"}})')
    return value or None


# What a typed PLEXITY_* setting takes, by how it is read: said when its value is not that.
_SETTING_KINDS = {int: "a whole number", float: "a number", bool: "True or False (or 1 or 0)",
                  parse_size: "a size of 1 byte or more, as the CLI's --max-document-bytes (50MB, 200KiB, 1000000)",
                  parse_memory: "a size (512MiB, 768000000), or 0: no ceiling"}


def _typed_setting(settings, name: str, kind, default=None):
    """Setting `name` read as `kind` (a key of `_SETTING_KINDS`); unset or "": `default`.  A value that is
    not one stops the crawl naming the setting (Python's "could not convert string to float" does not)."""
    value = settings.get(name)
    if value is None or value == "":
        return default
    try:
        if kind in (parse_size, parse_memory):  # the CLI's parsers: a number of bytes or a size string
            read = kind(str(value))
        elif kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError  # (Scrapy's getint truncates 2.7 to 2, silently)
        else:
            read = {int: settings.getint, float: settings.getfloat, bool: settings.getbool}[kind](name)
    except (TypeError, ValueError):
        raise PlexitySettingError(f"{name} is {value!r}: {_SETTING_KINDS[kind]}") from None
    if kind is parse_memory:  # (the ceiling's own floor, said naming the setting)
        try:
            extract_memory_limit(read)
        except ValueError as exc:
            raise PlexitySettingError(f"{name} is {value!r}: {exc}") from None
    if name in _SETTING_RANGES:  # (the pipeline's own check would not name the setting)
        valid, takes = _SETTING_RANGES[name]
        if not valid(read):
            raise PlexitySettingError(f"{name} is {value!r}: {takes}")
    return read


# What a numeric PLEXITY_* setting takes beyond its kind
_SETTING_RANGES = {
    "PLEXITY_THRESHOLD": (lambda v: v > 0 and v == v, "a positive perplexity"),
    "PLEXITY_MIN_CHARS": (lambda v: v >= 0, "0 or more characters"),
    "PLEXITY_MIN_KEPT_FRACTION": (lambda v: 0 <= v <= 1, "a fraction from 0 to 1"),
    "PLEXITY_EXTRACT_TIMEOUT": (lambda v: v >= 0, "0 or more seconds (0: no limit)"),
    "PLEXITY_MIN_DOC_PERPLEXITY": (lambda v: v > 0, "a positive perplexity"),
    "PLEXITY_MAX_DOC_PERPLEXITY": (lambda v: v > 0, "a positive perplexity"),
}


def _choice_setting(settings, name: str, choices: tuple[str, ...], default: str) -> str:
    """Setting `name`, one of `choices`; unset or "": `default`."""
    value = settings.get(name) or default
    if value not in choices:
        raise PlexitySettingError(f"{name} is {value!r}: one of {', '.join(choices)}")
    return value
