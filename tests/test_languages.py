"""Other languages: a model trained with `plexity train --language de` filters German text,
and a language -> model map cleans each text with its own language's model, in every
front end.  Real parts: a German KenLM model built by lmplz from text this file writes."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from datatrove.data import Document

from plexity_plugins.cli import main
from plexity_plugins.datatrove import PerplexitySentenceFilter
from plexity_plugins.scoring.models import resolve
from plexity_plugins.scoring.multilingual import LanguageModels, parse_model_args
from plexity_plugins.scoring.scorer import PerplexityScorer

GERMAN_CORPUS = [
    "Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen.",
    "Die Bibliothek soll im Frühjahr öffnen und an Werktagen lange geöffnet bleiben.",
    "Die Anwohner fragten den Stadtrat nach der Straße zum Fluss und nach der alten Brücke.",
    "Der Bürgermeister sagte, die Straße werde vor dem Ende des Jahres fertig sein.",
    "Die Kinder spielten im Park am Fluss, während ihre Eltern sich unterhielten.",
    "Die Forscher haben jeden Morgen die Temperatur des Wassers gemessen.",
    "Die Ergebnisse der Studie wurden in einem Bericht der Universität veröffentlicht.",
    "Der Bericht sagt, dass der Fluss sauberer ist als in den vergangenen Jahren.",
    "Die Bauern im Tal bauen Äpfel, Birnen und Kirschen auf kleinen Höfen an.",
    "Der Zug in die Stadt fährt tagsüber jede Stunde vom Bahnhof ab.",
    "Im Sommer kommen viele Besucher in die Stadt, um in den Bergen zu wandern.",
    "Das Museum zeigt Bilder und Fotografien aus der Geschichte der Region.",
    "Die Lehrer der Schule haben ein neues Programm für das Lesen begonnen.",
    "Das Krankenhaus hat einen neuen Flügel für Patienten eröffnet, die lange Pflege brauchen.",
    "Die Arbeiter haben nach dem Sturm im Winter das Dach der Kirche repariert.",
    "Die Firma hat eine Fabrik am Hafen gebaut und dreihundert Menschen eingestellt.",
    "Der Stadtrat will im nächsten Jahr auch die Schule am Fluss erneuern.",
    "Die Besucher des Museums können die Bilder an jedem Tag der Woche sehen.",
    "Die Eltern der Kinder haben den Bürgermeister nach dem Park gefragt.",
    "Die Universität will die Studie im nächsten Sommer fortsetzen.",
]
GERMAN_ARTICLE = " ".join(GERMAN_CORPUS[:4])
GERMAN_BOILERPLATE = ["Impressum | Datenschutz | AGB | Kontakt", "Alle Cookies akzeptieren",
                      "Warenkorb (0) · Anmelden · Registrieren · Newsletter"]
GERMAN_PAGE = "\n".join(GERMAN_BOILERPLATE[:2] + [GERMAN_ARTICLE] + GERMAN_BOILERPLATE[2:])
ENGLISH = ("The council approved the budget for the new library on Tuesday. The library will open in the spring "
           "and will stay open late on weekdays. Residents asked the council about the road to the river.")
FRENCH = ("Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque. La bibliothèque ouvrira "
          "au printemps et restera ouverte tard en semaine.")


@pytest.fixture(scope="module")
def german_model(tmp_path_factory) -> str:
    """`plexity train --language de` on a German corpus, installed in its own model directory."""
    root = tmp_path_factory.mktemp("german")
    corpus = root / "de.txt"
    corpus.write_text("\n".join(GERMAN_CORPUS * 2) + "\n", encoding="utf-8")
    models = root / "models"
    assert main(["train", "--name", "de-news", "--corpus", "text", "--order", "3", "--language", "de",
                 "--holdout-every", "0", "--quiet", "--output-dir", str(models), str(corpus)]) == 0
    return str(models / "de-news")


def test_the_language_given_to_train_is_stored(german_model):
    assert resolve(german_model).language == "de"


def test_train_identifies_the_language_when_not_given(tmp_path, capsys):
    corpus = tmp_path / "de.txt"
    corpus.write_text("\n".join(GERMAN_CORPUS) + "\n", encoding="utf-8")
    assert main(["train", "--name", "de-guess", "--corpus", "text", "--order", "2", "--holdout-every", "0",
                 "--output-dir", str(tmp_path / "models"), str(corpus)]) == 0
    assert resolve(str(tmp_path / "models" / "de-guess")).language == "de"
    assert "language: de (identified" in capsys.readouterr().err


def test_train_warns_when_the_language_given_is_not_the_texts(tmp_path, capsys):
    corpus = tmp_path / "de.txt"
    corpus.write_text("\n".join(GERMAN_CORPUS) + "\n", encoding="utf-8")
    assert main(["train", "--name", "de-as-en", "--corpus", "text", "--order", "2", "--holdout-every", "0",
                 "--language", "en", "--output-dir", str(tmp_path / "models"), str(corpus)]) == 0
    assert resolve(str(tmp_path / "models" / "de-as-en")).language == "en"  # (as told)
    assert "warning: --language en, but the training text reads as de" in capsys.readouterr().err


def test_a_german_model_filters_german_boilerplate_and_passes_english_through(german_model):
    scorer = PerplexityScorer(german_model, threshold=100.0, method="sentences")
    result = scorer.clean(GERMAN_PAGE)
    assert result.passthrough is None  # German is this model's language: filtered
    assert GERMAN_ARTICLE in result.text
    for line in GERMAN_BOILERPLATE:
        assert line not in result.text
    english = scorer.clean(ENGLISH)
    assert english.passthrough == "language:en" and english.text == ENGLISH


def test_the_boilerplate_lies_far_above_the_german_sentences(german_model):
    scorer = PerplexityScorer(german_model, threshold=100.0)
    article = max(scorer.perplexity(s) for s in GERMAN_CORPUS[:4])
    boilerplate = min(scorer.perplexity(s) for s in GERMAN_BOILERPLATE)
    assert article < 10 and boilerplate > 300  # (measured: 1.8-1.9 and 344-453; the tests use 100)


def test_no_language_check_filters_everything_with_the_model(german_model, tmp_path, capsys):
    source = tmp_path / "in" / "english.txt"
    source.parent.mkdir()
    source.write_text(ENGLISH)
    out = tmp_path / "out"
    assert main(["clean", "--model", german_model, "--threshold", "100", "--method", "sentences", "-q",
                 "--no-language-check", str(source), "-o", str(out)]) == 0
    # every English sentence is junk to a German model (perplexities measured: 167-181, all <unk>)
    assert (out / "english.txt.txt").read_text().strip() == ""


# -- a language -> model map --------------------------------------------------------------

def test_model_arguments_make_a_map():
    assert parse_model_args(None) is None
    assert parse_model_args(["ccnet-en"]) == "ccnet-en"
    assert parse_model_args(["en=en-default", "de=ccnet-de"]) == {"en": "en-default", "de": "ccnet-de"}
    for bad in (["en=a", "ccnet-de"], ["en=a", "en=b"], ["=x", "de=y"]):
        with pytest.raises(ValueError):
            parse_model_args(bad)


def test_each_text_is_cleaned_with_its_languages_model(german_model, tiny_model):
    models = LanguageModels({"en": str(tiny_model), "de": german_model}, threshold=100.0, method="sentences")
    german = models.clean(GERMAN_PAGE)
    assert german.model == "de-news" and GERMAN_ARTICLE in german.text and german.sentences_dropped == 3
    english = models.clean(ENGLISH)
    assert english.model == "tiny" and english.passthrough is None
    french = models.clean(FRENCH)
    assert french.passthrough == "language:fr" and french.text == FRENCH  # no French model: untouched
    # a language declared upstream is used as is
    assert models.clean(GERMAN_PAGE, language="fr").passthrough == "language:fr"


def test_a_map_keyed_by_something_other_than_a_language_code_is_refused(tiny_model, tmp_path, capsys):
    # "english" is never the language a text is identified in: every text would pass through
    # unfiltered, so the map is refused when it is made, in every front end and for import.
    for key in ("english", "", "e1"):
        with pytest.raises(ValueError, match="is not a language code"):
            LanguageModels({key: str(tiny_model)})
    with pytest.raises(ValueError, match="names language 'de' twice"):
        LanguageModels({"de": str(tiny_model), "deu": str(tiny_model)})
    assert list(LanguageModels({"EN": str(tiny_model), "*": str(tiny_model)}).models) == ["en", "*"]
    (tmp_path / "t.txt").write_text(ENGLISH)
    assert main(["clean", str(tmp_path / "t.txt"), "-o", str(tmp_path / "out"), "--model", "english=en-default"]) == 2
    assert "'english' is not a language code" in capsys.readouterr().err
    assert main(["models", "import", "m", "--kenlm", str(tiny_model / "model.bin"), "--tokenizer", "plexity-tok-1",
                 "--language", "english", "--output-dir", str(tmp_path / "models")]) == 2
    assert "--language: 'english' is not a language code" in capsys.readouterr().err
    assert not (tmp_path / "models" / "m").exists()


def test_datatrove_step_with_a_map_counts_languages_without_a_model(german_model, tiny_model):
    step = PerplexitySentenceFilter(model={"en": str(tiny_model), "de": german_model}, threshold=100.0,
                                    method="sentences", min_chars=0)
    docs = {"de": Document(text=GERMAN_PAGE, id="de"), "en": Document(text=ENGLISH, id="en"),
            "fr": Document(text=FRENCH, id="fr"), "fr2": Document(text=FRENCH, id="fr2")}
    for doc in docs.values():
        assert step.filter(doc) is True
    assert docs["de"].metadata["plexity_model"] == "de-news" and "Impressum" not in docs["de"].text
    assert docs["de"].metadata["plexity_doc_perplexity"] > 0
    assert docs["en"].metadata["plexity_model"] == "tiny"
    assert docs["fr"].metadata["plexity_passthrough"] == "language:fr" and docs["fr"].text == FRENCH
    assert math.isnan(docs["fr"].metadata["plexity_doc_perplexity"])  # (NaN, not None: one type per field)
    assert step.stats["passthrough_language:fr"].total == 2


def test_datatrove_step_uses_the_language_an_upstream_step_set(german_model):
    step = PerplexitySentenceFilter(model=german_model, threshold=100.0, method="sentences", min_chars=0)
    labelled = Document(text=GERMAN_PAGE, id="x", metadata={"language": "en"})  # e.g. LanguageFilter's verdict
    step.filter(labelled)
    assert labelled.metadata["plexity_passthrough"] == "language:en"
    unlabelled = Document(text=GERMAN_PAGE, id="y")
    step.filter(unlabelled)
    assert unlabelled.metadata["plexity_passthrough"] == "" and "Impressum" not in unlabelled.text


def test_cli_clean_with_a_model_per_language(german_model, tiny_model, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "de.txt").write_text(GERMAN_PAGE)
    (inputs / "fr.txt").write_text(FRENCH)
    out = tmp_path / "out"
    assert main(["clean", "--model", f"en={tiny_model}", "--model", f"de={german_model}", "--threshold", "100",
                 "--method", "sentences", "-q", str(inputs), "-o", str(out)]) == 0
    cleaned = (out / "de.txt.txt").read_text()
    assert GERMAN_ARTICLE in cleaned and "Impressum" not in cleaned
    assert (out / "fr.txt.txt").read_text().strip() == FRENCH


def test_scrapy_model_map_setting(german_model, tiny_model):
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    crawler = get_crawler(settings_dict={
        "PLEXITY_MODEL": json.dumps({"en": str(tiny_model), "de": german_model}), "PLEXITY_THRESHOLD": 100.0,
        "PLEXITY_METHOD": "sentences", "PLEXITY_INPUT_FORMAT": "text", "PLEXITY_THREADS": 0, "PLEXITY_MIN_CHARS": 0})
    pipeline = PerplexityFilterPipeline.from_crawler(crawler)
    pipeline.open_spider()
    german = asyncio.run(pipeline.process_item({"html": GERMAN_PAGE}))
    assert german["plexity"]["plexity_model"] == "de-news" and "Impressum" not in german["text"]
    french = asyncio.run(pipeline.process_item({"html": FRENCH}))
    assert french["text"] == FRENCH
    assert pipeline.stats.get_value("plexity/items_passthrough/language:fr") == 1
    assert pipeline.stats.get_value("plexity/threshold") == 100.0
    # without a common threshold each model's own is a stat (not NaN, which a JSON stats dump cannot write)
    crawler = get_crawler(settings_dict={"PLEXITY_MODEL": {"en": "en-default", "fr": str(tiny_model)}})
    PerplexityFilterPipeline.from_crawler(crawler).open_spider()
    assert crawler.stats.get_value("plexity/threshold") is None
    assert crawler.stats.get_value("plexity/thresholds") == {
        "en": 5269.3, "fr": PerplexityScorer(str(tiny_model), method="trim").threshold}


def test_a_map_without_a_common_threshold_reports_it_per_model(tiny_model, tmp_path, capsys):
    source = tmp_path / "in" / "en.txt"
    source.parent.mkdir()
    source.write_text(ENGLISH)
    out = tmp_path / "out"
    assert main(["clean", "--model", f"en={tiny_model}", "--model", f"fr={tiny_model}", "-q", str(source),
                 "-o", str(out)]) == 0
    assert "threshold per model" in capsys.readouterr().out
    stats = json.loads((out / "plexity-stats.json").read_text())  # strict JSON: no NaN
    assert stats["threshold"] is None and stats["model"] == f"en=tiny,fr=tiny"


def test_document_filter_with_a_map_labels_each_language(german_model, tiny_model):
    from plexity_plugins.datatrove import PerplexityDocumentFilter

    step = PerplexityDocumentFilter({"en": str(tiny_model), "de": german_model}, label_only=True)
    docs = [Document(text=GERMAN_PAGE, id="de"), Document(text=ENGLISH, id="en"), Document(text=FRENCH, id="fr")]
    assert all(step.filter(doc) is True for doc in docs)
    assert [d.metadata["plexity_doc_model"] for d in docs] == ["de-news", "tiny", ""]  # ("", never None)
    assert docs[0].metadata["plexity_doc_perplexity"] == PerplexityScorer(german_model).document_perplexity(GERMAN_PAGE)
    assert docs[2].metadata["plexity_passthrough"] == "language:fr"
    assert step.stats["passthrough_language:fr"].total == 1 and step.stats["scored"].total == 2


def test_steps_with_a_map_survive_the_executors_serialisation(german_model, tiny_model):
    import dill

    step = PerplexitySentenceFilter(model={"en": str(tiny_model), "de": german_model}, threshold=100.0,
                                    method="sentences", min_chars=0)
    copy = dill.loads(dill.dumps(step))
    doc = Document(text=GERMAN_PAGE, id="de")
    assert copy.filter(doc) is True and "Impressum" not in doc.text


def test_glotlid_and_iso_639_3_labels_match_the_models_language(german_model, tiny_model):
    from plexity_plugins.text.language import language_code

    assert [language_code(x) for x in ("deu_Latn", "de", "DE", "eng", "xyz_Latn", None)] == \
        ["de", "de", "de", "en", "xyz", None]
    scorer = PerplexityScorer(german_model, threshold=100.0, method="sentences")
    assert scorer.clean(GERMAN_PAGE, language="deu_Latn").passthrough is None  # GlotLID's label for German
    assert scorer.clean(GERMAN_PAGE, language="eng_Latn").passthrough == "language:en"
    models = LanguageModels({"eng": str(tiny_model), "de": german_model}, threshold=100.0)
    assert models.clean(ENGLISH, language="eng_Latn").model == "tiny"


SERBIAN_CORPUS = [
    "Градско веће је у уторак после дуге расправе усвојило буџет за нову библиотеку.",
    "Библиотека ће бити отворена на пролеће и радиће до касно радним данима.",
    "Становници су питали веће за пут до реке и за стари мост.",
    "Градоначелник је рекао да ће пут бити завршен пре краја године.",
    "Деца су се играла у парку поред реке док су родитељи разговарали.",
    "Истраживачи су свако јутро мерили температуру воде у реци.",
    "Резултати студије објављени су у извештају универзитета.",
    "Извештај каже да је река чистија него претходних година.",
    "Сељаци у долини гаје јабуке, крушке и трешње на малим имањима.",
    "Воз за град полази са станице сваког сата током дана.",
]
_LATIN = dict(zip("абвгдђежзијклљмнњопрстћуфхцчџш", "a b v g d đ e ž z i j k l lj m n nj o p r s t ć u f h c č dž š"
                                                     .split()))


def latin(text: str) -> str:
    """Serbian Cyrillic written in Serbian's Latin alphabet (one letter for one, as Serbian does)."""
    return "".join(_LATIN.get(c.lower(), c).capitalize() if c.isupper() else _LATIN.get(c, c) for c in text)


