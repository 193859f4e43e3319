"""The fuzz target of scripts/fuzz_native.sh (atheris, libFuzzer's options on the command line).

Each input is one byte choosing an entry point, then the page or text (UTF-8; bytes that are not UTF-8 become
lone surrogates, which the compiled code must refuse or read as Python does).  Besides the sanitizers' reports,
the compiled results are compared with the Python references where those are cheap enough (the text helpers,
the markup walk, unescaping, splitting; the learned reader's segmentation and features on pages under 3 KB;
find_all against str.find and utf8_text against CPython's decoder, also swept across their 16-byte blocks and
cut at their ends; the forests' probabilities against forest.py on rows of NaN, infinities, denormals and split
thresholds): an AssertionError is a finding too.  Run it through the script, which builds and preloads the sanitized
extension; tests/test_native_fuzz41.py replays tests/fuzz_corpus/ through `TestOneInput` on the normal build.
"""

from __future__ import annotations

import copy
import html as html_module
import json
import math
import struct
import sys
from array import array
from pathlib import Path

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
    from plexity_plugins.extractors.learned.forest import Forest as ReferenceForest
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


def _forms(page: str, needle: str) -> list[tuple[str, str]]:
    """(text, needle) as find_all meets them: the str itself (CPython's search where it is wider than a byte), its
    UTF-8 bytes as a one-byte str (the compiled search over a str's bytes), and utf8_text's str (over the UTF-8
    form it holds: the needle's own UTF-8 form, or none for a lone surrogate)."""
    encoded = page.encode("utf-8", "surrogatepass")
    forms = [(page, needle), (encoded.decode("latin-1"), needle.encode("utf-8", "surrogatepass").decode("latin-1"))]
    decoded = native.utf8_text(encoded)
    if decoded is not None:
        forms.append((decoded, needle))
    return forms


def _needles(page: str, data: bytes) -> list[str]:
    """Needles the page holds (its start, a place the input chooses, its last characters), each also with its last
    character changed (its first character met, not the whole needle)."""
    size = 1 + (data[-2] % 24 if len(data) > 1 else 2)
    at = (data[-1] * 7919) % len(page) if data and page else 0
    needles = []
    for needle in filter(None, (page[:3], page[at:at + size], page[-size:], page[-2:])):
        needles += [needle, needle[:-1] + chr(ord(needle[-1]) ^ 1)]
    return needles or ["a"]


# the lengths around find_all's and utf8_text's 16-byte blocks, and their ends
EDGES = (1, 2, 14, 15, 16, 17, 18, 30, 31, 32, 33, 34, 47, 48, 49)


def _swept(needle: str, filler: str) -> list[str]:
    """Texts of `EDGES` lengths holding `needle` once at each place, the rest `filler` (the needle's first and last
    characters: nearly every block then has places to compare whole)."""
    texts = []
    for length in EDGES:
        for place in range(0, max(0, length - len(needle)) + 1):
            texts.append((filler * length)[:place] + needle + (filler * length)[:max(0, length - place - len(needle))])
    return texts


def find_all_everywhere(page: str, data: bytes) -> None:
    """The compiled find_all against str.find (find_all_python): the needles of `_needles` in each form of the page,
    with a limit the input chooses; a short page's last characters also at each place of texts of `EDGES` lengths."""
    limit = (data[0] % 5) - 1 if data else -1
    for needle in _needles(page, data):
        for form, needle_form in _forms(page, needle):
            for each in (-1, limit):
                assert text.find_all(form, needle_form, each) == text.find_all_python(form, needle_form, each), (
                    "find_all differs from str.find")
    if len(page) <= 64:
        needle = page[-(1 + len(data) % 7):] or "ab"
        for filler in (needle[0] + needle[-1], needle[0], "-"):
            for swept in _swept(needle, filler):
                for form, needle_form in _forms(swept, needle):
                    assert text.find_all(form, needle_form) == text.find_all_python(form, needle_form), (
                        "find_all differs from str.find at a block's edge")


