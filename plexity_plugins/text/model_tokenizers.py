"""Tokenizers are part of a model: the one its ``model.json`` names (``tokenizer_version``).

A KenLM model only gives meaningful perplexities for text tokenised exactly as its
training text was, so scoring, ``plexity calibrate`` and ``plexity train`` all get their
tokenizer from here, by the model's metadata:

``plexity-tok-1``
    this package's own word tokenizer (`plexity_plugins.text.plexity_tokenizer`); the compiled scoring
    path (`plexity_plugins.runtime.native`) implements it, so models with it score there.
``ccnet``
    CCNet's recipe, as the CCNet / edugp Wikipedia models (``xx.arpa.bin`` +
    ``xx.sp.model``) were built: cc_net's normalisation (`ccnet_normalizer.normalize`)
    then SentencePiece with the model's ``.sp.model`` (``sp_model`` in model.json), the
    pieces joined by spaces.  Scored through the ``kenlm`` module.
``ccnet-datatrove``
    the same, with datatrove's variant of the normalisation (its ``KenlmModel``, which
    turns a whole number such as ``1984`` or ``3.14`` into one ``0`` where cc_net turns each
    digit into ``0``): choose it to reproduce perplexities computed with datatrove.

A document's perplexity (`PerplexityScorer.document_perplexity`) pools the log10
probabilities of its lines: for the CCNet tokenizers that is the whole document as one
line (the normaliser deletes newlines, as in cc_net's pipeline and datatrove), for ours
the document's sentences.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import ccnet_normalizer
from ..errors import MissingExtra, TokenizerError
from .plexity_tokenizer import TOKENIZER_VERSION, spans_to_lm_lines, to_lm_line, to_lm_lines

PLEXITY = TOKENIZER_VERSION
CCNET = "ccnet"
CCNET_DATATROVE = "ccnet-datatrove"
SENTENCEPIECE_TOKENIZERS = (CCNET, CCNET_DATATROVE)
TOKENIZERS = (PLEXITY, *SENTENCEPIECE_TOKENIZERS)
EXTRA = "ccnet"  # the pyproject extra that installs sentencepiece


class PlexityTokenizer:
    """``plexity-tok-1``: `plexity_plugins.text.plexity_tokenizer` (one line per sentence)."""

    name = PLEXITY
    compiled = True  # the compiled path tokenises with exactly these rules
    whole_document = False  # a document's perplexity pools its sentences

    def line(self, text: str) -> str:
        return to_lm_line(text)

    def lines(self, sentences: list[str]) -> list[str]:
        return to_lm_lines(sentences)

    def span_lines(self, text: str, spans: list[tuple[int, int]]) -> list[str]:
        return spans_to_lm_lines(text, spans)

    @staticmethod
    def count(line: str) -> int:
        """Tokens in a line (``</s>`` not included)."""
        return line.count(" ") + 1 if line else 0


# A number, with at most one decimal part ("3.14", "1,5"): datatrove's NUMBERS_PATTERN (re's \d is
# Unicode category Nd, as the regex module's \p{Nd}).
_NUMBER = re.compile(r"\d+(?:[.,،٫⎖⎗⎘]\d+)?")


def datatrove_normalize(text: str) -> str:
    """datatrove's (0.10) ``KenlmModel.normalize``: lower case, each number (with at most one
    decimal part) to a single ``0``, accents stripped, then strip, cc_net's punctuation map
    and control characters deleted."""
    text = _NUMBER.sub("0", text.lower())
    text = ccnet_normalizer.strip_accents(text).strip()
    return ccnet_normalizer.remove_non_printing_char(ccnet_normalizer.replace_unicode_punct(text))


def load_sentencepiece(path: str | Path):
    """A SentencePieceProcessor for `path`, with errors that name the file."""
    try:
        import sentencepiece
    except ImportError as exc:
        from ..runtime.extras import install_extra_command

        raise MissingExtra(f"CCNet models (tokenizer ccnet) need sentencepiece, not installed: "
                           f"{install_extra_command(EXTRA)}") from exc
    path = Path(path)
    if not path.is_file():
        raise TokenizerError(f"SentencePiece model {path} {_not_there(path)}")
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.load(str(path))
    except (OSError, RuntimeError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise TokenizerError(f"{path} is not a SentencePiece model ({detail})") from exc
    return processor


def _not_there(path: Path) -> str:
    """Why `path` is no SentencePiece file: missing, or a folder (a model's, or CCNet's lm_sp/)."""
    return "is a folder: give the .sp.model file in it" if path.is_dir() else "does not exist"


class CCNetTokenizer:
    """``ccnet`` / ``ccnet-datatrove``: CCNet normalisation, then SentencePiece pieces.

    Args:
        sp_model: the model's ``.sp.model`` file (opened on first use; pickles without it).
        name: ``ccnet`` (cc_net's normaliser) or ``ccnet-datatrove`` (datatrove's).
    """

    compiled = False
    whole_document = True  # cc_net and datatrove score a normalised document as one line

    def __init__(self, sp_model: str | Path, name: str = CCNET):
        if name not in SENTENCEPIECE_TOKENIZERS:
            raise TokenizerError(f"unknown CCNet tokenizer {name!r}")
        self.name = name
        self.sp_model = Path(sp_model)
        if not self.sp_model.is_file():
            raise TokenizerError(f"SentencePiece model {self.sp_model} {_not_there(self.sp_model)} (the model's "
                                 f"tokenizer is {name}, which needs it)")
        self.normalize = ccnet_normalizer.normalize if name == CCNET else datatrove_normalize
        self._sp = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_sp"] = None  # reloaded lazily in the receiving process
        return state

    @property
    def sp(self):
        if self._sp is None:
            self._sp = load_sentencepiece(self.sp_model)
        return self._sp

    def line(self, text: str) -> str:
        return " ".join(self.sp.encode_as_pieces(self.normalize(text)))

    def lines(self, sentences: list[str]) -> list[str]:
        # (one SentencePiece call per sentence: a batched call measured no faster)
        return [self.line(s) for s in sentences]

    def span_lines(self, text: str, spans: list[tuple[int, int]]) -> list[str]:
        return [self.line(text[a:b]) for a, b in spans]

    def document_lines(self, text: str) -> list[str]:
        """The lines a document is scored as: the whole text normalised (its newlines
        deleted), so one line; none for text that normalises to nothing (cc_net then
        gives no perplexity)."""
        normalized = self.normalize(text)
        return [" ".join(self.sp.encode_as_pieces(normalized))] if normalized else []

    @staticmethod
    def count(line: str) -> int:
        """Tokens in a line as cc_net counts them (and ``kenlm.Model.score`` splits them)."""
        return len(line.split())


def tokenizer_for(name: str | None, sp_model: str | Path | None = None):
    """The tokenizer a model declares: its name and, for the CCNet ones, its .sp.model."""
    if name in (None, PLEXITY):
        if sp_model:
            raise TokenizerError(f"a SentencePiece model ({sp_model}) was given with tokenizer {PLEXITY}, which "
                                 f"does not use one: for a CCNet / edugp model declare --tokenizer {CCNET}")
        return PlexityTokenizer()
    if name in SENTENCEPIECE_TOKENIZERS:
        if not sp_model:
            raise TokenizerError(f"tokenizer {name} needs the model's SentencePiece file (--sp-model "
                                 f"xx.sp.model; `sp_model` in model.json)")
        return CCNetTokenizer(sp_model, name)
    raise TokenizerError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZERS)})")