def serbian_model(root, language: str) -> str:
    """`plexity train --language LANGUAGE` on the Cyrillic corpus ("sr") or its Latin transliteration ("sr-Latn")."""
    root.mkdir(parents=True, exist_ok=True)
    corpus = root / "sr.txt"
    lines = SERBIAN_CORPUS if language == "sr" else [latin(line) for line in SERBIAN_CORPUS]
    corpus.write_text("\n".join(lines * 2) + "\n", encoding="utf-8")
    assert main(["train", "--name", "sr-news", "--corpus", "text", "--order", "3", "--language", language,
                 "--holdout-every", "0", "--quiet", "--output-dir", str(root / "models"), str(corpus)]) == 0
    return str(root / "models" / "sr-news")


def test_a_label_naming_another_script_than_the_model_s_passes_the_document_through_as_another_language(tmp_path):
    # FineWeb-2's `language` + `language_script` columns, or GlotLID's one label: Serbian in Latin letters
    # ("srp_Latn") under a model of Cyrillic Serbian was scored by it as Serbian ("sr"), and nearly all of it
    # dropped; now it is passed through as "sr-Latn", counted.  A model whose card says "sr-Latn" (plexity train
    # --language sr-Latn) cleans it, and passes the Cyrillic through.  Chinese simplified or traditional is the same
    # writing for a model of Chinese.
    from plexity_plugins.text.language import language_code

    article = " ".join(SERBIAN_CORPUS[:4])
    labels = {"glotlid-cyrl": {"language": "srp_Cyrl"}, "fineweb-cyrl": {"language": "srp", "language_script": "Cyrl"},
              "glotlid-latn": {"language": "srp_Latn"}, "fineweb-latn": {"language": "srp", "language_script": "Latn"}}
    for card, cleaned in (("sr", "cyrl"), ("sr-Latn", "latn")):
        model = serbian_model(tmp_path / card, card)
        assert json.loads((tmp_path / card / "models" / "sr-news" / "model.json").read_text())["language"] == card
        step = PerplexitySentenceFilter(model=model, threshold=100.0, method="sentences", min_chars=0)
        for name, metadata in labels.items():
            text = article if name.endswith("cyrl") else latin(article)
            doc = Document(text=f"Почетна | Вести | Контакт\n{text}", id=name, metadata=dict(metadata))
            assert step.filter(doc) is True
            if name.endswith(cleaned):
                assert doc.metadata["plexity_passthrough"] == "" and doc.text == text, (card, name, doc.text)
            else:
                other = "sr" if cleaned == "latn" else "sr-Latn"
                assert doc.metadata["plexity_passthrough"] == f"language:{other}", (card, name)
                assert doc.text.endswith(text)  # (unchanged)
        assert step.stats[f"passthrough_language:{'sr-Latn' if cleaned == 'cyrl' else 'sr'}"].total == 2
    assert [language_code(label) for label in ("hin_Latn", "hin_Deva", "zho_Hant", "zh-Hant-TW", "cmn_Hani",
                                               "kor_Hang", "jpn_Jpan", "sr-Latn-RS", "eng_Zyyy", "xyz_Cyrl")] == \
        ["hi-Latn", "hi", "zh", "zh", "zh", "ko", "ja", "sr-Latn", "en", "xyz"]


