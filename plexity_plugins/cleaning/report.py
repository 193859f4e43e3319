"""`plexity report`: a static, self-contained HTML report (and a PNG histogram) of a run.

Input: the ``plexity-stats.json`` that `plexity clean` writes (`plexity_plugins.cleaning.stats.RunStats`:
counters, a histogram of log10 perplexity in bins of 0.1, a few dropped sentences per
decade), or the output directory holding it; a ``plexity-dropped.jsonl`` beside it (from
``--write-dropped``) adds more sample sentences, with their sources.  The output directory of
`plexity run` (datatrove's merged ``logs/stats.json``) is read too: the counts its summary prints
(`plexity_plugins.datatrove.run_counts.report_stats`) and the settings it recorded beside them
(``logs/plexity-settings.json``); its stats carry counts only, so that report has no histogram,
and what a run does not count (records copied, bytes) is shown as unknown.

The HTML has no scripts and loads nothing: the histogram is embedded as a PNG data URI and
every piece of text from the data is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..io.folders import walk
from ..text.graphemes import prefix
from .stats import DROPPED_FILE, STATS_FILE

SAMPLES_PER_BAND = 8       # sample dropped sentences shown per perplexity decade
WHAT_IF_LOG10 = (2.0, 2.3, 2.5, 2.7, 3.0, 3.3, 3.5, 3.7, 4.0, 4.5)  # thresholds at bin edges
# counts only `plexity run` keeps (`plexity_plugins.datatrove.run_counts`): no row for `plexity clean`'s stats
RUN_ONLY_COUNTS = ("records_not_pages", "documents_extracted", "documents_kept", "documents_dropped_other",
                   "documents_written")
# (every stats file is written whole, or not at all: one that does not read was edited or damaged since)
REWRITE = "a hand-edited or damaged file? the same plexity clean or plexity run command again writes it anew"
WHAT_TO_GIVE = f"give the output folder of plexity clean or plexity run, or the {STATS_FILE} of plexity clean"
KEPT_COLOUR = "#1f5fbf"
DROPPED_COLOUR = "#c62828"


@dataclass
class ReportData:
    """What a report shows, whatever stats file it came from."""

    source: Path
    stats: dict
    histogram: dict[int, int] = field(default_factory=dict)  # bin index -> sentences
    dropped: dict[int, int] | None = None  # bin index -> dropped sentences, when recorded
    bin_width: float = 0.1
    samples: dict[str, list[dict]] = field(default_factory=dict)  # decade -> [{perplexity, text, source?}]

    @property
    def threshold(self) -> float | None:
        """The run's threshold; inf for the no-filtering baseline (recorded ``"inf"``); None when unknown."""
        value = self.stats.get("threshold")
        return float(value) if value else None


NO_FILTERING = "inf (the no-filtering baseline: nothing dropped by perplexity)"  # `--threshold inf`: it was "?"


def _threshold_shown(threshold: float | None, thresholds) -> str:
    """The run's threshold, or a language map's each language's (``en 500, fr 1692.4``: it was "?"), or "?"."""
    if threshold == math.inf:
        return NO_FILTERING
    if threshold:
        return f"{threshold:g}"
    if isinstance(thresholds, dict) and thresholds:
        return ", ".join(f"{language} {value:g}" for language, value in thresholds.items())
    return "?"


# -- reading -------------------------------------------------------------------------------

def _written(path: Path) -> str:
    """When `path` was last written, for a message: ``written 2026-12-02 10:12``."""
    import time

    return "written " + time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))


