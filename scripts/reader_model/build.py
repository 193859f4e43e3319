"""Build the learned reader's forest (plexity_plugins/extractors/learned/forest.json and card.json)
from the four development benchmarks, and say how well it does on each when that one is left out.

    .venv/bin/python scripts/reader_model/build.py [--bench DIR] [--cache DIR] [--out DIR]
                                                    [--left-out DIR] [--figures DIR] [--no-write]
                                                    [--seeds 8,9] [--perplexity] [--param NAME=VALUE ...]
                                                    [--source-power P] [--halves]

1. reads every page of ``articles-dev``, ``cleaneval-dev``, ``traf-eval-dev`` and ``wcxb-dev``
   (in place, from ``shared/bench`` beside the checkout or above it), cuts each into blocks and
   computes their features exactly as the extractor does, and labels them from the page's gold
   text or snippets (`plexity_plugins.extractors.learned.training`); cached in --cache;
2. **leaves each source out in turn**: trains a reader on the other three and reads the left-out
   pages with it, scored with the source's own metric, the extractor alone and followed by the
   perplexity filter as the default pipeline runs it.  A reader is a block model (a LightGBM
   forest, a logistic regression and a small network beside it: `training.fit_blocks`) and what decides after it
   (`PARTS`): a page threshold forest (`page_threshold.py`) and a second look
   (`second_look.py`); the one that never saw source h learns both from each other source s as
   read by a block model trained without s and h (10 block models in all).  The shipped
   reader's parts are `SHIPPED`; each left-out source is also read with each set of parts of
   `COMPARED`, and with its block forest alone at each threshold of `training.THRESHOLDS`, one for
   every page.  Writes each shipped left-out reader to --left-out (default
   /tmp/plexity-reader-left-out) for bench/quality.py (not with --no-write);
3. trains on WCXB's other half and the other three sources, scores each half of WCXB (pages split
   by site as bench/quality.py splits them), the parts after the forest learned from the pages of
   2 but the half scored;
4. trains the left-out readers again with other LightGBM seeds (``--seeds``, default 8 and 9) and
   reports their left-out scores (shipped and `COMPARED`) beside the shipped seed's: how much of a
   figure is the seed's draw;
5. trains the block forest on all four, its `SHIPPED` parts on every page as read in 2, and writes
   them to forest.json, with card.json (sources, pages, blocks, features, settings, versions, and
   the scores of 2, 3 and 4), and the left-out tables to --figures/reader-left-out.md
   (docs/figures by default).

``--perplexity`` is the ablation of docs/quality.md: the same, with each English page's blocks
scored by the embedded KenLM model (two more features), scores printed and written to
--figures/reader-perplexity.md beside the shipped card's, no forest written (neither the shipped
one nor the left-out ones bench/quality.py reads).

``--param NAME=VALUE`` (repeatable) is an experiment with LightGBM's settings: every forest of
steps 2 to 5 trained with `training.PARAMS` so changed, its scores printed beside the same seed
spread, nothing written (as ``--perplexity``).  A setting is worth shipping only when the mean of
the left-out scores rises at every seed and no source falls by more than 0.005.

``--source-power P`` is an experiment with the sources' weights: each page weighs n ** (P - 1), n
its source's pages (the shipped reader's P is 1, every page alike: WCXB's 1,497 pages outweigh the
other three sources' 647; at 0 each source weighs the same), printed and written as ``--param``.

``--halves`` reads every source's halves as 3 reads WCXB's (the reader trained on the source's
other half and the other three sources: the pages unseen, their source not, as the shipped reader
meets a benchmark's test split), printed after the left-out scores of 2; nothing written.

Deterministic: LightGBM seeded, one thread, and the network's training on one BLAS thread (set here); the same
pages and package give the same forest on the same machine (numpy's BLAS picks its kernels by processor, and the
network's float32 sums follow them).
Needs ``pip install lightgbm`` (the package itself predicts without it).
"""

from __future__ import annotations

import os

# The network's training multiplies matrices with numpy's BLAS, whose sums depend on its number of threads:
# one thread, set before numpy loads it, so that the same pages give the same forest (on the same BLAS kernels).
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import quality  # noqa: E402  (the benchmarks' loaders and metrics)

