"""Bring your own model: CCNet / edugp SentencePiece KenLM models, document perplexity.

The CCNet recipe in miniature, with real parts: a SentencePiece model trained here on
text this file writes, a KenLM model built by lmplz from that text normalised the cc_net
way and cut into pieces, and `plexity models import` turning the pair into a model.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

import kenlm
import pytest

sentencepiece = pytest.importorskip("sentencepiece")

from plexity_plugins.training import thresholds  # noqa: E402
from plexity_plugins.text.ccnet_normalizer import (  # noqa: E402
    normalize,
    normalize_for_dedup,
    remove_unicode_punct,
    replace_unicode_punct,
)
from plexity_plugins.cli import main  # noqa: E402
from plexity_plugins.scoring.models import resolve
from plexity_plugins.errors import MissingExtra, ModelError
from plexity_plugins.scoring.scorer import PerplexityScorer  # noqa: E402
from plexity_plugins.text.plexity_tokenizer import to_lm_line  # noqa: E402
from plexity_plugins.text.model_tokenizers import datatrove_normalize
from ccnet_model import CORPUS, build_ccnet_model

# Documents to score: several lines, digits, accents, typographic punctuation.
DOCUMENTS = [
    "The council approved the budget for the new library.\nThe library will open in the spring.",
    "Résumé: the museum’s 2023 report — “many visitors” came in 1984… and in 3.14 weeks!",
    "Home | News | Sport | Weather | Contact\nAccept all cookies\nShare on Facebook",
    "  Scientists measured the temperature of the water.\n\n\tThe results were published.  ",
    "ＦＵＬＬ　ＷＩＤＴＨ：１２３，４５６。 «quoted» text ► next",
    "A NUL\x00inside and a control\x1bcharacter: both deleted by the normaliser.",
]


# -- the normaliser, on cc_net's own test examples (cc_net tests/test_normalizer.py, MIT) ------

def test_unicode_punctuation_is_mapped_as_cc_net_maps_it():
    weird = "，。、„”“«»１」「《》´∶：？！（）；–—．～’…━〈〉【】％"
    replaced = ',.,""""""""""\'::?!();- - . ~\'...-<>[]%'
    assert replace_unicode_punct(weird) == replaced
    assert remove_unicode_punct(weird) == ""


def test_every_digit_becomes_zero_including_full_width_ones():
    weird = "０２３４５６７８９ | 0123456789"
    assert normalize(weird, numbers=True) == "000000000 | 0000000000"
    assert normalize(weird, numbers=False) == weird


def test_normalize_for_dedup_keeps_accents_and_drops_punctuation_and_controls():
    assert normalize_for_dedup("０２３´∶：\x10 | ;012 hèllo") == "000 | ;000 hèllo"


def test_normalize_lowers_strips_accents_and_deletes_newlines():
    assert normalize("  Héllo Wörld\nSecond LINE\t!  ") == "hello worldsecond line!"
    assert normalize("Ça coûte 12,50 €") == "ca coute 00,00 €"
    assert normalize(" \n ") == ""


def cc_net_normalize_reference(line: str) -> str:
    """cc_net's `normalize` written out step by step as its source does them (the spec)."""
    from plexity_plugins.text.ccnet_normalizer import UNICODE_PUNCT

    line = line.strip()
    if not line:
        return line
    line = line.lower()
    nfd = unicodedata.normalize("NFD", line)
    line = "".join(c for c in nfd if unicodedata.category(c) != "Mn")
    line = re.sub(r"\d", "0", line)
    line = "".join(UNICODE_PUNCT.get(c, c) for c in line)
    return re.sub(f"[{''.join(map(chr, list(range(0, 32)) + list(range(127, 160))))}]", "", line)


def test_accents_are_stripped_as_cc_net_strips_them_on_every_character():
    from plexity_plugins.text.ccnet_normalizer import strip_accents

    # every code point below U+3100 (Latin, Greek, Cyrillic, Arabic, Indic ... with their marks)
    text = "".join(chr(c) for c in range(0x20, 0x3100) if not 0xD800 <= c < 0xE000)
    expected = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    assert strip_accents(text) == expected


