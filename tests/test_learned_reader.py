"""The learned reader (``--extractor learned``): a page cut into blocks, a row of evidence per block,
a forest of trees that keeps the page's text.  The forests here are trained in the test, with
LightGBM, on made-up pages whose text is known (tests/learned_pages.py); the shipped forest is
checked for what it must hold, not for its quality (docs/quality.md has that)."""

from __future__ import annotations

import io
import json
import math
import time  # (process_time throughout: a loaded machine stretched wall times past the bounds)
from array import array

import pytest
from warcio.warcwriter import WARCWriter

from helpers import run_plexity, run_step_stats, sample_through_run_and_clean
from learned_pages import BOILERPLATE, NAV, page
from warc_corpus import ARTICLE, response, write_warc
from plexity_plugins.errors import ExtractionError, InstallationError
from plexity_plugins.extractors import EXTRACTORS, get_extractor
from plexity_plugins.extractors import learned
from plexity_plugins.extractors.learned import forest as reference, reading, segment, training
from plexity_plugins.extractors.learned.features import FEATURES
from plexity_plugins.extractors.learned.segment import TAG_ID


def examples(seeds) -> list[training.Example]:
    out = []
    for seed in seeds:
        html, lines = page(seed)
        texts, rows, _ = learned.read_page(html)
        rows = reading.rows_as_lists(rows)
        out.append(training.Example(rows=rows, labels=training.label_blocks(texts, gold="\n".join(lines)),
                                    words=[round(math.expm1(row[0])) for row in rows], texts=texts))
    return out


SMALL = {"min_data_in_leaf": 5}


@pytest.fixture(scope="module")
def booster():
    return training.fit(examples(range(60)), trees=20, params=SMALL)


@pytest.fixture(scope="module")
def spec(booster):
    return json.loads(json.dumps(reference.from_lightgbm(booster)))


def test_a_forest_trained_on_pages_with_known_text_reads_new_pages_without_their_boilerplate(spec):
    forest = learned.Forest(spec)
    for seed in range(100, 112):
        html, lines = page(seed)
        text = learned.html_to_text_learned(html, forest=forest)
        kept = sum(line in text for line in lines)
        assert kept >= 0.9 * len(lines), (seed, text)
        assert not any(line in text.splitlines() for line in BOILERPLATE), (seed, text)
        assert not any(name in text.splitlines() for name in NAV), (seed, text)


def test_the_json_forest_predicts_exactly_what_lightgbm_predicts(booster, spec):
    import numpy as np

    forest = learned.Forest(spec)
    for seed in (200, 201, 202):
        texts, rows, _ = learned.read_page(page(seed)[0])
        ours = forest.probabilities(rows)
        theirs = booster.predict(np.frombuffer(rows).reshape(-1, len(FEATURES)))
        assert ours == pytest.approx(list(theirs), abs=1e-12)
        assert reference.Forest(json.loads(json.dumps(spec))).probabilities(reading.rows_as_lists(rows)) == \
            pytest.approx(ours, abs=1e-12)


def test_the_python_forest_follows_lightgbm_for_missing_values_zeros_categories_and_deep_trees(monkeypatch):
    """The pure-Python path turns the trees into Python code.  Each of LightGBM's rules for a
    missing value (NaN its own way, NaN as zero, zero its own way) and its categorical splits give
    LightGBM's own predictions, also where subtrees deeper than Python's nesting allows become
    functions of their own."""
    import lightgbm
    import numpy as np

    rng = np.random.default_rng(5)
    n = 4000
    x = rng.normal(size=(n, 4))
    x[:, 3] = rng.integers(0, 12, size=n)  # a categorical column
    x[rng.random(size=(n, 4)) < 0.15] = np.nan
    x[:, 1][rng.random(size=n) < 0.2] = 0.0
    y = ((np.nan_to_num(x[:, 0]) + (x[:, 1] == 0) + np.isin(x[:, 3], (2, 5, 7))) > 0.8).astype(float)
    probe = np.concatenate([x[:300], np.full((1, 4), np.nan), np.zeros((1, 4)), np.full((1, 4), -1e-36)])
    for zero_as_missing in (False, True):
        booster = lightgbm.train({"objective": "binary", "num_leaves": 63, "min_data_in_leaf": 3, "verbose": -1,
                                  "zero_as_missing": zero_as_missing, "seed": 1, "num_threads": 1},
                                 lightgbm.Dataset(x, y, categorical_feature=[3]), num_boost_round=15)
        spec = json.loads(json.dumps(reference.from_lightgbm(booster)))
        kinds = {m for tree in spec["trees"] for m, f in zip(tree["missing"], tree["feature"]) if f >= 0}
        assert ("zero" in kinds) == zero_as_missing and any(c for t in spec["trees"] for c in t["categories"])
        expected = list(booster.predict(probe))
        for depth in (50, 2):  # (2: most subtrees are functions of their own)
            monkeypatch.setattr(reference, "_MAX_DEPTH", depth)
            assert reference.Forest(json.loads(json.dumps(spec))).probabilities(probe.tolist()) == \
                pytest.approx(expected, abs=1e-12)


def test_training_is_deterministic(spec):
    again = reference.from_lightgbm(training.fit(examples(range(60)), trees=20, params=SMALL))
    assert json.dumps(again, sort_keys=True) == json.dumps(spec, sort_keys=True)


def test_the_block_model_weighs_the_forest_the_linear_model_and_the_network(spec):
    """The reader's block model (`training.fit_blocks`) is the forest with half of a block's log-odds, a logistic
    regression over the same features with a quarter, and a small network over the linear model's inputs with a
    quarter, its own log-odds held within `NETWORK_BOUND`: the forest's leaves halved, the linear model's weights
    and the network's output scaled."""
    train = examples(range(60))
    linear = training.fit_linear(train)
    network = training.fit_network(train)
    assert json.dumps(linear) == json.dumps(training.fit_linear(train))  # (deterministic)
    assert json.dumps(network) == json.dumps(training.fit_network(train))
    blended = json.loads(json.dumps(training.blend(spec, linear, network)))
    assert json.dumps(blended, sort_keys=True) == json.dumps(
        training.fit_blocks(train, params=SMALL, trees=20), sort_keys=True)
    assert training.LINEAR_SHARE == 0.5 and training.NETWORK_SHARE == 0.25
    features = spec["features"]
    alone = reference.Forest({"features": features, "trees": [], "linear": linear})
    net = reference.Forest({"features": features, "trees": [], "network": network})
    forest, both = reference.Forest(spec), learned.Forest(blended)
    for seed in (200, 201, 202):
        _, rows, _ = learned.read_page(page(seed)[0])
        listed = reading.rows_as_lists(rows)
        expected = [0.5 * forest.score(row) + 0.25 * alone.score(row) + 0.25 * net.score(row) for row in listed]
        assert all(abs(net.score(row)) <= training.NETWORK_BOUND for row in listed)
        assert [math.log(p / (1 - p)) for p in both.probabilities(rows)] == pytest.approx(expected, abs=1e-9)


