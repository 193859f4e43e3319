"""warcio's reading, adapted: its ArchiveIterator (`_archive_iterator`) and record loader (`_record_loader`), as
`warc_files.WarcFile` reads through them.

The iterator notes where each record starts and whether it ended inside a gzip member (where warcio stops
silently); it reads a .warc.gz gzipped as one member, a record whose bytes a writer cut across gzip members, and
blank lines or NULs between members, and inflates the members by ISA-L where it is installed
(`_gzip_member_decompressors`).  The loader parses a record's HTTP block by what the record is (not by how its
URI is spelled), reads its header lines bounded (`record_headers._HeaderLines`), and notes a record whose block is
missing or whose HTTP headers run on with no blank line.

warcio itself is not patched: its classes are subclassed, and one iterator's reader gets methods of its own.
warcio is imported on first use.
"""

from __future__ import annotations

import re
import zlib

from ..errors import TooLarge
from .read_limits import MAX_HEADER_BYTES
from .record_headers import _HeaderLines
from .warc_resync import _GAP_BYTES, _GZIP_MEMBER


def _truncated(iterator) -> bool:
    """Whether warcio's reader stands inside a gzip member."""
    reader = getattr(iterator, "reader", None)
    decompressor = getattr(reader, "decompressor", None) if reader is not None else None
    return decompressor is not None and not getattr(decompressor, "eof", True)


def _gzip_member_decompressors():
    """A maker of decompressors for the gzip members of a .warc.gz: ISA-L's inflate (python-isal,
    a dependency where it has wheels) at about twice zlib's speed, the same bytes out; zlib's where
    it is not installed.  (Looked up once per file, not per member: where isal is absent, each
    import attempt would search the path again.)"""
    try:
        from isal import isal_zlib
    except ImportError:
        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    return lambda: isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)


# An ARC v2 header line (the Internet Archive's Alexa-era files): URL IP date content-type result-code checksum
# location offset filename length.  warcio parses v1's five fields (URL IP date content-type length) from the right, so
# a v2 record's URI was "http://a/p%201.2.3.4%2020080101000000%20text/html%20200%20..." and its date 1900-12-31.
_ARC_V2 = re.compile(r"(.+) (\S+) (\d{14}) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\d+)\s*")


def _arc_v1_line(line):
    """An ARC header line (bytes, or str as warcio passes it on after trying it as a WARC line) as v1 has it: a v2
    line's URL, IP, date, content type and length; any other as it is."""
    text = line.decode("latin-1") if isinstance(line, bytes) else line
    v2 = _ARC_V2.fullmatch(text) if isinstance(text, str) else None
    if not v2:
        return line
    v1 = " ".join(v2.group(1, 2, 3, 4, 10)) + "\n"
    return v1.encode("latin-1") if isinstance(line, bytes) else v1


