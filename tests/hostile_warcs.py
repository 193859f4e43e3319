"""Hostile WARC files, made at test time: the shapes of issue 38 that hung a run, kept binary as
text, or let a page's content become a record.

`shapes()` gives one `Shape` per file: its name, its bytes, and what reading it must give —
the records that must become documents (every one of them), the records that must never become
one, the skip each named record must get.  None of them needs a file from outside the repository;
the largest are 10 MB (a gzip member flood) and 30 MB (gzip magic after damage).
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass, field

from warc_corpus import ARTICLE, page, record_bytes

HTML = "text/html; charset=utf-8"


@dataclass
class Shape:
    name: str  # also the file name
    data: bytes
    documents: list[str]  # URIs that must each become a document, in this order
    never: list[str] = field(default_factory=list)  # URIs that must never become a document
    skips: dict[str, str] = field(default_factory=dict)  # URI -> the skip reason it must get
    problem: str | None | bool = None  # the file's problem (`FILE_PROBLEMS`); True: any, named


def _intact(prefix: str, count: int) -> tuple[list[str], list[bytes]]:
    uris = [f"http://t/{prefix}-{i}" for i in range(count)]
    return uris, [record_bytes(uri, page(ARTICLE, f"Record {i}.").encode()) for i, uri in enumerate(uris)]


def _gz(records: list[bytes]) -> bytes:
    return b"".join(gzip.compress(r) for r in records)


def negative_chunk_sizes() -> Shape:
    """Row 1: ``Transfer-Encoding: chunked`` whose size line is ``-4`` (dechunk stepped back onto
    the same line for ever), and other size lines that are not hex digits."""
    uris, records = _intact("chunk", 2)
    body = page(ARTICLE, "Chunked but not really.").encode()
    odd = []
    for i, size in enumerate((b"-4", b"+4", b"0x10", b"1_0", b"-0", b"ffffffffffffffffffff")):
        uri = f"http://t/size-{i}"
        odd.append(uri)
        records.insert(1, record_bytes(uri, size + b"\r\n" + body, headers=[("Transfer-Encoding", "chunked")]))
    return Shape("negative-chunk.warc.gz", _gz(records), documents=[uris[0], *reversed(odd), uris[1]])


def gzip_member_flood(megabytes: int = 10) -> Shape:
    """Row 2: a ``Content-Encoding: gzip`` body of one member and megabytes of empty members
    (each member's leftover was copied again: quadratic)."""
    uris, records = _intact("flood", 2)
    empty = gzip.compress(b"")
    body = gzip.compress(page(ARTICLE).encode()) + empty * (megabytes * 10**6 // len(empty))
    records.insert(1, record_bytes("http://t/member-flood", body, headers=[("Content-Encoding", "gzip")]))
    return Shape("member-flood.warc.gz", _gz(records), documents=uris, skips={"http://t/member-flood": "undecodable"})


def magic_after_damage(megabytes: int = 30, gzipped: bool = False) -> Shape:
    """Row 3: a record whose Content-Length is ``abc``, then megabytes of ``\\x1f\\x8b\\x08`` (resync
    tried to inflate at every one), then an intact record."""
    uris, records = _intact("magic", 2)
    damaged = record_bytes("http://t/abc", page(ARTICLE).encode(), content_length="abc")
    flood = b"\x1f\x8b\x08" * (megabytes * 10**6 // 3)
    if gzipped:  # (the flood between members: each is a candidate member; past the resync bound, reading stops)
        data = gzip.compress(records[0]) + gzip.compress(damaged) + flood + gzip.compress(records[1])
        return Shape("magic-flood.warc.gz", data, documents=uris[:1], skips={"http://t/abc": "truncated"},
                     problem="corrupt")
    data = records[0] + damaged + flood + records[1]
    return Shape("magic-flood.warc", data, documents=uris, skips={"http://t/abc": "truncated"}, problem="corrupt")


def injected_record(gzipped: bool = False) -> Shape:
    """Row 6: a record whose Content-Length is too short, and whose page holds a complete WARC
    record (the injected record became a cleaned document)."""
    uris, records = _intact("inject", 10)
    evil = record_bytes("http://evil/injected", page("Injected. " * 20).encode())
    body = page(ARTICLE, "Before the record.").encode() + b"\r\n\r\n" + evil + page(ARTICLE, "After it.").encode()
    damaged = record_bytes("http://t/carrier", body)
    # (the Content-Length ends the record 200 bytes into its page: the rest of the page, the
    # injected record with it, is where the next record should be)
    head, _, _ = damaged.partition(b"\r\n\r\n")
    block = damaged[len(head) + 4:-4]
    http_end = block.index(b"\r\n\r\n") + 4
    damaged = record_bytes("http://t/carrier", body, content_length=str(http_end + 200))
    records.insert(5, damaged)
    name = "injected.warc.gz" if gzipped else "injected.warc"
    return Shape(name, _gz(records) if gzipped else b"".join(records), documents=uris,
                 never=["http://evil/injected"], skips={"http://t/carrier": "truncated"}, problem="corrupt")


def short_content_length(gzipped: bool = False) -> Shape:
    """Row 15: ten intact records and one whose Content-Length is too short, cutting its HTML
    (it was kept as an eleventh document)."""
    uris, records = _intact("short", 10)
    full = record_bytes("http://t/short", page(ARTICLE, "Cut short.").encode())
    head, _, rest = full.partition(b"\r\n\r\n")
    length = len(rest) - 4
    records.insert(5, record_bytes("http://t/short", page(ARTICLE, "Cut short.").encode(),
                                   content_length=str(length - 60)))
    name = "short.warc.gz" if gzipped else "short.warc"
    return Shape(name, _gz(records) if gzipped else b"".join(records), documents=uris,
                 skips={"http://t/short": "truncated"}, problem="corrupt")


ODD_URIS = ["HTTP://EX.COM/x", "Http://ex.com/y", "example.com/x", "/etc/passwd", "../../escape.html"]


def odd_uris() -> Shape:
    """Row 7: responses whose WARC-Target-URI is not spelled ``http:``/``https:`` (their HTTP
    block was not parsed: counted not_html, or copied raw by plexity clean)."""
    records = [record_bytes(uri, page(ARTICLE, f"At {uri}.").encode()) for uri in ODD_URIS]
    return Shape("odd-uris.warc.gz", _gz(records), documents=list(ODD_URIS))


def _pdf(rng: random.Random) -> bytes:
    return b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nstream\n" + rng.randbytes(6000)


def binary_declared_html() -> Shape:
    """Row 8: binary payloads whose HTTP header says text/html (a PDF kept as a document of
    290,000 characters of binary); and what must stay HTML."""
    rng = random.Random(8)
    binary = {
        # the crawler identified it: that wins over the header, as in datatrove's WarcReader
        "http://t/pdf-identified": record_bytes("http://t/pdf-identified", _pdf(rng), content_type=HTML,
                                                warc_headers={"WARC-Identified-Payload-Type": "application/pdf"}),
        # not identified: its first bytes say what it is
        "http://t/pdf": record_bytes("http://t/pdf", _pdf(rng), content_type=HTML),
        "http://t/png": record_bytes("http://t/png", b"\x89PNG\r\n\x1a\n" + rng.randbytes(4000), content_type=HTML),
        "http://t/zip": record_bytes("http://t/zip", b"PK\x03\x04" + rng.randbytes(4000), content_type=HTML),
        "http://t/pdf-gzip": record_bytes("http://t/pdf-gzip", gzip.compress(_pdf(rng)), content_type=HTML,
                                          headers=[("Content-Encoding", "gzip")]),
        "http://t/control-bytes": record_bytes("http://t/control-bytes", bytes(rng.choice(b"\x00\x01\x02\x03\x10abc")
                                                                               for _ in range(4000)), content_type=HTML),
    }
    html = {
        "http://t/utf16": record_bytes("http://t/utf16", page(ARTICLE).encode("utf-16-le"), content_type="text/html"),
        "http://t/nul-flood": record_bytes("http://t/nul-flood", b"<html><body>" + bytes(20000)
                                           + page(ARTICLE).encode(), content_type=HTML),
        "http://t/identified-html": record_bytes(
            "http://t/identified-html", page(ARTICLE).encode(), content_type="application/octet-stream",
            warc_headers={"WARC-Identified-Payload-Type": "text/html"}),
        "http://t/plain": record_bytes("http://t/plain", page(ARTICLE).encode(), content_type=HTML),
    }
    return Shape("binary.warc.gz", _gz([*binary.values(), *html.values()]), documents=list(html),
                 never=list(binary), skips={uri: "not_html" for uri in binary})


def shapes() -> list[Shape]:
    return [negative_chunk_sizes(), gzip_member_flood(), magic_after_damage(), magic_after_damage(gzipped=True),
            injected_record(), injected_record(gzipped=True), short_content_length(),
            short_content_length(gzipped=True), odd_uris(), binary_declared_html()]
