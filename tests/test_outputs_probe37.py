"""What plexity writes, read by the tools a user feeds it to next: Scrapy's feed exporters (csv, json lines, xml)
on the pipeline's items, strict JSON readers, and WARC readers (warcio, fastwarc) on `WarcResponseWriter`'s records.

Each test writes its outputs with the real writers (Scrapy's exporters, the pipeline with the embedded model)
and reads them back as the next tool does.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import xml.etree.ElementTree as ElementTree

import pytest
from datatrove.data import Document
from scrapy.exporters import CsvItemExporter, JsonLinesItemExporter, XmlItemExporter
from scrapy.utils.test import get_crawler

from plexity_plugins.scrapy import PerplexityFilterPipeline

ARTICLE = ("<html><body><nav>Home | News | Sport</nav><article>"
           "<p>The city council approved the budget for the new public library on Monday evening.</p>"
           "<p>The library will open in the spring, and it will have a large room for children.</p>"
           "</article><footer>Share on Facebook</footer></body></html>")


def _strict_json(text: str):
    """`text` as JSON, as jq, JavaScript or serde read it: NaN and Infinity are no JSON."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _cleaned_items() -> list[dict]:
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        return [asyncio.run(pipeline.process_item({"url": url, "html": ARTICLE}))
                for url in ("http://example.org/a", "http://example.org/b")]
    finally:
        pipeline.close_spider()


def _export(exporter_class, items: list[dict], **options) -> bytes:
    out = io.BytesIO()
    exporter = exporter_class(out, **options)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return out.getvalue()


def test_a_csv_feed_holds_the_plexity_field_as_json():
    # Before: Scrapy's CSV exporter wrote the field as Python's repr of a dict ({'plexity_reason': None, ...}),
    # which no CSV reader's next step (json.loads, pandas, a spreadsheet, DuckDB) reads as its fields.
    items = _cleaned_items()
    rows = list(csv.DictReader(io.StringIO(_export(CsvItemExporter, items).decode("utf-8"), newline="")))
    lines = _export(JsonLinesItemExporter, items).decode("utf-8").splitlines()
    assert len(rows) == len(lines) == 2
    for row, line in zip(rows, lines):
        fields = _strict_json(row["plexity"])
        assert fields == _strict_json(line)["plexity"]  # the same fields as the JSON lines feed's
        assert fields["plexity_verdict"] in ("kept", "passed_through", "dropped")


def test_json_and_xml_feeds_still_hold_the_plexity_field_as_fields():
    items = _cleaned_items()
    first = _strict_json(_export(JsonLinesItemExporter, items).decode("utf-8").splitlines()[0])
    assert isinstance(first["plexity"], dict) and first["plexity"]["plexity_verdict"] == "kept"
    root = ElementTree.fromstring(_export(XmlItemExporter, items))
    assert root[0].find("plexity/plexity_verdict").text == "kept"


def test_executor_json_of_a_language_map_run_is_strict_json(tmp_path):
    # A filter with a language -> model map has no one threshold (NaN): executor.json held `"threshold": NaN`,
    # which JavaScript's JSON.parse, serde or DuckDB refuse (Python's json and jq 1.6 let it through).
    from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter

    step = PerplexitySentenceFilter(model={"en": "en-default", "de": "en-default"}, method="regions")
    executor = LocalTaskExecutor(pipeline=[step], tasks=1, logging_dir=str(tmp_path / "logs"))
    executor.save_executor_as_json()
    written = _strict_json((tmp_path / "logs" / "executor.json").read_text(encoding="utf-8"))
    filter_step = next(step for step in written["pipeline"] if "threshold" in step)
    assert filter_step["threshold"] is None
    assert filter_step["model_name"] == "en=en-default,de=en-default"


def _written_warc(tmp_path, docs: list[Document]) -> bytes:
    from plexity_plugins.datatrove import WarcResponseWriter

    writer = WarcResponseWriter(str(tmp_path / "out"))
    with writer:
        for doc in docs:
            writer.write(doc)
    return (tmp_path / "out" / "00000.warc.gz").read_bytes()


@pytest.mark.parametrize("date", ["2024-01-01 12:00:00", "2024-01-01T14:00:00+02:00",
                                  "Mon, 01 Jan 2024 12:00:00 GMT", "20240101120000", "2024-01-01T12:00:00Z"])
def test_a_datasets_date_and_url_are_written_as_warc_readers_read_them(tmp_path, date):
    # A dataset's date of another form was written as it was: fastwarc read no date (record_date None), jwarc
    # raises, a CDX line splits at its space; a URL's space was written raw, which warcio reads as %20, fastwarc not.
    from fastwarc import ArchiveIterator as FastArchiveIterator
    from warcio.archiveiterator import ArchiveIterator

    data = _written_warc(tmp_path, [Document(text="The council approved the budget.", id="1",
                                             metadata={"url": "http://ex.org/a b/caf\u00e9", "date": date})])
    warcio_record = [r for r in ArchiveIterator(io.BytesIO(data)) if r.rec_type == "response"][0]
    assert warcio_record.rec_headers.get_header("WARC-Date") == "2024-01-01T12:00:00Z"
    fast_record = [r for r in FastArchiveIterator(io.BytesIO(data)) if r.headers.get("WARC-Type") == "response"][0]
    assert fast_record.record_date is not None and fast_record.record_date.isoformat() == "2024-01-01T12:00:00+00:00"
    uris = {warcio_record.rec_headers.get_header("WARC-Target-URI"), fast_record.headers.get("WARC-Target-URI")}
    assert uris == {"http://ex.org/a%20b/caf\u00e9"}


