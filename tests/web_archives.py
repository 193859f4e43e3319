"""Web archives for the tests of their reading: a WACZ written as the specification lays one out (`write_wacz`), a file
whose reads fail past a byte as a failing disk's do (`FailingDisk`), and what warcio itself finds in a folder of
WARCs (`what_warcio_finds`), the reference the readers' counts are held to; a Common Crawl WAT (`write_wat`)."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import zipfile
from collections import Counter
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter


def write_wacz(path: Path, warcs: Path | None, method: int = zipfile.ZIP_STORED, **more: bytes) -> Path:
    """A WACZ of the WARCs under `warcs`/archive (stored, as WACZ writers store them, or `method`), with the index,
    pages and data package a WACZ holds (their hashes and sizes in datapackage.json), and `more` members."""
    members: dict[str, bytes] = {}
    for warc in sorted((warcs / "archive").iterdir()) if warcs else []:
        members[f"archive/{warc.name}"] = warc.read_bytes()
    members["indexes/index.cdxj"] = b'org,example)/plain-0 20240101000000 {"url": "http://example.org/plain-0"}\n'
    members["pages/pages.jsonl"] = (b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'
                                    b'{"id": "1", "url": "http://example.org/plain-0", "ts": "2024-01-01T00:00:00Z"}\n')
    members.update({name.replace("__", "/"): data for name, data in more.items()})
    resources = [{"name": Path(name).name, "path": name, "hash": "sha256:" + hashlib.sha256(data).hexdigest(),
                  "bytes": len(data)} for name, data in members.items()]
    package = json.dumps({"profile": "data-package", "wacz_version": "1.1.1", "title": "test crawl",
                          "created": "2024-01-01T00:00:00Z", "software": "tests/web_archives.py",
                          "resources": resources}).encode()
    digest = json.dumps({"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(package).hexdigest()})
    with zipfile.ZipFile(path, "w") as wacz:
        for name, data in members.items():
            wacz.writestr(name, data, compress_type=method if name.startswith("archive/") else zipfile.ZIP_DEFLATED)
        wacz.writestr("datapackage.json", package, compress_type=zipfile.ZIP_DEFLATED)
        wacz.writestr("datapackage-digest.json", digest, compress_type=zipfile.ZIP_DEFLATED)
    return path


class FailingDisk(io.RawIOBase):
    """A file whose reads fail with EIO from byte `at` on (a read that starts before gives the bytes up to it)."""

    def __init__(self, path: Path, at: int):
        super().__init__()
        self.file, self.at = open(path, "rb"), at

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.file.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.file.seek(offset, whence)

    def readinto(self, buffer) -> int:
        position = self.file.tell()
        if position >= self.at:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return self.file.readinto(memoryview(buffer)[:self.at - position])

    def close(self) -> None:
        self.file.close()
        super().close()


def what_warcio_finds(folder: Path) -> tuple[Counter, Counter]:
    """By warcio itself, in every WARC of `folder`: the records' outcomes as the docs name them, and the URL
    paths of the 200 HTML responses (each a page whose text must come out once)."""
    outcomes, pages = Counter(), Counter()
    for path in sorted(folder.glob("*.warc*")):
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type == "revisit":
                    outcomes["revisit"] += 1
                elif record.rec_type != "response":
                    outcomes["not_response"] += 1
                elif record.http_headers.get_statuscode()[0] in "345":
                    outcomes["redirect_or_error"] += 1
                elif "html" not in record.http_headers.get_header("Content-Type", ""):
                    outcomes["not_html"] += 1
                else:
                    outcomes["page"] += 1
                    pages[record.rec_headers.get_header("WARC-Target-URI").split(":", 2)[2].split("/", 1)[1]] += 1
    return outcomes, Counter({"/" + path: n for path, n in pages.items()})


def write_wat(path: Path, records: int = 1) -> Path:
    """A WAT, as Common Crawl names and writes them (a warcinfo record, then a metadata record of JSON for each record
    of its WARC, a gzip member each; made here with warcio: Common Crawl's own, an extract in its whirlwind-python
    tutorial, was read the same way by hand, docs/guarantees-input.md)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"format": "WARC 1.0"}))
        for number in range(records):
            envelope = {"Envelope": {"WARC-Header-Metadata": {"WARC-Type": "response"}, "Payload-Metadata": {
                "HTTP-Response-Metadata": {"HTML-Metadata": {"Links": [{"url": f"http://example.org/{number}"}]}}}}}
            writer.write_record(writer.create_warc_record(
                f"http://example.org/{number}", "metadata", payload=io.BytesIO(json.dumps(envelope).encode()),
                warc_content_type="application/json"))
    return path
