"""A stranger's first day, probe 28: following README.md and docs/ in an empty folder, then the next steps
a datatrove or Scrapy user takes; each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import SAMPLE

REPO = Path(__file__).resolve().parent.parent


def plexity(*args, cwd: Path):
    return subprocess.run([sys.executable, "-m", "plexity_plugins.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


def error_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


# -- a glob that matches nothing, beside the files it meant ------------------------------------------

def test_a_glob_that_matches_nothing_names_the_files_it_left_out_and_how_to_read_them(tmp_path):
    # Before: `plexity run 'examples/*.warc'` beside examples/sample.warc.gz said "no WARC files match *.warc in
    # examples" and then named whatever dataset file lay in a subfolder; `plexity clean` said only that the glob
    # matches no file; a glob of one level over a crawl kept in dated subfolders said no more.
    (tmp_path / "crawl" / "2024").mkdir(parents=True)
    (tmp_path / "crawl" / "2024" / "a.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "crawl" / "b.warc.gz").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "crawl" / "notes.md").write_text("# not a crawl file\n")
    leaves_out = "that the glob leaves out (2024/a.warc.gz, b.warc.gz): give the folder itself to read every one, " \
                 "or a glob that matches them"
    result = plexity("run", "crawl/*.warc", "-o", "out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        2, f"plexity run: error: no WARC files match *.warc in {tmp_path / 'crawl'}; {tmp_path / 'crawl'} holds 2 "
           f"WARC file(s) {leaves_out}")
    result = plexity("clean", "crawl/*.warc", "-o", "out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        2, f"plexity clean: error: input crawl/*.warc does not exist, and as a glob it matches no file; crawl holds 2 "
           f"file(s) plexity clean reads {leaves_out}")
    assert not (tmp_path / "out").exists()
    # the folder itself, as the line says, reads them both
    result = plexity("run", "crawl", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0 and "plexity run: 2 WARC files" in result.stdout, result.stderr[-2000:]


def test_a_glob_that_matches_nothing_in_a_folder_of_no_input_says_only_that(tmp_path):
    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / "notes.md").write_text("# not a crawl file\n")
    result = plexity("clean", "crawl/*.warc", "-o", "out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        2, "plexity clean: error: input crawl/*.warc does not exist, and as a glob it matches no file")


# -- the cleaned text files, put together ------------------------------------------------------------

def test_cleaned_text_files_end_with_a_newline_so_that_cat_keeps_their_lines_apart(tmp_path):
    # Before: each .txt output ended without one: `cat cleaned/*.txt > corpus.txt` (a corpus for `plexity train`)
    # joined one file's last sentence and the next file's first into one line, and `wc -l` counted none.
    (tmp_path / "a.txt").write_text("The council approved the budget on Tuesday after a long debate about school "
                                    "funding.\nShare on Facebook | Email\n")
    (tmp_path / "b.html").write_text("<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav><p>The "
                                     "library opens in the spring after a long renovation of the old building.</p>"
                                     "</body></html>")
    (tmp_path / "c.txt").write_text("Home | News | Sport\n")  # (dropped whole, with --min-chars: an empty file)
    result = plexity("clean", "a.txt", "b.html", "c.txt", "-o", "cleaned", "--extractor", "tags", "--min-chars", "10",
                     "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    corpus = b"".join((tmp_path / "cleaned" / name).read_bytes() for name in ("a.txt.txt", "b.html.txt", "c.txt.txt"))
    assert corpus.decode().splitlines(keepends=True) == [
        "The council approved the budget on Tuesday after a long debate about school funding.\n",
        "The library opens in the spring after a long renovation of the old building.\n"]
    assert (tmp_path / "cleaned" / "c.txt.txt").read_bytes() == b""


# -- plexity run into the folder the README's datatrove script wrote ---------------------------------

def test_a_run_into_the_readme_scripts_output_names_the_writer_that_differs_not_its_internals(tmp_path):
    # Before: "(excluded: step=JsonlWriter, compression=gzip, expand_metadata=False, file_id_counter=, ... ->
    # step=JsonlDocumentWriter, format=jsonl, ...; step: JsonlWriter -> JsonlDocumentWriter; compression: gzip ->
    # none; expand_metadata: False -> none; file_id_counter:  -> none; save_media_bytes: False -> none; format:
    # none -> jsonl)": 600 characters of the two classes' own fields, none of them a choice of the user's.
    readme = (REPO / "README.md").read_text()
    script = re.search(r"```python\n(.*?)```", readme[readme.index("## datatrove"):], re.S).group(1)
    (tmp_path / "clean_crawl.py").write_text(script)
    (tmp_path / "examples").mkdir()
    shutil.copy(SAMPLE, tmp_path / "examples")
    ran = subprocess.run([sys.executable, "clean_crawl.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert ran.returncode == 0, ran.stderr[-3000:]
    result = plexity("run", "examples", "-o", "out", cwd=tmp_path)
    assert (result.returncode, error_line(result)) == (
        2, f"plexity run: error: {tmp_path / 'out'} holds the results of a run with other settings (excluded step: "
           f"JsonlWriter -> JsonlDocumentWriter; step: JsonlWriter -> JsonlDocumentWriter): give a new --output-dir, "
           f"or add --overwrite to delete those results and start over")
    result = plexity("run", "examples", "-o", "out", "--format", "warc", "--overwrite", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    again = plexity("run", "examples", "-o", "out", cwd=tmp_path)  # (a setting both writers have is still named)
    assert error_line(again) == (
        f"plexity run: error: {tmp_path / 'out'} holds the results of a run with other settings (step: "
        f"WarcResponseWriter -> JsonlDocumentWriter; format: warc -> jsonl; output_filename: ${{rank}}.warc.gz -> "
        f"${{rank}}.jsonl.gz): give a new --output-dir, or add --overwrite to delete those results and start over")


# -- the same files, named another way ----------------------------------------------------------------

def test_the_same_input_files_named_by_a_glob_instead_of_their_folder_resume(tmp_path):
    # Before: `plexity run crawl -o out`, then `plexity run 'crawl/*.warc.gz' -o out` (the same two files) stopped:
    # "other settings (glob_pattern: **/*.warc* -> *.warc.gz)", and only --overwrite, redoing every task, went on.
    (tmp_path / "crawl").mkdir()
    for name in ("a.warc.gz", "b.warc.gz"):
        shutil.copy(SAMPLE, tmp_path / "crawl" / name)
    first = plexity("run", "crawl", "-o", "out", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    for spec in ("crawl/*.warc.gz", str(tmp_path / "crawl") + "/"):
        again = plexity("run", spec, "-o", "out", cwd=tmp_path)
        assert again.returncode == 0 and "plexity run: 2 WARC files, 2 tasks, 2 already completed" in again.stdout, \
            again.stderr[-2000:]
    other = plexity("run", "crawl/a.warc.gz", "-o", "out", cwd=tmp_path)  # (one of them: another run)
    assert other.returncode == 2 and "(tasks: 2 -> 1; glob_pattern: **/*.warc* -> a.warc.gz; input files: 2 -> 1; " \
                                     "input files' names: sha256:" in error_line(other)
