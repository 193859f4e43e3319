"""Code paths that the oldest versions pyproject.toml allows took differently (docs/install.md#oldest-versions)."""

from __future__ import annotations

import io

import lxml.etree
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from plexity_plugins.extractors import limits
from plexity_plugins.io.warc_writer import cleaned_conversion_record, cleaned_response_record


class Warcio170Writer(WARCWriter):
    """warcio's writer with a new record's headers as warcio 1.7.0 and 1.7.1 built them: the version line in
    `statusline`, `protocol` empty (1.7.2 and later: in `protocol`, `statusline` empty)."""

    def create_warc_record(self, *args, **kwargs):
        record = super().create_warc_record(*args, **kwargs)
        headers = record.rec_headers
        headers.statusline, headers.protocol = headers.protocol or headers.statusline, ""
        return record


def _written(make, writer_class) -> bytes:
    out = io.BytesIO()
    writer = writer_class(out, gzip=False)
    writer.write_record(make(writer, "The council approved the budget.", uri="http://example.org/",
                             date="2024-06-10T09:30:07Z", version="WARC/1.1"))
    return out.getvalue()


def test_a_cleaned_record_has_one_version_line_whichever_way_warcio_holds_it():
    # (before, with warcio 1.7.0: "WARC/1.1 WARC/1.0", a line no WARC reader takes, on every cleaned record)
    for make in (cleaned_response_record, cleaned_conversion_record):
        for writer_class in (WARCWriter, Warcio170Writer):
            data = _written(make, writer_class)
            assert data.startswith(b"WARC/1.1\r\n"), (make.__name__, writer_class.__name__, data[:40])
            record = next(iter(ArchiveIterator(io.BytesIO(data))))
            assert record.rec_headers.protocol == "WARC/1.1"
            assert record.content_stream().read().endswith(b"The council approved the budget.")


def _chain(levels: int):
    root = element = lxml.etree.Element("html")
    for _ in range(levels - 1):
        element = lxml.etree.SubElement(element, "div")
    lxml.etree.SubElement(root, "p")  # (a sibling: the walk's depth goes down again)
    return root


def test_the_depth_libxml2_before_2_13_does_not_limit_is_measured_as_2_13_limits_it():
    # libxml2 2.12 (lxml 5.0-5.3's wheels) read a page 60,000 levels deep whole; trafilatura ran for minutes
    assert limits._UNLIMITED_DEPTH == (lxml.etree.LIBXML_VERSION < (2, 13))
    assert not limits.deeper_than(_chain(limits.HUGE_DEPTH), limits.HUGE_DEPTH)
    assert limits.deeper_than(_chain(limits.HUGE_DEPTH + 1), limits.HUGE_DEPTH)
    assert limits.deeper_than(_chain(20_000), limits.HUGE_DEPTH)
    assert not limits.deeper_than(_chain(3), 3) and limits.deeper_than(_chain(4), 3)
