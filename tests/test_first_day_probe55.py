"""A stranger's first day, probe 55: README.md's and docs/cli.md's commands in a scratch folder, with the small
mistakes a stranger makes (a dataset of documents given to `plexity run`, a wrong path, a mistyped option, a gzip
file renamed, an empty file, a folder of WARC and JSONL files, a re-run with a new option, Ctrl-C).  Dead ends met:
a single JSONL file given to `plexity run` ran a task (its log warned "damaged WARC") before the message naming the
pipeline that cleans a dataset, exit 1, where the folder holding it stopped at once, exit 2."""

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
DATASET_SAYS = ("a dataset of documents (JSON lines), not pages or a crawl: clean its text with datatrove, "
                "JsonlDocumentReader(its folder) -> PerplexitySentenceFilter() -> a writer "
                "(docs/datatrove.md#text-datasets)")


def plexity(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("plexity run: error")]


def test_a_dataset_file_given_to_plexity_run_stops_before_any_task_as_its_folder_does(tmp_path):
    """`plexity run docs.jsonl -o out`: the run started a task that read the file as a WARC ("damaged WARC
    docs.jsonl: not a WARC file: a text file"), printed a summary of nothing, then said it is a dataset of documents,
    exit 1, with a logs folder written and removed.  Its folder, `plexity run dataset -o out`, stopped at once, exit 2,
    with that line.  Now a file, or a glob matching only such files, stops as its folder does: the same line, naming
    the file and the pipeline that reads it, exit 2, before any task or output folder."""
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    row = json.dumps({"id": "1", "text": TEXT}) + "\n"
    (dataset / "docs.jsonl").write_text(row)
    with gzip.open(dataset / "part.jsonl.gz", "wt") as f:
        f.write(row)

    folder = plexity("run", "dataset", "-o", "out", cwd=tmp_path)
    assert folder.returncode == 2
    assert error_lines(folder) == [
        f"plexity run: error: no WARC files match **/*.warc* in {dataset}: {dataset / 'docs.jsonl'}: {DATASET_SAYS} "
        f"(and 1 more such file(s))"]

    for given, named, more in (("dataset/docs.jsonl", "docs.jsonl", ""),
                               ("dataset/part.jsonl.gz", "part.jsonl.gz", ""),
                               ("dataset/*.jsonl*", "docs.jsonl", " (and 1 more such file(s))")):
        result = plexity("run", given, "-o", "out", cwd=tmp_path)
        assert result.returncode == 2, (given, result.stderr)
        pattern = named if "*" not in given else "*.jsonl*"
        assert error_lines(result) == [
            f"plexity run: error: no WARC files match {pattern} in {dataset}: {dataset / named}: {DATASET_SAYS}{more}"]
        assert "Launching pipeline" not in result.stderr and "damaged WARC" not in result.stderr, given
        assert result.stdout == "" and not (tmp_path / "out").exists(), given

    # a WARC beside them is read (a mixed folder is no dataset), the datasets no task's: named, as a folder's are
    # (probe 56: they were tasks, "3 WARC files, 3 tasks", read as damaged WARCs)
    (dataset / "sample.warc.gz").symlink_to(SAMPLE)
    mixed = plexity("run", "dataset/*", "-o", "out", cwd=tmp_path)
    assert mixed.returncode == 0, mixed.stderr
    assert "1 WARC files, 1 tasks" in mixed.stdout
    assert "plexity run: 2 dataset file(s) beside them not read: dataset/docs.jsonl: " in mixed.stdout


def test_a_dataset_file_beside_the_warc_files_of_a_folder_is_said_not_read_with_the_pipeline_that_reads_it(tmp_path):
    """A folder of a crawl's WARC files and a dataset of documents (`plexity run crawl -o out`): the run said "1 HTML or
    text file(s) beside them not read" of a page beside them, and nothing of `dataset/part.jsonl.gz`, which it did not
    read either: a loss unsaid, exit 0.  Now the run names it, with the pipeline that cleans it, as it names such a
    file in a folder holding no WARC; the run's own documents (an output folder inside the input folder) are not."""
    crawl = tmp_path / "crawl"
    (crawl / "dataset").mkdir(parents=True)
    (crawl / "sample.warc.gz").symlink_to(SAMPLE)
    with gzip.open(crawl / "dataset" / "part.jsonl.gz", "wt") as f:
        f.write(json.dumps({"id": "1", "text": TEXT}) + "\n")
    (crawl / "page.html").write_text(f"<html><body><p>{TEXT}</p></body></html>")

    said = f"plexity run: 1 dataset file(s) beside them not read: crawl/dataset/part.jsonl.gz: {DATASET_SAYS}"
    for _ in range(2):  # (the second run resumes the first, whose documents, crawl/out/documents/*.jsonl.gz, it wrote)
        result = plexity("run", "crawl", "-o", "crawl/out", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "1 WARC files, 1 tasks" in result.stdout
        lines = [line for line in result.stdout.splitlines() if "beside them not read" in line]
        assert lines == ["plexity run: 1 HTML or text file(s) beside them not read (plexity run reads WARC files; "
                         "plexity clean crawl --output-dir DIR cleans them)", said]
    assert list((crawl / "out" / "documents").glob("*.jsonl.gz"))


def test_a_mistyped_required_option_is_told_the_option_meant_not_that_it_is_missing(tmp_path):
    """`plexity clean page.html --ouput-dir cleaned`: argparse checks the required options before the unknown ones,
    so the answer was "the following arguments are required: --output-dir/-o" to a user who believes they gave it,
    and the mistyped word was named nowhere, where a mistyped option that is not required (`--extracter`) is told the
    one meant.  Now it is told so too; a required option left out is still said to be missing."""
    (tmp_path / "page.html").write_text(f"<html><body><p>{TEXT}</p></body></html>")
    for args, prog, unknown in ((("clean", "page.html", "--ouput-dir", "cleaned"), "clean", "--ouput-dir cleaned"),
                                (("clean", "--ouput-dir=cleaned", "page.html"), "clean", "--ouput-dir=cleaned"),
                                (("run", "page.html", "--outpt-dir", "out"), "run", "--outpt-dir out")):
        result = plexity(*args, cwd=tmp_path)
        assert result.returncode == 2, args
        meant = "--output-dir"
        assert result.stderr.splitlines()[-1] == (f"plexity {prog}: error: unrecognized arguments: {unknown} (did you "
                                                  f"mean {meant}? plexity {prog} --help lists the options)"), args
        assert not (tmp_path / "cleaned").exists() and not (tmp_path / "out").exists()
    missing = plexity("clean", "page.html", cwd=tmp_path)
    assert (missing.returncode, missing.stderr.splitlines()[-1]) == (
        2, "plexity clean: error: the following arguments are required: --output-dir/-o")
