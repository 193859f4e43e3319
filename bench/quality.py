"""Cleaning quality on three public benchmarks, each split by site into two halves, in one run.

    .venv/bin/python bench/quality.py [--bench DIR] [--quick] [--sets articles,wcxb,cleaneval]
                                      [--model M] [--threshold T] [--json PATH] [--variants A,B,...]
                                      [--figures DIR] [--markdown] [--rs-python PYTHON]

Sets (read in place from ``shared/bench`` beside the checkout or one of its parent folders; the
script stops with exit status 2 if they are absent; all four by default):

- ``articles``: articles-dev, 76 news-like pages; the benchmark's own metric (4-token shingles,
  TP/FP/FN normalised per page, precision and recall averaged over pages, F1 of the two means);
  English and other-language pages in separate rows.
- ``wcxb``: wcxb-dev, 1,497 pages of 7 types; its own ``word_f1`` (bag of words, averaged per page),
  overall and per page type; and its snippet checks, by its own rule (`snippet_check`): the % of
  content snippets (``ground_truth.with``) kept and of boilerplate snippets (``without``) leaked.
- ``cleaneval``: cleaneval-dev, 58 pages; its own ``similarity`` (word-level edit distance), in %.
- ``traf``: traf-eval-dev, 513 pages of trafilatura's evaluation set (most German); snippet F1 by
  its own rule, overall and per language (English and German in their own table).

Every page goes to one half by a hash of its site (host without ``www.``, cut to the registered
domain): ``dev`` is the half to choose on, ``held`` the half to report.  Changes are kept only when
they help both halves of every set.

Variants: the other tools (trafilatura, jusText with its English stop list (bench-only dependency),
resiliparse main content, datatrove's own Trafilatura step as its pipeline runs it; with ``--rs-python``,
rs-trafilatura through its binding trafipy, in a child process of that Python >= 3.12) and every extractor
of `plexity_plugins.extractors.EXTRACTORS` (a new one is measured by its name; ``auto`` is computed
from trafilatura's and fast's outputs by its shipped rule, `prefer_fuller`); pipelines: each of ours
+ the perplexity filter with the method ``plexity clean`` uses for it (``NAME+filter``; the default
extractor's is "our default"), plus the paper's per-sentence rule and the single-region rule
(``region``) on tag text.  ``--variants`` measures only the variants named (and the extractors
they need).  Extractor outputs are cached in ``--cache`` (default /tmp/quality-cache, keyed by
library version and, for our own extractors, by the source of their modules and of the
plexity_plugins modules they import); the filter always runs.  pages/s, for every variant: timed
in this run on a sample of pages spread over the sets (150, or 40 with ``--quick``), one core,
every variant on the same pages, alternating; per second of this process's CPU time (other jobs on
a shared machine do not inflate it), wall-time rates beside them in the JSON.  ``--quick`` keeps one WCXB page in five (all pages
of the two small sets).

A full run (no --quick, --sets, --variants, --model, --threshold, --trim-relative, --oracle) writes
its tables to docs/figures/ (quality.md, quality-snippets.md, quality-wcxb-types.md, and every
figure in quality.json), each headed by the command, the commit, the date and the library versions;
--figures DIR writes them from any run.  The last line printed is one JSON object with all figures.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402

from plexity_plugins import PerplexityScorer  # noqa: E402
from plexity_plugins import extractors as plexity_extract  # noqa: E402
from plexity_plugins.scoring.methods import method_for_extractor  # noqa: E402

DEFAULT_BENCH = figures.BENCH
SET_DIRS = {"articles": "articles-dev", "wcxb": "wcxb-dev", "cleaneval": "cleaneval-dev", "traf": "traf-eval-dev"}
SET_NAMES = {"articles": "articles", "wcxb": "WCXB", "cleaneval": "CleanEval", "traf": "trafilatura's set"}
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
                      "half": half_of(data.get("url", "")),
                      "with": gt.get("with", []) or [], "without": gt.get("without", []) or []})
    return pages


def load_cleaneval(root: Path) -> list[dict]:
    pages = []
    for gold in sorted((root / "gold").glob("*.txt")):
        raw = gold.read_text(encoding="utf-8", errors="replace")
        url = re.search(r"^\s*URL:\s*(\S+)", raw, flags=re.M)
        pages.append({"key": gold.stem, "path": root / "html" / f"{gold.stem}.html.gz", "truth": raw,
                      "group": "all", "half": half_of(url.group(1) if url else gold.stem)})
    return pages


def load_traf(root: Path) -> list[dict]:
    """traf-eval-dev: pages with ``with`` / ``without`` snippets and no gold text; ``group`` is the
    language of the snippets."""
    data = json.loads((root / "evaldata.json").read_text(encoding="utf-8"))
    return [{"key": item["file"], "path": root / "html" / item["file"], "truth": None, "group": item.get("language", ""),
             "half": half_of(url), "with": item.get("with", []), "without": item.get("without", [])}
            for url, item in data.items()]


LOADERS = {"articles": load_articles, "wcxb": load_wcxb, "cleaneval": load_cleaneval, "traf": load_traf}


def page_bytes(page: dict) -> bytes:
    """The page as crawled (the benchmarks store it gzipped, or plain)."""
    raw = page["path"].read_bytes()
    return gzip.decompress(raw) if page["path"].suffix == ".gz" else raw


def gold_text(set_name: str, page: dict) -> str | None:
    """The page's gold text as plain text (CleanEval's without its URL line and block marks), or
    None where the benchmark has snippets instead."""
    truth = page["truth"]
    if truth is None or set_name != "cleaneval":
        return truth
    import html

    truth = re.sub(r"^\s*URL.*$", "", truth, flags=re.M)
    return html.unescape(re.sub(r"<[phlPHL]>", " ", truth))


def require_bench(bench: Path, sets) -> None:
    """Stop with exit status 2, naming what is missing, when a benchmark is absent."""
    absent = [str(bench / SET_DIRS[s]) for s in sets if not (bench / SET_DIRS[s]).is_dir()]
    if absent:
        print(f"benchmark data not found: {', '.join(absent)}\nIt is read in place from ../shared/bench beside "
              f"the repository (or --bench DIR); it is never part of the repository.", file=sys.stderr)
        sys.exit(2)


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


def snippet_check(text: str, snippets: list[str]) -> float:
    """The share of `snippets` found in `text`: WCXB's own rule (wcxb-dev/evaluate.py, `snippet_check`),
    followed here: a snippet counts when it occurs, lower-cased, as a substring of the lower-cased
    text, and a page with no snippets of that kind scores 1.0."""
    if not snippets:
        return 1.0
    lowered = text.lower()
    return sum(1 for s in snippets if s.lower() in lowered) / len(snippets)


def snippet_rates(pairs: list[tuple[dict, str]]) -> dict[str, float]:
    """WCXB's snippet figures over pages, as its evaluate.py averages them (per page, then over pages):
    ``with_kept`` the % of content snippets (``ground_truth.with``) in the output, ``without_leaked``
    the % of boilerplate snippets (``ground_truth.without``) in it (lower is better)."""
    return {"with_kept": 100 * statistics.mean(snippet_check(t, p["with"]) for p, t in pairs),
            "without_leaked": 100 * statistics.mean(snippet_check(t, p["without"]) for p, t in pairs)}


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
                    "recall": statistics.mean(s[1] for s in scores), "pages": len(scores), **snippet_rates(pairs)}
        if name == "traf":
            return traf_metrics(pairs)
        scores = [self.cleaneval.similarity(page["truth"], text) for page, text in pairs]
        return {"similarity": 100 * statistics.mean(scores), "pages": len(scores)}


def traf_metrics(pairs: list[tuple[dict, str]]) -> dict[str, float]:
    """trafilatura's evaluation rule (traf-eval-dev/evaluate.py): whitespace collapsed, a ``with``
    snippet found is a true positive, a ``without`` snippet found a false positive; precision,
    recall and F1 over all snippets of all pages together."""
    tp = fn = fp = 0
    for page, text in pairs:
        found = re.sub(r"\s+", " ", text or "").strip()
        kept = sum(re.sub(r"\s+", " ", s).strip() in found for s in page["with"])
        tp += kept
        fn += len(page["with"]) - kept
        fp += sum(re.sub(r"\s+", " ", s).strip() in found for s in page["without"])
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"f1": 2 * p * r / (p + r) if p + r else 0.0, "precision": p, "recall": r, "pages": len(pairs)}


def figures_of(set_name: str, scorers: "Scorers", pairs: list[tuple[dict, str]]) -> dict:
    """A set's headline figure as ``score`` (F1, or CleanEval's similarity as a fraction), with the
    figures that matter beside it: articles' English pages, trafilatura's set's English and German
    pages, WCXB's snippet rates."""
    whole = scorers(set_name, pairs)
    out = {"score": whole["similarity"] / 100 if "similarity" in whole else whole["f1"], "pages": len(pairs)}
    if set_name == "articles":
        out["english"] = scorers(set_name, [(p, t) for p, t in pairs if p["group"] == "english"])["f1"]
    elif set_name == "traf":
        for code, name in (("en", "english"), ("de", "german")):
            out[name] = scorers(set_name, [(p, t) for p, t in pairs if p["group"] == code])["f1"]
    elif set_name == "wcxb":
        out.update(with_kept=whole["with_kept"], without_leaked=whole["without_leaked"])
    return out


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


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return "absent"


