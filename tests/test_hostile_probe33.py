"""Hostile-input probe 33: kinds of bad input the earlier probes did not try, each through the front
ends it reaches.

A Document whose text is not a page's str or bytes, given to an extractor step (a JSONL dataset's row whose
``text`` is a list of paragraphs, a number, ``null``): `PerplexitySentenceFilter` drops such a document and counts
it (``dropped_input_not_text``), but the extractor steps called ``str.isspace`` on it first.  A list or a number
stopped the task (AttributeError: 'list' object has no attribute 'isspace'), every other document of its file lost
with it, on every re-run; ``None`` and a ``bytearray`` were each an extractor's error (``clean_error``: "'NoneType'
object has no attribute 'isascii'", "segment_html() takes a str").  Now such a document is dropped and counted as
the filter counts it (``dropped_input_not_text``, one warning; ``None`` as an empty text, ``dropped_empty_input``),
and a ``bytearray`` or ``memoryview`` is read as the bytes it holds.

A Document's URL, id or date holding a line break, given to `WarcResponseWriter` (a JSONL dataset's metadata):
the writer put the value into the record's WARC headers as it was, so each line after the break became a header
of the record (``WARC-Type: revisit``, ``X-Evil: 1``), and a blank line in it ended the headers early: the record
after it in the file was read back as no record (3 of 4 documents read, the file written without a warning).  A
date given as a number (seconds since 1970, as datasets keep a timestamp) stopped the task ("sequence item 1:
expected str instance, int found").  Now a URL is written without its tabs and line breaks (as a browser's URL
parser reads it), another header value with each run of line breaks a space, a date in seconds (or a datetime) as
the ISO date a WARC-Date is (`io.warc_writer.header_value`, `target_uri`, `warc_date`); `plexity clean`'s cleaned
WARCs are written by the same functions.

A WARC whose last gigabyte is NULs (a crawler's preallocated file, the zero-filled tail a crash leaves): past the
damage, looking for the next record tried a regular expression's lookahead at every offset, ~25 ms a MB, so 1 GB of
NULs took 13 to 20 s of a core, the .warc and the .warc.gz alike (256 MiB: 13.8 s on the loaded machine).  Now each
start's pattern is searched for alone (`io.warc_resync._record_starts`, the same offsets): 2.2 to 2.8 s a GB.

An uncompressed WARC whose records' Content-Lengths run past the end of the file (a writer's bug, or a hostile
file): each such record read the rest of the file before reading resynchronised from its start, so the file was
read once a record, the square of its size (1,000 records of 3 kB, 2.9 MB: 2.4 s; 4,000: 21 s; a 50 MB file:
minutes).  Now such a record ends where the next record starts, found before its block is read
(`WarcFile._bound_past_the_end`): ``truncated`` as before, its Content-Length named wrong; 4,000 records 1.35 s.
A .warc.gz of records whose Content-Lengths are all too short (a writer counting characters, not bytes): each
damage was appended to the file's ``problem_detail``, a string copied whole at each damage (20,000 records: 3 MB,
written whole to the log's warning and the stats' damaged_file_details), and each resynchronisation read a 1 MiB
block for a record a few hundred bytes on: 46.7 s.  Now the detail names the first `MAX_PROBLEM_NOTES` (10)
damages, then how many more and the last, and the blocks read grow from 4 kB: 4.7 s.  The last line of `plexity
clean` named every damaged file (2,000 cut .warc.gz files: a line of 118 kB, even with -q); now it names three and
counts the rest, as it does the files it could not read (`RunStats.damaged_files_named`).

A folder nested 1,500 levels deep (a crawler trap, /a/a/a/..., as wget mirrors it): Python 3.11's os.walk,
Path.rglob and Path.mkdir(parents=True) recurse once a level, and `plexity clean` stopped with a RecursionError
traceback, nothing cleaned; past that, each folder's and each file's Path.resolve() lstat-ed every folder above it,
the square of the depth (43 s for one page at the bottom, 60 s for a page at every level).  Now the folders are
walked and made without recursion (`cleaning.files.walk`, `make_folders`), the output folder told by its inode, a
walked file's path resolved from its root's: 1.2 s and 16.5 s (the cleaning of 1,500 pages).  A ``**`` glob of such
a tree (Python's glob recurses too) is refused, naming the folder to give instead.  (`plexity run` stops at once
with a clear error, "cannot list the input ...: RecursionError", from fsspec's listing: not changed.)  `plexity
train --corpus text` of such a folder stopped with the same traceback (Path.rglob): its files are found by the walk.

WARC-Target-URIs with spaces (crawlers write them unescaped): warcio percent-encodes them and logged a WARNING for
each such record, the URI quoted as it came: 1,000 lines on stderr for 1,000 records in `plexity clean` and `plexity
run`, and a URI's ESC or BEL written to the terminal as it was.  Now our loader encodes the URI as warcio does,
without the line (`io.warc_iterator._record_loader`).

A file whose name is not UTF-8 (wget saves caf%E9.html, a Latin-1 URL, as the bytes caf\xe9.html), skipped or
damaged: Python holds its name as a str of lone surrogates, which no UTF-8 file takes, and `plexity clean` ended
"error: 'utf-8' codec can't encode characters ...: surrogates not allowed" (exit 2), its stats left "completed":
false without a count; with a strict standard output (PYTHONIOENCODING=utf-8) its last line, naming the file, ended
it so too.  Now the stats escape such a name (``\\udce9``, as the dropped log does: it reads back as the same
str) and a strict standard output prints it escaped, as standard error does (`cli._names_printable`).

A .warc and a .warc.gz joined by cat (or a writer that wrote some records uncompressed): once warcio's reader has
read a record uncompressed it reads the rest of the file so, and a gzip member after it was no record to it: every
record from there on was lost, uncounted ("unreadable after record 1").  Now reading goes on at such a member
(`WarcFile._gzip_after_plain`), the file not damaged.
"""

