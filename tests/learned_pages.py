"""Pages whose text is known, made up for the learned reader's tests: an article, a thread or a
listing among the usual boilerplate (a navigation bar, a sidebar of links, a cookie notice, share
buttons, a footer), in several layouts.  `page(seed)` gives the page's HTML and its text."""

from __future__ import annotations

import random

SUBJECTS = ["The council", "A local farmer", "The new library", "Our reporter", "The river authority",
            "A group of students", "The regional hospital", "The bakery on the corner", "Die Stadtverwaltung",
            "The museum's curator", "A small software company", "The school board"]
VERBS = ["approved", "described", "questioned", "announced", "repaired", "studied", "celebrated", "reviewed",
         "postponed", "welcomed"]
OBJECTS = ["the budget for next year", "a plan to widen the old bridge", "the results of a long survey",
           "the opening of a second reading room", "several complaints about noise at night",
           "the harvest after a dry summer", "a proposal to plant trees along the avenue",
           "the cost of heating the public pool", "an exhibition of maps from the last century",
           "the timetable of the weekend buses"]
TAILS = ["after a debate that lasted most of the evening.", "and promised to report again in the spring.",
         "although several members asked for more time.", "because the old arrangement no longer worked.",
         "while residents listened from the back of the hall.", "with a vote of seven to two.",
         "before the summer holidays begin in July.", "as the weather turned cold again."]
NAV = ["Home", "News", "Sport", "Weather", "Culture", "Opinion", "Contact", "About us", "Jobs", "Archive"]
BOILERPLATE = ["We use cookies to improve your experience. Accept all", "Share on Facebook | Share on X | Email",
               "© 2024 Example Media Group. All rights reserved.", "Sign up for our newsletter",
               "Advertisement", "Read more", "Privacy policy · Terms of use · Imprint"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}"


def _links(rng: random.Random, names: list[str], k: int) -> str:
    return "".join(f"<li><a href='/{n.lower().replace(' ', '-')}'>{n}</a></li>" for n in rng.sample(names, k))


def page(seed: int) -> tuple[str, list[str]]:
    """(HTML, the lines of its text) of made-up page `seed`."""
    rng = random.Random(seed)
    kind = ("article", "thread", "listing")[seed % 3]
    title = " ".join(rng.sample(["Council", "library", "budget", "river", "bridge", "harvest", "museum"], 3))
    if kind == "article":
        lines = [" ".join(sentence(rng) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(3, 7))]
        body = f"<h1>{title}</h1>" + "".join(f"<p>{line}</p>" for line in lines)
        lines = [title] + lines
        wrapper = rng.choice(["article", "div class='story'", "section"])
    elif kind == "thread":
        lines = [" ".join(sentence(rng) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(3, 6))]
        body = "".join(f"<div class='post'><div class='author'>user{rng.randint(1, 99)}</div>"
                       f"<div class='message'>{line}</div></div>" for line in lines)
        wrapper = "div class='thread'"
    else:
        lines = [f"{rng.choice(OBJECTS).capitalize()}: {sentence(rng)}" for _ in range(rng.randint(4, 8))]
        body = "<ul class='results'>" + "".join(f"<li><h3>{line}</h3></li>" for line in lines) + "</ul>"
        wrapper = "main"
    tag = wrapper.split()[0]
    parts = [f"<header><nav><ul>{_links(rng, NAV, rng.randint(4, 8))}</ul></nav></header>",
             f"<{wrapper}>{body}</{tag}>",
             f"<aside><h4>Most read</h4><ul>{_links(rng, NAV, 5)}</ul></aside>",
             f"<div class='share'>{rng.choice(BOILERPLATE[:2])}</div>",
             f"<footer><p>{BOILERPLATE[2]}</p><p>{rng.choice(BOILERPLATE[3:])}</p></footer>"]
    if rng.random() < 0.5:
        parts[1], parts[2] = parts[2], parts[1]
    html = (f"<!doctype html><html><head><title>{title}</title></head><body>"
            + "".join(parts) + "</body></html>")
    return html, lines
