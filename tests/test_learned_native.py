"""The learned reader's compiled path gives exactly what its Python reference gives.

`reading.py` reads a page through ``plexity_plugins.runtime._native`` (native/learned_reader.cpp)
where the extension is built; `segment.py`, `features.py` and `forest.py` are the reference.  Both
read the same pages here and must agree exactly: every block (text, element, counts), every
element (tag, parent, counts, signature), the title, what the head declares (JSON-LD
``articleBody`` / ``text`` strings, ``<meta>`` descriptions), ``truncated``, every feature bit for
bit (rows compared as bytes, NaN included) and a forest's probabilities (bytes too), for a forest
trained with LightGBM and for random forests built by hand over every feature, with numerical and
categorical splits and each way of reading a missing value.

The pages: the made-up pages of tests/learned_pages.py (and the same with JSON-LD and meta
descriptions), tests/article_page.py, the page set of tests/golden/pages.py, the hostile pages
of tests/hostile_pages.py, pages written for the cases of the procedure (entities, nested tables
and lists, noscript, unclosed tags, raw text, quoting, JSON string escapes valid and invalid,
meta attributes in any order and case), pages past the bounds (MAX_DEPTH, MAX_BLOCKS,
MAX_ELEMENTS), hostile JSON-LD (huge, unterminated, a million keys), and random tag soup
(hypothesis).

Without the compiled extension these tests fail (a reader that silently runs the slow path is a
defect), unless PLEXITY_PURE_PYTHON=1 turns the compiled path off on purpose.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import os
import random
import re
import struct
import time
from array import array
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from article_page import PAGE as ARTICLE_PAGE
from hostile_pages import pages as hostile_pages
from learned_pages import page as learned_page
from plexity_plugins.extractors.learned import forest as reference_forest
from plexity_plugins.extractors.learned import reading, segment, training
from plexity_plugins.extractors.learned.features import CATEGORICAL, FEATURES, block_features
from plexity_plugins.io.decoding import decode_html

HERE = Path(__file__).resolve().parent
WIDTH = len(FEATURES)
PURE = os.environ.get("PLEXITY_PURE_PYTHON") == "1"

pytestmark = pytest.mark.skipif(PURE, reason="PLEXITY_PURE_PYTHON=1: the compiled path is off on purpose")


def test_the_compiled_reader_is_built_and_reads_the_features_of_this_version():
    from plexity_plugins.runtime import native

    assert native._native is not None, f"the extension is not built: {native._IMPORT_ERROR}"
    assert native._native.LEARNED_FEATURE_COUNT == WIDTH == 146
    assert reading.COMPILED is True


# -- the two paths ------------------------------------------------------------------------------

def reference_rows(page: segment.Page, declares_item=False, logprobs=None) -> bytes:
    return array("d", [v for row in block_features(page, declares_item, logprobs) for v in row]).tobytes()


def first_difference(ours: bytes, theirs: bytes) -> str:
    a, b = memoryview(ours).cast("d"), memoryview(theirs).cast("d")
    if len(a) != len(b):
        return f"{len(a) // WIDTH} rows against {len(b) // WIDTH}"
    for i in range(len(a)):
        if struct.pack("d", a[i]) != struct.pack("d", b[i]):
            return f"block {i // WIDTH}, feature {FEATURES[i % WIDTH]}: compiled {a[i]!r}, reference {b[i]!r}"
    return "equal"


_BUILT: dict[int, tuple] = {}  # id(spec): (spec, compiled forest, reference forest)


def built_forests(spec: dict) -> tuple:
    """The compiled and the reference forest of `spec`, each built once from a copy of its own and
    then asked about every page: copying the spec and compiling the reference's Python code of its
    trees (at its first score), again for every page, were most of this file's time.  Neither
    forest keeps anything of a page it scored."""
    entry = _BUILT.get(id(spec))
    if entry is None or entry[0] is not spec:
        entry = _BUILT[id(spec)] = (spec, reading.Forest(copy.deepcopy(spec)),
                                    reference_forest.Forest(copy.deepcopy(spec)))
    return entry[1], entry[2]


def assert_same(html: str, forests=(), declares_item=False, logprobs=None) -> tuple:
    """The compiled and the reference reading of `html` agree exactly; (texts, rows)."""
    assert reading.COMPILED is True, "the compiled learned reader is not built (setup.py build_ext)"
    ref = segment.segment(html)
    ref_rows = reference_rows(ref, declares_item, logprobs)
    texts, page = reading.read_blocks(html)
    assert not isinstance(page, segment.Page)
    rows = reading.feature_rows(page, declares_item, logprobs)
    assert texts == [b.text for b in ref.blocks]
    assert reading.title(page) == ref.title
    assert page.truncated == ref.truncated
    assert page.chars == ref.chars
    assert page.declared == ref.declared
    assert page.summaries == ref.summaries
    assert page.blocks() == [tuple(getattr(b, f) for f in segment.Block.__slots__) for b in ref.blocks]
    assert page.elements() == [tuple(getattr(e, f) for f in segment.Element.__slots__) for e in ref.elements]
    assert reading.section_ends(page) == segment.section_ends(ref)
    assert rows == ref_rows, first_difference(rows, ref_rows)
    for spec in forests:
        compiled, reference = built_forests(spec)
        ours = compiled.probabilities(rows)
        theirs = reference.probabilities(reading.rows_as_lists(ref_rows))
        assert array("d", ours).tobytes() == array("d", theirs).tobytes()
    return texts, rows


# -- pages ------------------------------------------------------------------------------------------

def with_head(html: str, lines: list[str], seed: int) -> str:
    """`html` with a JSON-LD item declaring (part of) its text and meta descriptions, written in
    the ways pages write them."""
    rng = random.Random(seed)
    body = " ".join(rng.sample(lines, k=max(1, len(lines) - 1)))
    if rng.random() < 0.3:
        body = body.replace(" the ", " the\u00a0")  # (no-break space: whitespace to \w+ tokens)
    item = {"@context": "https://schema.org", "@type": rng.choice(["NewsArticle", "Article", "Review"]),
            "headline": lines[0], rng.choice(["articleBody", "text"]): body}
    if rng.random() < 0.3:
        item["comment"] = [{"@type": "Comment", "text": line} for line in rng.sample(lines, k=min(2, len(lines)))]
    script = json.dumps(item, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
    if rng.random() < 0.3:
        script = script.replace("/", "\\/").replace(" the ", " &amp; the ")
    head = f'<script type="{rng.choice(["application/ld+json", "application/LD+JSON"])}">{script}</script>'
    summary = rng.choice(lines).replace("&", "&amp;")
    attribute = rng.choice(['name="description"', "property='og:description'", "name=twitter:description",
                            'NAME="Description"', 'name="keywords"'])
    head += rng.choice([f'<meta {attribute} content="{summary}">', f"<meta content='{summary}' {attribute} />"])
    return html.replace("</title>", "</title>" + head, 1)


def learned_pages(seeds) -> list[str]:
    out = []
    for seed in seeds:
        html, lines = learned_page(seed)
        out.append(html)
        out.append(with_head(html, lines, seed))
    return out


def golden_pages() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("golden_pages_for_learned", HERE / "golden" / "pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pages()


SCRIPT = '<script type="application/ld+json">'
BODY = "<body><p>The council approved the budget for the new library on Tuesday evening.</p>" \
       "<p>A local farmer described the harvest after a dry summer.</p></body>"


def jsonld(value: str, key: str = "articleBody") -> str:
    """A page whose JSON-LD declares `value` (written as is: escapes are the test's)."""
    return f'<html><head><title>Budget</title>{SCRIPT}{{"{key}": "{value}"}}</script></head>{BODY}</html>'


JSON_VALUES = [
    "The council approved the budget for the new library on Tuesday evening.",
    r"The council approved \u0074he budget for the new library",          # \u of a letter
    r"caf\u00e9 cr\u00E8me, the council approved the budget",             # upper and lower hex
    r"emoji \ud83d\ude00 the council approved the budget",                # a surrogate pair
    r"lone \ud800 high, the council approved the budget",                # lone high surrogate
    r"lone \udc00 low, the council approved the budget",                 # lone low surrogate
    r"\ud800\u0041 high then a letter, the council approved the budget",
    r"\ud800\ud800\udc00 two highs and a low, the council approved",
    r"\ud83d\ude00",                                                      # nothing but a pair
    r"bad pair \ud800\uZZZZ the council approved",                       # second escape not hex: skipped
    r"short \u12 the council approved",                                  # not four digits: skipped
    r"at the end \u004",
    r"at the end \ud800\u00",
    r"\ud800",
    r"invalid \x41 escape, the council approved the budget",             # skipped
    r"invalid \' escape",
    r"quote \" backslash \\ slash \/ the council approved the budget",
    r"controls \b\f\n\r\t the council approved the budget",
    "raw\ttab: a control character, skipped",
    "raw\nline: skipped",
    "the council\u2028approved the budget",                               # not a JSON control character
    "\\\nbackslash then a line break: no match at all",
    "   ",                                                                # blank: skipped
    r"\n\t ",                                                             # blank once decoded: skipped
    r"\u0020\u3000",
    "the council &amp; the budget &lt;p&gt; &#x26;amp; &nosuch; &#99999999999;",
    r"escaped entity \u0026amp; the council approved the budget",
    "The Council APPROVED the Budget FOR the new LIBRARY",               # ASCII case folded in triples
    "İstanbul ſtraße Kelvin the council approved",                        # non-ASCII case kept
    "</p><p>markup in a string, the council approved the budget",
    "a b",
    "",
    "\\",
]

CASES = {
    # head: what the page says of its kind (og:type, og:url, canonical link, schema.org types)
    "page-kind": "<html><head><meta property=og:type content=' NewsArticle'><meta property=og:type content=website>"
                 "<meta name=og:url content='https://example.org/2021/03/the-council-approved.html'>"
                 "<link rel=stylesheet href='https://example.org/a.css'><link rel=canonical href='/relative'>"
                 "<link REL=' Canonical ' href=' https://example.org/news/item-123456/?page=2#top'>"
                 f'{SCRIPT}{{"@graph": [{{"@type": ["NewsArticle", "https://schema.org/WebPage"]}},'
                 ' {"@type" :\n"BreadcrumbList", "itemListElement": [{"@type": "ListItem"}]},'
                 ' {"@type": ["Product", ["nested"]]}, {"@type": "Ünïcode"}, {"@type": "Question"}]}</script>'
                 "</head><body><main itemscope itemtype='https://schema.org/Product http://schema.org/Offer'>"
                 "<h2>The budget</h2><article><p>The council approved the budget.<img src=x><input></article>"
                 "<ul><li>one<li>two</ul><time>today</time></main></body></html>",
    "page-kind-url-shapes": "<head><meta property='og:url' content='ftp://x'><meta property='og:url' "
                            "content='https://x.org/a/b.toolong'><meta property='og:url' content='https://x.org'>"
                            f"</head>{BODY}",
    "page-kind-unclosed-types": f"<head>{SCRIPT}" + '{"@type": [' * 50 + '"Article"' + '{"@type": "' * 50
                                + "</script></head>" + BODY,
    # head: JSON-LD in its forms
    "jsonld-keys": f"<html><head>{SCRIPT}"
                   '{"@graph": [{"text" : "The council approved the budget"}, {"articleBody"\n:\n'
                   '"A local farmer described the harvest"}, {"articlebody": "wrong case"}, {"Text": "no"},'
                   ' {"text": null}, {"text": 12}, {"x": "\\"text\\": \\"inside a string\\""}]}'
                   f"</script></head>{BODY}",
    "jsonld-several-scripts": f"<html><head>{SCRIPT}" '{"text": "The council approved the budget"}</script>'
                              '<script type=application/ld+json>{"articleBody": "a local farmer described"}'
                              "</script><script>var x = {\"text\": \"not JSON-LD\"};</script>"
                              '<script data-kind="ld+json">{"text": "the council approved"}</script>'
                              f"</head>{BODY}",
    "jsonld-unterminated-string": f"<html><head>{SCRIPT}" '{"text": "never ends</script>' + BODY,
    "jsonld-unterminated-script": f"<html><head><title>t</title>{SCRIPT}" '{"text": "the council approved"}',
    "jsonld-end-tag-spaced": f"<html><head>{SCRIPT}" '{"text": "the council approved the budget"}</script  >'
                             f"</head>{BODY}",
    "jsonld-key-at-end": f"<html><head>{SCRIPT}" '{"text"</script>' + BODY,
    "jsonld-keys-in-a-row": f"<html><head>{SCRIPT}" + '"text":"' * 50 + '"text": "last one the council approved"'
                            + f"</script></head>{BODY}",
    "jsonld-backslash-before-break": f"<html><head>{SCRIPT}" '{"text": "a \\\n b", "text": "the council approved"}'
                                     f"</script></head>{BODY}",
    # head: meta descriptions
    "meta-forms": "<html><head>"
                  '<meta name="description" content="The council approved the budget for the library">'
                  "<meta content='A local farmer &amp; the harvest after a dry summer' property=og:description>"
                  '<meta name=twitter:description content=unquoted&amp;value>'
                  '<meta NAME="DESCRIPTION" CONTENT="upper case names and values">'
                  '<meta name="description" content="">'
                  '<meta name="description">'
                  '<meta name="keywords" content="council, budget">'
                  '<meta name="description " content="a space after the name">'
                  '<meta name="İdescription" content="non-ASCII">'
                  '<meta property="og:description" name="author" content="either attribute counts">'
                  '<meta name="description" content="first" content="last wins">'
                  '<meta name="description" name="author" content="last name wins">'
                  "<meta><meta/><meta >"
                  '<meta name = "description" content = "spaces around the equals sign">'
                  '<meta name="description" content="a > in a value" data-x=\'y\'>'
                  f"</head>{BODY.replace('<body>', '<body><meta name=description content=in-the-body>')}",
    # body: the procedure's cases
    "entities": "<p>&amp; &lt;b&gt; &quot;q&quot; &#39; &#x27; &nbsp;x &copy; &notin; &notit; &amp &ampx &#; &#x; "
                "&#128; &#0; &#xD800; &#1114112; &#99999999999999; &#" + "9" * 5000 + "; &AMP; &Eacute;t&eacute;</p>",
    "nested-tables": "<table><tr><td>a<table><tr><td>b</td><td>c</tr></table>d</td><td>e<tr><th>f<td>g</table>"
                     "<table><tbody><tr><td>h<td>i</tbody></table>",
    "nested-lists": "<ul><li>a<ul><li>b<li>c</ul><li>d<ol><li>e</li><li>f</ol></ul><dl><dt>x<dd>y<dt>z<dd>w</dl>"
                    "<select><option>a<option>b<optgroup><option>c</select><menu><li>m</menu>",
    "noscript": "<noscript><p>Enable JavaScript to read this article.</p><div>The council approved the budget "
                "for the new library on Tuesday evening.</div></noscript><p>after</p>",
    "unclosed": "<div><p>a<p>b<div>c<span>d<a href=x>e<b>f<i>g<li>h<td>i<tr>j<pre>k\n  l",
    "pre-and-breaks": "<pre>  a  \n\n  b \t\n</pre><p>one<br>two</br>three<br/>four<br />five</p><pre><pre>x</pre>y",
    "links": "<p><a href=1>one two</a> three <a>four</a><a href=2></a></p><a href=3><p>five</p><p>six</p></a>",
    "attributes": "<div class=\"a>b\" data='x\"y'>q</div><div class=a\"b role=' Main ' hidden>r</div>"
                  "<div aria-hidden=\" TRUE \" style='DISPLAY : none'>s</div><div style=\"visibility:hidden\">t</div>"
                  "<section itemprop=\" articleBody \">u</section><div role=navigation class='  x  y '>v</div>"
                  "<div class=>w</div><div =x>y</div><div class='unterminated>z",
    "raw-text": "<title>A &amp; B   C</title><title>second</title><script>if (a<b && c>d) {}</script>"
                "<style>p{}</style><textarea><p>not a tag</p></textarea><svg><text>x</text></svg>"
                "<xmp><b>raw</b></xmp><p>after</p><iframe>in</iframe ><template><p>t</p></template>"
                "<SCRIPT>x</SCRIPT><p>end</p><script>unterminated",
    "markup-oddities": "<!doctype html><!-- a <p> comment --><?php echo 1 ?></ x><p>a < b > c</p><p>x</p y>"
                       "<P>upper</P><dIv>mixed</DiV><p/>self<div\nclass=a\n>lines</div><!--unterminated",
    "non-ascii-tags": "<ÿtag>a</ÿtag><DİV>b</dİv><x-y>c</X-Y><p>\u0130\u017f\u212a d</p>",
    "heading-and-title": "<html><head><title>Council approves budget</title></head><body><h1>Council approves "
                         "budget</h1><p>The council approves the budget.</p><h2>Other</h2></body></html>",
    "depth-past-the-bound": "<div>" * (segment.MAX_DEPTH + 50) + "deep words here." + "</div>" * 400 + "<p>after</p>",
    "spans-past-the-bound": "<div>" + "<span>" * 600 + "deep" + "</span>" * 600 + "</div><p>after</p>",
    "tables-past-the-bound": "<table><tr><td>" * 120 + "cell" + "</td></tr></table>" * 120,
    "lists-past-the-bound": "<ul><li>" * 300 + "item" + "</li></ul>" * 300,
    "script-escapes": "<p>a</p><script><!-- document.write('<script src=x></script>'); //--></script><p>b</p>"
                      "<script><!--<SCRIPT>x</SCRIPT >y--></script><script><!-->x</script><script><!---->z</script>"
                      "<script><!--<ſcript>x</ſcript>--></script><script><!-<!--<script/x></script\t>--></script/>"
                      "<p>c</p><script><!--<script>--></script><p>d</p><script><!--</script",
    "nested-templates": "<template><div><template><p>{{ t }}</p></template><p>{{ x }}</p></div></template><p>a</p>"
                        "<template><!-- <template> --><?x <template> ?><!x <template>></ <template>>< template>"
                        "<div title='</template>'>x</div><textarea></template></textarea><template/></template>"
                        "y</template><p>b</p><template shadowrootmode=open><template></template>c</template>"
                        "<template><script><!--<script></template></script></template>--></script></template>"
                        "<p>d</p><template><template>e</template><p>f</p><template></template",
    "nested-svg-and-math": "<svg><svg/><svg a=b/><math></math><svg>x</svg>y</svg><p>a</p><svg /><p>b</p>"
                           "<math><math>x</math>y</math><p>c</p><math/><p>d</p><svg><svg>e</svg><p>f</p><svg/",
    "foreign-content-ended": "<svg><g><path d=x><p>a</p><math><mrow></P>b<svg><foreignObject><div>c</div>"
                             "</foreignObject><desc/><DIV>d</DIV><svg><title><b>e</b></title></br>f<math><mtext>"
                             "<p>g</p></mtext><annotation-xml><svg><p>h</p></svg></annotation-xml></math><p>i"
                             "<svg><b\u212aockquote>j<blockquote>k<svg><font color=red>l</font></svg>m",
    "raw-in-noscript": "<noscript><iframe src=x height=0 /></noscript><p>a</p><noscript><p>b</p><script>c</NOSCRIPT >"
                       "<p>d</p><noscript><noscript></noscript><title>e</title><svg><g></noscript><p>f</p>"
                       "<noscript><template><template></template></noscript>g<iframe>h</noscript><p>i",
    # words of Han and kana: a word a two characters of each run (segment.count_words), runs cut by tags,
    # entities, spaces, marks, Latin letters and the edges of pieces counted as the reference counts them
    "han-runs": "<h1>市议会批准新图书馆建设预算</h1><p>市<b>议会</b>批准了&#x65B0;&#22270;书馆。一 二 三、四五六</p>"
                "<p><a href=x>图书馆将于明年春天开放</a>iPhone手机abc漢字123かな・カナー&#12540;</p><pre>漢字\n 漢字漢</pre>"
                "<p>𠀀𠀁𯨟𯨠𠀀</p><li>首页<li>联系我们<li>关于<td>ひらがなとカタカナの文章です",
    "ruby-annotations": "<p>子<rt>こ</rt>どもへの<ruby>虐待<rp>(</rp><RT class=x>ぎゃくたい</rt><rp>)</rp></ruby>を"
                        "なくす。</p><p>漢<rt>かん<b>字</b></rt>と<rt>no end tag, then the end</p><rt>",
}


# -- forests ------------------------------------------------------------------------------------------

SMALL = {"min_data_in_leaf": 5}


@pytest.fixture(scope="module")
def trained():
    """A block model trained on made-up pages, some with declared text: a LightGBM forest and a linear model."""
    examples = []
    for seed in range(60):
        html, lines = learned_page(seed)
        if seed % 2:
            html = with_head(html, lines, seed)
        texts, page = reading.read_blocks(html)
        rows = reading.rows_as_lists(reading.feature_rows(page))
        examples.append(training.Example(rows=rows, labels=training.label_blocks(texts, gold="\n".join(lines)),
                                         words=[round(math.expm1(row[0])) for row in rows], texts=texts))
    return json.loads(json.dumps(training.fit_blocks(examples, params=SMALL, trees=20)))


def random_forest(rows: list[list[float]], seed: int, trees: int = 30, depth: int = 6) -> dict:
    """A forest over every feature: thresholds drawn from the values the rows hold (so both ways are
    taken), categorical splits on the tag features, each kind of missing value."""
    rng = random.Random(seed)
    columns = [sorted({v for v in column if v == v}) for column in zip(*rows)] if rows else [[]] * WIDTH
    categorical = {FEATURES.index(name) for name in CATEGORICAL}
    spec_trees = []
    for _ in range(trees):
        tree = {key: [] for key in ("feature", "threshold", "categories", "missing", "default_left", "left", "right",
                                    "value")}

        def add(level: int) -> int:
            index = len(tree["feature"])
            for key in tree:
                tree[key].append(None)
            if level == depth or rng.random() < 0.1:
                tree["feature"][index], tree["value"][index] = -1, rng.uniform(-2, 2)
                tree["threshold"][index], tree["missing"][index], tree["default_left"][index] = 0.0, "none", False
                tree["left"][index] = tree["right"][index] = -1
                return index
            feature = rng.randrange(WIDTH)
            tree["feature"][index], tree["value"][index] = feature, 0.0
            if feature in categorical:
                tree["categories"][index] = sorted(rng.sample(range(70), rng.randint(1, 20)))
                tree["threshold"][index] = 0.0
            else:
                values = columns[feature]
                roll = rng.random()
                tree["threshold"][index] = (rng.choice(values) if values and roll < 0.7 else
                                            0.0 if roll < 0.8 else rng.uniform(-1, 2))
            tree["missing"][index] = rng.choice(["none", "zero", "nan"])
            tree["default_left"][index] = rng.random() < 0.5
            tree["left"][index] = add(level + 1)
            tree["right"][index] = add(level + 1)
            return index

        add(0)
        spec_trees.append(tree)
    return {"features": list(FEATURES), "trees": spec_trees, "threshold": 0.5}


def random_linear(rows: list[list[float]], seed: int) -> dict:
    """A linear model over every feature (`forest.py`'s "linear"): weights and missing values at random, half
    of the numeric terms on a log scale, the categorical terms' values drawn from those the rows hold; each
    weight over its column's largest value (the sum stays where a logistic is finite)."""
    rng = random.Random(seed)
    columns = [sorted({v for v in column if math.isfinite(v)}) for column in zip(*rows)]
    categorical = [FEATURES.index(name) for name in CATEGORICAL]
    numeric = [i for i in range(WIDTH) if i not in categorical]
    values = [rng.sample(columns[i], min(len(columns[i]), 6)) + [rng.uniform(0, 70)] for i in categorical]
    logs = [rng.randint(0, 1) for _ in numeric]
    largest = [max((abs(v) for v in columns[i]), default=0.0) for i in numeric]
    largest = [math.log1p(top) if log else top for log, top in zip(logs, largest)]
    return {"bias": rng.uniform(-1, 1), "feature": numeric, "log": logs,
            "weight": [rng.uniform(-0.5, 0.5) / (1.0 + top) for top in largest],
            "missing": [rng.uniform(-1, 1) for _ in numeric],
            "low": [rng.choice(columns[i][:3] or [0.0]) for i in numeric],
            "high": [rng.choice(columns[i][-3:] or [0.0]) for i in numeric],
            "category_feature": categorical, "category_values": values,
            "category_weights": [[rng.uniform(-1, 1) for _ in v] for v in values]}


def random_network(rows: list[list[float]], seed: int, units: int = 12) -> dict:
    """A network over every feature (`forest.py`'s "network"): numeric inputs (half on a log scale, held
    within bounds drawn from the rows), missing-value and category inputs, weights at random (some 0, so that
    units are held at 0), a bound some rows reach."""
    rng = random.Random(seed)
    columns = [sorted({v for v in column if math.isfinite(v)}) for column in zip(*rows)]
    categorical = [FEATURES.index(name) for name in CATEGORICAL]
    numeric = [i for i in range(WIDTH) if i not in categorical]
    category_feature = [i for i in categorical for _ in range(4)]
    category_value = [rng.choice(columns[i] or [0.0]) if rng.random() < 0.8 else rng.uniform(0, 70)
                      for i in category_feature]
    missing = rng.sample(numeric, 20)
    logs = [rng.randint(0, 1) for _ in numeric]
    largest = [max((abs(v) for v in columns[i]), default=0.0) for i in numeric]
    largest = [math.log1p(top) if log else top for log, top in zip(logs, largest)] + [1.0] * (
        len(missing) + len(category_feature))
    return {"feature": numeric, "log": logs,
            "low": [rng.choice(columns[i][:3] or [0.0]) for i in numeric],
            "high": [rng.choice(columns[i][-3:] or [0.0]) for i in numeric],
            "missing_feature": missing, "category_feature": category_feature, "category_value": category_value,
            "weight": [[0.0 if rng.random() < 0.2 else rng.uniform(-1, 1) / (1.0 + top) for _ in range(units)]
                       for top in largest],
            "bias": [rng.uniform(-1, 1) for _ in range(units)], "output": [rng.uniform(-1, 1) for _ in range(units)],
            "output_bias": rng.uniform(-0.5, 0.5), "bound": rng.uniform(0.5, 2.0)}


@pytest.fixture(scope="module")
def forests(trained):
    rows = []
    for html in learned_pages(range(10)) + list(CASES.values()):
        rows += block_features(segment.segment(html))
    return [trained, random_forest(rows, 1), dict(random_forest(rows, 3, trees=10), linear=random_linear(rows, 3)),
            dict(random_forest(rows, 4, trees=5), linear=random_linear(rows, 4), network=random_network(rows, 4))]


def test_the_trained_block_model_holds_a_network(trained):
    """`training.fit_blocks` gives the forest, the linear model and the network (the parity tests read all three)."""
    network = trained["network"]
    assert len(network["bias"]) == training.NETWORK_UNITS
    assert network["bound"] == training.NETWORK_BOUND * training.NETWORK_SHARE
    assert any(any(w != 0.0 for w in row) for row in network["weight"])


@pytest.fixture(scope="module")
def deep_forest(forests):
    rows = []
    for html in learned_pages(range(10)) + list(CASES.values()):
        rows += block_features(segment.segment(html))
    return random_forest(rows, 2, trees=60, depth=8)


# -- parity -------------------------------------------------------------------------------------------

def test_made_up_pages_with_and_without_declared_text(forests, deep_forest):
    declared = summaries = 0
    for i, html in enumerate(learned_pages(range(150))):  # (the reference forests are slow: on some)
        texts, rows = assert_same(html, forests + [deep_forest] if i < 60 else forests if i < 150 else [])
        values = memoryview(rows).cast("d")
        declared += any(v == v for v in values[FEATURES.index("declared_share")::WIDTH])
        summaries += any(v == v for v in values[FEATURES.index("summary_share")::WIDTH])
    assert declared >= 100 and summaries >= 50  # (the new features were read, not only NaN)


def test_declared_item_and_logprobs(forests):
    for seed in range(20):
        html, lines = learned_page(seed)
        html = with_head(html, lines, seed)
        n = len(segment.segment(html).blocks)
        rng = random.Random(seed)
        logprobs = [rng.choice([math.nan, rng.uniform(-6, -1)]) for _ in range(n)]
        assert_same(html, forests, declares_item=bool(seed % 2), logprobs=logprobs)


def test_the_article_page_and_the_golden_page_set(forests):
    assert_same(ARTICLE_PAGE, forests)
    pages = golden_pages()
    assert len(pages) >= 50
    for html in pages.values():
        assert_same(html, forests)


def assert_same_neighbour_rows(rows, probabilities, words, page_row, looked=None):
    """The compiled `second_look_rows` gives numpy's `neighbour_rows`, bit for bit, for the looked
    blocks (all of them by default)."""
    import numpy as np

    from plexity_plugins.extractors.learned import page_threshold, second_look

    matrix = np.ascontiguousarray(rows, dtype=np.float64).reshape(len(probabilities), -1)
    looked = np.ones(len(probabilities), dtype=bool) if looked is None else np.asarray(looked, dtype=bool)
    ours = reading._SECOND_LOOK_ROWS(matrix, matrix.shape[1], np.asarray(probabilities, dtype=np.float64),
                                     np.asarray(words, dtype=np.float64),
                                     np.asarray(page_row[len(page_threshold.PAGE_EVIDENCE):], dtype=np.float64), looked)
    theirs = second_look.neighbour_rows(matrix, probabilities, words, page_row, looked).tobytes()
    assert ours == theirs, first_difference(ours, theirs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.45, 0.5, 0.7, 1.0]) | st.floats(0, 1),
                          st.integers(0, 3000), st.booleans()), min_size=1, max_size=80))
