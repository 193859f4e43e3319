"""Every kind of bad input gets a clear outcome: an error naming the problem, or a counted skip."""

import pytest

from plexity_plugins import ModelError, PerplexityScorer
from plexity_plugins.scoring.models import resolve
from plexity_plugins.text.plexity_tokenizer import TOKENIZER_VERSION

from conftest import build_tiny_model
from helpers import executed_lines


@pytest.fixture(scope="module")
def scorer():
    return PerplexityScorer()


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n"])
def test_empty_or_whitespace_text_gives_an_empty_result(scorer, text):
    result = scorer.clean(text)
    assert result.text == ""
    assert result.sentences == 0 and result.dropped == []
    assert scorer.score(text) == []


def test_text_without_sentence_punctuation_is_scored_as_one_sentence(scorer):
    records = scorer.score("the river was cleaner than it had been for many years")
    assert len(records) == 1 and records[0].tokens == 11


def test_nul_bytes_are_replaced_and_counted(scorer):
    result = scorer.clean("The council met on Monday.\x00\x00 It approved the budget.", threshold=1e9)
    assert "\x00" not in result.text
    assert result.replaced_chars == 2


def test_invalid_utf8_is_decoded_with_replacement_and_counted(scorer):
    raw = "The council met on Monday. Café".encode() + b"\xe9\xff" + " was open.".encode()  # (UTF-8, stray bytes)
    result = scorer.clean(raw, threshold=1e9)
    assert "\ufffd" in result.text
    assert result.replaced_chars == 2


def test_lone_surrogates_are_replaced_and_counted(scorer):
    result = scorer.clean("Broken \udce9 text here.", threshold=1e9)
    assert result.replaced_chars == 1 and "\ufffd" in result.text


def test_non_text_input_is_a_type_error(scorer):
    with pytest.raises(TypeError, match="str or bytes"):
        scorer.clean(42)


def test_a_language_map_given_to_the_one_model_scorer_names_the_class_that_takes_it():
    from plexity_plugins import PerplexityScorer

    with pytest.raises(TypeError, match=r"multilingual.LanguageModels\(models\), not by PerplexityScorer"):
        PerplexityScorer({"en": "en-default"})


def test_every_kind_of_line_break_ends_a_block(scorer):
    # A lone \r (old Mac files), U+2028 or a form feed ends a line as \n does; \r\n stays as it is.
    lines = ["The council approved the budget on Tuesday after a long debate about school funding.",
             "Share on Facebook | Share on X | Email", "Home News Sport Weather"]
    for sep in ("\r", "\u2028", "\x0c", "\x85"):
        result = scorer.clean(sep.join(lines) + sep)
        assert result.blocks == [0, 1, 2] and result.text == lines[0]
    assert scorer.clean("The council met on Monday.\r\nThe library opens in May.").text == \
        "The council met on Monday.\r\nThe library opens in May."


def test_a_threshold_is_a_positive_number_said_in_one_error(scorer):
    import numpy

    assert scorer.clean("The council met.", threshold=numpy.float32(2000)).text == "The council met."
    for bad in ("2000", True, float("nan"), 0, -1):
        with pytest.raises(ValueError, match="threshold must be a positive perplexity"):
            scorer.clean("The council met.", threshold=bad)


def test_the_perplexity_of_no_sentence_is_an_error_not_a_number(scorer):
    # (score gives no sentence for it and document_perplexity None; it was the end token's alone)
    for empty in ("", "  \n"):
        assert scorer.score(empty) == [] and scorer.document_perplexity(empty) is None
        with pytest.raises(ValueError, match="no sentence to score"):
            scorer.perplexity(empty)


def test_ten_megabyte_single_line_is_cleaned_with_linear_work(scorer):
    """A line without punctuation is cut into sentences of bounded length, so ten times the text
    is ten times the sentences and about ten times the work (Python's part of it counted; the
    compiled split and scoring run the same sentences)."""
    line = "the council met and the budget was approved " * 23_000  # ~1 MB, no punctuation
    small = scorer.clean(line)
    big = scorer.clean(line * 10)  # ~10 MB
    assert big.sentences == pytest.approx(10 * small.sentences, rel=0.01)
    assert executed_lines(scorer.clean, line * 10) < 12 * executed_lines(scorer.clean, line)


