"""A first day with plexity_plugins as a library: a datatrove pipeline and a Scrapy project written from the docs,
with a stranger's mistakes.

A Scrapy setting of ours under a misspelt prefix (``PLEXTIY_MIN_CHARS``, ``PLEXITY-EXTRACTOR``) was
ignored by Scrapy and by the pipeline, the crawl run with the default; a document labelled by fastText itself
(``metadata["language"] = "__label__en"``) was passed through unfiltered as language "".
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES
from helpers import REPO, labelled_documents_run


# -- Scrapy: a setting of ours under a misspelt prefix ------------------------------------------------------------

def test_a_crawl_given_a_plexity_setting_under_a_misspelt_prefix_does_not_start_and_names_the_one_meant():
    """`-s PLEXTIY_MIN_CHARS=5000`: Scrapy keeps a setting nothing reads, and the pipeline checked only names that
    begin PLEXITY_, so the crawl ran with 50, every item kept that 5000 would have dropped, nothing said."""
    result = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "site", "-a", "start_url=http://127.0.0.1:9/",
                             "-s", "PLEXTIY_MIN_CHARS=5000"], cwd=EXAMPLES / "scrapy_project", capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})  # (this checkout's)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " CRITICAL: " in line or " ERROR: " in line]
    assert errors[0].endswith("[plexity_plugins.scrapy] CRITICAL: plexity: the crawl cannot start: 'PLEXTIY_MIN_CHARS' "
                              "is no setting of plexity's: did you mean PLEXITY_MIN_CHARS? (the settings: "
                              "docs/scrapy.md)")


@pytest.mark.parametrize("name, meant", [
    ("PLEXITTY_THRESHOLD", "PLEXITY_THRESHOLD"),
    ("PLEXITY-EXTRACTOR", "PLEXITY_EXTRACTOR"),
    ("plexty_method", "PLEXITY_METHOD"),
])
def test_a_settings_py_name_with_a_misspelt_prefix_is_named_with_the_setting_meant(name, meant, caplog):
    from scrapy.utils.test import get_crawler

    from plexity_plugins.errors import PlexitySettingError
    from plexity_plugins.scrapy import PerplexityFilterPipeline

    with pytest.raises(PlexitySettingError):
        PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={name: "x"}))
    assert f"{name!r} is no setting of plexity's: did you mean {meant}?" in caplog.text


def test_another_add_ons_settings_that_only_look_like_ours_are_left_alone():
    """Only a prefix close to PLEXITY before one of our settings' own names is taken for a typo."""
    from scrapy.utils.test import get_crawler

    from plexity_plugins.scrapy import PerplexityFilterPipeline

    pipeline = PerplexityFilterPipeline.from_crawler(get_crawler(settings_dict={
        "PLEX_ENABLED": False, "PLAYWRIGHT_THRESHOLD": 3, "COMPLEXITY_MODEL": "x", "PERPLEXITY_METHOD": "x",
        "PLEXITY_MIN_CHARS": 7}))
    assert pipeline.min_chars == 7


# -- datatrove: a language label as fastText gives it -------------------------------------------------------------



def test_a_document_labelled_by_fasttext_itself_is_cleaned_as_the_models_language(tmp_path):
    """fastText's predict() gives "__label__en" (GlotLID's model "__label__eng_Latn"): a dataset labelled with it
    was passed through unfiltered, every document, counted as `passthrough_language:` (a language of no name)."""
    seen = labelled_documents_run(tmp_path, ["__label__en", "__label__eng_Latn", "en", "__label__de"])
    assert seen["verdicts"] == {"__label__en": ["kept", ""], "__label__eng_Latn": ["kept", ""], "en": ["kept", ""],
                                "__label__de": ["passed_through", "language:de"]}
    assert seen["stats"] == {"passthrough": 1, "passthrough_language:de": 1}
