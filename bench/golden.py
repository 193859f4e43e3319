"""Golden outputs: what `PerplexityScorer().clean()` makes of the repository's own page set.

    .venv/bin/python bench/golden.py            # (re)write tests/golden/pages_clean.json
    .venv/bin/python bench/golden.py --check    # compare the current code with it (exit 1 if different)

The pages are tests/golden/pages.py's (the sample WARC's pages, pages assembled from the sample's
article and boilerplate text, other-language pages and edge-case text: nothing outside the
repository).  For each, the text extracted by the tags extractor is cleaned with the embedded
model's defaults; the kept text, the sentence counts, the pass-through reason and every
sentence's perplexity are recorded.  Optimisations of the scorer must not change them:
tests/test_golden.py recomputes and compares.  When behaviour changes on purpose, regenerate
the file with this script and commit it with the change.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "pages_clean.json"
PPL_DIGITS = 7  # significant digits stored; compared with a relative tolerance of PPL_RTOL
PPL_RTOL = 1e-5


def page_set():
    """tests/golden/pages.py, loaded by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("golden_pages", REPO / "tests" / "golden" / "pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compute() -> dict:
    """{"model", "threshold", "extractor", "pages": {key: {...}}} for the current code."""
    from plexity_plugins.extractors import html_to_text_tags
    from plexity_plugins.scoring.scorer import PerplexityScorer

    scorer = PerplexityScorer()
    pages = {}
    for key, page in page_set().pages().items():
        result = scorer.clean(html_to_text_tags(page))
        pages[key] = {
            "text": result.text,
            "sentences_kept": result.sentences_kept,
            "sentences_dropped": result.sentences_dropped,
            "passthrough": getattr(result, "passthrough", None),
            "perplexities": [float(f"{p:.{PPL_DIGITS}g}") for p in result.perplexities],
        }
    return {"generator": "bench/golden.py", "extractor": "tags", "model": scorer.model_name,
            "threshold": scorer.threshold, "pages": pages}


def differences(expected: dict, actual: dict, limit: int = 10) -> list[str]:
    """Human-readable differences between two `compute()` results (empty if they agree)."""
    out = []
    for field in ("extractor", "model", "threshold"):
        if expected.get(field) != actual.get(field):
            out.append(f"{field}: golden {expected.get(field)!r}, now {actual.get(field)!r}")
    exp_pages, act_pages = expected["pages"], actual["pages"]
    if set(exp_pages) != set(act_pages):
        out.append(f"pages differ: missing {sorted(set(exp_pages) - set(act_pages))[:5]}, "
                   f"new {sorted(set(act_pages) - set(exp_pages))[:5]}")
    for key in sorted(set(exp_pages) & set(act_pages)):
        e, a = exp_pages[key], act_pages[key]
        for field in ("sentences_kept", "sentences_dropped", "passthrough"):
            if e[field] != a[field]:
                out.append(f"{key}: {field} golden {e[field]!r}, now {a[field]!r}")
        if len(e["perplexities"]) != len(a["perplexities"]):
            out.append(f"{key}: {len(e['perplexities'])} sentences in the golden file, now {len(a['perplexities'])}")
        else:
            for i, (pe, pa) in enumerate(zip(e["perplexities"], a["perplexities"])):
                if not math.isclose(pe, pa, rel_tol=PPL_RTOL):
                    out.append(f"{key}: sentence {i} perplexity golden {pe}, now {pa}")
                    break
        if e["text"] != a["text"]:
            at = next((i for i, (x, y) in enumerate(zip(e["text"], a["text"])) if x != y),
                      min(len(e["text"]), len(a["text"])))
            out.append(f"{key}: cleaned text differs at character {at}: golden "
                       f"{e['text'][max(0, at - 40):at + 60]!r}, now {a['text'][max(0, at - 40):at + 60]!r}")
        if len(out) >= limit:
            out.append("...")
            break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the golden file instead of writing it")
    parser.add_argument("--out", type=Path, default=GOLDEN)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    actual = compute()
    if args.check:
        diffs = differences(json.loads(args.out.read_text(encoding="utf-8")), actual)
        print("\n".join(diffs) if diffs else f"{len(actual['pages'])} pages: same as {args.out}")
        return 1 if diffs else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(actual, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    kept = sum(p["sentences_kept"] for p in actual["pages"].values())
    dropped = sum(p["sentences_dropped"] for p in actual["pages"].values())
    print(f"wrote {args.out}: {len(actual['pages'])} pages, {kept} sentences kept, {dropped} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