def assert_tells_text_from_boilerplate(alone) -> None:
    """`alone` (a model read by `learned.Forest`) gives the made-up pages' text lines above 0.5 and their menus and
    boilerplate under it, on pages it was not trained on (at least 12 of each)."""
    seen = {"text": 0, "boilerplate": 0}
    for seed in range(100, 106):
        html, lines = page(seed)
        texts, rows, _ = learned.read_page(html)
        for text, p in zip(texts, alone.probabilities(rows)):
            if text in lines:
                assert p > 0.5, (seed, text, p)
                seen["text"] += 1
            elif text in BOILERPLATE or text in NAV:
                assert p < 0.5, (seed, text, p)
                seen["boilerplate"] += 1
    assert min(seen.values()) >= 12, seen


def test_the_network_alone_tells_made_up_text_from_boilerplate():
    """The network alone (its bound aside) learns what the forest learns on the made-up pages: the text's lines
    above 0.5, the menus and boilerplate under it (its first layer reads the features as they are)."""
    network = dict(training.fit_network(examples(range(60))), bound=1e9)
    alone = learned.Forest({"features": list(FEATURES), "trees": [], "network": network})
    assert_tells_text_from_boilerplate(alone)


def test_the_linear_model_alone_tells_made_up_text_from_boilerplate():
    """A logistic regression over the block features learns what the forest learns on the made-up pages: the
    text's lines above 0.5, the menus and boilerplate under it (its weights read the features as they are)."""
    alone = learned.Forest({"features": list(FEATURES), "trees": [], "linear": training.fit_linear(examples(range(60)))})
    assert_tells_text_from_boilerplate(alone)


def test_blocks_are_labelled_by_the_gold_text_or_by_snippets():
    texts = ["Home News Sport", "The council approved the budget on Tuesday.", "Share on Facebook"]
    assert training.label_blocks(texts, gold="The council approved the budget on Tuesday evening.") == [0, 1, 0]
    assert training.label_blocks(texts, with_=["approved the budget"], without=["Share on"]) == [-1, 1, 0]


def test_when_the_trees_keep_almost_nothing_the_largest_list_of_like_items_is_the_text():
    probabilities, words, top_group = [0.9, 0.1, 0.2, 0.1], [10, 30, 30, 30], [False, True, True, True]
    assert learned.choose(probabilities, 0.5, words, top_group) == [True, True, True, True]
    assert learned.choose(probabilities, 0.5, [learned.MIN_WORDS, 30, 30, 30], top_group) == [True, False, False, False]


def test_a_heading_goes_with_its_section_where_the_section_is_of_one_mind():
    follow = learned.headings_follow_sections
    # h1 "Budget" over a kept paragraph, h2 "Related articles" over two dropped links, h2
    # "Contact" with nothing under it before the end, an h2 over an h3 whose paragraph is kept
    levels = [1, 0, 2, 0, 0, 2, 2, 3, 0]
    keep = [True, True, True, False, False, True, True, True, True]
    page_wide = [8] * 9
    assert follow(keep, levels, page_wide) == [True, True, False, False, False, True, True, True, True]
    # a dropped heading over a section read whole is kept; over a section read in part, it stays dropped
    assert follow([False, True, True, False, True, False], [2, 0, 0, 2, 0, 0], [5] * 6) == \
        [True, True, True, False, True, False]
    # (a heading's rank bounds its section: the h1's holds the paragraph of the h3 below an h2)
    assert follow([True, True, False, True], [1, 2, 0, 0], [3] * 4) == [True, True, False, True]
    assert follow([True, True, False], [1, 2, 0], [2] * 3) == [False, False, False]
    # (and so does its parent element: an h2 alone in its box says nothing of the blocks after the box)
    assert follow([True, True, False], [1, 2, 0], [2, 1, 2]) == [False, True, False]
    words, probabilities = [4, 60, 3, 5, 5, 1, 1, 2, 40], [0.9, 0.9, 0.9, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9]
    assert learned.choose(probabilities, 0.5, words, [False] * 9, sections=(levels, page_wide))[2] is False
    assert learned.choose(probabilities, 0.5, words, [False] * 9)[2] is True  # (no sections: headings as scored)


