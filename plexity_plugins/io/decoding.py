"""Bytes to text: the charset of an HTML body, shared by every extractor and front end.

The order is the WHATWG encoding rules' (what browsers do), in one function, `html_encoding`:

1. a byte order mark (UTF-8, UTF-16, UTF-32), which is then not part of the text;
2. the HTTP ``Content-Type`` header's charset;
3. the charset declared in the first bytes of the page (``<meta charset>``, ``<meta
   http-equiv="Content-Type">``, ``<?xml ... encoding=...?>``); a declaration of UTF-16 or UTF-32
   found there means UTF-8: bytes that can be read as ASCII to find the declaration are not
   UTF-16 or UTF-32 (a real UTF-16 page starts with a BOM, rule 1), and x-user-defined there
   windows-1252 (the HTML standard's prescan);
4. else (no label, or one nobody knows) the bytes decide, as the HTML standard lets a browser
   "autodetect" before its default: UTF-16 when every other byte of its start is NUL (`utf16_by_its_nuls`:
   a page saved as "Unicode" by a Windows tool, without its BOM); else UTF-8, unless no non-ASCII byte of
   the page is part of a UTF-8 character and its text reads as a Latin script; then windows-1252, the
   standard's default for an unlabelled page in most locales (`unlabelled_encoding`).  A UTF-8 page with a
   few stray bytes stays UTF-8, those bytes U+FFFD; a page of another script in a legacy encoding is read in
   the one uchardet finds (windows-1251, GBK, Shift_JIS ...), else stays UTF-8 (its loss counted).

Bytes that are UTF-8 beyond ASCII are read as UTF-8 whatever a label of 2 or 3 says (`_utf8_if_its_bytes_are`:
a server's default ``charset=iso-8859-1`` on a UTF-8 page), but for UTF-16, UTF-32 and the replacement encoding.

A charset of 2 or 3 that is the WHATWG's "replacement" encoding (``iso-2022-kr``, ``hz-gb-2312``,
``iso-2022-cn`` ...: `REPLACEMENT`) makes the page a single U+FFFD, as browsers show it.

A label is one of the WHATWG Encoding Standard's (`_WHATWG_LABELS`, all of them), or no declaration: a
browser ignores a label it does not know, and the next rule decides.  Python's codecs are only how the
standard's encodings are decoded: a label only Python knows (``iso-2022-jp-2``, ``utf-7``, ``latin-1``,
``utf-32``, ``base64``) is no charset.  ``x-user-defined`` is decoded by the standard's own decoder (ASCII
as it is, 0x80-0xFF to U+F780-U+F7FF), which Python lacks.

Undecodable bytes become U+FFFD: decoding never raises.
"""

from __future__ import annotations

import codecs
import functools
import re

from ..errors import not_text_error
from ..runtime import native


def _wide(encoding: str) -> bool:
    if encoding in (REPLACEMENT, X_USER_DEFINED):  # (no Python codec)
        return False
    return codecs.lookup(encoding).name.startswith(("utf-16", "utf-32"))


# The WHATWG's "replacement" encoding: the labels of encodings whose escape sequences can hide markup from a
# reader that does not decode them (ISO-2022-KR, ISO-2022-CN, HZ-GB-2312).  Browsers decode a page declared in
# one to a single U+FFFD, never its bytes (a security rule of the Encoding Standard); so do we (Python's
# iso2022_kr and hz codecs would read such a page's text).
REPLACEMENT = "replacement"
# The standard's x-user-defined: a single-byte encoding of its own (ASCII, then 0x80-0xFF to U+F780-U+F7FF).
X_USER_DEFINED = "x-user-defined"
_X_USER_DEFINED = {byte: 0xF780 + byte - 0x80 for byte in range(0x80, 0x100)}  # (a str.translate table)