def test_the_second_look_s_rows_are_computed_alike_on_both_paths(blocks):
    """Any probabilities (ties, 0, 1, exactly 0.5), any words, any blocks looked at."""
    from plexity_plugins.extractors.learned import page_threshold

    probabilities = [p for p, _, _ in blocks]
    words = [w for _, w, _ in blocks]
    rows = [[float(i), float(w), 0.5] for i, w in enumerate(words)]
    page_row = [0.0] * len(page_threshold.PAGE_EVIDENCE) + [float(i) / 7 for i in range(len(page_threshold.SPREAD))]
    assert_same_neighbour_rows(rows, probabilities, words, page_row, [looked for _, _, looked in blocks])


def test_the_second_look_reads_alike_on_both_paths(trained):
    """The second look's forest (over the block forest's probabilities in context and the
    features) gives bit-equal probabilities compiled and in Python, so the same blocks are added."""
    from plexity_plugins.extractors.learned import page_threshold, second_look

    forest = reference_forest.Forest(copy.deepcopy(trained))
    pairs = []
    for seed in range(60, 100):
        html, lines = learned_page(seed)
        texts, page = reading.read_blocks(html)
        rows = reading.rows_as_lists(reading.feature_rows(page))
        example = training.Example(rows=rows, labels=training.label_blocks(texts, gold="\n".join(lines)),
                                   words=[round(math.expm1(row[0])) for row in rows], texts=texts)
        pairs.append((example, forest.probabilities(rows)))
    spec = json.loads(json.dumps(training.fit_second_look(pairs, params=SMALL)))
    compiled = second_look.SecondLook(spec, reading._NATIVE_FOREST, reading._SECOND_LOOK_ROWS)
    python = second_look.SecondLook(spec)
    assert compiled._native is not None and compiled._rows is not None and python._reference is not None
    added = 0
    for html in learned_pages(range(100, 110)) + list(CASES.values()):
        texts, page = reading.read_blocks(html)
        if not texts:
            continue
        rows = reading.rows_as_lists(reading.feature_rows(page))
        probabilities = forest.probabilities(rows)
        words = [round(math.expm1(row[0])) for row in rows]
        page_row = page_threshold.threshold_row(rows[0], probabilities, words)
        wide = second_look.neighbour_rows(rows, probabilities, words, page_row)
        assert_same_neighbour_rows(rows, probabilities, words, page_row)
        ours = compiled._native.probabilities(wide.tobytes(), wide.shape[1])
        theirs = python._reference.probabilities(wide.tolist())
        assert array("d", ours).tobytes() == array("d", theirs).tobytes()
        both = compiled.added(reading.feature_rows(page), probabilities, words, page_row)  # (compiled rows)
        assert both == python.added(rows, probabilities, words, page_row)
        assert both == compiled.added(rows, probabilities, words, page_row)  # (numpy rows, compiled trees)
        as_doubles = memoryview(reading.feature_rows(page)).cast("B").cast("d")
        assert both == compiled.added(as_doubles, probabilities, words, page_row)  # (any view of the bytes)
        added += sum(a and p < 0.5 for a, p in zip(both, probabilities))
    assert added  # (the forest trained here adds blocks: the comparison is not of empty answers)


