"""The kind of an input file, by its name: what `plexity clean` reads it as (its own module: the command line
asks before it imports the cleaning engine)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..io.folders import WACZ_SUFFIX

TEXT_SUFFIXES = (".txt", ".txt.gz", ".text", ".text.gz")  # (as `plexity train` reads text: TextReader)
HTML_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz", ".xhtml", ".xht", ".shtml")
# (WET: Common Crawl's text of each page; ARC: WARC's predecessor, Common Crawl's 2008-2012 crawls, read as WARCs)
ARC_SUFFIXES = (".arc", ".arc.gz")
WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.wet", ".warc.wet.gz") + ARC_SUFFIXES
WACZ_SUFFIXES = (WACZ_SUFFIX,)  # a zip of a crawl's WARCs (Webrecorder's, Browsertrix Crawler's): its WARCs are read
# A page a browser saved as one file (Chrome's "Webpage, Single File", IE's .mht): its HTML part is read
MHTML_SUFFIXES = (".mhtml", ".mht")


def _listed(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


_ALL = TEXT_SUFFIXES + HTML_SUFFIXES + WARC_SUFFIXES
# The names `plexity clean` reads, for its messages: ".txt, .text, .html, .htm, .warc or .warc.wet files (or .gz),
# .xhtml, .xht or .shtml pages" (from the suffixes above, so a suffix added is said).
KNOWN_NAMES = (f"{_listed([s for s in _ALL if s + '.gz' in _ALL])} files (or .gz), "
               f"{_listed([s for s in _ALL if not s.endswith('.gz') and s + '.gz' not in _ALL])} pages, "
               f"{_listed(list(MHTML_SUFFIXES))} saved pages, {_listed(list(WACZ_SUFFIXES))} web archives")


def kind_of(path: Path) -> str | None:
    """"warc", "wacz", "mhtml", "html" or "text" by `path`'s name; None for a name with none of their suffixes."""
    name = path.name.lower()
    if name.endswith(WACZ_SUFFIXES):
        return "wacz"
    if name.endswith(MHTML_SUFFIXES):
        return "mhtml"
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    if name.endswith(HTML_SUFFIXES):
        return "html"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return None


# A page by its first bytes, as WHATWG's MIME Sniffing Standard tells HTML from an unknown type (its "HTML" patterns:
# after whitespace, one of these tags, then a space or ">"), a UTF-8 BOM allowed before: what a mirror names
# otherwise (wget's index.php?id=3, about, a .asp or .jsp page) is read as the page it is.
_SNIFFED_HTML = re.compile(rb"(?:\xef\xbb\xbf)?[\t\n\x0c\r ]*<(?:!doctype html|html|head|script|iframe|h1|div|font|"
                           rb"table|a|style|title|b|body|br|p|!--)[ >\t\n\x0c\r]", re.IGNORECASE)
_SNIFFED_BYTES = 1445  # (the Standard's resource header)


def html_by_bytes(head: bytes) -> bool:
    """Whether `head`, a file's first bytes (`_SNIFFED_BYTES` of them are enough), is an HTML page's start."""
    return _SNIFFED_HTML.match(head[:_SNIFFED_BYTES]) is not None


def html_by_content(path: Path) -> bool:
    """Whether a regular file's first bytes are an HTML page's (`_SNIFFED_HTML`); False for what is no regular
    file (a FIFO would wait for ever) or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return html_by_bytes(os.read(fd, _SNIFFED_BYTES))
    except OSError:
        return False
    finally:
        os.close(fd)


def kind_of_file(path: Path) -> str | None:
    """`kind_of` by the name, else "html" for a file whose name says nothing `plexity clean` reads but whose first
    bytes are an HTML page's (`html_by_content`)."""
    return kind_of(path) or ("html" if html_by_content(path) else None)


# A browser's "Webpage, Complete" (Chrome, Edge, Firefox, IE) saves page.html and, beside it, page_files/: the
# page's images, styles, scripts (and its frames, saved as pages of their own, which are read)
SAVED_PAGE_FOLDER = "_files"


def saved_page_of(path: Path) -> Path | None:
    """For a file that no name or first bytes make a page, in the folder of a page saved "complete" (``page_files/``
    beside ``page.html``): that page; else None."""
    folder = path.parent
    if not folder.name.endswith(SAVED_PAGE_FOLDER) or len(folder.name) == len(SAVED_PAGE_FOLDER):
        return None
    stem = folder.name[:-len(SAVED_PAGE_FOLDER)]
    return next((page for suffix in HTML_SUFFIXES if not suffix.endswith(".gz")
                 for page in [folder.with_name(stem + suffix)] if page.is_file()), None)
