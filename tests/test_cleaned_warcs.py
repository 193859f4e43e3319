"""A cleaned WARC is input too.  ``plexity clean`` and ``plexity run --format warc`` write each page as a
``response`` record of ``text/plain`` (the cleaned text) with ``X-Plexity-*`` headers (how it was
cleaned); fed back to either command, such a record is read as a page's text: not extracted (there
is no HTML left), cleaned with the method for an extractor's text (``trim`` after the default
extractor), as the first time, and counted (``documents_cleaned_text``; the reader's ``cleaned_texts``)
so that the counts add up.  Every record either writes says so (``X-Plexity-Payload: text``), also
`WarcResponseWriter`'s after steps that set no ``plexity_*`` field (an extractor, no filter): a
datatrove user's own WARC of texts reads back as text.  A crawl's own text/plain page (robots.txt ...)
has no such header and stays a response that is not HTML."""

from __future__ import annotations

import io
import json
import shutil

from datatrove.executor import LocalPipelineExecutor
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from helpers import SAMPLE, read_jsonl_dir, run_plexity, run_step_stats
from plexity_plugins.datatrove import HtmlTagsExtractor, WarcHtmlReader
from plexity_plugins.datatrove.writers import WarcResponseWriter
from plexity_plugins.io.inputs import CLEANED_TEXT, WarcFile
from plexity_plugins.io.warc_writer import cleaned_response_record
from plexity_plugins.scoring.scorer import PerplexityScorer


def cleaned_texts(path) -> dict[str, str]:
    """{uri: text} of the cleaned records (response records of text/plain) of a WARC file."""
    with open(path, "rb") as f:
        return {record.rec_headers.get_header("WARC-Target-URI"): record.content_stream().read().decode()
                for record in ArchiveIterator(f) if record.rec_type == "response"
                and (record.http_headers.get_header("Content-Type") or "").startswith("text/plain")}


