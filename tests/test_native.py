"""The compiled hot path (plexity_plugins.runtime._native) gives exactly the pure-Python results.

Each compiled function is compared with the Python function it replaces, on the text of
every page of the repository's page set (tests/golden/pages.py, tags extractor) and on random text built to hit the edge cases:
non-ASCII letters and digits, combining marks, compatibility characters NFKC changes
(ligatures, no-break spaces, full-width forms, "…"), title case, Greek capital sigma,
underscores, control characters Python counts as whitespace, and runs longer than the
sentence cap.  Scores are compared for equality, not approximately.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plexity_plugins.runtime import native
from plexity_plugins.text import language
from plexity_plugins.scoring import methods
from plexity_plugins.text.sentences import block_ids, split_sentences_python
from plexity_plugins.scoring.models import load_kenlm, load_native, resolve
from plexity_plugins.text.plexity_tokenizer import to_lm_line

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not native.ENABLED and bool(os.environ.get("PLEXITY_PURE_PYTHON")),
                                reason="PLEXITY_PURE_PYTHON is set: the compiled path is off on purpose")


def _golden():
    spec = importlib.util.spec_from_file_location("bench_golden", REPO / "bench" / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page_texts():
    """The text of the repository's page set (tests/golden/pages.py)."""
    texts = _golden().page_set().page_texts()
    assert len(texts) >= 50
    return texts


PIECES = _golden().page_set().EDGE_PIECES  # the splitter and tokenizer edge cases (tests/golden/pages.py)


def random_texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 120)):
            piece = rng.choice(PIECES)
            if rng.random() < 0.02:
                piece = "x" * rng.randint(1, 1500)  # runs over the sentence cap
            parts.append(piece)
            parts.append(rng.choice([" ", " ", " ", "", "\n"]))
        texts.append("".join(parts))
    return texts


@pytest.fixture(scope="module")
def models():
    info = resolve(None)
    return load_native(info), load_kenlm(info)


def reference_scores(lm, text, spans):
    """What the pure-Python path computes: each sentence tokenised and scored by kenlm."""
    lines = [to_lm_line(text[a:b]) for a, b in spans]
    return [lm.score(line, bos=True, eos=True) for line in lines], [len(line.split()) for line in lines]


def test_the_compiled_path_is_built_and_used():
    # CI builds the extension (scripts/setup.sh sets PLEXITY_REQUIRE_NATIVE=1): a silent
    # fallback to pure Python would make every speed figure wrong.
    assert native.ENABLED, native.status()
    assert native.status().startswith("compiled")


@pytest.mark.parametrize("max_chars", [1000, 30])
def test_splitting_matches_the_python_splitter_on_the_page_set(page_texts, max_chars):
    for text in page_texts:
        spans = split_sentences_python(text, max_chars)
        assert native.split(text, max_chars) == (spans, block_ids(text, spans))


def test_splitting_matches_the_python_splitter_on_random_text():
    for text in random_texts(400):
        for max_chars in (1000, 7):
            spans = split_sentences_python(text, max_chars)
            assert native.split(text, max_chars) == (spans, block_ids(text, spans)), repr(text[:200])


def test_scores_match_kenlm_on_the_page_set(page_texts, models):
    compiled, lm = models
    for text in page_texts:
        spans = split_sentences_python(text)
        assert native.score_spans(compiled, text, spans) == reference_scores(lm, text, spans)


def test_scores_match_kenlm_on_random_text(models):
    compiled, lm = models
    for text in random_texts(400, seed=11):
        spans = split_sentences_python(text, 200)
        assert native.score_spans(compiled, text, spans) == reference_scores(lm, text, spans), repr(text[:200])


def test_title_case_and_digits_follow_the_tokenizer_rules(models):
    compiled, lm = models
    for sentence in ["The cat", "NASA says", "iPhone sales", "Ǆemal went", "ΟΔΟΣ ends", "0Abc 1984",
                     "İstanbul is big", "ﬁne print", "１２３ apples", "__init__ runs", "É\u0301t\u00e9"]:
        expected = reference_scores(lm, sentence, [(0, len(sentence))])
        assert native.score_spans(compiled, sentence, [(0, len(sentence))]) == expected, sentence


