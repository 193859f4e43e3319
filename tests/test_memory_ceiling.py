"""A memory ceiling per extraction child (plexity_plugins.extractors.sandbox), in every front end.

The pages hold as many attributes as `extractors.markup` lets a page keep (490,000, in elements of 1,000) and then
text in 100,000 paragraphs: past no bound on the markup, they grow a `dense` child by ~250 MiB at 14 MB and ~410 MiB
at 45 MB (within the default ceiling), a `tags` child (libxml2's tree, and its text walked in Python) by ~900 MiB at
45 MB.  (Elements of 1,000 attributes, the shape that grew `dense` to 1.8 GB at 45 MB, are now refused by every
reader past `extractors.markup.MAX_PAGE_ATTRIBUTES` before the page is parsed; so are a million sibling <span>s, the
shape that grew a child to 1.4 GB at 14 MB and 4.2 GB at 45 MB: more tags than it reads, `MAX_TAGS`.)  Each front
end runs in a process of its own, and `process_tree.TreeMemory` samples the memory of that process and all its
children from /proc.  A low ceiling shows the mechanism in each front end quickly (with `dense`, which holds
lexbor's whole tree); one test per front end with the default ceiling shows the bound on the whole process tree
(with `tags`, which reaches that ceiling at 45 MB).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plexity_plugins.extractors.sandbox import DEFAULT_EXTRACT_MEMORY, TimeLimitedExtractor, extract_memory_limit
from plexity_plugins.errors import ExtractionMemoryLimit, ExtractorDied
from helpers import extraction_children
from process_tree import mb, run_measured
from hostile_pages import FINE, big

TREE_BOUND = 1_200_000_000  # bytes: the whole process tree, with the default ceiling
LOW = "200MiB"  # a ceiling the sibling pages pass in about a second


def siblings(count: int) -> str:
    """`count` sibling <span>s: 14 bytes each (3.2 million: 45 MB)."""
    return "<html><body><div>" + "<span>x</span>" * count + "</div></body></html>"


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    """html/{big,fine}.html (14 MB), html45/big.html (45 MB) and the same pages as WARC files in warc/ and warc45/;
    siblings45/siblings.html."""
    from warcio.warcwriter import WARCWriter
    from warc_corpus import response, write_warc

    root = tmp_path_factory.mktemp("pages")
    dummy = WARCWriter(io.BytesIO())
    for name, size in (("", 14_000_000), ("45", 45_000_000)):
        page = big(size)
        (root / f"html{name}").mkdir()
        (root / f"html{name}" / "big.html").write_text(page)
        (root / f"warc{name}").mkdir()
        records = [response(dummy, "http://t/big", page.encode())]
        if not name:
            (root / "html" / "fine.html").write_text(FINE)
            records.append(response(dummy, "http://t/fine", FINE.encode()))
        write_warc(root / f"warc{name}" / "pages.warc.gz", records)
    (root / "siblings45").mkdir()
    (root / "siblings45" / "siblings.html").write_text(siblings(3_200_000))
    return root


# -- the sandbox itself ---------------------------------------------------------------------

def test_a_child_past_its_ceiling_is_killed_and_the_next_page_gets_a_fresh_one():
    extractor = TimeLimitedExtractor("dense", memory_limit=LOW)
    try:
        with pytest.raises(ExtractionMemoryLimit, match="more than 200 MiB of memory"):
            extractor(big(14_000_000))
        assert "The council approved the budget" in extractor(FINE)
    finally:
        extractor.close()


def test_a_child_killed_from_outside_is_a_death_not_a_memory_limit():
    import os
    import signal
    import threading

    extractor = TimeLimitedExtractor("dense", memory_limit=0, timeout=60)
    before = extraction_children()
    extractor.warm_up()
    (child,) = extraction_children() - before  # its child, ready
    threading.Timer(0.3, os.kill, (child, signal.SIGKILL)).start()
    try:
        with pytest.raises(ExtractorDied):
            extractor(big(14_000_000))
        assert "The council approved the budget" in extractor(FINE)
    finally:
        extractor.close()


def test_the_ceiling_comes_from_the_argument_else_the_environment_else_the_default(monkeypatch):
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    assert extract_memory_limit() == DEFAULT_EXTRACT_MEMORY == 768 * 2**20
    assert extract_memory_limit("512MiB") == 512 * 2**20 and extract_memory_limit(10**9) == 10**9
    assert extract_memory_limit(0) is None and extract_memory_limit("0") is None  # no ceiling
    monkeypatch.setenv("PLEXITY_EXTRACT_MEMORY", "300MB")
    assert extract_memory_limit() == 300 * 10**6
    assert TimeLimitedExtractor("tags").memory_limit == 300 * 10**6
    assert extract_memory_limit("1GiB") == 2**30  # the argument wins
    with pytest.raises(ValueError, match="0 \\(none\\) or more bytes"):
        extract_memory_limit(-1)
    monkeypatch.setenv("PLEXITY_EXTRACT_MEMORY", "lots")
    with pytest.raises(ValueError, match="PLEXITY_EXTRACT_MEMORY.*not a size"):
        TimeLimitedExtractor("tags")
    # no time limit and no ceiling: extraction in the calling thread, no child
    assert not TimeLimitedExtractor("tags", timeout=0, memory_limit=0).sandboxed


# -- every front end ------------------------------------------------------------------------

def _clean(pages: Path, tmp_path: Path, folder: str, *options: str):
    run, memory = run_measured([sys.executable, "-m", "plexity_plugins.cli", "clean", str(pages / folder),
                                "-o", str(tmp_path / "out"), "--write-dropped", "-q", *options], timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads((tmp_path / "out" / "plexity-stats.json").read_text()), memory


def _run(pages: Path, tmp_path: Path, folder: str, *options: str):
    run, memory = run_measured([sys.executable, "-m", "plexity_plugins.cli", "run", str(pages / folder),
                                "-o", str(tmp_path / "out"), *options], timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    merged = json.loads((tmp_path / "out" / "logs" / "stats.json").read_text())
    readers = ("learned", "dense", "auto", "tags")
    extractor = next(step for step in merged if any(name in step["name"] for name in readers))
    return {k: v.get("total", v) if isinstance(v, dict) else v for k, v in extractor["stats"].items()}, memory


_SCRAPY = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    settings = {"PLEXITY_THREADS": 1, "PLEXITY_EXTRACTOR": sys.argv[3]}
    if sys.argv[2] != "default":
        settings["PLEXITY_EXTRACT_MEMORY"] = sys.argv[2]
    crawler = get_crawler(settings_dict=settings)
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    dropped = []
    for path in sorted(Path(sys.argv[1]).glob("*.html")):
        try:
            asyncio.run(pipeline.process_item({"url": path.name, "html": path.read_bytes()}))
        except DropItem as exc:
            dropped.append(str(exc))
    pipeline.close_spider()
    print(json.dumps({**crawler.stats.get_stats(), "dropped": dropped}, default=str))
""")