def test_a_cleaned_record_is_read_as_text_and_a_crawl_s_text_page_is_not(tmp_path):
    path = tmp_path / "mixed.warc.gz"
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        writer.write_record(cleaned_response_record(writer, "The council approved the budget.\n", uri="http://t/kept",
                                                    extra_headers={"X-Plexity-Verdict": "kept"}))
        writer.write_record(cleaned_response_record(writer, "", uri="http://t/skipped",
                                                    extra_headers={"X-Plexity-Skipped": "too_large"}))
        robots = b"User-agent: *\nDisallow:\n"  # (as a crawler stores it)
        writer.write_record(writer.create_warc_record(
            "http://t/robots.txt", "response", payload=io.BytesIO(robots), length=len(robots),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/plain")], protocol="HTTP/1.1")))
    with open(path, "rb") as f:
        records = list(WarcFile(f))
    assert [(r.uri, r.kind, r.payload, r.skip) for r in records] == [
        ("http://t/kept", CLEANED_TEXT, b"The council approved the budget.\n", None),
        ("http://t/skipped", CLEANED_TEXT, None, "empty_payload"),  # (its marker: nothing to clean again)
        ("http://t/robots.txt", "html", None, "not_html")]  # (no X-Plexity-* header: a crawl's text page)
    assert records[0].content_type == "text/plain; charset=utf-8"


def test_plexity_clean_reads_its_own_cleaned_warc_back_as_text(tmp_path):
    first = run_plexity("clean", str(SAMPLE), "--output-dir", str(tmp_path / "first"), "-q")
    assert first.returncode == 0, first.stderr
    cleaned = cleaned_texts(tmp_path / "first" / SAMPLE.name)
    again = run_plexity("clean", str(tmp_path / "first" / SAMPLE.name), "--output-dir", str(tmp_path / "again"), "-q")
    assert again.returncode == 0, again.stderr
    assert f"{len(cleaned)} records of a cleaned WARC, read back as text: not extracted" in again.stdout
    stats = json.loads((tmp_path / "again" / "plexity-stats.json").read_text())
    assert (stats["documents"], stats["documents_cleaned_text"], stats["documents_skipped"]) == (len(cleaned),
                                                                                               len(cleaned), 0)
    assert stats["records"] == stats["documents"] + stats["records_copied"]  # (every record is in the output)
    trim = PerplexityScorer(method="trim")  # (the method for the default extractor's text, as the first time)
    assert cleaned_texts(tmp_path / "again" / SAMPLE.name) == {uri: trim.clean(text).text
                                                               for uri, text in cleaned.items()}


def test_plexity_run_and_plexity_clean_read_a_cleaned_warc_of_plexity_run_back_as_text(tmp_path):
    first = run_plexity("run", str(SAMPLE), "--output-dir", str(tmp_path / "first"), "--format", "warc",
                        "--workers", "1")
    assert first.returncode == 0, first.stderr
    (tmp_path / "in").mkdir()
    (tmp_path / "first" / "documents" / "00000.warc.gz").rename(tmp_path / "in" / "cleaned.warc.gz")
    cleaned = cleaned_texts(tmp_path / "in" / "cleaned.warc.gz")

    again = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "again"), "--workers", "1")
    assert again.returncode == 0, again.stderr
    assert f"{len(cleaned)} documents, {len(cleaned)} of them a cleaned WARC's records, read back as text, " \
           f"not extracted" in again.stdout
    reader, extractor, _ = run_step_stats(tmp_path / "again", "learned")
    skipped = sum(v for k, v in reader.items() if k.startswith("skipped_"))
    assert reader["records"] == reader["documents"] + skipped == len(cleaned) + 1  # (the warcinfo record)
    assert reader["cleaned_texts"] == extractor["cleaned_texts"] == len(cleaned) and "extracted" not in extractor
    documents = read_jsonl_dir(tmp_path / "again" / "documents")
    assert {d["metadata"]["plexity_method"] for d in documents} == {"trim"}
    trim = PerplexityScorer(method="trim")
    assert {d["metadata"]["url"]: d["text"] for d in documents} == {
        uri: trim.clean(text).text for uri, text in cleaned.items() if trim.clean(text).text}

    clean = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "clean"), "-q")
    assert clean.returncode == 0, clean.stderr
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert (stats["records"], stats["documents_cleaned_text"], stats["records_copied"]) == (len(cleaned) + 1,
                                                                                          len(cleaned), 1)


def test_a_warc_of_texts_written_without_the_filter_reads_back_as_text(tmp_path):
    """`WarcResponseWriter` after an extractor and no filter wrote records without ``X-Plexity-*`` headers:
    fed back to either command, every page was a crawl's text/plain response (``not_html``), no document."""
    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl")
    LocalPipelineExecutor(pipeline=[WarcHtmlReader(str(tmp_path / "crawl")), HtmlTagsExtractor(),
                                    WarcResponseWriter(str(tmp_path / "in"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    written = tmp_path / "in" / "00000.warc.gz"
    texts = cleaned_texts(written)
    assert len(texts) == 12

    clean = run_plexity("clean", str(written), "--output-dir", str(tmp_path / "clean"), "-q")
    assert clean.returncode == 0, clean.stderr
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert (stats["documents"], stats["documents_cleaned_text"], stats["copied_reasons"]) == (
        12, 12, {"not_response": 1})  # (the warcinfo record)

    run = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "run"), "--workers", "1")
    assert run.returncode == 0, run.stderr
    reader, extractor, _ = run_step_stats(tmp_path / "run", "learned")
    assert (reader["documents"], reader["cleaned_texts"], extractor["cleaned_texts"]) == (12, 12, 12)
    assert "skipped_not_html" not in reader
    with open(written, "rb") as f:  # (what says so: each record's marker)
        assert {r.rec_headers.get_header("X-Plexity-Payload") for r in ArchiveIterator(f)
                if r.rec_type == "response"} == {"text"}
