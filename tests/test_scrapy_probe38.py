"""The pipeline in a Scrapy project as users compose it: several spiders in one process, a crawl stopped by force.

Each test runs real crawls in a subprocess (a script of the user's own, or `scrapy runspider`) against a site served
on 127.0.0.1 (examples/scrapy_project/demo_site.py), the filter enabled by its add-on.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXAMPLES

sys.path.insert(0, str(EXAMPLES / "scrapy_project"))
from demo_site import build_site, serve  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent
ADDON = "ADDONS={\"plexity_plugins.scrapy.PlexityAddon\": 0}"


def run_script(directory: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    """`python script.py BASE_URL *args` in `directory`, the demo site served meanwhile."""
    (directory / "script.py").write_text(script, encoding="utf-8")
    with serve(build_site(10_000)) as base:
        return subprocess.run([sys.executable, "script.py", base, *args], cwd=directory, capture_output=True,
                              text=True, timeout=300, env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})


def wait_for(path: Path, text: str, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while text not in path.read_text(errors="replace"):
        assert process.poll() is None and time.monotonic() < deadline, path.read_text()[-5000:]
        time.sleep(0.1)


# -- several spiders in one process ---------------------------------------------------------

SPIDERS_OF_ONE_PROCESS = '''
import sys

import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.utils.log import configure_logging
from scrapy.utils.reactor import install_reactor

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from twisted.internet import defer, reactor

URL = sys.argv[1]


class Library(scrapy.Spider):
    name = "library"
    start_urls = [URL + "news/library.html"]

    def parse(self, response):
        yield {"url": response.url, "html": response.text}


class River(Library):
    name = "river"
    start_urls = [URL + "news/river.html"]


class OwnFile(Library):
    """Its own file, by the spider's setting (custom_settings), its name filled in."""
    name = "own"
    custom_settings = {"PLEXITY_DROPPED_FILE": "dropped-%(name)s.jsonl"}


configure_logging({"LOG_LEVEL": "INFO"})
runner = CrawlerRunner({ADDON: {"plexity_plugins.scrapy.PlexityAddon": 0}, "PLEXITY_EXTRACTOR": "tags",
                        "TELNETCONSOLE_ENABLED": False, "PLEXITY_DROPPED_FILE": "dropped.jsonl",
                        "FEEDS": {"items-%(name)s.jsonl": {"format": "jsonlines"}}})


@defer.inlineCallbacks
def crawl():
    crawls = [runner.crawl(Library), runner.crawl(River), runner.crawl(OwnFile)]
    yield defer.DeferredList(crawls)  # (River's fails as it starts)
    print("AGAIN", flush=True)
    yield runner.crawl(River)  # (Library's crawl has ended: its file is free)
    reactor.stop()


crawl()
reactor.run()
'''.replace("{ADDON: ", '{"ADDONS": ')


def test_two_crawls_of_one_process_given_one_dropped_file_the_second_does_not_start(tmp_path):
    # Two spiders of one CrawlerRunner (or CrawlerProcess), one PLEXITY_DROPPED_FILE: the second does not start,
    # as a second process's crawl does not, naming the spider that writes the file and how to give each its own.
    # (Both pipelines were made before either opened the file, so the second crawled on without it: its dropped rows
    # lost, counted, and an ERROR saying the file was written "by another process".)
    process = run_script(tmp_path, SPIDERS_OF_ONE_PROCESS)
    log = process.stderr
    assert "cannot be written" not in log, log[-5000:]
    said = [line for line in log.splitlines() if "CRITICAL: plexity:" in line]
    assert len(said) == 1 and said[0].endswith(
        "plexity: the crawl cannot start: PLEXITY_DROPPED_FILE is 'dropped.jsonl', which another crawl of this "
        "process writes (spider 'library'): give each crawl its own file, e.g. 'dropped-%(name)s.jsonl'"), log[-5000:]
    # The first spider's rows and the one with its own file are whole; once the first has closed, the file is free
    # for the next crawl of the process (the river spider run again, after it)
    own = [json.loads(line) for line in (tmp_path / "dropped-own.jsonl").read_text().splitlines()]
    assert own and all(row["source"].endswith("/news/library.html") for row in own)
    assert "AGAIN" in process.stdout
    rows = [json.loads(line) for line in (tmp_path / "dropped.jsonl").read_text().splitlines()]
    assert rows and all(row["source"].endswith("/news/river.html") for row in rows)
    assert len((tmp_path / "items-river.jsonl").read_text().splitlines()) == 1  # (its second crawl's item only)
    assert len((tmp_path / "items-library.jsonl").read_text().splitlines()) == 1


# -- Ctrl-C twice ----------------------------------------------------------------------------

QUEUED_ITEMS_SPIDER = '''
import scrapy

