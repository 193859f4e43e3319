"""The extractors of ``plexity clean`` as datatrove extractor steps."""

from __future__ import annotations

from datatrove.pipeline.extractors.base import BaseExtractor

from ..extract import html_to_text_tags, html_to_text_trafilatura


class HtmlTagsExtractor(BaseExtractor):
    """The text of every visible HTML element, one line per block element.

    pyplexity's tag remover, keeping block breaks (the sentence filter uses them as
    boundaries): exactly ``plexity clean --extractor tags``
    (`plexity_plugins.extract.html_to_text_tags`).  Keeps all visible text, boilerplate
    included, and leaves its removal to `PerplexitySentenceFilter`; datatrove's
    ``Trafilatura`` extractor is the alternative that already drops most boilerplate.

    As every datatrove extractor, it runs in a sandboxed subprocess: a document whose
    extraction times out or fails is dropped and counted (``timeout``, ``clean_error``);
    one that yields no text is counted as ``dropped``.

    Args:
        timeout: seconds allowed per document (a 10 MB page takes about a second)
    """

    name = "🏷 HTML tags"
    _requires_dependencies = ["lxml"]

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return html_to_text_tags(text)


class TrafilaturaExtractor(BaseExtractor):
    """trafilatura's main text, with the settings of ``plexity clean --extractor trafilatura``
    (`plexity_plugins.extract.html_to_text_trafilatura`: tables kept, no deduplication, no
    comments), so that ``plexity run`` and ``plexity clean`` extract the same text.

    Unlike datatrove's ``Trafilatura`` step it does not log trafilatura's ERROR messages for
    an empty document (datatrove's sandbox warms up on an empty string, which made every
    successful run print two ERROR lines): such a document yields no text and is counted as
    ``dropped`` by the step, like any document without text.  Works with trafilatura 1.8-1.11
    (what ``datatrove[processing]`` pins) and 2.x.

    Args:
        timeout: seconds allowed per document (extraction runs in datatrove's sandboxed
            subprocess; a document over time is dropped and counted as ``timeout``)
    """

    name = "⛏ Trafilatura (plexity)"
    _requires_dependencies = ["trafilatura"]

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return html_to_text_trafilatura(text)