def find_stats(path: str | Path) -> Path:
    """The stats file given, or the one in (or, uniquely, under) the directory given."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist")
    clean, run = path / STATS_FILE, path / "logs" / "stats.json"
    if clean.is_file() and run.is_file():  # (both commands wrote into it: either stats may be the older run's)
        raise ValueError(f"{path} holds the stats of a plexity clean ({clean.name}, {_written(clean)}) and of a "
                         f"plexity run (logs/stats.json, {_written(run)}): name the one to report, "
                         f"plexity report {shlex.quote(str(clean))} or plexity report {shlex.quote(str(run))}")
    for candidate in (clean, run, path / "stats.json"):
        if candidate.is_file():
            return (candidate.name == "stats.json" and task_stats_folder(candidate.parent)) or candidate
    for logs in (path / "logs", path):  # (a run killed, or running: its tasks' stats, not merged yet)
        if tasks := task_stats_folder(logs):
            return tasks
    # (walked without recursion: Path.rglob recursed once a level, a folder 1,200 levels deep a RecursionError)
    found = sorted(Path(folder) / STATS_FILE for folder, _, names in walk(path) if STATS_FILE in names)
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"{len(found)} {STATS_FILE} files under {path}: name one of them "
                         f"({', '.join(str(f) for f in found[:5])})")
    raise FileNotFoundError(f"no {STATS_FILE} (from `plexity clean`) or logs/stats.json (from `plexity run`) "
                            f"in {path}")


def task_stats_folder(logs: Path) -> Path | None:
    """The folder of a `plexity run` logging folder's per-task stats (``stats/NNNNN.json``, each task's, written
    as it completes) when its merged ``stats.json`` is not there or is older than one of them: the run was killed
    (its driver merges them when its tasks end), or runs still, or a later run completed tasks whose stats the
    merge does not hold yet.  (A report of such a folder said there were no stats, or showed an earlier merge.)"""
    folder = logs / "stats"
    try:
        newest = max((f.stat().st_mtime for f in folder.glob("*.json") if f.is_file()), default=None)
        merged = logs / "stats.json"
        return folder if newest is not None and (not merged.is_file() or merged.stat().st_mtime < newest) else None
    except OSError:
        return None


def _task_stats(folder: Path) -> list:
    """Each task's stats in `folder` (`task_stats_folder`), a list of steps each, in the order of the tasks."""
    tasks = []
    for path in sorted(folder.glob("*.json")):
        try:
            tasks.append(json.loads(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path} is not a JSON stats file ({exc}): {REWRITE}") from None
    return tasks


def incomplete(stats: dict) -> str | None:
    """What a report says first when the run it shows did not complete (`plexity clean`'s stats say
    ``"completed": false``; a `plexity run` folder has fewer completed tasks than the run has), else None.
    (The report showed such counts as a whole run's, saying nothing.)"""
    if stats.get("completed") is False:
        return ("this plexity clean run did not complete (interrupted, killed or a full disk): these are the counts "
                "of the inputs it handled before it stopped; the same command again cleans them all")
    tasks, done = stats.get("tasks"), stats.get("tasks_completed")
    if _is_number(tasks, whole=True) and _is_number(done, whole=True) and done < tasks:
        return (f"this plexity run did not complete: {done} of {tasks} tasks completed, and these are their counts; "
                f"the same plexity run command runs the others")
    return None


def load_report_data(path: str | Path, run_stats=None) -> ReportData:
    """Read a run's stats (see the module docstring) into ReportData.  `run_stats(merged, folder)`
    reads a `plexity run` folder's (datatrove's merged stats, and the settings the run recorded in
    `folder`): `plexity_plugins.datatrove.run_counts.report_stats`, given by the caller (this layer
    is below datatrove's)."""
    stats_path = find_stats(path)
    if stats_path.is_dir():  # (a run's tasks' stats, not merged: `task_stats_folder`; `run_stats` merges them)
        raw = _task_stats(stats_path)
        stats_path = stats_path.parent / "stats.json"  # (the folder `run_stats` reads the run's record from)
    else:
        try:
            raw = json.loads(stats_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            # (a stats file's name: damaged since; another file: given by mistake)
            hint = REWRITE if stats_path.name in (STATS_FILE, "stats.json") else WHAT_TO_GIVE
            raise ValueError(f"{stats_path} is not a JSON stats file ({exc}): {hint}") from None
    if isinstance(raw, list):
        if run_stats is None:
            raise ValueError(f"{stats_path} holds a plexity run's stats: read them with `plexity report`")
        try:
            stats = run_stats(raw, stats_path.parent)
        except (TypeError, AttributeError, KeyError, ValueError) as exc:  # (a hand-edited stats.json)
            raise ValueError(f"{stats_path} is not datatrove's merged stats as a run writes them ({exc}): "
                             f"{REWRITE}") from None
    elif isinstance(raw, dict) and ("sentences_kept" in raw or "histogram" in raw):
        stats = raw
    else:
        raise ValueError(f"{stats_path} is neither a {STATS_FILE} from `plexity clean` nor datatrove stats: "
                         f"{WHAT_TO_GIVE}")
    problem = stats_problem(stats)
    if problem:
        raise ValueError(f"{stats_path}: {problem}: {REWRITE}")
    data = ReportData(source=stats_path, stats=stats)
    hist = stats.get("histogram") or {}
    data.bin_width = float(hist.get("bin_width_log10", 0.1))
    data.histogram = {int(k): int(v) for k, v in (hist.get("counts") or {}).items()}
    if "dropped_counts" in hist:
        data.dropped = {int(k): int(v) for k, v in hist["dropped_counts"].items()}
    for band, samples in (stats.get("dropped_samples") or {}).items():
        data.samples[str(band)] = [dict(s) for s in samples]
    _add_dropped_file_samples(data, stats_path.parent / DROPPED_FILE)
    return data


COUNT_KEYS = ("files", "files_skipped", "records", "records_copied", "records_not_pages", "documents",
              "documents_skipped", "documents_extracted", "documents_kept", "documents_dropped", "documents_empty",
              "documents_passthrough", "sentences_kept", "sentences_dropped", "chars_kept", "chars_dropped",
              "replaced_chars", "bytes_in", "bytes_out", "documents_dropped_other", "documents_written")
REASON_KEYS = ("file_skip_reasons", "skip_reasons", "drop_reasons", "copied_reasons", "damaged_files",
               "passthrough_reasons", "lost_reasons", "other_steps_dropped")


def _is_number(value, whole: bool = False) -> bool:
    kinds = (int,) if whole else (int, float)
    return isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value)  # (JSON's NaN)


def _shown(value) -> str:
    """A value of a stats file as an error shows it: its JSON, cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else prefix(text, 57) + "..."


def _whole_key(key) -> bool:
    try:
        int(key)
    except (TypeError, ValueError):
        return False
    return True


def stats_problem(stats: dict) -> str | None:
    """What in a stats dict the report cannot read, in words naming the key; None when all of it reads.
    A key left out (or null) is shown as unknown in the counts; a key of the wrong type is an error (a
    report showing it would guess)."""
    for key in COUNT_KEYS:
        if stats.get(key) is not None and not _is_number(stats[key], whole=True):
            return f'"{key}" is {_shown(stats[key])}, not a whole number'
    for key in ("threshold", "seconds"):
        if stats.get(key) is not None and not _is_number(stats[key]) and (key, stats[key]) != ("threshold", "inf"):
            return f'"{key}" is {_shown(stats[key])}, not a number'
    for key in REASON_KEYS:
        reasons = stats.get(key)
        if reasons is None:
            continue
        if not isinstance(reasons, dict):
            return f'"{key}" is {_shown(reasons)}, not an object of reason: count'
        bad = next((reason for reason, count in reasons.items() if not _is_number(count, whole=True)), None)
        if bad is not None:
            return f'"{key}"."{bad}" is {_shown(reasons[bad])}, not a whole number'
    hist = stats.get("histogram")
    if hist is not None:
        if not isinstance(hist, dict):
            return f'"histogram" is {_shown(hist)}, not an object'
        width = hist.get("bin_width_log10", 0.1)
        if not _is_number(width) or width <= 0:
            return f'"histogram"."bin_width_log10" is {_shown(width)}, not a number above 0'
        for part in ("counts", "dropped_counts"):
            counts = hist.get(part)
            if counts is None:
                continue
            if not isinstance(counts, dict):
                return f'"histogram"."{part}" is {_shown(counts)}, not an object of bin: count'
            bad = next((b for b, c in counts.items() if not _whole_key(b) or not _is_number(c, whole=True)), None)
            if bad is not None:
                return (f'"histogram"."{part}" has {_shown(bad)}: {_shown(counts[bad])} '
                        f'(its bins and counts are whole numbers)')
    samples = stats.get("dropped_samples")
    if samples is not None:
        if not isinstance(samples, dict):
            return f'"dropped_samples" is {_shown(samples)}, not an object of band: sentences'
        for band, items in samples.items():
            if not _whole_key(band) or not isinstance(items, list):
                return f'"dropped_samples" has {_shown(band)}: {_shown(items)} (a whole number: a list of sentences)'
            bad = next((item for item in items if not isinstance(item, dict)
                        or not _is_number(item.get("perplexity", 0))), None)
            if bad is not None:
                return f'"dropped_samples"."{band}" holds {_shown(bad)}, not a sentence with its perplexity'
    return None


def _add_dropped_file_samples(data: ReportData, path: Path) -> None:
    """More samples per decade, with their source, from plexity-dropped.jsonl if present."""
    if not path.is_file():
        return
    seen = {(s.get("text"), s.get("perplexity")) for samples in data.samples.values() for s in samples}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict) or "perplexity" not in record or "text" not in record:
                continue  # a skipped document, not a dropped sentence
            if not _is_number(record["perplexity"]) or not isinstance(record["text"], str):
                continue  # (a hand-edited line: the samples are a sample; the rest still reads)
            band = str(int(math.log10(max(float(record["perplexity"]), 1.0))))
            samples = data.samples.setdefault(band, [])
            key = (record.get("text", "")[:300], round(float(record["perplexity"]), 1))
            if len(samples) >= SAMPLES_PER_BAND or key in seen:
                continue
            seen.add(key)
            samples.append({"perplexity": key[1], "text": key[0], "source": record.get("source", ""),
                            "reason": record.get("reason", "")})
            if all(len(s) >= SAMPLES_PER_BAND for s in data.samples.values()) and len(data.samples) >= 6:
                break


# -- the histogram ----------------------------------------------------------------------------

def _matplotlib_figure():
    """matplotlib's Figure (no pyplot: no GUI backend, no global state), imported without its two warnings for a
    user whose HOME is not theirs to write (cron's, a service's): "mkdir -p failed for path
    /nonexistent/.config/matplotlib" and "Matplotlib created a temporary cache directory ... set the MPLCONFIGDIR
    environment variable", which came before every report, about a cache the report does not need kept."""
    import logging

    quiet = logging.getLogger("matplotlib")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        from matplotlib.figure import Figure
    finally:
        quiet.setLevel(level)
    return Figure


def histogram_png(data: ReportData) -> bytes:
    """The perplexity histogram: log x axis, kept sentences blue, dropped ones stacked in red,
    the threshold line.  (Older stats without per-bin drop counts: red = above the threshold.)"""
    from ..runtime.extras import require_extra

    require_extra("report", "plexity report's histogram")
    Figure = _matplotlib_figure()

    fig = Figure(figsize=(9, 3.6), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    width = data.bin_width
    bins = sorted(data.histogram)
    threshold = data.threshold
    lefts = [10 ** (b * width) for b in bins]
    widths = [10 ** ((b + 1) * width) - 10 ** (b * width) for b in bins]
    if data.dropped is not None:
        dropped = [data.dropped.get(b, 0) for b in bins]
        red_label = "dropped"
    else:  # a bin counts as dropped when its centre lies above the threshold
        above = [bool(threshold) and (b + 0.5) * width > math.log10(threshold) for b in bins]
        dropped = [data.histogram[b] if a else 0 for b, a in zip(bins, above)]
        red_label = "above the threshold"
    kept = [data.histogram[b] - d for b, d in zip(bins, dropped)]
    style = dict(width=widths, align="edge", edgecolor="white", linewidth=0.4)
    ax.bar(lefts, kept, color=KEPT_COLOUR, label="kept", **style)
    ax.bar(lefts, dropped, bottom=kept, color=DROPPED_COLOUR, label=red_label, **style)
    ax.legend(loc="upper right", frameon=False, fontsize=9)
    ax.set_xscale("log")
    ax.set_xlabel("sentence perplexity (log scale)")
    ax.set_ylabel("sentences")
    if threshold and math.isfinite(threshold):  # (inf: no line to draw)
        ax.axvline(threshold, color="black", linewidth=1.5, linestyle="--")
        ax.annotate(f"threshold {threshold:g}", xy=(threshold, 1), xycoords=("data", "axes fraction"),
                    xytext=(4, -12), textcoords="offset points", fontsize=9, fontweight="bold")
    kept, dropped = data.stats.get("sentences_kept") or 0, data.stats.get("sentences_dropped") or 0
    total = kept + dropped
    share = 100.0 * dropped / total if total else 0.0
    method = f", method {data.stats['method']}" if data.stats.get("method") else ""
    ax.set_title(f"{total:,} sentences: {kept:,} kept, {dropped:,} dropped ({share:.1f} %)"
                 f" — model {data.stats.get('model', '?')}{method}", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


# -- the HTML ---------------------------------------------------------------------------------

def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "–"


def _band_label(band: str) -> str:
    low = int(band)
    return f"{10 ** low:,} – {10 ** (low + 1):,}"


def _what_if_rows(data: ReportData) -> list[tuple[float, int, int]]:
    """(threshold at a bin edge, sentences above it, total) for a few round thresholds."""
    total = sum(data.histogram.values())
    rows = []
    for edge in WHAT_IF_LOG10:
        edge_bin = round(edge / data.bin_width)
        above = sum(c for b, c in data.histogram.items() if b >= edge_bin)
        rows.append((10 ** (edge_bin * data.bin_width), above, total))
    return rows


CSS = """
body { font-family: "DejaVu Sans", system-ui, sans-serif; color: #1d2330; max-width: 1100px; margin: 1.5rem auto;
       padding: 0 1rem; background: #fff; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; }
.meta { color: #5b6475; margin-top: 0; }
table { border-collapse: collapse; margin: 0.4rem 0; font-size: 0.92rem; }
th, td { border-bottom: 1px solid #e1e4ea; padding: 0.25rem 0.8rem 0.25rem 0; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.big { display: flex; gap: 2.5rem; flex-wrap: wrap; margin: 0.8rem 0; }
.big div { font-size: 0.9rem; color: #5b6475; } .big b { display: block; font-size: 1.6rem; color: #1d2330; }
.big .dropped b { color: #c62828; }
img { max-width: 100%; border: 1px solid #e1e4ea; }
tr.current td { font-weight: bold; }
.samples td.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.source { color: #5b6475; font-size: 0.8rem; overflow-wrap: anywhere; }
.note { color: #5b6475; font-size: 0.9rem; }
.incomplete { background: #fff4e5; border-left: 4px solid #c62828; padding: 0.5rem 0.8rem; }
"""


def render_html(data: ReportData, png: bytes | None, png_name: str | None = None) -> str:
    s = data.stats
    # (`stats_problem` let through only whole numbers, or nothing: a key left out counts 0 here)
    kept, dropped = s.get("sentences_kept") or 0, s.get("sentences_dropped") or 0
    chars_kept, chars_dropped = s.get("chars_kept") or 0, s.get("chars_dropped") or 0
    total, chars = kept + dropped, chars_kept + chars_dropped
    threshold = data.threshold
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    method = f" · method {_e(s['method'])}" if s.get("method") else ""
    out = [
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>plexity report: {_e(data.source)}</title>",
        # self-contained: nothing loaded from anywhere, no scripts
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'\">",
        f"<style>{CSS}</style></head><body>",
        "<h1>plexity report</h1>",
        f'<p class="meta">{_e(data.source)} · model <b>{_e(s.get("model", "?"))}</b> · threshold '
        f'<b id="threshold">{_e(_threshold_shown(threshold, s.get("thresholds")))}</b> · extractor '
        f'{_e(s.get("extractor") or "?")}{method}{" · annotate" if s.get("annotate") else ""} · generated {generated}</p>',
    ]
    if incomplete(s):
        out.append(f'<p class="incomplete" id="incomplete"><b>Partial:</b> {_e(incomplete(s))}.</p>')
    if s.get("format"):
        out.append(f'<p class="note">{_e(s["format"])}</p>')
    out += [
        '<div class="big">',
        f'<div>sentences<b id="sentences-total">{total:,}</b></div>',
        f'<div>kept<b id="sentences-kept">{kept:,}</b>{_pct(kept, total)}</div>',
        f'<div class="dropped">dropped<b id="sentences-dropped">{dropped:,}</b>{_pct(dropped, total)}</div>',
        f'<div>characters dropped<b>{chars_dropped:,}</b>{_pct(chars_dropped, chars)} of {chars:,}</div>',
        "</div>",
        "<h2>Sentence perplexities</h2>",
    ]
    if png:
        encoded = base64.b64encode(png).decode("ascii")
        alt = f"histogram of {total} sentence perplexities, threshold {threshold:g}" if threshold else "histogram"
        out.append(f'<img id="histogram" alt="{_e(alt)}" src="data:image/png;base64,{encoded}">')
        note = f" (also saved as {_e(png_name)})" if png_name else ""
        red = ("red: the dropped sentences" if data.dropped is not None
               else "red: sentences above the threshold (these stats do not record which were dropped)")
        out.append(f'<p class="note">Bins of {data.bin_width:g} in log<sub>10</sub> perplexity{note}; blue: kept, '
                   f"{red}; dashed line: the threshold. The <i>region</i> and <i>trim</i> methods decide per line "
                   "(block), so dropped sentences need not lie right of the line.</p>")
        out += ["<h3>Sentences above other thresholds</h3>",
                '<table id="what-if"><tr><th class="n">threshold</th><th class="n">sentences above it</th>'
                '<th class="n">share</th></tr>']
        for value, above, all_sentences in _what_if_rows(data):
            out.append(f'<tr><td class="n">{value:,.0f}</td><td class="n">{above:,}</td>'
                       f'<td class="n">{_pct(above, all_sentences)}</td></tr>')
        out.append("</table><p class=\"note\">Counted from the histogram at its bin edges: what the "
                   "<i>sentences</i> method would drop at each threshold.</p>")
    else:
        out.append('<p class="note" id="no-histogram">These stats have no perplexity histogram.</p>')

    out += ["<h2>Counts</h2>", '<table id="counts">']
    rows = [
        ("files", "files"), ("files skipped", "files_skipped"),
        ("WARC records read", "records"), ("WARC records copied unchanged", "records_copied"),
        ("WARC records that are no page, not written (requests, revisits, error pages, images ...)",
         "records_not_pages"),
        ("documents", "documents"), ("documents skipped", "documents_skipped"),
        ("documents with text extracted", "documents_extracted"), ("documents kept", "documents_kept"),
        ("documents dropped (by the document policy)", "documents_dropped"),
        ("documents emptied (every sentence dropped)", "documents_empty"),
        ("documents passed through unfiltered (not the model's language)", "documents_passthrough"),
        ("documents dropped by the pipeline's other steps", "documents_dropped_other"),
        ("documents written", "documents_written"),
        ("sentences kept", "sentences_kept"), ("sentences dropped", "sentences_dropped"),
        ("characters kept", "chars_kept"), ("characters dropped", "chars_dropped"),
        ("characters replaced (invalid UTF-8, NUL)", "replaced_chars"),
        ("bytes in", "bytes_in"), ("bytes out", "bytes_out"),
    ]
    for label, key in rows:
        if key in RUN_ONLY_COUNTS and key not in s:
            continue
        # what the stats do not hold (a count `plexity run` does not keep) is unknown, not 0
        value = f"{int(s[key]):,}" if s.get(key) is not None else "unknown"
        out.append(f'<tr data-count="{key}"><td>{_e(label)}</td><td class="n">{value}</td></tr>')
    if _is_number(s.get("tasks"), whole=True) and _is_number(s.get("tasks_completed"), whole=True):
        out.append(f'<tr data-count="tasks_completed"><td>tasks completed</td><td class="n">'
                   f'{s["tasks_completed"]:,} of {s["tasks"]:,}</td></tr>')
    if s.get("seconds"):
        out.append(f'<tr><td>seconds</td><td class="n">{float(s["seconds"]):,.1f}</td></tr>')
    out.append("</table>")
    # (file_skip_reasons: a `plexity run`'s files not read, wat_file ...; `plexity clean` counts them in skip_reasons)
    for key, title in (("file_skip_reasons", "Files not read, by reason"), ("skip_reasons", "Skipped, by reason"),
                       ("drop_reasons", "Dropped, by reason"),
                       ("copied_reasons", "Copied unchanged, by reason"), ("damaged_files", "Damaged files"),
                       ("passthrough_reasons", "Passed through, by reason"),
                       ("other_steps_dropped", "Dropped by the pipeline's other steps, by step"),
                       ("lost_reasons", "Lost in extraction, by reason")):
        reasons = s.get(key) or {}
        if reasons:
            out += [f"<h3>{title}</h3>", f'<table id="{key.replace("_", "-")}">']
            for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
                out.append(f'<tr><td>{_e(reason)}</td><td class="n">{int(count):,}</td></tr>')
            out.append("</table>")

    out.append("<h2>Dropped sentences by perplexity band</h2>")
    if data.samples:
        per_band: dict[str, int] = {}
        for b, c in data.histogram.items():
            band = str(int(math.floor((b + 1e-9) * data.bin_width)))
            per_band[band] = per_band.get(band, 0) + c
        out.append('<table class="samples" id="samples"><tr><th>perplexity band</th><th class="n">perplexity</th>'
                   "<th>sentence</th></tr>")
        for band in sorted(data.samples, key=int):
            samples = sorted(data.samples[band], key=lambda x: x.get("perplexity", 0))
            in_band = f"<br><span class=\"source\">{per_band[band]:,} sentences in this band, kept or dropped</span>" \
                if band in per_band else ""
            for i, sample in enumerate(samples):
                label = f"<td rowspan=\"{len(samples)}\">{_e(_band_label(band))}{in_band}</td>" if i == 0 else ""
                where = " · ".join(_e(sample[k]) for k in ("reason", "source") if sample.get(k))
                source = f'<div class="source">{where}</div>' if where else ""
                out.append(f'<tr data-band="{_e(band)}">{label}<td class="n">{float(sample.get("perplexity", 0)):,.1f}'
                           f'</td><td class="text">{_e(sample.get("text", ""))}{source}</td></tr>')
        out.append("</table>")
    else:
        out.append('<p class="note">No dropped sentences were recorded.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def histogram_path(html_path: str | Path, png_path: str | Path | None = None) -> Path:
    """Where a report's histogram PNG goes: `png_path`, else next to the report, same stem."""
    return Path(png_path) if png_path else Path(html_path).with_suffix(".png")


def build_report(stats: str | Path, html_path: str | Path, png_path: str | Path | None = None, run_stats=None
                 ) -> tuple[Path, Path | None]:
    """Write the HTML report and the histogram PNG (`histogram_path`).  Stats without a histogram
    (a `plexity run` folder's) write no PNG, and an earlier report's PNG there is removed: beside
    this report, it would be taken for this one's.

    Returns (html path, png path or None when the stats have no histogram)."""
    return write_report(load_report_data(stats, run_stats), html_path, png_path)


def write_report(data: ReportData, html_path: str | Path, png_path: str | Path | None = None
                 ) -> tuple[Path, Path | None]:
    """`build_report` of stats already read (`load_report_data`)."""
    html_path = Path(html_path)
    png_path = histogram_path(html_path, png_path)
    if png_path.resolve() == html_path.resolve():
        raise ValueError(f"the report and its histogram would both be {html_path}: give --png another name")
    png = histogram_png(data) if data.histogram else None
    html_path.parent.mkdir(parents=True, exist_ok=True)
    if png:
        png_path.parent.mkdir(parents=True, exist_ok=True)
        png_path.write_bytes(png)
    elif png_path.is_file():
        png_path.unlink()
    html_path.write_text(render_html(data, png, png_path.name if png else None), encoding="utf-8")
    return html_path, (png_path if png else None)


# -- command ----------------------------------------------------------------------------------