def test_decisions_match_the_python_methods_on_the_page_set(page_texts, models):
    compiled, _ = models
    for text in page_texts:
        spans, ids = native.split(text, 1000)
        logprobs, tokens = native.score_spans(compiled, text, spans)
        for threshold in (150.0, 1692.4, 5269.3, 1e6):
            assert methods.keep_region(ids, logprobs, tokens, threshold) == \
                methods.keep_region_python(ids, logprobs, tokens, threshold)
            assert methods.keep_trim(ids, logprobs, tokens, threshold) == \
                methods.keep_trim_python(ids, logprobs, tokens, threshold)


def test_decisions_match_the_python_methods_on_random_blocks():
    rng = random.Random(1)
    for _ in range(3000):
        n = rng.randint(0, 40)
        ids, block = [], 0
        for _ in range(n):
            block += rng.random() < 0.5 and bool(ids)
            ids.append(block)
        tokens = [rng.choice([0, 1, 2, 3, 5, 9, 10, 19, 20, 40, 200]) for _ in range(n)]
        logprobs = [-(t + 1) * rng.uniform(0.5, 5.0) for t in tokens]
        threshold = rng.choice([10.0, 100.0, 1692.4, 5269.3])
        assert methods.keep_region(ids, logprobs, tokens, threshold) == \
            methods.keep_region_python(ids, logprobs, tokens, threshold)
        assert methods.keep_trim(ids, logprobs, tokens, threshold) == \
            methods.keep_trim_python(ids, logprobs, tokens, threshold)


def test_bad_spans_are_refused(models):
    compiled, _ = models
    with pytest.raises(ValueError):
        compiled.score_spans("short", [(0, 99)])
    with pytest.raises(TypeError):
        compiled.score_spans("short", [[0, 2]])
    with pytest.raises(ValueError):
        native.split("text", 0)
    with pytest.raises(ValueError):
        native.keep_region([0, 5], [-1.0, -2.0], [1, 1], 100.0, 10, 10)


def test_a_model_the_compiled_path_cannot_open_is_a_clear_error(tmp_path):
    broken = tmp_path / "broken.bin"
    broken.write_bytes(b"not a model")
    with pytest.raises(OSError, match="broken.bin"):
        native.load_model(str(broken))


def test_language_feature_walk_matches_py3langid(page_texts):
    from py3langid.langid import visit_counts

    identifier = language.identifier()
    assert type(identifier).__name__ == "CompiledWalkIdentifier"
    walker = native.langid_walker(identifier)
    for text in page_texts + random_texts(100, seed=3):
        data = language.sample_for_identification(text).encode("utf-8")
        expected = visit_counts(identifier.tk_nextmove, identifier._rowbase, identifier.tk_output, data)
        got = walker.visit_counts(data)
        assert (got is None) == (expected is None)
        if got is not None:
            assert list(got.items()) == list(expected.items())  # same order: same float sums


def test_language_feature_walk_matches_py3langid_on_long_and_binary_input(page_texts):
    """Long inputs are walked in interleaved segments: still py3langid's counts, in its order."""
    from py3langid.langid import visit_counts

    identifier = language.identifier()
    walker = native.langid_walker(identifier)
    rng = random.Random(12)
    inputs = ["\n".join(page_texts).encode("utf-8")[: 1 << 20],
              "".join(random_texts(30, seed=13)).encode("utf-8")]
    inputs += [bytes(rng.randrange(256) for _ in range(rng.randint(1000, 20000))) for _ in range(20)]
    inputs += [b"a" * 1023, b"ab" * 512, bytes(range(256)) * 40]
    for data in inputs:
        expected = visit_counts(identifier.tk_nextmove, identifier._rowbase, identifier.tk_output, data)
        got = walker.visit_counts(data)
        assert list((got or {}).items()) == list((expected or {}).items())