def test_the_table_of_each_language_s_usual_script_is_cldr_s():
    """(Babel comes with trafilatura's courlan in every install: imported outright, never a skip that hides a
    stale table.)"""
    import babel.core as babel

    from plexity_plugins.text.language import _USUAL_SCRIPT

    likely = babel.get_global("likely_subtags")
    assert {code: likely[code].split("_")[1] for code in _USUAL_SCRIPT} == _USUAL_SCRIPT


# -- the language identifier's tables, decompressed once -------------------------------------

SAMPLES = ["The council approved the budget for the new library on Tuesday evening.",
           "Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen.",
           "Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque."]


@pytest.fixture
def fresh_identifier(tmp_path, monkeypatch):
    """An empty cache directory, and the identifier loaded anew (and again after the test)."""
    from plexity_plugins.text import language

    monkeypatch.setenv("PLEXITY_CACHE_DIR", str(tmp_path / "cache"))
    language.identifier.cache_clear()
    yield language
    language.identifier.cache_clear()


def _stock_answers():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    stock = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return [stock.classify(text) for text in SAMPLES]


def test_the_first_load_caches_the_tables_and_the_next_one_reads_them_alone(fresh_identifier, monkeypatch):
    language = fresh_identifier
    expected = _stock_answers()
    assert [language.identifier().classify(t) for t in SAMPLES] == expected
    [cached] = (language.cache_dir() / "langid").iterdir()
    assert (cached / "manifest.json").is_file() and (cached / "ptc.npy").is_file()

    from py3langid.langid import LanguageIdentifier

    def no_lzma(*args, **kwargs):
        raise AssertionError("py3langid's compressed model was loaded again")

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", classmethod(no_lzma))
    language.identifier.cache_clear()
    assert [language.identifier().classify(t) for t in SAMPLES] == expected


def test_a_damaged_copy_is_not_used(fresh_identifier, caplog):
    language = fresh_identifier
    expected = _stock_answers()
    language.identifier()
    [cached] = (language.cache_dir() / "langid").iterdir()
    ptc = cached / "ptc.npy"
    data = bytearray(ptc.read_bytes())
    data[-200_000:] = bytes(200_000)  # zeroed weights: a copy that loads but answers wrongly
    ptc.write_bytes(bytes(data))
    language.identifier.cache_clear()
    assert [language.identifier().classify(t) for t in SAMPLES] == expected
    assert "not used" in caplog.text

    (cached / "nextmove.npy").write_bytes(b"truncated")
    language.identifier.cache_clear()
    assert [language.identifier().classify(t) for t in SAMPLES] == expected

    caplog.clear()  # each time a sound copy was written in its place
    language.identifier.cache_clear()
    assert [language.identifier().classify(t) for t in SAMPLES] == expected
    assert "not used" not in caplog.text


def test_an_unwritable_cache_directory_only_costs_time(fresh_identifier, tmp_path, monkeypatch):
    language = fresh_identifier
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PLEXITY_CACHE_DIR", str(blocker))
    assert [language.identifier().classify(t) for t in SAMPLES] == _stock_answers()
