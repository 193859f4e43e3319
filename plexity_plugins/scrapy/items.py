"""Reading a crawled item: a field's one value (out of an ItemLoader's list of one), the response's Content-Type the
item holds, what names the item (its URL) in a log line and the dropped file, and what a spider yielded that is no
item, or gave in place of its page (a response, a selector), with what to give instead."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

# Absolute imports, in every module of this package: its name does not shadow the real Scrapy.
from itemadapter import ItemAdapter

from ..io.decoding import declared_content_type


def item_content_type(adapter: ItemAdapter, field: str | None) -> str | None:
    """The response's Content-Type (or charset) an item's `field` (PLEXITY_ENCODING_FIELD) holds, as `decode_html`
    reads the HTTP header's; None when it holds none.  TypeError when it holds something else (a number, a dict)."""
    declared = _one(adapter.get(field)) if field else None
    if declared is None or isinstance(declared, (str, bytes)):
        return declared_content_type(declared)
    raise TypeError(f"{field!r} holds {type(declared).__name__}")


def _not_an_item(output: Any) -> tuple[str, str]:
    """(source, what it is and what to yield instead) for an object itemadapter cannot read, which no pipeline
    or exporter of Scrapy's own takes as an item ("No adapter found for objects of type ..."): a generator,
    list or tuple (``yield response.follow_all(...)``: its requests are never sent), a response, a string or
    a number, an object of a class of the project's own."""
    from scrapy.http import Request, Response

    if isinstance(output, Response):
        return output.url, ("a response, not an item: yield an item made of it "
                            "({'url': response.url, 'html': response.body})")
    if isinstance(output, Request):  # (one yielded alone is scheduled; here only from another component)
        return output.url, "a request, not an item: the item pipelines never send it"
    name = type(output).__name__
    # (a generator, map(), ...; a namedtuple or other subclass is an object of the project's own)
    if type(output) in (list, tuple, set, frozenset) or isinstance(output, (Iterator, AsyncIterator)):
        return name, f"a {name}, not an item: yield each of its requests or items (yield from ...)"
    if isinstance(output, (str, bytes, int, float)):
        return name, (f"a {name}, not an item ({repr(output)[:60]}): yield a dict, "
                      f"{{'url': response.url, 'html': response.body}}")
    return name, (f"a {name}, not an item itemadapter reads: yield a dict, scrapy.Item, dataclass or attrs "
                  f"object, or register an adapter for {name} (itemadapter's ItemAdapter.ADAPTER_CLASSES)")


def _what_to_give(value: Any) -> str:
    """For an input field holding a Scrapy response or selector instead of its page, or a coroutine (a
    scrapy-playwright page's ``page.content()`` not awaited): what to give."""
    import inspect

    from parsel import Selector, SelectorList
    from scrapy.http import Response

    if inspect.isawaitable(value):  # (awaited, it gives the page; the drop said "holds coroutine", not why)
        name = getattr(value, "__qualname__", type(value).__name__)
        return (f" ({name}() not awaited): await it in an async def callback, "
                f"{{'html': await page.content()}} for a scrapy-playwright page")
    if isinstance(value, Response):
        return ": give response.body (and its Content-Type in the PLEXITY_ENCODING_FIELD field)"
    if isinstance(value, Selector):
        return ": give its HTML, .get()"
    if isinstance(value, SelectorList):
        return ": give their HTML, .getall()"
    return ""


MAX_SOURCE_CHARS = 2000  # of an item's url, in a log line (the dropped file keeps it whole)


def _item_source(url: Any, item: Any) -> str:
    """What names an item in a log line and the dropped file: its `url`, as text.  (A url given as bytes, as a
    spider that took it from a page's bytes gives it, was written ``b'https://...'``; one that is no URL, a number
    or a dict, its repr as if it were one.)"""
    if isinstance(url, (bytes, bytearray)):
        return bytes(url).decode("utf-8", "replace")
    if isinstance(url, str):
        return url
    if url is None or url == "":
        return type(item).__name__
    kind = type(url).__name__
    return f"{type(item).__name__} whose url is {'an' if kind[0] in 'aeiouAEIOU' else 'a'} {kind}"


def _one(value: Any) -> Any:
    """A field's value, out of the list of one an ItemLoader without ``TakeFirst`` makes of it (Scrapy's
    ``ItemLoader`` gives every field as a list)."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    return value
