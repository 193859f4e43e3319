"""What `plexity run` writes, loaded by a corpus builder's next step: every shard at once with pyarrow (what
Hugging Face `datasets` and pandas build on) and with datatrove's own readers feeding a next pipeline.

The run cleans small WARCs of several languages: task 0's pages are all German and French (passed through, so
their perplexities are NaN, written null: that shard types them `null`), task 1's English, task 2's an image and
an empty page (no document). docs/datatrove.md's "Loading the outputs" blocks are run on these outputs as written.
"""

from __future__ import annotations

import glob
import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.json
import pyarrow.parquet as pq
import pytest
from warcio.warcwriter import WARCWriter

from helpers import REPO, run_plexity
from warc_corpus import ARTICLE, page, response, write_warc

GERMAN = ("Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen. "
          "Die Bibliothek öffnet im Frühling und bleibt an Wochentagen lange geöffnet.")
FRENCH = ("Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque. "
          "Elle ouvrira au printemps et restera ouverte tard en semaine.")


def _loading_blocks() -> list[str]:
    section = (REPO / "docs" / "datatrove.md").read_text().split("## Loading the outputs", 1)[1]
    return re.findall(r"^```python\n(.*?)^```", section, re.M | re.S)


def _run_block(code: str, cwd: Path) -> subprocess.CompletedProcess:
    script = cwd / "block.py"
    script.write_text(code)
    env = {"PYTHONPATH": str(REPO), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """`plexity run` of three WARCs into WORK/out/run, as the docs' blocks name it; returns WORK."""
    work = tmp_path_factory.mktemp("probe39")
    crawl = work / "crawl"
    crawl.mkdir()
    writer = WARCWriter(io.BytesIO(), gzip=True)
    write_warc(crawl / "a-other-languages.warc.gz", [
        response(writer, "http://t/de", page(GERMAN, GERMAN).encode()),
        response(writer, "http://t/fr", page(FRENCH, FRENCH).encode())])
    write_warc(crawl / "b-english.warc.gz", [
        response(writer, "http://t/en", page(ARTICLE, "Home | News | Sport | Contact").encode()),
        response(writer, "http://t/short", page("Share on Facebook").encode())])
    write_warc(crawl / "c-nothing.warc.gz", [
        response(writer, "http://t/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(100), "image/png"),
        response(writer, "http://t/empty", b"", "text/html")])
    result = run_plexity("run", str(crawl), "-o", str(work / "out" / "run"), "--extractor", "tags", "--workers", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    return work


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl.gz")) for line in gzip.open(f, "rt")]


def test_the_run_writes_the_shards_whose_types_differ_and_no_empty_shard(run):
    documents = run / "out" / "run" / "documents"
    assert sorted(f.name for f in documents.iterdir()) == ["00000.jsonl.gz", "00001.jsonl.gz"]  # task 2: none
    first = pyarrow.json.read_json(documents / "00000.jsonl.gz").schema.field("metadata").type
    assert first.field("plexity_ppl_mean").type == pa.null()  # every page passed through: no perplexity
    assert {d["metadata"]["plexity_verdict"] for d in _lines(documents)} == {"passed_through", "kept"}
    with pytest.raises(pa.ArrowInvalid, match="changed from null to number"):  # the loaders' first-file types
        ds.dataset(sorted(documents.glob("*.jsonl.gz")), format="json").to_table()
    excluded = _lines(run / "out" / "run" / "excluded")
    assert [d["metadata"]["filter_reason"] for d in excluded] == ["too_short"]


def test_the_docs_block_loads_every_shard_with_the_merged_types(run):
    result = _run_block(_loading_blocks()[0], run)
    assert result.returncode == 0, result.stderr[-3000:]
    count = len(_lines(run / "out" / "run" / "documents"))
    assert result.stdout.strip() == f"{count} documents, plexity_ppl_mean: double"


def test_datatroves_readers_read_every_document_of_every_shard(run):
    from datatrove.pipeline.readers import JsonlReader

    documents = list(JsonlReader(str(run / "out" / "run" / "documents")).run())
    stats = json.loads((run / "out" / "run" / "logs" / "stats.json").read_text())
    writer = next(step for step in stats if "WRITER" in step["name"])
    assert len(documents) == writer["stats"]["total"]["total"] == 3
    assert documents[0].metadata["plexity_ppl_mean"] is None  # JSON's null, read back


def test_jsonl_read_back_into_parquet_with_the_docs_adapter(run):
    block = _loading_blocks()[1]
    assert "adapter=plexity_numbers" in block
    without = _run_block(block.replace(", adapter=plexity_numbers", "").replace("out/parquet", "out/parquet-plain"),
                         run)
    assert without.returncode != 0 and "Table schema does not match" in without.stderr  # datatrove's own writer
    result = _run_block(block, run)
    assert result.returncode == 0, result.stderr[-3000:]
    table = pq.read_table(run / "out" / "parquet")
    assert table.num_rows == 3
    assert table.schema.field("metadata").type.field("plexity_ppl_mean").type == pa.float64()


def test_parquet_shards_of_dropped_sentences_load_with_merged_types(run, tmp_path):
    # record_dropped_sentences: a shard where no sentence was dropped types the list as a list of nothing (null)
    script = tmp_path / "pipeline.py"
    script.write_text(f"""
from datatrove.pipeline.writers import ParquetWriter
from plexity_plugins.datatrove import HtmlTagsExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader
if __name__ == "__main__":
    LocalTaskExecutor(pipeline=[WarcHtmlReader({str(run / 'crawl')!r}), HtmlTagsExtractor(),
        PerplexitySentenceFilter(method="regions", record_dropped_sentences=True), ParquetWriter("parquet")],
        tasks=3, workers=1, logging_dir="logs").run()
""")
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env={"PYTHONPATH": str(REPO)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    files = sorted(glob.glob(str(tmp_path / "parquet" / "*.parquet")))
    types = [pq.read_schema(f).field("metadata").type.field("plexity_dropped_sentences").type for f in files]
    assert types[0] == pa.list_(pa.null()) and pa.types.is_struct(types[1].value_type)
    with pytest.raises(pa.ArrowNotImplementedError):
        ds.dataset(files, format="parquet").to_table()
    schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")  # as the docs say
    table = ds.dataset(files, format="parquet", schema=schema).to_table()
    dropped = [s for m in table.column("metadata").to_pylist() for s in m["plexity_dropped_sentences"]]
    assert table.num_rows == 3 and "Home | News | Sport | Contact" in {s["text"] for s in dropped}
