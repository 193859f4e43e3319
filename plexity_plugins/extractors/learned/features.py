"""The evidence about each block that the learned reader weighs: its shape, its elements' text
and link density, declared structure, position, repetition, the page's kind, and (where a model
for the page's language is given) its perplexity.  One row of `FEATURES` per block.

No feature names a class, an id or a site: tags and roles are HTML's own vocabulary, counts are
of words (``\\w+``, any script; a run of Han or kana a word per two characters: `segment.count_words`),
characters and links.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .segment import ASCII_LOWER, COUNTED_TAGS, SCHEMA_FAMILIES, TAG_ID, Page, ascii_lower, count, pieces

_STOPS = re.compile(r"[.!?\u3002\uff01\uff1f\u0964\u061f](?:\s|$)")
_DIGIT = re.compile(r"\d")
_UPPER_INITIAL = re.compile(r"(?:^|\s)[A-ZÀ-ÖØ-Þ]")
_PUNCT = re.compile(r"[^\w\s]")
_SEPARATORS = re.compile(r"[|·•»›/\-–—:]")
_TOKEN = re.compile(r"\w+")

# Bits of an element's ancestry (its own and every ancestor's), from HTML's own semantics.
_ANCESTRY = {"article": 1, "main": 2, "nav": 4, "aside": 8, "header": 16, "footer": 32, "form": 64, "li": 128,
             "td": 256, "th": 256, "blockquote": 512, "figure": 1024, "dialog": 2048, "table": 4096,
             "h1": 8192, "h2": 8192, "h3": 8192, "h4": 8192, "h5": 8192, "h6": 8192, "pre": 16384,
             "select": 32768, "button": 32768, "label": 32768, "dl": 65536, "noscript": 1 << 19}
_ROLE_BITS = {1: 2, 2: 1, 3: 4, 4: 8, 5: 16, 6: 32, 9: 2048}
_HIDDEN_BIT = 1 << 17
_DECLARED_BIT = 1 << 18
ANCESTRY_NAMES = ("article", "main", "nav", "aside", "header", "footer", "form", "li", "cell", "blockquote",
                  "figure", "dialog", "table", "heading", "pre", "control", "dl", "hidden", "declared", "noscript")

BLOCK_FEATURES = ("words", "chars", "link_share", "links", "ends_sentence", "stops", "word_length", "digits",
                  "upper_initial", "punctuation", "separators", "lines", "in_link", "in_bold", "in_em", "in_control",
                  "in_time", "in_small", "in_code", "in_cite", "in_heading", "tag", "depth")
CONTEXT_FEATURES = tuple(f"{level}_{name}" for level in ("e0", "e1", "e2", "e3")
                         for name in ("tag", "words", "link_share", "blocks", "long_share", "density", "share",
                                      "page_share"))
PAGE_FEATURES = ("position", "words_before", "words_after", "page_words", "page_blocks", "page_link_share",
                 "page_long_blocks", "repeats", "same_tag_siblings", "title_share", "in_title", "best_container",
                 "best_share", "declares_item", "container_side", "container_distance", "title_heading",
                 "in_region50", "in_region80", "in_region95", "region50_share", "region80_share", "region95_share",
                 "item_count", "item_group_share", "item_share", "item_hops", "group_max_share",
                 "e1_longest", "e2_longest", "e1_index", "e2_index", "page_prose_share", "top_group_share",
                 "top_group_link_share", "in_top_group", "item_link_share")
NEIGHBOUR_FEATURES = tuple(f"{side}_{name}" for side in ("prev", "next")
                           for name in ("words", "link_share", "ends_sentence", "same_element"))
DECLARED_FEATURES = ("declared_share", "summary_share")
# What kind of page it is, by what the page says of itself (the same in every row of a page)
PAGE_KIND_FEATURES = (("og_kind",) + tuple(f"schema_{family}" for family in SCHEMA_FAMILIES)
                      + ("url_known", "url_depth", "url_slug_words", "url_date", "url_digits", "url_query",
                         "url_slash") + tuple(f"count_{tag}" for tag in COUNTED_TAGS))
PERPLEXITY_FEATURES = ("logprob", "logprob_vs_page")
FEATURES = (BLOCK_FEATURES + tuple(f"anc_{name}" for name in ANCESTRY_NAMES) + CONTEXT_FEATURES + PAGE_FEATURES
            + NEIGHBOUR_FEATURES + DECLARED_FEATURES + PAGE_KIND_FEATURES + PERPLEXITY_FEATURES)
CATEGORICAL = tuple(name for name in FEATURES if name.endswith("tag"))
NAN = float("nan")


def _ancestry(page: Page) -> list[int]:
    """Per element, the bits of `_ANCESTRY` of itself and its ancestors (parents come first)."""
    bits = [0] * len(page.elements)
    for i, e in enumerate(page.elements):
        own = _ANCESTRY.get(e.tag, 0) | _ROLE_BITS.get(e.role, 0)
        if e.hidden:
            own |= _HIDDEN_BIT
        if e.declared:
            own |= _DECLARED_BIT
        bits[i] = own | (bits[e.parent] if e.parent >= 0 else 0)
    return bits


def _block_parents(page: Page, index: int, levels: int) -> list[int]:
    """The block-level element `index` and up to `levels - 1` block-level ancestors."""
    elements = page.elements
    chain = [index]
    at = elements[index].parent
    while at >= 0 and len(chain) < levels:
        if elements[at].block:
            chain.append(at)
        at = elements[at].parent
    return chain


def _best_container(page: Page) -> tuple[int, float]:
    """The block-level element whose direct block children hold most sentence-ending text (a
    Readability-like score: long blocks score their element, half of it its parent), and the
    share of the page's words it holds."""
    elements = page.elements
    score: dict[int, float] = {}
    for block in page.blocks:
        if block.words < 10 or not _STOPS.search(block.text):
            continue
        value = 1 + min(block.words, 100) / 25
        at = block.element
        score[at] = score.get(at, 0) + value
        parent = elements[at].parent
        while parent >= 0 and not elements[parent].block:
            parent = elements[parent].parent
        if parent >= 0:
            score[parent] = score.get(parent, 0) + value / 2
    if not score:
        return -1, 0.0
    best = max(score, key=score.get)
    total = max(1, elements[0].words)
    return best, elements[best].words / total


