"""The records of a WARC file, each with exactly one outcome.

`WarcFile` reads a ``.warc`` or ``.warc.gz`` and yields a `WarcRecord` for every record: an HTML payload to
clean, a page's text (a WET record's; a cleaned WARC's, read back), or a skip reason
(`read_outcomes.RECORD_SKIPS`).  A file that is not a WARC, ends inside a record or turns to garbage gets a file
problem (`read_outcomes.FILE_PROBLEMS`) naming the record after which reading stopped, and reading resumes at the
next record (`warc_resync`).  ``plexity clean`` (`plexity_plugins.cleaning.files`) and ``plexity run``'s
`WarcHtmlReader` both read through it, so a record is judged the same by both.

What it reads through is below it: warcio's iterator and record loader (`warc_iterator`), the headers
(`record_headers`), the body's codings (`http_codings`), what bytes are (`payload_sniffing`), the file
(`input_files`) and the caps (`read_limits`).
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import re
import zlib
from dataclasses import dataclass, field

from ..errors import ENVIRONMENT_ERRORS, ReadError, ResyncGaveUp, TooLarge, Undecodable, printable
from .http_codings import dechunk, decode_content, zstd_module
from .input_files import _Reads, looks_like_arc, looks_like_warc, unsupported_compression, what_file_is
from .payload_sniffing import _SNIFF_BYTES, binary_kind, is_blank, is_html_type
from .read_limits import _CHUNK, DEFAULT_READ_TIMEOUT, MAX_DOCUMENT_BYTES, Deadline, read_capped, reading_limits
from .read_outcomes import (CLEANED_TEXT, CORRUPT_FILE, EMPTY_PAYLOAD, HTML, HTML_RESOURCE, NOT_A_WARC, NOT_HTML,
                            NOT_RESPONSE, PAGE_TEXT, REDIRECT_OR_ERROR, REVISIT, TOO_LARGE, TRUNCATED, TRUNCATED_FILE,
                            UNDECODABLE, UNSUPPORTED_COMPRESSION, describe)
from .record_headers import (_header, _is_interim, final_response_headers, header_fields, http_header,
                             split_unended_headers)
from .warc_iterator import _archive_iterator, _truncated
from .warc_resync import _container, _is_warc_member, _padding_only, holds_a_gzip_record, next_record_start
from .warc_writer import is_cleaned_record

MAX_PROBLEM_NOTES = 10  # damages a WARC file's problem_detail names one by one (then: how many more, and the last)



@dataclass
class WarcRecord:
    """One record of a WARC file and what reading made of it.

    `payload` is the decoded HTTP payload of an HTML response (bytes, charset not yet
    applied), or a page's text (`kind` PAGE_TEXT: a WET file's ``conversion`` record of text/plain;
    CLEANED_TEXT: a cleaned WARC's response record of text/plain, `warc_writer.is_cleaned_record`),
    else None and `skip` says why.  `record` is warcio's record; for a
    not_response or not_html record its payload can still be copied (``WARCWriter.write_record``)
    before the next record is read: it has not been read yet, or (a payload declared HTML whose
    bytes are binary) it was read and is given back as it came.
    """

    number: int  # 1-based, in file order
    record: object
    uri: str
    content_type: str | None
    payload: bytes | None = None
    kind: str = HTML  # what the payload is: HTML, PAGE_TEXT (a WET record's text) or CLEANED_TEXT, UTF-8
    skip: str | None = None
    detail: str = ""
    offset: int | None = None  # where the record (its gzip member) starts in the file
    reader: object = field(default=None, repr=False)  # warcio's reader of the file (what follows the record)
    fields: dict | None = field(default=None, repr=False)  # its WARC headers (`header_fields`), read once
    arc: bool = False  # a record of an ARC file (converted to a WARC record by warcio)
    _limit_reader: object = field(init=False, repr=False)
    _ending: object = field(init=False, repr=False, default=...)  # wrong_length()'s answer, once asked

    def __post_init__(self):
        self._limit_reader = self.record.raw_stream  # (before any sniffing wraps it)
        if self.fields is None:
            self.fields = header_fields(self.record.rec_headers)

    def short_by(self) -> int:
        """How many payload bytes, of those its Content-Length announces, the file lacked
        (once the payload has been read or copied)."""
        return max(0, getattr(self._limit_reader, "limit", 0) or 0)

    def wrong_length(self) -> str | None:
        """Once its payload has been read or copied to the end: why the record does not end where
        its Content-Length says (the bytes after it are not a record's end: a blank line, then
        the next record, the end of its gzip member or of the file), or None.  A Content-Length
        too short ends the record inside its page, whose rest is then where the next record
        should be."""
        if self._ending is ...:
            self._ending = None if self.reader is None or self.short_by() else _check_end(self.reader, self.arc)
        return self._ending

    @property
    def record_id(self) -> str | None:
        return self.fields.get("warc-record-id")

    @property
    def date(self) -> str | None:
        return self.fields.get("warc-date")

    @property
    def cut_by_crawler(self) -> str | None:
        """Why the crawler kept only the start of the page (WARC-Truncated: ``length``, ``time``
        ...; ``segmented``: the first segment of a record the writer cut into segments, whose rest is
        in ``continuation`` records, not read), or None when the record holds it whole."""
        truncated = (self.fields.get("warc-truncated") or "").strip()
        if truncated:
            return truncated
        # (read as a whole page before: the start of one, uncounted, a compressed body undecodable)
        return "segmented" if (self.fields.get("warc-segment-number") or "").strip() == "1" else None


_RECORD_END = re.compile(rb"\r?\n(?:\r?\n|WARC/)")


def _peek(reader, size: int) -> bytes:
    """The next `size` bytes of warcio's reader (within the current gzip member), left unread."""
    buff = reader.buff
    if buff is not None:  # (most often in the block already read: looked at, not copied)
        position = buff.tell()
        data = buff.read(size)
        buff.seek(position)
        if len(data) == size:
            return data
    data = reader.read(size)
    if data:
        rest = reader.buff.read() if reader.buff is not None else b""
        reader.buff = io.BytesIO(data + rest)
        reader.buff_size = len(data) + len(rest)
    return data


