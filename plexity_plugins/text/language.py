"""Offline language identification, so that pages in another language than the model's
are passed through instead of being gutted (every sentence of them looks like
boilerplate to an English model).

Uses py3langid (langid.py's maintained fork; its model ships inside the wheel).  For
an English model, a cheap test runs first: English pages' text is 22-42 % function words
("the", "of", "and" ...), German pages' 1-5 % (5th to 95th percentile of the 152 English and
354 German development pages, extracted by dense, trafilatura or the tag remover; no German
page reached 20 %, though German prose that often says "in", "an", "was", "will" or "also"
passes 12 %); text at or above `ENGLISH_PROSE_SHARE` is English without asking langid, which
is slower than scoring itself.  Below it, langid decides (`other_language`): a language it
names with `MIN_PROBABILITY`, or one it leads with while all but ruling the model's language
out (closely related languages share its belief: Croatian, Bosnian and Serbian, say).
Its 68 MB of tables are decompressed once into the cache directory and
memory-mapped from there, shared by every process (`_stock_identifier`); with no temporary folder, which
py3langid's own loader needs, they are decompressed in memory (`_identifier_from_model_file`).  Only a sample is
classified: the longest blocks (lines) up to `SAMPLE_CHARS`, because content blocks are long
while navigation, often in English on any site, is short; and because langid's cost grows
faster than linearly on long inputs.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
from array import array
from collections.abc import Collection
from pathlib import Path

from ..runtime import native

logger = logging.getLogger(__name__)

SAMPLE_CHARS = 2000
# At or above this share of English function words a text is English prose: not identified.
ENGLISH_PROSE_SHARE = 0.2
_ENGLISH_FUNCTION_WORDS = frozenset(
    "the of and to a in is that for it was on with as be by at this are from or his her an they "
    "which but not have has had were their been its he she we you i will would there all can one "
    "more also who when what".split())
_WORD = re.compile(r"[^\W\d_]+")
MIN_CHARS = 40  # below this, identification is a guess: do not decide (but see SHORT_MIN_LETTERS)
# ... unless the text is written in a script other than Latin: 40 characters are seven English words, but twenty
# Chinese ones (a post, a product's description), and py3langid names a script's language from a few letters
# (東京の桜が満開になりました。 ja 1.00, 서울은 대한민국의 수도입니다. ko 1.00, Бесплатная доставка по всей России.
# ru 0.86; a short English label it cannot tell: Privacy Policy pl 0.16).  A shorter text of at least this many
# letters, at most NON_LATIN_MAX_LATIN of them Latin, is identified as a longer one is.
SHORT_MIN_LETTERS = 5
NON_LATIN_MAX_LATIN = 0.1
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_LETTER = re.compile(r"[^\W\d_]")
MIN_PROBABILITY = 0.8
# Another language than the model's also when langid's top answer has this much of its belief ...
LEADING_PROBABILITY = 0.5
# ... and the model's language at most this much (it is unsure which language, not whether
# it is the model's: Croatian text is hr 0.6, bs 0.4, en 0.0)
RULED_OUT_PROBABILITY = 0.1
NO_LANGUAGE = "zxx"  # langid's label for text without language (digits, codes): names no other language


# Texts whose classification the compiled feature walk must reproduce before it is used.
_SELF_CHECK = ("The cat sat on the mat and looked at the birds.", "Der Hund läuft über die Straße.",
               "Ceci n'est pas une pipe, mais une œuvre d'art.", "東京は日本の首都です。", "...", "")


_identifier: list = []  # (the one loaded, once loaded)
_identifier_loading = threading.Lock()


def identifier():
    """This process's language identifier (py3langid's, with the compiled feature walk where it
    gives py3langid's answers), loaded by the first call and kept: a run loads it before it forks
    its workers, so that they share its tables.  Threads that call it first at once wait for one load:
    with `lru_cache` alone, 8 threads of a service sharing a scorer each loaded it (8 loads, 15 s and
    690 MiB at their peak where one takes 2 s and 135 MiB)."""
    if not _identifier:
        with _identifier_loading:
            if not _identifier:
                _identifier.append(_load_identifier())
    return _identifier[0]


identifier.cache_clear = _identifier.clear  # (loaded again by the next call)


def _new_loading_lock() -> None:
    """In a forked process, a lock of its own: one forked while another thread loaded the identifier holds a copy of
    the lock taken, which nobody there would release."""
    global _identifier_loading
    _identifier_loading = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_loading_lock)


def _load_identifier():
    from py3langid.langid import LanguageIdentifier

    stock = _stock_identifier(LanguageIdentifier)
    if not native.ENABLED:
        return stock
    try:
        fast = _compiled_identifier(LanguageIdentifier, stock)
        if all(fast.classify(t) == stock.classify(t) for t in _SELF_CHECK):
            return fast
        logger.warning("compiled language-identification walk disagrees with py3langid: not used")
    except Exception as exc:  # noqa: BLE001 - another py3langid version: keep its own code
        logger.warning("compiled language-identification walk unavailable (%s): using py3langid's", exc)
    return stock


# -- py3langid's tables, decompressed once ---------------------------------------------------
# py3langid ships its model LZMA-compressed: every process that loads it spends ~0.5 s
# decompressing 68 MB (as long as cleaning a hundred pages).  The first load writes the tables
# uncompressed to the cache directory; later loads memory-map them (a few ms, and the pages
# are shared by every process on the machine).  The copy is checked against answers py3langid
# itself gave when it was written; anything amiss and py3langid's own loader is used.
TABLES_FORMAT = 1
_TABLE_CHECKS = ("The cat sat on the mat and looked at the birds.", "Der Hund läuft über die Straße.",
                 "Ceci n'est pas une pipe, mais une œuvre d'art.", "東京は日本の首都です。")


def cache_dir() -> Path:
    """Where derived data is kept: ``$PLEXITY_CACHE_DIR``, else the user's cache directory
    (``~/.cache/plexity_plugins`` on Linux), else, for a user who may not write there (cron's or a service's HOME,
    unset or read-only), a folder of this user's in the temporary folder: without a cache every process built the
    language tables again, ~1 s of a core each, unsaid."""
    env = os.environ.get("PLEXITY_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from ..errors import NoHomeFolder
    from ..runtime.paths import user_cache_dir

    try:
        user = user_cache_dir()
    except NoHomeFolder:  # (a container's UID without HOME or passwd entry: the tables are still cached)
        return _private_temporary_folder()
    existing = next((p for p in (user, *user.parents) if p.exists()), None)
    if existing is not None and existing.is_dir() and os.access(existing, os.W_OK | os.X_OK):
        return user
    return _private_temporary_folder()


def _private_temporary_folder() -> Path:
    """``plexity_plugins-UID`` in the temporary folder, this user's alone (made 0700; one made by another user, or a
    link, is refused: the tables are trusted once their answers match)."""
    folder = Path(tempfile.gettempdir()) / f"plexity_plugins-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if folder.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise OSError(f"{folder} is not this user's own folder")
    return folder


def _tables_dir() -> Path:
    import py3langid
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    source = Path(MODEL_DIR) / MODEL_FILE
    stat = source.stat()
    version = getattr(py3langid, "__version__", "unknown")
    return cache_dir() / "langid" / f"py3langid-{version}-{stat.st_size}-{stat.st_mtime_ns}-v{TABLES_FORMAT}"


def _stock_identifier(identifier_class):
    """py3langid's identifier (normalised probabilities), from the cached tables when they are
    there and sound, else from py3langid's model file (then cached for the next process)."""
    try:
        directory = _tables_dir()
    except Exception as exc:  # noqa: BLE001 - no cache location: load as py3langid does
        logger.debug("language tables: no cache (%s)", exc)
        directory = None
    if directory is not None and (directory / "manifest.json").is_file():
        try:
            identifier = _identifier_from_tables(identifier_class, directory)
            if _answers(identifier) == json.loads((directory / "manifest.json").read_text())["answers"]:
                return identifier
            logger.warning("cached language tables in %s give other answers than py3langid: not used, "
                           "written again", directory)
        except Exception as exc:  # noqa: BLE001 - damaged or partial copy: py3langid's own loader instead
            logger.warning("cached language tables in %s unreadable (%s): not used, written again", directory, exc)
        shutil.rmtree(directory, ignore_errors=True)  # (a process that has them mapped keeps its pages)
    stock = _identifier_from_model_file(identifier_class)
    if directory is not None:
        _write_tables(stock, directory)
    return stock