# Texts are tokenized this many characters at a time (cut where no token is): a 50 MB
# articleBody as one list of its words would take a gigabyte.
_PIECE = 1 << 18
_NON_WORD = re.compile(r"\W")


def _pieces(text: str):
    """(start, end) of the pieces of `text`, `_PIECE` characters or a little more, cut where no
    token is (at a non-word character)."""
    return pieces(text, _NON_WORD, _PIECE)


def _word_runs(text: str):
    """The \\w+ tokens (ASCII lower case) of `text` as lists of a piece's tokens, each list led
    by the last two tokens of the one before, so that the lists' triples are exactly the text's."""
    tail: list[str] = []
    for start, end in _pieces(text):
        # (lower case before tokenizing: A-Z and a-z are all word characters, so the tokens are
        # the same, and one translate of the piece is far quicker than one a token)
        words = tail + _TOKEN.findall(text[start:end].translate(ASCII_LOWER))
        yield words
        tail = words[-2:]


def _title_hits(text: str, title_words: set[str]) -> tuple[int, int]:
    """(how many of the \\w+ tokens of `text`, ASCII lower case, are in `title_words`, how many
    tokens it has), a piece of a long text at a time."""
    hits = tokens = 0
    for start, end in _pieces(text):
        words = _TOKEN.findall(text[start:end].translate(ASCII_LOWER))
        hits += sum(w in title_words for w in words)
        tokens += len(words)
    return hits, tokens


def _triples(words: list[str]):
    return zip(words, words[1:], words[2:])


