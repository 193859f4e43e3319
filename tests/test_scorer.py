"""The shared scorer, with the embedded model and tiny lmplz-built models."""

import gc
import json
import math
import pickle
import shutil
from contextlib import contextmanager
from pathlib import Path

import kenlm
import pytest

from conftest import TINY_CORPUS, build_tiny_model
from plexity_plugins import PerplexityScorer
from plexity_plugins.scoring.scorer import sanitize
from plexity_plugins.text.plexity_tokenizer import to_lm_line

ARTICLE = (
    "The city council approved the budget on Tuesday after a long debate.\n"
    "Share on Facebook\n"
    "The new plan increases spending on schools and public transport, the mayor said.\n\n"
    "Accept all cookies\n"
    "Residents will be able to comment on the proposals until the end of the month."
)


@pytest.fixture(scope="module")
def scorer():
    return PerplexityScorer()


def test_embedded_model_is_the_default(scorer):
    assert scorer.model_name == "en-default"
    assert scorer.info.order == 3
    assert scorer.threshold == scorer.info.threshold > 0


def test_perplexity_follows_the_documented_formula(tiny_model):
    scorer = PerplexityScorer(tiny_model)
    record, = scorer.score("The cat sat on the zebra.")
    line = to_lm_line(record.text)
    lm = kenlm.Model(str(tiny_model / "model.bin"))
    logprob = sum(prob for prob, _, _ in lm.full_scores(line, bos=True, eos=True))
    n = len(line.split())
    assert record.tokens == n == 7
    assert record.oov == 1  # "zebra" is not in the tiny corpus
    # summed as KenLM sums (single precision: kenlm.Model.score), the same as clean() sums
    assert record.perplexity == 10 ** (-lm.score(line, bos=True, eos=True) / (n + 1))
    assert math.isclose(record.perplexity, 10 ** (-logprob / (n + 1)), rel_tol=1e-6)
    assert math.isclose(record.perplexity, lm.perplexity(line), rel_tol=1e-6)


@pytest.mark.parametrize("method", ["sentences", "region", "trim"])
def test_score_perplexity_and_clean_give_the_very_same_numbers(method):
    """One summation of log-probabilities: `plexity calibrate` (which uses score) sets
    thresholds on exactly the numbers clean() decides on.  (score() used to sum in double
    precision and clean() in single: the last digits differed.)"""
    scorer = PerplexityScorer(method=method, language_check=False)
    text = ARTICLE * 3
    scored = scorer.score(text)
    result = scorer.clean(text)
    assert [s.perplexity for s in scored] == result.perplexities
    assert [(s.start, s.end) for s in scored] == result.spans
    assert [s.tokens for s in scored] == result.token_counts
    assert [scorer.perplexity(s.text) for s in scored] == result.perplexities


def test_score_gives_spans_into_the_input(scorer):
    records = scorer.score(ARTICLE)
    assert [r.text for r in records][:2] == [
        "The city council approved the budget on Tuesday after a long debate.", "Share on Facebook"]
    for r in records:
        assert ARTICLE[r.start:r.end] == r.text
        assert r.tokens > 0 and r.oov is not None


def test_boilerplate_scores_far_above_prose(scorer):
    prose = scorer.perplexity("this is normal text")
    junk = scorer.perplexity("this is normal HTML PAGE BOI%& 678346 NOR text")
    assert junk >= 10 * prose


def test_clean_drops_boilerplate_and_keeps_prose_verbatim(scorer):
    result = scorer.clean(ARTICLE)
    assert "Share on Facebook" not in result.text
    assert "Accept all cookies" not in result.text
    assert result.text == (
        "The city council approved the budget on Tuesday after a long debate.\n"
        "The new plan increases spending on schools and public transport, the mayor said.\n\n"
        "Residents will be able to comment on the proposals until the end of the month."
    )
    assert (result.sentences_kept, result.sentences_dropped) == (3, 2)
    assert result.chars_dropped == len("Share on Facebook") + len("Accept all cookies")
    assert result.chars_kept + result.chars_dropped == sum(len(s) for s in ARTICLE.split("\n"))
    assert [d.text for d in result.dropped] == ["Share on Facebook", "Accept all cookies"]
    assert all(d.perplexity > result.threshold and d.reason == "outside_main_content_region" for d in result.dropped)
    assert len(result.perplexities) == 5


def test_the_dropped_sentences_agree_with_their_perplexities_and_are_built_once(scorer):
    """Counting needs no object per dropped sentence; asking for them gives them all, once."""
    result = scorer.clean(ARTICLE)
    assert result.dropped_perplexities == [p for p in result.perplexities if p > result.threshold]
    assert result.dropped is result.dropped
    assert [d.text for d in result.dropped] == ["Share on Facebook", "Accept all cookies"]
    assert [d.perplexity for d in result.dropped] == result.dropped_perplexities
    assert [ARTICLE[d.start:d.end] for d in result.dropped] == [d.text for d in result.dropped]


