"""Property-based tests where bad input enters: the decoders and the WARC reader (hypothesis).

Whatever bytes arrive, decoding gives text and never raises; a Content-Encoding body gives its
bytes or a named error; and whatever damage is done to a valid .warc.gz, reading never crashes,
never loses an intact record that follows the damage past a gzip member boundary, and its counts
add up.  Examples are bounded (CI has two cores) and have no deadline (a first call imports).
"""

from __future__ import annotations

import gzip
import io
import re
import zipfile
import zlib

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from plexity_plugins.extractors import decode_html, decode_html_counted
from plexity_plugins.io.inputs import (FILE_PROBLEMS, RECORD_SKIPS, UNSUPPORTED_COMPRESSION, WarcFile, decode_content,
                                      dechunk)
from plexity_plugins.errors import TooLarge, Undecodable
from plexity_plugins.io.read_outcomes import NOT_A_WARC, UNREADABLE_FILE
from plexity_plugins.io.wacz_files import WaczFile
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
    assert warc.problem is None or warc.problem in (*FILE_PROBLEMS, UNSUPPORTED_COMPRESSION)
    assert (warc.bytes_skipped > 0 or warc.records_recovered > 0) <= (warc.problem is not None)


@WARC
@given(damaged=damaged_members())
@example(damaged=(b"WARC/" + b"".join(MEMBERS), [f"http://t/{i}" for i in range(RECORDS)]))  # (garbage that
# begins as an uncompressed record does, before the first member: a fresh root's hypothesis run found it)
@example(damaged=(b"".join(MEMBERS)[:3] + b"\x04" + b"".join(MEMBERS)[4:],  # (the first member's header says
                  [f"http://t/{i}" for i in range(1, RECORDS)]))  # it has an extra field: it reads as empty)
@example(damaged=(b"filedesc://" + b"".join(MEMBERS)[11:],  # (damage that begins as an ARC file does: it was read as
                  [f"http://t/{i}" for i in range(1, RECORDS)]))  # an ARC, and every whole member after it lost)
@example(damaged=(b"(\xb5/\xfd" + b"".join(MEMBERS),  # (garbage that begins as a zstd stream does: the file was
                  [f"http://t/{i}" for i in range(RECORDS)]))  # refused as a zstd WARC; CI's hypothesis run found it)
@example(damaged=(b"\xfd7zXZ\x00" + b"".join(MEMBERS)[6:],  # (an xz stream's magic over the first member's start)
                  [f"http://t/{i}" for i in range(1, RECORDS)]))
def test_damage_to_a_warc_gz_never_loses_a_whole_member(damaged):
    data, whole = damaged
    records, warc = _read(data)
    _consistent(records, warc, len(data))
    read = {r.uri: r for r in records if r.payload is not None}
    for uri in whole:
        assert uri in read, (uri, warc.problem_detail)
        assert f"Record {uri.rsplit('/', 1)[1]}.".encode() in read[uri].payload