def _declared_shares(page: Page) -> tuple[list[float], list[float]]:
    """Per block, the share of its word triples that the page's declared texts hold, and the share
    that its summaries hold: NaN where the block has under three words or those texts have no
    triple at all.

    Only membership counts, so only the smaller side (in characters) has its triples held in a
    set: the texts' where they are no longer than the blocks' text; else the blocks', and of the
    texts' triples only those the blocks show.  The memory is that of the page's blocks, however
    long its JSON-LD (as the compiled port, native/learned_reader.cpp, does it)."""
    blocks = page.blocks
    shares = ([NAN] * len(blocks), [NAN] * len(blocks))
    if not page.declared and not page.summaries:
        return shares
    text_chars = sum(map(len, page.declared)) + sum(map(len, page.summaries))
    shown = None  # (None: the texts' triples are all kept)
    if text_chars > sum(len(b.text) for b in blocks):
        shown = set()
        for b in blocks:
            for words in _word_runs(b.text):
                shown.update(_triples(words))
    held = []  # per kind of text, the triples it holds (None: it has no triple at all)
    for texts in (page.declared, page.summaries):
        found, any_triple = set(), False
        for text in texts:
            for words in _word_runs(text):
                any_triple = any_triple or len(words) >= 3
                found.update(_triples(words) if shown is None else filter(shown.__contains__, _triples(words)))
        held.append(found if any_triple else None)
    for i, b in enumerate(blocks):
        count, hits = 0, [0, 0]
        for words in _word_runs(b.text):
            triples = list(_triples(words))
            count += len(triples)
            for k, found in enumerate(held):
                if found is not None:
                    hits[k] += sum(map(found.__contains__, triples))
        if count:
            for k, found in enumerate(held):
                if found is not None:
                    shares[k][i] = hits[k] / count
    return shares


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _is_word(c: str) -> bool:  # an ASCII word character
    return _is_digit(c) or "a" <= c <= "z" or "A" <= c <= "Z" or c == "_"


def _url_shape(url: str) -> list[float]:
    """The shape of a page's address: whether it is known, its path's segments, the words of its
    last segment (an extension of 2-5 characters left out; split at "-", "_", "."), whether the
    path holds a date (19xx or 20xx, "/" or "-", a one- or two-digit number), the longest run of
    digits in the last segment, whether it has a query, whether its path ends in "/".  The same
    procedure as the compiled port (no URL library: ASCII rules only)."""
    scheme = url.find("://")
    if scheme < 0:
        return [0.0] + [NAN] * 6
    rest = url[scheme + 3:]
    path_start = len(rest)
    for c in "/?#":
        at = rest.find(c)
        if 0 <= at < path_start:
            path_start = at
    path_end = len(rest)
    for c in "?#":
        at = rest.find(c, path_start)
        if 0 <= at < path_end:
            path_end = at
    path = rest[path_start:path_end]
    query = ""
    if path_end < len(rest) and rest[path_end] == "?":
        hash_at = rest.find("#", path_end)
        query = rest[path_end + 1:hash_at if hash_at >= 0 else len(rest)]
    segments = [piece for piece in path.split("/") if piece]
    last = segments[-1] if segments else ""
    dot = last.rfind(".")
    stem = last[:dot] if dot >= 0 and 2 <= len(last) - dot - 1 <= 5 and all(map(_is_word, last[dot + 1:])) else last
    words = sum(1 for piece in stem.replace("_", "-").replace(".", "-").split("-") if piece)
    date = 0.0
    for i in range(len(path) - 5):
        if path[i:i + 2] in ("19", "20") and _is_digit(path[i + 2]) and _is_digit(path[i + 3]) \
                and path[i + 4] in "/-" and _is_digit(path[i + 5]):
            after = i + 7 if i + 6 < len(path) and _is_digit(path[i + 6]) else i + 6
            if after >= len(path) or not _is_word(path[after]):
                date = 1.0
                break
    digits = run = 0
    for c in last:
        run = run + 1 if _is_digit(c) else 0
        digits = max(digits, run)
    return [1.0, float(len(segments)), float(words), date, float(digits), 1.0 if query else 0.0,
            1.0 if path.endswith("/") else 0.0]


