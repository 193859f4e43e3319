"""Probed 2026-12-06: what `plexity run` says first of a Common Crawl segment, and pages in a polars DataFrame.

What a user met:
- `plexity run` of a segment's folder (warc/, wat/) began "plexity run: 2 WARC files, 2 tasks ...", counting the WAT
  it then skips by its name (`wat_file`), named only in the summary at the end; now the first line counts the files
  it will read and says how many WAT files it will not: "1 WARC files, 1 WAT file not read (wat_file), 2 tasks ...",
  for a local folder and a folder over HTTP alike (`plexity_plugins.cli.run.files_to_read`, the one rule).
"""

from __future__ import annotations

from helpers import SAMPLE, run_plexity
from bad_http_server import serve  # noqa: F401 - (a fixture)
from web_archives import write_wat


def test_the_first_line_counts_the_warc_files_read_and_names_the_wat_files_skipped_local_or_remote(tmp_path, serve):
    segment = tmp_path / "CC-MAIN-2024-22" / "segments" / "1715971057216.39"
    (segment / "warc").mkdir(parents=True)
    (segment / "warc" / "CC-MAIN-00000.warc.gz").write_bytes(SAMPLE.read_bytes())
    wat = write_wat(segment / "wat" / "CC-MAIN-00000.warc.wat.gz", records=3)
    url = serve({"CC-MAIN-00000.warc.gz": (SAMPLE, "plain"), wat.name: (wat, "plain")})

    for where, source in (("local", str(segment)), ("remote", url)):
        ran = run_plexity("run", source, "-o", str(tmp_path / where), "--extractor", "tags", "--workers", "1",
                          timeout=180)
        assert ran.returncode == 0, ran.stderr[-3000:]
        first = ran.stdout.splitlines()[0]
        assert first == "plexity run: 1 WARC files, 1 WAT file not read (wat_file), 2 tasks, 0 already completed " \
                        "(executor local)", (where, first)
        assert "files not read: 1 (wat_file 1)" in ran.stdout  # (the summary, as before)
