"""Hostile-input probe 58: what a grammar-shaped and mutating fuzz of the default path (a page's bytes decoded, read
by the learned reader, the scorer's clean; WARCs through ``plexity clean``) found that the earlier rounds had not.

**A long run of ASCII letters in a page that is not UTF-8 and declares nothing.**  To choose between windows-1252
and another legacy encoding, `io.decoding` looks at the words of the page that hold a letter beyond ASCII; its
pattern (``[A-Za-z\\xc0-\\xff]*[\\xc0-\\xff][A-Za-z\\xc0-\\xff]*``) was retried at each letter of a run of ASCII letters
and ran to the run's end each time: 40 KB of them after one 0xE9 took 6 s, 580 KB of a fuzzed page (its words
repeated) 62 s in every extractor (all decode first), a 256 KB run minutes.  The words are now the runs of letters
found first, kept where they hold such a letter: the same words, in linear time.

**A long run of spaces, then a word and a line break, for trafilatura.**  Its justext fallback (run on every short
page) makes each paragraph's whitespace one line break or one space (`extractors.trafilatura._normalize_whitespace`);
the pattern of a run holding a line break was tried at each space of a run without one and ran to its end each time:
60,000 spaces before a word and a line break took ``trafilatura`` and ``auto`` 18 s, 200,000 past their 30 s limit
(an extraction_failed skip of a page of 200 KB).  It now begins only where a run begins: the same text, linear.
(Found by an audit of the package's patterns over long runs of one character, after the first.)
"""

from __future__ import annotations

import random
import re
import time

import pytest

from plexity_plugins.extractors import decode_html, get_extractor
from plexity_plugins.extractors import trafilatura
from plexity_plugins.io import decoding

ARTICLE = ("The council approved the budget for the new library on Tuesday evening. The building will open in the "
           "spring, the mayor said, and it will have a reading room.")


# -- a long run of ASCII letters in an unlabelled page that is not UTF-8 ---------------------------------------------

def _unlabelled(run: int) -> bytes:
    """A page in windows-1252 (its 'café' one byte 0xE9, no charset said anywhere) holding a word of `run` letters."""
    return (f"<html><body><p>{ARTICLE} Caf\u00e9 cr\u00e8me.</p><p>" + "a" * run + f"</p><p>{ARTICLE}</p>"
            "</body></html>").encode("cp1252")


@pytest.mark.parametrize("name", ["learned", "dense", "fast"])
def test_a_page_with_a_long_word_that_declares_no_charset_is_decoded_in_linear_time(name):
    body = _unlabelled(300_000)
    started = time.process_time()  # (CPU time: minutes before, milliseconds now; the machine is shared)
    assert decode_html(body) == (body.decode("cp1252"), "cp1252")
    assert time.process_time() - started < 2
    assert "Caf\u00e9 cr\u00e8me." in get_extractor(name)(body)


def test_the_words_judged_are_those_the_pattern_found():
    # (the runs of letters that hold one beyond ASCII: what the quadratic pattern matched, at any bounds)
    quadratic = re.compile(rb"[A-Za-z\xc0-\xff]*[\xc0-\xff][A-Za-z\xc0-\xff]*")
    rng = random.Random(58)
    for _ in range(3000):
        data = bytes(rng.choice(b"abZ \xc0\xe9\xff\x80\x7f1<") for _ in range(rng.randrange(40)))
        start, end = rng.randrange(len(data) + 1), rng.randrange(len(data) + 2)
        assert [run for run in decoding._LETTER_RUN.findall(data, start, end) if decoding._HIGH_LETTER.search(run)] \
            == quadratic.findall(data, start, end), data


# -- a long run of spaces for trafilatura's justext fallback ---------------------------------------------------------

@pytest.mark.parametrize("name", ["trafilatura", "auto"])
def test_a_long_run_of_spaces_before_a_line_break_is_read_in_linear_time(name):
    page = "<html><body><nav><a href=/a>Home</a></nav><div>x" + " " * 200_000 + "y\nz</div></body></html>"
    started = time.process_time()  # (CPU time: minutes before, a fraction of a second now)
    assert get_extractor(name)(page) == "Home\nx y z"
    assert time.process_time() - started < 5


def test_whitespace_is_normalized_as_the_pattern_tried_everywhere_did():
    # (each run one LF if it holds a CR or LF, else one space: what the quadratic pattern gave)
    everywhere, spaces = re.compile(r"\s*[\n\r]\s*"), re.compile(r"[^\S\n\r]+")
    rng = random.Random(58)
    for _ in range(3000):
        text = "".join(rng.choice(" \t\n\rab\u00a0\u2028\x0c\x1c\u3000") for _ in range(rng.randrange(30)))
        assert trafilatura._normalize_whitespace(text) == spaces.sub(" ", everywhere.sub("\n", text)), repr(text)