# The WHATWG Encoding Standard's labels, all 228 (https://encoding.spec.whatwg.org/#names-and-labels), by the
# Python codec that decodes the encoding each names (gbk's decoder is gb18030's, big5's Big5-HKSCS, Shift_JIS's
# cp932, EUC-KR's cp949; iso-8859-8-i differs from iso-8859-8 in display only).  A label not here is no charset.
_WHATWG_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988",
    "iso8859-6": ("arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
                  "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987"),
    "iso8859-7": ("csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
                  "iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    "iso8859-8": ("csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
                  "iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical"),
    "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859-13": "iso-8859-13 iso8859-13 iso885913", "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9", "iso8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r", "koi8-u": "koi8-ru koi8-u",
    "mac-roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874", "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    "cp1252": ("ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 "
               "iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"),
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": ("cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 latin5 "
               "windows-1254 x-cp1254"),
    "cp1255": "cp1255 windows-1255 x-cp1255", "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257", "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk gb18030",
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5", "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": ("cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 "
              "windows-949"),
    REPLACEMENT: "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement",
    "utf-16-be": "unicodefffe utf-16be",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    X_USER_DEFINED: "x-user-defined",
}
_WHATWG = {label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()}


@functools.cache
def _codec_labels() -> dict[str, str]:
    """A label of each encoding by the name of its Python codec: how a name Python knows (Scrapy's response.encoding
    is w3lib's codec name, ``cp932``; a server's ``latin-1``) names the standard's encoding that Python decodes with
    that codec.  A name whose codec decodes none of them (``iso-2022-jp-2``, ``utf-7``, ``cp037``) declares nothing.
    (Made on first use, not at import: looking up the ~230 labels imports ~50 codec modules, ~15 ms of the start of
    every process that decodes, for a name the standard's own table does not hold.)"""
    labels_of = {}
    for codec, labels in _WHATWG_LABELS.items():
        for name in (codec, *labels.split()):
            try:
                labels_of.setdefault(codecs.lookup(name).name, labels.split()[0])
            except LookupError:  # (the replacement and x-user-defined encodings, labels Python does not know)
                pass
    return labels_of


def _whatwg_codec(label: str) -> str | None:
    """The codec of the standard's encoding a charset label names (a Python name of its codec too), else None."""
    label = label.strip().lower()
    if label in _WHATWG:
        return _WHATWG[label]
    try:
        label = _codec_labels().get(codecs.lookup(label).name, "")
    except (LookupError, ValueError):  # (ValueError: a NUL in the label, "a\x00b": no name a browser knows either)
        return None
    return _WHATWG.get(label)


