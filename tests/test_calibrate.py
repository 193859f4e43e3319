"""`plexity calibrate`: a model's perplexities on held-out clean text and boilerplate, a
suggested threshold, and `--write` storing it as the model's default."""

from __future__ import annotations

import json
import random
import shutil
import statistics
from pathlib import Path

import pytest

from plexity_plugins import PerplexityScorer
from plexity_plugins.training import ModelTrainer, thresholds
from plexity_plugins.cli import main

from fixtures.training import synthetic_corpus as synth


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A real order-3 model of 300 lines of template prose, installed in a private directory."""
    root = tmp_path_factory.mktemp("calibrate")
    rng = random.Random(7)
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(" ".join(synth.general_sentences(rng, 3)) for _ in range(300)))
    ModelTrainer("text", [corpus], "news", 3, memory="64M", output_dir=root / "models").run()
    return root / "models" / "news"


@pytest.fixture
def model(trained, model_dir) -> Path:
    """A fresh copy of the trained model, installed in this test's $PLEXITY_MODEL_DIR."""
    return Path(shutil.copytree(trained, model_dir / "news"))


@pytest.fixture
def samples(tmp_path) -> tuple[Path, Path]:
    rng = random.Random(99)  # not the training seed: unseen sentences
    clean = tmp_path / "clean.txt"
    clean.write_text("\n".join(" ".join(synth.general_sentences(rng, 2)) for _ in range(100)) + "\n")
    boilerplate = tmp_path / "boilerplate.txt"
    boilerplate.write_text("# one sample a line; '#' starts a comment\n" + "\n".join(synth.BOILERPLATE) + "\n")
    return clean, boilerplate


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["calibrate", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def suggested(out: str, field: str = "threshold") -> float:
    line = next(line for line in out.splitlines() if line.startswith(f"suggested {field}:"))
    return float(line.split()[2])


def test_calibrate_prints_the_distribution_and_a_suggestion_without_writing(capsys, model, samples):
    clean, boilerplate = samples
    before = (model / "model.json").read_text()
    code, out, _ = run(capsys, "--model", "news", clean, "--boilerplate", boilerplate)
    assert code == 0
    assert (model / "model.json").read_text() == before

    scorer = PerplexityScorer("news")
    clean_ppl = [s.perplexity for line in clean.read_text().splitlines() for s in scorer.score(line)]
    assert suggested(out) == thresholds.percentile_threshold(clean_ppl, 99)
    assert suggested(out, "threshold_extracted") == thresholds.percentile_threshold(clean_ppl, 99.9)
    lines = out.splitlines()
    assert lines[1].split() == ["percentile", "clean", "boilerplate"]
    assert [line.split()[0] for line in lines[2:10]] == ["50", "75", "90", "95", "98", "99", "99.5", "99.9"]
    assert lines[10].split() == ["sentences", str(len(clean_ppl)), str(len(synth.BOILERPLATE))]
    assert "drops 100.0% of the boilerplate" in out  # every synthetic boilerplate line is far above
    assert "pass --write" in out


def test_calibrate_write_changes_the_models_default_threshold(capsys, model, samples):
    clean, boilerplate = samples
    old = PerplexityScorer("news").threshold
    old_extracted = PerplexityScorer("news", method="trim").threshold
    code, out, _ = run(capsys, "--model", "news", clean, "--boilerplate", boilerplate, "--percentile", "98",
                       "--write")
    assert code == 0
    new, new_extracted = suggested(out), suggested(out, "threshold_extracted")
    assert new != old and new_extracted != old_extracted
    assert f"wrote default threshold {new} and threshold_extracted {new_extracted} to {model / 'model.json'}" in out

    assert PerplexityScorer("news").threshold == new
    assert PerplexityScorer("news", method="trim").threshold == new_extracted
    meta = json.loads((model / "model.json").read_text())
    assert meta["threshold_procedure"].startswith("threshold: 98th, threshold_extracted: 99.9th percentile of")
    assert "by `plexity calibrate`" in meta["threshold_procedure"]
    assert "6 and 6 of 6 boilerplate sentences (boilerplate.txt) lie above them" in meta["threshold_procedure"]
    assert meta["build"]["calibration"]["previous_threshold"] == old
    assert meta["build"]["calibration"]["previous_threshold_extracted"] == old_extracted
    assert meta["build"]["calibration"]["clean_percentiles"]["98"] == new
    assert meta["tokens"] > 0 and meta["build"]["heldout"]["documents"] > 0  # the rest is kept


def test_a_higher_percentile_suggests_a_higher_threshold(capsys, model, samples):
    clean, _ = samples
    low = suggested(run(capsys, "--model", "news", clean, "--percentile", "50")[1])
    high = suggested(run(capsys, "--model", "news", clean, "--percentile", "99")[1])
    assert low < high


def test_calibrate_can_give_a_model_without_a_threshold_its_first(capsys, model_dir, samples):
    from conftest import build_tiny_model

    build_tiny_model(model_dir / "bare", name="bare", threshold=None)
    clean, _ = samples
    assert run(capsys, "--model", "bare", clean, "--write")[0] == 0
    assert PerplexityScorer("bare").threshold > 0


def test_a_model_without_a_threshold_stops_a_pipeline_where_it_is_made(model_dir):
    # (before, its first document failed, mid-run; in Scrapy, mid-crawl, the item lost)
    from conftest import build_tiny_model
    from scrapy.utils.test import get_crawler

    from plexity_plugins.datatrove import PerplexitySentenceFilter
    from plexity_plugins.errors import ModelError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    build_tiny_model(model_dir / "bare", name="bare", threshold=None)
    # (in a map, the model's key is named, and --threshold is not the way out: it would be every model's)
    in_map = r"model 'bare' \(mapped to 'de'\) has no default threshold"
    for model, said in (("bare", "model 'bare' has no default threshold"),
                        ({"en": "en-default", "de": "bare"}, in_map)):
        with pytest.raises(ModelError, match=said):
            PerplexitySentenceFilter(model=model)
        with pytest.raises(ModelError, match=said):
            PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"PLEXITY_MODEL": model}))
    assert PerplexitySentenceFilter(model="bare", threshold=500.0).threshold == 500.0


