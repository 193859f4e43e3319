"""A user who upgrades mid-corpus (probe 38): part of a crawl cleaned by the version before, the rest by this one.

The version before (3c9203c) recorded the same settings as this one, but for the learned reader's model: this
version's forest was rebuilt (and its word counts for Chinese and Japanese changed), so one of the sample's twelve
pages reads otherwise.  A run or a crawl resumed into the older version's results would have mixed both readings
in one corpus, silently; the records now carry the forest by its checksum, as they carry the KenLM model's, and a
record written before they did is of another forest.  The records below are written as that version wrote them.
"""

from __future__ import annotations

import json
import shutil

import pytest

from helpers import SAMPLE, run_plexity

# The extractor step of a `plexity run` record as the version before wrote it (plexity-settings.json)
OLD_LEARNED_STEP = {"step": "LearnedExtractor", "extractor": "learned", "timeout": 30.0, "memory_limit": 805306368}
OLD_DENSE_STEP = {"step": "DenseExtractor", "extractor": "dense", "timeout": 30.0, "memory_limit": 805306368}


def test_a_run_resumed_into_an_older_version_s_learned_results_stops_naming_the_forest(tmp_path):
    """``plexity run`` into the folders of a run the version before left part done stops before any task runs,
    exit 2, naming the learned reader's forest (not recorded by that version: another one) and the two ways out,
    where it resumed and wrote the rest of the corpus with the new forest beside the old one's documents."""
    (tmp_path / "crawl").mkdir()
    for name in ("a", "b"):
        shutil.copy(SAMPLE, tmp_path / "crawl" / f"{name}.warc.gz")
    out = tmp_path / "out"
    command = ("run", str(tmp_path / "crawl"), "-o", str(out), "--tasks", "2", "--workers", "1")
    assert run_plexity(*command).returncode == 0
    record_path = out / "logs" / "plexity-settings.json"
    record = json.loads(record_path.read_text())
    assert record["steps"][1]["reader_model_sha256"] != OLD_LEARNED_STEP.get("reader_model_sha256")
    record["steps"][1] = OLD_LEARNED_STEP  # the record of the version before, its task not yet done
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    (out / "logs" / "completions" / "00001").unlink()  # (one of its two tasks done)
    again = run_plexity(*command)
    assert again.returncode == 2, again.stderr
    assert "learned reader's forest: not recorded, an older version's -> sha256:" in again.stderr
    assert "--overwrite" in again.stderr and "--output-dir" in again.stderr


def test_another_extractor_s_record_of_the_version_before_still_resumes():
    """An extractor without a model records none, so a record of the version before compares the same (no false
    stop for an upgrade that changes nothing a run reads); the learned one's differs, and says how."""
    from plexity_plugins.cleaning.settings_record import differences
    from plexity_plugins.datatrove import DenseExtractor, LearnedExtractor

    assert differences({"steps": [OLD_DENSE_STEP]}, {"steps": [{"step": "DenseExtractor",
                                                                 **DenseExtractor().settings()}]}) == []
    changed = differences({"steps": [OLD_LEARNED_STEP]}, {"steps": [{"step": "LearnedExtractor",
                                                                      **LearnedExtractor().settings()}]})
    assert len(changed) == 1 and changed[0].startswith("learned reader's forest: not recorded, an older version's")


def test_a_scrapy_crawl_resumed_from_an_older_version_s_jobdir_stops_naming_the_forest(tmp_path, caplog):
    """A crawl paused by the version before (its JOBDIR's plexity-settings.json without the forest) and resumed
    after the upgrade does not start, naming the forest; with PLEXITY_EXTRACTOR=dense, which has no model, it
    resumes (the record compares the same)."""
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    def pipeline(jobdir, **settings):
        return PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={"JOBDIR": str(jobdir), **settings}))

    for jobdir, settings in ((tmp_path / "learned", {}), (tmp_path / "dense", {"PLEXITY_EXTRACTOR": "dense"})):
        pipeline(jobdir, **settings)
        record = json.loads((jobdir / "plexity-settings.json").read_text())
        record.pop("reader_model_sha256", None)  # the record as the version before wrote it
        (jobdir / "plexity-settings.json").write_text(json.dumps(record, indent=2) + "\n")
    pipeline(tmp_path / "dense", PLEXITY_EXTRACTOR="dense")
    with pytest.raises(PlexitySettingError):
        pipeline(tmp_path / "learned")
    assert "(learned reader's forest: not recorded, an older version's -> sha256:" in caplog.text


def test_a_filter_s_record_of_the_version_before_its_size_cap_still_resumes():
    """The filters record `max_document_bytes` since the forty-third stop; a record of the version before, without
    it, compares the same (only a text over 50 MB reads otherwise), so an upgrade mid-run does not stop the run."""
    from plexity_plugins.cleaning.settings_record import differences
    from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter

    for step in (PerplexitySentenceFilter(), PerplexityDocumentFilter(label_only=True)):
        now = {"step": type(step).__name__, **step.settings()}
        before = {k: v for k, v in now.items() if k != "max_document_bytes"}
        assert differences({"steps": [before]}, {"steps": [now]}) == []
        assert differences({"steps": [{**now, "max_document_bytes": 10**6}]}, {"steps": [now]}) != []
