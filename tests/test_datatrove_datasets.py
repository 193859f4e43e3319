"""Text datasets already extracted (FineWeb-like JSONL, JSONL.gz and Parquet rows with a ``text``
field), read by datatrove's own readers, cleaned by `PerplexitySentenceFilter` and written by
datatrove's own writers, on datatrove's `LocalPipelineExecutor`."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter
from helpers import read_jsonl_dir

ENGLISH = ("The city council approved the budget on Tuesday after a long debate about school funding. "
           "The plan adds two libraries and repairs forty miles of road over the next three years.")
GERMAN = ("Der Stadtrat hat am Dienstag nach einer langen Debatte über die Finanzierung der Schulen den "
          "Haushalt beschlossen. Der Plan sieht zwei neue Bibliotheken und die Sanierung vieler Straßen vor.")
CHINESE = ("市议会周二在就学校经费进行长时间辩论后批准了预算。"
           "该计划将在未来三年内增加两座图书馆并修复四十英里的道路。")

# FineWeb's columns: text, id, url, language (datatrove's LanguageFilter's label) and more metadata
ROWS = [
    {"id": "en", "text": ENGLISH, "url": "http://t/en", "language": "en", "metadata": {"dump": "CC-1"}},
    {"id": "de", "text": GERMAN, "url": "http://t/de", "metadata": {"dump": "CC-1"}},  # no label: identified
    {"id": "zh", "text": CHINESE, "url": "http://t/zh", "language": "zh", "metadata": {"dump": "CC-1"}},
    {"id": "menu", "text": "Home | News | Sport", "url": "http://t/menu", "language": "en", "metadata": {}},
    {"id": "blank", "text": "  \n ", "url": "http://t/blank", "language": "en", "metadata": {}},
    {"id": "en2", "text": ENGLISH + "\n" + ENGLISH, "url": "http://t/en2", "language": "en", "metadata": {}},
]


def write_jsonl(folder: Path, rows: list[dict], name: str = "part.jsonl.gz") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / name, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder


def plexity_fields(doc: Document | dict) -> dict:
    meta = doc.metadata if isinstance(doc, Document) else doc["metadata"]
    return {key: value for key, value in meta.items() if key.startswith("plexity_")}


def test_every_document_gets_every_plexity_field_with_one_type_never_none():
    """A field without a value is "" (text) or NaN (numbers), so that a column has one type."""
    step = PerplexitySentenceFilter(annotate=True)  # (annotate: would_drop set for some documents only)
    docs = [Document(text=row["text"], id=row["id"], metadata={"language": row.get("language")}) for row in ROWS]
    for doc in docs:
        step.filter(doc)
    fields = [plexity_fields(doc) for doc in docs]
    assert all(f.keys() == fields[0].keys() for f in fields)
    for key in fields[0]:
        assert {type(f[key]) for f in fields} in ({str}, {int}, {float}), key
    german = fields[1]
    assert german["plexity_passthrough"] == "language:de" and german["plexity_reason"] == ""
    assert math.isnan(german["plexity_ppl_mean"]) and math.isnan(german["plexity_doc_perplexity"])
    assert fields[0]["plexity_passthrough"] == "" and fields[0]["plexity_ppl_mean"] > 0

    by_document = PerplexityDocumentFilter(label_only=True)
    for doc in docs:
        by_document.filter(doc)
    fields = [plexity_fields(doc) for doc in docs]
    assert all(f.keys() == fields[0].keys() for f in fields)
    assert fields[1]["plexity_doc_model"] == "" and math.isnan(fields[1]["plexity_doc_perplexity"])


def test_jsonl_writer_writes_a_number_without_value_as_null(tmp_path):
    write_jsonl(tmp_path / "in", ROWS)
    LocalPipelineExecutor(pipeline=[
        JsonlReader(str(tmp_path / "in")),
        PerplexitySentenceFilter(exclusion_writer=JsonlWriter(str(tmp_path / "excluded"))),
        JsonlWriter(str(tmp_path / "out")),
    ], tasks=1, logging_dir=str(tmp_path / "logs")).run()
    docs = {d["id"]: d for d in read_jsonl_dir(tmp_path / "out")}
    assert docs["de"]["metadata"]["plexity_ppl_mean"] is None  # (NaN, written by orjson as null)
    assert docs["de"]["metadata"]["plexity_passthrough"] == "language:de"
    assert docs["en"]["metadata"]["plexity_passthrough"] == ""
    excluded = {d["id"]: d["metadata"]["filter_reason"] for d in read_jsonl_dir(tmp_path / "excluded")}
    assert excluded == {"menu": "too_short", "blank": "empty_input"}


def test_parquet_in_parquet_out_with_datatrove_own_reader_and_writer(tmp_path):
    """ParquetWriter takes its schema from the first document: a field None there and a string
    or a number later (the German page's passthrough, its NaN perplexities) stopped the task."""
    import pyarrow as pa  # (the [test] extra's: datatrove's Parquet steps need it)
    import pyarrow.parquet as pq
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter

    (tmp_path / "in").mkdir()
    table = pa.Table.from_pylist([{k: v for k, v in row.items() if k != "metadata"} | {"dump": "CC-1"}
                                  for row in ROWS])
    pq.write_table(table, tmp_path / "in" / "part.parquet")
    LocalPipelineExecutor(pipeline=[
        ParquetReader(str(tmp_path / "in")),
        PerplexitySentenceFilter(exclusion_writer=ParquetWriter(str(tmp_path / "excluded"), batch_size=1)),
        PerplexityDocumentFilter(label_only=True),
        ParquetWriter(str(tmp_path / "out"), batch_size=2),
    ], tasks=1, logging_dir=str(tmp_path / "logs")).run()
    out = pq.read_table(tmp_path / "out").to_pylist()
    assert [d["id"] for d in out] == ["en", "de", "zh", "en2"]
    assert [d["metadata"]["plexity_passthrough"] for d in out] == ["", "language:de", "language:zh", ""]
    excluded = pq.read_table(tmp_path / "excluded").to_pylist()
    assert [(d["id"], d["metadata"]["filter_reason"]) for d in excluded] == [("menu", "too_short"),
                                                                             ("blank", "empty_input")]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_second_perplexity_filter_s_fields_win_and_the_first_s_are_kept(tmp_path, fmt):
    """Two perplexity filters in one pipeline write the same plexity_* fields: the later step's describe the
    document (its text as it now is), and the earlier step's values are kept, not overwritten, in
    ``plexity_earlier``, each set with the name of the step that replaced it; Parquet writes them too."""
    import pyarrow.parquet as pq
    from datatrove.pipeline.writers import ParquetWriter

    write_jsonl(tmp_path / "in", [{k: v for k, v in row.items() if k != "metadata"} for row in (ROWS[0], ROWS[5])])
    trim = PerplexitySentenceFilter(method="trim")
    regions = PerplexitySentenceFilter(method="regions", threshold=100_000)
    document = PerplexityDocumentFilter(label_only=True)
    out = str(tmp_path / "out")
    writer = ParquetWriter(out, batch_size=1) if fmt == "parquet" else JsonlWriter(out)
    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "in")), trim, regions, document, writer],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    docs = pq.read_table(tmp_path / "out").to_pylist() if fmt == "parquet" else read_jsonl_dir(tmp_path / "out")
    assert [d["id"] for d in docs] == ["en", "en2"]
    for doc in docs:
        meta = doc["metadata"]
        assert meta["plexity_method"] == "regions" and meta["plexity_threshold"] == 100_000
        first, second = meta["plexity_earlier"]
        assert first["replaced_by"] == regions.name and first["plexity_method"] == "trim"
        assert first["plexity_threshold"] == trim.threshold and first["plexity_verdict"] == "kept"
        # the document filter replaced the sentence filter's document perplexity (before its cleaning)
        assert second["replaced_by"] == document.name
        # (Parquet's list of structs has every set's fields, null where a set has none)
        assert {key for key, value in second.items() if value is not None} == {
            "replaced_by", "plexity_doc_perplexity", "plexity_passthrough"}
        assert meta["plexity_doc_model"] == "en-default" and meta["plexity_doc_would_drop"] == ""