from plexity_plugins.extractors import learned  # noqa: E402
from plexity_plugins.extractors.learned import forest as forest_module, training  # noqa: E402
from plexity_plugins.extractors.learned import page_threshold, reading, second_look  # noqa: E402
from plexity_plugins.extractors.learned.features import FEATURES  # noqa: E402
from plexity_plugins.text.language import identify  # noqa: E402
from plexity_plugins.scoring.methods import method_for_extractor  # noqa: E402
from plexity_plugins.scoring.scorer import PerplexityScorer  # noqa: E402

SOURCES = ("articles", "cleaneval", "traf", "wcxb")
# What decides after the block forest (each trained on pages read by block forests that never saw
# their source): the page threshold (page_threshold.py) and the second look (second_look.py).
PARTS = ("page_threshold", "second_look")
# The shipped reader's: both, the page threshold and the second look at the blocks under it.  Left
# out, both read better than the second look alone at each of LightGBM's seeds 7, 8 and 9 (the mean
# of the four sources +0.0008, +0.0005, +0.0001; trafilatura's set and WCXB up at each, no source
# down more than 0.0012), and the second look better than the page threshold alone (docs/quality.md;
# the build prints all three: `COMPARED`).
SHIPPED = ("page_threshold", "second_look")
COMPARED = {"page threshold": ("page_threshold",), "second look": ("second_look",),
            "both": ("page_threshold", "second_look")}


def _code_hash() -> str:
    """A hash of the code that reads pages into blocks and features: the learned reader's package, the word
    counts it shares (`extractors/text.py`) and its compiled port."""
    folder = REPO / "plexity_plugins" / "extractors" / "learned"
    files = [*sorted(folder.glob("*.py")), folder.parent / "text.py", REPO / "native" / "learned_reader.cpp"]
    parts = [p.read_bytes() for p in files]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:12]


def block_logprobs(texts: list[str], scorer: PerplexityScorer) -> list[float] | None:
    """Each block's log10 probability a token under the embedded English model (NaN under three
    tokens), for a page identified as English; None for a page in another language."""
    if identify(" ".join(texts[:400])[:20000])[0] != "en":
        return None
    spans, at = [], 0
    for text in texts:
        spans.append((at, at + len(text)))
        at += len(text) + 1
    logprobs, counts = scorer._logprobs("\n".join(texts), spans)
    return [lp / (n + 1) if n >= 3 else float("nan") for lp, n in zip(logprobs, counts)]


def examples_of(source: str, pages: list[dict], cache: Path, scorer: PerplexityScorer | None = None
                ) -> list[training.Example]:
    """Every page of `source` as a training example (features and labels), cached; with `scorer`,
    its English pages' blocks carry their perplexity features."""
    path = cache / f"{source}-{_code_hash()}{'-perplexity' if scorer else ''}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    print(f"  reading {len(pages)} {source} pages ...", file=sys.stderr, flush=True)
    examples = []
    for page in pages:
        html = quality.page_html(page)
        texts, rows, read = learned.read_page(html)
        if scorer is not None and texts:
            logprobs = block_logprobs(texts, scorer)
            if logprobs is not None:
                texts, rows, _ = learned.read_page(html, logprobs)
        rows = reading.rows_as_lists(rows)
        labels = training.label_blocks(texts, gold=quality.gold_text(source, page), with_=page.get("with", ()),
                                       without=page.get("without", ())) if texts else []
        words = [int(round(2.718281828459045 ** row[0] - 1)) for row in rows]  # (FEATURES[0] is log1p(words))
        examples.append(training.Example(rows=rows, labels=labels, words=words, texts=texts,
                                         declared=list(read.declared), ends=reading.section_ends(read)))
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(examples))
    return examples


def probabilities_of(forest, examples: list[training.Example]) -> list[list[float]]:
    # (the reference forest: rows as lists)
    return [forest.probabilities(e.rows) if e.texts else [] for e in examples]


def read_at(example: training.Example, probabilities: list[float], threshold: float,
            added: list[bool] | None = None) -> str:
    """The page's text as the extractor reads it, with these block probabilities and threshold (and
    the blocks a second look `added`), or the text it declares where that reads too little."""
    text = ""
    if example.texts:
        keep = example.choose(probabilities, threshold, added)
        text = "\n".join(t for t, k in zip(example.texts, keep) if k)
    return learned.or_declared(text, example.declared)


