"""datatrove's reader arguments ``limit``, ``skip`` and ``adapter`` on `WarcHtmlReader`: the task takes
``limit`` documents after passing over ``skip``, and the reader's counters count exactly the records it
read for them: no record after the last document taken (datatrove's loop asks for one document more
before it stops), the documents passed over for ``skip`` as ``skipped_by_skip_argument``, the records a
custom ``adapter`` drops as ``skipped_by_adapter``; so ``records = documents + Σ skipped_*`` whatever
the arguments."""

from __future__ import annotations

import json
import shutil

import pytest
from datatrove.executor import LocalPipelineExecutor

from helpers import SAMPLE
from plexity_plugins.datatrove import WarcHtmlReader
from plexity_plugins.datatrove.run_counts import run_counts


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


# Adapters (datatrove's reader argument: a record's dict to a Document's) that drop the sample's two
# /local/ pages: by returning None, or a dict without text.
def drop_local_pages(self, data: dict, path: str, id_in_file):
    return None if "/local/" in data["url"] else self._default_adapter(data, path, id_in_file)


def empty_local_pages(self, data: dict, path: str, id_in_file):
    document = self._default_adapter(data, path, id_in_file)
    if "/local/" in document["metadata"]["url"]:
        document["text"] = ""
    return document


@pytest.mark.parametrize("adapter", [drop_local_pages, empty_local_pages])
def test_the_records_a_custom_adapter_drops_are_counted_as_skipped_by_adapter(tmp_path, adapter):
    """Returning None stopped the task (AttributeError in datatrove's reader); a dict without text
    was a record counted in ``records`` and nowhere else."""
    shutil.copy(SAMPLE, tmp_path / "a.warc.gz")
    reader = WarcHtmlReader(str(tmp_path), adapter=adapter)
    urls = [doc.metadata["url"] for doc in reader.run()]
    assert len(urls) == 10 and not any("/local/" in url for url in urls)
    counted = counters(reader)
    assert counted["skipped_by_adapter"] == 2
    assert counted["records"] == counted["documents"] + sum(
        value for name, value in counted.items() if name.startswith("skipped_"))


def test_a_run_reports_the_records_its_adapter_dropped_among_the_documents_skipped(tmp_path):
    shutil.copy(SAMPLE, tmp_path / "a.warc.gz")
    LocalPipelineExecutor(pipeline=[WarcHtmlReader(str(tmp_path), adapter=drop_local_pages, skip=1)],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    counts = run_counts(json.loads((tmp_path / "logs" / "stats.json").read_text()))
    assert counts["skip_reasons"]["by_adapter"] == 2 and counts["skip_reasons"]["by_skip_argument"] == 1
    assert counts["documents"] == 9
    assert counts["records"] == counts["documents"] + counts["documents_skipped"] + counts["records_not_pages"]