def _identifier_from_model_file(identifier_class):
    """py3langid's identifier from its own model file.  Its loader decompresses the model into a temporary file (so
    the 68 MB are not all in memory at once); where there is no temporary folder this user may write (a container's
    read-only /tmp, TMPDIR unset) that raised FileNotFoundError "No usable temporary directory", and every page that
    needed the language failed (`plexity serve`: HTTP 500 for each request).  There it is decompressed in memory."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    try:
        tempfile.gettempdir()
    except FileNotFoundError:
        return _identifier_from_memory(identifier_class, Path(MODEL_DIR) / MODEL_FILE)
    return identifier_class.from_model_file(MODEL_FILE, norm_probs=True)


def _identifier_from_memory(identifier_class, model_file: Path):
    """As py3langid's `modelio.load_model` reads `model_file` (an .npz inside LZMA), from memory."""
    import io
    import lzma

    import numpy as np

    with np.load(io.BytesIO(lzma.decompress(model_file.read_bytes())), allow_pickle=False) as data:
        return identifier_class(np.asarray(data["ptc"]), np.asarray(data["pc"]), data["classes"].tolist(),
                                _as_array(data["nextmove"]), data["out_feat"].tolist(), norm_probs=True,
                                tk_row=_as_array(data["nextmove_row"]))


