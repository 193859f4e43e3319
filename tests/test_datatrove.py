"""The datatrove steps and `plexity run` with the local executor, on real WARC files."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dill
import pytest
from datatrove.data import Document
from datatrove.pipeline.writers import JsonlWriter
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from plexity_plugins.datatrove import (PerplexityDocumentFilter, PerplexitySentenceFilter, WarcHtmlReader,
                                      filter as filter_module)
from helpers import REPO, SAMPLE, html_uris, read_jsonl_dir, read_warc_dir, run_plexity, split_warc


ARTICLE = ("The council approved the budget for the new library on Tuesday. "
           "The library will open in the spring and will stay open late on weekdays. "
           "Residents asked the council about the road to the river, and the mayor said it would be finished soon.")
BOILERPLATE = "Share on Facebook\nCookie settings | Accept all\nSubscribe ▸ Login ▸ Menu ▸ RSS ▸ Sitemap"
GERMAN = ("Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen. Die Bibliothek soll im "
          "Frühjahr öffnen und an Werktagen lange geöffnet bleiben. Die Anwohner fragten nach der Straße zum Fluss.")


# -- helpers shared with test_datatrove_slurm.py ---------------------------------------


def _response(writer, uri: str, body: bytes, content_type: str | None, rec_type: str = "response"):
    headers = StatusAndHeaders("200 OK", [("Content-Type", content_type)] if content_type else [],
                               protocol="HTTP/1.1")
    return writer.create_warc_record(uri, rec_type, payload=io.BytesIO(body), http_headers=headers)


def page(*paragraphs: str) -> str:
    return "<html><body>" + "".join(f"<p>{p}</p>\n" for p in paragraphs) + "</body></html>"


# -- the filter step --------------------------------------------------------------------

def test_filter_removes_boilerplate_sentences_and_describes_what_it_did():
    step = PerplexitySentenceFilter(method="region")  # embedded model; raw text: the "region" method
    doc = Document(text=ARTICLE + "\n" + BOILERPLATE, id="d1")
    assert step.filter(doc) is True
    assert doc.text == ARTICLE  # the three lines of boilerplate dropped, the article's three sentences kept
    meta = doc.metadata
    assert meta["plexity_model"] == "en-default" and meta["plexity_threshold"] == step.threshold
    assert meta["plexity_sentences"] == 6 and meta["plexity_sentences_dropped"] == 3
    assert meta["plexity_chars_before"] == len(ARTICLE + "\n" + BOILERPLATE)
    assert meta["plexity_chars_after"] == len(doc.text)
    assert meta["plexity_ppl_median"] <= meta["plexity_ppl_mean"]
    stats = step.stats
    assert stats["sentences_kept"].total == 3 and stats["sentences_dropped"].total == 3
    assert stats["chars_dropped"].total > 0 and stats["chars_kept"].total > stats["chars_dropped"].total


def test_filter_drops_documents_with_too_little_left_and_writes_them_with_the_reason(tmp_path):
    step = PerplexitySentenceFilter(method="region", min_chars=50, min_kept_fraction=0.6,
                                    exclusion_writer=JsonlWriter(str(tmp_path / "excluded")))
    docs = [Document(text=ARTICLE, id="article"),
            Document(text=BOILERPLATE, id="menu"),                       # nothing left
            Document(text=ARTICLE[:64] + "\n" + BOILERPLATE * 3, id="mostly-menu"),  # too little kept
            Document(text="   ", id="blank")]
    kept = list(step.run(iter(docs)))
    assert [d.id for d in kept] == ["article"]
    excluded = {d["id"]: d["metadata"]["filter_reason"] for d in read_jsonl_dir(tmp_path / "excluded")}
    assert excluded == {"menu": "too_short", "mostly-menu": "too_little_kept", "blank": "empty_input"}
    assert step.stats["dropped"].total == 3 and step.stats["dropped_too_short"].total == 1
    # a dropped document is written whole, to be audited (not what the filter would have left of it)
    texts = {d["id"]: d["text"] for d in read_jsonl_dir(tmp_path / "excluded")}
    assert texts["menu"] == BOILERPLATE and texts["mostly-menu"] == docs[2].text


def test_a_batch_size_under_one_is_refused_when_the_step_is_made():
    # (datatrove's own check came only as the run started, from inside its batching)
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"batch_size is {bad}: 1 or more"):
            PerplexitySentenceFilter(batch_size=bad)


def test_plexity_run_s_jsonl_writer_writes_exactly_what_datatrove_s_writes(tmp_path):
    import dataclasses

    from datatrove.data import Media

    from plexity_plugins.datatrove import JsonlDocumentWriter

    # (a Media of the fields this datatrove has: id and media_bytes came after 0.6)
    media = {"id": "m", "type": 0, "url": "http://t/m.png", "media_bytes": b"png"}
    media = Media(**{f.name: media[f.name] for f in dataclasses.fields(Media) if f.name in media})
    docs = [Document(text=ARTICLE, id="a", metadata={"url": "http://t/a", "plexity_reason": None,
                                                     "nested": {"list": [1, 2.5, "x"]}}),
            Document(text="", id="empty", metadata={}),
            Document(text=ARTICLE, id="with-media", media=[media])]
    for name, writer_class, options in (("ours", JsonlDocumentWriter, {}), ("datatrove", JsonlWriter, {}),
                                        ("ours-expanded", JsonlDocumentWriter, {"expand_metadata": True}),
                                        ("datatrove-expanded", JsonlWriter, {"expand_metadata": True})):
        with writer_class(str(tmp_path / name), **options) as writer:
            for doc in docs:
                writer.write(doc, rank=0)
    for ours, theirs in (("ours", "datatrove"), ("ours-expanded", "datatrove-expanded")):
        written = [gzip.decompress((tmp_path / name / "00000.jsonl.gz").read_bytes()) for name in (ours, theirs)]
        assert written[0] == written[1] and written[0].count(b"\n") == 3
    assert pickle.loads(pickle.dumps(JsonlDocumentWriter(str(tmp_path / "p")))).name == JsonlWriter.name


def test_a_lone_surrogate_in_a_document_s_id_or_metadata_is_written_as_u_fffd_and_counted(tmp_path):
    # (a JSON "\\ud800" escape read by json.loads puts one in a str; no encoding holds it: orjson and warcio raised,
    # and the task failed; the filter cleans the text, not the id or the metadata)
    from plexity_plugins.datatrove import JsonlDocumentWriter, WarcResponseWriter

    doc = Document(text=ARTICLE + " \ud800", id="doc-\udc00", metadata={"url": "http://t/\ud800a",
                                                                       "tags": ["ok", "b\udfff"], "\ud801": 1})
    for writer_class in (JsonlDocumentWriter, WarcResponseWriter):
        with writer_class(str(tmp_path / writer_class.__name__)) as writer:
            writer.write(doc, rank=0)
        assert writer.stats["surrogates_replaced"].total == 5
    (line,) = gzip.decompress((tmp_path / "JsonlDocumentWriter" / "00000.jsonl.gz").read_bytes()).splitlines()
    assert json.loads(line) == {"text": ARTICLE + " \ufffd", "id": "doc-\ufffd",
                                "metadata": {"url": "http://t/\ufffda", "tags": ["ok", "b\ufffd"], "\ufffd": 1}}
    with open(tmp_path / "WarcResponseWriter" / "00000.warc.gz", "rb") as f:
        (record,) = [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read().decode())
                     for r in ArchiveIterator(f) if r.rec_type == "response"]
    assert record == ("http://t/\ufffda", ARTICLE + " \ufffd")
    assert doc.metadata["url"] == "http://t/\ud800a"  # (the document itself is left as it came)


def test_annotate_keeps_everything_and_marks_the_would_be_dropped_sentences():
    step = PerplexitySentenceFilter(annotate=True)
    doc = Document(text=BOILERPLATE, id="menu")
    assert step.filter(doc) is True
    assert "Share on Facebook" in doc.text  # nothing removed ...
    # ... the sentence the filter would drop marked (trim: the short edge block far above the page)
    assert re.findall(r'<ppl score="[0-9.]+">(.*?)</ppl>', doc.text) == ["Subscribe ▸ Login ▸ Menu ▸ RSS ▸ Sitemap"]
    assert doc.metadata["plexity_would_drop"] == "too_short"  # and the document, for being short


def test_documents_in_another_language_pass_through_unchanged_and_are_counted():
    kept = PerplexitySentenceFilter()
    doc = Document(text=GERMAN, id="de")
    assert kept.filter(doc) is True
    assert doc.text == GERMAN and doc.metadata["plexity_passthrough"] == "language:de"
    assert kept.stats["passthrough"].total == 1
    dropped = PerplexitySentenceFilter(other_languages="drop")
    assert dropped.filter(Document(text=GERMAN, id="de")) == (False, "other_language")
    gutted = PerplexitySentenceFilter(method="region", language_check=False)  # English model, German text
    doc = Document(text=GERMAN, id="de")
    gutted.filter(doc)
    assert doc.metadata["plexity_sentences_dropped"] >= 2


def test_the_default_method_suits_extractor_output_and_is_recorded():
    step = PerplexitySentenceFilter()
    assert step.method == "trim" and step.threshold == step.scorer.info.threshold_extracted
    doc = Document(text="Share on Facebook\n" + ARTICLE, id="x")
    assert step.filter(doc) is True
    assert doc.text.startswith("The council") and doc.metadata["plexity_method"] == "trim"


def test_the_step_pickles_without_the_model_and_opens_it_once_per_process():
    step = PerplexitySentenceFilter()
    assert len(pickle.dumps(step)) < 20_000 and len(dill.dumps(step)) < 20_000  # no KenLM model inside
    filter_module._PROCESS_SCORERS.clear()
    copies = [pickle.loads(pickle.dumps(step)) for _ in range(3)]  # what executors hand each task
    for copy in copies:
        copy.filter(Document(text=ARTICLE, id="x"))
    assert len(filter_module._PROCESS_SCORERS) == 1
    assert all(copy.scorer is copies[0].scorer for copy in copies)


RUN_PICKLED_PIPELINE = """
import sys, dill
from datatrove.executor import LocalPipelineExecutor
with open(sys.argv[1], "rb") as f:
    pipeline = dill.load(f)
