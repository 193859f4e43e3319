"""Property-based tests where bad input enters: the decoders and the WARC reader (hypothesis).

Whatever bytes arrive, decoding gives text and never raises; a Content-Encoding body gives its
bytes or a named error; and whatever damage is done to a valid .warc.gz, reading never crashes,
never loses an intact record that follows the damage past a gzip member boundary, and its counts
add up.  Examples are bounded (CI has two cores) and have no deadline (a first call imports).
"""

from __future__ import annotations

import gzip
import io
import zlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from plexity_plugins.extractors import decode_html, decode_html_counted
from plexity_plugins.io.inputs import FILE_PROBLEMS, RECORD_SKIPS, WarcFile, decode_content, dechunk
from plexity_plugins.errors import TooLarge, Undecodable
from plexity_plugins.scoring.scorer import sanitize
from warc_corpus import ARTICLE, page, record_bytes

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WARC = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CONTENT_TYPES = st.one_of(
    st.none(),
    st.sampled_from(["text/html", "text/html; charset=utf-8", "text/html; charset=utf-16", "text/html; charset=bogus",
                     "text/html; charset=windows-1252", "text/html; charset=", "text/html; charset=\"x", ";;;"]),
    st.text(max_size=40),
)
DECLARATIONS = st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b'<meta charset="utf-16">',
                                b'<?xml version="1.0" encoding="UTF-32"?>', b'<meta charset="shift_jis">',
                                b'<meta http-equiv="content-type" content="text/html; charset=gb18030">'])


# -- decoders -------------------------------------------------------------------------------

@FAST
@given(declaration=DECLARATIONS, body=st.binary(max_size=400), content_type=CONTENT_TYPES)
def test_decoding_any_bytes_gives_text_and_never_raises(declaration, body, content_type):
    text, encoding = decode_html(declaration + body, content_type)
    assert isinstance(text, str) and isinstance(encoding, str)
    counted, replaced = decode_html_counted(declaration + body, content_type)
    assert counted == text and replaced >= 0


@FAST
@given(text=st.text(max_size=300))
def test_utf8_round_trips(text):
    declared = '<meta charset="utf-8">' + text
    assert decode_html(declared.encode("utf-8")) == (declared, "utf-8")
    assert decode_html(text.encode("utf-8"), "text/html; charset=utf-8")[0] == text.removeprefix("\ufeff")
    assert decode_html_counted(text.encode("utf-8"), "text/html; charset=UTF-8")[1] == 0


@FAST
@given(data=st.binary(max_size=400))
def test_sanitizing_any_bytes_gives_text(data):
    text, replaced = sanitize(data)
    assert isinstance(text, str) and replaced >= 0


@FAST
@given(data=st.one_of(st.binary(max_size=300),
                      st.binary(max_size=300).map(gzip.compress).flatmap(
                          lambda z: st.integers(0, len(z)).map(lambda cut: z[:cut]))),
       encoding=st.sampled_from(["gzip", "x-gzip", "deflate", "br", "identity", None, "zstd"]))
def test_a_content_encoding_body_decodes_or_names_its_fault(data, encoding):
    try:
        assert isinstance(decode_content(data, encoding, 10_000), bytes)
    except (Undecodable, TooLarge):
        pass
    assert isinstance(dechunk(data), bytes)


def test_a_compression_bomb_stops_at_the_cap():
    with pytest.raises(TooLarge):
        decode_content(zlib.compress(bytes(10**6)), "deflate", 10_000)


# -- the WARC reader --------------------------------------------------------------------------

RECORDS = 6
MEMBERS = [gzip.compress(record_bytes(f"http://t/{i}", page(ARTICLE, f"Record {i}.").encode()))
           for i in range(RECORDS)]
PLAIN = [record_bytes(f"http://t/{i}", page(ARTICLE, f"Record {i}.").encode()) for i in range(RECORDS)]


@st.composite
def damaged_members(draw):
    """(the file's bytes, the URIs of the records whose members the damage left whole)."""
    members = list(MEMBERS)
    k = draw(st.integers(0, RECORDS - 1))
    kind = draw(st.sampled_from(["overwrite", "cut", "insert", "replace"]))
    member = members[k]
    if kind == "overwrite":  # bytes inside one member changed
        at = draw(st.integers(0, len(member) - 1))
        noise = draw(st.binary(min_size=1, max_size=40))
        members[k] = member[:at] + noise + member[at + len(noise):]
    elif kind == "cut":  # one member cut short (a lost block)
        members[k] = member[:draw(st.integers(0, len(member) - 1))]
    elif kind == "replace":  # one member replaced by garbage
        members[k] = draw(st.binary(max_size=600))
    else:  # garbage between two members: every record stays whole
        members[k] = draw(st.binary(min_size=1, max_size=300)) + member
    whole = [f"http://t/{i}" for i in range(RECORDS) if i != k or kind == "insert"]
    return b"".join(members), whole


def _read(data: bytes):
    warc = WarcFile(io.BytesIO(data))
    records = list(warc)
    return records, warc


def _consistent(records, warc, size: int) -> None:
    assert warc.records == len(records) and [r.number for r in records] == list(range(1, len(records) + 1))
    for r in records:  # exactly one outcome each
        assert (r.payload is None) != (r.skip is None) and (r.skip is None or r.skip in RECORD_SKIPS)
    assert 0 <= warc.records_recovered <= warc.records
    assert 0 <= warc.bytes_skipped <= size
    assert warc.problem is None or warc.problem in FILE_PROBLEMS
    assert (warc.bytes_skipped > 0 or warc.records_recovered > 0) <= (warc.problem is not None)


@WARC
@given(damaged=damaged_members())
def test_damage_to_a_warc_gz_never_loses_a_whole_member(damaged):
    data, whole = damaged
    records, warc = _read(data)
    _consistent(records, warc, len(data))
    read = {r.uri: r for r in records if r.payload is not None}
    for uri in whole:
        assert uri in read, (uri, warc.problem_detail)
        assert f"Record {uri.rsplit('/', 1)[1]}.".encode() in read[uri].payload


@WARC
@given(k=st.integers(0, RECORDS - 1), at=st.integers(0, 2000), noise=st.binary(min_size=1, max_size=60),
       cut=st.booleans())
def test_damage_to_an_uncompressed_warc_never_crashes_and_counts_add_up(k, at, noise, cut):
    records = list(PLAIN)
    at = min(at, len(records[k]) - 1)
    records[k] = records[k][:at] if cut else records[k][:at] + noise + records[k][at + len(noise):]
    data = b"".join(records)
    got, warc = _read(data)
    _consistent(got, warc, len(data))
    # the records after the damaged one are read, but for the next one if its first line no longer
    # starts a line (the damaged record's end lost with its last line break: the two run together)
    read = {r.uri for r in got if r.payload is not None}
    first = k + 1 if records[k].endswith(b"\n") else k + 2
    assert all(f"http://t/{i}" in read for i in range(first, RECORDS)), warc.problem_detail