def page_kind(page: Page) -> list[float]:
    """The `PAGE_KIND_FEATURES` of `page`: what it says it is (og:type: 1 an article or blog, 2 a
    product, 3 a website, 4 anything else, 0 not said; schema.org types by family), the shape of
    its declared address (canonical link, else og:url) and how many of some elements it has."""
    og = page.og_type
    if not og:
        og_kind = 0.0
    elif og.startswith("article") or og.endswith("article") or og == "blog":
        og_kind = 1.0
    elif og.startswith("product"):
        og_kind = 2.0
    elif og == "website":
        og_kind = 3.0
    else:
        og_kind = 4.0
    return ([og_kind] + [math.log1p(c) for c in page.schema_counts] + _url_shape(page.canonical or page.og_url)
            + [math.log1p(c) for c in page.tag_counts])


def _regions(page: Page, shares=(0.5, 0.8, 0.95)) -> list[int]:
    """For each share, the block-level element with the fewest words (the last of equals) that
    holds that share of the words of the page's sentence-like blocks (where its prose is), or -1."""
    elements = page.elements
    total = elements[0].long_words
    found = []
    for share in shares:
        best, best_words = -1, None
        if total:
            need = share * total
            for i, e in enumerate(elements):
                if e.block and e.long_words >= need and (best_words is None or e.words < best_words or
                                             (e.words == best_words and i > best)):
                    best, best_words = i, e.words
        found.append(best)
    return found


def _repetition(page: Page) -> tuple[dict, dict]:
    """Groups of like siblings (same parent, tag and class): per group key, its members' count
    and words."""
    count: dict = {}
    words: dict = {}
    links: dict = {}
    for e in page.elements[1:]:
        key = (e.parent, e.signature)
        count[key] = count.get(key, 0) + 1
        words[key] = words.get(key, 0) + e.words
        links[key] = links.get(key, 0) + e.link_words
    return count, words, links


def _holds(page: Page, element: int, block: int) -> bool:
    """Whether block-level `element` holds block number `block` (an element's blocks are a
    contiguous run of the page's)."""
    e = page.elements[element]
    return e.first_block <= block <= e.last_block