def _member_not_inflated(exc: BaseException) -> bool:
    """warcio reads a gzip member whose deflate data fails on its first read as uncompressed bytes (it takes them for
    a file that is not compressed): the "record" it then cannot parse starts with gzip's magic bytes."""
    return "first line: \x1f\x8b" in str(exc)


def _check_end(reader, arc: bool = False) -> str | None:
    """Why the record just read to its Content-Length does not end there, or None.  (An ARC record ends in one
    newline, the next record's header line right after it.)"""
    try:
        tail = _peek(reader, 16)
    except zlib.error:  # (the member's rest does not inflate: the next read names that damage, not this record's)
        return None
    if not tail or _RECORD_END.match(tail) or not tail.strip(b"\r\n") or (arc and tail[:1] == b"\n"):
        return None
    return "its Content-Length is wrong: the record does not end where it says (its page goes on after it)"


class _Prefixed(io.RawIOBase):
    """`head` then the rest of `stream`: a payload stream after its start was sniffed."""

    def __init__(self, head: bytes, stream):
        super().__init__()
        self.head, self.stream = head, stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.head:
            if size is None or size < 0:
                data, self.head = self.head + self.stream.read(), b""
                return data
            data, self.head = self.head[:size], self.head[size:]
            return data
        return self.stream.read(size)


# What reading a file lets through: an error of the installation, a failed read.
_NOT_DAMAGE = (*ENVIRONMENT_ERRORS, ReadError)


def _begins_a_compressed_record(head: bytes) -> bool:
    """Whether a file's first bytes, which begin as a bzip2, xz or zstd stream does (`binary_kind`), are such a
    stream's start: they decompress, as far as they go, to a record's first line (a WARC's, an ARC's), or to nothing
    yet (bzip2 gives nothing before a whole block).  Damage that begins with such a magic number is none: its
    decompressor fails on it, or gives bytes that start no record.  True where no decompressor is at hand (zstd
    before Python 3.14, without backports.zstd): then its magic number judges."""
    kind = binary_kind(head)
    if kind == "bzip2":
        decompressor = bz2.BZ2Decompressor()
    elif kind == "xz":
        decompressor = lzma.LZMADecompressor()
    elif kind == "zstd" and (module := zstd_module()) is not None:
        decompressor = module.ZstdDecompressor()
    else:
        return True
    try:
        start = decompressor.decompress(head, 4096).lstrip(b"\r\n\t ")
    except (OSError, EOFError, ValueError, lzma.LZMAError, *_zstd_errors()):
        return False
    return not start or looks_like_warc(start) or looks_like_arc(start)


