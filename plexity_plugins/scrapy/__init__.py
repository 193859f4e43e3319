"""Scrapy item pipeline: perplexity filtering of crawled pages.

Enable it in a project's ``settings.py``, with Scrapy's add-on (Scrapy >= 2.10)::

    ADDONS = {"plexity_plugins.scrapy.PlexityAddon": 0}

or as an item pipeline::

    ITEM_PIPELINES = {"plexity_plugins.scrapy.PerplexityFilterPipeline": 300}

Every item whose ``PLEXITY_INPUT_FIELD`` holds a page gets the page's cleaned text in
``PLEXITY_OUTPUT_FIELD`` and the counts in ``PLEXITY_STATS_FIELD``; an item with too
little text left is dropped (``DropItem``, with the reason).  The scorer is the shared
`PerplexityScorer`, so a crawl is cleaned exactly like ``plexity clean`` cleans files.

Outcomes, one per item, each counted in the crawl stats under ``plexity/``:

- ``items_cleaned``: the page was filtered and enough text remained;
- ``items_passthrough`` (and ``items_passthrough/<why>``, e.g. ``language:de``): the page
  is in another language than the model's, so its text was kept unfiltered;
- ``items_dropped`` (and ``items_dropped/<reason>``): the policy's reasons
  (`plexity_plugins.cleaning.policy`: ``too_short``, ``too_little_kept``, ``no_text_extracted``,
  ``empty_input``, ``extraction_failed``, ``other_language``) and ``memory_limit``, ``input_not_text``,
  ``no_output_field`` (the first closes the crawl: a configuration error), ``item_not_writable`` (a frozen item
  class), ``too_large``;
- ``items_without_input``: no input field (or None): passed on untouched;
- ``items_empty`` (and ``items_empty/<reason>``): the cleaned text is empty, why
  (`plexity_plugins.cleaning.policy.EMPTY_REASONS`: ``empty_input``, ``no_text_extracted``,
  ``no_sentences``, ``all_sentences_dropped``), whether the item is then dropped or not;
- ``items_dropped/not_an_item``: an object itemadapter cannot read (not a dict, Item, dataclass, attrs or
  pydantic object), which no pipeline or exporter of Scrapy's takes as an item: a generator or other iterator
  (``yield response.follow_all(...)``), a plain list, tuple or set, a response, a string, a number;
- ``items_looks_like_html``: with ``PLEXITY_INPUT_FORMAT = "text"``, an input that is an HTML
  page: cleaned as text, markup and all, with a warning naming the setting.
- ``language_label_unknown`` (besides its outcome): the ``PLEXITY_LANGUAGE_FIELD`` value names no language
  ("xx", "unknown"): read as none, the page's language identified, with a warning.
- ``items_no_markup``: with ``PLEXITY_INPUT_FORMAT = "html"``, an input without any HTML markup (a
  text/plain response, text the spider extracted): extracted all the same, with a warning naming the setting.

The CPU work (extraction, scoring) runs in a worker thread (``PLEXITY_THREADS``), so a
large page does not stall the reactor: downloads and other items go on meanwhile
(measured by ``bench/scrapy_stall.py``).

The package, by responsibility (each module imports only modules above it in this list):

- `log`: the logger every module logs to, ``plexity_plugins.scrapy``;
- `settings`: the ``PLEXITY_*`` settings, read and checked;
- `items`: reading a crawled item (a field's value, its Content-Type, its URL; what is no item);
- `reactor`: the worker thread's results awaited on Scrapy's reactor, and its forced shutdown;
- `feeds`: `PlexityXmlItemExporter`, `PlexityFields`, and the crawl's feeds the pipeline warns of;
- `dropped_file`: ``PLEXITY_DROPPED_FILE``, checked before the crawl;
- `pipeline`: `PerplexityFilterPipeline`, `PlexityDropItem`, the dropped file's one crawl of a process;
- `addon`: `PlexityAddon`.

Every name is also here, where it was when this was one module (``plexity_plugins.scrapy.PlexityAddon`` in
``ADDONS``, ``plexity_plugins.scrapy.PlexityXmlItemExporter`` in ``FEED_EXPORTERS``).
"""

from __future__ import annotations

from ..runtime.extras import require_extra

require_extra("scrapy", "plexity_plugins.scrapy")

# Absolute imports in every module here: this package's name does not shadow the real Scrapy.  Every name the one
# module had, private ones too (noqa F401): a project or a test may have imported it from here.
from .log import CANNOT_START, _PrintableMessages, logger  # noqa: E402, F401
from .settings import (SETTING_NAMES, SETTING_NAMES_IN_ERRORS, SETTINGS, _SETTING_KINDS,  # noqa: E402, F401
                       _SETTING_RANGES, _choice_setting, _field_setting, _model_setting, _typed_setting,
                       _unknown_settings)
from .items import (MAX_SOURCE_CHARS, _item_source, _not_an_item, _one, _what_to_give,  # noqa: E402, F401
                    item_content_type)
from .reactor import StartWaits, _asyncio_available, _deferred_from_future, _on_forced_shutdown  # noqa: E402, F401
from .feeds import (XML_EXPORTER_PATH, PlexityFields, PlexityXmlItemExporter, _NOT_XML, _feeds,  # noqa: E402, F401
                    _is_utf8, _json_feeds_with, _scrapy_xml_feeds, _xml_value)
from .dropped_file import _dropped_file_setting, _file_name_params, _local_path  # noqa: E402, F401
from .pipeline import (_CLAIMED_DROPPED_FILES, INPUT_FORMATS, ITEM_NOT_WRITABLE, STATS_PREFIX,  # noqa: E402, F401
                       PerplexityFilterPipeline, PlexityDropItem, _claim_dropped_file, _Outcome, shorten_drop_logs)
from .addon import DEFAULT_PIPELINE_PRIORITY, PIPELINE_PATH, PlexityAddon, _switched_off  # noqa: E402, F401

__all__ = ["CANNOT_START", "DEFAULT_PIPELINE_PRIORITY", "INPUT_FORMATS", "ITEM_NOT_WRITABLE", "MAX_SOURCE_CHARS",
           "PIPELINE_PATH", "SETTINGS", "SETTING_NAMES", "SETTING_NAMES_IN_ERRORS", "STATS_PREFIX",
           "XML_EXPORTER_PATH", "PerplexityFilterPipeline", "PlexityAddon", "PlexityDropItem", "PlexityFields",
           "PlexityXmlItemExporter", "StartWaits", "item_content_type", "logger", "shorten_drop_logs"]
