"""An input file opened, and what it is by its first bytes.

- `open_input` opens regular files only: a FIFO, socket or device is `NotARegularFile`, never opened for reading
  (opening a FIFO waits for ever).  `_Reads` makes a failed read of an opened file (EIO) a `ReadError` naming the
  file and the byte, so that whatever reads it meets no damage where the disk failed.
- `looks_like_warc` and `what_file_is`: whether a file starts as a WARC record does, and what it is otherwise (for
  "not a WARC file: a PDF document").
- `unsupported_compression`, `judged_compression`: why a WARC compressed otherwise than by gzip (bzip2, xz, zstd)
  is not read, and the line that converts it.
- `wat_file`: why a Common Crawl WAT file is not read, by its name (``plexity clean`` and ``plexity run`` alike).

The WARC reader (`warc_files`) and the document reader (`document_files`) both read through `_Reads`, so that a
failed read is named the same way whatever the file holds.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import zlib

from ..errors import NotARegularFile, ReadError, printable
from .payload_sniffing import _HTML_START, _SNIFF_BYTES, binary_kind


class _Reads:
    """`fileobj` for reading, its failed reads (an OSError of `read`: EIO ...) `ReadError`: whatever reads
    the file (warcio, resynchronising, a consumer copying a record) meets no damage where the disk failed."""

    def __init__(self, fileobj, name: str | None = None):
        self.fileobj, self.name = fileobj, name

    def tell(self) -> int:
        return self.fileobj.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.fileobj.seek(offset, whence)

    def fileno(self) -> int:
        return self.fileobj.fileno()

    def seekable(self) -> bool:
        seekable = getattr(self.fileobj, "seekable", None)
        return bool(seekable and seekable())

    def read(self, size: int = -1) -> bytes:
        try:
            return self.fileobj.read(size)
        except ReadError:
            raise
        except OSError as exc:
            try:
                where = f" at byte {self.fileobj.tell():,}"
            except (OSError, ValueError):
                where = ""
            raise ReadError(exc.errno, f"{self.name or 'the file'}: read error{where}: {exc.strerror or exc}") from exc


def _gunzip_head(head: bytes) -> bytes | None:
    """The start of what a gzip stream holds (None if it does not inflate)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF_BYTES)
    except zlib.error:
        return None


def looks_like_warc(head: bytes) -> bool:
    """Whether a file's first bytes (gzipped or not) start as a WARC record does."""
    if head.startswith(b"\x1f\x8b"):
        head = _gunzip_head(head) or b""
    return head.lstrip(b"\r\n\t ").startswith(b"WARC/")


# An ARC file's first line: its filedesc record's header, five fields (v1) or ten (v2), the date 14 digits, the length
# last.  (Not "filedesc://" alone: a damaged WARC whose first bytes happen to be those was read as an ARC and lost
# every whole record after them; a fuzz test found it.)
_ARC_FIRST_LINE = re.compile(rb"filedesc://\S+ \S+ \d{14} \S+(?: \S+){0,5} \d+[ \t]*\r?\n")


def looks_like_arc(head: bytes) -> bool:
    """Whether a file's first bytes (gzipped or not) start as an ARC file does (its ``filedesc://`` record's header
    line): WARC's predecessor, Common Crawl's 2008-2012 crawls, the Internet Archive's older collections."""
    if head.startswith(b"\x1f\x8b"):
        head = _gunzip_head(head) or b""
    return _ARC_FIRST_LINE.match(head.lstrip(b"\r\n\t ")) is not None


_MAGIC = ((b"%PDF", "a PDF document"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"GIF8", "a GIF image"), (b"PK\x03\x04", "a ZIP archive"), (b"BZh", "a bzip2 file"),
          (b"\xfd7zXZ", "an xz file"), (b"(\xb5/\xfd", "a zstd file"),
          (b"filedesc://", "an ARC file whose first header line cannot be read"))


def what_file_is(head: bytes) -> str:
    """What a file is, by its first bytes, for a message: "an empty file", "a text file (it
    starts 'hello')", "an HTML page", "a PDF document", "a gzip file holding ...", "binary data"."""
    if not head:
        return "an empty file"
    if head.startswith(b"\x1f\x8b"):
        inner = _gunzip_head(head)
        return "a damaged gzip file" if inner is None else f"a gzip file holding {what_file_is(inner)}"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if _HTML_START.match(head):
        return "an HTML page"
    import codecs

    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # (a character cut at the end)
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\r\n\t\f")
    if "\0" in text or controls > len(text) // 20:
        return "binary data"
    start = printable(" ".join(text.split())[:40].encode("ascii", "backslashreplace").decode("ascii"))
    return f"a text file (it starts '{start}')" if start else "a text file of blank lines"


# WARC files compressed otherwise than by gzip, which are not read: (suffix, compression, its decompressor,
# `binary_kind`'s name for its bytes).
_OTHER_COMPRESSIONS = ((".bz2", "a bzip2", "bzcat", "bzip2"), (".xz", "an xz", "xzcat", "xz"),
                       (".zst", "a zstd", "zstdcat", "zstd"))
