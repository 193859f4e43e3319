"""What a page's markup holds that lexbor and libxml2 cannot take, bounded before they see it: for the
readers that hand a page to them (``dense``, ``fast``, ``trafilatura``, ``auto``, ``tags``).  (How deep
lexbor's tree may nest, which needs the tree itself, is `nesting`'s.)

**An element's attributes.**  lexbor and libxml2 compare each attribute of an element with the ones before
it (a name seen twice is dropped): their cost is the square of an element's attributes.  One ``<div>`` of
40,000 attributes took ``dense`` 4.4 s and ``trafilatura`` 9.5 s, one of 300,000 (4.4 MB) every one of
those readers past the 30 s time limit.  No real page comes near: the most attributes of one element on
the 2,144 development pages is 185 (a broken tag of unquoted classes).  So `bound_attributes` leaves out
of each tag the attributes past `MAX_ATTRIBUTES` (the first ones stay, and the tag's end) before those
parsers see the page: the page of 300,000 now takes each of them 0.04 to 0.12 s.  (The learned reader
reads attributes itself, in 0.03 s, and is not given it.)

It reads the markup as HTML's tokenizer does: comments, the raw text of ``<script>``, ``<style>`` ...
(to their end tag), an attribute's name up to a space, ``/``, ``>`` or ``=`` (its first character may be
any but those three), its value quoted or up to a space or ``>``.  A page with no tag past the bound is
given back as it is (the same ``str``): an ordinary page is never touched.

**A page's tags.**  The parsers' trees grow with a page's elements, and so does what the readers do with them:
on a loaded 2-core machine 1,000,000 ``<p>``s took ``dense`` 17 s and 763 MiB (the 768 MiB memory ceiling),
``fast`` 8.5 s and ``tags`` 10 s (~500 MiB each), 3,000,000 ``<br>`` 1.4 GB in each of them.  trafilatura, whose
passes over lxml's tree are Python's, costs more: ~44 us of a core a ``<p>`` (~60 us of a loaded machine's time),
and a table of 10,000 x 100 cells or 600,000 ``<br>`` reached the memory ceiling in 6 s and 3 s.  A page of more
start tags than a reader reads quickly (`MAX_TAGS`: ``dense``, ``fast``, ``tags``; `MAX_TAGS_TRAFILATURA`:
``trafilatura``, and ``auto``, which runs it first) is refused before it is parsed, a counted skip naming the
bound in milliseconds, not after seconds of a core and most of the memory ceiling.  (The most on the development
pages is 15,793; the learned reader refuses a page of more than 200,000 elements itself.)  The end tags HTML's tree
builder makes an element of count as the tags they are read as: each ``</br>`` is a ``<br>``, each ``</p>`` with no
``<p>`` open an empty ``<p>`` (counted against the ``<p>`` start tags before it); counting start tags only, a page of
a million stray ``</p>`` (4 MB) took ``dense`` 21 s and 646 MB, ``fast`` 6.9 s, three million the memory ceiling.
So do comments (``<!-- -->``, and the bogus ones the tokenizer reads: ``<!x>``, ``<?x>``, ``</ x>``), of which each
parser makes a node as of an element: five million ``<?x>`` (20 MB) grew ``dense`` by 840 MiB and ``tags`` by 1.6
GiB in 8.8 s of a core (the most on the development pages is 704).

**A page's attributes.**  The bound of each element's leaves a page's unbounded: lexbor holds ~240 bytes an
attribute, trafilatura's trees ~600, and 22,500 elements of 1,000 attributes (45 MB, fewer tags than either bound)
took ``dense`` and ``fast`` to the 768 MiB memory ceiling in 1.4 s (lexbor ~1.8 GB without it), 12,000 of 1,000
distinct names (36 MB) every one of those readers (``tags`` and ``trafilatura`` in 15 s).  A page whose start tags
keep more than `MAX_PAGE_ATTRIBUTES` attributes (12 times the most on the development pages, 39,076; a name said
twice in a tag counts: lexbor keeps it) is refused as a page of too many tags is, in 0.1 to 0.3 s (the learned
reader, which reads attributes itself, reads the 45 MB page in 0.5 s).

Both counts and the bound of each element's attributes are one compiled pass over the markup (`checked`, by
`read_markup`: 0.13 ms a development page; two passes took 0.23 ms), made once a page (``auto`` hands the page it
checked to both readers: it made four, 0.47 ms).
"""

