"""Hostile-input probe 35: what a stranger hands us besides pages and WARCs: model folders and their cards,
training corpora and calibration samples, datasets, Scrapy items.

A model's card (``model.json``) was taken as it was written.  A card edited by hand with ``"threshold": "500"``
or ``[500]`` ended `plexity score` and `plexity clean` in a TypeError traceback; ``true`` was a threshold of 1.0
and ``Infinity`` one that keeps everything, both used without a word; an ``"order": "3"`` was "has order 3 but its
metadata says 3"; a ``"language": 5`` or a ``"build": []`` a traceback in the language gate or in `plexity
models`; a misspelt ``"treshold": 400`` was ignored, the old default scoring in its place; a key given twice
kept the last silently.  Now each is one line naming the card and the key (`scoring.models._card_problem`): the
command stops (exit 2), and `plexity models` lists the other models and says why it skips that one.

A model.bin cut short was said twice, with KenLM's C++ source location; now one line.  A model folder that is a link
loop, or is named as the embedded model, is named for what it is instead of "unknown model" or a second en-default.

Training corpora and calibration samples are read as their bytes say (`training.corpora.open_corpus_bytes`): gzip,
bzip2, xz or zstd whatever the name; UTF-16 (which was trained on as characters and NULs, a model installed without a
word), a PDF or binary data is refused naming what it is.  A corpus without line breaks is read in pieces of at most
1 MiB (a 50 MB line took 385 MB).  A model name with a line break or ESC, or too long for a folder, and an order the
command would refuse, are refused by the Python API before the corpus is read.  Calibration: a percentile among tied
perplexities no longer lies 1 ulp below them ("keeps 0.0% of the clean sentences").  Scrapy: an item's url that is
bytes, no string, or megabytes long is named readably in the drop's log line.
"""

from __future__ import annotations

import json
import shutil

import pytest

from helpers import run_plexity
from plexity_plugins.errors import CorpusError, ModelError
from plexity_plugins.scoring.models import list_models, resolve


# -- model cards --------------------------------------------------------------------------------------------------

def _card_copy(tiny_model, model_dir, name: str, patch: dict | None = None, raw: str | None = None):
    folder = model_dir / name
    shutil.copytree(tiny_model, folder)
    if raw is None:
        card = json.loads((folder / "model.json").read_text())
        card.update(patch or {})
        raw = json.dumps(card)
    (folder / "model.json").write_text(raw)
    return folder


@pytest.mark.parametrize("patch, said", [
    ({"threshold": "500"}, "'threshold' is '500': a positive perplexity"),
    ({"threshold": [500]}, "'threshold' is [500]: a positive perplexity"),
    ({"threshold": True}, "'threshold' is True"),
    ({"threshold": float("inf")}, "'threshold' is inf"),
    ({"threshold": float("nan")}, "'threshold' is nan"),
    ({"threshold_extracted": -3}, "'threshold_extracted' is -3"),
    ({"document_threshold": "x"}, "'document_threshold' is 'x'"),
    ({"order": "3"}, "'order' is '3': a whole number"),
    ({"order": 0}, "'order' is 0: a whole number of 1 or more"),
    ({"language": 5}, "'language' is 5: a string, or null"),
    ({"tokenizer_version": ["plexity-tok-1"]}, "'tokenizer_version' is ['plexity-tok-1']"),
    ({"sp_model": 5}, "'sp_model' is 5"),
    ({"build": []}, "'build' is []: an object"),
    ({"name": 5}, "'name' is 5"),
    ({"treshold": 400}, "'treshold', which is no key of a model's metadata: did you mean 'threshold'?"),
])
def test_a_card_value_of_the_wrong_type_is_one_error_naming_the_card_and_the_key(tiny_model, model_dir, patch, said):
    """Each was used as it was (a traceback at the first comparison, a threshold of 1.0 for `true`, a misspelt key
    ignored); now resolving the model says what is wrong, naming its model.json."""
    folder = _card_copy(tiny_model, model_dir, "edited", patch)
    with pytest.raises(ModelError) as caught:
        resolve("edited")
    assert str(caught.value) == f"model metadata {folder / 'model.json'}: {said}" or said in str(caught.value)
    assert str(folder / "model.json") in str(caught.value)


