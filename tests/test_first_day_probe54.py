"""A stranger's first day, probe 54: a fresh environment installed from the checkout as docs/install.md says, the
sample WARC, a folder of the user's own pages, the datatrove scripts of docs/datatrove.md, a Scrapy crawl of a
site served by `python -m http.server`, a run interrupted and run again, wrong paths and options, files of other
kinds.  Dead ends met: a page or text whose name and bytes disagree on gzip (as a download saves what the server
sent) was skipped with no way on, a glob the shell expanded was named path by path before its hint, and a command
mistyped was answered with the list of commands where a mistyped option is told the one meant."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"

PAGE = (b"<html><body><nav>Home | News</nav><article><p>The city council approved the budget on Tuesday after a long "
        b"debate about school funding.</p><p>The plan adds two libraries and repairs forty miles of road over the "
        b"next three years.</p></article></body></html>")
TEXT = b"The city council approved the budget on Tuesday after a long debate about school funding.\n"


def plexity(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_a_page_whose_name_and_bytes_disagree_on_gzip_is_told_the_name_that_reads_it(tmp_path):
    """A download saves what the server sent: `index.html` gzipped (a server that compressed it unasked), `about.gz`
    (a gzipped page named for its URL), `page.html.gz` not gzipped (a tool that decompressed it kept the name).
    Each was skipped with no way on: "not_html (its bytes are gzip)", "not one of the .txt, .text, .html ... files",
    "BadGzipFile: not a gzipped file".  Now each skip names the file to rename it to, as a gzipped WARC named
    `crawl.gz` is told `crawl.warc.gz`; renamed so, every one is cleaned.  A gzip of what is no text (a PDF) gets
    no such line: renaming would not make it a page."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "index.html").write_bytes(gzip.compress(PAGE))
    (folder / "notes.txt").write_bytes(gzip.compress(TEXT))
    (folder / "about.gz").write_bytes(gzip.compress(PAGE))
    (folder / "page.html.gz").write_bytes(PAGE)
    (folder / "report.html").write_bytes(gzip.compress(b"%PDF-1.4\n" + bytes(200)))

    first = plexity("clean", folder, "-o", tmp_path / "out", "-q")
    warnings = dict(re.findall(r"skipped \S+/(\S+): (.*)", first.stderr))
    assert warnings == {
        "about.gz": "unknown_file_type (a gzipped HTML page by its bytes: rename it to about.html.gz to read it)",
        "index.html": "not_html (its bytes are gzip: rename it to index.html.gz to read it)",
        "notes.txt": "not_text (its bytes are gzip: rename it to notes.txt.gz to read it)",
        "page.html.gz": "unreadable_file (BadGzipFile: not a gzipped file (it starts b'<html><b'): rename it to "
                        "page.html to read it)",
        "report.html": "not_html (its bytes are gzip)"}

    for name, why in warnings.items():  # what the user does next: rename as told
        told = re.search(r"rename it to (\S+) to read it", why)
        if told:
            (folder / name).rename(folder / told.group(1))
    (folder / "report.html").unlink()
    again = plexity("clean", folder, "-o", tmp_path / "out", "-q")
    assert again.returncode == 0 and "skipped" not in again.stderr, again.stderr
    assert again.stdout.startswith("4 files (0 skipped), 4 documents (0 skipped, 0 dropped"), again.stdout
    for output in ("index.html.gz.txt", "about.html.gz.txt", "page.html.txt"):
        assert (tmp_path / "out" / output).read_text().startswith("The city council approved the budget"), output
    assert (tmp_path / "out" / "notes.txt.gz.txt").read_bytes() == TEXT


def test_a_glob_the_shell_expanded_into_many_paths_is_named_by_its_first_five_and_its_count(tmp_path):
    """`plexity run crawl/*.warc.gz -o out`, unquoted, over 300 files: the error named all 299 paths plexity run
    does not take, one line of them, and the hint that says what to do (quote the glob) came after the last.  Now
    it names the first five and the count, then the hint."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    shutil.copy(SAMPLE, crawl / "s000.warc.gz")
    for number in range(1, 300):
        os.link(crawl / "s000.warc.gz", crawl / f"s{number:03}.warc.gz")
    result = subprocess.run(f"{sys.executable} -m plexity_plugins run crawl/*.warc.gz -o out", shell=True, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "plexity run: error: unrecognized arguments: crawl/s001.warc.gz crawl/s002.warc.gz crawl/s003.warc.gz "
        "crawl/s004.warc.gz crawl/s005.warc.gz ... (299 in all) (more paths than plexity run takes: a glob the shell "
        "expanded? quote it, as in 'crawl/*.warc.gz', for plexity run to expand it; plexity run --help lists the "
        "options)")
    assert not (tmp_path / "out").exists()


def test_a_mistyped_command_is_told_the_command_meant_as_a_mistyped_option_is():
    """`plexity cleen page.html -o out` said "argument COMMAND: invalid choice: 'cleen' (choose from 'score', 'clean',
    ...)", where `--extracter` is told "did you mean --extractor?".  Now a command a letter or two off is named; a
    word like none of them still lists them all."""
    result = plexity("cleen", "page.html", "-o", "out")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == ("plexity: error: argument COMMAND: invalid choice: 'cleen' (did you mean "
                                              "clean? plexity --help lists the commands)")
    assert plexity("scroe", "A sentence.").stderr.splitlines()[-1].endswith("(did you mean score? plexity --help "
                                                                           "lists the commands)")
    # (argparse's own list: Python 3.11 quotes each choice, 3.13 does not)
    listed = plexity("xyz").stderr.splitlines()[-1]
    assert listed.startswith("plexity: error: argument COMMAND: invalid choice: 'xyz' (choose from ")
    assert "did you mean" not in listed
    assert re.findall(r"\w+", listed.split("choose from ")[1]) == ["score", "clean", "models", "train", "calibrate",
                                                                  "serve", "report", "run"]
