"""Corpus readers: a corpus in its distributed format -> documents (a stable key and a list
of sentences), every document left out counted by reason.

- `BncReader`: the British National Corpus, XML Edition (``Texts/A/A0/A00.xml`` ...), one
  document per text, its ``<s>`` elements as sentences; written (``<wtext>``) texts only
  unless told otherwise;
- `Cord19Reader`: CORD-19's ``metadata.csv``, one document per unique ``cord_uid``, the
  abstract split into sentences;
- `TextReader`: plain UTF-8 files, one document (or sentence) per line.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import json
import logging
import lzma
import shlex
import sys
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..io.decoding import utf16_by_its_nuls
from ..io.folders import walk
from ..io.http_codings import zstd_module
from ..io.payload_sniffing import binary_kind
from ..errors import CorpusError, TrainError

logger = logging.getLogger(__name__)

CORPORA = ("bnc", "cord19", "text")

CORPUS_DESCRIPTIONS = {
    "bnc": "British National Corpus, XML Edition",
    "cord19": "CORD-19 metadata.csv abstracts",
    "text": "plain text",
}
CORPUS_LICENCES = {
    "bnc": ("derived from the British National Corpus: redistribution is governed by the BNC User "
            "Licence (check it before sharing this model)"),
    "cord19": ("derived from CORD-19 abstracts: each article carries its own licence (see the "
               "`license` column of metadata.csv); check them before sharing this model"),
    "text": "derived from the training text: its licence applies",
}


# -- corpus readers -------------------------------------------------------------------------------


@dataclass
class Document:
    key: str  # stable identifier (BNC text id, cord_uid, file:line): decides the hold-out
    sentences: list[str]


class SkipLog:
    """Counts every document left out of training, by reason, and optionally writes them
    out (JSON lines: file, id, reason, detail)."""

    def __init__(self, out_path: Path | None = None):
        self.counts: Counter = Counter()
        self._out = open(out_path, "w", encoding="utf-8") if out_path else None

    def skip(self, reason: str, file: Path | str, doc_id: str | None = None, detail: str = "") -> None:
        self.counts[reason] += 1
        if self._out:
            record = {"file": str(file), "id": doc_id, "reason": reason}
            if detail:
                record["detail"] = detail
            self._out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._out:
            self._out.close()
            self._out = None


def input_paths(inputs: str | Path | Iterable[str | Path]) -> list[Path]:
    """Corpus or sample inputs as paths: one path given alone is one input (list("news.txt") would be a
    list of one-letter files, 'n: no such file or directory')."""
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    return [Path(p).expanduser() for p in inputs]


def _split(text: str) -> list[str]:
    from ..text.sentences import split_sentences  # (BlingFire imports numpy: not for `plexity calibrate --help`)

    return [text[a:b] for a, b in split_sentences(text)]


READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)  # (gzip: EOFError on a truncated file)
_DECOMPRESSORS = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}
_DECOMPRESS_COMMANDS = {"gzip": "gzip -dc", "bzip2": "bzip2 -dc", "xz": "xz -dc", "zstd": "zstd -dc"}
_SNIFFED = 4096


def compression_of(path: Path) -> str | None:
    """"gzip", "bzip2", "xz" or "zstd" by a file's first bytes, whatever its name says; None for none."""
    with open(path, "rb") as f:
        kind = binary_kind(f.read(64))
    return kind if kind in _DECOMPRESS_COMMANDS else None


def open_corpus_bytes(path: Path, text: bool = True):
    """The bytes of a corpus or sample file, decompressed as its first bytes say (gzip, bzip2, xz or zstd), not as
    its name does; with `text`, CorpusError for bytes that are no UTF-8 text at all (a PDF, a ZIP archive, binary
    data, UTF-16).  (By its name, a .txt.bz2, .txt.xz or a gzip file named .txt was "not UTF-8 at line 1 ...:
    convert it first, e.g. from windows-1252 (Latin-1)", and UTF-16 text without a byte order mark, a Windows
    "Unicode" text file, was trained on as it came: every character a word and NUL, 26,762 tokens of a vocabulary of
    26 for 3,163 words, the model installed without a word.)"""
    compression = compression_of(path)
    if compression == "zstd":
        module = zstd_module()
        if module is None:
            stem = Path(path.name).stem
            raise CorpusError(f"{path}: zstd-compressed, and no zstd decoder is installed: decompress it first, "
                              f"zstd -dc {shlex.quote(str(path))} > {shlex.quote(stem)}, or pip install backports.zstd")
        stream = module.open(path, "rb")
    else:
        stream = _DECOMPRESSORS.get(compression, open)(path, "rb")
    if not text:
        return stream
    try:
        head = stream.peek(_SNIFFED)[:_SNIFFED]
        problem = not_text_bytes(head)
    except READ_ERRORS as exc:
        stream.close()
        raise CorpusError(f"{path}: cannot read: {exc}") from exc
    if problem:
        stream.close()
        name = Path(path.name).stem if compression else path.name
        convert = f"{_DECOMPRESS_COMMANDS[compression]} {shlex.quote(str(path))} | " if compression else ""
        if problem.startswith("UTF-16"):
            raise CorpusError(f"{path}: {problem}, not UTF-8: convert it first, {convert}iconv -f {problem} -t UTF-8"
                              f"{'' if compression else ' ' + shlex.quote(str(path))} > "
                              f"{shlex.quote(Path(name).stem + '.utf8.txt')}")
        held = f" (inside its {compression} compression)" if compression else ""
        raise CorpusError(f"{path}: {problem}{held}, not text: give UTF-8 text, one document or sentence a line")
    return stream


