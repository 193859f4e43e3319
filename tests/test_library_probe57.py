"""A first day with plexity_plugins as a library (probe 57): a datatrove pipeline and a Scrapy project written from
the docs, with a stranger's mistakes.

A document labelled with its language's English name ("english") or with no language at all ("xx") passed through
unfiltered as a language of its own, unsaid; a Scrapy item class without the output field had every item dropped,
the message naming "the PLEXITY_*_FIELD setting"; the filter given raw HTML wrote the documents before its stop; a
dataset whose text is under another key was skipped row by row without naming ``text_key``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import REPO, QuietHandler, http_server, labelled_documents_run

# -- datatrove: a language label that is a name, or names no language ---------------------------------------------



def test_a_language_named_in_english_is_its_code_and_a_label_naming_none_is_said_counted_and_identified(tmp_path):
    """A dataset labelled "english" (its `language` column as people write it) was passed through unfiltered,
    every document, counted as `passthrough_language:english`; "xx" likewise, as language "xx"; nothing said."""
    seen = labelled_documents_run(tmp_path, ["english", "English", "german", "xx", "unknown", "__label__en",
                                             "eng_Latn"])
    assert seen["verdicts"] == {"english": ["kept", ""], "English": ["kept", ""],
                                "german": ["passed_through", "language:de"], "xx": ["kept", ""],
                                "unknown": ["kept", ""], "__label__en": ["kept", ""], "eng_Latn": ["kept", ""]}
    assert seen["stats"] == {"passthrough": 1, "passthrough_language:de": 1, "language_label_unknown": 2}
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert log.count("which names no language") == 1
    assert ("document 'xx': its metadata language is 'xx', which names no language (neither an ISO 639 code, "
            "\"en\", \"deu_Latn\", nor a language's English name, \"English\"): read as no label, the text's "
            "language identified as for a document without one (said once; counted in language_label_unknown)"
            in log)


# fastText's lid.176 labels (fasttext.cc/docs/en/language-identification.html), without "__label__"
LID_176 = ("af als am an ar arz as ast av az azb ba bar bcl be bg bh bn bo bpy br bs bxr ca cbk ce ceb ckb co cs cv "
           "cy da de diq dsb dty dv el eml en eo es et eu fa fi fr frr fy ga gd gl gn gom gu gv he hi hif hr hsb ht "
           "hu hy ia id ie ilo io is it ja jbo jv ka kk km kn ko krc ku kv kw ky la lb lez li lmo lo lrc lt lv mai "
           "mg mhr min mk ml mn mr mrj ms mt mwl my myv mzn nah nap nds ne new nl nn no oc or os pa pam pfl pl pms "
           "pnb ps pt qu rm ro ru rue sa sah sc scn sco sd sh si sk sl so sq sr su sv sw ta te tg th tk tl tr tt "
           "tyv ug uk ur uz vec vep vi vls vo wa war wuu xal xmf yi yo yue zh").split()


def test_every_label_an_identifier_gives_is_read_as_a_code_as_before():
    """py3langid's 97 languages, lid.176's 176 (CCNet's), GlotLID's and CLD3's forms: each is a language, as it
    was; only a label naming none is read as no label (py3langid's own "zxx", text without language, which the
    identifier counts as the model's language too)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from plexity_plugins.text.language import read_language_label

    classes = set(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes) - {"zxx"}  # ("no language": below)
    for label in [*classes, *LID_176, *(f"__label__{code}" for code in LID_176)]:
        assert read_language_label(label)[1] == "code", label
    assert [read_language_label(label)[0] for label in ("iw", "jw", "fil", "zh-Latn", "deu_Latn", "ace_Arab",
                                                        "und_Latn", "un", "zxx", "qaa")] == \
        ["he", "jv", "fil", "zh-Latn", "de", "ace", None, None, None, "qaa"]


def test_the_names_are_iso_639_1_s_languages_as_cldr_names_them_each_one_languages():
    import babel

    from plexity_plugins.text.language import _CODE_OF_NAME, _ISO639_1_NAMES

    english = babel.Locale("en").languages
    assert sorted(_ISO639_1_NAMES) == sorted({code for code in english if len(code) == 2} | {"bh"})
    for code, names in _ISO639_1_NAMES.items():
        if code in english:
            assert english[code] in names.split(","), code
    assert len(_CODE_OF_NAME) == sum(len(names.split(",")) for names in _ISO639_1_NAMES.values())  # none twice


def test_a_scrapy_items_language_field_naming_no_language_is_said_once_and_counted(caplog):
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_LANGUAGE_FIELD": "lang", "PLEXITY_THREADS": 0,
                                         "PLEXITY_EXTRACTOR": "tags"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider(None)
    import asyncio

    page = ("<html><body><p>The council approved the budget for the new library on Tuesday after a long debate "
            "about school funding.</p></body></html>")
    try:
        items = [asyncio.run(pipeline.process_item({"url": f"http://x/{lang}", "html": page, "lang": lang}))
                 for lang in ("English", "xx", "n/a")]
    finally:
        pipeline.close_spider(None)
    assert [item["plexity"]["plexity_verdict"] for item in items] == ["kept", "kept", "kept"]
    assert crawler.stats.get_value("plexity/language_label_unknown") == 2
    assert caplog.text.count("which names no language") == 1
    assert "plexity: http://x/xx: its 'lang' (PLEXITY_LANGUAGE_FIELD) is 'xx', which names no language" in caplog.text


# -- Scrapy: an item class without the output field ----------------------------------------------------------------

PAGES = 30


class Chain(QuietHandler):
    """Pages 0 .. PAGES-1, each an article linking to the next: one request in flight at a time."""

    def _answer(self, body: bool):
        number = int(self.path.strip("/") or 0)
        following = f'<a href="/{number + 1}">next</a>' if number + 1 < PAGES else ""
        page = (f"<html><body><article><p>The council approved the budget for library number {number} after a long "
                f"debate on Tuesday evening, and residents asked about the bridge.</p></article>{following}"
                f"</body></html>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        if body:
            self.wfile.write(page)


WITHOUT_TEXT = '''
import scrapy


class Page(scrapy.Item):  # (no `text`: the pipeline's output field)
    url = scrapy.Field()
    html = scrapy.Field()
    plexity = scrapy.Field()


class Pages(scrapy.Spider):
    name = "pages"
    start_urls = [URL]

    def parse(self, response):
        yield Page(url=response.url, html=response.text)
        yield from response.follow_all(css="a")
'''


def test_an_item_class_without_the_output_field_names_the_setting_and_closes_the_crawl(tmp_path):
    """Every item was dropped, `no_output_field`, the crawl running to its end (30 pages, 30 drops), and the line
    said "point the PLEXITY_*_FIELD setting to a field it has": not which setting.  A configuration error, the same
    for every item, as a broken installation closes the crawl."""
    with http_server(Chain) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/0"
        (tmp_path / "spider.py").write_text(f"URL = {url!r}\n" + WITHOUT_TEXT, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-s", "TELNETCONSOLE_ENABLED=False",
             "-s", 'ADDONS={"plexity_plugins.scrapy.PlexityAddon": 0}', "-s", "STATS_DUMP=True",
             "-s", "PLEXITY_EXTRACTOR=tags"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    said = ("Page has no field 'text': declare it in the item class (text = scrapy.Field()), or point "
            "PLEXITY_OUTPUT_FIELD to a field it has")
    assert f"ERROR: plexity: {url}: {said} (every such item would be dropped): closing the spider" in done.stderr
    assert f"Dropped: plexity: no_output_field: {said} ({url})" in done.stderr
    assert "'finish_reason': 'plexity_no_output_field'" in done.stderr
    dropped = done.stderr.count("Dropped: plexity: no_output_field")
    assert 1 <= dropped <= 3, dropped  # (the pages already fetched as it closes: not all 30)


# -- datatrove: a dataset whose text is under another key ----------------------------------------------------------

def test_a_dataset_whose_text_is_under_another_key_is_skipped_naming_text_key_with_the_likely_key(tmp_path):
    """Every row was `skipped_no_text`, the line listing the row's keys, not the argument that reads them."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import JsonlDocumentReader

    (tmp_path / "in").mkdir()
    rows = [{"id": f"r{i}", "url": "https://example.org/a-long-address-of-the-page", "title": "A title",
             "content": "The council approved the budget for the new library on Tuesday after a long debate."}
            for i in range(3)]
    (tmp_path / "in" / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    LocalPipelineExecutor(pipeline=[JsonlDocumentReader(str(tmp_path / "in")), JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    assert next(step["stats"] for step in stats if "Jsonl" in step["name"])["skipped_no_text"] == 3
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert ("skipped rows.jsonl line 1: no text in 'text' (its keys: ['id', 'url', 'title', 'content']): if the text "
            "is in 'content', give the reader text_key='content'; such rows are counted as skipped_no_text "
            "(said once)") in log


# -- datatrove: the filter given raw HTML ---------------------------------------------------------------------------

def test_a_pipeline_without_an_extractor_writes_none_of_the_pages_before_its_stop(tmp_path):
    """The task stopped at the third page, `HtmlPagesNotText`, but the two before it had been passed on, and the
    writer had written them: HTML cleaned as text, markup and all, in the output of a task that failed."""
    import pytest
    from datatrove.pipeline.writers import JsonlWriter

    from helpers import SAMPLE, read_jsonl_dir
    from plexity_plugins.datatrove import (HtmlPagesNotText, LocalTaskExecutor, PerplexitySentenceFilter,
                                           WarcHtmlReader)

    excluded = JsonlWriter(str(tmp_path / "excluded"))
    with pytest.raises(HtmlPagesNotText, match="the first 3 texts of this task are HTML pages"):
        LocalTaskExecutor([WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name),
                           PerplexitySentenceFilter(exclusion_writer=excluded), JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    assert read_jsonl_dir(tmp_path / "out") == [] and read_jsonl_dir(tmp_path / "excluded") == []
    assert not [*(tmp_path / "out").glob("*")]  # (no file at all: the writer never opened one)


def test_pages_held_for_the_check_go_on_in_their_order_once_a_text_decides_it(tmp_path):
    """(As before the pages were held: each written, in its order, the pages among text counted.)"""
    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from helpers import read_jsonl_dir
    from plexity_plugins.datatrove import PerplexitySentenceFilter

    prose = ("The council approved the budget for the new library on Tuesday after a long debate about school "
             "funding and the state of the old bridge.")
    page = f"<!DOCTYPE html><html><body><p>{prose}</p></body></html>"
    docs = [Document(text=page, id="page1"), Document(text=page, id="page2"), Document(text=prose, id="text"),
            Document(text=page, id="page3"), Document(text=prose, id="text2")]
    step = PerplexitySentenceFilter(min_chars=0)
    LocalPipelineExecutor([docs, step, JsonlWriter(str(tmp_path / "out"))], tasks=1,
                          logging_dir=str(tmp_path / "logs")).run()
    assert [doc["id"] for doc in read_jsonl_dir(tmp_path / "out")] == ["page1", "page2", "text", "page3", "text2"]
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    assert next(s["stats"] for s in stats if s["name"] == str(step))["looks_like_html"] == 3


# -- a misspelt keyword argument of a step -------------------------------------------------------------------------

def test_a_misspelt_keyword_of_a_step_or_the_scorer_is_told_the_one_meant_on_every_python():
    """Python 3.11 (Debian 12's) said only "PerplexitySentenceFilter.__init__() got an unexpected keyword argument
    'treshold'"; the step says the argument meant, or lists its arguments where none is close."""
    import inspect
    import pickle

    import pytest

    from plexity_plugins.datatrove import (LearnedExtractor, PerplexityDocumentFilter, PerplexitySentenceFilter,
                                           WarcHtmlReader, WarcResponseWriter)
    from plexity_plugins.scoring.scorer import PerplexityScorer

    for make, said in ((lambda: PerplexitySentenceFilter(treshold=900), "'treshold'. Did you mean 'threshold'?"),
                       (lambda: PerplexityDocumentFilter(max_perplexty=900), "Did you mean 'max_perplexity'?"),
                       (lambda: LearnedExtractor(timout=3), "LearnedExtractor() got an unexpected keyword argument "
                                                            "'timout'. Did you mean 'timeout'?"),
                       (lambda: WarcHtmlReader("crawl", recursve=False), "Did you mean 'recursive'?"),
                       (lambda: WarcResponseWriter("out", max_filesize=2**20), "Did you mean 'max_file_size'?"),
                       (lambda: PerplexityScorer(methd="trim"), "Did you mean 'method'?"),
                       (lambda: PerplexitySentenceFilter(zzz=1), "(its arguments: model, threshold, method")):
        with pytest.raises(TypeError) as raised:
            make()
        assert said in str(raised.value)
    step = PerplexitySentenceFilter(threshold=900)  # (right names work, the signature is the step's own, it pickles)
    assert list(inspect.signature(PerplexitySentenceFilter).parameters)[:2] == ["model", "threshold"]
    assert pickle.loads(pickle.dumps(step)).name == step.name


def test_a_misspelt_keyword_of_an_executor_or_dataset_step_is_told_the_one_meant(tmp_path):
    """Our executors, dataset readers and JSONL writer pass their keyword arguments on to datatrove's classes, whose
    own TypeError on Python 3.11 was "JsonlReader.__init__() got an unexpected keyword argument 'tex_key'": neither
    our class nor the name meant.  Each now takes the names of the datatrove class it passes them to."""
    import pickle

    import pytest

    from plexity_plugins.datatrove import (JsonlDocumentReader, JsonlDocumentWriter, LocalTaskExecutor,
                                           ParquetDocumentReader, RayTaskExecutor, SlurmTaskExecutor)

    logs = str(tmp_path / "logs")
    for make, said in (
            (lambda: JsonlDocumentReader(str(tmp_path), tex_key="content"),
             "JsonlDocumentReader() got an unexpected keyword argument 'tex_key'. Did you mean 'text_key'?"),
            (lambda: ParquetDocumentReader(str(tmp_path), batchsize=100), "Did you mean 'batch_size'?"),
            (lambda: JsonlDocumentWriter(str(tmp_path), compresion=None), "Did you mean 'compression'?"),
            (lambda: LocalTaskExecutor([], tasks=1, logging_dir=logs, worker=2),
             "LocalTaskExecutor() got an unexpected keyword argument 'worker'. Did you mean 'workers'?"),
            (lambda: RayTaskExecutor([], tasks=1, logging_dir=logs, cpus_per_tasks=1), "Did you mean 'cpus_per_task'?"),
            (lambda: SlurmTaskExecutor([], tasks=1, time="1:00", partition="p", logging_dir=logs, venv_pth="v"),
             "Did you mean 'venv_path'?")):
        with pytest.raises(TypeError) as raised:
            make()
        assert said in str(raised.value)
    # the right names still reach datatrove, and the executor still pickles (Slurm and Ray send it to the tasks)
    reader = JsonlDocumentReader(str(tmp_path), text_key="content", limit=3)
    assert (reader.text_key, reader.limit) == ("content", 3)
    executor = LocalTaskExecutor([], tasks=2, logging_dir=logs, workers=1)
    assert pickle.loads(pickle.dumps(executor)).world_size == 2
