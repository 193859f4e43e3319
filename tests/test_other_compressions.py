"""A WARC compressed with bzip2 (``.warc.bz2``; also ``.warc.xz``, ``.warc.zst``) is not read: it is one
stream, with no record boundaries to resume at after damage, and crawlers write ``.warc.gz``.  Both
commands say the same thing of it: a counted skip (``unsupported_compression``) naming the file, why,
and the one line that converts it; what that line writes is then read as any ``.warc.gz``."""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
import subprocess

from helpers import SAMPLE, run_plexity, run_step_stats
from plexity_plugins.io.inputs import unsupported_compression


def bzip2_warc(folder):
    """The sample WARC as a crawl archived with bzip2 would hold it: `folder`/sample.warc.bz2."""
    folder.mkdir(exist_ok=True)
    path = folder / "sample.warc.bz2"
    path.write_bytes(bz2.compress(gzip.decompress(SAMPLE.read_bytes())))
    return path


def test_the_message_names_the_compression_and_the_conversion():
    assert unsupported_compression("crawl/CC-1.warc.bz2") == (
        "a bzip2-compressed WARC, which plexity does not read (it reads .warc and .warc.gz): "
        "convert it with `bzcat crawl/CC-1.warc.bz2 | gzip > crawl/CC-1.warc.gz`")
    assert "`xzcat 'my crawl/x.warc.wet.xz' | gzip > 'my crawl/x.warc.wet.gz'`" in unsupported_compression(
        "my crawl/x.warc.wet.xz")
    assert "a zstd-compressed WARC" in unsupported_compression("x.WARC.ZST")
    assert [unsupported_compression(name) for name in ("x.warc", "x.warc.gz", "notes.txt.bz2")] == [None] * 3


def test_plexity_clean_counts_a_bzip2_warc_as_not_read_and_says_how_to_convert_it(tmp_path):
    path = bzip2_warc(tmp_path / "in")
    shutil.copy(SAMPLE, tmp_path / "in" / "other.warc.gz")
    result = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"), "-q")
    assert result.returncode == 0, result.stderr  # (the other file was cleaned)
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert (stats["files"], stats["files_skipped"], stats["skip_reasons"]) == (1, 1, {"unsupported_compression": 1})
    assert stats["skipped_file_details"] == [f"{path}: {unsupported_compression(str(path))}"]
    assert not (tmp_path / "out" / "sample.warc.bz2").exists()

    alone = run_plexity("clean", str(path), "--output-dir", str(tmp_path / "alone"), "-q")
    assert alone.returncode == 1
    assert f"plexity clean: error: no input could be read: {path}: {unsupported_compression(str(path))}" \
           in alone.stderr


def test_plexity_run_says_the_same_and_the_conversion_it_gives_makes_the_file_readable(tmp_path):
    path = bzip2_warc(tmp_path / "in")
    alone = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "alone"), "--workers", "1")
    assert alone.returncode == 1  # (not "damaged", not "not a WARC")
    assert f"plexity run: error: no input could be read: sample.warc.bz2: " \
           f"{unsupported_compression('sample.warc.bz2')}" in alone.stderr

    shutil.copy(SAMPLE, tmp_path / "in" / "other.warc.gz")
    run = run_plexity("run", str(tmp_path / "in"), "--output-dir", str(tmp_path / "run"), "--workers", "1")
    assert run.returncode == 0, run.stderr
    assert "files not read: 1 {'unsupported_compression': 1}" in run.stdout
    reader, _, _ = run_step_stats(tmp_path / "run", "learned")
    assert (reader["input_files"], reader["unsupported_compression"]) == (2, 1) and "corrupt_files" not in reader

    command = unsupported_compression("sample.warc.bz2").split("`")[1]
    subprocess.run(["bash", "-c", command], cwd=tmp_path / "in", check=True)
    path.unlink()
    again = run_plexity("clean", str(tmp_path / "in" / "sample.warc.gz"), "--output-dir", str(tmp_path / "again"),
                        "-q")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "plexity-stats.json").read_text())["documents"] == 12