def _datatrove(html: str, raw: bytes) -> str:
    # datatrove's own Trafilatura step (its defaults: favour_precision, deduplicate), called in
    # process: the extraction of the pipeline users run today (WarcReader -> Trafilatura -> JsonlWriter).
    global _DATATROVE_STEP
    if _DATATROVE_STEP is None:
        from datatrove.pipeline.extractors import Trafilatura

        _DATATROVE_STEP = Trafilatura()
    return _DATATROVE_STEP.extract(html) or ""


_DATATROVE_STEP = None

# rs-trafilatura, the Rust port that reports the best WCXB figures, through its binding trafipy: its wheels
# need Python >= 3.12, so it runs in a child process of the interpreter --rs-python names
# (bench/rs_trafilatura_worker.py); a bench-only anchor, missing from a run without it.
RS = "rs-trafilatura"


class _ChildExtractor:
    """An extractor in a child process of `python` running `worker` (JSON lines, see the worker's
    docstring), started on first use; `last_cpu`: the CPU seconds the child spent on the last page,
    which `measure_speed` counts as the variant's own (this process's CPU only waits for it)."""

    def __init__(self, worker: Path):
        self.worker, self.python, self.process, self.last_cpu = worker, None, None, 0.0

    def _start(self) -> None:
        import subprocess

        self.process = subprocess.Popen([self.python, str(self.worker)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, encoding="utf-8")
        first = self.process.stdout.readline()
        if not first:
            raise SystemExit(f"{self.python} {self.worker} stopped before answering: is trafipy installed for "
                             f"{self.python}? (leave out --rs-python to run without {RS})")
        self._version = json.loads(first)["version"]

    @property
    def version(self) -> str:
        if self.process is None:
            self._start()
        return self._version

    def __call__(self, html: str, raw: bytes) -> str:
        if self.process is None:
            self._start()
        try:
            self.process.stdin.write(json.dumps({"html": html}) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:  # the child died on this page (a crash of the Rust code): the next page starts another
            status, self.process, self.last_cpu = self.process.wait(), None, 0.0
            raise RuntimeError(f"{RS}'s child process ended on this page (exit status {status})")
        answer = json.loads(line)
        self.last_cpu = answer["cpu"]
        if answer["error"]:
            raise RuntimeError(answer["error"])
        return answer["text"]


def _closure_source(module_name: str) -> str:
    """The source of `module_name` and of every plexity_plugins module it imports, transitively
    (read with ast, nothing imported), plus the package's data files when the closure reaches the
    scoring or text layers (an extractor that asks the model must be re-run when the model changes)."""
    import ast

    seen: dict[str, str] = {}
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        base = REPO.joinpath(*name.split("."))
        path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if not path.is_file():  # a name imported from a module, not a module
            continue
        source = path.read_text(encoding="utf-8")
        seen[name] = source
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    target = f"{anchor}.{node.module}" if node.module else anchor
                else:
                    target = node.module or ""
                todo.append(target)
                todo.extend(f"{target}.{alias.name}" for alias in node.names)  # "from . import x"
            elif isinstance(node, ast.Import):
                todo.extend(alias.name for alias in node.names)
        todo = [t for t in todo if t.startswith("plexity_plugins")]
    parts = [seen[name] for name in sorted(seen)]
    if any(name.startswith(("plexity_plugins.scoring", "plexity_plugins.text")) for name in seen):  # (asks the model)
        data = REPO / "plexity_plugins" / "data"
        parts += [f"{f.relative_to(data)}:{hashlib.sha256(f.read_bytes()).hexdigest()}"
                  for f in sorted(data.rglob("*")) if f.is_file()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _ours(name: str):
    """One of our extractors (a name in plexity_plugins.extractors.EXTRACTORS) as a bench extractor."""
    extract = plexity_extract.get_extractor(name)

    def function(html: str, raw: bytes) -> str:
        return extract(html)

    def tag() -> str:
        libraries = "-".join(_version(lib) for lib in ("resiliparse", "lxml", "trafilatura", "selectolax"))
        return f"{name}-{libraries}-{_closure_source(f'plexity_plugins.extractors.{name}')}"

    return function, tag, "lxml"


# name -> (function, cache tag, distribution that must be installed).  The other tools first; then
# every extractor of plexity_plugins.extractors.EXTRACTORS (a new one is measured by its name),
# except ``none`` (text in, text out) and those computed from others (DERIVED).
EXTRACTORS = {
    "trafilatura": (_trafilatura, lambda: (f"trafilatura-{_version('trafilatura')}-"
                                           f"{_closure_source('plexity_plugins.extractors.trafilatura')}"), "trafilatura"),
    "justext": (_justext, lambda: f"justext-{_version('justext')}", "justext"),
    "resiliparse": (_resiliparse, lambda: f"resiliparse-{_version('resiliparse')}", "resiliparse"),
    "datatrove": (_datatrove, lambda: f"datatrove-{_version('datatrove')}-trafilatura-{_version('trafilatura')}",
                  "datatrove"),
}
_RS_EXTRACTOR = _ChildExtractor(REPO / "bench" / "rs_trafilatura_worker.py")
EXTRACTORS[RS] = (_RS_EXTRACTOR, lambda: f"{RS}-trafipy-{_RS_EXTRACTOR.version}", None)


# Shipped extractors built from two others: name -> (the extractors, the shipped rule combining
# their texts).  ``auto`` is `plexity_plugins.extractors.html_to_text_auto` computed from the cached
# outputs of its two extractors (the same functions) by its own rule, `prefer_fuller`, given the
# page's HTML; timed as the two extractions.
DERIVED = {}
if {"auto", "trafilatura", "fast"} <= set(plexity_extract.EXTRACTORS) and hasattr(plexity_extract, "prefer_fuller"):
    DERIVED["auto"] = (("trafilatura", "fast"),
                       lambda html, main, fuller: plexity_extract.prefer_fuller(
                           main, fuller, lambda: plexity_extract.declares_article_or_product(html)))
for _name in plexity_extract.EXTRACTORS:
    if _name not in EXTRACTORS and _name not in DERIVED and _name != "none":
        EXTRACTORS[_name] = _ours(_name)
# The learned reader's forests trained without each set (scripts/reader_model/build.py writes them):
# ``learned-left-out`` reads each set with the forest that never saw it, the honest figure of a
# learned extractor on these pages (the shipped forest was trained on all of them).
LEFT_OUT = "learned-left-out"
LEFT_OUT_DIR = Path(os.environ.get("PLEXITY_READER_LEFT_OUT", "/tmp/plexity-reader-left-out"))


def _left_out_function(set_name: str):
    from plexity_plugins.extractors import learned

    path = LEFT_OUT_DIR / f"without-{set_name}.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run scripts/reader_model/build.py first (it writes the forests "
                         f"trained without each set), or leave out {LEFT_OUT}")
    forest = learned.Forest(json.loads(path.read_text()))
    return lambda html, raw: learned.html_to_text_learned(html, forest=forest)


def _left_out_tag() -> str:
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(LEFT_OUT_DIR.glob("without-*.json"))))
    return f"{LEFT_OUT}-{digest.hexdigest()[:12]}-{_closure_source('plexity_plugins.extractors.learned')}"


