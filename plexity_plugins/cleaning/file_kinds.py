"""The kind of an input file, by its name: what `plexity clean` reads it as (its own module: the command line
asks before it imports the cleaning engine)."""

from __future__ import annotations

from pathlib import Path

TEXT_SUFFIXES = (".txt", ".txt.gz", ".text", ".text.gz")  # (as `plexity train` reads text: TextReader)
HTML_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")
WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.wet", ".warc.wet.gz")  # (WET: Common Crawl's text of each page)


def kind_of(path: Path) -> str | None:
    """"warc", "html" or "text" by `path`'s name; None for a name with none of their suffixes."""
    name = path.name.lower()
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    if name.endswith(HTML_SUFFIXES):
        return "html"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return None
