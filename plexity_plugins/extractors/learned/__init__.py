"""``learned``: the page's text chosen block by block by a small model learned from pages whose
text is known, over evidence that names no site and no class.

How a page is read (`html_to_text_learned`):

1. **Blocks** (`segment`): one pass over the HTML cuts it into blocks, the text between two
   block-level tags or line breaks (``<br>``, outside ``<pre>``), and records for every element
   its tag, its parent and how much text and link text its subtree holds.
2. **Evidence** (`features`): for each block, a row of numbers: its shape (words, link text,
   sentence ends, digits), its elements' tags and declared roles (``<article>``, ``<nav>``,
   ARIA landmarks, ``hidden``), the text and link density of its parent elements, its
   position, repetition (like items of a list, posts of a thread), where the page's prose is
   (the smallest elements that hold half, four fifths, nearly all of it), the page's kind (how
   much of it is prose, how much one repeated list, what its og:type and schema.org types say,
   the shape of its canonical address, how many of some elements it has), and how much of the
   block the text the page declares holds (JSON-LD ``articleBody``, its descriptions).
3. **Decision** (`forest`): a forest of decision trees, trained with LightGBM on four
   benchmarks' pages (``scripts/reader_model/build.py``; its card, ``card.json``, gives the
   sources, the settings and each benchmark's score when it was left out of training), gives each
   block a probability of being the page's text; blocks at or above the threshold are kept.
4. **The page's threshold and a second look** (`page_threshold`, `second_look`): a small
   regression forest gives the page its own threshold from its evidence and how the block
   probabilities spread over it (a catalogue's items may all score 0.3, an article's comments
   0.55), and a second forest reads each block under it again beside the probabilities of its
   neighbours, and adds the blocks it is confident of (a paragraph scored 0.4 between two kept
   ones).  (The build compares either alone and both, and ships both: left out, both read best
   at each of LightGBM's seeds 7, 8 and 9.)
5. **A page of nothing but prose is all text** (`choose`, `all_prose`): where no block holds a
   link or a text said twice, none is in a part HTML declares (navigation, aside, header,
   footer, form, control, dialog, hidden or noscript content) or in a list or a table, and every
   block is a heading or holds a sentence's end (one at least not a heading), every block is
   kept: the trees judge a block beside the page's others, and of a page of two paragraphs they
   score the smaller as a teaser outside the page's prose.
6. **What a footer holds is not the text** (`choose`): a block inside a ``<footer>`` (or an
   ARIA ``contentinfo``) is not kept, as HTML declares a footer to hold what is about its section
   (its author, its copyright, related links), unless the page would then hold fewer than
   `MIN_WORDS` words.
7. **A heading goes with its section** (`choose`, `headings_follow_sections`): a kept heading
   (``<h1>`` to ``<h6>``) whose section's blocks are all dropped is dropped too ("Related
   articles" over a dropped list of links, "Leave a comment" over a dropped form), and a dropped
   heading whose section's blocks are all kept is kept (the title of a part of the text), unless
   the page would then hold fewer than `MIN_WORDS` words.  A section runs from the heading up to
   the next heading of its rank or higher, and no further than the end of the heading's
   block-level parent, or of its grandparent where the parent holds only the heading.
8. **The text ends with its own words** (`choose`, `without_trailers`): the kept blocks after
   the last one that is neither a heading nor mostly link text are dropped: a heading titles what
   follows it, and after the text nothing is left for it to title ("Related posts" over teasers a
   script fills in), and blocks of links after the text are where the page sends its reader next
   ("Read also", related articles, a sponsor's address), unless the page would then hold fewer
   than `MIN_WORDS` words.
9. **A listing is not read as empty** (`choose`): where the kept blocks hold fewer than
   `MIN_WORDS` words, the page's largest list of like items is its text too (a listing or a
   catalogue whose items are all links, which the trees, taught mostly by articles, score low
   one by one).
10. **A page that only declares its text** (`or_declared`): where the kept blocks still hold
   fewer than `MIN_WORDS` words and the page's JSON-LD declares an ``articleBody`` or ``text`` of
   at least as many, that text follows them (a news page rendered by its scripts shows its
   article only there).  A page where nothing is kept then is text-less to the forest (an error
   page, a bare form) and ends as the front end's counted ``no text extracted``.

Segmentation, evidence and trees are compiled where the extension is built (about 1.3 ms a
WCXB page, median; 33 ms in Python), and so are steps 4 to 9 (`kept`: the page's threshold, the
second look and `choose`'s rules, in one call); the Python modules are their reference
(`kept_reference`, `choose` and the functions it names).
"""

