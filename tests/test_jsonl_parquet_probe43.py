"""Documents that are not WARC records: JSONL and Parquet datasets read by `JsonlDocumentReader` and
`ParquetDocumentReader` (datatrove's readers, every row a document or a counted, named skip, a damaged file named and
counted) and written by `JsonlDocumentWriter`, in real pipelines over files written here (docs/guarantees-input.md,
"Datasets: JSONL and Parquet")."""

from __future__ import annotations

import datetime
import decimal
import functools
import gzip
import http.server
import json
import random
import tracemalloc
from pathlib import Path

import pytest
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader, ParquetReader

from plexity_plugins.datatrove import JsonlDocumentReader, JsonlDocumentWriter, ParquetDocumentReader, \
    PerplexitySentenceFilter
from plexity_plugins.datatrove.run_counts import run_counts
from helpers import http_server, read_jsonl_dir

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TEXT = ("The council approved the budget for the new library on Tuesday after a long debate. "
        "It will open in the spring next year, with a reading room for children.")


def good(doc_id: str) -> bytes:
    return json.dumps({"id": doc_id, "text": TEXT}).encode() + b"\n"


def run(reader, tmp_path: Path, name: str = "out") -> tuple[dict, list[dict]]:
    """Run reader -> filter -> writer in one task; (the reader's counters, the documents written).  The task's log
    is `task_log`'s."""
    out = tmp_path / name
    LocalPipelineExecutor(pipeline=[reader, PerplexitySentenceFilter(), JsonlDocumentWriter(str(out / "docs"))],
                          tasks=1, logging_dir=str(out / "logs")).run()
    stats = json.loads((out / "logs" / "stats.json").read_text())
    counters = [{k: v.get("total", v) if isinstance(v, dict) else v for k, v in step["stats"].items()}
                for step in stats]
    return counters[0], read_jsonl_dir(out / "docs")


def small_and_big(tmp_path: Path) -> tuple[Path, str]:
    """A dataset folder of one JSONL file: a small document, then one of 2 MB; (the folder, the big one's text)."""
    folder = tmp_path / "ds"
    folder.mkdir()
    big = TEXT + " " + "Another sentence of the same long page goes here. " * 40_000
    (folder / "a.jsonl").write_bytes(good("small") + json.dumps({"id": "big", "text": big}).encode() + b"\n")
    return folder, big


def task_log(tmp_path: Path, name: str = "out") -> str:
    return (tmp_path / name / "logs" / "logs" / "task_00000.log").read_text()


def skipped(counters: dict) -> int:
    return sum(v for k, v in counters.items() if k.startswith("skipped_"))


def test_every_bad_jsonl_line_is_a_named_skip_and_the_task_completes(tmp_path):
    """datatrove's JsonlReader stopped the task on a text that is a number ("object of type 'int' has no len()"), a
    line that is a JSON list or null, a "media" that is not a list of its dicts; it skipped lines that are no JSON and
    rows without text counting them nowhere; a line of bytes that are not UTF-8 dropped the rest of the file."""
    lines = [
        b"\xef\xbb\xbf" + good("bom"),  # a UTF-8 BOM (orjson refuses it)
        b"this is not json\n",
        b"\n", b"\r\n",  # blank lines: no row
        json.dumps({"id": "missing"}).encode() + b"\n",
        json.dumps({"id": "null", "text": None}).encode() + b"\n",
        json.dumps({"id": "int", "text": 42}).encode() + b"\n",
        json.dumps({"id": "bool", "text": True}).encode() + b"\n",
        json.dumps({"id": "list", "text": [TEXT]}).encode() + b"\n",
        json.dumps([1, 2]).encode() + b"\n", b"null\n",
        json.dumps({"id": "media", "text": TEXT, "media": "x"}).encode() + b"\n",
        b'{"id": "surrogate", "text": "\\ud800 ' + TEXT.encode() + b'"}\r\n',  # orjson refuses a lone surrogate
        b'{"id": "latin1", "text": "caf\xe9. ' + TEXT.encode() + b'"}\n',  # not UTF-8: datatrove lost the rest
        good("after"),
        b'{"id": "cut", "text": "The coun',  # the last line cut short
    ]
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "a.jsonl").write_bytes(b"".join(lines))
    counters, docs = run(JsonlDocumentReader(str(tmp_path / "ds")), tmp_path)
    assert sorted(d["id"] for d in docs) == ["after", "bom", "latin1", "surrogate"]
    assert {k: v for k, v in counters.items() if k.startswith("skipped_")} == {
        "skipped_not_json": 2, "skipped_no_text": 2, "skipped_text_not_str": 3, "skipped_not_an_object": 2,
        "skipped_bad_media": 1}
    assert counters["rows"] == counters["documents"] + skipped(counters) == 14
    assert "skipped a.jsonl line 7: its text is not a string (int)" in task_log(tmp_path)  # (once a reason)
    by_id = {d["id"]: d for d in docs}
    assert "\ufffd" in by_id["latin1"]["text"] and by_id["latin1"]["metadata"]["plexity_replaced_chars"] == 1
    assert by_id["surrogate"]["metadata"]["plexity_replaced_chars"] == 1  # (the filter's U+FFFD)