def test_neighbouring_kept_sentences_keep_their_spacing(scorer):
    text = "The council met on Monday.  It approved the budget."
    assert scorer.clean(text, threshold=1e9).text == text


def test_a_kept_run_longer_than_the_sentence_cap_comes_out_verbatim(scorer):
    # 2,500 characters without whitespace are cut into pieces of at most 1,000 for scoring;
    # kept, they are joined back without anything between them.
    text = ("The council approved the budget for the library. " + "a" * 2500
            + " The mayor said the road would be finished soon.")
    result = scorer.clean(text, threshold=1e12)
    assert result.sentences_kept == 4 and result.sentences_dropped == 0  # the run in three pieces, one with prose
    assert result.text == text


def test_annotate_keeps_everything_and_marks_drops(scorer):
    result = scorer.clean(ARTICLE, annotate=True)
    for line in ARTICLE.replace("Share on Facebook", "").replace("Accept all cookies", "").split("\n"):
        assert line in result.text
    assert '<ppl score="' in result.text
    assert result.text.count("<ppl ") == result.sentences_dropped == 2
    marked = result.text.split('<ppl score="')[1]
    assert float(marked.split('"')[0]) > result.threshold
    assert marked.split(">", 1)[1].startswith("Share on Facebook</ppl>")


def test_threshold_argument_overrides_the_model_default(scorer):
    assert scorer.clean(ARTICLE, threshold=1e12).sentences_dropped == 0
    assert scorer.clean(ARTICLE, threshold=1.0).sentences_kept == 0
    assert PerplexityScorer(threshold=1.0).clean(ARTICLE).sentences_kept == 0


def test_invalid_threshold_is_refused():
    with pytest.raises(ValueError, match="positive"):
        PerplexityScorer(threshold=-3)


def mappings(path) -> int:
    """How many times this process has `path` memory-mapped (KenLM maps a binary model)."""
    with open("/proc/self/maps") as maps:
        return sum(1 for line in maps if line.rstrip().endswith(str(path)))


@contextmanager
def collections_paused():
    """Counting mappings is exact only while no garbage collection runs: a scorer of an earlier
    test caught in a reference cycle, freed mid-count, unmaps its model (CI once saw 6 == 5 + 2)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_scorer_pickles_without_the_model_and_reopens_it(scorer):
    scorer.perplexity("warm up")  # opens the model
    pickled = pickle.dumps(scorer)
    assert len(pickled) < Path(scorer.info.path).stat().st_size / 100  # not the model: its name and settings
    with collections_paused():
        opened = mappings(scorer.info.path)
        copy = pickle.loads(pickled)
        assert mappings(scorer.info.path) == opened  # nothing opened by unpickling ...
        assert copy.perplexity("The cat sat.") == scorer.perplexity("The cat sat.")
        assert mappings(scorer.info.path) == opened + 1  # ... the model, on first use


def test_a_model_rebuilt_under_its_path_pickles_differently(tmp_path):
    """A cache keyed by a pickled step (datasets' `map` hashes its function with dill, a scorer as its state) tells
    a model rebuilt in place from the old one: before, lmplz's new model.bin under an unchanged card (here one
    without a checksum, as scored as it is) pickled the same, and a re-run got the old model's results."""
    folder = build_tiny_model(tmp_path / "model")
    card = json.loads((folder / "model.json").read_text())
    (folder / "model.json").write_text(json.dumps({**card, "sha256": None}))
    old = pickle.dumps(PerplexityScorer(folder))
    assert pickle.dumps(PerplexityScorer(folder)) == old  # the same model: a cache finds its results
    old_perplexity = pickle.loads(old).perplexity("Zebras crossed the harbour.")

    rebuilt = build_tiny_model(tmp_path / "rebuilt", corpus=TINY_CORPUS + "Zebras crossed the harbour at dawn.\n")
    shutil.copyfile(rebuilt / "model.bin", folder / "model.bin")
    new = PerplexityScorer(folder)
    assert pickle.dumps(new) != old
    assert pickle.loads(pickle.dumps(new)).perplexity("Zebras crossed the harbour.") != old_perplexity


def test_arpa_models_load_too(tiny_arpa_model, tiny_model):
    arpa = PerplexityScorer(tiny_arpa_model)
    binary = PerplexityScorer(tiny_model)
    assert arpa.info.path.endswith("model.arpa")
    assert math.isclose(arpa.perplexity("The cat sat on the mat."), binary.perplexity("The cat sat on the mat."),
                        rel_tol=1e-4)


