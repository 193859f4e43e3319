"""Cleaning quality on three public benchmarks, each split by site into two halves, in one run.

    .venv/bin/python bench/quality.py [--bench DIR] [--quick] [--sets articles,wcxb,cleaneval]
                                      [--model M] [--threshold T] [--json PATH] [--variants A,B,...]

Sets (read in place from ``../shared/bench``; the script stops with exit status 2 if they are absent):

- ``articles``: articles-dev, 76 news-like pages; the benchmark's own metric (4-token shingles,
  TP/FP/FN normalised per page, precision and recall averaged over pages, F1 of the two means);
  English and other-language pages in separate rows.
- ``wcxb``: wcxb-dev, 1,497 pages of 7 types; its own ``word_f1`` (bag of words, averaged per page),
  overall and per page type.
- ``cleaneval``: cleaneval-dev, 58 pages; its own ``similarity`` (word-level edit distance), in %.

Every page goes to one half by a hash of its site (host without ``www.``, cut to the registered
domain): ``dev`` is the half to choose on, ``held`` the half to report.  Changes are kept only when
they help both halves of every set.

Extractors: trafilatura, jusText (English stop list; bench-only dependency), resiliparse main content,
"all visible text" (our tag remover, nothing removed), our ``fast`` extractor and ``auto`` (the
default: trafilatura's text unless fast finds text it left out, see `extract.prefer_fuller`); pipelines
add the perplexity filter with the method ``plexity clean`` uses for that extractor, plus the
paper's per-sentence rule and the single-region rule (``region``, the default before ``regions``)
on tag text.  ``--variants`` measures only the variants named (and the extractors they need).  Extractor outputs are cached in ``--cache`` (default
/tmp/quality-cache, keyed by library version and, for our own extractors, by the source of
plexity_plugins/extractors/); the filter always runs.  pages/s: timed in this run on a sample of pages spread over
the sets (150, or 40 with ``--quick``), one core, every variant on the same pages, alternating.
``--quick`` keeps one WCXB page in five (all pages of the two small sets).  The last line printed
is one JSON object with all figures.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from plexity_plugins import PerplexityScorer  # noqa: E402
from plexity_plugins import extractors as plexity_extract  # noqa: E402
from plexity_plugins.decide import method_for_extractor  # noqa: E402

DEFAULT_BENCH = REPO.parent / "shared" / "bench"
SET_DIRS = {"articles": "articles-dev", "wcxb": "wcxb-dev", "cleaneval": "cleaneval-dev"}
WCXB_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")
HALVES = ("dev", "held")
_WORD = re.compile(r"\w+")
# Second-level labels under which sites register (bbc.co.uk, abc.net.au): keep three labels.
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go", "gob"})


# -- halves -------------------------------------------------------------------------


def site(url: str) -> str:
    """The site of `url`: its host without ``www.``, cut to the registered domain."""
    host = (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    labels = host.split(".")
    if host.replace(".", "").isdigit():  # a bare IP address is its own site
        return host
    keep = 3 if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2 else 2
    return ".".join(labels[-keep:])


def half_of(url: str) -> str:
    """``dev`` or ``held``: a fixed hash of the page's site, so one site never spans both halves."""
    return HALVES[hashlib.sha256(site(url).encode()).digest()[0] % 2]


# -- the three sets ------------------------------------------------------------------


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_articles(root: Path) -> list[dict]:
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    return [{"key": key, "path": root / "html" / f"{key}.html.gz", "truth": value.get("articleBody", ""),
             "group": "english" if value.get("english") else "other", "half": half_of(value.get("url", ""))}
            for key, value in sorted(truth.items())]