_NOT_READ = "which plexity does not read (it reads .warc and .warc.gz): convert it with"


def unsupported_compression(name: str, head: bytes | None = None) -> str | None:
    """Why a WARC file named `name` (a path, as the caller names it) whose first bytes are `head` (None: not read) is
    not read, and how to make it readable, else None.  Its bytes judge, where they are known; else its name
    (``f.warc.bz2``, ``f.warc.wet.xz``, ``f.warc.zst``).

    WARCs are read as ``.warc`` or ``.warc.gz``: gzip, one member per record, is how crawlers write
    them, and what lets reading resume at the next record after damage.  A bzip2, xz or zstd file is
    one stream (no record boundary to resume at; a step back means decompressing from the start
    again), and ``plexity clean`` writes its output in its input's compression: such a file is a
    counted skip, whose message gives the one-line conversion.  A file misnamed is renamed to what it
    is first (``f.warc.gz`` -> ``f.warc.bz2``), then converted to its name: converting it in place,
    ``bzcat f.warc.gz | gzip > f.warc.gz``, would empty it before it is read.  A file named ``.warc.bz2``
    (``.xz``, ``.zst``) whose bytes are gzip or no compression is skipped too (its output would be named for a
    compression it is not in), with the ``mv`` that names it for what it is: the conversion its name calls for
    fails on it (and leaves an empty ``.warc.gz`` behind)."""
    lower = name.lower()
    named = next((compression for compression in _OTHER_COMPRESSIONS if lower.endswith(compression[0])
                  and lower[:-len(compression[0])].endswith((".warc", ".warc.wet"))), None)
    kind = binary_kind(head) if head else None
    actual = next((compression for compression in _OTHER_COMPRESSIONS if compression[3] == kind), None)
    stem = name[:-len(named[0])] if named else name[:-3] if lower.endswith(".gz") else name
    if named and (not head or actual == named):  # (its bytes say what its name says, or are not known)
        _, compression, decompressor, _ = named
        return (f"{compression}-compressed WARC, {_NOT_READ} "
                f"`{decompressor} {shlex.quote(name)} | gzip > {shlex.quote(stem + '.gz')}`")
    if actual:
        suffix, compression, decompressor, _ = actual
        renamed = shlex.quote(stem + suffix)
        return (f"{compression}-compressed WARC (its bytes say so, not its name), {_NOT_READ} "
                f"`mv {shlex.quote(name)} {renamed} && {decompressor} {renamed} | gzip > "
                f"{shlex.quote(stem + '.gz')}`")
    if named:  # named .warc.bz2 ..., and its bytes are gzip or no compression
        gzipped = head.startswith(b"\x1f\x8b")
        return (f"a WARC named {named[0]} whose bytes are {'gzip' if gzipped else 'not compressed'} (its bytes say so, "
                f"not its name): name it for what it is, `mv {shlex.quote(name)} "
                f"{shlex.quote(stem + ('.gz' if gzipped else ''))}`, and plexity reads it")
    return None


WAT_SUFFIXES = (".warc.wat", ".warc.wat.gz")  # Common Crawl's names (CC-MAIN-...-00000.warc.wat.gz)


def wat_file(path: str | os.PathLike) -> str | None:
    """For a WAT file by its name: what it is, and where its pages are; else None.  A WAT is a WARC whose records are
    all ``metadata`` (JSON: a crawl's headers and links, no page's text): read to its end, it gives no document, so
    it is skipped unread (docs/guarantees-input.md, "Common Crawl's WAT files")."""
    if not os.path.basename(os.fspath(path)).lower().endswith(WAT_SUFFIXES):
        return None
    return ("a WAT file (Common Crawl's metadata of a crawl's records, as JSON: headers and links, no page's text): "
            "nothing in it to clean; the pages are in its WARC (.warc.gz), their text in its WET (.warc.wet.gz)")


def judged_compression(name: str, opened) -> str | None:
    """`unsupported_compression` of the file named `name`, judged by its first bytes where its name says bzip2, xz or
    zstd (`opened()`: the file, opened for reading; one that cannot be opened is judged by its name)."""
    if unsupported_compression(name) is None:
        return None
    try:
        with opened() as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
        head = None
    return unsupported_compression(name, head)



def open_input(path: str | os.PathLike):
    """`path` opened for reading in binary mode, if it is a regular file.

    Raises `NotARegularFile` for a FIFO, socket, device or directory (opening a FIFO waits for a
    writer for ever; the check is made again on the open file, which is opened without waiting),
    and OSError for what cannot be opened (a symlink loop, a dangling link, no permission)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotARegularFile(f"not a regular file ({_file_type(os.stat(path).st_mode)})")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # (replaced since the check above)
            raise NotARegularFile(f"not a regular file ({_file_type(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a file"
