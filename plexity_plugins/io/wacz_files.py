"""The WARC files inside a WACZ, each read where it lies in the zip.

A WACZ (Web Archive Collection Zipped: what Webrecorder's ArchiveWeb.page and Browsertrix Crawler write) is a zip
holding its crawl's WARC files under ``archive/`` beside ``indexes/``, ``pages/pages.jsonl`` and
``datapackage.json``.  `WaczFile` yields each WARC member (``archive/…/*.warc`` or ``*.warc.gz``) as a file to read
with `warc_files.WarcFile`, streamed from the zip, never extracted: a stored member (as WACZ writers store them) is
a window on the zip's own bytes, seekable at no cost; a deflated one (a WACZ repacked by ``zip``) is inflated as it
is read.  The other members are no WARC and are not read.

Bounds, since a zip says of itself what it likes: its central directory is read only when it lists at most
`MAX_ZIP_MEMBERS` members (each a Python object); a deflated member whose declared size is more than
`MAX_DEFLATE_RATIO` times its compressed size is a zip bomb, not read (deflate compresses text ten times or so), and
zipfile reads no byte past the declared size (its CRC checked there); members whose bytes overlap another's (a bomb
made of one member listed many times) are not read; a deflated member is inflated at most `MAX_INFLATIONS` times
over in all (a step back, to resynchronise after damage, further than the last 8 MiB inflated, inflates it again
from its start), then reads as ended, and so does it where its deflate data or its CRC is wrong.
So reading a WACZ is linear in its size, and each page is held within `read_limits`' caps as in any WARC.
"""

from __future__ import annotations

import collections
import io
import os
import posixpath
import shlex
import struct
import zipfile
from dataclasses import dataclass

from ..errors import ENVIRONMENT_ERRORS, ReadError
from .folders import WACZ_SUFFIX
from .input_files import _Reads, what_file_is
from .read_outcomes import NOT_A_WARC, UNREADABLE_FILE, describe

WARC_MEMBER_SUFFIXES = (".warc", ".warc.gz")  # under archive/, as the WACZ specification (1.1.1) puts them
MAX_ZIP_MEMBERS = 100_000  # a WACZ holds its WARCs, indexes and a few JSON files: tens of members
MAX_DEFLATE_RATIO = 100  # declared size / compressed size of a deflated member read (HTML deflates ~10:1)
MAX_INFLATIONS = 4  # times a deflated member's size that may be inflated in all, re-reading it after damage
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a member's local file header (zipfile's structFileHeader)
_NOT_DAMAGE = (*ENVIRONMENT_ERRORS, ReadError)  # (what reading lets through: the installation's error, a failed read)
_METHODS = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
_END_RECORD, _ENTRIES_TOTAL = getattr(zipfile, "_EndRecData", None), getattr(zipfile, "_ECD_ENTRIES_TOTAL", 4)


def is_wacz(name: str) -> bool:
    """Whether a file's name says it is a WACZ."""
    return name.lower().endswith(WACZ_SUFFIX)


@dataclass
class WaczMember:
    """One WARC member of a WACZ: `fileobj` to read it from, or None and `skip` says why it is not read."""

    path: str  # its name in the zip, archive/data.warc.gz (a second member of that name: archive/data (2).warc.gz)
    name: str  # as messages and documents name it: crawl.wacz/archive/data.warc.gz
    fileobj: object = None
    skip: str = ""

    @property
    def gzipped(self) -> bool:
        return self.path.lower().endswith(".gz")

    def why_ended(self) -> str:
        """Why reading the member ended before its end ("" if it did not): its zip data damaged (deflate data, its
        CRC), or it was inflated again from its start too many times (`MAX_INFLATIONS`), resynchronising after
        damage.  Said with the WARC reader's own problem, if any: it sees the member end there."""
        if getattr(self.fileobj, "damage", ""):
            return f"reading stopped: {self.fileobj.damage}"
        if getattr(self.fileobj, "exhausted", False):
            return (f"reading stopped: a deflated member is inflated again from its start at each damage, and it was "
                    f"inflated {MAX_INFLATIONS} times over (store WARCs in a WACZ, as its specification says)")
        return ""


