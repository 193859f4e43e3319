"""What a front end's results were made with, as it records them beside the results and compares them before
it resumes (`plexity_plugins.datatrove.run_settings` for a datatrove run, the Scrapy pipeline for a crawl
resumed from its ``JOBDIR``): the model by its files' checksum, and each setting that differs named."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..extractors import READER_MODEL_SETTING
from .stats import each_threshold

SETTINGS_FILE = "plexity-settings.json"


def model_settings(scorer) -> dict[str, Any]:
    """A scorer's model as a run records it: its name, the SHA-256 of its files, and the language and
    tokenizer its model.json gives (a model retrained with another --language, or imported again with
    another --tokenizer, has the same files but passes other pages through or scores otherwise); for a
    language -> model map, each language's."""
    from ..scoring.models import model_checksum

    def recorded(info) -> dict[str, Any]:
        return {"model": info.name, "model_sha256": model_checksum(info), "model_language": info.language or None,
                "model_tokenizer": info.tokenizer_version}

    scorers = getattr(scorer, "scorers", None)
    if scorers is None:
        return recorded(scorer.info)
    each = {lang: recorded(s.info) for lang, s in scorers.items()}
    return {key: {lang: values[key] for lang, values in each.items()}
            for key in ("model", "model_sha256", "model_language", "model_tokenizer")}


def threshold_setting(scorer) -> float | dict[str, float]:
    """The sentence threshold a scorer cleans with, as a run records it: one number, or for a language -> model map
    each language's (a map's own `threshold` is NaN unless one is given for all: each model's default applies, which
    `plexity calibrate --write` changes)."""
    threshold = scorer.threshold
    scorers = getattr(scorer, "scorers", None)
    if scorers is None or threshold == threshold:
        return threshold
    return {language: one.threshold for language, one in scorers.items()}


def threshold_text(scorer) -> str:
    """`threshold_setting` as a step's name and a summary show it: ``threshold 5269.3``,
    ``threshold en=5269.3,de=900``."""
    threshold = threshold_setting(scorer)
    if isinstance(threshold, dict):
        return f"threshold {each_threshold(threshold)}"
    return f"threshold {threshold:g}"


def differences(recorded: dict, current: dict) -> list[str]:
    """Each setting that differs, as ``name: recorded -> current``; input files rewritten under the same names
    by name (`_rewritten_files`).  A setting a record lacks because an older version wrote it (`LATER_SETTINGS`)
    is not a difference: the record is compared on what it has.

    Args:
        recorded: the settings recorded with the results.
        current: this run's settings.
    """
    found = []
    other_extractor = _differs(recorded.get("extractor"), current.get("extractor"))
    for key in dict.fromkeys(k for k in [*recorded, *current] if k != "steps"):
        if key == READER_MODEL_SETTING and other_extractor:
            continue  # (the extractor's own model: said by the extractor's name, "extractor: learned -> tags")
        if _differs(recorded.get(key), current.get(key)):
            found.append(f"{_label(key)}: {_recorded_value(recorded, key)} -> {_value(current.get(key))}")
    old_steps, new_steps = recorded.get("steps", []), current.get("steps", [])
    if len(old_steps) != len(new_steps):  # a step added or taken out: the list
        found.append(f"steps: {', '.join(s.get('step', '?') for s in old_steps)} -> "
                     f"{', '.join(s.get('step', '?') for s in new_steps)}")
        return found
    for old, new in zip(old_steps, new_steps):
        found.extend(_setting_differences(old, new))
    return found


