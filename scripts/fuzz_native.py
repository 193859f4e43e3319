"""The fuzz target of scripts/fuzz_native.sh (atheris, libFuzzer's options on the command line).

Each input is one byte choosing an entry point, then the page or text (UTF-8; bytes that are not UTF-8 become
lone surrogates, which the compiled code must refuse or read as Python does).  Besides the sanitizers' reports,
the compiled results are compared with the Python references where those are cheap enough (the text helpers,
the markup walk, unescaping, splitting; the learned reader's segmentation and features on pages under 3 KB):
an AssertionError is a finding too.  Run it through the script, which builds and preloads the sanitized
extension; tests/test_native_fuzz41.py replays tests/fuzz_corpus/ through `TestOneInput` on the normal build.
"""

from __future__ import annotations

import html as html_module
import math
import struct
import sys
from array import array

import contextlib

try:
    import atheris
except ImportError:  # (tests/test_native_fuzz41.py replays the checked-in inputs with TestOneInput, without it)
    atheris = None

with atheris.instrument_imports(include=["plexity_plugins"]) if atheris else contextlib.nullcontext():
    from plexity_plugins.extractors import learned, markup, nesting, text
    from plexity_plugins.extractors.dense import html_to_text_dense
    from plexity_plugins.extractors.fast import html_to_text_fast
    from plexity_plugins.extractors.learned import reading, segment
    from plexity_plugins.extractors.learned.features import block_features
    from plexity_plugins.runtime import native
    from plexity_plugins.scoring.scorer import PerplexityScorer
    from plexity_plugins.text.sentences import split_sentences_python, block_ids

assert native.ENABLED and reading.COMPILED, "the sanitized extension is not the one imported"
SCORER = PerplexityScorer()
FOREST = learned.load_forest()
SMALL = 3000  # pages compared with the Python reference (it is ~50x slower)


def _rows(page, ref_page, logprobs) -> None:
    rows = reading.feature_rows(page, False, logprobs)
    ref = array("d", [v for row in block_features(ref_page, False, logprobs) for v in row]).tobytes()
    assert rows == ref, "feature rows differ from the reference"


def learned_path(page_html: str, data: bytes) -> None:
    try:
        learned.html_to_text_learned(page_html)
    except Exception as error:  # noqa: BLE001 - only a named error of ours is a skip
        if type(error).__name__ not in ("ExtractionError",):
            raise
    texts, page = reading.read_blocks(page_html)
    page.blocks(), page.elements(), page.section_ends(), page.title, page.declared, page.summaries
    logprobs = [((b - 128) / 8.0) for b in data[:len(texts)]] + [math.nan] * max(0, len(texts) - len(data))
    rows = reading.feature_rows(page, len(data) % 2 == 1, logprobs if len(data) % 3 == 0 else None)
    if texts:
        probabilities = FOREST.probabilities(rows)
        words = [len(t.split()) for t in texts]
        FOREST.decision(rows, probabilities, words)
    if len(page_html) < SMALL:
        ref = segment.segment(page_html)
        assert texts == [b.text for b in ref.blocks], "block texts differ from the reference"
        assert page.elements() == [tuple(getattr(e, f) for f in segment.Element.__slots__) for e in ref.elements]
        assert page.title == ref.title and page.declared == ref.declared and page.truncated == ref.truncated
        _rows(page, ref, None)


def scoring_path(sample: str, data: bytes) -> None:
    try:
        SCORER.perplexity(sample[:2000])
    except ValueError as error:  # (the documented refusal of a text without a sentence)
        if "no sentence to score" not in str(error):
            raise
    SCORER.clean(sample, annotate=len(data) % 2 == 0)
    SCORER.document_perplexity(sample)
    max_chars = 1 + data[-1] * 4 if data else 500
    try:
        ref = split_sentences_python(sample, max_chars)
    except UnicodeEncodeError:  # (a lone surrogate: the compiled splitter must refuse it alike)
        try:
            native.split(sample, max_chars)
        except UnicodeEncodeError:
            return
        raise AssertionError("the compiled splitter read a text the reference refuses")
    spans, ids = native.split(sample, max_chars)
    assert spans == ref, "sentence spans differ from the reference"
    assert ids == block_ids(sample, ref)