def _as_array(values):
    """A numpy array of unsigned integers as the stdlib array py3langid's loader makes of it."""
    import numpy as np

    out = array(_TYPECODES[values.dtype.itemsize])
    out.frombytes(memoryview(np.ascontiguousarray(values)).cast("B"))
    return out


def _answers(identifier) -> list:
    return [[text, *map(str, identifier.classify(text))] for text in _TABLE_CHECKS]


def _identifier_from_tables(identifier_class, directory: Path):
    import numpy as np

    def load(name):
        return np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False)

    nextmove, row = load("nextmove"), load("nextmove_row")
    if not native.ENABLED:  # py3langid's own walk, byte by byte: faster on its stdlib array
        nextmove = _as_array(nextmove)
    # (else the compiled walk reads the mapping itself: the two big tables, 67 MB, stay
    # file-backed pages that every process on the machine shares)
    return identifier_class(load("ptc"), np.asarray(load("pc")), load("classes").tolist(), nextmove,
                            load("out_feat").tolist(), norm_probs=True,
                            tk_row=_as_array(row))


_TYPECODES = {2: "H", 4: "I", 8: "L"}


def _write_tables(stock, directory: Path) -> None:
    """The stock identifier's tables as .npy files, with the answers they must give; written
    to a temporary directory renamed into place, so a reader never sees half a copy."""
    import numpy as np

    tmp = None
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=".partial-"))
        tables = {"ptc": stock.nb_ptc, "pc": stock.nb_pc, "classes": np.array(stock.nb_classes),
                  "nextmove": np.frombuffer(stock.tk_nextmove, dtype=f"u{stock.tk_nextmove.itemsize}"),
                  "nextmove_row": np.frombuffer(stock.tk_row, dtype=f"u{stock.tk_row.itemsize}"),
                  "out_feat": np.array(stock.tk_output, dtype=np.int32)}
        for name, values in tables.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(values), allow_pickle=False)
        (tmp / "manifest.json").write_text(json.dumps({"answers": _answers(stock)}))
        os.rename(tmp, directory)  # fails if another process got there first: theirs is as good
        tmp = None
    except OSError as exc:
        logger.debug("language tables not cached in %s: %s", directory, exc)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _compiled_identifier(base, stock):
    """py3langid's identifier with its byte-by-byte Python feature walk and its
    half-precision table cast (together nine tenths of its time) done by compiled code;
    the scoring itself stays py3langid's numpy expression, on the same float32 values, so
    the results are py3langid's own.  Shares `stock`'s tables (~70 MB) instead of
    loading them twice."""
    import numpy as np

    class CompiledWalkIdentifier(base):
        __slots__ = ("_walker",)

        def _raw_score(self, text):
            counts, rows = self._walker.features(text, self.nb_ptc)
            if not counts:
                return super()._raw_score(b"")  # no features: py3langid's own fill value
            # = py3langid's `_sparse_score`: np.log1p(counts) @ nb_ptc[idx] + nb_pc, where
            # numpy casts nb_ptc[idx] (float16) to float32 before the product.
            table = np.frombuffer(rows, dtype=np.float32).reshape(-1, self.nb_ptc.shape[1])
            return np.log1p(np.frombuffer(counts, dtype=np.float32)) @ table + self.nb_pc

    identifier = CompiledWalkIdentifier(stock.nb_ptc, stock.nb_pc, stock.nb_classes, stock.tk_nextmove,
                                        stock.tk_output, norm_probs=True, tk_row=stock.tk_row)
    identifier._walker = native.langid_walker(identifier)
    return identifier


def sample_for_identification(text: str, limit: int = SAMPLE_CHARS) -> str:
    """The longest lines of `text`, up to about `limit` characters (compiled when available)."""
    if native.ENABLED:
        return native.sample_lines(text, limit)
    return sample_for_identification_python(text, limit)