def test_unknown_model_name_says_what_exists(model_dir):
    with pytest.raises(ModelError, match=r"unknown model 'nope'.*available: en-default"):
        PerplexityScorer("nope")


def test_paper_model_names_say_how_to_build_them(model_dir):
    with pytest.raises(ModelError, match=r"plexity train --corpus bnc --order 3 --name trigrams-bnc"):
        PerplexityScorer("trigrams-bnc")


def test_missing_model_file_is_named(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        PerplexityScorer(str(tmp_path / "absent.bin"))


def test_corrupt_model_file_is_reported_when_opened(tmp_path):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "model.bin").write_bytes(b"this is not a KenLM model" * 100)
    (bad / "model.json").write_text('{"name": "broken", "tokenizer_version": "%s", "threshold": 100}' % TOKENIZER_VERSION)
    scorer = PerplexityScorer(bad)
    with pytest.raises(ModelError, match=r"cannot load KenLM model .*model.bin"):
        scorer.clean("Some text.")


def test_a_model_file_damaged_inside_its_tables_is_refused_by_the_checksum_its_card_records(tmp_path, tiny_model):
    """A model.bin whose bytes changed after it was trained or imported (bits flipped on a disk, a copy gone wrong)
    opens, as KenLM reads its header only: one such copy in six segfaulted the process at its first sentence, three
    scored without a word, wrongly.  Every card written (`plexity train`, `models import`, the embedded model's build)
    records the KenLM file's SHA-256, and a model whose file is not that file is refused when it is opened, naming
    it, and by a run's driver, which records the checksum, before any task; KenLM's own account of a file cut short
    comes first (tests/test_hostile_probe35.py)."""
    import hashlib
    import json
    import shutil

    card = json.loads((tiny_model / "model.json").read_text())
    assert card["sha256"] == hashlib.sha256((tiny_model / "model.bin").read_bytes()).hexdigest()
    assert PerplexityScorer(tiny_model).perplexity("The cat sat on the mat.") > 0

    damaged = shutil.copytree(tiny_model, tmp_path / "damaged")
    data = bytearray((damaged / "model.bin").read_bytes())
    middle = len(data) // 2
    data[middle:middle + 20] = bytes(b ^ 0xFF for b in data[middle:middle + 20])
    (damaged / "model.bin").write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"model file .*damaged.model\.bin is not the file its model.json was "
                                         r"written with \(SHA-256 [0-9a-f]{12}\.\.\., the card says "
                                         + card["sha256"][:12] + r"\.\.\.\): it was damaged or replaced since"):
        PerplexityScorer(damaged).clean("The cat sat on the mat.")
    from plexity_plugins.scoring.models import model_checksum

    with pytest.raises(ModelError, match="is not the file its model.json was written with"):
        model_checksum(resolve(damaged))  # (what a run's driver records of its model: `plexity run` stops before any
        # task, which each failed naming the file, "re-run the same command to run only those")

    card["sha256"] = "not a checksum"
    (damaged / "model.json").write_text(json.dumps(card))
    with pytest.raises(ModelError, match=r"'sha256' is 'not a checksum': the KenLM file's SHA-256"):
        PerplexityScorer(damaged)


def test_model_of_another_tokenizer_version_is_refused(tmp_path, tiny_model):
    old = build_tiny_model(tmp_path / "old", name="old", tokenizer_version="plexity-tok-0")
    info = resolve(old)
    assert info.tokenizer_version == "plexity-tok-0"
    with pytest.raises(ModelError, match=r"tokenizer 'plexity-tok-0'.*meaningless"):
        PerplexityScorer(old)
    scorer = PerplexityScorer(old, allow_tokenizer_mismatch=True)  # explicit opt-in, with a warning
    assert scorer.perplexity("The cat sat.") > 0


def test_model_without_threshold_needs_one(tmp_path):
    model = build_tiny_model(tmp_path / "nothreshold", name="nothreshold", threshold=None)
    with pytest.raises(ModelError, match="no default threshold"):
        PerplexityScorer(model).clean("The cat sat.")
    assert PerplexityScorer(model, threshold=100).clean("The cat sat.").sentences == 1