def extractor_path(page_html: str, data: bytes) -> None:
    limit = (data[-1] % 40) - 1 if data else -1
    assert nesting.markup_depth(page_html, limit) == nesting.markup_depth_python(page_html, limit)
    assert nesting.flatten_markup(page_html, max(limit, 1)) == nesting.flatten_markup_python(page_html, max(limit, 1))
    assert markup.read_markup(page_html, limit, limit, -1) == markup.read_markup_python(page_html, limit, limit, -1)
    assert text.lines(page_html) == text.lines_python(page_html)
    assert text.words(page_html) == text.words_python(page_html)
    assert text.nonspace(page_html) == text.nonspace_python(page_html)
    assert text.marked_words(page_html) == text.marked_words_python(page_html)
    needle = page_html[:3] or "a"
    assert text.find_all(page_html, needle) == text.find_all_python(page_html, needle)
    for extract in (html_to_text_dense, html_to_text_fast):
        try:
            extract(page_html)
        except Exception as error:  # noqa: BLE001
            if type(error).__name__ not in ("ExtractionError",):
                raise


def bytes_path(data: bytes) -> None:
    decoded = native.utf8_text(data)
    try:
        expected = str(data, "utf-8")
    except UnicodeDecodeError:
        expected = None
    assert decoded == expected, "utf8_text differs from str(data, 'utf-8')"
    page = data.decode("utf-8", "surrogateescape")
    buffer = bytearray(len(page) * 4 + len(data) + 16)
    units = native.page_units(page, buffer)
    if units is not None:
        assert native.page_text(buffer, *units) == page
    try:
        assert native._native.unescape_html(page) == html_module.unescape(page)
    except UnicodeEncodeError:
        pass
    native.sample_lines(page, (data[0] if data else 0) * 16)


def forest_path(data: bytes) -> None:
    width = 146
    usable = len(data) // 8 * 8
    rows = data[:usable // (8 * width) * 8 * width]
    if rows:
        FOREST.probabilities(rows)
    # the second look's rows from arbitrary values (NaN, infinities, huge spreads and word counts)
    values = array("d", struct.unpack(f"{usable // 8}d", data[:usable]))
    n = len(values) // 4
    if n:
        p, words, spread = values[:n], values[n:2 * n], values[2 * n:2 * n + 1 + data[0] % 4]
        for width_ in (1, 7):
            rows = (values * (n * width_ // len(values) + 1))[:n * width_]
            native._native.second_look_rows(rows.tobytes(), width_, p.tobytes(), words.tobytes(), spread.tobytes(),
                                            bytes(x % 2 for x in data[:n]))


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 5, data[1:]
    page = body.decode("utf-8", "surrogateescape" if data[0] & 0x80 else "replace")
    if mode == 0:
        learned_path(page, body)
    elif mode == 1:
        scoring_path(page, body)
    elif mode == 2:
        extractor_path(page, body)
    elif mode == 3:
        bytes_path(body)
    else:
        forest_path(body)


def write_seeds(folder: str, pages: list[str]) -> None:
    """Seed inputs into `folder`: the tests' made-up and hostile pages, the training fixtures, and the pages of the
    `pages` folders (e.g. a benchmark's html/), each once for every entry point (the first byte)."""
    import glob
    import os

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
    sys.path.insert(0, here)
    from hostile_pages import pages as hostile
    from learned_pages import page as made_up

    docs = [data[:60000] for _, data, _ in hostile()] + [made_up(s)[0].encode("utf-8", "surrogatepass")
                                                          for s in range(20)]
    docs += [open(path, "rb").read()[:40000] for path in glob.glob(os.path.join(here, "fixtures/training/*.xml"))]
    for page_folder in pages:
        docs += [open(path, "rb").read()[:60000] for path in sorted(glob.glob(os.path.join(page_folder, "*")))[:40]]
    docs += [b"Hello world. This is a sentence! And another one?", b"Dr. Smith went to Washington.\n\nNew block."]
    os.makedirs(folder, exist_ok=True)
    for i, doc in enumerate(docs):
        for mode in range(5):
            with open(os.path.join(folder, f"seed{i:04d}_{mode}"), "wb") as out:
                out.write(bytes([mode]) + doc)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-seeds"]:
        write_seeds(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
