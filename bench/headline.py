"""The headline table: our default pipeline against what users would pick instead, from the figures
the bench scripts wrote.

    .venv/bin/python bench/headline.py [--figures DIR]

Reads ``quality.json`` (bench/quality.py) and ``end_to_end.json`` (bench/end_to_end.py) in
docs/figures/ (or --figures DIR) and writes ``headline.md`` beside them: one table of quality
(WCXB word F1, CleanEval similarity, English articles' shingle F1, trafilatura's set's snippet F1,
WCXB boilerplate snippets leaked; dev / held halves) and speed (in process on one core, and end to end against datatrove's
own pipeline).  Nothing is measured here and nothing but the two files is read: the same JSON
gives the same table, byte for byte.  `render_headline()` returns the table; written to
docs/figures/headline.md and, for the default folder, between the README's headline markers.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import figures  # noqa: E402

# The tools a user would pick instead: (variant in quality.json, name in the table).  datatrove's
# pipeline is its WarcReader -> Trafilatura -> JsonlWriter: its extraction is its Trafilatura step.
OTHERS = (("datatrove", "datatrove's pipeline (`WarcReader → Trafilatura → JsonlWriter`)"),
          ("trafilatura", "trafilatura (`extract`, comments off)"), ("justext", "jusText"), ("resiliparse", "resiliparse (main content)"))
# Measured only where bench/quality.py was given --rs-python: a row where its figures are.
RS_ROW = ("rs-trafilatura", "rs-trafilatura (its binding trafipy, in a child process of Python ≥ 3.12)")
RS_NOTE = ("rs-trafilatura: its Python binding trafipy with its defaults and `include_comments=False`, given the "
           "HTML alone as every tool here is (its page classifier can also read the page's URL); trafipy's wheels "
           "need Python 3.12 or later, so bench/quality.py runs it in a child process of the interpreter "
           "`--rs-python` names, and its speed is that child's CPU time.")
PYPLEXITY_NOTE = ("pyplexity (0.2.12 installs from PyPI) is not in the table: it downloads its perplexity models "
                  "from gitlab.citius.usc.es on first use, which cannot be done here (no network at run time), "
                  "so its cleaning could not be measured with its own models; no figure is given rather than "
                  "one from a model it does not ship.")


def _load(folder: Path, name: str) -> dict | None:
    path = folder / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _cell(quality: dict | None, set_name: str, variant: str, key: str, fmt: str, group: str = "all") -> str:
    """`dev / held` of one figure, or — when it was not measured."""
    try:
        halves = quality["sets"][set_name]["variants"][variant]
        return " / ".join(format(halves[h][group][key], fmt) for h in ("dev", "held"))
    except (KeyError, TypeError):
        return "—"


def render_headline(folder: Path = figures.FIGURES) -> str:
    """The headline table (Markdown, with its provenance line and notes) from the JSON in `folder`."""
    quality, e2e = _load(folder, "quality"), _load(folder, "end_to_end")
    default = (quality or {}).get("default_pipeline") or f"{(e2e or {}).get('default_extractor', 'auto')}+filter"
    ours = f"**plexity_plugins, default** (`{default.replace('+filter', '')}` + perplexity filter)"
    rates = (quality or {}).get("pages_per_second", {})
    base = rates.get("datatrove")

    def in_process(variant: str) -> str:
        if variant not in rates:
            return "—"
        ratio = f" ({rates[variant] / base:.2f}×)" if base else ""
        return f"{rates[variant]:.1f}{ratio}"

    def end_to_end(variant: str | None) -> str:
        if not e2e or variant is None:
            return "—"
        walls, cpus = [], []
        for set_name in ("wcxb", "articles"):
            v = e2e.get("sets", {}).get(set_name, {}).get("vs_datatrove")
            measured = v and variant in v["ratio_to_datatrove"]
            walls.append(f"{v['ratio_to_datatrove'][variant]:.2f}×" if measured else "—")
            cpus.append(f"{v['cpu_ratio_to_datatrove'][variant]:.2f}×" if measured else "—")
        return f"{' / '.join(walls)} (CPU: {' / '.join(cpus)})"

    # Our other pipelines measured end to end (bench/end_to_end.py --variants), so that the table is
    # a frontier of quality against cost, not one point.
    options = [(f"{v}+filter", f"plexity_plugins, `--extractor {v}` (+ filter)", v)
               for v in (e2e or {}).get("variants", []) if v != "default" and f"{v}+filter" != default]
    # the default reader's forest saw these pages in training: the same reader with the forests
    # trained without each set is the honest row (bench/quality.py's learned-left-out)
    if default == "learned+filter" and "learned-left-out+filter" in (quality or {}).get("labels", {}):
        first = [("learned-left-out+filter", "**plexity_plugins, default** (`learned` + perplexity filter), each set "
                  "read by the forest trained without it", "default"),
                 (default, "the same, read by the shipped forest (trained on these four sets: training figures)",
                  "default")]
    else:
        first = [(default, ours, "default")]
    others = [*OTHERS, *([RS_ROW] if RS_ROW[0] in (quality or {}).get("labels", {}) else [])]
    rows = []
    for variant, name, e2e_name in [*first, *options,
                                    *((v, n, "datatrove" if v == "datatrove" else None) for v, n in others)]:
        rows.append([name,
                     _cell(quality, "wcxb", variant, "f1", ".3f"),
                     _cell(quality, "cleaneval", variant, "similarity", ".1f"),
                     _cell(quality, "articles", variant, "f1", ".3f", group="english"),
                     _cell(quality, "traf", variant, "f1", ".3f"),
                     _cell(quality, "wcxb", variant, "without_leaked", ".1f"),
                     in_process(default if e2e_name == "default" else variant), end_to_end(e2e_name)])
    heads = ["pipeline", "WCXB word F1", "CleanEval similarity %", "English articles F1", "trafilatura's set F1",
             "WCXB boilerplate leaked % (`without`)", "pages per CPU second, in process (× datatrove's)",
             "end to end, × datatrove's pipeline: WCXB / articles, wall (CPU)"]

    made = []
    for name, data in (("quality", quality), ("end_to_end", e2e)):
        if data and "provenance" in data:
            prov = data["provenance"]
            made.append(f"`{name}.json` by `{prov['command']}` on commit {prov['code']}, {prov['date']}")
        else:
            made.append(f"`{name}.json` missing (run `.venv/bin/python bench/{name}.py`)")
    head = "From " + " and ".join(made) + "; rendered by `.venv/bin/python bench/headline.py`."
    if quality and quality.get("quick"):
        head += " QUICK quality run (one WCXB page in five)."
    if e2e and e2e.get("quick"):
        head += " QUICK end-to-end run."
    def pages(set_name: str, group: str = "all") -> str:
        try:
            halves = quality["sets"][set_name]["variants"][default]
            return f"{sum(halves[h][group]['pages'] for h in ('dev', 'held')):,} pages"
        except (KeyError, TypeError):
            return "not measured"

    notes = [
        "Each quality cell is `dev / held`: the two halves of each benchmark's dev split, cut by site (choices "
        f"were made on `dev`; `held` is the check). WCXB ({pages('wcxb')}, seven page types) by its own word F1 and "
        f"its own snippet rule; CleanEval ({pages('cleaneval')}) by its word-level similarity; English news "
        f"articles ({pages('articles', 'english')}) by 4-gram shingle F1; trafilatura's evaluation set ({pages('traf')}, "
        "most of them German) by its own snippet F1. The default reader's forest was trained on these four sets: "
        "its first row, each set read by the forest trained without that set, is the figure to compare (its speed is the "
        "shipped reader's). datatrove's pipeline's quality is its Trafilatura step's, "
        "with its defaults (favour_precision, deduplicate across the pages of a process). Speed in process: HTML to text (and filter) per second of CPU time, the same "
        "sample of pages for every tool, alternating. End to end: `plexity run` against datatrove's pipeline from the same WARC files to "
        "JSONL, one worker, start-up included, by wall time (and by the CPU seconds of the processes, which other jobs "
        "on a shared machine do not inflate); details in end_to_end.md. Only datatrove's pipeline and ours run end to end.",
        *([RS_NOTE] if RS_ROW in others else []),
        PYPLEXITY_NOTE,
    ]
    return "\n\n".join([head, figures.table(heads, rows), *notes]) + "\n"


README = HERE.parent / "README.md"
_README_BLOCK = re.compile(r"(<!-- headline:start -->\n).*?(<!-- headline:end -->)", re.S)


def _update_readme(text: str) -> None:
    """The README carries the same table between its headline markers (tests/test_docs.py checks)."""
    readme = README.read_text(encoding="utf-8")
    updated = _README_BLOCK.sub(lambda m: m.group(1) + text + m.group(2), readme, count=1)
    if updated != readme:
        README.write_text(updated, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--figures", type=Path, default=figures.FIGURES,
                        help="the folder holding quality.json and end_to_end.json; headline.md is written there")
    args = parser.parse_args()
    text = render_headline(args.figures)
    (args.figures / "headline.md").write_text(text, encoding="utf-8")
    if args.figures.resolve() == figures.FIGURES.resolve():
        _update_readme(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