_DATATROVE = textwrap.dedent("""
    import json, sys
    from plexity_plugins import datatrove
    from plexity_plugins.datatrove import WarcHtmlReader

    reader = WarcHtmlReader(sys.argv[1])
    step = getattr(datatrove, sys.argv[3])
    extractor = step() if sys.argv[2] == "default" else step(memory_limit=sys.argv[2])
    texts = [doc.text for doc in extractor.run(reader.run())]
    print(json.dumps({"texts": texts, **{k: extractor.stats[k].total for k in ("memory_limit", "extracted")}}))
""")


def _scrapy(pages: Path, folder: str, ceiling: str = "default", extractor: str = "dense"):
    run, memory = run_measured([sys.executable, "-c", _SCRAPY, str(pages / folder), ceiling, extractor], timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1]), memory


def _datatrove(pages: Path, folder: str, ceiling: str = "default", step: str = "DenseExtractor"):
    run, memory = run_measured([sys.executable, "-c", _DATATROVE, str(pages / folder), ceiling, step], timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1]), memory


def test_plexity_clean_skips_the_page_as_memory_limit_and_cleans_the_rest(pages, tmp_path):
    stats, _ = _clean(pages, tmp_path, "html", "--extract-memory", LOW, "--extractor", "dense")
    assert stats["skip_reasons"] == {"memory_limit": 1} and stats["documents"] == 1
    assert "The council approved the budget" in (tmp_path / "out" / "fine.html.txt").read_text()
    dropped = [json.loads(line) for line in (tmp_path / "out" / "plexity-dropped.jsonl").read_text().splitlines()]
    assert any(d["source"].endswith("big.html") and d["reason"] == "memory_limit" for d in dropped)


