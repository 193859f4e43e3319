"""plexity_plugins: perplexity-based boilerplate removal for web-corpus pipelines."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (what the names are, for readers and tools; imported on first use: `__getattr__`)
    from .scoring.models import ModelInfo
    from .errors import ModelError
    from .scoring.scorer import CleanResult, PerplexityScorer, SentenceScore
    from .text.plexity_tokenizer import TOKENIZER_VERSION

from .runtime.lazy import lazy_names

__version__ = "0.1.0"

__all__ = [
    "CleanResult",
    "ModelError",
    "ModelInfo",
    "PerplexityScorer",
    "SentenceScore",
    "TOKENIZER_VERSION",
    "__version__",
]

# Imported on first use (PEP 562), so that a process that needs only part of the package does not
# load the scorer with BlingFire and numpy: the extraction child of `plexity_plugins.extractors.sandbox` starts
# ~70 ms sooner, once per `plexity run` task, `plexity clean` and Scrapy crawl.
_lazy_getattr, __dir__ = lazy_names(__name__, {
    "CleanResult": ".scoring.scorer", "PerplexityScorer": ".scoring.scorer", "SentenceScore": ".scoring.scorer",
    "ModelError": ".scoring.models", "ModelInfo": ".scoring.models", "TOKENIZER_VERSION": ".text.plexity_tokenizer"})


def __getattr__(name: str):
    # pyplexity's names, as its users first type them (`from plexity_plugins import PerplexityModel`): Python's own
    # "cannot import name" named nothing to use instead (an ImportError: `from ... import` turns an AttributeError
    # into its own words).  The names and what they are here: `plexity_plugins.scoring.from_pyplexity`.
    from .scoring.from_pyplexity import name_error

    error = name_error(name)
    if error is not None:
        error.path = __file__
        raise error
    return _lazy_getattr(name)