if "learned" in plexity_extract.EXTRACTORS:
    EXTRACTORS[LEFT_OUT] = (None, _left_out_tag, "lightgbm")
OURS = [name for name in plexity_extract.EXTRACTORS if name != "none"]
DEFAULT = plexity_extract.DEFAULT_EXTRACTOR
LABELS = {"trafilatura": "trafilatura alone", RS: "rs-trafilatura (trafipy)",
          "justext": "jusText", "resiliparse": "resiliparse main content",
          "datatrove": "datatrove's Trafilatura step", "tags": "all visible text (tags)", "fast": "fast alone",
          "auto": "auto: trafilatura, else fast", LEFT_OUT: "learned, forest trained without this set"}
# pipeline name -> (extractor, filter method or None for the extractor's own default): each of our
# extractors + the filter (the default first), and the paper's rules on tag text.
PIPELINES = {f"{name}+filter": (name, None) for name in sorted(OURS, key=lambda n: n != DEFAULT)}
PIPELINES.update({"tags+region": ("tags", "region"), "tags+sentences": ("tags", "sentences")})
if LEFT_OUT in EXTRACTORS:
    PIPELINES[f"{LEFT_OUT}+filter"] = (LEFT_OUT, method_for_extractor("learned"))


def label(variant: str) -> str:
    """A variant's name in the tables; the default pipeline says so."""
    text = LABELS.get(variant) or (f"{variant} alone" if variant in EXTRACTORS or variant in DERIVED else variant)
    return f"{text} (our default)" if variant == f"{DEFAULT}+filter" else text