def test_a_key_given_twice_and_a_huge_card_are_refused_and_other_keys_and_nulls_are_taken(tiny_model, model_dir):
    card = (tiny_model / "model.json").read_text()
    _card_copy(tiny_model, model_dir, "twice", raw=card.replace('"threshold": 500.0', '"threshold": 500.0, "threshold": 5'))
    with pytest.raises(ModelError, match="the key 'threshold' is given twice"):
        resolve("twice")
    _card_copy(tiny_model, model_dir, "huge", raw=card[:-2] + ', "description": "' + "x" * (17 << 20) + '"}')
    with pytest.raises(ModelError, match=r"huge/model.json is 17,8\d\d,\d\d\d bytes, not a model's metadata"):
        resolve("huge")
    # a key of a newer version (no near miss of a known one) is left alone; null text fields read as empty
    _card_copy(tiny_model, model_dir, "newer", {"trained_on_gpu": True, "licence": None, "language": None})
    info = resolve("newer")
    assert (info.licence, info.language, info.threshold) == ("", None, 500.0)


def test_plexity_score_and_models_say_a_broken_card_in_one_line(tiny_model, model_dir):
    """`plexity score --model edited` ended in a 20-line TypeError traceback, and `plexity models` in an
    AttributeError on a card whose build was a list: every other model unlisted."""
    _card_copy(tiny_model, model_dir, "edited", {"threshold": "500"})
    _card_copy(tiny_model, model_dir, "listed", {"build": []})
    _card_copy(tiny_model, model_dir, "fine")
    score = run_plexity("score", "--model", "edited", "The cat sat on the mat.", timeout=60)
    assert score.returncode == 2, score.stderr
    assert score.stderr.strip().splitlines() == [
        f"plexity score: error: model metadata {model_dir / 'edited' / 'model.json'}: 'threshold' is '500': a "
        f"positive perplexity (a number, not in quotes), or null for none"]
    models = run_plexity("models", timeout=60)
    assert models.returncode == 0 and "Traceback" not in models.stderr, models.stderr
    assert "\nfine " in models.stdout and "\nlisted " not in models.stdout
    assert f"skipping {model_dir / 'listed'}: model metadata {model_dir / 'listed' / 'model.json'}: 'build' is []" \
        in models.stderr
    assert [info.name for info in list_models()][1:] == ["fine"]


# -- training corpora and calibration samples: what their bytes are ------------------------------------------------

NEWS = ("The council approved the budget for the new library. The library opens in the spring.\n"
        "Residents asked the council about the new road. The mayor said the road would be finished soon.\n") * 3


def _sentences(path) -> list[str]:
    from plexity_plugins.training.corpora import TextReader

    return [sentence for document in TextReader([path]) for sentence in document.sentences]