_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.I)
_DECLARED_CHARSET = re.compile(r"""<meta\b[^>]*?charset\s*=\s*["']?\s*([^\s"';,/>]+)"""
                               r"""|<\?xml\b[^>]*?encoding\s*=\s*["']\s*([^\s"']+)""", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
# (searched, not found in head.lower(): lowering 4 KB of Latin-1 letters, a str not ASCII, took ~12 us a page)
_BODY = re.compile("<body", re.I | re.A)


def _whatwg_header(content_type: str) -> str | None:
    match = _HEADER_CHARSET.search(content_type)
    return _whatwg_codec(match.group(1)) if match else None


def _whatwg_declared(body: bytes) -> str | None:
    """The codec of the label the page declares in its first 4096 bytes (outside comments, before its
    body; the standard's prescan reads 1024, and a browser's parser finds a later ``<meta>`` too, as
    w3lib's scan of 4096 did), if it is a WHATWG label."""
    head = _COMMENT.sub("", body[:4096].decode("latin-1"))
    opening = _BODY.search(head)
    head = head[:opening.start()] if opening else head
    match = _DECLARED_CHARSET.search(head)
    return _whatwg_codec(match.group(1) or match.group(2)) if match else None


# What rule 3 or 4 gives a page that declares no encoding (or one nobody knows): the bytes decide
# (`unlabelled_encoding`), once they are found not to be UTF-8.
UNLABELLED = "unlabelled"


def utf16_by_its_nuls(raw: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" for bytes without a BOM of which every other byte of the first 4 KB is NUL
    (ASCII-range text in UTF-16 has that shape, which UTF-8 text never has: a NUL is no part of a character of
    another), else None."""
    head = raw[:4096]
    if len(head) < 8:
        return None
    half = len(head) // 2
    odd_nuls, even_nuls = head[1::2].count(0), head[0::2].count(0)
    if odd_nuls > 0.9 * half and even_nuls < 0.1 * half:
        return "utf-16-le"
    if even_nuls > 0.9 * half and odd_nuls < 0.1 * half:
        return "utf-16-be"
    return None


def _labelled_encoding(body: bytes, content_type: str | None) -> tuple[str, int]:
    """`html_encoding`, with `UNLABELLED` for a page rules 1 to 3 find no encoding for."""
    from w3lib.encoding import read_bom

    encoding, bom = read_bom(body)
    if encoding:
        return encoding, len(bom)
    encoding = _whatwg_header(content_type) if content_type else None
    if encoding:
        return _utf8_if_its_bytes_are(body, encoding), 0
    encoding = _whatwg_declared(body)
    if encoding == X_USER_DEFINED:  # (the HTML standard's prescan reads a page's own x-user-defined so)
        return _utf8_if_its_bytes_are(body, "cp1252"), 0
    if encoding and not _wide(encoding):
        return _utf8_if_its_bytes_are(body, encoding), 0
    if encoding:  # (UTF-16/32 declared in the page: UTF-8, as the standard's prescan says)
        return "utf-8", 0
    # (no BOM, no label: the bytes decide, and UTF-16's NULs, valid UTF-8, made a page of "<\0p\0>\0" that every
    # extractor emptied; a declaration inside it is not seen, as the prescan reads ASCII)
    return utf16_by_its_nuls(body) or UNLABELLED, 0


def _utf8_if_its_bytes_are(body: bytes, encoding: str) -> str:
    """`encoding` (a label's), or "utf-8" when `body` is UTF-8 beyond ASCII and the label names another encoding
    that is not a wide one or the replacement encoding: a server's default ``charset=iso-8859-1`` (or a template's
    ``<meta charset="gbk">``) on a page written in UTF-8 made every character beyond ASCII two or three letters of
    mojibake ("å¸‚è®®ä¼š" for 市议会), kept as text.  Text of another encoding is valid UTF-8 beyond ASCII
    by chance almost never (in windows-1252 every letter beyond ASCII would have to be one of "Ã", "Â" ... followed
    by a symbol); a page UTF-8 can read without a loss is UTF-8."""
    if encoding in (REPLACEMENT, X_USER_DEFINED) or _wide(encoding) or codecs.lookup(encoding).name == "utf-8" \
            or body.isascii() or native.utf8_text(memoryview(body)) is None:
        return encoding
    return "utf-8"


def html_encoding(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(Python codec name, or `REPLACEMENT` or `X_USER_DEFINED`; length of the byte order mark) of an HTML
    body, by the rules above."""
    encoding, bom = _labelled_encoding(body, content_type)
    return (unlabelled_encoding(body), bom) if encoding == UNLABELLED else (encoding, bom)


_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def unlabelled_encoding(body: bytes) -> str:
    """The encoding of a page that declares none (rule 4): "utf-8" if its bytes are UTF-8, or if they are UTF-8
    with stray bytes (those become U+FFFD, counted); else "cp1252" for Latin-script text (windows-1252: a Latin-1
    or windows-1252 page, whose é is one byte, was read as UTF-8, each accented letter a U+FFFD); else the legacy
    encoding of another script uchardet finds (`_not_utf8_encoding`)."""
    if body.isascii() or native.utf8_text(memoryview(body)) is not None:
        return "utf-8"
    return _not_utf8_encoding(body)


# A word holding a byte that is a letter in windows-1252 (0xC0-0xFF: À-ÿ).  In a Latin-script page most such
# words hold an ASCII letter too ("café", "Grüße"); in a page of an 8-bit Cyrillic, Greek, Hebrew or Arabic
# encoding (or EUC-JP, EUC-KR), whose letters are all such bytes, almost none does.  (The words are the runs of
# such letters that hold one, found as runs then kept: a pattern asking for the byte inside the run retried each start
# of a run of ASCII letters to its end, quadratic: 40 KB of them after one 0xE9 took 6 s, a 256 KB run minutes.)
_LETTER_RUN = re.compile(rb"[A-Za-z\xc0-\xff]+")
_HIGH_LETTER = re.compile(rb"[\xc0-\xff]")
_ASCII_LETTER = re.compile(rb"[A-Za-z]")
_NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")
# the words judged: those of this many bytes from the first byte that is not ASCII (every word of a 2 MB
# Latin-1 upload took 0.34 s, holding the GIL; a page's script does not change within it)
SCRIPT_SAMPLE_BYTES = 256 * 1024


# A page of a legacy multi-byte encoding (GBK, Shift_JIS, EUC-JP ...) or of TIS-620 or KOI8-R holds byte pairs that
# happen to be UTF-8 characters (GBK's 图 is CD BC, UTF-8's ͼ): in the test pages one for every 3.6 bytes that are
# not UTF-8.  A UTF-8 page with stray bytes is the other way round: most of its characters beyond ASCII are UTF-8,
# a few bytes are not.  More bytes that are not UTF-8 than UTF-8 characters beyond ASCII, and at least STRAY_MIN,
# are no stray bytes: the page is in another encoding, and the rules below decide which.
STRAY_MIN = 8


def _utf8_with_stray_bytes(text: str) -> bool:
    """Whether `text` (a page's bytes read as UTF-8) is UTF-8 with stray bytes: a character beyond ASCII, and its
    U+FFFD fewer than `STRAY_MIN` or no more than such characters (not a page in another encoding)."""
    replaced = text.count("\ufffd")
    characters = len(_NOT_ASCII.findall(text)) - replaced
    return characters > 0 and (replaced < STRAY_MIN or replaced <= characters)


def _not_utf8_encoding(body: bytes) -> str:
    """`unlabelled_encoding` of bytes that are not valid UTF-8 (rare: a page that declares nothing): UTF-8 with stray
    bytes when its characters beyond ASCII are UTF-8 but a few (`_utf8_with_stray_bytes`); else, by its script
    (judged on the words of `SCRIPT_SAMPLE_BYTES` from its first byte that is not ASCII): for Latin-script text
    windows-1252 when none of its bytes forms a UTF-8 character (else UTF-8, as before); for another script the
    legacy encoding uchardet finds (`_detected_encoding`: windows-1251, GB18030, Shift_JIS ...), else UTF-8, its
    bytes U+FFFD and counted (read as windows-1252 letters, its loss would go uncounted)."""
    if b"\xef\xbf\xbd" in body:
        return "utf-8"  # (UTF-8 with stray bytes)
    as_utf8 = body.decode("utf-8", "replace")
    some_utf8 = _NOT_ASCII.search(as_utf8.replace("\ufffd", "")) is not None
    if some_utf8 and _utf8_with_stray_bytes(as_utf8):
        return "utf-8"
    first = _NON_ASCII_BYTE.search(body)
    start = first.start() if first else 0
    words = [run for run in _LETTER_RUN.findall(body, max(0, start - 64), start + SCRIPT_SAMPLE_BYTES)
             if _HIGH_LETTER.search(run)]
    latin = sum(1 for word in words if _ASCII_LETTER.search(word))
    sample = body[max(0, start - 64):start + SCRIPT_SAMPLE_BYTES]
    if 2 * latin >= len(words):
        if some_utf8:
            return "utf-8"
        detected = _detected_encoding(sample)  # (Central European, Turkish, Baltic: not windows-1252's letters)
        # (one that reads the bytes as windows-1252 does is no other reading: "café" is é in Latin-2 too)
        other = detected in _OTHER_LATIN and sample.decode(detected, "replace") != sample.decode("cp1252", "replace")
        return detected if other else "cp1252"
    return _detected_encoding(sample) or "utf-8"


# The legacy encodings of Latin-script languages other than windows-1252's (Czech, Polish, Hungarian, Croatian,
# Romanian, Turkish, the Baltic languages ...): an unlabelled Latin-script page is read in one of them when uchardet
# names it (Městská in windows-1250 read as windows-1252 was "Mìstská", budżet "bud¿et", salı "salý").
_OTHER_LATIN = frozenset(("cp1250", "iso8859-2", "cp1254", "iso8859-9", "cp1257", "iso8859-13", "iso8859-4",
                          "iso8859-3", "iso8859-10", "iso8859-14", "iso8859-16"))


DETECT_MIN_BYTES = 16  # bytes beyond ASCII a page needs for uchardet to name its encoding: a few words


def _detected_encoding(sample: bytes) -> str | None:
    """The legacy encoding of another script than Latin that `sample` (bytes of an unlabelled page that are not
    UTF-8) is in, by uchardet (resiliparse's `detect_encoding`, as Chrome asks its own detector): windows-1251,
    KOI8-R, GB18030, Big5, Shift_JIS, EUC-JP, TIS-620 ...; None when `sample` has under `DETECT_MIN_BYTES` bytes
    beyond ASCII, or uchardet names no encoding of the WHATWG standard, or UTF-8 or windows-1252, or one whose
    reading of `sample` holds more U+FFFD than a few stray bytes make (a guess); EUC-KR, which uchardet does not
    name, by `_korean_encoding`."""
    from resiliparse.parse.encoding import detect_encoding

    if len(_NON_ASCII_BYTE.findall(sample)) < DETECT_MIN_BYTES:
        return None  # (two bytes are anything: b"\xc1\xc2" "reads" as Greek)
    encoding = _whatwg_codec(detect_encoding(sample) or "")
    if encoding is None or encoding in (REPLACEMENT, X_USER_DEFINED) or _wide(encoding) \
            or codecs.lookup(encoding).name in ("utf-8", "cp1252"):
        return _korean_encoding(sample)
    return encoding if _few_replaced(sample.decode(encoding, "replace")) else None


def _few_replaced(text: str) -> bool:
    """Whether `text`, bytes read in an encoding, holds no more U+FFFD than a few stray bytes (or the sample's
    cut end) make."""
    return text.count("\ufffd") <= max(2, len(text) // 1000)


# Hangul syllables: the text of a Korean page.  Of the bytes beyond ASCII read as windows-949, Korean text is these
# but for a few Hanja and symbols; Chinese text in GB2312 read so is Hangul only where its lead byte is one of
# Hangul's (about half), and uchardet names GBK first anyway.
_HANGUL = re.compile("[\uac00-\ud7a3]")
KOREAN_MIN_SHARE = 0.9


def _korean_encoding(sample: bytes) -> str | None:
    """"cp949" (EUC-KR, as the WHATWG standard reads it) when `sample` reads so as Korean text (`KOREAN_MIN_SHARE`
    of its characters beyond ASCII Hangul syllables, few U+FFFD): uchardet, as resiliparse builds it, names no
    Korean encoding (it says "utf-8" of an EUC-KR page), so such a page stayed UTF-8, every syllable U+FFFD."""
    text = sample.decode("cp949", "replace")
    beyond = len(_NOT_ASCII.findall(text))
    return "cp949" if beyond and _few_replaced(text) and len(_HANGUL.findall(text)) >= KOREAN_MIN_SHARE * beyond \
        else None


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding) of an HTML body: BOM, then the Content-Type header, then the page's own
    declaration (UTF-16/32 there meaning UTF-8), else UTF-8 or, for bytes of which none is UTF-8,
    windows-1252; undecodable bytes become U+FFFD (never raises)."""
    text, encoding, _ = decode_html_replaced(body, content_type)
    return text, encoding


def decode_html_replaced(body: bytes, content_type: str | None = None) -> tuple[str, str, int]:
    """(text, encoding, characters replaced): `decode_html`, with the U+FFFD it had to insert (those
    the bytes spelled are not counted): the ``replaced_chars`` every front end counts for a page's bytes."""
    from w3lib.encoding import to_unicode

    if not isinstance(body, bytes):
        if not isinstance(body, (bytearray, memoryview)):  # (a str is decoded already: the extractors take it)
            raise not_text_error(body, "bytes (a response's body; a page that is a str needs no decoding)")
        body = bytes(body)
    encoding, bom = _labelled_encoding(body, content_type)
    unlabelled = encoding == UNLABELLED
    if unlabelled:  # (UTF-8 first: valid, nearly every such page, it is decoded once, below)
        encoding = "utf-8"
    if encoding == REPLACEMENT:  # (the WHATWG's replacement decoder: one U+FFFD for any bytes, nothing for none)
        return ("\ufffd", encoding, 1) if body else ("", encoding, 0)
    if encoding == X_USER_DEFINED:  # (every byte is a character: nothing replaced)
        return body.decode("latin-1").translate(_X_USER_DEFINED), encoding, 0
    if codecs.lookup(encoding).name == "utf-8":
        # (valid UTF-8, nearly every page: decoded keeping its bytes as the str's UTF-8 form, which
        # sending the page to the extraction child and parsing it would otherwise encode again;
        # valid, so nothing replaced: no count to scan for)
        text = native.utf8_text(memoryview(body)[bom:])
        if text is not None:
            return text, encoding, 0
        if unlabelled:
            encoding = _not_utf8_encoding(body)
    text = to_unicode(body[bom:], encoding)
    return text, encoding, max(0, text.count("\ufffd") - body.count("\ufffd".encode()))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def html_text(html: str | bytes) -> str:
    """A page as every extractor parses it: bytes decoded (`decode_html`); a str's lone surrogates
    (a JSON ``\\ud800`` escape puts them in a str; no encoding holds them) U+FFFD, as undecodable
    bytes are: libxml2 stopped reading a page at the first one, the rest of it lost, and resiliparse's
    parse raised."""
    return html_text_counted(html)[0]


def html_text_counted(html: str | bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `html_text`, counting the U+FFFD it put in, a str's lone surrogates
    as a page's undecodable bytes (`decode_html_replaced`): the ``replaced_chars`` a front end counts
    for a page given as a str or as bytes (`content_type`: the response's, for bytes).  A front end
    that counts calls it before the extractor, whose own `html_text` then finds nothing to replace."""
    if isinstance(html, (bytes, bytearray, memoryview)):
        text, _, replaced = decode_html_replaced(html, content_type)
        return text, replaced
    if not isinstance(html, str):
        raise not_text_error(html, "str or bytes (a page)")
    return _str_without_surrogates(html)


def _str_without_surrogates(text: str) -> tuple[str, int]:
    # (a flag lookup in CPython; and a str that holds its UTF-8 form, as a page utf8_text decoded
    # does, has no lone surrogate: it is not encoded again to find out)
    if text.isascii() or native.has_utf8_form(text):
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.subn("\ufffd", text)
    return text, 0


def without_surrogates(value):
    """(value, lone surrogates replaced): `value` with each lone surrogate of its strings U+FFFD, in the keys and
    values of its dicts and the items of its lists and tuples too: what a writer can encode as UTF-8 (JSON, a
    WARC header, Parquet).  A JSON ``\\ud800`` escape puts one in a str (a JSONL dataset's id or URL, read by
    datatrove's JsonlReader): orjson and warcio raised on it, and the task failed.  The same value when nothing
    is replaced.

    Args:
        value: a document's text, id or metadata (str, dict, list, tuple, or anything else, given back as it is).
    """
    if isinstance(value, str):
        return _str_without_surrogates(value)
    if isinstance(value, dict):
        items = [(without_surrogates(k), without_surrogates(v)) for k, v in value.items()]
        replaced = sum(k[1] + v[1] for k, v in items)
        return ({k[0]: v[0] for k, v in items}, replaced) if replaced else (value, 0)
    if isinstance(value, (list, tuple)):
        items = [without_surrogates(item) for item in value]
        replaced = sum(n for _, n in items)
        return (type(value)(item for item, _ in items), replaced) if replaced else (value, 0)
    return value, 0


def declared_content_type(declared: str | bytes | None) -> str | None:
    """What a crawler says a response's encoding is, as the HTTP ``Content-Type`` value that `html_encoding`
    reads (rule 2): a Content-Type value (``text/html; charset=windows-1251``; bytes, as Scrapy's
    ``response.headers`` hold it, are read as Latin-1, as Scrapy reads them) as it is; a bare label
    (``windows-1251``) as that charset, and so the name of the Python codec of one of the standard's
    encodings (Scrapy's ``response.encoding``: ``cp932``, ``euc_jp``, w3lib's codec for the response's
    label, found by browsers' rules); None or blank: None."""
    if isinstance(declared, bytes):
        declared = declared.decode("latin-1")
    declared = (declared or "").strip()
    if not declared:
        return None
    if any(sign in declared for sign in "/;="):
        return declared
    return f"charset={declared}"


def decode_html_counted(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """(text, characters replaced): `decode_html`, counting the U+FFFD it had to insert."""
    text, _, replaced = decode_html_replaced(body, content_type)
    return text, replaced
