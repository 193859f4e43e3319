"""Nothing lost, nothing hidden: every WARC record read ends in exactly one place.

A directory of WARC files with every kind of record and damage (tests/warc_corpus.py) goes
through `plexity clean` and `plexity run` (JSON-lines and WARC output).  The input records
are counted independently, with warcio's own iterator, and must equal what the outputs hold
plus what the stats count as skipped, reason by reason.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from warc_corpus import CAP, count_records, write_corpus
from helpers import run_step_stats

REPO = Path(__file__).resolve().parent.parent
PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    directory = tmp_path_factory.mktemp("accounting") / "in"
    expected = write_corpus(directory)
    inputs = {name: count_records(directory / name) for name in expected}
    return directory, expected, inputs


def expected_skips(expected) -> Counter:
    return Counter(o for want in expected.values() for o in want["outcomes"] if o != "html")


def run(*args, timeout=600):
    return subprocess.run([*PLEXITY, *map(str, args)], capture_output=True, text=True, cwd=REPO, timeout=timeout)



def warc_records(path: Path) -> list:
    with open(path, "rb") as f:
        return [(r.rec_type, dict(r.rec_headers.headers)) for r in ArchiveIterator(f)]


def test_plexity_clean_accounts_for_every_record(corpus, tmp_path):
    directory, expected, inputs = corpus
    out = tmp_path / "out"
    done = run("clean", directory, "--output-dir", out, "--extractor", "tags", "-q",
               "--max-document-bytes", CAP, "--write-dropped")
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["completed"] is True

    # every input record read, and each in one place
    assert stats["records"] == sum(inputs.values())
    assert stats["records"] == stats["documents"] + stats["records_copied"] + stats["documents_skipped"]
    skips = expected_skips(expected)
    assert stats["copied_reasons"] == {k: skips.pop(k) for k in ("not_response", "not_html")}
    assert stats["skip_reasons"] == {**skips, "not_a_warc": 4}
    assert stats["documents"] == sum(o == "html" for want in expected.values() for o in want["outcomes"])

    # files: every one counted; damaged ones named with the record after which reading stopped
    assert stats["files"] + stats["files_skipped"] == len(expected)
    assert stats["files_skipped"] == 4 and stats["damaged_files"] == {"truncated": 2, "corrupt": 2}
    details = "\n".join(stats["damaged_file_details"])
    assert "cut.warc.gz: truncated after record 4" in details
    assert "cut-early.warc.gz: truncated after record 2" in details
    assert "then-garbage.warc.gz: unreadable after record 3" in details
    assert "long-content-length.warc.gz: record 3: 4,996 bytes short of its Content-Length" in details
    assert "damaged:" in done.stdout  # and in the summary line

    # the outputs: a WARC per readable input, none for a file that is not a WARC
    written = {p.name for p in out.glob("*.warc*")}
    assert written == {name for name, want in expected.items() if want["problem"] != "not_a_warc"}
    output = [r for name in written for r in warc_records(out / name)]
    markers = [h for _, h in output if "X-Plexity-Skipped" in h]
    cleaned = [h for _, h in output if "X-Plexity-Verdict" in h]
    assert len(cleaned) == stats["documents"]
    assert Counter(h["X-Plexity-Skipped"] for h in markers) == \
        Counter({k: v for k, v in stats["skip_reasons"].items() if k not in ("truncated", "not_a_warc")})
    # input == output + what is not in it (cut-short records), record for record
    assert sum(inputs.values()) == len(output) + stats["skip_reasons"]["truncated"]

    # the dropped file names every skip, file problems included
    rows = [json.loads(line) for line in (out / "plexity-dropped.jsonl").read_text().splitlines()]
    reasons = Counter(r["reason"] for r in rows if "perplexity" not in r)
    assert reasons == Counter(stats["skip_reasons"]) + Counter(stats["damaged_files"])


@pytest.mark.parametrize("fmt", ["jsonl", "warc"])
def test_plexity_run_accounts_for_every_record(corpus, tmp_path, fmt):
    directory, expected, inputs = corpus
    out = tmp_path / "out"
    done = run("run", directory, "--output-dir", out, "--executor", "local", "--extractor", "tags",
               "--format", fmt, "--tasks", "2", "--workers", "2", "--max-document-bytes", CAP)
    assert done.returncode == 0, done.stderr[-3000:]
    reader, extractor, filt = run_step_stats(out)

    # reader: every input record is a document or a counted skip
    assert reader["records"] == sum(inputs.values())
    skipped = {k.removeprefix("skipped_"): v for k, v in reader.items() if k.startswith("skipped_")}
    assert skipped == dict(expected_skips(expected))
    assert reader["records"] == reader["documents"] + sum(skipped.values())
    assert reader["corrupt_files"] == 8
    assert {k: v for k, v in reader.items() if k.startswith("corrupt_files_")} == {
        "corrupt_files_not_a_warc": 4, "corrupt_files_truncated": 2, "corrupt_files_corrupt": 2}

    # extractor and filter: every document forwarded or counted
    lost_in_extraction = sum(extractor.get(k, 0) for k in ("dropped", "timeout", "memory_limit", "broken_process", "clean_error"))
    assert extractor["total"] == reader["documents"] == extractor["forwarded"] + lost_in_extraction
    assert filt["total"] == extractor["forwarded"] == filt["forwarded"] + filt.get("dropped", 0)

    # outputs: what the filter kept, and what it dropped (with the reason)
    if fmt == "jsonl":
        kept = sum(1 for p in (out / "documents").glob("*.jsonl.gz") for _ in gzip.open(p, "rt"))
    else:
        kept = sum(1 for p in (out / "documents").glob("*.warc.gz")
                   for rec_type, _ in warc_records(p) if rec_type == "response")
    excluded = sum(1 for p in (out / "excluded").glob("*.jsonl.gz") for _ in gzip.open(p, "rt"))
    assert kept == filt["forwarded"] and excluded == filt.get("dropped", 0)
    assert sum(inputs.values()) == kept + excluded + sum(skipped.values()) + lost_in_extraction