def extractor_path(page_html: str, data: bytes) -> None:
    limit = (data[-1] % 40) - 1 if data else -1
    assert nesting.markup_depth(page_html, limit) == nesting.markup_depth_python(page_html, limit)
    assert nesting.flatten_markup(page_html, max(limit, 1)) == nesting.flatten_markup_python(page_html, max(limit, 1))
    assert markup.read_markup(page_html, limit, limit, -1) == markup.read_markup_python(page_html, limit, limit, -1)
    assert text.lines(page_html) == text.lines_python(page_html)
    assert text.words(page_html) == text.words_python(page_html)
    assert text.nonspace(page_html) == text.nonspace_python(page_html)
    assert text.marked_words(page_html) == text.marked_words_python(page_html)
    find_all_everywhere(page_html, data)
    for extract in (html_to_text_dense, html_to_text_fast):
        try:
            extract(page_html)
        except Exception as error:  # noqa: BLE001
            if type(error).__name__ not in ("ExtractionError",):
                raise


def _strict(data: bytes) -> str | None:
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        return None


def _same_decoding(data: bytes, view=None) -> str | None:
    """utf8_text of `data` (or of `view`, the same bytes inside a longer buffer) as CPython's strict decoder reads
    it: the same str (of the same kind: str equality compares kinds), ASCII alike, its UTF-8 form the bytes."""
    decoded = native.utf8_text(data if view is None else view)
    expected = _strict(data)
    assert decoded == expected, "utf8_text differs from str(data, 'utf-8')"
    if decoded is not None:
        assert decoded.isascii() == expected.isascii() and decoded.encode("utf-8") == data
    return decoded


# what follows a view's last byte: bytes that would complete a sequence cut there, or make its last block
# non-ASCII (read past the view's end, they would change the str)
AFTER = b"\x80\xbf\x80\xe4\xb8\x80\xf0\x9f\x98\x80" * 2


def utf8_everywhere(data: bytes) -> None:
    """utf8_text against CPython's decoder: the input, the input inside a longer buffer, and its first and last 40
    bytes behind each number of ASCII bytes from 0 to 17 (every byte of them at each place of a 16-byte block),
    cut at each of their last 8 bytes."""
    _same_decoding(data, memoryview(data + AFTER)[:len(data)])
    _same_decoding(data, memoryview(b"a" + data)[1:])
    for part in {data[:40], data[-40:]}:
        for pad in range(18):
            padded = b"a" * pad + part
            for cut in range(max(0, len(padded) - 8), len(padded) + 1):
                _same_decoding(padded[:cut])


def bytes_path(data: bytes) -> None:
    decoded = _same_decoding(data)
    utf8_everywhere(data)
    if decoded is not None and data:  # (utf8_text's str searched over the UTF-8 form it holds)
        find_all_everywhere(decoded, data)
        buffer = bytearray(len(decoded) * 4 + len(data) + 16)
        units = native.page_units(decoded, buffer)  # (the UTF-8 form utf8_text left travels with the units)
        copied = native.page_text(buffer, *units)
        assert copied == decoded and copied.encode("utf-8") == data
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


def _palettes(trees: list[dict], width: int) -> list[list[float]]:
    """For each feature, the values that matter to the forest's walk: NaN (of either sign, quiet or signalling),
    the infinities, zeros, denormals, LightGBM's zero threshold and either side of it, and each split's threshold
    (categories: each value and either side) with the doubles next to it."""
    signalling = struct.unpack("d", struct.pack("Q", 0x7FF0000000000001))[0]
    specials = [math.nan, -math.nan, signalling, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324,
                2.2250738585072014e-308, 1e-35, -1e-35, math.nextafter(1e-35, 1), math.nextafter(-1e-35, -1), 1.0,
                -1.0, 1.5, 1e308, -1e308]
    splits = [set() for _ in range(width)]
    for tree in trees:
        for feature, threshold, categories in zip(tree["feature"], tree["threshold"], tree["categories"]):
            if feature >= 0:
                points = [float(c) for c in categories] if categories else [float(threshold)]
                for point in points:
                    splits[feature].update((math.nextafter(point, -math.inf), point, math.nextafter(point, math.inf)))
    return [specials + sorted(values) for values in splits]


def _forest_rows(data: bytes, palette: list[list[float]], categorical: set[int], rows: int) -> array:
    """`rows` rows, each value from its feature's palette as the input's bytes choose (cyclically); an infinite
    category (which no row can be scored with) only where the first byte has bit 0x40, else 9.3e18 (past int64)."""
    width, values = len(palette), array("d")
    for r in range(rows):
        for c in range(width):
            byte = data[(r * width + c) % len(data)] + r
            value = palette[c][(byte * 131 + c) % len(palette[c])] if byte % 3 else palette[c][byte % 19]
            if c in categorical and math.isinf(value) and not data[0] & 0x40:
                value = 9.3e18
            values.append(value)
    return values