def block_features(page: Page, declares_item: bool = False, logprobs: list[float] | None = None) -> list[list[float]]:
    """One row of `FEATURES` per block of `page`.  `logprobs`: each block's mean log10
    probability per token under a language model of the page's language (NaN where the block
    is too short to say), or None where there is no such model."""
    blocks = page.blocks
    elements = page.elements
    root = elements[0]
    n = len(blocks)
    if not n:
        return []
    ancestry = _ancestry(page)
    page_words = max(1, root.words)
    repeats = Counter(b.text for b in blocks)
    siblings = Counter((elements[b.element].parent, elements[b.element].tag) for b in blocks)
    title_words = set(map(ascii_lower, _TOKEN.findall(page.title)))
    best, best_share = _best_container(page)
    longest: dict[int, int] = {}
    for b in blocks:
        for at in _block_parents(page, b.element, 3):
            longest[at] = max(longest.get(at, 0), b.words)
    seen_in: dict[int, int] = {}
    if best >= 0:
        first, last = elements[best].first_block, elements[best].last_block
    heading_best, heading_share = -1, 0.5
    if title_words:
        for i, b in enumerate(blocks):
            if b.inline & 256 and b.words:
                hits, tokens = _title_hits(b.text, title_words)
                share = hits / tokens
                if share > heading_share:
                    heading_best, heading_share = i, share
    regions = _regions(page)
    group_count, group_words, group_links = _repetition(page)
    top_group, top_words = None, 0
    for key, c in group_count.items():
        if c >= 3 and group_words[key] > top_words:
            top_group, top_words = key, group_words[key]
    page_extra = [root.long_words / page_words, top_words / page_words,
                  group_links[top_group] / max(1, top_words) if top_group else NAN]
    declared_shares, summary_shares = _declared_shares(page)
    kind = page_kind(page)
    if logprobs is not None:
        known = sorted(lp for lp, b in zip(logprobs, blocks) if lp == lp and b.words >= 10)
        page_logprob = known[len(known) // 2] if known else NAN
    rows = []
    words_before = 0
    for i, b in enumerate(blocks):
        words = b.words
        text = b.text
        chars = max(1, b.chars)
        row = [
            math.log1p(words), math.log1p(b.chars), b.link_words / words if words else (1.0 if b.links else 0.0),
            b.links, 1.0 if _STOPS.search(text) else 0.0, count(_STOPS, text), b.chars / words if words else 0.0,
            count(_DIGIT, text) / chars, count(_UPPER_INITIAL, text) / words if words else 0.0,
            count(_PUNCT, text) / chars, count(_SEPARATORS, text) / max(1, words), b.lines,
        ]
        inline = b.inline
        row += [1.0 if inline & bit else 0.0 for bit in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
        element = elements[b.element]
        row += [TAG_ID.get(element.tag, 0), element.depth]
        bits = ancestry[b.element]
        row += [1.0 if bits & (1 << k) else 0.0 for k in range(len(ANCESTRY_NAMES))]
        chain = _block_parents(page, b.element, 4)
        for level in range(4):
            if level < len(chain):
                e = elements[chain[level]]
                ew = max(1, e.words)
                row += [TAG_ID.get(e.tag, 0), math.log1p(e.words), e.link_words / ew, math.log1p(e.blocks),
                        e.long_blocks / max(1, e.blocks), e.elements / ew, words / ew, e.words / page_words]
            else:
                row += [NAN] * 8
        row += [i / n, words_before / page_words, (page_words - words_before - words) / page_words,
                math.log1p(root.words), math.log1p(n), root.link_words / page_words, root.long_blocks,
                repeats[text], siblings[(element.parent, element.tag)]]
        hits, tokens = _title_hits(text, title_words) if title_words else (0, 0)
        row += [hits / tokens if tokens else 0.0, 1.0 if tokens and hits == tokens else 0.0,
                1.0 if best >= 0 and _holds(page, best, i) else 0.0, best_share,
                1.0 if declares_item else 0.0]
        if best >= 0:
            side = -1.0 if i < first else (1.0 if i > last else 0.0)
            distance = (first - i if i < first else (i - last if i > last else 0)) / n
        else:
            side, distance = NAN, NAN
        chain3 = _block_parents(page, b.element, 3)
        row += [side, distance, 1.0 if i == heading_best else 0.0]
        row_regions = [1.0 if r >= 0 and _holds(page, r, i) else 0.0 for r in regions]
        # the nearest ancestor that is one of 3 or more like siblings: an item of a list, a post
        item = [NAN, NAN, NAN, NAN]
        item_links = NAN
        in_top = 0.0
        max_share = 0.0
        at, hops = b.element, 0
        while at > 0 and hops < 12:
            e = elements[at]
            key = (e.parent, e.signature)
            if group_count[key] >= 3:
                share = group_words[key] / page_words
                if item[0] != item[0]:
                    item = [math.log1p(group_count[key]), share, words / max(1, e.words), hops]
                    item_links = group_links[key] / max(1, group_words[key])
                if key == top_group:
                    in_top = 1.0
                max_share = max(max_share, share)
            at = e.parent
            hops += 1
        row += row_regions + [elements[r].words / page_words if r >= 0 else NAN for r in regions] + item + [max_share]
        row += [math.log1p(longest[chain3[k]]) if k < len(chain3) else NAN for k in (1, 2)]
        for k in (1, 2):
            if k < len(chain3):
                seen = seen_in.get(chain3[k], 0)
                seen_in[chain3[k]] = seen + 1
                row.append(seen / max(1, elements[chain3[k]].blocks))
            else:
                row.append(NAN)
        row += page_extra + [in_top, item_links]
        for j in (i - 1, i + 1):
            if 0 <= j < n:
                o = blocks[j]
                row += [math.log1p(o.words), o.link_words / o.words if o.words else 1.0,
                        1.0 if _STOPS.search(o.text) else 0.0, 1.0 if o.element == b.element else 0.0]
            else:
                row += [NAN] * 4
        row += [declared_shares[i], summary_shares[i]]
        row += kind
        if logprobs is None:
            row += [NAN, NAN]
        else:
            lp = logprobs[i]
            row += [lp, lp - page_logprob]
        words_before += words
        rows.append(row)
    return rows