def sample_for_identification_python(text: str, limit: int = SAMPLE_CHARS) -> str:
    """`sample_for_identification` in pure Python: the reference for the compiled one."""
    if len(text) <= limit:
        return text
    lines = sorted((line for line in text.split("\n") if line.strip()), key=len, reverse=True)
    picked, size = [], 0
    for line in lines:
        picked.append(line[:limit])
        size += len(picked[-1])
        if size >= limit:
            break
    return "\n".join(picked)


def identifiable(sample: str) -> bool:
    """Whether `sample` is long enough to identify: `MIN_CHARS` characters, or, in a script other than Latin,
    `SHORT_MIN_LETTERS` letters (at most `NON_LATIN_MAX_LATIN` of them Latin)."""
    if len(sample.strip()) >= MIN_CHARS:
        return True
    letters = len(_LETTER.findall(sample))
    return letters >= SHORT_MIN_LETTERS and len(_LATIN_LETTER.findall(sample)) <= NON_LATIN_MAX_LATIN * letters


def _classify(sample: str) -> tuple[str | None, float]:
    if not identifiable(sample):
        return None, 0.0
    lang, prob = identifier().classify(sample)
    return lang, float(prob)


def function_word_share_python(sample: str) -> float:
    words = _WORD.findall(sample.lower())
    return sum(w in _ENGLISH_FUNCTION_WORDS for w in words) / len(words) if words else 0.0


if native.ENABLED:
    _count_function_words = native.word_counter(_ENGLISH_FUNCTION_WORDS).count

    def function_word_share(sample: str) -> float:
        hits, total = _count_function_words(sample.lower())
        return hits / total if total else 0.0
else:
    function_word_share = function_word_share_python


def identify(text: str) -> tuple[str | None, float]:
    """(ISO 639-1 code, probability) of the text's language; (None, 0.0) if too short."""
    return _classify(sample_for_identification(text))


def english_function_word_share(text: str) -> float:
    """Share of the sample's words that are among the most frequent English words."""
    return function_word_share(sample_for_identification(text))


def other_language(text: str, expected: str, min_probability: float = MIN_PROBABILITY) -> str | None:
    """The detected language if the text is in another language than `expected`, else None.

    Another language: one langid names with `min_probability`, or its top answer with
    `LEADING_PROBABILITY` while `expected` has at most `RULED_OUT_PROBABILITY` (unsure which
    other language, sure it is not `expected`).  Text too short to identify (`identifiable`), mixed text that
    langid finds partly `expected`, and text without language (``zxx``) are `expected`'s.  For
    English, text with `ENGLISH_PROSE_SHARE` of English function words is English without
    identification (German prose rarely reaches it).
    """
    # (langid names no script: a "sr-Latn" model's is "sr"; a model's card naming no language we know, as it is)
    expected = base_language(language_code(expected) or expected.strip().lower())
    sample = sample_for_identification(text)  # once, for both tests
    if expected == "en" and function_word_share(sample) >= ENGLISH_PROSE_SHARE:
        return None
    if not identifiable(sample):
        return None
    ranking = identifier().rank(sample)  # (one scoring, as classify's: every language's probability)
    lang, prob = ranking[0]
    if lang == expected or lang == NO_LANGUAGE:
        return None
    if prob >= min_probability:
        return lang
    if prob >= LEADING_PROBABILITY and dict(ranking).get(expected, 0.0) <= RULED_OUT_PROBABILITY:
        return lang
    return None


def language_among(text: str, languages: Collection[str]) -> str | None:
    """The language a text is cleaned as when `languages` have a model (a language -> model map's keys): the
    identified language, with `other_language`'s rules seen from those models.  A language named with
    `MIN_PROBABILITY` is the text's (with a model or not: another language, passed through); a top answer below it
    is the text's if that language has a model, as `other_language` keeps such a text for a model of that language.
    None: too short to identify, no language (``zxx``), or an unsure answer no model is of.  A map took an unsure
    answer for none: a German page of menu words, "Impressum Datenschutz Kontakt Newsletter Startseite", de at 0.61,
    passed through a map's German model unfiltered, as language:unknown (or was dropped as another language), where
    the German model alone filtered it.  (`other_language`'s English function-word rule is not applied: a text it
    reads as English may be another model's at once, "Der Rhein and the Main: ..." is de at 0.83 with 24 % English
    function words.)"""
    lang, prob = identify(text)
    if lang is None or lang == NO_LANGUAGE:
        return None
    return lang if prob >= MIN_PROBABILITY or lang in languages else None


