"""datatrove's reader arguments ``limit`` and ``skip`` on `WarcHtmlReader`: the task takes ``limit``
documents after passing over ``skip``, and the reader's counters count exactly the records it read
for them: no record after the last document taken (datatrove's loop asks for one document more
before it stops), the documents passed over for ``skip`` as ``skipped_by_skip_argument``; so
``records = documents + Σ skipped_*`` whatever the arguments."""

from __future__ import annotations

import shutil

import pytest

from helpers import SAMPLE
from plexity_plugins.datatrove import WarcHtmlReader


def counters(reader) -> dict:
    return {name: counter.total for name, counter in reader.stats.stats.items()}


# The sample WARC, twice: a warcinfo record, then a request and a response per page (12 HTML pages
# and an image: 27 records).  The 5th page's response is record 11.
@pytest.mark.parametrize("limit, skip, documents, records", [
    (3, 0, 3, 7),  # warcinfo, 3 × (request, response): the 3rd page's response is the last record read
    (0, 0, 0, 0),  # nothing taken, nothing read
    (3, 2, 3, 11),  # 2 pages passed over, 3 taken
    (15, 0, 15, 27 + 7),  # the first file whole, the second up to its 3rd page
    (-1, 0, 24, 54),  # no limit: every record
])
def test_the_counters_count_the_records_read_for_the_documents_taken(tmp_path, limit, skip, documents, records):
    for name in ("a.warc.gz", "b.warc.gz"):
        shutil.copy(SAMPLE, tmp_path / name)
    reader = WarcHtmlReader(str(tmp_path), limit=limit, skip=skip)
    assert len(list(reader.run())) == documents
    counted = counters(reader)
    assert (counted.get("documents", 0), counted.get("records", 0)) == (documents, records)
    assert counted.get("skipped_by_skip_argument", 0) == skip
    assert counted.get("records", 0) == counted.get("documents", 0) + sum(
        value for name, value in counted.items() if name.startswith("skipped_"))


def test_the_limit_is_per_task_when_one_process_runs_several(tmp_path):
    for name in ("a.warc.gz", "b.warc.gz"):
        shutil.copy(SAMPLE, tmp_path / name)
    reader = WarcHtmlReader(str(tmp_path), limit=3)
    taken = [len(list(reader.run(rank=rank, world_size=2))) for rank in (0, 1)]  # (one file each)
    assert taken == [3, 3] and counters(reader)["records"] == 7 + 7