def test_hostile_pages(forests):
    for name, body, _ in hostile_pages():
        html, _ = decode_html(body)
        assert_same(html, forests[:1] if len(html) > 1_000_000 else forests)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_cases_of_the_procedure(name, forests):
    assert_same(CASES[name], forests)


@pytest.mark.parametrize("value", JSON_VALUES)
def test_json_strings_decode_as_json_loads_does(value, forests):
    for key in ("articleBody", "text"):
        assert_same(jsonld(value, key), forests)


def test_json_strings_matter_to_the_features():
    page = segment.segment(jsonld(r"The council approved \u0074he budget for the new library on Tuesday evening."))
    assert page.declared == ["The council approved the budget for the new library on Tuesday evening."]
    texts, rows = assert_same(jsonld(r"The council approved \u0074he budget for the new library on Tuesday evening."))
    assert memoryview(rows).cast("d")[FEATURES.index("declared_share")] == 1.0
    assert segment.segment(jsonld(r"skipped \x41 the council")).declared == []


def test_pages_read_up_to_their_bounds():
    many_blocks = "<p>a" * (segment.MAX_BLOCKS + 10)
    many_elements = "<b>x</b>" * (segment.MAX_ELEMENTS + 10)
    for html in (many_blocks, many_elements):
        assert segment.segment(html).truncated
        assert_same(html)
    assert not segment.segment("<div>word</div>" * 30_000).truncated
    assert_same("<div>word</div>" * 30_000)


