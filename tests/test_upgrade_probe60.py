"""A user who upgrades mid-corpus (probe 60): begun a week ago (b998c92, 2026-11-29, and 7671a17, 2026-12-03), stopped
half-way, run again into the same folders with this version.

`plexity run` with an extractor that records no model (dense, tags ...) resumed into 7671a17's completions: the
record compared the same, and the folder held shards of two shapes (24 metadata keys in the first three, 29 in the
rest), which pyarrow.dataset read with the first shard's keys, the new ones gone.  b998c92's record stopped the run,
but named settings it had not recorded as "none" ("model's language: none -> en"), as if the user had changed them.
A Scrapy crawl paused by b998c92 (which recorded nothing in JOBDIR) resumed, its PLEXITY_DROPPED_FILE written anew:
the first part's dropped rows gone.  The records below are written as those versions wrote them.
"""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from helpers import SAMPLE, run_plexity

# The metadata keys of a `plexity run` document, for each documents' format (`settings_record.DOCUMENTS_FORMAT`):
# a change of the keys (or of their types) is a new format, so that a run resumed into the older one's shards stops
FORMAT_KEYS = {
    2: {"url", "date", "content_type", "charset", "file_path", "replaced_chars", "warc_type", "cleaned_text",
        "warc_refers_to", "warc_identified_content_language", "warc_truncated", "plexity_verdict", "plexity_reason",
        "plexity_would_drop", "plexity_model", "plexity_method", "plexity_threshold", "plexity_sentences",
        "plexity_sentences_kept", "plexity_sentences_dropped", "plexity_chars_before", "plexity_chars_after",
        "plexity_chars_kept", "plexity_chars_dropped", "plexity_ppl_mean", "plexity_ppl_median",
        "plexity_doc_perplexity", "plexity_replaced_chars", "plexity_passthrough"},
}


def _half_done_run(tmp_path, *options):
    """A run of two tasks over two copies of the sample, one of them done (the other's marker taken away)."""
    (tmp_path / "crawl").mkdir()
    for name in ("a", "b"):
        shutil.copy(SAMPLE, tmp_path / "crawl" / f"{name}.warc.gz")
    out = tmp_path / "out"
    command = ("run", str(tmp_path / "crawl"), "-o", str(out), "--tasks", "2", "--workers", "1", *options)
    done = run_plexity(*command)
    assert done.returncode == 0, done.stderr
    (out / "logs" / "completions" / "00001").unlink()
    (out / "documents" / "00001.jsonl.gz").unlink()
    return command, out


def test_a_run_resumed_into_the_documents_of_a_version_of_another_format_stops_whatever_its_extractor(tmp_path):
    """7671a17's record of a dense run is this version's without `documents_format` (and without the filters'
    `max_document_bytes`, which compares the same): the re-run stops before any task runs, exit 2, naming the
    documents' format and the two ways out, where it wrote the second shard with five more keys beside the first."""
    command, out = _half_done_run(tmp_path, "--extractor", "dense")
    record_path = out / "logs" / "plexity-settings.json"
    record = json.loads(record_path.read_text())
    del record["documents_format"]
    del record["steps"][2]["max_document_bytes"]
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    again = run_plexity(*command)
    assert again.returncode == 2, again.stderr
    assert ("holds the results of a run with other settings (documents' format: not recorded, an older version's "
            "-> 2): give a new --output-dir, or add --overwrite") in again.stderr
    assert not (out / "documents" / "00001.jsonl.gz").exists()
    overwrite = run_plexity(*command, "--overwrite")
    assert overwrite.returncode == 0 and "2/2 tasks completed (2 in this run" in overwrite.stdout + overwrite.stderr


