"""Probe 39's leftovers: scoring and training without a temporary folder (py3langid's loader made one), the records a
`plexity run` skipped said next to its output paths, and what datatrove's ParquetWriter makes of
`record_dropped_sentences`' empty lists, as docs/datatrove.md now says it."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from warcio.warcwriter import WARCWriter

from helpers import REPO, run_plexity
from locked_container import UID, container, needs_root, plexity  # noqa: F401 - the fixture
from warc_corpus import ARTICLE, page, response, write_warc

# (run in the container: `plexity serve` on any free port, four requests, the answers printed one a line)
SERVE_AND_ASK = r"""
import json, re, subprocess, sys, urllib.error, urllib.request
server = subprocess.Popen([sys.executable, "-m", "plexity_plugins", "serve", "--port", "0"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
url = None
for line in server.stdout:
    found = re.match(r"plexity serve: (http://127\.0\.0\.1:\d+)/ ", line)
    if found:
        url = found.group(1)
        break
    print("said:", line.rstrip())
english = "The council approved the budget on Tuesday after a long debate about the new libraries. " * 3
german = "Der Stadtrat hat am Dienstag nach einer langen Debatte den Haushalt beschlossen. " * 3
for name, body in (("english", {"text": english}), ("german", {"text": german}),
                   ("html", {"text": f"<html><body><p>{english}</p><p>{german}</p></body></html>", "format": "html"})):
    request = urllib.request.Request(url + "/api/score", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            print(name, answer.status, len(json.loads(answer.read())["sentences"]))
    except urllib.error.HTTPError as error:
        print(name, error.code, json.loads(error.read())["error"])
server.terminate()
server.wait(10)
"""


@needs_root
def test_without_a_temporary_folder_serve_scores_and_train_sets_its_threshold(container):
    """/tmp read-only and TMPDIR unset: `plexity serve` started, then answered every scoring request with 500
    "internal error (FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', ...])", and
    `plexity train --output-dir` trained the model, then stopped identifying its corpus' language: py3langid's loader
    decompresses its model into a temporary file.  Now the model is decompressed in memory there: both work."""
    run, out = container
    (out / "serve.py").write_text(SERVE_AND_ASK)
    served = run([sys.executable, out / "serve.py"])
    assert served.returncode == 0, served.stderr[-3000:]
    answers = dict(line.split(" ", 1) for line in served.stdout.splitlines() if not line.startswith("said:"))
    assert set(answers) == {"english", "german", "html"}, served.stdout
    assert all(answer.startswith("200 ") for answer in answers.values()), served.stdout

    from plexity_plugins.training.kenlm_tools import find_tool

    tools = out / "kenlm"
    tools.mkdir()
    for name in ("lmplz", "build_binary"):
        shutil.copy(find_tool(name), tools / name)
    (out / "corpus.txt").write_text("The council approved the budget on Tuesday.\nThe plan adds two libraries.\n" * 200)
    for path in (tools, *tools.iterdir(), out / "corpus.txt"):
        os.chown(path, UID, UID)
    trained = run(plexity("train", "--corpus", "text", "--order", "3", "--discount-fallback", out / "corpus.txt",
                          "--name", "tiny", "--output-dir", out / "models"), env={"PLEXITY_KENLM_BIN": tools})
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "language: en (identified from the training text" in trained.stderr
    assert (out / "models" / "tiny" / "model.json").is_file()


def test_the_identifier_read_in_memory_is_py3langids_own():
    """Where there is no temporary folder the model file is decompressed in memory: the same tables, the same
    answers as py3langid's own loader."""
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    from plexity_plugins.text import language

    ours = language._identifier_from_memory(LanguageIdentifier, Path(MODEL_DIR) / MODEL_FILE)
    stock = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    assert np.array_equal(ours.nb_ptc, stock.nb_ptc) and np.array_equal(ours.nb_pc, stock.nb_pc)
    assert (ours.nb_classes, ours.tk_nextmove, ours.tk_row, ours.tk_output) == \
        (stock.nb_classes, stock.tk_nextmove, stock.tk_row, stock.tk_output)
    for text in (*language._TABLE_CHECKS, "Privacy Policy", "Бесплатная доставка по всей России."):
        assert ours.classify(text) == stock.classify(text)


def test_run_says_how_many_records_it_skipped_and_why_next_to_its_folders(tmp_path):
    """A WARC of 11 records, one of them a page with text: the paths said "dropped documents: none", as if every
    record were written somewhere, while 10 were in neither folder (the summary's "skipped: ... lost: no_text 7"
    said why, not that they were written nowhere).  Now a line counts them, by step and reason; the counts add up to
    the records read, against the documents written."""
    writer = WARCWriter(io.BytesIO(), gzip=True)
    (tmp_path / "in").mkdir()
    write_warc(tmp_path / "in" / "mostly-empty.warc.gz", [
        writer.create_warcinfo_record("x.warc", {"software": "tests"}),
        *(response(writer, f"http://t/script{i}", b"<html><body><script>var x = 1;</script><div></div></body></html>")
          for i in range(7)),
        *(response(writer, f"http://t/logo{i}.png", b"\x89PNG\r\n\x1a\n" + bytes(300), "image/png") for i in range(2)),
        response(writer, "http://t/article", page(ARTICLE, ARTICLE).encode())])
    out = tmp_path / "out"
    result = run_plexity("run", str(tmp_path / "in"), "-o", str(out), "--workers", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "dropped documents: none\nskipped records: 10 of 11, in neither folder, counted in the merged stats " \
           "(reader: not_response 1, not_html 2; extractor: no_text 7)\n" in result.stdout
    written = sum(1 for f in (out / "documents").glob("*.jsonl.gz") for _ in gzip.open(f, "rt"))
    assert written + 10 == 11


# (the filter's list of dropped sentences for each document of a file, in order: "none" a document with no sentence
# dropped, "cut" one with one; then ParquetWriter's batch size)
PARQUET_CASES = {"all-empty": (["none", "none", "none"], 1000), "empty-first": (["none", "cut"], 1000),
                 "cut-first": (["cut", "none", "none"], 1000), "cut-then-an-empty-batch": (["cut", "none"], 1)}
PARQUET_RUN = r"""
import glob, json, shutil, sys
from datatrove.data import Document
from datatrove.pipeline.writers import ParquetWriter
from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter
import pyarrow.parquet as pq

article = "The council approved the budget for the new library on Tuesday. It will open in the spring."
texts = {"none": article, "cut": article + "\nZxq vbnm qwpo lkjh ggfd trew."}
results = {}
for name, (kinds, batch) in json.loads(sys.argv[1]).items():
    try:
        LocalTaskExecutor(pipeline=[[Document(text=texts[k], id=str(i)) for i, k in enumerate(kinds)],
                                    PerplexitySentenceFilter(record_dropped_sentences=True),
                                    ParquetWriter(name, batch_size=batch)], tasks=1, logging_dir=name + "-logs").run()
        rows = pq.read_table(glob.glob(name + "/*.parquet")[0]).to_pylist()
        results[name] = [len(r["metadata"]["plexity_dropped_sentences"]) for r in rows]
    except Exception as exc:
        results[name] = str(exc).split(":")[0]
print(json.dumps(results))
"""


def test_parquet_writer_and_empty_lists_of_dropped_sentences_as_the_docs_say(tmp_path):
    """docs/datatrove.md said an empty list of dropped sentences stops datatrove's ParquetWriter "in whichever batch
    it comes"; a file of empty lists alone is written.  What stops it is a batch typed otherwise than the file's first
    document: measured here, and the docs' recipe (the list as a JSON string) writes the file that stopped."""
    (tmp_path / "run.py").write_text(PARQUET_RUN)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "run.py", json.dumps(PARQUET_CASES)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    stopped = "Table schema does not match schema used to create file"
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "all-empty": [0, 0, 0], "empty-first": stopped, "cut-first": [1, 0, 0], "cut-then-an-empty-batch": stopped}

    text = (REPO / "docs" / "datatrove.md").read_text()
    assert "in whichever batch they come" not in text
    said = " ".join(text.split())
    assert ("a file whose lists are all empty is written (typed `list<null>`" in said
            and "the task stops with `Table schema does not match schema used to create file` when the first "
                "document's list is empty and a later one's is not, or when a later batch's lists are all empty and "
                "the first document's was not" in said)
    start = text.index("```python\n", text.index("store the list as a JSON string")) + len("```python\n")
    (tmp_path / "recipe.py").write_text(text[start:text.index("```", start)])
    recipe = subprocess.run([sys.executable, "recipe.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert recipe.returncode == 0, recipe.stderr[-3000:]
    import pyarrow.parquet as pq

    rows = pq.read_table(next((tmp_path / "out" / "sentences-parquet").glob("*.parquet"))).to_pylist()
    assert [len(json.loads(r["metadata"]["plexity_dropped_sentences"])) for r in rows] == [0, 1]