def test_language_features_are_py3langids_float32_inputs(page_texts):
    """`features` gives the counts and table rows that py3langid's `_sparse_score` turns into
    float32 (bit for bit: every half-precision pattern, NaNs and subnormals included)."""
    import numpy as np
    from py3langid.langid import visit_counts

    identifier = language.identifier()
    walker = native.langid_walker(identifier)
    patterns = np.arange(identifier.nb_ptc.size, dtype=np.uint64) * 7919 % 65536
    table = patterns.astype(np.uint16).view(np.float16).reshape(identifier.nb_ptc.shape)
    seen = set()
    for text in page_texts + random_texts(50, seed=4):
        data = language.sample_for_identification(text).encode("utf-8")
        visits = visit_counts(identifier.tk_nextmove, identifier._rowbase, identifier.tk_output, data) or {}
        counts, rows = walker.features(data, table)
        idx = np.fromiter(visits.keys(), dtype=np.intp, count=len(visits))
        expected_counts = np.fromiter(visits.values(), dtype=np.float32, count=len(visits))
        assert np.frombuffer(counts, dtype=np.float32).tobytes() == expected_counts.tobytes()
        expected_rows = table[idx].astype(np.float32)
        assert rows == expected_rows.tobytes()
        seen.update(table[idx].view(np.uint16).ravel().tolist())
    assert len(seen) == 65536
    with pytest.raises(TypeError, match="float16"):
        walker.features(b"abc", table.astype(np.float32))


def test_language_decisions_match_py3langid(page_texts):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    stock = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    compiled = language.identifier()
    for text in page_texts + random_texts(100, seed=6):
        sample = language.sample_for_identification(text)
        assert compiled.classify(sample) == stock.classify(sample)
        assert language.function_word_share(sample) == language.function_word_share_python(sample)


def test_language_sample_matches_the_python_sampler(page_texts):
    """Same lines, same order (ties keep text order), same cut, for any limit."""
    for text in page_texts + random_texts(200, seed=8) + ["\n \n\u3000\n", "b\na\nc\n" * 40]:
        for limit in (1, 7, 100, language.SAMPLE_CHARS):
            assert native.sample_lines(text, limit) == language.sample_for_identification_python(text, limit)


def test_function_word_share_matches_on_random_text():
    for text in random_texts(200, seed=5):
        assert language.function_word_share(text) == language.function_word_share_python(text)


def test_utf8_text_is_the_decoded_str_with_its_utf8_form_kept(page_texts):
    """str(data, "utf-8") exactly, for every page and random text; its UTF-8 form (what
    str.encode returns from CPython's cache, and what resiliparse's parser reads) is the data."""
    for text in page_texts + random_texts(200, seed=9) + ["", "ascii only", "é", "\U0001F600 \u2028 \x00"]:
        data = text.encode("utf-8")
        decoded = native.utf8_text(data)
        assert decoded == text and type(decoded) is str
        assert decoded.encode("utf-8") == data and decoded.encode("utf-8", "surrogatepass") == data
        assert native.utf8_text(memoryview(b"xx" + data)[2:]) == text  # a slice of a buffer
    for invalid in (b"\xff", b"caf\xe9", b"\xed\xb2\x80 a lone surrogate", b"cut \xe6\x9d"):
        assert native.utf8_text(invalid) is None  # the caller decodes it its own way