def test_plexity_clean_marks_a_warc_record_past_the_ceiling(pages, tmp_path, monkeypatch):
    from warcio.archiveiterator import ArchiveIterator

    monkeypatch.setenv("PLEXITY_EXTRACT_MEMORY", LOW)  # the environment sets the default
    stats, _ = _clean(pages, tmp_path, "warc", "--extractor", "dense")
    assert stats["skip_reasons"] == {"memory_limit": 1} and stats["documents"] == 1
    with open(tmp_path / "out" / "pages.warc.gz", "rb") as f:
        skipped = {r.rec_headers.get_header("WARC-Target-URI"): r.rec_headers.get_header("X-Plexity-Skipped")
                   for r in ArchiveIterator(f)}
    assert skipped == {"http://t/big": "memory_limit", "http://t/fine": None}


def test_plexity_run_counts_the_page_as_memory_limit(pages, tmp_path):
    stats, _ = _run(pages, tmp_path, "warc", "--extract-memory", LOW, "--extractor", "dense")
    assert stats["memory_limit"] == 1 and stats["extracted"] == 1


def test_the_web_api_answers_a_page_past_the_ceiling_with_422_naming_the_option_and_goes_on(pages):
    # 422 as for a page past the time limit: the request is well formed (it was a 400, which says it is not),
    # and sent again it would be refused again (a 503 would have the client retry it)
    from web_server import post, start_server, stop_server

    process, url = start_server(["--extract-memory", LOW, "--max-bytes", "20MB"])
    try:
        page = (pages / "html" / "big.html").read_text()
        status, data, _ = post(url, {"text": page, "format": "html", "extractor": "dense"})
        assert status == 422
        assert data == {"error": "could not extract text from the HTML: extraction needed more than 200 MiB of "
                                 "memory (the server's --extract-memory)", "limit": "--extract-memory"}
        status, data, _ = post(url, {"text": FINE, "format": "html", "extractor": "dense"})
        assert status == 200 and "The council approved the budget" in data["clean_text"]
    finally:
        stop_server(process)


def test_the_scrapy_pipeline_drops_the_item_as_memory_limit_and_goes_on(pages):
    stats, _ = _scrapy(pages, "html", LOW)
    assert stats["plexity/items_dropped/memory_limit"] == 1 and stats["plexity/items_cleaned"] == 1
    (dropped,) = stats["dropped"]  # the big page, not the fine one
    assert dropped.startswith("plexity: memory_limit: ") and dropped.endswith("(big.html)"), dropped


def test_the_datatrove_extractor_step_counts_memory_limit(pages):
    stats, _ = _datatrove(pages, "warc", LOW)
    assert stats["memory_limit"] == 1 and stats["extracted"] == 1
    assert len(stats["texts"]) == 1 and "The council approved the budget" in stats["texts"][0]


# -- the bound on the whole process tree, with the default ceiling ---------------------------

@pytest.mark.parametrize("folder, extractor, skipped", [
    # dense reads both pages within the ceiling (every bound on the markup: before, a 45 MB page of 22.5 million
    # attributes grew it past it); tags stops at the 45 MB one
    ("html", "dense", {}), ("html45", "dense", {}), ("html45", "tags", {"memory_limit": 1}),
    # 3.2 million sibling elements (45 MB): dense, and auto, refuse a page of more tags than they read before they
    # parse it (before: dense grew to the ceiling, auto to it in trafilatura); the default, learned, stops at its
    # bound on elements, and refuses the page (a counted skip naming the bound) rather than pass off its first part
    # as the whole
    ("siblings45", "dense", {"extraction_failed": 1}), ("siblings45", "auto", {"extraction_failed": 1}),
    ("siblings45", "learned", {"extraction_failed": 1})])
