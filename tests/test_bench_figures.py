"""The bench scripts' generated figures: WCXB's snippet rule as bench/quality.py applies it, and the
Markdown tables rendered from the JSON figures (quality, end to end, the headline), with the line
saying what made them.  No benchmark data is needed: the pages and figures here are made by hand."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from plexity_plugins.extractors import get_extractor

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module(name: str):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quality():
    return _bench_module("quality")


@pytest.fixture(scope="module")
def figures():
    return _bench_module("figures")


PAGE_HTML = """<html><body>
<nav><a href="/">Skip to main content</a> <a href="/login">Log In</a></nav>
<article><h1>The river report</h1>
<p>Scientists measured the temperature of the river every morning.</p>
<p>The report said that the river was cleaner than it had been for many years.</p></article>
<footer>Subscribe to our newsletter</footer>
</body></html>"""
PAGE = {"with": ["temperature of the river", "CLEANER THAN IT HAD BEEN"],
        "without": ["Skip to main content", "log in", "Subscribe"]}


def test_a_snippet_counts_when_it_occurs_in_the_output_whatever_its_case(quality):
    text = get_extractor("tags")(PAGE_HTML)  # every visible line: the menu and footer too
    assert quality.snippet_check(text, PAGE["with"]) == 1.0
    assert quality.snippet_check(text, PAGE["without"]) == 1.0
    article_only = "Scientists measured the temperature of the river every morning."
    assert quality.snippet_check(article_only, PAGE["with"]) == 0.5
    assert quality.snippet_check(article_only, PAGE["without"]) == 0.0


def test_a_page_without_snippets_of_a_kind_scores_one_as_in_wcxbs_own_script(quality):
    assert quality.snippet_check("anything", []) == 1.0


def test_snippet_rates_average_per_page_in_percent(quality):
    pages = [(PAGE, "the temperature of the river; log in"), (PAGE, "Cleaner than it had been. Subscribe")]
    rates = quality.snippet_rates(pages)
    assert rates == {"with_kept": 50.0, "without_leaked": pytest.approx(100 / 3)}


PROVENANCE = {"command": ".venv/bin/python bench/quality.py", "code": "abc1234", "date": "2026-01-02",
              "versions": {"python": "3.11.7", "trafilatura": "2.3.1", "justext": "absent"}}


def _wcxb_cell(f1, with_kept, without_leaked, pages):
    return {"f1": f1, "precision": f1 + 0.01, "recall": f1 - 0.01, "pages": pages,
            "with_kept": with_kept, "without_leaked": without_leaked}


def tiny_quality(default="auto"):
    """A quality.json in miniature: two variants, two sets."""
    pipeline = f"{default}+filter"
    wcxb = {v: {h: {"all": _wcxb_cell(f1, w, wo, 10), "article": _wcxb_cell(f1 + 0.05, w, wo, 6)}
                for h, (f1, w, wo) in halves.items()}
            for v, halves in {pipeline: {"dev": (0.85, 85.0, 6.0), "held": (0.86, 84.0, 5.5)},
                              "datatrove": {"dev": (0.80, 80.0, 7.0), "held": (0.81, 79.5, 7.5)}}.items()}
    for v in wcxb:
        wcxb[v]["all"] = wcxb[v]["dev"]
    cleaneval = {v: {h: {"all": {"similarity": s, "pages": 5}} for h in ("dev", "held", "all")}
                 for v, s in {pipeline: 80.0, "datatrove": 60.0}.items()}
    return {"provenance": PROVENANCE, "quick": False, "default_extractor": default, "default_pipeline": pipeline,
            "sets": {"wcxb": {"pages": {"dev": 10, "held": 10}, "groups": ["article"], "variants": wcxb},
                     "cleaneval": {"pages": {"dev": 5, "held": 5}, "groups": ["all"], "variants": cleaneval}},
            "pages_per_second": {"sample_pages": 20, pipeline: 120.0, "datatrove": 24.0}}


def test_quality_tables_render_from_the_json_alone_with_what_made_them(quality):
    tables = quality.render_markdown(tiny_quality(quality.DEFAULT))
    assert set(tables) == {"quality", "quality-snippets", "quality-wcxb-types"}
    for text in tables.values():
        assert text.startswith("Made by `.venv/bin/python bench/quality.py` on commit abc1234, 2026-01-02; "
                               "python 3.11.7, trafilatura 2.3.1.")
    main = tables["quality"]
    assert f"| {quality.label(quality.DEFAULT + '+filter')} | 0.850 / 0.860 / 0.840 | 0.860 / 0.870 / 0.850 | " \
           f"80.0 | 80.0 | 120.0 |" in main
    assert "(our default)" in main and "| datatrove's Trafilatura step |" in main
    assert "| 85.0 | 84.0 | 6.0 | 5.5 | 120.0 |" in tables["quality-snippets"]
    assert "| 0.850 / 0.860 | 0.900 / 0.910 |" in tables["quality-wcxb-types"]


def test_every_extractor_of_the_package_is_a_variant_with_its_filter_pipeline(quality):
    from plexity_plugins.extractors import DEFAULT_EXTRACTOR, EXTRACTORS

    for name in EXTRACTORS:
        if name != "none":
            assert name in quality.EXTRACTORS or name in quality.DERIVED
            assert f"{name}+filter" in quality.PIPELINES
    assert next(iter(quality.PIPELINES)) == f"{DEFAULT_EXTRACTOR}+filter"


def tiny_end_to_end():
    versus = {"records": 1497, "documents_written": {"datatrove": 1490, "default": 1400},
              "pages_per_cpu_s": {"datatrove": 30.0, "default": 135.0},
              "pages_per_s": {"datatrove": 25.0, "default": 125.0},
              "ratio_to_datatrove": {"datatrove": 1.0, "default": 5.0},
              "cpu_ratio_to_datatrove": {"datatrove": 1.0, "default": 4.5}}
    return {"provenance": dict(PROVENANCE, command=".venv/bin/python bench/end_to_end.py"), "variants": ["default"],
            "default_extractor": "auto", "rounds": 3, "quick": False, "cpus": 2, "loadavg_start": [1.0, 1.0, 1.0],
            "sets": {"wcxb": {"vs_datatrove": versus},
                     "articles": {"vs_datatrove": dict(versus, ratio_to_datatrove={"datatrove": 1.0,
                                                                                   "default": 4.0})}}}


def test_the_end_to_end_table_names_the_records_both_pipelines_read():
    from plexity_plugins.extractors import DEFAULT_EXTRACTOR

    end_to_end = _bench_module("end_to_end")
    text = end_to_end.render_markdown(tiny_end_to_end())["end_to_end"]
    assert text.startswith("Made by `.venv/bin/python bench/end_to_end.py` on commit abc1234")
    assert "| WCXB dev, all seven page types | 1497 | datatrove: `WarcReader → Trafilatura → JsonlWriter` | 1490 | " \
           "25.0 | 1.00 | 30.0 | 1.00 |" in text
    assert f"| `plexity run` (default: {DEFAULT_EXTRACTOR}) | 1400 | 125.0 | 5.00 | 135.0 | 4.50 |" in text


def test_the_headline_is_the_same_table_from_the_same_json(tmp_path, figures):
    headline = _bench_module("headline")
    (tmp_path / "quality.json").write_text(json.dumps(tiny_quality()))
    (tmp_path / "end_to_end.json").write_text(json.dumps(tiny_end_to_end()))
    first = headline.render_headline(tmp_path)
    assert first == headline.render_headline(tmp_path)
    ours = next(line for line in first.splitlines() if line.startswith("| **plexity_plugins, default**"))
    assert ours.endswith("| 0.850 / 0.860 | 80.0 / 80.0 | — | — | 6.0 / 5.5 | 120.0 (5.00×) | 5.00× / 4.00× (CPU: 4.50× / 4.50×) |")
    datatrove = next(line for line in first.splitlines() if line.startswith("| datatrove's pipeline"))
    assert datatrove.endswith("| 24.0 (1.00×) | 1.00× / 1.00× (CPU: 1.00× / 1.00×) |")
    assert "| jusText | — | — | — | — | — | — |" in first  # not measured: no figure
    assert "pyplexity" in first
    (tmp_path / "end_to_end.json").unlink()
    assert "`end_to_end.json` missing (run `.venv/bin/python bench/end_to_end.py`)" in headline.render_headline(tmp_path)


def test_outside_a_git_checkout_the_code_is_said_to_be_no_git(figures, tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "REPO", tmp_path)
    assert figures.code_version() == "no git"
    assert figures.provenance("bench/x.py", ["--quick"])["command"] == ".venv/bin/python bench/x.py --quick"


def test_the_one_core_table_is_rendered_from_the_throughput_figures(figures):
    throughput = _bench_module("throughput")
    results = {"mb_per_s": 11.574, "mb_per_s_no_language_check": 11.18, "sentences_per_s": 177321,
               "peak_rss_mb": 201.3, "rss_with_input_only_mb": 66.0, "pyplexity_mb_per_s": 1.55,
               "pyplexity_sentences_per_s": 10200, "pyplexity_peak_rss_mb": 317.0, "kenlm_limit_mb_per_s": 21.16,
               "kenlm_limit_sentences_per_s": 444000, "fraction_of_kenlm_limit": 0.547, "ratio_to_pyplexity": 7.47,
               "cpu_time_mb_per_s": 11.6, "cpu_time_kenlm_limit_mb_per_s": 21.2, "cpu_time_pyplexity_mb_per_s": 1.6,
               "documents": 2378, "input_mb": 20.0, "dev_pages": 76, "repeat": 3, "loadavg_before": [0.1, 0.2, 0.3],
               "loadavg_after": [0.4, 0.5, 0.6]}
    text = throughput.render_markdown(results, "Made by `x`.")
    assert text.startswith("Made by `x`.\n\n| | MB/s | sentences/s | peak RSS |")
    assert "(language check on, the default) | **11.57** | 177 k | 201 MB (66 MB of it the input held in memory) |" \
        in text
    assert "| pyplexity 0.2.12 `PerplexityProcessor.process(doc)` (see below) | 1.55 | 10 k | 317 MB |" in text
    assert "ours = 55% of the KenLM limit, 7.5× pyplexity" in text
    no_pyplexity = dict(results, pyplexity_mb_per_s=None, ratio_to_pyplexity=None, cpu_time_pyplexity_mb_per_s=None)
    assert "pyplexity" not in throughput.render_markdown(no_pyplexity, "Made by `x`.")


def test_the_reactor_stall_table_has_a_row_per_extractor_and_thread_count(figures):
    stall = _bench_module("scrapy_stall")
    run = {"max_stall_s": 0.12, "p99_gap_s": 0.06, "crawl_s": 2.2, "clean_s": 1.8, "items": 6, "dropped": 0}
    results = {"provenance": PROVENANCE, "large_page_mb": 10.0, "pages": 7, "tick_s": 0.01, "cpus": 2,
               "runs": [dict(run, extractor="learned", threads=0, max_stall_s=4.3), dict(run, extractor="learned",
                                                                                     threads=1)]}
    text = stall.render_markdown(results)
    assert text.startswith("Made by `.venv/bin/python bench/quality.py` on commit abc1234")
    assert "| learned | 0 | 4.30 s | 60 ms | 2.2 s | 1.8 s | 6 / 0 |" in text
    assert "| learned | 1 | 0.12 s | 60 ms | 2.2 s | 1.8 s | 6 / 0 |" in text


def _memory_run(workers, pss, model_pss):
    return {"workers": workers, "pss_per_worker_mb": [pss] * workers, "model_pss_per_worker_mb": [model_pss] * workers}


def test_the_memory_table_is_rendered_from_the_memory_figures(figures):
    memory = _bench_module("memory")
    fork = {"runs": [_memory_run(4, 52.0, 3.9), _memory_run(1, 115.0, 15.7), _memory_run(2, 73.0, 7.9)],
            "extra": {"2": {"pss_added_per_extra_worker_mb": 31.0, "model_pss_added_per_extra_worker_mb": 0.1},
                      "4": {"pss_added_per_extra_worker_mb": 29.04, "model_pss_added_per_extra_worker_mb": -0.004}},
            "model_shared": True}
    spawn = dict(fork, model_shared=False)
    summary = {"by_start_method": {"fork": fork, "spawn": spawn}, "mb_per_worker": 3.0, "model_file_mb": 17.04,
               "langid_tables_mb": 68.4, "loadavg_start": [0.1, 0.2, 0.3]}
    text = memory.render_markdown(summary, "Made by `x`.")
    assert text.startswith("Made by `x`.\n\n| start method | PSS per worker, 1 / 2 / 4 workers |")
    assert "| fork | 115.0 / 73.0 / 52.0 MB | 29.0 MB | +0.00 MB | 15.7 / 7.9 / 3.9 MB | yes |" in text
    assert "| spawn | 115.0 / 73.0 / 52.0 MB | 29.0 MB | +0.00 MB | 15.7 / 7.9 / 3.9 MB | **no** |" in text
    assert "Each worker cleans 3 MB" in text and "(17.0 MB file, memory-mapped)" in text and "68.4 MB" in text


def test_the_run_throughput_table_is_rendered_from_its_figures_and_names_the_extractor(figures):
    run_throughput = _bench_module("run_throughput")
    runs = {"2": {"seconds": 3.5, "pages_per_s": 164.6, "mb_per_s": 0.732, "cpu_seconds": 6.04},
            "1": {"seconds": 4.9, "pages_per_s": 117.6, "mb_per_s": 0.523, "cpu_seconds": 4.51}}
    results = {"extractor": "default", "default_extractor": "learned", "copies": 48, "pages": 576, "megabytes": 2.56,
               "repeat": 2, "runs": runs, "speedup": 1.4, "cpus": 2, "loadavg_start": [0.1, 0.2, 0.3]}
    text = run_throughput.render_markdown(results, "Made by `x`.")
    assert text.startswith("Made by `x`.\n\n| workers | wall time | pages/s | MB/s (gzip WARC) | CPU time |\n|---|")
    assert text.index("| 1 | 4.9 s | 118 | 0.52 | 4.5 s |") < text.index("| 2 | 3.5 s | 165 | 0.73 | 6.0 s |")
    assert "the default extractor (learned; no --extractor)" in text
    assert "576 pages, 2.56 MB gzip" in text and "the best of 2 runs" in text and "Two workers: 1.40×" in text
    tags = run_throughput.render_markdown(dict(results, extractor="tags", repeat=1), "Made by `x`.")
    assert "`--extractor tags`" in tags and "default extractor" not in tags and "one run per worker count" in tags


def test_the_readers_compared_and_their_cost_in_the_extractors_page_are_the_quality_runs_own(quality):
    # docs/extraction.md quotes no figure by hand: its comparison of the readers and its line on what each
    # extractor costs are rendered by bench/quality.py from the same JSON as the results table, and included.
    docs = BENCH.parent / "docs"
    data = json.loads((docs / "figures" / "quality.json").read_text(encoding="utf-8"))
    tables = quality.render_markdown(data)
    page = (docs / "extraction.md").read_text(encoding="utf-8")
    for name in ("quality-compared", "quality-cost"):
        assert (docs / "figures" / f"{name}.md").read_text(encoding="utf-8") == tables[name].rstrip("\n") + "\n"
        assert f'--8<-- "figures/{name}.md"' in page
    speed = {name: (f"{rate:.0f}" if rate >= 100 else f"{rate:.1f}")  # (three figures: 226, 90.9, 21.5)
             for name, rate in data["pages_per_second"].items() if isinstance(rate, float)}
    assert f"| {speed['learned+filter']} | {speed['dense+filter']} |" in tables["quality-compared"]
    assert f"`learned` {speed['learned']}, `fast` {speed['fast']}" in tables["quality-cost"]


def test_a_run_without_every_set_renders_no_comparison_of_the_readers(quality):
    assert "quality-compared" not in quality.render_markdown(tiny_quality(quality.DEFAULT))


def test_an_extractor_in_a_child_process_is_timed_by_its_childs_cpu_and_outlives_a_page_it_dies_on(quality, tmp_path):
    # rs-trafilatura runs in a child process of another Python (--rs-python: trafipy needs 3.12); a stand-in worker
    # speaking the same JSON lines: the page's CPU seconds are the child's, and a child that dies on a page fails
    # that page alone
    worker = tmp_path / "worker.py"
    worker.write_text(
        "import json, sys\n"
        "print(json.dumps({'version': '9.9'}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    html = json.loads(line)['html']\n"
        "    if html == 'crash':\n"
        "        sys.exit(9)\n"
        "    print(json.dumps({'text': html.upper(), 'cpu': 0.25, 'error': 'bad page' if html == 'bad' else None}),"
        " flush=True)\n")
    child = quality._ChildExtractor(worker)
    child.python = sys.executable
    assert child.version == "9.9"
    assert child("<p>one", b"") == "<P>ONE" and child.last_cpu == 0.25
    with pytest.raises(RuntimeError, match="bad page"):
        child("bad", b"")
    with pytest.raises(RuntimeError, match=r"ended on this page \(exit status 9\)"):
        child("crash", b"")
    assert child("<p>two", b"") == "<P>TWO"  # another child
    child.python = None
    assert not quality.available(quality.RS)  # not measured without --rs-python


def test_rs_trafilatura_has_a_headline_row_only_where_the_quality_run_measured_it(tmp_path):
    headline = _bench_module("headline")
    data = tiny_quality()
    (tmp_path / "quality.json").write_text(json.dumps(data))
    assert "rs-trafilatura" not in headline.render_headline(tmp_path)
    data["labels"] = {"rs-trafilatura": "rs-trafilatura (trafipy)"}
    data["sets"]["wcxb"]["variants"]["rs-trafilatura"] = data["sets"]["wcxb"]["variants"]["datatrove"]
    (tmp_path / "quality.json").write_text(json.dumps(data))
    table = headline.render_headline(tmp_path)
    row = next(line for line in table.splitlines() if line.startswith("| rs-trafilatura"))
    assert "| 0.800 / 0.810 |" in row and "child process" in table