class WaczFile:
    """The WARC members of the WACZ read from `fileobj` (seekable: a zip's directory is at its end).

    Iterating yields a `WaczMember` for each member under ``archive/`` whose name ends ``.warc`` or ``.warc.gz``, in
    the zip's order: with a file to read, or with `skip` saying why it is not read (encrypted, compressed otherwise
    than stored or deflated, a zip bomb, bytes shared with another member, a name that leaves ``archive/``).  When
    the file is no zip, a damaged or truncated one (its directory unreadable) or a zip of no WARC member, nothing is
    yielded and `problem` (``not_a_warc``; ``unreadable_file`` where its zip directory cannot be read, as for a damaged
    ``.gz``) and `problem_detail` say so.
    A failed read of the file (`errors.ReadError`, EIO) is raised, as for a WARC."""

    def __init__(self, fileobj, name: str):
        self.fileobj, self.name = _Reads(fileobj, name), name  # (a failed read, EIO, is a ReadError naming it)
        self.problem: str | None = None
        self.problem_detail = ""

    def _stop(self, problem: str, detail: str) -> None:
        self.problem, self.problem_detail = problem, detail

    def _zip(self) -> zipfile.ZipFile | None:
        try:
            self.fileobj.seek(0)
            head = self.fileobj.read(64)
        except ReadError:  # (the disk's or the server's failure, not the file's: raised, as for a WARC)
            raise
        except (OSError, ValueError) as exc:  # (not seekable: a zip's directory is at its end)
            self._stop(UNREADABLE_FILE, f"a WACZ that cannot be read from a stream ({describe(exc)}): copy it here "
                                        f"first")
            return None
        if not head.startswith(b"PK"):
            self._stop(NOT_A_WARC, f"not a WACZ file (a zip): {what_file_is(head)}")
            return None
        try:
            self.fileobj.seek(0)
            # (the directory's count, before zipfile reads it whole: zipfile's own reading of its end record, private
            # in CPython 3.11 to 3.14; where a Python lacks it, the directory is read unbounded, as zipfile reads it)
            end = _END_RECORD(self.fileobj) if _END_RECORD else None
            members = end[_ENTRIES_TOTAL] if end else 0
            if members > MAX_ZIP_MEMBERS:
                self._stop(UNREADABLE_FILE, f"a zip listing {members:,} members, more than a WACZ holds "
                                            f"({MAX_ZIP_MEMBERS:,}): not read")
                return None
            self.fileobj.seek(0)
            return zipfile.ZipFile(self.fileobj)
        except _NOT_DAMAGE:
            raise
        except Exception as exc:  # noqa: BLE001 - zipfile's, on a directory that says anything (BadZipFile, struct,
            # ValueError: a negative offset, UnicodeDecodeError: a name flagged UTF-8 that is not ...)
            self._stop(UNREADABLE_FILE, f"a WACZ whose zip directory cannot be read (the file is truncated or damaged: "
                                        f"{describe(exc)}): nothing read; `yes | zip -FF {shlex.quote(self.name)} "
                                        f"--out fixed.wacz` rebuilds a directory of the members left (Info-ZIP's "
                                        f"zip), which plexity reads")
        return None

    def __iter__(self):
        archive = self._zip()
        if archive is None:
            return
        infos = [info for info in archive.infolist() if not info.filename.endswith("/")]  # (no folder; a name: "")
        warcs = [info for info in infos if info.filename.startswith("archive/")
                 and info.filename.lower().endswith(WARC_MEMBER_SUFFIXES)]
        if not warcs:
            names = ", ".join(info.filename for info in infos[:5]) + (", ..." if len(infos) > 5 else "")
            self._stop(NOT_A_WARC, f"a WACZ holding no WARC file under archive/ (it holds {names or 'nothing'})")
            return
        ends = _member_ends(infos)
        listed = collections.Counter(info.header_offset for info in infos)
        names = _distinct_names(warcs, {info.filename for info in infos})
        for info, path in zip(warcs, names):
            member = WaczMember(path, f"{self.name}/{path}")
            member.skip = _why_not_read(info, ends) or (
                "its bytes are another member's too (listed twice: a zip bomb?): not read"
                if listed[info.header_offset] > 1 else "")
            if not member.skip:
                try:
                    member.fileobj = self._open(archive, info)
                except _NOT_DAMAGE:
                    raise
                except Exception as exc:  # noqa: BLE001 - zipfile's, on a damaged entry (as above)
                    member.skip = f"its zip entry is damaged ({describe(exc)})"
            yield member

    def _open(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo):
        if info.compress_type == zipfile.ZIP_DEFLATED:
            return _Inflated(archive.open(info), info.file_size)
        self.fileobj.seek(info.header_offset)
        header = self.fileobj.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or not header.startswith(b"PK\x03\x04"):
            raise zipfile.BadZipFile(f"no local file header at byte {info.header_offset:,}")
        fields = _LOCAL_HEADER.unpack(header)
        start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        return _Stored(self.fileobj, start, info.compress_size)


def _distinct_names(warcs: list[zipfile.ZipInfo], taken: set[str]) -> list[str]:
    """The WARC members' names, each told from the others: a zip may list two members of one name (`wacz create
    a/data.warc.gz b/data.warc.gz` writes both as archive/data.warc.gz), and each WARC is a file of its own (its
    cleaned WARC, its documents' `file_path`), so the second is named as a second file of that name is,
    archive/data (2).warc.gz (a name no member bears)."""
    names, seen = [], set()
    for info in warcs:
        name = info.filename
        if name in seen:
            suffix = next(s for s in WARC_MEMBER_SUFFIXES[::-1] if name.lower().endswith(s))  # (.warc.gz first)
            stem, number = name[:-len(suffix)], 2
            while f"{stem} ({number}){name[-len(suffix):]}" in taken:
                number += 1
            name = f"{stem} ({number}){name[-len(suffix):]}"
            taken.add(name)
        seen.add(name)
        names.append(name)
    return names


