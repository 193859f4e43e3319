"""datatrove pipeline steps: perplexity-based boilerplate removal inside datatrove pipelines.

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter
    from plexity_plugins.datatrove import HtmlTagsExtractor, PerplexitySentenceFilter, WarcHtmlReader

    LocalPipelineExecutor(pipeline=[
        WarcHtmlReader("crawl/"),
        HtmlTagsExtractor(),
        PerplexitySentenceFilter(),
        JsonlWriter("cleaned/"),
    ], tasks=4).run()

- `PerplexitySentenceFilter`: removes high-perplexity sentences from ``doc.text``, drops
  documents with too little left (a datatrove filter: ``exclusion_writer`` gets them).
- `PerplexityDocumentFilter`: scores each whole document (``plexity_doc_perplexity``; CCNet's
  document perplexity for CCNet / edugp models) and keeps those within min/max bounds, or
  only labels them (``label_only=True``).
- `WarcHtmlReader`: HTML responses of WARC files as Documents, every other record counted.
- `HtmlTagsExtractor`: the ``tags`` extractor of ``plexity clean`` as a datatrove extractor
  (datatrove's own ``Trafilatura`` extractor is the other choice).
- `WarcResponseWriter`: cleaned documents back as WARC response records.
"""

from .extractors import HtmlTagsExtractor
from .document_filter import PerplexityDocumentFilter
from .filter import PerplexitySentenceFilter
from .readers import WarcHtmlReader
from .writers import WarcResponseWriter

__all__ = ["HtmlTagsExtractor", "PerplexityDocumentFilter", "PerplexitySentenceFilter", "WarcHtmlReader", "WarcResponseWriter"]