# -- a copied record whose block warcio's writer would not write back -------------------------------------------------
# `plexity clean` copies the records that are no page (requests, revisits, responses that are no HTML) with warcio's
# writer, which writes a block as the HTTP headers it parsed and the rest.  Where its parse made nothing of the block's
# first lines (a first line without a space) it wrote neither them nor a new Content-Length, and of a revisit whose URI
# is no http one it wrote no block at all: the copy kept its Content-Length over a shorter block, exit 0, and every
# record after it in the output was unreadable ("Invalid WARC record"; a fuzzed WARC lost 16 of its 40 records so).

def _record(kind: str, uri: str, content_type: str, block: bytes) -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:12345678-1234-1234-1234-1234567890ab>\r\n"
            f"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: {uri}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(block)}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


PAGE = _record("response", "http://t/page", "application/http; msgtype=response",
               b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body><p>" + ARTICLE.encode() + b"</p></body></html>")
ODD = {
    "revisit-of-no-http-uri": _record("revisit", "urn:x:1", "text/plain", b"hello world"),
    "revisit-of-no-http-block": _record("revisit", "http://t/r", "application/warc-fields", b"[" * 2000),
    "revisit-of-lines": _record("revisit", "http://t/r", "application/warc-fields", b"x\ny\nz"),
    "request-of-no-http-block": _record("request", "http://t/r", "application/http; msgtype=request", b"x\ny\nz"),
    "response-first-line-without-a-space": _record("response", "http://t/r", "application/http; msgtype=response",
                                                   b"garbage\r\n\r\n\x89PNG binary"),
}


def _cleaned(tmp_path, records: list[bytes], gzipped: bool):
    """(the cleaned WARC's bytes, decompressed; its path) of a WARC of `records` run through `plexity clean`."""
    import gzip
    import subprocess
    import sys

    path = tmp_path / ("in.warc.gz" if gzipped else "in.warc")
    path.write_bytes(b"".join(gzip.compress(r) for r in records) if gzipped else b"".join(records))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "plexity_plugins", "clean", "-q", str(path), "-o", str(out)], check=True,
                   capture_output=True)
    written = (out / path.name).read_bytes()
    return (gzip.decompress(written) if gzipped else written), out / path.name


@pytest.mark.parametrize("gzipped", [False, True], ids=["warc", "warc.gz"])
@pytest.mark.parametrize("name", sorted(ODD))
def test_a_copied_record_is_written_as_it_came_and_the_records_after_it_are_read(tmp_path, name, gzipped):
    from warcio.archiveiterator import ArchiveIterator

    copy, output = _cleaned(tmp_path, [ODD[name], PAGE], gzipped)
    assert copy.startswith(ODD[name])  # (the record byte for byte)
    with open(output, "rb") as f:
        read = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(f)]
    assert read == [(name.split("-")[0], "urn:x:1" if "no-http-uri" in name else "http://t/r"),
                    ("response", "http://t/page")]


# -- every copied record is its bytes ---------------------------------------------------------------------------------
# warcio's writer, which copied the records that are no page, wrote each as a new record: its HTTP headers as it parsed
# them (LF line ends made CRLF, a folded line joined, under a new Content-Length: a WARC-Block-Digest the record
# carried no longer matched its block) and WARC-Block-Digest / WARC-Payload-Digest added where it had none (its
# payload read a second time into a temporary file).  docs/cli.md says "all other records copied unchanged".

def _digest(block: bytes) -> str:
    import base64
    import hashlib

    return "sha1:" + base64.b32encode(hashlib.sha1(block).digest()).decode()


IMAGE_BLOCK = b"HTTP/1.1 200 OK\nContent-Type: image/png\nX-Folded: a\n b\n\n\x89PNG binary"
KEPT_AS_THEY_CAME = [
    _record("request", "http://t/a", "application/http; msgtype=request", b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n"),
    _record("response", "http://t/i.png", "application/http; msgtype=response", IMAGE_BLOCK).replace(
        b"Content-Type: application/http", f"WARC-Block-Digest: {_digest(IMAGE_BLOCK)}\r\nContent-Type: application/http"
        .encode(), 1),
    _record("metadata", "http://t/a", "application/warc-fields", b"via: x\r\n"),
]


@pytest.mark.parametrize("gzipped", [False, True], ids=["warc", "warc.gz"])
def test_a_copied_record_is_copied_unchanged_its_digest_still_its_blocks(tmp_path, gzipped):
    from warcio.archiveiterator import ArchiveIterator

    copy, output = _cleaned(tmp_path, KEPT_AS_THEY_CAME + [PAGE], gzipped)
    assert copy.startswith(b"".join(KEPT_AS_THEY_CAME))  # (no digest added, no header rewritten)
    with open(output, "rb") as f:  # (and warcio's own check of the digests finds them right)
        read = [(r.rec_type, r.digest_checker.passed) for r in ArchiveIterator(f, check_digests=True)
                if r.content_stream().read() is not None]
    assert read == [("request", None), ("response", True), ("metadata", None), ("response", True)]