def test_a_corpus_compressed_otherwise_or_named_for_another_compression_is_read_by_its_bytes(tmp_path):
    """A .txt.bz2 or .txt.xz was "not UTF-8 at line 1, byte 11 ...: convert it first, e.g. from windows-1252
    (Latin-1)", a gzip file named .txt the same, and a plain file named .txt.gz "Not a gzipped file": now each is
    read as its first bytes say, by `plexity train --corpus text` and by `plexity calibrate` alike."""
    import bz2
    import gzip
    import lzma

    from plexity_plugins.training.thresholds import read_sample_lines

    expected = _sentences(_write(tmp_path / "plain.txt", NEWS.encode()))
    for name, data in [("news.txt.bz2", bz2.compress(NEWS.encode())), ("news.txt.xz", lzma.compress(NEWS.encode())),
                       ("gzip-named.txt", gzip.compress(NEWS.encode())), ("plain-named.txt.gz", NEWS.encode())]:
        path = _write(tmp_path / name, data)
        assert _sentences(path) == expected, name
        assert read_sample_lines(path) == NEWS.strip().splitlines(), name
    # a Latin-1 file inside an xz one: the line that converts it decompresses it first
    latin = _write(tmp_path / "old.txt.xz", lzma.compress("Le caf\xe9 ouvre.\n".encode("latin-1")))
    with pytest.raises(CorpusError) as caught:
        list(_sentences(latin))
    assert str(caught.value).endswith(f"convert it first, e.g. from windows-1252 (Latin-1): xz -dc {latin} | iconv -f "
                                      f"windows-1252 -t utf-8 > old.utf8.txt; or give --skip-bad-files to leave the "
                                      f"file out")


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name, data, said", [
    ("windows.txt", NEWS.encode("utf-16-le"),
     "UTF-16LE, not UTF-8: convert it first, iconv -f UTF-16LE -t UTF-8 {path} > windows.utf8.txt"),
    ("bom.txt", NEWS.encode("utf-16"), "UTF-16LE, not UTF-8: convert it first, iconv -f UTF-16LE -t UTF-8 {path} > "
                                       "bom.utf8.txt"),
    ("big.txt.gz", __import__("gzip").compress(NEWS.encode("utf-16-be")),
     "UTF-16BE, not UTF-8: convert it first, gzip -dc {path} | iconv -f UTF-16BE -t UTF-8 > big.utf8.txt"),
    ("paper.txt", b"%PDF-1.7\n" + NEWS.encode(), "a PDF file, not text: give UTF-8 text, one document or sentence a line"),
    ("noise.txt", bytes(range(256)) * 8, "binary data (NUL and control bytes), not text: give UTF-8 text, one document "
                                         "or sentence a line"),
])
def test_a_corpus_file_that_is_no_utf8_text_is_named_for_what_it_is(tmp_path, name, data, said):
    """UTF-16 text without a byte order mark (a Windows "Unicode" text file) was trained on as it came: every
    character a word and NUL (26,762 tokens, a vocabulary of 26, for 3,163 words), the model installed and given a
    threshold without a word; with a mark, or a PDF or binary file, it was "not UTF-8 ... convert it first, e.g. from
    windows-1252 (Latin-1)", a conversion that makes it no better.  Now each is named for what it is, with the line
    that converts it where one does."""
    from plexity_plugins.training.thresholds import read_sample_lines

    path = _write(tmp_path / name, data)
    with pytest.raises(CorpusError) as caught:
        _sentences(path)
    assert str(caught.value) == f"{path}: " + said.format(path=path)
    with pytest.raises(CorpusError) as caught:  # (calibration's samples: the same rule)
        read_sample_lines(path)
    assert str(caught.value) == f"{path}: " + said.format(path=path)


def test_plexity_train_of_utf16_text_stops_in_one_line_and_installs_nothing(tmp_path):
    corpus = _write(tmp_path / "windows.txt", NEWS.encode("utf-16-le"))
    result = run_plexity("train", "--corpus", "text", "--order", "3", "--name", "news", "--output-dir",
                         str(tmp_path / "models"), str(corpus), timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1:] == [f"plexity train: error: {corpus}: UTF-16LE, not UTF-8: convert it "
                                               f"first, iconv -f UTF-16LE -t UTF-8 {corpus} > windows.utf8.txt"]
    assert "Traceback" not in result.stderr and "installed" not in result.stdout
    assert not (tmp_path / "models" / "news").exists()


def test_a_corpus_without_a_line_break_is_read_in_pieces_of_bounded_size_no_word_cut(tmp_path):
    """A line was read whole, as one document: a 50 MB corpus without a line break took 385 MB to read (7.7 times
    its size; a 2 GB one, 15 GB), and as one document it was held out whole or not at all, so the model got no
    threshold.  Now a line longer than `MAX_LINE_CHARS` (1 MiB; 1,000 characters here) is read in pieces of at most
    that, each cut after a space, each a document of its own (key ``file:1``, ``file:1#1`` ...); the 50 MB line
    reads in 89 MB.  Lines of ordinary length keep their keys, so a model's hold-out is as before."""
    from plexity_plugins.training.corpora import TextReader

    words = [f"word{i}" for i in range(20_000)]
    one_line = _write(tmp_path / "one-line.txt", (" ".join(words) + ".").encode())
    reader = TextReader([one_line])
    reader.max_line_chars = 1_000
    documents = list(reader)
    assert len(documents) > 100 and all(len(" ".join(d.sentences)) <= 1_000 for d in documents)
    assert " ".join(" ".join(d.sentences) for d in documents).split() == words[:-1] + [words[-1] + "."]
    assert [d.key for d in documents[:3]] == ["one-line.txt:1", "one-line.txt:1#1", "one-line.txt:1#2"]
    # lines after a long one, and lines ended by CR LF or a lone CR, keep their numbers
    mixed = _write(tmp_path / "mixed.txt", b"short one.\r\n" + b"long " * 500 + b"\r\nthird.\rfourth.\n")
    reader = TextReader([mixed])
    reader.max_line_chars = 1_000
    keys = [(d.key, d.sentences[0][:6]) for d in reader]
    assert keys[0] == ("mixed.txt:1", "short ") and keys[-2:] == [("mixed.txt:3", "third."), ("mixed.txt:4", "fourth")]
    assert [k for k, _ in keys[1:-2]] == ["mixed.txt:2", "mixed.txt:2#1", "mixed.txt:2#2"]