GERMAN = (
    "Der Gemeinderat hat am Dienstag nach einer langen Debatte den Haushalt beschlossen. "
    "Der neue Plan erhöht die Ausgaben für Schulen und den öffentlichen Nahverkehr, sagte die Bürgermeisterin.\n"
    "Teilen auf Facebook"
)


def test_text_in_another_language_passes_through_unfiltered(scorer):
    result = scorer.clean(GERMAN)
    assert result.passthrough == "language:de"
    assert result.text == GERMAN
    assert result.sentences_dropped == 0 and result.chars_kept == len(GERMAN)


def test_language_check_can_be_turned_off():
    result = PerplexityScorer(language_check=False).clean(GERMAN)
    assert result.passthrough is None
    assert result.sentences_dropped >= 2  # an English model finds German improbable ...
    assert all(d.text in GERMAN and d.perplexity > result.threshold for d in result.dropped)  # ... its sentences


def test_english_text_is_filtered_not_passed_through(scorer):
    assert scorer.clean(ARTICLE).passthrough is None


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_text_bytes_in_utf_16_and_32_are_decoded_by_their_bom_or_their_nul_pattern(codec):
    text = "The council approved the budget. Ünïcode ✓ 日本"
    assert sanitize(text.encode(codec)) == (text, 0)


def test_undecodable_bytes_are_replaced_and_counted_but_not_a_nul_run():
    assert sanitize("café abc".encode() + b"\xff\xfe def") == ("café abc\ufffd\ufffd def", 2)  # (UTF-8, stray bytes)
    legacy = "Привет, мир. Как дела?"  # (another script's 8-bit encoding: read in it, not as Latin letters)
    assert sanitize(legacy.encode("cp1251")) == (legacy, 0)  # (uchardet names it: tests/test_languages_probe36.py)
    assert sanitize(b"\x81\x8d\x8f\x90\x9d") == ("\ufffd" * 5, 5)  # (no letters: UTF-8, not windows-1252)
    assert sanitize(b"\x00" * 20) == (" " * 20, 20)  # NULs: spaces, counted; not taken for UTF-16


def test_clean_result_shows_its_decision_sentence_by_sentence(scorer):
    result = scorer.clean(ARTICLE)
    n = len(result.spans)
    assert n == result.sentences == len(result.token_counts) == len(result.blocks) == len(result.keep) \
        == len(result.perplexities)
    assert result.source == ARTICLE
    assert [ARTICLE[a:b] for (a, b), kept in zip(result.spans, result.keep) if not kept] == \
        [s.text for s in result.dropped]
    assert result.blocks == sorted(result.blocks) and result.blocks[0] == 0
    assert sum(result.keep) == result.sentences_kept


def test_open_opens_what_clean_uses(tiny_model):
    """The model the scoring path uses (the compiled one, or the kenlm module's without it),
    once: clean() then opens nothing more, and the other one is never opened as well."""
    model = PerplexityScorer(tiny_model).info.path
    with collections_paused():
        before = mappings(model)
        scorer = PerplexityScorer(tiny_model).open()
        assert mappings(model) == before + 1
        assert scorer.clean("The cat sat on the mat. The dog sat on the rug.").sentences == 2
        assert mappings(model) == before + 1


def test_warm_ups_open_what_clean_uses_and_nothing_else():
    """The Scrapy pipeline's open_spider and the web server's ScorerCache used to open the
    kenlm module's model (`scorer.lm`), which clean() does not use on the compiled path: the
    compiled model was then still opened inside the first item / request."""
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline
    from plexity_plugins.web.app import ScorerCache

    model = PerplexityScorer().info.path
    with collections_paused():
        before = mappings(model)
        pipeline = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_EXTRACTOR": "tags",
                                                                                    "PLEXITY_THREADS": 0}))
        pipeline.open_spider()
        pipeline.close_spider()
        scorers = (pipeline.scorer, ScorerCache().get(None))
        assert mappings(model) == before + 2  # each warm-up opened its scorer's model once
        for scorer in scorers:
            assert scorer.clean("The cat sat on the mat. The dog sat on the rug.").sentences == 2
        assert mappings(model) == before + 2  # and cleaning opened nothing more


def test_latin_1_text_bytes_are_read_as_an_unlabelled_page_is():
    # Before: a text file saved by an old editor in Latin-1 or windows-1252 lost every accented letter ("Gr\ufffd\ufffde
    # aus K\ufffdln"), counted as replaced characters, though a page of the same bytes reads "Grüße": bytes none of
    # which is part of a UTF-8 character, of Latin-script words, are windows-1252 (io.decoding.unlabelled_encoding)
    text = "Grüße aus Köln. Le café «Olé» coûte 3 €.\n"
    assert sanitize(text.encode("cp1252")) == (text, 0)
    assert sanitize("Grüße aus Köln.".encode("latin-1")) == ("Grüße aus Köln.", 0)
