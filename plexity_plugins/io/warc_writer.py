"""WARC helpers: writing cleaned text back as a WARC record (reading: `plexity_plugins.io.inputs`)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from warcio.statusandheaders import StatusAndHeaders

from .inputs import HTML_TYPES, http_header, is_html_type  # noqa: F401 (HTML_TYPES: kept for imports)

CLEANED_CONTENT_TYPE = "text/plain; charset=utf-8"


def http_content_type(record) -> str | None:
    return http_header(record, "Content-Type")


def is_html_response(record) -> bool:
    """A WARC response record declared HTML (Content-Type, else WARC-Identified-Payload-Type;
    `reading.WarcFile` also sniffs the payload of a record that declares nothing)."""
    return record.rec_type == "response" and is_html_type(
        http_content_type(record), record.rec_headers.get_header("WARC-Identified-Payload-Type"))


def cleaned_response_record(writer, text: str, *, uri: str, date: str | None = None,
                            source_record_id: str | None = None, extra_headers: dict | None = None):
    """A WARC response record carrying `text` as a ``text/plain; charset=utf-8`` HTTP payload."""
    payload = text.encode("utf-8")
    http_headers = StatusAndHeaders(
        "200 OK",
        [("Content-Type", CLEANED_CONTENT_TYPE), ("Content-Length", str(len(payload)))],
        protocol="HTTP/1.1",
    )
    warc_headers = {
        "WARC-Date": date or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if source_record_id:
        warc_headers["WARC-Refers-To"] = source_record_id
    for key, value in (extra_headers or {}).items():
        warc_headers[key] = str(value)
    return writer.create_warc_record(uri, "response", payload=io.BytesIO(payload),
                                     length=len(payload), http_headers=http_headers,
                                     warc_headers_dict=warc_headers)
