"""WARC files with every kind of record and damage, written at test time (seeded, no data files).

`write_corpus(directory)` writes them and returns what a reader must make of each file;
`count_records(path)` counts a file's records the way warcio itself sees them, so that
tests can check ``input == output + skips`` against an independent count.
"""

from __future__ import annotations

import gzip
import io
import random
import re
import zlib
from pathlib import Path

import brotli
from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecordLoader
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ARTICLE = ("The council approved the budget for the new library on Tuesday. "
           "The library will open in the spring and will stay open late on weekdays. "
           "Residents asked the council about the road to the river, and the mayor said it would be finished soon.")


def page(*paragraphs: str) -> str:
    return "<html><body>" + "".join(f"<p>{p}</p>\n" for p in paragraphs) + "</body></html>"


def response(writer, uri: str, body: bytes, content_type: str | None = "text/html; charset=utf-8",
             rec_type: str = "response", headers: list | None = None, warc_headers: dict | None = None):
    """A response record (HTTP headers with `content_type` and `headers`; WARC headers `warc_headers` added)."""
    http = [("Content-Type", content_type)] if content_type else []
    http += headers or []
    status = StatusAndHeaders("200 OK", http, protocol="HTTP/1.1")
    return writer.create_warc_record(uri, rec_type, payload=io.BytesIO(body), http_headers=status,
                                     warc_headers_dict=warc_headers or {})


def _records(writer) -> list:
    """One record of every kind a crawl holds, and what each must become."""
    html = page(ARTICLE).encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (html[:40], html[40:])) + b"0\r\n\r\n"
    return [
        writer.create_warcinfo_record("corpus.warc", {"software": "tests"}),  # not_response
        response(writer, "http://t/plain", html),  # html
        response(writer, "http://t/request", b"GET / HTTP/1.1\r\n\r\n", None, rec_type="request"),  # not_response
        response(writer, "http://t/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(300), "image/png"),  # not_html
        response(writer, "http://t/undeclared", html, None),  # html, sniffed
        response(writer, "http://t/undeclared.bin", bytes(range(256)), None),  # not_html, sniffed
        response(writer, "http://t/empty", b"", "text/html"),  # empty_payload
        response(writer, "http://t/gzip", gzip.compress(html), headers=[("Content-Encoding", "gzip")]),  # html
        response(writer, "http://t/brotli", brotli.compress(html), headers=[("Content-Encoding", "br")]),  # html
        response(writer, "http://t/deflate", zlib.compress(html), headers=[("Content-Encoding", "deflate")]),
        response(writer, "http://t/chunked", chunked, headers=[("Transfer-Encoding", "chunked")]),  # html
        response(writer, "http://t/bad-gzip", b"\x1f\x8b\x08\x00" + bytes(random.Random(1).randbytes(400)),
                 headers=[("Content-Encoding", "gzip")]),  # undecodable
        response(writer, "http://t/big", page(ARTICLE * 60).encode()),  # too_large at a 10 kB cap
        response(writer, "http://t/last", html),  # html
    ]


# What each record of `mixed.warc.gz` becomes, in order (at max_document_bytes = CAP).
CAP = 10_000
MIXED_OUTCOMES = ["not_response", "html", "not_response", "not_html", "html", "not_html", "empty_payload", "html",
                  "html", "html", "html", "undecodable", "too_large", "html"]


def write_warc(path: Path, records: list, gzip_records: bool = True) -> None:
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip_records)
        for record in records:
            writer.write_record(record)