from __future__ import annotations

import re

from ..errors import ExtractionError
from ..runtime import native
from .nesting import RAW, _raw_end, _tag_end, attribute_end, tag_name

# Attributes of one element kept for the third-party parsers: 5 times the most of any development page.
MAX_ATTRIBUTES = 1_000
# Start tags of a page the readers that hand it to lexbor or libxml2 read (dense, fast, tags): 12 times the most of any
# development page (15,793), as many as the learned reader's elements.  Up to it the parsers are fast: dense's worst
# shape (200,000 <p>s) takes ~2 s of a core and 180 MiB, fast and tags under a second and 150 MiB; past it their trees
# grow ~0.7 kB a tag (a million <p>s: dense 17 s and 763 MiB, on a loaded 2-core machine).
MAX_TAGS = 200_000
# ... trafilatura's (and auto's): 6 times the most of any development page.  Its worst shape (<p>s) costs ~40 us of a
# core a tag: 4 s at this bound, 14 s on a 2-core machine loaded 3 times over; 199,000 took 8.7 s, 30 s there (the
# time limit).  (A table's cell, an <li>: ~30 us; an <option>: ~14 us.)
MAX_TAGS_TRAFILATURA = 100_000
# Attributes of a page (those its start tags keep) the readers that hand it to lexbor or libxml2 read: 12 times the
# most of any development page (39,076).  At it lexbor holds ~115 MiB (dense, fast: 1 s of a core), libxml2 ~55 MiB
# (tags), trafilatura's trees ~300 MiB (2 s), with the most tags too ~150 MiB and ~420 MiB; past it they grow ~240
# bytes (~600 in trafilatura) an attribute: 12,000 elements of 1,000 (36 MB) reached the 768 MiB ceiling in each.
MAX_PAGE_ATTRIBUTES = 500_000
# <option> start tags of a page past which lexbor is given them under another name (`lexbor_options`): 2.7 times the
# most of any development page (1,854).  lexbor's tree builder looks at a <select>'s options before each one it adds:
# its time is the square of one <select>'s options (at this bound, all in one select, dense takes 0.4 s; 20,000 took
# it 6 to 10 s, 50,000, a 1 MB page, 46 s, past the 30 s time limit).
MAX_OPTIONS = 5_000
_OPTION_START = re.compile(r"<option(?=[\s/>])", re.I)
_OPTION_TAG = re.compile(r"<(/?)option(?=[\s/>])", re.I)
_SPACE = " \t\n\f\r"
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _attributes(html: str, at: int, limit: int) -> tuple[int, int, str, int]:
    """(where the tag whose attributes start at `at` ends: after its ``>``, or the page's end; where its
    attribute past `limit` starts, -1 if none; its end: ``>``, ``/>``, or "" at the page's end; how many
    attributes it has), as HTML's tokenizer reads it."""
    n = len(html)
    count = 0
    cut = -1
    while at < n:  # before an attribute's name
        c = html[at]
        if c in _SPACE:
            at += 1
            continue
        if c == "/":
            if html.startswith(">", at + 1):
                return at + 2, cut, "/>", count
            at += 1
            continue
        if c == ">":
            return at + 1, cut, ">", count
        count += 1
        if count == limit + 1:
            cut = at
        at = attribute_end(html, at + 1)  # (a name's first character may be "=", a quote, "<")
    return n, cut, "", count