def texts_at(examples: list[training.Example], probabilities, threshold: float) -> list[str]:
    return [read_at(e, pr, threshold) for e, pr in zip(examples, probabilities)]


def texts_by_page(examples: list[training.Example], probabilities, reader: dict, parts=None) -> list[str]:
    """The pages' texts as the extractor reads them with `reader` (a reader's JSON: its block
    forest gave `probabilities`; its page threshold and second look decide), or with only the
    `parts` of it named (of `PARTS`)."""
    if parts is not None:
        reader = {key: value for key, value in reader.items() if key not in PARTS or key in parts}
    decide = reading.Forest(reader).decision
    return [read_at(e, pr, *decide(e.rows, pr, e.words)) for e, pr in zip(examples, probabilities)]


def sweep(source: str, pages: list[dict], examples: list[training.Example], probabilities, scorers) -> dict:
    """The source's score (extractor alone) at each of `training.THRESHOLDS`."""
    return {t: quality.figures_of(source, scorers, list(zip(pages, texts_at(examples, probabilities, t))))["score"]
            for t in training.THRESHOLDS}


def evaluate(source: str, pages: list[dict], texts: list[str], scorers, filtered) -> dict:
    """The source's own figures, the extractor alone and + the default pipeline's filter."""
    alone = quality.figures_of(source, scorers, list(zip(pages, texts)))
    piped = quality.figures_of(source, scorers, list(zip(pages, [filtered.clean(t).text for t in texts])))
    return {"alone": alone, "filter": piped}


def weigh_sources(examples: dict[str, list[training.Example]], power: float) -> None:
    """Give each page the weight c * n ** (power - 1), n its source's pages: with power 1 (the
    shipped reader's) every page counts alike, with 0 every source alike; c keeps the mean 1."""
    sizes = {s: len(e) for s, e in examples.items()}
    c = sum(sizes.values()) / sum(n ** power for n in sizes.values())
    for s, pages in examples.items():
        for example in pages:
            example.weight = c * sizes[s] ** (power - 1)