def _record_loader(arc: bool = False):
    """warcio's record loader, parsing a record's HTTP block by what the record is, not by how its
    URI is spelled: warcio parses it only when WARC-Target-URI starts with ``http:`` or ``https:``,
    so a response for ``HTTP://EX.COM/x`` or ``example.com/x`` kept its HTTP headers in its
    payload.  Here a request, response or revisit record's block is HTTP when its Content-Type
    says ``application/http``, or its URI's scheme (in any case) is http or https.  (The URI
    itself is only ever metadata.)  `arc`: an ARC file's records converted to WARC's (ArchiveIterator's arc2warc)."""
    from warcio.recordloader import ARC2WARCHeadersParser, ArcWarcRecordLoader

    class ArcParser(ARC2WARCHeadersParser):
        def parse(self, stream, headerline=None):
            return super().parse(stream, _arc_v1_line(stream.readline() if headerline is None else headerline))

    class RecordLoader(ArcWarcRecordLoader):
        block_type = ""
        headers_too_long = None

        def parse_record_stream(self, stream, *args, **kwargs):
            self.headers_too_long = self.http_unended = self.block_missing = self.http_read = None
            record = super().parse_record_stream(stream, *args, **kwargs)
            record.http_read = self.http_read  # (`warc_writer.copy_record` writes them back where warcio would not)
            record.headers_too_long = self.headers_too_long  # (`WarcFile._judge` skips it as too_large)
            record.http_unended = self.http_unended  # (`WarcFile._judge` finds its payload in them)
            record.block_missing = self.block_missing  # (`WarcFile._judge` skips it as truncated)
            return record

        def _ensure_target_uri_format(self, rec_headers):
            # warcio's (the <...> of wget 1.19's bug taken off, spaces percent-encoded), without its warning: one
            # WARNING line a record, the URI quoted as it came (a crawl of 1,000 such URIs: 1,000 lines on stderr in
            # plexity clean and plexity run alike; an ESC or BEL of the URI sent to the terminal)
            uri = rec_headers.get_header("WARC-Target-URI")
            if uri is not None and uri.startswith("<") and uri.endswith(">"):
                uri = uri[1:-1]
                rec_headers.replace_header("WARC-Target-URI", uri)
            if uri is not None and " " in uri:
                uri = uri.replace(" ", "%20")
                rec_headers.replace_header("WARC-Target-URI", uri)
            return uri

        def _detect_type_load_headers(self, stream, statusline=None, known_format=None):
            if statusline is not None and len(statusline) > MAX_HEADER_BYTES:
                raise TooLarge(f"a line of more than {MAX_HEADER_BYTES:,} bytes where a record should start")
            # (over the bound: TooLarge, the record unreadable; reading resumes at the next record)
            lines = _HeaderLines(stream, "WARC")
            the_format, rec_headers = super()._detect_type_load_headers(lines, statusline, known_format)
            if lines.ended:  # (no blank line after them: the file, or its gzip member, ends in them)
                self.block_missing = "the file ends in its WARC headers"
            self.block_type = ((rec_headers.get_header("Content-Type") or "").lower()
                               if the_format in ("warc", "arc2warc") else "")
            return the_format, rec_headers

        def load_http_headers(self, rec_type, uri, stream, length):
            uri = uri or ""  # (no WARC-Target-URI: warcio called None.startswith, and the whole record was lost)
            if rec_type in self.HTTP_RECORDS and ("application/http" in self.block_type
                                                  or (uri or "").lower().startswith(self.HTTP_SCHEMES)):
                uri = "http:"  # (what warcio's own check asks of it)
            lines = _HeaderLines(stream, "HTTP", keep=True)
            self.http_read = lines.lines  # (the block's bytes warcio read as HTTP headers, whatever it made of them)
            try:
                headers = super().load_http_headers(rec_type, uri, lines, length)
            except TooLarge as exc:  # (the record's end is known: it alone is skipped)
                self.headers_too_long = str(exc)
                return None
            except EOFError:
                # Nothing where its block should start, though its Content-Length is not 0: the file (or the
                # record's gzip member, with no member going on with it) ends after its WARC headers.  warcio's
                # iterator took the EOFError for the end of the file and stopped: the record was lost, the file
                # not named damaged.  (An empty revisit is warcio's own case: it returns None.)
                self.block_missing = self.block_missing or "the file ends after its WARC headers: its block is missing"
                return None
            self.http_unended = lines.unended() if headers is not None else None
            if lines.ended and (getattr(stream, "limit", 0) or 0) > 0:
                # (its headers ran to the end of the file, or of its gzip member with no member going on with it,
                # before its Content-Length: counted not_html, or not_response, by plexity run, truncated by plexity
                # clean once it had copied it)
                self.block_missing = self.block_missing or \
                    "the file ends in its HTTP headers: the rest of its block is missing"
            return headers

    loader = RecordLoader(verify_http=False, arc2warc=arc)  # (ArchiveIterator's own settings)
    if arc:  # (v1 and v2 header lines alike)
        loader.arc_parser = ArcParser()
    return loader


_GAP_BLOCK = 1 << 14