def not_text_bytes(head: bytes) -> str | None:
    """What the first bytes of a file say it is when it is no UTF-8 text: "UTF-16LE" / "UTF-16BE" (with or without a
    byte order mark), "a PDF" ..., else None."""
    if head.startswith(b"\xff\xfe") and not head.startswith(b"\xff\xfe\0\0"):
        return "UTF-16LE"
    if head.startswith(b"\xfe\xff"):
        return "UTF-16BE"
    wide = utf16_by_its_nuls(head)
    if wide:
        return wide.upper().replace("16-", "16")
    kind = binary_kind(head)
    if kind is None:
        return None
    return kind if kind.startswith("binary") else f"{'an' if kind[0] in 'AEIOU' else 'a'} {kind} file"


def _open_text(path: Path):
    """A UTF-8 text stream of a plain or compressed file (`open_corpus_bytes`; newline="" as the csv module wants),
    without the byte order mark a file saved as "UTF-8 with BOM" (Excel's "CSV UTF-8", Notepad) starts with: it was
    read as part of the first line, so a metadata.csv saved by Excel was "missing column(s) cord_uid (header:
    \ufeffcord_uid, ...)" and a text file's first sentence began with a token "\ufeff" that no text scored has (the
    scorer drops it)."""
    return io.TextIOWrapper(open_corpus_bytes(path), encoding="utf-8-sig", newline="")


