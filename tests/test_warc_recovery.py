"""Reading resynchronises after a damaged WARC record, the same for plexity clean and plexity run.

One record between ten intact ones announces a Content-Length too short, negative or not a
number: warcio reads the wrong number of bytes and loses its place, and every record after it
used to be lost ("truncated after record 6").  Each gzip member of a .warc.gz can be read on its
own, and in an uncompressed file every record starts with a ``WARC/1.`` line: reading resumes
there, counting what it skipped.  A .warc.gz gzipped as one single member is read whole, as
warcio's own tools read it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from plexity_plugins.io.inputs import CORRUPT_FILE, WarcFile
from warc_corpus import damaged_between_intact, single_member

LENGTHS = {"too-short": "12", "negative": "-40", "not-a-number": "twelve", "empty": "",
           "into-the-next-record": "700", "past-the-end": "99999"}


def read(path):
    with open(path, "rb") as f:
        warc = WarcFile(f)
        return [r for r in warc], warc


@pytest.mark.parametrize("gzipped", [True, False], ids=["warc.gz", "warc"])
@pytest.mark.parametrize("length", LENGTHS)
def test_every_intact_record_after_a_wrong_content_length_is_recovered(tmp_path, length, gzipped):
    path = tmp_path / ("damaged.warc.gz" if gzipped else "damaged.warc")
    intact = damaged_between_intact(path, LENGTHS[length], gzip_records=gzipped)
    records, warc = read(path)
    html = [r.uri for r in records if r.payload is not None and r.uri != "http://t/damaged"]
    assert html == intact  # all ten, in order, each once
    assert all(b"Record %d." % i in r.payload for i, r in enumerate(r for r in records if r.uri in intact))
    damaged = [r for r in records if r.uri == "http://t/damaged"]
    assert len(damaged) <= 1
    if warc.records_recovered:  # resynchronised: the file is named damaged, with where reading resumed
        assert warc.problem == CORRUPT_FILE and "resumed at byte" in warc.problem_detail
        assert warc.records_recovered == len(intact) - len(intact) // 2
        assert 0 <= warc.bytes_skipped < path.stat().st_size
    else:  # (a Content-Length too long in its own gzip member: that record alone is short, and the file named
        # damaged as an uncompressed one is; it was not, though its record was counted truncated)
        assert gzipped and damaged[0].skip == "truncated" and warc.problem == CORRUPT_FILE
        assert warc.problem_detail.startswith("record 6: ") and "its gzip member ends first" in warc.problem_detail
    # never taken for a good page: not even a Content-Length that runs into the next record, whose
    # end is not where the record says (it used to be kept, the next record's start in its payload)
    assert damaged[0].payload is None


def test_a_warc_gzipped_as_one_member_is_read_whole_as_warcio_reads_it(tmp_path):
    path = tmp_path / "single.warc.gz"
    uris = single_member(path)
    records, warc = read(path)
    assert [r.uri for r in records if r.payload is not None] == uris and warc.problem is None
    with open(path, "rb") as f:  # (warcio's own iterator, told not to stop at the second record)
        iterator = ArchiveIterator(f)
        iterator._raise_invalid_gzip_err = lambda: None
        assert [r.rec_headers.get_header("WARC-Target-URI") for r in iterator] == uris


def test_garbage_between_gzip_members_is_skipped_and_counted(tmp_path):
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    members = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE).encode())) for i in range(4)]
    garbage = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 3  # a gzip header, then nothing that inflates
    path = tmp_path / "garbage.warc.gz"
    path.write_bytes(members[0] + members[1] + garbage + members[2] + members[3])
    records, warc = read(path)
    assert [r.uri for r in records] == [f"http://t/{i}" for i in range(4)]
    assert warc.bytes_skipped == len(garbage) and warc.records_recovered == 2


def test_plexity_clean_and_plexity_run_recover_the_same_records(tmp_path):
    (tmp_path / "in").mkdir()
    intact = damaged_between_intact(tmp_path / "in" / "short.warc.gz", "12")
    intact += damaged_between_intact(tmp_path / "in" / "nan.warc", "twelve", gzip_records=False)
    intact += single_member(tmp_path / "in" / "single.warc.gz")

    clean = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                            "-o", str(tmp_path / "clean"), "--extractor", "tags", "-q"],
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    assert "Record not followed by newline" not in clean.stderr  # (warcio's own warning: counted instead)
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["records_recovered"] == 10 and stats["bytes_skipped"] > 0
    assert stats["damaged_files"] == {"corrupt": 2}
    cleaned = set()
    for name in ("short.warc.gz", "nan.warc", "single.warc.gz"):
        with open(tmp_path / "clean" / name, "rb") as f:
            cleaned |= {r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)
                        if r.rec_headers.get_header("X-Plexity-Verdict")}
    assert cleaned == set(intact)

    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "run", str(tmp_path / "in"),
                          "-o", str(tmp_path / "run"), "--extractor", "tags", "--min-chars", "0"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    merged = json.loads((tmp_path / "run" / "logs" / "stats.json").read_text())
    reader = next(step["stats"] for step in merged if "WARC HTML" in step["name"])
    assert reader["records_recovered"]["total"] == 10 and reader["bytes_skipped"]["total"] == stats["bytes_skipped"]
    assert reader["documents"]["total"] == len(intact)


@pytest.mark.parametrize("gap", [b"\r\n", b"\n\n\n", b" \t\r\n", b"\n" * 20000, bytes(512)],
                         ids=["crlf", "lf", "spaces", "20k", "nul-padding"])
def test_blank_lines_between_gzip_members_are_no_damage(tmp_path, gap):
    """Some writers put blank lines between (or after) the gzip members of a .warc.gz, and a file padded
    to a block size ends in NULs (gzip -d allows both): every record is read and the file is not named
    damaged (before: "corrupt", a resynchronisation at every gap)."""
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    # (the first member's end falls at a different place in each of warcio's 16 kB reads)
    members = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE, "x" * (5000 * i)).encode()), 0)
               for i in range(4)]
    path = tmp_path / "gaps.warc.gz"
    path.write_bytes(gap.join(members) + gap)
    records, warc = read(path)
    assert [r.uri for r in records if r.payload is not None] == [f"http://t/{i}" for i in range(4)]
    assert warc.problem is None, warc.problem_detail
    assert warc.bytes_skipped == 0 and warc.records_recovered == 0


def test_an_uncompressed_warc_padded_with_nuls_is_no_damage(tmp_path):
    """NULs after or between the records of a .warc (a file padded to a block size): nothing is lost,
    and the file is not named damaged (before: "corrupt"); NULs with anything else among them still are."""
    from warc_corpus import ARTICLE, page, record_bytes

    records = [record_bytes(f"http://t/{i}", page(ARTICLE).encode()) for i in range(3)]
    for data, problem in ((records[0] + bytes(512) + records[1] + records[2] + bytes(4000), None),
                          (records[0] + bytes(10) + b"garbage\r\n" + records[1] + records[2], CORRUPT_FILE)):
        path = tmp_path / "padded.warc"
        path.write_bytes(data)
        read_records, warc = read(path)
        assert [r.uri for r in read_records if r.payload is not None] == [f"http://t/{i}" for i in range(3)]
        assert warc.problem == problem, warc.problem_detail


def split_record_warc(path, cuts) -> list[str]:
    """Four HTML records, each its own gzip member but the third, whose bytes are cut at the offsets
    `cuts` into several members (as a writer that flushes a member in the middle of a record does)."""
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    uris = [f"http://t/{i}" for i in range(4)]
    records = [record_bytes(uri, page(ARTICLE, f"Record {i}.", "x" * (9000 * (i == 2))).encode())
               for i, uri in enumerate(uris)]
    split = records[2]
    bounds = [0, *[c if c >= 0 else len(split) + c for c in cuts], len(split)]
    members = [gzip.compress(r) for r in records[:2]] + [gzip.compress(split[a:b]) for a, b in zip(bounds, bounds[1:])]
    path.write_bytes(b"".join(members) + gzip.compress(records[3]))
    return uris


@pytest.mark.parametrize("cuts", [[5], [120], [300], [600], [5000], [-3], [-1], [100, 400, 8000], [200] * 3],
                         ids=["in-WARC/1.0", "warc-headers", "http-headers", "page", "page-16k", "trailing-crlf",
                              "last-byte", "three-cuts", "empty-members"])
def test_a_record_cut_across_gzip_members_is_read_whole(tmp_path, cuts):
    """A writer may end a gzip member inside a record and go on with it in the next: where a member ends
    before the record's headers or its Content-Length do, the next member (one that does not start a
    record) holds the rest.  The record is read whole, and the file is not named damaged (before: the
    record lost, or `not_html` from its headers cut, and the file "corrupt", the reading resynchronised)."""
    uris = split_record_warc(tmp_path / "split.warc.gz", cuts)
    records, warc = read(tmp_path / "split.warc.gz")
    assert [(r.uri, r.skip) for r in records] == [(uri, None) for uri in uris]
    assert b"Record 2." in records[2].payload and records[2].payload.endswith(b"</body></html>")
    assert warc.problem is None and warc.bytes_skipped == 0


def test_a_member_cut_short_before_the_next_record_is_still_truncated(tmp_path):
    """Reading through a member's end stops where the next member starts a record: a record whose
    member ends early (a writer that crashed mid-record) is `truncated`, and the record after it is read."""
    import gzip

    from warc_corpus import ARTICLE, page, record_bytes

    records = [record_bytes(f"http://t/{i}", page(ARTICLE, f"Record {i}.").encode()) for i in range(3)]
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(gzip.compress(records[0]) + gzip.compress(records[1][:-200]) + gzip.compress(records[2]))
    read_records, warc = read(path)
    assert [(r.uri, r.skip) for r in read_records] == [("http://t/0", None), ("http://t/1", "truncated"),
                                                       ("http://t/2", None)]
    # (200 bytes cut, the last 4 the record's closing blank line)
    assert warc.problem == CORRUPT_FILE and warc.problem_detail == ("record 2: 196 bytes short of its Content-Length "
                                                                    "(its gzip member ends first)")


def test_plexity_clean_and_plexity_run_name_a_warc_gz_whose_record_is_longer_than_its_member(tmp_path):
    """A record whose Content-Length is too long inside its own gzip member is counted `truncated`, and its file in
    `damaged_files` (`corrupt`), as an uncompressed file's is; before, the .warc.gz was named by neither."""
    (tmp_path / "in").mkdir()
    damaged_between_intact(tmp_path / "in" / "long.warc.gz", "99999")
    damaged_between_intact(tmp_path / "in" / "long.warc", "99999", gzip_records=False)
    clean = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                            "-o", str(tmp_path / "clean"), "--extractor", "tags", "-q"],
                           capture_output=True, text=True, timeout=300)
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert stats["damaged_files"] == {"corrupt": 2}, (clean.stderr, stats["damaged_files"])
    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "run", str(tmp_path / "in"),
                          "-o", str(tmp_path / "run"), "--extractor", "tags"],
                         capture_output=True, text=True, timeout=300)
    merged = json.loads((tmp_path / "run" / "logs" / "stats.json").read_text())
    reader = next(step["stats"] for step in merged if "WARC HTML" in step["name"])
    assert reader["corrupt_files_corrupt"]["total"] == 2, (run.stderr, reader)


def test_plexity_clean_names_no_file_damaged_for_a_record_cut_across_members(tmp_path):
    (tmp_path / "in").mkdir()
    uris = split_record_warc(tmp_path / "in" / "split.warc.gz", [300])
    clean = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                            "-o", str(tmp_path / "clean"), "--extractor", "tags", "-q"],
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    stats = json.loads((tmp_path / "clean" / "plexity-stats.json").read_text())
    assert not stats.get("damaged_files") and stats["bytes_skipped"] == 0
    with open(tmp_path / "clean" / "split.warc.gz", "rb") as f:
        assert [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)
                if r.rec_headers.get_header("X-Plexity-Verdict")] == uris
