"""WARC helpers: writing cleaned text back as a WARC record (reading: `plexity_plugins.io.inputs`)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

CLEANED_CONTENT_TYPE = "text/plain; charset=utf-8"
CLEANED_HEADER_PREFIX = "X-Plexity-"  # the verdict and counts of a cleaned record (X-Plexity-Verdict ...)
# On every record written here: its payload is a document's text, whatever step made it (the verdict's
# headers come from the filter, and WarcResponseWriter may follow an extractor alone).
TEXT_MARKER = ("X-Plexity-Payload", "text")


def cleaned_response_record(writer, text: str, *, uri: str, date: str | None = None,
                            source_record_id: str | None = None, extra_headers: dict | None = None):
    """A WARC response record carrying `text` as a ``text/plain; charset=utf-8`` HTTP payload, marked as
    a document's text (`TEXT_MARKER`: read back as text by `is_cleaned_record`)."""
    from warcio.statusandheaders import StatusAndHeaders  # (warcio imports fsspec: not for `plexity --help`)

    payload = text.encode("utf-8")
    http_headers = StatusAndHeaders(
        "200 OK",
        [("Content-Type", CLEANED_CONTENT_TYPE), ("Content-Length", str(len(payload)))],
        protocol="HTTP/1.1",
    )
    warc_headers = {
        "WARC-Date": date or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        TEXT_MARKER[0]: TEXT_MARKER[1],
    }
    if source_record_id:
        warc_headers["WARC-Refers-To"] = source_record_id
    for key, value in (extra_headers or {}).items():
        warc_headers[key] = str(value)
    return writer.create_warc_record(uri, "response", payload=io.BytesIO(payload),
                                     length=len(payload), http_headers=http_headers,
                                     warc_headers_dict=warc_headers)


def is_cleaned_record(record) -> bool:
    """Whether a record (warcio's) is a cleaned page as `cleaned_response_record` writes it (``plexity
    clean``, ``plexity run --format warc``, `WarcResponseWriter` after any step): a ``response`` of
    ``text/plain`` with an ``X-Plexity-*`` WARC header (`TEXT_MARKER`, on every record written since;
    the verdict, or why it was skipped, on a cleaned one).  Its payload is a page's text already, to be
    read back as text; a crawl's text/plain page (robots.txt ...) carries no such header and stays a
    response that is not HTML."""
    if record.rec_type != "response" or record.http_headers is None:
        return False
    content_type = record.http_headers.get_header("Content-Type") or ""
    if content_type.split(";", 1)[0].strip().lower() != "text/plain":
        return False
    prefix = CLEANED_HEADER_PREFIX.lower()
    return any(name.lower().startswith(prefix) for name, _ in record.rec_headers.headers)
