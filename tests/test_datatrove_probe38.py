"""Our steps composed with datatrove's own in a bigger pipeline, as a corpus build writes one: datatrove's
readers, filters, writers and executors before and after `PerplexitySentenceFilter`, and what a datatrove
user reads of the run afterwards (the excluded documents, ``logs/stats.json``, the task's log)."""

from __future__ import annotations

import gzip
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters import LambdaFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

import plexity_plugins.datatrove as steps
from plexity_plugins.datatrove import PerplexityDocumentFilter, PerplexitySentenceFilter, WarcHtmlReader
from helpers import REPO, SAMPLE

ENGLISH = ("The city council approved the budget on Tuesday after a long debate about school funding. "
           "The plan adds two libraries and repairs forty miles of road over the next three years.")
GERMAN = ("Der Stadtrat hat am Dienstag nach einer langen Debatte über die Finanzierung der Schulen den "
          "Haushalt beschlossen. Der Plan sieht zwei neue Bibliotheken und die Sanierung vieler Straßen vor.")


def rows_of(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl.gz")) for line in gzip.open(path, "rt")]


def totals(step_stats: dict, *names: str) -> list:
    """The totals of a step's counters in datatrove's ``stats.json`` (a plain count is saved as a number)."""
    values = [step_stats["stats"][name] for name in names]
    return [value["total"] if isinstance(value, dict) else value for value in values]


def write_dataset(folder: Path, rows: list[dict], name: str = "part.jsonl.gz") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / name, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return folder


class RedactStep(PipelineStep):
    """A user's own step that empties some documents by setting their text to None (a redaction)."""

    name = "redact"

    def run(self, data, rank: int = 0, world_size: int = 1):
        for doc in data:
            if doc.id.startswith("redacted"):
                doc.text = None
            yield doc


def test_a_document_whose_text_is_none_reaches_the_exclusion_writer_with_no_text_not_the_text_null(tmp_path):
    """A document that comes to a perplexity filter with ``text`` None (a user's step emptied it) is dropped
    (the sentence filter's reason ``empty_input``, the document filter's ``no_text``) and written by the
    exclusion writer as a document without text, as datatrove's writers write an empty one: it was written
    with the text ``"null"`` (the JSON of None), four characters no crawl held."""
    data = write_dataset(tmp_path / "in", [{"id": "kept", "text": ENGLISH}, {"id": "redacted-1", "text": ENGLISH}])
    for name, step in (("sentences", PerplexitySentenceFilter), ("document", PerplexityDocumentFilter)):
        options = {"max_perplexity": 1e9} if step is PerplexityDocumentFilter else {}
        LocalPipelineExecutor(pipeline=[
            JsonlReader(str(data)), RedactStep(),
            step(exclusion_writer=JsonlWriter(str(tmp_path / name / "excluded")), **options),
            JsonlWriter(str(tmp_path / name / "documents")),
        ], tasks=1, logging_dir=str(tmp_path / name / "logs")).run()
        assert [row["id"] for row in rows_of(tmp_path / name / "documents")] == ["kept"]
        (excluded,) = rows_of(tmp_path / name / "excluded")
        assert excluded["id"] == "redacted-1" and excluded.get("text", "") == ""
        assert excluded["metadata"]["filter_reason"] == ("empty_input" if name == "sentences" else "no_text")


def test_every_step_s_docstring_names_each_of_its_arguments():
    """Each datatrove step this package exports says in its docstring what each of its arguments is (or that
    they are a datatrove step's, ``Arguments as JsonlWriter's``), as datatrove's own steps list theirs:
    `FastExtractor`'s left out ``memory_limit``."""
    missing = {}
    for name in steps.__all__:
        step = getattr(steps, name)
        if not (inspect.isclass(step) and issubclass(step, PipelineStep)):
            continue
        doc = (step.__doc__ or "") + (step.__init__.__doc__ or "")
        if re.search(r"Arguments as\s+``\w+``'s", doc):
            continue
        arguments = [p for p in inspect.signature(step.__init__).parameters if p not in ("self", "args", "kwargs")]
        if [a for a in arguments if a not in doc]:
            missing[name] = [a for a in arguments if a not in doc]
    assert missing == {}


def test_the_task_log_names_no_request_or_metadata_record_the_reader_skips(tmp_path):
    """datatrove writes every DEBUG line to the task's log (``logs/logs/task_00000.log``). `WarcHtmlReader`
    counts the records that are no page (a crawl's request and metadata records, two a page; images, PDF) in
    its stats and names none of them there, as datatrove's `WarcReader` skips them: it wrote a line of about
    200 bytes for each (15 for the sample's 12 pages)."""
    LocalPipelineExecutor(pipeline=[WarcHtmlReader(str(SAMPLE.parent), glob_pattern=SAMPLE.name)],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    log = (tmp_path / "logs" / "logs" / "task_00000.log").read_text()
    assert re.findall(r"skipped .*: not_(?:response|html)", log) == []
    (reader,) = json.loads((tmp_path / "logs" / "stats.json").read_text())
    assert totals(reader, "skipped_not_response", "skipped_not_html", "documents") == [14, 1, 12]


def test_a_language_label_of_datatrove_s_language_filter_is_honoured_in_either_backend_s_codes(tmp_path):
    """datatrove's `LanguageFilter` labels ``metadata["language"]``: ``en`` with its default backend (ft176),
    ``eng`` with GlotLID (its script in ``language_script``). The filter takes either as the English model's
    language (the text is cleaned, not passed through), and a German label passes the text through unchanged,
    counted ``passthrough_language:de``. (A `LambdaFilter` labels here as LanguageFilter does: that one needs
    fastText and downloads its model.)"""
    labels = {"ft176": "en", "glotlid": "eng", "german": "de"}
    data = write_dataset(tmp_path / "in", [{"id": key, "text": ENGLISH + "\nShare on Facebook | Share on X | Email"}
                                           for key in labels])

    def label(doc):
        doc.metadata["language"] = labels[doc.id]
        return True

    LocalPipelineExecutor(pipeline=[JsonlReader(str(data)), LambdaFilter(label), PerplexitySentenceFilter(),
                                    JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    verdicts = {row["id"]: (row["metadata"]["plexity_verdict"], row["text"] == ENGLISH)
                for row in rows_of(tmp_path / "out")}
    assert verdicts == {"ft176": ("kept", True), "glotlid": ("kept", True), "german": ("passed_through", False)}
    ours = json.loads((tmp_path / "logs" / "stats.json").read_text())[2]
    assert "Perplexity sentences" in ours["name"] and totals(ours, "passthrough_language:de") == [1]


def test_our_counters_are_merged_across_tasks_in_stats_json_beside_datatrove_s(tmp_path):
    """Under datatrove's own `LocalPipelineExecutor` with four tasks, the filter's counters
    (``sentences_kept``, ``dropped_too_short`` ...) are in each task's ``logs/stats/`` and summed in
    ``logs/stats.json`` beside the reader's and writer's, and the excluded documents say why
    (``filter_reason``, as datatrove's filters write it, and ``plexity_reason``)."""
    rows = [{"content": ENGLISH, "doc_id": "en"}, {"content": "Home | News | Sport", "doc_id": "menu"},
            {"content": GERMAN, "doc_id": "de"}]
    for part in range(4):
        write_dataset(tmp_path / "in", rows, name=f"part-{part}.jsonl.gz")
    LocalPipelineExecutor(pipeline=[
        JsonlReader(str(tmp_path / "in"), text_key="content", id_key="doc_id", default_metadata={"dump": "CC-X"}),
        PerplexitySentenceFilter(exclusion_writer=JsonlWriter(str(tmp_path / "excluded"))),
        JsonlWriter(str(tmp_path / "out")),
    ], tasks=4, workers=1, logging_dir=str(tmp_path / "logs")).run()
    reader, ours, writer = json.loads((tmp_path / "logs" / "stats.json").read_text())
    assert totals(reader, "documents") == [12] and totals(writer, "total") == [8]
    assert totals(ours, "total", "forwarded", "dropped", "dropped_too_short", "passthrough_language:de",
                  "sentences_kept") == [12, 8, 4, 4, 4, 8]
    excluded = rows_of(tmp_path / "excluded")
    assert {(row["id"], row["metadata"]["filter_reason"], row["metadata"]["plexity_reason"], row["metadata"]["dump"])
            for row in excluded} == {("menu", "too_short", "too_short", "CC-X")} and len(excluded) == 4


def test_the_filter_yields_lazily_and_takes_an_empty_input():
    """As a datatrove step's generator: the first kept document comes out after one document went in, and an
    empty input gives nothing (no error)."""
    pulled = []

    def documents():
        for i in range(50):
            pulled.append(i)
            yield Document(text=ENGLISH, id=str(i))

    step = PerplexitySentenceFilter()
    assert next(step.run(documents())).id == "0" and pulled == [0]
    assert list(PerplexitySentenceFilter().run(iter([]))) == []


ESTONIAN = ("Linnavolikogu kiitis teisipäeval pärast pikka arutelu heaks eelarve, mis rahastab koole ja "
            "raamatukogusid. Kava lisab kaks uut raamatukogu ja parandab järgmise kolme aasta jooksul palju teid.")


def test_fineweb_2_s_language_labels_of_individual_languages_name_the_model_s_macrolanguage(tmp_path):
    """FineWeb-2's rows (its ``language`` column is GlotLID's label, as datatrove's ``LanguageFilter(backend=
    "glotlid")`` writes it) name Estonian ``ekk`` and Latvian ``lvs``, individual languages of the macrolanguages
    whose ISO 639-1 codes, ``et`` and ``lv``, a model's language is: an Estonian model cleans the rows labelled
    ``ekk`` (as it does those labelled ``et`` or ``est``), where each was passed through unchanged as another
    language (``passthrough_language:ekk``), uncleaned."""
    from conftest import build_tiny_model

    model = build_tiny_model(tmp_path / "et-model", name="tiny-et", corpus=ESTONIAN.replace(". ", ".\n"),
                             language="et")
    rows = [{"id": label, "text": ESTONIAN, "language": label.split("_")[0], "language_script": "Latn"}
            for label in ("ekk_Latn", "et", "est")]
    data = write_dataset(tmp_path / "fineweb-2" / "ekk_Latn", rows)
    LocalPipelineExecutor(pipeline=[JsonlReader(str(data)), PerplexitySentenceFilter(model=str(model), method="region"),
                                    JsonlWriter(str(tmp_path / "out"))],
                          tasks=1, logging_dir=str(tmp_path / "logs")).run()
    passthrough = {row["id"]: row["metadata"]["plexity_passthrough"] for row in rows_of(tmp_path / "out")}
    assert passthrough == {"ekk_Latn": "", "et": "", "est": ""}


FINEWEB_PIPELINE = """
import re, sys
from datatrove.pipeline.filters import FineWebQualityFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.word_tokenizers import WordTokenizer
from plexity_plugins.datatrove import LocalTaskExecutor, PerplexitySentenceFilter


class Words(WordTokenizer):  # (datatrove's English one is spaCy's, of its `multilingual` extra)
    def word_tokenize(self, text): return re.findall(r"\\w+", text)
    def sent_tokenize(self, text): return [s for s in re.split(r"(?<=[.!?])\\s+", text) if s]
    def span_tokenize(self, text): return [m.span() for m in re.finditer(r"[^.!?]+[.!?]?", text)]


if __name__ == "__main__":
    folder = sys.argv[1]
    LocalTaskExecutor(pipeline=[JsonlReader(folder + "/in"), PerplexitySentenceFilter(),
                                FineWebQualityFilter(language=Words("en")), JsonlWriter(folder + "/out")],
                      tasks=1, logging_dir=folder + "/logs").run()
"""


def test_a_pipeline_with_datatrove_s_fineweb_quality_filter_resumes_under_plexity_s_executor(tmp_path):
    """datatrove's `FineWebQualityFilter` keeps its ``stop_chars`` as a tuple made of a set, whose order is that of
    the strings' hashes, another in each process. The run's record of settings lists such names sorted (and
    compares two lists of names whatever their order), so the same script run again resumes (its task completed:
    nothing to do); each re-run stopped with `SettingsChanged`, ``stop_chars: ['𑈻', '॥', ...] -> [...]``.
    (Two processes, with two hash seeds.)"""
    write_dataset(tmp_path / "in", [{"id": "1", "text": ENGLISH}])
    (tmp_path / "pipeline.py").write_text(FINEWEB_PIPELINE)
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        run = subprocess.run([sys.executable, str(tmp_path / "pipeline.py"), str(tmp_path)], capture_output=True,
                             text=True, timeout=120, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
    assert [row["id"] for row in rows_of(tmp_path / "out")] == ["1"]
    recorded = json.loads((tmp_path / "logs" / "plexity-settings.json").read_text())["steps"][2]["stop_chars"]
    assert recorded == sorted(recorded)