@pytest.mark.parametrize("name, said", [
    ("news\nde", "invalid model name 'news\\nde': use letters, digits, '-', '_' or '.'"),
    ("news\x1b[2J", "invalid model name 'news\\x1b[2J': use letters, digits, '-', '_' or '.'"),
    ("n" * 300, "model name of 300 bytes: a name is 200 bytes at most (it names the model's folder)"),
])
def test_a_model_name_that_cannot_name_a_folder_in_one_line_is_refused_before_the_corpus_is_read(tmp_path, name, said):
    """`plexity train --name $'news\\nde'` (or with an ESC) installed a folder of that name, the summary's lines
    broken by it or the terminal's screen cleared; a name of 300 letters stopped at the end of the run as
    "[Errno 36] File name too long".  Now `plexity train` and `plexity models import` refuse it first."""
    from plexity_plugins.errors import TrainError
    from plexity_plugins.training import ModelTrainer
    from plexity_plugins.training.model_import import import_model

    corpus = _write(tmp_path / "news.txt", NEWS.encode())
    with pytest.raises(TrainError) as caught:
        ModelTrainer("text", corpus, name, 3, output_dir=tmp_path / "models")
    assert str(caught.value) == said
    with pytest.raises(TrainError) as caught:
        import_model(name, tmp_path / "none.bin", "plexity-tok-1", output_dir=tmp_path / "models")
    assert str(caught.value) == said
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


# -- calibration samples --------------------------------------------------------------------------------------------

def test_a_threshold_from_sentences_of_one_perplexity_keeps_them(tmp_path, tiny_model, capsys):
    """300 clean sentences the model scores alike (the same sentence with another number: its digits are one
    token): statistics.quantiles put their 99th percentile 1 ulp below their perplexity (6.569898428659912 of
    ...913), and `plexity calibrate` suggested a threshold that "keeps 0.0% of the clean sentences", which --write
    would have made the model's default.  So too wherever the percentile fell among tied perplexities: every one of
    them above the threshold.  Now a cut between two equal values is that value (`thresholds.percentile_cuts`), as
    for `plexity train`'s held-out sentences."""
    from plexity_plugins.cli import main
    from plexity_plugins.training.thresholds import percentile_threshold

    value = 6.569898428659913
    assert percentile_threshold([value] * 300, 99) >= value
    assert percentile_threshold([value] * 300, 99.9) >= value
    tied_top = [1.0 + i / 1000 for i in range(250)] + [value] * 50  # (the 99th percentile among the 50 tied)
    assert sum(p <= percentile_threshold(tied_top, 99) for p in tied_top) == 300
    sample = _write(tmp_path / "clean.txt", "".join(f"The council approved the budget number {i} for the new "
                                                    f"library.\n" for i in range(300)).encode())
    assert main(["calibrate", "--model", str(tiny_model), str(sample)]) == 0
    out = capsys.readouterr().out
    assert "(99th percentile of the clean sentences): keeps 100.0% of the clean sentences" in out
    assert "(99.9th percentile): keeps 100.0% of the clean sentences" in out