HOSTILE_JSONLD = {
    "a-million-keys": SCRIPT + '"text":"' * 1_000_000 + "</script>" + BODY,
    "half-a-million-keys-and-values": SCRIPT + '"text":"the council\\' * 500_000 + "</script>" + BODY,
    "unterminated-string-10mb": SCRIPT + '{"articleBody":"' + "the council approved " * 500_000 + "</script>" + BODY,
    "backslash-before-break": SCRIPT + ('"text":"' + "a" * 1000 + "\\\n") * 5000 + "</script>" + BODY,
    "escapes-10mb": SCRIPT + '{"articleBody":"' + "\\u00e9\\ud83d\\ude00\\n&amp;" * 300_000 + '"}</script>' + BODY,
    "articlebody-5mb": SCRIPT + '{"articleBody":"' + "The council approved the budget. " * 150_000 + '"}</script>'
                       + BODY,
    "many-metas": "<head>" + '<meta name="description" content="the council approved the budget">' * 50_000 + BODY,
    "unclosed-type-lists": SCRIPT + '{"@type": ["Article", ' * 200_000 + "</script>" + BODY,
    "unclosed-type-strings": SCRIPT + '"@type": "' * 200_000 + "</script>" + BODY,
    "many-links-and-types": "<head>" + "<link rel=canonical href='https://x.org/a/2020/1'>"
                            "<meta property=og:type content=article>" * 50_000 + "</head><body>"
                            + "<p itemtype='https://schema.org/Product https://schema.org/Offer'>a" * 20_000 + BODY,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_JSONLD))
