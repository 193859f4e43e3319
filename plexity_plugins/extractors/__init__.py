"""From HTML to text: the extractors the filter runs after, one module each, with the charset
decoding and the parser limits they share.

- ``learned`` (the default, `learned`): the page cut into blocks in one pass, each block kept or
  dropped by a small forest of decision trees learned from four benchmarks' pages (evidence of
  shape, density, declared roles, position, repetition; no site or class names).
- ``dense`` (`dense`): one lexbor parse; the page's item chosen by what its HTML
  declares (schema.org articleBody, a single <article>, <main>) or by where its paragraphs are
  densest, else resiliparse's main content, by hand-set rules (the default before ``learned``).
- ``auto`` (`auto`): trafilatura's text, or fast's when fast finds text that trafilatura left out
  (`auto.prefer_fuller`); the default before ``dense`` matched it, five times slower.
- ``trafilatura`` (`trafilatura`): trafilatura's main-text extraction.
- ``fast`` (`fast`): resiliparse's main-content extraction (lexbor parser): trafilatura's job
  at many times its speed.
- ``tags`` (`tags`): the text of every visible element, one line per block element.
- ``none``: the input already is text.

`limits` parses with libxml2's huge limits; a page no extractor can read raises
`plexity_plugins.errors.ExtractionError`.  An HTML body's bytes become text in
`plexity_plugins.io.decoding` (`decode_html`, exported here too); `sandbox` runs an extractor in a
child process with a time limit and a memory ceiling, for every front end.
"""

from __future__ import annotations

import functools
import sys
from typing import Callable

from ..errors import ExtractionError
from ..runtime.lazy import lazy_names

EXTRACTORS = ("learned", "dense", "auto", "trafilatura", "fast", "tags", "none")
DEFAULT_EXTRACTOR = "learned"
# The least memory ceiling (bytes of its extraction child's resident memory) at which each extractor reads ordinary
# pages: where a job's memory lowers the default ceiling (`sandbox.extraction_ceiling`), never below its extractor's.
# Measured by bench/extraction_floor.py on the WCXB dev set's 1,497 pages, the child's high-water mark per page (one
# child reading one page after the other, as the sandbox's does): learned 64 MiB at most, dense 69, fast 70, tags 82,
# none stopped at 128 MiB, the least a child may be given (`sandbox.MIN_EXTRACT_MEMORY`); trafilatura, 89 MiB at
# rest, and auto (which may run it), 94, peaked at 186 MiB, over 128 MiB on 912 and 924 pages: at 128 MiB the sandbox
# stopped 24 and 34 of them (0.57 to 5 MB), none at 192; 224 leaves a child that has read many pages room to grow.
# (A function of a step of your own: the default extractor's.)
EXTRACTION_FLOORS = {"learned": 128 << 20, "dense": 128 << 20, "fast": 128 << 20, "tags": 128 << 20,
                     "trafilatura": 224 << 20, "auto": 224 << 20, "none": 128 << 20}

__all__ = ["BLOCK_TAGS", "DEFAULT_EXTRACTOR", "EXTRACTION_FLOORS", "EXTRACTORS", "FALLBACK_RATIO", "NEW_TEXT_FRACTION",
           "SKIP_TAGS", "ExtractionError", "READER_MODEL_SETTING",
           "check_extractor_name", "declares_article_or_product", "decode_html",
           "decode_html_counted", "extraction_floor", "extractor_model",
           "get_extractor", "html_to_text_auto", "html_to_text_dense", "html_to_text_fast", "html_to_text_learned",
           "html_text_counted", "html_to_text_tags", "html_to_text_trafilatura", "prefer_fuller"]

# Imported on first use: the command line needs only the names above (`plexity --help` did not wait for lxml and
# the extractors' tables), and an extraction child imports only the extractor it runs.
__getattr__, __dir__ = lazy_names(__name__, {
    **dict.fromkeys(["FALLBACK_RATIO", "NEW_TEXT_FRACTION", "html_to_text_auto", "prefer_fuller"], ".auto"),
    "declares_article_or_product": ".declarations",
    **dict.fromkeys(["decode_html", "decode_html_counted", "html_text_counted"], "..io.decoding"),
    **dict.fromkeys(["BLOCK_TAGS", "SKIP_TAGS", "html_to_text_tags"], ".tags"),
    "html_to_text_dense": ".dense", "html_to_text_fast": ".fast", "html_to_text_learned": ".learned",
    "html_to_text_trafilatura": ".trafilatura"})


# The setting a run records of the model an extractor reads (the learned reader's forest), by the checksum of its file
READER_MODEL_SETTING = "reader_model_sha256"


def extractor_model(name: str | None) -> dict[str, str]:
    """The model extractor `name` reads, as a run records it beside the scorer's (`plexity_plugins.cleaning.
    settings_record`): ``{"reader_model_sha256": ...}``, the SHA-256 of the learned reader's forest.json, so that a
    forest rebuilt by another version is another setting (its pages read otherwise: a run resumed into the
    completions of the forest before would mix both readings); nothing for an extractor without a model."""
    if name != "learned":
        return {}
    return {READER_MODEL_SETTING: _forest_checksum()}


@functools.lru_cache(maxsize=1)
def _forest_checksum() -> str:
    import hashlib
    from pathlib import Path

    # (read here, not through the learned package: a run's driver records it without importing the reader)
    return hashlib.sha256((Path(__file__).with_name("learned") / "forest.json").read_bytes()).hexdigest()


def _identity(text: str | bytes) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text


def extraction_floor(name: str | None) -> int:
    """The least ceiling, bytes, that a lowered one may be for extractor `name` (`EXTRACTION_FLOORS`; another name,
    a function of a step of your own: the default extractor's)."""
    return EXTRACTION_FLOORS.get(name or "", EXTRACTION_FLOORS[DEFAULT_EXTRACTOR])


def check_extractor_name(name: str) -> str:
    """`name`, when it is one of EXTRACTORS; else a ValueError naming them (nothing is imported)."""
    if name not in EXTRACTORS:
        raise ValueError(f"unknown extractor {name!r}: choose one of {', '.join(EXTRACTORS)}")
    return name


def get_extractor(name: str) -> Callable[[str | bytes], str]:
    """The extractor function for `name` (one of EXTRACTORS)."""
    if check_extractor_name(name) == "none":
        return _identity
    return getattr(sys.modules[__name__], f"html_to_text_{name}")