# ISO 639-3 -> 639-1 for the languages with CCNet / Wikipedia models, so that a label such as
# GlotLID's "deu_Latn" (datatrove's LanguageFilter(backend="glotlid")) matches a model's "de".  GlotLID, and so
# FineWeb-2's `language` column, names some languages by an individual language of the macrolanguage that has the
# 639-1 code: Estonian "ekk", Latvian "lvs", Mongolian "khk", Azerbaijani "azj", Yiddish "ydd", Odia "ory", Pashto
# "pbt", Malagasy "plt", Kurdish "kmr" (their rows were passed through as another language than the model's).
_ISO639_3_TO_1 = dict(pair.split(":") for pair in (
    "ekk:et lvs:lv khk:mn azj:az ydd:yi ory:or pbt:ps plt:mg kmr:ku bos:bs "
    "afr:af amh:am ara:ar arb:ar asm:as aze:az bak:ba bel:be ben:bn bod:bo bre:br bul:bg cat:ca ces:cs "
    "cym:cy dan:da deu:de div:dv ell:el eng:en epo:eo est:et eus:eu fao:fo fas:fa pes:fa fin:fi fra:fr "
    "fry:fy gle:ga gla:gd glg:gl guj:gu heb:he hin:hi hrv:hr hun:hu hye:hy ido:io ina:ia ind:id isl:is "
    "ita:it jav:jv jpn:ja kan:kn kat:ka kaz:kk khm:km kir:ky kor:ko kur:ku lao:lo lat:la lav:lv lit:lt "
    "ltz:lb mal:ml mar:mr mkd:mk mlg:mg mlt:mt mon:mn msa:ms zsm:ms mya:my nep:ne npi:ne nld:nl nno:nn "
    "nob:no nor:no oci:oc ori:or pan:pa pol:pl por:pt pus:ps ron:ro rus:ru san:sa sin:si slk:sk slv:sl "
    "snd:sd som:so spa:es sqi:sq als:sq srp:sr sun:su swa:sw swh:sw swe:sv tam:ta tat:tt tel:te tgk:tg "
    "tgl:tl tha:th tuk:tk tur:tr uig:ug ukr:uk urd:ur uzb:uz uzn:uz vie:vi yid:yi yor:yo zho:zh cmn:zh "
    "wuu:zh yue:zh").split())


# The script each language above is usually written in, that of its models unless a model's card names another
# ("language": "sr-Latn"): the script of CLDR's likely subtags ("sr" is likely "sr_Cyrl_RS"; CLDR 49 as Babel 2.19
# ships it, ``babel.core.get_global("likely_subtags")``; tests/test_languages.py checks the table against it).  A
# label that names another script (FineWeb-2's romanised Hindi "hin_Latn", Latin Serbian "srp_Latn") is another
# language for a model: its text, scored by a model of another script, was mostly dropped.
_USUAL_SCRIPT = {code: script for script, codes in (
    ("Arab", "ar fa ps sd ug ur"), ("Armn", "hy"), ("Beng", "as bn"), ("Cyrl", "ba be bg kk ky mk mn ru sr tg tt uk"),
    ("Deva", "hi mr ne sa"), ("Ethi", "am"), ("Geor", "ka"), ("Grek", "el"), ("Gujr", "gu"), ("Guru", "pa"),
    ("Hans", "zh"), ("Hebr", "he yi"), ("Jpan", "ja"), ("Khmr", "km"), ("Knda", "kn"), ("Kore", "ko"), ("Laoo", "lo"),
    ("Latn", "af az br bs ca cs cy da de en eo es et eu fi fo fr fy ga gd gl hr hu ia id io is it jv ku la lb lt lv mg "
             "ms mt nl nn no oc pl pt ro sk sl so sq su sv sw tk tl tr uz vi yo"),
    ("Mlym", "ml"), ("Mymr", "my"), ("Orya", "or"), ("Sinh", "si"), ("Taml", "ta"), ("Telu", "te"), ("Thaa", "dv"),
    ("Thai", "th"), ("Tibt", "bo")) for code in codes.split()}
# ISO 15924 codes that name the same writing as a language's usual script: Chinese simplified or traditional (or Han
# unspecified), Japanese's kanji and kana, Korean's Hangul and hanja.
_SAME_WRITING = {"Hans": {"Hant", "Hani"}, "Jpan": {"Hani", "Hira", "Kana", "Hrkt"}, "Kore": {"Hang", "Hani"}}
_SCRIPT = re.compile(r"[A-Za-z]{4}")
_CODE = re.compile(r"[a-z]{2,3}(?:-[A-Z][a-z]{3})?")