def test_a_row_whose_text_or_language_is_no_string_is_one_counted_drop_not_the_end_of_the_task(tmp_path):
    """A dataset's row with a list of paragraphs or a dict as its text, or a number as its language
    label, stopped the task (TypeError, AttributeError); the other rows were lost.  (A number as
    its text already stops datatrove's JsonlReader, which takes its len().)"""
    rows = [{"id": "fields", "text": {"title": "A", "body": ENGLISH}},
            {"id": "paragraphs", "text": [ENGLISH, ENGLISH]},
            {"id": "odd-label", "text": ENGLISH, "language": 7},  # (ignored: the text's language is identified)
            {"id": "en", "text": ENGLISH, "language": "en"}]
    write_jsonl(tmp_path / "in", rows)
    step = PerplexitySentenceFilter(exclusion_writer=JsonlWriter(str(tmp_path / "excluded")))
    LocalPipelineExecutor(pipeline=[
        JsonlReader(str(tmp_path / "in")), step, PerplexityDocumentFilter(label_only=True),
        JsonlWriter(str(tmp_path / "out")),
    ], tasks=1, logging_dir=str(tmp_path / "logs")).run()
    assert sorted(d["id"] for d in read_jsonl_dir(tmp_path / "out")) == ["en", "odd-label"]
    excluded = {d["id"]: d["metadata"]["filter_reason"] for d in read_jsonl_dir(tmp_path / "excluded")}
    assert excluded == {"fields": "input_not_text", "paragraphs": "input_not_text"}
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    filter_stats = next(s["stats"] for s in stats if s["name"] == str(step))
    assert filter_stats["total"] == 4 and filter_stats["dropped_input_not_text"] == 2
    by_document = PerplexityDocumentFilter(max_perplexity=1000)
    assert by_document.filter(Document(text=[ENGLISH], id="x")) == (False, "input_not_text")


