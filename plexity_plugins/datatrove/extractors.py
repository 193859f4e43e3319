"""The extractors of ``plexity clean`` as datatrove extractors: `HtmlTagsExtractor` (``tags``) and
`FastExtractor` (``fast``)."""

from __future__ import annotations

from datatrove.pipeline.extractors.base import BaseExtractor

from ..extract import html_to_text_fast, html_to_text_tags


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


class FastExtractor(BaseExtractor):
    """Main content by resiliparse (lexbor parser): ``plexity clean --extractor fast``.

    `plexity_plugins.extract.html_to_text_fast`: resiliparse's main-content heuristic drops
    navigation, headers, footers and sidebars; one line per block.  Several times faster than
    datatrove's ``Trafilatura``; its quality with and without `PerplexitySentenceFilter` is in the
    README's "Cleaning quality".  Timeouts, failures and empty results are counted as in every
    datatrove extractor (``timeout``, ``clean_error``, ``dropped``).

    Args:
        timeout: seconds allowed per document
    """

    name = "⚡ fast (resiliparse)"
    _requires_dependencies = ["resiliparse"]

    def __init__(self, timeout: float = 30):
        super().__init__(timeout)

    def extract(self, text: str) -> str:
        return html_to_text_fast(text)