def test_damaged_or_misnamed_compressed_jsonl_keeps_its_lines_and_is_named(tmp_path):
    """A .jsonl.gz cut short, or with bytes after its stream, a .jsonl.zst cut short, stopped datatrove's task
    (EOFError, naming no file); a .jsonl.gz that is plain text too (BadGzipFile), and a gzipped .jsonl gave a warning
    and no document."""
    from plexity_plugins.io.http_codings import zstd_module

    zstd = zstd_module()  # (Python 3.14's compression.zstd, or backports.zstd before it: Scrapy's dependency)

    rows = b"".join(good(str(i)) for i in range(3))
    noise = random.Random(4)  # (text that compresses little: the cut leaves most lines whole)
    many = b"".join(json.dumps({"id": str(i), "text": TEXT + " " + " ".join(
        "".join(noise.choice("abcdefghij") for _ in range(6)) for _ in range(20))}).encode() + b"\n"
        for i in range(400))
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "cut.jsonl.gz").write_bytes(gzip.compress(many)[:-500])
    (folder / "cut.jsonl.zst").write_bytes(zstd.compress(many)[:-500])
    (folder / "tail.jsonl.gz").write_bytes(gzip.compress(rows) + b"garbage")
    (folder / "plain.jsonl.gz").write_bytes(rows)
    (folder / "gzipped.jsonl").write_bytes(gzip.compress(rows))
    counters, docs = run(JsonlDocumentReader(str(folder)), tmp_path)
    assert counters["corrupt_files"] == 3
    assert counters["corrupt_files_truncated"] == 2 and counters["corrupt_files_corrupt"] == 1
    # (the lines before each damage: gzip's up to the cut; zstd's whole blocks of 128 KiB, none of this small file)
    assert counters["documents"] == len(docs) > 3 + 3 + 3 + 390
    assert skipped(counters) == 0
    log = task_log(tmp_path)
    assert all(f"damaged {name}: " in log for name in ("cut.jsonl.gz", "cut.jsonl.zst", "tail.jsonl.gz"))


def test_a_line_over_the_cap_is_skipped_without_being_held(tmp_path):
    """A line of 300 MB took datatrove's reader and the filter 1.86 GB and 60 s (measured); over
    `max_document_bytes` it is read past in pieces of 1 MiB, counted as skipped_too_large."""
    folder = tmp_path / "ds"
    folder.mkdir()
    with open(folder / "a.jsonl", "wb") as f:
        f.write(good("before"))
        f.write(b'{"id": "big", "text": "' + b"word " * 4_000_000 + b'"}\n')  # 20 MB
        f.write(good("after"))
    reader = JsonlDocumentReader(str(folder), max_document_bytes="2MB")
    tracemalloc.start()
    try:
        ids = [doc.id for doc in reader.run()]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ids == ["before", "after"]
    assert reader.stats.stats["skipped_too_large"].total == 1
    assert peak < 8_000_000, peak  # (the cap and a piece, not the line's 20 MB)