# ISO 639-1's codes (ISO 639-2's two-letter column: 184, "sh" and "bh" among them, which fastText's lid.176 gives),
# and the English names of their languages, so that a label written as a name ("english", "German", a dataset's
# `language` column as people write it) is its code: the names are ISO 639's own and CLDR's (Babel's
# ``Locale("en").languages``; tests/test_library_probe57.py checks the table against it), a fixed vocabulary, each
# name one language's.  Withdrawn codes that identifiers still give (CLD3's "iw", "jw") are their languages'.
_ISO639_1_NAMES = {code: names for code, names in (entry.split(":") for entry in (
    "aa:Afar|ab:Abkhazian|ae:Avestan|af:Afrikaans|ak:Akan|am:Amharic|an:Aragonese|ar:Arabic|as:Assamese|av:Avaric|"
    "ay:Aymara|az:Azerbaijani|ba:Bashkir|be:Belarusian|bg:Bulgarian|bh:Bihari|bi:Bislama|bm:Bambara|"
    "bn:Bangla,Bengali|bo:Tibetan|br:Breton|bs:Bosnian|ca:Catalan,Valencian|ce:Chechen|ch:Chamorro|co:Corsican|"
    "cr:Cree|cs:Czech|cu:Church Slavic,Church Slavonic,Old Church Slavonic|cv:Chuvash|cy:Welsh|da:Danish|de:German|"
    "dv:Divehi,Dhivehi,Maldivian|dz:Dzongkha|ee:Ewe|el:Greek,Modern Greek|en:English|eo:Esperanto|"
    "es:Spanish,Castilian|et:Estonian|eu:Basque|fa:Persian,Farsi|ff:Fula,Fulah|fi:Finnish|fj:Fijian|fo:Faroese|"
    "fr:French|fy:Western Frisian|ga:Irish|gd:Scottish Gaelic,Gaelic|gl:Galician|gn:Guarani|gu:Gujarati|gv:Manx|"
    "ha:Hausa|he:Hebrew|hi:Hindi|ho:Hiri Motu|hr:Croatian|ht:Haitian Creole,Haitian|hu:Hungarian|hy:Armenian|"
    "hz:Herero|ia:Interlingua|id:Indonesian|ie:Interlingue,Occidental|ig:Igbo|ii:Sichuan Yi,Nuosu|ik:Inupiaq|"
    "io:Ido|is:Icelandic|it:Italian|iu:Inuktitut|ja:Japanese|jv:Javanese|ka:Georgian|kg:Kongo|ki:Kikuyu,Gikuyu|"
    "kj:Kuanyama,Kwanyama|kk:Kazakh|kl:Kalaallisut,Greenlandic|km:Khmer,Central Khmer|kn:Kannada|ko:Korean|"
    "kr:Kanuri|ks:Kashmiri|ku:Kurdish|kv:Komi|kw:Cornish|ky:Kyrgyz,Kirghiz|la:Latin|lb:Luxembourgish,Letzeburgesch|"
    "lg:Ganda|li:Limburgish,Limburgan|ln:Lingala|lo:Lao|lt:Lithuanian|lu:Luba-Katanga|lv:Latvian|mg:Malagasy|"
    "mh:Marshallese|mi:Māori,Maori|mk:Macedonian|ml:Malayalam|mn:Mongolian|mr:Marathi|ms:Malay|mt:Maltese|"
    "my:Burmese|na:Nauru|nb:Norwegian Bokmål,Norwegian Bokmal,Bokmål|nd:North Ndebele|ne:Nepali|ng:Ndonga|"
    "nl:Dutch,Flemish|nn:Norwegian Nynorsk,Nynorsk|no:Norwegian|nr:South Ndebele|nv:Navajo,Navaho|"
    "ny:Nyanja,Chichewa,Chewa|oc:Occitan|oj:Ojibwa|om:Oromo|or:Odia,Oriya|os:Ossetic,Ossetian|pa:Punjabi,Panjabi|"
    "pi:Pali|pl:Polish|ps:Pashto,Pushto|pt:Portuguese|qu:Quechua|rm:Romansh|rn:Rundi|ro:Romanian,Moldavian|"
    "ru:Russian|rw:Kinyarwanda|sa:Sanskrit|sc:Sardinian|sd:Sindhi|se:Northern Sami|sg:Sango|sh:Serbo-Croatian|"
    "si:Sinhala,Sinhalese|sk:Slovak|sl:Slovenian,Slovene|sm:Samoan|sn:Shona|so:Somali|sq:Albanian|sr:Serbian|"
    "ss:Swati|st:Southern Sotho|su:Sundanese|sv:Swedish|sw:Swahili|ta:Tamil|te:Telugu|tg:Tajik|th:Thai|"
    "ti:Tigrinya|tk:Turkmen|tl:Tagalog|tn:Tswana|to:Tongan|tr:Turkish|ts:Tsonga|tt:Tatar|tw:Twi|ty:Tahitian|"
    "ug:Uyghur,Uighur|uk:Ukrainian|ur:Urdu|uz:Uzbek|ve:Venda|vi:Vietnamese|vo:Volapük,Volapuk|wa:Walloon|wo:Wolof|"
    "xh:Xhosa|yi:Yiddish|yo:Yoruba|za:Zhuang|zh:Chinese|zu:Zulu").split("|"))}
