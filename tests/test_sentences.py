import time

from plexity_plugins.sentences import split_sentences


def texts(text):
    return [text[a:b] for a, b in split_sentences(text)]


def test_spans_are_verbatim_sentences():
    text = "Mr. Smith paid $3.50 today!  Then he left. Héllo wörld. 日本語の文。テスト。"
    assert texts(text) == ["Mr. Smith paid $3.50 today!", "Then he left.", "Héllo wörld.", "日本語の文。", "テスト。"]


def test_a_newline_is_a_block_boundary():
    assert texts("Menu\nHome | About\n\nThe article starts here. It goes on.") == [
        "Menu", "Home | About", "The article starts here.", "It goes on."]


def test_empty_and_whitespace_give_nothing():
    assert split_sentences("") == []
    assert split_sentences(" \n\t \n") == []


def test_text_without_punctuation_is_one_sentence():
    assert texts("just some words without any end") == ["just some words without any end"]


def test_overlong_sentence_is_cut_at_whitespace():
    text = "word " * 1000
    spans = split_sentences(text, max_chars=100)
    assert all(b - a <= 100 for a, b in spans)
    assert " ".join(text[a:b] for a, b in spans) == text.strip()


def test_overlong_word_is_cut_hard():
    spans = split_sentences("x" * 2500, max_chars=1000)
    assert spans == [(0, 1000), (1000, 2000), (2000, 2500)]


def test_ten_megabytes_in_linear_time():
    one = "This is a sentence. " * 50_000  # 1 MB
    started = time.perf_counter()
    n_one = len(split_sentences(one))
    t_one = time.perf_counter() - started
    ten = one * 10
    started = time.perf_counter()
    n_ten = len(split_sentences(ten))
    t_ten = time.perf_counter() - started
    assert n_ten == 10 * n_one
    assert t_ten < 25 * t_one + 1.0  # linear, with slack for a loaded machine
