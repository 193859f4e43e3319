"""`PlexityAddon`, the Scrapy add-on: it enables the pipeline in ITEM_PIPELINES at ``PLEXITY_PIPELINE_PRIORITY``
(unless the project placed it, or a command emptied ITEM_PIPELINES) and `StartWaits` in SPIDER_MIDDLEWARES, and
makes `PlexityXmlItemExporter` the ``xml`` feed format's exporter."""

from __future__ import annotations

from ..errors import PlexitySettingError
from .feeds import XML_EXPORTER_PATH
from .log import CANNOT_START, logger
from .pipeline import PerplexityFilterPipeline
from .settings import _typed_setting


PIPELINE_PATH = "plexity_plugins.scrapy.PerplexityFilterPipeline"
DEFAULT_PIPELINE_PRIORITY = 300
START_WAITS_PATH = "plexity_plugins.scrapy.StartWaits"
# (next to the engine, before Scrapy's own StartSpiderMiddleware at 25: what it lets through is what the engine sends)
START_WAITS_PRIORITY = 10


class PlexityAddon:
    """Scrapy add-on (Scrapy >= 2.10) that enables `PerplexityFilterPipeline`.

    In ``settings.py``::

        ADDONS = {"plexity_plugins.scrapy.PlexityAddon": 0}

    It adds the pipeline to ``ITEM_PIPELINES`` at ``PLEXITY_PIPELINE_PRIORITY`` (default 300:
    after pipelines that build the item, before exporters and storage pipelines, which by
    convention sit at 800 and above).  A priority the project already gave the pipeline in
    ``ITEM_PIPELINES`` is kept.  It adds `StartWaits` to ``SPIDER_MIDDLEWARES`` (items a spider's
    ``start()`` yields itself wait for the pipeline's worker).  Every other setting is the pipeline's own
    ``PLEXITY_*``.
    """

    def update_settings(self, settings) -> None:
        try:
            priority = _typed_setting(settings, "PLEXITY_PIPELINE_PRIORITY", int, DEFAULT_PIPELINE_PRIORITY)
        except PlexitySettingError as exc:  # (said first, as the pipeline's settings are, not after asyncio's)
            logger.critical(CANNOT_START, exc)
            raise
        if "xml" not in settings.getdict("FEED_EXPORTERS"):  # (an exporter of the project's own is kept)
            settings["FEED_EXPORTERS"]["xml"] = XML_EXPORTER_PATH
        if START_WAITS_PATH not in settings.getdict("SPIDER_MIDDLEWARES"):
            settings["SPIDER_MIDDLEWARES"][START_WAITS_PATH] = START_WAITS_PRIORITY
        pipelines = settings.getdict("ITEM_PIPELINES")
        if PIPELINE_PATH in pipelines or PerplexityFilterPipeline in pipelines:
            return
        if not pipelines and _switched_off(settings, "ITEM_PIPELINES"):
            return  # (by `scrapy check`, whose contracts discard the items, or -s ITEM_PIPELINES={})
        settings["ITEM_PIPELINES"][PIPELINE_PATH] = priority


def _switched_off(settings, name: str) -> bool:
    """Whether setting `name` (a component dict) was emptied above the spider's priority: by a command, as
    ``scrapy check`` empties ITEM_PIPELINES and FEEDS ("opening them only causes side effects, such as an empty
    output file"), or by the command line.  The add-on enabled the pipeline there all the same, which replaced the
    project's PLEXITY_DROPPED_FILE, the last crawl's rows, with an empty file at each ``scrapy check``."""
    from scrapy.settings import SETTINGS_PRIORITIES

    return (settings.getpriority(name) or 0) > SETTINGS_PRIORITIES["spider"]
