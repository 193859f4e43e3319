"""A stranger's first day, probe 34: a researcher reproduces the paper (Fernández-Pichel et al. 2023, pyplexity)
with the Python API and `plexity train`/`calibrate`, compares models of other orders, thresholds and languages,
then scales the step up in a datatrove pipeline beside datatrove's own steps, several tasks and workers, and
reads its stats and logs. Each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build_tiny_model

REPO = Path(__file__).resolve().parent.parent


def plexity(*args, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def set_threshold(model: Path, threshold: float) -> None:
    """What `plexity calibrate --write` does to a model's sentence thresholds (both methods' alike here)."""
    data = json.loads((model / "model.json").read_text())
    data["threshold"] = data["threshold_extracted"] = threshold
    (model / "model.json").write_text(json.dumps(data))


# -- a model folder copied to make a variant ----------------------------------------------------------------

def test_a_model_folder_copied_under_another_name_is_listed_scored_and_served_by_that_name(model_dir):
    """A researcher copies a trained model's folder to calibrate a variant (`cp -r news news-95`, then
    `plexity calibrate --model news-95 ... --percentile 95 --write`). Before, the copy kept the name its
    model.json was written with: `plexity models` listed `news` twice (the name that finds the copy, `news-95`,
    nowhere), `plexity score --model news-95` said "model news", a run's stats and records said `news`, and
    `plexity serve` offered one `news` with the copy's threshold, scored with the original, and refused `news-95`
    as unknown. Now a model that a name finds is named by its folder, the name `--model` takes."""
    from plexity_plugins import PerplexityScorer
    from plexity_plugins.web.app import ScorerCache

    build_tiny_model(model_dir / "news", name="news", threshold=500.0)
    shutil.copytree(model_dir / "news", model_dir / "news-95")
    set_threshold(model_dir / "news-95", 120.0)

    listing = plexity("models").stdout.split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in listing[1:] if not line.startswith(" ")] == ["en-default", "news", "news-95"]
    assert "; model news-95;" in plexity("score", "--model", "news-95", "The cat sat on the mat.").stdout
    variant = PerplexityScorer("news-95")
    assert (variant.model_name, variant.threshold) == ("news-95", 120.0)

    served = ScorerCache()
    assert {name: model["threshold"] for name, model in served.available().items()
            if name.startswith("news")} == {"news": 500.0, "news-95": 120.0}
    assert (served.get("news").threshold, served.get("news-95").threshold) == (500.0, 120.0)

