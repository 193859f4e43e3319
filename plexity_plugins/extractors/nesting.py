"""A bound on the nesting of lexbor's tree, for the readers that hand it to resiliparse (``dense``, ``fast``).

resiliparse's main-content pass takes, for each ``<div>`` it visits (and ``<ul>``, ``<article>``,
``<footer>``), the text of the element's whole subtree: its cost is the page's size times its
nesting depth, and lexbor nests as deep as the markup says.  A page of 10,000 nested ``<div>``s
took 3 s in ``dense``, 20,000 took 16 s, 100,000 the time limit.  Browsers stop nesting (Chromium
at 512 levels), so does the learned reader (`learned.segment.MAX_DEPTH`): here `parse_tree`
flattens what lexbor would nest deeper than `MAX_DEPTH` levels, before anything reads the tree, and
fewer for a page so large, or of so many tags, that its size times that depth would cost more
(`depth_limit`).

Deciding costs little on an ordinary page: `markup_depth` (compiled: a pass over the markup,
~0.2 ms a page) bounds the depth from above, and only a page it cannot clear (17 of the 2,144
development pages) is asked of lexbor's tree too (a selector query, ~0.8 ms).  A page deeper than
`MAX_DEPTH` is parsed again from its markup with the tags past that depth left out
(`flatten_markup`: their text stays, a block's start and end a line break), as the learned reader
reads them; a page whose markup is deeper than `SURE_DEPTH`, or that the pass cannot follow (a CDATA
section in ``<svg>``, a ``<style>`` there whose text holds a ``<``: the parser may read it as markup),
is flattened before its first parse.
A page lexbor still nests deeper (a script the parser reads past its ``</script>``: the markup
says one thing, the tree another) is refused, `ExtractionError` naming the limit: a counted skip
in milliseconds.  (The deepest of the 2,144 development pages is 56 levels deep: no ordinary page
is touched; `dense`'s and `fast`'s texts of all of them are the same as before.)
"""

from __future__ import annotations

import re

from ..errors import ExtractionError
from ..runtime import native

# Levels of elements, <html> the first.  At this depth resiliparse's main-content pass costs at most
# ~2.5 s per MB of page (its worst shape: unnamed <div>s around all of the text); 20,000 levels, 16 s
# for 0.1 MB.
MAX_DEPTH = 128
# The elements MAX_DEPTH + 1 levels deep (<html> is :root).  (lexbor matches it from each element up:
# ~0.8 ms a page, the ancestors of its elements.)
_TOO_DEEP = ":root" + " > *" * MAX_DEPTH
# ... and, since that pass costs the page's size times its depth, a large page is nested less deep: at most as many
# levels as keep its characters times its depth within MAX_DEPTH_CHARS, and its tags times its depth within
# MAX_DEPTH_TAGS (`depth_limit`).  MAX_DEPTH alone let 10 MB of text in 120 nested <div>s take dense 9.7 s of a
# core (50 MB, the size cap: past the 30 s limit), and 190,000 <b>s (1.7 MB, within markup.MAX_TAGS) 120 levels
# deep 10.6 s; at these budgets each takes ~3 s.  No development page is nested less deep for them: the largest
# (5.3 MB) may nest 75 levels, the one of the most tags (15,793) 128, and none is deeper than 56.
MAX_DEPTH_CHARS = 400_000_000
MAX_DEPTH_TAGS = 8_000_000
MIN_DEPTH = 16  # (a page of 25 MB or more, or of 500,000 tags: this deep still)
# A page whose markup nests deeper than this is flattened before lexbor parses it: lexbor's own parse
# costs the depth for each end tag it cannot match (20,000 <span>s and as many </x>: 2 s; a <div> in a
# <select>, 20,000 times: 2.2 s).  (No development page's markup says more than 395: the markup's
# depth is an upper bound, lexbor closes what the page leaves open.)
SURE_DEPTH = 1024

# The markup's tags, as HTML's tokenizer reads them (the compiled port, native/plexity_native.cpp's
# `Nesting`, follows these rules exactly):
# elements without an end tag
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
# elements whose content is text up to their end tag (<plaintext>: the rest of the page)
RAW = frozenset("script style textarea title xmp iframe noembed noframes plaintext".split())
# formatting elements, which the parser opens again after a block closed them (until their end tag)
FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
# the elements an end tag does not close past (HTML's default scope), unless it is theirs or a table's
SCOPES = frozenset("applet caption html table td th marquee object template".split())
_TABLE_ENDS = SCOPES | {"tbody", "thead", "tfoot", "tr"}
# <svg> and <math>, whose elements close themselves with "/>" (but for these HTML ones, which end them)
FOREIGN = frozenset(("svg", "math"))
_BREAKOUT = frozenset(
    "b big blockquote body br center code dd div dl dt em embed font h1 h2 h3 h4 h5 h6 head hr i img li listing "
    "menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var".split())
