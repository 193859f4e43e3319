"""What a `plexity run` counted, read from datatrove's merged stats (``logs/stats.json``), named as
`plexity clean`'s counts are (`plexity_plugins.cleaning.stats.RunStats`) where it has the count: the
one reading of a run's stats, which the run's summary prints and `plexity report` shows."""

from __future__ import annotations

import json
from pathlib import Path

from ..io.read_outcomes import NOT_A_REGULAR_FILE, NOT_PAGES, UNREADABLE_FILE, UNSUPPORTED_COMPRESSION, WAT_FILE
from .extractors import LOST_COUNTERS  # (the pages the extractor step forwards nothing for)
from .run_settings import SETTINGS_FILE


def step_stats(merged: list, name_part: str) -> dict | None:
    """The counters of the step whose name holds `name_part`; None when the run has no such step."""
    for step in merged:
        if name_part in step.get("name", ""):
            return {k: v.get("total", v) if isinstance(v, dict) else v for k, v in step.get("stats", {}).items()}
    return None


def _by_prefix(counters: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in counters.items() if k.startswith(prefix)}


def run_counts(merged: list) -> dict:
    """What a run counted, from datatrove's merged stats, named as `plexity clean`'s (`RunStats`) where it
    has the count: what the summary prints and `plexity report` shows.  A step the run does not have
    (no extractor with --extractor none) gives no counts at all, not 0s: the report shows them unknown."""
    counts: dict = {}
    reader = step_stats(merged, "WARC HTML")
    if reader is not None:
        # datatrove counts every listed file in input_files, also those the reader could not open
        file_skips = {reason: reader[reason] for reason in (NOT_A_REGULAR_FILE, UNREADABLE_FILE,
                                                            UNSUPPORTED_COMPRESSION, WAT_FILE) if reader.get(reason)}
        files_skipped = sum(file_skips.values())
        skipped = _by_prefix(reader, "skipped_")
        # records that are no page (requests, metadata, images ...): `plexity clean` copies them
        # (records_copied), a run writes only documents; they are not documents skipped
        not_pages = sum(skipped.get(reason, 0) for reason in NOT_PAGES)
        counts.update(files=reader.get("input_files", 0) - files_skipped, files_skipped=files_skipped,
                      file_skip_reasons=file_skips,
                      records=reader.get("records", 0), documents=reader.get("documents", 0),
                      documents_page_text=reader.get("page_texts", 0),
                      documents_cleaned_text=reader.get("cleaned_texts", 0),
                      documents_skipped=sum(skipped.values()) - not_pages, records_not_pages=not_pages,
                      skip_reasons=skipped, damaged_files=_by_prefix(reader, "corrupt_files_"),
                      records_recovered=reader.get("records_recovered", 0),
                      bytes_skipped=reader.get("bytes_skipped", 0),
                      pages_cut_by_crawler=reader.get("pages_cut_by_crawler", 0))
    elif (reader := step_stats(merged, "📖 - READER")) is not None:
        # another reader (datatrove's JsonlReader, ParquetReader of a text dataset: docs/datatrove.md): its files and
        # documents (the report said "documents unknown" above the filter's "documents kept 7"); those of ours
        # (JsonlDocumentReader, ParquetDocumentReader) count each row skipped and each damaged file, by reason
        file_skips = {reason: reader[reason] for reason in (NOT_A_REGULAR_FILE, UNREADABLE_FILE) if reader.get(reason)}
        counts.update(files=reader.get("input_files", 0) - sum(file_skips.values()),
                      documents=reader.get("documents", 0))
        skipped = _by_prefix(reader, "skipped_")
        if skipped or file_skips or reader.get("corrupt_files"):
            counts.update(files_skipped=sum(file_skips.values()), file_skip_reasons=file_skips,
                          documents_skipped=sum(skipped.values()), skip_reasons=skipped,
                          damaged_files=_by_prefix(reader, "corrupt_files_"))
    extractor = step_stats(merged, "EXTRAC")
    if extractor is not None:
        counts.update(documents_extracted=extractor.get("forwarded", 0),
                      lost_reasons={"no_text" if k == "dropped" else k: extractor[k]
                                    for k in LOST_COUNTERS if extractor.get(k)})
    # (PerplexitySentenceFilter.name: a PerplexityDocumentFilter before it, "🧮 Perplexity document", was read as the
    # sentence filter, its 0 sentences reported)
    filt = step_stats(merged, "🧮 Perplexity sentences")
    if filt is not None:
        counts.update({key: filt.get(key, 0) for key in ("sentences_kept", "sentences_dropped", "chars_kept",
                                                          "chars_dropped", "replaced_chars")})
        counts.update(documents_filtered=filt.get("total", 0), documents_kept=filt.get("forwarded", 0),
                      documents_dropped=filt.get("dropped", 0), drop_reasons=_by_prefix(filt, "dropped_"),
                      documents_empty=filt.get("empty", 0), empty_reasons=_by_prefix(filt, "empty_"),
                      documents_passthrough=filt.get("passthrough", 0),
                      passthrough_reasons=_by_prefix(filt, "passthrough_"),
                      documents_looks_like_html=filt.get("looks_like_html", 0))
    counts.update(_other_steps(merged))
    return counts