def test_hostile_json_ld_is_read_alike(name):
    assert_same(HOSTILE_JSONLD[name])


def test_hostile_json_ld_is_read_in_linear_time():
    """50 MB of JSON-LD, a string that never ends, a million keys, millions of distinct word
    triples declared and shown: the compiled path reads each in time linear in its size (no scan
    is quadratic: a second a MB at most, and 2 s for the 35 MB of random words here, where a quadratic scan of a
    million keys or words would take some 10^12 steps)."""
    words = " ".join(f"w{i % 99991}x{i % 7}" for i in range(2_000_000))
    pages = {
        "50mb": SCRIPT + '{"articleBody":"' + ("lorem ipsum dolor sit amet " * 1_850_000) + '"}</script>' + BODY,
        "unterminated-50mb": SCRIPT + '{"articleBody":"' + ("lorem ipsum dolor sit amet " * 1_850_000) + BODY,
        "a-million-keys": SCRIPT + '"text":"' * 1_000_000 + "</script>" + BODY,
        "a-million-unclosed-type-lists": SCRIPT + '{"@type": [' * 1_000_000 + "</script>" + BODY,
        "random-words-declared-and-shown": SCRIPT + '{"text":"' + words + '"}</script><p>' + words + "</p>",
    }
    for name, html in pages.items():  # (CPU time: a loaded machine stretched the wall time past the bound)
        started = time.process_time()
        texts, page = reading.read_blocks(html)
        reading.feature_rows(page)
        elapsed = time.process_time() - started
        assert elapsed < len(html) / 1e6 + 5, (name, elapsed)  # (wide: a CI machine may be 3 times slower)


def test_the_reference_reads_a_20mb_articlebody_in_bounded_memory():
    """features._declared_shares holds the triples of the smaller side only (here the blocks')
    and tokenizes a text a piece at a time: a 20 MB articleBody of ~2.4 million distinct triples
    is read in ~45 MB, two copies of the text that segment decodes (a set of all its triples
    took 340 MB, and 1.2-1.4 GB for 50 MB), and gives what the compiled path gives."""
    import tracemalloc

    sentence = "The council approved the budget for the new library on Tuesday evening."
    words = " ".join(f"w{i % 99991}x{i % 7}" + (" " + sentence if i % 1000 == 0 else "")
                     for i in range(2_400_000))
    html = f'<html><head><title>Budget</title>{SCRIPT}{{"articleBody": "{words}"}}</script></head>{BODY}</html>'
    del words
    assert len(html) > 20_000_000
    tracemalloc.start()
    try:
        ref = segment.segment(html)
        ref_rows = reference_rows(ref)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(ref.declared[0]) > 20_000_000 and ref.summaries == []
    assert peak < 150_000_000, f"{peak / 1e6:.0f} MB"
    del ref
    texts, page = reading.read_blocks(html)
    rows = reading.feature_rows(page)
    assert rows == ref_rows, first_difference(rows, ref_rows)
    assert memoryview(rows).cast("d")[FEATURES.index("declared_share")] == 1.0


def test_texts_read_a_piece_at_a_time_give_the_same_features(monkeypatch):
    """With pieces of a few characters, every triple crosses a cut: the reference's features are
    still exactly the compiled path's (texts indexed, blocks indexed, blocks of many pieces)."""
    from plexity_plugins.extractors.learned import features

    rng = random.Random(5)
    words = " ".join(rng.choice(["the", "Council", "approved", "BUDGET", "w1", "Ünï", "x_y", "ŞEHİR"])
                     for _ in range(2000))
    pages = learned_pages(range(6)) + [
        SCRIPT + '{"text":"' + words + '"}</script><p>' + words[:3000] + "</p><p>" + words[-2000:] + "</p>",
        SCRIPT + '{"text":"' + words[:300] + '"}</script><p>' + words + "</p><p>" + words[100:900] + "</p>",
        SCRIPT + '{"text":"' + words + '"}</script><meta name=description content="' + words[:999] + '"><p>'
        + words[:5000] + "</p>",
    ]
    for piece in (1, 2, 3, 7, 64):
        monkeypatch.setattr(features, "_PIECE", piece)
        for html in pages:
            assert_same(html)


# -- the reference's pattern for declared strings --------------------------------------------------

_PLAIN_DECLARED = re.compile(r'"(?:articleBody|text)"\s*:\s*"((?:[^"\\]|\\.)*)"')


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(['"text"', '"articleBody"', ":", " ", "\n", '"', "\\", "\\\n", "a", "é", "\\u",
                                 '\\"', "}", "\t"]), max_size=40))
def test_the_possessive_pattern_matches_what_the_plain_one_matches(pieces):
    """segment._DECLARED is written with possessive runs (the plain pattern keeps a backtracking
    entry per character: gigabytes on a 50 MB string); it finds the same strings."""
    text = "".join(pieces)
    assert [m.span(1) for m in segment._DECLARED.finditer(text)] == \
        [m.span(1) for m in _PLAIN_DECLARED.finditer(text)]
    for start in range(0, len(text), 7):
        end = len(text) - start // 2
        assert [m.span(1) for m in segment._DECLARED.finditer(text, start, end)] == \
            [m.span(1) for m in _PLAIN_DECLARED.finditer(text, start, end)]


