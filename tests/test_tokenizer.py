from plexity_plugins.text.plexity_tokenizer import TOKENIZER_VERSION, normalize, to_lm_line, to_lm_lines, tokenize


def test_words_and_punctuation_are_separate_tokens():
    assert tokenize("Don't stop!") == ["don", "'", "t", "stop", "!"]


def test_title_case_first_word_is_lowered_other_case_kept():
    assert to_lm_line("The BBC reported on Paris.") == "the BBC reported on Paris ."
    assert to_lm_line("NASA launched it") == "NASA launched it"
    assert to_lm_line("iPhone sales") == "iPhone sales"


def test_digits_keep_their_shape_as_zeros():
    assert to_lm_line("in 1984 it cost $3.50") == "in 0000 it cost $ 0 . 00"


def test_nfkc_folds_compatibility_characters():
    assert normalize("ﬁne ＡＢＣ１２") == "fine ABC00"


def test_batch_equals_one_by_one():
    sentences = ["The cat sat.", "Ünïcode wörks — 42 times!", "x", "“Quoted” text"]
    assert to_lm_lines(sentences) == [to_lm_line(s) for s in sentences]


def test_version_is_a_stable_string():
    assert TOKENIZER_VERSION == "plexity-tok-1"