def test_plexity_clean_stays_under_the_bound_with_the_default_ceiling(pages, tmp_path, folder, extractor, skipped,
                                                                       monkeypatch):
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    stats, memory = _clean(pages, tmp_path, folder, "--extractor", extractor)
    assert stats["skip_reasons"] == skipped
    assert memory.peak_rss < TREE_BOUND, f"peak RSS of the process tree: {mb(memory.peak_rss)}"


def test_plexity_run_stays_under_the_bound_with_the_default_ceiling(pages, tmp_path, monkeypatch):
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    stats, memory = _run(pages, tmp_path, "warc45", "--extractor", "tags")
    assert stats["memory_limit"] == 1
    assert memory.peak_rss < TREE_BOUND, f"peak RSS of the process tree: {mb(memory.peak_rss)}"


def test_the_scrapy_pipeline_stays_under_the_bound_with_the_default_ceiling(pages, monkeypatch):
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    stats, memory = _scrapy(pages, "html45", extractor="tags")
    assert stats["plexity/items_dropped/memory_limit"] == 1
    assert [d.rsplit(" ", 1)[-1] for d in stats["dropped"]] == ["(big.html)"]
    assert memory.peak_rss < TREE_BOUND, f"peak RSS of the process tree: {mb(memory.peak_rss)}"


def test_the_datatrove_steps_stay_under_the_bound_with_the_default_ceiling(pages, monkeypatch):
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    stats, memory = _datatrove(pages, "warc45", step="HtmlTagsExtractor")
    assert stats["memory_limit"] == 1
    assert memory.peak_rss < TREE_BOUND, f"peak RSS of the process tree: {mb(memory.peak_rss)}"


# -- text laid out as one long line ----------------------------------------------------------

ONE_LINE_BOUND = 600_000_000  # bytes, the whole process tree (measured: ~310 MB for both below)