_WITHDRAWN_CODES = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}
# ISO 639-2's bibliographic codes, the twenty that differ from its terminology codes (library catalogues' MARC
# records, some datasets' `language` column; CLDR's language aliases, ``babel.core.get_global("language_aliases")``,
# which tests/test_first_day_probe58.py checks them against): "ger" was read as a language of its own, so a model
# trained with --language ger, or a map's key ger=..., passed every German page through unfiltered.
_ISO639_2B_TO_1 = dict(pair.split(":") for pair in (
    "alb:sq arm:hy baq:eu bur:my chi:zh cze:cs dut:nl fre:fr geo:ka ger:de gre:el ice:is mac:mk mao:mi may:ms "
    "per:fa rum:ro slo:sk tib:bo wel:cy").split())
# Codes no identifier gives, for the code they give the same text: py3langid, lid.176 (CCNet's) and CLD3 name
# Norwegian Bokmål "no" (and the ISO 639-3 table above reads GlotLID's "nob" so), so a model whose card said "nb"
# (`--language nb`, or `--language "Norwegian Bokmål"`) passed every Bokmål page through as another language, "no".
_AS_IDENTIFIED = {"nb": "no"}
_CODE_OF_NAME = {name.lower(): code for code, names in _ISO639_1_NAMES.items() for name in names.split(",")}
# ISO 639-2's codes for no language in particular (undetermined, no linguistic content, uncoded, several): a label
# holding one names no language a model is of.  (Its range for local use, qaa-qtz, names a language: a private one.)
_NO_LANGUAGE_CODES = frozenset({"und", "zxx", "mis", "mul"})


# ISO 3166's two-letter country codes that are no ISO 639-1 code, and the country's likely language (CLDR's likely
# subtags, ``babel.core.get_global("likely_subtags")["und_JP"]``; tests/test_first_day_probe58.py checks the table
# against it): `--model jp=...` was refused naming no code to give instead.  (A country code that is also a
# language's, "se" Northern Sami, "uk" Ukrainian, is that language's: a model of another is said, `multilingual`.)
_COUNTRY_LANGUAGE = dict(pair.split(":") for pair in (
    "ad:ca al:sq ao:pt at:de aw:nl ax:sv bd:bn bf:fr bj:fr bl:fr bq:pap bt:dz bv:no by:ru cc:ms cd:fr cf:sg cg:fr "
    "ci:fr cl:es cm:fr cn:zh cw:pap cz:cs dj:fr dk:da do:es ea:es ec:es eg:ar eh:ar er:ti ge:ka gf:fr gh:ak gp:fr "
    "gq:es gr:el gt:es gw:pt hk:zh hn:es ic:es il:he iq:ar ir:fa jo:ar jp:ja ke:sw kh:km kp:ko kz:ru lk:si ls:st "
    "ly:ar ma:ar mc:fr md:ro me:sr mf:fr mm:my mq:fr mu:fr mv:dv mx:es mz:pt nc:fr ni:es np:ne pe:es pf:fr pg:tpi "
    "ph:fil pk:ur pm:fr pr:es pw:pau py:gn qa:ar re:fr rs:sr sj:nb sy:ar td:ar tf:fr tj:tg tm:tk tv:tvl tz:sw ua:uk "
    "uy:es va:it vn:vi vu:bi wf:fr ws:sm xk:sq ye:ar yt:fr zw:sn").split())