def write_corpus(directory: Path) -> dict[str, dict]:
    """Every kind of WARC file and damage; returns {file name: what reading it must give}."""
    directory.mkdir(parents=True, exist_ok=True)
    dummy = WARCWriter(io.BytesIO())
    expected = {}

    write_warc(directory / "mixed.warc.gz", _records(dummy))
    expected["mixed.warc.gz"] = {"outcomes": MIXED_OUTCOMES, "problem": None}

    write_warc(directory / "mixed-plain.warc", _records(dummy), gzip_records=False)
    expected["mixed-plain.warc"] = {"outcomes": MIXED_OUTCOMES, "problem": None}

    # the last gzip member cut in the middle: its record is yielded short, then reading stops
    noise = random.Random(5)  # (incompressible, so that the cut falls inside the payload)
    write_warc(directory / "cut.warc.gz", [response(dummy, f"http://t/cut-{i}",
                                                    page(ARTICLE, noise.randbytes(3000).hex()).encode())
                                           for i in range(5)])
    data = (directory / "cut.warc.gz").read_bytes()
    (directory / "cut.warc.gz").write_bytes(data[:-300])
    expected["cut.warc.gz"] = {"outcomes": ["html"] * 4 + ["truncated"], "problem": "truncated after record 4"}

    # the same cut inside the WARC headers of the last record: warcio yields nothing of it
    write_warc(directory / "cut-early.warc.gz", [response(dummy, f"http://t/cut-{i}", page(ARTICLE).encode())
                                                 for i in range(3)])
    data = (directory / "cut-early.warc.gz").read_bytes()
    (directory / "cut-early.warc.gz").write_bytes(data[:-300])
    # (the last member cut inside its record's WARC headers: the record is counted, truncated)
    expected["cut-early.warc.gz"] = {"outcomes": ["html", "html", "truncated"], "problem": "truncated after record 2"}

    # a record announcing more bytes than it has, in the middle of a per-record-gzip file:
    # the records after it are read
    members = []
    for i in range(6):
        plain = io.BytesIO()
        writer = WARCWriter(plain, gzip=False)
        writer.write_record(response(writer, f"http://t/cl-{i}", page(ARTICLE).encode()))
        data = plain.getvalue()
        if i == 2:
            head, rest = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
            data = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % (length + 5000), head) + b"\r\n\r\n" + rest
        members.append(gzip.compress(data))
    (directory / "long-content-length.warc.gz").write_bytes(b"".join(members))
    expected["long-content-length.warc.gz"] = {"outcomes": ["html", "html", "truncated", "html", "html", "html"],
                                               "problem": "record 3: 4,996 bytes short of its Content-Length"}

    # not a WARC at all: text, random bytes, a WARC of an unknown version, gzip of garbage
    (directory / "notes.warc").write_text("These are my notes, not a web archive.\n" * 20)
    (directory / "random.warc.gz").write_bytes(random.Random(7).randbytes(5000))
    (directory / "version.warc").write_bytes(b"WARC/9.9\r\nWARC-Type: response\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n")
    (directory / "garbage.warc.gz").write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes(range(256)) * 4)
    for name in ("notes.warc", "random.warc.gz", "version.warc", "garbage.warc.gz"):
        expected[name] = {"outcomes": [], "problem": "not_a_warc"}

    # good records, then garbage
    write_warc(directory / "then-garbage.warc.gz", [response(dummy, f"http://t/g-{i}", page(ARTICLE).encode())
                                                    for i in range(3)])
    with open(directory / "then-garbage.warc.gz", "ab") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + random.Random(3).randbytes(2000))
    expected["then-garbage.warc.gz"] = {"outcomes": ["html"] * 3, "problem": "after record 3"}
    return expected


class _HeadersSeen(ArcWarcRecordLoader):
    """warcio's record loader, noting whether the record being parsed had its WARC headers read."""

    headers_read = False

    def parse_record_stream(self, *args, **kwargs):
        self.headers_read = False
        return super().parse_record_stream(*args, **kwargs)

    def _detect_type_load_headers(self, *args, **kwargs):
        loaded = super()._detect_type_load_headers(*args, **kwargs)
        self.headers_read = True
        return loaded


def count_records(path: Path) -> int:
    """WARC records of a file as warcio's own iterator yields them (reading each to its end),
    until the end, the first error or the first record that is not a WARC record (warcio
    reads ARC too, and takes a line of text for an ARC header); and a record whose WARC headers
    warcio read before the file ended, which its iterator does not yield (the HTTP parser's
    EOFError, where the block should start, is taken for the end of the file)."""
    count = 0
    with open(path, "rb") as f:
        iterator = ArchiveIterator(f)
        iterator.loader = loader = _HeadersSeen(verify_http=False, arc2warc=False)
        try:
            for record in iterator:
                if record.format != "warc":
                    break
                count += 1
                loader.headers_read = False
                record.raw_stream.read()
            else:
                count += loader.headers_read
        except Exception:  # damaged: what came before counts
            pass
    return count


# -- damage that reading resynchronises past -------------------------------------------------

def record_bytes(uri: str, body: bytes, content_length: str | None = None, **options) -> bytes:
    """One uncompressed WARC response record; `content_length` replaces its WARC Content-Length;
    `options`: those of `response` (content_type, headers, warc_headers)."""
    plain = io.BytesIO()
    writer = WARCWriter(plain, gzip=False)
    writer.write_record(response(writer, uri, body, **options))
    data = plain.getvalue()
    if content_length is not None:
        head, rest = data.split(b"\r\n\r\n", 1)
        head = re.sub(rb"Content-Length: [^\r]*", b"Content-Length: " + content_length.encode(), head, count=1)
        data = head + b"\r\n\r\n" + rest
    return data


def damaged_between_intact(path: Path, content_length: str, intact: int = 10, gzip_records: bool = True) -> list[str]:
    """`intact` HTML records with one record between them (after the first half) whose WARC
    Content-Length is `content_length` ("12": too short, "-40", "twelve"); each record its own
    gzip member, or none gzipped.  Returns the intact records' URIs, in order."""
    uris = [f"http://t/intact-{i}" for i in range(intact)]
    records = [record_bytes(uri, page(ARTICLE, f"Record {i}.").encode()) for i, uri in enumerate(uris)]
    records.insert(intact // 2, record_bytes("http://t/damaged", page(ARTICLE, "Damaged.").encode(), content_length))
    path.write_bytes(b"".join(gzip.compress(r) for r in records) if gzip_records else b"".join(records))
    return uris


def single_member(path: Path, count: int = 5) -> list[str]:
    """`count` HTML records gzipped as one single gzip member (the whole file one stream)."""
    uris = [f"http://t/single-{i}" for i in range(count)]
    path.write_bytes(gzip.compress(b"".join(record_bytes(uri, page(ARTICLE, f"Record {i}.").encode())
                                            for i, uri in enumerate(uris))))
    return uris
