"""A WARC compressed with bzip2 (``.warc.bz2``; also ``.warc.xz``, ``.warc.zst``) is not read: it is one
stream, with no record boundaries to resume at after damage, and crawlers write ``.warc.gz``.  Both
commands say the same thing of it: a counted skip (``unsupported_compression``) naming the file, why,
and the one line that converts it; what that line writes is then read as any ``.warc.gz``.  Its bytes
decide, not only its name: a bzip2 WARC named ``.warc`` or ``.warc.gz`` is the same skip, its line
giving the file its true name first (converting it to its own name would empty it)."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import shutil
import struct
import subprocess

import pytest

from helpers import SAMPLE, run_plexity, run_step_stats
from plexity_plugins.io.inputs import UNSUPPORTED_COMPRESSION, WarcFile, unsupported_compression


def zstd(data: bytes) -> bytes:
    """`data` as one zstd frame of raw (stored) blocks: what ``zstd`` writes, without compressing."""
    blocks = [data[i:i + (1 << 17)] for i in range(0, len(data), 1 << 17)]
    frame = b"\x28\xb5\x2f\xfd" + bytes([0xA0]) + struct.pack("<I", len(data))  # (single segment, 4-byte size)
    for i, block in enumerate(blocks):
        frame += ((len(block) << 3) | (i == len(blocks) - 1)).to_bytes(3, "little") + block
    return frame


def bzip2_warc(folder, name: str = "sample.warc.bz2", compress=bz2.compress):
    """The sample WARC as a crawl archived with bzip2 would hold it (by default `folder`/sample.warc.bz2;
    under `name`, which may hide what it is)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(compress(gzip.decompress(SAMPLE.read_bytes())))
    return path


def why_not_read(path) -> str:
    """What both commands say of the file at `path`, by its name and its first bytes."""
    return unsupported_compression(str(path), path.read_bytes()[:4096])


def test_the_message_names_the_compression_and_the_conversion():
    assert unsupported_compression("crawl/CC-1.warc.bz2") == (
        "a bzip2-compressed WARC, which plexity does not read (it reads .warc and .warc.gz): "
        "convert it with `bzcat crawl/CC-1.warc.bz2 | gzip > crawl/CC-1.warc.gz`")
    assert "`xzcat 'my crawl/x.warc.wet.xz' | gzip > 'my crawl/x.warc.wet.gz'`" in unsupported_compression(
        "my crawl/x.warc.wet.xz")
    assert "a zstd-compressed WARC" in unsupported_compression("x.WARC.ZST")
    assert [unsupported_compression(name) for name in ("x.warc", "x.warc.gz", "notes.txt.bz2")] == [None] * 3


@pytest.mark.parametrize("compress, compression, line", [
    (bz2.compress, "a bzip2", "mv crawl/CC-1.warc.gz crawl/CC-1.warc.bz2 && bzcat crawl/CC-1.warc.bz2 | gzip"),
    (lzma.compress, "an xz", "mv crawl/CC-1.warc.gz crawl/CC-1.warc.xz && xzcat crawl/CC-1.warc.xz | gzip"),
    (zstd, "a zstd", "mv crawl/CC-1.warc.gz crawl/CC-1.warc.zst && zstdcat crawl/CC-1.warc.zst | gzip"),
], ids=["bzip2", "xz", "zstd"])
def test_a_warc_compressed_otherwise_is_known_by_its_bytes_whatever_its_name(compress, compression, line):
    """It was "not a WARC file: a bzip2 file" (a damaged file, as far as anyone could tell)."""
    data = compress(gzip.decompress(SAMPLE.read_bytes()))
    warc = WarcFile(io.BytesIO(data), name="crawl/CC-1.warc.gz")
    assert list(warc) == [] and warc.problem == UNSUPPORTED_COMPRESSION
    assert warc.problem_detail == unsupported_compression("crawl/CC-1.warc.gz", data[:4096]) == (
        f"{compression}-compressed WARC (its bytes say so, not its name), which plexity does not read "
        f"(it reads .warc and .warc.gz): convert it with `{line} > crawl/CC-1.warc.gz`")
    # named .warc, the same line (the file renamed first: both commands would take it again)
    assert f"`{line.replace('CC-1.warc.gz', 'CC-1.warc')} > crawl/CC-1.warc.gz`" in unsupported_compression(
        "crawl/CC-1.warc", data[:4096])
    assert unsupported_compression("crawl/CC-1.warc.gz", SAMPLE.read_bytes()[:4096]) is None


# (what a crawl names its files, and what may hide under such a name)
AS_NAMED = [("sample.warc.bz2", bz2.compress), ("sample.warc", bz2.compress), ("sample.warc.gz", lzma.compress)]


