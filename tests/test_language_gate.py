"""The language gate: which pages the English model scores, and which it leaves alone.

A page confidently in another language is passed through (an English model would take every
one of its sentences for boilerplate); English pages, and short or mixed ones, are scored.
Two mistakes this guards against: German prose that happens to say "in", "an", "was", "will"
and "also" a lot has 12-20 % English function words and used to be taken for English on that
alone; and Croatian, which the identifier splits between Croatian, Bosnian and Serbian (each
under `MIN_PROBABILITY`), used to count as "not sure", hence English.
"""

import pytest

from plexity_plugins import PerplexityScorer
from plexity_plugins.cleaning import policy
from plexity_plugins.text import language
from plexity_plugins.text.language import (ENGLISH_PROSE_SHARE, MIN_PROBABILITY, english_function_word_share,
                                           identify, other_language)

# Ordinary German prose: "in", "an", "was", "will", "also" are English function words too.
GERMAN = (
    "Am Montag wurde in der Stadthalle die neue Ausstellung über die Geschichte des Hafens eröffnet. "
    "Was viele Besucher überrascht hat, war die Fülle an alten Fotografien, die in privaten Kellern "
    "gefunden wurden. Die Kuratorin will die Sammlung im nächsten Jahr auch in anderen Städten zeigen. "
    "Also lohnt es sich, an einem ruhigen Nachmittag vorbeizukommen, denn am Wochenende ist es in den "
    "Sälen oft sehr voll, und an der Kasse bilden sich lange Schlangen.")

# Ordinary Croatian prose: the identifier hesitates between Croatian and Bosnian.
CROATIAN = (
    "Gradsko vijeće je u ponedjeljak nakon duge rasprave usvojilo proračun za iduću godinu. "
    "Novi plan povećava izdatke za škole i javni prijevoz, a gradonačelnica je rekla da će građani "
    "do kraja mjeseca moći komentirati prijedloge. To je prvi put da se o proračunu raspravlja javno "
    "i mnogi su stanovnici došli na sjednicu. Jedan od njih rekao je da je to dobar korak, a on se nada "
    "da će i drugi gradovi učiniti isto.")

ENGLISH = (
    "The city council approved the budget on Tuesday after a long debate. The new plan increases "
    "spending on schools and public transport, and the mayor said that residents will be able to "
    "comment on the proposals until the end of the month. It is the first time that the budget has "
    "been discussed in public, and many of the residents came to the meeting.")

# A German site's navigation around one English sentence: the identifier is unsure whether it
# is English at all.
MIXED = ("Aktuelles | Über uns | Kontakt\n"
         "Our team builds software for small businesses in Hamburg and Berlin.\n"
         "Datenschutz | Impressum")
SHORT = "Impressum | Kontakt | Datenschutz"  # too short to identify

SOUTH_SLAVIC = {"hr", "bs", "sr"}


# -- what the texts are like -------------------------------------------------------------------

def test_the_german_prose_has_as_many_english_function_words_as_some_english_text():
    share = english_function_word_share(GERMAN)
    assert 0.12 <= share < ENGLISH_PROSE_SHARE  # over the old cut-off (0.12), under English prose's
    assert english_function_word_share(ENGLISH) >= ENGLISH_PROSE_SHARE
    assert identify(GERMAN)[0] == "de" and identify(GERMAN)[1] >= 0.99


def test_the_identifier_is_unsure_which_south_slavic_language_croatian_is():
    lang, probability = identify(CROATIAN)
    assert lang in SOUTH_SLAVIC and probability < MIN_PROBABILITY
    ranking = dict(language.identifier().rank(language.sample_for_identification(CROATIAN)))
    assert sum(ranking[code] for code in SOUTH_SLAVIC) > 0.99 and ranking["en"] < 0.01  # but sure it is not English


# -- other_language: the gate -----------------------------------------------------------------

def test_german_prose_is_german_whatever_its_english_function_words():
    assert other_language(GERMAN, "en") == "de"


def test_croatian_is_another_language_though_the_identifier_hesitates_between_neighbours():
    assert other_language(CROATIAN, "en") in SOUTH_SLAVIC


def test_english_mixed_and_short_texts_are_the_english_models():
    assert other_language(ENGLISH, "en") is None
    assert other_language(MIXED, "en") is None
    assert other_language(SHORT, "en") is None


def test_english_prose_is_recognised_without_the_identifier(monkeypatch):
    """The cheap path: at `ENGLISH_PROSE_SHARE` function words, the identifier is not asked."""
    def no_identifier():
        raise AssertionError("the identifier was asked")

    monkeypatch.setattr(language, "identifier", no_identifier)
    assert other_language(ENGLISH, "en") is None
    with pytest.raises(AssertionError, match="was asked"):
        other_language(GERMAN, "en")


class _Ranking:
    """An identifier that answers with a fixed ranking: the rule itself, without py3langid."""

    def __init__(self, *ranking):
        self.ranking = list(ranking)

    def rank(self, _text):
        return self.ranking


@pytest.mark.parametrize("ranking, expected", [
    ([("de", 0.95), ("en", 0.05)], "de"),  # named with MIN_PROBABILITY
    ([("hr", 0.6), ("bs", 0.4), ("en", 0.0)], "hr"),  # unsure which language, sure it is not English
    ([("pcm", 0.54), ("en", 0.35), ("lb", 0.05)], None),  # unsure whether it is English: English
    ([("de", 0.45), ("lb", 0.3), ("en", 0.05)], None),  # no answer has a majority: English
    ([("zxx", 1.0), ("en", 0.0)], None),  # no language (digits, codes): English
    ([("en", 0.6), ("de", 0.4)], None),
])
def test_the_rule_on_the_identifiers_answers(monkeypatch, ranking, expected):
    monkeypatch.setattr(language, "identifier", lambda: _Ranking(*ranking))
    text = "Zahlen und Namen, 42 17 99 - Listen ohne Sätze, nur Einträge und Nummern."  # under the prose share
    assert english_function_word_share(text) < ENGLISH_PROSE_SHARE
    assert other_language(text, "en") == expected


# -- through the cleaning policy, as every front end judges a page ----------------------------

@pytest.fixture(scope="module")
def english_model():
    return PerplexityScorer()  # the embedded English model, language check on


@pytest.mark.parametrize("text, languages", [
    (GERMAN, {"de"}),  # passed through as one of these
    (CROATIAN, SOUTH_SLAVIC),
    (ENGLISH, None),  # scored with the English model
    (MIXED, None),
    (SHORT, None),
])
def test_the_policy_passes_other_languages_through_and_scores_the_rest(english_model, text, languages):
    judged = policy.DocumentPolicy(english_model).judge(text)
    if languages is None:
        assert judged.status != policy.PASSED_THROUGH and judged.result.passthrough is None
    else:
        assert judged.status == policy.PASSED_THROUGH and judged.text == text
        assert judged.result.passthrough.removeprefix("language:") in languages


def test_the_policy_drops_german_and_croatian_when_told_to_drop_other_languages(english_model):
    drop = policy.DocumentPolicy(english_model, other_languages="drop")
    for text in (GERMAN, CROATIAN):
        judged = drop.judge(text)
        assert judged.status == policy.DROPPED and judged.reason == policy.OTHER_LANGUAGE
    assert drop.judge(ENGLISH).reason != policy.OTHER_LANGUAGE