def _setting_differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Each setting of a step (or of a step's step: the filter's exclusion writer, as "excluded step: A -> B") that
    differs.  A step of another class at the same place is said as such, "step: A -> B", with the settings both
    classes have that differ: those one class has and the other lacks ("compression: gzip -> none" of datatrove's
    JsonlWriter against plexity's, which writes the same lines) said nothing the user chose."""
    another_class = "step" in old and "step" in new and old["step"] != new["step"]
    same_files = old.get("input_files_sha256") is not None and old.get("input_files_sha256") == new.get(
        "input_files_sha256")
    found = []
    for key in dict.fromkeys([*old, *new]):
        if (key in LATER_SETTINGS or another_class) and (key not in old or key not in new):
            continue
        if key in PATHS_FILE_LATER and key not in old and old.get("paths_file"):  # (recorded by its name alone)
            continue
        if key in FILE_SELECTORS and same_files:  # (`crawl/`, then 'crawl/*.warc.gz': the same files, in order)
            continue
        if key == "threshold" and _is_nan(old.get(key)) and isinstance(new.get(key), dict):
            continue  # (a language map's thresholds, recorded as NaN before each language's was: `threshold_setting`)
        if key == "input_file_sizes":
            found.extend(_rewritten_files(old[key], new[key]))
            if len(old[key]) == old.get("input_files") and len(new[key]) == new.get("input_files"):
                found.extend(_files_taken_or_added(old[key], new[key]))  # (every file listed with its size)
        elif isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            found.extend(_setting_differences(old[key], new[key], f"{prefix}{_label(key)} "))
        elif _differs(old.get(key), new.get(key)):
            found.append(f"{prefix}{_label(key)}: {_recorded_value(old, key)} -> {_value(new.get(key))}")
    return found


def _is_nan(value) -> bool:
    return isinstance(value, float) and value != value


def _differs(old, new) -> bool:
    """Whether two recorded values differ, as a dict's comparison judges them: the same object is the same value
    (a language map's threshold is NaN, which JSON reads back as its one NaN object, and NaN != NaN); two lists of
    names in another order are the same (`run_settings.unordered`: a record written before they were sorted)."""
    if _names(old) and _names(new):
        return sorted(old) != sorted(new)
    return old is not new and old != new


def _names(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# Settings recorded since a version that wrote records without them, which differ from what that version had: a
# record without one is of another setting, said so (`_recorded_value`).  The learned reader's forest: every version
# before it was recorded read pages with another forest and other word counts (`extractors.extractor_model`).
RECORDED_SINCE_CHANGED = {READER_MODEL_SETTING: "not recorded, an older version's",
                          "documents_format": "not recorded, an older version's"}
# Any other setting a record lacks (and `LATER_SETTINGS` does not excuse) was not recorded by the version that wrote
# it: said so, not as "none", which read as a setting the user had set otherwise ("model's language: none -> en")
NOT_RECORDED = "not recorded"

# The shape of the documents a run of plexity's steps writes: the metadata keys every Document carries and their
# types.  A run resumed into the results of a version whose documents had another shape wrote shards of both shapes
# into one folder, and pyarrow.dataset, reading the first shard's schema, dropped the other keys of the rest, unsaid.
# Recorded by `plexity_plugins.datatrove.run_settings.run_settings`; a record without it is of an older shape.
# 2: every Document has every reader key ("" or False where it does not apply: warc_type, cleaned_text,
# warc_truncated, warc_refers_to, warc_identified_content_language; 24 metadata keys before, 29 since); the week
# before, the filter's plexity_reason, plexity_would_drop and plexity_passthrough were None, not "", where none applied.
# Change the number with the keys or their types (tests/test_upgrade_probe60.py holds each number's keys).
DOCUMENTS_FORMAT = 2
# Settings recorded since a version that wrote records without them (compared only when both records have them):
# functions, a datatrove step's (`run_settings.function_code`); max_document_bytes, the filters' cap (only a text over
# 50 MB, which the version before cleaned, reads otherwise: no stop for an upgrade mid-run)
LATER_SETTINGS = ("input_file_sizes", "functions", "max_document_bytes")
# A reader given a paths file: recorded by the files it lists since a version that recorded the paths file's name alone
# (compared only when the record has them: the record gains them)
PATHS_FILE_LATER = ("input_files", "input_files_sha256", "input_file_sizes")
# How a reader picks its files from its folder: no difference where both records list the same ones (by their names'
# checksum; the folder, their sizes and the rest are compared as ever)
FILE_SELECTORS = ("glob_pattern", "recursive")


def _rewritten_files(old: dict[str, int], new: dict[str, int], named: int = 5) -> list[str]:
    """The input files of the same name and another size than the results were made from (a file added or taken
    away is said by the count and names of the files), each named with its two sizes, the first `named`."""
    changed = [f"{name} {old[name]:,} -> {new[name]:,} bytes" for name in old
               if name in new and old[name] != new[name]]
    if not changed:
        return []
    more = f" and {len(changed) - named} more" if len(changed) > named else ""
    return [f"input files rewritten since the completed tasks read them: {', '.join(changed[:named])}{more}"]


def _files_taken_or_added(old, new, named: int = 5) -> list[str]:
    """The input files taken away since the results were made, and those added, each kind named (the first `named`)
    where the count and the names' checksum alone said only that they differ."""
    return [f"input files {what} since the completed tasks' run listed them: {_named(names, named)}"
            for what, names in (("taken away", [name for name in old if name not in new]),
                                ("added", [name for name in new if name not in old])) if names]


def input_file_changes(old: dict, new: dict, named: int = 5) -> list[str]:
    """How the files `new` (name -> size, or None where the listing gives none) differ from those `old` listed:
    ``removed: b.warc.gz``, ``added: e.warc.gz``, ``rewritten: a.warc.gz 20,000 -> 53,371 bytes``, each kind naming
    its first `named` files (a task checking its run's input files as it starts: `run_settings.changed_inputs`)."""
    rewritten = [f"{name} {old[name]:,} -> {new[name]:,} bytes" for name in old
                 if name in new and isinstance(old[name], int) and isinstance(new[name], int)
                 and old[name] != new[name]]
    kinds = (("removed", [name for name in old if name not in new]),
             ("added", [name for name in new if name not in old]), ("rewritten", rewritten))
    return [f"{what}: {_named(names, named)}" for what, names in kinds if names]


def _named(names: list[str], named: int) -> str:
    more = f" and {len(names) - named} more" if len(names) > named else ""
    return f"{', '.join(names[:named])}{more}"


def _recorded_value(recorded: dict, key: str) -> str:
    """A recorded setting as a difference names it; one the record lacks said so (`RECORDED_SINCE_CHANGED`,
    `NOT_RECORDED`)."""
    if key not in recorded:
        return RECORDED_SINCE_CHANGED.get(key, NOT_RECORDED)
    return _value(recorded.get(key))


def _label(key: str) -> str:
    return {"plexity_plugins": "plexity_plugins version", "model_sha256": "model checksum",
            "model_language": "model's language", "model_tokenizer": "model's tokenizer",
            "input_files": "input files", "input_files_sha256": "input files' names",
            "documents_format": "documents' format",
            READER_MODEL_SETTING: "learned reader's forest"}.get(key, key)


def _value(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return f"sha256:{value[:12]}"  # (a checksum: the start tells them apart)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    return str(value)


# A number JSON cannot write, as a record holds it: by its name (`--threshold inf`, the no-filtering baseline, was
# written `Infinity`, which strict JSON readers refuse; a record of one written so reads back the same).
_CONSTANT_NAMES = {"Infinity": "inf", "-Infinity": "-inf", "NaN": "nan"}


def as_recorded(settings: Any) -> Any:
    """`settings` as a record reads back: JSON's (tuples are lists), each infinity or NaN its name (``"inf"``)."""
    return json.loads(json.dumps(settings), parse_constant=_CONSTANT_NAMES.__getitem__)


def read_record(text: str, object_hook=None) -> Any:
    """A settings record's JSON `text` (`object_hook` as json's), each infinity or NaN written by a version before
    as its name."""
    return json.loads(text, object_hook=object_hook, parse_constant=_CONSTANT_NAMES.__getitem__)


def compare_or_record(folder: str | os.PathLike, settings: dict[str, Any]) -> list[str]:
    """The settings that differ from those recorded in `folder` (``SETTINGS_FILE``), each named; when none are
    recorded there, record `settings` (making the folder) and return none."""
    path = Path(folder) / SETTINGS_FILE
    settings = as_recorded(settings)
    try:
        recorded = read_record(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f".{path.name}.part")
        part.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        part.replace(path)  # (whole or not at all: a crawl killed while writing it leaves no half record)
        return []
    except (UnicodeDecodeError, json.JSONDecodeError):
        recorded = {}  # (damaged: nothing says what made the results, which is not these settings)
    return differences(recorded, settings) if recorded != settings else []