def test_parquet_files_that_cannot_be_read_and_rows_without_text_are_counted(tmp_path):
    """datatrove's ParquetReader stopped the task on a file without a footer (empty, cut short, not Parquet) or with a
    damaged one ("OSError: Couldn't deserialize thrift") and on a text column of numbers; a row without text was
    skipped counting it nowhere."""
    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["1", "2", "3"], "text": [TEXT, None, TEXT]}), folder / "a.parquet")
    pq.write_table(pa.table({"id": ["n"], "text": [5]}), folder / "b.parquet")
    pq.write_table(pa.table({"id": ["l"], "text": [[TEXT]]}), folder / "c.parquet")
    pq.write_table(pa.table({"id": ["x"], "content": [TEXT]}), folder / "d.parquet")
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "text": pa.array([], pa.string())}), folder / "e.parquet")
    whole = (folder / "a.parquet").read_bytes()
    (folder / "f.parquet").write_bytes(whole[: len(whole) // 2])
    (folder / "g.parquet").write_bytes(b"")
    footer = int.from_bytes(whole[-8:-4], "little")  # (its metadata's length: a byte of it changed, found by fuzzing)
    (folder / "h.parquet").write_bytes(whole[:-8 - footer] + bytes([whole[-8 - footer] ^ 0xFF]) + whole[-7 - footer:])
    counters, docs = run(ParquetDocumentReader(str(folder)), tmp_path)
    assert sorted(d["id"] for d in docs) == ["1", "3"]
    assert counters["corrupt_files_not_parquet"] == counters["corrupt_files"] == 3
    assert (counters["skipped_no_text"], counters["skipped_text_not_str"]) == (2, 2)
    assert counters["rows"] == counters["documents"] + skipped(counters) == 6
    assert "damaged f.parquet: not a Parquet file" in task_log(tmp_path)
    # (what `plexity report` of the run shows: it showed the documents only)
    counts = run_counts(json.loads((tmp_path / "out" / "logs" / "stats.json").read_text()))
    assert (counts["documents_skipped"], counts["skip_reasons"], counts["damaged_files"]) == (
        4, {"no_text": 2, "text_not_str": 2}, {"not_parquet": 3})


def test_parquet_metadata_json_has_no_type_for_is_written(tmp_path):
    """A Parquet dataset's decimal, binary or duration column, read into each document's metadata, stopped the task
    at the JSONL writer: "TypeError: Type is not JSON serializable: decimal.Decimal"."""
    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.table({
        "id": ["1"], "text": [TEXT], "price": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
        "raw": pa.array([b"\xff<p>"], pa.binary()), "took": pa.array([5], pa.duration("s")),
        "at": pa.array([datetime.time(1, 2)], pa.time32("s"))}), folder / "a.parquet")
    counters, docs = run(ParquetReader(str(folder)), tmp_path)  # (datatrove's reader: the writer is at stake)
    meta = docs[0]["metadata"]
    assert (meta["price"], meta["raw"], meta["took"], meta["at"]) == ("1.25", "\\xff<p>", 5.0, "01:02:00")


def test_a_text_over_the_cap_from_another_reader_is_dropped_before_any_work(tmp_path):
    """A text handed to the filter by another step (datatrove's JsonlReader, Hugging Face's reader) was cleaned
    whatever its size: 300 MB took 1.86 GB and 60 s.  Over `max_document_bytes` it is dropped as too_large, as the
    Scrapy pipeline drops one, to the exclusion writer whole."""
    folder, big = small_and_big(tmp_path)
    out = tmp_path / "out"
    LocalPipelineExecutor(pipeline=[
        JsonlReader(str(folder)),
        PerplexitySentenceFilter(max_document_bytes="1MB", exclusion_writer=JsonlDocumentWriter(str(out / "ex"))),
        JsonlDocumentWriter(str(out / "docs"))], tasks=1, logging_dir=str(out / "logs")).run()
    filt = json.loads((out / "logs" / "stats.json").read_text())[1]["stats"]
    assert (filt["dropped_too_large"], filt.get("sentences_kept", {}).get("total")) == (1, 2)  # (the small one's)
    (excluded,) = read_jsonl_dir(out / "ex")
    assert (excluded["id"], excluded["text"], excluded["metadata"]["filter_reason"]) == ("big", big, "too_large")
    assert [d["id"] for d in read_jsonl_dir(out / "docs")] == ["small"]
    assert "its text holds 2,000,1" in task_log(tmp_path) and "dropped as too_large" in task_log(tmp_path)


def test_jsonl_files_over_http_are_read(tmp_path):
    """fsspec's remote files (HTTP's, S3's) take no limit in readline(): reading one stopped the task at its first
    line (TypeError), and a stream that cannot seek could not be looked at for its compression."""
    folder = tmp_path / "ds"
    folder.mkdir()
    rows = good("1") + json.dumps({"id": "n", "text": 5}).encode() + b"\n" + good("2")
    (folder / "a.jsonl").write_bytes(rows)
    (folder / "b.jsonl.gz").write_bytes(gzip.compress(rows)[:-4])  # (cut in its trailer: named, its lines kept)
    (tmp_path / "paths.txt").write_text("a.jsonl\nb.jsonl.gz\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    with http_server(handler) as server:
        reader = JsonlDocumentReader(f"http://127.0.0.1:{server.server_port}", paths_file=str(tmp_path / "paths.txt"))
        ids = [doc.id for doc in reader.run()]
    assert ids == ["1", "2", "1", "2"]
    counters = {k: v.total for k, v in reader.stats.stats.items()}
    assert (counters["skipped_text_not_str"], counters["corrupt_files_truncated"]) == (2, 1)


def test_the_document_filter_drops_a_text_over_the_cap_unscored_even_when_it_only_labels(tmp_path):
    """`PerplexityDocumentFilter` scored a text of any size another step handed it (100 MB: 498 MB and 20 s).  Over
    `max_document_bytes` it is dropped as too_large before any work, with ``label_only`` too (as a text that is no
    text), to the exclusion writer whole; the others are scored."""
    from plexity_plugins.datatrove import PerplexityDocumentFilter

    folder, big = small_and_big(tmp_path)
    out = tmp_path / "out"
    LocalPipelineExecutor(pipeline=[
        JsonlReader(str(folder)),
        PerplexityDocumentFilter(label_only=True, max_document_bytes="1MB",
                                 exclusion_writer=JsonlDocumentWriter(str(out / "ex"))),
        JsonlDocumentWriter(str(out / "docs"))], tasks=1, logging_dir=str(out / "logs")).run()
    filt = json.loads((out / "logs" / "stats.json").read_text())[1]["stats"]
    assert (filt["dropped_too_large"], filt["scored"]) == (1, 1)
    (excluded,) = read_jsonl_dir(out / "ex")
    assert (excluded["id"], excluded["text"], excluded["metadata"]["plexity_doc_would_drop"]) == ("big", big,
                                                                                                 "too_large")
    assert [d["id"] for d in read_jsonl_dir(out / "docs")] == ["small"]
    assert "its text holds 2,000,1" in task_log(tmp_path) and "dropped as too_large" in task_log(tmp_path)