PAGE = "<html><body>" + "".join(f"<p>The council met on day {i} and talked about the library and the river for a "
                                f"long time.</p>" for i in range(20000)) + "</body></html>"


class QueuedItems(scrapy.Spider):
    """Yields 80 large pages at once: they wait for the pipeline's worker thread (CONCURRENT_ITEMS, 100)."""
    name = "queued"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        for number in range(80):
            yield {"url": f"{response.url}#{number}", "html": PAGE}
'''


def _cpu_seconds(pid: int) -> float:
    """The CPU seconds process `pid` has used so far (user and system, from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_seconds_at_exit(process: subprocess.Popen, timeout: float) -> float:
    """Waits for `process` to exit (reaping it): the CPU seconds it used in all."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        time.sleep(0.05)
    raise TimeoutError(f"still running after {timeout} s")


def test_a_forced_shutdown_leaves_the_items_waiting_for_the_worker_thread_and_exits_at_once(tmp_path):
    # Ctrl-C twice stops the reactor without closing the spider: the items waiting for the worker thread are never
    # cleaned, and the process exits once the item being cleaned is done.  (It waited at its exit for the worker
    # thread to clean every item queued, up to CONCURRENT_ITEMS of them: here 80 pages of 2 MB, 20 s.)
    (tmp_path / "spider.py").write_text(QUEUED_ITEMS_SPIDER, encoding="utf-8")
    log = tmp_path / "log.txt"
    with serve(build_site(10_000)) as base, open(log, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}", "-O", "items.jsonl",
             "-s", ADDON, "-s", "PLEXITY_DROPPED_FILE=dropped.jsonl", "-s", "TELNETCONSOLE_ENABLED=False"],
            cwd=tmp_path, stderr=err, env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})
        try:
            wait_for(log, "Scraped from", process)
            process.send_signal(signal.SIGINT)
            wait_for(log, "shutting down gracefully", process)
            before = _cpu_seconds(process.pid)
            process.send_signal(signal.SIGINT)
            cpu = _cpu_seconds_at_exit(process, timeout=120) - before
        finally:
            process.kill()
    said = log.read_text()
    assert "forcing unclean shutdown" in said, said[-3000:]
    # the work done from the second Ctrl-C to the exit, in CPU seconds (0.9 s; 20.5 s when the process cleaned the
    # queued items first): a wall clock counted the machine's load too (0.4 s alone, 11 s beside two busy processes)
    assert cpu < 5, f"{cpu:.1f} s of CPU from the second Ctrl-C to the exit"
    # The log's last line says how many were never cleaned
    [stopped] = [line for line in said.splitlines() if "the crawl stopped without closing the spider" in line]
    never = re.search(r"of the 80 item\(s\) seen until then are in .*dropped.jsonl, which ends there; (\d+) of them, "
                      r"waiting for the worker thread, were never cleaned$", stopped)
    assert never and 50 < int(never.group(1)) < 80, stopped
    assert "Traceback" not in said, said[-3000:]


# -- scrapy check and scrapy shell in a project whose settings.py names a dropped file -----------------------

PROJECT_SETTINGS = '''
SPIDER_MODULES = ["project.spiders"]
ADDONS = {"plexity_plugins.scrapy.PlexityAddon": 0}
PLEXITY_EXTRACTOR = "tags"
PLEXITY_DROPPED_FILE = "dropped.jsonl"
FEEDS = {"items.jsonl": {"format": "jsonlines", "overwrite": True}}
TELNETCONSOLE_ENABLED = False
'''
CONTRACT_SPIDER = '''
import scrapy