# -- random pages (hypothesis) ---------------------------------------------------------------------

_TAGS = ["p", "div", "li", "ul", "ol", "td", "tr", "th", "table", "tbody", "dl", "dt", "dd", "h1", "h2", "pre", "a",
         "b", "em", "i", "span", "br", "hr", "img", "meta", "script", "style", "title", "noscript", "textarea",
         "option", "select", "optgroup", "article", "nav", "main", "aside", "header", "footer", "section", "form",
         "button", "label", "blockquote", "figure", "code", "small", "time", "cite", "svg", "body", "html", "head",
         "listing", "ÿtag", "x-y", "P", "DIV", "Br", "rt", "rp", "ruby", "RT", "link", "LINK", "input", "h2", "li"]
_ATTRIBUTES = ["", "class='a b'", 'class="post"', "class=post", "role=main", "role='navigation'", "hidden",
               "aria-hidden=TRUE", "style='display:none'", 'style="visibility : hidden"', "itemprop=articleBody",
               "itemprop=' text '", "href='/x'", "name=description", "property='og:description'",
               'content="The council approved &amp; the budget"', "content='a b c d'", "type=application/ld+json",
               "type='application/LD+JSON'", 'data-x="a>b"', "=", "'", '"', "x=", "NAME=Description", "cOntent=x",
               "name='twitter:description'", "/", "property=og:type", "NAME='OG:TYPE'", "property='og:url'",
               "content=' Article '", "content=product.item", "content=website",
               "content='https://x.org/news/2021-03/a-b_c.html?q=1#f'", "content='http://x.org/2020/1'",
               "rel=canonical", "REL=' Canonical '", "rel='canonical x'", "href='https://x.org/p/item-12345/'",
               "href='http:/x'", "href=' https://x.org '", "itemtype='https://schema.org/Product'",
               "itemtype='http://schema.org/ItemList https://schema.org/NEWSarticle'", "itemtype=Question"]
_TEXT = ["The council approved the budget", "a local farmer", "a", " ", "\n", "&amp;", "&lt;p&gt;", "&#x41;", "&#0;",
         "&nbsp;", "&notit;", "&#99999999;", "é", "\u0301", "😀", "Word.", "x? y! z", "1 2 3", "—", "\t", "<", ">",
         "</", "<!--", "-->", "<!doctype html>", "<?xml?>", "</ >", "& ", "İ", "ſ", "K", "\u3000", "\x00", "\x1f",
         "市议会批准了预算", "图书馆", "か", "カタカナー", "・", "漢a字", "&#x4e00;", "\U00020000", "。"]
_JSON = ["the council approved the budget", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\x", "\\n", '\\"',
         "\\\\", "\\/", "\\u12", "\t", " ", "&amp;", "a local farmer", "\\", '"text": "', '"', "</script>", "é",
         '"@type"', '"@type": ', ":", "[", "]", '"Article"', '"https://schema.org/Product"', '"ItemList", ']

_tag = st.builds(lambda closing, name, attributes, end: f"<{'/' if closing else ''}{name}"
                 f"{' ' + ' '.join(attributes) if attributes else ''}{end}",
                 st.booleans(), st.sampled_from(_TAGS), st.lists(st.sampled_from(_ATTRIBUTES), max_size=3),
                 st.sampled_from([">", ">", " >", "/>", ""]))
_jsonld = st.builds(lambda key, pieces, close: f'<script type="application/ld+json">{{"{key}": "{"".join(pieces)}"'
                    f'}}{close}',
                    st.sampled_from(["text", "articleBody", "name", "@type"]),
                    st.lists(st.sampled_from(_JSON), max_size=8), st.sampled_from(["</script>", "</SCRIPT >", ""]))
_jsonld_types = st.builds(lambda pieces, close: f'<script type="application/ld+json">{{"@type": [{"".join(pieces)}'
                          f"{close}", st.lists(st.sampled_from(_JSON), max_size=8),
                          st.sampled_from(["]}</script>", "]</script>", "</script>", ""]))
_soup = st.lists(st.one_of(_tag, _tag, st.sampled_from(_TEXT), st.text(max_size=5), _jsonld, _jsonld_types),
                 max_size=80)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_soup)
def test_random_tag_soup(pieces):
    """(1,500 pages a run, about 10 s: each run draws new ones, so the runs add up to many more.)"""
    assert_same("".join(pieces))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_JSON), st.text(max_size=4)), max_size=12), st.booleans())
def test_random_json_strings(pieces, article):
    value = "".join(pieces)
    html = jsonld(value, "articleBody" if article else "text")
    assert_same(html)
    if re.fullmatch(r'(?:[^"\\]|\\.)*', value) and "</script" not in value.lower():
        # the whole value is the body of one JSON string: json.loads decides
        try:
            decoded = json.loads('"' + value + '"')
        except ValueError:
            decoded = None
        expected = [segment.unescape(decoded)] if decoded is not None and decoded.strip() else []
        assert segment.segment(html).declared == expected


def test_a_linear_model_reads_missing_infinite_huge_and_listed_values_alike_on_both_paths():
    """The linear model beside the trees: a value that is not finite adds its term's `missing`, another is held
    within the term's [low, high], a log term takes the sign of its value, a categorical term the weight of the
    value it equals; the compiled path's sums are the
    reference's to the bit, the linear terms added after the trees, in the spec's order, with the features named
    by the spec's own list."""
    rng = random.Random(11)
    pool = [0.0, -0.0, 1.0, -3.5, 12.0, 1e300, -1e300, 5e-324, math.nan, math.inf, -math.inf, 7.0, 40.0]
    rows = [[rng.choice(pool) for _ in range(WIDTH)] for _ in range(300)]
    linear = random_linear(rows, 5)
    tree = {"feature": [-1], "threshold": [0.0], "categories": [None], "missing": ["none"], "default_left": [False],
            "left": [-1], "right": [-1], "value": [0.25]}
    names = list(reversed(FEATURES))  # (a spec naming its features in another order than the rows hold them)
    to_spec = {name: i for i, name in enumerate(names)}
    spec = {"features": names, "trees": [tree], "threshold": 0.5,
            "linear": dict(linear, feature=[to_spec[FEATURES[i]] for i in linear["feature"]],
                           category_feature=[to_spec[FEATURES[i]] for i in linear["category_feature"]])}
    ours = reading.Forest(copy.deepcopy(spec)).probabilities(array("d", [v for r in rows for v in r]).tobytes())
    reordered = [[row[FEATURES.index(name)] for name in names] for row in rows]
    assert ours == reference_forest.Forest(copy.deepcopy(spec)).probabilities(reordered)
    by_hand = []
    for row in rows:
        total = 0.25 + linear["bias"]
        for i, log, weight, missing, low, high in zip(*(linear[key] for key in ("feature", "log", "weight", "missing",
                                                                            "low", "high"))):
            if not math.isfinite(row[i]):
                total += missing
                continue
            v = min(max(row[i], low), high)
            total += weight * (math.copysign(math.log1p(abs(v)), v) if log else v)
        for i, values, weights in zip(linear["category_feature"], linear["category_values"],
                                      linear["category_weights"]):
            total += next((w for value, w in zip(values, weights) if row[i] == value), 0.0)
        by_hand.append(1 / (1 + math.exp(-total)))
    assert ours == pytest.approx(by_hand, rel=1e-9, abs=1e-12)


def test_a_linear_model_naming_a_feature_the_rows_do_not_hold_is_refused():
    from plexity_plugins.runtime.native import _native

    spec = {"features": list(FEATURES), "trees": [], "threshold": 0.5,
            "linear": {"bias": 0.0, "feature": [0], "log": [0], "weight": [1.0], "missing": [0.0], "low": [0.0],
                       "high": [1.0], "category_feature": [], "category_values": [], "category_weights": []}}
    forest = _native.Forest(dict(spec, linear=dict(spec["linear"], feature=[WIDTH + 3])))
    with pytest.raises(ValueError, match="reads feature"):
        forest.probabilities(array("d", [0.0] * WIDTH).tobytes(), WIDTH)
    for broken in ({"feature": [-1]}, {"feature": [0.5]}, {"weight": []}, {"high": []}, {"category_values": [[1.0]]}):
        with pytest.raises(ValueError):
            _native.Forest(dict(spec, linear=dict(spec["linear"], **broken)))


