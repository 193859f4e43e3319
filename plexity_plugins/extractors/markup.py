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
given back as it is (the same ``str``): an ordinary page is never touched.  Compiled
(``native/plexity_native.cpp``: ``bound_attributes``): 0.2 ms a development page.

**A page's tags.**  The parsers' trees grow with a page's elements, and so does what the readers do with them:
on a loaded 2-core machine 1,000,000 ``<p>``s took ``dense`` 17 s and 763 MiB (the 768 MiB memory ceiling),
``fast`` 8.5 s and ``tags`` 10 s (~500 MiB each), 3,000,000 ``<br>`` 1.4 GB in each of them.  trafilatura, whose
passes over lxml's tree are Python's, costs more: ~44 us of a core a ``<p>`` (~60 us of a loaded machine's time),
and a table of 10,000 x 100 cells or 600,000 ``<br>`` reached the memory ceiling in 6 s and 3 s.  A page of more
start tags than a reader reads quickly (`MAX_TAGS`: ``dense``, ``fast``, ``tags``; `MAX_TAGS_TRAFILATURA`:
``trafilatura``, and ``auto``, which runs it first) is refused before it is parsed (`refuse_many_tags`, by the
same pass: `start_tags`, ~0.2 ms a page), a counted skip naming the bound in milliseconds, not after seconds of a
core and most of the memory ceiling.  (The most on the development pages is 15,793; the learned reader refuses a
page of more than 200,000 elements itself.)
"""

from __future__ import annotations

from ..errors import ExtractionError
from ..runtime import native
from .nesting import RAW, _raw_end, attribute_end, tag_name

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
_SPACE = " \t\n\f\r"
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _attributes(html: str, at: int, limit: int) -> tuple[int, int, str]:
    """(where the tag whose attributes start at `at` ends: after its ``>``, or the page's end; where its
    attribute past `limit` starts, -1 if none; its end: ``>``, ``/>``, or "" at the page's end), as HTML's
    tokenizer reads it."""
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
                return at + 2, cut, "/>"
            at += 1
            continue
        if c == ">":
            return at + 1, cut, ">"
        count += 1
        if count == limit + 1:
            cut = at
        at = attribute_end(html, at + 1)  # (a name's first character may be "=", a quote, "<")
    return n, cut, ""


def _walk(html: str, attributes: int, tags: int) -> tuple[list[str], int]:
    """The tags of `html` as HTML's tokenizer reads them: (the pieces of `bound_attributes_python`, none when no
    tag has more than `attributes` attributes (-1: none cut); its start tags, counted up to `tags` + 1 when
    `tags` is not negative)."""
    n = len(html)
    pieces: list[str] = []
    copied = 0
    counted = 0
    at = 0
    while True:
        lt = html.find("<", at)
        if lt < 0 or lt + 1 >= n:
            break
        first, end_of_name, closing = tag_name(html, lt)
        if first < 0:
            at = end_of_name
            continue
        at, cut, ending = _attributes(html, end_of_name, attributes)
        if cut >= 0:  # (a tag the page's end cuts short stays unended: the tokenizer drops it)
            pieces.append(html[copied:cut] + ending)
            copied = at
        if closing:
            continue
        counted += 1
        if 0 <= tags < counted:
            break
        name = html[first:end_of_name].translate(_LOWER)
        if name in RAW:
            at = n if name == "plaintext" else _raw_end(html, name, at)
    if pieces:
        pieces.append(html[copied:])
    return pieces, counted


def bound_attributes_python(html: str, limit: int = MAX_ATTRIBUTES) -> str:
    """`html` with each tag's attributes past the first `limit` left out (its ``>`` or ``/>`` kept);
    `html` itself when no tag has more."""
    pieces, _ = _walk(html, limit, -1)
    return "".join(pieces) if pieces else html


def start_tags_python(html: str, limit: int = -1) -> int:
    """How many start tags `html` holds, read as `bound_attributes_python` reads them; past `limit` (when not
    negative) it stops: `limit` + 1."""
    return _walk(html, -1, limit)[1]


_bound_attributes = native.compiled("bound_attributes")
start_tags = native.compiled("start_tags") or start_tags_python


def bound_attributes(html: str, limit: int = MAX_ATTRIBUTES) -> str:
    """`bound_attributes_python`, compiled where the extension is built."""
    return _bound_attributes(html, limit) if _bound_attributes is not None else bound_attributes_python(html, limit)


def refuse_many_tags(html: str, reader: str, limit: int = MAX_TAGS) -> None:
    """`ExtractionError` naming the bound (and `reader`) if `html` holds more than `limit` start tags."""
    if start_tags(html, limit) > limit:
        others = "; another extractor (learned, dense, fast) reads it" if limit < MAX_TAGS else ""
        raise ExtractionError(f"the page has more than {limit:,} tags, past what {reader} reads{others}")
