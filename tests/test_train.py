"""`plexity train`: real KenLM models (lmplz + build_binary) from corpora in their real formats.

Hand-written fixtures (tests/fixtures/training/) pin exact sentence and token counts;
generated corpora (fixtures/training/synthetic_corpus.py) are big enough for a held-out
threshold and for the paper's model names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plexity_plugins import PerplexityScorer
from plexity_plugins.errors import KenLMToolFailed
from plexity_plugins.training import BncReader, Cord19Reader, CorpusError, TextReader, kenlm_tools, thresholds
from plexity_plugins.cli import main
from plexity_plugins.scoring.models import resolve
from plexity_plugins.text.plexity_tokenizer import tokenize

from fixtures.training import synthetic_corpus as synth

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "training"
BNC = FIXTURES / "bnc"
CORD19 = FIXTURES / "cord19" / "metadata.csv"
SMALL = ["-S", "64M", "-q"]  # tests keep lmplz's sort memory small


def train(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["train", *SMALL, *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def metadata(model_dir: Path, name: str) -> dict:
    return json.loads((model_dir / name / "model.json").read_text())


def kept_fraction(scorer: PerplexityScorer, sentences) -> float:
    values = [scorer.perplexity(s) for s in sentences]
    return sum(v <= scorer.threshold for v in values) / len(values)


# -- BNC XML ---------------------------------------------------------------------------------------


def test_bnc_sentences_are_the_w_and_c_texts_of_each_s_element():
    reader = BncReader([BNC], written_only=False)
    docs = {doc.key: doc.sentences for doc in reader}
    assert docs == {
        "A00": ["FACTSHEET WHAT IS AIDS?", "The council approved the budget.",
                "It doesn't cost a lot of money.", "Residents asked about the £3 road."],
        "K1A": ["Yeah I know.", "Erm right then."],
    }
    assert reader.texts == {"written": 1, "spoken": 1}


def test_bnc_written_only_trains_on_written_texts_and_counts_the_spoken_ones(capsys, model_dir):
    code, out, _ = train(capsys, "--corpus", "bnc", "--order", "3", "--name", "bnc-w", "--holdout-every", "0",
                         "--write-dropped", BNC)
    assert code == 0, out
    meta = metadata(model_dir, "bnc-w")
    # FACTSHEET WHAT IS AIDS ? (5) + the council approved the budget . (6)
    # + it does n ' t cost a lot of money . (10) + residents asked about the £ 0 road . (8)
    assert (meta["tokens"], meta["build"]["sentences"], meta["build"]["documents"]) == (29, 4, 1)
    assert meta["build"]["skipped"] == {"spoken text (--written-only)": 1}
    assert meta["build"]["written_only"] is True and meta["corpus"].endswith("(written texts)")
    dropped = [json.loads(line) for line in (model_dir / "bnc-w" / "train-dropped.jsonl").read_text().splitlines()]
    assert dropped == [{"file": str(BNC / "Texts/K/K1/K1A.xml"), "id": "K1A",
                        "reason": "spoken text (--written-only)"}]
    assert "1 spoken text (--written-only)" in out and "29 tokens" in out
    # Spoken words never reached the model: all three are out of its vocabulary.
    assert PerplexityScorer("bnc-w", threshold=1e9).score("Erm right then.")[0].oov == 3


def test_bnc_all_includes_the_spoken_texts(capsys, model_dir):
    code, out, _ = train(capsys, "--corpus", "bnc", "--order", "2", "--name", "bnc-all", "--all",
                         "--holdout-every", "0", BNC)
    assert code == 0, out
    meta = metadata(model_dir, "bnc-all")
    assert (meta["tokens"], meta["build"]["sentences"], meta["build"]["documents"]) == (29 + 8, 6, 2)
    assert meta["build"]["skipped"] == {} and meta["build"]["texts"] == {"written": 1, "spoken": 1}
    assert PerplexityScorer("bnc-all", threshold=1e9).score("Erm right then.")[0].oov == 0


def test_trigrams_bnc_is_the_papers_configuration_with_a_held_out_threshold(capsys, model_dir, tmp_path):
    texts = synth.make_bnc_corpus(tmp_path / "BNC", written=80, spoken=20)
    code, out, _ = train(capsys, "--name", "trigrams-bnc", tmp_path / "BNC" / "Texts")
    assert code == 0, out

    meta = metadata(model_dir, "trigrams-bnc")
    written = {k: v for k, v in texts.items() if not k.startswith("K")}
    trained = {k: v for k, v in written.items() if not thresholds.is_held_out(k)}
    held_out = written.keys() - trained.keys()
    assert held_out, "the corpus should be big enough for 1 text in 20 to be held out"
    assert meta["order"] == 3 and meta["build"]["written_only"] is True
    assert meta["build"]["documents"] == len(trained)
    assert meta["tokens"] == sum(len(tokenize(s)) for sentences in trained.values() for s in sentences)
    assert meta["build"]["heldout"] == {"every": 20, "documents": len(held_out),
                                        "sentences": sum(len(written[k]) for k in held_out)}
    assert meta["build"]["skipped"] == {"spoken text (--written-only)": 20}
    assert meta["tokenizer_version"] == "plexity-tok-1" and "BNC User Licence" in meta["licence"]
    assert meta["build"]["ngrams"]["3"] > 0 and meta["vocab_size"] == meta["build"]["ngrams"]["1"]
    assert meta["build"]["lmplz"].startswith("-o 3 -S 64M") and meta["build"]["build_binary"] == "-S 64M -q 8 -b 8 trie"
    assert meta["build"]["lmplz_resources"]["rss_max_mb"] > 0

    # The default thresholds: the 99th (and for extracted text the 99.9th) percentile of the
    # held-out sentences' perplexities, as for the embedded model.
    assert meta["threshold"] == meta["build"]["heldout_percentiles"]["99"] > 0
    assert meta["threshold_extracted"] == meta["build"]["heldout_percentiles"]["99.9"] >= meta["threshold"]
    assert meta["threshold_procedure"].startswith("threshold: 99th, threshold_extracted: 99.9th percentile of")
    assert "never trained on" in meta["threshold_procedure"]

    # Installed: found by name at once, and it separates prose from boilerplate.
    assert resolve("trigrams-bnc").path == str(model_dir / "trigrams-bnc" / "model.bin")
    scorer = PerplexityScorer("trigrams-bnc")
    assert kept_fraction(scorer, [s for k in held_out for s in written[k]]) >= 0.99  # by construction
    assert all(scorer.perplexity(line) > scorer.threshold for line in synth.BOILERPLATE)
    page = " ".join(written[sorted(held_out)[0]]) + "\nShare on Facebook Twitter Email WhatsApp"
    result = scorer.clean(page)
    assert result.sentences_kept >= 1 and "Share on Facebook" not in result.text
    assert result.dropped[-1].text == "Share on Facebook Twitter Email WhatsApp"

    for figure in ("documents:", "held out", "sentences", "tokens", "vocabulary", "MB", "time:"):
        assert figure in out
    main(["models"])
    assert "trigrams-bnc" in capsys.readouterr().out.split("not installed")[0]


def test_the_papers_names_refuse_a_contradicting_order_or_corpus(capsys, model_dir):
    code, _, err = train(capsys, "--name", "trigrams-bnc", "--order", "2", BNC)
    assert code == 2 and "order-3" in err
    code, _, err = train(capsys, "--name", "bigrams-cord19", "--corpus", "bnc", BNC)
    assert code == 2 and "cord19" in err
    code, _, err = train(capsys, "--name", "mine", BNC)
    assert code == 2 and "--corpus and --order" in err


# -- CORD-19 metadata.csv -----------------------------------------------------------------------------


def test_cord19_reads_unique_non_empty_abstracts(capsys, model_dir):
    code, out, _ = train(capsys, "--corpus", "cord19", "--order", "3", "--name", "cord", "--holdout-every", "0",
                         "--write-dropped", CORD19)
    assert code == 0, out
    meta = metadata(model_dir, "cord")
    # ug7v899j: a quoted two-line abstract, 12 + 13 tokens (its repeat from Medline is dropped);
    # 02tnwd4m: empty in its first row, 16 tokens in its second; ejv2xln0: 20 tokens with
    # doubled quotes; 2b73a28n: whitespace only.
    assert (meta["tokens"], meta["build"]["sentences"], meta["build"]["documents"]) == (61, 4, 3)
    assert meta["build"]["skipped"] == {"duplicate cord_uid": 1, "empty abstract": 2}
    dropped = [json.loads(line) for line in (model_dir / "cord" / "train-dropped.jsonl").read_text().splitlines()]
    assert [(d["id"], d["reason"]) for d in dropped] == [
        ("02tnwd4m", "empty abstract"), ("ug7v899j", "duplicate cord_uid"), ("2b73a28n", "empty abstract")]
    reader = Cord19Reader([CORD19])
    assert [doc.key for doc in reader] == ["ug7v899j", "ejv2xln0", "02tnwd4m"]


def test_bigrams_cord19_from_a_larger_metadata_csv(capsys, model_dir, tmp_path):
    abstracts = synth.make_cord19_csv(tmp_path / "cord" / "metadata.csv", abstracts=300)
    code, out, _ = train(capsys, "--name", "bigrams-cord19", tmp_path / "cord")
    assert code == 0, out
    meta = metadata(model_dir, "bigrams-cord19")
    trained = [a for uid, a in abstracts.items() if not thresholds.is_held_out(uid)]
    assert meta["order"] == 2 and meta["corpus"] == "CORD-19 metadata.csv abstracts"
    assert meta["build"]["documents"] == len(trained)
    assert meta["build"]["documents_read"] == len(abstracts)
    assert meta["tokens"] == sum(len(tokenize(s)) for s in kenlm_tools.iter_sentences(trained))
    assert meta["build"]["skipped"] == {"empty abstract": 43, "duplicate cord_uid": 60}
    assert meta["threshold"] == meta["build"]["heldout_percentiles"]["99"]
    scorer = PerplexityScorer("bigrams-cord19")
    held_out = [a for uid, a in abstracts.items() if thresholds.is_held_out(uid)]
    assert kept_fraction(scorer, kenlm_tools.iter_sentences(held_out)) >= 0.99
    assert scorer.perplexity("Cookie settings Accept all Reject all") > scorer.threshold


# -- plain text -------------------------------------------------------------------------------------------


def test_text_corpus_one_document_a_line(capsys, model_dir, tmp_path):
    import random

    rng = random.Random(3)
    lines = [" ".join(synth.general_sentences(rng, 3)) for _ in range(200)]
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("\n".join(lines[:120]) + "\n\n")
    (tmp_path / "corpus" / "b.txt").write_text("\n".join(lines[120:]))
    (tmp_path / "corpus" / "notes.md").write_text("not a .txt file: ignored in a directory")
    (tmp_path / "scratch").mkdir()
    code, out, _ = train(capsys, "--corpus", "text", "--order", "3", "--name", "mytext", "--quantize", "0",
                         "--prune", "0", "1", "1", "--temp-dir", tmp_path / "scratch", tmp_path / "corpus")
    assert code == 0, out
    meta = metadata(model_dir, "mytext")
    heldout = meta["build"]["heldout"]["documents"]
    assert heldout > 0 and meta["build"]["documents"] + heldout == 200
    assert meta["build"]["lmplz"].startswith("-o 3 -S 64M --prune 0 1 1")
    assert meta["build"]["build_binary"] == "-S 64M trie"
    assert meta["threshold"] > 0
    assert list((tmp_path / "scratch").iterdir()) == []  # training text and ARPA file removed
    assert PerplexityScorer("mytext").perplexity("The council approved the budget.") < meta["threshold"]


def test_a_threshold_from_too_few_held_out_sentences_is_warned_of_and_recorded_in_the_model(capsys, model_dir,
                                                                                            tmp_path):
    # Before: a corpus of 400 one-sentence documents set its threshold from ~20 held-out sentences and said
    # nothing: the 99th percentile of 20 perplexities lies past the highest of them, extrapolated, not measured.
    import random

    rng = random.Random(5)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(synth.general_sentences(rng, 1)) for _ in range(2400)) + "\n")
    small = tmp_path / "small.txt"
    small.write_text("\n".join(corpus.read_text().splitlines()[:400]) + "\n")
    code, out, err = train(capsys, "--corpus", "text", "--order", "2", "--name", "few", small)
    assert code == 0, err
    meta = metadata(model_dir, "few")
    held = meta["build"]["heldout"]["sentences"]
    assert 2 <= held < 100
    too_few = (f"{held:,} sentences are too few for threshold (the 99th percentile needs 100) and threshold_extracted "
               f"(the 99.9th percentile needs 1,000): with fewer, no sentence lies above the percentile, which is "
               f"extrapolated past the highest perplexity, not measured")
    assert (f"plexity train: warning: held out: {too_few}; give a larger corpus, or a smaller --holdout-every "
            f"(now 20: 1 document in 20 held out)") in err.splitlines()
    assert meta["threshold_procedure"].endswith(f"; {too_few}") and meta["build"]["threshold_too_few"] == too_few
    assert f"from {held} held-out sentences: too few, extrapolated)" in out
    # Holding out 1 document in 2 of 2,400 gives the 99.9th percentile its 1,000 sentences: no warning.
    code, out, err = train(capsys, "--corpus", "text", "--order", "2", "--name", "enough", "--holdout-every", "2",
                           corpus)
    assert code == 0, err
    meta = metadata(model_dir, "enough")
    assert meta["build"]["heldout"]["sentences"] >= 1000
    assert "too few" not in err + out and meta["build"]["threshold_too_few"] is None


def test_a_killed_runs_staging_and_work_folders_are_removed_by_the_next_run_and_a_live_runs_are_not(
        capsys, model_dir, tmp_path):
    # Before: `plexity train` killed with SIGKILL left .news.partial-* (the half-made model) and .news.work-* (the
    # training text and ARPA file: GBs for the BNC) in the model folder, and every later run left them there.
    import os
    import subprocess
    import sys
    import time
    from plexity_plugins.io.atomic_files import remove_stale_folders

    big = tmp_path / "big.txt"
    big.write_text("".join(f"The council met on day {i} and approved plan {i % 977} for the library.\n"
                           for i in range(300_000)))
    killed = subprocess.Popen([sys.executable, "-m", "plexity_plugins.cli", "train", "--corpus", "text", "--order",
                               "2", "--name", "news", *SMALL, str(big)], env={**os.environ},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(list(model_dir.glob(".news.*.lock"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        staging, work = sorted(p for p in model_dir.glob(".news.*") if p.is_dir())
        assert staging.name.startswith(".news.partial-") and work.name.startswith(".news.work-")
        assert remove_stale_folders(model_dir, ".news.partial-") == [] and staging.is_dir()  # (a live run's)
    finally:
        killed.kill()
        killed.wait()
    assert staging.is_dir() and work.is_dir()  # (SIGKILL: nothing of ours ran to remove them)
    small = tmp_path / "small.txt"
    small.write_text("The council approved the budget.\nThe library opens in the spring.\n" * 50)
    code, out, err = main(["train", "-S", "64M", "--corpus", "text", "--order", "2", "--name", "news", str(small)]), \
        *capsys.readouterr()
    assert code == 0, err
    assert f"plexity train: removed the staging folder {staging}, left by a run that was killed" in err.splitlines()
    assert f"plexity train: removed the work folder {work}, left by a run that was killed" in err.splitlines()
    assert [p.name for p in model_dir.iterdir()] == ["news"]


@pytest.mark.parametrize("under", [False, True])
def test_a_temp_dir_that_is_a_file_is_refused_in_one_line_naming_the_option(capsys, model_dir, tmp_path, under):
    # Before: "plexity train: error: FILE is a file, where a folder is needed: give another path, or move the
    # file", which named no option, after the staging folder was made.
    scratch = tmp_path / "scratch.txt"
    scratch.write_text("not a folder\n")
    given = scratch / "work" if under else scratch
    code, _, err = train(capsys, "--corpus", "text", "--order", "2", "--name", "news", "--temp-dir", given,
                         FIXTURES / "bnc")
    where = f"is under {scratch}, which is" if under else "is"
    assert code == 2 and err.splitlines() == [
        f"plexity train: error: --temp-dir {given} {where} a file, not a folder: give a folder for the training text, "
        f"the ARPA file and lmplz's sort files (default: beside the model)"]
    assert list(model_dir.iterdir()) == []


# -- bad input: a clear error naming the file, or a counted skip ----------------------------------------


def test_a_malformed_xml_file_stops_the_run_with_its_name(capsys, model_dir, tmp_path):
    shutil.copytree(BNC, tmp_path / "bnc")
    bad = tmp_path / "bnc" / "Texts" / "B" / "B9" / "B99.xml"
    bad.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "malformed.xml", bad)
    code, _, err = train(capsys, "--name", "trigrams-bnc", tmp_path / "bnc")
    assert code == 2
    assert f"{bad}: malformed XML" in err and "Traceback" not in err
    assert not (model_dir / "trigrams-bnc").exists() and list(model_dir.iterdir()) == []

    # With --skip-bad-files it is counted (and written out), and the rest is trained on.
    code, out, _ = train(capsys, "--name", "trigrams-bnc", "--skip-bad-files", "--holdout-every", "0",
                         "--write-dropped", tmp_path / "bnc")
    assert code == 0
    meta = metadata(model_dir, "trigrams-bnc")
    assert meta["build"]["skipped"] == {"spoken text (--written-only)": 1, "unreadable file": 1}
    assert meta["tokens"] == 29
    dropped = (model_dir / "trigrams-bnc" / "train-dropped.jsonl").read_text()
    assert "B99.xml: malformed XML" in dropped


def test_an_xml_file_that_is_not_a_bnc_text_is_a_counted_skip(tmp_path):
    (tmp_path / "bncHdr.xml").write_text('<?xml version="1.0"?><teiHeader><title>corpus header</title></teiHeader>')
    reader = BncReader([tmp_path])
    assert list(reader) == []
    assert reader.skips.counts == {"not a BNC text (no <wtext> or <stext>)": 1}


def test_a_metadata_csv_without_an_abstract_column_is_refused(capsys, model_dir, tmp_path):
    bad = tmp_path / "metadata.csv"
    bad.write_text("cord_uid,title,summary\nabc,Title,Some text here.\n")
    code, _, err = train(capsys, "--name", "trigrams-cord19", bad)
    assert code == 2 and f"{bad}: not a CORD-19 metadata.csv: missing column(s) abstract" in err


@pytest.mark.parametrize("corpus, content, message", [
    ("cord19", ",".join(synth.CORD19_HEADER) + "\n", "empty corpus: no training sentences"),
    ("cord19", "", "empty file"),
    ("text", "\n\n   \n", "empty corpus: no training sentences"),
])
def test_an_empty_corpus_is_refused(capsys, model_dir, tmp_path, corpus, content, message):
    path = tmp_path / ("metadata.csv" if corpus == "cord19" else "empty.txt")
    path.write_text(content)
    code, _, err = train(capsys, "--corpus", corpus, "--order", "3", "--name", "empty", path)
    assert code == 2 and message in err and str(path) in err
    assert list(model_dir.iterdir()) == []


def test_a_directory_without_corpus_files_is_an_empty_corpus(capsys, model_dir, tmp_path):
    code, _, err = train(capsys, "--corpus", "bnc", "--order", "3", "--name", "x", tmp_path)
    assert code == 2 and f"empty corpus: no .xml/.xml.gz files in {tmp_path}" in err
    code, _, err = train(capsys, "--corpus", "bnc", "--order", "3", "--name", "x", tmp_path / "missing")
    assert code == 2 and f"{tmp_path / 'missing'}: no such file or directory" in err


def test_text_that_is_not_utf8_is_refused_with_the_file_name(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Caf\xe9 au lait.\n".encode("latin-1"))
    with pytest.raises(CorpusError, match="latin1.txt: not UTF-8"):
        list(TextReader([bad]))


def test_an_installed_model_is_replaced_only_with_force(capsys, model_dir):
    args = ["--corpus", "bnc", "--order", "2", "--name", "again", "--holdout-every", "0", BNC]
    assert train(capsys, *args)[0] == 0
    code, _, err = train(capsys, *args)
    assert code == 2 and "already exists" in err and "--force" in err
    assert train(capsys, *args, "--force")[0] == 0
    assert [p.name for p in model_dir.iterdir()] == ["again"]  # no staging directories left behind


def test_the_embedded_models_name_is_refused(capsys, model_dir):
    code, _, err = train(capsys, "--corpus", "bnc", "--order", "3", "--name", "en-default", BNC)
    assert code == 2 and "embedded model" in err


def test_missing_kenlm_tools_name_the_one_command_that_installs_them(capsys, model_dir, tmp_path, monkeypatch):
    # exit 3: the installation lacks them; the command carries the checkout's path, so it works
    # from any folder (tests/test_first_day.py runs it after the README's first command)
    monkeypatch.setenv("PLEXITY_KENLM_BIN", str(tmp_path / "no-kenlm"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    code, _, err = train(capsys, "--name", "trigrams-bnc", BNC)
    assert code == 3
    assert f"`bash {REPO / 'scripts' / 'setup.sh'} --kenlm-tools`" in err and "Traceback" not in err
    assert err.count("\n") == 1 and "lmplz" in err
    assert list(model_dir.iterdir()) == []


def test_a_kenlm_tools_failure_is_told_in_its_own_lines_without_its_progress_bar(tmp_path):
    """lmplz's stderr holds its progress bar ("----5---10...", "****...") before the reason it stopped; the error
    gives the reason, line by line, and leaves the bar out (it was most of the fifteen lines the error kept)."""
    text = tmp_path / "tiny.txt"
    text.write_text("the cat sat\nthe dog ran\n")  # (too little for Kneser-Ney discounts)
    with pytest.raises(KenLMToolFailed) as failed:
        kenlm_tools.run_lmplz(text, tmp_path / "tiny.arpa", 3, memory="64M", temp_dir=tmp_path)
    lines = str(failed.value).splitlines()
    assert lines[0] == "lmplz failed (exit -6):"  # (SIGABRT: its exception was not caught)
    assert any("Could not calculate Kneser-Ney discounts" in line for line in lines)
    assert not [line for line in lines if set(line) <= set("-*+0123456789 ")]
    assert "*****" in failed.value.stderr  # (the whole of it is kept on the error)
