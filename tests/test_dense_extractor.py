"""The ``dense`` extractor: one lexbor parse, the page's item chosen by what its HTML declares and
by where its paragraphs are densest (no class or id names), in every front end."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from scrapy.utils.test import get_crawler

from plexity_plugins.datatrove import DenseExtractor
from plexity_plugins.extractors import EXTRACTORS, get_extractor, html_to_text_dense
from plexity_plugins.scrapy import PerplexityFilterPipeline
from helpers import executed_lines, sample_through_run_and_clean

PLEXITY = [sys.executable, "-m", "plexity_plugins.cli"]
ARTICLE = ["The city council approved the budget for the new library on Tuesday after a long debate.",
           "The library will open in the spring and will stay open late on weekdays, the mayor said.",
           "Residents asked about the road to the river, and the council promised to finish it this year."]
COMMENTS = ["I have been waiting for this library for years and I am glad it finally happens.",
            "Great news for the students in our neighbourhood, they need a quiet place to read.",
            "What about the swimming pool that was promised last year, has anyone heard about it?"]
MENU = ("<header><nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li>"
        "<li><a href='/sport'>Sport</a></li></ul></nav></header>")
FOOTER = "<footer><p>© 2024 Example News</p><a href='/privacy'>Privacy</a></footer>"
DECLARES_ARTICLE = "<head><meta property='og:type' content='article'></head>"


def _page(main: str, head: str = "") -> str:
    return f"<html>{head}<body>{MENU}{main}{FOOTER}</body></html>"


def _story(open_tag: str = "<article>", close_tag: str = "</article>") -> str:
    return open_tag + "<h1>Council approves library budget</h1>" + "".join(f"<p>{line}</p>" for line in ARTICLE) \
        + close_tag


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_dense_keeps_the_article_and_drops_the_menu_the_footer_and_scripts():
    text = html_to_text_dense(_page("<main>" + _story() + "<script>var x = 1;</script></main>"))
    assert all(line in _lines(text) for line in ARTICLE)
    assert "Home" not in text and "Privacy" not in text and "var x" not in text
    assert get_extractor("dense") is html_to_text_dense and "dense" in EXTRACTORS


def test_dense_drops_short_link_lists_anywhere_and_keeps_prose_with_links():
    related = "<ul>" + "".join(f"<li><a href='/{i}'>Related story number {i}</a></li>" for i in range(5)) + "</ul>"
    prose = "<p>The plan was <a href='/plan'>published</a> last week and will be discussed again in March.</p>"
    text = html_to_text_dense(_page("<div>" + _story("<div>", prose + related + "</div>") + "</div>"))
    assert "The plan was published last week and will be discussed again in March." in text
    assert "Related story" not in text


def test_a_declared_article_body_is_preferred_over_the_comments_around_it():
    comments = "<section>" + "".join(f"<div><b>reader{i}</b><p>{c}</p></div>" for i, c in enumerate(COMMENTS)) \
        + "</section>"
    for story in (_story("<div itemprop='articleBody'>", "</div>"), _story()):
        text = html_to_text_dense(_page("<main>" + story + comments + "</main>", DECLARES_ARTICLE))
        assert all(line in _lines(text) for line in ARTICLE)
        assert not any(c in text for c in COMMENTS)


def test_a_single_article_holding_too_little_of_the_page_gives_way_to_the_page():
    # an undeclared page whose <article> is a short teaser beside much more text: not its item
    others = "".join(f"<div><p>{line} {line}</p></div>" for line in COMMENTS * 3)
    text = html_to_text_dense(_page("<div><article><p>" + ARTICLE[0] + "</p></article>" + others + "</div>"))
    assert ARTICLE[0] in text and all(c in text for c in COMMENTS)


def test_dense_keeps_every_post_of_a_thread_of_article_elements():
    # the first post alone holds most of the words: still a thread (its posts sit in like parents)
    posts = [" ".join(ARTICLE), *COMMENTS]
    page = _page("<main><h1>Library budget thread</h1>"
                 + "".join(f"<div class='p'><article><p>{p}</p></article></div>" for p in posts) + "</main>")
    text = html_to_text_dense(page)
    assert all(p in text for p in posts)


def test_dense_keeps_a_product_s_description_and_its_specifications():
    # (a row of three words or fewer, "Weight 311 g", is a fragment: see the fragments tests)
    specs = [("Weight", "311 g without the mount"), ("Power", "USB or phantom power"),
             ("Pattern", "cardioid, with a low-cut filter")]
    page = _page("<main><h1>Studio microphone</h1><p>A large diaphragm condenser microphone for vocals, "
                 "with a gold-plated capsule, a built-in pop shield and a quiet preamplifier.</p>"
                 "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in specs) + "</table>"
                 "<form><button>Add to cart</button></form></main>")
    text = html_to_text_dense(page)
    assert "A large diaphragm condenser microphone for vocals" in text
    assert all(k in text and v in text for k, v in specs)
    assert "Add to cart" not in text and "Home" not in text


def test_dense_keeps_every_item_of_a_listing():
    items = [f"Library opening hours change in district {i}: the reading room now opens at nine, "
             f"and the children's corner stays open until six." for i in range(6)]
    page = _page("<div>" + "".join(f"<div class='card'><h2>Item {i}</h2><p>{t}</p></div>"
                                   for i, t in enumerate(items)) + "</div>")
    text = html_to_text_dense(page)
    assert all(t in text for t in items)


def test_without_any_declaration_the_densest_paragraphs_are_the_item():
    sidebar = "<div>" + "".join(f"<p>Short note {i}.</p>" for i in range(4)) + "</div>"
    comments = "<div>" + "".join(f"<p><a href='/u{i}'>reader{i}</a> said <a href='/r{i}'>reply</a></p>"
                                 for i in range(3)) + "</div>"
    text = html_to_text_dense(_page("<div>" + sidebar + _story("<div>", "</div>") + comments + "</div>"))
    assert all(line in _lines(text) for line in ARTICLE)
    assert "Short note" not in text


def test_hidden_elements_and_html_s_own_non_text_are_dropped_inside_the_item():
    story = _story("<article>", "<div hidden><p>Hidden offer for subscribers only, do not show.</p></div>"
                   "<div style='display:none'><p>Another invisible block of promotional text.</p></div>"
                   "<aside><p>Sidebar: more stories you might like from our archive.</p></aside></article>")
    text = html_to_text_dense(_page("<main>" + story + "</main>"))
    assert all(line in _lines(text) for line in ARTICLE)
    assert "Hidden offer" not in text and "invisible" not in text and "Sidebar" not in text


def test_on_every_page_lines_of_three_words_or_fewer_that_are_not_sentences_go_list_items_stay():
    around = ("<p>Share this story</p><p>Regular price</p><p>$22.00</p><h2>More stories</h2>"
              "<p>It opens in spring.</p><ul><li>Reading room</li><li>Children's corner</li></ul>")
    page = "<div>" + _story("<div>", around + "</div>") + "</div>"
    text = _lines(html_to_text_dense(_page(page)))
    assert all(line in text for line in ARTICLE)
    assert "It opens in spring." in text  # short, but it ends as a sentence does
    assert "Reading room" in text and "Children's corner" in text
    assert not {"Share this story", "Regular price", "$22.00", "More stories"} & set(text)


def test_after_the_last_paragraph_lines_of_up_to_six_words_go():
    closing = ("<h2>Take the next step today</h2><p>Sign up for our newsletter</p>"
               "<ul><li>Five ideas for a better garden</li></ul>")
    long_paragraph = "<p>" + " ".join(ARTICLE * 2) + "</p>"  # over 40 words: a paragraph
    page = _page("<div>" + _story("<div>", long_paragraph + closing + "</div>") + "</div>")
    text = _lines(html_to_text_dense(page))
    assert all(line in text for line in ARTICLE)
    assert not any(line in text for line in ("Take the next step today", "Sign up for our newsletter",
                                             "Five ideas for a better garden"))
    # the same lines before the paragraph are not closing furniture
    opening = _page("<div>" + _story("<div>", closing + long_paragraph + "</div>") + "</div>")
    assert "Take the next step today" in _lines(html_to_text_dense(opening))


def test_on_a_declared_article_lines_of_four_words_go_too_unless_headings_or_list_items():
    around = ("<p>Share this story now</p><p>Prices for members are below</p><h2>What happens next year</h2>"
              "<p>It opens in spring.</p><ul><li>The new reading room</li><li>A children's corner</li></ul>")
    page = "<div>" + _story("<div>", around + "</div>") + "</div>"  # the item by density: read whole
    declared = _lines(html_to_text_dense(_page(page, DECLARES_ARTICLE)))
    assert all(line in declared for line in ARTICLE)
    assert "What happens next year" in declared and "The new reading room" in declared
    assert "It opens in spring." in declared
    assert "Share this story now" not in declared
    assert "Prices for members are below" in declared  # it does not end as text, but it has 5 words
    # without a declaration, four words may be a listing's or a grid's content
    plain = _lines(html_to_text_dense(_page(page)))
    assert "Share this story now" in plain


def test_on_a_declared_discussion_the_metadata_around_each_post_goes_and_the_posts_stay():
    declares_thread = ('<head><script type="application/ld+json">{"@context": "https://schema.org", '
                       '"@type": "DiscussionForumPosting", "headline": "Library hours"}</script></head>')
    posts = "".join(f"<div class='post'><div class='meta'><div>reader{i}</div><div>asked Mar {i + 1}, 2024 at "
                    f"11:38</div></div><p>{line}</p></div>" for i, line in enumerate(COMMENTS))
    thread = _lines(html_to_text_dense(_page("<div>" + posts + "</div>", declares_thread)))
    assert all(line in thread for line in COMMENTS)
    assert not any(line.startswith(("reader", "asked Mar")) for line in thread)
    # the same thread, undeclared: nothing says its lines of four to six words are not its text
    plain = _lines(html_to_text_dense(_page("<div>" + posts + "</div>")))
    assert "asked Mar 1, 2024 at 11:38" in plain


def test_an_item_whose_whole_text_html_marks_as_not_text_is_read_whole_rather_than_lost():
    # a shop's lock screen hides the page's content with inline CSS: skipping hidden elements, every
    # reading finds nothing, and an empty page is the worst answer
    hidden = "<div style='display:none'>" + "".join(f"<p>{line}</p>" for line in ARTICLE) + "</div>"
    text = _lines(html_to_text_dense(_page("<main><p>Access denied</p>" + hidden + "</main>")))
    assert all(line in text for line in ARTICLE)


def test_a_page_that_hides_most_of_its_text_until_a_script_runs_is_read_with_it():
    # a manual whose chapters sit in tab panels that a script shows: hidden, but the page's text
    intro = "".join(f"<p>Part {i} of this manual explains how to install the library and how to configure it "
                    f"for your site, step by step.</p>" for i in range(6))  # 120 words: not "almost nothing"
    chapters = "".join(f"<div class='panel' hidden><h2>Chapter {i}</h2>" + "".join(f"<p>{line}</p>" for line in ARTICLE)
                       + "</div>" for i in range(6))
    text = _lines(html_to_text_dense(_page("<div>" + intro + chapters + "</div>")))
    assert all(line in text for line in ARTICLE)
    # a page that hides little (a dialog, a menu) keeps it hidden
    dialog = "<div hidden><p>Sign up to our newsletter and never miss a story from our newsroom.</p></div>"
    text = _lines(html_to_text_dense(_page("<main>" + _story() + dialog + "</main>")))
    assert all(line in text for line in ARTICLE) and not any("newsletter" in line for line in text)


def test_a_small_item_beside_an_emptied_main_content_gives_way_to_the_visible_page():
    # resiliparse's main-content heuristic takes a grid of products in a "banner" block for an
    # advert; the only paragraph, the opening hours, is not the page's text either
    hours = "<div><p>Our showroom is open every day from nine to six, call us for an appointment.</p></div>"
    cards = "".join(f"<div><div>Oak dining table model {i}</div><div>Solid oak, seats six</div>"
                    f"<div>$ {100 + i}.00</div></div>" for i in range(30))
    text = _lines(html_to_text_dense(_page(hours + "<div class='banner'>" + cards + "</div>")))
    assert "Oak dining table model 7" in text and "Solid oak, seats six" in text


def test_a_declared_article_keeps_its_lists_of_sentences():
    steps = ["Working with clients to set clear and measurable goals for the event.",
             "Establishing a budget they can work with for the whole duration of the event.",
             "Creating a timeline that lays the groundwork for a successful event day."]
    body = "<ul>" + "".join(f"<li>{step}</li>" for step in steps) + "</ul>"
    text = _lines(html_to_text_dense(_page("<main>" + _story("<article>", body + "</article>") + "</main>",
                                           DECLARES_ARTICLE)))
    assert all(line in text for line in ARTICLE) and all(step in text for step in steps)


def test_list_items_left_out_by_resiliparse_come_back_unless_they_are_mostly_links():
    from resiliparse.parse.html import HTMLTree

    from plexity_plugins.extractors.dense import _with_list_items

    sentence = "Establishing a budget they can work with for the whole duration of the event."
    headline = "A much longer headline of a related story number one on this site"
    tree = HTMLTree.parse(f"<body><p>Intro.</p><ul><li>{sentence}</li><li><a href='/1'>{headline}</a></li>"
                          "<li>Too short to be text</li></ul></body>")
    text = f"Intro.\n• {sentence}\n• {headline}\n• Too short to be text"
    assert _with_list_items(text, "Intro.", tree.body) == f"Intro.\n• {sentence}"


def test_on_a_declared_page_a_block_rendered_twice_is_kept_once():
    price = "<p>Free delivery on every order over fifty pounds this month</p>"
    code = "<pre>}\n}</pre>"
    page = "<div>" + _story("<div>", price + price + code + "</div>") + "</div>"
    declared = _lines(html_to_text_dense(_page(page, DECLARES_ARTICLE)))
    assert declared.count("Free delivery on every order over fifty pounds this month") == 1
    assert declared.count("}") == 2  # lines without letters stay: a closing brace is said twice
    # undeclared, a repetition may be the page's own (a poster's name on each post): it stays
    plain = _lines(html_to_text_dense(_page(page)))
    assert plain.count("Free delivery on every order over fifty pounds this month") == 2


def test_on_a_declared_page_chinese_and_japanese_sentences_are_not_fragments_and_table_cells_repeat():
    japanese = "報道によると、今回販売されたのは、いわゆる「脱獄」したiPhone。"  # one "word": no spaces
    table = "<table>" + "<tr><td>Eat every 2–3 hours during the day</td></tr>" * 3 + "</table>"
    page = "<div>" + _story("<div>", f"<p>{japanese}</p>{table}</div>") + "</div>"
    text = _lines(html_to_text_dense(_page(page, DECLARES_ARTICLE)))
    assert japanese in text
    assert text.count("Eat every 2–3 hours during the day") == 3


def test_bytes_are_decoded_by_their_declared_charset_and_empty_input_gives_nothing():
    page = _page(_story("<article>", "<p>Caf\u00e9 owners on the square welcomed the decision warmly.</p>"
                        "</article>"), "<head><meta charset='windows-1252'></head>")
    text = html_to_text_dense(page.encode("windows-1252"))
    assert "Caf\u00e9 owners on the square welcomed the decision warmly." in text
    assert text == html_to_text_dense(page)
    assert html_to_text_dense(b"") == "" and html_to_text_dense("  \n") == ""
    assert html_to_text_dense("<html></html>") == "" and html_to_text_dense("<!-- nothing -->") == ""


def test_a_page_nested_thousands_deep_is_read_without_recursion_and_with_bounded_python_work():
    # Python never recurses, and its walks up the tree stop after a few steps: its work does not
    # grow with the depth.  What does is resiliparse's own main-content pass (as for ``fast``),
    # which the front ends' time limit per page bounds.
    shallow, deep = (_page("<div>" * depth + _story() + "</div>" * depth) for depth in (500, 5_000))
    text = html_to_text_dense(deep)
    assert all(line in text for line in ARTICLE)
    assert executed_lines(html_to_text_dense, deep) <= executed_lines(html_to_text_dense, shallow)
    # paragraphs nested in each other, every one a candidate for the densest container
    deep_paragraphs = _page("<div>" + "<p>The council met again about the library, and again." * 3_000 + "</div>")
    assert "The council met again" in html_to_text_dense(deep_paragraphs)


def test_plexity_clean_with_the_dense_extractor_trims_like_after_trafilatura(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "page.html").write_text(_page("<main>" + _story() + "</main>"))
    proc = subprocess.run([*PLEXITY, "clean", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out"),
                           "--extractor", "dense", "-q"],
                          capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "out" / "page.html.txt").read_text()
    assert all(line in out for line in ARTICLE) and "Privacy" not in out
    assert json.loads((tmp_path / "out" / "plexity-stats.json").read_text())["method"] == "trim"


def test_the_datatrove_step_extracts_like_plexity_clean():
    page = _page("<main>" + _story() + "</main>")
    assert DenseExtractor().extract(page) == html_to_text_dense(page)


def test_the_scrapy_pipeline_takes_the_dense_extractor_and_trims_its_output():
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "dense"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    assert pipeline.extractor == "dense" and pipeline.scorer.method == "trim"
    text = asyncio.run(pipeline.process_item({"html": _page("<main>" + _story() + "</main>")}))["text"]
    assert all(line in text for line in ARTICLE) and "Home" not in text


def test_plexity_run_and_plexity_clean_read_with_dense_when_asked(tmp_path):
    steps, stats, article_share = sample_through_run_and_clean(tmp_path, "--extractor", "dense")
    assert any("dense (lexbor)" in name for name in steps)
    assert stats["extractor"] == "dense" and stats["method"] == "trim"
    assert article_share > 0.95
