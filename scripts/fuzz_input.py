"""Coverage-guided fuzzing of where crawled bytes enter (atheris; libFuzzer's options on the command line).

    bash scripts/fuzz_input.sh SECONDS .venv/bin/python

(which makes a throwaway venv with atheris, writes the seeds and runs this file under libFuzzer; docs/development.md,
"Fuzzing where crawled bytes enter").  Each input is one byte choosing an entry point, then the bytes:

0. a WARC or ARC file as it is (`WarcFile`, as ``plexity clean`` and ``plexity run``'s reader read one), each record
   then used as they use it: a payload decoded to text (`decode_html_counted`), a record that is no page copied by
   warcio's writer (``plexity clean`` copies them, counting a payload that turns out damaged);
1. the same bytes with each record (a line starting ``WARC/1.``, ``filedesc://`` or an ARC header line) gzipped as
   its own member, as crawlers write a .warc.gz: the fuzzer mutates what is inside the members;
2. an HTTP body: its first line ``Transfer-Encoding|Content-Encoding|cut``, then the body (`dechunk`,
   `decode_content`, as `WarcFile._judge` applies them);
3. a payload and its Content-Type (first line) to text (`decode_html_counted`, `html_text_counted`);
4. sniffing: `binary_kind`, `is_html_type`, `looks_like_html`, `what_file_is`, `looks_like_warc` / `_arc`,
   `unsupported_compression`, `text_binary_kind`;
5. a document file (``plexity clean``'s .html / .txt, gzipped when the second byte is odd: `read_document`).

A finding is an exception other than the named errors each entry point documents, a count that does not add up
(every record read yielded with exactly one outcome: a payload or a skip of RECORD_SKIPS; a file problem of
FILE_PROBLEMS), a payload over the cap, or a `Hang`: more than `SECONDS_PER_64KB` of CPU for an input under 64 KB
(CPU time, not wall time: the machine is shared).  tests/test_input_fuzz42.py replays tests/fuzz_corpus/input/
through `TestOneInput` without atheris.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import io
import os
import re
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path

try:
    import atheris
except ImportError:  # (tests/test_input_fuzz42.py replays the kept inputs with TestOneInput, without it)
    atheris = None

with atheris.instrument_imports(include=["plexity_plugins.io", "warcio"]) if atheris else contextlib.nullcontext():
    from plexity_plugins.errors import TooLarge, Undecodable
    from plexity_plugins.io import input_files, payload_sniffing
    from plexity_plugins.io.decoding import decode_html_counted, html_text_counted
    from plexity_plugins.io.document_files import read_document
    from plexity_plugins.io.http_codings import decode_content, dechunk
    from plexity_plugins.io.read_limits import Deadline
    from plexity_plugins.io.read_outcomes import FILE_PROBLEMS, NOT_PAGES, RECORD_SKIPS, UNSUPPORTED_COMPRESSION
    from plexity_plugins.io.warc_files import WarcFile
    from warcio.warcwriter import WARCWriter

CAP = 1_000_000  # --max-document-bytes while fuzzing: a page decoded to text costs time in its size
SECONDS_PER_64KB = 1.0


class Hang(AssertionError):
    """An input that took more CPU than its size allows."""


_RECORD_START = re.compile(rb"^(?=WARC/1\.|filedesc://|[a-z]+://\S+ \S+ [0-9]{14} )", re.M)


def pieces(body: bytes) -> list[bytes]:
    """`body` cut where each record starts (a line that starts one)."""
    starts = [m.start() for m in _RECORD_START.finditer(body)]
    bounds = [0] + [s for s in starts if s > 0] + [len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def members(body: bytes) -> bytes:
    """`body` with each record gzipped as its own member."""
    return b"".join(gzip.compress(piece, mtime=0) for piece in pieces(body))


def members_path(body: bytes) -> None:
    """A .warc.gz of one member a record; a member that alone reads as a whole page is never lost among the others
    (whatever damage they hold: reading resumes at the next member)."""
    pages = warc_path(members(body))
    if not body.startswith(b"WARC/1."):  # (an ARC file, or garbage first: no member-for-member promise)
        return
    for piece in pieces(body):
        alone = warc_path(gzip.compress(piece, mtime=0))
        if len(alone) == 1 and alone[0] is not None:
            assert alone[0] in pages, f"a whole record lost: {alone[0][0]!r}"


def warc_path(data: bytes) -> list:
    """The records of a WARC file read as the front ends read them, checked; returns (uri, payload) of each."""
    warc = WarcFile(io.BytesIO(data), CAP, 30.0, name="fuzz.warc.gz")
    records = []
    for record in warc:
        records.append(record)
        assert (record.payload is None) != (record.skip is None), "a record with no outcome, or two"
        assert record.skip is None or record.skip in RECORD_SKIPS, f"an unnamed skip: {record.skip!r}"
        if record.payload is not None:
            assert len(record.payload) <= CAP, "a payload over the cap"
            text, replaced = decode_html_counted(record.payload, record.content_type)
            assert isinstance(text, str) and replaced >= 0
        elif record.skip in NOT_PAGES:  # (plexity clean copies it; a payload damaged as it is copied is counted)
            writer = WARCWriter(io.BytesIO(), gzip=False)
            try:
                writer.write_record(record.record)
            except (EOFError, zlib.error, ValueError):
                pass
        record.short_by(), record.wrong_length(), record.cut_by_crawler, record.record_id, record.date
    assert warc.records == len(records), "records counted that were not yielded, or the reverse"
    assert [r.number for r in records] == list(range(1, len(records) + 1))
    assert 0 <= warc.records_recovered <= warc.records
    assert 0 <= warc.bytes_skipped <= len(data)
    assert warc.problem is None or warc.problem in (*FILE_PROBLEMS, UNSUPPORTED_COMPRESSION), warc.problem
    assert (warc.bytes_skipped > 0 or warc.records_recovered > 0) <= (warc.problem is not None)
    assert (warc.problem is None) == (not warc.problem_detail), "a problem without a detail, or the reverse"
    return [(r.uri, r.payload) if r.payload is not None else None for r in records]


def http_path(data: bytes) -> None:
    line, _, body = data.partition(b"\n")
    transfer, _, rest = line.decode("latin-1").partition("|")
    encoding, _, cut = rest.partition("|")
    deadline = Deadline(30.0).start()
    try:
        if "chunked" in transfer.lower():
            body = dechunk(body, deadline)
        out = decode_content(body, encoding, CAP, deadline, bool(cut))
    except (TooLarge, Undecodable):  # (TooSlow is an Undecodable)
        return
    assert isinstance(out, bytes) and len(out) <= CAP


def text_path(data: bytes) -> None:
    line, _, body = data.partition(b"\n")
    content_type = line.decode("utf-8", "surrogateescape") or None
    text, replaced = decode_html_counted(body, content_type)
    assert isinstance(text, str) and replaced >= 0
    text, replaced = html_text_counted(body[:4096], content_type)
    assert isinstance(text, str) and replaced >= 0


def sniff_path(data: bytes) -> None:
    head = data[:payload_sniffing._SNIFF_BYTES]
    line = data[:80].split(b"\n", 1)[0].decode("latin-1")
    payload_sniffing.binary_kind(head)
    payload_sniffing.is_html_type(line or None, None, head)
    payload_sniffing.is_html_type(None, line or None, head)
    payload_sniffing.looks_like_html(data)
    payload_sniffing.has_markup(data)
    payload_sniffing.text_binary_kind(data.decode("utf-8", "replace"))
    assert isinstance(input_files.what_file_is(head), str)
    input_files.looks_like_warc(head), input_files.looks_like_arc(head)
    input_files.unsupported_compression(line or "f.warc.gz", head)


_DOCUMENTS = Path(tempfile.mkdtemp(prefix="plexity-fuzz-input-"))  # (one page at a time: removed as Python ends)
atexit.register(shutil.rmtree, _DOCUMENTS, ignore_errors=True)


def document_path(data: bytes) -> None:
    if not data:
        return
    path = _DOCUMENTS / ("page.html.gz" if data[0] & 1 else "page.html")
    path.write_bytes(data[1:])
    try:
        text, trailing = read_document(path, CAP)
    except (TooLarge, Undecodable, OSError, EOFError, zlib.error):  # (read_document's named errors)
        return
    assert len(text) <= CAP and trailing >= 0


PATHS = (warc_path, members_path, http_path, text_path, sniff_path, document_path)


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    started = time.process_time()
    PATHS[data[0] % len(PATHS)](data[1:])
    spent = time.process_time() - started
    if len(data) < 65536 and spent > SECONDS_PER_64KB:
        raise Hang(f"{spent:.2f} s of CPU for an input of {len(data):,} bytes (mode {data[0] % len(PATHS)})")


def write_seeds(folder: str) -> None:
    """Seed inputs into `folder`: the tests' WARC corpus (tests/warc_corpus.py), an ARC file, examples/'s
    sample, HTTP bodies in every coding, pages in several charsets; each WARC also as plain records for mode 1."""
    import brotli

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tests"))
    from test_arc_files40 import write_arc
    from warc_corpus import write_corpus

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="plexity-fuzz-seeds-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    write_corpus(scratch)
    write_arc(scratch / "a.arc"), write_arc(scratch / "a.arc.gz")
    files = sorted(p for p in scratch.iterdir() if p.is_file())
    files.append(root / "examples" / "sample.warc.gz")
    seeds = []
    for path in files:
        data = path.read_bytes()
        if len(data) > 60000:
            continue
        seeds.append(bytes([0]) + data)
        try:  # (its records uncompressed, for mode 1 to gzip again)
            plain = gzip.decompress(data) if data.startswith(b"\x1f\x8b") else data
        except (OSError, EOFError, zlib.error):
            continue
        if len(plain) < 60000:
            seeds.append(bytes([1]) + plain)
    page = b"<html><head><meta charset=\"windows-1252\"></head><body><p>Caf\xe9 au lait.</p></body></html>"
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (page[:30], page[30:])) + b"0\r\n\r\n"
    for transfer, encoding, body in (("", "gzip", gzip.compress(page)), ("", "deflate", zlib.compress(page)),
                                     ("", "deflate", zlib.compress(page)[2:-4]), ("", "br", brotli.compress(page)),
                                     ("chunked", "", chunked), ("chunked", "gzip", gzip.compress(chunked)),
                                     ("", "gzip, br", brotli.compress(gzip.compress(page))), ("", "x-gzip", page)):
        seeds.append(bytes([2]) + f"{transfer}|{encoding}|".encode() + b"\n" + body)
    try:
        from plexity_plugins.io.http_codings import zstd_module
        module = zstd_module()
        if module is not None:
            seeds.append(bytes([2]) + b"|zstd|\n" + module.compress(page))
    except Exception:  # noqa: BLE001 - a seed less
        pass
    for content_type, body in ((b"text/html", page), (b"text/html; charset=utf-8", "Zürich ☃".encode()),
                               (b"", b"\xef\xbb\xbf<p>bom</p>"),
                               (b"text/html; charset=shift_jis", "日本".encode("cp932")),
                               (b"", "<p>текст</p>".encode("utf-16")), (b"text/html; charset=iso-2022-kr", b"x")):
        seeds.append(bytes([3]) + content_type + b"\n" + body)
    for head in (b"%PDF-1.4\n", b"\x89PNG\r\n\x1a\n" + bytes(20), b"<!-- c --><html>", b"BZh91AY&SY",
                 b"WARC/1.0\r\n", b"filedesc://x.arc 0.0.0.0 20080512093000 text/plain 10\n"):
        seeds.append(bytes([4]) + head)
    seeds += [bytes([5, 0]) + page, bytes([5, 1]) + gzip.compress(page) + b"\0\0junk", bytes([5, 1]) + page]
    for i, seed in enumerate(seeds):
        (out / f"seed{i:03d}").write_bytes(seed)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-seeds"]:
        write_seeds(sys.argv[2])
        sys.exit(0)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