def test_normalize_matches_cc_nets_steps_on_mixed_text():
    for text in DOCUMENTS + CORPUS + ["\x00\x85x\u00a0y", "İstanbul ǅ ﬁ"]:
        assert normalize(text) == cc_net_normalize_reference(text)


def test_datatrove_variant_is_datatroves_own_normalisation():
    from datatrove.utils.perplexity import KenlmModel

    reference = KenlmModel("unused", "en")  # nothing is downloaded: only its normaliser is called
    for text in DOCUMENTS + CORPUS:
        assert datatrove_normalize(text) == reference.normalize(text)
    # ... which differs from cc_net's on numbers only: "1984" is "0" there, "0000" here.
    assert normalize("in 1984") == "in 0000" and datatrove_normalize("in 1984") == "in 0"
    for text in CORPUS:  # no digits
        assert normalize(text) == reference.normalize(text)


# -- a CCNet model in miniature ------------------------------------------------------------


@pytest.fixture(scope="module")
def ccnet_files(tmp_path_factory) -> tuple[Path, Path]:
    return build_ccnet_model(tmp_path_factory.mktemp("ccnet"), CORPUS * 2)


@pytest.fixture
def ccnet_model(ccnet_files, model_dir) -> str:
    kenlm_path, sp_path = ccnet_files
    assert main(["models", "import", "ccnet-xx", "--kenlm", str(kenlm_path), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet", "--language", "en"]) == 0
    return "ccnet-xx"


def independent_document_perplexity(kenlm_path: Path, sp_path: Path, document: str) -> float:
    """cc_net's DocLM on its SentencePiece output, computed with the kenlm and sentencepiece modules."""
    lm = kenlm.Model(str(kenlm_path))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(sp_path))
    tokenized = " ".join(sp.encode_as_pieces(normalize(document)))
    log_score, length = 0.0, 0
    for line in tokenized.split("\n"):
        log_score += lm.score(line)
        length += len(line.split()) + 1
    return 10.0 ** (-log_score / length)


def test_import_writes_a_model_that_names_its_tokenizer(ccnet_model, model_dir, ccnet_files):
    meta = json.loads((model_dir / ccnet_model / "model.json").read_text())
    assert meta["tokenizer_version"] == "ccnet" and meta["sp_model"] == "model.sp.model"
    assert meta["language"] == "en" and meta["order"] == 3
    assert (model_dir / ccnet_model / "model.bin").resolve() == ccnet_files[0].resolve()  # linked, not copied
    assert (model_dir / ccnet_model / "model.sp.model").read_bytes() == ccnet_files[1].read_bytes()


def test_import_warns_when_the_model_reads_another_language_far_better(ccnet_files, model_dir, capsys):
    # (a SentencePiece model has few unknown tokens in any language: its perplexities tell)
    kenlm_path, sp_path = ccnet_files
    assert main(["models", "import", "en-as-de", "--kenlm", str(kenlm_path), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet", "--language", "de"]) == 0
    assert "the model reads the check sentences of 'en' far better" in capsys.readouterr().err
    assert main(["models", "import", "en-as-en", "--kenlm", str(kenlm_path), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet", "--language", "en"]) == 0
    assert "far better" not in capsys.readouterr().err


def test_document_perplexity_equals_cc_nets_computation(ccnet_model, ccnet_files):
    scorer = PerplexityScorer(ccnet_model, threshold=1e9)
    for document in DOCUMENTS:
        expected = independent_document_perplexity(*ccnet_files, document)
        assert scorer.document_perplexity(document) == pytest.approx(expected, rel=1e-4)
    # the normaliser deletes newlines: a two-line document is scored as one line
    assert scorer.document_score(DOCUMENTS[0]).lines == 1


def test_document_perplexity_equals_datatroves_kenlm_model(ccnet_files, model_dir, monkeypatch):
    from datatrove.utils import perplexity as datatrove_perplexity

    kenlm_path, sp_path = ccnet_files
    assert main(["models", "import", "dt-xx", "--kenlm", str(kenlm_path), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet-datatrove", "--language", "en"]) == 0
    reference = datatrove_perplexity.KenlmModel("unused", "en")
    # Pointed at the local files through its lazily-filled attributes: nothing is downloaded.
    reference._model = kenlm.Model(str(kenlm_path))
    reference._tokenizer = datatrove_perplexity.SentencePiece("unused", "en")
    reference._tokenizer._model = sentencepiece.SentencePieceProcessor(model_file=str(sp_path))
    ours = PerplexityScorer("dt-xx", threshold=1e9)
    rounded = {doc: reference.get_perplexity(doc) for doc in DOCUMENTS}
    monkeypatch.setattr(datatrove_perplexity, "round", lambda value, digits=None: value, raising=False)
    for document in DOCUMENTS:
        assert ours.document_perplexity(document) == pytest.approx(reference.get_perplexity(document), rel=1e-4)
        assert round(ours.document_perplexity(document), 1) == rounded[document]


def test_cc_net_and_datatrove_agree_on_text_without_numbers(ccnet_model, ccnet_files, model_dir):
    main(["models", "import", "dt-xx", "--kenlm", str(ccnet_files[0]), "--sp-model", str(ccnet_files[1]),
          "--tokenizer", "ccnet-datatrove", "--language", "en"])
    ccnet, datatrove = PerplexityScorer(ccnet_model, threshold=1e9), PerplexityScorer("dt-xx", threshold=1e9)
    assert ccnet.document_perplexity(DOCUMENTS[0]) == datatrove.document_perplexity(DOCUMENTS[0])
    assert ccnet.document_perplexity(DOCUMENTS[1]) != datatrove.document_perplexity(DOCUMENTS[1])  # 2023, 1984


def test_sentences_are_scored_with_the_models_own_tokenizer(ccnet_model, ccnet_files):
    scorer = PerplexityScorer(ccnet_model, threshold=1e9)
    lm = kenlm.Model(str(ccnet_files[0]))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(ccnet_files[1]))
    for record in scorer.score(CORPUS[0] + " " + CORPUS[1]):
        line = " ".join(sp.encode_as_pieces(normalize(record.text)))
        assert record.tokens == len(line.split())
        assert record.perplexity == pytest.approx(10 ** (-lm.score(line) / (record.tokens + 1)), rel=1e-6)
        assert record.oov == 0  # the pieces of seen text are all in the vocabulary


def test_clean_reports_the_document_perplexity(ccnet_model, ccnet_files):
    scorer = PerplexityScorer(ccnet_model, threshold=50.0, method="sentences")
    result = scorer.clean(DOCUMENTS[0])
    assert result.document_perplexity == scorer.document_perplexity(DOCUMENTS[0])
    assert result.model == ccnet_model


def test_cli_score_document(ccnet_model, ccnet_files, capsys):
    assert main(["score", "--document", "--plain", "--model", ccnet_model, DOCUMENTS[0]]) == 0
    expected = independent_document_perplexity(*ccnet_files, DOCUMENTS[0])
    assert capsys.readouterr().out.strip() == f"{expected:.2f}"


def test_our_own_models_pool_their_sentences(tiny_model):
    scorer = PerplexityScorer(tiny_model)
    text = "The cat sat on the mat. The dog sat on the rug.\nThe council approved the budget."
    lm = kenlm.Model(str(tiny_model / "model.bin"))
    lines = [to_lm_line(r.text) for r in scorer.score(text)]
    assert len(lines) == 3
    logprob = sum(lm.score(line) for line in lines)
    tokens = sum(len(line.split()) + 1 for line in lines)
    # (the compiled path sums KenLM's float32 log-probabilities: equal to ~1e-8)
    assert scorer.document_perplexity(text) == pytest.approx(10 ** (-logprob / tokens), rel=1e-6)
    assert scorer.clean(text).document_perplexity == pytest.approx(scorer.document_perplexity(text), rel=1e-12)
    assert scorer.document_perplexity("") is None


# -- the datatrove steps and the Scrapy pipeline ----------------------------------------------

def test_datatrove_document_filter_labels_and_bounds(ccnet_model, ccnet_files):
    from datatrove.data import Document

    from plexity_plugins.datatrove import PerplexityDocumentFilter

    values = {doc: independent_document_perplexity(*ccnet_files, doc) for doc in DOCUMENTS}
    clean_doc, junk_doc = DOCUMENTS[0], DOCUMENTS[2]
    assert values[clean_doc] < values[junk_doc]
    middle = (values[clean_doc] * values[junk_doc]) ** 0.5

    labeller = PerplexityDocumentFilter(ccnet_model, max_perplexity=middle, label_only=True)
    for text in (clean_doc, junk_doc):
        doc = Document(text=text, id="x")
        assert labeller.filter(doc) is True and doc.text == text
        assert doc.metadata["plexity_doc_perplexity"] == pytest.approx(values[text], rel=1e-4)
    junk = Document(text=junk_doc, id="j")
    labeller.filter(junk)
    assert junk.metadata["plexity_doc_would_drop"] == "doc_perplexity_above_max"

    bounded = PerplexityDocumentFilter(ccnet_model, max_perplexity=middle)
    assert bounded.filter(Document(text=clean_doc, id="c")) is True
    assert bounded.filter(Document(text=junk_doc, id="j")) == (False, "doc_perplexity_above_max")
    floor = PerplexityDocumentFilter(ccnet_model, min_perplexity=middle)
    assert floor.filter(Document(text=clean_doc, id="c")) == (False, "doc_perplexity_below_min")
    with pytest.raises(ValueError, match="below max_perplexity"):
        PerplexityDocumentFilter(ccnet_model, min_perplexity=10, max_perplexity=5)


def test_a_document_filter_without_any_bound_is_refused_naming_the_arguments(ccnet_model, ccnet_files):
    # Before: PerplexityDocumentFilter() (no bound, a model without document_threshold) dropped nothing
    # and said nothing. There is no default bound to fall back on: a document perplexity's scale is the model's.
    from plexity_plugins.datatrove import PerplexityDocumentFilter

    with pytest.raises(ValueError, match=re.escape(
            "PerplexityDocumentFilter has no bound and would drop nothing: give max_perplexity and/or "
            "min_perplexity, or label_only=True to only write the score (model ccnet-xx has no document_threshold)")):
        PerplexityDocumentFilter(ccnet_model)
    with pytest.raises(ValueError, match=re.escape("(no model of the language map has a document_threshold)")):
        PerplexityDocumentFilter({"en": ccnet_model})
    # Each of these drops, or means to drop nothing: accepted.
    PerplexityDocumentFilter(ccnet_model, label_only=True)
    PerplexityDocumentFilter(ccnet_model, min_perplexity=5)
    PerplexityDocumentFilter(ccnet_model, other_languages="drop")
    # A model imported with its cut-off (--document-threshold) is bounded by it.
    kenlm_path, sp_path = ccnet_files
    assert main(["models", "import", "ccnet-cut", "--kenlm", str(kenlm_path), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet", "--language", "en", "--document-threshold", "644"]) == 0
    assert PerplexityDocumentFilter("ccnet-cut").max_perplexity == 644


def test_datatrove_sentence_filter_stores_the_document_perplexity(ccnet_model, ccnet_files):
    from datatrove.data import Document

    from plexity_plugins.datatrove import PerplexitySentenceFilter

    step = PerplexitySentenceFilter(ccnet_model, threshold=1e9, min_chars=0)
    doc = Document(text=DOCUMENTS[0], id="d")
    assert step.filter(doc) is True
    assert doc.metadata["plexity_doc_perplexity"] == pytest.approx(
        independent_document_perplexity(*ccnet_files, DOCUMENTS[0]), rel=1e-4)


def test_scrapy_items_get_the_document_perplexity(ccnet_model, ccnet_files):
    import asyncio

    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={"PLEXITY_MODEL": ccnet_model, "PLEXITY_THRESHOLD": 1e9,
                                         "PLEXITY_INPUT_FORMAT": "text", "PLEXITY_THREADS": 0, "PLEXITY_MIN_CHARS": 0,
                                         "PLEXITY_DOC_PERPLEXITY_FIELD": "doc_perplexity"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    item = asyncio.run(pipeline.process_item({"html": DOCUMENTS[0]}))
    expected = independent_document_perplexity(*ccnet_files, DOCUMENTS[0])
    assert item["doc_perplexity"] == pytest.approx(expected, rel=1e-4)
    assert item["plexity"]["plexity_doc_perplexity"] == item["doc_perplexity"]


# -- bad input: each a clear error ------------------------------------------------------------

def run_cli(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_bare_kenlm_file_is_refused_saying_how_to_import_it(ccnet_files):
    with pytest.raises(ModelError, match=r"bare KenLM file.*plexity models import NAME --kenlm .*--tokenizer ccnet"):
        PerplexityScorer(str(ccnet_files[0]))


def test_a_file_that_is_no_kenlm_model_is_refused_as_such(tmp_path):
    # (not "a bare KenLM file ... import it": importing it would fail too)
    (tmp_path / "notes.txt").write_text("The council approved the budget.\n")
    with pytest.raises(ModelError, match=r"notes.txt is not a model: neither a KenLM binary nor an ARPA file"):
        PerplexityScorer(str(tmp_path / "notes.txt"))


def test_import_needs_an_existing_sentencepiece_model(ccnet_files, model_dir, tmp_path, capsys):
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(ccnet_files[0]), "--tokenizer", "ccnet",
                        "--sp-model", str(tmp_path / "absent.sp.model"))
    assert code == 2 and "absent.sp.model does not exist" in out
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(ccnet_files[0]), "--tokenizer", "ccnet")
    assert code == 2 and "needs --sp-model" in out
    assert not (model_dir / "m").exists()


def test_a_file_that_is_not_sentencepiece_is_named(ccnet_files, model_dir, tmp_path, capsys):
    fake = tmp_path / "fake.sp.model"
    fake.write_text("this is not a SentencePiece model\n" * 20)
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(ccnet_files[0]), "--tokenizer", "ccnet",
                        "--sp-model", str(fake))
    assert code == 2 and "fake.sp.model is not a SentencePiece model" in out


def test_a_sentencepiece_model_imported_as_plexity_tokenized_is_refused(ccnet_files, model_dir, capsys):
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(ccnet_files[0]),
                        "--tokenizer", "plexity-tok-1", "--language", "en")
    assert code == 2 and "SentencePiece pieces" in out and "--tokenizer ccnet" in out
    assert not (model_dir / "m").exists()
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(ccnet_files[0]),
                        "--tokenizer", "plexity-tok-1", "--sp-model", str(ccnet_files[1]))
    assert code == 2 and "does not use one" in out


def test_a_word_model_imported_as_ccnet_is_refused(tiny_model, ccnet_files, model_dir, capsys):
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(tiny_model / "model.bin"),
                        "--tokenizer", "ccnet", "--sp-model", str(ccnet_files[1]), "--language", "en")
    assert code == 2 and "no SentencePiece pieces" in out


def test_a_model_of_another_language_warns_of_unknown_tokens(tiny_model, model_dir, capsys):
    # An English word model declared German: the German check sentences are nearly all <unk>.
    code, out = run_cli(capsys, "models", "import", "m", "--kenlm", str(tiny_model / "model.bin"),
                        "--tokenizer", "plexity-tok-1", "--language", "de")
    assert code == 0 and "warning:" in out and "unknown to the model" in out
    share = float(re.search(r"sanity check: ([\d.]+)% unknown", out).group(1))
    assert share > 80


def test_a_model_whose_sentencepiece_file_went_missing_is_refused(ccnet_model, model_dir):
    (model_dir / ccnet_model / "model.sp.model").unlink()
    with pytest.raises(ModelError, match=r"model.sp.model does not exist"):
        PerplexityScorer(ccnet_model)


def test_a_model_whose_linked_kenlm_file_moved_names_the_link_and_how_to_mend_it(ccnet_files, model_dir, tmp_path,
                                                                                   capsys):
    # (it said the model's folder "holds no model file", which holds its model.bin: a link to the moved file)
    kenlm_path, sp_path = ccnet_files
    kept = tmp_path / "xx.arpa.bin"
    kept.write_bytes(kenlm_path.read_bytes())
    assert main(["models", "import", "moved", "--kenlm", str(kept), "--sp-model", str(sp_path),
                 "--tokenizer", "ccnet", "--language", "en"]) == 0
    kept.rename(tmp_path / "elsewhere.arpa.bin")
    capsys.readouterr()
    assert main(["score", "--model", "moved", "Some text."]) == 2
    assert capsys.readouterr().err.strip() == (
        f"plexity score: error: {model_dir / 'moved' / 'model.bin'} links to {kept}, which is not there any more (a "
        f"model imported without --copy links its KenLM file): put the file back, or import it again with "
        f"`plexity models import moved --kenlm FILE ... --force`")


def test_a_missing_sentencepiece_package_names_the_extra(ccnet_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentencepiece", None)  # import sentencepiece -> ImportError
    scorer = PerplexityScorer(ccnet_model, threshold=1e9)
    with pytest.raises(MissingExtra, match=r"-m pip install -e '.*\[ccnet\]'$"):
        scorer.document_perplexity("Some text.")


def test_plexity_models_lists_language_and_tokenizer(ccnet_model, capsys):
    code, out = run_cli(capsys, "models")
    line = next(line for line in out.splitlines() if line.startswith(ccnet_model))
    assert line.split()[-2:] == ["ccnet", "en"]  # tokenizer, language


# -- plexity train --tokenizer ccnet ----------------------------------------------------------

def test_train_with_the_ccnet_tokenizer_stores_it(ccnet_files, model_dir, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS * 3) + "\n")
    code, out = run_cli(capsys, "train", "--name", "sp-trained", "--corpus", "text", "--order", "3", "--quiet",
                        "--tokenizer", "ccnet", "--sp-model", str(ccnet_files[1]), "--language", "en", str(corpus))
    assert code == 0, out
    info = resolve("sp-trained")
    assert info.tokenizer_version == "ccnet" and info.sp_model == "model.sp.model"
    lm = kenlm.Model(info.path)
    assert "\u2581the" in lm  # trained on pieces
    assert PerplexityScorer("sp-trained").score(CORPUS[0])[0].oov == 0


def test_a_ccnet_scorer_pickles_for_worker_processes(ccnet_model):
    import pickle

    scorer = PerplexityScorer(ccnet_model, threshold=1e9)
    before = scorer.document_perplexity(DOCUMENTS[1])  # (opens both models)
    pickled = pickle.dumps(scorer)
    sp_model = (Path(scorer.info.path).parent / scorer.info.sp_model).read_bytes()
    assert sp_model not in pickled  # the SentencePiece model is reopened by the copy, not carried
    assert len(pickled) < Path(scorer.info.path).stat().st_size  # nor the KenLM one
    copy = pickle.loads(pickled)
    assert copy.document_perplexity(DOCUMENTS[1]) == before


def test_import_with_calibration_text_sets_the_thresholds(ccnet_files, model_dir, tmp_path, capsys):
    clean = tmp_path / "clean.txt"
    clean.write_text("\n".join(CORPUS[8:]) + "\n")
    code, out = run_cli(capsys, "models", "import", "cal", "--kenlm", str(ccnet_files[0]), "--sp-model",
                        str(ccnet_files[1]), "--tokenizer", "ccnet", "--language", "en", "--calibrate", str(clean))
    assert code == 0, out
    info = resolve("cal")
    scorer = PerplexityScorer("cal")
    values = sorted(r.perplexity for line in CORPUS[8:] for r in scorer.score(line))
    # the rule of `plexity calibrate`, on the sentences as the model's own tokenizer scores them
    assert info.threshold == thresholds.percentile_threshold(values, thresholds.THRESHOLD_PERCENTILE)
    assert "clean.txt" in info.threshold_procedure


def test_scrapy_language_field_and_document_bounds(ccnet_model, ccnet_files):
    import asyncio

    from scrapy.exceptions import DropItem
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    low, high = (independent_document_perplexity(*ccnet_files, d) for d in (DOCUMENTS[0], DOCUMENTS[2]))
    crawler = get_crawler(settings_dict={
        "PLEXITY_MODEL": ccnet_model, "PLEXITY_THRESHOLD": 1e9, "PLEXITY_INPUT_FORMAT": "text", "PLEXITY_THREADS": 0,
        "PLEXITY_MIN_CHARS": 0, "PLEXITY_MAX_DOC_PERPLEXITY": (low * high) ** 0.5, "PLEXITY_LANGUAGE_FIELD": "lang"})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    assert asyncio.run(pipeline.process_item({"html": DOCUMENTS[0]}))["plexity"]["plexity_doc_perplexity"] > 0
    with pytest.raises(DropItem, match="doc_perplexity_above_max"):
        asyncio.run(pipeline.process_item({"html": DOCUMENTS[2]}))
    # the spider's language label is used instead of identifying the page's language
    german = asyncio.run(pipeline.process_item({"html": DOCUMENTS[2], "lang": "de"}))
    assert german["plexity"]["plexity_passthrough"] == "language:de" and german["text"] == DOCUMENTS[2].strip()
    assert pipeline.stats.get_value("plexity/items_dropped/doc_perplexity_above_max") == 1


def test_plexity_run_with_an_imported_ccnet_model(ccnet_model, model_dir, tmp_path):
    """`plexity run` (datatrove, a worker process) scores with the imported model and writes
    every document's document perplexity."""
    import gzip
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    out = tmp_path / "out"
    process = subprocess.run(
        [sys.executable, "-m", "plexity_plugins.cli", "run", str(repo / "examples" / "sample.warc.gz"),
         "--output-dir", str(out), "--executor", "local", "--extractor", "tags", "--model", ccnet_model,
         "--threshold", "1e9", "--min-chars", "0", "--workers", "1", "--no-language-check"],
        capture_output=True, text=True, timeout=300, cwd=repo)
    assert process.returncode == 0, process.stderr[-3000:]
    docs = [json.loads(line) for path in (out / "documents").glob("*.jsonl*")
            for line in gzip.open(path, "rt")]
    assert docs and all(d["metadata"]["plexity_model"] == ccnet_model for d in docs)
    assert all(d["metadata"]["plexity_doc_perplexity"] > 1 for d in docs)


def test_plexity_clean_writes_the_document_perplexity_into_warc_records(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    repo = Path(__file__).resolve().parent.parent
    out = tmp_path / "out"
    assert main(["clean", str(repo / "examples" / "sample.warc.gz"), "-o", str(out), "-q"]) == 0
    with open(out / "sample.warc.gz", "rb") as f:
        values = [float(r.rec_headers.get_header("X-Plexity-Doc-Perplexity")) for r in ArchiveIterator(f)
                  if r.rec_headers.get_header("X-Plexity-Verdict") == "kept"]
    assert values and all(v > 1 for v in values)
