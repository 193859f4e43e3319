"""The extractors of ``plexity clean`` as datatrove extractor steps, checked at task start."""

from __future__ import annotations

from datatrove.pipeline.extractors.base import BaseExtractor

from ..extract import html_to_text_fast, html_to_text_tags, html_to_text_trafilatura
from ..policy import ENVIRONMENT_ERRORS, InstallationError, environment_message

_CHECK_PAGE = "<html><body><p>plexity start-up check: the extractor can run.</p></body></html>"


class _PlexityExtractor(BaseExtractor):
    """A function of `plexity_plugins.extract` (`to_text`) as a datatrove extractor step,
    run once in the task's own process before datatrove's sandbox takes over.  The sandbox
    counts every exception as one document's ``clean_error`` (and a worker that dies at
    start-up as ``broken_process``), so a broken installation (the extractor's module cannot
    be imported) would otherwise lose every document as if it were damaged input; here it
    stops the task instead, saying what to install."""

    to_text = None  # staticmethod(the function of plexity_plugins.extract)

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return self.to_text(text)

    def run(self, data, rank: int = 0, world_size: int = 1):
        try:
            self.extract(_CHECK_PAGE)
        except ENVIRONMENT_ERRORS as exc:
            raise InstallationError(f"{self.name}: {environment_message(exc)}", exc) from exc
        yield from super().run(data, rank, world_size)


class HtmlTagsExtractor(_PlexityExtractor):
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
    to_text = staticmethod(html_to_text_tags)


class TrafilaturaExtractor(_PlexityExtractor):
    """trafilatura's main text, with the settings of ``plexity clean --extractor trafilatura``
    (`plexity_plugins.extract.html_to_text_trafilatura`: tables kept, no deduplication, no
    comments), so that ``plexity run`` and ``plexity clean`` extract the same text.

    Unlike datatrove's ``Trafilatura`` step it does not log trafilatura's ERROR messages for
    an empty document (datatrove's sandbox warms up on an empty string, which made every
    successful run print two ERROR lines): such a document yields no text and is counted as
    ``dropped`` by the step, like any document without text.  Works with trafilatura 1.8-1.11
    (what ``datatrove[processing]`` pins) and 2.x.  A trafilatura that cannot be imported
    (e.g. lxml without ``lxml_html_clean``) stops the task with a message saying what to
    install, instead of being counted as one ``broken_process`` per document.

    Args:
        timeout: seconds allowed per document (extraction runs in datatrove's sandboxed
            subprocess; a document over time is dropped and counted as ``timeout``)
    """

    name = "⛏ Trafilatura (plexity)"
    to_text = staticmethod(html_to_text_trafilatura)


class FastExtractor(_PlexityExtractor):
    """Main content by resiliparse (lexbor parser): ``plexity clean --extractor fast``.

    `plexity_plugins.extract.html_to_text_fast`: resiliparse's main-content heuristic drops
    navigation, headers, footers and sidebars; one line per block.  Many times faster than
    trafilatura; its quality with and without `PerplexitySentenceFilter` is in the README's
    "Cleaning quality".  Timeouts, failures and empty results are counted as in every datatrove
    extractor (``timeout``, ``clean_error``, ``dropped``); a resiliparse that cannot be imported
    stops the task (`InstallationError`).

    Args:
        timeout: seconds allowed per document
    """

    name = "⚡ fast (resiliparse)"
    to_text = staticmethod(html_to_text_fast)