def _forests():
    """(compiled forest, reference forest, palettes, categorical features) of the reader's forest and of its second
    look's (the shipped forest reads `FEATURES` in their order: load_forest checks it)."""
    spec = json.loads(Path(learned.FOREST_PATH).read_text(encoding="utf-8"))
    return [(reading._NATIVE_FOREST(copy.deepcopy(own)), ReferenceForest(copy.deepcopy(own)),
             _palettes(own["trees"], len(own["features"])),
             {f for tree in own["trees"] for f, c in zip(tree["feature"], tree["categories"]) if c is not None})
            for own in (spec, spec["second_look"])]


FORESTS = _forests()


def forests_against_reference(data: bytes) -> None:
    """The compiled forests' probabilities against forest.py's on rows of values that matter to a split (NaN,
    infinities, denormals, thresholds and their neighbours), 1 to 17 rows (whole groups of 8 and the rest); a row
    that cannot be scored (an infinite category) fails both alike."""
    for compiled, reference, palette, categorical in FORESTS:
        rows = _forest_rows(data, palette, categorical, 1 + data[0] % 17)
        try:
            theirs = reference.probabilities([rows[i:i + len(palette)].tolist()
                                              for i in range(0, len(rows), len(palette))])
        except OverflowError as error:
            theirs = error
        try:
            ours = compiled.probabilities(rows.tobytes(), len(palette))
        except OverflowError as error:
            ours = error
        if isinstance(theirs, Exception) or isinstance(ours, Exception):
            assert type(ours) is type(theirs) and str(ours) == str(theirs), (ours, theirs)
        else:
            assert ours == theirs, "the compiled forest differs from forest.py"


def forest_path(data: bytes) -> None:
    if data:
        forests_against_reference(data)
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


def edge_seeds() -> list[tuple[str, bytes]]:
    """(name, input) of the shapes the SIMD loops and their tails meet: pages of 15 to 49 bytes with a needle or a
    non-ASCII character at their end or across a block's edge, UTF-8 cut or ill-formed there (an overlong form, a
    surrogate's encoding, past U+10FFFF), Han, kana and combining marks for the learned reader, and forest rows."""
    seeds = []
    for length in (15, 16, 17, 31, 32, 33):
        for tail in (b"@type", b"og:type", b"itemtype", "\u00e9\u6f22\u5b57\U0001f600".encode()):
            page = b"t" * (length - len(tail)) + tail
            seeds += [(f"edge-find-{length}-{len(tail)}", b"\x02" + page),
                      (f"edge-utf8-{length}-{len(tail)}", b"\x03" + page)]
    for bad in (b"\xe4\xb8", b"\xf0\x9f\x98", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf",
                b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff"):
        for before in (14, 15, 16, 31):
            seeds.append((f"edge-ill-{before}-{bad.hex()}", b"\x03" + b"a" * before + bad + b"a" * 17))
            seeds.append((f"edge-cut-{before}-{bad.hex()}", b"\x03" + "\u00e9".encode() + b"a" * before + bad))
    for name, page in (("han", "<h1>\u6f22\u5b57\u304b\u306a\u30ab\u30ca\u6f22</h1><p>\u65e5\u672c\u8a9e\u306e"
                                "\u6587\u7ae0\u3067\u3059\u3002 Latin words \u4e2d\u6587</p>"),
                       ("marks", "<p>e\u0301\u6f22\u3099\u5b57 \u304b\u3099\u304d \ud55c\uad6d\uc5b4 "
                                 "\u0e20\u0e32\u0e29\u0e32</p>"),
                       ("pieces", "<p>\u6f22\u5b57<b>\u6f22\u5b57\u6f22</b>&#x4E00;&#x4e01;\u6f22<br>"
                                  "\U00020000\U0002fa1f\U0002fa20\u3040\u30ff\u3400\u4dbf\uf900\ufaff</p>")):
        seeds.append((f"edge-learned-{name}", b"\x00" + page.encode()))
    for size in (1, 8, 15, 146 * 8, 146 * 9):
        seeds.append((f"edge-forest-{size}", b"\x04" + bytes((i * 37) % 256 for i in range(size))))
    return seeds


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
    for name, shaped in edge_seeds():
        with open(os.path.join(folder, name), "wb") as out:
            out.write(shaped)
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