def test_a_model_folder_that_is_a_link_leading_nowhere_is_named_for_what_it_is(tiny_model, model_dir):
    """A link in $PLEXITY_MODEL_DIR that is a loop (news -> news-v2 -> news) or whose target was removed: `--model
    news` was "unknown model 'news': not a file or directory, and not installed in ..." while `ls` shows it there,
    and `plexity models` left it out without a word.  Now both say it is a link, to what, and why it leads nowhere."""
    shutil.copytree(tiny_model, model_dir / "fine")
    (model_dir / "news").symlink_to("news-v2")
    (model_dir / "news-v2").symlink_to("news")
    (model_dir / "gone").symlink_to(model_dir.parent / "removed")
    with pytest.raises(ModelError) as caught:
        resolve("news")
    assert str(caught.value) == (f"{model_dir / 'news'} is a symbolic link to news-v2, which leads to no model folder "
                                 f"(a loop of links)")
    with pytest.raises(ModelError, match=r"gone is a symbolic link to .*removed, which leads to no model folder \(its "
                                         r"target is not there\)"):
        resolve("gone")
    models = run_plexity("models", timeout=60)
    assert models.returncode == 0 and "\nfine " in models.stdout
    assert f"skipping {model_dir / 'news'}: {model_dir / 'news'} is a symbolic link to news-v2" in models.stderr
    assert f"skipping {model_dir / 'gone'}: " in models.stderr


# -- Scrapy items ---------------------------------------------------------------------------------------------------

def test_an_items_url_that_is_bytes_no_string_or_huge_names_it_readably_in_the_drop_line(tmp_path):
    """A url given as bytes was logged and written to PLEXITY_DROPPED_FILE as ``b'https://...'``, a number or dict
    as its repr as if it were the URL, and a url of 2 MB went whole into Scrapy's log line of the drop.  Now bytes
    are decoded, another kind says what it is, and the log line shows 2,000 characters of it and its length (the
    dropped file keeps it whole)."""
    import asyncio

    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    dropped = tmp_path / "dropped.jsonl"
    crawler = get_crawler(settings_dict={"PLEXITY_THREADS": 0, "PLEXITY_EXTRACTOR": "tags",
                                         "PLEXITY_DROPPED_FILE": str(dropped)})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    huge = "https://example.org/" + "a" * 100_000
    said = []
    for url in (b"https://example.org/a", 5, {"page": 1}, huge):
        with pytest.raises(Exception) as caught:
            asyncio.run(pipeline.process_item({"url": url, "html": "   "}))
        said.append(str(caught.value))
    pipeline.close_spider()
    assert [line.rsplit(" (", 1)[-1] for line in said[:3]] == [
        "https://example.org/a)", "dict whose url is an int)", "dict whose url is a dict)"]
    assert said[3].endswith("a" * 10 + "... (100,020 characters))") and len(said[3]) < 2_200
    rows = [json.loads(line) for line in dropped.read_text().splitlines()]
    assert [row["source"] for row in rows if row.get("reason") == "empty_input"][-1] == huge


@pytest.mark.parametrize("order", [1, 7, 0, "3", True, 2.0])
def test_the_python_api_refuses_an_order_the_command_refuses_before_the_corpus_is_read(tmp_path, order):
    """`plexity train --order` takes 2 to 6, but `ModelTrainer(..., order)` took anything: "3" trained a model whose
    model.json said "3" (no command loads it: its card is refused), 7 or 0 stopped in lmplz after the whole corpus
    was read.  Now the trainer refuses it first, by the rule the command's choices come from (`models.ORDERS`)."""
    from plexity_plugins.errors import TrainError
    from plexity_plugins.training import ModelTrainer

    corpus = _write(tmp_path / "news.txt", NEWS.encode())
    with pytest.raises(TrainError) as caught:
        ModelTrainer("text", corpus, "news", order, output_dir=tmp_path / "models")
    assert str(caught.value) == f"order {order!r}: an n-gram order is a whole number from 2 to 6"


# -- damaged KenLM files --------------------------------------------------------------------------------------------