OUR_STEPS = ("WARC HTML", "EXTRAC", "🧮 Perplexity sentences")  # (the steps whose counts are read above)


def _other_steps(merged: list) -> dict:
    """What the pipeline's other steps did to the documents (a script's own pipeline: datatrove's filters, a
    `PerplexityDocumentFilter`, a dedup step): the documents each of them dropped, by step, and the documents its
    last writer wrote. (A report of such a pipeline said "documents kept 12" of the sentence filter's, with 6
    written: the other steps' drops were in datatrove's stats only.) None for a pipeline without other filters."""
    counts: dict = {}
    dropped: dict[str, int] = {}
    # (the steps whose counts `run_counts` read, the first of each: a second sentence filter, a trigram model's after
    # a bigram model's, is another step here)
    read = {id(next((step for step in merged if part in step.get("name", "")), None)) for part in OUR_STEPS}
    for position, step in enumerate(merged, 1):
        name = step.get("name", "")
        counters = {k: v.get("total", v) if isinstance(v, dict) else v for k, v in step.get("stats", {}).items()}
        if name.startswith("💽 - WRITER"):
            counts["documents_written"] = counters.get("total", 0)  # (the last writer's: the pipeline's output)
        elif id(step) not in read and ("dropped" in counters or name.startswith("🔻 - FILTER")):
            label = name.split(": ", 1)[-1]  # (a filter that dropped nothing is named, with 0)
            if label in dropped:  # (two steps of one name, two LambdaFilters: each)
                label = f"{label} (step {position})"
            dropped[label] = counters.get("dropped", 0)
    if dropped:
        counts.update(documents_dropped_other=sum(dropped.values()), other_steps_dropped=dropped)
    return counts


def report_stats(merged: list, folder: Path) -> dict:
    """What `plexity report` shows of a run folder (`plexity_plugins.cleaning.report`): the counts of
    datatrove's merged stats (a list of steps) as the run's summary counts them (`run_counts`), with
    the settings the run recorded in `folder`."""
    if isinstance(merged, list) and merged and all(isinstance(task, list) for task in merged):
        from datatrove.utils.stats import PipelineStats  # (each task's stats, not merged: a run killed, or running)

        merged = sum((PipelineStats.from_json(task) for task in merged), start=PipelineStats())
        merged = json.loads(merged.to_json())
    if not isinstance(merged, list) or not all(isinstance(step, dict) for step in merged):
        raise ValueError("not a list of steps, each an object")
    stats = {**run_counts(merged), **_run_settings(folder), **_tasks(folder)}
    stats["format"] = "datatrove stats (plexity run): counts only, no perplexity histogram"
    return stats


def _tasks(folder: Path) -> dict:
    """How many tasks the run has (its record's) and how many completed (their completion markers in `folder`), so
    that a report says when a run did not complete; none where the run recorded no settings."""
    try:
        tasks = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))["tasks"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    completions = folder / "completions"
    done = sum(1 for _ in completions.iterdir()) if completions.is_dir() else 0
    return {"tasks": tasks, "tasks_completed": done} if isinstance(tasks, int) else {}


def _run_settings(folder: Path) -> dict:
    """Model, threshold, method, extractor and annotate, from the settings a run recorded in `folder`
    (`plexity_plugins.datatrove.run_settings`); none (shown as unknown) when it recorded none."""
    try:
        steps = [s for s in json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))["steps"]
                 if isinstance(s, dict)]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    # --extractor none: no extractor step
    settings = {"extractor": next((s["extractor"] for s in steps if "extractor" in s), "none")}
    for step in steps:
        if step.get("step") == "PerplexitySentenceFilter":
            model, threshold = step.get("model"), step.get("threshold")
            if isinstance(model, dict):  # a language -> model map
                model = ", ".join(f"{language} {name}" for language, name in model.items())
            if isinstance(threshold, dict):  # (a map's: each language's own)
                settings["thresholds"] = {str(language): value for language, value in threshold.items()
                                          if isinstance(value, (int, float))}
            if threshold != "inf" and (not isinstance(threshold, (int, float)) or threshold != threshold):
                threshold = None  # (or NaN, a map's before each language's was recorded; "inf": --threshold inf)
            settings.update(model=model, method=step.get("method"), annotate=step.get("annotate"), threshold=threshold)
    return settings
