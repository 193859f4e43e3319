"""WACZ files (Web Archive Collection Zipped, what Webrecorder's ArchiveWeb.page and Browsertrix Crawler write), made
here with zipfile in the layout of the WACZ specification 1.1.1: archive/*.warc.gz, indexes/index.cdxj,
pages/pages.jsonl, datapackage.json and datapackage-digest.json.  `plexity run`, `plexity clean` and WarcHtmlReader read
each WARC member of one as the WARC it is (`plexity_plugins/io/wacz_files.py`), streamed from the zip.

Before: `plexity clean crawl.wacz` skipped it (unknown_file_type: "no input could be read"), `plexity run crawl.wacz`
read the zip as a damaged WARC (its stored members' gzip records found by the damage recovery, "corrupt_files: 1"; a
deflated member gave nothing), and a folder's .wacz files were not listed."""

from __future__ import annotations

import io
import json
import random
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from helpers import SAMPLE, read_jsonl_dir, within
from plexity_plugins.datatrove import WarcHtmlReader
from plexity_plugins.io.folders import WARC_AND_ARC_GLOB, WARC_GLOB, warc_glob
from warc_corpus import ARTICLE, page, record_bytes, response, write_warc
from web_archives import write_wacz

REPO = Path(__file__).resolve().parent.parent
PLEXITY = [sys.executable, "-m", "plexity_plugins"]
PDF = b"%PDF-1.4\n" + bytes(200)


def plain_warc(path: Path, pages: int = 3) -> Path:
    """An uncompressed WARC (a member named .warc) of `pages` pages and a PDF."""
    from warcio.warcwriter import WARCWriter

    dummy = WARCWriter(io.BytesIO())
    records = [response(dummy, f"http://example.org/plain-{i}", page(ARTICLE, f"Item {i}.").encode())
               for i in range(pages)]
    write_warc(path, records + [response(dummy, "http://example.org/a.pdf", PDF, "application/pdf")],
               gzip_records=False)
    return path


def unzipped(folder: Path) -> Path:
    """A crawl's WARCs as a folder: the sample WARC (27 records, 12 pages) and an uncompressed one."""
    (folder / "archive").mkdir(parents=True)
    shutil.copy(SAMPLE, folder / "archive" / "data.warc.gz")
    plain_warc(folder / "archive" / "data-2.warc")
    return folder


def plexity(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(PLEXITY + list(args), capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(cwd)})


def reader_stats(out: Path) -> dict:
    stats = json.loads((out / "logs" / "stats.json").read_text())[0]["stats"]
    return {name: value["total"] if isinstance(value, dict) else value for name, value in stats.items()}


def documents(docs) -> list[tuple]:
    return sorted((doc["id"], doc["metadata"]["url"], doc["text"]) for doc in docs)


METHODS = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}