def page_html(page: dict) -> str:
    """The page's HTML, decoded as the extractors get it."""
    return plexity_extract.decode_html(page_bytes(page))[0]


def extract_all(set_name: str, pages: list[dict], extractor: str, cache_dir: Path) -> tuple[dict[str, str], float]:
    """{key: text} of every page by `extractor`, and the seconds extraction took when it ran
    (cached per set; the speed figures come from `measure_speed`, not from these)."""
    function, tag, _ = EXTRACTORS[extractor]
    if extractor == LEFT_OUT:
        function = _left_out_function(set_name)
    path = cache_dir / set_name / f"{tag()}.json.gz"
    cached = {"texts": {}, "seconds": {}}
    if path.exists():
        cached = json.loads(gzip.decompress(path.read_bytes()))
    missing = [page for page in pages if page["key"] not in cached["texts"]]
    if missing:
        print(f"  extracting {len(missing)} {set_name} pages with {extractor} ...", file=sys.stderr, flush=True)
        for page in missing:
            raw = page_bytes(page)
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
           "best of every extractor": tuple(e for e in EXTRACTORS if e != RS)}  # (ours and the tools installed here)


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
    load of a shared machine falls on all of them alike (nothing here comes from the cache).
    Pages per second of this process's CPU time (everything here runs in this one thread), which
    other jobs on the machine do not inflate as they do wall time; the wall-time rates are in
    ``wall``, and the load averages around the timing in ``loadavg``."""
    extractors = [e for e in extractors if e != LEFT_OUT]  # (the shipped learned's speed: the same reader)
    pipelines = {n: spec for n, spec in pipelines.items() if spec[0] != LEFT_OUT}
    if not extractors:  # (only the left-out forests asked for: nothing of its own to time)
        return {}
    step = max(1, len(pages) // sample)
    chosen = pages[::step][:sample]
    cpu: Counter = Counter()
    wall: Counter = Counter()

    def timed(key: str, function, *args):
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args)
        finally:
            # (an extractor in a child process says what its page cost there: this process only waited)
            cpu[key] += time.process_time() - started_cpu + getattr(function, "last_cpu", 0.0)
            wall[key] += time.perf_counter() - started

    # one page untimed first: what an extractor or filter loads on first use is not per-page work
    raw = page_bytes(chosen[0])
    html, _ = plexity_extract.decode_html(raw)
    for extractor in extractors:
        try:
            EXTRACTORS[extractor][0](html, raw)
        except Exception:  # noqa: BLE001 - a warm-up only
            pass
    for scorer in filters.values():
        scorer.clean("Warm up the model and the language identifier with an English sentence, please.")
    load_before = [round(x, 2) for x in os.getloadavg()]
    for i, page in enumerate(chosen):
        raw = page_bytes(page)
        html, _ = plexity_extract.decode_html(raw)
        texts = {}
        order = extractors[i % len(extractors):] + extractors[:i % len(extractors)]
        for extractor in order:
            try:
                texts[extractor] = timed(extractor, EXTRACTORS[extractor][0], html, raw)
            except Exception:  # noqa: BLE001 - timed like any other page
                texts[extractor] = ""
        for name, (parts, combine) in derived.items():
            texts[name] = timed("combine:" + name, combine, html, *(texts[part] for part in parts))
        for name, (extractor, _) in pipelines.items():
            timed("filter:" + name, filters[name].clean, texts[extractor])

    def rates_of(seconds: Counter) -> dict[str, float]:
        for name, (parts, _) in derived.items():
            seconds[name] = sum(seconds[part] for part in parts) + seconds["combine:" + name]
        rates = {extractor: len(chosen) / max(seconds[extractor], 1e-9) for extractor in [*extractors, *derived]}
        for name, (extractor, _) in pipelines.items():
            rates[name] = len(chosen) / max(seconds[extractor] + seconds["filter:" + name], 1e-9)
        return rates

    return {"sample_pages": len(chosen), "clock": "cpu", **rates_of(cpu), "wall": rates_of(wall),
            "loadavg": {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]}}


def check_derived(bench: Path, sets: list[str], sample: int = 6) -> dict[str, str]:
    """Whether each DERIVED rule still gives what the shipped extractor of that name gives, on
    `sample` pages of each set; one that does not is measured as an extractor of its own instead
    (the package's extractor may have changed: the figures must be of what ships)."""
    verdicts = {}
    for name, (parts, combine) in list(DERIVED.items()):
        shipped = plexity_extract.get_extractor(name)
        checked = 0
        for set_name in sets:
            pages = LOADERS[set_name](bench / SET_DIRS[set_name])
            for page in pages[:: max(1, len(pages) // sample)][:sample]:
                raw = page_bytes(page)
                html = plexity_extract.decode_html(raw)[0]
                try:
                    expected = shipped(html)
                    got = combine(html, *(EXTRACTORS[part][0](html, raw) for part in parts))
                except Exception:  # noqa: BLE001 - a page an extractor refuses proves nothing either way
                    continue
                checked += 1
                if got != expected:
                    del DERIVED[name]
                    LABELS.pop(name, None)
                    EXTRACTORS[name] = _ours(name)
                    verdicts[name] = (f"the combination of {', '.join(parts)} differs from the shipped {name} on "
                                      f"{set_name}/{page['key']}: {name} measured as an extractor of its own")
                    print(f"  {verdicts[name]}", file=sys.stderr)
                    break
            if name in verdicts:
                break
        verdicts.setdefault(name, f"computed from {', '.join(parts)}; equal to the shipped {name} on {checked} pages")
    return verdicts


def available(extractor: str) -> bool:
    """Its library is installed, and (ours) the package still ships it (rs-trafilatura: in the child's Python)."""
    if extractor == RS:
        return _RS_EXTRACTOR.python is not None
    return _version(EXTRACTORS[extractor][2]) != "absent"


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
                     "quick": quick, "default_extractor": DEFAULT, "default_pipeline": f"{DEFAULT}+filter",
                     "labels": {v: label(v) for v in [*extractors, *derived, *pipelines]},
                     "sets": {}, "pages_per_second": {}}
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
        # (WCXB's types in their order, then the others by name: the same JSON from run to run)
        groups = sorted({page["group"] for page in pages}, key=lambda g: ((WCXB_TYPES + (g,)).index(g), g))
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
        if set_name == "wcxb":  # pages that WCXB's rule scores 1.0 for a kind of snippet they lack
            results["sets"][set_name]["pages_without_snippets"] = {
                h: {kind: sum(p["half"] == h and not p[kind] for p in pages) for kind in ("with", "without")}
                for h in HALVES}
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
    from plexity_plugins.scoring import methods

    print(f"model {results['model']}; methods {results['methods']}; thresholds "
          f"{ {k: round(v) for k, v in results['thresholds'].items()} }; trim relative {methods.TRIM_RELATIVE}"
          + ("; QUICK (1 WCXB page in 5)" if results["quick"] else ""))
    if results["missing_extractors"]:
        print(f"not installed, skipped: {', '.join(results['missing_extractors'])}")
    rates = results["pages_per_second"]
    if rates:
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
                print(f"{label(variant)[:26]:26}{line}{rates.get(variant, 0):9.1f}")
        for name, cells in data.get("oracles", {}).items():
            print(f"ceiling, {name}: " + ", ".join(f"{half} {value:.3f}" for half, value in cells.items()))


def ordered(variants) -> list[str]:
    """Table order: our default pipeline, the other pipelines, the other tools alone, ours alone."""
    rank: dict[str, int] = {}
    for name in [*PIPELINES, "trafilatura", RS, "datatrove", "justext", "resiliparse", *DERIVED, *OURS]:
        rank.setdefault(name, len(rank))
    return sorted(variants, key=lambda v: rank.get(v, len(rank)))


def _f1pr(c: dict) -> str:
    return f"{c['f1']:.3f} / {c['precision']:.3f} / {c['recall']:.3f}"


def _rate(rates: dict, variant: str) -> str:
    return f"{rates[variant]:.1f}" if variant in rates else "—"


def render_markdown(results: dict) -> dict[str, str]:
    """The tables, from the JSON figures alone: ``quality`` (every set and half, F1 / P / R or CleanEval
    similarity, pages/s), ``quality-snippets`` (WCXB's snippet rates per half), ``quality-wcxb-types``
    (WCXB word F1 per page type), each headed by the line saying what made it."""
    head = figures.header_line(results["provenance"])
    sets, rates = results["sets"], results["pages_per_second"]
    if rates.get("clock") == "cpu":
        speed = (f"pages/s: HTML to text (and filter) per second of CPU time of one core, in process, timed in this "
                 f"run on the same {rates['sample_pages']} pages spread over the sets, variants alternating (CPU "
                 f"time, which other jobs on a shared machine do not inflate; load average "
                 f"{rates['loadavg']['before'][0]} before, {rates['loadavg']['after'][0]} after; wall-time rates "
                 f"in the JSON).")
    elif not rates:
        speed = "pages/s: not timed in this run (only the left-out forests, read by the shipped reader's code)."
    else:
        speed = (f"pages/s: HTML to text (and filter), one core, in process, timed in this run on the same "
                 f"{rates['sample_pages']} pages spread over the sets, variants alternating.")
    quick = " QUICK RUN (one WCXB page in five)." if results.get("quick") else ""
    out = {}
    variants = ordered(next(iter(sets.values()))["variants"]) if sets else []

    heads, cells = ["variant"], {v: [label(v)] for v in variants}
    for set_name, data in sets.items():
        group = "english" if set_name == "articles" else "all"
        for half in HALVES:
            unit = "similarity %" if set_name == "cleaneval" else "F1 / P / R"
            n = data["variants"][variants[0]][half][group]["pages"]
            name = {"articles": "articles (English)", "wcxb": "WCXB", "cleaneval": "CleanEval",
                    "traf": "trafilatura's set"}[set_name]
            heads.append(f"{name} {half} ({n}), {unit}")
            for v in variants:
                c = data["variants"][v][half][group]
                cells[v].append(f"{c['similarity']:.1f}" if "similarity" in c else _f1pr(c))
    heads.append("pages/s")
    for v in variants:
        cells[v].append(_rate(rates, v))
    notes = [speed]
    if "datatrove" in variants:
        notes.append("datatrove's Trafilatura step: datatrove's `Trafilatura()` with its defaults (favour_precision; "
                     "deduplicate, which drops a paragraph seen more than twice on earlier pages of the process), "
                     "called in process on each set's pages in order, without its 1 s timeout.")
    out["quality"] = "\n\n".join([head + quick, figures.table(heads, [cells[v] for v in variants]), *notes])

    if "traf" in sets:
        data = sets["traf"]
        rows = [[label(v), *(" / ".join(f"{data['variants'][v][h][g]['f1']:.3f}" if g in data["variants"][v][h] else "—"
                                         for h in HALVES) for g in ("all", "en", "de"))] for v in variants]
        counts = {g: " / ".join(str(data["variants"][variants[0]][h].get(g, {}).get("pages", 0)) for h in HALVES)
                  for g in ("all", "en", "de")}
        heads = ["variant", *(f"{g} ({counts[g]})" for g in ("all", "en", "de"))]
        note = ("trafilatura's evaluation set (traf-eval-dev): snippet F1 by its own rule (a `with` snippet found "
                "is a true positive, a `without` snippet found a false positive, over all pages together), by the "
                "page's language, dev / held half (pages per half in the heading).")
        out["quality-traf-languages"] = "\n\n".join([head + quick, figures.table(heads, rows), note])

    if "wcxb" in sets:
        data = sets["wcxb"]
        rows = []
        for v in variants:
            row = data["variants"][v]
            rows.append([label(v), *(f"{row[h]['all']['with_kept']:.1f}" for h in HALVES),
                         *(f"{row[h]['all']['without_leaked']:.1f}" for h in HALVES), _rate(rates, v)])
        n = {h: data["variants"][variants[0]][h]["all"]["pages"] for h in HALVES}
        heads = ["variant", *(f"`with` kept %, {h} ({n[h]})" for h in HALVES),
                 *(f"`without` leaked %, {h} ({n[h]})" for h in HALVES), "pages/s"]
        empty = data.get("pages_without_snippets")
        empty = (" (" + "; ".join(f"{h}: {empty[h]['with']} pages without `with` snippets, {empty[h]['without']} "
                                  f"without `without` snippets" for h in HALVES) + ")") if empty else ""
        note = ("WCXB's snippet checks, by its own rule (`snippet_check` in its evaluate.py: a snippet counts when "
                "it occurs, case-insensitively, in the output), averaged per page as its evaluate.py does, where a "
                f"page without snippets of a kind scores 1.0{empty}: `with` are content snippets (higher is "
                "better), `without` boilerplate snippets (lower is better).")
        out["quality-snippets"] = "\n\n".join([head + quick, figures.table(heads, rows), note, speed])

        groups = [g for g in data["groups"]]
        rows = []
        for v in variants:
            row = data["variants"][v]
            rows.append([label(v), *(" / ".join(f"{row[h][g]['f1']:.3f}" if g in row[h] else "—" for h in HALVES)
                                     for g in ["all", *groups])])
        counts = {g: " / ".join(str(data["variants"][variants[0]][h].get(g, {}).get("pages", 0)) for h in HALVES)
                  for g in ["all", *groups]}
        heads = ["variant", *(f"{g} ({counts[g]})" for g in ["all", *groups])]
        note = "WCXB word F1 per page type, dev / held half (pages per half in the heading)."
        out["quality-wcxb-types"] = "\n\n".join([head + quick, figures.table(heads, rows), note])
    compared = render_compared(results)
    if compared:
        out["quality-compared"] = "\n\n".join([head + quick, compared])
    alone = [(v, rates.get(v)) for v in ("learned", "fast", "dense", "auto", "trafilatura")]
    if rates.get("clock") == "cpu" and all(r for _, r in alone):
        # docs/extraction.md's line on what each extractor costs
        out["quality-cost"] = ("Cost: pages per CPU second of one core, each extractor alone, in process, in "
                               "`bench/quality.py`'s last run ([figures](quality.md)): " +
                               ", ".join(f"`{v}` {r:.0f}" if r >= 100 else f"`{v}` {r:.1f}" for v, r in alone) +
                               f" (load average {rates['loadavg']['before'][0]} before the run).")
    return out


# docs/extraction.md's table: our readers and trafilatura, with the filter, dev / held, from the same run
COMPARED = (("learned-left-out+filter", "`learned` (set left out of training)"), ("dense+filter", "`dense`"),
            ("auto+filter", "`auto`"), ("trafilatura", "trafilatura alone"))
# (a column only where the run measured it: rs-trafilatura needs --rs-python)
COMPARED_IF_MEASURED = ((RS, "rs-trafilatura (trafipy)"),)


def render_compared(results: dict) -> str | None:
    """docs/extraction.md's comparison of the readers (each with the filter; `learned` by the forests trained
    without the set) and trafilatura, then their speed in this run; None where the run lacks a set or a variant."""
    sets, rates = results["sets"], results["pages_per_second"]
    if set(sets) != set(SET_DIRS) or any(v not in data["variants"] for v, _ in COMPARED for data in sets.values()):
        return None
    columns = COMPARED + tuple(c for c in COMPARED_IF_MEASURED if all(c[0] in d["variants"] for d in sets.values()))

    def pair(set_name, group, key, fmt):
        return {v: " / ".join(fmt.format(sets[set_name]["variants"][v][h][group][key]) for h in HALVES)
                for v, _ in columns}

    rows = [("WCXB word F1", pair("wcxb", "all", "f1", "{:.3f}")),
            ("WCXB article pages", pair("wcxb", "article", "f1", "{:.3f}")),
            ("English news articles F1", pair("articles", "english", "f1", "{:.3f}")),
            ("CleanEval similarity %", pair("cleaneval", "all", "similarity", "{:.1f}")),
            ("trafilatura's set snippet F1", pair("traf", "all", "f1", "{:.3f}")),
            ("WCXB boilerplate snippets leaked (`without`) %", pair("wcxb", "all", "without_leaked", "{:.1f}")),
            ("WCXB content snippets kept (`with`) %", pair("wcxb", "all", "with_kept", "{:.1f}"))]
    if rates.get("clock") == "cpu":
        # (the left-out forests are not timed: the shipped forest is the same reader at the same size)
        timed = {v: rates.get("learned+filter" if v == "learned-left-out+filter" else v) for v, _ in columns}
        rows.append(("pages per CPU second, in process (`learned`: the shipped forest)",
                     {v: f"{r:.0f}" if r and r >= 100 else f"{r:.1f}" if r else "—" for v, r in timed.items()}))
    return figures.table(["", *(name for _, name in columns)],
                         [[name, *(cells[v] for v, _ in columns)] for name, cells in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=DEFAULT_BENCH,
                        help="the folder holding articles-dev, wcxb-dev, cleaneval-dev and traf-eval-dev")
    parser.add_argument("--sets", default=",".join(SET_DIRS))
    parser.add_argument("--quick", action="store_true", help="one WCXB page in five")
    parser.add_argument("--model", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/quality-cache"))
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON figures here")
    parser.add_argument("--markdown", action="store_true", help="also print the Markdown tables")
    parser.add_argument("--figures", type=Path, default=None,
                        help="write quality.md, quality-snippets.md, quality-wcxb-types.md and quality.json here "
                             "(default: docs/figures/ on a full run, that is without --quick, --sets, --variants, "
                             "--model, --threshold, --trim-relative; nowhere otherwise)")
    parser.add_argument("--variants", default=None,
                        help="comma-separated extractors, combinations and pipelines to measure (default: all), "
                             f"from {', '.join([*EXTRACTORS, *DERIVED, *PIPELINES])}")
    parser.add_argument("--rs-python", default=None, metavar="PYTHON",
                        help=f"measure {RS} too (an anchor): a Python >= 3.12 where `pip install trafipy` worked, "
                             "which runs it in a child process")
    parser.add_argument("--oracle", action="store_true",
                        help="also print the ceilings of picking the best extractor page by page (ORACLES)")
    parser.add_argument("--trim-relative", type=float, default=None,
                        help="override methods.TRIM_RELATIVE (0: the global threshold alone, the rule before it)")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SET_DIRS]
    if unknown:
        parser.error(f"unknown set(s) {unknown}: choose from {', '.join(SET_DIRS)}")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else None
    unknown = [v for v in variants or [] if v not in {*EXTRACTORS, *DERIVED, *PIPELINES}]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}: choose from {', '.join([*EXTRACTORS, *DERIVED, *PIPELINES])}")
    require_bench(args.bench, sets)
    _RS_EXTRACTOR.python = args.rs_python
    if args.trim_relative is not None:
        from plexity_plugins.scoring import methods

        methods.TRIM_RELATIVE = args.trim_relative
    provenance = figures.provenance("bench/quality.py")  # before the run: the code it ran
    derived = check_derived(args.bench, sets)
    results = run(args.bench, sets, args.quick, args.model, args.threshold, args.cache, variants, args.oracle)
    results["provenance"] = provenance
    results["derived"] = derived
    if args.trim_relative is not None:
        results["trim_relative"] = args.trim_relative
    print_tables(results)
    tables = render_markdown(results)
    if args.markdown:
        print("\n\n".join(tables.values()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    full_run = not (args.quick or args.variants or args.model or args.threshold is not None
                    or args.trim_relative is not None or args.oracle) and sets == list(SET_DIRS)
    folder = args.figures or (figures.FIGURES if full_run else None)
    figures.publish(tables, results, "quality", folder)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