def test_the_text_ends_with_its_own_words_not_with_headings_or_links():
    # the article's h1 and paragraphs, then "Related posts" (an h3 over teasers a script fills in) and an h2
    # "You may also like" over links the trees dropped: headings that end the text title nothing
    levels = [1, 0, 0, 3, 2, 0]
    headings = [level > 0 for level in levels]
    keep = [True, True, True, True, True, False]
    assert learned.without_trailers(keep, headings) == [True, True, True, False, False, False]
    assert learned.without_trailers([True, True, False], [True, False, False]) == [True, True, False]
    # blocks mostly of links after the text ("Read also" and its articles) go the same way, with the
    # headings among them; a block of links inside the text stays
    tags = [TAG_ID["h1"], TAG_ID["p"], TAG_ID["p"], TAG_ID["p"], TAG_ID["h3"], TAG_ID["p"], TAG_ID["p"]]
    shares = [0.0, 0.0, 1.0, 0.1, 0.0, 0.8, 0.5]
    assert learned.trailers(tags, shares) == [True, False, True, False, True, True, True]
    assert learned.without_trailers([True] * 7, learned.trailers(tags, shares)) == [True] * 4 + [False] * 3
    # (in linear time: a page of 50,000 kept headings)
    started = time.process_time()
    assert not any(learned.without_trailers([True] * 50_000, [True] * 50_000))
    assert time.process_time() - started < 2
    words, probabilities = [3, 40, 30, 2, 4, 6], [0.9, 0.9, 0.9, 0.9, 0.9, 0.1]
    sections = (levels, [5] * 6)
    assert learned.choose(probabilities, 0.5, words, [False] * 6, sections=sections,
                          trailing=headings) == keep[:3] + [False] * 3
    # unless the page would then hold fewer than MIN_WORDS words (a page of a title and a line)
    assert learned.choose(probabilities, 0.5, [3, 20, 20, 2, 4, 6], [False] * 6, sections=sections,
                          trailing=headings)[3:5] == [True] * 2
    html = ("<nav><a href='/'>Home</a> <a href='/news'>News</a></nav><article><h1>Budget approved</h1><p>"
            + "The council approved the budget for the new library. " * 8
            + "</p><div class='related'><h3>Related posts</h3></div></article>")
    assert learned.html_to_text_learned(html).splitlines()[-1].startswith("The council")
    # (the shipped forest keeps each of these tails after an article's paragraphs)
    prose = "".join(f"<p>The council approved the budget for the new library in its {n} session, after a long "
                    f"debate about costs and the opening hours that the town wants.</p>"
                    for n in ("first", "second", "third", "fourth"))
    for tail in ("<p>Read also: <a href='/a'>Library opens its doors to the public after two years of building "
                 "work</a></p>",
                 "<h3>Read also</h3><p><a href='/a'>Library opens its doors to the public after two years of building "
                 "work.</a></p><p><a href='/b'>Council elects a new chair for the coming year, the third in a row.</a></p>",
                 "<p>More: <a href='/a'>Library opens its doors</a> and <a href='/b'>Council elects a chair</a></p>"):
        text = learned.html_to_text_learned("<html><body><nav><a href='/'>Home</a> <a href='/n'>News</a></nav><article>"
                                            "<h1>Budget approved</h1>" + prose + tail + "</article></body></html>")
        assert text.splitlines()[-1].endswith("the town wants.") and "Library opens" not in text


def test_a_heading_section_ends_with_the_element_that_holds_the_heading():
    html = ("<main><h1>Results</h1><ul><li><h3>First item</h3></li><li><h3>Last item</h3></li></ul>"
            "<div class='more'><h2>More</h2><p>A paragraph under the second heading.</p></div></main>"
            "<footer><a href='/'>Home</a></footer>")
    texts, rows, page = learned.read_page(html)
    assert texts == ["Results", "First item", "Last item", "More", "A paragraph under the second heading.", "Home"]
    levels, ends = learned.heading_sections(learned.column(rows, learned.TAG), reading.section_ends(page))
    assert levels == [1, 3, 3, 2, 0, 0]
    # the h1's parent is <main>; each h3 is alone in its <li>, so its section ends with the <ul>;
    # the h2's ends with its <div>
    assert ends[0] == 4 and ends[1] == ends[2] == 2 and ends[3] == 4


