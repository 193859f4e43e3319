"""Pages and text in languages other than English and German, through the extractors, the sentence splitter,
the writers and the front ends: what a corpus builder running a multilingual crawl meets.  Each page here has the
shape of the English one beside it (a menu, a headline, three paragraphs, a footer), so that what is read of it
can be compared with what is read of the English page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest

from plexity_plugins.extractors import html_to_text_dense, html_to_text_learned
from plexity_plugins.scoring.scorer import PerplexityScorer
from plexity_plugins.text.language import other_language
from plexity_plugins.text.sentences import split_sentences, split_with_blocks

NEWS = {
    "en": dict(nav=["Home", "News", "Sport", "Business", "Contact"], title="Council approves the new library budget",
               paras=["The city council approved the budget for the new library on Tuesday after a long debate "
                      "that lasted most of the afternoon. Several members spoke",
                      "The library will open next spring and stay open late on weekdays, the mayor said. "
                      "Residents welcomed the plan",
                      "Residents asked about the road to the river, and the council promised to finish it this "
                      "year. Work begins in March"],
               foot="© 2024 Example News", privacy="Privacy policy"),
    # Thai ends a sentence with a space, not a mark: a paragraph of three sentences has two spaces
    "th": dict(nav=["หน้าแรก", "ข่าว", "กีฬา", "ธุรกิจ", "ติดต่อเรา"], title="สภาเมืองอนุมัติงบประมาณห้องสมุดใหม่",
               paras=["สภาเมืองได้อนุมัติงบประมาณสำหรับห้องสมุดแห่งใหม่เมื่อวันอังคารหลังจากการอภิปรายที่ยาวนานตลอด"
                      "ช่วงบ่าย สมาชิกสภาหลายคนได้แสดงความคิดเห็น",
                      "นายกเทศมนตรีกล่าวว่าห้องสมุดจะเปิดให้บริการในฤดูใบไม้ผลิปีหน้า และจะเปิดจนถึงค่ำในวันธรรมดา "
                      "ชาวบ้านต่างยินดีกับแผนนี้",
                      "ชาวบ้านได้สอบถามเกี่ยวกับถนนที่ไปยังแม่น้ำ และสภาได้สัญญาว่าจะสร้างให้เสร็จภายในปีนี้ "
                      "งานจะเริ่มในเดือนมีนาคม"],
               foot="© 2024 ข่าวตัวอย่าง", privacy="นโยบายความเป็นส่วนตัว"),
    "zh": dict(nav=["首页", "新闻", "体育", "财经", "联系我们"], title="市议会批准新图书馆建设预算",
               paras=["市议会星期二经过长时间的辩论，最终批准了新图书馆的建设预算。辩论持续了整个下午，多位议员发表了意见。",
                      "市长表示，图书馆将于明年春天开放，工作日晚上也会延长开放时间。居民们普遍欢迎这一计划。",
                      "有居民询问通往河边的道路何时完工，议会承诺今年内完成。工程将于三月份开始。"],
               foot="© 2024 示例新闻网", privacy="隐私政策"),
    "ja": dict(nav=["ホーム", "ニュース", "スポーツ", "経済", "お問い合わせ"], title="市議会、新しい図書館の建設予算を承認",
               paras=["市議会は火曜日、長時間の議論の末、新しい図書館の建設予算を承認した。議論は午後いっぱい続いた。",
                      "市長によると、図書館は来年の春に開館し、平日は夜遅くまで開館する予定だという。",
                      "川へ続く道路の完成時期について住民から質問があり、議会は今年中に完成させると約束した。"],
               foot="© 2024 サンプルニュース", privacy="プライバシーポリシー"),
    "ko": dict(nav=["홈", "뉴스", "스포츠", "경제", "문의하기"], title="시의회, 새 도서관 건립 예산 승인",
               paras=["시의회는 화요일 오후 내내 이어진 긴 토론 끝에 새 도서관 건립 예산을 승인했다. 여러 의원이 의견을 밝혔다.",
                      "시장은 도서관이 내년 봄에 문을 열고 평일에는 늦게까지 운영될 것이라고 말했다. 주민들은 계획을 반겼다.",
                      "주민들은 강으로 가는 도로에 대해 물었고 의회는 올해 안에 완공하겠다고 약속했다. 공사는 3월에 시작된다."],
               foot="© 2024 예시 뉴스", privacy="개인정보처리방침"),
}


def news_page(lang: str, header_tags: bool = True) -> str:
    """A news page of `lang` in `NEWS`: a menu, the headline, three paragraphs, a footer (in `<nav>`, `<header>`
    and `<footer>` or, with `header_tags=False`, in plain `<div>`s as many sites write them)."""
    return news_page_of(NEWS[lang], lang, header_tags)


def news_page_of(page: dict, lang: str, header_tags: bool = True) -> str:
    """`news_page` of `page` (a dict as `NEWS`' values)."""
    links = "".join(f"<li><a href='/{i}'>{name}</a></li>" for i, name in enumerate(page["nav"]))
    nav, close = (("<header><nav><ul>", "</ul></nav></header>") if header_tags
                  else ("<div class=menu><ul>", "</ul></div>"))
    foot, end = ("<footer>", "</footer>") if header_tags else ("<div class=bottom>", "</div>")
    return (f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>{page['title']}</title></head>"
            f"<body>{nav}{links}{close}<main><article><h1>{page['title']}</h1>"
            + "".join(f"<p>{para}</p>" for para in page["paras"])
            + f"</article></main>{foot}<p>{page['foot']}</p><a href='/privacy'>{page['privacy']}</a>{end}"
            "</body></html>")


# -- dense: words of scripts written without spaces ------------------------------------------------------------

@pytest.mark.parametrize("header_tags", [True, False])
@pytest.mark.parametrize("lang", ["en", "th", "zh", "ja"])
def test_dense_reads_a_thai_chinese_or_japanese_page_as_it_reads_the_same_english_page(lang, header_tags):
    """`--extractor dense` counted words at spaces only: a Thai paragraph (a space only between its sentences)
    was two or three "words", under the three of a fragment, and the whole Thai page came out empty (counted
    `no_text_extracted`); a Chinese or Japanese headline was one "word" and went as a fragment where the
    English one stayed.  Now a run of Han or kana counts a word per two characters, of Thai per five: the
    headline and the paragraphs are read, and the menu and footer still go, as on the English page."""
    page = NEWS[lang]
    text = html_to_text_dense(news_page(lang, header_tags)).splitlines()
    assert text == [page["title"], *page["paras"]]


def test_dense_still_drops_a_chinese_menu_of_short_labels_outside_any_nav_tag():
    """The word count of Han text does not make labels sentences: a line of two to four characters (首页,
    联系我们) is one or two words and goes as a fragment, as "Home" and "Contact us" do."""
    labels = "".join(f"<div><span>{name}</span></div>" for name in NEWS["zh"]["nav"])
    body = "".join(f"<p>{para}</p>" for para in NEWS["zh"]["paras"])
    text = html_to_text_dense(f"<html><body><div>{labels}</div><div>{body}</div></body></html>").splitlines()
    assert text == NEWS["zh"]["paras"]


@pytest.mark.parametrize("header_tags", [True, False])
@pytest.mark.parametrize("lang", ["en", "th", "zh", "ja", "ko"])
def test_the_learned_reader_keeps_a_chinese_or_japanese_headline_as_it_keeps_the_english_one(lang, header_tags):
    """The default reader (`learned`) counted a word per ``\\w+`` run: a Chinese or Japanese headline of twelve
    characters was one "word", as short as "Home", and the page came out without its `<h1>` (4 of 4 Chinese and
    Japanese pages).  A run of Han or kana now counts a word a two characters, as `dense` counts it, in the
    block features and in the reader's word bounds: the headline and paragraphs are read, menu and footer go."""
    page = NEWS[lang]
    assert html_to_text_learned(news_page(lang, header_tags)).splitlines() == [page["title"], *page["paras"]]


def test_the_learned_reader_counts_words_of_han_and_kana_a_two_characters():
    """The word count behind the learned reader's features (both paths; tests/test_learned_native.py holds them
    equal): ``\\w+`` runs, a run of Han or kana a word per two characters, rounded up."""
    from plexity_plugins.extractors.learned.segment import count_words

    assert count_words("Council approves the budget") == 4
    assert count_words("市议会批准新图书馆建设预算") == 7      # 13 characters
    assert count_words("首页") == count_words("Home") == 1
    assert count_words("市议会、新しい図書館の建設予算を承認") == 9  # 3 and 15 characters
    assert count_words("iPhone手机 abc") == 2                # a run of two inside a Latin word: one word with it


# -- sentence ends other than . ! ? and the CJK full stops -----------------------------------------------------

SENTENCES = {
    "hi": ["दिल्ली भारत की राजधानी है।", "यहाँ बहुत से ऐतिहासिक स्थान हैं।", "क्या आप कभी दिल्ली गए हैं?",
           "यह शहर बहुत बड़ा है॥"],
    "bn": ["ঢাকা বাংলাদেশের রাজধানী।", "এটি একটি বড় শহর।", "আপনি কি কখনো ঢাকা গিয়েছেন?"],
    "ur": ["لاہور پاکستان کا ایک بڑا شہر ہے۔", "کیا آپ لاہور گئے ہیں؟", "یہ شہر بہت خوبصورت ہے۔"],
    "el": ["Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "Έχετε πάει ποτέ στην Αθήνα;", "Είναι μια πολύ όμορφη πόλη."],
    "hy": ["Երևանը Հայաստանի մայրաքաղաքն է։", "Դուք եղե՞լ եք Երևանում։", "Այն շատ գեղեցիկ քաղաք է։"],
    "am": ["አዲስ አበባ የኢትዮጵያ ዋና ከተማ ናት።", "ከተማዋ በጣም ትልቅ ናት።", "ሄደሃል?"],
    "my": ["ရန်ကုန်မြို့သည် မြန်မာနိုင်ငံ၏ အကြီးဆုံးမြို့ဖြစ်သည်။", "ထိုမြို့တွင် ဘုရားများစွာရှိသည်။"],
    "th": ["กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "มีประชากรประมาณสิบล้านคน", "เมืองนี้มีวัดสวยงามมากมาย"],
    # what BlingFire already split stays as it was
    "zh": ["北京是中国的首都，也是政治和文化中心。", "这座城市有三千多年的历史！", "你去过故宫吗？"],
    "ar": ["القاهرة هي عاصمة مصر.", "هل زرت الأهرامات؟", "إنها رائعة جدا، ويزورها الملايين كل عام."],
    "ru": ["Москва — столица России.", "Вы были в Москве?", "Это очень большой город."],
    "en": ["Prices rose; wages did not.", "The report was clear।not a danda sentence", "x ; y"],
}


@pytest.mark.parametrize("lang", sorted(set(SENTENCES) - {"en"}))
def test_each_sentence_of_a_line_is_a_sentence_whatever_mark_its_language_ends_it_with(lang):
    """BlingFire knows . ! ? and the CJK and Arabic marks, not the danda (Hindi, Bengali: a paragraph of Bengali
    was one "sentence", one perplexity), Urdu's ۔, Armenian's ։, Ethiopic's ።, Myanmar's ။, Greek's ; nor Thai's
    space between sentences.  Now a line is cut at each, the mark staying with its sentence."""
    line = " ".join(SENTENCES[lang])
    spans = split_sentences(line)
    assert [line[a:b] for a, b in spans] == SENTENCES[lang]


def test_a_semicolon_between_latin_words_and_a_mark_without_a_space_after_it_cut_nothing():
    """Only Greek's question mark is a `;` that ends a sentence, and a mark ends one only before a space."""
    line = " ".join(SENTENCES["en"])
    assert [line[a:b] for a, b in split_sentences(line)] == [
        "Prices rose; wages did not.", "The report was clear।not a danda sentence x ; y"]


def test_the_new_cuts_keep_each_sentence_in_its_block():
    """A block (a line) is still the unit a sentence belongs to: the pieces of a Hindi line share its block."""
    text = " ".join(SENTENCES["hi"]) + "\n" + " ".join(SENTENCES["th"])
    spans, blocks = split_with_blocks(text)
    assert blocks == [0] * 4 + [1] * 3
    assert [text[a:b] for a, b in spans] == SENTENCES["hi"] + SENTENCES["th"]


def test_the_python_api_scores_each_hindi_sentence_on_its_own(tiny_model):
    """`PerplexityScorer.score` (and so every front end's filter) gave a Hindi paragraph one perplexity;
    now each of its sentences has its own."""
    scorer = PerplexityScorer(tiny_model, language_check=False)
    scores = scorer.score(" ".join(SENTENCES["hi"]))
    assert [s.text for s in scores] == SENTENCES["hi"]


# -- the language gate: short texts in other scripts -----------------------------------------------------------

SHORT = {"zh": "北京今天天气晴朗，适合出门散步。公园里有很多人在锻炼身体。",
         "ja": "東京の桜が満開になりました。週末は花見客で賑わう見込みです。",
         "ru": "Бесплатная доставка по всей России.",
         "ko": "서울은 대한민국의 수도입니다.",
         "el": "Η Αθήνα είναι όμορφη."}


def test_a_short_text_in_another_script_passes_through_as_its_language_as_a_long_one_does(tmp_path):
    """`plexity clean` with the English model scored a Chinese, Japanese or Russian text of under 40 characters
    (two Chinese sentences, twenty words) with the English model, too short to identify, and emptied it
    (`all_sentences_dropped`), while a longer one passed through as `language:zh`.  Now a text in a script
    other than Latin is identified from five letters: it passes through unfiltered, counted by its language;
    a short English text is still filtered, and a short English label is still no language."""
    for lang, text in SHORT.items():
        (tmp_path / f"{lang}.txt").write_text(text + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("Privacy Policy\n", encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path), "-o", str(out),
                             "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["passthrough_reasons"] == {f"language:{lang}": 1 for lang in SHORT}
    assert stats["empty_reasons"] == {"all_sentences_dropped": 1}  # the English label
    for lang, text in SHORT.items():
        assert (out / f"{lang}.txt.txt").read_text(encoding="utf-8").strip() == text


@pytest.mark.parametrize("text", ["Home 首页 News 新闻", "Главная", "© 2024", "Cookie settings"])
def test_a_short_text_mostly_latin_or_of_few_letters_is_still_too_short_to_identify(text):
    """Five letters at least, nine in ten of them outside the Latin script: a mixed menu, a lone label or a
    copyright line is left to the model, as before."""
    assert other_language(text, "en") is None


# -- unlabelled pages in the legacy encodings of other scripts --------------------------------------------------

RUSSIAN = dict(nav=["Главная", "Новости", "Спорт", "Экономика", "Контакты"],
               title="Городской совет утвердил бюджет новой библиотеки",
               paras=["Городской совет во вторник после долгих обсуждений утвердил бюджет новой библиотеки. "
                      "Дебаты продолжались почти весь день.",
                      "По словам мэра, библиотека откроется весной и будет работать допоздна по будним дням. "
                      "Жители приветствовали этот план.",
                      "Жители спросили о дороге к реке, и совет пообещал закончить её в этом году. Работы начнутся "
                      "в марте."],
               foot="© 2024 Пример Новости", privacy="Политика конфиденциальности")


@pytest.mark.parametrize("lang, codec", [("ru", "cp1251"), ("ru", "koi8_r"), ("zh", "gbk"), ("ja", "shift_jis"),
                                         ("ja", "euc_jp"), ("th", "tis_620"), ("ko", "euc_kr"), ("ko", "cp949")])
def test_an_unlabelled_page_in_a_legacy_encoding_of_its_script_is_read_as_its_utf_8_twin(lang, codec, tmp_path):
    """A Russian page in windows-1251 or KOI8-R, a Chinese one in GBK, a Japanese one in Shift_JIS or EUC-JP, a
    Thai one in TIS-620, none declaring its charset (old sites, a server that sends none), were read as UTF-8:
    every letter U+FFFD, the text lost (the learned reader found none: `no_text_extracted`; the
    others a page of U+FFFD).  A GBK or Shift_JIS page's chance UTF-8 byte pairs even made it "UTF-8 with
    stray bytes".  Now the bytes' encoding is the one uchardet (resiliparse's detector) finds, as a browser's
    detector does, and the page reads as its UTF-8 twin does (`plexity clean` here; every front end decodes a
    page with the same function, `decode_html`: tests/test_charset.py).  uchardet, as resiliparse builds it, names
    no Korean encoding: a Korean page in EUC-KR is known by its bytes reading as Hangul in it."""
    page = RUSSIAN if lang == "ru" else NEWS[lang]
    html = news_page_of(page, lang).replace("<meta charset='utf-8'>", "").replace("©", "(c)")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "page.html").write_bytes(html.encode(codec))
    (inputs / "twin.html").write_bytes(html.encode("utf-8"))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(inputs), "-o", str(out),
                             "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    read = (out / "page.html.txt").read_text(encoding="utf-8")
    assert read == (out / "twin.html.txt").read_text(encoding="utf-8")
    assert page["paras"][0] in read.splitlines()
    stats = json.loads((out / "plexity-stats.json").read_text())
    assert stats["replaced_chars"] == 0 and stats["passthrough_reasons"] == {f"language:{lang}": 2}


# -- min_chars in scripts that say more in a character ---------------------------------------------------------

def test_min_chars_counts_a_han_character_as_three_and_a_hangul_syllable_as_two():
    """The datatrove step (and `plexity run`, Scrapy: `min_chars` 50 by default) dropped a Chinese text of two
    sentences, 30 characters (twenty words), as `too_short`, where an English text of ten words passed.  Now a
    Han or kana character counts as three characters for `min_chars`, a Hangul syllable as two: the Chinese,
    Japanese and Korean texts pass through, a short English label or a lone Chinese word is still too short."""
    from datatrove.data import Document

    from plexity_plugins.datatrove import PerplexitySentenceFilter

    korean = "시의회는 새 도서관 예산을 승인했다. 공사는 3월에 시작된다."  # (33 characters, 26 syllables)
    texts = {"zh": SHORT["zh"], "ja": SHORT["ja"], "ko": korean,
             # as short as English texts of the same length are
             "ru": SHORT["ru"], "word": "图书馆", "label": "Privacy Policy"}
    step = PerplexitySentenceFilter()
    kept = {doc.id: doc.text for doc in step.run((Document(text=text, id=key) for key, text in texts.items()))}
    assert kept == {"zh": SHORT["zh"], "ja": SHORT["ja"], "ko": korean}
    assert step.stats.stats["dropped_too_short"].total == 3


# -- text cut short in the stats and the summary ---------------------------------------------------------------

def test_a_sentence_cut_short_in_the_stats_and_the_summary_keeps_its_last_letter_whole(tmp_path):
    """The stats' dropped samples (300 characters) and `plexity clean`'s summary line (60) cut a sentence at a code
    point: a Hindi sample could end with a consonant whose vowel sign was cut off ("को" shown as "क", another
    syllable) or with a virama that joins the "..." after it.  Now the cut falls between what a reader sees as
    characters (`text.graphemes.prefix`), here in a Hindi sentence whose 60th and 300th characters are vowel
    signs."""
    from plexity_plugins.text.graphemes import prefix

    words = "परिषद ने मंगलवार को लंबी बहस के बाद नए पुस्तकालय के बजट को मंजूरी दे दी नगर".split()
    sentence = " ".join(words * 6)
    sentence = sentence[:300] + "ो" + sentence[301:] + "।"  # (a vowel sign as the 301st character)
    assert unicodedata.category(sentence[60]) == "Mn" and sentence[300] == "ो"
    (tmp_path / "hi.txt").write_text(sentence + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", str(tmp_path / "hi.txt"),
                             "-o", str(out), "--no-language-check", "--method", "sentences"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    [sample] = [s["text"] for samples in json.loads((out / "plexity-stats.json").read_text())[
        "dropped_samples"].values() for s in samples]
    assert sample == prefix(sentence, 300) == sentence[:299]  # (before the consonant of the cut syllable)
    shown = prefix(sentence, 60)
    assert len(shown) < 60 and repr(shown) in result.stderr + result.stdout


# -- plexity train on a corpus whose words plexity-tok-1 cuts apart ---------------------------------------------

def test_train_on_a_hindi_corpus_warns_that_the_tokenizer_cuts_its_words_at_the_vowel_signs(tmp_path):
    """`plexity train --language hi` built, without a word said, a model of letters: plexity-tok-1 ends a token at
    every vowel sign and virama (not letters to Python's re), so "दिल्ली भारत की राजधानी है।" is 20 tokens for 5
    words.  (The tokenizer itself is not changed: that is a new tokenizer version and a rebuilt model.)  Now
    train warns, naming the tokenizer that keeps words whole; an English corpus gets no such warning."""
    subjects = ["नगर परिषद ने", "महापौर ने", "समिति ने", "सरकार ने", "निवासियों ने"]
    objects = ["नए पुस्तकालय के बजट को", "सड़क की योजना को", "नदी के पुल को", "स्कूल के प्रस्ताव को"]
    verbs = ["मंजूरी दी।", "स्वीकार किया।", "टाल दिया।"]
    corpus = tmp_path / "news_hi.txt"
    corpus.write_text("".join(" ".join(f"{subjects[(i + j) % 5]} {objects[(i * j) % 4]} {verbs[(i + 2 * j) % 3]}"
                                       for j in range(4)) + "\n" for i in range(60)), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "plexity_plugins", "train", "--corpus", "text", "--order", "3",
                             "--name", "hi-news", "--quiet", "--language", "hi", str(corpus)],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PLEXITY_MODEL_DIR": str(tmp_path / "models")})
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "tokens a word" in line]
    assert len(warnings) == 1 and "--tokenizer ccnet --sp-model FILE" in warnings[0], result.stderr
    assert float(warnings[0].split("warning: ")[1].split()[0]) > 2.5


# -- a UTF-8 page labelled in another encoding -----------------------------------------------------------------

def test_a_utf_8_page_labelled_latin_1_or_windows_1251_is_read_as_utf_8_not_as_mojibake(tmp_path):
    """A Chinese page written in UTF-8 but served with a server's default `charset=iso-8859-1`, or a Russian one
    whose template still says `<meta charset="windows-1251">`, was read in its label's encoding: "å¸‚è®®ä¼š" for
    市议会, not identified as Chinese, scored with the English model and kept as text (the trim method's edges
    only).  Now bytes that are UTF-8 beyond ASCII are read as UTF-8 whatever the label (other text is valid
    UTF-8 by chance almost never), in `plexity run` as in every front end."""
    from warc_corpus import record_bytes

    from helpers import read_jsonl_dir

    chinese = news_page("zh").encode("utf-8")
    russian = news_page_of(RUSSIAN, "ru").replace("<meta charset='utf-8'>", "<meta charset='windows-1251'>")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "crawl.warc").write_bytes(
        record_bytes("http://example.cn/a", chinese, content_type="text/html; charset=iso-8859-1")
        + record_bytes("http://example.ru/a", russian.encode("utf-8"), content_type="text/html"))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "plexity_plugins", "run", str(inputs / "crawl.warc"), "-o",
                             str(out), "--executor", "local"], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    docs = {doc["metadata"]["url"]: doc for doc in read_jsonl_dir(out / "documents")}
    for url, page, lang in (("http://example.cn/a", NEWS["zh"], "zh"), ("http://example.ru/a", RUSSIAN, "ru")):
        doc = docs[url]
        assert page["paras"][0] in doc["text"].splitlines()
        assert doc["metadata"]["charset"] == "utf-8" and doc["metadata"]["plexity_replaced_chars"] == 0
        assert doc["metadata"]["plexity_passthrough"] == f"language:{lang}"


LATIN = {  # (language, its legacy encoding, a paragraph of a news page)
    "cs": ("cp1250", "Městská rada v úterý po dlouhé debatě schválila rozpočet nové knihovny. Knihovna se otevře "
                     "příští jaro a ve všední dny bude otevřena déle. Obyvatelé se ptali na silnici k řece a rada "
                     "slíbila, že ji dokončí ještě letos."),
    "pl": ("cp1250", "Rada miejska zatwierdziła we wtorek po długiej debacie budżet nowej biblioteki. Biblioteka "
                     "zostanie otwarta wiosną, mówił burmistrz. Mieszkańcy pytali o drogę nad rzekę, a rada obiecała "
                     "ją ukończyć w tym roku. Prace zaczną się w marcu, a mieszkańcy przyjęli tę wiadomość z "
                     "zadowoleniem."),
    "tr": ("cp1254", "Belediye meclisi salı günü uzun bir tartışmanın ardından yeni kütüphanenin bütçesini onayladı. "
                     "Kütüphane ilkbaharda açılacak ve hafta içi geç saatlere kadar açık kalacak, dedi başkan. "
                     "Sakinler nehre giden yolu sordu; meclis yolu bu yıl bitirmeye söz verdi."),
    "fr": ("cp1252", "Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque après un long "
                     "débat. Elle ouvrira au printemps et restera ouverte tard en semaine, a précisé le maire. Les "
                     "habitants ont demandé où en était la route de la rivière : elle sera achevée cette année."),
    "de": ("cp1252", "Der Stadtrat hat am Dienstag nach langer Debatte den Haushalt für die neue Bibliothek "
                     "genehmigt. Sie öffnet im Frühjahr und bleibt werktags länger geöffnet, sagte der "
                     "Bürgermeister. Die Straße zum Fluss soll noch in diesem Jahr fertig werden; die Bürger "
                     "begrüßten den Plan."),
}


@pytest.mark.parametrize("lang", LATIN)
def test_an_unlabelled_central_european_or_turkish_page_is_read_in_its_encoding_and_a_western_one_as_before(lang):
    """An unlabelled Latin-script page that is not UTF-8 was always windows-1252: a Czech or Polish page in
    windows-1250 read "Mìstská", "bud¿et", a Turkish one in windows-1254 "salý".  Now the encoding uchardet names is
    taken when it is another Latin one (windows-1250, ISO-8859-2, windows-1254, windows-1257 ...); a French or
    German page stays windows-1252."""
    from plexity_plugins.io.decoding import decode_html_replaced

    codec, text = LATIN[lang]
    decoded, encoding, replaced = decode_html_replaced(f"<html><body><p>{text}</p></body></html>".encode(codec))
    assert text in decoded and replaced == 0 and encoding == codec


def test_dense_keeps_a_short_hebrew_or_arabic_sentence_that_ends_with_a_direction_mark():
    """`--extractor dense` dropped a short Hebrew or Arabic line as a fragment when an invisible right-to-left
    mark (U+200F, as editors put after a full stop) followed its full stop: its last character was no full stop.
    Now marks of text direction are not a line's last character; the line is kept as it is."""
    long = "עיר עתיקה ויפה מאוד. האם ביקרת בה? היא יפה מאוד ומלאה באתרים היסטוריים רבים וחשובים."
    for short in ("היא יפה מאוד.\u200f", "هل زرت الأهرامات؟\u200f"):
        text = html_to_text_dense(f"<html><body><div><p>{short}</p><p>{long}</p></div></body></html>")
        assert text.splitlines() == [short, long]