def lightgbm_setting(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` of ``--param``: the value as JSON (numbers, true, false), else as a string."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=quality.DEFAULT_BENCH)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/plexity-reader-cache"))
    parser.add_argument("--out", type=Path, default=learned.FOREST_PATH.parent)
    parser.add_argument("--left-out", type=Path, default=Path("/tmp/plexity-reader-left-out"))
    parser.add_argument("--no-write", action="store_true", help="score only; leave the shipped forest as it is")
    parser.add_argument("--figures", type=Path, default=REPO / "docs" / "figures",
                        help="where the tables go (reader-left-out.md; with --perplexity reader-perplexity.md)")
    parser.add_argument("--seeds", default="8,9", type=lambda v: [int(x) for x in v.split(",") if x],
                        help="train the left-out forests again with these LightGBM seeds and report their scores: "
                             "how much of a figure is the seed's draw (default 8,9; '' for none)")
    parser.add_argument("--perplexity", action="store_true",
                        help="the ablation: give English pages' blocks their perplexity under the embedded model "
                             "as two more features (implies --no-write: the shipped reader computes none)")
    parser.add_argument("--param", action="append", default=[], type=lightgbm_setting, metavar="NAME=VALUE",
                        help="an experiment: every forest trained with this LightGBM setting changed (repeatable; "
                             "the value read as JSON, else as a string; implies --no-write and leaves the left-out "
                             "forests bench/quality.py reads as they are)")
    parser.add_argument("--source-power", type=float, default=1.0, metavar="P",
                        help="an experiment: each page weighs n ** (P - 1), n its source's pages (1, the shipped "
                             "reader's: pages alike; 0: sources alike; implies --no-write as --param does)")
    parser.add_argument("--halves", action="store_true",
                        help="every source's halves read as WCXB's are (by a reader trained on the source's other "
                             "half and the other sources: the pages unseen, their source not, as the shipped reader "
                             "meets a benchmark's test split), printed; implies --no-write")
    args = parser.parse_args()
    quality.require_bench(args.bench, SOURCES)
    settings = dict(args.param)
    started = time.time()
    pages = {s: quality.LOADERS[s](args.bench / quality.SET_DIRS[s]) for s in SOURCES}
    # (an experiment's forests are not the reader's: bench/quality.py must not read them)
    experiment = args.perplexity or bool(settings) or args.source_power != 1.0 or args.halves
    if experiment:
        args.no_write = True
    if not args.no_write:  # (made now: a folder that does not exist failed the writing after the whole build)
        args.out.mkdir(parents=True, exist_ok=True)
        args.figures.mkdir(parents=True, exist_ok=True)
    examples = {s: examples_of(s, pages[s], args.cache, PerplexityScorer() if args.perplexity else None)
                for s in SOURCES}
    weigh_sources(examples, args.source_power)
    scorers = quality.Scorers(args.bench, list(SOURCES))
    filtered = PerplexityScorer(method=method_for_extractor("learned"))
    if not args.no_write:  # (an experiment's, or a --no-write run's, readers are not the shipped forest's)
        args.left_out.mkdir(parents=True, exist_ok=True)

    def fit(parts: list[training.Example], **more) -> dict:
        """The block model (forest, linear model and network, `training.fit_blocks`) of these pages."""
        return training.fit_blocks(parts, params={**settings, **more})

    # Forests trained without some sources (a set of them), kept: the page threshold of a reader
    # left without source h is trained on each other source s read by the forest without s and h.
    without_cache: dict = {}

    def spec_without(excluded: frozenset, seed: int | None = None) -> tuple[dict, dict]:
        """(the block forest trained without the `excluded` sources, its probabilities on each of them)"""
        key = (excluded, seed)
        if key not in without_cache:
            more = {} if seed is None else {"seed": seed}
            spec = fit([e for s in SOURCES if s not in excluded for e in examples[s]], **more)
            without_cache[key] = (spec, probabilities_by_source(forest_module.Forest(spec), excluded))
        return without_cache[key]

    def probabilities_by_source(forest, sources) -> dict:
        return {s: probabilities_of(forest, examples[s]) for s in sources}

    def deciders(pairs: list, seed: int | None = None) -> dict:
        """The parts of a reader after its block forest (`PARTS`), trained on (page, probabilities
        of a block forest that never saw the page's source) pairs."""
        more = {} if seed is None else {"seed": seed}
        return {"page_threshold": training.fit_page_threshold(pairs, params=more),
                "second_look": training.fit_second_look(pairs, params={**settings, **more})}

    def reader_without(held: str, seed: int | None = None) -> tuple[dict, list]:
        """The reader that never saw `held` (its block forest, page threshold and second look),
        and its block forest's probabilities on `held`'s pages."""
        spec, probs = spec_without(frozenset((held,)), seed)
        pairs = [pair for s in SOURCES if s != held
                 for pair in zip(examples[s], spec_without(frozenset((held, s)), seed)[1][s])]
        return dict(spec, **deciders(pairs, seed)), probs[held]

    def shipped(reader: dict) -> dict:
        return {key: value for key, value in reader.items() if key not in PARTS or key in SHIPPED}

    def compared(held: str, reader: dict, probs: list, shipped_texts: list[str] | None = None) -> dict:
        """`held`'s score (read alone) by `reader` with each set of parts of `COMPARED` (the
        shipped parts' texts given, where they have been read already)."""
        def texts(parts: tuple) -> list[str]:
            if shipped_texts is not None and set(parts) == set(SHIPPED):
                return shipped_texts
            return texts_by_page(examples[held], probs, reader, parts)
        return {name: quality.figures_of(held, scorers, list(zip(pages[held], texts(parts))))["score"]
                for name, parts in COMPARED.items()}

    # Each source read by the reader trained without it (and, to see how the figures move with the
    # threshold, by its forest at every threshold of the grid, one threshold for every page).
    probabilities, scores, left_out = {}, {}, {}
    shipped_seed = settings.get("seed", training.PARAMS["seed"])
    by_parts = {shipped_seed: {}}
    for held in SOURCES:
        reader, probabilities[held] = reader_without(held)
        spec = shipped(reader)
        if not args.no_write:
            (args.left_out / f"without-{held}.json").write_text(json.dumps(spec), encoding="utf-8")
        scores[held] = sweep(held, pages[held], examples[held], probabilities[held], scorers)
        texts = texts_by_page(examples[held], probabilities[held], spec)
        by_parts[shipped_seed][held] = compared(held, reader, probabilities[held], texts)
        left_out[held] = evaluate(held, pages[held], texts, scorers, filtered)
        print(f"{held} left out: {json.dumps(left_out[held])}; by threshold: {json.dumps(scores[held])}", flush=True)
    # What decides after the block forest, in the shipped reader and the halves' readers: learned
    # from the pages of every source as the forest that never saw that source reads them.
    unseen = {s: list(zip(examples[s], probabilities[s])) for s in SOURCES}

    def halves_of(source: str) -> dict:
        """`source`'s halves, each read by a reader trained on the other half and the other sources."""
        figures = {}
        for half in quality.HALVES:
            mine = [i for i, p in enumerate(pages[source]) if p["half"] == half]
            other = [e for p, e in zip(pages[source], examples[source]) if p["half"] != half]
            blocks = fit([e for s in SOURCES if s != source for e in examples[s]] + other)
            pairs = [pair for s in SOURCES if s != source for pair in unseen[s]]
            pairs += [pair for p, pair in zip(pages[source], unseen[source]) if p["half"] != half]
            read = [examples[source][i] for i in mine]
            reader = shipped(dict(blocks, **deciders(pairs)))
            texts = texts_by_page(read, probabilities_of(forest_module.Forest(reader), read), reader)
            figures[half] = evaluate(source, [pages[source][i] for i in mine], texts, scorers, filtered)
            print(f"{source} {half} half, trained on the other half and the other sources: "
                  f"{json.dumps(figures[half])}", flush=True)
        return figures

    if args.halves:
        print(json.dumps({"left_out": left_out, "halves": {s: halves_of(s) for s in SOURCES}}))
        return 0
    halves = halves_of("wcxb")
    if args.perplexity:
        write_ablation(args.figures, left_out)
        print(json.dumps({"left_out": left_out, "wcxb_halves": halves}))
        return 0
    # How much of a figure is the draw of LightGBM's seed (its bagging and feature sampling): the
    # left-out readers again with other seeds, each source read alone.
    seed_spread = {shipped_seed: {s: left_out[s]["alone"]["score"] for s in SOURCES}}
    print(f"left out, LightGBM seed {shipped_seed}, by the parts after the block forest: "
          f"{json.dumps(by_parts[shipped_seed])}", flush=True)
    for seed in args.seeds:
        seed_spread[seed], by_parts[seed] = {}, {}
        for held in SOURCES:
            reader, probs = reader_without(held, seed)
            by_parts[seed][held] = compared(held, reader, probs)
            seed_spread[seed][held] = by_parts[seed][held][_shipped_name()]
        print(f"left out, LightGBM seed {seed}: {json.dumps(seed_spread[seed])}; by the parts after the block "
              f"forest: {json.dumps(by_parts[seed])}", flush=True)
    blocks = fit([e for s in SOURCES for e in examples[s]])
    spec = shipped(dict(blocks,
                        **deciders([pair for s in SOURCES for pair in unseen[s]])))
    card = card_of(pages, examples, left_out, halves, blocks, time.time() - started, scores, seed_spread, by_parts)
    if not args.no_write:
        (args.out / "forest.json").write_text(json.dumps(spec, separators=(",", ":")), encoding="utf-8")
        (args.out / "card.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out / 'forest.json'} and card.json", file=sys.stderr)
        write_left_out(args.figures, card)
    print(json.dumps({"left_out": left_out, "wcxb_halves": halves}))
    return 0


HEADS = {"articles": "articles-dev (shingle F1; English)", "cleaneval": "cleaneval-dev (similarity)",
         "traf": "traf-eval-dev (snippet F1; English / German)", "wcxb": "wcxb-dev (word F1)"}


def _shipped_name() -> str:
    return next(name for name, parts in COMPARED.items() if tuple(parts) == tuple(SHIPPED))


def _cell(figures: dict) -> str:
    parts = [f"{figures['score']:.3f}"]
    if "english" in figures:
        parts.append(f"en {figures['english']:.3f}")
    if "german" in figures:
        parts.append(f"de {figures['german']:.3f}")
    return " · ".join(parts)


def _header(what: str) -> str:
    return (f"<!-- written by {what} on {time.strftime('%Y-%m-%d')}, code {_code_hash()}; "
            f"do not edit by hand -->\n")


def write_left_out(folder: Path, card: dict) -> None:
    """The card's left-out tables as Markdown (docs/figures/reader-left-out.md)."""
    lines = [_header("scripts/reader_model/build.py"),
             "| left-out source | learned alone | learned + filter |", "|---|---|---|"]
    for source in SOURCES:
        scores = card["left_out"][source]
        lines.append(f"| {HEADS[source]} | {_cell(scores['alone'])} | {_cell(scores['filter'])} |")
    lines.append(f"| mean of the four | | {card['left_out_mean_with_filter']:.4f} |")
    for half, scores in card["wcxb_halves_figures"].items():
        lines.append(f"| wcxb-dev {half} half, trained on the other half and the other sources | "
                     f"{_cell(scores['alone'])} | {_cell(scores['filter'])} |")
    by_threshold = card["left_out_by_threshold"]
    grid = list(training.THRESHOLDS)
    lines += ["", "Each source read alone by the block forest trained without it, with one threshold for every "
                  "page and nothing deciding after it (neither page threshold nor second look):", "",
              "| left-out source | " + " | ".join(str(t) for t in grid) + " |", "|---|" + "---|" * len(grid)]
    for source in SOURCES:
        lines.append(f"| {source} | " + " | ".join(f"{by_threshold[source][t]:.4f}" for t in grid) + " |")
    lines.append("| mean | " + " | ".join(f"{statistics.mean(by_threshold[s][t] for s in SOURCES):.4f}"
                                           for t in grid) + " |")
    spread = card["left_out_by_seed"]
    lines += ["", "The same left-out readers (the block forest and what decides after it) trained again with other LightGBM seeds "
                  "(its bagging and feature sampling), each source read alone: the spread is what a retraining "
                  "moves a figure by, whatever the change.", "",
              "| LightGBM seed | " + " | ".join(SOURCES) + " | mean |", "|---|" + "---|" * (len(SOURCES) + 1)]
    for seed, figures in spread.items():
        lines.append(f"| {seed} | " + " | ".join(f"{figures[s]:.4f}" for s in SOURCES) +
                     f" | {statistics.mean(figures[s] for s in SOURCES):.4f} |")
    parts = card["after_the_forest"]["left_out_by_seed"]
    lines += ["", "What decides after the block forest, each source read alone by the readers trained without it: "
                  "the page threshold (page_threshold.py), the second look (second_look.py, shipped: "
                  f"{', '.join(card['after_the_forest']['shipped'])}), or both; the mean of the four sources, and "
                  "each source's difference from the page threshold.", "",
              "| LightGBM seed | parts | mean | " + " | ".join(SOURCES) + " |", "|---|---|---|" + "---|" * len(SOURCES)]
    for seed, by_source in parts.items():
        for name in COMPARED:
            mean = statistics.mean(by_source[s][name] for s in SOURCES)
            moves = " | ".join(f"{by_source[s][name]:.4f}" if name == "page threshold" else
                               f"{by_source[s][name] - by_source[s]['page threshold']:+.4f}" for s in SOURCES)
            lines.append(f"| {seed} | {name} | {mean:.4f} | {moves} |")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader-left-out.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_ablation(folder: Path, with_perplexity: dict) -> None:
    """Left-out scores with and without the perplexity features (docs/figures/reader-perplexity.md),
    the latter from the shipped card (the same code and pages)."""
    card = json.loads(learned.CARD_PATH.read_text(encoding="utf-8"))
    lines = [_header("scripts/reader_model/build.py --perplexity"),
             "| left-out source (reader + filter) | without perplexity (shipped) | with perplexity | difference |",
             "|---|---|---|---|"]
    for source in SOURCES:
        without, with_ = card["left_out"][source]["filter"], with_perplexity[source]["filter"]
        lines.append(f"| {HEADS[source]} | {_cell(without)} | {_cell(with_)} | "
                     f"{with_['score'] - without['score']:+.4f} |")
    mean_with = statistics.mean(with_perplexity[s]["filter"]["score"] for s in SOURCES)
    lines.append(f"| mean | {card['left_out_mean_with_filter']:.4f} | {mean_with:.4f} | "
                 f"{mean_with - card['left_out_mean_with_filter']:+.4f} |")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader-perplexity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def card_of(pages, examples, left_out, halves, blocks, seconds, by_threshold, seed_spread, by_parts) -> dict:
    from importlib.metadata import version

    mean = statistics.mean(left_out[s]["filter"]["score"] for s in SOURCES)
    return {
        "name": "plexity-reader",
        "description": "Learned reader: which blocks of a page are its text (a LightGBM forest, a logistic "
                       "regression and a small network over block features).",
        "command": "python scripts/reader_model/build.py",
        "sources": {s: {"pages": len(pages[s]), "labelled_blocks": sum(sum(1 for l in e.labels if l in (0, 1))
                                                                        for e in examples[s])} for s in SOURCES},
        "labels": f"gold text: a block is text when {training.LABEL_SHARE:.0%} of its words align with the gold "
                  f"text; snippets: blocks holding a `with` snippet are text, a `without` snippet not",
        "features": list(FEATURES),
        "trees": len(blocks["trees"]),
        "linear": {"description": "a logistic regression over the same features beside the forest: the forest "
                                  f"{1 - training.LINEAR_SHARE:.0%} of a block's log-odds, the linear model "
                                  f"{training.LINEAR_SHARE - training.NETWORK_SHARE:.0%} (training.fit_linear, blend)",
                   "terms": len(blocks["linear"]["feature"]) + sum(map(len, blocks["linear"]["category_values"])),
                   "l2": training.LINEAR_L2, "log_from": training.LINEAR_LOG_FROM,
                   "categories": training.LINEAR_CATEGORIES},
        "network": {"description": "one hidden layer of ReLU units over the linear model's inputs, "
                                   f"{training.NETWORK_SHARE:.0%} of a block's log-odds, its own held within "
                                   f"+-{training.NETWORK_BOUND:g} (training.fit_network, blend)",
                    "units": len(blocks["network"]["bias"]), "inputs": len(blocks["network"]["weight"]),
                    "epochs": training.NETWORK_EPOCHS, "batch": training.NETWORK_BATCH,
                    "rate": training.NETWORK_RATE, "l2": training.NETWORK_L2, "share": training.NETWORK_SHARE,
                    "bound": training.NETWORK_BOUND, "seed": "LightGBM's (params.seed)"},
        "params": training.PARAMS,
        "threshold": training.THRESHOLD,
        "after_the_forest": {
            "shipped": list(SHIPPED), "compared": {name: list(parts) for name, parts in COMPARED.items()},
            "left_out_by_seed": by_parts,
            "trained_on": "every page of the four sources, read by the block forest trained without its source"},
        "second_look": {
            "description": "a second block forest over each block's probability beside its neighbours', the "
                           "spread of the page's probabilities and the block's features; a block under the "
                           "threshold is added where the mean of its two probabilities reaches add_at "
                           "(second_look.py)",
            "features": list(second_look.NEIGHBOUR_FEATURES), "trees": training.TREES, "params": training.PARAMS,
            "add_at": second_look.ADD_AT, "shipped": "second_look" in SHIPPED},
        "page_threshold": {
            "shipped": "page_threshold" in SHIPPED,
            "description": "a regression forest giving each page its threshold from the page's own features and "
                           "the spread of its blocks' probabilities (page_threshold.py)",
            "features": list(page_threshold.THRESHOLD_FEATURES), "trees": training.PAGE_TREES,
            "params": training.PAGE_PARAMS, "range": [page_threshold.LOWEST, page_threshold.HIGHEST],
            "labels": f"each page's threshold of {list(training.PAGE_THRESHOLDS)} with the best F1 of its labelled "
                      f"blocks' words (within {training.PAGE_TOLERANCE} of it: the nearest {training.THRESHOLD})"},
        "left_out_by_threshold": by_threshold,
        "left_out_scores": {s: {"alone": left_out[s]["alone"]["score"], "with_filter": left_out[s]["filter"]["score"]}
                            for s in SOURCES},
        "left_out_mean_with_filter": mean,
        "left_out": left_out,
        "wcxb_halves_figures": halves,
        "wcxb_halves": {h: halves[h]["filter"]["score"] for h in halves},
        "left_out_by_seed": seed_spread,
        "versions": {lib: version(lib) for lib in ("lightgbm", "numpy")},
        "python": sys.version.split()[0],
        "build_seconds": round(seconds),
    }


if __name__ == "__main__":
    sys.exit(main())