def not_utf8_message(path: Path) -> str | None:
    """What to say of a plain or gzipped file that is not UTF-8 text: the line and byte of its first
    undecodable bytes, counted from 1, and what to do (None when it decodes whole). The decoder's own error
    gives a position in the chunk it was decoding, 8 KiB read ahead of the line the reader had reached:
    "after line 4123 ... in position 1241" of a file whose bad byte is on line 4143. A file that cannot be read
    to its end (a gzip file cut short) raises OSError, EOFError or zlib.error."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with open_corpus_bytes(path, text=False) as f:
        while chunk := f.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                bad = exc.start - len(exc.object) + len(chunk)  # (the decoder keeps an unfinished character)
                bad = max(bad, 0)
                before = chunk[:bad]
                line += before.count(b"\n")
                column = bad - (before.rfind(b"\n") + 1) + 1
                found = chunk[bad:bad + 4]
                break
            line += chunk.count(b"\n")
        else:
            try:
                decoder.decode(b"", final=True)
                return None
            except UnicodeDecodeError:  # (the file ends inside a character)
                found, column = b"", None
    where = f"line {line}, byte {column}" if column else f"its end, line {line}"
    shown = f" ({found!r}...)" if found else ""
    compression = compression_of(path)
    read = f"{_DECOMPRESS_COMMANDS[compression]} {path} | iconv" if compression else "iconv"
    given = "" if compression else f" {path}"
    name = Path(path.name).stem if compression else path.name
    return (f"not UTF-8 at {where}{shown}: convert it first, e.g. from windows-1252 (Latin-1): "
            f"{read} -f windows-1252 -t utf-8{given} > {Path(name).stem}.utf8.txt")


def _undecodable(path: Path, exc: Exception) -> CorpusError:
    try:
        said = not_utf8_message(path)
    except READ_ERRORS:
        said = None
    return CorpusError(f"{path}: {said or f'not UTF-8: {exc}'}; or give --skip-bad-files to leave the file out")


class CorpusReader:
    """Base of the readers: finds the input files and iterates documents.

    Args:
        inputs: files, or directories searched recursively for `suffixes` (or one of them).
        skips: where left-out documents are counted (a new SkipLog if None).
        skip_bad_files: a malformed file is counted and logged as a skip instead of
            stopping the run with an error.
    """

    suffixes: tuple[str, ...] = ()

    def __init__(self, inputs: Iterable[str | Path], skips: SkipLog | None = None, skip_bad_files: bool = False):
        self.inputs = input_paths(inputs)
        self.skips = skips or SkipLog()
        self.skip_bad_files = skip_bad_files
        self.files_read = 0
        self.documents_read = 0

    def files(self) -> list[Path]:
        found: list[Path] = []
        for path in self.inputs:
            if path.is_dir():
                # (walked without recursion: Path.rglob recursed once a level, and a corpus folder 1,200 levels deep
                # stopped plexity train with a RecursionError traceback)
                found += sorted(p for p in (Path(folder) / name for folder, _, names in walk(path) for name in names)
                                if p.is_file() and p.name.endswith(self.suffixes) and not p.name.startswith("."))
            elif path.is_file():
                found.append(path)
            else:
                raise CorpusError(f"{path}: no such file or directory")
        if not found:
            raise CorpusError(f"empty corpus: no {'/'.join(self.suffixes)} files in "
                              f"{', '.join(map(str, self.inputs))}{self._left_out()}")
        return found

    def _left_out(self) -> str:
        """What the folders given hold instead of corpus files, and what to do with it: a folder of JSON lines (a
        datatrove dataset, `plexity run`'s documents) was "empty corpus: no .txt/.txt.gz/.text/.text.gz files in
        out/documents", nothing said of the 12 files read past."""
        others = sorted(p for path in self.inputs if path.is_dir() for p in path.rglob("*")
                        if p.is_file() and not p.name.startswith("."))
        if not others:
            return ""
        named = ", ".join(str(p) for p in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        said = f"; it holds {len(others)} other file(s) ({named})"
        if isinstance(self, TextReader):
            jsonl = [p for p in others if p.name.endswith((".jsonl", ".jsonl.gz"))]
            if jsonl:
                gz = [p for p in jsonl if p.name.endswith(".gz")]
                pattern = (gz or jsonl)[0].parent / ("*.jsonl.gz" if gz else "*.jsonl")
                read = f"gzip -dc {pattern}" if gz else f"cat {pattern}"
                return (f"{said}: JSON lines are documents, not text: write their text out first, e.g. {read} | "
                        f"jq -r .text > corpus.txt, and give that file")
            if any(".warc" in p.name for p in others):
                return (f"{said}: a crawl is not text: plexity run FOLDER -o out cleans it into out/documents, "
                        f"JSON lines: gzip -dc out/documents/*.jsonl.gz | jq -r .text > corpus.txt gives their text")
            if any(p.name.endswith((".html", ".htm", ".html.gz", ".htm.gz")) for p in others):
                return (f"{said}: pages are not text: plexity clean FOLDER -o pages-text writes each page's text to "
                        f"a .txt file there; give that folder")
        return f"{said}: give such a file by its own name to read it as {CORPUS_DESCRIPTIONS_BY_READER[type(self)]}"

    def check_file(self, path: Path) -> None:
        """With --skip-bad-files, raise CorpusError before a document of the file is read if it cannot be read
        whole: a file left out gives no document (its lines before a bad byte were trained on, the file counted
        as skipped all the same)."""

    def __iter__(self) -> Iterator[Document]:
        for path in self.files():
            self.files_read += 1
            try:
                if self.skip_bad_files:
                    self.check_file(path)
                for doc in self.read_file(path):
                    self.documents_read += 1
                    yield doc
            except CorpusError as exc:
                if not self.skip_bad_files:
                    raise
                logger.warning("skipping %s", exc)
                self.skips.skip("unreadable file", path, detail=str(exc))

    def read_file(self, path: Path) -> Iterator[Document]:
        raise NotImplementedError


def _local_name(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class BncReader(CorpusReader):
    """The BNC XML Edition: TEI files (``Texts/A/A0/A00.xml``), one text each, whose
    ``<wtext>`` holds a written text and ``<stext>`` a spoken one.  Sentences are ``<s>``
    elements of ``<w>`` (word) and ``<c>`` (punctuation) elements whose text carries its
    own trailing space, so a sentence is the concatenation of their texts.

    Args:
        written_only: skip spoken texts (the paper's choice); they are counted as
            skipped, and parsing a spoken file stops at its ``<stext>`` tag.
    """

    suffixes = (".xml", ".xml.gz")

    def __init__(self, inputs, skips=None, skip_bad_files=False, written_only: bool = True):
        super().__init__(inputs, skips, skip_bad_files)
        self.written_only = written_only
        self.texts = Counter()  # written / spoken texts read

    def read_file(self, path: Path) -> Iterator[Document]:
        from lxml import etree

        doc_id, kind, sentences = path.name.split(".")[0], None, []
        try:
            with open_corpus_bytes(path, text=False) as f:
                # Streaming: each <s> is read, then freed with the siblings before it.
                for event, elem in etree.iterparse(f, events=("start", "end"), resolve_entities=False):
                    tag = _local_name(elem.tag)
                    if event == "start":
                        if tag == "bncDoc":
                            doc_id = elem.get("{http://www.w3.org/XML/1998/namespace}id") or doc_id
                        elif tag in ("wtext", "stext"):
                            kind = "written" if tag == "wtext" else "spoken"
                            if kind == "spoken" and self.written_only:
                                break
                        continue
                    if tag == "s" and kind is not None:
                        words = "".join(t.text or "" for t in elem.iter() if _local_name(t.tag) in ("w", "c"))
                        sentence = " ".join(words.split())
                        if sentence:
                            sentences.append(sentence)
                        elem.clear(keep_tail=True)
                        while elem.getprevious() is not None:
                            del elem.getparent()[0]
        except etree.XMLSyntaxError as exc:
            raise CorpusError(f"{path}: malformed XML: {exc}") from exc
        except READ_ERRORS as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from exc
        if kind is None:
            logger.warning("%s: not a BNC text (no <wtext> or <stext>), skipped", path)
            self.skips.skip("not a BNC text (no <wtext> or <stext>)", path, doc_id)
            return
        self.texts[kind] += 1
        if kind == "spoken" and self.written_only:
            self.skips.skip("spoken text (--written-only)", path, doc_id)
        elif not sentences:
            self.skips.skip("no sentences", path, doc_id)
        else:
            yield Document(doc_id, sentences)


def _csv_field_limit() -> None:
    # Abstracts can exceed the csv module's 128 KiB default; sys.maxsize overflows a C long on some platforms.
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


class Cord19Reader(CorpusReader):
    """CORD-19's ``metadata.csv`` (a header with ``cord_uid``, ``title``, ``abstract`` ...;
    quoted multi-line fields), streamed row by row.  The paper trained on the abstracts:
    a document is one abstract.  Rows with an empty abstract are skipped, and only the
    first row with an abstract is kept for each ``cord_uid`` (the file lists a paper
    once per source); both are counted."""

    suffixes = ("metadata.csv", "metadata.csv.gz")
    REQUIRED = ("cord_uid", "abstract")

    def __init__(self, inputs, skips=None, skip_bad_files=False):
        super().__init__(inputs, skips, skip_bad_files)
        self.seen: set[str] = set()

    def read_file(self, path: Path) -> Iterator[Document]:
        _csv_field_limit()
        try:
            with _open_text(path) as f:
                reader = csv.DictReader(f)
                try:
                    header = reader.fieldnames
                    if not header:
                        raise CorpusError(f"{path}: empty file, expected a CORD-19 metadata.csv header")
                    missing = [c for c in self.REQUIRED if c not in header]
                    if missing:
                        raise CorpusError(
                            f"{path}: not a CORD-19 metadata.csv: missing column(s) {', '.join(missing)} "
                            f"(header: {', '.join(header[:12])})")
                    for row in reader:
                        uid = (row["cord_uid"] or "").strip()
                        abstract = (row["abstract"] or "").strip()
                        if not uid:
                            self.skips.skip("no cord_uid", path, f"line {reader.line_num}")
                        elif not abstract:
                            self.skips.skip("empty abstract", path, uid)
                        elif uid in self.seen:
                            self.skips.skip("duplicate cord_uid", path, uid)
                        else:
                            self.seen.add(uid)
                            yield Document(uid, _split(abstract))
                except csv.Error as exc:
                    raise CorpusError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
                except UnicodeDecodeError as exc:
                    raise _undecodable(path, exc) from exc
        except READ_ERRORS as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from exc

    def check_file(self, path: Path) -> None:
        _check_text_file(path)


def not_plain_text(first_line: str, path: Path) -> str | None:
    """What a file is, whose first line this is, when it is text of another format that would be read as
    sentences (its markup, field names and ids trained on, or scored as clean text), with what to give
    instead; None for plain text. Shared by `TextReader` and calibration's samples."""
    line = first_line.strip()
    if line.startswith("WARC/"):
        return "a WARC file, not text"
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):  # (datatrove's JsonlWriter, and most exports, write one document a line)
            field = next((key for key in ("text", "content", "abstract") if isinstance(record.get(key), str)), "text")
            read = f"gzip -dc {path} | jq -r .{field}" if path.name.endswith(".gz") else f"jq -r .{field} {path}"
            return (f"JSON lines, not text (write its {field!r} field out first, e.g. "
                    f"{read} > {Path(path.name.removesuffix('.gz')).stem}.txt)")
    columns = [column.strip().strip('"') for column in line.split(",")]
    if "cord_uid" in columns and "abstract" in columns:
        return "CORD-19's metadata.csv, not text (`plexity train --corpus cord19` trains on its abstracts)"
    return None


MAX_LINE_CHARS = 1 << 20  # a longer line (a whole corpus without a line break) is read in pieces of about this size


def _pieces_of_lines(f, limit: int) -> Iterator[tuple[int, int, str]]:
    """(line number, piece, text) of each line of the text stream `f`: a line longer than `limit` characters in
    pieces of at most `limit` (piece 0, 1 ...), each cut after its last white space (where it has one), so that no
    word is cut in two.  (A line was read whole: a 50 MB corpus without a line break took 385 MB to read, 7.7 times
    its size, a 2 GB one 15 GB; and as one document it was held out whole or not at all, so no threshold was set.)"""
    lineno, piece, rest, cr = 0, 0, "", False
    while chunk := f.readline(want := limit - len(rest)):
        if cr and chunk == "\n":  # (the \n of a \r\n that the piece before ended between)
            cr = False
            continue
        cr = len(chunk) == want and chunk.endswith("\r")
        text = rest + chunk
        if chunk.endswith(("\n", "\r")) or len(chunk) < want:  # (the line's end, or the file's)
            lineno += 1
            yield lineno, piece, text
            piece, rest = 0, ""
            continue
        cut = max(text.rfind(" "), text.rfind("\t")) + 1 or len(text)
        yield lineno + 1, piece, text[:cut]
        piece, rest = piece + 1, text[cut:]
    if rest:
        yield lineno + 1, piece, rest


class TextReader(CorpusReader):
    """Plain UTF-8 text (``.txt``, ``.text`` and gzipped in directories; any file named directly),
    one document or one sentence per line; a line is split into sentences like any
    document.  Blank lines are ignored."""

    suffixes = (".txt", ".txt.gz", ".text", ".text.gz")  # (as `plexity clean` reads text: file_kinds.TEXT_SUFFIXES)

    max_line_chars = MAX_LINE_CHARS

    def read_file(self, path: Path) -> Iterator[Document]:
        lineno = 0
        try:
            with _open_text(path) as f:
                for lineno, piece, line in _pieces_of_lines(f, self.max_line_chars):
                    if lineno == 1 and not piece and (kind := not_plain_text(line, path)):
                        raise CorpusError(f"{path}: {kind}; --corpus text reads plain text, one document a line")
                    line = line.strip()
                    if line:
                        yield Document(f"{path.name}:{lineno}" + (f"#{piece}" if piece else ""), _split(line))
        except UnicodeDecodeError as exc:
            raise _undecodable(path, exc) from exc
        except READ_ERRORS as exc:
            raise CorpusError(f"{path}: cannot read (after line {lineno}): {exc}") from exc

    def check_file(self, path: Path) -> None:
        _check_text_file(path)


def _check_text_file(path: Path) -> None:
    """A text or CSV file read to its end, decompressed and decoded, before any of its documents is trained on."""
    try:
        # (UTF-16, a PDF ... named for what it is, not "not UTF-8 ... from windows-1252")
        open_corpus_bytes(path).close()
        said = not_utf8_message(path)
    except READ_ERRORS as exc:
        raise CorpusError(f"{path}: cannot read: {exc}") from exc
    if said:
        raise CorpusError(f"{path}: {said}")


CORPUS_DESCRIPTIONS_BY_READER = {BncReader: "a BNC text", Cord19Reader: "CORD-19's metadata.csv",
                                 TextReader: "text"}


def make_reader(corpus: str, inputs, skips: SkipLog | None = None, skip_bad_files: bool = False,
                written_only: bool = True) -> CorpusReader:
    if corpus == "bnc":
        return BncReader(inputs, skips, skip_bad_files, written_only=written_only)
    if corpus == "cord19":
        return Cord19Reader(inputs, skips, skip_bad_files)
    if corpus == "text":
        return TextReader(inputs, skips, skip_bad_files)
    raise TrainError(f"unknown corpus format {corpus!r} (expected one of {', '.join(CORPORA)})")


