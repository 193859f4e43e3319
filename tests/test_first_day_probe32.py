"""A stranger's first day, probe 32: a data engineer who already uses datatrove or Scrapy goes past the
README (datatrove's own Parquet and JSONL readers and writers around plexity's steps, stages chained with
depends= on each executor, a script run again without a logging_dir, Scrapy feeds of other formats, the command
line as a Unix user reaches for it); each dead end met now works or says what is wrong and what to do."""

from __future__ import annotations

import io
import json

import pytest

pytest.importorskip("datatrove")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader, ParquetReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter, ParquetWriter  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from helpers import read_jsonl_dir, wait_for_slurm_jobs  # noqa: E402
from warc_corpus import ARTICLE, page, response, write_warc  # noqa: E402

OTHER = ("Scientists from the university have measured the temperature of the river every morning for ten years. "
         "Their report shows that the water is cleaner than it has been for a generation.")


def run_pipeline(tmp_path, *steps) -> None:
    LocalPipelineExecutor(pipeline=list(steps), tasks=1, workers=1, logging_dir=str(tmp_path / "logs")).run()


def parquet_rows(folder) -> list[dict]:
    return [row for path in sorted(folder.glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


# -- datatrove's ParquetWriter after WarcHtmlReader ---------------------------------------------------

def test_a_crawl_with_a_page_the_crawler_cut_and_wet_text_is_written_by_datatroves_parquet_writer(tmp_path):
    # Before: WarcHtmlReader gave `warc_truncated` only to a page the crawler cut (WARC-Truncated, Common Crawl's
    # 1 MiB limit) and `warc_type`, `warc_refers_to` ... only to a WET record's text; datatrove's ParquetWriter takes
    # its schema from the first document, so the task stopped with "ValueError: Table schema does not match schema
    # used to create file" on the first crawl holding such a page, where datatrove's own WarcReader's did not.
    from plexity_plugins.datatrove import LearnedExtractor, PerplexitySentenceFilter, WarcHtmlReader

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    dummy = WARCWriter(io.BytesIO())
    html, wet = page(ARTICLE, OTHER).encode(), f"{ARTICLE}\n{OTHER}\n".encode()
    write_warc(crawl / "a.warc.gz", [
        response(dummy, "http://t/whole", html),
        response(dummy, "http://t/cut", html, warc_headers={"WARC-Truncated": "length"}),
        response(dummy, "http://t/undeclared", html, content_type=None),
    ])
    write_warc(crawl / "b.warc.wet.gz", [
        dummy.create_warc_record("http://t/wet", "conversion", payload=io.BytesIO(wet), length=len(wet),
                                 warc_headers_dict={"Content-Type": "text/plain", "WARC-Refers-To": "<urn:uuid:1>"}),
    ])
    run_pipeline(tmp_path, WarcHtmlReader(str(crawl)), LearnedExtractor(), PerplexitySentenceFilter(),
                 ParquetWriter(str(tmp_path / "documents")))
    metadata = {row["metadata"]["url"]: row["metadata"] for row in parquet_rows(tmp_path / "documents")}
    assert sorted(metadata) == ["http://t/cut", "http://t/undeclared", "http://t/wet", "http://t/whole"]
    assert {url: (m["warc_truncated"], m["warc_type"], m["warc_refers_to"]) for url, m in metadata.items()} == {
        "http://t/whole": ("", "", ""), "http://t/cut": ("length", "", ""), "http://t/undeclared": ("", "", ""),
        "http://t/wet": ("", "conversion", "<urn:uuid:1>")}
    assert metadata["http://t/wet"]["plexity_method"] == "regions"  # (still read as WET text)


# -- the exclusion writer: every dropped document, whatever its text ---------------------------------

def test_rows_whose_text_is_no_text_reach_a_parquet_exclusion_writer_beside_the_others(tmp_path):
    # Before: a row whose text is a list went to the exclusion writer as a list (ParquetWriter: "ArrowTypeError:
    # Expected bytes, got a 'list' object") and without the plexity_* fields the other dropped rows have (a PDF's
    # text: "Table schema does not match"): the task stopped, where the docs say such a row no longer stops it.
    from plexity_plugins.datatrove import PerplexitySentenceFilter

    (tmp_path / "dataset").mkdir()
    rows = [{"id": "short", "text": "Share on Facebook"}, {"id": "list", "text": ["A paragraph.", "Another."]},
            {"id": "pdf", "text": "%PDF-1.4\n\x00\x01\x02 stream"}, {"id": "good", "text": f"{ARTICLE}\n{OTHER}"}]
    (tmp_path / "dataset" / "a.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    run_pipeline(tmp_path, JsonlReader(str(tmp_path / "dataset")),
                 PerplexitySentenceFilter(method="region", exclusion_writer=ParquetWriter(str(tmp_path / "excluded"),
                                                                                          batch_size=1)),
                 ParquetWriter(str(tmp_path / "documents")))
    assert [row["id"] for row in parquet_rows(tmp_path / "documents")] == ["good"]
    excluded = {row["id"]: row for row in parquet_rows(tmp_path / "excluded")}
    assert {key: row["metadata"]["filter_reason"] for key, row in excluded.items()} == {
        "short": "too_short", "list": "input_not_text", "pdf": "input_not_text"}
    assert excluded["list"]["text"] == '["A paragraph.", "Another."]'  # (as its JSON: a str, as writers take)
    assert {row["metadata"]["plexity_verdict"] for row in excluded.values()} == {"dropped"}
    assert excluded["pdf"]["metadata"]["plexity_reason"] == "input_not_text"


def test_texts_given_as_bytes_that_are_dropped_reach_a_jsonl_exclusion_writer(tmp_path):
    # Before: a Parquet dataset whose text column is binary (the filter reads bytes as UTF-8) sent its dropped rows to
    # datatrove's JsonlWriter as bytes: "TypeError: Type is not JSON serializable: bytes", the task stopped. So did
    # PerplexityDocumentFilter's.
    from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter

    (tmp_path / "dataset").mkdir()
    pq.write_table(pa.table({"id": ["good", "pdf", "short"], "text": [
        f"{ARTICLE}\n{OTHER}".encode(), b"%PDF-1.4\n\x00\x01 stream", b"Share on Facebook"]}),
        tmp_path / "dataset" / "a.parquet")
    run_pipeline(tmp_path, ParquetReader(str(tmp_path / "dataset")),
                 PerplexitySentenceFilter(method="region", exclusion_writer=JsonlWriter(str(tmp_path / "excluded"))),
                 JsonlWriter(str(tmp_path / "documents")))
    assert [d["id"] for d in read_jsonl_dir(tmp_path / "documents")] == ["good"]
    excluded = {d["id"]: d for d in read_jsonl_dir(tmp_path / "excluded")}
    assert {key: d["metadata"]["filter_reason"] for key, d in excluded.items()} == {
        "pdf": "input_not_text", "short": "too_short"}
    assert excluded["short"]["text"] == "Share on Facebook"

    run_pipeline(tmp_path / "by-document", ParquetReader(str(tmp_path / "dataset")),
                 PerplexityDocumentFilter(max_perplexity=1.5, exclusion_writer=JsonlWriter(str(tmp_path / "excl2"))))
    excluded = {d["id"]: d["metadata"] for d in read_jsonl_dir(tmp_path / "excl2")}
    assert {key: m["filter_reason"] for key, m in excluded.items()} == {
        "good": "doc_perplexity_above_max", "pdf": "input_not_text", "short": "doc_perplexity_above_max"}
    assert excluded["pdf"]["plexity_doc_model"] == "" and excluded["pdf"]["plexity_passthrough"] == ""


# -- Scrapy: a CSV or XML feed beside the page given as bytes ------------------------------------------

FEEDS_SPIDER = '''
import scrapy

class PagesSpider(scrapy.Spider):
    name = "pages"
    custom_settings = {"ADDONS": {"plexity_plugins.scrapy.PlexityAddon": 0}, "TELNETCONSOLE_ENABLED": False,
                       "FEEDS": {"items.csv": {"format": "csv"},
                                 "items.jsonl": {"format": "jsonl", "fields": ["url", "text", "plexity"]}}}

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url + "utf8.html", url + "latin1.html"]

    def parse(self, response):
        yield {"url": response.url, "html": response.body, "encoding": response.headers.get("Content-Type")}
'''


def test_a_page_of_bytes_a_csv_feed_cannot_write_is_said_once_naming_the_feed_and_the_setting(tmp_path):
    # docs/scrapy.md has the spider yield response.body and leave it out of JSON feeds. A CSV feed writes
    # bytes as UTF-8 text and fails on a page in windows-1252: Scrapy's UnicodeDecodeError, the item left out of
    # that feed and of every feed after it (here the JSON-lines feed that leaves `html` out), where before only
    # Scrapy's traceback said so, not why nor what to do.
    import subprocess
    import sys

    from conftest import EXAMPLES

    sys.path.insert(0, str(EXAMPLES / "scrapy_project"))
    from demo_site import serve

    article = "".join(f"<p>{sentence}</p>" for sentence in (ARTICLE, OTHER))
    site = {"/utf8.html": ("text/html; charset=utf-8", f"<html><body>{article}</body></html>".encode()),
            "/latin1.html": ("text/html; charset=windows-1252",
                             f"<html><body><p>Caf\u00e9 society.</p>{article}</body></html>".encode("cp1252"))}
    (tmp_path / "spider.py").write_text(FEEDS_SPIDER)
    with serve(site) as base:
        process = subprocess.run([sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"url={base}"],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-3000:]
    assert "UnicodeDecodeError" in process.stderr  # (Scrapy's own: the feed exporter's)
    said = [line for line in process.stderr.splitlines() if "holds bytes" in line]
    assert len(said) == 1 and said[0].endswith(
        f"WARNING: plexity: {base}latin1.html: 'html' (PLEXITY_INPUT_FIELD) holds bytes that are not UTF-8, which "
        f"the feed items.csv cannot write (Scrapy's UnicodeDecodeError: the item is left out of it and of the feeds "
        f"after it): leave the field out, FEED_EXPORT_FIELDS = ['url', 'text', 'plexity'] (said once)"), said


# -- two stages, the second depending on the first (datatrove's depends=) ------------------------------

def two_stages(tmp_path, executor):
    """A first stage extracting the sample crawl's text into `text/`, and a second cleaning that text into
    `clean/`, depending on the first: datatrove's way of chaining stages on one machine."""
    import shutil

    from helpers import SAMPLE
    from plexity_plugins.datatrove import (JsonlDocumentWriter, LearnedExtractor, PerplexitySentenceFilter,
                                           WarcHtmlReader)

    (tmp_path / "crawl").mkdir(exist_ok=True)
    shutil.copy(SAMPLE, tmp_path / "crawl")
    first = executor(pipeline=[WarcHtmlReader(str(tmp_path / "crawl")), LearnedExtractor(),
                               JsonlDocumentWriter(str(tmp_path / "text"))],
                     tasks=1, workers=1, logging_dir=str(tmp_path / "logs-text"))
    second = executor(pipeline=[JsonlReader(str(tmp_path / "text")), PerplexitySentenceFilter(),
                                JsonlWriter(str(tmp_path / "clean"))],
                      tasks=1, workers=1, logging_dir=str(tmp_path / "logs-clean"), depends=first)
    return first, second


def test_a_second_stage_depending_on_the_first_runs_after_it_under_plexitys_local_executor(tmp_path):
    # Before: LocalTaskExecutor checked the second stage's input before running its dependency, and stopped with
    # "NoInputFiles: JsonlReader has no file to read: .../text does not exist (...): give the folder of the input
    # files", the folder the first stage was about to write; datatrove's LocalPipelineExecutor ran both.
    from plexity_plugins.datatrove import LocalTaskExecutor

    first, second = two_stages(tmp_path, LocalTaskExecutor)
    second.run()
    assert len(read_jsonl_dir(tmp_path / "clean")) == 12
    first, second = two_stages(tmp_path, LocalTaskExecutor)  # (the same script again: both resume, nothing runs)
    second.run()
    assert len(read_jsonl_dir(tmp_path / "clean")) == 12


def test_check_run_settings_of_a_stage_whose_dependency_has_not_run_says_to_run_it_first(tmp_path):
    # Before: check_run_settings(second), as docs/datatrove.md has datatrove's own executors do before run(), said
    # the second stage's input folder did not exist and to give another, the folder its dependency writes.
    from plexity_plugins.datatrove import check_run_settings
    from plexity_plugins.errors import DependencyNotRun

    first, second = two_stages(tmp_path, LocalPipelineExecutor)
    with pytest.raises(DependencyNotRun, match=r"dependency \(depends=\) has not completed.*run it first, "
                                               r"depends.run\(\), then check_run_settings\(executor\)"):
        check_run_settings(second)
    check_run_settings(first)
    first.run()
    check_run_settings(second)  # (the way the error says)
    second.run()
    assert len(read_jsonl_dir(tmp_path / "clean")) == 12


# -- the command line as a Unix user reaches for it ---------------------------------------------------

def test_plexity_clean_of_standard_input_says_it_reads_files_and_what_to_give(tmp_path):
    # Before: `curl -s URL | plexity clean - -o out` (as `plexity score -` reads stdin) said only "input - does not
    # exist", as if a file named "-" were missing.
    import os
    import subprocess
    import sys

    from helpers import REPO

    result = subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", "-", "-o", "out"], cwd=tmp_path,
                            input=page(ARTICLE), capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (
        2, "plexity clean: error: input - is standard input, which plexity clean does not read (it names each output "
           "after its input file): save it to a file named for its kind, page.html, page.txt or crawl.warc.gz, and "
           "give that file")
    assert not (tmp_path / "out").exists()


def test_plexity_clean_of_a_wget_mirror_reads_the_pages_its_names_do_not_say_are_pages(tmp_path):
    # Before: `wget --mirror` names pages after their addresses (index.php?id=3, about, a .xhtml or .asp page):
    # plexity clean skipped each as unknown_file_type, a warning each, and cleaned none of the site.  Now a file
    # whose name says nothing is read as a page when its first bytes are one (as browsers sniff an unknown type);
    # other files are still skipped, a FIFO among them without waiting on it.
    import os
    import subprocess
    import sys

    from helpers import REPO

    site = tmp_path / "example.org"
    (site / "news").mkdir(parents=True)
    pages = {"index.php?id=3": page(ARTICLE), "about": "\ufeff\n  " + page(OTHER).replace("<html>", "<HTML>"),
             "news/story.xhtml": page(ARTICLE), "news/item.asp": "<!-- generated -->\n" + page(OTHER)}
    for name, html in pages.items():
        (site / name).write_text(html, encoding="utf-8")
    (site / "robots.txt.orig").write_text("User-agent: *\nDisallow: /admin <b>\n")
    (site / "logo").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    os.mkfifo(site / "pipe")
    result = subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", str(site), "-o", "out"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    stats = json.loads((tmp_path / "out" / "plexity-stats.json").read_text())
    assert stats["documents"] == 4 and stats["skip_reasons"] == {"unknown_file_type": 3}  # (the FIFO unread)
    for name in pages:
        text = (tmp_path / "out" / (name + ".txt")).read_text()
        assert ("measured the temperature" if "about" in name or "asp" in name else "council") in text, name

# -- a script run again without a logging_dir ---------------------------------------------------------

def test_a_script_run_again_without_a_logging_dir_says_why_nothing_resumes_and_which_folder_does(tmp_path,
                                                                                                   monkeypatch):
    # datatrove's executors, given no logging_dir, log each run in a new folder, logs/<when>_<5 letters>. Before, the
    # same script run twice stopped with "out/documents holds the results of a run with other settings (no record of
    # them in logs/...: a run with another logging folder wrote them): run into new output and logging folders, or
    # delete these": the settings were the same, and the user had given no logging folder.
    import shutil

    from helpers import SAMPLE
    from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader
    from plexity_plugins.errors import UnrecordedResults

    monkeypatch.chdir(tmp_path)
    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl")

    def steps():
        return [WarcHtmlReader("crawl"), LearnedExtractor(), PerplexitySentenceFilter(), JsonlWriter("out/documents")]

    LocalTaskExecutor(pipeline=steps(), tasks=1).run()
    [first] = (tmp_path / "logs").iterdir()
    with pytest.raises(UnrecordedResults) as error:
        LocalTaskExecutor(pipeline=steps(), tasks=1).run()
    said = str(error.value)
    assert said.startswith(f"{tmp_path}/out/documents holds the results of an earlier run, and this one has no record "
                           f"of them: it was given no logging_dir, so datatrove logs it in a new folder, "
                           f"{tmp_path}/logs/"), said
    assert said.endswith(f", without the record and completions of the run before: give the executor "
                         f"logging_dir='{first}', which resumes the last run logged there, and the same folder on "
                         f"every run; or delete {tmp_path}/out/documents to start over, with a logging_dir given from "
                         f"then on"), said
    LocalTaskExecutor(pipeline=steps(), tasks=1, logging_dir=str(first)).run()  # (the way it says: nothing to redo)
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 12


# -- the same on Slurm -------------------------------------------------------------------------------

SLURM_STAGES = '''
import sys
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import (JsonlDocumentWriter, LearnedExtractor, PerplexitySentenceFilter,
                                       SlurmTaskExecutor, WarcHtmlReader)

if __name__ == "__main__":
    crawl, out, partition, name, venv = sys.argv[1:]
    slurm = dict(partition=partition, job_name=name, time="00:10:00", cpus_per_task=1, mem_per_cpu_gb=1,
                 venv_path=venv)
    first = SlurmTaskExecutor(pipeline=[WarcHtmlReader(crawl), LearnedExtractor(), JsonlDocumentWriter(f"{out}/text")],
                              tasks=1, logging_dir=f"{out}/logs-text", **slurm)
    second = SlurmTaskExecutor(pipeline=[JsonlReader(f"{out}/text"), PerplexitySentenceFilter(),
                                         JsonlWriter(f"{out}/clean")],
                               tasks=1, logging_dir=f"{out}/logs-clean", depends=first, **slurm)
    second.run()
'''


@pytest.mark.slurm
def test_a_second_stage_depending_on_the_first_is_submitted_after_it_on_slurm(slurm_cluster, tmp_path):
    # Before: SlurmTaskExecutor(..., depends=first).run() stopped with "NoInputFiles: JsonlReader has no file to read:
    # .../text does not exist", the folder the first job was to write, before submitting either; datatrove's own
    # executor submits the second job to wait on the first (afterok). Its record of the second stage's input files,
    # made before they exist, would have stopped every task of it (SettingsChanged): a chained stage's are not kept.
    # The virtualenv is given as its folder, as datatrove's "path to a python venv to activate" reads: before, each
    # task sourced the folder and failed ("launch_pickled_pipeline: No such file or directory").
    import os
    import shutil
    import subprocess
    import sys

    from helpers import SAMPLE

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl")
    (tmp_path / "stages.py").write_text(SLURM_STAGES)
    name = f"plexity-test-{os.getpid()}-stages"
    command = [sys.executable, "stages.py", str(tmp_path / "crawl"), str(tmp_path / "out"), slurm_cluster, name,
               sys.prefix]
    launch = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert launch.returncode == 0, launch.stderr[-3000:]
    wait_for_slurm_jobs(name)
    assert len(read_jsonl_dir(tmp_path / "out" / "clean")) == 12
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)  # (resumes: no job)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count("as all 1 tasks have already been completed") == 2, again.stderr[-3000:]


def test_a_slurm_executor_given_a_virtualenv_that_is_not_there_says_so_where_it_is_made(tmp_path):
    # Before: it was submitted, and every task failed on its node, sourcing a file that is not there.
    from plexity_plugins.datatrove import SlurmTaskExecutor

    with pytest.raises(ValueError, match=rf"venv_path is '{tmp_path}/nowhere': no virtualenv there "
                                         rf"\({tmp_path}/nowhere does not exist\): give the folder of a virtualenv"):
        SlurmTaskExecutor(pipeline=[], tasks=1, partition="debug", time="01:00:00", venv_path=str(tmp_path / "nowhere"),
                          logging_dir=str(tmp_path / "logs"))


RAY_STAGES = '''
import sys
import ray
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from plexity_plugins.datatrove import (JsonlDocumentWriter, LearnedExtractor, PerplexitySentenceFilter,
                                       RayTaskExecutor, WarcHtmlReader)

if __name__ == "__main__":
    ray.init(address="local", include_dashboard=False, logging_level="WARNING")  # (a Ray of its own)
    first = RayTaskExecutor(pipeline=[WarcHtmlReader("crawl"), LearnedExtractor(), JsonlDocumentWriter("out/text")],
                            tasks=1, logging_dir="out/logs-text")
    second = RayTaskExecutor(pipeline=[JsonlReader("out/text"), PerplexitySentenceFilter(), JsonlWriter("out/clean")],
                             tasks=1, logging_dir="out/logs-clean", depends=first)
    second.run()
    ray.shutdown()
'''


def test_a_second_stage_depending_on_the_first_runs_after_it_on_ray(tmp_path):
    # Before: RayTaskExecutor checked the second stage's input before running its dependency: "NoInputFiles:
    # JsonlReader has no file to read: .../out/text does not exist".
    pytest.importorskip("ray")
    import shutil
    import subprocess
    import sys

    from helpers import SAMPLE

    (tmp_path / "crawl").mkdir()
    shutil.copy(SAMPLE, tmp_path / "crawl")
    (tmp_path / "stages.py").write_text(RAY_STAGES)
    for _ in range(2):  # (the second time both resume: nothing to run)
        run = subprocess.run([sys.executable, "stages.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert len(read_jsonl_dir(tmp_path / "out" / "clean")) == 12


# -- a reader given a paths file ----------------------------------------------------------------------

def test_a_path_added_to_the_readers_paths_file_is_another_run_not_a_resumed_one(tmp_path):
    # Before: a paths_file was recorded by its name alone: a crawl's file added to it and the script run again said
    # "Not doing anything as all 2 tasks have already been completed", the added file read by no task.
    import shutil

    from helpers import SAMPLE
    from plexity_plugins.datatrove import LearnedExtractor, LocalTaskExecutor, PerplexitySentenceFilter, WarcHtmlReader
    from plexity_plugins.errors import SettingsChanged

    (tmp_path / "crawl").mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(SAMPLE, tmp_path / "crawl" / f"{name}.warc.gz")
    paths = tmp_path / "paths.txt"

    def run():
        LocalTaskExecutor(pipeline=[WarcHtmlReader(str(tmp_path / "crawl"), paths_file=str(paths)), LearnedExtractor(),
                                    PerplexitySentenceFilter(), JsonlWriter(str(tmp_path / "out" / "documents"))],
                          tasks=2, workers=1, logging_dir=str(tmp_path / "out" / "logs")).run()

    paths.write_text("a.warc.gz\nb.warc.gz\n")
    run()
    run()  # (the same list: resumes)
    paths.write_text("a.warc.gz\nb.warc.gz\nc.warc.gz\n")
    with pytest.raises(SettingsChanged, match=r"\(input files: 2 -> 3; input files' names: sha256:"):
        run()
    assert len(read_jsonl_dir(tmp_path / "out" / "documents")) == 24
