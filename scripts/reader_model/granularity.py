"""Where the learned reader's remaining error sits: in what its blocks are, or in how it labels them.

    .venv/bin/python scripts/reader_model/granularity.py [--bench DIR] [--cache DIR] [--left-out DIR]
                                                          [--sources traf,wcxb] [--examples N]

Reads the pages of the four development sources as build.py caches them (``--cache``: its
examples, written by ``scripts/reader_model/build.py``) and the readers it leaves each source out
of (``--left-out``), and prints, per source (the extractor alone, no filter):

1. **the ceiling of today's blocks**: the source's score when every block is kept exactly when its
   training label says it is text (gold share of `training.LABEL_SHARE` or more; for snippets, a
   block holding a ``with`` part and no ``without`` part), beside the left-out reader's; and the
   same ceiling were blocks cut finer: at each ``<br>`` ("lines"), and also where a line turns
   from prose to a link or back ("lines + links");
2. **what the left-out reader leaks** (sources with ``without`` snippets: trafilatura's set and
   WCXB): of the boilerplate snippets found in its text, how many sit in a block that also holds
   a ``with`` snippet or is labelled text by the gold text (a *mixed* block: the forest keeps or
   drops it whole), and how many in a block that is boilerplate only (the forest's error);
3. **what it misses** (sources with gold text): of the gold words not in its text, how many sit in
   blocks kept, in dropped blocks labelled text (the forest's error), in dropped blocks that are
   mostly boilerplate (under the label share: a mixed block), or in no block at all;
4. **the markup shapes of the mixed blocks** (snippet-labelled): whether the two kinds sit on
   different ``<br>`` lines, in different link runs of a line, under different inline elements of
   a run, or in one run of text.

Pages are segmented again by the reference segmenter (`segment`, which the compiled one equals) to
see inside blocks; nothing is written.
"""

from __future__ import annotations

import argparse
from array import array
import bisect
import importlib.util
import json
import pickle
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import quality  # noqa: E402

from plexity_plugins.extractors.learned import reading, segment, training  # noqa: E402
from plexity_plugins.extractors.learned.features import FEATURES  # noqa: E402