def test_a_date_that_is_no_date_is_written_as_it_is(tmp_path):
    from plexity_plugins.io.warc_writer import warc_date

    assert warc_date("sometime in spring") == "sometime in spring"
    assert warc_date("2024-01-01T12:00:00.250Z") == "2024-01-01T12:00:00.250Z"  # (WARC 1.1's fractions kept)


def test_a_crawl_with_the_no_filtering_baseline_threshold_exports_strict_json():
    # PLEXITY_THRESHOLD = inf (the "no filtering" baseline): each item's plexity_threshold was inf, which Scrapy's
    # JSON feeds wrote as `Infinity` (and the CSV feed's JSON too): no strict JSON reader reads the feed.
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                         "PLEXITY_THRESHOLD": float("inf")})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        item = asyncio.run(pipeline.process_item({"url": "http://example.org/a", "html": ARTICLE}))
    finally:
        pipeline.close_spider()
    exported = _strict_json(_export(JsonLinesItemExporter, [item]).decode("utf-8"))
    assert exported["plexity"]["plexity_threshold"] is None  # (JSON has no infinity: null, as orjson writes it)
    assert exported["plexity"]["plexity_sentences_dropped"] == 0  # (the baseline still keeps every sentence)
    row = next(csv.DictReader(io.StringIO(_export(CsvItemExporter, [item]).decode("utf-8"), newline="")))
    assert _strict_json(row["plexity"])["plexity_threshold"] is None


def test_plexity_clean_with_threshold_inf_writes_strict_json_stats(tmp_path):
    # Before: plexity-stats.json held "threshold": Infinity.
    import subprocess
    import sys

    from helpers import REPO, SAMPLE

    done = subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", str(SAMPLE), "-o", str(tmp_path),
                           "--extractor", "tags", "--threshold", "inf", "--quiet"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = _strict_json((tmp_path / "plexity-stats.json").read_text(encoding="utf-8"))
    assert stats["threshold"] == "inf" and stats["sentences_dropped"] == 0  # (as the settings record writes it)


def test_plexity_run_with_threshold_inf_records_strict_json_settings_and_resumes(tmp_path):
    # Before: logs/plexity-settings.json held "threshold": Infinity (and executor.json too).
    import subprocess
    import sys

    from helpers import REPO, SAMPLE

    command = [sys.executable, "-m", "plexity_plugins", "run", str(SAMPLE), "-o", str(tmp_path / "out"),
               "--extractor", "tags", "--threshold", "inf"]
    for _ in range(2):  # (the second run reads the record back: the same settings, so it resumes)
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    for name in ("plexity-settings.json", "executor.json"):
        _strict_json((tmp_path / "out" / "logs" / name).read_text(encoding="utf-8"))
    assert "0 in this run" in done.stdout + done.stderr


def test_a_settings_record_an_earlier_version_wrote_with_infinity_still_resumes(tmp_path):
    from plexity_plugins.cleaning.settings_record import SETTINGS_FILE, compare_or_record

    (tmp_path / SETTINGS_FILE).write_text(json.dumps({"threshold": float("inf"), "method": "trim"}), encoding="utf-8")
    assert compare_or_record(tmp_path, {"threshold": float("inf"), "method": "trim"}) == []
    assert compare_or_record(tmp_path, {"threshold": 500.0, "method": "trim"}) == ["threshold: inf -> 500"]


def _versions(path) -> set[str]:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as f:
        return {record.rec_headers.protocol for record in ArchiveIterator(f)}


def test_plexity_clean_writes_each_cleaned_record_in_its_input_records_warc_version(tmp_path):
    # Cleaned records were WARC/1.0 (warcio's default) in files whose copied records (requests, warcinfo ...) were
    # the input's WARC/1.1: a file of two versions; each is now its source record's (a WARC/1.0 crawl stays 1.0).
    import subprocess
    import sys

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from helpers import REPO, SAMPLE

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "sample.warc.gz").write_bytes(SAMPLE.read_bytes())  # (WARC/1.1)
    with open(tmp_path / "in" / "old.warc.gz", "wb") as f:
        writer = WARCWriter(f, gzip=True, warc_version="1.0")
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://example.org/a", "request"))
        writer.write_record(writer.create_warc_record("http://example.org/a", "response", http_headers=http,
                                                      payload=io.BytesIO(ARTICLE.encode())))
    done = subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", str(tmp_path / "in"), "-o",
                           str(tmp_path / "out"), "--extractor", "tags", "--quiet"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _versions(tmp_path / "in" / "sample.warc.gz") == _versions(tmp_path / "out" / "sample.warc.gz") == \
        {"WARC/1.1"}
    assert _versions(tmp_path / "out" / "old.warc.gz") == {"WARC/1.0"}


def test_warc_response_writer_writes_warc_1_1_throughout_as_its_warcinfo_says(tmp_path):
    # (its warcinfo said "format: WARC File Format 1.1" in a WARC/1.0 record, as were the records after it)
    _written_warc(tmp_path, [Document(text="The council approved the budget.", id="1",
                                      metadata={"url": "http://ex.org/a", "date": "2024-01-01T12:00:00.250Z"})])
    assert _versions(tmp_path / "out" / "00000.warc.gz") == {"WARC/1.1"}
