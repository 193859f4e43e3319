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
- `WarcHtmlReader`: HTML responses of WARC files as Documents, every other record counted.
- `HtmlTagsExtractor`: the ``tags`` extractor of ``plexity clean`` as a datatrove extractor
  (datatrove's own ``Trafilatura`` extractor is the other choice).
- `FastExtractor`: the ``fast`` extractor of ``plexity clean`` (resiliparse's main content).
- `WarcResponseWriter`: cleaned documents back as WARC response records.
"""

from .extractors import FastExtractor, HtmlTagsExtractor
from .filter import PerplexitySentenceFilter
from .readers import WarcHtmlReader
from .writers import WarcResponseWriter

__all__ = ["FastExtractor", "HtmlTagsExtractor", "PerplexitySentenceFilter", "WarcHtmlReader", "WarcResponseWriter"]
