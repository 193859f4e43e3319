"""pyplexity's Python names and model files, each with what does its job here (docs/from-pyplexity.md).

A script ported from pyplexity (0.2.12) first types its names: `from plexity_plugins import PerplexityModel`,
`PerplexityScorer(perpl_limit=8000.0)`, `scorer.compute_sentence(s)`, `--model bigrams_cord19.st`.  Python's own
words ("cannot import name", "unexpected keyword argument", "has no attribute") and "neither a KenLM binary nor an
ARPA file" named nothing to use instead.  These say it, here, for the package, the scorer and the model loader; the
command line's words for pyplexity's commands and options are in `plexity_plugins.cli.from_pyplexity`.  No alias:
the equivalents differ (a KenLM model, perplexities on another scale, sentences removed rather than marked)."""

from __future__ import annotations

PAGE = "docs/from-pyplexity.md"

# pyplexity's threshold: one sentence for the scorer's keyword and the command line's option
LIMIT_DOES_NOT_CARRY_OVER = ("pyplexity's 8000 was for its own models and does not carry over (without a threshold "
                             "the model's own applies)")

# pyplexity's importable names (`from pyplexity import ...`, `from pyplexity.tag_remover import ...`)
NAMES = {
    "PerplexityModel": "PerplexityScorer(model): .perplexity(sentence) is compute_sentence's job",
    "PerplexityProcessor": ("PerplexityScorer(model, threshold=T, method='sentences'): .clean(text).text is "
                            "process(text)'s job, with dropped sentences removed (annotate=True marks them instead)"),
    "HTMLTagRemover": "extractors.get_extractor('tags'): get_extractor('tags')(html) is process(html)'s job",
}

# PerplexityProcessor's keyword arguments, given to PerplexityScorer
KEYWORDS = {
    "perpl_limit": f"here it is threshold=T; {LIMIT_DOES_NOT_CARRY_OVER}",
    "perpl_model": ("here it is model=NAME (a model name or path): PerplexityScorer is pyplexity's model and "
                    "processor in one"),
}

# pyplexity's methods, called on PerplexityScorer (from_str on the class)
METHODS = {
    "from_str": "PerplexityScorer(name) opens a model by its name or path",
    "compute_sentence": "here it is .perplexity(sentence), KenLM's perplexity (on another scale than pyplexity's)",
    "process": ("here it is .clean(text).text, the dropped sentences removed (.clean(text, annotate=True).text marks "
                "them, as process() did)"),
}

# pyplexity's model files are Perl Storable files (`storable.retrieve`): written by Perl's store or nstore, both
# begin so.  Its downloaded models (bigrams_bnc.st ...) lie in ~/.cache/cached_path/ under hashed names.
STORABLE_MAGIC = b"pst0"


def name_error(name: str) -> ImportError | None:
    """The error for `from plexity_plugins import NAME` when NAME is one of pyplexity's, else None."""
    meant = NAMES.get(name)
    return None if meant is None else ImportError(
        f"{name} is pyplexity's: here it is plexity_plugins.{meant}; pyplexity's names and ours side by side: {PAGE}",
        name=name)


def keyword_hints() -> dict[str, str]:
    """What each of PerplexityProcessor's keyword arguments is on PerplexityScorer (`suggests_keywords`' hints)."""
    return {word: f"{meant} ({PAGE})" for word, meant in KEYWORDS.items()}


class PyplexityMethod:
    """A pyplexity method's name on our class: reading it raises the AttributeError saying what does its job (on
    the class too, for `from_str`), and `hasattr` is False, as for any name the class has not."""

    def __init__(self, meant: str):
        self.meant = meant

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        owner = owner or type(obj)
        raise AttributeError(f"{owner.__name__} has no {self.name}: it is pyplexity's; {self.meant} ({PAGE})",
                             name=self.name, obj=obj if obj is not None else owner)


def pyplexity_methods(cls: type) -> type:
    """`cls` with each of pyplexity's method names (`METHODS`) answered by `PyplexityMethod` (a class decorator)."""
    for name, meant in METHODS.items():
        method = PyplexityMethod(meant)
        method.__set_name__(cls, name)
        setattr(cls, name, method)
    return cls


def is_pyplexity_model(head: bytes) -> bool:
    """Whether a file beginning with `head` is one of pyplexity's models (Perl Storable)."""
    return head.startswith(STORABLE_MAGIC)


def pyplexity_model_message(path) -> str:
    """Why pyplexity's model file `path` is not a model here, and what to build instead."""
    return (f"{path} is a pyplexity model (Perl Storable, read by its PerplexityModel.from_str), not a KenLM model: "
            f"its probabilities cannot be scored here. Build a KenLM model from the text it was trained on with "
            f"`plexity train --name NAME --corpus text TEXT_FILES`, or the paper's by their names (`plexity train "
            f"--name bigrams-bnc BNC/Texts`, `--name bigrams-cord19 metadata.csv` ...); {PAGE}")
