"""The filter's edge rule (`trim`) after a main-content extractor, and variants of it, in seconds.

    .venv/bin/python bench/trim_variants.py [--extractors trafilatura,auto,fast] [--bench DIR]

What `bench/quality.py` measures for ``trafilatura+filter`` (and ``auto+filter``, ``fast+filter``),
on the same pages, halves and scorers, but for several edge rules at once and from the extractor
outputs that ``bench/quality.py`` cached in ``--cache`` (run it once first; a missing output is
extracted and cached here the same way).  Every figure is the set's own metric to four decimals;
``worst type`` is the WCXB page type with the largest loss against the extractor alone; the last
columns count the WCXB pages a rule changes and add up the page F1 that those that gain win and
those that lose give up (their sum over the pages of a half is its change of WCXB F1).

The variants (all on `trim`'s blocks, pooled perplexities and threshold, `threshold_extracted`):

- ``alone``: the extractor's text, nothing removed;
- ``trim``: the shipped rule (`methods.keep_trim_python`, the reference of the compiled one);
- ``trim, prose pages only``: trimmed only where the page's median token lies in a block at or
  below the model's sentence threshold (`ModelInfo.threshold`: the page is prose to the model);
  elsewhere (grids, listings, specs) nothing is removed;
- ``trim, edge runs of at most N blocks``: a leading or trailing run of more than N junk blocks
  (a list the extractor kept: specs, FAQ questions, categories) is kept whole;
- ``trim, a text with no fluent block dropped``: a text without any block at or below the model's
  sentence threshold is all boilerplate (menus, "enable JavaScript") and goes whole.

The last line printed is one JSON object with all figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import quality  # noqa: E402

from plexity_plugins import PerplexityScorer  # noqa: E402
from plexity_plugins.scoring import methods  # noqa: E402
from plexity_plugins.scoring.scorer import _join_kept, sanitize  # noqa: E402
from plexity_plugins.text.sentences import split_with_blocks  # noqa: E402


def prose_only(sentence_threshold: float):
    def keep(ids, logprobs, tokens, threshold):
        ppl, count = methods._blocks(ids, logprobs, tokens)
        if methods.median_token_perplexity(ppl, count) > sentence_threshold:
            return [True] * len(ids)
        return methods.keep_trim_python(ids, logprobs, tokens, threshold)
    return keep


def edge_runs_at_most(n: int):
    def keep(ids, logprobs, tokens, threshold):
        flags = methods.keep_trim_python(ids, logprobs, tokens, threshold)
        kept_blocks = [b for b, k in zip(ids, flags) if k]  # (ids ascend: first and last are the ends)
        if not kept_blocks:
            return [True] * len(ids) if ids[-1] + 1 > n else flags
        first, last, n_blocks = kept_blocks[0], kept_blocks[-1], ids[-1] + 1
        first = 0 if first > n else first
        last = n_blocks - 1 if n_blocks - 1 - last > n else last
        return [first <= b <= last for b in ids]
    return keep


def no_fluent_block_dropped(sentence_threshold: float):
    def keep(ids, logprobs, tokens, threshold):
        ppl, _ = methods._blocks(ids, logprobs, tokens)
        if min(ppl) > sentence_threshold:
            return [False] * len(ids)
        return methods.keep_trim_python(ids, logprobs, tokens, threshold)
    return keep


def variants(sentence_threshold: float) -> dict:
    return {"alone": None,
            "trim": methods.keep_trim_python,
            "trim, prose pages only": prose_only(sentence_threshold),
            "trim, edge runs of at most 1 block": edge_runs_at_most(1),
            "trim, edge runs of at most 2 blocks": edge_runs_at_most(2),
            "trim, edge runs of at most 3 blocks": edge_runs_at_most(3),
            "trim, a text with no fluent block dropped": no_fluent_block_dropped(sentence_threshold)}


def outputs(scorer: PerplexityScorer, texts: list[str], rules: dict) -> dict[str, list[tuple[str, bool]]]:
    """Each rule's (output, whether it removed anything) for each text, as
    `PerplexityScorer.clean` makes it (other languages passed through, kept sentences joined
    verbatim)."""
    limit = scorer.threshold
    result = {name: [] for name in rules}
    for text in texts:
        clean, _ = sanitize(text)
        spans, blocks = split_with_blocks(clean, scorer.max_sentence_chars)
        if not spans or scorer._other_language(clean, None) is not None:
            for name in rules:
                result[name].append((text if rules[name] is None else clean, False))
            continue
        logprobs, counts = scorer._logprobs(clean, spans)
        for name, rule in rules.items():
            if rule is None:
                result[name].append((text, False))
                continue
            keep = rule(blocks, logprobs, counts, limit)
            result[name].append((_join_kept(clean, spans, keep), not all(keep)))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=quality.DEFAULT_BENCH)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/quality-cache"))
    parser.add_argument("--extractors", default="trafilatura,auto,fast")
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    absent = [str(args.bench / d) for d in quality.SET_DIRS.values() if not (args.bench / d).is_dir()]
    if absent:
        print(f"bench/trim_variants.py: benchmark data not found: {', '.join(absent)} (see bench/quality.py)",
              file=sys.stderr)
        return 2
    scorer = PerplexityScorer(args.model, method="trim")
    # the model's sentence threshold (what ordinary text scores at most); a model without one: the trim threshold
    rules = variants(scorer.info.threshold or scorer.threshold)
    scorers = quality.Scorers(args.bench, list(quality.SET_DIRS))
    figures: dict = {"model": scorer.model_name, "threshold_extracted": scorer.threshold,
                     "sentence_threshold": scorer.info.threshold, "extractors": {}}
    for extractor in [e.strip() for e in args.extractors.split(",") if e.strip()]:
        print(f"\n== {extractor} (figures: dev / held; articles: English pages)")
        print(f"{'variant':44}{'articles':>18}{'WCXB':>18}{'worst WCXB type':>34}{'CleanEval':>18}"
              "   WCXB pages changed, page F1 gained and lost")
        table = figures["extractors"][extractor] = {}
        for set_name in quality.SET_DIRS:
            pages = quality.LOADERS[set_name](args.bench / quality.SET_DIRS[set_name])
            if extractor in quality.DERIVED:
                parts, combine = quality.DERIVED[extractor]
                texts = [quality.extract_all(set_name, pages, part, args.cache)[0] for part in parts]
                extracted = [combine(quality.page_html(page), *(t[page["key"]] for t in texts)) for page in pages]
            else:
                cached, _ = quality.extract_all(set_name, pages, extractor, args.cache)
                extracted = [cached[page["key"]] for page in pages]
            # each WCXB page's F1 with the extractor alone, once, for the page-by-page comparison
            alone_f1 = ({page["key"]: scorers.wcxb.word_f1(text, page["truth"])[2] for page, text in zip(pages, extracted)}
                        if set_name == "wcxb" else {})
            for name, results in outputs(scorer, extracted, rules).items():
                cell = table.setdefault(name, {}).setdefault(set_name, {})
                for half in quality.HALVES:
                    chosen = [(p, t, changed) for p, (t, changed) in zip(pages, results)
                              if p["half"] == half and (set_name != "articles" or p["group"] == "english")]
                    score = scorers(set_name, [(p, t) for p, t, _ in chosen])
                    cell[half] = score.get("f1", score.get("similarity"))
                    if set_name == "wcxb":
                        cell[f"{half} types"] = {g: scorers(set_name, [(p, t) for p, t, _ in chosen if p["group"] == g])["f1"]
                                                 for g in quality.WCXB_TYPES}
                        # page by page against the extractor alone: how many pages it changes, and
                        # the page F1 those that gain add and those that lose take away
                        deltas = [scorers.wcxb.word_f1(t, p["truth"])[2] - alone_f1[p["key"]]
                                  for p, t, changed in chosen if changed]
                        cell[f"{half} pages"] = {"changed": len(deltas), "gains": sum(d for d in deltas if d > 0),
                                                 "losses": sum(d for d in deltas if d < 0)}
        alone = table["alone"]
        for name, cells in table.items():
            worst = []
            for half in quality.HALVES:
                losses = {g: cells["wcxb"][f"{half} types"][g] - alone["wcxb"][f"{half} types"][g]
                          for g in quality.WCXB_TYPES}
                g = min(losses, key=losses.get)
                worst.append(f"{g[:6]} {losses[g]:+.4f}")
            cells["worst_wcxb_type"] = worst
            pages = " / ".join(f"{c['changed']} pages {c['gains']:+.2f} {c['losses']:+.2f}"
                               for c in (cells["wcxb"][f"{half} pages"] for half in quality.HALVES))
            print(f"{name:44}" + "".join(f"{cells[s]['dev']:>11.4f}/{cells[s]['held']:.4f}" for s in ("articles", "wcxb"))
                  + f"{' / '.join(worst):>34}" + f"{cells['cleaneval']['dev']:>12.2f}/{cells['cleaneval']['held']:.2f}"
                  + f"   {pages}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