def _zstd_errors() -> tuple[type[Exception], ...]:
    module = zstd_module()
    return (module.ZstdError,) if module is not None else ()


class WarcFile:
    """The records of one WARC file (``.warc`` or ``.warc.gz``, read from `fileobj`).

    Iterating yields a `WarcRecord` for every record warcio finds, each with exactly one
    outcome (a payload, or a reason in `RECORD_SKIPS`).  A record that does not end where its
    Content-Length says is damaged (``truncated``), never a payload.  Past damage (a record whose
    Content-Length is wrong, negative or not a number, garbage between records) reading
    resynchronises at the next record (`next_record_start`): the next gzip member that inflates
    to a ``WARC/1.`` line in a ``.warc.gz`` (each member is readable on its own), the next
    ``WARC/1.`` line in an uncompressed file that starts a record whose headers and length are
    consistent and that ends where the next record starts (a record written inside a page is
    not one).  `bytes_skipped` counts the bytes passed over,
    `records_recovered` the records read after a resynchronisation (lost before it).
    `pages_cut_by_crawler` counts the pages read whose record says the crawler kept only their
    start (``WARC-Truncated``: Common Crawl's 1 MiB limit, a time limit): their text is the
    start of the page, and a compressed body among them is read as far as it goes.  A
    ``.warc.gz`` gzipped as one single member (the whole file one stream) is read whole, as
    warcio's own tools read it; a record whose bytes a writer cut across gzip members is read whole
    too (a member that ends inside a record, followed by one that does not start a record, holds its rest).

    When the file is damaged, `problem` is set (a reason in `FILE_PROBLEMS`) and
    `problem_detail` says after which record (and where reading resumed, if it did);
    `records` counts the records yielded.  A file whose bytes are a bzip2, xz or zstd stream is
    no damaged file: nothing is read, `problem` is ``unsupported_compression`` and `problem_detail`
    the line that converts it (`unsupported_compression`), as for a file named ``.warc.bz2``.
    A read of the file that fails (EIO: the disk, a network mount) is no damage either: it raises
    `ReadError`, from the iteration or from a record's payload being read.

    Args:
        fileobj: the file, opened in binary mode (not decompressed: warcio reads gzip
            member by member, so the records before a damaged member are still read),
            seekable to resynchronise (an unseekable one stops at the first damage)
        max_payload_bytes: larger payloads (decompressed) are skipped as ``too_large``
        read_timeout: seconds to decode one payload (de-chunk, inflate); past it the record is
            skipped as ``undecodable`` (0 or None: no limit)
        name: the file's name as the caller shows it, for the conversion line of a file compressed
            otherwise than by gzip
    """

    def __init__(self, fileobj, max_payload_bytes: int = MAX_DOCUMENT_BYTES,
                 read_timeout: float | None = DEFAULT_READ_TIMEOUT, name: str | None = None):
        self.fileobj = _Reads(fileobj, name)
        self.name = name
        self.max_payload_bytes, self.read_timeout = reading_limits(max_payload_bytes, read_timeout)
        self.records = 0
        self.records_recovered = 0
        self.bytes_skipped = 0
        self.pages_cut_by_crawler = 0
        self.problem: str | None = None
        self.problem_detail = ""
        self.arc = False  # (`__iter__`)
        self._noted, self._notes = "", 0  # (`_stop`)

    def _stop(self, problem: str, detail: str) -> None:
        if self.problem is None or self.problem == NOT_A_WARC:
            self.problem = problem
        detail = printable(detail)  # (it quotes the file's bytes: no ESC, CR or BEL reaches a terminal or a log)
        # The first MAX_PROBLEM_NOTES damages one by one, then how many more and the last: each was appended to one
        # string, which a .warc.gz of 20,000 records whose Content-Lengths are all wrong (a writer that counts
        # characters, not bytes) made 3 MB long, copied at each damage: 12 of its 39 s, the square of its damages,
        # and every byte of it in the log's warning and the stats' damaged_file_details.
        self._notes += 1
        if self._notes <= MAX_PROBLEM_NOTES:
            self._noted = self.problem_detail = f"{self._noted}; {detail}" if self._noted else detail
        else:
            self.problem_detail = (f"{self._noted}; and {self._notes - MAX_PROBLEM_NOTES:,} more (the last: "
                                   f"{detail})")

    def __iter__(self):
        try:
            start = self.fileobj.tell()
            self._head = self.fileobj.read(_SNIFF_BYTES)  # what the file is, if it is no WARC
            gzipped = _container(self._head)  # (what a record start looks like, to resynchronise)
            self._size = self.fileobj.seek(0, os.SEEK_END)  # (`_bound_past_the_end`)
            self.fileobj.seek(start)
        except ReadError:
            raise
        except (OSError, AttributeError, ValueError):  # not seekable: no resynchronisation
            start, self._head = None, None
        why = unsupported_compression(self.name or "FILE", self._head) if self._head else None
        if why and (holds_a_gzip_record(self._head) or not _begins_a_compressed_record(self._head)):
            # (damage that begins as a zstd stream does, its magic bytes written over the first record or before it:
            # it was refused as a zstd WARC, every whole record after it lost; it is read as the damaged WARC it is)
            why = None
        if why:  # (a bzip2 WARC named .warc.gz: warcio would call it no WARC)
            self.problem, self.problem_detail = UNSUPPORTED_COMPRESSION, why
            return
        # an ARC file (``filedesc://`` first): its records read as warcio converts them (a response record each)
        self.arc = self._head is not None and looks_like_arc(self._head)
        if self.arc:  # (a .arc.gz resynchronises at the next member that inflates to an ARC header line; a .arc
            # is not resynchronised: its header lines are not told from a page's lines)
            gzipped = self._head.startswith(b"\x1f\x8b") or None
        resumed = False
        self._gzip_resumed_at, self._plain_then_gzip = -1, None  # (`_gzip_after_plain`)
        while True:
            iterator = _archive_iterator(self.fileobj, self.arc)
            self._damage, self._last, self._cut_short = None, None, False
            damage = yield from self._segment(iterator, resumed)
            if damage is None:
                return
            if self._plain_then_gzip is not None:  # gzip members after uncompressed records: read on, in gzip
                self.fileobj.seek(self._plain_then_gzip)
                self._plain_then_gzip = None
                continue
            # The next record after the last one read: a wrong Content-Length may have made that
            # one swallow the start of the next (an uncompressed file), or warcio may have moved
            # to the next gzip member before failing on what was left of the last one.
            after = damage if self._last is None else min(damage, self._last)
            problem, detail = self._damage
            try:
                resume = next_record_start(self.fileobj, after, gzipped, self.arc) if start is not None else None
                if resume is not None and resume == damage:  # the record that failed: the one after it
                    resume = next_record_start(self.fileobj, damage, gzipped, self.arc)
            except ResyncGaveUp as exc:
                self._stop(CORRUPT_FILE, f"damaged after record {self.records}; {exc}")
                return
            end = resume if resume is not None else self.fileobj.seek(0, os.SEEK_END)
            # (not after a record cut short: warcio may have moved past its damaged gzip member, and the bytes left
            # between are none, yet the file is damaged)
            if self.records and not self._cut_short and _padding_only(self.fileobj, min(damage, end), end):
                # (NULs and blank lines alone, as a file padded to a block size ends: nothing was lost)
                if resume is None:
                    return
                self.fileobj.seek(resume)
                continue
            if resume is None:  # nothing readable after the damage: reading stops there
                if problem == CORRUPT_FILE and end > damage:  # (how much of the file that leaves unread: a plain WARC
                    # whose Content-Lengths are all wrong, whose records are none of them whole, was read to its first
                    # record, the rest of it named nowhere)
                    detail = (f"{detail}; no whole record after it: the file's last {end - damage:,} bytes, from its "
                              f"start, read no further")
                self._stop(problem, detail)
                return
            damage = min(damage, resume)
            self.bytes_skipped += resume - damage
            if problem != CORRUPT_FILE:  # ("not a WARC", "truncated" when there is more after it)
                detail = f"damaged after record {self.records}"
            self._stop(CORRUPT_FILE, f"{detail}; resumed at byte {resume:,} ({resume - damage:,} bytes skipped)")
            self.fileobj.seek(resume)
            resumed = True

    def _segment(self, iterator, resumed: bool):
        """Yield the records of `iterator` (warcio's, from the current position); at damage, note
        the problem and return the file offset where the damaged record starts (None at the end)."""
        records = iter(iterator)
        previous: WarcRecord | None = None
        while True:
            try:
                record = next(records, None)
            except _NOT_DAMAGE:
                raise
            except Exception as exc:  # warcio/zlib raise assorted errors on damaged input
                if self._gzip_after_plain(iterator, previous):
                    return iterator.damage_offset()  # (no damage: read on from there, `__iter__`)
                self._cut_short = previous is not None and bool(previous.short_by())
                first = self.records == 0 and not resumed
                if self._cut_short and previous.detail.startswith("unreadable payload"):
                    # (its gzip member does not inflate: what warcio then read of it is no record to quote)
                    self._note(CORRUPT_FILE, f"record {previous.number}: {previous.detail}")
                elif isinstance(exc, TooLarge) and not (first and self._not_warc_start()):
                    # (headers over MAX_HEADER_BYTES: read on at the next record)
                    self._note(CORRUPT_FILE, f"record {self.records + 1}: {exc}")
                elif first and (not iterator.truncated or self._not_warc_start()):
                    self._note(NOT_A_WARC, self._not_a_warc(describe(exc)))
                elif iterator.truncated or _truncated(iterator) or isinstance(exc, EOFError):
                    self._note(TRUNCATED_FILE, f"truncated after record {self._complete(previous)}")
                else:
                    why = describe(exc)
                    if _member_not_inflated(exc):  # (not its bytes, escaped: what they are)
                        why = (f"a gzip member at byte {iterator.damage_offset():,} does not inflate: its compressed "
                               f"data is damaged")
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} ({why})")
                return iterator.damage_offset()
            if record is None:
                if self.records == 0 and not resumed and self._not_warc_start():
                    # (a line of text, an empty file, or a gzip member damaged in its header, which
                    # reads as empty: whole records may follow, as after other damage at the start)
                    self._note(NOT_A_WARC, self._not_a_warc("no WARC record"))
                    return iterator.damage_offset()
                # (warcio has read the previous record to its end by now: its shortness is known)
                if iterator.truncated or (previous is not None and previous.short_by()):
                    self._note(TRUNCATED_FILE, f"truncated after record {self._complete(previous)}")
                    # a Content-Length too long swallows the records after it: look for them
                    return previous.offset if previous is not None and previous.short_by() else iterator.damage_offset()
                return None
            if not str(getattr(record, "format", "warc")).startswith("warc") \
                    or not str(getattr(record.rec_headers, "protocol", "WARC/1.")).startswith("WARC/"):
                # warcio also parses ARC, and takes any line of text for an ARC header (or, after a
                # blank line, for a WARC record without a version or a header)
                if self.records == 0:
                    self._note(NOT_A_WARC, self._not_a_warc(f"warcio read it as {record.format}"))
                else:
                    self._note(CORRUPT_FILE, f"unreadable after record {self._complete(previous)} "
                                             f"(not a WARC record)")
                return iterator.damage_offset()
            if previous is not None and previous.short_by():
                # (a record short of its Content-Length, and yet a record after it: its gzip member ended first, its
                # Content-Length too long or the member cut; as a Content-Length wrong in an uncompressed file
                # (`_finish`), the file is named damaged, not only the record counted `truncated`)
                self._stop(CORRUPT_FILE, f"record {previous.number}: {previous.short_by():,} bytes short of its "
                                         f"Content-Length (its gzip member ends first)")
            self.records += 1
            self.records_recovered += resumed
            fields = header_fields(record.rec_headers)
            item = WarcRecord(self.records, record, fields.get("warc-target-uri") or "",
                              http_header(record, "Content-Type"), reader=iterator.reader, fields=fields, arc=self.arc)
            item.offset = self._last = iterator.damage_offset()
            missing = getattr(record, "block_missing", None)
            broken = None if missing else _broken_headers(record, fields)
            if missing or broken:  # where this record ends is unknown: look for the next one from its start
                item.skip, item.detail = TRUNCATED, missing or broken
                if missing:  # (cut after, or inside, its WARC headers: the file, or its gzip member, ends there)
                    self._note(TRUNCATED_FILE, f"truncated after record {self.records - 1}")
                else:
                    self._note(CORRUPT_FILE, f"record {self.records}: {broken}")
                yield item
                return item.offset
            self._bound_past_the_end(item, iterator)
            try:
                self._judge(item)
            except ReadError:  # (never yielded: not counted)
                self.records -= 1
                self.records_recovered -= resumed
                raise
            except _NOT_DAMAGE:
                raise
            except Exception as exc:  # the container is damaged inside this record's payload
                item.payload, item.skip = None, TRUNCATED
                item.detail = f"unreadable payload: {describe(exc)}"
            previous = item
            yield item
            wrong = self._finish(item)
            if wrong:  # where this record really ends is unknown: look for the next one from its start
                self._note(CORRUPT_FILE, f"record {item.number}: {wrong}")
                return item.offset

    def _bound_past_the_end(self, item: WarcRecord, iterator) -> None:
        """An uncompressed record whose Content-Length runs past the end of the file ends where the next record that
        starts after it starts (`next_record_start`), if one does: its block is read up to there, not to the end of
        the file, and the record is ``truncated`` (its Content-Length wrong).  Each such record read the rest of the
        file before reading resynchronised from its start, so a file of them (every Content-Length too long) took the
        square of its size: 1,000 records (2.9 MB) 2.4 s, 10,000 (29 MB) minutes.  (In a .warc.gz the record's gzip
        member ends it; a last record cut short has no record after it and is read to the end, as before.)"""
        limit = getattr(item._limit_reader, "limit", None)
        reader = iterator.reader
        if self._head is None or reader.decompressor is not None or not isinstance(limit, int) or limit <= 0 \
                or item.offset is None:
            return
        here = self.fileobj.tell()
        position = here - reader.rem_length()  # (where the block's unread bytes start: warcio buffers ahead)
        if position + limit <= self._size:  # (the size when reading began: a record within it is not looked at)
            return
        try:
            size = self.fileobj.seek(0, os.SEEK_END)
            if position + limit <= size:
                return
            try:
                start = next_record_start(self.fileobj, item.offset, False)
            except ResyncGaveUp:
                return
        finally:
            self.fileobj.seek(here)
        if start is None or start < position:
            return
        item._limit_reader.limit = start - position
        item._ending = (f"its Content-Length is wrong: it runs {position + limit - size:,} bytes past the end of the "
                        f"file, over the next record (at byte {start:,})")

    def _gzip_after_plain(self, iterator, previous: WarcRecord | None) -> bool:
        """Whether warcio failed at a gzip member that inflates to a WARC record, right after a whole uncompressed
        record (a .warc and a .warc.gz joined by cat, or a writer that wrote some records uncompressed): warcio's
        reader, once it has read a record uncompressed, reads the rest of the file so, and such a member was no
        record to it.  The records from it on were lost ("unreadable after record N", none counted), as a
        .warc.gz's resynchronisation skips the member it failed at and a .warc's looks for uncompressed records
        only.  If so, reading goes on at the member (`_plain_then_gzip`), once for each such offset."""
        start = iterator.damage_offset()
        if iterator.reader.decompressor is not None or self._head is None or start <= self._gzip_resumed_at \
                or previous is None or previous.short_by() or previous.wrong_length() is not None \
                or not _is_warc_member(self.fileobj, start):
            return False
        self._gzip_resumed_at = self._plain_then_gzip = start
        return True

    def _finish(self, item: WarcRecord) -> str | None:
        """Read what the consumer left of the record (as warcio would next) and say why it does
        not end where its Content-Length says, if it does not."""
        try:
            while item._limit_reader.read(_CHUNK):
                pass
        except _NOT_DAMAGE:
            raise
        except Exception:  # noqa: BLE001 - damage inside the payload: warcio meets it next and it is counted
            return None
        return item.wrong_length()

    def _not_warc_start(self) -> bool:
        """Whether the file's first bytes show it is no WARC (unknown when it is not seekable)."""
        return self._head is not None and not looks_like_warc(self._head) and not self.arc

    def _not_a_warc(self, why: str) -> str:
        """"not a WARC file: " and what the file is, by its first bytes (else what warcio said)."""
        if self.arc:  # (its filedesc:// line, and no record warcio could read after it)
            return f"an ARC file with no readable record ({why})"
        if self._head is not None and not looks_like_warc(self._head):
            return f"not a WARC file: {what_file_is(self._head)}"
        return f"not a WARC file ({why})"

    def _note(self, problem: str, detail: str) -> None:
        self._damage = (problem, detail)

    def _complete(self, last: WarcRecord | None) -> int:
        """How many records were read whole, when reading stopped after `last`."""
        return self.records - 1 if last is not None and last.short_by() else self.records

    def _judge(self, item: WarcRecord) -> None:
        """Set the record's payload, or its skip reason."""
        record, content_type = item.record, item.content_type
        if record.rec_type == "conversion" and self._conversion_is_text(item):
            # (a cleaned WET record read back: text already cut down, as a cleaned response's)
            self._judge_page_text(item, CLEANED_TEXT if is_cleaned_record(record) else PAGE_TEXT)
            return
        too_long = getattr(record, "headers_too_long", None)
        if too_long:  # (partly read: never copied; the rest is still read to its end, where the next record starts)
            item.skip, item.detail = TOO_LARGE, too_long
            return
        if record.rec_type in ("conversion", "resource"):
            # (a page's bytes without an HTTP response: its WARC Content-Type says what they are)
            content_type = item.content_type = own_content_type(record)
            if not self._block_is_html(item):
                item.skip = NOT_RESPONSE
                return
            if record.rec_type == "resource":  # skipped, as datatrove's WarcReader skips it, but named
                item.skip = HTML_RESOURCE
                return
        elif record.rec_type == "revisit":  # (a deduplicating crawler's: its page is that of an earlier capture)
            item.skip = REVISIT
            return
        elif record.rec_type != "response":
            item.skip = NOT_RESPONSE
            return
        elif _is_plain_text(content_type) and is_cleaned_record(record):  # a cleaned WARC read back: text already
            self._judge_page_text(item, CLEANED_TEXT)
            return
        raw_stream = record.raw_stream
        identified = item.fields.get("warc-identified-payload-type")
        headers, start = record.http_headers, b""
        split = split_unended_headers(record.http_unended) if getattr(record, "http_unended", None) else None
        if split is not None:  # no blank line after its headers, or no headers: its page is in what warcio took
            headers, start = split
            content_type = item.content_type = headers.get_header("Content-Type")
        interim = b""
        if split is None and _is_interim(headers):  # 100 Continue, 103 Early Hints: the response follows them
            try:
                headers, interim = final_response_headers(headers, raw_stream)
            except TooLarge as exc:
                item.skip, item.detail = TOO_LARGE, str(exc)
                return
            record.raw_stream = raw_stream = _Prefixed(interim, raw_stream)  # (a copy: the block as it came)
            content_type = item.content_type = _header(headers, "Content-Type")
        status = headers.get_statuscode() if headers is not None else ""
        if len(status) == 3 and status[0] in "345":  # (whatever its type: the server's note, not the page)
            item.skip, item.detail = REDIRECT_OR_ERROR, f"HTTP status {status}"
            return
        head = start[:_SNIFF_BYTES]
        if not (content_type or identified or "").strip() and not start:  # undeclared: sniff, keeping the bytes
            head = raw_stream.read(_SNIFF_BYTES)
            record.raw_stream = _Prefixed(head, raw_stream)
        if not is_html_type(content_type, identified, head):
            item.skip = NOT_HTML
            return
        stored = self._read_whole(item)  # (the sniffed head included)
        if stored is None:
            return
        raw = start + stored[len(interim):]
        if len(raw) > self.max_payload_bytes:
            item.skip, item.detail = TOO_LARGE, f"more than {self.max_payload_bytes:,} bytes"
            return
        cut = item.cut_by_crawler is not None
        deadline = Deadline(self.read_timeout).start()
        try:
            body = raw
            # Transfer-Encoding is a list too (``gzip, chunked``): chunked last, the others undone after it,
            # before the Content-Encoding (it was compared whole with "chunked": such a body was left as stored)
            http = header_fields(headers)
            transfer = [c.strip() for c in (http.get("transfer-encoding") or "").lower().split(",")]
            if "chunked" in transfer:
                body = dechunk(body, deadline)
            codings = [http.get("content-encoding") or ""] + [c for c in transfer if c != "chunked"]
            body = decode_content(body, ", ".join(codings), self.max_payload_bytes, deadline, cut)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return
        except Undecodable as exc:
            item.skip, item.detail = UNDECODABLE, str(exc)
            return
        if is_blank(body):
            item.skip = EMPTY_PAYLOAD
            return
        kind = binary_kind(body[:_SNIFF_BYTES])
        if kind is not None:  # declared HTML, but a PDF, an image, an archive ...: never text
            item.skip, item.detail = NOT_HTML, f"its bytes are {kind}, not HTML"
            record.raw_stream = io.BytesIO(stored)  # (for a copy: the payload as it came)
            return
        item.payload = body
        self.pages_cut_by_crawler += cut

    @staticmethod
    def _conversion_is_text(item: WarcRecord) -> bool:
        """Whether a ``conversion`` record's block is a page's text (a WET record's): by its own Content-Type,
        text/plain; without one (or with warcio's default, `own_content_type`), as datatrove's WarcReader
        judges it: by its WARC-Identified-Payload-Type, else by its bytes (kept for a copy), which are text
        unless they start as HTML (a PDF's, an image's are then `_judge_page_text`'s ``not_html``, a blank
        block its ``empty_payload``)."""
        record = item.record
        declared = own_content_type(record)
        if declared:
            return _is_plain_text(declared)
        identified = item.fields.get("warc-identified-payload-type")
        if (identified or "").strip():
            return _is_plain_text(identified)
        head = record.raw_stream.read(_SNIFF_BYTES)
        record.raw_stream = _Prefixed(head, record.raw_stream)
        return not is_html_type(None, None, head)

    @staticmethod
    def _block_is_html(item: WarcRecord) -> bool:
        """Whether a record whose block is a page's bytes, no HTTP response (conversion, resource), holds
        HTML: by its identified payload type, else its Content-Type, else its bytes (kept for a copy)."""
        record = item.record
        identified = item.fields.get("warc-identified-payload-type")
        head = b""
        if not (item.content_type or identified or "").strip():
            head = record.raw_stream.read(_SNIFF_BYTES)
            record.raw_stream = _Prefixed(head, record.raw_stream)
        return is_html_type(item.content_type, identified, head)

    def _read_whole(self, item: WarcRecord) -> bytes | None:
        """The record's block (its payload, as stored) up to the cap; None, with the skip set, when
        it is over the cap or the record is not whole (fewer bytes than its Content-Length, or its
        page goes on past it)."""
        try:
            raw = read_capped(item.record.raw_stream, self.max_payload_bytes)
        except TooLarge as exc:
            item.skip, item.detail = TOO_LARGE, str(exc)
            return None
        if item.short_by():  # fewer bytes than its Content-Length
            item.skip, item.detail = TRUNCATED, f"{item.short_by():,} bytes short of its Content-Length"
            return None
        if item.wrong_length():  # its page goes on past its Content-Length: not a whole page
            item.skip, item.detail = TRUNCATED, item.wrong_length()
            return None
        return raw

    def _judge_page_text(self, item: WarcRecord, kind: str = PAGE_TEXT) -> None:
        """A WET record (its block is the page's text, no HTTP headers) or a cleaned record (its HTTP
        payload is): UTF-8 text, no encoding."""
        item.kind = kind
        if item.record.rec_type == "conversion":  # (a cleaned record's is its HTTP Content-Type)
            item.content_type = own_content_type(item.record)
        raw = self._read_whole(item)
        if raw is None:
            return
        if is_blank(raw):
            item.skip = EMPTY_PAYLOAD
            return
        kind = binary_kind(raw[:_SNIFF_BYTES])
        if kind is not None:  # declared text, but a PDF, an image ...: never text
            item.skip, item.detail = NOT_HTML, f"its bytes are {kind}, not text"
            item.record.raw_stream = io.BytesIO(raw)  # (for a copy: the payload as it came)
            return
        item.payload = raw
        self.pages_cut_by_crawler += item.cut_by_crawler is not None


