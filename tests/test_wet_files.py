"""WET files (Common Crawl's text of each page, ``.warc.wet.gz``): a ``conversion`` record of
text/plain holds a page's every visible line, the text the tag remover gives.  Every front end
reads it as text (no extractor) and cleans it with the tag remover's method, ``regions``; both
front ends give the same text."""

from __future__ import annotations

import io
import json

from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from helpers import SAMPLE, iter_warc_html, read_jsonl_dir, run_plexity
from plexity_plugins.extractors import html_to_text_tags
from plexity_plugins.io.inputs import PAGE_TEXT, WarcFile
from plexity_plugins.scoring.scorer import PerplexityScorer


def cleaned_texts(path) -> dict[str, str]:
    """{uri: cleaned text} of a cleaned WET file (a conversion record of text/plain a page, as in WET)."""
    with open(path, "rb") as f:
        return {record.rec_headers.get_header("WARC-Target-URI"): record.content_stream().read().decode()
                for record in ArchiveIterator(f) if is_wet_text_record(record)}


def is_wet_text_record(record) -> bool:
    """What Common Crawl's own examples (cc-pyspark's CCSparkJob) take as a WET record's text."""
    return record.rec_type == "conversion" and record.content_type == "text/plain"


def total(counter) -> int:
    """A datatrove counter's total, as stats.json writes it (a number, or {"total": ...})."""
    return counter if isinstance(counter, int) else counter["total"]


def _conversion(writer, uri: str, body: bytes, content_type: str = "text/plain", **headers):
    return writer.create_warc_record(uri, "conversion", payload=io.BytesIO(body), length=len(body),
                                     warc_headers_dict={"Content-Type": content_type, **headers})


def response_id(uri: str) -> str:
    """The WARC-Record-ID of the crawl's response record of the page at `uri`, as a WET record refers to it."""
    return f"<urn:uuid:response-of-{uri}>"


def write_wet(path) -> dict[str, str]:
    """A WET file of the sample WARC's pages, as Common Crawl writes one: a warcinfo record, then
    one conversion record of each page's visible text, referring to the page's response record in the
    crawl's WARC, with the page's language; the texts by URI."""
    texts = {uri: html_to_text_tags(body.decode("utf-8", "replace")) for uri, body, _ in iter_warc_html(SAMPLE)}
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "tests"}))
        for uri, text in texts.items():
            writer.write_record(_conversion(writer, uri, text.encode(), **{
                "WARC-Refers-To": response_id(uri), "WARC-Identified-Content-Language": "eng"}))
    return texts


def test_a_wet_record_is_a_pages_text_and_other_records_keep_their_outcomes(tmp_path):
    dummy = WARCWriter(io.BytesIO())
    path = tmp_path / "mixed.warc.wet.gz"
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for record in (_conversion(dummy, "http://t/text", "Ein Satz. A sentence.\n".encode()),
                       _conversion(dummy, "http://t/html", b"<html><body>x</body></html>", "text/html"),
                       _conversion(dummy, "http://t/pdf", b"%PDF-1.7\n" + bytes(200)),
                       _conversion(dummy, "http://t/empty", b"  \n")):
            writer.write_record(record)
    with open(path, "rb") as f:
        records = list(WarcFile(f))
    assert [(r.uri, r.kind, r.payload, r.skip) for r in records] == [
        ("http://t/text", PAGE_TEXT, "Ein Satz. A sentence.\n".encode(), None),
        # (a conversion to HTML: not a page's text, but a page, read as datatrove's WarcReader reads it)
        ("http://t/html", "html", b"<html><body>x</body></html>", None),
        ("http://t/pdf", PAGE_TEXT, None, "not_html"),
        ("http://t/empty", PAGE_TEXT, None, "empty_payload")]