def _strict_utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_utf8_text_takes_exactly_the_bytes_that_python_decodes():
    """utf8_text decodes by itself, a block of ASCII bytes at a time: every sequence of one to four bytes
    (each lead byte with the continuation bytes at the edges of its ranges: overlong forms, surrogates, past
    U+10FFFF, cut short), after ASCII runs that put it at each place of a block, decodes to CPython's str of
    the same kind (its size with the UTF-8 form kept), or None where CPython's strict decoder refuses it."""
    edges = (0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF)
    sequences = [bytes([lead]) for lead in range(256)]
    sequences += [bytes([lead, second]) for lead in range(0x80, 0x100) for second in edges]
    sequences += [bytes([lead, second, 0x80]) for lead in range(0xE0, 0x100) for second in edges]
    sequences += [bytes([lead, second, 0xBF, 0xBF]) for lead in range(0xF0, 0x100) for second in edges]
    for sequence in sequences:
        for before in (0, 1, 7, 8, 15, 16, 17, 31):
            for after in (b"", b"x", b"y" * 20, "é".encode()):
                data = b"a" * before + sequence + after
                expected, decoded = _strict_utf8(data), native.utf8_text(data)
                assert decoded == expected, data
                if expected is not None:
                    utf8_form = 0 if expected.isascii() else len(data) + 1
                    assert sys.getsizeof(decoded) == sys.getsizeof(expected) + utf8_form, data


def test_utf8_text_matches_python_on_random_mixed_text():
    """Runs of ASCII between characters of every width, with a stray byte put in or the end cut mid-character now
    and then: the same str as CPython's decoder, or None where it refuses the bytes."""
    rng = random.Random(13)
    pieces = ["a", "sixteen letters.", "é", "ÿ", "Ā", "\u2019", "\u20ac", "\U0001F600", "\U0010FFFF", "\x00", " " * 17]
    strays = [b"\xc2", b"\xe0\xa0", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xff"]
    for _ in range(20000):
        data = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60))).encode()
        if rng.random() < 0.3:
            at = rng.randint(0, len(data))
            data = data[:at] + rng.choice(strays) + data[at:]
        if rng.random() < 0.2:
            data = data[:rng.randint(0, len(data))]
        expected, decoded = _strict_utf8(data), native.utf8_text(data)
        assert decoded == expected, data
        if expected is not None:
            assert sys.getsizeof(decoded) == sys.getsizeof(expected) + (0 if expected.isascii() else len(data) + 1)


def test_a_page_copied_as_its_code_units_is_the_same_str_with_its_utf8_form(page_texts):
    """The extraction child's pages: page_units writes a str's code units (and the UTF-8 form it holds) to a
    buffer, page_text makes the same str of them (of the same kind: equal, hashed alike), its UTF-8 form kept
    as a page decoded by utf8_text has it, and none for a lone surrogate, as a page decoded with surrogatepass."""
    import mmap

    shared = mmap.mmap(-1, 1 << 20)
    texts = [native.utf8_text(t.encode()) for t in page_texts + random_texts(200, seed=11)]
    texts += ["", "ascii only", "latin-1 \xe9", "\u2028 two bytes", "\U0001F600 four", "lone \udc80", "\ud83d\ude00 a pair"]
    for text in texts:
        for held in (text, text[:1] + text[1:]):  # (with its UTF-8 form, as the reader decodes a page; without)
            kind, length, utf8_size = native.page_units(held, shared)
            assert kind == (0 if text.isascii() else {255: 1, 65535: 2}.get(_kind_max(text), 4))
            assert length == len(text) and utf8_size == (len(text.encode()) if native.has_utf8_form(held) else 0)
            copied = native.page_text(shared, kind, length, utf8_size)
            assert copied == text and hash(copied) == hash(text) and type(copied) is str
            surrogate = any("\ud800" <= c <= "\udfff" for c in text)
            assert native.has_utf8_form(copied) == (not text.isascii() and not surrogate)
            if not surrogate:
                assert copied.encode() == text.encode()
    assert native.page_units("é" * ((1 << 20) + 1), shared) is None  # (the units do not fit: the caller sends UTF-8)
    # (the units fit, the UTF-8 form not: the units alone)
    kind, length, utf8_size = native.page_units(native.utf8_text(("é" * ((1 << 20) - 10)).encode()), shared)
    assert (kind, utf8_size) == (1, 0) and native.has_utf8_form(native.page_text(shared, kind, length, 0))
    with pytest.raises(ValueError):
        native.page_text(shared, 2, 1 << 20, 0)  # (longer than the buffer)