LocalPipelineExecutor(pipeline, tasks=1, logging_dir=sys.argv[2]).run()
"""


def test_relative_paths_name_the_driver_s_folder_in_a_worker_started_in_another(tmp_path, tiny_model, monkeypatch):
    """A pipeline written with relative paths (the model, the input folder and its paths file, the
    output folder), pickled as executors hand it to Ray or Slurm workers, and run in another folder:
    each path names what it named where the pipeline was made."""
    from plexity_plugins.datatrove import HtmlTagsExtractor, JsonlDocumentWriter

    driver, elsewhere = tmp_path / "driver", tmp_path / "elsewhere"
    split_warc(SAMPLE, driver / "input", 2)
    (driver / "paths.txt").write_text(sorted(p.name for p in (driver / "input").iterdir())[0] + "\n")
    shutil.copytree(tiny_model, driver / "models" / "tiny")
    elsewhere.mkdir()
    monkeypatch.chdir(driver)
    pipeline = [WarcHtmlReader("input", paths_file="paths.txt", limit=5), HtmlTagsExtractor(),
                PerplexitySentenceFilter(model="models/tiny", language_check=False, min_chars=0),
                PerplexityDocumentFilter(model=Path("models/tiny"), language_check=False, label_only=True),
                JsonlDocumentWriter("out")]
    (tmp_path / "pipeline.pkl").write_bytes(dill.dumps(pipeline))

    run = subprocess.run([sys.executable, "-c", RUN_PICKLED_PIPELINE, str(tmp_path / "pipeline.pkl"),
                          str(tmp_path / "logs")], cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    docs = read_jsonl_dir(driver / "out")
    assert len(docs) == 5 and {d["metadata"]["plexity_model"] for d in docs} == {"tiny"}
    assert all(d["metadata"]["plexity_doc_model"] == "tiny" for d in docs)
    assert list(elsewhere.iterdir()) == []


def test_a_wrong_model_fails_when_the_pipeline_is_built_not_in_a_worker(model_dir):
    from plexity_plugins.errors import ModelError

    with pytest.raises(ModelError):
        PerplexitySentenceFilter(model="no-such-model")


# -- bad WARC input -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bad_warcs(tmp_path_factory) -> Path:
    """WARC files with everything a crawl throws at a reader."""
    directory = tmp_path_factory.mktemp("bad-warcs")
    with open(directory / "mixed.warc.gz", "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(w.create_warcinfo_record("mixed.warc.gz", {"software": "tests"}))
        w.write_record(_response(w, "http://t/latin1", page("Café society met in the old town hall. " + ARTICLE)
                                 .encode("latin-1"), "text/html; charset=iso-8859-1"))
        w.write_record(_response(w, "http://t/meta-charset", (
            '<html><head><meta charset="windows-1252"></head><body><p>“Quoted” words in the report. '
            + ARTICLE + "</p></body></html>").encode("cp1252"), "text/html"))
        w.write_record(_response(w, "http://t/wrong-charset", page("Naïve résumé of the meeting. " + ARTICLE)
                                 .encode("utf-8"), "text/html; charset=ascii"))
        w.write_record(_response(w, "http://t/no-content-type", page(ARTICLE).encode(), None))
        w.write_record(_response(w, "http://t/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png"))
        w.write_record(_response(w, "http://t/paper.pdf", b"%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF", "application/pdf"))
        w.write_record(_response(w, "http://t/empty", b"", "text/html"))
        w.write_record(_response(w, "http://t/latin1", b"GET / HTTP/1.1\r\n\r\n", None, rec_type="request"))
        w.write_record(_response(w, "http://t/big", page(*[ARTICLE] * 42_000).encode(), "text/html; charset=utf-8"))
    # a truncated gzip member: the last record is cut in the middle
    with open(directory / "truncated.warc.gz", "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(_response(w, "http://t/before-the-cut", page(ARTICLE).encode(), "text/html"))
        w.write_record(_response(w, "http://t/cut", page(*[ARTICLE] * 50).encode(), "text/html"))
    data = (directory / "truncated.warc.gz").read_bytes()
    (directory / "truncated.warc.gz").write_bytes(data[:-200])
    # a gzip header followed by garbage (a corrupt download)
    (directory / "garbage.warc.gz").write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes(range(256)) * 4)
    return directory


def test_reader_decodes_charsets_and_counts_every_record_it_skips(bad_warcs):
    reader = WarcHtmlReader(str(bad_warcs), glob_pattern="mixed.warc.gz")
    docs = {d.metadata["url"]: d for d in reader()}
    assert set(docs) == {"http://t/latin1", "http://t/meta-charset", "http://t/wrong-charset",
                         "http://t/no-content-type", "http://t/big"}
    assert "Café society" in docs["http://t/latin1"].text
    assert "“Quoted”" in docs["http://t/meta-charset"].text
    assert len(docs["http://t/big"].text) > 10_000_000
    stats = reader.stats
    assert stats["records"].total == 10
    assert stats["skipped_not_response"].total == 2  # warcinfo, request
    assert stats["skipped_not_html"].total == 2  # PNG, PDF
    assert stats["skipped_empty_payload"].total == 1


def test_reader_survives_truncated_and_corrupt_files(bad_warcs):
    reader = WarcHtmlReader(str(bad_warcs), glob_pattern="[tg]*.warc.gz")
    urls = [d.metadata["url"] for d in reader()]
    assert urls == ["http://t/before-the-cut"]  # what precedes the cut is kept
    assert reader.stats["corrupt_files"].total == 2


def test_plexity_run_finishes_on_bad_input_and_reports_the_counts(bad_warcs, tmp_path):
    result = run_plexity("run", str(bad_warcs), "--output-dir", str(tmp_path / "out"), "--executor", "local",
                         "--extractor", "tags", "--workers", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "logs" / "stats.json").read_text())
    reader = next(s["stats"] for s in stats if "WARC HTML" in s["name"])
    assert reader["corrupt_files"]["total"] == 2 and reader["skipped_not_html"]["total"] == 2
    assert reader["skipped_empty_payload"]["total"] == 1 and reader["skipped_not_response"]["total"] == 2
    kept = {d["metadata"]["url"] for d in read_jsonl_dir(tmp_path / "out" / "documents")}
    assert {"http://t/big", "http://t/latin1", "http://t/before-the-cut"} <= kept
    assert "2 task" not in result.stderr  # nothing left to resume
    assert "merged stats:" in result.stdout


# -- plexity run on the sample --------------------------------------------------------------

def test_plexity_run_writes_cleaned_warcs_and_resumes_without_redoing_tasks(tmp_path):
    shards = tmp_path / "shards"
    split_warc(SAMPLE, shards, 3)
    out = tmp_path / "out"
    args = ("run", str(shards), "--output-dir", str(out), "--executor", "local", "--format", "warc",
            "--extractor", "tags", "--workers", "2")
    first = run_plexity(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "3/3 tasks completed (3 in this run" in first.stdout
    cleaned = read_warc_dir(out / "documents")
    excluded = {d["metadata"]["url"] for d in read_jsonl_dir(out / "excluded")}
    assert sorted([*cleaned, *excluded]) == sorted(html_uris(shards))  # each page once, kept or excluded
    truth = json.loads((REPO / "examples" / "sample_truth.json").read_text())
    # most article paragraphs are kept, almost every boilerplate line is gone (measured: 69/86, 21/557)
    article = [p[-40:] in cleaned[uri] for uri in cleaned for p in truth[uri]["article"]]
    boilerplate = [line in cleaned[uri] for uri in cleaned for line in truth[uri]["boilerplate"]]
    assert sum(article) / len(article) > 0.6 and sum(boilerplate) / len(boilerplate) < 0.15
    with open(next((out / "documents").glob("*.warc.gz")), "rb") as f:
        records = list(ArchiveIterator(f))
    assert records[0].rec_type == "warcinfo"
    assert records[1].rec_headers.get_header("WARC-Refers-To").startswith("<urn:")
    assert records[1].rec_headers.get_header("X-Plexity-Model") == "en-default"

    before = {p.name: p.stat().st_mtime_ns for p in (out / "documents").iterdir()}
    second = run_plexity(*args)
    assert second.returncode == 0 and "3/3 tasks completed (0 in this run" in second.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "documents").iterdir()} == before


LANGUAGE_TABLES_MAPPED = """
import sys
from pathlib import Path
from plexity_plugins.cli.run import build_pipeline, local_start_method