def _end_tag_makes_element(html: str, first: int, end: int, open_p: int) -> tuple[bool, int]:
    """Whether the end tag named html[first:end] makes an element, as HTML's tree builder reads it: ``</br>`` is a
    ``<br>``, and a ``</p>`` with no ``<p>`` open makes an empty ``<p>`` (counted here against the ``<p>`` start
    tags before it: `open_p`, those not closed yet); and `open_p` after it."""
    if end - first == 2 and html[first:end].translate(_LOWER) == "br":
        return True, open_p
    if end - first == 1 and html[first] in "pP":
        return open_p == 0, max(open_p - 1, 0)
    return False, open_p


def read_markup_python(html: str, attributes: int = -1, tags: int = -1, total: int = -1) -> tuple[str, int, int]:
    """The tags of `html` as HTML's tokenizer reads them, in one pass: (`html` with each tag's attributes past
    the first `attributes` left out, its ``>`` or ``/>`` kept: `html` itself when no tag has more, or when the
    pass stopped; the tags that make a node of the tree: its start tags, the end tags the tree builder makes an
    element of (`_end_tag_makes_element`: ``</br>``, a ``</p>`` with no ``<p>`` open), and its comments (``<!--``,
    and the bogus ones: ``<!x>``, ``<?x>``, ``</ x>``; a doctype too); the attributes its start tags keep).
    Past `tags` such tags or `total` attributes (each when not negative) it stops: the counts then are past them.
    (-1 `attributes`: none left out.)"""
    n = len(html)
    pieces: list[str] = []
    copied = 0
    counted = 0
    kept = 0
    at = 0
    open_p = 0  # (<p> start tags not closed by a </p> yet)
    while True:
        lt = html.find("<", at)
        if lt < 0 or lt + 1 >= n:
            break
        first, end_of_name, closing = tag_name(html, lt)
        if first < 0:
            if end_of_name > lt + 1 and not html.startswith("</>", lt):  # (a comment: a node, as an element is)
                counted += 1
                if 0 <= tags < counted:
                    return html, counted, kept
            at = end_of_name
            continue
        at, cut, ending, count = _attributes(html, end_of_name, attributes)
        if cut >= 0:  # (a tag the page's end cuts short stays unended: the tokenizer drops it)
            pieces.append(html[copied:cut] + ending)
            copied = at
        if closing:
            element, open_p = _end_tag_makes_element(html, first, end_of_name, open_p)
            if element:
                counted += 1
                if 0 <= tags < counted:
                    return html, counted, kept
            continue
        counted += 1
        kept += min(count, attributes) if attributes >= 0 else count
        if 0 <= tags < counted or 0 <= total < kept:
            return html, counted, kept  # (stopped: the page is refused, not bounded)
        name = html[first:end_of_name].translate(_LOWER)
        open_p += name == "p"
        if name in RAW:
            at = n if name == "plaintext" else _raw_end(html, name, at)
    if pieces:
        pieces.append(html[copied:])
    return ("".join(pieces) if pieces else html), counted, kept


read_markup = native.compiled("read_markup") or read_markup_python


def bound_attributes(html: str, limit: int = MAX_ATTRIBUTES) -> str:
    """`html` with each tag's attributes past the first `limit` left out (its ``>`` or ``/>`` kept);
    `html` itself when no tag has more."""
    return read_markup(html, limit)[0]


def start_tags(html: str, limit: int = -1) -> int:
    """How many start tags `html` holds; past `limit` (when not negative) it stops: `limit` + 1."""
    return read_markup(html, -1, limit)[1]


# Elements whose content HTML's tokenizer reads as raw text, shown by no browser (one with frames and plugins): the
# markup of a page for a browser without frames, or without the plugin of an <embed>.  lexbor and libxml2 keep it as
# the element's text, and every reader that hands a page to them wrote it as the page's: "<p>Your browser does not
# support frames, <b>please</b> ..." in the output, tags and all.
FALLBACK = frozenset(("noframes", "noembed"))
_FALLBACK_TAG = re.compile(r"<no(?:frames|embed)(?=[\s/>])", re.I)


