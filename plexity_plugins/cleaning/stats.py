"""Counters of a cleaning run, shared by `plexity clean`, reports and benchmarks."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..io.atomic_files import write_atomic
from ..io.read_outcomes import READ_ERROR
from ..text.graphemes import prefix
from .policy import _ESCAPED_IN_STRINGS, DROPPED, KEPT, PASSED_THROUGH, Verdict, counts, empty_reason

if TYPE_CHECKING:  # (the scorer imports BlingFire and numpy: not for `plexity report` or `plexity --help`)
    from ..scoring.scorer import CleanResult

# What a cleaning run leaves beside its outputs, read back by `plexity report`.
STATS_FILE = "plexity-stats.json"
DROPPED_FILE = "plexity-dropped.jsonl"

HIST_BIN = 0.1  # width of a histogram bin, in log10(perplexity)
SAMPLES_PER_BAND = 5


def each_threshold(thresholds: dict[str, float]) -> str:
    """A language map's thresholds (or document cut-offs) as a summary and a step's name say them:
    ``en=5269.3,de=900``."""
    return ",".join(f"{language}={value:g}" for language, value in thresholds.items())

@dataclass
class RunStats:
    """The counts of a `plexity clean` run (written as ``plexity-stats.json``).

    They add up: every input file is in ``files`` or ``files_skipped``; every WARC record
    read (``records``) is a judged document (``documents``), a copied record
    (``records_copied``, by reason in ``copied_reasons``) or a skipped one (in
    ``documents_skipped``, by reason in ``skip_reasons``); every judged document is kept,
    ``documents_dropped`` (``drop_reasons``) or passed through.  Every judged document whose
    cleaned text is empty is in ``documents_empty``, by reason in ``empty_reasons``
    (`plexity_plugins.cleaning.policy.EMPTY_REASONS`; a dropped one also in ``drop_reasons``).
    ``completed`` is true only when the run handled every input.
    """

    model: str = ""
    threshold: float = 0.0
    # a language -> model map without one threshold for all: each language's (its model's own), as a datatrove run
    # records them; `plexity report` showed "threshold ?" of such a run, and the summary "threshold per model"
    thresholds: dict[str, float] | None = None
    method: str = ""
    text_method: str | None = None  # for .txt inputs, when it differs from `method`
    text_threshold: float | None = None
    page_text_method: str | None = None  # for WET records (a page's whole text), when it differs from `method`
    page_text_threshold: float | None = None
    extractor: str = ""
    annotate: bool = False
    max_document_bytes: int = 0
    completed: bool = False
    files: int = 0
    files_skipped: int = 0
    records: int = 0  # WARC records read
    records_copied: int = 0  # WARC records copied unchanged (not responses, not HTML)
    records_recovered: int = 0  # WARC records read after damage, where reading resynchronised
    bytes_skipped: int = 0  # bytes of WARC files passed over to resynchronise after damage
    pages_cut_by_crawler: int = 0  # pages (HTML, WET text) whose WARC record says the crawler kept only their start
    documents: int = 0  # documents judged by the policy (HTML responses, WET records, HTML and text files)
    documents_skipped: int = 0
    documents_dropped: int = 0
    documents_empty: int = 0
    documents_passthrough: int = 0  # passed through unfiltered (e.g. another language)
    documents_page_text: int = 0  # of `documents`, WET records: a page's text, not extracted
    documents_text: int = 0  # of `documents`, text files' (.txt, .txt.gz): not extracted
    documents_cleaned_text: int = 0  # of `documents`, a cleaned WARC's records read back: not extracted
    sentences_kept: int = 0
    sentences_dropped: int = 0
    chars_kept: int = 0
    chars_dropped: int = 0
    replaced_chars: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    seconds: float = 0.0
    skip_reasons: Counter = field(default_factory=Counter)
    copied_reasons: Counter = field(default_factory=Counter)
    drop_reasons: Counter = field(default_factory=Counter)
    empty_reasons: Counter = field(default_factory=Counter)
    passthrough_reasons: Counter = field(default_factory=Counter)
    # WARC files read only in part, by problem ("truncated", "corrupt"), and which
    damaged_files: Counter = field(default_factory=Counter)
    damaged_file_details: list = field(default_factory=list)
    _read_error_details: list = field(default_factory=list)  # (those of them of "read_error": not in the JSON)
    # files not read at all, each as "PATH: reason (detail)"
    skipped_file_details: list = field(default_factory=list)
    # log10(perplexity) histogram: {bin index: count}, bin i covers [i*HIST_BIN, (i+1)*HIST_BIN)
    histogram: Counter = field(default_factory=Counter)
    # the same for the dropped sentences only (which need not be the bins above the
    # threshold: the region and trim methods decide per block)
    histogram_dropped: Counter = field(default_factory=Counter)
    # a few dropped sentences per decade of perplexity ("3" = 1e3..1e4)
    dropped_samples: dict = field(default_factory=dict)

    def skip_file(self, reason: str, message: str = "") -> None:
        self.files_skipped += 1
        self.skip_reasons[reason] += 1
        if message:
            self.skipped_file_details.append(message)

    def nothing_read(self) -> bool:
        """Whether no input gave anything at all: no WARC record, no document (judged or skipped)."""
        return self.records == 0 and self.documents == 0 and self.documents_skipped == 0

    def unread_files(self, shown: int = 3) -> str:
        """The files that gave nothing, and why, in one line (the first `shown`; all are in the stats file)."""
        details = self.skipped_file_details + self.damaged_file_details
        more = f"; and {len(details) - shown} more (plexity-stats.json lists them)" if len(details) > shown else ""
        return "; ".join(details[:shown]) + more

    def skip(self, reason: str, documents: int = 1) -> None:
        self.documents_skipped += documents
        self.skip_reasons[reason] += documents

    def copy(self, reason: str) -> None:
        self.records_copied += 1
        self.copied_reasons[reason] += 1

    def damaged_file(self, problem: str, message: str) -> None:
        self.damaged_files[problem] += 1
        self.damaged_file_details.append(message)
        if problem == READ_ERROR:
            self._read_error_details.append(message)

    def damaged_files_named(self, shown: int = 3) -> str:
        """The damaged files, and how, in one line (the first `shown`; all are in the stats file)."""
        details = self.damaged_file_details
        more = f"; and {len(details) - shown} more (plexity-stats.json lists them)" if len(details) > shown else ""
        return "; ".join(details[:shown]) + more

    def read_error_files(self, shown: int = 3) -> str:
        """The files whose reading the system failed (``read_error``), in one line (the first `shown`)."""
        details = self._read_error_details
        more = f"; and {len(details) - shown} more (plexity-stats.json lists them)" if len(details) > shown else ""
        return "; ".join(details[:shown]) + more

    def add(self, judged: Verdict | CleanResult) -> None:
        """Count one judged document (a policy `Verdict`, or a bare `CleanResult`)."""
        sentence_counts = None
        if isinstance(judged, Verdict):
            empty = judged.empty
            sentence_counts = counts(judged)  # (a document dropped whole: its kept sentences count as dropped)
            if judged.status == DROPPED:
                self.documents_dropped += 1
                self.drop_reasons[judged.reason] += 1
            result = judged.result
            if judged.status != PASSED_THROUGH and result is not None and result.passthrough:
                self.documents += 1  # (dropped as another language: counted once, as dropped)
                self.replaced_chars += result.replaced_chars
                return
        else:
            result = judged
            empty = empty_reason(result)
        self.documents += 1
        if result.passthrough:
            self.documents_passthrough += 1
            self.passthrough_reasons[result.passthrough] += 1
        if not result.text.strip():
            self.documents_empty += 1
            self.empty_reasons[empty or empty_reason(result)] += 1
        sentence_counts = sentence_counts or counts(Verdict(KEPT, result.text, result))  # (a bare CleanResult)
        self.sentences_kept += sentence_counts["sentences_kept"]
        self.sentences_dropped += sentence_counts["sentences_dropped"]
        self.chars_kept += sentence_counts["chars_kept"]
        self.chars_dropped += sentence_counts["chars_dropped"]
        self.replaced_chars += result.replaced_chars
        for value in result.perplexities:
            self.histogram[int(math.log10(max(value, 1.0)) / HIST_BIN)] += 1
        needs_samples = False
        # (as sentences_dropped: every sentence of a document dropped whole)
        dropped_whole = isinstance(judged, Verdict) and judged.status == DROPPED
        for value in result.perplexities if dropped_whole else result.dropped_perplexities:
            log = math.log10(max(value, 1.0))
            self.histogram_dropped[int(log / HIST_BIN)] += 1
            needs_samples = needs_samples or len(self.dropped_samples.get(str(int(log)), ())) < SAMPLES_PER_BAND
        if needs_samples:  # (only then are the dropped sentences' texts needed)
            for sentence in result.dropped:
                band = str(int(math.log10(max(sentence.perplexity, 1.0))))
                samples = self.dropped_samples.setdefault(band, [])
                if len(samples) < SAMPLES_PER_BAND:
                    samples.append({"perplexity": round(sentence.perplexity, 1), "text": prefix(sentence.text, 300)})

    def to_dict(self) -> dict:
        data = asdict(self)
        for name in ("skip_reasons", "copied_reasons", "drop_reasons", "empty_reasons", "passthrough_reasons",
                     "damaged_files"):
            data[name] = dict(getattr(self, name))
        data["histogram"] = {
            "bin_width_log10": HIST_BIN,
            "counts": {str(k): v for k, v in sorted(self.histogram.items())},
            "dropped_counts": {str(k): v for k, v in sorted(self.histogram_dropped.items())},
        }
        del data["histogram_dropped"]  # (asdict mangles Counters: written from the field above)
        del data["_read_error_details"]  # (in damaged_file_details)
        # NaN: a language -> model map, each model its own (null); inf: the no-filtering baseline, written "inf" as
        # the settings record writes it (JSON has no infinity; null, as it was, made `plexity report` show "?")
        for key in ("threshold", "text_threshold", "page_text_threshold"):
            if data[key] is not None and not math.isfinite(data[key]):
                data[key] = "inf" if data[key] == math.inf else None
        return data

    def write(self, path: Path) -> None:
        """Write the stats JSON, whole or not at all (by rename: never a 0-byte file)."""
        # (a file's name that is not UTF-8, "caf\xe9.html" as wget saves a Latin-1 URL, is a str of lone surrogates,
        # which no UTF-8 file takes: escaped, as json_line does; a run that named one skipped or damaged ended
        # "plexity clean: error: 'utf-8' codec can't encode ...: surrogates not allowed", its stats lost)
        write_atomic(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False).translate(_ESCAPED_IN_STRINGS)
                     + "\n")

    def summary(self) -> str:
        sentences = self.sentences_kept + self.sentences_dropped
        share = 100.0 * self.sentences_dropped / sentences if sentences else 0.0
        # (the first few damaged files: every one made the line 118 kB for 2,000 cut .warc.gz files, all in the JSON)
        damaged = f", damaged: {self.damaged_files_named()}" if self.damaged_file_details else ""
        # (by reason, as `plexity run`'s line names its skips: a deduplicating crawl's revisits, a site's redirects
        # and error pages are told from its requests)
        copied = ": " + ", ".join(f"{reason} {n}" for reason, n in self.copied_reasons.most_common()) \
            if self.copied_reasons else ""
        recovered = (f"; {self.records_recovered} recovered after damage ({self.bytes_skipped:,} bytes skipped)"
                     if self.bytes_skipped else "")
        cut = f"; {self.pages_cut_by_crawler} pages cut short by the crawler" if self.pages_cut_by_crawler else ""
        records = (f"{self.records} WARC records ({self.records_copied} copied{copied}{recovered}{cut}), "
                   if self.records else "")
        return (
            f"{self.files} files ({self.files_skipped} skipped{damaged}), {records}{self.documents} documents "
            f"({self.documents_skipped} skipped, {self.documents_dropped} dropped, {self.documents_empty} emptied"
            f"{_reasons(self.empty_reasons)}, "
            f"{self.documents_passthrough} passed through unfiltered{_reasons(self.passthrough_reasons)}), "
            f"{sentences} sentences: {self._sentences(share)}, {self.bytes_in} bytes in, {self.bytes_out} bytes out, "
            f"{self.seconds:.1f} s ({self._settings()}{self._not_extracted()})"
        )

    def _settings(self) -> str:
        """The model, and the method, threshold and extractor where a document met them: a run of text files alone
        named an extractor that read nothing and the method for pages beside the text files' own."""
        not_extracted = self.documents_text + self.documents_page_text + self.documents_cleaned_text
        extracted = self.documents - not_extracted or not self.documents
        settings = f"model {self.model}"
        if extracted or self.documents_cleaned_text:  # (a cleaned WARC's text is judged by the line's method)
            threshold = each_threshold(self.thresholds or {}) or _threshold(self.threshold)
            settings += f", method {self.method}, threshold {threshold}"
        return settings + (f", extractor {self.extractor}" if extracted else "")

    def _sentences(self, share: float) -> str:
        """What became of the sentences: kept and dropped, or (--annotate) all kept, some marked."""
        if self.annotate:
            return f"{self.sentences_dropped} marked to drop ({share:.1f} %), none removed (--annotate)"
        return f"{self.sentences_kept} kept, {self.sentences_dropped} dropped ({share:.1f} %)"

    def _not_extracted(self) -> str:
        """What judged the documents no extractor read, where that is not the line's method: the
        text files' and the WET records' method and threshold."""
        clauses = []
        if self.documents_text and self.text_method:
            clauses.append(f"{self.documents_text} from text files: not extracted, method {self.text_method}, "
                           f"threshold {_threshold(self.text_threshold)}")
        if self.documents_page_text:
            method = self.page_text_method or self.method
            threshold = self.page_text_threshold if self.page_text_method else self.threshold
            clauses.append(f"{self.documents_page_text} WET records, a page's text each: not extracted, "
                           f"method {method}, threshold {_threshold(threshold)}")
        if self.documents_cleaned_text:  # (the line's own method: the one for an extractor's text)
            clauses.append(f"{self.documents_cleaned_text} records of a cleaned WARC, read back as text: "
                           f"not extracted")
        return "".join(f"; {clause}" for clause in clauses)

    def what_was_dropped(self, examples: int = 5) -> str:
        """Lines that show the cleaning: the drop reasons and a few dropped sentences with
        their perplexity (the full list: --write-dropped)."""
        lines = []
        if self.drop_reasons:
            reasons = ", ".join(f"{reason} {n}" for reason, n in self.drop_reasons.most_common())
            lines.append(f"documents dropped, by reason: {reasons}")
        if self.sentences_dropped:
            bands = [self.dropped_samples[b] for b in sorted(self.dropped_samples, key=int, reverse=True)]
            # one from each perplexity decade in turn, the highest first
            picked = list({s["text"]: s for s in (band[i] for i in range(max(map(len, bands), default=0))
                                                  for band in bands if i < len(band))}.values())[:examples]
            shown = "; ".join(f"{prefix(s['text'], 60)!r} ({s['perplexity']:,.0f})" for s in picked)
            lines.append(f"sentences {'marked' if self.annotate else 'dropped'}: {self.sentences_dropped} "
                         f"({self.chars_dropped:,} characters){', e.g. ' + shown if shown else ''}")
        return "\n".join(lines)


def _reasons(counts: Counter) -> str:
    return f" ({', '.join(f'{n} {reason}' for reason, n in counts.most_common())})" if counts else ""


def _threshold(value: float) -> str:
    return "per model" if value != value else f"{value:g}"  # NaN: each model of a language map its own