@pytest.mark.parametrize("name, compress", AS_NAMED, ids=[name for name, _ in AS_NAMED])
def test_plexity_clean_counts_a_bzip2_warc_as_not_read_and_says_how_to_convert_it(tmp_path, name, compress):
    path = bzip2_warc(tmp_path / "in", name, compress)
    shutil.copy(SAMPLE, tmp_path / "in" / "other.warc.gz")
    result = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"), "-q")
    assert result.returncode == 0, result.stderr  # (the other file was cleaned)
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (stats["files"], stats["files_skipped"], stats["skip_reasons"]) == (1, 1, {"unsupported_compression": 1})
    assert stats["skipped_file_details"] == [f"{path}: {why_not_read(path)}"]
    assert "`" in why_not_read(path) and not stats["damaged_files"]
    assert not (tmp_path / "out" / name).exists()

    alone = run_plexity("clean", str(path), "--output-dir", str(tmp_path / "alone"), "-q")
    assert alone.returncode == 1
    assert f"plexity clean: error: no input could be read: {path}: {why_not_read(path)}" in alone.stderr


@pytest.mark.parametrize("name", ["sample.warc.bz2", "sample.warc.gz"])
def test_plexity_run_says_the_same_and_the_conversion_it_gives_makes_the_file_readable(tmp_path, name):
    path = bzip2_warc(tmp_path / "in", name)
    alone = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "alone"), "--workers", "1")
    assert alone.returncode == 1  # (not "damaged", not "not a WARC")
    line = unsupported_compression(name, path.read_bytes()[:4096])
    assert f"plexity run: error: no input could be read: {name}: {line}" in alone.stderr

    shutil.copy(SAMPLE, tmp_path / "in" / "other.warc.gz")
    run = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "run"), "--workers", "1")
    assert run.returncode == 0, run.stderr
    assert "files not read: 1 (unsupported_compression 1)" in run.stdout
    reader, _, _ = run_step_stats(tmp_path / "run", "learned")
    assert (reader["input_files"], reader["unsupported_compression"]) == (2, 1) and "corrupt_files" not in reader

    subprocess.run(["bash", "-c", line.split("`")[1]], cwd=tmp_path / "in", check=True)
    again = run_plexity("clean", str(tmp_path / "in" / "sample.warc.gz"), "--output-dir", str(tmp_path / "again"),
                        "-q")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "plexity-stats.json").read_text())["documents"] == 12


MISNAMED = [("sample.warc.bz2", lambda data: data, "gzip", "sample.warc.gz"),
            ("sample.warc.xz", gzip.decompress, "not compressed", "sample.warc"),
            ("sample.warc.zst", lambda data: bz2.compress(gzip.decompress(data)), "", "sample.warc.bz2")]


@pytest.mark.parametrize("name, bytes_of, what, renamed", MISNAMED, ids=["gzip-as-bz2", "plain-as-xz", "bzip2-as-zst"])
def test_a_warc_named_for_a_compression_its_bytes_are_not_is_judged_by_its_bytes(tmp_path, name, bytes_of, what,
                                                                                 renamed):
    """Before, its name alone was judged: a gzip WARC named .warc.bz2 was "a bzip2-compressed WARC", and the line to
    convert it (``bzcat sample.warc.bz2 | gzip > sample.warc.gz``) failed, leaving an empty sample.warc.gz."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / name
    path.write_bytes(bytes_of(SAMPLE.read_bytes()))
    line = why_not_read(path)
    if what:
        assert line == (f"a WARC named {name[len('sample.warc'):]} whose bytes are {what} (its bytes say so, not its "
                        f"name): name it for what it is, `mv {path} {folder / renamed}`, and plexity reads it")
    else:
        assert line.startswith("a bzip2-compressed WARC (its bytes say so, not its name)")
    head = path.read_bytes()[:4096]
    for command, shown in (("clean", str(path)), ("run", name)):  # (run names the files of its folder)
        alone = run_plexity(command, str(path if command == "clean" else folder), "--output-dir",
                            str(tmp_path / command), *(("-q",) if command == "clean" else ("--workers", "1")))
        assert alone.returncode == 1
        why = unsupported_compression(shown, head)
        assert f"plexity {command}: error: no input could be read: {shown}: {why}" in alone.stderr
    subprocess.run(["bash", "-c", line.split("`")[1]], check=True)
    converted = folder / ("sample.warc.gz" if not what else renamed)
    again = run_plexity("clean", str(converted), "--output-dir", str(tmp_path / "again"), "-q")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "plexity-stats.json").read_text())["documents"] == 12