def test_headings_follow_their_sections_in_linear_time():
    # each block is in at most one section of each rank: 50,000 blocks are read at most six times
    n = 50_000
    for levels in ([1] + [2, 0] * (n // 2), [1 + i % 6 for i in range(n)], [6 - i % 6 for i in range(n)],
                   [1 + i % 6 if i % 7 else 0 for i in range(n)]):
        keep = [bool(level) for level in levels[:n]]
        started = time.process_time()
        learned.headings_follow_sections(keep, levels[:n], [n - 1] * n)
        assert time.process_time() - started < 2, levels[:8]


def test_what_a_footer_or_a_dialog_holds_is_not_the_text_unless_the_page_has_no_other():
    # an article's paragraphs, then its footer (a byline, a copyright line) that the trees kept
    probabilities, words, top_group = [0.9, 0.9, 0.8, 0.7], [60, 40, 8, 6], [False] * 4
    apart = [False, False, True, True]
    assert learned.choose(probabilities, 0.5, words, top_group, apart=apart) == [True, True, False, False]
    # a page whose only text is in a footer (a shop that puts its content there) keeps it
    assert learned.choose(probabilities, 0.5, [20, 10, 30, 30], top_group, apart=apart) == [True] * 4
    html = ("<article><p>" + "The council approved the budget for the new library on Tuesday. " * 12 + "</p>"
            "<footer><p>Written by a reporter of the town's paper, who covers the council.</p></footer></article>")
    texts, rows, page = learned.read_page(html)
    assert [f > 0 for f in learned.column(rows, learned.FOOTER)] == [False, True]
    # a cookie notice or a sign-up form in a <dialog> (or an ARIA dialog) is set apart too
    notice = ("<p>We and our partners store cookies on your device to measure how this site is used.</p>"
              "<p><button>Accept all</button></p>")
    for wrapped in (f"<dialog open>{notice}</dialog>", f'<div role="alertdialog">{notice}</div>'):
        texts, rows, page = learned.read_page(html.replace("<article>", wrapped + "<article>"))
        assert learned.set_apart(learned.column(rows, learned.FOOTER), learned.column(rows, learned.DIALOG)) == \
            [True, True, False, True]


# A first-day user's page: a few paragraphs in a <body>, nothing else.
NOTE = ["The first paragraph of a small page says something plain about the weather today.",
        "The second paragraph goes on about the garden, the roses and the long summer evenings we had."]
SHORT_NOTES = ["Rain is expected this week, so bring a coat to town.",
               "Tickets for the spring concert go on sale on Monday at the front desk.",
               "The bridge will be closed for repairs until the end of the month."]


def paragraphs(*texts: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body>" + "".join(f"<p>{t}</p>" for t in texts) + "</body></html>"


def test_a_page_of_nothing_but_prose_keeps_all_its_text(tmp_path):
    # (the forest reads a block beside the page's others: of two paragraphs, the smaller lies
    # outside the region holding most of the prose, and scored as a teaser does, under 0.5)
    pages = [paragraphs(*NOTE), paragraphs(*NOTE, head="<title>Club news</title>"),
             paragraphs(*NOTE).replace("<body>", "<body><h1>A note from the club</h1>"),
             *(paragraphs(note) for note in SHORT_NOTES), paragraphs(*SHORT_NOTES[:2])]
    for html in pages:
        texts, rows, _ = learned.read_page(html)
        assert learned.all_prose(lambda index: learned.column(rows, index)), html
        assert learned.html_to_text_learned(html).splitlines() == texts, html
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "note.html").write_text(pages[0])
    done = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"), "-q")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "note.html.txt").read_text().splitlines() == NOTE


def test_any_evidence_of_boilerplate_leaves_the_page_to_the_forest():
    def prose(html: str) -> bool:
        texts, rows, _ = learned.read_page(html)
        return learned.all_prose(lambda index: learned.column(rows, index))

    assert prose(paragraphs(*NOTE))
    note = NOTE[0]
    for other in ([f"{note[:20]}<a href='/more'>{note[20:]}</a>"],  # a link
                  [note, NOTE[1], note],  # a text said twice (a repeated line)
                  ["Posted on 3 May 2024"],  # a block that holds no sentence's end (a dateline, a credit)
                  [f"<button>{note}</button>"]):  # a control
        assert not prose(paragraphs(*NOTE, *other)), other
    for part in ("nav", "aside", "header", "footer", "form", "noscript", "dialog open", "ul><li", "table><tr><td"):
        assert not prose(paragraphs(*NOTE).replace("</body>", f"<{part}><p>{note}</p></body>")), part
    assert not prose(paragraphs(note).replace("<p>", "<p hidden>"))
    # a page of headings alone (an error page: "404 Not Found") holds no prose: the forest decides
    assert not prose("<html><body><h1>404 Not Found</h1></body></html>")


def test_headings_stay_where_dropping_them_would_leave_too_little_text():
    levels, probabilities, top_group = [1, 0, 2, 0], [0.9, 0.9, 0.9, 0.1], [False] * 4
    sections = (levels, [3] * 4)
    words = [6, learned.MIN_WORDS - 10, 8, 20]
    assert learned.choose(probabilities, 0.5, words, top_group, sections=sections) == [True, True, True, False]
    assert learned.choose(probabilities, 0.5, [6, learned.MIN_WORDS, 8, 20], top_group, sections=sections) == \
        [True, True, False, False]


def test_a_page_that_shows_too_little_text_is_given_the_text_its_json_ld_declares():
    # (a news page rendered by its scripts: the saved HTML shows a menu, the article is in JSON-LD)
    sentences = [f"Paragraph {i} of the story says what the council decided and why it matters." for i in range(8)]
    body = "".join(f"<p>{s}</p>" for s in sentences).replace("council", "council &amp; its mayor")
    ld = json.dumps({"@type": "NewsArticle", "headline": "Budget", "articleBody": body})
    shell = (f'<html><head><script type="application/ld+json">{ld}</script></head>'
             f'<body><nav><a href="/">Home</a> <a href="/news">News</a></nav><div id="app"></div></body></html>')
    declared = [s.replace("council", "council & its mayor") for s in sentences]
    assert learned.html_to_text_learned(shell).splitlines() == declared
    # what the reader kept stays, and the declared text's lines follow it, each once
    kept = "Budget approved\n" + declared[0]
    assert learned.or_declared(kept, [body, body]).splitlines() == ["Budget approved"] + declared
    # a declared text of fewer than MIN_WORDS words is not the page's text
    short = shell.replace(ld, json.dumps({"@type": "NewsArticle", "articleBody": sentences[0]}))
    assert learned.html_to_text_learned(short) == ""
    # where the page shows its text, the blocks it shows are read, not what it declares
    html, lines = page(3)
    html = html.replace("<head>", f'<head><script type="application/ld+json">{ld}</script>')
    text = learned.html_to_text_learned(html)
    assert lines[1] in text and sentences[0] not in text


def test_each_page_s_threshold_label_is_the_one_that_reads_its_labelled_blocks_best():
    rows = [[0.0] * len(FEATURES) for _ in range(4)]
    listing = training.Example(rows=rows, labels=[1, 1, 0, 0], words=[20, 20, 20, 20], texts=["a", "b", "c", "d"])
    # every threshold from 0.15 to 0.3 keeps both items and drops the menus: the nearest 0.5 is the label
    assert training.best_threshold(listing, [0.3, 0.35, 0.05, 0.1]) == 0.3
    # an article whose comments score 0.6: 0.65 and above keep only the article
    article = training.Example(rows=rows, labels=[1, 1, 0, 0], words=[80, 80, 40, 40], texts=["a", "b", "c", "d"])
    assert training.best_threshold(article, [0.9, 0.8, 0.6, 0.55]) == 0.65
    # a page read as well at any threshold keeps the forest's own
    assert training.best_threshold(article, [0.99, 0.99, 0.01, 0.01]) == training.THRESHOLD


def test_a_page_threshold_forest_gives_each_page_its_threshold_and_travels_in_the_forest_s_json(spec):
    from plexity_plugins.extractors.learned import page_threshold

    train = examples(range(60, 120))
    forest = reference.Forest(json.loads(json.dumps(spec)))
    page_spec = training.fit_page_threshold([(e, forest.probabilities(e.rows)) for e in train],
                                            params={"min_data_in_leaf": 5})
    assert page_spec == training.fit_page_threshold([(e, forest.probabilities(e.rows)) for e in train],
                                                    params={"min_data_in_leaf": 5})  # deterministic
    reader_spec = json.loads(json.dumps(dict(spec, page_threshold=page_spec)))
    reader = learned.Forest(reader_spec)
    assert reader_spec == dict(spec, page_threshold=page_spec)  # (reading a spec leaves it as it was)
    assert learned.Forest(spec).page_threshold is None  # (a forest without one: its single threshold)
    for seed in range(300, 309):
        html, lines = page(seed)
        texts, rows, _ = learned.read_page(html)
        probabilities = reader.probabilities(rows)
        words = [round(math.expm1(w)) for w in learned.column(rows, 0)]
        threshold, added = reader.decision(rows, probabilities, words)
        assert page_threshold.LOWEST <= threshold <= page_threshold.HIGHEST and added is None  # (no second look)
        text = learned.html_to_text_learned(html, forest=reader)
        assert sum(line in text for line in lines) >= 0.9 * len(lines), (seed, text)
        assert not any(line in text.splitlines() for line in BOILERPLATE), (seed, text)


def test_the_second_look_reads_each_block_beside_its_neighbours_probabilities():
    import numpy as np

    from plexity_plugins.extractors.learned import second_look

    p, words = [0.9, 0.4, 0.8, 0.1, 0.1], [10, 30, 20, 0, 0]
    spread = [0.5] * len(second_look.SPREAD)
    table = second_look.context_columns(p, words, spread)
    column = {name: table[:, i] for i, name in enumerate(second_look.CONTEXT + second_look.SPREAD)}
    assert table.shape == (5, len(second_look.CONTEXT) + len(second_look.SPREAD))
    assert column["p"].tolist() == p and column["p_max"].tolist() == [0.5] * 5
    assert np.isnan(column["p_prev1"][0]) and column["p_prev1"][1] == 0.9 and column["p_next2"][2] == 0.1
    # the 0.4 between two kept blocks: its neighbours' word-weighted mean, itself left out
    assert column["p_around2"][1] == pytest.approx((0.9 * 11 + 0.8 * 21 + 0.1 * 1) / 33)
    assert column["p_sandwich5"][1] == 0.8 and np.isnan(column["p_sandwich5"][0])
    assert column["kept_back"].tolist() == [99, 1, 2, 1, 2] and column["kept_ahead"].tolist() == [2, 1, 99, 99, 99]
    # where it ranks among the page's words, the most probable first
    assert column["p_rank_words"].tolist() == [0.0, 0.5, 10 / 60, 1.0, 1.0]


@pytest.fixture(scope="module")
def second_spec(spec):
    forest = reference.Forest(json.loads(json.dumps(spec)))
    return training.fit_second_look([(e, forest.probabilities(e.rows)) for e in examples(range(60, 120))],
                                    params=SMALL)


def test_the_second_look_may_only_add_blocks_and_travels_in_the_forest_s_json(spec, second_spec):
    from plexity_plugins.extractors.learned.second_look import NEIGHBOUR_FEATURES

    assert second_spec["features"] == list(NEIGHBOUR_FEATURES) and second_spec["add_at"] == 0.5
    forest = reference.Forest(json.loads(json.dumps(spec)))
    again = training.fit_second_look([(e, forest.probabilities(e.rows)) for e in examples(range(60, 120))],
                                     params=SMALL)
    assert json.dumps(again, sort_keys=True) == json.dumps(second_spec, sort_keys=True)  # deterministic
    reader = learned.Forest(json.loads(json.dumps(dict(spec, second_look=second_spec))))
    alone = learned.Forest(spec)
    assert alone.second_look is None and reader.second_look is not None
    for seed in range(300, 309):
        html, lines = page(seed)
        texts, rows, _ = learned.read_page(html)
        probabilities = reader.probabilities(rows)
        words = [round(math.expm1(w)) for w in learned.column(rows, 0)]
        threshold, added = reader.decision(rows, probabilities, words)
        assert threshold == 0.5 and len(added) == len(texts)
        assert alone.decision(rows, probabilities, words) == (0.5, None)
        before, after = learned.kept(texts, rows, alone), learned.kept(texts, rows, reader)
        assert all(a for b, a in zip(before, after) if b)  # nothing the forest keeps is dropped
        assert after == [b or a for b, a in zip(before, added)] or sum(
            w for w, k in zip(words, before) if k) < learned.MIN_WORDS
        text = learned.html_to_text_learned(html, forest=reader)
        assert sum(line in text for line in lines) >= 0.9 * len(lines), (seed, text)
        assert not any(line in text.splitlines() for line in BOILERPLATE), (seed, text)


def test_the_shipped_forest_reads_the_features_this_version_computes_and_its_card_says_how_it_was_made():
    from plexity_plugins.extractors.learned.second_look import NEIGHBOUR_FEATURES

    forest = learned.load_forest()
    card = json.loads(learned.CARD_PATH.read_text())
    assert card["features"] == list(FEATURES) and card["command"].startswith("python scripts/reader_model/build.py")
    assert set(card["left_out_scores"]) == {"articles", "cleaneval", "traf", "wcxb"}
    assert forest.threshold == card["threshold"] == training.THRESHOLD
    # what decides after the block forest: the page's threshold and the second look, compared in the card with each alone
    assert card["after_the_forest"]["shipped"] == ["page_threshold", "second_look"]
    assert forest.page_threshold is not None and card["page_threshold"]["shipped"]
    assert forest.second_look is not None and card["second_look"]["features"] == list(NEIGHBOUR_FEATURES)
    texts, rows, _ = learned.read_page(page(7)[0])
    assert all(0.0 <= p <= 1.0 for p in forest.probabilities(rows)) and len(texts) > 3


def test_no_page_can_push_the_shipped_block_model_past_what_its_logistic_takes():
    """The shipped block model is the forest, a linear model and a network (the card says so); each linear term is bounded by
    the values it was trained on (held within [low, high], a value that is not finite its `missing`), so a block's
    log-odds stay far from where exp() overflows (about 709), whatever a hostile page's features hold."""
    spec = json.loads(learned.FOREST_PATH.read_text())
    card = json.loads(learned.CARD_PATH.read_text())
    linear = spec["linear"]
    assert card["linear"]["terms"] == len(linear["feature"]) + sum(map(len, linear["category_values"]))

    def term(value: float, log: int) -> float:
        return math.copysign(math.log1p(abs(value)), value) if log else value

    bound = abs(linear["bias"]) + sum(max(abs(w * term(low, log)), abs(w * term(high, log)), abs(missing))
                                      for w, missing, low, high, log in zip(
                                          *(linear[key] for key in ("weight", "missing", "low", "high", "log"))))
    bound += sum(max(map(abs, weights), default=0.0) for weights in linear["category_weights"])
    bound += sum(max(abs(v) for v, f in zip(tree["value"], tree["feature"]) if f < 0) for tree in spec["trees"])
    # (and the network's: its score held within its bound, NETWORK_BOUND of its own log-odds, scaled by its share)
    assert spec["network"]["bound"] == training.NETWORK_BOUND * training.NETWORK_SHARE
    bound += spec["network"]["bound"]
    assert bound < 200, bound
    forest = learned.load_forest()
    huge = [[1e300 if i % 2 else -1e300 for i in range(len(FEATURES))]] * 3
    rows = array("d", [v for row in huge for v in row]).tobytes()
    assert all(0.0 <= p <= 1.0 for p in forest.probabilities(rows))


def test_a_missing_or_stale_forest_is_a_broken_installation_that_says_how_to_rebuild_it(tmp_path, spec):
    stale = tmp_path / "forest.json"
    stale.write_text(json.dumps(dict(spec, features=list(FEATURES)[:-1] + ["a_feature_since_removed"])))
    with pytest.raises(InstallationError, match="rebuild it"):
        learned.load_forest(str(stale))
    stale.write_text(json.dumps(dict(spec, page_threshold={"features": ["a_page_feature_since_removed"], "trees": []})))
    with pytest.raises(InstallationError, match="rebuild it"):
        learned.load_forest(str(stale))
    stale.write_text(json.dumps(dict(spec, second_look={"features": ["a_context_feature_since_removed"], "trees": []})))
    with pytest.raises(InstallationError, match="rebuild it"):
        learned.load_forest(str(stale))
    with pytest.raises(InstallationError, match="cannot be read"):
        learned.load_forest(str(tmp_path / "missing.json"))


def test_it_is_an_extractor_of_every_front_end():
    from plexity_plugins.cli.run import EXTRACTOR_STEPS
    from plexity_plugins.datatrove import LearnedExtractor

    html = page(5)[0]
    assert "learned" in EXTRACTORS and get_extractor("learned") is learned.html_to_text_learned
    assert LearnedExtractor().extract(html) == learned.html_to_text_learned(html)
    assert set(EXTRACTOR_STEPS) == set(EXTRACTORS) - {"none"}


def test_a_line_break_ends_a_block_and_each_line_has_its_own_evidence():
    # a credit or a link set apart by <br> under a paragraph is labelled on its own, not kept or
    # dropped with the paragraph; inside <pre> a <br> is a line of the one block
    html = ("<div>The council met on Tuesday and voted for the plan.<br>Photo: J. Smith<br/>"
            "<a href=/more>Read more about the council</a></div><pre>line one<br>line two</pre>")
    assert blocks_of_both_paths(html) == ["The council met on Tuesday and voted for the plan.", "Photo: J. Smith",
                                          "Read more about the council", "line one\nline two"]
    _, rows, _ = learned.read_page(html)
    assert learned.column(rows, FEATURES.index("link_share")) == [0.0, 0.0, 1.0, 0.0]
    assert learned.column(rows, FEATURES.index("lines")) == [1.0, 1.0, 1.0, 2.0]


def test_a_ruby_annotation_is_a_reading_of_the_text_not_text():
    page = "<article><p>子<rt>こ</rt>どもへの<ruby>虐待<rp>(</rp><rt>ぎゃくたい</rt><rp>)</rp></ruby>をなくす。</p></article>"
    texts, _, _ = learned.read_page(page)
    assert texts == ["子どもへの虐待をなくす。"]


def test_what_a_page_says_of_its_kind_is_evidence_in_every_row():
    head = ("<head><meta property='og:type' content='Article'>"
            "<link rel=canonical href='https://example.org/news/2021/03/the-council-approved-the-budget.html'>"
            '<script type="application/ld+json">{"@type": ["NewsArticle", "https://schema.org/WebPage"]}</script>'
            "</head>")
    body = "<body><article><h2>Budget</h2><p>The council approved the budget.</p><p>It did so today.</p></article>"
    _, rows, _ = learned.read_page(head + body)
    kind = {name: learned.column(rows, FEATURES.index(name)) for name in FEATURES
            if name.startswith(("og_", "schema_", "url_", "count_"))}
    assert all(len(set(values)) == 1 for values in kind.values())  # one value a page
    said = {name: values[0] for name, values in kind.items()}
    assert said["og_kind"] == 1.0  # an article
    assert said["schema_article"] == said["schema_web"] == math.log1p(1) and said["schema_product"] == 0.0
    assert (said["url_known"], said["url_depth"], said["url_slug_words"], said["url_date"]) == (1.0, 4.0, 5.0, 1.0)
    assert said["count_p"] == math.log1p(2) and said["count_h2"] == math.log1p(1)
    _, rows, _ = learned.read_page(body)  # nothing said: no address, no kind
    assert learned.column(rows, FEATURES.index("og_kind"))[0] == 0.0
    assert learned.column(rows, FEATURES.index("url_known"))[0] == 0.0
    assert math.isnan(learned.column(rows, FEATURES.index("url_depth"))[0])


def blocks_of_both_paths(html: str) -> list[str]:
    """The block texts of `html` by the compiled path and by the Python reference (the same)."""
    texts = learned.read_page(html)[0]
    assert texts == [block.text for block in segment.segment(html).blocks]
    return texts


def test_a_script_that_writes_a_script_in_a_comment_ends_where_browsers_end_it():
    # HTML's script data escape states: after "<!--" a "<script" makes the next "</script>" part of
    # the script; "-->" ends the escape.  The first "</script>" let the rest of the script leak out
    script = ("<script><!-- document.write('<script src=x></script>'); var adslot = {\"id\": 12345}; //-->"
              "</script>")
    assert blocks_of_both_paths(f"<p>Before.</p>{script}<p>After.</p>") == ["Before.", "After."]
    assert blocks_of_both_paths("<p>a</p><script><!--<SCRIPT>x</SCRIPT >y--></script><p>b</p>") == ["a", "b"]
    # "<!-->" opens and closes the escape; a "</script>" in the escape (no "<script" before) ends it
    assert blocks_of_both_paths("<p>a</p><script><!-->x</script><p>b</p>") == ["a", "b"]
    assert blocks_of_both_paths("<p>a</p><script><!-- x</script><p>b</p>") == ["a", "b"]
    # a "<script" outside an escape changes nothing; one left open runs to the page's end, as in browsers
    assert blocks_of_both_paths("<p>a</p><script>'<script>'</script><p>b</p>") == ["a", "b"]
    assert blocks_of_both_paths("<p>a</p><script><!--<script></script><p>b</p>") == ["a"]


def test_template_contents_nest_and_a_template_in_a_comment_or_a_script_of_one_does_not_count():
    nested = "<template><div><template><p>{{ item.title }}</p></template><p>{{ x }}</p></div></template>"
    assert blocks_of_both_paths(f"<p>Before.</p>{nested}<p>After.</p>") == ["Before.", "After."]
    inert = ("<template><!-- <template> --><script>var t = '<template>';</script><textarea><template></textarea>"
             "<div title='</template>'>{{ a }}</div></template><p>After.</p>")
    assert blocks_of_both_paths(inert) == ["After."]
    assert blocks_of_both_paths("<TEMPLATE><template/>{{ a }}</Template>{{ b }}</template><p>After.</p>") == ["After."]
    # an inner template left open: the first end tag ends the skip, as before (no more text lost)
    assert blocks_of_both_paths("<template><template>{{ a }}</template><p>Shown.</p>") == ["Shown."]
    # a declarative shadow root is shown by browsers, not inert: read as before, to its first end tag
    shadow = "<x-nav><template shadowrootmode=open><slot></slot><template>t</template></template>Home</x-nav>"
    assert blocks_of_both_paths(shadow) == ["Home"]


def test_an_svg_in_an_svg_is_skipped_whole_and_a_self_closed_svg_holds_nothing():
    icon = "<svg><svg/><svg viewBox='0 0 9 9'><text>inner</text></svg><text>label</text></svg>"
    assert blocks_of_both_paths(f"<p>Before.</p>{icon}<p>After.</p>") == ["Before.", "After."]
    assert blocks_of_both_paths("<p>Before.</p><svg /><p>After.</p><svg></svg>") == ["Before.", "After."]
    assert blocks_of_both_paths("<math><math>x</math>y</math><p>After.</p>") == ["After."]


def test_an_html_tag_ends_an_svg_left_open_as_in_browsers_so_it_hides_no_more_of_the_page():
    # a broken icon (no </svg>): the <p> ends every svg element open, and the page reads on from it
    assert blocks_of_both_paths("<p>Before.</p><svg><g><path d='M0 0'><p>After.</p><div>More.</div>") == [
        "Before.", "After.", "More."]
    assert blocks_of_both_paths("<svg><g></p>After.") == ["After."]  # (so do the end tags </p> and </br>)
    assert blocks_of_both_paths("<math><mrow><mi>x</mi><DIV>After.</DIV>") == ["After."]
    # in the svg elements that hold HTML (foreignObject, desc, title; math's mi, mtext...) HTML tags
    # are theirs, and the svg stays hidden to its end tag, as before
    embedded = "<svg><foreignObject><div>Chart label</div></foreignObject><desc><p>d</p></desc><text>t</text></svg>"
    assert blocks_of_both_paths(f"{embedded}<p>After.</p>") == ["After."]
    assert blocks_of_both_paths("<math><mtext><b>x</b></mtext></math><p>After.</p>") == ["After."]
    # SVG's own elements do not end it, nor does <font> (it would with some attributes only)
    assert blocks_of_both_paths("<svg><text><tspan>t</tspan></text><a>l</a><font>f</font></svg><p>After.</p>") == [
        "After."]


def test_a_raw_element_left_open_in_a_noscript_ends_with_the_noscript():
    # Next.js writes Google Tag Manager's <iframe .../> self-closed, which HTML does not close; to a
    # browser that runs scripts, a noscript's content is text up to </noscript>, so the page goes on
    gtm = "<noscript><iframe src='https://www.googletagmanager.com/ns.html' height='0' width='0' /></noscript>"
    assert blocks_of_both_paths(f"<p>Before.</p>{gtm}<p>After.</p>") == ["Before.", "After."]
    assert blocks_of_both_paths("<NOSCRIPT><script>x<svg><g></NoScript ><p>After.</p>") == ["After."]
    # a noscript's own content is read as before, and a raw element outside one is not bounded by it
    assert blocks_of_both_paths("<noscript><p>Posts.</p></noscript><iframe>x</noscript><p>y") == ["Posts."]


def test_hostile_escapes_and_nesting_are_read_in_linear_time_as_browsers_read_them():
    # each state change and each tag is read once: no scan starts over (a quadratic one would take
    # minutes here); what follows a script or template left open is its content, as in browsers
    pages = {"<script>" + "<!--<script>" * 100_000 + "<p>x": [],
             "<script>" + "<!--<script></script>" * 100_000 + "</script><p>x": ["x"],
             "<script><!--" + "<script></script>" * 100_000 + "<p>x": [],
             "<template>" * 100_000 + "<p>x": [],
             "<template>" * 100_000 + "</template>" * 100_000 + "<p>x": ["x"],
             "<template>" + "<template></template>" * 100_000 + "{{ leak }}</template><p>x": ["x"],
             "<template>" + "<script><!--<script>" * 100_000: [],
             "<template>" + "<!--<template>" * 100_000: [],
             "<svg>" * 100_000 + "</svg><p>x": ["x"],
             # unbalanced again and again: once a count runs to the page's end, the first end tag
             # closes that element from then on (each one would read the rest of the page again)
             "<template><template></template><p>x</p>" * 20_000: ["x"] * 20_000,
             "<svg><svg></svg><p>x</p>" * 20_000: ["x"] * 20_000,
             "<svg>" * 100_000 + "<p>x": ["x"],
             "<svg><foreignObject>" * 100_000 + "<p>x": [],
             "<svg><g><div>x</div>" * 20_000: ["x"] * 20_000,
             "<noscript>" + "<iframe></iframe>" * 100_000 + "<p>x": ["x"],
             "<noscript><iframe/></noscript><p>x</p>" * 20_000: ["x"] * 20_000,
             "<noscript>" * 100_000 + "<script>" * 100_000: []}
    for html, expected in pages.items():
        started = time.process_time()
        texts = learned.read_page(html)[0]
        compiled = time.process_time() - started
        started = time.process_time()
        page = segment.segment(html)
        reference = time.process_time() - started
        assert texts == [block.text for block in page.blocks] == expected, html[:30]
        # (without the compiled path, read_page is the reference too, features and forest besides)
        assert compiled < (0.5 if reading.COMPILED else 3) and reference < 3, (html[:30], compiled, reference)


def test_pages_without_text_and_bytes_in_any_charset():
    assert learned.html_to_text_learned("") == ""
    assert learned.html_to_text_learned("<html><head><title>t</title></head><body></body></html>") == ""
    html, lines = page(3)
    html = html.replace("<head>", "<head><meta charset='windows-1252'>").replace(lines[1], lines[1] + " Café crème.")
    text = learned.html_to_text_learned(html.encode("cp1252"))
    assert lines[1] + " Café crème." in text


def test_a_hostile_page_is_read_in_bounded_time_and_memory():
    deep = "<div>" * 300_000 + "word " * 10 + "</div>" * 300_000
    many = "<p>x</p>" * 40_000 + "<b>y</b>" * 150_000  # (just under both bounds)
    quotes = "<a b='" * 50_000
    # (100,000 JSON-LD strings, each read as HTML where the page shows too little: 5 MB)
    answers = ",".join('{"@type": "Answer", "text": "answer %d is here"}' % i for i in range(100_000))
    declared = f'<script type="application/ld+json">[{answers}]</script><p>x</p>'
    for html in (deep, many, quotes, declared):
        started = time.process_time()
        learned.html_to_text_learned(html)
        assert time.process_time() - started < 10


@pytest.mark.parametrize("inline", ["span", "b", "font", "em"])
def test_a_paragraph_under_hundreds_of_inline_tags_is_read_on_both_paths(inline, monkeypatch):
    """A paragraph under more inline tags than the stack holds (MAX_DEPTH) is still a paragraph: inline
    elements stop MAX_DEPTH - MAX_INLINE_DEPTH levels short, which block-level ones keep.  (Before,
    from 254 of them, its <p> was read as part of the <div> around them, and the page gave no text.)"""
    text = " ".join([ARTICLE] * 4)
    for depth in (segment.MAX_INLINE_DEPTH, 254, 1000, 100_000):
        for shape in ("<div>{o}<p>{t}</p>{c}</div>", "<html><body><div>{o}<p>{t}</p><p>{t}</p>{c}</div></body></html>"):
            deep = shape.format(o=f"<{inline}>" * depth, c=f"</{inline}>" * depth, t=text)
            for compiled in (reading._compiled()[0], None):  # the compiled path and the reference
                monkeypatch.setattr(reading, "_SEGMENT_HTML", compiled)
                started = time.process_time()
                assert ARTICLE in learned.html_to_text_learned(deep), (depth, shape, compiled)
                assert time.process_time() - started < 10
    # block-level elements past the bound: their text is read into the deepest block that is open
    html, lines = page(0)
    body = "".join(f"<p>{line}</p>" for line in lines)
    deep = "<html><body>" + "<div>" * 1000 + body + "</div>" * 1000 + "</body></html>"
    assert all(line in learned.html_to_text_learned(deep) for line in lines[1:])


PAST_THE_BOUNDS = {
    "blocks": "<p>x</p>" * 200_000,
    # each line set apart by a <br> is a block (one block of 60,000 lines before)
    "lines": "<p>" + "a line<br>" * 60_000 + "</p>",
    "elements": "<p>text of the page.</p>" + "<b>x</b>" * 250_000,
    # a page that shows too little and declares an article of more blocks than the bound
    "declared": '<script type="application/ld+json">{"@type": "Article", "articleBody": "'
                + "<p>x</p>" * 60_000 + '"}</script><p>x</p>',
}


@pytest.mark.parametrize("name", sorted(PAST_THE_BOUNDS))
def test_a_page_past_the_readers_bounds_is_refused_not_read_in_part(name):
    # The segmenter stops at MAX_BLOCKS blocks or MAX_ELEMENTS elements (a page of millions of
    # blocks would take gigabytes); the text of the part before is not passed off as the page's.
    started = time.process_time()
    with pytest.raises(ExtractionError, match="more than 50,000 blocks or 200,000 elements"):
        learned.html_to_text_learned(PAST_THE_BOUNDS[name])
    assert time.process_time() - started < 10


def test_the_refusal_names_other_readers_only_where_they_read_the_page():
    # 60,000 lines are past the learned reader's blocks but a tenth of dense's and fast's 200,000 tags: named.  250,000
    # elements are past their tags too: the refusal names no reader that would refuse the page as well.
    with pytest.raises(ExtractionError, match=r"past what the learned reader reads; another extractor \(fast, dense\) "
                                              r"reads it$"):
        learned.html_to_text_learned(PAST_THE_BOUNDS["lines"])
    get_extractor("dense")(PAST_THE_BOUNDS["lines"])
    with pytest.raises(ExtractionError, match=r"past what the learned reader reads$"):
        learned.html_to_text_learned(PAST_THE_BOUNDS["elements"])
    with pytest.raises(ExtractionError, match="more than 200,000 tags, past what dense reads"):
        get_extractor("dense")(PAST_THE_BOUNDS["elements"])


def test_plexity_clean_counts_a_page_past_the_bounds_as_a_named_skip(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "huge.html").write_text(PAST_THE_BOUNDS["blocks"])
    (tmp_path / "in" / "fine.html").write_text(page(7)[0])
    done = run_plexity("clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"), "--write-dropped", "-q")
    assert done.returncode == 0, done.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"extraction_failed": 1} and stats["documents"] == 1
    dropped = [json.loads(line) for line in (tmp_path / "out" / "plexity-dropped.jsonl").read_text().splitlines()]
    assert any(d["source"].endswith("huge.html") and "more than 50,000 blocks" in d.get("detail", "")
               for d in dropped)
    assert not (tmp_path / "out" / "huge.html.txt").exists()
    assert (tmp_path / "out" / "fine.html.txt").read_text().strip()


def test_plexity_run_counts_a_page_past_the_bounds_and_its_summary_says_so(tmp_path):
    dummy = WARCWriter(io.BytesIO())
    write_warc(tmp_path / "in.warc.gz", [response(dummy, "http://example.org/huge", PAST_THE_BOUNDS["blocks"].encode()),
                                         response(dummy, "http://example.org/fine", page(7)[0].encode())])
    done = run_plexity("run", str(tmp_path / "in.warc.gz"), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    reader, extractor, filt = run_step_stats(tmp_path / "out", "learned")
    assert reader["documents"] == extractor["total"] == 2
    assert extractor["clean_error"] == 1 and extractor["forwarded"] == filt["total"] == 1
    assert "more than 50,000 blocks" in done.stderr  # (the task's log)
    assert "extraction: 1 with text, lost: clean_error 1" in done.stdout


def test_plexity_run_and_plexity_clean_read_with_learned_by_default(tmp_path):
    steps, stats, article_share = sample_through_run_and_clean(tmp_path)
    assert any("learned (block forest)" in name for name in steps)
    assert stats["extractor"] == "learned" and stats["method"] == "trim"
    assert article_share > 0.95
