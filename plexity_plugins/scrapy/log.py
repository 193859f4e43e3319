"""The Scrapy front end's logger: every module of this package logs to ``plexity_plugins.scrapy`` (the name of the
one module it was: a project's logging settings and the crawl's log lines name it), each message made one printable
line; and the first line a crawl that cannot start logs."""

from __future__ import annotations

import logging

from ..errors import printable


class _PrintableMessages(logging.Filter):
    """Each of the pipeline's log messages one printable line (`printable`): they name an item's URL and quote an
    extractor's error, the crawl's characters, and Scrapy's handler writes ESC, BEL or CR as they are."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        return True


# (by name, not __name__: the logger of the one module this package was)
logger = logging.getLogger("plexity_plugins.scrapy")
logger.addFilter(_PrintableMessages())
CANNOT_START = "plexity: the crawl cannot start: %s"  # the log's first error for a setting it cannot use