def _bare_conversion(uri: str, body: bytes, headers: str = "") -> bytes:
    """A conversion record with no Content-Type at all (warcio would write its default in)."""
    head = (f"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
            f"WARC-Record-ID: <urn:uuid:{uri}>\r\n{headers}Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body + b"\r\n\r\n"


def test_a_conversion_record_without_a_type_of_its_own_is_judged_by_its_bytes_as_datatrove_does(tmp_path):
    """No Content-Type, or warcio's default (application/warc-record, which its writer puts in a
    record given none), says nothing of the block: as datatrove's WarcReader, the record's
    WARC-Identified-Payload-Type decides, else its bytes; text is a page's text (counted
    ``page_texts``), HTML a page, a PDF's bytes ``not_html`` as a WET record's are."""
    text = b"The council approved the budget for the new library.\nThe library opens in the spring.\n"
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    for uri, body in (("http://t/text", text), ("http://t/html", b"<html><body><p>x</p></body></html>"),
                      ("http://t/pdf", b"%PDF-1.7\n" + bytes(200))):
        writer.write_record(writer.create_warc_record(uri, "conversion", payload=io.BytesIO(body), length=len(body)))
    path = tmp_path / "crawl.warc.wet"
    path.write_bytes(buffer.getvalue() + _bare_conversion("http://t/bare", text)
                     + _bare_conversion("http://t/identified", text, "WARC-Identified-Payload-Type: text/plain\r\n")
                     + _bare_conversion("http://t/blank", b"  \n"))
    with open(path, "rb") as f:
        records = [(r.uri, r.kind, r.payload, r.skip) for r in WarcFile(f)]
    assert records == [("http://t/text", PAGE_TEXT, text, None),
                       ("http://t/html", "html", b"<html><body><p>x</p></body></html>", None),
                       ("http://t/pdf", PAGE_TEXT, None, "not_html"),
                       ("http://t/bare", PAGE_TEXT, text, None),
                       ("http://t/identified", PAGE_TEXT, text, None),
                       ("http://t/blank", PAGE_TEXT, None, "empty_payload")]

    from plexity_plugins.datatrove import WarcHtmlReader

    reader = WarcHtmlReader(str(tmp_path), glob_pattern="*.warc.wet")
    docs = {d.metadata["url"]: d.metadata.get("warc_type") for d in reader()}
    assert docs == {"http://t/text": "conversion", "http://t/html": "", "http://t/bare": "conversion",
                    "http://t/identified": "conversion"}
    assert reader.stats["page_texts"].total == 3 and reader.stats["skipped_not_html"].total == 1
    assert reader.stats["skipped_empty_payload"].total == 1


def test_plexity_clean_cleans_a_wet_file_with_the_tag_removers_method(tmp_path):
    texts = write_wet(tmp_path / "sample.warc.wet.gz")
    result = run_plexity("clean", str(tmp_path / "sample.warc.wet.gz"), "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert f"{len(texts)} WET records, a page's text each: not extracted, method regions" in result.stdout
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (stats["documents"], stats["documents_page_text"], stats["page_text_method"]) == (len(texts), len(texts),
                                                                                          "regions")
    assert stats["records_copied"] == 1  # the warcinfo record
    regions = PerplexityScorer(method="regions")
    cleaned = cleaned_texts(tmp_path / "out" / "sample.warc.wet.gz")  # (a WET file in, its cleaned file out)
    assert cleaned == {uri: regions.clean(text).text for uri, text in texts.items()}
    assert sum(map(len, cleaned.values())) < 0.8 * sum(map(len, texts.values()))  # menus and footers went


def wet_records(path) -> list[tuple]:
    """(type, Content-Type, URI, WARC-Refers-To, language) of each record of a WARC file."""
    with open(path, "rb") as f:
        return [(r.rec_type, r.content_type, *(r.rec_headers.get_header(name) for name in (
                    "WARC-Target-URI", "WARC-Refers-To", "WARC-Identified-Content-Language")))
                for r in ArchiveIterator(f) if r.rec_type != "warcinfo"]


def test_a_cleaned_wet_file_is_a_wet_file_that_common_crawl_s_tools_and_datatrove_read(tmp_path):
    """WET in, WET out: each record a conversion of text/plain, its block the cleaned text, still
    referring to the page's response record in the crawl's WARC, with its language; what cc-pyspark
    takes as a WET text record and datatrove's WarcReader reads (a response of text/plain, which a
    cleaned WARC holds, it skips), and what ``plexity clean`` reads back as a cleaned text."""
    from datatrove.pipeline.readers import WarcReader

    (tmp_path / "in").mkdir()
    texts = write_wet(tmp_path / "in" / "sample.warc.wet.gz")
    assert run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out")).returncode == 0
    assert run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "run"),
                       "--format", "warc").returncode == 0
    expected = [("conversion", "text/plain", uri, response_id(uri), "eng") for uri in texts]
    for cleaned in (tmp_path / "out" / "sample.warc.wet.gz", tmp_path / "run" / "documents" / "00000.warc.wet.gz"):
        assert sorted(wet_records(cleaned)) == sorted(expected)
        (tmp_path / "alone").mkdir()
        cleaned.rename(tmp_path / "alone" / cleaned.name)
        by_datatrove = {d.metadata["url"]: d.text for d in WarcReader(str(tmp_path / "alone")).run()}
        assert by_datatrove == cleaned_texts(tmp_path / "alone" / cleaned.name) and len(by_datatrove) == len(texts)
        again = run_plexity("clean", str(tmp_path / "alone"), "--output-dir", str(tmp_path / "again"))
        assert f"{len(texts)} records of a cleaned WARC, read back as text" in again.stdout, again.stderr
        assert sorted(wet_records(tmp_path / "again" / cleaned.name)) == sorted(expected)
        for folder in ("alone", "again"):
            for path in (tmp_path / folder).iterdir():
                path.unlink()
            (tmp_path / folder).rmdir()


