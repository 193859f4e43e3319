"""A stranger's first day, probe 32: a data engineer who already uses datatrove or Scrapy goes past the
README (datatrove's own writers and readers around plexity's steps, Scrapy feeds of other formats, the
command line as a Unix user reaches for it); each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("datatrove")
pq = pytest.importorskip("pyarrow.parquet")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.writers import ParquetWriter  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from warc_corpus import ARTICLE, page, response, write_warc  # noqa: E402

OTHER = ("Scientists from the university have measured the temperature of the river every morning for ten years. "
         "Their report shows that the water is cleaner than it has been for a generation.")


def run_pipeline(tmp_path, *steps) -> None:
    LocalPipelineExecutor(pipeline=list(steps), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()


def parquet_rows(folder) -> list[dict]:
    return [row for path in sorted(folder.glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


# -- datatrove's ParquetWriter after WarcHtmlReader ---------------------------------------------------

def test_a_crawl_with_a_page_the_crawler_cut_and_wet_text_is_written_by_datatroves_parquet_writer(tmp_path):
    # Before: WarcHtmlReader gave `warc_truncated` only to a page the crawler cut (WARC-Truncated, Common Crawl's
    # 1 MiB limit) and `warc_type`, `warc_refers_to` ... only to a WET record's text; datatrove's ParquetWriter takes
    # its schema from the first document, so the task stopped with "ValueError: Table schema does not match schema
    # used to create file" on the first crawl holding such a page, where datatrove's own WarcReader's did not.
    from plexity_plugins.datatrove import LearnedExtractor, PerplexitySentenceFilter, WarcHtmlReader

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    dummy = WARCWriter(io.BytesIO())
    html, wet = page(ARTICLE, OTHER).encode(), f"{ARTICLE}\n{OTHER}\n".encode()
    write_warc(crawl / "a.warc.gz", [
        response(dummy, "http://t/whole", html),
        response(dummy, "http://t/cut", html, warc_headers={"WARC-Truncated": "length"}),
        response(dummy, "http://t/undeclared", html, content_type=None),
    ])
    write_warc(crawl / "b.warc.wet.gz", [
        dummy.create_warc_record("http://t/wet", "conversion", payload=io.BytesIO(wet), length=len(wet),
                                 warc_headers_dict={"Content-Type": "text/plain", "WARC-Refers-To": "<urn:uuid:1>"}),
    ])
    run_pipeline(tmp_path, WarcHtmlReader(str(crawl)), LearnedExtractor(), PerplexitySentenceFilter(),
                 ParquetWriter(str(tmp_path / "documents")))
    metadata = {row["metadata"]["url"]: row["metadata"] for row in parquet_rows(tmp_path / "documents")}
    assert sorted(metadata) == ["http://t/cut", "http://t/undeclared", "http://t/wet", "http://t/whole"]
    assert {url: (m["warc_truncated"], m["warc_type"], m["warc_refers_to"]) for url, m in metadata.items()} == {
        "http://t/whole": ("", "", ""), "http://t/cut": ("length", "", ""), "http://t/undeclared": ("", "", ""),
        "http://t/wet": ("", "conversion", "<urn:uuid:1>")}
    assert metadata["http://t/wet"]["plexity_method"] == "regions"  # (still read as WET text)