def test_the_documents_keys_are_those_of_the_recorded_format(tmp_path):
    """Every document of a run carries the keys of `DOCUMENTS_FORMAT` (a key added or taken away without a new
    number would let a run resume into shards of the other shape); the record says the format."""
    from plexity_plugins.cleaning.settings_record import DOCUMENTS_FORMAT

    _, out = _half_done_run(tmp_path, "--extractor", "tags")
    assert json.loads((out / "logs" / "plexity-settings.json").read_text())["documents_format"] == DOCUMENTS_FORMAT
    with gzip.open(out / "documents" / "00000.jsonl.gz", "rt") as lines:
        documents = [json.loads(line) for line in lines]
    assert documents and all(set(doc["metadata"]) == FORMAT_KEYS[DOCUMENTS_FORMAT] for doc in documents)


def test_a_setting_an_older_record_lacks_is_said_not_recorded_not_none():
    """b998c92's filter step recorded neither the model's language and tokenizer nor allow_html_pages: each is
    named "not recorded", where "none -> en" read as a model changed; a setting recorded as None is still "none"."""
    from plexity_plugins.cleaning.settings_record import differences
    from plexity_plugins.datatrove import PerplexitySentenceFilter

    now = {"step": "PerplexitySentenceFilter", **PerplexitySentenceFilter().settings()}
    before = {k: v for k, v in now.items() if k not in ("model_language", "model_tokenizer", "allow_html_pages")}
    said = differences({"steps": [before]}, {"steps": [now]})
    assert said == [f"model's language: not recorded -> {now['model_language']}",
                    f"model's tokenizer: not recorded -> {now['model_tokenizer']}",
                    "allow_html_pages: not recorded -> False"]
    assert differences({"steps": [{**now, "model_language": None}]}, {"steps": [now]}) == [
        f"model's language: none -> {now['model_language']}"]


def test_a_pipeline_of_datatrove_s_own_steps_records_no_documents_format():
    """The format is that of plexity's steps' documents: a pipeline without one records none, so an upgrade of
    plexity_plugins does not stop it."""
    from datatrove.pipeline.filters import LambdaFilter

    from plexity_plugins.datatrove import PerplexitySentenceFilter
    from plexity_plugins.datatrove.run_settings import run_settings

    assert "documents_format" not in run_settings([LambdaFilter(len)], 1)
    assert run_settings([LambdaFilter(len), PerplexitySentenceFilter()], 1)["documents_format"] >= 2


def test_a_crawl_paused_by_a_version_that_recorded_nothing_stops_and_keeps_its_dropped_file(tmp_path, caplog):
    """b998c92 wrote no plexity-settings.json in JOBDIR; Scrapy wrote its state there (requests.seen, the
    fingerprints of the pages crawled).  Resumed, the crawl does not start, naming the missing record and the way
    out, and its PLEXITY_DROPPED_FILE keeps the first part's rows (it was written anew: 13 rows lost in the probe).
    A JOBDIR without Scrapy's state (a new crawl) is recorded and starts."""
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    def pipeline(jobdir):
        return PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={
            "JOBDIR": str(jobdir), "PLEXITY_EXTRACTOR": "tags", "PLEXITY_DROPPED_FILE": str(tmp_path / "dropped.jsonl")}))

    paused = tmp_path / "job"
    paused.mkdir()
    (paused / "requests.seen").write_text("3f2a9d0c1b5e4f6a7b8c9d0e1f2a3b4c5d6e7f80\n")  # (Scrapy's, of one page)
    rows = '{"source": "http://127.0.0.1/", "sentence": "Skip to main content", "reason": "perplexity"}\n'
    (tmp_path / "dropped.jsonl").write_text(rows)
    with pytest.raises(PlexitySettingError):
        pipeline(paused)
    assert ("JOBDIR " + str(paused) + " holds a paused crawl with no record of how its items were cleaned "
            "(plexity-settings.json)") in caplog.text and "give another JOBDIR" in caplog.text
    assert not (paused / "plexity-settings.json").exists()
    assert (tmp_path / "dropped.jsonl").read_text() == rows
    pipeline(tmp_path / "new-job")
    assert (tmp_path / "new-job" / "plexity-settings.json").is_file()
