"""Hostile-input probe 35: what a stranger hands us besides pages and WARCs: model folders and their cards,
training corpora and calibration samples, datasets, Scrapy items.

A model's card (``model.json``) was taken as it was written.  A card edited by hand with ``"threshold": "500"``
or ``[500]`` ended `plexity score` and `plexity clean` in a TypeError traceback; ``true`` was a threshold of 1.0
and ``Infinity`` one that keeps everything, both used without a word; an ``"order": "3"`` was "has order 3 but its
metadata says 3"; a ``"language": 5`` or a ``"build": []`` a traceback in the language gate or in `plexity
models`; a misspelt ``"treshold": 400`` was ignored, the old default scoring in its place; a key given twice
kept the last silently.  Now each is one line naming the card and the key (`scoring.models._card_problem`): the
command stops (exit 2), and `plexity models` lists the other models and says why it skips that one.
"""

from __future__ import annotations

import json
import shutil

import pytest

from helpers import run_plexity
from plexity_plugins.errors import ModelError
from plexity_plugins.scoring.models import list_models, resolve


# -- model cards --------------------------------------------------------------------------------------------------

def _card_copy(tiny_model, model_dir, name: str, patch: dict | None = None, raw: str | None = None):
    folder = model_dir / name
    shutil.copytree(tiny_model, folder)
    if raw is None:
        card = json.loads((folder / "model.json").read_text())
        card.update(patch or {})
        raw = json.dumps(card)
    (folder / "model.json").write_text(raw)
    return folder


@pytest.mark.parametrize("patch, said", [
    ({"threshold": "500"}, "'threshold' is '500': a positive perplexity"),
    ({"threshold": [500]}, "'threshold' is [500]: a positive perplexity"),
    ({"threshold": True}, "'threshold' is True"),
    ({"threshold": float("inf")}, "'threshold' is inf"),
    ({"threshold": float("nan")}, "'threshold' is nan"),
    ({"threshold_extracted": -3}, "'threshold_extracted' is -3"),
    ({"document_threshold": "x"}, "'document_threshold' is 'x'"),
    ({"order": "3"}, "'order' is '3': a whole number"),
    ({"order": 0}, "'order' is 0: a whole number of 1 or more"),
    ({"language": 5}, "'language' is 5: a string, or null"),
    ({"tokenizer_version": ["plexity-tok-1"]}, "'tokenizer_version' is ['plexity-tok-1']"),
    ({"sp_model": 5}, "'sp_model' is 5"),
    ({"build": []}, "'build' is []: an object"),
    ({"name": 5}, "'name' is 5"),
    ({"treshold": 400}, "'treshold', which is no key of a model's metadata: did you mean 'threshold'?"),
])
def test_a_card_value_of_the_wrong_type_is_one_error_naming_the_card_and_the_key(tiny_model, model_dir, patch, said):
    """Each was used as it was (a traceback at the first comparison, a threshold of 1.0 for `true`, a misspelt key
    ignored); now resolving the model says what is wrong, naming its model.json."""
    folder = _card_copy(tiny_model, model_dir, "edited", patch)
    with pytest.raises(ModelError) as caught:
        resolve("edited")
    assert str(caught.value) == f"model metadata {folder / 'model.json'}: {said}" or said in str(caught.value)
    assert str(folder / "model.json") in str(caught.value)


def test_a_key_given_twice_and_a_huge_card_are_refused_and_other_keys_and_nulls_are_taken(tiny_model, model_dir):
    card = (tiny_model / "model.json").read_text()
    _card_copy(tiny_model, model_dir, "twice", raw=card.replace('"threshold": 500.0', '"threshold": 500.0, "threshold": 5'))
    with pytest.raises(ModelError, match="the key 'threshold' is given twice"):
        resolve("twice")
    _card_copy(tiny_model, model_dir, "huge", raw=card[:-2] + ', "description": "' + "x" * (17 << 20) + '"}')
    with pytest.raises(ModelError, match=r"huge/model.json is 17,8\d\d,\d\d\d bytes, not a model's metadata"):
        resolve("huge")
    # a key of a newer version (no near miss of a known one) is left alone; null text fields read as empty
    _card_copy(tiny_model, model_dir, "newer", {"trained_on_gpu": True, "licence": None, "language": None})
    info = resolve("newer")
    assert (info.licence, info.language, info.threshold) == ("", None, 500.0)


def test_plexity_score_and_models_say_a_broken_card_in_one_line(tiny_model, model_dir):
    """`plexity score --model edited` ended in a 20-line TypeError traceback, and `plexity models` in an
    AttributeError on a card whose build was a list: every other model unlisted."""
    _card_copy(tiny_model, model_dir, "edited", {"threshold": "500"})
    _card_copy(tiny_model, model_dir, "listed", {"build": []})
    _card_copy(tiny_model, model_dir, "fine")
    score = run_plexity("score", "--model", "edited", "The cat sat on the mat.", timeout=60)
    assert score.returncode == 2, score.stderr
    assert score.stderr.strip().splitlines() == [
        f"plexity score: error: model metadata {model_dir / 'edited' / 'model.json'}: 'threshold' is '500': a "
        f"positive perplexity (a number, not in quotes), or null for none"]
    models = run_plexity("models", timeout=60)
    assert models.returncode == 0 and "Traceback" not in models.stderr, models.stderr
    assert "\nfine " in models.stdout and "\nlisted " not in models.stdout
    assert f"skipping {model_dir / 'listed'}: model metadata {model_dir / 'listed' / 'model.json'}: 'build' is []" \
        in models.stderr
    assert [info.name for info in list_models()][1:] == ["fine"]