def test_plexity_run_format_warc_names_its_files_wet_when_every_input_is_a_wet_file(tmp_path):
    """WET in, WET out, as `plexity clean` names a cleaned WET file after its input: a task's file holds
    conversion records only when every input is a WET file (by its name); a task may read a WARC and a WET
    file together, and its file of response and conversion records is a WARC."""
    (tmp_path / "wet").mkdir()
    write_wet(tmp_path / "wet" / "sample.warc.wet.gz")
    wet = run_plexity("run", str(tmp_path / "wet"), "--output-dir", str(tmp_path / "run-wet"), "--format", "warc")
    assert wet.returncode == 0, wet.stderr[-2000:]
    # Before: 00000.warc.gz, a WET file named as a crawl's WARC
    assert sorted(p.name for p in (tmp_path / "run-wet" / "documents").iterdir()) == ["00000.warc.wet.gz"]
    assert {record[0] for record in wet_records(tmp_path / "run-wet" / "documents" / "00000.warc.wet.gz")} == {
        "conversion"}
    (tmp_path / "mixed").mkdir()
    write_wet(tmp_path / "mixed" / "a.warc.wet.gz")
    (tmp_path / "mixed" / "b.warc.gz").write_bytes(SAMPLE.read_bytes())
    mixed = run_plexity("run", str(tmp_path / "mixed"), "--output-dir", str(tmp_path / "run-mixed"),
                        "--format", "warc", "--tasks", "1")
    assert mixed.returncode == 0, mixed.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "run-mixed" / "documents").iterdir()) == ["00000.warc.gz"]
    assert {record[0] for record in wet_records(tmp_path / "run-mixed" / "documents" / "00000.warc.gz")} == {
        "conversion", "response"}


def test_plexity_run_passes_wet_text_by_the_extractor_and_cleans_it_as_plexity_clean_does(tmp_path):
    (tmp_path / "in").mkdir()
    texts = write_wet(tmp_path / "in" / "sample.warc.wet.gz")
    result = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert f"{len(texts)} documents, {len(texts)} of them WET records' text, not extracted" in result.stdout
    documents = read_jsonl_dir(tmp_path / "run" / "documents")
    assert {d["metadata"]["warc_type"] for d in documents} == {"conversion"}
    assert {d["metadata"]["plexity_method"] for d in documents} == {"regions"}
    steps = {step["name"]: step["stats"] for step in json.loads((tmp_path / "run" / "logs" / "stats.json").read_text())}
    extractor = next(stats for name, stats in steps.items() if "learned" in name)
    assert total(extractor["page_texts"]) == len(texts) and "extracted" not in extractor
    regions = PerplexityScorer(method="regions")
    assert {d["metadata"]["url"]: d["text"] for d in documents} == {
        uri: regions.clean(text).text for uri, text in texts.items() if regions.clean(text).text}


def test_the_filter_step_takes_another_method_for_wet_text_when_told(tmp_path):
    from datatrove.data import Document

    from plexity_plugins.datatrove import PerplexitySentenceFilter

    text = next(iter(write_wet(tmp_path / "sample.warc.wet.gz").values()))
    step = PerplexitySentenceFilter(page_text_method="region")
    wet = Document(text=text, id="wet", metadata={"warc_type": "conversion"})
    html_text = Document(text=text, id="extracted", metadata={})
    assert list(step.run([wet, html_text]))
    assert (wet.metadata["plexity_method"], html_text.metadata["plexity_method"]) == ("region", "trim")
    assert wet.text == PerplexityScorer(method="region").clean(text).text


def test_after_datatrove_s_own_warc_reader_the_filter_is_told_the_method(tmp_path):
    # datatrove's WarcReader reads a WET file's text too, but its Documents do not say they are a
    # page's whole text: with it, give the filter method="regions" (docs/datatrove.md).
    from datatrove.pipeline.readers import WarcReader

    from plexity_plugins.datatrove import PerplexitySentenceFilter

    (tmp_path / "in").mkdir()
    texts = write_wet(tmp_path / "in" / "sample.warc.wet.gz")
    documents = list(WarcReader(str(tmp_path / "in")).run())
    assert {d.metadata["url"]: d.text for d in documents} == texts
    kept = {d.metadata["url"]: d.text for d in PerplexitySentenceFilter(method="regions").run(documents)}
    regions = PerplexityScorer(method="regions")
    assert kept == {uri: regions.clean(text).text for uri, text in texts.items() if regions.clean(text).text}


def test_a_cleaned_wet_file_read_back_by_the_datatrove_reader_is_marked_cleaned_text_as_a_cleaned_warc_is(tmp_path):
    """The datatrove reader marks a cleaned WET record's text ``cleaned_text`` (the extractor steps pass
    it on, not read as a page), and keeps which page it is of, as it does a WET record's."""
    from plexity_plugins.datatrove.readers import CLEANED_TEXT_KEY, WarcHtmlReader

    (tmp_path / "in").mkdir()
    texts = write_wet(tmp_path / "in" / "sample.warc.wet.gz")
    assert run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out")).returncode == 0
    (tmp_path / "out" / "plexity-stats.json").unlink()
    documents = list(WarcHtmlReader(str(tmp_path / "out")).run())
    assert sorted(d.metadata["url"] for d in documents) == sorted(texts)
    for document in documents:
        assert document.metadata.get(CLEANED_TEXT_KEY) is True, document.metadata
        assert document.metadata["warc_type"] == ""  # (not a WET page's whole text: that is cleaned again)
        assert document.metadata["warc_refers_to"] == response_id(document.metadata["url"])