def test_html_given_as_text_is_counted_and_named_once_in_the_task_log(tmp_path):
    """A dataset of HTML pages in its text field, with no extractor before the filter: the
    markup was cleaned as text and written without a word said."""
    page = ("<!DOCTYPE html>\n<html><head><title>News</title></head><body>\n<nav>Home | News</nav>\n"
            f"<p>{ENGLISH}</p>\n</body></html>")
    write_jsonl(tmp_path / "in", [{"id": "p1", "text": page}, {"id": "p2", "text": "\ufeff  " + page},
                                  {"id": "en", "text": ENGLISH + "\n<p>is not a page</p>"}])
    step = PerplexitySentenceFilter()
    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "in")), step, JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    assert next(s["stats"] for s in stats if s["name"] == str(step))["looks_like_html"] == 2
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert log.count("its text is an HTML page") == 1 and "put an extractor step before it" in log


def test_a_pipeline_without_an_extractor_stops_its_task_at_the_third_html_page_naming_the_fix(tmp_path):
    """The README's pipeline without its extractor: every page was cleaned as text, markup and all, written,
    and counted in looks_like_html, with a warning in the task's log; the run succeeded."""
    from datatrove.pipeline.readers import JsonlReader

    from plexity_plugins.datatrove import HtmlPagesNotText, LocalTaskExecutor, TasksFailed, WarcHtmlReader
    from helpers import SAMPLE, split_warc

    def pipeline(reader, out, **options):
        return [reader, PerplexitySentenceFilter(**options), JsonlWriter(str(tmp_path / out))]

    with pytest.raises(HtmlPagesNotText, match=r"^PerplexitySentenceFilter: the first 3 texts of this task are HTML "
                                               r"pages \(the last, document '<urn:uuid:[^']+>', starts '<!DOCTYPE "
                                               r"html>\\n<html.*put one between the reader and the filter "
                                               r"\(LearnedExtractor\(\), HtmlTagsExtractor\(\), datatrove's "
                                               r"Trafilatura\(\) \.\.\.\); or, if these texts are HTML on purpose, "
                                               r"give allow_html_pages=True"):
        LocalTaskExecutor(pipeline(WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name), "out"), tasks=1,
                          logging_dir=str(tmp_path / "logs")).run()
    # tasks in processes of their own: the run names why, and not to run the same again
    split_warc(SAMPLE, tmp_path / "shards", 2)
    with pytest.raises(TasksFailed, match=r"task 0: its first texts are HTML pages: no extractor step comes before "
                                          r"PerplexitySentenceFilter .*task 1: .*correct the pipeline, then run it "
                                          r"again$"):
        LocalTaskExecutor(pipeline(WarcHtmlReader(str(tmp_path / "shards")), "out2"), tasks=2, workers=2,
                          logging_dir=str(tmp_path / "logs2")).run()
    # pages on purpose: cleaned as text and counted, without a word in the log
    pages = [{"id": f"p{i}", "text": f"<html><body><p>{ENGLISH}</p></body></html>"} for i in range(4)]
    write_jsonl(tmp_path / "in", pages)
    step = PerplexitySentenceFilter(allow_html_pages=True)
    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "in")), step, JsonlWriter(str(tmp_path / "kept"))],
                          tasks=1, logging_dir=str(tmp_path / "logs3")).run()
    stats = json.loads((tmp_path / "logs3" / "stats.json").read_text())
    assert next(s["stats"] for s in stats if s["name"] == str(step))["looks_like_html"] == 4
    assert "its text is an HTML page" not in (tmp_path / "logs3" / "logs" / "task_00000.log").read_text()


