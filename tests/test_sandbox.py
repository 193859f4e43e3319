"""A time limit per document for extraction (plexity_plugins.extractors.sandbox), with real extractors."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import extraction_children
from plexity_plugins import extractors as extract
from plexity_plugins.extractors.sandbox import TimeLimitedExtractor
from plexity_plugins.errors import ExtractionTimeout

PAGE = ("<html><body><nav>Home | News</nav><article>"
        + "".join(f"<p>The council approved the budget for the new library on day {i}. The building will open "
                  f"in the spring, the mayor said.</p>" for i in range(5))
        + "</article></body></html>")
# 90,000 sibling <span>s (1.5 MB, under the web demo's 2 MB cap, and fewer tags than trafilatura reads,
# `markup.MAX_TAGS_TRAFILATURA`): about 3 s of trafilatura's time on a 2026 CI core (~30 us a span; 14 MB
# of them took 216 s), far over the 0.5 s limit on a faster machine too (20,000 took 0.6 s here: too close to
# the limit to test it).
SLOW_PAGE = "<html><body><div>" + "<span>word</span>" * 90_000 + "</div></body></html>"


@pytest.fixture
def trafilatura_limited():
    extractor = TimeLimitedExtractor("trafilatura", timeout=0.5)
    others = extraction_children()  # (another test's, in this worker process: a set-aside child, one left to exit)
    extractor.warm_up()
    extractor.own_children = extraction_children() - others
    yield extractor
    extractor.close()


def test_a_limited_extractor_gives_the_extractors_own_text():
    extractor = TimeLimitedExtractor("tags", timeout=10)
    try:
        assert extractor(PAGE) == extract.html_to_text_tags(PAGE)
        assert extractor(PAGE.encode()) == extract.html_to_text_tags(PAGE)
    finally:
        extractor.close()


def test_a_document_over_the_limit_is_stopped_and_the_next_one_is_extracted(trafilatura_limited):
    working = trafilatura_limited.own_children
    assert len(working) == 1  # (warmed up: its child waits for a page)
    with pytest.raises(ExtractionTimeout, match="longer than 0.5 s"):
        trafilatura_limited(SLOW_PAGE)
    assert not working & extraction_children()  # stopped at the limit (killed), not left to finish its ~3 s
    assert isinstance(ExtractionTimeout("x"), extract.ExtractionError)  # a counted skip in every front end
    assert "The council approved the budget" in trafilatura_limited(PAGE)


def test_the_extractors_own_errors_come_back_as_they_are():
    extractor = TimeLimitedExtractor("tags", timeout=10)
    try:
        deep = "<html><body>" + "<div>" * 5000 + "text" + "</div>" * 5000 + "</body></html>"
        with pytest.raises(extract.ExtractionError, match="HTML parser limit"):
            extractor(deep)
        assert extractor(PAGE)  # the same child goes on
    finally:
        extractor.close()


def test_several_threads_extract_at_once_each_with_the_limit():
    extractor = TimeLimitedExtractor("tags", timeout=10, processes=2)
    others = extraction_children()
    results, errors = [], []

    def work():
        try:
            results.append(extractor(PAGE))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and results == [extract.html_to_text_tags(PAGE)] * 6
        assert len(extraction_children() - others) <= 2  # six threads, at most two extraction processes
    finally:
        extractor.close()


def test_no_limit_runs_in_the_calling_thread_and_a_negative_limit_is_refused():
    before = extraction_children()
    unlimited = TimeLimitedExtractor("tags", timeout=0, memory_limit=0)
    assert unlimited(PAGE) == extract.html_to_text_tags(PAGE) and extraction_children() == before  # no child
    with pytest.raises(ValueError, match="0 \\(none\\) or more seconds"):
        TimeLimitedExtractor("tags", timeout=-1)
    with pytest.raises(ValueError, match="unknown extractor"):
        TimeLimitedExtractor("readability")


def page_digest(html: str | bytes) -> str:
    """An "extractor" that says exactly what reached it (module level: the child imports it)."""
    import hashlib

    data = html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html
    return f"{type(html).__name__} {len(html)} {hashlib.sha256(data).hexdigest()}"


def test_every_page_reaches_the_child_as_it_was_given():
    # str pages travel as their UTF-8 bytes, bytes pages pickled: both must arrive unchanged, a lone
    # surrogate, a pickle-like first byte, pages larger than the pipe and than the child's kept buffer
    # (5.6 MB), and the pages after them, included
    pages = ["", "plain", "naïve — 東京 \U0001F600", "lone \udc80 surrogate", "\x80 starts like a pickle",
             b"", b"\x80\x04 raw bytes", "<p>é</p>" * 400_000, "<p>o</p>" * 700_000, "after a large one",
             "<p>ü</p>" * 100_000]
    extractor = TimeLimitedExtractor(page_digest, timeout=10)
    try:
        for page in pages:
            assert extractor(page) == page_digest(page)
    finally:
        extractor.close()


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd is Linux's")
def test_a_str_page_crosses_to_the_child_in_memory_they_share():
    # through the pipe the kernel copies a page twice, in and out (~50 us of CPU per 170 KB page): a str page
    # that fits in 4 MiB is copied once, into memory the child maps and copies it from, as its code units (two
    # bytes a character here) and the UTF-8 form the reader's decoding left it (the child does not decode it
    # again); the pipe carries their sizes.  Units that do not fit: the UTF-8 bytes, which the child decodes.
    from plexity_plugins.runtime import native

    text = "<p>naïve — 東京</p>" * 50_000  # (1.7 MB of units, 1.2 MB of UTF-8)
    fits, too_large = native.utf8_text(text.encode()), native.utf8_text((text * 3).encode())  # (5.1 MB, 3.6 MB)
    extractor = TimeLimitedExtractor(page_digest, timeout=10)
    try:
        assert extractor(fits) == page_digest(fits)
        (child,) = extractor._children
        assert "memfd:plexity-pages" in Path(f"/proc/{child.process.pid}/maps").read_text()
        units = len(text) * 2
        assert child._shared[:100] == text.encode("utf-16-le")[:100]
        assert child._shared[units:units + 100] == text.encode()[:100]
        assert extractor(too_large) == page_digest(too_large)
        assert child._shared[:100] == text.encode()[:100]
    finally:
        extractor.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_common_page_crosses_to_the_child_in_one_write():
    # the pipe to the child holds 1 MiB (Linux's default is 64 KiB): a 100 KB page is one write, not
    # turns of the two processes waking each other (4-5 % of plexity run's time on articles); the
    # answers (a page's text) keep the default, which leaves the user's pipe budget to others
    import fcntl

    extractor = TimeLimitedExtractor("tags", timeout=10)
    try:
        extractor.warm_up()
        (child,) = extractor._children
        assert fcntl.fcntl(child._to_child, fcntl.F_GETPIPE_SZ) == 1 << 20
        read, write = os.pipe()  # (a pipe as the system makes it)
        try:
            assert fcntl.fcntl(child.connection.fileno(), fcntl.F_GETPIPE_SZ) == fcntl.fcntl(read, fcntl.F_GETPIPE_SZ)
        finally:
            os.close(read)
            os.close(write)
    finally:
        extractor.close()


@pytest.mark.parametrize("name", ["dense", "learned"])
def test_the_extraction_child_starts_without_the_scorer(name):
    # the child imports its extractor only: not the scorer, BlingFire and numpy (~0.1 s of CPU
    # per start, once per plexity run task, plexity clean and Scrapy crawl); the learned reader's
    # second look, compiled, does without numpy too (a page where it looks at blocks again)
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("golden_pages_for_sandbox", Path(__file__).parent / "golden" / "pages.py")
    golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(golden)
    code = ("import sys\nfrom plexity_plugins.extractors.sandbox import _WARM_UP_PAGE, _resolve, unpack_page, pack_page\n"
            "from plexity_plugins.extractors import learned\n"
            "page = sys.stdin.read()\n"
            f"_resolve({name!r})(unpack_page(pack_page(_WARM_UP_PAGE)))\n"
            f"_resolve({name!r})(unpack_page(pack_page(page)))\n"
            "print(sorted(m for m in ('numpy', 'blingfire', 'plexity_plugins.text.sentences',\n"
            "                         'plexity_plugins.scoring.scorer') if m in sys.modules))\n"
            "texts, rows, _ = learned.read_page(page)\n"
            "print(sum(0.1 <= p < 0.5 for p in learned.load_forest().probabilities(rows)))")
    out = subprocess.run([sys.executable, "-c", code], input=golden.pages()["sample-00"], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert int(out[1]) > 0  # (blocks the second look looked at again)


def test_a_child_set_aside_is_taken_by_the_next_extractor_of_the_same_name_in_this_process():
    others = extraction_children()  # (another test's in this worker process)
    checked = TimeLimitedExtractor("tags", timeout=10)
    checked.warm_up()
    checked.close(set_aside=True)  # (as plexity run's check of the installation, when its tasks run here)
    kept = extraction_children() - others
    assert len(kept) == 1  # ready, waiting
    other = TimeLimitedExtractor("fast", timeout=10)  # another extractor: a child of its own
    task = TimeLimitedExtractor("tags", timeout=10)
    try:
        assert task(PAGE) == extract.html_to_text_tags(PAGE)
        assert extraction_children() - others == kept  # the same process: no second start
        other(PAGE)
        assert len(extraction_children() - others - kept) == 1
    finally:
        task.close()
        other.close()
    assert not extraction_children() - others


def test_plexity_run_with_one_worker_starts_one_extraction_child_not_two(tmp_path):
    # its check of the installation starts a child before any task; the task, run in the same process, takes it
    script = ("import sys\nfrom plexity_plugins.extractors import sandbox\nstarted = []\n"
              "start = sandbox._Child.__init__\n"
              "def counted(self, *args):\n    start(self, *args)\n    started.append(self.process.pid)\n"
              "sandbox._Child.__init__ = counted\nfrom plexity_plugins.cli import main\n"
              f"status = main(['run', {str(Path(__file__).parent.parent / 'examples' / 'sample.warc.gz')!r}, "
              f"'-o', {str(tmp_path / 'out')!r}, '--workers', '1'])\n"
              "print(status, len(started))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert done.stdout.split("\n")[-2] == "0 1", done.stdout + done.stderr


SAMPLE_WARC = str(Path(__file__).parent.parent / "examples" / "sample.warc.gz")


@pytest.mark.parametrize("command, later, given, children", [
    ("run", "datatrove.io", SAMPLE_WARC, "[False]"),
    ("clean", "plexity_plugins.scoring.scorer", SAMPLE_WARC, "[False]"),
    ("clean", "plexity_plugins.scoring.scorer", "a.txt", "[]")])  # (text: nothing to extract, no child)
def test_plexity_run_and_clean_start_their_one_extraction_child_before_their_own_start_up(tmp_path, command, later,
                                                                                          given, children):
    # the child imports its extractor while the command imports datatrove (run) or loads its model (both), instead
    # of the command waiting for it once those are done (~0.1-0.2 s of wall clock of each start)
    (tmp_path / "a.txt").write_text("The council approved the budget for the new library on Tuesday.")
    script = ("import sys\nfrom plexity_plugins.extractors import sandbox\nstarted = []\n"
              "start = sandbox._Child.__init__\n"
              f"def counted(self, *args):\n    start(self, *args)\n    started.append({later!r} in sys.modules)\n"
              "sandbox._Child.__init__ = counted\nfrom plexity_plugins.cli import main\n"
              f"status = main([{command!r}, {given!r}, '-o', {str(tmp_path / 'out')!r}])\n"
              "print(status, started)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert done.stdout.split("\n")[-2] == f"0 {children}", done.stdout + done.stderr


def test_it_pickles_as_its_settings():
    copy = pickle.loads(pickle.dumps(TimeLimitedExtractor("tags", timeout=3, processes=2)))
    assert (copy.name, copy.timeout, copy.processes) == ("tags", 3, 2)
    assert copy(PAGE) == extract.html_to_text_tags(PAGE)
    copy.close()


# -- the limit in every front end -----------------------------------------------------------

def test_plexity_clean_skips_a_page_over_the_limit_and_cleans_the_rest(tmp_path):
    import json
    import subprocess
    import sys

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "slow.html").write_text(SLOW_PAGE)
    (tmp_path / "in" / "fine.html").write_text(PAGE)
    run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "in"),
                          "--output-dir", str(tmp_path / "out"), "--extractor", "trafilatura",
                          "--extract-timeout", "0.5", "--write-dropped", "-q"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"extraction_failed": 1} and stats["documents"] == 1
    dropped = [json.loads(line) for line in (tmp_path / "out" / "plexity-dropped.jsonl").read_text().splitlines()]
    assert any(d["source"].endswith("slow.html") and "longer than 0.5 s" in d.get("detail", "") for d in dropped)
    assert "The council approved the budget" in (tmp_path / "out" / "fine.html.txt").read_text()


def test_the_scrapy_pipeline_drops_an_item_over_the_limit_and_goes_on():
    import asyncio

    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_EXTRACTOR": "trafilatura", "PLEXITY_EXTRACT_TIMEOUT": 0.5,
                                         "PLEXITY_THREADS": 1})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        with pytest.raises(DropItem, match="extraction_failed: extraction took longer than 0.5 s"):
            asyncio.run(pipeline.process_item({"url": "http://x/slow", "html": SLOW_PAGE}))
        item = asyncio.run(pipeline.process_item({"url": "http://x/fine", "html": PAGE}))
        assert "The council approved the budget" in item["text"]
        assert crawler.stats.get_value("plexity/items_dropped/extraction_failed") == 1  # http://x/slow
    finally:
        pipeline.close_spider()


def test_the_web_api_answers_422_for_a_page_over_the_limit_and_then_serves_the_next():
    from web_server import post, start_server, stop_server

    process, url = start_server(["--extract-timeout", "0.5"])
    try:
        status, data, _ = post(url, {"text": SLOW_PAGE, "format": "html", "extractor": "trafilatura"})
        assert status == 422
        # what went wrong, and the option the server's operator would change (as for 408 and 413)
        assert data == {"error": "could not extract text from the HTML in time: extraction took longer than "
                                 "0.5 s (the server's --extract-timeout)", "limit": "--extract-timeout"}
        status, data, _ = post(url, {"text": PAGE, "format": "html", "extractor": "trafilatura"})
        assert status == 200 and data["sentences"]
    finally:
        stop_server(process)


def test_the_extraction_child_imports_the_package_its_caller_runs_not_one_in_the_current_folder(tmp_path):
    # a folder that holds another (here: broken) `plexity_plugins`, as a second checkout would:
    # `python -m` puts the current folder first on the child's path, which then ran other code
    decoy = tmp_path / "work"
    (decoy / "plexity_plugins").mkdir(parents=True)
    (decoy / "plexity_plugins" / "__init__.py").write_text("raise ImportError('the wrong plexity_plugins')\n")
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    plexity = Path(sys.executable).parent / "plexity"
    done = subprocess.run([str(plexity), "clean", str(page), "-o", str(tmp_path / "out")], cwd=decoy,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "The council approved the budget" in (tmp_path / "out" / "page.html.txt").read_text()


REPO = Path(__file__).resolve().parent.parent


def another_version(tmp_path) -> Path:
    """A folder holding another copy of this package, as an older installed version would be: its tags
    extractor gives a text of its own, to tell which copy extracted a page."""
    folder = tmp_path / "installed"
    shutil.copytree(REPO / "plexity_plugins", folder / "plexity_plugins",
                    ignore=shutil.ignore_patterns("data", "__pycache__"))
    with open(folder / "plexity_plugins" / "extractors" / "__init__.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef html_to_text_tags(html):\n    return 'the other version'\n")
    return folder


def test_a_script_that_puts_a_checkout_on_its_path_gets_an_extraction_child_of_that_checkout(tmp_path):
    # another version first on the interpreter's own path (here PYTHONPATH), and a script that puts the checkout
    # before it: the child imported the other version (-P, the caller's path not passed), a silent mix
    script = tmp_path / "extract.py"
    script.write_text(f"import sys\nsys.path.insert(1, {str(REPO)!r})\n"
                      "from plexity_plugins.extractors.sandbox import TimeLimitedExtractor\n"
                      f"extractor = TimeLimitedExtractor('tags', timeout=60)\nprint(extractor({PAGE!r}))\n"
                      "extractor.close()\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(another_version(tmp_path))}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == extract.html_to_text_tags(PAGE) + "\n"


def test_an_extraction_child_of_another_version_than_its_caller_s_stops_in_one_line(tmp_path):
    # (what the child checks first: a caller whose package is installed, and a child that found another
    # version before it, as a caller that changed its own path can make it)
    other = another_version(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(other), "PLEXITY_CALLER_PACKAGE": str(REPO / "plexity_plugins")}
    done = subprocess.run([sys.executable, "-P", "-c", "from plexity_plugins.extractors import sandbox\n"
                           "print(sandbox._other_package())"], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout == (f"the extraction process imported plexity_plugins from {other}, not from {REPO} as this "
                           f"process did: give that folder on PYTHONPATH, or install it (pip install -e)\n")


def test_an_extraction_process_that_cannot_start_stops_the_run_instead_of_skipping_pages(monkeypatch):
    from plexity_plugins.extractors import ExtractionError
    from plexity_plugins.errors import ExtractorCannotStart

    monkeypatch.setattr(sys, "executable", "/bin/false")  # an interpreter that exits at once
    extractor = TimeLimitedExtractor("tags", timeout=10)
    try:
        with pytest.raises(ExtractorCannotStart, match="could not start") as raised:
            extractor(PAGE)
        assert not isinstance(raised.value, ExtractionError)  # not a page's counted skip
    finally:
        extractor.close()