def test_a_network_reads_missing_infinite_huge_and_listed_values_alike_on_both_paths():
    """The network after the linear model: a numeric input that is not finite reads 0 (and its missing input 1),
    another is held within its [low, high] and read on a log scale where asked, a category input is 1 where its
    feature equals its value; units are held at 0 or above, the score within [-bound, bound].  The compiled
    path's sums are the reference's to the bit, with the features named by the spec's own list; by hand, the
    same within rounding."""
    rng = random.Random(13)
    pool = [0.0, -0.0, 1.0, -3.5, 12.0, 1e300, -1e300, 5e-324, math.nan, math.inf, -math.inf, 7.0, 40.0]
    rows = [[rng.choice(pool) for _ in range(WIDTH)] for _ in range(300)]
    linear, network = random_linear(rows, 6), random_network(rows, 6)
    tree = {"feature": [-1], "threshold": [0.0], "categories": [None], "missing": ["none"], "default_left": [False],
            "left": [-1], "right": [-1], "value": [0.25]}
    names = list(reversed(FEATURES))
    to_spec = {name: i for i, name in enumerate(names)}
    renamed = {key: [to_spec[FEATURES[i]] for i in network[key]]
               for key in ("feature", "missing_feature", "category_feature")}
    spec = {"features": names, "trees": [tree], "threshold": 0.5,
            "linear": dict(linear, feature=[to_spec[FEATURES[i]] for i in linear["feature"]],
                           category_feature=[to_spec[FEATURES[i]] for i in linear["category_feature"]]),
            "network": dict(network, **renamed)}
    ours = reading.Forest(copy.deepcopy(spec)).probabilities(array("d", [v for r in rows for v in r]).tobytes())
    reordered = [[row[FEATURES.index(name)] for name in names] for row in rows]
    assert array("d", ours).tobytes() == array("d", reference_forest.Forest(copy.deepcopy(spec)).probabilities(
        reordered)).tobytes()
    without = reading.Forest(dict(copy.deepcopy(spec), network=None)).probabilities(
        array("d", [v for r in rows for v in r]).tobytes())
    by_hand, held = [], 0
    for row, p in zip(rows, without):
        inputs = []
        for i, log, low, high in zip(*(network[key] for key in ("feature", "log", "low", "high"))):
            v = min(max(row[i], low), high) if math.isfinite(row[i]) else 0.0
            inputs.append(math.copysign(math.log1p(abs(v)), v) if log else v)
        inputs += [0.0 if math.isfinite(row[i]) else 1.0 for i in network["missing_feature"]]
        inputs += [float(row[i] == v) for i, v in zip(network["category_feature"], network["category_value"])]
        units = [max(0.0, b + sum(w[u] * x for w, x in zip(network["weight"], inputs)))
                 for u, b in enumerate(network["bias"])]
        score = network["output_bias"] + sum(o * h for o, h in zip(network["output"], units))
        held += abs(score) > network["bound"]
        score = min(max(score, -network["bound"]), network["bound"])
        by_hand.append(1 / (1 + math.exp(-(math.log(p / (1 - p)) + score))))
    assert ours == pytest.approx(by_hand, rel=1e-9, abs=1e-9)
    assert 0 < held < len(rows)  # (the bound holds some rows' scores, not all)


def test_a_malformed_network_is_refused():
    from plexity_plugins.runtime.native import _native

    network = {"feature": [0], "log": [0], "low": [0.0], "high": [1.0], "missing_feature": [], "category_feature": [],
               "category_value": [], "weight": [[1.0, -1.0]], "bias": [0.0, 0.0], "output": [1.0, 1.0],
               "output_bias": 0.0, "bound": 1.0}
    spec = {"features": list(FEATURES), "trees": [], "threshold": 0.5}
    _native.Forest(dict(spec, network=network))  # (well formed)
    forest = _native.Forest(dict(spec, network=dict(network, feature=[WIDTH + 3])))
    with pytest.raises(ValueError, match="reads feature"):
        forest.probabilities(array("d", [0.0] * WIDTH).tobytes(), WIDTH)
    for broken in ({"feature": [-1]}, {"feature": [0.5]}, {"log": []}, {"weight": [[1.0]]}, {"weight": []},
                   {"output": [1.0]}, {"category_value": [1.0]}, {"bound": "wide"}, {"output_bias": None}):
        with pytest.raises(ValueError):
            _native.Forest(dict(spec, network=dict(network, **broken)))
    with pytest.raises(TypeError):
        _native.Forest(dict(spec, network=[1.0]))


def test_categorical_splits_send_every_value_where_the_reference_does():
    """A categorical split sends a row left where its value, cut to an int, is one of the split's categories, and a
    NaN or negative value right: the compiled path reads each split of a feature and a set of categories as a column
    of its own (categories under 64 as bits, others searched), and its sums are the reference's to the bit for
    fractional, negative, NaN, huge and infinite values, and for categories past 64 and past 2**32; a row holding
    +inf there that never meets such a split is scored, beside the rows walked with it."""
    rng = random.Random(17)
    categorical = [FEATURES.index(name) for name in CATEGORICAL]
    pool = [0.0, -0.0, 1.0, 2.5, 3.0, 63.0, 63.9, 64.0, 65.0, 69.0, 100.0, 2.0 ** 40, 1e19, -1.0, -0.5, math.nan,
            -math.inf]
    rows = [[rng.choice([0.0, 0.5, 1.0, 2.0, math.nan]) for _ in range(WIDTH)] for _ in range(300)]
    for row in rows:
        for i in categorical:
            row[i] = rng.choice(pool)
    spec = random_forest(rows, 21, trees=40)
    for tree in spec["trees"]:
        for node, categories in enumerate(tree["categories"]):
            if categories is not None and rng.random() < 0.5:
                tree["categories"][node] = sorted(categories + rng.sample([64, 65, 100, 2 ** 40], 2))
    ours = reading.Forest(copy.deepcopy(spec)).probabilities(array("d", [v for r in rows for v in r]).tobytes())
    assert ours == reference_forest.Forest(copy.deepcopy(spec)).probabilities(rows)
    # (+inf in a categorical feature faults only a row that meets a categorical split: here the numeric root
    # sends the rows of 1.0 right, to a leaf)
    tag, other = categorical[0], FEATURES.index("words")
    tree = {"feature": [other, tag, -1, -1, -1], "threshold": [0.5, 0.0, 0.0, 0.0, 0.0],
            "categories": [None, [1, 70], None, None, None], "missing": ["none"] * 5, "default_left": [False] * 5,
            "left": [1, 2, -1, -1, -1], "right": [4, 3, -1, -1, -1], "value": [0.0, 0.0, 0.5, -0.5, 0.25]}
    spec = {"features": list(FEATURES), "trees": [tree], "threshold": 0.5}
    rows = []
    for k in range(12):
        row = [0.0] * WIDTH
        row[tag], row[other] = (math.inf, 1.0) if k % 3 == 0 else (float(k % 2), 0.0)
        rows.append(row)
    ours = reading.Forest(copy.deepcopy(spec)).probabilities(array("d", [v for r in rows for v in r]).tobytes())
    assert ours == reference_forest.Forest(copy.deepcopy(spec)).probabilities(rows)


def test_a_forest_fails_on_the_same_row_as_the_reference():
    """A row the forest cannot score fails the compiled path as it fails forest.py, which scores
    the rows in order: the first faulty row's fault is the error, whatever the rows after it hold
    (the compiled path walks several rows down each tree at once)."""
    tag = FEATURES.index("tag")
    categorical = {"feature": [tag, -1, -1], "threshold": [0.0] * 3, "categories": [[1], None, None],
                   "missing": ["none"] * 3, "default_left": [False] * 3, "left": [1, -1, -1],
                   "right": [2, -1, -1], "value": [0.0, 0.0, 0.0]}
    very_sure = {"feature": [-1], "threshold": [0.0], "categories": [None], "missing": ["none"],
                 "default_left": [False], "left": [-1], "right": [-1], "value": [-1000.0]}
    spec = {"features": list(FEATURES), "trees": [categorical, very_sure], "threshold": 0.5}

    def row(tag_value: float) -> list[float]:
        values = [0.0] * WIDTH
        values[tag] = tag_value
        return values

    for rows in ([row(1.0), row(math.inf)], [row(math.inf), row(1.0)], [row(2.0)] * 9 + [row(math.inf)]):
        with pytest.raises(OverflowError) as theirs:
            reference_forest.Forest(copy.deepcopy(spec)).probabilities(rows)
        with pytest.raises(OverflowError) as ours:
            reading.Forest(copy.deepcopy(spec)).probabilities(array("d", [v for r in rows for v in r]).tobytes())
        assert str(ours.value) == str(theirs.value)