def _kind_max(text: str) -> int:
    return 255 if max(text) <= "\xff" else 65535 if max(text) <= "\uffff" else 0x10FFFF


def test_pure_python_path_gives_the_golden_outputs_too():
    """The fallback (no compiler, or PLEXITY_PURE_PYTHON=1) cleans the dev pages exactly as recorded."""
    env = dict(os.environ, PLEXITY_PURE_PYTHON="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(REPO / "tests" / "test_golden.py")], env=env, capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    check = subprocess.run([sys.executable, "-c", "from plexity_plugins.runtime import native; print(native.status())"],
                           env=env, capture_output=True, text=True)
    assert check.stdout.startswith("pure Python"), check.stdout + check.stderr


def test_threads_score_and_split_at_once_with_the_same_results(page_texts, models):
    """Splitting and scoring run without the GIL (Scrapy cleans in worker threads): four
    threads sharing one model get exactly what one thread gets."""
    from concurrent.futures import ThreadPoolExecutor

    compiled, _ = models
    texts = page_texts + random_texts(60, seed=11)

    def work(text):
        spans, ids = native.split(text, 300)
        return spans, ids, native.score_spans(compiled, text, spans)

    expected = [work(text) for text in texts]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(2):
            assert list(pool.map(work, texts)) == expected


def test_the_gil_is_free_while_a_long_text_is_split_and_scored(models):
    """Another Python thread keeps running while one 8 MB text is split and scored."""
    import threading
    import time

    compiled, _ = models
    text = ("The committee met on Tuesday and approved the plan. " * 20 + "\n") * 8000
    ticks, done, ticking = [0], threading.Event(), threading.Event()

    def ticker():  # counts while it runs: it runs only while the GIL is free
        while not done.is_set():
            ticks[0] += 1
            ticking.set()
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        ticking.wait(10)
        before = ticks[0]
        spans, _ = native.split(text, 2000)
        while_splitting = ticks[0] - before
        before = ticks[0]
        native.score_spans(compiled, text, spans)
        while_scoring = ticks[0] - before
    finally:
        done.set()
        thread.join()
    # Each call (a hundred milliseconds or more) lets the other thread count on; holding the
    # GIL, it would count once at most, at the call's end.
    assert while_splitting > 5 and while_scoring > 5, (while_splitting, while_scoring)


