"""Cleaning quality on the development benchmark (../shared/bench/articles-dev).

    .venv/bin/python bench/quality.py [--bench DIR] [--threshold T] [--json-only]

For every page, each variant produces a text, scored against the page's ground-truth
article body with the benchmark's own metric: tokens are `\\w+` matches, shingles are
runs of 4 tokens counted as a multiset; per page TP/FP/FN are normalised by their sum;
precision is the mean of TP/(TP+FP) over pages with TP+FP > 0, recall the mean of
TP/(TP+FN) over pages with TP+FN > 0 (a page where both FP and FN are 0 scores 1),
F1 = 2PR/(P+R) of the two means.

Variants: tags only; tags + perplexity filter; trafilatura alone; trafilatura +
perplexity filter (each with the method `plexity clean` uses for that extractor:
"region" after tags, "trim" after trafilatura); tags + the paper's per-sentence rule
("sentences"); jusText (English stop list) as the classic baseline.  English and
non-English pages get separate rows; for non-English pages the share of the
extractor's text that survives the filter is reported too.  The last line printed is
one JSON object with all figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from plexity_plugins import PerplexityScorer  # noqa: E402
from plexity_plugins.decide import method_for_extractor  # noqa: E402
from plexity_plugins.extract import decode_html, html_to_text_tags, html_to_text_trafilatura  # noqa: E402

DEFAULT_BENCH = REPO.parent / "shared" / "bench" / "articles-dev"
_WORD = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> Counter:
    tokens = _WORD.findall(text or "")
    if len(tokens) < n:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def page_counts(truth: str, predicted: str) -> tuple[float, float, float]:
    t, p = shingles(truth), shingles(predicted)
    tp = sum((t & p).values())
    fp = sum(p.values()) - tp
    fn = sum(t.values()) - tp
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def metrics(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    def precision(tp, fp, fn):
        return 1.0 if fp == fn == 0 else tp / (tp + fp)

    def recall(tp, fp, fn):
        return 1.0 if fp == fn == 0 else tp / (tp + fn)

    p_values = [precision(*c) for c in counts if c[0] + c[1] > 0]
    r_values = [recall(*c) for c in counts if c[0] + c[2] > 0]
    p = statistics.mean(p_values) if p_values else 0.0
    r = statistics.mean(r_values) if r_values else 0.0
    return {"f1": 2 * p * r / (p + r) if p + r else 0.0, "precision": p, "recall": r}


def justext_text(html_bytes: bytes) -> str:
    import justext

    paragraphs = justext.justext(html_bytes, justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def load_pages(bench: Path) -> list[dict]:
    truth = json.loads((bench / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key in sorted(truth):
        raw = gzip.decompress((bench / "html" / f"{key}.html.gz").read_bytes())
        html, _ = decode_html(raw)
        pages.append({"key": key, "raw": raw, "html": html, "truth": truth[key].get("articleBody", ""),
                      "english": bool(truth[key].get("english"))})
    return pages


def run(bench: Path, model: str | None = None, threshold: float | None = None) -> dict:
    pages = load_pages(bench)
    tags_scorer = PerplexityScorer(model, threshold=threshold, method=method_for_extractor("tags"))
    traf_scorer = PerplexityScorer(model, threshold=threshold, method=method_for_extractor("trafilatura"))
    paper_scorer = PerplexityScorer(model, threshold=threshold, method="sentences")
    outputs: dict[str, list[str]] = {name: [] for name in ("tags", "tags+ppl", "trafilatura", "trafilatura+ppl",
                                                           "tags+ppl-sentences", "justext")}
    seconds: Counter = Counter()
    for page in pages:
        started = time.perf_counter()
        tags = html_to_text_tags(page["html"])
        seconds["tags"] += time.perf_counter() - started
        started = time.perf_counter()
        traf = html_to_text_trafilatura(page["html"])
        seconds["trafilatura"] += time.perf_counter() - started
        started = time.perf_counter()
        tags_clean = tags_scorer.clean(tags).text
        traf_clean = traf_scorer.clean(traf).text
        seconds["ppl"] += time.perf_counter() - started
        paper = paper_scorer.clean(tags).text
        started = time.perf_counter()
        jt = justext_text(page["raw"])
        seconds["justext"] += time.perf_counter() - started
        for name, text in (("tags", tags), ("tags+ppl", tags_clean), ("trafilatura", traf),
                           ("trafilatura+ppl", traf_clean), ("tags+ppl-sentences", paper), ("justext", jt)):
            outputs[name].append(text)

    results: dict = {"model": tags_scorer.model_name, "variants": {},
                     "methods": {"tags+ppl": tags_scorer.method, "trafilatura+ppl": traf_scorer.method,
                                 "tags+ppl-sentences": paper_scorer.method},
                     "thresholds": {"tags+ppl": tags_scorer.threshold, "trafilatura+ppl": traf_scorer.threshold,
                                    "tags+ppl-sentences": paper_scorer.threshold}}
    for name, texts in outputs.items():
        row = {}
        for group, want in (("english", True), ("other", False)):
            counts = [page_counts(p["truth"], t) for p, t in zip(pages, texts) if p["english"] == want]
            row[group] = {k: round(v, 4) for k, v in metrics(counts).items()}
        results["variants"][name] = row
    # Non-English pages must not be gutted: share of the extractor's text that survives,
    # over the pages the benchmark labels non-English, and over those of them that the
    # language check also finds non-English (two "non-English" pages are English).
    from plexity_plugins.language import identify

    for extractor in ("tags", "trafilatura"):
        for suffix, want in (("", lambda p, t: True), ("_detected", lambda p, t: identify(t)[0] != "en")):
            pairs = [(t, c) for p, t, c in zip(pages, outputs[extractor], outputs[f"{extractor}+ppl"])
                     if not p["english"] and want(p, t)]
            before, after = sum(len(t) for t, _ in pairs), sum(len(c) for _, c in pairs)
            results[f"non_english_survival_{extractor}{suffix}"] = round(after / before, 4) if before else 1.0
            results[f"non_english_pages_{extractor}{suffix}"] = len(pairs)
    results["pages"] = {"english": sum(p["english"] for p in pages), "other": sum(not p["english"] for p in pages)}
    results["seconds"] = {k: round(v, 2) for k, v in seconds.items()}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=DEFAULT_BENCH)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args()
    results = run(args.bench, args.model, args.threshold)
    if not args.json_only:
        print(f"model {results['model']}; {results['pages']['english']} English pages, "
              f"{results['pages']['other']} other; methods {results['methods']}, thresholds {results['thresholds']}")
        print(f"{'variant':18} {'pages':8} {'F1':>6} {'P':>6} {'R':>6}")
        for name, row in results["variants"].items():
            for group in ("english", "other"):
                m = row[group]
                print(f"{name:18} {group:8} {m['f1']:6.3f} {m['precision']:6.3f} {m['recall']:6.3f}")
        for suffix, label in (("", "labelled non-English"), ("_detected", "also detected non-English")):
            print(f"pages {label}: extractor text surviving the filter: "
                  f"tags {100 * results['non_english_survival_tags' + suffix]:.1f} % "
                  f"({results['non_english_pages_tags' + suffix]} pages), "
                  f"trafilatura {100 * results['non_english_survival_trafilatura' + suffix]:.1f} % "
                  f"({results['non_english_pages_trafilatura' + suffix]} pages)")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
