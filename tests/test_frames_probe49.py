"""Probed 2026-12-06: what `plexity run` says first of a Common Crawl segment, and pages in a polars DataFrame.

What a user met:
- `plexity run` of a segment's folder (warc/, wat/) began "plexity run: 2 WARC files, 2 tasks ...", counting the WAT
  it then skips by its name (`wat_file`), named only in the summary at the end; now the first line counts the files
  it will read and says how many WAT files it will not: "1 WARC files, 1 WAT file not read (wat_file), 2 tasks ...",
  for a local folder and a folder over HTTP alike (`plexity_plugins.cli.run.files_to_read`, the one rule).
- polars 2.1 (docs/python-api.md, "In a dataset or a DataFrame"; polars is no dependency, so these tests hand over
  the columns of the libraries we have, numpy's and pyarrow's, which the same rule judges): a whole column given
  where one cell is taken (``pl.col("html").map_batches(extract)``: a `pl.Series`) went pickled to the extraction
  child, 4.5 s for 5,000 pages of 100 KB, and came back as ``ExtractionMemoryLimit: extraction needed more than
  768 MiB`` with the child killed, or as "got Series"; now it is refused before the child, "got a polars Series: a
  column or an expression, not one cell's value", and so is a `pl.col(...)`.  A pandas 3 ``str`` column's empty cell
  is ``nan`` in `Series.tolist()`, which a recipe's ``html is None`` let through: `is_missing` is the test.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from helpers import SAMPLE, run_plexity
from plexity_plugins import PerplexityScorer
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor
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


A_COLUMN = (r"got a (numpy ndarray|pyarrow ChunkedArray|list): a column or an expression, not one cell's value: "
            r"call it on each cell \(polars: pl\.col\(name\)\.map_elements\(f\); pandas: Series\.map\(f\)")


def test_a_column_of_pages_given_to_the_extractor_is_refused_before_it_reaches_the_child():
    sentences = "A plain sentence about the river and the town beside it. " * 2_000
    page = f"<html><body><p>{sentences}</p></body></html>"
    column = pa.chunked_array([[page] * 1_500])  # (177 MB of pages: their pickle alone past the child's 128 MiB)
    extract = TimeLimitedExtractor("tags", timeout=30, memory_limit="128MiB")
    try:
        for value in (column, np.array([page, page]), [page]):
            with pytest.raises(TypeError, match=A_COLUMN):
                extract(value)
        assert extract._children == []  # (no child started for them: nothing sent)
        assert "river and the town" in extract(page)  # (each cell, one at a time)
    finally:
        extract.close()


def test_the_scorer_says_a_column_is_many_cells():
    scorer = PerplexityScorer(method="trim")
    for value in (pa.chunked_array([["One sentence.", "Another one."]]), np.array(["One sentence."]), ["a", "b"]):
        with pytest.raises(TypeError, match=A_COLUMN):
            scorer.clean(value)
    with pytest.raises(TypeError, match=r"^expected str or bytes, got int$"):
        scorer.clean(3)


def test_is_missing_is_each_empty_cell_a_map_hands_over_and_no_value_that_is_a_page():
    """None (a dataset's, polars' null), NaN (pandas 3's str column: Series.tolist() gives nan, as numpy does)."""
    from plexity_plugins.errors import is_missing  # (new: here, so that the other tests run on the code before)

    assert all(is_missing(value) for value in (None, float("nan"), np.nan, np.float32("nan")))
    assert not any(is_missing(value) for value in ("", b"", 0, "<p>nan</p>", "nan"))