def _extractor_readings() -> list[str]:
    """resiliparse's readings of the page set's HTML, as `dense` collapses and counts them: list
    items marked (bullets, ordered numbers), main content and the whole page."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    readings = []
    for html in _golden().page_set().pages().values():
        tree = HTMLTree.parse(html)
        for main_content in (True, False):
            readings.append(extract_plain_text(tree, main_content=main_content, list_bullets=True))
    return readings


def test_extractor_text_helpers_match_python_on_the_page_set(page_texts):
    """Collapsing lines and counting words, non-space characters and words without list marks:
    the compiled helpers give the Python references' results on the pages' readings."""
    from plexity_plugins.extractors import text

    marks = ["• ", "•", "1. ", "12.", "3.x", "٣. ", "². ", "\n• ", "\n7.\n", " • "]
    rng = random.Random(13)
    marked = ["".join(rng.choice(marks + PIECES) for _ in range(rng.randint(0, 60))) for _ in range(300)]
    texts = page_texts + _extractor_readings() + random_texts(300, seed=12) + marked + ["", "\n", " \n \n", "•"]
    for sample in texts:
        assert text.lines(sample) == text.lines_python(sample)
        assert text.words(sample) == text.words_python(sample)
        assert text.nonspace(sample) == text.nonspace_python(sample)
        assert text.marked_words(sample) == text.marked_words_python(sample)


def test_extractor_text_helpers_match_python_on_every_character():
    """Whitespace (str.split's), decimal digits (re's \\d) and line ends for every code point."""
    from plexity_plugins.extractors import text

    for code in range(0x110000):
        c = chr(code)
        for sample in (f"a{c}b", f"{c}. x\n{c}{c}.", f"x\n{c} \n"):
            assert text.lines(sample) == text.lines_python(sample), hex(code)
            assert text.words(sample) == text.words_python(sample), hex(code)
            assert text.nonspace(sample) == text.nonspace_python(sample), hex(code)
            assert text.marked_words(sample) == text.marked_words_python(sample), hex(code)


def test_finding_every_place_of_a_needle_matches_str_find(page_texts):
    """`find_all` gives the positions str.find gives one after the other, overlapping ones too,
    on pages (with and without their UTF-8 form kept, as a page decoded by utf8_text has it) and
    on random text whose characters' encodings contain the needle's bytes."""
    from plexity_plugins.extractors import decode_html, text

    html = list(_golden().page_set().pages().values())
    pages = html + [decode_html(page.encode("utf-8"))[0] for page in html] + page_texts
    for page in pages:
        for needle in ("@type", "itemtype", "og:type", "QAPage", "the", "é", "\u3000", "\n\n", ""):
            assert text.find_all(page, needle) == text.find_all_python(page, needle)
    rng = random.Random(14)
    alphabet = ["a", "@", "\x00", "\u4000", "\u0040", "\u6140", "\U00014000", "\U0010ffff", "é", "\u0100",
                "\u4061", "\ud800"]
    for _ in range(20000):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3)))
        kept = native.utf8_text(sample.encode("utf-8", "surrogatepass")) or sample
        for variant in (sample, kept):
            assert text.find_all(variant, needle) == text.find_all_python(variant, needle)


def test_finding_a_needle_in_long_text_of_few_letters_matches_str_find():
    """`find_all` compares 16 places of the text at a time, by the needle's first and last byte, then whole: on
    texts of up to 80 characters of a few letters (the needle's ends met far more often than the needle, near
    every edge of a block of 16 and at the very end), the positions str.find gives."""
    from plexity_plugins.extractors import text

    rng = random.Random(16)
    alphabet = ["a", "b", "ab", "é", "\u4061"]
    for _ in range(20000):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        kept = native.utf8_text(sample.encode("utf-8")) or sample
        for variant in (sample, kept):
            assert text.find_all(variant, needle) == text.find_all_python(variant, needle), (variant, needle)


def test_finding_the_first_places_of_a_needle_stops_after_them():
    """`find_all` with a limit gives the first `limit` positions of the whole search (all of them for a
    negative limit, none for 0), compiled as in the reference."""
    from plexity_plugins.extractors import text

    rng = random.Random(15)
    alphabet = ["a", "@", "é", "\u4000", "\U00014000", "ab"]
    for _ in range(5000):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 2)))
        every = text.find_all_python(sample, needle)
        kept = native.utf8_text(sample.encode("utf-8")) or sample
        for limit in (-1, 0, 1, 2, 4):
            expected = every if limit < 0 else every[:limit]
            assert text.find_all_python(sample, needle, limit) == expected
            for variant in (sample, kept):
                assert text.find_all(variant, needle, limit) == expected


def test_dense_reads_every_page_as_with_the_python_helpers(monkeypatch):
    """`dense` (and its link-density step) gives the same text with the compiled helpers as with
    the Python references, on every page of the set."""
    from plexity_plugins.extractors import declarations, dense, links, text

    assert text.lines is not text.lines_python  # (the compiled ones are in use)
    html = list(_golden().page_set().pages().values())
    compiled = [dense.html_to_text_dense(page) for page in html]
    monkeypatch.setattr(dense, "_lines", text.lines_python)
    monkeypatch.setattr(dense, "_words", text.words_python)
    monkeypatch.setattr(dense, "_marked_words", text.marked_words_python)
    monkeypatch.setattr(dense, "nonspace", text.nonspace_python)
    monkeypatch.setattr(dense, "find_all", text.find_all_python)
    monkeypatch.setattr(declarations, "find_all", text.find_all_python)
    monkeypatch.setattr(links, "nonspace", text.nonspace_python)
    assert [dense.html_to_text_dense(page) for page in html] == compiled


# -- an extension built from other sources stops the run ---------------------------------------

@pytest.mark.skipif(not native.ENABLED, reason="needs the compiled extension (PLEXITY_PURE_PYTHON unset)")
def test_an_extension_built_before_a_change_to_native_stops_the_run_naming_the_rebuild(tmp_path):
    """A checkout installed editable keeps its extension as built while its Python files follow a
    pull: an extension built from other native/ sources is refused in one line naming the command
    that rebuilds it (before, the Python reference ran instead, unsaid, at its speed)."""
    checkout = tmp_path / "checkout"
    # (the sources as they are, without git: a checkout from a tarball has no .git, and `git ls-files` failed there)
    build_products = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "*.egg-info", "build")
    for name in ("plexity_plugins", "native"):
        shutil.copytree(REPO / name, checkout / name, ignore=build_products)
    shutil.copy(REPO / "setup.py", checkout / "setup.py")
    built = Path(native._native.__file__)
    (checkout / "plexity_plugins" / "runtime" / built.name).write_bytes(built.read_bytes())
    sample = REPO / "examples" / "sample.warc.gz"

    def clean(**env):
        return subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", str(sample), "--output-dir",
                               str(tmp_path / f"out{len(list(tmp_path.iterdir()))}")], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(checkout), **env}, timeout=300)

    same = clean()
    assert same.returncode == 0, same.stderr[-2000:]
    with open(checkout / "native" / "learned_reader.cpp", "a") as source:
        source.write("// an edit since the build\n")
    stale = clean()
    assert stale.returncode == 3 and stale.stdout == ""
    assert stale.stderr.strip() == (
        f"plexity: error: plexity_plugins' compiled extension ({checkout / 'plexity_plugins' / 'runtime' / built.name})"
        f" was built from other sources than {checkout / 'native'} holds now (a pull or an edit since it was built):"
        f" rebuild it with `bash {checkout / 'scripts' / 'setup.sh'}` (or `pip install -e {checkout}`), or set"
        f" PLEXITY_PURE_PYTHON=1 to run the Python reference (the same results, slower)")
    reference = clean(PLEXITY_PURE_PYTHON="1")
    assert reference.returncode == 0, reference.stderr[-2000:]


def test_the_markup_depth_and_flattening_match_python_on_the_page_set_and_random_markup():
    """`extractors.nesting`'s pass over the markup (dense and fast ask it of every page) gives the
    Python reference's depth and flattened page, on the page set and on random markup built of the
    tokenizer's edge cases (comments, raw text, quotes, <select>, <svg>'s "/>", CDATA, wide characters)."""
    from plexity_plugins.extractors import nesting

    assert nesting.markup_depth is not nesting.markup_depth_python  # (the compiled one is in use)
    for page in _golden().page_set().pages().values():
        assert nesting.markup_depth(page) == nesting.markup_depth_python(page)
        assert nesting.flatten_markup(page, 12) == nesting.flatten_markup_python(page, 12)
    pieces = ["<div>", "</div>", "<p>", "</p>", "<b>", "</b>", "<table>", "<td>", "</td>", "<br>", "<!--", "-->",
              "--!>", "<!-->", "<script>", "</script>", "</SCRIPT ", "<!--<script>", "<a href='x>'>", '"', "'", "=",
              " ", "<", ">", "/", "<!x>", "</ x>", "\u00e9", "\u20ac", "\U0001f600", "<textarea>", "<select>",
              "</select>", "<input>", "<![CDATA[", "<svg>", "</svg>", "<path d=a/>", "<path/>", "<div/>",
              "<plaintext>", "<DIV class=a>", "\u017fcript", "\x00", "text"]
    rng = random.Random(5)
    for _ in range(3000):
        page = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 80)))
        for limit in (-1, 3, 8):
            assert nesting.markup_depth(page, limit) == nesting.markup_depth_python(page, limit), (page, limit)
        assert nesting.flatten_markup(page, 5) == nesting.flatten_markup_python(page, 5), page