_spec = importlib.util.spec_from_file_location("reader_build", HERE / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


class _PieceReader(segment._Reader):
    """The reference segmenter, remembering for every block the runs of text it was made of: each
    piece's text, whether it is link text, its innermost inline element, and its line."""

    def __init__(self):
        super().__init__()
        self.pieces: list[tuple[str, bool, str, int]] = []
        self.line = 0
        self.block_pieces: list[list[tuple[str, bool, str, int]]] = []

    def add_text(self, raw: str) -> None:
        before = len(self.text)
        super().add_text(raw)
        if len(self.text) > before:
            elements = self.page.elements
            inline = next((elements[i].tag for i in reversed(self.stack) if not elements[i].block), "")
            self.pieces.append((self.text[-1], bool(self.in_link), inline, self.line))

    def line_break(self) -> None:
        super().line_break()
        self.line += 1

    def flush(self) -> None:
        blocks = len(self.page.blocks)
        pieces = self.pieces
        super().flush()
        if not self.text:
            self.pieces, self.line = [], 0
            if len(self.page.blocks) > blocks:
                self.block_pieces.append(pieces)


def pieces_of(page_html: str) -> tuple[list[str], list[list[tuple[str, bool, str, int]]]]:
    """(block texts, each block's pieces) of a page, by the reference segmenter."""
    reader = _PieceReader()
    plain = segment._Reader
    segment._Reader = lambda: reader  # (one pass of `segment.segment` with this reader)
    try:
        page = segment.segment(page_html)
    finally:
        segment._Reader = plain
    return [b.text for b in page.blocks], reader.block_pieces


def units(pieces: list[tuple[str, bool, str, int]], by: str) -> list[list[tuple[str, bool, str, int]]]:
    """A block's pieces cut into units: at lines ("lines"), also at a change of link or not
    ("links"), also at a change of inline element ("inline")."""
    out: list[list] = []
    key = None
    for piece in pieces:
        text, link, inline, line = piece
        if not _WORD.search(text):  # (spaces and marks stay with the run they are in)
            if out:
                out[-1].append(piece)
            continue
        k = (line,) if by == "lines" else (line, link) if by == "links" else (line, link, inline)
        if k != key or not out:
            out.append([])
            key = k
        out[-1].append(piece)
    return out


def unit_text(unit) -> str:
    return _SPACE.sub(" ", "".join(p[0] for p in unit)).strip()


def split_texts(pieces_by_block, by: str) -> list[str]:
    return [t for pieces in pieces_by_block for t in (unit_text(u) for u in units(pieces, by)) if t]


def snippet_kinds(texts: list[str], with_: list[str], without: list[str]) -> list[set]:
    """Per text, the kinds of snippet parts it holds ({"with", "without"}), located as
    `training.snippet_labels` locates them (one kind at a time, so that a text holding both says so)."""
    holds_with = training.snippet_labels(texts, with_, [])
    holds_without = training.snippet_labels(texts, [], without)
    return [{kind for kind, held in (("with", w == 1), ("without", wo == 0)) if held}
            for w, wo in zip(holds_with, holds_without)]


def where(texts: list[str], snippet: str) -> list[int]:
    """The blocks the first occurrence of `snippet` spans (whitespace collapsed), or []."""
    parts = [_SPACE.sub(" ", t).strip() for t in texts]
    starts, at = [], 0
    for part in parts:
        starts.append(at)
        at += len(part) + 1
    snippet = _SPACE.sub(" ", snippet).strip()
    at = " ".join(parts).find(snippet) if snippet else -1
    if at < 0:
        return []
    return list(range(bisect.bisect_right(starts, at) - 1, bisect.bisect_right(starts, at + len(snippet) - 1)))


def oracle_keep(texts: list[str], page: dict, source: str) -> list[bool]:
    """Each text kept exactly when its training label is text (a mixed snippet block dropped)."""
    labels = training.label_blocks(texts, gold=quality.gold_text(source, page), with_=page.get("with", ()),
                                   without=page.get("without", ()))
    return [label == 1 for label in labels]


def score(source: str, pages, texts: list[str], scorers) -> float:
    return quality.figures_of(source, scorers, list(zip(pages, texts)))["score"]


def reader_keeps(forest: reading.Forest, example: training.Example) -> list[bool]:
    """The blocks the left-out reader keeps (its forest, second look and `choose`)."""
    if not example.texts:
        return []
    probabilities = forest.probabilities(array("d", [v for row in example.rows for v in row]).tobytes())
    threshold, added = forest.decision(example.rows, probabilities, example.words)
    return example.choose(probabilities, threshold, added)


_TAG, _LINK_SHARE, _WORDS = (FEATURES.index(name) for name in ("tag", "link_share", "words"))


def error_kind(example: training.Example, kinds: list[set], i: int) -> list[str]:
    """What a kept boilerplate block is: its tag, its link share, its words, and where it sits
    against the page's ``with`` snippets."""
    row, words = example.rows[i], example.words[i]
    text_at = [j for j, k in enumerate(kinds) if "with" in k]
    place = ("no with snippet" if not text_at else "before the text" if i < text_at[0]
             else "after the text" if i > text_at[-1] else "inside the text")
    link = row[_LINK_SHARE]
    return [f"tag {segment.TAGS[int(row[_TAG])]}",
            "links: none" if link == 0 else "links: under half" if link < 0.5 else "links: half or more",
            "words: under 5" if words < 5 else "words: 5 to 19" if words < 20 else "words: 20 or more",
            f"place: {place}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=quality.DEFAULT_BENCH)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/plexity-reader-cache"))
    parser.add_argument("--left-out", type=Path, default=Path("/tmp/plexity-reader-left-out"))
    parser.add_argument("--sources", default=",".join(build.SOURCES))
    parser.add_argument("--examples", type=int, default=0, help="print this many mixed blocks a shape")
    args = parser.parse_args()
    sources = [s for s in args.sources.split(",") if s]
    quality.require_bench(args.bench, sources)
    scorers = quality.Scorers(args.bench, sources)
    report = {}
    for source in sources:
        pages = quality.LOADERS[source](args.bench / quality.SET_DIRS[source])
        cached = args.cache / f"{source}-{build._code_hash()}.pkl"
        examples = pickle.loads(cached.read_bytes())
        forest = reading.Forest(json.loads((args.left_out / f"without-{source}.json").read_text()))
        snippets = source in ("traf", "wcxb")
        gold_source = source != "traf"
        out = {"pages": len(pages)}
        reader_texts, ceiling_texts, fine_texts = [], [], {"lines": [], "links": []}
        leaks = Counter()
        missed = Counter()
        shapes = Counter()
        kinds_of_error = Counter()
        shown = Counter()
        mismatched = 0
        blocks = mixed_blocks = 0
        for page, example in zip(pages, examples):
            texts = example.texts
            keep = reader_keeps(forest, example)
            text = "\n".join(t for t, k in zip(texts, keep) if k)
            reader_texts.append(text)
            ceiling_texts.append("\n".join(t for t, k in zip(texts, oracle_keep(texts, page, source)) if k))
            html = quality.page_html(page)
            seg_texts, block_pieces = pieces_of(html)
            if seg_texts != texts:
                mismatched += 1
                block_pieces = [[(t, False, "", 0)] for t in texts]
            for by in fine_texts:
                cut = split_texts(block_pieces, by)
                fine_texts[by].append("\n".join(t for t, k in zip(cut, oracle_keep(cut, page, source)) if k))
            gold = quality.gold_text(source, page)
            shares = training.aligned_shares(texts, gold) if gold is not None and texts else [0.0] * len(texts)
            kinds = snippet_kinds(texts, page.get("with", ()), page.get("without", ())) if snippets else []
            blocks += len(texts)
            if snippets:
                found = _SPACE.sub(" ", text).strip()
                lowered = found.lower()
                for snippet in page["without"]:
                    s = _SPACE.sub(" ", snippet).strip()
                    leaked = (s in found) if source == "traf" else (s.lower() in lowered)
                    if not leaked:
                        continue
                    leaks["leaked"] += 1
                    # (located in the kept blocks' text, as the reader writes it)
                    kept_at = [i for i, k in enumerate(keep) if k]
                    at = where([texts[i] for i in kept_at], snippet)
                    if not at and source == "wcxb":
                        at = where([texts[i].lower() for i in kept_at], snippet.lower())
                    at = [kept_at[i] for i in at]
                    if not at:
                        leaks["not in the kept blocks (the declared text)"] += 1
                    elif any("with" in kinds[i] for i in at):
                        leaks["mixed: block holds a with snippet"] += 1
                    elif gold_source and any(shares[i] >= training.LABEL_SHARE for i in at):
                        leaks["mixed: block labelled text by the gold"] += 1
                    elif gold_source and any(shares[i] * example.words[i] >= 3 for i in at):
                        leaks["block holds some gold words (under the label share)"] += 1
                    else:
                        leaks["boilerplate-only block kept (the forest's error)"] += 1
                        kinds_of_error.update(error_kind(example, kinds, at[0]))
                # the shapes of the snippet-mixed blocks
                for i, k in enumerate(kinds):
                    if k != {"with", "without"}:
                        continue
                    mixed_blocks += 1
                    shape = "one run of text"
                    for by, name in (("lines", "<br> lines"), ("links", "link runs"), ("inline", "inline elements")):
                        cut = [unit_text(u) for u in units(block_pieces[i], by)]
                        cut_kinds = snippet_kinds(cut, page["with"], page["without"])
                        if len(cut) > 1 and not any(c == {"with", "without"} for c in cut_kinds):
                            shape = name
                            break
                    shapes[shape] += 1
                    if shown[shape] < args.examples:
                        shown[shape] += 1
                        print(f"  [{source} {shape}] kept={keep[i]} {texts[i][:300]!r}", file=sys.stderr)
            if gold is not None:
                total = len(_WORD.findall(gold))
                matched = [s * w for s, w in zip(shares, (len(_WORD.findall(t)) for t in texts))]
                in_kept = sum(m for m, k in zip(matched, keep) if k)
                dropped_text = sum(m for m, k, s in zip(matched, keep, shares) if not k and s >= training.LABEL_SHARE)
                dropped_mixed = sum(m for m, k, s in zip(matched, keep, shares) if not k and s < training.LABEL_SHARE)
                missed["gold words"] += total
                missed["missed"] += max(0.0, total - in_kept)
                missed["in dropped blocks labelled text (the forest's error)"] += dropped_text
                missed["in dropped blocks mostly boilerplate (mixed)"] += dropped_mixed
                missed["in no block (unmatched)"] += max(0.0, total - sum(matched))
                # the ceiling's own loss: gold words in blocks under the label share
                missed["ceiling: gold words in blocks under the label share"] += sum(
                    m for m, s in zip(matched, shares) if s < training.LABEL_SHARE)
                missed["ceiling: other words in blocks at or over it"] += sum(
                    w - m for m, s, w in zip(matched, shares, (len(_WORD.findall(t)) for t in texts))
                    if s >= training.LABEL_SHARE)
        out["segmentation mismatches (reference vs cache)"] = mismatched
        out["reader left out (alone)"] = round(score(source, pages, reader_texts, scorers), 4)
        out["ceiling, today's blocks"] = round(score(source, pages, ceiling_texts, scorers), 4)
        out["ceiling, blocks cut at <br>"] = round(score(source, pages, fine_texts["lines"], scorers), 4)
        out["ceiling, cut at <br> and link runs"] = round(score(source, pages, fine_texts["links"], scorers), 4)
        if snippets:
            out["blocks"] = blocks
            out["blocks holding both with and without snippets"] = mixed_blocks
            out["their shapes (the finest cut that separates the two)"] = dict(shapes)
            out["without snippets leaked"] = dict(leaks)
            out["the forest's errors: the kept boilerplate block's"] = dict(sorted(kinds_of_error.items()))
        if missed:
            out["gold words"] = {k: round(v) for k, v in missed.items()}
        report[source] = out
        print(json.dumps({source: out}, indent=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