def checked_language_code(label: str) -> str:
    """`language_code` of a language a user names (a model's, a key of a language -> model
    map; "sr-Latn": a script other than the language's usual one), refused unless it is a language code: ISO 639
    codes have two or three letters, and a
    name ("english") would never match the language a text is identified in, so every text would
    pass through unfiltered."""
    code, named = read_language_label(label.strip()) if label and label.strip() else (None, "")
    if code is None or named != "code" or not _CODE.fullmatch(code):
        said = f": {code}" if named == "name" else ""
        country = _COUNTRY_LANGUAGE.get(label.strip().lower())
        if country:  # ("jp", "gr", "dk", "cz": a country's code for its language's)
            raise ValueError(f"{label!r} is not a language code but a country's (ISO 3166): that country's language "
                             f"is likely {language_code(country)}; give the language's code (ISO 639-1's where it "
                             f"has one), as py3langid and datatrove label texts")
        raise ValueError(f"{label!r} is not a language code: give its ISO 639-1 code{said or ' (en, de, fr, ...)'}, "
                         f"as py3langid and datatrove label texts")
    return code


def language_code(label: str | None) -> str | None:
    """A language label as models store it (ISO 639-1 where there is one): "deu_Latn",
    "de", "DE" and " de-DE\n" (a page's lang attribute as written) all give "de"; a language's English name
    ("english", "German": `_ISO639_1_NAMES`) its code; a blank label, or one that names no language
    (`read_language_label`: "xx", "und", "unknown"), none, so that the text's language is identified.  A label
    naming a script other than the one the language is
    usually written in (`_USUAL_SCRIPT`) keeps it: "hin_Latn" (romanised Hindi) is "hi-Latn", another language
    than a Hindi model's "hi", as "srp_Latn" is for a Cyrillic Serbian model ("zho_Hant" is "zh": the same writing,
    `_SAME_WRITING`); a model whose card says "hi-Latn" is that language's.  fastText's own label, "__label__en"
    ("__label__eng_Latn" from GlotLID's model), is its code: it was "", another language than every model's, so such
    texts passed through unfiltered, counted as language ""; a label holding no code at all ("_") is none."""
    return read_language_label(label)[0]


def names_no_language(label: str | None) -> bool:
    """Whether `label` is a label (not blank) that names no language (`read_language_label`): a front end says so
    once and counts it (``language_label_unknown``), the text's language identified instead."""
    return bool(label and label.strip()) and read_language_label(label)[0] is None


def read_language_label(label: str | None) -> tuple[str | None, str]:
    """(`language_code`'s code, how the label gave it: "code", "name" or ""): the one reading of every label.

    A code is ISO 639-1's (`_ISO639_1_NAMES`; a withdrawn one, "iw", as its language's; "nb" as identifiers give
    it, "no"), or three letters (ISO 639-2/3's, some 7,900, not listed: GlotLID's "ace_Latn", lid.176's "ceb"; ISO
    639-2's bibliographic "ger", "fre" ... as their ISO 639-1 codes), with what follows it (a script, a region).  A
    name is a language's English name, written in any case.  Anything else names no language and gives None: a
    two-letter code ISO 639 has not assigned ("xx"), ISO 639-2's codes for none in particular ("und",
    CLD2's "un", "zxx"), words ("unknown", "klingon").  Before, such a label was taken for a language of its own,
    and every such document passed through unfiltered, counted as ``passthrough_language:english``, unsaid."""
    if not label or not label.strip():
        return None, ""
    label = label.strip().removeprefix("__label__")
    named = _CODE_OF_NAME.get(" ".join(label.replace("_", " ").split()).lower())
    if named is not None:
        return _AS_IDENTIFIED.get(named, named), "name"
    parts = re.split(r"[_-]", label)
    code = parts[0].lower()
    if not code:
        return None, ""
    code = _WITHDRAWN_CODES.get(code) or _ISO639_2B_TO_1.get(code) or _ISO639_3_TO_1.get(code, code)
    code = _AS_IDENTIFIED.get(code, code)
    if not (len(code) == 2 and code in _ISO639_1_NAMES or len(code) == 3 and code.isascii() and code.isalpha()
            and code not in _NO_LANGUAGE_CODES):
        return None, ""
    script = next((part.title() for part in parts[1:] if _SCRIPT.fullmatch(part)), None)
    usual = _USUAL_SCRIPT.get(code)
    if script is None or usual is None or script.startswith("Z"):  # (Zyyy, Zinh, Zzzz: no script in particular)
        return code, "code"
    return (code if script == usual or script in _SAME_WRITING.get(usual, ()) else f"{code}-{script}"), "code"


def base_language(code: str) -> str:
    """`language_code`'s code without its script: what identification (which names no script) compares."""
    return code.split("-")[0]
