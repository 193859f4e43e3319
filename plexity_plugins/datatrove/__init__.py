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
- `JsonlDocumentReader`, `ParquetDocumentReader`: datatrove's JSONL and Parquet readers, every row a Document or a
  counted skip (``skipped_<reason>``), a damaged file counted and named, a line over ``max_document_bytes`` not held.
- `HtmlTagsExtractor`, `TrafilaturaExtractor`: the ``tags`` and ``trafilatura`` extractors of
  ``plexity clean`` as datatrove extractors (same text as ``plexity clean``).
- `LearnedExtractor`: the ``learned`` extractor, the default of ``plexity clean`` and ``plexity run``
  (blocks kept by a forest trained on four benchmarks).
- `DenseExtractor`: the ``dense`` extractor (one lexbor parse, the page's item; hand-set rules).
- `FastExtractor`: the ``fast`` extractor of ``plexity clean`` (resiliparse's main content).
- `AutoExtractor`: the ``auto`` extractor of ``plexity clean`` (trafilatura's text, or fast's where
  trafilatura left out part of the page).
- `WarcResponseWriter`: cleaned documents back as WARC response records.
- `JsonlDocumentWriter`: datatrove's ``JsonlWriter``, the same lines, without its deep copy of
  each document (what ``plexity run`` writes with).
- `LocalTaskExecutor`: datatrove's local executor, its tasks run one after another in at most ``workers``
  worker processes: a killed worker ends the run (`TasksFailed`, naming the task) instead of hanging it.
- `RayTaskExecutor`: datatrove's Ray executor's arguments, each task a Ray task whose processes
  die with it instead of running on as orphans, run again when its node is lost, run in the folder
  the executor was made in, and stopping the run at once where the logging folder is not the one the
  run wrote (`LoggingFolderNotShared`: a node's own disk) (docs/ray.md).
- `SlurmTaskExecutor`: datatrove's Slurm executor (same arguments), which says in one line that
  there is no ``sbatch`` here (`ExecutorUnavailable`) instead of failing inside datatrove, and
  submits nothing while its earlier job into the same logging folder is not over (`JobStillQueued`).

plexity's executors record the run's settings (each step's, the tasks, the version) in the
logging folder and stop a run into it with other settings (`SettingsChanged`, naming them), or
whose reader has no file to read (`NoInputFiles`, naming the folder);
`check_run_settings(executor)` does the same before a datatrove executor's ``run()``
(`plexity_plugins.datatrove.run_settings`).  Each plexity step shows its main settings in its
name, as datatrove's log and stats print it.
"""

# The steps here declare no ``_requires_dependencies``: what they need is plexity_plugins' own
# dependencies, installed with it: one that cannot be imported fails the import of this package
# or, for an extractor, stops the task at its start (`InstallationError`).  datatrove's check reads
# the metadata of every installed distribution for each name (~40 ms each here): 0.2 s of every
# process start for nothing.
from ..runtime.extras import require_extra

require_extra("datatrove", "plexity_plugins.datatrove")

from .document_filter import PerplexityDocumentFilter  # noqa: E402
from .extractors import (AutoExtractor, DenseExtractor, FastExtractor, HtmlTagsExtractor,  # noqa: E402
                         LearnedExtractor, TrafilaturaExtractor)
from ..errors import (ExecutorUnavailable, HtmlPagesNotText, JobStillQueued, LoggingFolderNotShared,  # noqa: E402
                      NoInputFiles, SettingsChanged, TasksFailed, TextsNotHtml)
from .executor import LocalTaskExecutor  # noqa: E402
from .ray_executor import RayTaskExecutor  # noqa: E402
from .slurm_executor import SlurmTaskExecutor  # noqa: E402
from .run_settings import check_run_settings  # noqa: E402
from .filter import PerplexitySentenceFilter  # noqa: E402
from .readers import WarcHtmlReader  # noqa: E402
from .dataset_readers import JsonlDocumentReader, ParquetDocumentReader  # noqa: E402
from .writers import JsonlDocumentWriter, WarcResponseWriter  # noqa: E402

__all__ = ["AutoExtractor", "DenseExtractor", "ExecutorUnavailable", "FastExtractor", "HtmlPagesNotText",
           "HtmlTagsExtractor", "JobStillQueued", "JsonlDocumentReader", "JsonlDocumentWriter", "LearnedExtractor",
           "LocalTaskExecutor", "LoggingFolderNotShared", "NoInputFiles", "ParquetDocumentReader",
           "PerplexityDocumentFilter", "PerplexitySentenceFilter", "RayTaskExecutor", "SettingsChanged",
           "SlurmTaskExecutor", "TasksFailed", "TextsNotHtml", "TrafilaturaExtractor", "WarcHtmlReader",
           "WarcResponseWriter", "check_run_settings"]