class Pages(scrapy.Spider):
    name = "pages"

    def parse(self, response):
        """@url {url}news/library.html
        @returns items 1 1
        @scrapes url html
        """
        yield {{"url": response.url, "html": response.text}}
'''
LAST_CRAWL = '{"source": "https://example.org/", "reason": "too_short", "detail": "of the last crawl"}\n'


def project_command(directory: Path, *command: str) -> subprocess.CompletedProcess:
    """`scrapy COMMAND` in a project (PROJECT_SETTINGS, a spider with a contract) whose dropped file and feed hold
    the last crawl's rows; `{url}` in `command` is the demo site's."""
    (directory / "project" / "spiders").mkdir(parents=True)
    (directory / "scrapy.cfg").write_text("[settings]\ndefault = project.settings\n")
    (directory / "project" / "__init__.py").write_text("")
    (directory / "project" / "settings.py").write_text(PROJECT_SETTINGS)
    (directory / "dropped.jsonl").write_text(LAST_CRAWL)
    (directory / "items.jsonl").write_text('{"url": "https://example.org/"}\n')
    with serve(build_site(10_000)) as base:
        (directory / "project" / "spiders" / "__init__.py").write_text("")
        (directory / "project" / "spiders" / "pages.py").write_text(CONTRACT_SPIDER.format(url=base))
        return subprocess.run([sys.executable, "-m", "scrapy", *(part.format(url=base) for part in command)],
                              cwd=directory, capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})


def test_scrapy_check_runs_without_the_pipeline_and_leaves_the_last_crawls_dropped_file(tmp_path):
    # `scrapy check` empties ITEM_PIPELINES and FEEDS (its contracts discard the items; opening them "only causes
    # side effects, such as an empty output file"): the add-on leaves the pipeline off there too, as it does for
    # `-s ITEM_PIPELINES={}`.  (It enabled it again: the model was loaded for nothing, and the last crawl's
    # PLEXITY_DROPPED_FILE replaced by an empty file, while Scrapy's feed was left as it was.)
    process = project_command(tmp_path, "check", "-v")
    assert process.returncode == 0 and "OK" in process.stderr, process.stderr[-3000:]
    assert (tmp_path / "dropped.jsonl").read_text() == LAST_CRAWL
    assert (tmp_path / "items.jsonl").read_text() == '{"url": "https://example.org/"}\n'  # (Scrapy's own)


def test_scrapy_shell_leaves_the_last_crawls_dropped_file_as_it_was(tmp_path):
    # `scrapy shell URL` opens the spider, and with it the pipeline, and never closes it: at its exit a pipeline
    # that saw no item leaves PLEXITY_DROPPED_FILE as it was, as Scrapy leaves its feed.  (A forced shutdown's rule
    # named the file of no rows at exit: the last crawl's rows replaced by nothing.)
    process = project_command(tmp_path, "shell", "{url}news/library.html", "-c", "response.status")
    assert process.returncode == 0 and process.stdout.strip() == "200", process.stderr[-3000:]
    assert (tmp_path / "dropped.jsonl").read_text() == LAST_CRAWL
    assert not (tmp_path / ".dropped.jsonl.part").exists() and "plexity: the crawl stopped" not in process.stderr
    assert (tmp_path / "items.jsonl").read_text() == '{"url": "https://example.org/"}\n'
