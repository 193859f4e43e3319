"""WARC helpers: writing cleaned text back as a WARC record (reading: `plexity_plugins.io.inputs`)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from warcio.statusandheaders import StatusAndHeaders

CLEANED_CONTENT_TYPE = "text/plain; charset=utf-8"


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