@pytest.mark.parametrize("method", METHODS)
def test_plexity_run_of_a_wacz_gives_the_documents_of_its_warcs_unzipped(tmp_path, method):
    """Before: stored, the zip read as a damaged WARC ("damaged WARC crawl.wacz ... unreadable after record 27 (first
    line: PK\\x01\\x02...)", corrupt_files 1); deflated, no document at all ("not a WARC file: a ZIP archive")."""
    write_wacz(tmp_path / "crawl.wacz", unzipped(tmp_path / "unzipped"), METHODS[method])
    for source, out in (("crawl.wacz", "from-wacz"), ("unzipped", "from-warcs")):
        done = plexity("run", source, "-o", out, "--extractor", "tags", "--workers", "1", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    assert documents(read_jsonl_dir(tmp_path / "from-wacz" / "documents")) == \
        documents(read_jsonl_dir(tmp_path / "from-warcs" / "documents"))
    from_wacz, from_warcs = reader_stats(tmp_path / "from-wacz"), reader_stats(tmp_path / "from-warcs")
    assert (from_wacz["records"], from_wacz["documents"]) == (27 + 4, 12 + 3)
    counted = ("records", "documents", "skipped_not_response", "skipped_not_html", "corrupt_files", "unreadable_file")
    assert {name: from_wacz.get(name) for name in counted} == {name: from_warcs.get(name) for name in counted}
    assert "corrupt_files" not in from_wacz  # (its index, pages and data package are no damage)


def test_plexity_clean_of_a_wacz_writes_each_of_its_warcs_cleaned_as_the_warcs_unzipped_are(tmp_path):
    """Before: "skipped crawl.wacz: unknown_file_type", "no input could be read", exit 1."""
    write_wacz(tmp_path / "crawl.wacz", unzipped(tmp_path / "unzipped"), zipfile.ZIP_DEFLATED)
    for source, out in (("crawl.wacz", "from-wacz"), ("unzipped", "from-warcs")):
        done = plexity("clean", source, "-o", out, "--extractor", "tags", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    for name in ("data.warc.gz", "data-2.warc"):  # DIR/<the .wacz>/<the member>: the same bytes as its WARC's
        assert (tmp_path / "from-wacz" / "crawl.wacz" / "archive" / name).read_bytes() == \
            (tmp_path / "from-warcs" / "archive" / name).read_bytes()
    written = sorted(str(p.relative_to(tmp_path / "from-wacz")) for p in (tmp_path / "from-wacz").rglob("*")
                     if p.is_file())
    assert written == ["crawl.wacz/archive/data-2.warc", "crawl.wacz/archive/data.warc.gz", "plexity-stats.json"]
    stats = [json.loads((tmp_path / out / "plexity-stats.json").read_text()) for out in ("from-wacz", "from-warcs")]
    counted = ("files", "files_skipped", "records", "records_copied", "documents", "copied_reasons", "skip_reasons",
               "damaged_files", "sentences_kept")
    from_wacz, from_warcs = ({name: each[name] for name in counted} for each in stats)
    assert from_wacz == from_warcs
    assert (stats[0]["files"], stats[0]["records"], stats[0]["documents"]) == (2, 27 + 4, 12 + 3)


def test_the_datatrove_reader_reads_the_wacz_files_of_a_folder_beside_its_warcs(tmp_path):
    """Before: the folder's glob (**/*.warc*) left the .wacz out: only other.warc.gz was read."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    write_wacz(crawl / "crawl.wacz", unzipped(tmp_path / "unzipped"))
    shutil.copy(SAMPLE, crawl / "other.warc.gz")
    shutil.copy(SAMPLE, tmp_path / "unzipped" / "other.warc.gz")
    assert warc_glob(tmp_path / "unzipped") == WARC_GLOB  # (a folder of WARCs keeps its glob: a run on it resumes)
    read = {}
    for folder in (crawl, tmp_path / "unzipped"):
        reader = WarcHtmlReader(str(folder))
        docs = [{"id": d.id, "text": d.text, "metadata": d.metadata} for d in reader.run()]
        read[folder.name] = (docs, {name: counter.total for name, counter in reader.stats.stats.items()})
    (from_wacz, wacz_counts), (from_warcs, warc_counts) = read["crawl"], read["unzipped"]
    assert documents(from_wacz) == documents(from_warcs) and len(from_wacz) == 12 + 3 + 12
    assert {str(Path(doc["metadata"]["file_path"]).relative_to(crawl)) for doc in from_wacz} == {
        "crawl.wacz/archive/data.warc.gz", "crawl.wacz/archive/data-2.warc", "other.warc.gz"}
    wacz_counts.pop("input_files"), warc_counts.pop("input_files")  # (2 files, or 3: the same WARCs)
    assert {k: v for k, v in wacz_counts.items() if "time" not in k and k != "doc_len"} == \
        {k: v for k, v in warc_counts.items() if "time" not in k and k != "doc_len"}


def test_a_folder_glob_takes_wacz_files_and_keeps_its_old_glob_without_them(tmp_path):
    """Before: a folder holding only a .wacz had the glob **/*.warc*, which lists none of it."""
    from datatrove.io import get_datafolder

    (tmp_path / "warcs").mkdir()
    shutil.copy(SAMPLE, tmp_path / "warcs" / "a.warc.gz")
    (tmp_path / "arcs").mkdir()
    (tmp_path / "arcs" / "old.arc.gz").write_bytes(b"")
    (tmp_path / "waczs" / "2024").mkdir(parents=True)
    write_wacz(tmp_path / "waczs" / "2024" / "crawl.wacz", None)
    shutil.copy(SAMPLE, tmp_path / "waczs" / "a.warc.gz")
    (tmp_path / "waczs" / "notes.txt").write_text("not a crawl")
    assert (warc_glob(tmp_path / "warcs"), warc_glob(tmp_path / "arcs")) == (WARC_GLOB, WARC_AND_ARC_GLOB)
    listed = get_datafolder(str(tmp_path / "waczs")).list_files(glob_pattern=warc_glob(tmp_path / "waczs"))
    assert sorted(listed) == ["2024/crawl.wacz", "a.warc.gz"]


def _patched(data: bytes, name: bytes, at_local: int, at_central: int, value: bytes) -> bytes:
    """`data`, a zip, with `value` written at offset `at_local` of `name`'s local header and `at_central` of its
    central directory entry."""
    data = bytearray(data)
    local = data.index(name) - 30  # (the first time the name is written: its local header's)
    central = data.index(name, data.index(b"PK\x01\x02")) - 46
    data[local + at_local:local + at_local + len(value)] = value
    data[central + at_central:central + at_central + len(value)] = value
    return bytes(data)


def hostile_waczs(folder: Path, warcs: Path) -> dict[str, str]:
    """A .wacz of each kind of hostile or broken zip, and a good one; {name: the reason each is named by}."""
    folder.mkdir()
    good = write_wacz(folder / "good.wacz", warcs).read_bytes()
    # a zip bomb: 200 MB of one byte, deflated to 200 KB (1,000 to 1), as a WARC member
    (folder / "bomb.wacz").write_bytes(b"")
    with zipfile.ZipFile(folder / "bomb.wacz", "w") as wacz:
        wacz.writestr("archive/bomb.warc", b"W" * 200_000_000, compress_type=zipfile.ZIP_DEFLATED)
    # encrypted (zip's password bit set on the member: zipfile writes none)
    name = b"archive/data.warc.gz"
    (folder / "encrypted.wacz").write_bytes(_patched(good, name, 6, 8, struct.pack("<H", 1)))
    # compressed by zip with bzip2
    with zipfile.ZipFile(folder / "bzip2.wacz", "w") as wacz:
        wacz.writestr("archive/data.warc.gz", SAMPLE.read_bytes(), compress_type=zipfile.ZIP_BZIP2)
    # its central directory damaged, and the file cut short (no directory at all)
    central = good.index(b"PK\x01\x02")
    (folder / "damaged-directory.wacz").write_bytes(good[:central] + b"garbage!" + good[central + 8:])
    (folder / "truncated.wacz").write_bytes(good[:len(good) // 2])
    # not a zip, and a zip of no WARC
    (folder / "not-a-zip.wacz").write_text("These are my notes, not a web archive.\n")
    write_wacz(folder / "no-warc.wacz", None)
    # the member listed twice in the directory (the same bytes read twice: a bomb of many such entries)
    with zipfile.ZipFile(folder / "twice.wacz", "w") as wacz:
        wacz.writestr("archive/data.warc.gz", SAMPLE.read_bytes())
    data = (folder / "twice.wacz").read_bytes()
    central, end = data.index(b"PK\x01\x02"), data.index(b"PK\x05\x06")
    entry = data[central:end]
    twice = entry.replace(b"archive/data.warc.gz", b"archive/copy.warc.gz")
    tail = bytearray(data[end:])
    struct.pack_into("<HHL", tail, 8, 2, 2, 2 * len(entry))
    (folder / "twice.wacz").write_bytes(data[:end] + twice + bytes(tail))
    return {"bomb.wacz/archive/bomb.warc": "a zip bomb", "encrypted.wacz/archive/data.warc.gz": "encrypted",
            "bzip2.wacz/archive/data.warc.gz": "compressed by zip with bzip2",
            "damaged-directory.wacz": "zip directory cannot be read", "truncated.wacz": "zip directory cannot be read",
            "twice.wacz/archive/data.warc.gz": "listed twice", "twice.wacz/archive/copy.warc.gz": "listed twice",
            "not-a-zip.wacz": "not a WACZ file (a zip): a text file (it starts 'These are my notes",
            "no-warc.wacz": "a WACZ holding no WARC file under archive/ (it holds indexes/index.cdxj, pages/"}


def test_hostile_and_broken_waczs_are_each_a_named_skip_in_plexity_clean_and_the_reader(tmp_path):
    """Before: plexity clean skipped every one as unknown_file_type, and the reader's glob left them out."""
    named = hostile_waczs(tmp_path / "hostile", unzipped(tmp_path / "unzipped"))
    with within(60):  # (the bomb is not inflated: each is named at once)
        started = time.monotonic()
        done = plexity("clean", "hostile", "-o", "out", "--extractor", "tags", "-q", cwd=tmp_path)
        seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    details = stats["skipped_file_details"]
    for name, why in named.items():
        assert any(d.startswith(f"hostile/{name}: ") and why in d for d in details), (name, details)
    assert stats["skip_reasons"] == {"unreadable_file": 7, "not_a_warc": 2}
    # good.wacz whole, and encrypted.wacz's other member (not encrypted)
    assert (stats["files"], stats["records"], stats["documents"]) == (3, 31 + 4, 15 + 3)
    assert seconds < 60

    reader = WarcHtmlReader(str(tmp_path / "hostile"))
    assert len(list(reader.run())) == 15 + 3
    counts = {name: counter.total for name, counter in reader.stats.stats.items()}
    assert (counts["unreadable_file"], counts["corrupt_files_not_a_warc"], counts["records"]) == (7, 2, 31 + 4)
    assert "corrupt_files_corrupt" not in counts and "corrupt_files_truncated" not in counts


def test_a_deflated_member_damaged_everywhere_reads_as_its_warc_and_is_inflated_a_bounded_number_of_times(tmp_path):
    """Resynchronising after damage steps back to the damaged record's start: in a deflated member a step back
    inflates it again from its start (zipfile's reader), unless it lies within the last bytes inflated, which are
    kept.  A member of 1,000 records, every other one's Content-Length wrong, reads as its WARC does, at once; a
    member read again and again from its start is inflated at most MAX_INFLATIONS times over, then reads as ended,
    named."""
    from plexity_plugins.io.wacz_files import MAX_INFLATIONS, WaczFile
    from plexity_plugins.io.warc_files import WarcFile

    records = b"".join(record_bytes(f"http://example.org/{i}", page(ARTICLE, str(i)).encode() * 3,
                                    content_length="100" if i % 2 else None) for i in range(1_000))
    big = random.Random(3).randbytes(9 << 20)  # (more than the bytes kept to step back into)
    with zipfile.ZipFile(tmp_path / "damaged.wacz", "w") as wacz:
        wacz.writestr("archive/damaged.warc", records, compress_type=zipfile.ZIP_DEFLATED)
        wacz.writestr("archive/big.warc", big, compress_type=zipfile.ZIP_DEFLATED)
    unzipped = WarcFile(io.BytesIO(records), name="damaged.wacz/archive/damaged.warc")
    expected = [(record.uri, record.skip) for record in unzipped]
    with within(60), open(tmp_path / "damaged.wacz", "rb") as f:
        damaged, again = WaczFile(f, "damaged.wacz")
        warc = WarcFile(damaged.fileobj, name=damaged.name)
        assert [(record.uri, record.skip) for record in warc] == expected
        assert (warc.problem_detail, damaged.why_ended()) == (unzipped.problem_detail, "")
        assert [skip for _, skip in expected].count(None) == 500
        passes = [again.fileobj.seek(0) == 0 and again.fileobj.read(len(big)) == big
                  for _ in range(MAX_INFLATIONS + 3)]
    # (the 16 MiB of slack are one pass and most of another; then it reads as ended)
    assert passes == [True] * (MAX_INFLATIONS + 1) + [False] * 2
    assert again.why_ended().startswith(f"reading stopped: a deflated member is inflated again from its start at "
                                        f"each damage, and it was inflated {MAX_INFLATIONS} times over")


def test_plexity_run_reads_a_wacz_on_s3_and_a_glob_of_them_as_the_local_file(tmp_path):
    """A WACZ in a bucket (moto's S3 server on 127.0.0.1, tests/s3_server.py): its zip directory and
    members are read by ranges, nothing downloaded whole first.  Before: the file URL was taken for a folder (no
    ".warc" in its name) and the glob's file read as a damaged WARC."""
    from s3_server import KEY, SECRET, S3Server, clean_env

    write_wacz(tmp_path / "crawl.wacz", unzipped(tmp_path / "unzipped"))
    local = plexity("run", "crawl.wacz", "-o", "local", "--extractor", "tags", "--workers", "1", cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    server = S3Server()
    try:
        fs = server.fs()
        fs.call_s3("create_bucket", Bucket="crawl")
        fs.put(str(tmp_path / "crawl.wacz"), "crawl/2024/crawl.wacz")
        env = clean_env(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_ENDPOINT_URL=server.url)
        for url, out in (("s3://crawl/2024/crawl.wacz", "file"), ("s3://crawl/2024/*.wacz", "glob")):
            done = subprocess.run(PLEXITY + ["run", url, "-o", str(tmp_path / out), "--extractor", "tags",
                                             "--workers", "1"], capture_output=True, text=True, timeout=300, env=env)
            assert done.returncode == 0, done.stderr[-3000:]
            assert documents(read_jsonl_dir(tmp_path / out / "documents")) == \
                documents(read_jsonl_dir(tmp_path / "local" / "documents"))
            assert reader_stats(tmp_path / out)["records"] == 27 + 4
    finally:
        server.stop()


def test_a_deflated_member_whose_data_is_damaged_is_named_and_its_records_before_it_kept(tmp_path):
    """A byte of a deflated member's data changed: zipfile's inflating fails there (or its CRC at the end).  Before
    the WACZ reading caught it, zlib's error stopped plexity clean with a traceback (tests/test_fuzz_input.py found
    it); before WACZs were read at all, the file was an unknown_file_type."""
    records = [record_bytes(f"http://example.org/{i}", page(ARTICLE, f"Record {i}.").encode()) for i in range(40)]
    (tmp_path / "crawl").mkdir()
    with zipfile.ZipFile(tmp_path / "crawl" / "crc.wacz", "w") as wacz:
        wacz.writestr("archive/data.warc", b"".join(records), compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray((tmp_path / "crawl" / "crc.wacz").read_bytes())
    at = data.index(b"PK\x01\x02") - 40  # (near its compressed data's end: the records before it inflate)
    data[at] ^= 0xFF
    (tmp_path / "crawl" / "crc.wacz").write_bytes(bytes(data))
    done = plexity("clean", "crawl", "-o", "out", "--extractor", "tags", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    (detail,) = stats["damaged_file_details"]
    assert detail.startswith("crawl/crc.wacz/archive/data.warc: ") and "its zip data is damaged at byte" in detail
    assert 30 <= stats["documents"] < 40 and stats["files"] == 1
    reader = WarcHtmlReader(str(tmp_path / "crawl"))
    assert len(list(reader.run())) == stats["documents"]
    assert reader.stats.stats["corrupt_files"].total == 1
