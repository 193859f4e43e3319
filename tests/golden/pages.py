"""The page set of the golden-output and compiled-vs-Python tests: owned by this repository.

Nothing here reads ../shared: the pages are

- ``sample-NN``: the HTML pages of examples/sample.warc.gz (a dozen made-up sites with their
  menus, cookie banners, share bars, footers ...);
- ``mix-NN``: pages assembled, with a seeded random generator, from the article paragraphs and
  boilerplate lines listed in examples/sample_truth.json, in layouts real sites use (menus
  before, footers after, boilerplate between paragraphs, lists, tables, long unpunctuated
  runs, pages with nothing but boilerplate);
- ``lang-xx``: pages in other languages (text written for this file), which the language check
  passes through unfiltered, and one English page quoting a little German;
- ``edge-NN``: text built to hit the edge cases of splitting and tokenising (non-ASCII letters and
  digits, combining marks, compatibility characters, control characters, runs longer than the
  sentence cap, lines of punctuation).

`pages()` is deterministic: the same code gives the same pages on every machine.
"""

from __future__ import annotations

import html
import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SAMPLE_WARC = REPO / "examples" / "sample.warc.gz"
SAMPLE_TRUTH = REPO / "examples" / "sample_truth.json"

OTHER_LANGUAGES = {
    "de": [
        "Der Gemeinderat hat am Dienstagabend den Haushalt für das kommende Jahr beschlossen.",
        "Mehr Geld fließt in die Sanierung der Straßen und in die Stadtbibliothek, die im Frühjahr "
        "ihre neuen Räume im alten Bahnhof bezieht.",
        "Die Bürgermeisterin sagte, man habe lange über die Kosten gestritten, am Ende aber eine "
        "Lösung gefunden, mit der alle Fraktionen leben könnten.",
        "Startseite | Politik | Wirtschaft | Sport | Kultur | Wetter",
        "Diese Website verwendet Cookies. Mit der Nutzung stimmen Sie der Verwendung zu.",
    ],
    "fr": [
        "Le conseil municipal a adopté mardi soir le budget de l'année prochaine après un long débat.",
        "La bibliothèque municipale déménagera au printemps dans l'ancienne gare, rénovée pour "
        "l'occasion, et ouvrira le dimanche pour la première fois.",
        "Selon la maire, les travaux de voirie commenceront dès la fin de l'hiver dans les quartiers "
        "les plus touchés par les intempéries.",
        "Accueil | Actualités | Sports | Culture | Météo",
        "Partager sur Facebook · Partager sur Twitter · Envoyer par courriel",
    ],
    "es": [
        "El ayuntamiento aprobó el martes por la noche el presupuesto del próximo año.",
        "La biblioteca municipal se trasladará en primavera a la antigua estación de tren, que ha "
        "sido restaurada durante los últimos dos años.",
        "La alcaldesa explicó que las obras en las calles empezarán a finales del invierno y que "
        "durarán aproximadamente seis meses.",
        "Inicio | Noticias | Deportes | Cultura | Tiempo",
    ],
}

EDGE_PIECES = [
    "The", "cat", "sat", "Mr.", "Dr.", "U.S.", "e.g.", "NASA", "iPhone", "McDonald", "O'Neil", "don't",
    "1984", "3.50", "$12", "x_y", "__init__", "Hello!", "Why?", "end.", "…", "...", "—", "–", "«", "»",
    "“quoted”", "‘single’", "ﬁne", "ｆｕｌｌ", "①", "²", "Ⅻ", "ΣΟΦΙΑ", "Σ", "ΟΔΟΣ.", "İstanbul", "ǅemal",
    "Ǆ", "straße", "e\u0301", "a\u0308", "\u0301", "日本語", "の文。", "テスト", "한국어", "עברית", "مرحبا",
    "٣٤", "१२३", "😀", "🇩🇪", "\u00a0", "\u2009", "\u3000", "\u200b", "\ufeff", "\t", "\x0b", "\x0c",
    "\x1c", "\x1d", "\x85", "\u2028", "\r", "\n", "\n\n", " ", " ", " ", "|", "»»", "#", "@", "&amp;",
]


def _sample_pages() -> dict[str, str]:
    from warcio.archiveiterator import ArchiveIterator

    out = {}
    with open(SAMPLE_WARC, "rb") as f:
        for record in ArchiveIterator(f):
            content_type = record.http_headers.get_header("Content-Type") if record.http_headers else ""
            if record.rec_type == "response" and "html" in (content_type or ""):
                out[f"sample-{len(out):02d}"] = record.content_stream().read().decode("utf-8")
    return out