def _member_ends(infos: list[zipfile.ZipInfo]) -> dict[int, int | None]:
    """Where each member's bytes must end, by its header's offset: the next member's start (a member whose data runs
    past it shares bytes with another), None for the last (a zip cut short, its directory rebuilt by ``zip -FF``,
    ends inside it: what is there is read, and the WARC reader names where it ends)."""
    starts = sorted({info.header_offset for info in infos})
    return {start: end for start, end in zip(starts, starts[1:] + [None])}


def _why_not_read(info: zipfile.ZipInfo, ends: dict[int, int]) -> str:
    """Why the WARC member `info` is not read, or ""."""
    if info.header_offset < 0:
        return f"its zip entry is damaged (it starts at byte {info.header_offset:,}): not read"
    parts = info.filename.split("/")
    if ".." in parts or "" in parts or "\\" in info.filename or posixpath.isabs(info.filename):
        return "its name leaves archive/ (.., an empty part or a backslash): not read"
    if info.flag_bits & 0x1:
        return "encrypted (a zip password): not read; plexity reads a WACZ's WARCs as they are stored in it"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        method = _METHODS.get(info.compress_type, f"method {info.compress_type}")
        return f"compressed by zip with {method}, which plexity does not read (it reads members stored or deflated)"
    if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > MAX_DEFLATE_RATIO * max(info.compress_size, 1):
        return (f"a zip bomb: {info.file_size:,} bytes declared from {info.compress_size:,} compressed, more than "
                f"{MAX_DEFLATE_RATIO} times: not read")
    end = ends.get(info.header_offset)
    if end is not None and info.header_offset + _LOCAL_HEADER.size + info.compress_size > end:
        return "its bytes overlap the next member's (a zip bomb?): not read"
    return ""


class _Member(io.RawIOBase):
    """A member's bytes, `size` of them, read from `position` (what the two kinds share)."""

    def __init__(self, size: int):
        super().__init__()
        self.size, self.position = size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self.position, os.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)  # (moved to when next read: a seek to the end to learn the size is free)
        return self.position

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class _Stored(_Member):
    """A stored member: `size` bytes of the zip `fileobj` from `start`, read in place (seeking is free)."""

    def __init__(self, fileobj, start: int, size: int):
        super().__init__(size)
        self.fileobj, self.start = fileobj, start

    def read(self, size: int = -1) -> bytes:
        left = self.size - self.position
        size = left if size is None or size < 0 else min(size, left)
        if size <= 0:
            return b""
        self.fileobj.seek(self.start + self.position)  # (one member read at a time, but the zip's file is shared)
        data = self.fileobj.read(size)
        self.position += len(data)
        return data


class _Inflated(_Member):
    """A deflated member (zipfile's reader, its CRC checked at the declared size), seekable.  A step back within the
    last `BACK_BYTES` inflated is read from them (resynchronising after damage steps back to the damaged record's
    start); one further back inflates the member again from its start, so what is inflated in all is bounded
    (`MAX_INFLATIONS` times its size, and 16 MiB): past that it reads as ended, and `WaczMember.why_ended` says so."""

    BACK_BYTES = 8 << 20

    def __init__(self, member, size: int):
        super().__init__(size)
        self.member = member
        self.budget = MAX_INFLATIONS * size + (16 << 20)
        self.exhausted = False
        self.damage = ""  # (what zipfile found wrong in its data: reading ends there, `WaczMember.why_ended`)
        self.behind = bytearray()  # the last bytes inflated, up to the member's position (`member.tell()`)

    def read(self, size: int = -1) -> bytes:
        wanted = None if size is None or size < 0 else size
        data = self._behind(wanted)
        if wanted is None or len(data) < wanted:
            data += self._inflate(None if wanted is None else wanted - len(data))
        return data

    def _behind(self, size: int | None) -> bytes:
        """What is asked for at the position, from the bytes just inflated, if it lies among them."""
        back = self.member.tell() - self.position
        if not 0 < back <= len(self.behind):
            return b""
        start = len(self.behind) - back
        data = bytes(self.behind[start:start + (back if size is None else min(size, back))])
        self.position += len(data)
        return data

    def _inflate(self, size: int | None) -> bytes:
        at = self.member.tell()
        if self.exhausted or self.damage:
            return b""
        try:
            if at != self.position:  # (forward: inflated and passed over; back: inflated again from the start)
                if not self._spend(self.position if self.position < at else self.position - at):
                    return b""
                self.behind.clear()
                self.member.seek(self.position)
            data = self.member.read(-1 if size is None else size)
        except _NOT_DAMAGE:
            raise
        except Exception as exc:  # noqa: BLE001 - its deflate data or CRC wrong (zlib.error, BadZipFile, EOFError)
            self.damage = f"its zip data is damaged at byte {self.member.tell():,} of it ({describe(exc)})"
            return b""
        if not self._spend(len(data)):
            return b""
        self.position += len(data)
        self.behind += data
        del self.behind[:max(0, len(self.behind) - self.BACK_BYTES)]
        return data

    def _spend(self, inflated: int) -> bool:
        self.budget -= inflated
        self.exhausted = self.budget < 0
        return not self.exhausted

    def close(self) -> None:
        self.member.close()
        super().close()