from __future__ import annotations

import io
import json
import time

import pytest
from datetime import datetime, timezone

from datatrove.data import Document
from warcio.archiveiterator import ArchiveIterator

from warc_corpus import ARTICLE, page

HTML = page(ARTICLE)


# -- a Document whose text is no page, given to an extractor step ----------------------------------------------------

def test_an_extractor_step_drops_and_counts_a_document_whose_text_is_not_a_pages():
    from plexity_plugins.datatrove import LearnedExtractor

    docs = [Document(text=HTML, id="first", metadata={}),
            Document(text=["The council met.", "The library opened."], id="paragraphs", metadata={}),
            Document(text=7, id="number", metadata={}),
            Document(text=None, id="null", metadata={}),
            Document(text=bytearray(HTML.encode()), id="bytearray", metadata={}),
            Document(text=memoryview(HTML.encode()), id="memoryview", metadata={}),
            Document(text=HTML, id="last", metadata={})]
    step = LearnedExtractor()
    # (before: AttributeError: 'list' object has no attribute 'isspace', the task stopped at the second document)
    out = list(step.run(iter(docs)))
    assert [doc.id for doc in out] == ["first", "bytearray", "memoryview", "last"]
    assert all(doc.text.startswith("The council approved the budget") for doc in out)
    stats = {name: value.total for name, value in step.stats.stats.items()}
    assert stats["total"] == 7 and stats["forwarded"] == 4 and stats["extracted"] == 4
    # (before: None and the bytearray each a clean_error)
    assert stats["dropped"] == 3 and stats["dropped_input_not_text"] == 2 and stats["dropped_empty_input"] == 1
    assert "clean_error" not in stats


def test_a_pipeline_of_a_jsonl_dataset_with_lists_for_texts_runs_to_its_end(tmp_path):
    """The datatrove pipeline a user builds: JsonlReader -> LearnedExtractor -> JsonlWriter, a row's text a list
    (datatrove's JsonlReader passes a list on; a number or null it stops on itself)."""
    import gzip

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LearnedExtractor

    (tmp_path / "in").mkdir()
    rows = [{"id": "a", "text": HTML}, {"id": "b", "text": ["para one", "para two"]},
            {"id": "c", "text": ["<p>para three</p>"]}, {"id": "d", "text": HTML}]
    (tmp_path / "in" / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    executor = LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "in")), LearnedExtractor(),
                                               JsonlWriter(str(tmp_path / "out"))],
                                     logging_dir=str(tmp_path / "logs"), tasks=1, workers=1)
    executor.run()  # (before: the task failed, AttributeError; nothing written)
    written = [json.loads(line) for path in sorted((tmp_path / "out").glob("*.jsonl.gz"))
               for line in gzip.open(path, "rt")]
    assert [row["id"] for row in written] == ["a", "d"]