def _element(rng: random.Random, text: str) -> str:
    tag = rng.choice(["p", "div", "li", "span", "td", "h3", "a"])
    body = html.escape(text)
    if tag == "li":
        return f"<ul><li>{body}</li></ul>"
    if tag == "td":
        return f"<table><tr><td>{body}</td><td>{rng.randint(1, 999)}</td></tr></table>"
    if tag == "a":
        return f'<a href="/{rng.randint(1, 99)}">{body}</a><br>'
    return f"<{tag}>{body}</{tag}>"


def _mix_pages(rng: random.Random, count: int) -> dict[str, str]:
    truth = json.loads(SAMPLE_TRUTH.read_text(encoding="utf-8"))
    articles = [entry["article"] for entry in truth.values() if entry["article"]]
    boilerplate = [line for entry in truth.values() for line in entry["boilerplate"]]
    other = [line for entry in truth.values() for line in entry["other"]]
    out = {}
    for i in range(count):
        paragraphs = list(rng.choice(articles))
        rng.shuffle(paragraphs)
        paragraphs = paragraphs[: rng.randint(1, len(paragraphs))]
        layout = i % 6
        before = rng.sample(boilerplate, rng.randint(0, 12))
        after = rng.sample(boilerplate, rng.randint(0, 12))
        body: list[str] = [_element(rng, line) for line in before]
        if rng.random() < 0.5:
            body.append(f"<h1>{html.escape(rng.choice(other))}</h1>")
        for paragraph in paragraphs:
            if layout == 1:  # boilerplate interleaved with the article
                body.append(_element(rng, rng.choice(boilerplate)))
            if layout == 2:  # the article as list items (a listing page)
                body.append(f"<li>{html.escape(paragraph)}</li>")
            elif layout == 3:  # lines without punctuation: the long-piece cut
                body.append(f"<p>{html.escape(paragraph.replace('.', '').replace(',', '') * 3)}</p>")
            else:
                body.append(f"<p>{html.escape(paragraph)}</p>")
        if layout == 4:  # nothing but boilerplate
            body = [_element(rng, line) for line in rng.sample(boilerplate, 20)]
        if layout == 5:  # one block holding the whole article
            body.append("<div>" + " ".join(html.escape(p) for p in paragraphs) + "</div>")
        body += [_element(rng, line) for line in after]
        out[f"mix-{i:02d}"] = f"<!DOCTYPE html><html><head><title>t</title></head><body>{''.join(body)}</body></html>"
    return out


def _language_pages() -> dict[str, str]:
    out = {}
    for language, lines in OTHER_LANGUAGES.items():
        out[f"lang-{language}"] = "<html><body>" + "".join(f"<p>{html.escape(x)}</p>" for x in lines) + "</body></html>"
    truth = json.loads(SAMPLE_TRUTH.read_text(encoding="utf-8"))
    english = next(entry["article"] for entry in truth.values() if len(entry["article"]) >= 4)
    quoted = english[:3] + [OTHER_LANGUAGES["de"][0]] + english[3:]
    out["lang-en-quoting-de"] = "<html><body>" + "".join(f"<p>{html.escape(x)}</p>" for x in quoted) + "</body></html>"
    return out


def edge_texts(count: int, seed: int, max_words: int = 400) -> list[str]:
    """Random text over EDGE_PIECES and their neighbours: the splitter's and tokenizer's edge cases."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = []
        for _ in range(rng.randint(0, max_words)):
            roll = rng.random()
            if roll < 0.6:
                words.append(rng.choice(EDGE_PIECES))
            elif roll < 0.95:
                words.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                                     for _ in range(rng.randint(1, 12))))
            else:
                words.append("x" * rng.randint(200, 1500))  # longer than the sentence cap
        texts.append("".join(w + rng.choice([" ", " ", " ", "", "\n", ". ", "\u00a0"]) for w in words))
    return texts


def _edge_pages(count: int) -> dict[str, str]:
    return {f"edge-{i:02d}": "<html><body><pre>" + html.escape(text) + "</pre></body></html>"
            for i, text in enumerate(edge_texts(count, seed=20241, max_words=300))}


def pages() -> dict[str, str]:
    """{key: HTML} of every page of the set, in a stable order."""
    rng = random.Random(1234)
    out = _sample_pages()
    out.update(_mix_pages(rng, 36))
    out.update(_language_pages())
    out.update(_edge_pages(8))
    return out


def page_texts() -> list[str]:
    """The pages' text by the tags extractor, as the filter sees it."""
    from plexity_plugins.extractors import html_to_text_tags

    return [html_to_text_tags(page) for page in pages().values()]