def without_fallback(html: str) -> str:
    """`html` without the raw text of its ``<noframes>`` and ``<noembed>`` elements (`FALLBACK`; their tags stay,
    empty), found as HTML's tokenizer finds them (not in a comment, a script ...); `html` itself when it has none
    (one search: ~0.5 ms of a 150 kB page, ~1 % of an extraction)."""
    if _FALLBACK_TAG.search(html) is None:
        return html
    pieces: list[str] = []
    n, copied, at = len(html), 0, 0
    while True:
        lt = html.find("<", at)
        if lt < 0 or lt + 1 >= n:
            break
        first, end_of_name, closing = tag_name(html, lt)
        if first < 0:
            at = end_of_name
            continue
        at = _tag_end(html, end_of_name)[0]
        if closing:
            continue
        name = html[first:end_of_name].translate(_LOWER)
        if name in FALLBACK:
            end = _raw_end(html, name, at)
            pieces.append(html[copied:at])
            copied = at = end
        elif name in RAW:
            at = n if name == "plaintext" else _raw_end(html, name, at)
    if not pieces:
        return html
    pieces.append(html[copied:])
    return "".join(pieces)


def lexbor_options(page: str) -> str:
    """`page` as lexbor may take it: the same ``str`` when it holds at most `MAX_OPTIONS` ``<option>`` start tags;
    else each ``<option>`` and ``</option>`` tag renamed ``<x-option>``, a tag HTML's tree builder ignores inside a
    ``<select>`` (an option's text stays, in its select; the readers that parse with lexbor, ``dense`` and ``fast``,
    read no select's text).  The page of 50,000 options now takes ``dense`` 0.1 s."""
    if len(_OPTION_START.findall(page)) <= MAX_OPTIONS:
        return page
    return _OPTION_TAG.sub(r"<\1x-option", page)


def dense_reads(html: str) -> bool:
    """Whether ``dense`` and ``fast`` read `html` (no more than `MAX_TAGS` tags and `MAX_PAGE_ATTRIBUTES`
    attributes): asked of a page another reader's bound refused (trafilatura's, the learned reader's), whose refusal
    names them only then (a page of millions of comments or elements is past their bound too).  A second pass, on a
    refused page only, stopping at the bound."""
    _, tags, attributes = read_markup(without_fallback(html.replace("\x00", "")), MAX_ATTRIBUTES, MAX_TAGS,
                                      MAX_PAGE_ATTRIBUTES)
    return tags <= MAX_TAGS and attributes <= MAX_PAGE_ATTRIBUTES


def checked(html: str, reader: str, max_tags: int = MAX_TAGS) -> str:
    """`html` as the parsers may take it (no NUL, no tag with more than `MAX_ATTRIBUTES` attributes, no text in a
    ``<noframes>`` or ``<noembed>``: `without_fallback`), from one pass over its markup; `ExtractionError` naming the
    bound (and `reader`) if it holds more than `max_tags` tags (start tags and comments: `read_markup`) or more than
    `MAX_PAGE_ATTRIBUTES` attributes (those each tag keeps), before it is parsed."""
    # NULs out, as HTML's tree builder leaves them out of a page's text (elsewhere they are U+FFFD, in no text a
    # reader writes): lexbor holds ~17 bytes for each NUL of a page's text and ~30 for each in a <script>, and a
    # 40 MB one took dense and fast past the 768 MiB memory ceiling (20 MB of them in a script: 600 MiB); libxml2's
    # readers had them taken out already.  (No NUL, no copy: the same str.)
    html = html.replace("\x00", "")
    html = without_fallback(html)
    page, tags, attributes = read_markup(html, MAX_ATTRIBUTES, max_tags, MAX_PAGE_ATTRIBUTES)
    if tags > max_tags:
        others = "; another extractor (dense, fast) reads it" if max_tags < MAX_TAGS and dense_reads(html) else ""
        raise ExtractionError(f"the page has more than {max_tags:,} tags, past what {reader} reads{others}")
    if attributes > MAX_PAGE_ATTRIBUTES:
        raise ExtractionError(f"the page has more than {MAX_PAGE_ATTRIBUTES:,} attributes, past what {reader} "
                              f"reads; another extractor (learned) reads it")
    return page