# -- a Document's metadata holding a line break, written as a WARC record ---------------------------------------------

def _records(data: bytes) -> list[tuple[object, bytes]]:
    """The records of a WARC file but its warcinfo, each with its payload."""
    return [(record, record.content_stream().read()) for record in ArchiveIterator(io.BytesIO(data))
            if record.rec_type != "warcinfo"]


def _written(tmp_path, docs: list[Document]) -> bytes:
    from plexity_plugins.datatrove import WarcResponseWriter

    writer = WarcResponseWriter(str(tmp_path / "out"), output_filename="out.warc")
    with writer:
        for doc in docs:
            writer.write(doc)
    return (tmp_path / "out" / "out.warc").read_bytes()


def test_a_line_break_in_a_documents_url_id_or_date_writes_no_header_and_loses_no_record(tmp_path):
    docs = [Document(text="First text.", id="a", metadata={"url": "http://t/a"}),
            Document(text="Second text.", id="b", metadata={"url": "http://t/b\r\nWARC-Type: revisit\r\nX-Evil: 1",
                                                             "date": "2024-01-02T03:04:05Z\r\nX-Date-Evil: 2"}),
            Document(text="Third text.", id="http://t/c\r\n\r\nWARC/1.0\r\nWARC-Type: response", metadata={}),
            Document(text="Fourth text.", id="d", metadata={"url": "http://t/d\n"})]
    data = _written(tmp_path, docs)
    records, payloads = zip(*_records(data))
    # (before: three records, the fourth read as none, the second a revisit with an X-Evil header)
    assert [record.rec_type for record in records] == ["response"] * 4
    assert payloads == (b"First text.", b"Second text.", b"Third text.", b"Fourth text.")
    uris = [record.rec_headers.get_header("WARC-Target-URI") for record in records]
    assert uris[0] == "http://t/a" and uris[3] == "http://t/d"
    assert uris[1].startswith("http://t/bWARC-Type:") and uris[2].startswith("http://t/cWARC/1.0WARC-Type:")
    for record in records:
        assert record.rec_headers.get_header("X-Evil") is None and record.rec_headers.get_header("X-Date-Evil") is None
    assert records[1].rec_headers.get_header("WARC-Date") == "2024-01-02T03:04:05Z X-Date-Evil: 2"


def test_a_date_in_seconds_or_a_datetime_is_written_as_a_warc_date(tmp_path):
    moment = datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    docs = [Document(text="Seconds.", id="s", metadata={"url": "http://t/s", "date": 1_700_000_000}),
            Document(text="Float.", id="f", metadata={"url": "http://t/f", "date": 1_700_000_000.5}),
            Document(text="Datetime.", id="d", metadata={"url": "http://t/d", "date": moment}),
            Document(text="Bytes.", id="b", metadata={"url": b"http://t/b", "date": "2023-11-14T22:13:20Z"})]
    data = _written(tmp_path, docs)  # (before: TypeError, "sequence item 1: expected str instance, int found")
    records = [record for record, _ in _records(data)]
    assert [record.rec_headers.get_header("WARC-Date") for record in records] == ["2023-11-14T22:13:20Z"] * 4
    assert [record.rec_headers.get_header("WARC-Target-URI") for record in records] == [
        "http://t/s", "http://t/f", "http://t/d", "http://t/b"]


def test_the_header_values_of_an_ordinary_record_are_written_as_they_are():
    from plexity_plugins.io.warc_writer import header_value, target_uri, warc_date

    assert target_uri("https://example.com/a?b=c#d") == "https://example.com/a?b=c#d"
    assert header_value("<urn:uuid:7b3f1b4e-0000-4000-8000-000000000000>") == \
        "<urn:uuid:7b3f1b4e-0000-4000-8000-000000000000>"
    assert warc_date("2024-05-06T07:08:09Z") == "2024-05-06T07:08:09Z"
    assert warc_date(None).endswith("Z") and warc_date("").endswith("Z")