def test_the_embedded_model_is_read_only(capsys, samples):
    clean, _ = samples
    code, out, err = run(capsys, clean, "--write")  # no --model: the embedded en-default
    assert code == 2 and "embedded model, which is read-only" in err


def test_an_imported_copy_of_the_embedded_model_takes_a_threshold(capsys, model_dir, samples):
    # `plexity models import` links the embedded model.bin; its own model.json is writable
    from plexity_plugins.scoring.models import EMBEDDED_DIR

    clean, _ = samples
    assert main(["models", "import", "mine", "--kenlm", str(EMBEDDED_DIR / "en-default" / "model.bin"),
                 "--tokenizer", "plexity-tok-1", "--language", "en"]) == 0
    assert (model_dir / "mine" / "model.bin").is_symlink()
    code, out, err = run(capsys, "--model", "mine", clean, "--write")
    assert code == 0, err
    assert PerplexityScorer("mine").threshold == suggested(out)


def test_a_threshold_from_too_few_clean_sentences_is_warned_of_and_recorded_with_it(capsys, model, samples):
    # Before: 100 clean sentences gave a 99.9th percentile past the highest of their perplexities, and only a
    # "rough estimates" line among the table said so, recorded nowhere.
    clean, _ = samples
    code, out, err = run(capsys, "--model", "news", clean, "--write")
    assert code == 0, err
    sentences = next(line for line in out.splitlines() if line.strip().startswith("sentences")).split()[1]
    too_few = (f"{int(sentences):,} sentences are too few for threshold_extracted (the 99.9th percentile needs "
               f"1,000): with fewer, no sentence lies above the percentile, which is extrapolated past the highest "
               f"perplexity, not measured")
    assert err.splitlines() == [f"plexity calibrate: warning: {too_few}; give more held-out clean text"]
    meta = json.loads((model / "model.json").read_text())
    assert meta["threshold_procedure"].endswith(f"; {too_few}") and meta["build"]["threshold_too_few"] == too_few
    assert main(["models"]) == 0 and f"    threshold: {too_few}" in capsys.readouterr().out.splitlines()
    # At the 98th percentile 100 sentences suffice for threshold (50 would not).
    assert thresholds.too_few_for(100, {"threshold": 98}) is None
    assert thresholds.too_few_for(49, {"threshold": 98}).startswith("49 sentences are too few for threshold (the 98th")