def test_a_45_mb_text_of_one_line_is_cleaned_in_bounded_memory(tmp_path):
    # (the sentence splitter took the line whole: 1.9 GB for the process tree)
    (tmp_path / "in").mkdir()
    words = b"The council approved the budget for the new library on Tuesday evening and "
    (tmp_path / "in" / "one-line.txt").write_bytes((words * (45_000_000 // len(words) + 1))[:45_000_000])
    stats, memory = _clean(tmp_path, tmp_path, "in")
    assert stats["documents"] == 1 and stats["completed"] is True
    assert memory.peak_rss < ONE_LINE_BOUND, mb(memory.peak_rss)


def test_plexity_score_reads_stdin_up_to_the_cap_and_scores_a_20_mb_word_in_bounded_memory(tmp_path):
    word = tmp_path / "word.txt"
    word.write_bytes(b"x" * 20_000_000)  # no space: one token, one line (969 MB before)
    with open(word, "rb") as stdin:
        done, memory = run_measured([sys.executable, "-m", "plexity_plugins.cli", "score", "-", "--plain"],
                                    timeout=300, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert memory.peak_rss < ONE_LINE_BOUND, mb(memory.peak_rss)
    over = tmp_path / "over.txt"
    over.write_bytes(b"The council met. " * 3_000_000)  # 51 MB: over the cap, as plexity clean skips it
    with open(over, "rb") as stdin:
        done, memory = run_measured([sys.executable, "-m", "plexity_plugins.cli", "score", "-"], timeout=300,
                                    stdin=stdin)
    assert done.returncode == 2 and "more than 50,000,000 bytes" in done.stderr and not done.stdout
    assert len(done.stderr.strip().splitlines()) == 1


def test_in_a_small_job_the_default_ceiling_is_lowered_to_fit_it_and_said_once(pages, tmp_path, monkeypatch):
    # (the variables sbatch and salloc set for a job of 400M: `memory_of_job` reads them;
    # tests/test_slurm_memory_probe53 runs a real Slurm job that enforces them)
    monkeypatch.setenv("SLURM_JOB_ID", "1")
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "400")
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    run = subprocess.run(
        [sys.executable, "-m", "plexity_plugins.cli", "clean", str(pages / "html"), "-o", str(tmp_path / "out"),
         "-q", "--extractor", "dense"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["skip_reasons"] == {"memory_limit": 1} and stats["documents"] == 1  # (14 MB: dense ~250 MiB)
    said = [line for line in run.stderr.splitlines() if "the extraction memory ceiling is" in line]
    assert len(said) == 1 and ", not 768 MiB: this Slurm job's 400 MiB (its --mem) holds this process (" in said[0]
    # given, the ceiling is kept, and said to be more than the job leaves
    given = subprocess.run(
        [sys.executable, "-c", "from plexity_plugins.extractors.sandbox import TimeLimitedExtractor as T; "
                               "t = T('dense', memory_limit='512MiB'); "
                               "print(t.memory_limit >> 20); print(t.memory_note)"],
        capture_output=True, text=True, timeout=60)
    limit, note = given.stdout.splitlines()
    assert limit == "512" and note.startswith("the extraction memory ceiling 512 MiB is more than this Slurm job's "
                                              "400 MiB (its --mem) leaves a child beside this process (")


def forum_thread(posts: int) -> str:
    """An ordinary page of a forum thread: each post its author's link, its time, a paragraph and its links (1.2 MB
    at 3,000 posts, as large as many of WCXB's forum pages: a trafilatura child peaks at ~165 MiB reading it)."""
    post = ('<div class="post"><div class="meta"><a href="/u/{i}">user {i}</a> <span>2 hours ago</span></div>'
            '<p>The council approved the budget for the new library on day {i}. The building will open in the '
            'spring, the mayor said, and it will have a <a href="/r/{i}">reading room</a> for children.</p>'
            '<ul><li><a href="/reply/{i}">reply</a></li><li><a href="/share/{i}">share</a></li></ul></div>')
    return ("<html><head><title>The new library</title></head><body><main>"
            + "".join(post.format(i=i) for i in range(posts)) + "</main></body></html>")


def test_a_lowered_ceiling_stays_at_what_ordinary_pages_of_the_extractor_need_and_says_when_the_job_cannot_give_it(
        tmp_path, monkeypatch):
    # (a job of 256M leaves a child less than 128 MiB beside plexity clean: every extractor's ceiling at its floor)
    monkeypatch.setenv("SLURM_JOB_ID", "1")
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "256")
    monkeypatch.delenv("PLEXITY_EXTRACT_MEMORY", raising=False)
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "thread.html").write_text(forum_thread(3_000))

    def clean(extractor: str, *given: str):
        out = tmp_path / f"out-{extractor}{'-given' if given else ''}"
        run = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "html"), "-o",
                              str(out), "-q", "--extractor", extractor, *given],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        said = [line for line in run.stderr.splitlines() if "the extraction memory ceiling" in line]
        return json.loads((out / "plexity-stats.json").read_text()), said

    # trafilatura holds ~90 MiB at rest: at 128 MiB, the old floor of every extractor, this page is stopped ...
    stats, _ = clean("trafilatura", "--extract-memory", "128MiB")
    assert stats["skip_reasons"] == {"memory_limit": 1}
    # ... at its own floor it is read, and the note says the job cannot give that much
    stats, said = clean("trafilatura")
    assert stats["skip_reasons"] == {} and stats["documents"] == 1, stats
    assert len(said) == 1
    assert "the extraction memory ceiling is 224 MiB, not 768 MiB: this Slurm job's 256 MiB (its --mem) holds " \
           in said[0]
    assert "; 224 MiB, what ordinary pages of the trafilatura extractor need, may take the job past its memory: " \
           "give the job more memory" in said[0]
    # the default extractor keeps 128 MiB (its child peaks at ~64 MiB on WCXB's pages), and reads the page
    stats, said = clean("learned")
    assert stats["skip_reasons"] == {} and stats["documents"] == 1, stats
    assert len(said) == 1 and "the extraction memory ceiling is 128 MiB, not 768 MiB" in said[0]
    assert "; 128 MiB, what ordinary pages of the learned extractor need, may take" in said[0]
