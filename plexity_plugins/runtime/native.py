"""The compiled hot path (`plexity_plugins.runtime._native`, built from native/ at install time).

Each compiled function is a port of a pure-Python function of this package and gives
exactly its result; tests/test_native.py checks that on the development pages and on
random Unicode text.  The Python functions stay the reference (and the fallback where
the extension could not be built, or with ``PLEXITY_PURE_PYTHON=1``):

=========================================  =============================================
compiled                                    reference
=========================================  =============================================
``split(text, max_chars)``                  `sentences.split_sentences` + `sentences.block_ids`
``Model.score_spans(text, spans)``          `tokenizer.spans_to_lm_lines` + ``kenlm.Model.score``
``LangidWalker.visit_counts(data)``         ``py3langid.langid.visit_counts``
``LangidWalker.features(data, table)``      the float32 inputs of py3langid's ``_sparse_score``
``keep_region(...)``, ``keep_trim(...)``    `methods.keep_region_python`, `methods.keep_trim_python`
``WordCounter.count(text)``                 the counting in `language.function_word_share`
``sample_lines(text, limit)``               `language.sample_for_identification_python`
``utf8_text(data)``                         ``str(data, "utf-8")`` (the UTF-8 form kept)
``page_units``, ``page_text``               the UTF-8 bytes a page crosses in (its code units copied)
``collapse_lines(text)``                    `extractors.text.lines_python`
``count_words``, ``count_nonspace``,        `extractors.text.words_python`, ``nonspace_python``,
``count_marked_words`` (text)               ``marked_words_python``
``markup_depth``, ``flatten_markup``        `extractors.nesting.markup_depth_python`, ``flatten_markup_python``
``read_markup``                             `extractors.markup.read_markup_python`
=========================================  =============================================

The keep/drop decision has a third port, in JavaScript, for the web page
(``web/static/app.js``: ``decideKeep``, ``joinKept``), held to the Python one by
tests/test_web_browser.py::test_parity_javascript_decision_port_matches_python.

Why compiled: sentence splitting and tokenising in Python each cost as much as KenLM's
own scoring (README, "Speed"); in C++ they cost a fraction of it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shlex
import unicodedata

try:
    from . import _native
except ImportError as error:  # not built (no compiler at install time)
    _native = None
    _IMPORT_ERROR: str | None = str(error)
else:
    _IMPORT_ERROR = None

ENABLED = _native is not None and os.environ.get("PLEXITY_PURE_PYTHON", "") in ("", "0")


def _stale() -> str | None:
    """Why the extension cannot be used with this checkout's Python files (built from other native/
    sources: a pull or an edit since the build), else None."""
    if not ENABLED:
        return None
    from pathlib import Path

    from .native_sources import checkout_native_dir, fingerprint

    native_dir = checkout_native_dir(Path(__file__).resolve().parent.parent)
    if native_dir is None or getattr(_native, "SOURCES", None) == fingerprint(native_dir):
        return None
    return (f"plexity_plugins' compiled extension ({_native.__file__}) was built from other sources than "
            f"{native_dir} holds now (a pull or an edit since it was built): rebuild it with `bash "
            f"{shlex.quote(str(native_dir.parent / 'scripts' / 'setup.sh'))}` (or `pip install -e "
            f"{shlex.quote(str(native_dir.parent))}`), or set "
            f"PLEXITY_PURE_PYTHON=1 to run the Python reference (the same results, slower)")


_STALE = _stale()
if _STALE is not None:  # a broken installation: stop, never run on at another speed (or with other results)
    from ..errors import InstallationError

    raise InstallationError(_STALE)
_BREAKER_SET = False


def compiled(name: str):
    """The compiled function `name` of `plexity_plugins.runtime._native`, or None where the compiled path
    is off or was built from older sources (the caller then uses its Python reference)."""
    return getattr(_native, name, None) if ENABLED else None


# (looked up, not assumed: an extension built from older sources lacks it, and pages then decode
# the usual way)
_UTF8_TEXT = compiled("utf8_text")


def status() -> str:
    """One line for logs and `plexity models`: which path scores."""
    if ENABLED:
        return "compiled (plexity_plugins.runtime._native)"
    if _native is not None:
        return "pure Python (PLEXITY_PURE_PYTHON is set)"
    return f"pure Python (plexity_plugins.runtime._native not built: {_IMPORT_ERROR})"


def split(text: str, max_chars: int) -> tuple[list[tuple[int, int]], list[int]]:
    """(sentence spans, block id of each): `sentences.split_sentences` and `sentences.block_ids`."""
    if not _BREAKER_SET:
        _set_sentence_breaker()
    return _native.split(text, max_chars)


def _set_sentence_breaker() -> None:
    """Hand BlingFire's sentence breaker to the compiled code (called from C++ without ctypes in
    between).  On first use, not at import: a process that only decodes pages (the extraction child of
    `plexity_plugins.extractors.sandbox`) does not need it."""
    global _BREAKER_SET
    _native.set_sentence_breaker(ctypes.cast(blingfire_library().TextToSentencesWithOffsets, ctypes.c_void_p).value)
    _BREAKER_SET = True


@functools.cache
def blingfire_library() -> ctypes.CDLL:
    """BlingFire's C library, the file of the `blingfire` wheel its package loads, loaded without that package:
    its __init__ imports numpy (~0.09 s of CPU, a fifth of a `plexity clean`'s start), which nothing of ours
    that splits sentences uses.  A wheel without the library stops with ctypes' OSError naming the file."""
    import importlib.util
    import sys

    spec = importlib.util.find_spec("blingfire")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'blingfire'", name="blingfire")
    name = {"win32": "blingfiretokdll.dll", "darwin": "libblingfiretokdll.dylib"}.get(sys.platform,
                                                                                     "libblingfiretokdll.so")
    return ctypes.CDLL(os.path.join(spec.submodule_search_locations[0], name))


def utf8_text(data: bytes | memoryview) -> str | None:
    """``str(data, "utf-8")``, with the bytes kept as the str's UTF-8 form (CPython's cache of it),
    so that the page is not encoded again where it is parsed (resiliparse's lexbor reads UTF-8)
    or sent to the extraction child; None when `data` is not valid UTF-8, or where the compiled
    path is off (the caller then decodes as it always did)."""
    return _UTF8_TEXT(data) if _UTF8_TEXT is not None else None


_PAGE_UNITS = compiled("page_units")


def page_units(text: str, buffer) -> tuple[int, int, int] | None:
    """Write `text`'s code units (its PEP 393 kind: 1, 2 or 4 bytes a character; 0: ASCII, 1 byte) at the start
    of the writable `buffer`, its UTF-8 form after them where the str holds one (as `utf8_text` leaves it) and it
    fits: (kind, length in characters, bytes of UTF-8 form written, else 0), for `page_text`.  None where the
    units do not fit, or where the compiled path is off (the caller then sends the page's UTF-8 bytes)."""
    return _PAGE_UNITS(text, buffer) if _PAGE_UNITS is not None else None


def page_text(buffer, kind: int, length: int, utf8_size: int) -> str:
    """The str `page_units` wrote to `buffer`: a copy of its code units, not a decoding (~80 us a 165 KB page), with
    its UTF-8 form kept (the one written, else encoded here: none for a str with a lone surrogate)."""
    return _native.page_text(buffer, kind, length, utf8_size)


_HAS_UTF8_FORM = compiled("has_utf8_form")


def has_utf8_form(text: str) -> bool:
    """Whether `text` holds its UTF-8 form (CPython's cache of it, as `utf8_text` leaves it): a str
    that does has no lone surrogate.  False where it does not, or where the compiled path is off."""
    return _HAS_UTF8_FORM is not None and _HAS_UTF8_FORM(text)


def sample_lines(text: str, limit: int) -> str:
    return _native.sample_lines(text, limit)


def keep_region(ids, logprobs, tokens, threshold: float, negative_cap: int, short_block: int) -> list[bool]:
    return _native.keep_region(ids, logprobs, tokens, float(threshold), negative_cap, short_block)


def keep_trim(ids, logprobs, tokens, threshold: float, max_tokens: int, relative: float) -> list[bool]:
    return _native.keep_trim(ids, logprobs, tokens, float(threshold), max_tokens, float(relative))


def load_model(path: str):
    """The KenLM model at `path` for `score_spans` (memory-mapped, like `models.load_kenlm`)."""
    return _native.Model(str(path))


_NFKC = functools.partial(unicodedata.normalize, "NFKC")


def score_spans(model, text: str, spans: list[tuple[int, int]]) -> tuple[list[float], list[int]]:
    """(log10 P, token count) of each sentence span, as `kenlm.Model.score` gives for
    `tokenizer.to_lm_line(text[a:b])` (= `tokenizer.spans_to_lm_lines(text, spans)`).

    Rule 1 (NFKC) is applied per sentence, by `unicodedata.normalize` (which returns at
    once when the sentence is NFKC already), and only to sentences with a non-ASCII
    character; the compiled code applies rules 2-4.
    """
    return model.score_spans(text, spans, None if text.isascii() else _NFKC)


def langid_walker(identifier):
    """A compiled `visit_counts` over py3langid `identifier`'s tables."""
    return _native.LangidWalker(identifier.tk_nextmove, identifier._rowbase, identifier.tk_output)


def word_counter(words):
    return _native.WordCounter(words)
