"""WARC helpers: writing cleaned text back as a WARC record (reading: `plexity_plugins.io.warc_files`)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import uuid
from datetime import datetime, timezone

CLEANED_CONTENT_TYPE = "text/plain; charset=utf-8"
CLEANED_HEADER_PREFIX = "X-Plexity-"  # the verdict and counts of a cleaned record (X-Plexity-Verdict ...)
# On every record written here: its payload is a document's text, whatever step made it (the verdict's
# headers come from the filter, and WarcResponseWriter may follow an extractor alone).
TEXT_MARKER = ("X-Plexity-Payload", "text")
# A WET record's cleaned text is written as WET is (a conversion record whose block is the text): Common
# Crawl's Content-Type exactly (cc-pyspark's is_wet_text_record compares it whole; WET text is UTF-8).
WET_CONTENT_TYPE = "text/plain"
# The WARC headers of a WET record that say which page its text is (Common Crawl's WARC-Refers-To: the page's
# response record in the crawl's WARC), kept on its cleaned record; the Document metadata key of each
# (`WarcHtmlReader`'s, read by `WarcResponseWriter`).
WET_PAGE_HEADERS = {"WARC-Refers-To": "warc_refers_to",
                    "WARC-Identified-Content-Language": "warc_identified_content_language"}

# A cleaned record's WARC version (its first line): its source record's, so that a file of records copied and
# records cleaned is of the one version its input was (a copy is written as it was read, and a cleaned record
# takes its source's WARC-Date: WARC/1.1's fractions of a second are no WARC/1.0 date; it was WARC/1.0, warcio's
# default, in files of WARC/1.1 copies).  Without one (a dataset's document) or with another: WARC/1.1, the
# standard's current version (ISO 28500:2017), a superset of 1.0's headers that warcio, fastwarc and jwarc read.
WARC_VERSIONS = ("WARC/1.0", "WARC/1.1")
DEFAULT_WARC_VERSION = "WARC/1.1"


def copy_record(writer, record) -> None:
    """Write warcio's `record` (read by `warc_iterator`, its block not yet read past its HTTP headers) to `writer` as
    it came: its WARC headers as warcio read them, then its block, byte for byte, under its own Content-Length.

    Not with warcio's writer, which writes a record it read as a new one: its HTTP headers as it parsed them (line
    ends made CRLF, folded lines joined, under a new Content-Length, so a WARC-Block-Digest the record carried no
    longer matched its block), WARC-Block-Digest and WARC-Payload-Digest added where the record had none (after
    reading its whole payload once more into a temporary file), and, where its parse made nothing of the block's
    first lines (a first line without a space) or the record was a revisit whose URI is no http one, the block
    without those lines or without anything, under the old Content-Length: every record after it in the file was
    unreadable to a WARC reader (warcio: "Invalid WARC record")."""
    from warcio.warcwriter import GzippingWrapper

    out = GzippingWrapper(writer.out) if writer.gzip else writer.out
    if record.length is not None:  # (what warcio read of the block: an ARC record's converted headers' length is
        # its ARC header line's, which counted more than the block)
        record.rec_headers.replace_header("Content-Length", str(record.length))
    out.write(record.rec_headers.to_bytes(encoding="utf-8"))
    # (the lines warcio read as the block's HTTP headers, whatever it made of them; None where it read none)
    out.write(b"".join(getattr(record, "http_read", None) or ()))
    for chunk in iter(lambda: record.raw_stream.read(1 << 16), b""):
        out.write(chunk)
    out.write(b"\r\n\r\n")
    out.flush()


def warc_version(source: str | None) -> str:
    """The WARC version of a record made from a record of version `source` (``WARC/1.0``), or from none."""
    return source if source in WARC_VERSIONS else DEFAULT_WARC_VERSION


def _set_version(record, source: str | None) -> None:
    """Give a record warcio made the version line `warc_version(source)`.  warcio 1.7.2 and later hold a new
    record's version in its headers' `protocol`; 1.7.0 and 1.7.1 held it in `statusline` (`protocol` empty), and
    the line is the two joined: setting `protocol` alone wrote "WARC/1.1 WARC/1.0" there, which no reader takes."""
    record.rec_headers.protocol = warc_version(source)
    record.rec_headers.statusline = ""


_LINE_BREAKS = re.compile(r"[\r\n]+")
_URI_REMOVED = re.compile(r"[\t\r\n]")  # (what the WHATWG URL parser removes from a URL before it reads it)


def _str(value) -> str:
    if isinstance(value, str):
        return value
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def header_value(value) -> str:
    """`value` as the value of one WARC header line: a str (bytes as UTF-8), each run of CR and LF in it a space.
    A Document's metadata (a JSONL dataset's) may hold anything: a line break in it wrote header lines of its own
    into the record (``X-Evil: 1``), a blank line ended the headers early and the record after it was read as no
    record; a number (a date as seconds) stopped the task (warcio: "sequence item 1: expected str instance, int
    found")."""
    return _LINE_BREAKS.sub(" ", _str(value))


def target_uri(value) -> str:
    """`value` as a record's WARC-Target-URI: a str on one line, tabs and line breaks left out (as a browser's URL
    parser leaves them out of a URL), white space at its ends too, and each space inside ``%20``: a URI holds none
    (a dataset's ``http://ex.org/a b`` was written so, read back by warcio as ``a%20b`` and by fastwarc as
    ``a b``)."""
    return _URI_REMOVED.sub("", _str(value)).strip().replace(" ", "%20")


_W3C_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")  # (a WARC-Date as the standard writes it)


def now() -> datetime:
    """The time a record made now is dated: ``SOURCE_DATE_EPOCH`` (seconds since 1970, the reproducible-builds
    convention) when the environment sets it, else the clock.  Only a file's ``warcinfo`` record and a document
    without a date are dated so; a cleaned record takes its source's date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), timezone.utc)
    return datetime.now(timezone.utc)


# Record ids derived from what a record holds (uuid5 of its headers and a digest of its block), not drawn at random
# (warcio's uuid4): the same input cleaned twice gives the same record ids and the same bytes, and two records
# that differ in anything get different ids.  (They were new at every run: a cleaned WARC could not be compared
# with, or deduplicated against, the one an earlier run wrote.)
_RECORD_ID_NAMESPACE = uuid.UUID("5b0d6f0e-3c47-4f0c-9a52-6c6578697479")


def record_id(record_type: str, uri: str, headers: dict, block: bytes) -> str:
    """A WARC-Record-ID for a record of `record_type` and `uri` with these WARC `headers` and `block` (its payload,
    or its HTTP headers and payload): the same for the same record, different for any other."""
    key = json.dumps([record_type, uri, sorted(headers.items()), hashlib.sha256(block).hexdigest()],
                     ensure_ascii=False)
    return f"<urn:uuid:{uuid.uuid5(_RECORD_ID_NAMESPACE, key)}>"


def _utc(moment: datetime) -> str:
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parsed_date(value: str) -> datetime | None:
    """`value`, an ISO 8601 date of another form (``2024-01-01 12:00:00``, ``+02:00``), an HTTP date (``Mon, 01
    Jan 2024 12:00:00 GMT``) or a CDX or ARC timestamp (``20240101120000``), as a datetime; None when it is none."""
    from email.utils import parsedate_to_datetime

    def timestamp(text: str) -> datetime:
        return datetime.strptime(text, "%Y%m%d%H%M%S") if len(text) == 14 and text.isdigit() else None

    for parse in (datetime.fromisoformat, parsedate_to_datetime, timestamp):
        try:
            moment = parse(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            continue
        if moment is not None:
            return moment
    return None


def warc_date(value) -> str:
    """A record's WARC-Date of a date as a Document may hold it: a str, a datetime, or seconds since 1970 (a number,
    as datasets keep a timestamp), in UTC as the WARC standard writes it (``2024-01-01T12:00:00Z``); now when there
    is none.  A str of another form that is a date (``2024-01-01 12:00:00``, an HTTP date) is written so too: it
    was written as it was, which fastwarc reads as no date, jwarc as an error, and a CDX index splits at its space;
    one that is no date is written as it is (on one line, `header_value`)."""
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return _utc(datetime.fromtimestamp(value, timezone.utc))
        except (OverflowError, OSError, ValueError):  # (a year past 9999: said as it is)
            return str(value)
    value = header_value(value).strip() if value is not None else ""
    if value and not _W3C_DATE.fullmatch(value):
        moment = _parsed_date(value)
        if moment is not None:
            return _utc(moment)
    return value or _utc(now())


def cleaned_response_record(writer, text: str, *, uri: str, date: str | None = None,
                            source_record_id: str | None = None, extra_headers: dict | None = None,
                            version: str | None = None):
    """A WARC response record carrying `text` as a ``text/plain; charset=utf-8`` HTTP payload, marked as
    a document's text (`TEXT_MARKER`: read back as text by `is_cleaned_record`); of the WARC `version` of the
    record it was made from (`warc_version`)."""
    from warcio.statusandheaders import StatusAndHeaders  # (warcio imports fsspec: not for `plexity --help`)

    payload = text.encode("utf-8")
    http_headers = StatusAndHeaders(
        "200 OK",
        [("Content-Type", CLEANED_CONTENT_TYPE), ("Content-Length", str(len(payload)))],
        protocol="HTTP/1.1",
    )
    warc_headers = {
        "WARC-Date": warc_date(date),
        TEXT_MARKER[0]: TEXT_MARKER[1],
    }
    if source_record_id:
        warc_headers["WARC-Refers-To"] = header_value(source_record_id)
    for key, value in (extra_headers or {}).items():
        warc_headers[key] = header_value(value)
    warc_headers["WARC-Record-ID"] = record_id("response", target_uri(uri), warc_headers,
                                               http_headers.to_bytes() + payload)
    record = writer.create_warc_record(target_uri(uri), "response", payload=io.BytesIO(payload),
                                       length=len(payload), http_headers=http_headers,
                                       warc_headers_dict=warc_headers)
    _set_version(record, version)
    return record


def cleaned_conversion_record(writer, text: str, *, uri: str, date: str | None = None,
                              source_record_id: str | None = None, page_headers: dict | None = None,
                              extra_headers: dict | None = None, version: str | None = None):
    """A WET record's cleaned text as WET holds it: a ``conversion`` record whose block is `text`
    (`WET_CONTENT_TYPE`), with the record's `page_headers` (`WET_PAGE_HEADERS`) kept, so that it
    refers to the page's response record as the WET record did (else to the WET record itself), the
    verdict's ``X-Plexity-*`` headers and `TEXT_MARKER` (read back as a cleaned text, `is_cleaned_record`); of
    the WARC `version` of the WET record (`warc_version`)."""
    payload = text.encode("utf-8")
    warc_headers = {
        "WARC-Date": warc_date(date),
        "Content-Type": WET_CONTENT_TYPE,
        TEXT_MARKER[0]: TEXT_MARKER[1],
    }
    if source_record_id:
        warc_headers["WARC-Refers-To"] = header_value(source_record_id)
    for key, value in (page_headers or {}).items():
        if key in WET_PAGE_HEADERS and value:
            warc_headers[key] = header_value(value)
    for key, value in (extra_headers or {}).items():
        warc_headers[key] = header_value(value)
    warc_headers["WARC-Record-ID"] = record_id("conversion", target_uri(uri), warc_headers, payload)
    record = writer.create_warc_record(target_uri(uri), "conversion", payload=io.BytesIO(payload),
                                       length=len(payload), warc_headers_dict=warc_headers)
    _set_version(record, version)
    return record


def warcinfo_record(writer, filename: str, info: dict):
    """The ``warcinfo`` record a file written here starts with: `info`'s fields, dated `now` (``SOURCE_DATE_EPOCH``
    when set: then the whole file is the same bytes at every run), its id derived from its content (`record_id`)."""
    record = writer.create_warcinfo_record(filename, info)
    headers = record.rec_headers
    headers.replace_header("WARC-Date", _utc(now()))
    block = record.raw_stream.getvalue()
    headers.replace_header("WARC-Record-ID", record_id("warcinfo", "", {"WARC-Filename": filename or "",
                                                                       "WARC-Date": headers.get_header("WARC-Date")},
                                                       block))
    return record


def wet_page_headers(record) -> dict:
    """The `WET_PAGE_HEADERS` a record (warcio's) carries."""
    return {name: value for name in WET_PAGE_HEADERS if (value := record.rec_headers.get_header(name))}


def is_cleaned_record(record) -> bool:
    """Whether a record (warcio's) is a cleaned page as `cleaned_response_record` writes it (``plexity
    clean``, ``plexity run --format warc``, `WarcResponseWriter` after any step): a ``response`` of
    ``text/plain`` with an ``X-Plexity-*`` WARC header (`TEXT_MARKER`, on every record written since;
    the verdict, or why it was skipped, on a cleaned one), or a cleaned WET record, a ``conversion`` of
    text/plain with one (`cleaned_conversion_record`).  Its payload is a page's text already, to be
    read back as text; a crawl's text/plain page (robots.txt ...) carries no such header and stays a
    response that is not HTML, a WET record none and stays a page's whole text."""
    if record.rec_type == "conversion":
        content_type = record.rec_headers.get_header("Content-Type") or ""
    elif record.rec_type != "response" or record.http_headers is None:
        return False
    else:
        content_type = record.http_headers.get_header("Content-Type") or ""
    if content_type.split(";", 1)[0].strip().lower() != "text/plain":
        return False
    prefix = CLEANED_HEADER_PREFIX.lower()
    return any(name.lower().startswith(prefix) for name, _ in record.rec_headers.headers)