def load_wcxb(root: Path) -> list[dict]:
    scorer = _load_module(root / "evaluate.py", "wcxb_evaluate")
    pages = []
    for path in sorted((root / "ground-truth").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        gt = data.get("ground_truth")
        if not isinstance(gt, dict):  # the benchmark's scorer skips these too
            continue
        pages.append({"key": path.stem, "path": root / "html" / f"{path.stem}.html.gz",
                      "truth": gt.get("main_content", "") or "", "group": scorer.get_page_type(data),
                      "half": half_of(data.get("url", ""))})
    return pages


def load_cleaneval(root: Path) -> list[dict]:
    pages = []
    for gold in sorted((root / "gold").glob("*.txt")):
        raw = gold.read_text(encoding="utf-8", errors="replace")
        url = re.search(r"^\s*URL:\s*(\S+)", raw, flags=re.M)
        pages.append({"key": gold.stem, "path": root / "html" / f"{gold.stem}.html.gz", "truth": raw,
                      "group": "all", "half": half_of(url.group(1) if url else gold.stem)})
    return pages


LOADERS = {"articles": load_articles, "wcxb": load_wcxb, "cleaneval": load_cleaneval}


# -- metrics -------------------------------------------------------------------------


def shingles(text: str, n: int = 4) -> Counter:
    tokens = _WORD.findall(text or "")
    if len(tokens) < n:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def article_counts(truth: str, predicted: str) -> tuple[float, float, float]:
    """articles-dev's per-page (TP, FP, FN), normalised by their sum."""
    t, p = shingles(truth), shingles(predicted)
    tp = sum((t & p).values())
    fp = sum(p.values()) - tp
    fn = sum(t.values()) - tp
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def article_metrics(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    """articles-dev's figures: P and R averaged over pages, F1 of the two means."""
    def precision(tp, fp, fn):
        return 1.0 if fp == fn == 0 else tp / (tp + fp)

    def recall(tp, fp, fn):
        return 1.0 if fp == fn == 0 else tp / (tp + fn)

    p_values = [precision(*c) for c in counts if c[0] + c[1] > 0]
    r_values = [recall(*c) for c in counts if c[0] + c[2] > 0]
    p = statistics.mean(p_values) if p_values else 0.0
    r = statistics.mean(r_values) if r_values else 0.0
    return {"f1": 2 * p * r / (p + r) if p + r else 0.0, "precision": p, "recall": r, "pages": len(counts)}


class Scorers:
    """Each set's own metric, over a list of (page, predicted text)."""

    def __init__(self, bench: Path, sets: list[str]):
        # the benchmarks' own scorers, as shipped beside their pages
        self.wcxb = _load_module(bench / SET_DIRS["wcxb"] / "evaluate.py", "wcxb_evaluate") if "wcxb" in sets else None
        self.cleaneval = (_load_module(bench / SET_DIRS["cleaneval"] / "evaluate.py", "cleaneval_evaluate")
                          if "cleaneval" in sets else None)

    def __call__(self, name: str, pairs: list[tuple[dict, str]]) -> dict[str, float]:
        if name == "articles":
            return article_metrics([article_counts(page["truth"], text) for page, text in pairs])
        if name == "wcxb":
            scores = [self.wcxb.word_f1(text, page["truth"]) for page, text in pairs]
            return {"f1": statistics.mean(s[2] for s in scores), "precision": statistics.mean(s[0] for s in scores),
                    "recall": statistics.mean(s[1] for s in scores), "pages": len(scores)}
        scores = [self.cleaneval.similarity(page["truth"], text) for page, text in pairs]
        return {"similarity": 100 * statistics.mean(scores), "pages": len(scores)}


# -- extractors (cached) -------------------------------------------------------------


def _trafilatura(html: str, raw: bytes) -> str:
    return plexity_extract.html_to_text_trafilatura(html)


def _justext(html: str, raw: bytes) -> str:
    import justext

    paragraphs = justext.justext(raw, justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def _resiliparse(html: str, raw: bytes) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(html, main_content=True)


def _tags(html: str, raw: bytes) -> str:
    return plexity_extract.html_to_text_tags(html)


def _fast(html: str, raw: bytes) -> str:
    return plexity_extract.get_extractor("fast")(html)


def _dense(html: str, raw: bytes) -> str:
    return plexity_extract.get_extractor("dense")(html)


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return "absent"


def _source(*names: str) -> str:
    """A digest of our own extraction code (so a change to it invalidates the cache, and nothing else does)."""
    import inspect

    parts = []
    for name in names:
        obj = getattr(plexity_extract, name, None)
        parts.append(inspect.getsource(obj) if callable(obj) else repr(sorted(obj) if isinstance(obj, frozenset) else obj))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _module_source(*names: str) -> str:
    """A digest of whole modules of `plexity_plugins.extractors` (with the decoding and parsing they
    share): an extractor's cache key (its helpers are many and cheap to rerun)."""
    import importlib
    import inspect

    modules = [importlib.import_module(f"plexity_plugins.extractors.{name}") for name in (*names, "decoding", "limits")]
    return hashlib.sha256("".join(inspect.getsource(m) for m in modules).encode()).hexdigest()[:12]


# name -> (function, cache tag, distribution that must be installed)
EXTRACTORS = {
    "trafilatura": (_trafilatura, lambda: f"trafilatura-{_version('trafilatura')}-{_source('html_to_text_trafilatura')}", "trafilatura"),
    "justext": (_justext, lambda: f"justext-{_version('justext')}", "justext"),
    "resiliparse": (_resiliparse, lambda: f"resiliparse-{_version('resiliparse')}", "resiliparse"),
    "tags": (_tags, lambda: f"tags-{_module_source('tags')}", "lxml"),
    "fast": (_fast, lambda: f"fast-{_version('resiliparse')}-{_module_source('fast')}", "resiliparse"),
    "dense": (_dense, lambda: f"dense-{_version('resiliparse')}-{_module_source('dense', 'auto')}", "resiliparse"),
}


# Shipped extractors built from two others: name -> (the extractors, the shipped rule combining
# their texts).  ``auto`` is `plexity_plugins.extractors.html_to_text_auto` computed from the cached
# outputs of its two extractors (the same functions) by its own rule, `prefer_fuller`, given the
# page's HTML; timed as the two extractions.
DERIVED = {"auto": (("trafilatura", "fast"),
                    lambda html, main, fuller: plexity_extract.prefer_fuller(
                        main, fuller, lambda: plexity_extract.declares_article_or_product(html)))}
LABELS = {"trafilatura": "trafilatura alone", "justext": "jusText", "resiliparse": "resiliparse main content",
          "tags": "all visible text (tags)", "fast": "fast alone", "dense": "dense alone",
          "auto": "auto: trafilatura, else fast"}
# pipeline name -> (extractor, filter method or None for the extractor's own default)
PIPELINES = {"auto+filter": ("auto", None), "trafilatura+filter": ("trafilatura", None),
             "fast+filter": ("fast", None), "dense+filter": ("dense", None),
             "tags+filter": ("tags", None), "tags+region": ("tags", "region"),
             "tags+sentences": ("tags", "sentences")}


def page_html(page: dict) -> str:
    """The page's HTML, decoded as the extractors get it."""
    return plexity_extract.decode_html(gzip.decompress(page["path"].read_bytes()))[0]


def extract_all(set_name: str, pages: list[dict], extractor: str, cache_dir: Path) -> tuple[dict[str, str], float]:
    """{key: text} of every page by `extractor`, and the seconds extraction took when it ran
    (cached per set; the speed figures come from `measure_speed`, not from these)."""
    function, tag, _ = EXTRACTORS[extractor]
    path = cache_dir / set_name / f"{tag()}.json.gz"
    cached = {"texts": {}, "seconds": {}}
    if path.exists():
        cached = json.loads(gzip.decompress(path.read_bytes()))
    missing = [page for page in pages if page["key"] not in cached["texts"]]
    if missing:
        print(f"  extracting {len(missing)} {set_name} pages with {extractor} ...", file=sys.stderr, flush=True)
        for page in missing:
            raw = gzip.decompress(page["path"].read_bytes())
            html, _ = plexity_extract.decode_html(raw)
            started = time.perf_counter()
            try:
                text = function(html, raw)
            except Exception as exc:  # a crash of a third-party extractor scores as an empty output
                print(f"  {extractor} failed on {set_name}/{page['key']}: {exc!r}", file=sys.stderr)
                text = ""
            cached["seconds"][page["key"]] = time.perf_counter() - started
            cached["texts"][page["key"]] = text
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(json.dumps(cached).encode()))
        tmp.replace(path)
    keys = [page["key"] for page in pages]
    return {k: cached["texts"][k] for k in keys}, sum(cached["seconds"][k] for k in keys)


# -- the run --------------------------------------------------------------------------


# Ceilings of choosing, page by page, the best of several extractors' outputs (knowing the truth):
# no rule that picks among them can score above these.
ORACLES = {"trafilatura or fast": ("trafilatura", "fast"),
           "trafilatura, fast or all visible text": ("trafilatura", "fast", "tags"),
           "best of every extractor": tuple(EXTRACTORS)}


def oracles(set_name: str, pages: list[dict], outputs: dict, scorers: "Scorers") -> dict:
    """Per half (and per group), each ORACLES ceiling: the page-by-page best of its extractors, by
    the set's own per-page metric (articles: shingle F1 per page, so not the set's pooled F1)."""
    result = {}
    for name, parts in ORACLES.items():
        if not all(part in outputs for part in parts):
            continue
        best = []
        for i, page in enumerate(pages):
            scores = [scorers(set_name, [(page, outputs[part][i])]) for part in parts]
            best.append(max(s.get("f1", s.get("similarity")) for s in scores))
        result[name] = {half: statistics.mean(b for b, page in zip(best, pages) if half in ("all", page["half"]))
                        for half in HALVES + ("all",)}
    return result


def measure_speed(pages: list[dict], extractors: list[str], derived: dict, pipelines: dict, filters: dict,
                  sample: int) -> dict[str, float]:
    """pages/s of each extractor and each pipeline (extractor + filter), one core, on the same
    `sample` pages spread over all sets, the variants alternating page by page so that the
    load of a shared machine falls on all of them alike (nothing here comes from the cache)."""
    step = max(1, len(pages) // sample)
    chosen = pages[::step][:sample]
    seconds: Counter = Counter()
    for i, page in enumerate(chosen):
        raw = gzip.decompress(page["path"].read_bytes())
        html, _ = plexity_extract.decode_html(raw)
        texts = {}
        order = extractors[i % len(extractors):] + extractors[:i % len(extractors)]
        for extractor in order:
            started = time.perf_counter()
            try:
                texts[extractor] = EXTRACTORS[extractor][0](html, raw)
            except Exception:  # noqa: BLE001 - timed like any other page
                texts[extractor] = ""
            seconds[extractor] += time.perf_counter() - started
        for name, (parts, combine) in derived.items():
            started = time.perf_counter()
            texts[name] = combine(html, *(texts[part] for part in parts))
            seconds["combine:" + name] += time.perf_counter() - started
        for name, (extractor, _) in pipelines.items():
            started = time.perf_counter()
            filters[name].clean(texts[extractor])
            seconds["filter:" + name] += time.perf_counter() - started
    rates = {"sample_pages": len(chosen)}
    for name, (parts, _) in derived.items():
        seconds[name] = sum(seconds[part] for part in parts) + seconds["combine:" + name]
    for extractor in [*extractors, *derived]:
        rates[extractor] = len(chosen) / max(seconds[extractor], 1e-9)
    for name, (extractor, _) in pipelines.items():
        rates[name] = len(chosen) / max(seconds[extractor] + seconds["filter:" + name], 1e-9)
    return rates


def available(extractor: str) -> bool:
    return _version(EXTRACTORS[extractor][2]) != "absent" and (
        extractor not in ("fast", "dense") or extractor in plexity_extract.EXTRACTORS)


def selected(variants: list[str] | None) -> tuple[set[str], set[str], set[str]]:
    """The extractors, combinations and pipelines to run for `variants` (None: all of them): a
    pipeline needs its extractor, a combination its parts."""
    if variants is None:
        return set(EXTRACTORS), set(DERIVED), set(PIPELINES)
    pipelines = {v for v in variants if v in PIPELINES}
    derived = {v for v in variants if v in DERIVED} | {PIPELINES[p][0] for p in pipelines if PIPELINES[p][0] in DERIVED}
    extractors = ({v for v in variants if v in EXTRACTORS} | {PIPELINES[p][0] for p in pipelines}
                  | {part for d in derived for part in DERIVED[d][0]}) - set(DERIVED)
    return extractors, derived, pipelines


def run(bench: Path, sets: list[str], quick: bool = False, model: str | None = None,
        threshold: float | None = None, cache_dir: Path = Path("/tmp/quality-cache"),
        variants: list[str] | None = None, with_oracles: bool = False) -> dict:
    scorers = Scorers(bench, sets)
    wanted_extractors, wanted_derived, wanted_pipelines = selected(variants)
    extractors = [name for name in EXTRACTORS if name in wanted_extractors and available(name)]
    derived = {name: spec for name, spec in DERIVED.items()
               if name in wanted_derived and all(part in extractors for part in spec[0])}
    pipelines = {name: spec for name, spec in PIPELINES.items()
                 if name in wanted_pipelines and (spec[0] in extractors or spec[0] in derived)}
    filters = {}
    for name, (extractor, method) in pipelines.items():
        filters[name] = PerplexityScorer(model, threshold=threshold, method=method or method_for_extractor(extractor))
    results: dict = {"model": next(iter(filters.values())).model_name if filters else None,
                     "methods": {n: f.method for n, f in filters.items()},
                     "thresholds": {n: f.threshold for n, f in filters.items()},
                     "missing_extractors": [n for n in EXTRACTORS if n in wanted_extractors and n not in extractors],
                     "quick": quick, "sets": {}, "pages_per_second": {}}
    all_pages: list[dict] = []
    for set_name in sets:
        pages = LOADERS[set_name](bench / SET_DIRS[set_name])
        if quick and set_name == "wcxb":
            pages = pages[::5]
        outputs: dict[str, list[str]] = {}
        for extractor in extractors:
            texts, _ = extract_all(set_name, pages, extractor, cache_dir)
            outputs[extractor] = [texts[page["key"]] for page in pages]
        for name, (parts, combine) in derived.items():
            outputs[name] = [combine(page_html(page), *texts)
                             for page, *texts in zip(pages, *(outputs[part] for part in parts))]
        for name, (extractor, _) in pipelines.items():
            outputs[name] = [filters[name].clean(text).text for text in outputs[extractor]]
        all_pages.extend(pages)
        table: dict = {}
        groups = sorted({page["group"] for page in pages}, key=lambda g: (WCXB_TYPES + (g,)).index(g))
        for variant, texts in outputs.items():
            row = {}
            for half in HALVES + ("all",):
                chosen = [(p, t) for p, t in zip(pages, texts) if half in ("all", p["half"])]
                cell = {"all": scorers(set_name, chosen)}
                if len(groups) > 1:
                    for group in groups:
                        in_group = [(p, t) for p, t in chosen if p["group"] == group]
                        if in_group:
                            cell[group] = scorers(set_name, in_group)
                row[half] = cell
            table[variant] = row
        results["sets"][set_name] = {"pages": {h: sum(p["half"] == h for p in pages) for h in HALVES},
                                     "groups": groups, "variants": table}
        if with_oracles:
            results["sets"][set_name]["oracles"] = oracles(set_name, pages, outputs, scorers)
    results["pages_per_second"] = measure_speed(all_pages, extractors, derived, pipelines, filters,
                                                40 if quick else 150)
    return results


def _fmt(cell: dict) -> str:
    if "similarity" in cell:
        return f"{cell['similarity']:5.1f}"
    return f"{cell['f1']:.3f} {cell['precision']:.3f} {cell['recall']:.3f}"


def print_tables(results: dict) -> None:
    from plexity_plugins import decide

    print(f"model {results['model']}; methods {results['methods']}; thresholds "
          f"{ {k: round(v) for k, v in results['thresholds'].items()} }; trim relative {decide.TRIM_RELATIVE}"
          + ("; QUICK (1 WCXB page in 5)" if results["quick"] else ""))
    if results["missing_extractors"]:
        print(f"not installed, skipped: {', '.join(results['missing_extractors'])}")
    rates = results["pages_per_second"]
    print(f"pages/s: one core, {rates['sample_pages']} sample pages, all variants on the same pages")
    for set_name, data in results["sets"].items():
        groups = data["groups"]
        metric = "similarity %" if set_name == "cleaneval" else "F1 P R"
        print(f"\n== {set_name} ({data['pages']['dev']} dev / {data['pages']['held']} held pages; {metric})")
        for half in HALVES + ("all",):
            heads = ["all"] + (groups if len(groups) > 1 else [])
            width = 6 if set_name == "cleaneval" else 18
            print(f"-- {half}")
            print(f"{'variant':26}" + "".join(f"{g[:width]:>{width + 1}}" for g in heads) + f"{'pages/s':>9}")
            for variant, row in data["variants"].items():
                cells = row[half]
                line = "".join(f"{_fmt(cells[g]) if g in cells else '-':>{width + 1}}" for g in heads)
                print(f"{LABELS.get(variant, variant):26}{line}{rates.get(variant, 0):9.1f}")
        for name, cells in data.get("oracles", {}).items():
            print(f"ceiling, {name}: " + ", ".join(f"{half} {value:.3f}" for half, value in cells.items()))


def _md(variant: str) -> str:
    """A variant's label as a Markdown table cell."""
    return LABELS.get(variant, variant).replace("|", "\\|")


def print_markdown(results: dict) -> None:
    """The README's tables: every set and half (F1 P R, or similarity), WCXB per page type, pages/s."""
    sets = results["sets"]
    rates = results["pages_per_second"]
    variants = list(next(iter(sets.values()))["variants"])
    heads, cells = [], {v: [] for v in variants}
    for set_name, data in sets.items():
        group = "english" if set_name == "articles" else "all"
        for half in HALVES:
            unit = "sim. %" if set_name == "cleaneval" else "F1 / P / R"
            n = data["variants"][variants[0]][half][group]["pages"]
            heads.append(f"{set_name}{' English' if set_name == 'articles' else ''}, {half} ({n} pages), {unit}")
            for v in variants:
                c = data["variants"][v][half][group]
                cells[v].append(f"{c['similarity']:.1f}" if "similarity" in c else
                                f"{c['f1']:.3f} / {c['precision']:.3f} / {c['recall']:.3f}")
    print("| variant | " + " | ".join(heads) + " | pages/s |")
    print("|---" * (len(heads) + 2) + "|")
    for v in variants:
        print(f"| {_md(v)} | " + " | ".join(cells[v]) + f" | {rates.get(v, 0):.1f} |")
    if "wcxb" in sets:
        data = sets["wcxb"]
        for half in HALVES:
            groups = [g for g in data["groups"] if g in data["variants"][variants[0]][half]]
            print(f"\nWCXB {half} half, word F1 / P / R per page type (pages: "
                  + ", ".join(f"{g} {data['variants'][variants[0]][half][g]['pages']}" for g in groups) + ")\n")
            print("| variant | all | " + " | ".join(groups) + " |")
            print("|---" * (len(groups) + 2) + "|")
            for v in variants:
                row = data["variants"][v][half]
                print(f"| {_md(v)} | " + " | ".join(f"{row[g]['f1']:.3f} / {row[g]['precision']:.3f} / "
                                                  f"{row[g]['recall']:.3f}" for g in ["all", *groups]) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=DEFAULT_BENCH,
                        help="the folder holding articles-dev, wcxb-dev and cleaneval-dev")
    parser.add_argument("--sets", default="articles,wcxb,cleaneval")
    parser.add_argument("--quick", action="store_true", help="one WCXB page in five")
    parser.add_argument("--model", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/quality-cache"))
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON figures here")
    parser.add_argument("--markdown", action="store_true", help="also print the README's tables")
    parser.add_argument("--variants", default=None,
                        help="comma-separated extractors, combinations and pipelines to measure (default: all), "
                             f"from {', '.join([*EXTRACTORS, *DERIVED, *PIPELINES])}")
    parser.add_argument("--oracle", action="store_true",
                        help="also print the ceilings of picking the best extractor page by page (ORACLES)")
    parser.add_argument("--trim-relative", type=float, default=None,
                        help="override decide.TRIM_RELATIVE (0: the global threshold alone, the rule before it)")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SET_DIRS]
    if unknown:
        parser.error(f"unknown set(s) {unknown}: choose from {', '.join(SET_DIRS)}")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else None
    unknown = [v for v in variants or [] if v not in {*EXTRACTORS, *DERIVED, *PIPELINES}]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}: choose from {', '.join([*EXTRACTORS, *DERIVED, *PIPELINES])}")
    absent = [str(args.bench / SET_DIRS[s]) for s in sets if not (args.bench / SET_DIRS[s]).is_dir()]
    if absent:
        print(f"bench/quality.py: benchmark data not found: {', '.join(absent)}\n"
              f"It is read in place from ../shared/bench (articles-dev, wcxb-dev, cleaneval-dev) beside the "
              f"repository, or from --bench DIR; it is never part of the repository.", file=sys.stderr)
        return 2
    if args.trim_relative is not None:
        from plexity_plugins import decide

        decide.TRIM_RELATIVE = args.trim_relative
    results = run(args.bench, sets, args.quick, args.model, args.threshold, args.cache, variants, args.oracle)
    if args.trim_relative is not None:
        results["trim_relative"] = args.trim_relative
    print_tables(results)
    if args.markdown:
        print()
        print_markdown(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