# -- a WARC whose tail is NULs ---------------------------------------------------------------------------------------

def test_a_warc_whose_last_gigabytes_are_nuls_is_read_past_them_at_the_speed_of_reading(tmp_path):
    """A crawler's preallocated WARC, or one a crash left with a zero-filled tail (sparse here: no disk used):
    looking for the next record past damage tried a regular expression's lookahead at every offset, ~25 ms a MB
    (1 GB of NULs: 13 to 20 s of a core to read past it; now 2.2 to 2.8 s, the reading of the bytes)."""
    import gzip

    from plexity_plugins.io.inputs import WarcFile
    from warc_corpus import record_bytes

    good = [record_bytes(f"http://t/good-{i}", page(ARTICLE, f"Good {i}.").encode()) for i in range(2)]
    nuls = 256 * 2**20
    for name, pack in (("tail.warc", lambda r: r), ("tail.warc.gz", gzip.compress)):
        path = tmp_path / name
        with open(path, "wb") as f:
            f.write(pack(good[0]))
            f.seek(nuls, 1)
            f.write(pack(good[1]))
        # the bytes read once first, so that the kernel's making of a sparse file's zero pages (0.5 to 1.9 s of this
        # process's CPU here, more on a loaded machine: 2.03 s once in CI) is not counted as the reader's work
        with open(path, "rb") as f:
            while f.read(2**20):
                pass
        started = time.process_time()  # (the work of this process: not the other processes' on the machine)
        with open(path, "rb") as f:
            warc = WarcFile(f, name=name)
            outcomes = [(item.uri, item.skip) for item in warc]
        seconds = time.process_time() - started
        path.unlink()
        assert outcomes == [("http://t/good-0", None), ("http://t/good-1", None)], name
        assert warc.problem == "corrupt" and warc.bytes_skipped >= nuls - 2**20, name
        assert seconds < 2.0, f"{name}: {seconds:.1f} s of CPU"  # (before: 4.9 s, ~25 ms a MB; after: 0.12 s)


def test_the_record_starts_looked_at_are_those_of_the_lookahead():
    """Every offset the lookahead found is found, in order, none more: overlapping starts too."""
    import random
    import re

    from plexity_plugins.io.inputs import _GZIP_MEMBER, _WARC_LINE, _record_starts

    lookahead = {True: re.compile(b"(?=" + _GZIP_MEMBER.pattern + b")"),
                 False: re.compile(b"(?=" + _WARC_LINE.pattern + b")"),
                 None: re.compile(b"(?=" + _GZIP_MEMBER.pattern + b"|" + _WARC_LINE.pattern + b")")}
    pieces = [b"\x1f", b"\x8b", b"\x08", b"\x00", b"\x1f\x8b\x08", b"WARC/1.", b"0", b"\r", b"\n", b"x",
              b"WARC/1.0\r\n"]
    rng = random.Random(33)
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        for gzipped in (True, False, None):
            assert list(_record_starts(data, gzipped)) == [m.start() for m in lookahead[gzipped].finditer(data)], (
                data, gzipped)


# -- Content-Lengths that run past the end of the file ---------------------------------------------------------------

class _CountedReads(io.BytesIO):
    """A file that counts the bytes read from it: the work of reading it, without a clock."""

    read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def _liars(count: int, content_length: str, gzipped: bool = False) -> bytes:
    import gzip

    from warc_corpus import record_bytes

    records = [record_bytes(f"http://t/r{i}", page(ARTICLE, f"Record {i}.").encode(), content_length=content_length)
               for i in range(count)]
    return b"".join(map(gzip.compress, records)) if gzipped else b"".join(records)