def _skip_gap(fh, unused: bytes) -> bytes | None:
    """What follows the whitespace or NULs at the start of `unused` (the bytes after a gzip member), reading
    on from `fh` while there is only that, up to `MAX_HEADER_BYTES` of it; None at the end of
    the file."""
    rest, seen = unused.lstrip(_GAP_BYTES), len(unused)
    while not rest:
        block = fh.read(_GAP_BLOCK)
        if not block:
            return None
        seen += len(block)
        rest = block.lstrip(_GAP_BYTES)
        if seen > MAX_HEADER_BYTES:  # (more than a gap: read as warcio would, as damage)
            return rest or block
    return rest


_CONTINUATION_PEEK = 512  # bytes of the next gzip member to inflate its start from


def _member_continues_record(iterator, record_open: bool) -> bool:
    """Whether warcio's reader (of `iterator`) stands at the end of a gzip member that a gzip member
    follows which does not start a WARC record: the rest of the record being read (`record_open`), or
    the blank lines that end the record just read (a member of them alone); if so, the reader moves to
    it.  A member that does not inflate, bytes that are no gzip member, or the end of the file: no."""
    reader, fh = iterator.reader, iterator.fh
    decompressor = reader.decompressor
    if decompressor is None or not decompressor.eof:
        return False
    data = unused = decompressor.unused_data
    start = fh.tell() - len(unused)
    seekable = getattr(fh, "seekable", None)
    if len(data) < _CONTINUATION_PEEK and seekable is not None and seekable():
        # (the member ended near the end of the block read; an unseekable file is not read further:
        # the bytes read decide)
        data += fh.read(_CONTINUATION_PEEK - len(data))
    if _GZIP_MEMBER.match(data):
        peek = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            head = peek.decompress(data, 64)
        except zlib.error:
            head, peek = b"", None
        rest = peek is not None and (head or peek.eof) and not head.lstrip(b"\r\n").startswith(b"WARC/")
        if rest and (record_open or (head and peek.eof and not head.strip(b"\r\n"))):
            reader.starting_data = data
            reader._init_decomp(reader.decomp_type)
            iterator.previous_member_start, iterator.member_start = iterator.member_start, start
            return True
    if len(data) > len(unused):
        fh.seek(start + len(unused))  # (the bytes looked at are read again, as the next member's)
    return False