def test_a_damaged_kenlm_file_is_one_line_naming_the_file_and_what_kenlm_found(tiny_model, model_dir):
    """A model.bin cut short (a copy interrupted, a full disk) was said twice: a WARNING "compiled scorer cannot open
    ...: using the kenlm module", a fallback that then failed the same way, KenLM's "Loading the LM will be faster if
    you build a binary file." between them when it read the cut file as ARPA text, and the error held KenLM's source
    location ("lm/binary_format.cc:160 in void* lm::ngram::BinaryFormat::LoadBinary(std::size_t) threw
    FormatLoadException because `file_size != util::kBadSize && file_size < total_map'.").  Now one line: the file
    and what is wrong with it."""
    data = (tiny_model / "model.bin").read_bytes()
    said = {}
    for name, cut in (("short", 2000), ("empty", 0)):
        folder = _card_copy(tiny_model, model_dir, name)
        (folder / "model.bin").write_bytes(data[:cut])
        result = run_plexity("score", "--model", name, "The cat sat on the mat.", timeout=60)
        assert result.returncode == 2
        said[name] = result.stderr.splitlines()
    header_size = said["short"][0].rsplit(" ", 1)[-1]
    assert said["short"] == [f"plexity score: error: cannot load KenLM model {model_dir / 'short' / 'model.bin'} "
                             f"(corrupt or not a KenLM file?): Binary file has size 2000 but the headers say it should "
                             f"be at least {header_size}"]
    assert said["empty"] == [f"plexity score: error: cannot load KenLM model {model_dir / 'empty' / 'model.bin'} "
                             f"(corrupt or not a KenLM file?): End of file Byte: 0"]


def test_skip_bad_files_counts_a_utf16_file_as_what_it_is(tmp_path):
    """With --skip-bad-files, a UTF-16 file with its byte order mark was skipped as "not UTF-8 at line 1, byte 1 ...:
    convert it first, e.g. from windows-1252 (Latin-1)" in the log and in train-dropped.jsonl."""
    from plexity_plugins.training.corpora import SkipLog, TextReader

    windows = _write(tmp_path / "windows.txt", NEWS.encode("utf-16"))
    good = _write(tmp_path / "news.txt", NEWS.encode())
    skips = SkipLog(tmp_path / "dropped.jsonl")
    documents = list(TextReader([windows, good], skips, skip_bad_files=True))
    skips.close()
    assert len(documents) == 6 and skips.counts == {"unreadable file": 1}
    (row,) = [json.loads(line) for line in (tmp_path / "dropped.jsonl").read_text().splitlines()]
    assert row["detail"] == (f"{windows}: UTF-16LE, not UTF-8: convert it first, iconv -f UTF-16LE -t UTF-8 {windows} > "
                             f"windows.utf8.txt")


def test_a_model_folder_named_as_the_embedded_model_is_not_listed_as_a_second_one(tiny_model, model_dir):
    """`cp -r news $PLEXITY_MODEL_DIR/default` (or `/en-default`): `plexity models` listed a "default" and a second
    "en-default", and `plexity serve` offered them, while `--model default` and `--model en-default` always give the
    embedded model.  Now the listing skips such a folder, saying why and what to do."""
    for name in ("default", "en-default", "news"):
        shutil.copytree(tiny_model, model_dir / name)
    assert [info.name for info in list_models()] == ["en-default", "news"]
    assert resolve("default").tokens != resolve("news").tokens  # (the embedded model, not the folder)
    models = run_plexity("models", timeout=60)
    assert f"skipping {model_dir / 'default'}: 'default' names the embedded model (en-default), which --model default " \
           f"always gives: rename the folder to use this one" in models.stderr
    assert models.stdout.count("\nen-default ") == 1 and "\ndefault " not in models.stdout


def test_a_corpus_file_removed_while_training_reads_is_a_named_error_or_a_counted_skip(tmp_path):
    """A file listed when the corpus folder was read and removed before its turn (a corpus being rewritten) stops the
    run naming it, or with --skip-bad-files is one counted skip: never a FileNotFoundError traceback."""
    from plexity_plugins.training.corpora import TextReader

    for skip in (True, False):
        folder = tmp_path / f"corpus-{skip}"
        folder.mkdir()
        _write(folder / "a.txt", NEWS.encode())
        gone = _write(folder / "b.txt", NEWS.encode())
        reader = TextReader([folder], skip_bad_files=skip)
        documents = iter(reader)
        next(documents)
        gone.unlink()
        if skip:
            assert len(list(documents)) == 5 and reader.skips.counts == {"unreadable file": 1}
        else:
            with pytest.raises(CorpusError, match=f"{gone}: cannot read .*No such file or directory"):
                list(documents)