def test_records_whose_content_lengths_run_past_the_end_of_the_file_are_read_in_linear_time():
    """Each record of an uncompressed WARC whose Content-Length runs past the end of the file read the rest of the
    file before reading resynchronised from its start: the file was read once for each record, the square of its
    size (1,000 records of 3 kB, 2.9 MB: 2.4 s; 4,000: 22 s).  Now such a record ends where the next record starts
    (`WarcFile._bound_past_the_end`): counted ``truncated`` as before, the file as much work as its bytes."""
    from plexity_plugins.io.inputs import WarcFile

    work = {}
    for count in (300, 600):
        stream = _CountedReads(_liars(count, "1000000000000"))
        warc = WarcFile(stream, name="liars.warc")
        outcomes = [(item.uri, item.skip, item.detail) for item in warc]
        assert [uri for uri, _, _ in outcomes] == [f"http://t/r{i}" for i in range(count)]
        assert {skip for _, skip, _ in outcomes} == {"truncated"}
        assert all("past the end of the file, over the next record" in detail for _, _, detail in outcomes[:-1])
        assert outcomes[-1][2].endswith("bytes short of its Content-Length")  # (the last: no record after it)
        assert warc.problem == "corrupt" and warc.records_recovered == count - 1
        work[count] = stream.read_bytes
    # twice the records, twice the bytes read (before: four times, 150 and 300 times the file's bytes)
    assert work[600] < 2.2 * work[300], work


def test_a_last_record_cut_short_is_still_read_to_the_end_of_the_file():
    from plexity_plugins.io.inputs import WarcFile

    from warc_corpus import record_bytes

    good = record_bytes("http://t/good", page(ARTICLE).encode())
    cut = record_bytes("http://t/cut", page(ARTICLE, "Cut.").encode())[:-300]
    warc = WarcFile(io.BytesIO(good + cut), name="cut.warc")
    outcomes = [(item.uri, item.skip) for item in warc]
    assert outcomes == [("http://t/good", None), ("http://t/cut", "truncated")]
    assert warc.problem == "truncated"


def test_a_file_of_many_damaged_records_names_the_first_ten_and_counts_the_rest():
    """A .warc.gz whose records' Content-Lengths are all too short (a writer that counts characters, not bytes):
    each damage was appended to the file's problem_detail, copied whole each time (20,000 records: a 3 MB detail,
    12 of the 39 s the file took; now 4.7 s), and written whole to the log's warning and the stats."""
    from plexity_plugins.io.inputs import MAX_PROBLEM_NOTES, WarcFile

    warc = WarcFile(io.BytesIO(_liars(200, "12", gzipped=True)), name="short.warc.gz")
    assert len([item for item in warc]) == 200 and warc.problem == "corrupt"
    assert MAX_PROBLEM_NOTES == 10
    assert warc.problem_detail.startswith("record 1: ") and warc.problem_detail.count("; record ") == 9  # (ten)
    assert "; and 190 more (the last: record 200: its Content-Length is wrong" in warc.problem_detail
    assert len(warc.problem_detail) < 2500  # (before: 31,000 characters)


def test_plexity_cleans_summary_names_the_first_damaged_files_and_counts_the_rest():
    """The last line of plexity clean named every damaged file: 2,000 cut .warc.gz files made it 118 kB (and a
    file of 20,000 damaged records alone 3 MB).  Now it names three, as it does the files it could not read, and
    plexity-stats.json lists them all."""
    from plexity_plugins.cleaning.stats import RunStats

    stats = RunStats(model="en-default", threshold=100.0)
    for i in range(2000):
        stats.damaged_file("truncated", f"/crawl/f{i:04d}.warc.gz: truncated after record 1")
    line = stats.summary()
    assert ("damaged: /crawl/f0000.warc.gz: truncated after record 1; /crawl/f0001.warc.gz: truncated after record 1; "
            "/crawl/f0002.warc.gz: truncated after record 1; and 1997 more (plexity-stats.json lists them))") in line
    assert len(line) < 800  # (before: 102,000 characters)
    assert len(stats.to_dict()["damaged_file_details"]) == 2000


