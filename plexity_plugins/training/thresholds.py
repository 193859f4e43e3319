"""Thresholds: the percentile rule every model's default threshold follows (`plexity train`,
`plexity calibrate`, `plexity models import --calibrate`, scripts/default_model/build.py), the
held-out split it is measured on, calibration of a model on clean and boilerplate text, and
storing a threshold in a model's model.json.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import logging
import math
import os
import shlex
import statistics
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..scoring.models import EMBEDDED_DIR, MODEL_FILES, ModelInfo
from .corpora import READ_ERRORS, TextReader, input_paths, not_plain_text, open_corpus_bytes
from ..errors import CorpusError, ModelError, TrainError
from ..text.language import other_language

logger = logging.getLogger(__name__)


# -- shared by `plexity train`, `plexity calibrate` and scripts/default_model/build.py ----------

HOLDOUT_EVERY = 20  # 1 document in 20 is held out of training to set the threshold
THRESHOLD_PERCENTILE = 99  # of held-out clean sentences: the default "threshold" (raw text)
THRESHOLD_EXTRACTED_PERCENTILE = 99.9  # the default "threshold_extracted" (extractor output, method "trim")
REPORT_PERCENTILES = (50, 75, 90, 95, 98, 99, 99.5, 99.9)


def is_held_out(key: str, every: int = HOLDOUT_EVERY) -> bool:
    """Whether the document with this stable key is held out of training.

    CRC-32 of the key rather than a random draw: the same corpus always gives the same
    split, whatever the order of the files, so a rebuild reproduces the model.
    """
    return every > 0 and zlib.crc32(key.encode("utf-8")) % every == 0


def percentile_cuts(values: list[float]) -> list[float]:
    """The 999 cut points of `values` (at least 2): cuts[k - 1] is the (k / 10)th percentile,
    as scripts/default_model/build.py takes them (statistics.quantiles, n=1000)."""
    if len(values) < 2:
        raise ValueError(f"need at least 2 perplexities to take percentiles, got {len(values)}")
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=1000)
    # A cut between two values (statistics' own interpolation, its indices below) lies between them: between two
    # equal ones it is that value.  (Its float arithmetic put it 1 ulp below them: of 300 sentences of one perplexity
    # 6.569898428659913 the 99th percentile was ...912, and `plexity calibrate` suggested a threshold that "keeps
    # 0.0% of the clean sentences"; so too wherever the percentile fell among tied perplexities, those all dropped.)
    n, m = 1000, len(ordered) + 1
    for i in range(1, n):
        j = min(max(i * m // n, 1), len(ordered) - 1)
        if ordered[j - 1] == ordered[j]:  # (extrapolated past an end of equal values too)
            cuts[i - 1] = ordered[j]
        elif 0 <= i * m - j * n <= n:  # (within the data)
            cuts[i - 1] = min(max(cuts[i - 1], ordered[j - 1]), ordered[j])
    return cuts


def check_percentile(percentile: float, option: str = "percentile") -> float:
    """A percentile the rule can take: 0.1 to 99.9 in steps of 0.1, the 999 cut points (99.99 indexed past the
    last, 0.01 wrapped round to the 99.9th). ValueError naming `option` for another."""
    step = round(percentile * 10)
    if not 1 <= step <= 999 or abs(percentile * 10 - step) > 1e-6:
        raise ValueError(f"{option} {percentile:g}: a percentile is 0.1 to 99.9, in steps of 0.1")
    return percentile


def _cut(cuts: list[float], percentile: float) -> float:
    return cuts[round(check_percentile(percentile) * 10) - 1]


def _figure_digits(value: float) -> int:
    """The decimals a threshold is shown with: 1, or 4 significant digits for small values (a toy model's
    perplexities are ~2-10)."""
    return 1 if value <= 0 else max(1, 3 - math.floor(math.log10(value)))


def _round_figure(value: float) -> float:
    return round(value, _figure_digits(value))


def _round_keeping_split(cut: float, ordered: list[float]) -> float:
    """`cut` rounded (`_figure_digits`) as far as the rounded value keeps and drops the same of the sorted values
    `ordered` as `cut` does (a sentence at or below a threshold is kept): it lies at or above the highest value
    kept and below the lowest dropped; more decimals where one of them lies that close, `cut` itself at worst."""
    above = bisect.bisect_right(ordered, cut)
    highest_kept = ordered[above - 1] if above else -math.inf
    lowest_dropped = ordered[above] if above < len(ordered) else math.inf
    for digits in range(_figure_digits(cut), 17):
        rounded = round(cut, digits)
        if highest_kept <= rounded < lowest_dropped:
            return rounded
    return cut


def percentile_threshold(values: list[float], percentile: float = THRESHOLD_PERCENTILE) -> float:
    """The threshold rule of every model: this percentile (steps of 0.1) of clean sentences' perplexities,
    rounded only as far as it keeps the same of them (`_round_keeping_split`)."""
    ordered = sorted(values)
    return _round_keeping_split(_cut(percentile_cuts(ordered), percentile), ordered)


def percentile_report(values: list[float], points: Iterable[float] = REPORT_PERCENTILES) -> dict[str, float]:
    """{"50": ..., "99.9": ...}: the percentiles stored in model.json and printed by calibrate."""
    cuts = percentile_cuts(values)
    return {f"{p:g}": _round_figure(_cut(cuts, p)) for p in points}



def percentile_minimum(percentile: float) -> int:
    """The fewest values of which `percentile` is measured: one of them lies above it (100 for the 99th, 1,000
    for the 99.9th). Of fewer, statistics.quantiles (the "exclusive" method) extrapolates it past the highest."""
    return math.ceil(round(100 / (100 - percentile), 6))


def too_few_for(count: int, percentiles: dict[str, float]) -> str | None:
    """Why `count` sentences are too few for these percentiles ({"threshold": 99, ...}), one line; None if enough.
    The caller adds what to do (`plexity train`: a larger corpus, --holdout-every; calibrate: more text)."""
    short = {name: p for name, p in percentiles.items() if count < percentile_minimum(p)}
    if not short:
        return None
    needs = " and ".join(f"{name} (the {p:g}th percentile needs {percentile_minimum(p):,})"
                         for name, p in short.items())
    return (f"{count:,} sentences are too few for {needs}: with fewer, no sentence lies above the percentile, "
            f"which is extrapolated past the highest perplexity, not measured")


# -- calibration ------------------------------------------------------------------------------------


@dataclass
class Calibration:
    """Perplexities of clean (and boilerplate) sentences under a model, and the thresholds
    the percentile rule suggests: `threshold` (methods "region", "sentences") and
    `threshold_extracted` (method "trim", on extractor output)."""

    model: str
    percentile: float
    percentile_extracted: float
    clean: list[float]
    boilerplate: list[float]
    threshold: float
    threshold_extracted: float
    language: str = ""  # the model's
    text_language: str | None = None  # another language the clean text reads as (`other_language`), if it does

    def other_language(self) -> str | None:
        """What to say when the clean text is in another language than the model's, or None.  (`plexity calibrate
        --model de-news` on French text suggested 1120.1 where the German model's own was 4.2, and --write stored
        it: the model then filtered next to nothing, and said nothing.)"""
        if not self.text_language:
            return None
        return (f"the clean text reads as {self.text_language}, not as {self.language}, the model's language: "
                f"thresholds from it are on another language's scale (and text in {self.text_language} passes "
                f"through this model unfiltered); give held-out clean text in {self.language}")

    def clean_kept(self, threshold: float) -> float:
        return sum(p <= threshold for p in self.clean) / len(self.clean)

    def boilerplate_dropped(self, threshold: float) -> float | None:
        if not self.boilerplate:
            return None
        return sum(p > threshold for p in self.boilerplate) / len(self.boilerplate)

    def best_separating_threshold(self) -> float | None:
        """The threshold maximising (clean kept + boilerplate dropped) / 2, for comparison."""
        if not self.boilerplate:
            return None
        clean, boilerplate = sorted(self.clean), sorted(self.boilerplate)

        def balanced(t: float) -> float:
            return (bisect.bisect_right(clean, t) / len(clean)
                    + (len(boilerplate) - bisect.bisect_right(boilerplate, t)) / len(boilerplate))

        best = max(sorted(set(clean) | set(boilerplate)), key=balanced)  # ties: the lowest
        return round(best, 1)

    def too_few(self) -> str | None:
        """Why the clean sentences are too few for the percentiles asked (`too_few_for`), or None."""
        return too_few_for(len(self.clean), {"threshold": self.percentile,
                                             "threshold_extracted": self.percentile_extracted})

    def procedure(self, clean_files: list[str], boilerplate_files: list[str]) -> str:
        text = (f"threshold: {self.percentile:g}th, threshold_extracted: {self.percentile_extracted:g}th "
                f"percentile of the perplexities of {len(self.clean)} clean sentences "
                f"({', '.join(Path(f).name for f in clean_files)}) by `plexity calibrate` on "
                f"{dt.date.today().isoformat()}")
        if self.boilerplate:
            above = sum(p > self.threshold for p in self.boilerplate)
            above_extracted = sum(p > self.threshold_extracted for p in self.boilerplate)
            text += (f"; {above} and {above_extracted} of {len(self.boilerplate)} boilerplate sentences "
                     f"({', '.join(Path(f).name for f in boilerplate_files)}) lie above them")
        if self.too_few():  # (the model's card says how far its threshold can be trusted)
            text += f"; {self.too_few()}"
        return text


def read_sample_lines(path: Path) -> list[str]:
    """Non-blank lines of a text file (lines starting with '#' are comments, as in
    scripts/default_model/boilerplate.txt)."""
    try:  # (compressed as `plexity train` reads text, by its bytes: heldout.txt.gz, .bz2, .xz)
        with open_corpus_bytes(Path(path)) as f:
            data = f.read()
    except READ_ERRORS as exc:
        raise CorpusError(f"{path}: cannot read: {exc}") from exc
    kind = not_plain_text(data.split(b"\n", 1)[0].decode("utf-8", "replace"), Path(path))
    if kind:  # (its records would be scored as clean sentences, headers and field names and all)
        raise CorpusError(f"{path}: {kind}; give clean text, one paragraph a line")
    try:  # (as `plexity train` reads text: a binary or Latin-1 file is no sample of clean text)
        text = data.decode("utf-8-sig")  # (a BOM is no part of the first sentence: as `plexity train` reads text)
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text (at byte {exc.start}): give clean text, one paragraph a line") \
            from None
    if "\x00" in text:
        raise CorpusError(f"{path}: not text (it holds NUL bytes): give clean text, one paragraph a line")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def sample_files(paths: Iterable[str | Path]) -> list[Path]:
    """The text files of calibration samples: files as given, folders searched for text files, as
    `plexity train --corpus text` reads them (`TextReader`)."""
    return TextReader(paths).files()


LANGUAGE_SAMPLE_LINES = 200


def calibrate(scorer, clean_files: str | Path | Iterable[str | Path], boilerplate_files: Iterable[str | Path] = (),
              percentile: float = THRESHOLD_PERCENTILE,
              percentile_extracted: float = THRESHOLD_EXTRACTED_PERCENTILE) -> Calibration:
    """Score every sentence of the clean files (and of the boilerplate files) with `scorer`
    and suggest thresholds at these percentiles of the clean sentences' perplexities."""
    try:
        check_percentile(percentile, "--percentile")
        check_percentile(percentile_extracted, "--percentile-extracted")
    except ValueError as exc:
        raise TrainError(str(exc)) from None
    clean_files = sample_files(clean_files)  # (all found before scoring what may be a lot of text)
    boilerplate_files = input_paths(boilerplate_files)
    boilerplate_files = sample_files(boilerplate_files) if boilerplate_files else []
    sample: list[str] = []  # (the first lines, to identify their language: as `plexity train` checks --language)

    def sampled(lines: Iterable[str]) -> Iterable[str]:
        for line in lines:
            if len(sample) < LANGUAGE_SAMPLE_LINES:
                sample.append(line)
            yield line

    clean = [s.perplexity for f in clean_files for line in sampled(read_sample_lines(Path(f)))
             for s in scorer.score(line)]
    if len(clean) < 2:
        raise CorpusError(f"need at least 2 clean sentences to calibrate, found {len(clean)} in "
                          f"{', '.join(map(str, clean_files))}")
    boilerplate = [s.perplexity for f in boilerplate_files for line in read_sample_lines(Path(f))
                   for s in scorer.score(line)]
    language = getattr(scorer.info, "language", "") or ""
    return Calibration(scorer.model_name, percentile, percentile_extracted, clean, boilerplate,
                       percentile_threshold(clean, percentile),
                       percentile_threshold(clean, percentile_extracted), language,
                       other_language("\n".join(sample), language) if language else None)


def metadata_path(info: ModelInfo) -> Path:
    """The model.json (or <file>.json) that holds a model's metadata, if it may be written."""
    path = Path(info.path)
    sidecar = Path(str(path) + ".json")
    if path.name in MODEL_FILES and (path.parent / "model.json").is_file():
        metadata = path.parent / "model.json"
    elif sidecar.is_file():
        metadata = sidecar
    else:
        raise ModelError(f"model {path} has no metadata file to write the threshold into "
                         f"(expected {path.parent / 'model.json'} or {sidecar})")
    # (the metadata's own place decides: an imported model links the embedded model.bin, and is writable)
    if EMBEDDED_DIR.resolve() in metadata.resolve().parents:
        raise ModelError(f"'{info.name}' is the embedded model, which is read-only: calibrate a model you "
                         f"trained (plexity train) or imported (plexity models import), or pass --threshold "
                         f"when cleaning")
    if not os.access(metadata.parent, os.W_OK | os.X_OK):  # (a shared model folder of someone else's)
        raise ModelError(f"--write stores the thresholds in {metadata}, whose folder this user may not write: "
                         f"calibrate a copy of the model (cp -r {shlex.quote(str(metadata.parent))} DIR, then --model "
                         f"DIR), or pass "
                         f"--threshold when cleaning")
    return metadata


def write_threshold(info: ModelInfo, threshold: float, procedure: str, details: dict | None = None,
                    threshold_extracted: float | None = None, too_few: str | None = None) -> Path:
    """Store `threshold` (and `threshold_extracted`) as the model's defaults in its metadata
    file; every other field is kept.  `too_few`: why its sentences were too few for the percentiles
    (`too_few_for`), kept as ``build.threshold_too_few`` (None: enough), as `plexity train` keeps its own."""
    json_path = metadata_path(info)
    data = json.loads(json_path.read_text(encoding="utf-8"))
    previous = {"previous_threshold": data.get("threshold"),
                "previous_threshold_extracted": data.get("threshold_extracted")}
    data["threshold"] = threshold
    if threshold_extracted is not None:
        data["threshold_extracted"] = threshold_extracted
    data["threshold_procedure"] = procedure
    build = data.setdefault("build", {})
    build["calibration"] = {**previous, **(details or {})}
    build["threshold_too_few"] = too_few  # (the threshold's own: an earlier one's no longer applies)
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(json_path)
    return json_path