# -- which blocks are kept ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def readers() -> list[reading.Forest]:
    """The shipped reader, and the same without its page threshold, without its second look, and
    without both: each way `reading.Forest.decision` decides."""
    from plexity_plugins.extractors import learned

    spec = json.loads(learned.FOREST_PATH.read_text(encoding="utf-8"))
    assert spec.get("page_threshold") and spec.get("second_look")
    return [reading.Forest(dict(spec, **{key: None for key in dropped}))
            for dropped in ((), ("page_threshold",), ("second_look",), ("page_threshold", "second_look"))]


def assert_same_kept(rows: bytes, ends: list[int], readers) -> list[bool]:
    """The compiled `learned.kept` (`reading.Forest.chooser`) keeps what its reference keeps, for
    each reader; the shipped reader's choice."""
    from plexity_plugins.extractors import learned

    choices = []
    for reader in readers:
        ours = reader.chooser(learned._POLICY).kept(rows, WIDTH, ends)
        assert ours is not None, "the compiled path left a page of the fixtures to the reference"
        assert ours == learned.kept_reference([], rows, reader, ends)
        assert learned.kept([], rows, reader, ends) == ours
        choices.append(ours)
    return choices[0]


def test_the_compiled_choice_keeps_what_the_reference_keeps_on_the_fixture_pages(readers):
    """The page's threshold, the second look and `choose`'s rules, compiled, keep the blocks the
    Python reference keeps on the made-up pages, the article page, the golden page set, the
    cases of the procedure and the hostile pages."""
    from plexity_plugins.extractors import learned

    pages = learned_pages(range(40)) + [ARTICLE_PAGE] + list(golden_pages().values()) + list(CASES.values())
    pages += [decode_html(body)[0] for _, body, _ in hostile_pages() if len(body) < 1_000_000]
    read = prose = added = 0
    for html in pages:
        texts, page = reading.read_blocks(html)
        if not texts or page.truncated:
            continue
        rows = reading.feature_rows(page, learned.declares_article_or_product(html))
        keep = assert_same_kept(rows, reading.section_ends(page), readers)
        read += 1
        prose += all(keep) and learned.all_prose(lambda index: learned.column(rows, index))
        probabilities = readers[0].probabilities(rows)
        threshold, more = readers[0].decision(rows, probabilities, [round(math.expm1(w)) for w in
                                                                    learned.column(rows, 0)])
        added += any(more) and any(k and p < threshold for k, p in zip(keep, probabilities))
    assert read >= 150 and prose and added  # (pages of prose, and pages where the second look adds blocks)


_RULE_TAGS = [float(segment.TAG_ID[name]) for name in ("h1", "h2", "h3", "p", "div", "li")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.tuples(st.sampled_from(_RULE_TAGS), st.sampled_from([0.0, 0.3, 0.5, 1.0]),
                          st.integers(0, 3), st.integers(0, 120), st.integers(0, 7), st.integers(0, 60)),
                min_size=1, max_size=40))
def test_the_compiled_choice_keeps_what_the_reference_keeps_on_made_up_rows(readers, blocks):
    """Rows drawn to reach every rule of `choose`: headings of three ranks and their sections, link
    shares about `LINKED`, footers and dialogs, lists of like items, repeated texts and links (a page of
    prose or not), sentence ends, few words and many."""
    from plexity_plugins.extractors import learned

    base = reading.rows_as_lists(reading.feature_rows(reading.read_blocks(ARTICLE_PAGE)[1]))
    names = {name: FEATURES.index(name) for name in ("tag", "link_share", "anc_footer", "anc_dialog",
                                                     "in_top_group", "repeats", "links", "ends_sentence", "words")}
    rows, ends = [], []
    n = len(blocks)
    for i, (tag, share, apart, words, marks, reach) in enumerate(blocks):
        row = list(base[i % len(base)])
        for index in learned._LINKS + learned._PARTS:
            row[index] = 0.0
        row[names["tag"]], row[names["link_share"]], row[names["words"]] = tag, share, math.log1p(words)
        row[names["anc_footer"]], row[names["anc_dialog"]] = float(apart == 1), float(apart == 2)
        row[names["in_top_group"]] = float(marks & 1)
        row[names["repeats"]] = float(1 + (marks == 6))
        row[names["links"]] = float(marks == 7)
        row[names["ends_sentence"]] = float(marks != 4)
        rows.append(row)
        ends.append(min(n - 1, i + reach))
    assert_same_kept(array("d", [v for row in rows for v in row]).tobytes(), ends, readers)
    assert_same_kept(array("d", [v for row in rows for v in row]).tobytes(), [], readers)  # (no sections known)


def test_a_page_the_compiled_choice_cannot_read_fails_as_the_reference_fails(readers):
    """A word count that is not a number is the reference's to refuse (round() of NaN), and a row
    the forest cannot score fails `kept` with the reference's error."""
    from plexity_plugins.extractors import learned

    rows = reading.rows_as_lists(reading.feature_rows(reading.read_blocks(ARTICLE_PAGE)[1]))
    rows[3][FEATURES.index("words")] = math.nan
    broken = array("d", [v for row in rows for v in row]).tobytes()
    assert readers[0].chooser(learned._POLICY).kept(broken, WIDTH, []) is None
    for choose in (learned.kept, learned.kept_reference):
        with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
            choose([], broken, readers[0], [])
    tag = FEATURES.index("tag")
    categorical = {"feature": [tag, -1, -1], "threshold": [0.0] * 3, "categories": [[1], None, None],
                   "missing": ["none"] * 3, "default_left": [False] * 3, "left": [1, -1, -1],
                   "right": [2, -1, -1], "value": [0.0, 0.0, 0.0]}
    reader = reading.Forest({"features": list(FEATURES), "trees": [categorical], "threshold": 0.5})
    rows = [[0.0] * WIDTH for _ in range(3)]
    rows[1][tag] = math.inf
    infinite = array("d", [v for row in rows for v in row]).tobytes()
    errors = []
    for choose in (learned.kept, learned.kept_reference):
        with pytest.raises(OverflowError) as error:
            choose([], infinite, reader, [])
        errors.append(str(error.value))
    assert errors[0] == errors[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.tuples(st.sampled_from([0.0, 0.05, 0.2, 0.3, 0.5, 0.7, 1.0, 1 / 3]) | st.floats(0, 1),
                                 st.integers(0, 3000)), min_size=1, max_size=80))
def test_the_page_s_threshold_row_is_computed_alike_on_both_paths(readers, blocks):
    """The page's row of `THRESHOLD_FEATURES` the compiled `kept` computes is `threshold_row`'s, bit
    for bit, for any probabilities (ties, the levels themselves, 0 and 1) and words: its sort (the
    most probable first, ties in the blocks' order) and its means (Python's own sum() of floats,
    which changed in 3.12)."""
    from plexity_plugins.extractors import learned
    from plexity_plugins.extractors.learned import page_threshold

    base = reading.rows_as_lists(reading.feature_rows(reading.read_blocks(ARTICLE_PAGE)[1]))
    rows = []
    for i, (_, words) in enumerate(blocks):
        row = list(base[i % len(base)])
        row[FEATURES.index("words")] = math.log1p(words)
        rows.append(row)
    probabilities = [p for p, _ in blocks]
    words = [round(math.expm1(row[FEATURES.index("words")])) for row in rows]
    ours = readers[0].chooser(learned._POLICY).threshold_row(array("d", [v for row in rows for v in row]).tobytes(),
                                                             WIDTH, array("d", probabilities))
    theirs = page_threshold.threshold_row(rows[0], probabilities, words)
    assert array("d", ours).tobytes() == array("d", theirs).tobytes()
