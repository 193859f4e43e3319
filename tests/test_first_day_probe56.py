"""A stranger's first day, probe 56: README.md's and docs/cli.md's `plexity clean` and `plexity run` in a scratch
folder, given what a stranger has at hand: C4's files (`c4-train.00000-of-01024.json.gz`, JSON lines named `.json`),
a glob over a folder of a WARC, a dataset, a page and an empty file, a zero-byte WARC.  Dead ends met: C4's file was
"not one of the .txt, .html ... files" to `plexity clean`, and its folder "give the folder of your .warc ... files" to
`plexity run`, naming no way to its text; a glob's page and dataset were tasks read as damaged WARCs ("4 WARC files, 4
tasks", "not_a_warc 3"), the page pointed nowhere; an empty WARC ran a task before "no input could be read"."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"

TEXT = "The city council approved the budget on Tuesday after a long debate about school funding."
C4_NAME = "c4-train.00000-of-01024.json.gz"
DATASET_SAYS = ("a dataset of documents (JSON lines), not pages or a crawl: clean its text with datatrove, "
                "JsonlDocumentReader(its folder) -> PerplexitySentenceFilter() -> a writer "
                "(docs/datatrove.md#text-datasets)")


def plexity(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def error_lines(result: subprocess.CompletedProcess, command: str = "run") -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith(f"plexity {command}: error")]


def c4_file(path: Path, rows: int = 3) -> Path:
    """A file as C4's are: gzipped JSON lines, each a document with its text, url and timestamp (no id)."""
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for i in range(rows):
            f.write(json.dumps({"text": f"{TEXT}\nLine {i}.", "url": f"https://example.com/{i}",
                                "timestamp": "2019-04-25T12:57:54Z"}) + "\n")
    return path


def test_a_c4_file_named_json_gz_is_a_dataset_by_its_first_line_as_a_jsonl_file_is_by_its_name(tmp_path):
    """`plexity clean c4/c4-train.00000-of-01024.json.gz` said "not one of the .txt, .html ... files" and `plexity run
    c4` "give the folder of your .warc ... files": C4's text was pointed nowhere.  Now a `.json` or `.json.gz` whose
    first line is a JSON object with a string "text" is the dataset of documents it is, said as a `.jsonl.gz` is, and
    the reader named reads it; one JSON document (a config written over several lines, a list) stays unknown."""
    c4 = tmp_path / "c4"
    c4.mkdir()
    c4_file(c4 / C4_NAME)

    clean = plexity("clean", f"c4/{C4_NAME}", "--output-dir", "cleaned", cwd=tmp_path)
    assert clean.returncode == 1, clean.stderr
    assert error_lines(clean, "clean") == [f"plexity clean: error: no input could be read: c4/{C4_NAME}: {DATASET_SAYS}"]

    for given, pattern in (("c4", "**/*.warc*"), (f"c4/{C4_NAME}", C4_NAME), ("c4/*", "*")):
        run = plexity("run", given, "-o", "out", cwd=tmp_path)
        assert run.returncode == 2, (given, run.stderr)
        assert error_lines(run) == [f"plexity run: error: no WARC files match {pattern} in {c4}: {c4 / C4_NAME}: "
                                    f"{DATASET_SAYS}"], given
        assert "Launching pipeline" not in run.stderr and not (tmp_path / "out").exists(), given

    # the reader the line names reads it: a document a row, C4's url kept in its metadata
    from plexity_plugins.datatrove import JsonlDocumentReader

    documents = list(JsonlDocumentReader(str(c4)).run())
    assert [d.text for d in documents] == [f"{TEXT}\nLine {i}." for i in range(3)]
    assert documents[0].metadata["url"] == "https://example.com/0"

    # a .json that is one JSON document, or JSON lines of no text, is no dataset: the skip it always was
    (c4 / "config.json").write_text(json.dumps({"text": TEXT, "n": 1}, indent=2))
    (c4 / "list.json").write_text(json.dumps([{"text": TEXT}]) + "\n")
    (c4 / "counts.json").write_text(json.dumps({"text": 3}) + "\n")
    for name in ("config.json", "list.json", "counts.json"):
        skipped = plexity("clean", f"c4/{name}", "--output-dir", "cleaned", cwd=tmp_path)
        assert error_lines(skipped, "clean")[0].startswith(
            f"plexity clean: error: no input could be read: c4/{name}: not one of the .txt"), skipped.stderr