# the end tags the parser reads in a <select> (it ignores the others), and the start tags that close it
_IN_SELECT = frozenset(("select", "option", "optgroup"))
_CLOSE_SELECT = frozenset(("select", "input", "keygen", "textarea"))
# where a line breaks (flatten_markup): a block element's start or end tag left out
BLOCKS = frozenset(
    "address article aside blockquote caption center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend li listing main menu nav ol p pre section summary "
    "table tbody td tfoot th thead tr ul".split())
_NOT_COUNTED = frozenset(("html", "head", "body"))  # (the parser's own two levels: counted once)
_SPACE = " \t\n\f\r"
_NAME_END = _SPACE + "/>"
_SCRIPT = re.compile("<script[" + re.escape(_NAME_END) + "]", re.I | re.A)
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _tag_end(html: str, at: int) -> tuple[int, bool]:
    """(where the tag whose attributes start at `at` ends, after its ``>`` or at the page's end;
    whether it closes itself, ``/>``): HTML's tokenizer, whose quotes count only as an attribute's
    value (after ``=``), and whose ``/`` in an unquoted value is the value's."""
    n = len(html)
    slash = False
    while at < n:
        c = html[at]
        if c == ">":
            return at + 1, slash
        slash = c == "/"
        if c in _SPACE or slash:
            at += 1
            continue
        at = attribute_end(html, at)
    return n, False


def attribute_end(html: str, at: int) -> int:
    """Where the attribute at `at` of a tag ends, as HTML's tokenizer reads it: its name, then ``=`` and a
    value, quoted or not, if one follows (the one rule of the depth pass and of `markup`'s attribute count)."""
    n = len(html)
    while at < n and html[at] not in _NAME_END and html[at] != "=":  # an attribute's name
        at += 1
    while at < n and html[at] in _SPACE:
        at += 1
    if at < n and html[at] == "=":
        at += 1
        while at < n and html[at] in _SPACE:
            at += 1
        if at < n and html[at] in "\"'":
            close = html.find(html[at], at + 1)
            at = n if close < 0 else close + 1
        else:
            while at < n and html[at] not in _SPACE and html[at] != ">":
                at += 1
    return at


def _raw_end(html: str, name: str, at: int) -> int:
    """Where the end tag of raw element `name` starts (its ``<``), from `at`; the page's end if none."""
    found = re.compile("</" + name + "(?=[" + re.escape(_NAME_END) + "])", re.I | re.A).search(html, at)
    return found.start() if found else len(html)


_COMMENT_END = re.compile("--!?>")


def comment_end(html: str, at: int) -> int:
    """Where the comment whose text starts at `at` ends (after it; the page's end if it does not):
    at ``-->`` or ``--!>``, or at once for ``<!-->`` and ``<!--->``, as HTML's tokenizer ends it
    (the learned reader's too, `learned.segment`)."""
    if html.startswith(">", at) or html.startswith("->", at):
        return html.find(">", at) + 1
    # (the first of either ending in one search: looking for each alone went to the page's end for the one
    # it lacks, at every comment, and a page of 40,000 "<!---->" took the walks 6 s, 200,000 minutes)
    end = _COMMENT_END.search(html, at)
    return len(html) if end is None else end.end()


def tag_name(html: str, lt: int) -> tuple[int, int, bool]:
    """How HTML's tokenizer reads the ``<`` at `lt` (with a character after it), for the tag walkers (here and in
    `markup`): (first, end, closing) for a tag whose name is html[first:end], `closing` for an end tag; or (-1,
    where the walk goes on, False) past what is not a tag: a comment, a bogus comment (to the next ``>``), a
    ``<`` that opens nothing."""
    n = len(html)
    if html.startswith("<!--", lt):
        return -1, comment_end(html, lt + 4), False
    c = html[lt + 1]
    first = lt + 2 if c == "/" else lt + 1
    if first >= n or not ("a" <= html[first] <= "z" or "A" <= html[first] <= "Z"):
        if c in "!?/":  # a bogus comment, to the next ">"
            close = html.find(">", lt + 1)
            return -1, n if close < 0 else close + 1, False
        return -1, lt + 1, False
    end = first
    while end < n and html[end] not in _NAME_END:
        end += 1
    return first, end, c == "/"