def test_a_plain_warc_none_of_whose_records_is_whole_says_how_much_of_it_was_not_read():
    """An uncompressed WARC whose Content-Lengths are all too short: past the first, no record is whole, so reading
    stops there, and the file was named corrupt for its first record alone ("record 1: its Content-Length is
    wrong"), 20,000 records of 8.5 MB unread and unnamed.  Now the detail says how much of the file was not read."""
    from plexity_plugins.io.inputs import WarcFile

    data = _liars(50, "12")
    warc = WarcFile(io.BytesIO(data), name="short.warc")
    assert len(list(warc)) == 1 and warc.problem == "corrupt"
    assert warc.problem_detail.endswith(f"; no whole record after it: the file's last {len(data):,} bytes, from its "
                                        f"start, read no further")


# -- a folder nested 1,500 levels deep -------------------------------------------------------------------------------

def _deep_folder(root, levels: int = 1500):
    """`root`/in/d/d/.../d (`levels` folders) holding a page at its bottom (a crawler trap, /a/a/a/..., as wget
    mirrors it); the page's folder."""
    import os

    folder = root / "in"
    folder.mkdir()
    here = os.getcwd()
    os.chdir(folder)  # (each mkdir relative: no path of thousands of characters made at every level)
    try:
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        with open("page.html", "w") as f:
            f.write(HTML)
        return os.getcwd()
    finally:
        os.chdir(here)