def _archive_iterator(fileobj, arc: bool = False):
    """warcio's ArchiveIterator, noting (in `truncated`) that it ended inside a gzip member,
    where warcio itself stops silently, and where the record being read starts
    (`damage_offset`); a .warc.gz gzipped as one member read whole (warcio's iterator stops
    there with an error meant for replay tools); its gzip members inflated by
    `_gzip_member_decompressors` (inflating is most of the time spent reading a .warc.gz).  `arc`: the file is an
    ARC (WARC's predecessor, `input_files.looks_like_arc`), its records read as warcio converts them to WARC's."""
    from warcio.archiveiterator import ArchiveIterator

    class CheckedArchiveIterator(ArchiveIterator):
        truncated = False
        parsing, block = False, None  # (the record being read: `record_open`)
        INC_RECORD = ""  # (warcio writes a warning to stderr for a wrong Content-Length: counted here instead)

        def close(self):
            self.truncated = self.truncated or _truncated(self)
            super().close()

        def _raise_invalid_gzip_err(self):  # one gzip member holding several records: read on
            pass

        def _next_record(self, next_line):
            reader = self.reader
            if reader.decompressor is None:
                self.record_start = self.fh.tell() - reader.rem_length() - len(next_line or b"")
            else:
                # warcio moves on to the next gzip member while bytes of the last one (after a
                # Content-Length too short) are still buffered: those are read first
                buffered = bool(next_line) or (reader.buff is not None and reader.buff.tell() < reader.buff_size)
                self.record_start = self.previous_member_start if buffered else self.member_start
            self.block, self.parsing = None, True
            try:
                record = super()._next_record(next_line)
            finally:
                self.parsing = False
            self.block = record.raw_stream  # (warcio's LimitReader: its `limit` is what the record still holds)
            return record

        def record_open(self) -> bool:
            """Whether the record being read is not whole yet: its headers are being read, or its
            Content-Length says more of its block is due."""
            return self.parsing or (getattr(self.block, "limit", 0) or 0) > 0

        def damage_offset(self) -> int:
            """Where the record being read starts: its gzip member's first byte, or its first line."""
            return self.record_start

    iterator = CheckedArchiveIterator(fileobj, arc2warc=arc)
    iterator.loader = _record_loader(arc)
    reader = iterator.reader
    iterator.member_start = iterator.previous_member_start = iterator.record_start = iterator.offset
    # warcio makes a decompressor per gzip member from its class-wide table: this reader's own
    # table, and its first member's decompressor (nothing is read yet).
    gzip_member = _gzip_member_decompressors()
    reader.DECOMPRESSORS = {**reader.DECOMPRESSORS, "gzip": gzip_member}
    if reader.decomp_type == "gzip":
        reader.decompressor = gzip_member()
    next_member = reader.read_next_member

    def read_next_member():
        # the next member starts where the bytes read from the file, less those after this member, end
        unused = getattr(reader.decompressor, "unused_data", b"") if reader.decompressor is not None else b""
        if unused and unused[:1] in _GAP_BYTES:  # blank lines or NULs after a member: not damage
            rest = _skip_gap(iterator.fh, unused)
            if rest is None:  # (only blank lines to the end: no member follows)
                return False
            iterator.previous_member_start, iterator.member_start = iterator.member_start, \
                iterator.fh.tell() - len(rest)
            reader.starting_data = rest
            reader._init_decomp(reader.decomp_type)
            return True
        start = iterator.fh.tell() - len(unused or b"")
        moved = next_member()
        if moved:
            iterator.previous_member_start, iterator.member_start = iterator.member_start, start
        return moved

    reader.read_next_member = read_next_member
    # (the ended member's decompressor last found not to go on: asked again on every read; whether
    # `empty` is filling the buffer from the next member, which asks `empty` again)
    judged, filling = [None], [False]

    def empty():
        # A writer may cut one record's bytes across gzip members: where a member ends inside a
        # record (its headers, or fewer bytes than its Content-Length), the next member goes on
        # with it, unless that one starts a record (then this one was cut short: `truncated`).
        buff = reader.buff
        if buff is not None and buff.tell() < reader.buff_size:
            return False
        decompressor = reader.decompressor
        if decompressor is None or decompressor is judged[0] or not decompressor.eof or filling[0]:
            return True
        filling[0] = True
        try:
            while True:  # (each turn moves past a member's bytes, or stops: linear in the file)
                if not _member_continues_record(iterator, iterator.record_open()):
                    judged[0] = reader.decompressor
                    return True
                reader._fillbuff()
                if reader.buff is not None and reader.buff.tell() < reader.buff_size:
                    return False
                if not reader.decompressor.eof:  # (a member that needs more bytes than the file holds)
                    return True
        finally:
            filling[0] = False

    reader.empty = empty
    next_line = reader.readline

    def readline(length=None):  # (the blank lines between records: a garbage line is read up to the bound)
        return next_line(MAX_HEADER_BYTES + 1 if length is None else length)

    reader.readline = readline
    decompress = reader._decompress

    def _decompress(data):
        # A gzip member that fails partway (a flipped bit: "invalid lookback distance", "incorrect checksum"): warcio
        # wrote zlib's message to stderr, naming no file, and read the member as ending there (its record truncated,
        # the file not named damaged).  Raised, as zlib.error whatever the inflater: the record is truncated, the
        # file corrupt, and reading resumes at the next member.
        if reader.decompressor is None or not data or not reader.num_block_read:
            return decompress(data)  # (a first block that does not inflate: warcio reads the file uncompressed)
        try:
            return reader.decompressor.decompress(data)
        except Exception as exc:  # noqa: BLE001 - zlib's or ISA-L's error, one type for the readers to catch
            raise zlib.error(f"a gzip member does not inflate: {exc}") from None

    reader._decompress = _decompress
    return iterator