def mapped():  # the language identifier's tables (memory-mapped from the cache directory)
    return any("/langid/" in line for line in open("/proc/self/maps"))

pipeline = build_pipeline(sys.argv[1], Path(sys.argv[2]), extractor="tags")
before = mapped()
method = local_start_method(pipeline, workers=int(sys.argv[3]))
print(before, method, mapped())
"""


@pytest.mark.parametrize("workers, expected", [(1, "False forkserver False"), (2, "False fork True")])
def test_local_workers_are_forked_after_loading_the_language_identifier(tmp_path, workers, expected):
    """Several local workers share the parent's language tables copy-on-write: the run loads
    them, then forks; one worker needs no start method of its own, nor the tables loaded here."""
    # (the tables cached by an earlier process, as on any machine after its first run: then mapped)
    subprocess.run([sys.executable, "-c", "from plexity_plugins.text.language import identifier; identifier()"],
                   check=True, timeout=120)
    done = subprocess.run([sys.executable, "-c", LANGUAGE_TABLES_MAPPED, str(SAMPLE), str(tmp_path / "out"),
                           str(workers)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[-2] == expected


def test_reader_reads_on_after_a_record_with_a_too_long_content_length(tmp_path):
    """It used to raise TruncatedWarc there and lose the good records after it (warcio itself
    reads them all: each record is its own gzip member)."""
    from warc_corpus import write_corpus

    write_corpus(tmp_path)
    reader = WarcHtmlReader(str(tmp_path), glob_pattern="long-content-length.warc.gz")
    urls = [d.metadata["url"] for d in reader()]
    assert urls == ["http://t/cl-0", "http://t/cl-1", "http://t/cl-3", "http://t/cl-4", "http://t/cl-5"]
    # (and the file named damaged, as an uncompressed file with a wrong Content-Length is)
    assert reader.stats["skipped_truncated"].total == 1 and reader.stats["corrupt_files_corrupt"].total == 1


def test_reader_decodes_brotli_records_and_reads_on(tmp_path):
    """warcio 1.8.1 with brotli >= 1.2 raised AttributeError ('unused_data') on a
    Content-Encoding: br record, and the rest of the file was lost."""
    from warc_corpus import write_corpus

    write_corpus(tmp_path)
    reader = WarcHtmlReader(str(tmp_path), glob_pattern="mixed.warc.gz", max_payload_bytes=10_000)
    urls = [d.metadata["url"] for d in reader()]
    assert "http://t/brotli" in urls and urls[-1] == "http://t/last"
    assert reader.stats["corrupt_files"].total == 0


class _Moody:
    """An extractor that sleeps, fails or dies on cue (module level: the child runs it)."""

    @staticmethod
    def to_text(html: str) -> str:
        import os
        import time

        if "SLEEP" in html:
            time.sleep(30)
        if "FAIL" in html:
            raise ValueError("this page cannot be extracted")
        if "DIE" in html:
            os._exit(1)
        return html.upper()


def test_the_extractor_sandbox_counts_timeouts_failures_and_deaths_and_goes_on():
    """Each document gets its time limit in a child process: past it the child is replaced
    (``timeout``), an exception on a page is that page's ``clean_error`` (the child goes on), a
    child that dies is ``broken_process``; the documents after each are extracted as usual,
    non-ASCII and lone surrogates included."""
    from plexity_plugins.datatrove.extractors import _PlexityExtractor

    class Moody(_PlexityExtractor):
        name = "moody"
        to_text = staticmethod(_Moody.to_text)

    step = Moody(timeout=2)
    texts = ["café one", "SLEEP", "two \ud800", "FAIL", "three", "DIE", "four ü"]
    out = [d.text for d in step.run(iter(Document(text=t, id=str(i)) for i, t in enumerate(texts)))]
    assert out == ["CAFÉ ONE", "TWO \ud800", "THREE", "FOUR Ü"]
    counts = [step.stats[k].total for k in ("total", "extracted", "timeout", "clean_error", "broken_process")]
    assert counts == [7, 4, 1, 1, 1]


def test_plexity_run_names_only_the_folders_it_made(tmp_path):
    # The default pipeline keeps every page of the sample: no excluded/ folder is made, and the
    # summary says "none" instead of naming it; the logs are DIR/logs, not DIR/logs/logs.
    out = tmp_path / "out"
    result = run_plexity("run", str(SAMPLE), "--output-dir", str(out), "--executor", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (out / "excluded").exists()
    assert "dropped documents: none" in result.stdout
    assert f"cleaned documents: {out / 'documents'}" in result.stdout
    assert f"logs: {out / 'logs'}\n" in result.stdout and "logs/logs" not in result.stdout
    for line in result.stdout.splitlines():
        label, _, path = line.partition(": ")
        if label in ("cleaned documents", "dropped documents", "logs", "merged stats") and path != "none":
            assert Path(path).exists(), line


def test_dropping_other_languages_without_the_language_check_is_refused_where_the_step_is_made():
    # (nothing is ever found in another language then: "drop" used to drop nothing, silently)
    for step in (PerplexitySentenceFilter, PerplexityDocumentFilter):
        with pytest.raises(ValueError, match=r"^other_languages='drop' with language_check=False: without the "
                                             r"language check no document is found in another language, so none "
                                             r"would be dropped: leave out language_check=False to drop them"):
            step(language_check=False, other_languages="drop")
    PerplexityDocumentFilter(language_check=False, other_languages="drop", label_only=True)  # (drops nothing)
    # a language -> model map still routes by the language an upstream step labelled: "drop" drops the unmapped
    step = PerplexitySentenceFilter({"en": None}, language_check=False, other_languages="drop")
    assert step.filter(Document(text=GERMAN, id="de", metadata={"language": "de"})) == (False, "other_language")