def _remove_deep(folder) -> None:
    """`folder` removed without recursion: pytest's own removal of old tmp_path folders (shutil.rmtree) recurses once
    a level, and a tree left 1,500 levels deep failed it (RecursionError) in every later session."""
    import os

    stack = [(str(folder), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            os.rmdir(path)
        elif os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
        else:
            stack.append((path, True))
            with os.scandir(path) as entries:
                stack.extend((entry.path, False) for entry in entries)


@pytest.fixture
def deep_tmp_path(tmp_path):
    yield tmp_path
    for name in ("in", "out", "out2"):
        if (tmp_path / name).exists():
            _remove_deep(tmp_path / name)


def test_plexity_clean_reads_a_folder_nested_1500_levels_deep(deep_tmp_path):
    """Python 3.11's os.walk, Path.rglob and Path.mkdir(parents=True) recurse once a level: `plexity clean` of a
    folder 1,500 levels deep stopped with a RecursionError traceback, nothing cleaned (and, given its output folder
    once more, again in the look at what an earlier run left there).  Now the folders are walked and made without
    recursion (`cleaning.files.walk`, `make_folders`), in about a second (each folder's resolve(): 43 s); a ``**``
    glob of them, which Python's glob reads recursively, is refused with a message naming the folder to give
    instead."""
    from helpers import run_plexity

    tmp_path = deep_tmp_path

    bottom = _deep_folder(tmp_path)
    for _ in range(2):  # (the second: into the output folder the first run filled)
        result = run_plexity("clean", "-q", "-o", str(tmp_path / "out"), str(tmp_path / "in"), timeout=120)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
        stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
        assert stats["files"] == 1 and stats["documents"] == 1
    relative = bottom[len(str(tmp_path / "in")) + 1:]
    assert (tmp_path / "out" / relative / "page.html.txt").read_text().startswith("The council approved the budget")
    result = run_plexity("clean", "-o", str(tmp_path / "out2"), str(tmp_path / "in" / "**" / "*.html"), timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "its folders are nested too deeply for a glob: give the folder itself" in result.stderr


def test_the_walk_gives_os_walks_folders_and_files_in_its_order(tmp_path):
    import os

    from plexity_plugins.io.folders import walk

    for name in ("b/c/d", "b/a", "a", "c/e"):
        (tmp_path / name).mkdir(parents=True)
    for name in ("x.html", "b/y.txt", "b/c/z.warc", "b/c/d/w.html", "c/e/v.txt", "a/u"):
        (tmp_path / name).write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "b")  # (a folder's link: named among the folders, not walked)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "b" / "a").chmod(0)  # (a folder that cannot be listed: passed over, as os.walk does; not as root)

    def sorted_walk(walker):
        found = []
        for dirpath, dirnames, filenames in walker:
            dirnames[:] = sorted(dirnames)
            found.append((dirpath, list(dirnames), sorted(filenames)))
        return found

    try:
        assert sorted_walk(walk(tmp_path)) == sorted_walk(os.walk(tmp_path))
    finally:
        (tmp_path / "b" / "a").chmod(0o755)


# -- URIs with spaces ------------------------------------------------------------------------------------------------

def test_uris_with_spaces_are_percent_encoded_without_a_warning_a_record(tmp_path, caplog):
    """warcio percent-encodes the spaces of a WARC-Target-URI (crawlers write them unescaped) and logged a WARNING
    for each such record, the URI quoted as it came: 1,000 lines on stderr for 1,000 records, in `plexity clean` and
    `plexity run` alike, and a URI's ESC or BEL sent as it was to the terminal.  Now the URI is encoded as warcio
    does, without the line."""
    import gzip
    import logging

    from helpers import run_plexity
    from plexity_plugins.io.inputs import WarcFile
    from warc_corpus import record_bytes

    records = []
    for i in range(50):
        uri = f"http://t/a page {i}.html" if i != 7 else "<http://t/wget 1.19\x1b]0;owned\x07.html>"
        record = record_bytes(f"http://t/p{i}", page(ARTICLE, f"Record {i}.").encode())
        records.append(record.replace(f"WARC-Target-URI: http://t/p{i}".encode(), f"WARC-Target-URI: {uri}".encode()))
    data = b"".join(map(gzip.compress, records))
    with caplog.at_level(logging.WARNING):
        warc = WarcFile(io.BytesIO(data), name="spaces.warc.gz")
        uris = [item.uri for item in warc if item.skip is None]
    assert uris[:2] == ["http://t/a%20page%200.html", "http://t/a%20page%201.html"] and len(uris) == 50
    assert uris[7] == "http://t/wget%201.19\x1b]0;owned\x07.html"  # (as warcio makes it: <> off, spaces encoded)
    assert not [r for r in caplog.records if r.name.startswith("warcio")]  # (before: 50 warnings)

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "spaces.warc.gz").write_bytes(data)
    result = run_plexity("clean", "-q", "-o", str(tmp_path / "out"), str(tmp_path / "in"), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Replacing spaces" not in result.stderr and "\x1b" not in result.stderr  # (before: 50 lines, an ESC)


# -- a file's name that is not UTF-8 ---------------------------------------------------------------------------------

def test_plexity_clean_writes_its_stats_when_a_file_it_names_is_not_named_in_utf8(tmp_path):
    """A name that is not UTF-8 (wget saves caf%E9.html, a Latin-1 URL, as the bytes caf\\xe9.html) is a str of lone
    surrogates in Python, which no UTF-8 file takes: a run that named such a file skipped or damaged in its stats
    ended "plexity clean: error: 'utf-8' codec can't encode characters ...: surrogates not allowed" (exit 2), its
    stats left "completed": false with none of its counts; so did its last line, naming the file, with a strict
    standard output (PYTHONIOENCODING=utf-8).  Now the name is written escaped (``\\udce9``) in the stats, as the
    dropped log writes it, reading back as the same str (`os.fsencode` gives the file's bytes), and printed escaped
    by a strict standard output, as standard error prints it."""
    import gzip
    import os

    import subprocess

    from helpers import PLEXITY
    from warc_corpus import record_bytes

    folder = tmp_path / "in"
    folder.mkdir()
    good = gzip.compress(record_bytes("http://t/good", HTML.encode()))
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.warc.gz"), "wb") as f:
        f.write(good + good[:-30])  # (its second record cut: a damaged file)
    with open(os.path.join(os.fsencode(folder), b"r\xe9sum\xe9.html"), "wb") as f:
        f.write(b"%PDF-1.4\n" + bytes(100))  # (a PDF: skipped)
    os.symlink("/nowhere", os.path.join(os.fsencode(folder), b"lien\xe9.html"))  # (unreadable: skipped)
    (folder / "page.html").write_text(HTML)
    # (standard output strict, as PYTHONIOENCODING=utf-8 makes it in many images: its last line names the file)
    result = subprocess.run([*PLEXITY, "clean", "-q", "-o", str(tmp_path / "out"), str(folder)], capture_output=True,
                            timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert result.returncode == 0, result.stderr[-2000:]  # (before: 2, "surrogates not allowed")
    assert b"damaged: " + os.fsencode(folder) + b"/caf\\udce9.warc.gz: truncated after record 1" in result.stdout
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text(encoding="utf-8"))
    assert stats["completed"] is True and stats["damaged_files"] == {"truncated": 1}
    assert stats["damaged_file_details"] == [f"{folder}/caf\udce9.warc.gz: truncated after record 1"]
    assert os.fsencode(stats["damaged_file_details"][0].split(":")[0]).endswith(b"caf\xe9.warc.gz")
    assert stats["skip_reasons"] == {"unreadable_file": 1, "not_html": 1, "truncated": 1}


# -- a WARC of compressed and uncompressed records -------------------------------------------------------------------

def test_gzip_members_after_uncompressed_records_are_read():
    """A .warc and a .warc.gz joined by cat (or a writer that wrote some records uncompressed): once warcio's reader
    has read a record uncompressed it reads the rest of the file so, and the next gzip member was no record to it.
    Every record from there on was lost, uncounted ("unreadable after record 1": a .warc.gz's resynchronisation
    skipped the member it failed at, a .warc's looked for uncompressed records only).  Now reading goes on at such a
    member (`WarcFile._gzip_after_plain`), the file not damaged."""
    import gzip

    from plexity_plugins.io.inputs import WarcFile
    from warc_corpus import record_bytes

    good = [record_bytes(f"http://t/r{i}", page(ARTICLE, f"Record {i}.").encode()) for i in range(6)]
    uris = [f"http://t/r{i}" for i in range(6)]
    shapes = {"plain, then gzip": good[0] + good[1] + b"".join(map(gzip.compress, good[2:])),
              "gzip, plain, gzip": gzip.compress(good[0]) + good[1] + good[2] + b"".join(map(gzip.compress, good[3:])),
              "alternating": b"".join(gzip.compress(r) if i % 2 else r for i, r in enumerate(good))}
    for shape, data in shapes.items():
        for name in ("mixed.warc", "mixed.warc.gz"):
            warc = WarcFile(io.BytesIO(data), name=name)
            # (before: [r0, r1] and "corrupt: unreadable after record 2 (... first line: \x1f\x8b ...)")
            assert [(item.uri, item.skip) for item in warc] == [(uri, None) for uri in uris], (shape, name)
            assert warc.problem is None and warc.bytes_skipped == 0, (shape, name, warc.problem_detail)


def test_plexity_trains_corpus_reader_finds_the_files_of_a_folder_nested_1200_levels_deep(deep_tmp_path):
    """`plexity train --corpus text` of a folder 1,200 levels deep: Path.rglob recursed once a level, and the command
    stopped with a RecursionError traceback.  Now its files are found by the same walk as plexity clean's."""
    from plexity_plugins.training.corpora import TextReader

    bottom = _deep_folder(deep_tmp_path, 1200)
    with open(f"{bottom}/corpus.txt", "w") as f:
        f.write("The library will open in the spring.\n")
    (deep_tmp_path / "in" / "top.txt").write_text("The council approved the budget.\n")
    (deep_tmp_path / "in" / ".hidden.txt").write_text("Left out.\n")
    found = TextReader([deep_tmp_path / "in"]).files()  # (before: RecursionError)
    assert [path.name for path in found] == ["corpus.txt", "top.txt"]
    assert str(found[0]) == f"{bottom}/corpus.txt"


def test_plexity_report_finds_the_stats_of_a_folder_nested_1200_levels_deep(deep_tmp_path):
    """`plexity report` of a folder without stats of its own looks for them below it: Path.rglob recursed once a
    level, a RecursionError traceback for a folder 1,200 levels deep.  Now it walks it."""
    from plexity_plugins.cleaning.report import find_stats

    bottom = _deep_folder(deep_tmp_path, 1200)
    with pytest.raises(FileNotFoundError, match="no plexity-stats.json"):  # (before: RecursionError)
        find_stats(deep_tmp_path / "in")
    with open(f"{bottom}/plexity-stats.json", "w") as f:
        f.write("{}")
    assert str(find_stats(deep_tmp_path / "in")) == f"{bottom}/plexity-stats.json"
