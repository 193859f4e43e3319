"""The crawl's feeds and what the pipeline writes into them: `PlexityXmlItemExporter` (the ``xml`` feed format the
add-on sets), `PlexityFields` (the stats field: its JSON as its text, in a CSV feed), and the crawl's FEEDS read for
the pipeline's warnings (a page's bytes in a JSON or CSV feed, an XML feed written by Scrapy's own exporter)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exporters import XmlItemExporter

from ..io.decoding import decode_html
from .items import item_content_type
from .settings import _field_setting


XML_EXPORTER_PATH = "plexity_plugins.scrapy.PlexityXmlItemExporter"  # (the add-on's for FEED_EXPORTERS["xml"])


class PlexityFields(dict):
    """An item's ``plexity`` field (`PLEXITY_STATS_FIELD`): a dict, whose text is its JSON.  Scrapy's CSV feed
    writes a dict field as its text: it was Python's repr (``{'plexity_reason': None, ...}``), which no reader of
    the CSV (json.loads, pandas, DuckDB, a spreadsheet) takes apart; the JSON, JSON-lines and XML feeds write it
    as the dict it is (an XML feed: `PlexityXmlItemExporter`)."""

    def __str__(self) -> str:
        return json.dumps(self, ensure_ascii=False, default=str)


# What XML 1.0 cannot hold (outside its Char production): Scrapy's exporter wrote it as it was, and an XML reader
# stopped at it ("not well-formed (invalid token)"), the items after it lost to the reader
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_value(value: Any, content_type: str | None = None) -> Any:
    """`value` as `PlexityXmlItemExporter` hands it to Scrapy's: None "" (an empty element), bytes their text
    (`decode_html`, as the pipeline decodes a page: a BOM, the response's `content_type`, ``<meta charset>``, else
    UTF-8 or the encoding the bytes are in) where Scrapy's wrote Python's ``b'...'``, and a character XML cannot hold
    U+FFFD; in a dict or list too."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        value = decode_html(bytes(value), content_type)[0]
    if isinstance(value, str):
        return _NOT_XML.sub("\ufffd", value)
    if isinstance(value, dict):
        return {key: _xml_value(item, content_type) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_xml_value(item, content_type) for item in value]
    return value


class PlexityXmlItemExporter(XmlItemExporter):
    """Scrapy's XML feed exporter, writing a field that is None (``plexity_reason`` of a kept item, in the
    ``plexity`` field; a document perplexity where there is none) as an empty element, as it writes a field the
    item does not hold: Scrapy's writes the text ``None``, which an XML reader takes for a value.  A field of bytes
    (a page given as ``response.body``) is written as its text, decoded as the pipeline decodes such a page without
    its response's charset, where Scrapy's wrote ``b'<html>\\xd0\\x91...'``; a character XML 1.0 cannot hold (a
    control character) as U+FFFD, where Scrapy's wrote a file XML readers stop at.  The add-on makes it the ``xml``
    feed format's; with the pipeline alone, ``FEED_EXPORTERS = {"xml": XML_EXPORTER_PATH}`` (the pipeline says so
    once otherwise).  The item's PLEXITY_ENCODING_FIELD (the response's Content-Type or charset) decodes its bytes,
    as the pipeline decodes them (`item_content_type`): a page served as ``charset=windows-1251`` that declares no
    charset itself was written as mojibake, read as Windows-1252."""

    def __init__(self, file, *, encoding_field: str | None = "encoding", **kwargs):
        super().__init__(file, **kwargs)
        self.encoding_field = encoding_field
        self._content_type: str | None = None  # (the item being exported's)

    @classmethod
    def from_crawler(cls, crawler, file, *args, **kwargs):
        """Scrapy's feed export makes it so: the encoding field from the crawl's settings, as the pipeline reads it."""
        field = _field_setting(crawler.settings, "PLEXITY_ENCODING_FIELD", "encoding")
        return cls(file, *args, encoding_field=field, **kwargs)

    def export_item(self, item) -> None:
        try:
            self._content_type = item_content_type(ItemAdapter(item), self.encoding_field)
        except TypeError:  # (the pipeline says so, once)
            self._content_type = None
        try:
            super().export_item(item)
        finally:
            self._content_type = None

    def serialize_field(self, field, name: str, value: Any) -> Any:
        return _xml_value(super().serialize_field(field, name, value), self._content_type)


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_feeds_with(settings, field: str, text: bool = False) -> list[str]:
    """The crawl's JSON and JSON-lines feeds (``-O items.jsonl``) that export `field`: a page given as bytes
    there fails Scrapy's JSON encoder, and the item is left out of the feed, a traceback each.  With `text`, its
    CSV feeds that export it instead: they write bytes as UTF-8 text, and fail on bytes that are not (a page in
    windows-1252 ...), leaving the item out of that feed and of the feeds after it."""
    from scrapy.exporters import CsvItemExporter, JsonItemExporter, JsonLinesItemExporter

    kinds = (CsvItemExporter,) if text else (JsonItemExporter, JsonLinesItemExporter)
    return [uri for uri, exporter, fields in _feeds(settings)
            if issubclass(exporter, kinds) and (fields is None or field in fields)]


def _feeds(settings) -> Iterator[tuple[str, type, list[str] | None]]:
    """(URI, exporter class, the fields it exports or None for all) of each of the crawl's feeds whose exporter
    loads (one that does not, Scrapy's feed exporter names itself)."""
    from scrapy.utils.misc import load_object

    exporters = settings.getwithbase("FEED_EXPORTERS")
    for uri, options in settings.getdict("FEEDS").items():
        options = dict(options or {})
        fields = options.get("fields") or settings.getlist("FEED_EXPORT_FIELDS") or None
        try:
            exporter = load_object(exporters[options.get("format")])
        except (KeyError, ImportError, NameError, ValueError):
            continue
        yield str(uri), exporter, fields


def _scrapy_xml_feeds(settings, fields: list[str]) -> list[str]:
    """The crawl's XML feeds written by Scrapy's own XmlItemExporter (not `PlexityXmlItemExporter`, not a project's
    exporter) that export one of `fields`: the pipeline alone, without the add-on that makes the xml format ours."""
    from scrapy.exporters import XmlItemExporter as ScrapyXmlItemExporter

    return [uri for uri, exporter, exported in _feeds(settings)
            if exporter is ScrapyXmlItemExporter and (exported is None or set(fields) & set(exported))]