def test_a_pdf_or_binary_bytes_as_text_are_dropped_as_input_not_text(tmp_path):
    """A PDF's bytes in the text field (decoded as latin-1 into a JSONL row, or a Parquet binary
    column) were cleaned as text and kept: thousands of characters of garbage and U+FFFD."""
    pdf = (b"%PDF-1.4\n" + bytes(range(256)) * 20).decode("latin-1")
    write_jsonl(tmp_path / "in", [{"id": "pdf", "text": pdf}, {"id": "en", "text": ENGLISH}])
    step = PerplexitySentenceFilter(exclusion_writer=JsonlWriter(str(tmp_path / "excluded")))
    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "in")), step, JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    assert [d["id"] for d in read_jsonl_dir(tmp_path / "out")] == ["en"]
    assert [d["metadata"]["filter_reason"] for d in read_jsonl_dir(tmp_path / "excluded")] == ["input_not_text"]
    assert "document 'pdf': its text is PDF, not text" in (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    noise = bytes([0, 1, 2, 3, 200, 150, 7, 8]) * 1000  # (bytes: what a Parquet binary column gives)
    assert step.filter(Document(text=noise, id="noise")) == (False, "input_not_text")
    by_document = PerplexityDocumentFilter(max_perplexity=1000)
    assert by_document.filter(Document(text=noise, id="noise")) == (False, "input_not_text")
    assert step.filter(Document(text=ENGLISH.encode(), id="utf-8 bytes")) is True


def test_plexity_run_extractor_none_cleans_the_pages_as_text_as_asked(tmp_path):
    # (no extractor on purpose: the filter's stop for a pipeline without one does not apply)
    from helpers import REPO, run_plexity

    done = run_plexity("run", str(REPO / "examples"), "--output-dir", str(tmp_path / "out"), "--extractor", "none")
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "logs" / "stats.json").read_text())
    assert next(s["stats"] for s in stats if "Perplexity" in s["name"])["looks_like_html"] == 12