def test_a_globs_page_and_dataset_are_no_tasks_and_are_named_with_what_reads_them_as_a_folders_are(tmp_path):
    """`plexity run 'mixed/*'` over a WARC, a JSONL dataset, an HTML page and an empty file said "4 WARC files, 4
    tasks", counted "corrupt files: 3 (not_a_warc 3)" and exited 0: the dataset named only in a task's log, the page
    pointed to nothing.  A folder's are named once, beside its WARC files, with what reads them.  Now a glob's are
    too, and are no task's; the empty file, a name of no kind (a WARC may be so named), is still read and counted."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "sample.warc.gz").symlink_to(SAMPLE)
    (mixed / "docs.jsonl").write_text(json.dumps({"id": "1", "text": TEXT}) + "\n")
    (mixed / "page.html").write_text(f"<html><body><p>{TEXT}</p></body></html>")
    (mixed / "empty").write_bytes(b"")

    expected = ["plexity run: 1 HTML or text file(s) beside them not read (plexity run reads WARC files; "
                "plexity clean 'mixed/*' --output-dir DIR cleans them)",
                f"plexity run: 1 dataset file(s) beside them not read: mixed/docs.jsonl: {DATASET_SAYS}"]
    for _ in range(2):  # (the re-run resumes: its listing is the first run's)
        result = plexity("run", "mixed/*", "-o", "out", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "2 WARC files, 2 tasks" in result.stdout, result.stdout
        assert [line for line in result.stdout.splitlines() if "beside them not read" in line] == expected
        assert "corrupt files: 1 (not_a_warc 1)" in result.stdout  # (the empty file's)
        damaged = [line for line in result.stderr.splitlines() if "damaged WARC" in line]
        assert all("empty" in line for line in damaged), damaged  # (neither the page nor the dataset was read)
    stats = json.loads((tmp_path / "out" / "logs" / "stats.json").read_text())
    reader = next(step for step in stats if "READER" in step["name"])
    assert reader["stats"]["input_files"]["total"] == 2 and reader["stats"]["documents"]["total"] == 12

    # a glob of pages alone stops before any task, pointing to plexity clean, as a folder of them does
    pages = plexity("run", "mixed/*.html", "-o", "out2", cwd=tmp_path)
    assert pages.returncode == 2, pages.stderr
    assert error_lines(pages) == [f"plexity run: error: no WARC files match *.html in {mixed} (it matches 1 HTML or "
                                  f"text file(s): plexity run reads WARC files; plexity clean 'mixed/*.html' "
                                  f"--output-dir DIR cleans HTML and text files)"]
    assert not (tmp_path / "out2").exists()


def test_an_empty_warc_stops_before_any_task_as_a_dataset_does(tmp_path):
    """`plexity run empty.warc.gz` (zero bytes: a download that failed, a crawl's file still being written) ran a task,
    printed a summary of nothing, then "no input could be read: ... an empty file", exit 1.  A size is one stat: now
    the run says so before any task or output folder, in the same words and status; a WARC beside it is read."""
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    result = plexity("run", "empty.warc.gz", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert error_lines(result) == ["plexity run: error: no input could be read: empty.warc.gz: not a WARC file: "
                                   "an empty file"]
    assert result.stdout == "" and "Launching pipeline" not in result.stderr
    assert not (tmp_path / "out").exists()

    (tmp_path / "sample.warc.gz").symlink_to(SAMPLE)
    both = plexity("run", "*.warc.gz", "-o", "out", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert "2 WARC files, 2 tasks" in both.stdout and "not_a_warc 1" in both.stdout