def _wacz(method: int) -> bytes:
    """A small WACZ: the records above as a .warc.gz and a .warc under archive/ (stored or deflated), and its pages."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as wacz:
        wacz.writestr("archive/a.warc.gz", b"".join(MEMBERS[:3]), compress_type=method)
        wacz.writestr("archive/b.warc", b"".join(PLAIN[3:]), compress_type=method)
        wacz.writestr("pages/pages.jsonl", b'{"format": "json-pages-1.0", "id": "pages"}\n')
        wacz.writestr("datapackage.json", b'{"profile": "data-package", "wacz_version": "1.1.1"}')
    return data.getvalue()


WACZS = {method: _wacz(method) for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)}


@WARC
@given(method=st.sampled_from(sorted(WACZS)), edits=st.lists(st.tuples(st.integers(-400, 5000), st.binary(
    min_size=1, max_size=12)), max_size=4), cut=st.one_of(st.none(), st.integers(0, 5000)))
def test_damage_to_a_wacz_never_crashes_and_each_warc_in_it_is_read_or_named(method, edits, cut):
    """Bytes written over a WACZ anywhere (its members, their headers, its directory: positions below 0 count from
    its end) or the file cut short: each WARC member is read, its counts adding up, or named; else the file is."""
    data = bytearray(WACZS[method])
    for at, noise in edits:
        at %= len(data)
        data[at:at + len(noise)] = noise
    if cut is not None:
        data = data[:cut % len(data)]
    wacz = WaczFile(io.BytesIO(bytes(data)), "f.wacz")
    members = list(wacz)
    assert members or wacz.problem in (NOT_A_WARC, UNREADABLE_FILE) and wacz.problem_detail
    for member in members:
        assert (member.fileobj is None) == bool(member.skip)
        if member.fileobj is not None:
            warc = WarcFile(member.fileobj, name=member.name)
            _consistent(list(warc), warc, member.fileobj.seek(0, io.SEEK_END))


@WARC
@given(k=st.integers(0, RECORDS - 1), at=st.integers(0, 2000), noise=st.binary(min_size=1, max_size=60),
       cut=st.booleans())
@example(k=0, at=0, noise=b"\x1f\x8b", cut=False)  # (gzip's magic bytes over an uncompressed file's start)
@example(k=0, at=0, noise=b"\x1f\x8b\x08\x00", cut=False)  # (a whole gzip header over it)
@example(k=0, at=0, noise=b"BZh91AY&SY", cut=False)  # (a bzip2 stream's magic over it: refused as a bzip2 WARC)
@example(k=0, at=0, noise=b"(\xb5/\xfd", cut=False)  # (a zstd stream's)
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


# -- chunked, multi-member and injected-record shapes (issue 38) -------------------------------

SIZE_LINES = st.sampled_from([b"-4", b"+4", b"0x10", b"1_0", b" 4", b"4 ", b"", b"-0", b"ffffffffffffffffffff",
                              b"4;", b"\x00", b"\xff"])


def _chunked(body: bytes, cuts: list[int], upper: bool, extension: bool) -> bytes:
    points = sorted({0, len(body), *(min(c, len(body)) for c in cuts)})
    chunks = [body[a:b] for a, b in zip(points, points[1:]) if b > a]
    return b"".join((b"%X" if upper else b"%x") % len(c) + (b";name=value" if extension else b"") + b"\r\n" + c
                    + b"\r\n" for c in chunks) + b"0\r\n\r\n"


@FAST
@given(body=st.binary(max_size=600), cuts=st.lists(st.integers(0, 600), max_size=6), upper=st.booleans(),
       extension=st.booleans())
def test_a_chunked_body_dechunks_to_its_bytes(body, cuts, upper, extension):
    assert dechunk(_chunked(body, cuts, upper, extension)) == body


@FAST
@given(size=SIZE_LINES, rest=st.binary(max_size=300), prefix=st.binary(max_size=40))
def test_dechunking_ends_on_any_size_line_and_never_grows_the_body(size, rest, prefix):
    for data in (size + b"\r\n" + rest, prefix + b"\r\n" + size + b"\r\n" + rest, b"4\r\nabcd\r\n" + size + b"\r\n"):
        assert len(dechunk(data)) <= len(data)


def _members(body: bytes, cuts: list[int], empties: int) -> bytes:
    points = sorted({0, len(body), *(min(c, len(body)) for c in cuts)})
    members = [gzip.compress(body[a:b]) for a, b in zip(points, points[1:])] or [gzip.compress(b"")]
    return b"".join(members) + gzip.compress(b"") * empties


@FAST
@given(body=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=8), empties=st.integers(0, 40))
def test_a_gzip_body_of_many_members_inflates_to_its_bytes(body, cuts, empties):
    assert decode_content(_members(body, cuts, empties), "gzip", 10**6) == body


def test_a_flood_of_gzip_members_is_undecodable_at_its_bound():
    # (10 MB of empty members: inflating them took minutes, each member's leftover copied again)
    page, empty = gzip.compress(b"<html>hello</html>"), gzip.compress(b"")
    with pytest.raises(Undecodable, match="more than 1,000 gzip members"):
        decode_content(page + empty * 500_000, "gzip", 50_000_000)
    assert decode_content(page + empty * 999, "gzip", 10_000) == b"<html>hello</html>"  # (a thousand: read)


@st.composite
def encoded_warcs(draw):
    """(a WARC file, {uri: body}): records whose bodies are chunked, or gzipped in several
    members, or both, each record its own gzip member, all of them in one, or none gzipped."""
    bodies, records = {}, []
    for i in range(draw(st.integers(1, 4))):
        uri = f"http://t/{i}"
        body = page(ARTICLE, f"Record {i}.", draw(st.text(max_size=80))).encode()
        encoding = draw(st.sampled_from(["chunked", "members", "both", "none"]))
        data, headers = body, []
        if encoding in ("members", "both"):
            data = _members(data, draw(st.lists(st.integers(0, len(data)), max_size=5)), draw(st.integers(0, 5)))
            headers.append(("Content-Encoding", "gzip"))
        if encoding in ("chunked", "both"):
            data = _chunked(data, draw(st.lists(st.integers(0, len(data)), max_size=5)), draw(st.booleans()),
                            draw(st.booleans()))
            headers.append(("Transfer-Encoding", "chunked"))
        bodies[uri] = body
        records.append(record_bytes(uri, data, headers=headers))
    layout = draw(st.sampled_from(["member per record", "one member", "plain"]))
    if layout == "member per record":
        return b"".join(gzip.compress(r) for r in records), bodies
    if layout == "one member":
        return gzip.compress(b"".join(records)), bodies
    return b"".join(records), bodies


@WARC
@given(warc=encoded_warcs())
def test_chunked_and_multi_member_bodies_read_back_as_they_were_sent(warc):
    data, bodies = warc
    records, file = _read(data)
    _consistent(records, file, len(data))
    assert {r.uri: r.payload for r in records} == bodies and file.problem is None


@st.composite
def injected_warcs(draw):
    """(a WARC file, the intact records' URIs, the carrier's block cut where its Content-Length
    ends it): a record whose Content-Length is too short, whose page holds a complete WARC record
    (not at the page's end, and not after a blank line), between intact records."""
    intact = [f"http://t/intact-{i}" for i in range(draw(st.integers(0, 3)) + draw(st.integers(0, 3)))]
    before = draw(st.integers(0, len(intact)))
    evil = record_bytes("http://evil/injected", page("Injected. " * draw(st.integers(1, 20))).encode())
    lead = draw(st.text(min_size=1, max_size=200).filter(lambda t: "\n" not in t and "\r" not in t))
    body = page(ARTICLE, lead).encode() + evil + page(ARTICLE, "After it.").encode()
    full = record_bytes("http://t/carrier", body)
    head, _, rest = full.partition(b"\r\n\r\n")
    block = rest[:-4]
    cut = draw(st.integers(0, len(block) - 1))
    records = [record_bytes(uri, page(ARTICLE, f"Record {i}.").encode()) for i, uri in enumerate(intact)]
    records.insert(before, record_bytes("http://t/carrier", body, content_length=str(cut)))
    gzipped = draw(st.booleans())
    data = b"".join(gzip.compress(r) for r in records) if gzipped else b"".join(records)
    return data, intact, block[cut:cut + 4]


@WARC
@given(warc=injected_warcs())
def test_a_record_inside_a_page_never_becomes_a_record(warc):
    data, intact, after_cut = warc
    records, file = _read(data)
    _consistent(records, file, len(data))
    documents = [r.uri for r in records if r.payload is not None]
    assert "http://evil/injected" not in documents, file.problem_detail
    assert [uri for uri in documents if uri in intact] == intact, file.problem_detail
    # the carrier is kept only where its Content-Length, though too short, ends at a blank line:
    # nothing then proves it wrong
    assert "http://t/carrier" not in documents or re.match(rb"\r?\n\r?\n", after_cut), file.problem_detail
