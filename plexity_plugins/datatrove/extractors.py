"""Extractors for datatrove pipelines: `HtmlTagsExtractor` (``plexity clean``'s ``tags``
extractor) and `TrafilaturaExtractor` (datatrove's own, checked at start)."""

from __future__ import annotations

from datatrove.pipeline.extractors import Trafilatura
from datatrove.pipeline.extractors.base import BaseExtractor

from ..extract import html_to_text_tags
from ..policy import ENVIRONMENT_ERRORS, InstallationError, environment_message

_CHECK_PAGE = "<html><body><p>plexity start-up check: the extractor can run.</p></body></html>"


class _CheckedAtStart:
    """Runs the extractor once in the task's own process before datatrove's sandbox takes
    over.  The sandbox counts every exception as one document's ``clean_error`` (and a
    worker that dies at start-up as ``broken_process``), so a broken installation (the
    extractor's module cannot be imported) would otherwise lose every document as if it
    were damaged input; here it stops the task instead, saying what to install."""

    def run(self, data, rank: int = 0, world_size: int = 1):
        try:
            self.extract(_CHECK_PAGE)
        except ENVIRONMENT_ERRORS as exc:
            raise InstallationError(f"{self.name}: {environment_message(exc)}", exc) from exc
        yield from super().run(data, rank, world_size)


class HtmlTagsExtractor(_CheckedAtStart, BaseExtractor):
    """The text of every visible HTML element, one line per block element.

    pyplexity's tag remover, keeping block breaks (the sentence filter uses them as
    boundaries): exactly ``plexity clean --extractor tags``
    (`plexity_plugins.extract.html_to_text_tags`).  Keeps all visible text, boilerplate
    included, and leaves its removal to `PerplexitySentenceFilter`; datatrove's
    ``Trafilatura`` extractor is the other choice (`TrafilaturaExtractor`).

    As every datatrove extractor, it runs in a sandboxed subprocess: a document whose
    extraction times out or fails is dropped and counted (``timeout``, ``clean_error``);
    one that yields no text is counted as ``dropped``.  A broken installation stops the
    task instead (`InstallationError`).

    Args:
        timeout: seconds allowed per document (a 10 MB page takes about a second)
    """

    name = "🏷 HTML tags"
    _requires_dependencies = ["lxml"]

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return html_to_text_tags(text)


class TrafilaturaExtractor(_CheckedAtStart, Trafilatura):
    """datatrove's ``Trafilatura`` extractor (same arguments), but a trafilatura that cannot
    be imported (e.g. lxml without ``lxml_html_clean``) stops the task with a message
    instead of being counted as one ``broken_process`` per document."""
