"""Turning a KenLM file you already have into a model directory (`plexity models import`).

    plexity models import ccnet-en --kenlm en.arpa.bin --sp-model en.sp.model \\
        --tokenizer ccnet --language en [--calibrate CLEAN_TEXT ...]

writes ``<model dir>/ccnet-en/`` with the KenLM file (symlinked, or copied with
``--copy``), the SentencePiece model (copied: it is small) and a ``model.json`` naming
the tokenizer, so that ``--model ccnet-en`` scores with the right one.  Thresholds come
from ``--calibrate`` (the percentile rule of `plexity calibrate`) or are given
(``--threshold``, ``--document-threshold``, e.g. a CCNet per-language cut-off).

A sanity check scores a few built-in sentences of the model's language: when more than
`MAX_OOV_SHARE` of their tokens are unknown to the model, the declared tokenizer is
likely wrong; when the vocabulary plainly belongs to the other kind of tokenizer
(SentencePiece pieces, or none of them) the import is refused.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import thresholds
from ..io.atomic_files import FolderAppeared, staged_folder
from .corpora import input_paths
from ..scoring.models import (ModelInfo, kenlm_file_name, model_argument, refuse_pyplexity_model, resolve,
                              writable_install_dir)
from ..errors import ModelError, TokenizerError
from ..text.language import checked_language_code
from ..text.model_tokenizers import PLEXITY, SENTENCEPIECE_TOKENIZERS, TOKENIZERS, load_sentencepiece

logger = logging.getLogger(__name__)

MAX_OOV_SHARE = 0.8
LANGUAGE_MARGIN = 2.0  # another language read this many times better than the declared one: warn
SP_FILE = "model.sp.model"
SPACE_PIECE = "\u2581"  # SentencePiece's word-start mark

# A few plain sentences per language for the sanity check.
CHECK_SENTENCES = {
    "en": ["The council approved the budget for the new library.",
           "Children played in the park near the river all afternoon.",
           "Scientists published the results of their study in a report."],
    "de": ["Der Gemeinderat hat den Haushalt für die neue Bibliothek beschlossen.",
           "Die Kinder spielten den ganzen Nachmittag im Park am Fluss.",
           "Die Wissenschaftler haben die Ergebnisse ihrer Studie veröffentlicht."],
    "fr": ["Le conseil municipal a approuvé le budget de la nouvelle bibliothèque.",
           "Les enfants ont joué tout l'après-midi dans le parc près de la rivière.",
           "Les chercheurs ont publié les résultats de leur étude dans un rapport."],
    "es": ["El ayuntamiento aprobó el presupuesto para la nueva biblioteca.",
           "Los niños jugaron toda la tarde en el parque cerca del río.",
           "Los científicos publicaron los resultados de su estudio en un informe."],
    "it": ["Il consiglio comunale ha approvato il bilancio per la nuova biblioteca.",
           "I bambini hanno giocato tutto il pomeriggio nel parco vicino al fiume.",
           "Gli scienziati hanno pubblicato i risultati del loro studio in un rapporto."],
    "nl": ["De gemeenteraad heeft de begroting voor de nieuwe bibliotheek goedgekeurd.",
           "De kinderen speelden de hele middag in het park bij de rivier.",
           "De wetenschappers hebben de resultaten van hun onderzoek gepubliceerd."],
    "pt": ["A câmara municipal aprovou o orçamento para a nova biblioteca.",
           "As crianças brincaram a tarde toda no parque perto do rio.",
           "Os cientistas publicaram os resultados do seu estudo num relatório."],
}


@dataclass
class ImportResult:
    info: ModelInfo
    directory: Path
    oov_share: float | None
    checked_sentences: int
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"model '{self.info.name}' (order {self.info.order}, tokenizer {self.info.tokenizer_version}, "
                 f"language {self.info.language or '?'}) installed in {self.directory}"]
        if self.oov_share is not None:
            lines.append(f"  sanity check: {100 * self.oov_share:.1f}% unknown tokens in {self.checked_sentences} "
                         f"sentences")
        lines.append(f"  threshold {self.info.threshold}, threshold_extracted {self.info.threshold_extracted}, "
                     f"document_threshold {self.info.document_threshold}")
        if self.info.threshold is None:
            lines.append(f"  no threshold yet: give one when cleaning (--threshold), or set it from clean text with "
                         f"`plexity calibrate --model {shlex.quote(model_argument(self.directory, self.info.name))} "
                         f"CLEAN_TEXT "
                         f"--write`")
        lines.append(f"  use it with --model {shlex.quote(model_argument(self.directory, self.info.name))}")
        return "\n".join(lines)


def _kenlm_target_name(path: Path) -> str:
    """model.bin for a KenLM binary, model.arpa(.gz) for ARPA text: the names `resolve` knows."""
    name = kenlm_file_name(path)
    if name is None:
        refuse_pyplexity_model(path)
        raise ModelError(f"{path} is neither a KenLM binary nor an ARPA file")
    return name


def _log_warnings(message: str) -> None:
    """What a library caller that gave no `report` hears of an import: its warnings, logged."""
    if message.startswith("warning: "):
        logger.warning("%s", message.removeprefix("warning: "))


def import_model(name: str, kenlm_path: str | Path, tokenizer: str, sp_model: str | Path | None = None,
                 language: str = "", calibrate_files: str | Path | Iterable[str | Path] = (),
                 threshold: float | None = None, threshold_extracted: float | None = None,
                 document_threshold: float | None = None, copy: bool = False,
                 output_dir: str | Path | None = None, force: bool = False,
                 licence: str = "unknown", report=None) -> ImportResult:
    """Install `kenlm_path` (+ `sp_model`) as model `name`; see the module docstring.  `report(message)`
    says what happens, warnings included; without it, warnings are logged."""
    from . import TrainError, calibrate, check_model_name, write_threshold
    from .trainer import already_installed, installed_meanwhile

    check_model_name(name)
    calibrate_files = input_paths(calibrate_files) if calibrate_files else []
    report = report or _log_warnings
    if tokenizer not in TOKENIZERS:
        raise TokenizerError(f"unknown tokenizer {tokenizer!r} (choose one of {', '.join(TOKENIZERS)})")
    if tokenizer in SENTENCEPIECE_TOKENIZERS and not sp_model:
        raise TokenizerError(f"--tokenizer {tokenizer} needs --sp-model: the model's SentencePiece file "
                             f"(xx.sp.model, beside xx.arpa.bin)")
    if tokenizer == PLEXITY and sp_model:
        raise TokenizerError(f"--sp-model was given with --tokenizer {PLEXITY}, which does not use one: a "
                             f"CCNet / edugp model is imported with --tokenizer ccnet")
    kenlm_path = Path(kenlm_path).expanduser().resolve()
    if kenlm_path.is_dir():  # (a model folder, say: --kenlm names the KenLM file itself)
        raise ModelError(f"{kenlm_path} is a folder: --kenlm is the KenLM file (xx.arpa.bin, model.bin, .arpa)")
    if not kenlm_path.is_file():
        raise ModelError(f"KenLM file {kenlm_path} does not exist")
    if sp_model:
        sp_model = Path(sp_model).expanduser().resolve()
        load_sentencepiece(sp_model)  # a clear error now for a missing or non-SentencePiece file
    for value in (threshold, threshold_extracted, document_threshold):
        if value is not None and not value > 0:
            raise ValueError(f"a threshold is a positive perplexity, got {value}")
    if language:
        try:
            language = checked_language_code(language)
        except ValueError as exc:
            raise ModelError(f"--language: {exc}") from None

    directory = writable_install_dir(output_dir) / name
    if directory.exists() and not force:
        raise TrainError(already_installed(name, directory))
    # Made in a staging folder and moved into place when complete, as `plexity train` installs: no half-imported
    # model left behind, and with --force the installed one replaced only then (a --calibrate file mistyped,
    # or refused, had deleted it).
    try:
        with staged_folder(directory, report, replace=force) as staging:
            result = _install(name, kenlm_path, tokenizer, sp_model, language, calibrate_files, threshold,
                              threshold_extracted, document_threshold, copy, staging, licence, report,
                              calibrate, write_threshold)
    except FolderAppeared:
        raise TrainError(installed_meanwhile(name, directory)) from None
    return dataclasses.replace(result, info=resolve(directory), directory=directory)


def _install(name, kenlm_path, tokenizer, sp_model, language, calibrate_files, threshold, threshold_extracted,
             document_threshold, copy, directory, licence, report, calibrate, write_threshold) -> ImportResult:
    from ..scoring.scorer import PerplexityScorer

    target = directory / _kenlm_target_name(kenlm_path)
    if copy:
        report(f"copying {kenlm_path} ({kenlm_path.stat().st_size / 1e6:.0f} MB)")
        shutil.copyfile(kenlm_path, target)
    else:
        target.symlink_to(kenlm_path)
    if sp_model:
        shutil.copyfile(sp_model, directory / SP_FILE)
    info = ModelInfo(
        name=name, corpus="imported", tokenizer_version=tokenizer, language=language, licence=licence,
        sp_model=SP_FILE if sp_model else None, threshold=threshold, threshold_extracted=threshold_extracted,
        document_threshold=document_threshold,
        description=f"imported by `plexity models import` from {kenlm_path}",
        build={"imported_from": str(kenlm_path), "linked": not copy,
               **({"sp_model_from": str(sp_model)} if sp_model else {})})
    info.save(directory / "model.json")
    scorer = PerplexityScorer(directory, threshold=1.0, language_check=False)
    info.order = scorer.lm.order  # opens the KenLM file: a clear error if it is not one
    info.save(directory / "model.json")

    warnings: list[str] = []
    sentences = CHECK_SENTENCES.get(language, [])
    if not sentences:
        sentences = [line for f in calibrate_files for line in _read_lines(f)][:50]
    oov_share = _check_vocabulary(scorer, tokenizer, sentences, warnings) if sentences else None
    if language in CHECK_SENTENCES:
        _check_language(scorer, language, warnings)
    if not sentences:
        warnings.append(f"no built-in sentences for language {language or '(none)'!r} and no --calibrate text: "
                        f"the tokenizer could not be checked")
    for message in warnings:  # (once: the command's report, or the log for a library caller)
        report(f"warning: {message}")

    if calibrate_files:
        result = calibrate(PerplexityScorer(directory, threshold=1.0, language_check=False), calibrate_files)
        procedure = result.procedure(list(map(str, calibrate_files)), [])
        if result.too_few():
            report(f"warning: --calibrate: {result.too_few()}; give more held-out clean text")
        if result.other_language():
            report(f"warning: --calibrate: {result.other_language()}")
        if threshold is not None or threshold_extracted is not None:
            report("--threshold/--threshold-extracted given: --calibrate only reports its suggestion "
                   f"({result.threshold} / {result.threshold_extracted})")
        else:
            write_threshold(resolve(directory), result.threshold, procedure,
                            {"clean_sentences": len(result.clean),
                             "clean_percentiles": thresholds.percentile_report(result.clean)},
                            result.threshold_extracted, too_few=result.too_few())
    info = resolve(directory)
    return ImportResult(info, directory, oov_share, len(sentences), warnings)


def _check_language(scorer, language: str, warnings: list[str]) -> None:
    """Warns when the model reads another language's check sentences far better than its declared
    language's: a SentencePiece model has almost no unknown tokens in any language, so only its
    perplexities can tell that --language is wrong."""
    perplexities = {code: scorer.document_perplexity("\n".join(sentences))
                    for code, sentences in CHECK_SENTENCES.items()}
    best = min(perplexities, key=perplexities.get)
    if best != language and perplexities[language] > LANGUAGE_MARGIN * perplexities[best]:
        warnings.append(f"the model reads the check sentences of {best!r} far better (perplexity "
                        f"{perplexities[best]:,.0f}) than those of {language!r}, its declared language "
                        f"({perplexities[language]:,.0f}): is --language right?")


def _read_lines(path) -> list[str]:
    from .thresholds import read_sample_lines, sample_files

    return [line for found in sample_files([path]) for line in read_sample_lines(found)]


def _check_vocabulary(scorer, tokenizer: str, sentences: list[str], warnings: list[str]) -> float:
    """The share of unknown tokens in `sentences`; refuses a vocabulary of the other kind."""
    lm = scorer.lm
    words = {w.lower() for s in sentences for w in s.split()}
    # SentencePiece marks a word start with U+2581: "▁the" in the vocabulary means pieces.
    has_pieces = SPACE_PIECE in lm or any(SPACE_PIECE + w in lm for w in words)
    if tokenizer == PLEXITY and has_pieces:
        raise ModelError(f"the model's vocabulary holds SentencePiece pieces ({SPACE_PIECE}...) but the declared "
                         f"tokenizer is {PLEXITY}. Import it with --tokenizer ccnet --sp-model xx.sp.model")
    if tokenizer in SENTENCEPIECE_TOKENIZERS and not has_pieces:
        raise ModelError(f"the declared tokenizer is {tokenizer}, but the model's vocabulary has no SentencePiece "
                         f"pieces ({SPACE_PIECE}...): was it built from plexity-tok-1 text (--tokenizer {PLEXITY})?")
    records = [r for s in sentences for r in scorer.score(s)]
    tokens = sum(r.tokens for r in records)
    share = sum(r.oov for r in records) / tokens if tokens else 0.0
    if share > MAX_OOV_SHARE:
        warnings.append(f"{100 * share:.0f}% of the tokens of {len(sentences)} check sentences are unknown to the "
                        f"model (over {100 * MAX_OOV_SHARE:.0f}%): is the tokenizer ({tokenizer}), the .sp.model or "
                        f"the language right? Its perplexities would be implausible")
    return share