def _double_escaped(html: str, at: int, end: int) -> bool:
    """Whether the script text html[at:end] holds ``<!--`` and then ``<script``: the parser may then
    read the ``</script>`` at `end` (and what follows) as the script's text."""
    comment = html.find("<!--", at, end)
    return comment >= 0 and _SCRIPT.search(html, comment, end) is not None


def _walk(html: str, limit: int, flatten: bool):
    """`markup_depth_python` (flatten False: the depth, stopping past `limit`) and
    `flatten_markup_python` (flatten True: the kept pieces of `html`)."""
    n = len(html)
    stack: list[tuple[str, int]] = []  # (name, levels)
    depth = 0  # the levels of the stack
    active: dict[str, int] = {}  # formatting elements opened and not yet ended, by name
    opened = 0  # their number
    dropped: dict[str, int] = {}  # (flatten) elements left out, by name, whose end tags are left out too
    deepest = 2
    foreign = 0  # <svg> and <math> elements open
    selects = 0  # <select> elements open: the parser ignores other end tags in them
    unknown = -1  # the depth of a page the walk cannot follow
    pieces: list[str] = []
    copied = 0  # (flatten) html[:copied] is in pieces
    broke = -1  # (flatten) where the last line break put in place of a tag ends

    def leave_out(start: int, end: int, name: str) -> None:
        nonlocal copied, broke
        pieces.append(html[copied:start])
        if name in BLOCKS and broke != start:
            pieces.append("<br>")
        copied = broke = end

    at = 0
    while True:
        lt = html.find("<", at)
        if lt < 0 or lt + 1 >= n:
            break
        # (in <svg> and <math> a CDATA section ends at "]]>", but in an HTML element of their <title> ... at the
        # next ">": the walk cannot tell; elsewhere it is a bogus comment, to the next ">", read by tag_name)
        if foreign and not flatten and html.startswith("<![CDATA[", lt):
            return unknown
        first, end_of_name, closing = tag_name(html, lt)
        if first < 0:
            at = end_of_name
            continue
        name = html[first:end_of_name].translate(_LOWER)
        at, closes_itself = _tag_end(html, end_of_name)
        if name in _NOT_COUNTED:
            continue
        if closing:
            if flatten and dropped.get(name):
                dropped[name] -= 1
                leave_out(lt, at, name)
                continue
            if selects and name not in _IN_SELECT:
                continue
            search = name in _TABLE_ENDS
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == name:
                    for closed, levels in stack[k:]:
                        depth -= levels
                        selects -= closed == "select"
                        foreign -= closed in FOREIGN
                    del stack[k:]
                    break
                if not search and stack[k][0] in SCOPES:
                    break
            if active.get(name):
                active[name] -= 1
                opened -= 1
            continue
        if selects and name in _CLOSE_SELECT:  # (as its end tag; a <select> is not opened)
            k = max(k for k in range(len(stack)) if stack[k][0] == "select")
            for closed, levels in stack[k:]:
                depth -= levels
                selects -= closed == "select"
                foreign -= closed in FOREIGN
            del stack[k:]
            if name == "select":
                continue
        if name in VOID or closes_itself and (name in FOREIGN or foreign and name not in _BREAKOUT):
            continue
        levels = 3 if name == "table" else 1  # (the parser puts <tbody> and <tr> in when a page leaves them out)
        if flatten and depth + levels + opened + 2 > limit:
            dropped[name] = dropped.get(name, 0) + 1
            leave_out(lt, at, name)
            continue
        stack.append((name, levels))
        depth += levels
        selects += name == "select"
        foreign += name in FOREIGN
        if name in FORMATTING:
            active[name] = active.get(name, 0) + 1
            opened += 1
        deepest = max(deepest, depth + opened + 2)
        if 0 <= limit < deepest and not flatten:
            return deepest
        if name in RAW:
            end = n if name == "plaintext" else _raw_end(html, name, at)
            # (in <svg> and <math> the parser reads its text as markup, as flattening does, but as text in an HTML
            # element of their <title>, <desc> ...: where the text holds a "<", the walk cannot tell)
            if foreign and flatten:
                continue
            if not flatten and (foreign and html.find("<", at, end) >= 0
                                or name == "script" and _double_escaped(html, at, end)):
                return unknown
            at = end
    if not flatten:
        return deepest
    pieces.append(html[copied:])
    return "".join(pieces)