# The Content-Type warcio writes for a record given none (its writer's default): says nothing of the block.
WARCIO_DEFAULT_TYPE = "application/warc-record"


def own_content_type(record) -> str | None:
    """A record's WARC Content-Type, if it has one of its own: None when absent, blank, or warcio's default
    (`WARCIO_DEFAULT_TYPE`)."""
    declared = (record.rec_headers.get_header("Content-Type") or "").strip()
    return declared if declared and declared.split(";", 1)[0].strip().lower() != WARCIO_DEFAULT_TYPE else None


def _is_plain_text(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "text/plain"



def _broken_headers(record, fields: dict[str, str]) -> str | None:
    """Why a record's WARC headers (`fields`: `header_fields`) cannot be trusted to say where it ends, or None."""
    declared = fields.get("content-length")
    if record.length is None or declared is None:  # (warcio would read on to the end of the file)
        return "no Content-Length: where the record ends is unknown"
    if not declared.strip().isdecimal():  # (warcio reads it as 0 and loses its place; int() takes no "²")
        return f"its Content-Length is not a number of bytes ({declared.strip()[:20]!r})"
    if len(fields) == len(record.rec_headers.headers):  # (no name twice)
        return None
    names = [name.lower() for name, _ in record.rec_headers.headers]
    if names.count("warc-type") > 1 or names.count("warc-record-id") > 1:
        return "its headers run into the next record's (a record cut short)"
    return None
