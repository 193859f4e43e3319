"""`plexity report`: the static HTML report and PNG histogram of a real `plexity clean` run."""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from plexity_plugins.cleaning.files import STATS_FILE
from plexity_plugins.cleaning.report import build_report
from plexity_plugins.scoring.scorer import PerplexityScorer
from plexity_plugins.cleaning.stats import RunStats
from browser import chromium
from helpers import run_step_stats

EXAMPLE_WARC = Path(__file__).resolve().parent.parent / "examples" / "sample.warc.gz"
PLEXITY = str(Path(sys.executable).with_name("plexity"))


def plexity(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PLEXITY, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A real run: the sample WARC cleaned with the embedded model, every drop written out."""
    out = tmp_path_factory.mktemp("run")
    done = plexity("clean", str(EXAMPLE_WARC), "--output-dir", str(out), "--extractor", "tags",
                   "--write-dropped", "--quiet")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def report(run) -> Path:
    done = plexity("report", str(run), "-o", str(run / "report.html"))
    assert done.returncode == 0, done.stderr
    assert f"report: {run / 'report.html'}" in done.stdout
    return run / "report.html"


@pytest.fixture(scope="module")
def plexity_run(tmp_path_factory) -> tuple[Path, str]:
    """A real `plexity run` of the sample WARC beside a text file (no WARC name) and a file that is no
    WARC, and its report: (the output directory, what the run printed)."""
    crawl, out = tmp_path_factory.mktemp("crawl"), tmp_path_factory.mktemp("run-out")
    shutil.copy(EXAMPLE_WARC, crawl)
    (crawl / "notes.txt").write_text("hi\n")
    (crawl / "bad.warc").write_text("not a warc")
    done = plexity("run", str(crawl), "-o", str(out), "--extractor", "tags")
    assert done.returncode == 0, done.stderr
    done_report = plexity("report", str(out), "-o", str(out / "report.html"))
    assert done_report.returncode == 0, done_report.stderr
    return out, done.stdout


def text_of(page: str, element_id: str) -> str:
    return html.unescape(re.search(rf'id="{element_id}"[^>]*>([^<]*)<', page).group(1))


def table_of(page: str, element_id: str) -> dict[str, str]:
    rows = re.search(rf'<table id="{element_id}">(.*?)</table>', page, re.S).group(1)
    return {html.unescape(k): v for k, v in re.findall(r'<tr[^>]*><td>([^<]*)</td><td class="n">([^<]*)<', rows)}


def test_the_report_shows_the_runs_counts_and_threshold(run, report):
    stats = json.loads((run / STATS_FILE).read_text())
    page = report.read_text()
    assert text_of(page, "sentences-kept") == f"{stats['sentences_kept']:,}"
    assert text_of(page, "sentences-dropped") == f"{stats['sentences_dropped']:,}"
    assert text_of(page, "sentences-total") == f"{stats['sentences_kept'] + stats['sentences_dropped']:,}"
    assert text_of(page, "threshold") == f"{stats['threshold']:g}"
    assert stats["sentences_dropped"] > 0 and stats["sentences_kept"] > 0


def test_a_report_and_histogram_of_one_name_are_refused(run, tmp_path):
    done = plexity("report", str(run), "-o", str(tmp_path / "r.txt"), "--png", str(tmp_path / "r.txt"))
    assert done.returncode == 2 and "would both be" in done.stderr and not (tmp_path / "r.txt").exists()


def test_the_histogram_counts_every_sentence_and_every_drop(run):
    stats = json.loads((run / STATS_FILE).read_text())
    histogram = stats["histogram"]
    assert sum(histogram["counts"].values()) == stats["sentences_kept"] + stats["sentences_dropped"]
    assert sum(histogram["dropped_counts"].values()) == stats["sentences_dropped"]
    assert all(histogram["counts"][b] >= n for b, n in histogram["dropped_counts"].items())


def test_the_histogram_png_is_written_and_embedded(report):
    png = report.with_suffix(".png").read_bytes()
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (900, 360)
    # red (dropped) and blue (kept) bars are both there
    colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 16)}
    assert (0xC6, 0x28, 0x28) in colours and (0x1F, 0x5F, 0xBF) in colours
    embedded = re.search(r'id="histogram"[^>]* src="data:image/png;base64,([^"]+)"', report.read_text()).group(1)
    assert base64.b64decode(embedded) == png


def test_dropped_sentences_are_sampled_per_perplexity_band(run, report):
    stats = json.loads((run / STATS_FILE).read_text())
    page = report.read_text()
    bands = set(re.findall(r'<tr data-band="(\d+)"', page))
    assert bands == set(stats["dropped_samples"])
    for samples in stats["dropped_samples"].values():
        for sample in samples:
            assert html.escape(sample["text"]) in page
    # the dropped-sentence file adds samples with the reason and their source
    assert re.search(r'class="source">[a-z_]+ · [^<]*sample\.warc\.gz#http://news\.example\.org/', page)


def test_the_report_is_self_contained(report):
    page = report.read_text()
    assert "<script" not in page
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing loaded from anywhere


def test_the_report_renders_in_a_browser(report, tmp_path):
    driver = chromium(tmp_path / "profile", width=1200, height=1900)
    try:
        driver.get(report.as_uri())
        assert driver.execute_script("const img = document.getElementById('histogram');"
                                     "return img.complete && img.naturalWidth") == 900
        assert driver.title.startswith("plexity report")
    finally:
        driver.quit()


def test_text_from_crawled_pages_is_escaped(tmp_path):
    scorer = PerplexityScorer(method="sentences")
    stats = RunStats(model=scorer.model_name, threshold=100.0)
    stats.add(scorer.clean('The council met on Tuesday.\n<script>alert("x")</script> <img src=x onerror=alert(1)>',
                           threshold=100.0))
    stats.write(tmp_path / STATS_FILE)
    html_path, png_path = build_report(tmp_path, tmp_path / "r.html")
    page = html_path.read_text()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert png_path.is_file()


def test_plexity_run_stats_give_a_counts_only_report(tmp_path):
    from datatrove.utils.stats import PipelineStats, Stats

    from plexity_plugins.datatrove.run_counts import report_stats

    step = Stats("🔻 - FILTER: 🧮 Perplexity sentences")
    for key, value in {"total": 12, "sentences_kept": 240, "sentences_dropped": 600, "dropped_empty": 2}.items():
        step[key] += value
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "stats.json").write_text(PipelineStats([step]).to_json())
    html_path, png_path = build_report(tmp_path, tmp_path / "r.html", run_stats=report_stats)
    page = html_path.read_text()
    assert png_path is None and 'id="no-histogram"' in page
    assert text_of(page, "sentences-dropped") == "600" and ">empty<" in page


def test_the_report_of_plexity_run_shows_what_the_run_counted_and_its_settings(plexity_run):
    out, printed = plexity_run
    page = (out / "report.html").read_text()
    reader, extractor, filt = run_step_stats(out)
    counts = dict(re.findall(r'<tr data-count="(\w+)"><td>[^<]*</td><td class="n">([^<]*)<', page))
    skipped = {k[len("skipped_"):]: v for k, v in reader.items() if k.startswith("skipped_")}
    said = ", ".join(f"{reason} {count:,}" for reason, count in skipped.items()) or "none"
    # the summary the run printed
    assert (f"{reader['records']} WARC records read, {reader['documents']} HTML documents (skipped: {said}; "
            f"corrupt files: 1 (not_a_warc 1)); extraction: {extractor['forwarded']} with text") in printed
    assert f"filter: {filt['total']} in, {filt['forwarded']} kept, {filt.get('dropped', 0)} dropped" in printed
    # the report: the same counts (notes.txt has no WARC name: two files, bad.warc damaged)
    assert counts["files"] == str(reader["input_files"]) == "2" and counts["files_skipped"] == "0"
    assert table_of(page, "damaged-files") == {"not_a_warc": "1"}
    assert counts["records"] == f"{reader['records']:,}" and reader["records"] > 0
    assert counts["documents"] == f"{reader['documents']:,}" and reader["documents"] > 0
    assert table_of(page, "skip-reasons") == {k: f"{v:,}" for k, v in skipped.items()} and skipped
    # records that are no page (requests, images ...) are not documents skipped, as in plexity clean's stats
    not_pages = skipped.get("not_response", 0) + skipped.get("not_html", 0)
    assert counts["records_not_pages"] == f"{not_pages:,}" and not_pages > 0
    assert counts["documents_skipped"] == f"{sum(skipped.values()) - not_pages:,}"
    assert counts["documents_extracted"] == f"{extractor['forwarded']:,}"
    assert counts["documents_kept"] == f"{filt['forwarded']:,}"
    assert counts["documents_dropped"] == f"{filt.get('dropped', 0):,}"
    assert counts["documents_passthrough"] == f"{filt.get('passthrough', 0):,}"
    for key in ("sentences_kept", "sentences_dropped", "chars_kept", "chars_dropped"):
        assert counts[key] == f"{filt[key]:,}"
    # what a run does not count is unknown, not 0
    assert counts["records_copied"] == counts["bytes_in"] == counts["bytes_out"] == "unknown"
    # the settings the run recorded
    steps = json.loads((out / "logs" / "plexity-settings.json").read_text())["steps"]
    filter_settings = next(step for step in steps if step["step"] == "PerplexitySentenceFilter")
    assert text_of(page, "threshold") == f"{filter_settings['threshold']:g}"
    assert (f"model <b>{filter_settings['model']}</b>" in page and "extractor tags" in page
            and f"method {filter_settings['method']}" in page)


def test_a_directory_without_stats_is_a_clear_error(tmp_path):
    done = plexity("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2
    assert f"no {STATS_FILE}" in done.stderr and "Traceback" not in done.stderr


# -- a stats file edited by hand: one line naming the file and what is wrong ------------------

@pytest.mark.parametrize("edit, says", [
    (lambda s: s.update(documents="12"), '"documents" is "12", not a whole number'),
    (lambda s: s.update(threshold="high"), '"threshold" is "high", not a number'),
    (lambda s: s.update(sentences_kept=None), None),  # null: unknown, as a key left out
    (lambda s: s.pop("sentences_kept"), None),
    (lambda s: s.update(drop_reasons=[1]), '"drop_reasons" is [1], not an object of reason: count'),
    (lambda s: s.update(histogram=[1, 2]), '"histogram" is [1, 2], not an object'),
    (lambda s: s["histogram"].update(counts={"a": "b"}), '"histogram"."counts" has "a": "b" (its bins and counts '
                                                         'are whole numbers)'),
    (lambda s: s["histogram"].update(bin_width_log10=0), '"histogram"."bin_width_log10" is 0, not a number above 0'),
    (lambda s: s.update(dropped_samples={"5": [1]}), '"dropped_samples"."5" holds 1, not a sentence with its '
                                                    'perplexity'),
], ids=["count-a-string", "threshold-a-string", "count-null", "count-left-out", "reasons-a-list", "histogram-a-list",
        "bin-a-word", "bin-width-0", "sample-a-number"])
def test_a_hand_edited_stats_file_is_one_line_naming_the_file_and_the_key_or_reads(run, tmp_path, edit, says):
    stats = json.loads((run / STATS_FILE).read_text())
    edit(stats)
    (tmp_path / STATS_FILE).write_text(json.dumps(stats))
    done = plexity("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    if says is None:  # what a report can show without
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.strip() == (f"plexity report: error: {tmp_path / STATS_FILE}: {says}: a hand-edited or damaged "
                                   f"file? the same plexity clean or plexity run command again writes it anew")
    assert not (tmp_path / "r.html").exists()


def test_a_truncated_stats_file_is_one_line(run, tmp_path):
    (tmp_path / STATS_FILE).write_text((run / STATS_FILE).read_text()[:300])
    done = plexity("report", str(tmp_path / STATS_FILE), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"plexity report: error: {tmp_path / STATS_FILE} is not a JSON stats file (")


def test_hand_edited_lines_of_plexity_dropped_jsonl_are_passed_over(run, tmp_path):
    shutil.copy(run / STATS_FILE, tmp_path)
    (tmp_path / "plexity-dropped.jsonl").write_text('[1]\n5\n{"perplexity": "x", "text": "a"}\n'
                                                    '{"perplexity": 4000, "text": 3}\n'
                                                    '{"perplexity": 4000, "text": "Kept from the file."}\n')
    done = plexity("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert "Kept from the file." in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("edit", [lambda steps: steps[0].update(name=5), lambda steps: steps[0].update(stats=[1]),
                                  lambda steps: steps.append(3)],
                         ids=["name-a-number", "stats-a-list", "step-a-number"])
def test_a_hand_edited_run_stats_file_is_one_line_naming_it(plexity_run, tmp_path, edit):
    out, _ = plexity_run
    shutil.copytree(out / "logs", tmp_path / "logs")
    steps = json.loads((tmp_path / "logs" / "stats.json").read_text())
    edit(steps)
    (tmp_path / "logs" / "stats.json").write_text(json.dumps(steps))
    done = plexity("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"plexity report: error: {tmp_path / 'logs' / 'stats.json'} is not datatrove's "
                                  f"merged stats as a run writes them (")
    assert done.stderr.strip().endswith("the same plexity clean or plexity run command again writes it anew")


@pytest.mark.parametrize("given", ["sample.warc.gz", "other.json"])
def test_a_file_that_is_no_stats_file_is_one_line_saying_what_to_give(tmp_path, given):
    if given == "other.json":
        (tmp_path / given).write_text('{"a": 1}')
    else:
        shutil.copy(EXAMPLE_WARC, tmp_path)
    done = plexity("report", str(tmp_path / given), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.strip().endswith(": give the output folder of plexity clean or plexity run, or the "
                                        "plexity-stats.json of plexity clean")


@pytest.mark.parametrize("command", ["clean", "run"])
def test_the_report_of_a_run_with_threshold_inf_shows_the_no_filtering_baseline(tmp_path, command):
    # `--threshold inf`, the no-filtering baseline: its stats (plexity clean) or settings (plexity run) recorded
    # it as null or "inf", which the report showed as threshold "?".
    out = tmp_path / "out"
    done = plexity(command, str(EXAMPLE_WARC), "-o", str(out), "--extractor", "tags", "--threshold", "inf")
    assert done.returncode == 0, done.stderr
    done = plexity("report", str(out), "-o", str(tmp_path / "report.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    assert text_of(page, "threshold") == "inf (the no-filtering baseline: nothing dropped by perplexity)"
    assert text_of(page, "sentences-dropped") == "0"