def markup_depth_python(html: str, limit: int = -1) -> int:
    """How deep the HTML parser may nest `html`'s elements that hold others, at most (<html> and
    <body> counted): its tags' nesting, read as HTML's tokenizer does (comments, raw text, quoted
    attributes, ``/>`` in <svg> and <math>), an end tag closing the nearest open element of its
    name within its scope (in a <select> only its own), with a level more for each formatting element not
    yet ended (the parser opens it again in the next block) and two for a table's implied
    ``<tbody><tr>``.  Past `limit` (when not negative) it stops: that depth, or more.  -1 when it
    cannot tell: a script the parser may read past its ``</script>`` (``<!--`` then ``<script``
    in it), a CDATA section, or a raw-text element (``<title>``, ``<style>`` ...) whose text holds a
    ``<``, in ``<svg>`` or ``<math>`` (outside them a CDATA section is a bogus comment, to the next ``>``)."""
    return _walk(html, limit, False)


def flatten_markup_python(html: str, limit: int) -> str:
    """`html` without the tags `markup_depth` would count past `limit` levels (nor their end tags):
    their text stays, a block's start or end tag becomes one ``<br>``."""
    return _walk(html, limit, True)


markup_depth = native.compiled("markup_depth") or markup_depth_python
flatten_markup = native.compiled("flatten_markup") or flatten_markup_python


def parse_tree(html: str, reader: str):
    """resiliparse's `HTMLTree` of `html`, nested at most `MAX_DEPTH` levels deep (see the module's
    docstring), no element with more than `markup.MAX_ATTRIBUTES` attributes; `ExtractionError` if
    lexbor nests it deeper all the same, or (before it is parsed; the message names `reader`) if the
    page holds more than `markup.MAX_TAGS` start tags or `markup.MAX_PAGE_ATTRIBUTES` attributes."""
    from .markup import checked  # (which reads the markup with this module's rules)

    # (lexbor's tree, and what the reader does with it, grow with the page's tags and attributes)
    return parse_checked_tree(checked(html, reader))


def depth_limit(page: str) -> int:
    """How many levels deep lexbor's tree of `page` may nest: `MAX_DEPTH`, less for a page so large, or of so many
    tags, that resiliparse's pass would cost more than `MAX_DEPTH_CHARS` characters or `MAX_DEPTH_TAGS` tags times
    its depth (never less than `MIN_DEPTH`)."""
    limit = min(MAX_DEPTH, MAX_DEPTH_CHARS // max(len(page), 1))
    if len(page) > MAX_DEPTH_TAGS // MAX_DEPTH:  # (a page of fewer characters holds fewer tags)
        from .markup import start_tags

        limit = min(limit, MAX_DEPTH_TAGS // max(start_tags(page), 1))
    return max(MIN_DEPTH, limit)


def parse_checked_tree(page: str):
    """`parse_tree` of a page `markup.checked` has given back (no more options than lexbor reads in time:
    `markup.lexbor_options`)."""
    from resiliparse.parse.html import HTMLTree

    from .markup import lexbor_options

    page = lexbor_options(page)
    limit = depth_limit(page)
    too_deep = _TOO_DEEP if limit == MAX_DEPTH else ":root" + " > *" * limit
    # (the depth of the elements that hold others: what they hold, a line break or text, is one level more)
    depth = markup_depth(page, SURE_DEPTH)
    if 0 <= depth < limit:
        return HTMLTree.parse(page)
    # (a page the walk cannot follow is flattened as the flattening reads it, then lexbor's tree tells: its
    # markup may be as deep as any, and lexbor's parse of an unflattened page costs its depth)
    if 0 <= depth <= SURE_DEPTH:  # perhaps as deep: lexbor's tree tells
        tree = HTMLTree.parse(page)
        if tree.document.query_selector(too_deep) is None:
            return tree
    tree = HTMLTree.parse(flatten_markup(page, limit - 1))
    if tree.document.query_selector(too_deep) is not None:
        raise ExtractionError(f"HTML nesting limit: the parser nests this page deeper than {limit} levels")
    return tree
