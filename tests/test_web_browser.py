"""The `plexity serve` page in a real headless Chromium (Debian's chromium + chromedriver,
installed by scripts/ci/50-chromium.sh), against a real server on 127.0.0.1.

Set PLEXITY_SCREENSHOTS=DIR to save the screenshots used in the README.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from helpers import iter_warc_html
from web_server import start_server, stop_server
from browser import chromium

pytestmark = pytest.mark.browser

MAX_BYTES = 100_000
EXAMPLE_WARC = Path(__file__).resolve().parent.parent / "examples" / "sample.warc.gz"

ARTICLE = """\
The city council approved the budget for the new library on Tuesday evening. The building will open in the spring, the mayor said.
Share on Facebook | Share on Twitter | Email
Work on the site is expected to start next month.
Home | News | Sport | Weather | Contact us"""



def screenshot(driver, name: str) -> None:
    directory = os.environ.get("PLEXITY_SCREENSHOTS")
    if directory:
        driver.save_screenshot(str(Path(directory) / name))


@pytest.fixture(scope="module")
def server():
    process, url = start_server(["--max-bytes", str(MAX_BYTES)])
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture
def page(browser, server):
    """The page, freshly loaded, with the model list in."""
    browser.get(server + "/")
    WebDriverWait(browser, 15).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    return browser


def api_score(server: str, text: str, **fields) -> dict:
    request = urllib.request.Request(server + "/api/score", data=json.dumps({"text": text, **fields}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    return json.loads(urllib.request.urlopen(request).read())


def dropped_by_server(result: dict) -> list[str]:
    return [s["text"] for s in result["sentences"] if not s["kept"]]


def fmt(value: float) -> str:
    """A threshold as the page prints it."""
    return f"{round(value):,}" if value >= 100 else f"{float(f'{value:.3g}'):g}"


def threshold_label(page) -> str:
    return page.find_element(By.CSS_SELECTOR, "#histogram .threshold-label").text


def type_threshold(page, value: float) -> None:
    number = page.find_element(By.ID, "threshold-number")
    number.clear()
    number.send_keys(repr(value), Keys.TAB)


def paste_and_score(page, text: str) -> None:
    box = page.find_element(By.ID, "input-text")
    box.clear()
    box.send_keys(text)
    page.find_element(By.ID, "score-button").click()
    wait_for_result(page)


def wait_for_result(page) -> None:
    WebDriverWait(page, 15).until(lambda d: d.find_element(By.ID, "status").text.startswith(("Scored", "Error")))


def sentences(page, css: str = ".sentence") -> list[str]:
    return [e.get_attribute("textContent") for e in page.find_elements(By.CSS_SELECTOR, f"#sentences {css}")]


def clean_text(page) -> str:
    return page.find_element(By.ID, "clean-text").get_attribute("textContent")


def score_requests(page) -> int:
    return page.execute_script(
        "return performance.getEntriesByType('resource').filter(e => e.name.endsWith('/api/score')).length")


def test_pasted_text_shows_each_sentence_coloured_the_dropped_ones_and_the_histogram(page, server):
    paste_and_score(page, ARTICLE)
    expected = api_score(server, ARTICLE)

    assert sentences(page) == [s["text"] for s in expected["sentences"]]
    dropped = sentences(page, ".dropped")
    assert dropped == dropped_by_server(expected)
    assert {"Share on Facebook | Share on Twitter | Email", "Home | News | Sport | Weather | Contact us"} <= set(dropped)
    assert clean_text(page) == expected["clean_text"]
    counts = page.find_element(By.ID, "counts")
    assert counts.get_attribute("data-dropped") == str(len(dropped))
    assert counts.get_attribute("data-kept") == str(len(expected["sentences"]) - len(dropped))
    # the score on hover, and a colour per sentence
    first = page.find_element(By.CSS_SELECTOR, "#sentences .sentence")
    assert first.get_attribute("title").startswith(f"perplexity {fmt(expected['sentences'][0]['perplexity'])} ")
    assert first.get_attribute("title").endswith(": kept")
    assert first.value_of_css_property("background-color") not in ("", "rgba(0, 0, 0, 0)")
    # the histogram: every sentence counted once, the dropped ones in their own bar parts, the threshold line
    bars = page.find_elements(By.CSS_SELECTOR, "#histogram rect.bar")
    assert sum(int(b.get_attribute("data-count")) for b in bars) == len(expected["sentences"])
    dropped_bars = page.find_elements(By.CSS_SELECTOR, "#histogram rect.bar.dropped")
    assert sum(int(b.get_attribute("data-count")) for b in dropped_bars) == len(dropped)
    assert page.find_elements(By.CSS_SELECTOR, "#histogram line.threshold-line")
    assert threshold_label(page) == f"threshold {fmt(expected['threshold'])}"


def test_moving_the_threshold_refilters_in_the_page_without_rescoring(page, server):
    paste_and_score(page, ARTICLE)
    scored = api_score(server, ARTICLE)["sentences"]
    requests = score_requests(page)
    line = page.find_element(By.CSS_SELECTOR, "#histogram line.threshold-line")
    x_default = float(line.get_attribute("x1"))
    slider = page.find_element(By.ID, "threshold")

    slider.send_keys(Keys.END)  # highest threshold: everything kept
    assert sentences(page, ".dropped") == []
    assert clean_text(page) == ARTICLE
    assert float(page.find_element(By.CSS_SELECTOR, "#histogram line.threshold-line").get_attribute("x1")) > x_default

    slider.send_keys(Keys.HOME)  # lowest: everything dropped
    assert len(sentences(page, ".dropped")) == len(scored) and clean_text(page) == ""

    # a typed threshold between any two scores: the page reaches the server's verdicts for it
    values = sorted(s["perplexity"] for s in scored)
    for low, high in zip(values, values[1:]):
        between = round((low + high) / 2, 1)
        type_threshold(page, between)
        assert sentences(page, ".dropped") == dropped_by_server(api_score(server, ARTICLE, threshold=between))
        assert clean_text(page) == api_score(server, ARTICLE, threshold=between)["clean_text"]

    # a click on the chart moves the threshold there
    before = threshold_label(page)
    chart = page.find_element(By.ID, "histogram")
    webdriver.ActionChains(page).move_to_element_with_offset(chart, -chart.size["width"] // 4, 0).click().perform()
    assert threshold_label(page) != before

    page.find_element(By.ID, "reset-threshold").click()
    default = api_score(server, ARTICLE)
    assert threshold_label(page) == f"threshold {fmt(default['threshold'])}"
    assert sentences(page, ".dropped") == dropped_by_server(default)
    assert score_requests(page) == requests  # all of it without asking the server again


PARITY_TEXT = ARTICLE + """
Advertisement
The new reading room will have space for two hundred people and a garden for children.
Related articles | Most read | Newsletter
Follow us on Instagram"""


@pytest.mark.parametrize("method", ["region", "regions", "trim", "sentences"])
def test_parity_javascript_decision_port_matches_python(page, server, method):
    """Parity of the JavaScript port of the keep/drop decision (web/static/app.js
    `decideKeep`, `joinKept`) with the Python reference (`plexity_plugins.scoring.methods`, which the
    compiled one equals: tests/test_native.py): at thresholds between every two sentence
    scores, the page keeps exactly what the server keeps, and joins it into the same text."""
    Select(page.find_element(By.ID, "method")).select_by_value(method)
    paste_and_score(page, PARITY_TEXT)
    scored = api_score(server, PARITY_TEXT, method=method)["sentences"]
    values = sorted(s["perplexity"] for s in scored)
    for low, high in zip(values, values[1:]):
        between = round((low + high) / 2, 1)
        if not low < between < high:
            continue  # (two scores closer than the page's 0.1 precision)
        type_threshold(page, between)
        server_result = api_score(server, PARITY_TEXT, method=method, threshold=between)
        assert sentences(page, ".dropped") == dropped_by_server(server_result), (method, between)
        assert clean_text(page) == server_result["clean_text"], (method, between)


def test_the_per_sentence_method_drops_what_lies_right_of_the_line(page, server):
    Select(page.find_element(By.ID, "method")).select_by_value("sentences")
    paste_and_score(page, ARTICLE)
    scored = api_score(server, ARTICLE, method="sentences")
    values = sorted(s["perplexity"] for s in scored["sentences"])
    middle = round((values[1] + values[2]) / 2, 1)
    type_threshold(page, middle)
    assert sentences(page, ".dropped") == [s["text"] for s in scored["sentences"] if s["perplexity"] > middle]
    assert page.find_element(By.ID, "counts").get_attribute("data-dropped") == str(len(values) - 2)


def test_markup_in_pasted_text_is_shown_as_text_never_run(page):
    attack = ('Hello <img src=x onerror="document.title=\'pwned\'"> world.\n'
              "<script>document.title='pwned'</script> Click <b>here</b>!")
    paste_and_score(page, attack)
    assert page.title.startswith("plexity")
    for box in ("sentences", "clean-text"):
        element = page.find_element(By.ID, box)
        assert element.find_elements(By.CSS_SELECTOR, "img, script, b") == []
    assert "<img src=x onerror=" in page.find_element(By.ID, "sentences").get_attribute("textContent")


def test_html_the_extractor_finds_no_text_in_says_so_instead_of_an_empty_result(page):
    page.find_element(By.ID, "format-html").click()
    Select(page.find_element(By.ID, "extractor")).select_by_value("learned")  # no main content in a snippet
    paste_and_score(page, "<p>one sentence</p>")
    note = page.find_element(By.ID, "empty")
    assert note.is_displayed() and "found no text in this HTML (no_text_extracted)" in note.text
    assert sentences(page) == [] and clean_text(page) == ""
    Select(page.find_element(By.ID, "extractor")).select_by_value("tags")  # every visible block: the sentence
    paste_and_score(page, "<p>one sentence</p>")
    assert not note.is_displayed() and sentences(page) == ["one sentence"]


def test_an_uploaded_html_page_is_extracted_and_scored(page, server, tmp_path):
    uri, body, _ = next(iter_warc_html(EXAMPLE_WARC))
    html_file = tmp_path / "page.html"
    html_file.write_bytes(body)
    page.find_element(By.ID, "input-file").send_keys(str(html_file))
    wait_for_result(page)
    assert page.find_element(By.ID, "status").text.startswith("Scored")
    assert page.find_element(By.ID, "format-html").is_selected()
    dropped, all_sentences = sentences(page, ".dropped"), sentences(page)
    assert dropped and len(dropped) < len(all_sentences)
    assert "<" not in "".join(all_sentences)  # extracted text, not markup
    expected = api_score(server, body.decode("utf-8"), format="html")
    assert all_sentences == [s["text"] for s in expected["sentences"]]
    assert dropped == dropped_by_server(expected)
    assert clean_text(page) == expected["clean_text"]
    # the page's own re-run of the method agrees with the server's at other thresholds too
    for threshold in (200.0, 700.0, 2500.0, 9000.0, 40000.0):
        type_threshold(page, threshold)
        assert sentences(page, ".dropped") == dropped_by_server(
            api_score(server, body.decode("utf-8"), format="html", threshold=threshold))
    page.find_element(By.ID, "reset-threshold").click()
    # (for the README's screenshot: show where the kept region begins)
    page.execute_script("const box = document.getElementById('sentences');"
                        "box.scrollTop = box.querySelector('.kept').offsetTop - box.offsetTop - 120;")
    screenshot(page, "web-demo.png")


def test_an_uploaded_page_is_decoded_as_every_front_end_decodes_it(page, tmp_path):
    # UTF-8 bytes declaring UTF-16: the server's decoding (BOM, <meta charset> where UTF-16 means
    # UTF-8), not the browser's UTF-8 or a UTF-16 reading into CJK garbage
    text = "Grüße aus Köln: the council approved the budget for the new library on Tuesday."
    html_file = tmp_path / "declared.html"
    html_file.write_bytes(f'<html><head><meta charset="utf-16"></head><body><p>{text}</p></body></html>'.encode())
    page.find_element(By.ID, "input-file").send_keys(str(html_file))
    wait_for_result(page)
    assert text in page.find_element(By.ID, "input-text").get_attribute("value")
    # a Windows-1252 page that says so: the browser alone would have read it as UTF-8 (U+FFFD)
    latin_file = tmp_path / "latin.html"
    latin_file.write_bytes(f'<html><head><meta charset="windows-1252"></head><body><p>{text}</p></body></html>'
                           .encode("cp1252"))
    page.find_element(By.ID, "input-file").send_keys(str(latin_file))
    wait_for_result(page)
    assert text in page.find_element(By.ID, "input-text").get_attribute("value")


def test_a_file_above_the_size_cap_gets_the_servers_message(page, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("All work and no play makes Jack a dull boy. " * (MAX_BYTES // 40))
    page.find_element(By.ID, "input-file").send_keys(str(big))
    wait_for_result(page)
    status = page.find_element(By.ID, "status")
    assert "HTTP 413" in status.text and f"{MAX_BYTES:,} bytes" in status.text
    assert "error" in status.get_attribute("class")