def test_too_little_clean_text_is_refused(capsys, model, tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("# a comment\nThe council approved the budget.\n")
    code, _, err = run(capsys, "--model", "news", one)
    assert code == 2 and "at least 2 clean sentences" in err and "one.txt" in err


def test_a_missing_file_is_named_before_any_text_is_scored(capsys, model, samples, tmp_path):
    clean, _ = samples
    code, _, err = run(capsys, "--model", "news", clean, "-b", tmp_path / "absent.txt")
    assert code == 2 and "absent.txt: no such file or directory" in err


def test_a_binary_or_latin_1_file_is_no_clean_text(capsys, model, tmp_path):
    # (as plexity train refuses them; read with replacement characters they gave a threshold)
    (tmp_path / "random.bin").write_bytes(bytes(range(256)) * 20)
    latin1 = "Le conseil a approuvé le budget.\nLa bibliothèque ouvre.\n".encode("latin-1")
    (tmp_path / "latin1.txt").write_bytes(latin1)
    for name, said in (("random.bin", "binary data (NUL and control bytes), not text"), ("latin1.txt", "not UTF-8 text")):
        code, _, err = run(capsys, "--model", "news", tmp_path / name)
        assert code == 2 and f"{name}: {said}" in err


def kept(perplexities: list[float], threshold: float) -> int:
    return sum(p <= threshold for p in perplexities)  # (a sentence at or below the threshold is kept)


def test_the_threshold_is_rounded_only_as_far_as_it_keeps_the_same_sentences_as_the_percentile():
    # 200,000 held-out sentences of a toy model (perplexities 2 to 10, shown to 4 significant digits): rounded
    # to 9.92, the 99th percentile (9.920095...) kept 3 sentences fewer than the percentile itself, and each
    # percentile of the rule 3 to 13 sentences more or fewer
    rng = random.Random(1)
    perplexities = [2 + 8 * rng.random() for _ in range(200_000)]
    cuts = statistics.quantiles(sorted(perplexities), n=1000)
    for percentile in (50, 90, 99, 99.9):
        unrounded = cuts[round(percentile * 10) - 1]
        threshold = thresholds.percentile_threshold(perplexities, percentile)
        assert kept(perplexities, threshold) == kept(perplexities, unrounded)
        assert abs(threshold - unrounded) < 0.001  # (still rounded: 9.920095 for the 99th)
    assert thresholds.percentile_threshold(perplexities, 99) == 9.920095


def test_calibrate_suggests_a_threshold_that_keeps_the_clean_sentences_the_percentile_keeps(capsys, model, tmp_path):
    rng = random.Random(5)
    clean = tmp_path / "clean.txt"
    clean.write_text("\n".join(" ".join(synth.general_sentences(rng, 2)) for _ in range(3000)) + "\n")
    code, out, _ = run(capsys, "--model", "news", clean)
    assert code == 0
    scorer = PerplexityScorer("news")
    perplexities = [s.perplexity for line in clean.read_text().splitlines() for s in scorer.score(line)]
    cuts = statistics.quantiles(sorted(perplexities), n=1000)
    assert kept(perplexities, suggested(out)) == kept(perplexities, cuts[989])
    assert kept(perplexities, suggested(out, "threshold_extracted")) == kept(perplexities, cuts[998])
