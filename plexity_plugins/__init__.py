"""plexity_plugins: perplexity-based boilerplate removal for web-corpus pipelines."""

from .models import ModelError, ModelInfo
from .scorer import CleanResult, PerplexityScorer, SentenceScore
from .tokenizer import TOKENIZER_VERSION

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