from __future__ import annotations

import functools
import json
import math
from itertools import compress
from pathlib import Path

from ...errors import ExtractionError, InstallationError
from ...io.decoding import html_text
from ..declarations import declares_article_or_product
from ..markup import dense_reads
from .features import FEATURES
from .page_threshold import THRESHOLD_FEATURES
from .reading import WIDTH, Forest, feature_rows, read_blocks, section_ends
from .second_look import NEIGHBOUR_FEATURES
from .segment import MAX_BLOCKS, MAX_ELEMENTS, TAG_ID, count_words
from ..text import composed

FOREST_PATH = Path(__file__).with_name("forest.json")
CARD_PATH = Path(__file__).with_name("card.json")
MIN_WORDS = 50

__all__ = ["CARD_PATH", "FOREST_PATH", "Forest", "MIN_WORDS", "all_prose", "choose", "choose_from_rows",
           "declared_text", "heading_sections", "headings_follow_sections", "html_to_text_learned", "load_forest",
           "or_declared", "read_page", "set_apart", "trailers", "without_trailers"]


@functools.lru_cache(maxsize=4)
def load_forest(path: str | None = None) -> Forest:
    """The shipped forest (``forest.json`` beside this module), or the one at `path`; read once
    per process."""
    # (a forest that cannot be read is a broken installation, not a bad page: every front end stops)
    where = path or FOREST_PATH
    try:
        spec = json.loads(Path(where).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InstallationError(f"the learned reader's forest {where} cannot be read ({exc}); reinstall "
                                f"plexity_plugins, or rebuild it (scripts/reader_model/build.py)", exc) from exc
    page, second = spec.get("page_threshold"), spec.get("second_look")
    if list(spec.get("features", ())) != list(FEATURES) or (
            page is not None and list(page.get("features", ())) != list(THRESHOLD_FEATURES)) or (
            second is not None and list(second.get("features", ())) != list(NEIGHBOUR_FEATURES)):
        raise InstallationError(f"{where}: the forest was trained on other features than this version computes; "
                                f"rebuild it (scripts/reader_model/build.py)")
    return Forest(spec)


def read_whole(html: str) -> tuple[list[str], object]:
    """`reading.read_blocks` of `html`, refusing a page read only in part: past `MAX_BLOCKS`
    blocks or `MAX_ELEMENTS` elements the segmenter stops (a page of millions of blocks would
    take gigabytes), and the text of its first part is not passed off as the page's.  Raises
    `ExtractionError`, a counted skip that names the bound in every front end."""
    texts, page = read_blocks(html)
    if page.truncated:  # (past the elements' bound, past dense's and fast's tags too: named only where they read it)
        others = "; another extractor (fast, dense) reads it" if dense_reads(html) else ""
        raise ExtractionError(f"the page has more than {MAX_BLOCKS:,} blocks or {MAX_ELEMENTS:,} elements, past "
                              f"what the learned reader reads{others}")
    return texts, page


def read_page(html: str, logprobs: list[float] | None = None) -> tuple[list[str], bytes, object]:
    """(texts, feature rows, page) of `html`'s blocks; rows as `reading.feature_rows` gives them."""
    texts, page = read_whole(html)
    rows = feature_rows(page, declares_article_or_product(html), logprobs) if texts else b""
    return texts, rows, page


_WORDS = FEATURES.index("words")  # log1p of the block's words
TOP_GROUP = FEATURES.index("in_top_group")
TAG = FEATURES.index("tag")
FOOTER = FEATURES.index("anc_footer")  # (inside a <footer> or an ARIA contentinfo)
DIALOG = FEATURES.index("anc_dialog")  # (inside a <dialog> or an ARIA dialog or alertdialog)
# What marks a block as not the page's text, or as a part of a page built of parts (`all_prose`):
# links, a repeated text, the parts HTML declares (navigation, asides, headers, footers, forms,
# controls, dialogs, hidden and noscript content) and lists and tables of items.
_LINKS = tuple(FEATURES.index(name) for name in ("links", "link_share", "in_link"))
_REPEATS = FEATURES.index("repeats")
_PARTS = tuple(FEATURES.index(f"anc_{name}") for name in (
    "nav", "aside", "header", "footer", "form", "control", "dialog", "hidden", "noscript", "li", "dl", "cell",
    "table")) + (FEATURES.index("in_control"),)
_SENTENCE = FEATURES.index("ends_sentence")  # (the block holds a sentence's end)
# (a tag id as its row holds it, a float, finds its int key: 2.0 == 2, and they hash alike; int() of each block's tag
# took a third of `heading_sections`, ~12 us of an article page's rules)
_HEADING_RANKS = {TAG_ID[f"h{rank}"]: rank for rank in range(1, 7)}
_LINK_SHARE = FEATURES.index("link_share")  # (the share of the block's words inside links)
LINKED = 0.5  # a block with at least this share of its words in links is mostly links
# What the compiled `kept` (reading.Forest.chooser) is told of the rules here: the columns they read, and their
# constants.
_POLICY = (("words", _WORDS), ("tag", TAG), ("top_group", TOP_GROUP), ("footer", FOOTER), ("dialog", DIALOG),
           ("link_share", _LINK_SHARE), ("repeats", _REPEATS), ("sentence", _SENTENCE),
           ("prose_marks", _LINKS + _PARTS), ("heading_tags", tuple(_HEADING_RANKS)),
           ("heading_ranks", tuple(_HEADING_RANKS.values())), ("linked", LINKED), ("min_words", MIN_WORDS))


def column(rows: bytes, index: int) -> list[float]:
    """One feature of every block, from rows of `FEATURES`."""
    return memoryview(rows).cast("B").cast("d")[index::WIDTH].tolist()


def heading_sections(tags: list[float], ends: list[int]) -> tuple[list[int], list[int]] | None:
    """The `choose` ``sections`` of a page's blocks: per block, its heading's rank from its
    `FEATURES` ``tag`` (1 for ``<h1>`` to 6; 0: not a heading), and `ends` (`reading.section_ends`:
    the last block its section may reach); None where `ends` is not known."""
    if not ends:
        return None
    rank = _HEADING_RANKS.get
    return [rank(tag, 0) for tag in tags], ends


def headings_follow_sections(keep: list[bool], levels: list[int], ends: list[int]) -> list[bool]:
    """`keep` with each heading (`levels` > 0) as its section is, where the section is of one mind:
    a kept heading whose section's blocks are all dropped is dropped (the heading of a dropped
    list of links, of a dropped form), a dropped heading whose section's blocks are all kept is
    kept (the title of a part of the text).  A heading's section: the blocks after it up to the
    next heading of its rank or higher and up to its `ends`, less the headings in it; a heading
    with no such block stays as it is."""
    # (each block is in at most six sections, one a rank: the scans read at most six times the page)
    out = list(keep)
    for i, level in enumerate(levels):
        if not level:
            continue
        body = agrees = False
        for j in range(i + 1, ends[i] + 1):
            if levels[j]:
                if levels[j] <= level:
                    break
                continue
            body = True
            if keep[j] == keep[i]:
                agrees = True
                break
        if body and not agrees:
            out[i] = not keep[i]
    return out


def trailers(tags: list[float], link_shares: list[float]) -> list[bool]:
    """The `choose` ``trailing`` of a page's blocks, from their `FEATURES` ``tag`` and
    ``link_share``: the blocks that cannot end a page's text, headings (``<h1>`` to ``<h6>``)
    and blocks mostly of link text (at least `LINKED` of their words in links)."""
    return [tag in _HEADING_RANKS or share >= LINKED for tag, share in zip(tags, link_shares)]


def without_trailers(keep: list[bool], trailing: list[bool]) -> list[bool]:
    """`keep` less the kept blocks after the last kept one that is not `trailing` (`trailers`: a
    heading, or a block mostly of links): a heading titles what comes after it, and one after
    which no text is kept titles nothing ("Related posts" over teasers a script fills in); links
    after the text are where the page sends its reader next ("Read also" and its articles).
    `keep` itself where the last kept block is not trailing."""
    # (the last kept block found in C, by bytes.rfind: a page ends in hundreds of dropped blocks, menus, footers)
    flags, out = bytes(keep), keep
    at = flags.rfind(1)
    while at >= 0 and trailing[at]:
        out = out if out is not keep else list(keep)
        out[at] = False
        at = flags.rfind(1, 0, at)
    return out


def set_apart(footer: list[float], dialog: list[float]) -> list[bool]:
    """The `choose` ``apart`` of a page's blocks, from their `FEATURES` ``anc_footer`` and
    ``anc_dialog``: the blocks HTML declares are not the text, being about a section (a
    ``<footer>``, ARIA ``contentinfo``) or apart from the page (a ``<dialog>``, ARIA ``dialog``:
    cookie notices, sign-up forms, quick views)."""
    return [f > 0 or d > 0 for f, d in zip(footer, dialog)]


def all_prose(column_of) -> bool:
    """Whether a page is nothing but prose, from its blocks' `FEATURES` (`column_of(index)`: one
    feature of every block): no block holds a link or a text said twice on the page, none is in a
    part HTML declares (navigation, aside, header, footer, form, control, dialog, hidden,
    noscript) or in a list or a table, every block is a heading or holds a sentence's end, and
    one at least is not a heading.  Such a page holds no evidence of anything but its text."""
    # (the links first: most pages have one, and one column read answers; these columns are never NaN)
    if any(max(column_of(index), default=0) > 0 for index in _LINKS + _PARTS):
        return False
    if max(column_of(_REPEATS), default=0) > 1:
        return False
    headings = [tag in _HEADING_RANKS for tag in column_of(TAG)]
    return not all(headings) and all(h or s > 0 for h, s in zip(headings, column_of(_SENTENCE)))


def choose(probabilities: list[float], threshold: float, words: list[int], top_group: list[bool],
           added: list[bool] | None = None, sections: tuple[list[int], list[int]] | None = None,
           apart: list[bool] | None = None, prose: bool = False,
           trailing: list[bool] | None = None) -> list[bool]:
    """Which blocks are the page's text: every block where the page is `prose` (`all_prose`: it
    holds nothing but its text); else those at or above `threshold`, and those the second look
    `added`, less those `apart` (`set_apart`: in a footer or a dialog), and with each heading as
    its section is (`headings_follow_sections` over the blocks' `heading_sections`) and less the
    `trailing` blocks that end the text (`without_trailers`: headings, links), each step
    unless it leaves fewer than `MIN_WORDS` words; where they hold fewer than `MIN_WORDS` words,
    also the blocks of the page's largest list of like items (`top_group`)."""
    def enough(keep: list[bool]) -> bool:
        return sum(compress(words, keep)) >= MIN_WORDS

    if prose:
        # (the forest judges a block beside the page's others: on a page of two paragraphs the
        # smallest element holding half of the prose is the larger one, and the other, outside
        # it, scores as a teaser would)
        return [True] * len(probabilities)
    keep = [p >= threshold for p in probabilities]
    if added is not None:
        keep = [k or a for k, a in zip(keep, added)]
    if apart is not None:
        within = [k and not a for k, a in zip(keep, apart)]
        if enough(within):
            keep = within
    if sections is not None:
        headed = headings_follow_sections(keep, *sections)
        if enough(headed):
            keep = headed
    if trailing is not None:
        ended = without_trailers(keep, trailing)
        if ended is not keep and enough(ended):
            keep = ended
    if not enough(keep):
        keep = [k or t for k, t in zip(keep, top_group)]
    return keep


def choose_from_rows(probabilities: list[float], threshold: float, words: list[int], column_of, ends: list[int],
                     added: list[bool] | None = None) -> list[bool]:
    """`choose` with what it reads of the page's own blocks taken from their `FEATURES` rows:
    `column_of(index)` is one feature of every block (the rows of the extractor and of training
    are stored differently), `ends` each heading's section bound (`reading.section_ends`)."""
    tags = column_of(TAG)
    return choose(probabilities, threshold, words, [t > 0 for t in column_of(TOP_GROUP)], added,
                  heading_sections(tags, ends), set_apart(column_of(FOOTER), column_of(DIALOG)),
                  all_prose(column_of), trailers(tags, column_of(_LINK_SHARE)))


def kept(texts: list[str], rows: bytes, forest: Forest, ends: list[int] | None = None) -> list[bool]:
    """`choose` over the blocks of `read_page`, with `forest`'s probabilities, the page's
    threshold and what its second look adds (`Forest.decision`), less the blocks of its footers
    and dialogs, and with `ends` (`reading.section_ends` of the page) each heading as its section is.
    Compiled where the extension is built (the same answer as `kept_reference`, tests/test_learned_native.py)."""
    chooser = forest.chooser(_POLICY)
    if chooser is not None:
        keep = chooser.kept(rows, WIDTH, ends if isinstance(ends, list) else list(ends or ()))
        if keep is not None:  # (None: a page only the reference decides, a NaN probability)
            return keep
    return kept_reference(texts, rows, forest, ends)


def kept_reference(texts: list[str], rows: bytes, forest: Forest, ends: list[int] | None = None) -> list[bool]:
    """`kept` in Python: the reference."""
    probabilities = forest.probabilities(rows)
    words = list(map(round, map(math.expm1, column(rows, _WORDS))))
    threshold, added = forest.decision(rows, probabilities, words)
    return choose_from_rows(probabilities, threshold, words, lambda index: column(rows, index), ends or [], added)


def declared_text(declared: list[str]) -> str:
    """The text of a page's JSON-LD strings (``articleBody``, ``text``: the ``declared`` of
    `read_blocks`' page), each once, read as HTML (sites often put the article's markup there):
    one line a block.  `ExtractionError` naming the declared text for one past `MAX_BLOCKS` blocks or
    `MAX_ELEMENTS` elements: the page is refused, as one past them is, not read without the text it declares
    (the message said the page had more than 50,000 blocks, of a page of one paragraph)."""
    lines, seen = [], set()
    for value in declared:
        if value not in seen:
            seen.add(value)
            texts, page = read_blocks(value)
            if page.truncated:
                raise ExtractionError(
                    f"the text the page declares (a JSON-LD articleBody or text) has more than {MAX_BLOCKS:,} blocks "
                    f"or {MAX_ELEMENTS:,} elements, past what the learned reader reads")
            lines.extend(texts)
    return "\n".join(lines)


def or_declared(text: str, declared: list[str]) -> str:
    """`text` (the kept blocks' text); where it holds fewer than `MIN_WORDS` words and the text the
    page declares (`declared_text` of its `declared` strings) at least as many, `text` and then
    the declared text's lines it does not hold already."""
    if not declared or count_words(text) >= MIN_WORDS:
        return text
    stated = declared_text(declared)
    if count_words(stated) < MIN_WORDS:
        return text
    shown = set(text.splitlines())
    return "\n".join(([text] if text else []) + [line for line in stated.splitlines() if line not in shown])


@composed
def html_to_text_learned(html: str | bytes, forest: Forest | None = None) -> str:
    """The page's text: its blocks that the learned forest keeps, one per line, followed by the
    text the page declares where those are too few (see the module's docstring).  `forest`:
    another trained forest than the shipped one."""
    html = html_text(html)
    texts, rows, page = read_page(html)
    shown = ""
    if texts:
        keep = kept(texts, rows, forest or load_forest(), section_ends(page))
        shown = "\n".join(text for text, k in zip(texts, keep) if k)
    return or_declared(shown, page.declared)
