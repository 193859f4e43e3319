#!/usr/bin/env python3
"""Generate examples/sample.warc.gz and examples/sample_truth.json.

The sample WARC holds a dozen made-up web pages (news, a recipe blog, a science
explainer, release notes, a travel piece, a book review, ...) wrapped in the kind of
boilerplate real sites have: navigation menus, cookie banners, share bars, breadcrumbs,
bylines, related-article lists, newsletter boxes, ad labels, comment forms and footers.
All text was written for this sample.

Output is deterministic: WARC-Date values and WARC-Record-IDs (uuid5 of the record type
and URI) are fixed, so re-running the script reproduces the file.

Records, in order: one ``warcinfo``; then for every page a ``request`` followed by its
``response`` (HTTP/1.1 200, ``text/html; charset=utf-8``); one PNG image response (with its
request) sits among them, for tools to copy unchanged.

sample_truth.json maps each page URI to::

    {"article":     [every article paragraph, as visible text],
     "boilerplate": [every boilerplate line/snippet, as visible text],
     "other":       [visible main-content text that is neither: headlines, subheadings, code]}

"Visible text" means HTML entities decoded and whitespace collapsed; each entry is what a
browser shows as one block (a paragraph, a list item, a line of inline links). Text in
<head>, <script>, <style> and elements marked hidden is not visible and not listed.

Usage:  python examples/make_sample_warc.py [--out-dir DIR]
Needs only the standard library and warcio.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import re
import struct
import uuid
import zlib
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

HOST = "news.example.org"
BASE = f"http://{HOST}"
CRAWL_START = datetime(2024, 6, 10, 9, 30, 0, tzinfo=timezone.utc)
USER_AGENT = "Mozilla/5.0 (compatible; PlexitySampleBot/1.0; +http://news.example.org/bot.html)"

# --------------------------------------------------------------------------------------
# Text helpers


NAMED_ENTITIES = {
    "\u2014": "&mdash;", "\u2013": "&ndash;", "\u201c": "&ldquo;", "\u201d": "&rdquo;",
    "\u2018": "&lsquo;", "\u2019": "&rsquo;", "\u00a9": "&copy;", "\u00b0": "&deg;",
    "\u00b7": "&middot;", "\u203a": "&rsaquo;", "\u00ab": "&laquo;", "\u00bb": "&raquo;",
    "\u00e9": "&eacute;", "\u00f3": "&oacute;", "\u2190": "&larr;", "\u2192": "&rarr;",
    "\u2026": "&hellip;",
}


def visible(fragment: str) -> str:
    """Visible text of an inline HTML fragment: tags removed, entities decoded, spaces collapsed."""
    text = re.sub(r"<[^>]*>", "", fragment)
    return " ".join(html.unescape(text).split())


def smarten(text: str) -> str:
    """Typographic quotes, as some CMSes produce."""
    text = re.sub(r'"([^"]*)"', "\u201c\\1\u201d", text)
    text = re.sub(r"(^|\s)'", "\\1\u2018", text)
    return text.replace("'", "\u2019")


def paragraphs(block: str) -> list[str]:
    """Paragraphs of a triple-quoted block: separated by blank lines, whitespace collapsed."""
    return [" ".join(p.split()) for p in block.strip().split("\n\n")]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


class Doc:
    """Collects the truth lists while a template writes a page's HTML.

    entities: how non-ASCII text is written in the HTML ("utf8", "named" or "numeric").
    """

    def __init__(self, entities: str = "utf8", smart: bool = False):
        self.entities = entities
        self.smart = smart
        self.article: list[str] = []
        self.boilerplate: list[str] = []
        self.other: list[str] = []

    # escaping -------------------------------------------------------------------------
    def esc(self, text: str) -> str:
        out = html.escape(text, quote=False)
        if self.entities == "named":
            out = "".join(NAMED_ENTITIES.get(c, c) for c in out)
        if self.entities in ("named", "numeric"):
            out = out.encode("ascii", "xmlcharrefreplace").decode("ascii")
        return out

    def markup(self, text: str) -> str:
        """Escape `text`, then turn [label](url), **strong**, *em* and `code` into HTML."""
        out = self.esc(text)
        out = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', out)
        out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
        out = re.sub(r"\*([^*]+)\*", r"<em>\1</em>", out)
        out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
        return out

    # recording ------------------------------------------------------------------------
    def b(self, text: str) -> str:
        """Boilerplate text (plain); returns its escaped HTML."""
        self.boilerplate.append(" ".join(text.split()))
        return self.esc(text)

    def bh(self, fragment: str) -> str:
        """Boilerplate as an inline HTML fragment (one visible line); returns it unchanged."""
        self.boilerplate.append(visible(fragment))
        return fragment

    def a(self, text: str) -> str:
        """An article paragraph (with light markup); returns its inner HTML."""
        if self.smart:
            text = smarten(text)
        rendered = self.markup(text)
        self.article.append(visible(rendered))
        return rendered

    def o(self, text: str) -> str:
        """Other main-content text (headline, subheading, code); returns escaped HTML."""
        if self.smart:
            text = smarten(text)
        self.other.append(" ".join(text.split()))
        return self.esc(text)

    # common shapes --------------------------------------------------------------------
    def link_list(self, items, cls="", prefix="/", indent="  ") -> str:
        """<ul> of links, one boilerplate line per item."""
        attr = f' class="{cls}"' if cls else ""
        lis = "\n".join(
            f'{indent}  <li><a href="{prefix}{slug(i)}/">{self.b(i)}</a></li>' for i in items)
        return f"{indent}<ul{attr}>\n{lis}\n{indent}</ul>"

    def inline_links(self, items, sep=" | ", prefix="/") -> str:
        """Links on one line, separated by `sep`: one boilerplate line."""
        frag = self.esc(sep).join(f'<a href="{prefix}{slug(i)}/">{self.esc(i)}</a>' for i in items)
        return self.bh(frag)


# --------------------------------------------------------------------------------------
# Boilerplate pools (varied wording; pages pick by index)

COOKIE_BANNERS = [
    {"title": None,
     "text": 'We use cookies to improve your experience on our site and to show you relevant '
             'advertising. By clicking "Accept all", you agree to the storing of cookies on your device.',
     "actions": ["Accept all", "Reject", "Cookie settings"]},
    {"title": "This website uses cookies",
     "text": "We and our partners use cookies and similar technologies to personalise content and "
             "ads, provide social media features and analyse our traffic.",
     "actions": ["Accept all cookies", "Reject non-essential", "Manage preferences"]},
    {"title": None,
     "text": "Privacy & Cookies: This site uses cookies. By continuing to use this website, you agree "
             "to their use.",
     "actions": ["Close and accept", "Cookie Policy"]},
    {"title": "We value your privacy",
     "text": "We use cookies and similar tools to analyse site usage, remember your preferences and "
             "measure advertising. You can change your choices at any time from the Privacy Centre.",
     "actions": ["I agree", "Reject all", "Show purposes"]},
    {"title": "Cookies on news.example.org",
     "text": "We use some essential cookies to make this website work. We'd like to set additional "
             "cookies to understand how you use the site and improve our services.",
     "actions": ["Accept additional cookies", "Reject additional cookies", "View cookies"]},
    {"title": None,
     "text": "This website uses cookies to analyse traffic. Learn more in our cookie notice.",
     "actions": ["Accept", "Decline"]},
    {"title": None,
     "text": "By using this site you consent to our use of cookies in accordance with our Cookie Policy.",
     "actions": ["Continue", "Learn more"]},
]

SHARE_BARS = [
    ["Share on Facebook", "Share on X", "Share on LinkedIn", "Email"],
    ["Share", "Facebook", "Tweet", "WhatsApp", "Copy link"],
    ["Share this article", "Share via email", "Share on Facebook", "Share on Twitter"],
    ["Tweet", "Share", "Pin it", "Email this"],
    ["Facebook", "X", "Reddit", "Email", "Print"],
]

NEWSLETTERS = [
    ["Get the Morning Briefing",
     "The day's top local stories, delivered to your inbox every weekday at 6 a.m.",
     "Sign up",
     "By signing up you agree to our Terms of Use and Privacy Policy. You can unsubscribe at any time."],
    ["Never miss a recipe!", "Join 12,000 readers and get new recipes straight to your inbox.",
     "Subscribe"],
    ["Sign up to The Weekend Edition",
     "Our best long reads, reviews and ideas, every Saturday morning.", "Subscribe now",
     "We will never share your email address."],
    ["Newsletter", "Enter your email address to receive the latest news and offers.", "Submit"],
    ["Stay in the loop", "Weekly headlines from the Gazette newsroom. Free, no spam.", "Join"],
    ["The Sports Desk", "Scores, schedules and the best of our sports coverage, every Monday.",
     "Sign me up", "Already a subscriber? Manage your newsletters"],
]

COMMENT_BLOCKS = [
    ["Comments (12)", "Join the conversation", "You must be logged in to post a comment.",
     "Log in or register", "Read our community guidelines"],
    ["Leave a Reply", "Your email address will not be published. Required fields are marked *",
     "Comment *", "Name *", "Email *", "Website",
     "Save my name, email, and website in this browser for the next time I comment.",
     "Post Comment"],
    ["23 Comments", "Show comments", "Sort by: Newest"],
    ["Comments are closed for this article."],
    ["Conversation", "4 comments", "Sign in to comment", "Comments are moderated and may take a few minutes to appear."],
]

RSAQUO = " \u203a "
DOT = " \u00b7 "
COPYRIGHT_GAZETTE = "\u00a9 2024 Riverside Gazette. All rights reserved."

AD_LABELS = ["Advertisement", "ADVERTISEMENT", "Story continues below advertisement", "Advertisements",
             "Ad", "Sponsored"]

# --------------------------------------------------------------------------------------
# Templates


def cookie_html(doc: Doc, variant: int, cls: str, title_tag: str = "h2") -> str:
    c = COOKIE_BANNERS[variant]
    parts = [f'<div class="{cls}" role="dialog" aria-label="Cookie consent">']
    if c["title"]:
        parts.append(f'  <{title_tag} class="{cls}__title">{doc.b(c["title"])}</{title_tag}>')
    parts.append(f'  <p class="{cls}__text">{doc.b(c["text"])}</p>')
    parts.append(f'  <div class="{cls}__actions">')
    for action in c["actions"]:
        parts.append(f'    <div><a href="#" class="btn" data-consent="{slug(action)}">{doc.b(action)}</a></div>')
    parts.append("  </div>\n</div>")
    return "\n".join(parts)


def share_html(doc: Doc, variant: int, cls: str = "share-bar") -> str:
    items = "\n".join(
        f'    <li class="share-{slug(s)}"><a href="#" rel="nofollow">{doc.b(s)}</a></li>'
        for s in SHARE_BARS[variant])
    return f'<div class="{cls}">\n  <ul>\n{items}\n  </ul>\n</div>'


def newsletter_html(doc: Doc, variant: int, cls: str = "newsletter") -> str:
    n = NEWSLETTERS[variant]
    lines = [f'<div class="{cls}">', f'  <h3>{doc.b(n[0])}</h3>', f'  <p>{doc.b(n[1])}</p>',
             '  <form action="/newsletter/subscribe" method="post">',
             '    <input type="email" name="email" placeholder="Your email address">',
             f'    <div class="submit"><a href="#" class="btn">{doc.b(n[2])}</a></div>',
             '  </form>']
    for extra in n[3:]:
        lines.append(f'  <p class="small">{doc.b(extra)}</p>')
    lines.append("</div>")
    return "\n".join(lines)


def comments_html(doc: Doc, variant: int) -> str:
    c = COMMENT_BLOCKS[variant]
    lines = ['<section id="comments" class="comments">', f'  <h2>{doc.b(c[0])}</h2>']
    if variant == 1:  # WordPress-style reply form
        lines += [f'  <p class="comment-notes">{doc.b(c[1])}</p>',
                  '  <form id="commentform" action="/wp-comments-post.php" method="post">',
                  f'    <p><label for="comment">{doc.b(c[2])}</label></p>',
                  '    <textarea id="comment" name="comment" rows="8"></textarea>',
                  f'    <p><label for="author">{doc.b(c[3])}</label> <input id="author" name="author"></p>',
                  f'    <p><label for="email">{doc.b(c[4])}</label> <input id="email" name="email"></p>',
                  f'    <p><label for="url">{doc.b(c[5])}</label> <input id="url" name="url"></p>',
                  f'    <p class="comment-form-cookies-consent"><input type="checkbox" id="cc"> '
                  f'<label for="cc">{doc.b(c[6])}</label></p>',
                  f'    <p class="form-submit"><a href="#" class="submit">{doc.b(c[7])}</a></p>',
                  '  </form>']
    else:
        for line in c[1:]:
            lines.append(f'  <div class="comments__line"><a href="#comments">{doc.b(line)}</a></div>')
    lines.append("</section>")
    return "\n".join(lines)


def ad_html(doc: Doc, variant: int, slot: int) -> str:
    return (f'<div class="ad-slot" id="ad-slot-{slot}">\n  <div class="ad-label">{doc.b(AD_LABELS[variant])}</div>\n'
            f'  <div id="div-gpt-ad-{slot}" style="min-height:250px"></div>\n</div>')


def head_html(title: str, page: dict, extra_css: str = "/static/css/site.css") -> str:
    ld = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": page["title"],
          "datePublished": page["published_iso"], "author": {"@type": "Person", "name": page["author"]}}
    return f"""<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<meta name="description" content="{html.escape(page['title'])}">
<link rel="stylesheet" href="{extra_css}">
<link rel="canonical" href="{BASE}{page['path']}">
<script type="application/ld+json">{json.dumps(ld)}</script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}} gtag('js', new Date());</script>
<style>.ad-slot{{text-align:center;margin:24px 0}} .consent{{position:fixed;bottom:0}}</style>
</head>"""


def render_body_paragraphs(doc: Doc, paras: list[str], ads: dict[int, str], indent: str = "    ") -> str:
    """<p> paragraphs; `ads` maps a paragraph index to HTML inserted after it."""
    out = []
    for i, p in enumerate(paras):
        out.append(f"{indent}<p>{doc.a(p)}</p>")
        if i in ads:
            out.append("\n".join(indent + line for line in ads[i].split("\n")))
    return "\n".join(out)


# --- Template 1: the Gazette's news pages (semantic HTML5) ----------------------------

GAZETTE_NAV = ["Home", "News", "Local", "Sport", "Business", "Opinion", "Culture", "Weather", "Obituaries"]


def tpl_gazette(page: dict) -> tuple[str, Doc]:
    o = page["opts"]
    doc = Doc(entities=o.get("entities", "utf8"))
    parts = ["<!DOCTYPE html>", '<html lang="en">', head_html(f"{page['title']} | Riverside Gazette", page),
             f'<body class="article-page section-{slug(page["section"])}">',
             f'<a class="skip-link" href="#main">{doc.b("Skip to main content")}</a>']
    if o.get("cookie_top"):
        parts.append(cookie_html(doc, o["cookie"], "consent-banner"))
    parts.append(f"""<header class="site-header">
  <div class="topbar">
    <div class="topbar__date">{doc.b(o["dateline"])}</div>
    <div class="topbar__weather">{doc.b(o["weather"])}</div>
{doc.link_list(["Subscribe", "Sign in"], "topbar__account", indent="    ")}
  </div>
  <div class="masthead"><a href="/" class="logo">{doc.b("Riverside Gazette")}</a></div>
  <div class="tagline">{doc.b(o.get("tagline", "Independent local news since 1887"))}</div>
  <nav class="main-nav" aria-label="Sections">
{doc.link_list(o.get("nav", GAZETTE_NAV), "main-nav__list", indent="    ")}
  </nav>
  <div class="mobile-menu" hidden>
    <ul><li><a href="/">Home</a></li><li><a href="/news/">News</a></li><li><a href="/sport/">Sport</a></li></ul>
  </div>
</header>""")
    crumbs = o["crumbs"]
    if o.get("crumbs_inline"):
        crumb_html = f'  <div class="breadcrumb">{doc.inline_links(crumbs, RSAQUO)}</div>'
    else:
        crumb_html = f'  <ol class="breadcrumb">\n' + "\n".join(
            f'    <li><a href="/{slug(c)}/">{doc.b(c)}</a></li>' for c in crumbs) + "\n  </ol>"
    parts.append(f'<main id="main">\n{crumb_html}')
    byline = doc.bh(f'By <a href="/authors/{slug(page["author"])}/">{doc.esc(page["author"])}</a>, {doc.esc(o["role"])}')
    share = share_html(doc, o["share"])
    parts.append(f"""  <article class="story">
    <header class="story__header">
      <p class="story__kicker">{doc.b(o["kicker"])}</p>
      <h1 class="story__headline">{doc.o(page["title"])}</h1>
      <div class="story__byline">{byline}</div>
      <div class="story__timestamp"><time datetime="{page["published_iso"]}">{doc.b(o["timestamp"])}</time></div>
{indent_block(share, 6)}
    </header>
    <div class="story__body">""")
    ads = {o.get("ad_after", 2): ad_html(doc, o.get("ad", 0), 1)}
    parts.append(render_body_paragraphs(doc, page["paragraphs"], ads, indent="      "))
    parts.append(f"""    </div>
    <footer class="story__footer">
      <div class="story__topics">{doc.bh("Topics: " + ", ".join(f'<a href="/topics/{slug(t)}/">{doc.esc(t)}</a>' for t in o["topics"]))}</div>
      <p class="story__tip">{doc.b(o["tip"])}</p>
    </footer>
  </article>
  <aside class="related">
    <h2>{doc.b(o.get("related_title", "Related articles"))}</h2>
{doc.link_list(page["related"], "related__list", prefix="/news/", indent="    ")}
  </aside>
  <aside class="most-read">
    <h2>{doc.b("Most read")}</h2>
    <ol>
""" + "\n".join(f'      <li><a href="/news/{slug(t)}/">{doc.b(t)}</a></li>' for t in o["most_read"]) + """
    </ol>
  </aside>""")
    parts.append(indent_block(newsletter_html(doc, o["newsletter"]), 2))
    parts.append(indent_block(comments_html(doc, o["comments"]), 2))
    parts.append("</main>")
    parts.append(f"""<footer class="site-footer">
  <div class="site-footer__brand">{doc.b("Riverside Gazette")}</div>
  <p class="site-footer__address">{doc.b("120 Front Street, Riverside")}</p>
{doc.link_list(["About us", "Contact", "Advertise with us", "Careers", "Corrections"], "site-footer__about")}
  <div class="site-footer__social">
    <p>{doc.b(o.get("follow", "Follow us"))}</p>
{doc.link_list(["Facebook", "Instagram", "X", "YouTube"], "social", prefix="https://social.example.com/", indent="    ")}
  </div>
  <div class="site-footer__legal">{doc.inline_links(["Privacy Policy", "Terms of Service", "Cookie settings", "Sitemap"])}</div>
  <p class="site-footer__copyright">{doc.b(COPYRIGHT_GAZETTE)}</p>
</footer>""")
    if not o.get("cookie_top"):
        parts.append(cookie_html(doc, o["cookie"], "consent-banner"))
    parts.append('<script src="/static/js/analytics.js" async></script>\n</body>\n</html>\n')
    return "\n".join(parts), doc


def indent_block(block: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line if line else line for line in block.split("\n"))


# --- Template 2: a WordPress-style blog (divs, inline menu, sidebar widgets) -----------


def tpl_blog(page: dict) -> tuple[str, Doc]:
    o = page["opts"]
    doc = Doc(entities=o.get("entities", "utf8"), smart=o.get("smart", False))
    nav = doc.inline_links(o["nav"], " \u00b7 ", prefix=o["prefix"])
    meta = doc.bh(f'Posted on <a href="#"><time datetime="{page["published_iso"]}">{doc.esc(o["posted"])}</time></a>'
                  f' by <a href="{o["prefix"]}author/{slug(page["author"])}/">{doc.esc(page["author"])}</a>'
                  f' \u00b7 <a href="#comments">{doc.esc(o["comment_count"])}</a>')
    parts = ["<!DOCTYPE html>", '<html lang="en-US">',
             head_html(f"{page['title']} \u2013 {o['site']}", page, "/wp-content/themes/cookery/style.css"),
             '<body class="post-template-default single single-post">',
             '<div id="page" class="site">',
             f"""  <div id="masthead" class="site-header">
    <div class="site-branding">
      <p class="site-title"><a href="{o["prefix"]}">{doc.b(o["site"])}</a></p>
      <p class="site-description">{doc.b(o["site_description"])}</p>
    </div>
    <div id="site-navigation" class="main-navigation">{nav}</div>
  </div>
  <div id="content" class="site-content">
    <div id="primary" class="content-area">
      <div id="post-{o["post_id"]}" class="post type-post status-publish">
        <h1 class="entry-title">{doc.o(page["title"])}</h1>
        <div class="entry-meta">{meta}</div>"""]
    if o.get("jump"):
        parts.append(f'        <div class="recipe-jump">{doc.inline_links(o["jump"], " | ", prefix="#")}</div>')
    parts.append('        <div class="entry-content">')
    ads = {o.get("ad_after", 3): ad_html(doc, o.get("ad", 3), 7)}
    parts.append(render_body_paragraphs(doc, page["paragraphs"], ads, indent="          "))
    parts.append("        </div>")
    share = SHARE_BARS[o["share"]]
    parts.append(f"""        <div class="sharedaddy sd-sharing-enabled">
          <h3 class="sd-title">{doc.b(share[0])}</h3>
          <ul>
""" + "\n".join(f'            <li><a class="share-{slug(s)}" href="#">{doc.b(s)}</a></li>' for s in share[1:]) + """
          </ul>
        </div>
        <div class="jp-relatedposts">
          <h3 class="jp-relatedposts-headline">""" + doc.b(o.get("related_title", "Related")) + "</h3>")
    for title, cat in page["related"]:
        parts.append(f'          <div class="jp-relatedposts-post"><a href="{o["prefix"]}{slug(title)}/">{doc.b(title)}</a>'
                     f'<p class="jp-relatedposts-post-context">{doc.b(cat)}</p></div>')
    parts.append("        </div>")
    cats = ", ".join(f'<a href="{o["prefix"]}category/{slug(c)}/">{doc.esc(c)}</a>' for c in o["categories"])
    tags = ", ".join(f'<a href="{o["prefix"]}tag/{slug(t)}/">{doc.esc(t)}</a>' for t in o["tags"])
    parts.append(f"""        <div class="entry-footer">{doc.bh(f"Posted in {cats} | Tagged {tags}")}</div>
        <div class="nav-links">
          <div class="nav-previous"><a href="#">{doc.b(o["prev"])}</a></div>
          <div class="nav-next"><a href="#">{doc.b(o["next"])}</a></div>
        </div>
      </div>""")
    parts.append(indent_block(comments_html(doc, o["comments"]), 6))
    parts.append(f"""    </div>
    <div id="secondary" class="widget-area">
      <div class="widget widget_text">
        <h2 class="widget-title">{doc.b(o["about_title"])}</h2>
        <div class="textwidget"><p>{doc.b(o["about"])}</p></div>
      </div>
      <div class="widget widget_search"><label>{doc.b("Search for:")}</label> <input type="search" name="s"></div>
{indent_block(newsletter_html(doc, o["newsletter"], "widget widget_newsletter"), 6)}
      <div class="widget widget_recent_entries">
        <h2 class="widget-title">{doc.b("Recent Posts")}</h2>
{doc.link_list(o["recent"], prefix=o["prefix"], indent="        ")}
      </div>
      <div class="widget widget_archive">
        <h2 class="widget-title">{doc.b("Archives")}</h2>
{doc.link_list(o["archives"], prefix=o["prefix"] + "archive/", indent="        ")}
      </div>
    </div>
  </div>
  <div id="colophon" class="site-footer">
    <div class="site-info">{doc.bh(o["colophon"])}</div>
  </div>
</div>""")
    parts.append(cookie_html(doc, o["cookie"], "eu-cookie-law", title_tag="strong"))
    parts.append('<script src="/wp-includes/js/wp-embed.min.js"></script>\n</body>\n</html>\n')
    return "\n".join(parts), doc


# --- Template 3: a project blog / docs site (release notes) ---------------------------


def tpl_docs(page: dict) -> tuple[str, Doc]:
    o = page["opts"]
    doc = Doc(entities=o.get("entities", "utf8"))
    meta_frag = f'<time datetime="{page["published_iso"]}">{doc.esc(o["date"])}</time>{DOT}{doc.esc(o["read_time"])}'
    parts = ["<!DOCTYPE html>", '<html lang="en" dir="ltr">',
             head_html(f"{page['title']} | Tidewater", page, "/assets/css/styles.css"),
             "<body>",
             f'<div class="announcement-bar" role="banner"><div class="announcement-bar__content">'
             f'{doc.bh(o["announcement"])}</div></div>',
             f"""<nav class="navbar" aria-label="Main">
  <div class="navbar__brand"><a href="/tech/tidewater/">{doc.b("Tidewater")}</a></div>
{doc.link_list(o["nav"], "navbar__items", prefix="/tech/tidewater/")}
  <div class="navbar__version">{doc.b("v3.2")}</div>
</nav>
<div class="main-wrapper">
  <aside class="blog-sidebar">
    <div class="sidebar__title">{doc.b("Recent posts")}</div>
{doc.link_list(o["recent"], "sidebar__items", prefix="/tech/tidewater/blog/", indent="    ")}
  </aside>
  <main class="blog-main">
    <article itemscope itemtype="http://schema.org/BlogPosting">
      <header>
        <h1 class="blog-post-title">{doc.o(page["title"])}</h1>
        <div class="blog-post-meta">{doc.bh(meta_frag)}</div>
        <div class="blog-post-authors">
          <div class="author__name"><a href="https://code.example.com/{slug(page["author"])}">{doc.b(page["author"])}</a></div>
          <div class="author__title">{doc.b(o["role"])}</div>
        </div>
      </header>
      <div class="markdown" itemprop="articleBody">"""]
    for i, p in enumerate(page["paragraphs"]):
        parts.append(f"        <p>{doc.a(p)}</p>")
        if i == o["code_after"]:
            parts.append(f'        <pre><code class="language-bash">{doc.o(o["code"])}</code></pre>')
    parts.append(f"""      </div>
      <footer class="blog-post-footer">
        <div class="tags">{doc.bh("Tags: " + " ".join(f'<a href="/tech/tidewater/blog/tags/{slug(t)}/">{doc.esc(t)}</a>' for t in o["tags"]))}</div>
        <div class="edit-this-page"><a href="https://code.example.com/tidewater/website/edit/main/blog/3-2.md">{doc.b("Edit this page")}</a></div>
      </footer>
    </article>
    <nav class="pagination-nav" aria-label="Blog post page navigation">
      <a class="pagination-nav__link pagination-nav__link--next" href="#">
        <div class="pagination-nav__sublabel">{doc.b("Newer post")}</div>
        <div class="pagination-nav__label">{doc.b(o["newer"])}</div>
      </a>
      <a class="pagination-nav__link pagination-nav__link--prev" href="#">
        <div class="pagination-nav__sublabel">{doc.b("Older post")}</div>
        <div class="pagination-nav__label">{doc.b(o["older"])}</div>
      </a>
    </nav>
    <div class="feedback">
      <p>{doc.b("Was this page helpful?")}</p>
      <div><a href="#" data-vote="yes">{doc.b("Yes")}</a></div>
      <div><a href="#" data-vote="no">{doc.b("No")}</a></div>
    </div>
  </main>
</div>
<footer class="footer footer--dark">
  <div class="footer__links">""")
    for col, items in o["footer_cols"]:
        parts.append(f'    <div class="footer__col">\n      <div class="footer__title">{doc.b(col)}</div>\n'
                     f'{doc.link_list(items, "footer__items", prefix="/tech/tidewater/", indent="      ")}\n    </div>')
    parts.append(f"""  </div>
  <div class="footer__copyright">{doc.b(o["copyright"])}</div>
</footer>""")
    parts.append(cookie_html(doc, o["cookie"], "cookie-notice", title_tag="div"))
    parts.append('<script src="/assets/js/runtime~main.js"></script>\n</body>\n</html>\n')
    return "\n".join(parts), doc


# --- Template 4: the weekend/features magazine (sections, inline menus, promos) -------


def tpl_magazine(page: dict) -> tuple[str, Doc]:
    o = page["opts"]
    doc = Doc(entities=o.get("entities", "named"), smart=o.get("smart", True))
    parts = ["<!DOCTYPE html>", '<html lang="en-GB">',
             head_html(f"{page['title']} - {o['brand']}", page, "/weekend/css/magazine.css"),
             '<body class="magazine">']
    parts.append(cookie_html(doc, o["cookie"], "cmp-overlay", title_tag="h2"))
    meta_frag = DOT.join([f'<span class="author">{doc.esc(o["byline"])}</span>',
                          f'<span class="date">{doc.esc(o["date"])}</span>',
                          f'<span class="read-time">{doc.esc(o["read_time"])}</span>'])
    parts.append(f"""<div class="wrapper">
  <div class="masthead">
    <div class="masthead__brand"><a href="/weekend/">{doc.b(o["brand"])}</a></div>
    <div class="masthead__nav">{doc.inline_links(o["nav"], " | ", prefix="/weekend/")}</div>
    <div class="masthead__utility">
      <div><a href="/search/">{doc.b("Search")}</a></div>
      <div><a href="/subscribe/" class="cta">{doc.b(o["subscribe"])}</a></div>
    </div>
  </div>
  <div class="paywall-modal" style="display: none">
    <p>You have read all of your free articles this month. Subscribe for unlimited access.</p>
  </div>
  <div class="crumbs">{doc.inline_links(o["crumbs"], RSAQUO, prefix="/weekend/")}</div>
  <section class="content">
    <div class="headline-block">
      <span class="section-label">{doc.b(o["label"])}</span>
      <h1>{doc.o(page["title"])}</h1>
    </div>
    <div class="meta">{doc.bh(meta_frag)}</div>
{indent_block(share_html(doc, o["share"], "social-strip"), 4)}
    <div class="article-body">""")
    ads = {o.get("ad_after", 3): ad_html(doc, o.get("ad", 1), 3)}
    if "promo" in o:
        idx, label, title = o["promo"]
        promo = doc.bh(f'<strong>{doc.esc(label)}</strong> <a href="/weekend/{slug(title)}/">{doc.esc(title)}</a>')
        promo_html = f'<p class="inline-promo">{promo}</p>'
        ads[idx] = ads[idx] + "\n" + promo_html if idx in ads else promo_html
    body = []
    for i, p in enumerate(page["paragraphs"]):
        if i in o.get("subheads", {}):
            body.append(f"      <h2>{doc.o(o['subheads'][i])}</h2>")
        body.append(f"      <p>{doc.a(p)}</p>")
        if i in ads:
            body.append(indent_block(ads[i], 6))
    parts.append("\n".join(body))
    parts.append("    </div>")
    if "bio" in o:
        parts.append(f'    <div class="author-bio"><p>{doc.b(o["bio"])}</p></div>')
    parts.append(indent_block(newsletter_html(doc, o["newsletter"], "newsletter-box"), 4))
    parts.append(f"""    <div class="most-read">
      <h3>{doc.b(o.get("most_read_title", "Most read"))}</h3>
      <ol>
""" + "\n".join(f'        <li><a href="/weekend/{slug(t)}/">{doc.b(t)}</a></li>' for t in o["most_read"]) + f"""
      </ol>
    </div>
    <div class="recommended">
      <h3>{doc.b(o.get("related_title", "You may also like"))}</h3>""")
    for title, blurb in page["related"]:
        parts.append(f'      <div class="card"><a href="/weekend/{slug(title)}/"><h4>{doc.b(title)}</h4></a>'
                     f'<p class="card__blurb">{doc.b(blurb)}</p></div>')
    parts.append(f"""    </div>
  </section>
  <div class="footer">
    <p class="footer__copy">{doc.b(o["copyright"])}</p>
    <div class="footer__links">{doc.inline_links(["Privacy Policy", "Terms", "Sitemap", "Contact", "Accessibility"], " | ")}</div>
    <div class="footer__social">{doc.bh("Follow us: " + " ".join(f'<a href="https://social.example.com/{slug(s)}">{s}</a>' for s in ["Instagram", "Facebook", "Pinterest"]))}</div>
  </div>
</div>
<script src="/weekend/js/bundle.js" defer></script>
</body>
</html>
""")
    return "\n".join(parts), doc


# --- Template 5: a hand-written table layout (old community site) ---------------------


def tpl_legacy(page: dict) -> tuple[str, Doc]:
    """Tables, <font>, <br>-separated links, and paragraphs hard-wrapped in the source."""
    import textwrap

    o = page["opts"]
    doc = Doc(entities="named")
    nav = "\n".join(f'<a href="/community/{slug(n)}.html">{doc.b(n)}</a><br>' for n in o["nav"])
    events = "\n".join(f"{doc.b(e)}<br>" for e in o["events"])
    paras = []
    for p in page["paragraphs"]:
        inner = doc.a(p)
        paras.append("<p>" + "\n".join(textwrap.wrap(inner, 78, break_long_words=False,
                                                      break_on_hyphens=False)) + "</p>")
    crumbs = doc.bh(' &gt; '.join(f'<a href="/community/{slug(c)}.html">{doc.esc(c)}</a>' for c in o["crumbs"][:-1])
                    + " &gt; " + doc.esc(o["crumbs"][-1]))
    footer_bits = " | ".join([doc.esc(o["modified"]), doc.esc(o["visitors"]),
                              '<a href="mailto:webmaster@news.example.org">Webmaster</a>'])
    text = f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{html.escape(page["title"])} - Riverside Community Notes</title>
</head>
<body bgcolor="#ffffff" text="#000000" link="#003366">
<table width="100%" border="0" cellpadding="4" cellspacing="0">
<tr>
<td colspan="2" bgcolor="#336699"><font color="#ffffff" size="5" face="Georgia"><b>{doc.b("Riverside Community Notes")}</b></font><br>
<font color="#ffffff" size="2">{doc.b(o["tagline"])}</font></td>
</tr>
<tr>
<td width="170" valign="top" bgcolor="#eeeeee"><font size="2" face="Verdana">
{nav}
<br>
<b>{doc.b("Upcoming events")}</b><br>
{events}
<br>
<a href="/community/events.html">{doc.b("Full calendar")}</a>
</font></td>
<td valign="top"><font size="2" face="Verdana">{crumbs}</font>
<h2>{doc.o(page["title"])}</h2>
<i>{doc.b(o["posted"])}</i>
{chr(10).join(paras)}
<hr>
<p>{doc.bh(' | '.join(f'<a href="#">{doc.esc(x)}</a>' for x in o["page_links"]))}</p>
</td>
</tr>
<tr>
<td colspan="2" align="center" bgcolor="#eeeeee"><font size="1">{doc.b(o["copyright"])}<br>
{doc.bh(footer_bits)}</font></td>
</tr>
</table>
<div id="cookie-bar" style="background:#ffc;padding:4px">{doc.bh(doc.esc(COOKIE_BANNERS[o["cookie"]]["text"]) + ' <a href="#">OK</a> <a href="/community/cookies.html">More info</a>')}</div>
</body>
</html>
"""
    return text, doc


TEMPLATES = {"gazette": tpl_gazette, "blog": tpl_blog, "docs": tpl_docs, "magazine": tpl_magazine,
             "legacy": tpl_legacy}


# --------------------------------------------------------------------------------------
# Pages

PAGES: list[dict] = []


def page(path, template, title, author, published_iso, section, text, related, **opts):
    PAGES.append({"path": path, "template": template, "title": title, "author": author,
                  "published_iso": published_iso, "section": section,
                  "paragraphs": paragraphs(text), "related": related, "opts": opts})


GAZETTE_MOST_READ = [
    ["Bridge closure extended through August", "Man rescued from river near Mill Dam",
     "New restaurant opens in the old train depot", "High school graduation dates set",
     "Power outage hits 3,000 homes on the east side"],
    ["Storm damage: what to do if a tree falls on your property", "Parking fees downtown to rise in May",
     "Police seek witnesses to Elm Street crash", "Spring festival lineup announced",
     "Hospital opens new urgent care wing"],
]

page("/local/2024/03/14/council-approves-budget-roads-libraries/", "gazette",
     "Council approves budget with more money for roads and libraries",
     "Tom Reyes", "2024-03-14T21:12:00-05:00", "Local",
     """
Riverside City Council approved a $212 million operating budget on Tuesday night after a
four-hour meeting that ran well past its scheduled end. The vote was six to three, with the
three dissenting members arguing that the plan leaned too heavily on reserves that the city may
need in a downturn.

The budget raises spending by about 4 percent compared with last year. Most of the increase goes
to road maintenance, which receives an extra $5.8 million, and to the public library system, whose
branches will return to Sunday opening hours for the first time since 2019.

Mayor Denise Okafor called the plan "responsible but not timid" and said residents had asked for
visible improvements rather than new programs. "People told us again and again that they want the
potholes fixed and the libraries open," she said. "This budget does both without raising the
property tax rate."

To close the gap between revenue and spending, the city will draw $3.2 million from its rainy-day
fund, leaving a balance of roughly $27 million. Council member Mark Feeney, who voted against the
plan, said that was a mistake. "We are spending savings on recurring costs," he said. "Next year
the hole will be bigger, and we will have less to fill it with."

Finance director Priya Raman told the council that the reserve would still exceed the level
recommended by the city's own policy, which calls for at least two months of operating expenses.
She added that sales tax receipts had come in higher than forecast for three consecutive quarters.

Several residents spoke during the public comment period. A group of parents from the Eastside
neighborhood asked for a crossing guard at the intersection of Maple Avenue and Fourth Street,
where a child was struck by a car last fall. The council added $60,000 for crossing guards in an
amendment passed unanimously before the final vote.

Other items in the budget include a modest pay raise for city employees, new playground equipment
at Harbor Park, and a study of whether the aging water treatment plant should be repaired or
replaced. The study is expected to take eighteen months.

The new budget takes effect on July 1. A public dashboard showing how the money is spent will be
updated monthly on the city's website, according to the finance department.
""",
     ["School board delays vote on new calendar", "Water rates to rise 3 percent in July",
      "Opinion: The city's reserves are not a piggy bank", "Harbor Park playground plans unveiled"],
     cookie=0, cookie_top=True, share=0, newsletter=0, comments=0, ad=0, ad_after=2,
     dateline="Thursday, March 14, 2024", weather="54\u00b0F Cloudy",
     crumbs=["Home", "News", "Local"], role="Staff Writer", kicker="City Hall",
     timestamp="Published March 14, 2024 at 9:12 p.m. | Updated March 15, 2024 at 7:40 a.m.",
     topics=["Budget", "City Council", "Libraries"],
     tip="Have a news tip? Email newsroom@riverside-gazette.example or call 555-0142.",
     most_read=GAZETTE_MOST_READ[0])

page("/sport/2024/04/22/riverside-marathon-record-field/", "gazette",
     "Record field of 9,000 runners braves the wind at Riverside Marathon",
     "Luis Ortega", "2024-04-22T06:30:00-05:00", "Sport",
     """
More than nine thousand runners crossed the start line of the Riverside Marathon on Sunday
morning, the largest field in the race's thirty-one-year history. A steady headwind along the
river path slowed the leaders in the second half, and no course records fell, but organizers said
the day went about as smoothly as they could have hoped.

The men's race was won by Daniel Mwangi in 2 hours, 14 minutes and 9 seconds. Mwangi, who lives
and trains in Colorado, ran with a small group of four until the twentieth mile, then pulled away
on the long climb up Hillcrest Road. "I knew the hill was where I had to go," he said afterward.
"Into that wind, nobody wanted to lead on the flat."

In the women's race, local favorite Sarah Lindqvist finished first in 2:31:47, improving on her
second-place finish last year. Lindqvist, a physical therapist at Riverside General Hospital, said
she had changed her training after last spring's race, adding more hill work and long runs at
marathon pace.

Further back, the race was as much about personal goals as about times. Eighty-two-year-old Harold
Brenner completed his twentieth Riverside Marathon, walking the final six miles with his
granddaughter. A team of nurses from the children's hospital ran in matching yellow shirts and
raised more than $40,000 for the pediatric ward.

Medical staff treated around 150 runners, mostly for blisters, cramps and mild dehydration. Six
people were taken to the hospital as a precaution, and all had been released by Sunday evening,
according to the race's medical director.

Road closures in the downtown area were lifted by 3 p.m. Organizers thanked the roughly 1,200
volunteers who staffed water stations, handed out medals and cleared thousands of discarded cups
from the course.

Registration for next year's race opens on June 1. Organizers said they are considering a cap on
entries because the finish area in Riverfront Plaza is close to its capacity.
""",
     ["Photos: Riverside Marathon 2024", "Road closures for Sunday's marathon",
      "Lindqvist eyes Olympic trials after win", "High school cross-country roundup"],
     cookie=4, share=1, newsletter=5, comments=2, ad=2, ad_after=3,
     dateline="Monday, April 22, 2024", weather="61\u00b0F Windy",
     crumbs=["Home", "Sport", "Running"], crumbs_inline=True, role="Sports Reporter", kicker="Running",
     timestamp="April 22, 2024, 6:30 a.m.", topics=["Marathon", "Running", "Riverfront"],
     tip="Got a local sports result? Send it to sports@riverside-gazette.example.",
     related_title="More from Sport", follow="Connect with the Gazette",
     nav=["Home", "News", "Sport", "Scores", "High School", "Outdoors", "Opinion", "Weather"],
     most_read=GAZETTE_MOST_READ[1])

page("/food/blog/2024/01/16/the-red-lentil-soup-i-make-every-tuesday/", "blog",
     "The red lentil soup I make every Tuesday",
     "Hannah", "2024-01-16T08:00:00+00:00", "Food",
     """
There is a soup in my kitchen that has no fixed recipe so much as a habit. I started making it
during a long, grey winter when I was working late and wanted something that would be ready in
half an hour, cost very little, and still taste like I had made an effort. Years later, it is
still the thing I cook on Tuesdays.

The base is red lentils, which are the most forgiving legume I know. They need no soaking, they
cook in about twenty minutes, and they collapse into a thick, velvety purée without any blending.
If you have only ever eaten lentils that stay firm and earthy, these will surprise you.

Start by warming a couple of tablespoons of olive oil in a heavy pot and adding one chopped onion,
two carrots and a stick of celery. Let them soften slowly over medium heat for eight to ten
minutes. Don't rush this step; the sweetness of the vegetables is what keeps the soup from tasting
flat.

Next, add three cloves of garlic, a teaspoon of ground cumin, half a teaspoon of smoked paprika and
a good pinch of chili flakes. Stir for a minute, until the spices smell toasted, then tip in a cup
and a half of rinsed lentils, a tin of chopped tomatoes and about five cups of vegetable stock.

Bring everything to a boil, then turn the heat down and let it simmer, partly covered, for twenty
to twenty-five minutes. Stir now and then, because lentils like to settle on the bottom of the
pot. When they have completely broken down, the soup is done.

The finishing touches matter more than you might think. A squeeze of lemon juice brightens
everything, and a spoonful of plain yogurt on top adds a cool contrast to the spices. If I have
fresh coriander or parsley, I scatter some over each bowl.

This makes enough for four generous servings, and it keeps well in the fridge for up to four days.
It thickens as it sits, so add a splash of water when you reheat it. It also freezes beautifully,
which is why there are usually two or three containers of it tucked behind the ice cube trays in
my freezer.

If you try it, I'd love to hear how you made it your own. My sister adds a handful of spinach at
the end, and a friend swears by a spoonful of peanut butter stirred in with the stock. Neither of
them is wrong.
""",
     [("Crispy chickpeas three ways", 'In "Snacks"'), ("A very simple tomato soup", 'In "Soups"'),
      ("What I keep in my freezer", 'In "Kitchen notes"')],
     site="Hannah's Little Kitchen", site_description="Simple food for busy weeknights",
     prefix="/food/blog/", nav=["Home", "Recipes", "Soups", "Baking", "About", "Contact"],
     posted="January 16, 2024", comment_count="14 Comments", post_id=2188,
     jump=["Jump to Recipe", "Print Recipe"], share=2, ad=3, ad_after=3, smart=True,
     categories=["Soups", "Vegetarian"], tags=["lentils", "weeknight dinners", "freezer-friendly"],
     prev="\u2190 Previous post: Crispy chickpeas three ways",
     next="Next post: Lemon drizzle traybake \u2192", comments=1,
     about_title="About Me",
     about="Hi, I'm Hannah! I cook simple, seasonal food in a tiny kitchen and write about it here.",
     newsletter=1,
     recent=["Lemon drizzle traybake", "Crispy chickpeas three ways", "My favourite winter salad",
             "How to cook rice without a rice cooker"],
     archives=["January 2024", "December 2023", "November 2023", "October 2023"],
     colophon='\u00a9 2024 Hannah\'s Little Kitchen \u00b7 Powered by <a href="#">WordPress</a> \u00b7 Theme: Cookery',
     cookie=2)

page("/science/2024/05/02/why-the-tide-comes-in-twice-a-day/", "magazine",
     "Why does the tide come in twice a day?",
     "Nadia Ferreira", "2024-05-02T07:00:00+01:00", "Science",
     """
Anyone who has spent a day at the coast knows that the sea does not stay put. Roughly every twelve
hours and twenty-five minutes, the water rises to a high tide and then falls away again. The
obvious culprit is the Moon, but the fact that there are two high tides a day, not one, puzzles
many people when they first think about it.

The Moon's gravity pulls on every part of the Earth, but not equally. The side of the planet facing
the Moon is about 6,400 kilometres closer to it than the centre of the Earth, and the far side is
the same distance farther away. Because gravity weakens with distance, the near side is pulled a
little more strongly than the centre, and the centre a little more strongly than the far side.

That difference in pull is what scientists call the tidal force. On the near side, the ocean is
drawn towards the Moon slightly more than the solid Earth beneath it, so the water bulges outward.
On the far side, the solid Earth is pulled towards the Moon slightly more than the ocean, and the
water is, in effect, left behind. The result is a second bulge on the opposite side of the planet.

As the Earth rotates once a day beneath these two bulges, any given stretch of coastline passes
through both of them. That is why most places see two high tides and two low tides each day. The
extra twenty-five minutes or so comes from the Moon's own motion: by the time the Earth has turned
once, the Moon has moved along its orbit, and the Earth needs a little longer to catch up.

The Sun produces tides too, though its effect is a little less than half that of the Moon. When
the Sun, Moon and Earth line up, at new moon and full moon, their effects add together and produce
larger spring tides. When they are at right angles, during the quarter moons, they partly cancel
out and the tides are smaller. These are known as neap tides.

Real coastlines complicate the picture considerably. The shape of a bay, the depth of the water
and the width of the continental shelf can all amplify or dampen the tide. In the Bay of Fundy in
Canada, the funnel shape of the bay helps produce a range of more than fifteen metres between high
and low water, while parts of the Mediterranean see a difference of only a few centimetres.

Some places even get just one high tide a day, because local geography and the way water sloshes
around an ocean basin can suppress one of the two bulges. Tide tables for any particular harbour are
therefore built from long records of local measurements rather than from the simple two-bulge
model alone.

Still, the basic idea holds up remarkably well. The next time you watch the water creep up a beach,
it is worth remembering that the same gentle stretching of the planet is happening on the other
side of the world at the same moment.
""",
     [("Why some years have thirteen full moons", "A short guide to the calendar's awkward arithmetic."),
      ("What makes a wave break?", "The physics of surf, explained with the help of a bathtub."),
      ("The quiet science of sea level", "How we measure an ocean that never stops moving.")],
     brand="The Gazette Weekend", nav=["Home", "Science", "Health", "Travel", "Books", "Food", "Puzzles"],
     subscribe="Subscribe from $1 a week", crumbs=["Home", "Science", "Explainers"], label="Explainer",
     byline="Words by Nadia Ferreira", date="2 May 2024", read_time="6 min read", share=3, ad=1, ad_after=3,
     promo=(5, "Read more:", "Why some years have thirteen full moons"),
     subheads={4: "Spring tides and neap tides"},
     bio="Nadia Ferreira writes about science and the environment. She lives on the coast.",
     newsletter=2, cookie=1,
     most_read=["The ten best picnic spots within an hour of the city", "Is it safe to swim in the river?",
                "A beginner's guide to birdwatching", "Our favourite cheap eats this spring"],
     copyright="\u00a9 2024 The Gazette Weekend, part of Riverside Gazette Media")

page("/community/2024/02/eastside-library-reopens.html", "legacy",
     "Eastside branch library reopens after eighteen-month renovation",
     "the editor", "2024-02-26T12:00:00-06:00", "Community",
     """
The Eastside branch of the Riverside Public Library reopened on Saturday after an eighteen-month
renovation that doubled its children's area, added a small recording studio and replaced a roof
that had leaked for as long as most staff can remember.

Several hundred people lined up before the doors opened at ten o'clock. Branch manager Teresa Gomez
said the first visitor through the door was a nine-year-old girl who had been waiting, in her
words, "since forever" to borrow books from the shelves rather than through the temporary pickup
window.

The $7.4 million project was funded mostly by a bond measure approved by voters in 2021, with about
$900,000 raised by the Friends of the Eastside Library through book sales, a spring gala and
hundreds of small donations.

The most striking change is the light. Architects removed a dropped ceiling and opened up a row of
tall windows that had been covered with panels in the 1970s. The reading room, once dim and
crowded, now looks out over a small garden planted with native shrubs.

The new recording studio, which can be booked free of charge for two hours at a time, includes a
microphone, a keyboard and editing software. Gomez said it was requested again and again in
community surveys, particularly by teenagers and by local groups who wanted to record oral
histories of the neighborhood.

Not everyone is happy with every detail. Some longtime patrons said they missed the old wooden card
catalog cabinet, which was sold at auction to help pay for furniture. Others noted that parking
remains limited to twelve spaces.

The branch is open Monday through Saturday from 9 a.m. to 8 p.m. and on Sundays from noon to
5 p.m. A full schedule of story times, homework help sessions and computer classes will begin next
week.
""",
     [],
     tagline="News and notices from Riverside's neighborhoods since 1998",
     nav=["Home", "Events Calendar", "Notices", "Clubs & Societies", "Photo Gallery", "Links", "Contact Us"],
     events=["Feb 29 - Seed swap, Grange Hall", "Mar 2 - Pancake breakfast, Fire Station 3",
             "Mar 9 - Library story time (ages 3-6)", "Mar 16 - River clean-up, meet at Mill Dam"],
     crumbs=["Home", "Notices", "Library"], posted="Posted February 26, 2024 by the editor",
     page_links=["\u00ab Back to Notices", "Printer-friendly version", "Email this page to a friend"],
     copyright="Copyright \u00a9 1998-2024 Riverside Community Notes. All rights reserved.",
     modified="Page last modified: February 26, 2024", visitors="Visitors: 184,223",
     cookie=6)

page("/tech/tidewater/blog/2024/06/04/tidewater-3-2-released/", "docs",
     "Tidewater 3.2 released: faster imports, a new plugin API and the end of Python 3.8 support",
     "Ravi Natarajan", "2024-06-04T15:00:00+00:00", "Tech",
     """
The Tidewater project has released version 3.2 of its open-source data pipeline toolkit. The update
focuses on speed and extensibility, and it also drops support for older Python versions, a change
the maintainers announced last autumn.

The headline improvement is in the import engine. Reading large CSV and Parquet files is now
between thirty and sixty percent faster in the project's benchmarks, largely because files are
split into chunks and parsed in parallel. Users who depended on the old single-threaded behaviour
can restore it by setting the `parallel_import` option to `false`.

Version 3.2 also introduces a new plugin API. Plugins can now register their own readers, writers
and transformation steps, and they are discovered automatically when installed in the same
environment. The old extension mechanism, which required editing a configuration file by hand,
still works but will print a deprecation warning.

Python 3.8 is no longer supported. The minimum version is now Python 3.9, and the project is tested
against versions up to 3.12. The maintainers said that dropping 3.8 allowed them to remove several
compatibility shims and simplify the type annotations throughout the code base.

Among the smaller changes, error messages for malformed input now include the line and column where
the problem was found, the command-line tool gained a `--dry-run` flag that shows which steps would
run without executing them, and the documentation has a new tutorial on writing custom plugins.

A number of bugs have been fixed as well. Timestamps with time zone offsets are no longer silently
converted to UTC when written to CSV, and a memory leak that affected long-running pipelines with
many small files has been resolved.

Upgrading should be straightforward for most users. The maintainers recommend reading the
[migration guide](/tech/tidewater/docs/migrating-to-3-2/) before upgrading pipelines that use custom
extensions, and they note that configuration files written for version 3.1 are fully compatible
with the new release.

Tidewater is developed by a group of volunteers and is released under the Apache 2.0 license. The
maintainers thanked the forty-one contributors who submitted changes to this release, eleven of
them for the first time.
""",
     [],
     announcement='\u2b50 If you like Tidewater, give it a star on <a href="https://code.example.com/tidewater">GitHub</a>!',
     nav=["Docs", "Tutorials", "API", "Blog", "Community", "Download"],
     recent=["Tidewater 3.2 released", "Tidewater at PyData Berlin", "Tidewater 3.1.2 patch release",
             "Roadmap for 2024"],
     date="June 4, 2024", read_time="3 min read", role="Core maintainer",
     code_after=6, code="pip install --upgrade tidewater==3.2.0",
     tags=["release", "python", "plugins"], newer="Tidewater at PyData Berlin",
     older="Tidewater 3.1.2 patch release",
     footer_cols=[("Docs", ["Getting started", "User guide", "API reference"]),
                  ("Community", ["Discussions", "Chat", "Code of conduct"]),
                  ("More", ["Blog", "GitHub", "Security policy"])],
     copyright="Copyright \u00a9 2024 The Tidewater Authors. Documentation licensed under CC BY 4.0.",
     cookie=5)

page("/travel/2024/05/18/three-days-on-the-slow-train-through-the-alder-valley/", "magazine",
     "Three days on the slow train through the Alder Valley",
     "Owen Marsh", "2024-05-18T08:00:00+01:00", "Travel",
     """
The train that runs up the Alder Valley is not in a hurry, and after a few hours on board, neither
are you. It takes just under five hours to cover a distance that a car could manage in two,
stopping at every village along the way, some of them little more than a platform, a bench and a
timetable under glass.

I boarded at Millbrook on a cool morning in early May, with a small bag, a paper map and no hotel
booked beyond the first night. The carriage was half full: a few hikers with muddy boots, a woman
knitting what looked like the sleeve of a very long jumper, and two schoolboys who got off after
three stops.

For the first hour, the line follows the river through flat farmland, past orchards in blossom and
fields of young barley. Then the valley narrows, the track begins to climb, and the views open up.
On the left, the river drops away into a gorge; on the right, the hillside is close enough to
touch.

My first stop was Ashby Cross, a village of stone houses and one excellent bakery. The owner, who
has been baking there for twenty-six years, told me that most visitors arrive by car and leave
within an hour. Those who come by train, she said, tend to stay the night, because the last service
back down the valley leaves at half past four.

The next day I walked a section of the old drovers' road from Ashby Cross to Kelling, about eleven
kilometres over open moorland. The path is well marked but exposed, and the weather changed three
times in as many hours. By the time I reached Kelling, I was grateful for the small pub by the
station and its coal fire.

The final stretch, from Kelling to the terminus at Highwater, is the most dramatic part of the
journey. The line crosses a tall stone viaduct and then curves around the head of the valley, where
waterfalls run down the bare hillsides after rain. Almost everyone in the carriage stood up to
look out of the windows.

Highwater itself is a quiet place, with a small museum about the building of the railway and a
handful of guesthouses. I spent my last evening there watching the light fade over the hills and
trying, without much success, to work out why the journey had felt so much longer and so much more
restful than the distance suggested.

Trains run four times a day in each direction from April to October, and twice a day in winter. A
three-day rover ticket allows unlimited travel on the line and is good value if you plan to stop
along the way, which is really the whole point.
""",
     [("Walking the coast path in a week", "Cliffs, coves and a lot of tea."),
      ("Europe's best sleeper trains", "Go to bed in one country, wake up in another."),
      ("A weekend in the lake villages", "Boats, bakeries and not much else \u2014 perfect.")],
     brand="The Gazette Weekend", nav=["Home", "Travel", "Books", "Food", "Science", "Health", "Puzzles"],
     subscribe="Subscribe", crumbs=["Home", "Travel", "UK & Ireland"], label="Travel",
     byline="By Owen Marsh", date="18 May 2024", read_time="8 min read", share=4, ad=5, ad_after=4,
     promo=(1, "Plan your trip:", "The Alder Valley line timetable and fares"),
     newsletter=2, cookie=3, related_title="More travel ideas", most_read_title="Trending now",
     most_read=["The ten best picnic spots within an hour of the city", "Europe's best sleeper trains",
                "How to pack for a week with only hand luggage", "Our favourite cheap eats this spring"],
     copyright="\u00a9 2024 The Gazette Weekend, part of Riverside Gazette Media")

page("/culture/books/2024/03/09/review-the-salt-ledger/", "magazine",
     "Review: 'The Salt Ledger' is a quiet novel about debts that cannot be repaid",
     "Miriam Cole", "2024-03-09T09:00:00+00:00", "Books",
     """
Ines Calloway's third novel begins with a death and a book of accounts. When Agnes Pell, the
elderly owner of a general store in a fishing town on the northern coast, dies in her sleep, her
niece Clara returns from the city to settle the estate. Among the papers in the back room she finds
a ledger recording forty years of unpaid debts, some of them owed by families who still live a few
streets away.

It is a simple premise, and Calloway resists the temptation to turn it into a mystery. There is no
hidden crime in the ledger, no long-buried scandal waiting to be exposed. Instead, the book asks a
quieter question: what does a community owe to someone who quietly carried it through hard years,
and what can anyone do about that once she is gone?

Clara is a careful, somewhat guarded narrator, and the early chapters move slowly as she works
through the names in the ledger. Some readers may find the pace frustrating. But the patience pays
off. Each visit to a debtor opens up another part of the town's history, from the winter the
fishing fleet lost two boats to the summer the cannery closed, and the ledger gradually becomes a
kind of map of the town's shared grief.

Calloway is especially good on the small rituals of a place where everyone knows everyone else. A
scene in which Clara is offered tea, cake and an elaborate apology by a retired schoolteacher who
owes eleven dollars from 1983 is both funny and painful, and it captures the way money and pride
become tangled together.

The novel is less successful when it leaves the town. A subplot involving Clara's failing
relationship back in the city feels thin, and her partner never becomes more than a voice on the
phone. The final chapters also tie up a few threads a little too neatly, as if the author was
reluctant to leave her characters in any real discomfort.

Those are minor complaints about a book that is otherwise thoughtful and beautifully written.
Calloway's prose is plain but precise, and she has a gift for the telling detail: the smell of tar
and oranges in the shop, the pencil marks that grow fainter as Agnes ages, the way the harbour
freezes from the edges inward.

*The Salt Ledger* will not appeal to readers who want a plot that races along. For anyone willing
to slow down, though, it is a moving and generous portrait of a community, and of the invisible
kindness that holds such places together.
""",
     [("The best new novels of the spring", "Twelve books to read before summer."),
      ("Interview: why small towns make big fiction", "Three authors on writing about home."),
      ("Review: 'A Map of Winter'", "An ambitious debut that doesn't quite hold together.")],
     brand="The Gazette Weekend", nav=["Home", "Books", "Film", "Music", "Theatre", "Travel", "Food"],
     subscribe="Subscribe for unlimited reading", crumbs=["Home", "Culture", "Books"], label="Book review",
     byline="Reviewed by Miriam Cole", date="9 March 2024", read_time="5 min read", share=2, ad=0, ad_after=2,
     newsletter=3, cookie=1, related_title="Related reviews",
     most_read=["The best new novels of the spring", "Ten films to watch this weekend",
                "Why everyone is reading poetry again", "The crossword: Saturday 9 March"],
     copyright="\u00a9 2024 The Gazette Weekend, part of Riverside Gazette Media. All rights reserved.")

page("/lifestyle/garden/2024/04/03/what-to-plant-in-april/", "blog",
     "What to plant in April: a practical guide for cool-climate gardens",
     "Geoff Pryce", "2024-04-03T06:00:00+01:00", "Garden",
     """
April is the month when gardeners start to get restless. The days are noticeably longer, the soil
is beginning to warm, and garden centres are full of trays of seedlings that look ready to go into
the ground. The trick is knowing which plants can cope with a late frost and which ones are better
off waiting a few more weeks.

Hardy vegetables are the safest place to start. Peas, broad beans, spinach, lettuce, radishes and
onion sets can all be sown or planted outdoors now in most cool-climate regions. Radishes are
particularly satisfying for beginners, since some varieties are ready to harvest in under a month.

Potatoes can also go in during April. Plant seed potatoes about ten centimetres deep and thirty
centimetres apart, and be ready to draw soil up around the shoots as they emerge. This protects
them from frost and increases the number of tubers each plant produces.

Tender crops such as tomatoes, courgettes, beans and sweetcorn should stay indoors or in a
greenhouse for now. A single cold night can kill young plants outright, and even a mild chill can
stunt their growth for weeks. Most growers wait until after the last expected frost date, which in
many areas falls in the middle of May.

It is also a good month to divide perennials that have become overcrowded. Dig up clumps of plants
such as hostas, daylilies and asters, split them into smaller sections with a spade or garden fork,
and replant them with a little compost. The divided plants usually recover quickly and flower more
freely.

Finally, keep an eye on the weeds. They grow just as eagerly as everything else in spring, and an
hour spent hoeing on a dry April afternoon can save many hours of work in June.
""",
     [("Raised beds on a budget", "Garden projects"), ("The slug problem, solved (mostly)", "Pests"),
      ("Ten herbs for a sunny windowsill", "Herbs")],
     site="The Potting Shed", site_description="Notes from an allotment, every week",
     prefix="/lifestyle/garden/", nav=["Home", "Vegetables", "Flowers", "Tools", "Ask Geoff", "Shop"],
     posted="3 April 2024", comment_count="Leave a comment", post_id=611, entities="numeric",
     share=4, ad=4, ad_after=2, categories=["Vegetables", "Monthly jobs"], tags=["April", "potatoes", "frost"],
     prev="\u00ab What to do in the garden in March", next="Planting out tomatoes \u00bb", comments=3,
     related_title="You might also enjoy",
     about_title="Hello!",
     about="I'm Geoff. I've been growing vegetables on the same allotment for thirty years and still "
           "lose a few seedlings to the frost every spring.",
     newsletter=3,
     recent=["Planting out tomatoes", "What to plant in April", "What to do in the garden in March",
             "Seed catalogues: a love letter"],
     archives=["April 2024", "March 2024", "February 2024"],
     colophon='Copyright \u00a9 2024 The Potting Shed | Site by <a href="#">Example Web Design</a>',
     cookie=6)

page("/education/2024/03/18/northfield-robotics-team-wins-regional-title/", "gazette",
     "Northfield High robotics team wins regional title with a robot built in a borrowed garage",
     "Grace Lin", "2024-03-18T17:45:00-05:00", "Education",
     """
A team of fourteen students from Northfield High School won the regional robotics championship on
Saturday, beating thirty-two other schools with a robot they designed and built in six weeks, much
of it in the garage of a team member's grandfather.

The competition required robots to pick up foam rings of different sizes and stack them on poles
around a small arena, while a second robot from an allied team tried to do the same. Northfield's
robot, which the students named Marvin, used a rotating arm and a simple gripper made from bent
aluminum and rubber bands.

"We tried something much more complicated at first," said team captain Aisha Bello, a junior. "It
had sensors and three motors in the gripper, and it broke every single time we tested it. In the
end we went with the simplest thing that could possibly work."

The team had to improvise after the school's engineering lab closed for repairs in January. Team
member Lucas Tran asked his grandfather, a retired machinist, whether they could use his garage.
For the next month, the students worked there most evenings and weekends, with the grandfather
supervising the use of his lathe and drill press.

Faculty adviser Jennifer Walsh said the experience taught the students as much about teamwork as
about engineering. "They learned to divide the work, to test early, and to admit when an idea
wasn't working," she said. "Those are things I can't teach from a textbook."

With the regional title, the team qualifies for the state championship next month. The students
are raising money to cover travel and registration costs, which come to about $6,000. Local
businesses have already pledged around half of that amount.
""",
     ["Northfield lab repairs to finish by summer", "Science fair winners announced",
      "Coding club opens at Eastside library", "Grants available for school STEM clubs"],
     cookie=0, share=2, newsletter=4, comments=3, ad=1, ad_after=1, entities="named",
     dateline="Monday, March 18, 2024", weather="47\u00b0F Light rain",
     crumbs=["Home", "News", "Education"], role="Education Reporter", kicker="Schools",
     timestamp="Updated 5:45 p.m. CDT, March 18, 2024", topics=["Northfield High School", "Robotics", "STEM"],
     tip="Know a student or teacher we should write about? Tell us at schools@riverside-gazette.example.",
     related_title="You may also like", tagline="Riverside's news, every day",
     most_read=GAZETTE_MOST_READ[1])

page("/health/2024/02/12/how-much-sleep-do-adults-really-need/", "magazine",
     "How much sleep do adults really need?",
     "Dr. Amara Osei", "2024-02-12T07:00:00+00:00", "Health",
     """
Most adults need somewhere between seven and nine hours of sleep a night, according to the major
sleep research organizations. That range is wide for a reason. People differ in how much sleep they
need to feel rested, and the amount can change over a lifetime, but very few healthy adults
function well on less than seven hours for long.

One of the difficulties with sleep is that people are poor judges of their own tiredness. In
laboratory studies, volunteers who were limited to six hours a night for two weeks performed as
badly on attention tests as people who had stayed awake for a full night. Yet they rated themselves
as only slightly sleepy, suggesting that the brain quietly adjusts to a new, lower standard.

Short sleep affects more than concentration. Over time, regularly sleeping too little is linked to
a higher risk of weight gain, high blood pressure, type 2 diabetes and depression. Researchers are
still working out which of these relationships are causal, but the overall pattern has been found
in many large studies.

Consistency seems to matter almost as much as duration. Going to bed and waking up at roughly the
same time every day, including weekends, helps keep the body's internal clock steady. Large swings
in sleep schedule can leave people feeling groggy even when the total number of hours looks
adequate.

Light is the most powerful signal for that internal clock. Bright light in the morning helps people
feel alert and makes it easier to fall asleep at night, while bright screens and overhead lights
late in the evening can delay the release of melatonin, the hormone that prepares the body for
sleep.

For people who have trouble sleeping, doctors often recommend starting with simple changes: keeping
the bedroom cool and dark, limiting caffeine after lunchtime, and avoiding large meals and alcohol
close to bedtime. If problems persist for more than a few weeks, it is worth talking to a doctor,
since conditions such as sleep apnea are common and treatable.
""",
     [("Is napping good for you?", "What the research says about the afternoon snooze."),
      ("Five myths about caffeine", "No, it doesn't stunt your growth."),
      ("How to build a morning routine that sticks", "Small steps, repeated often.")],
     brand="Gazette Health", nav=["Home", "Health", "Wellbeing", "Fitness", "Nutrition", "Ask the Doctor"],
     subscribe="Get Gazette Health in your inbox", crumbs=["Home", "Health", "Sleep"], label="Health explained",
     byline="By Dr. Amara Osei", date="12 February 2024", read_time="4 min read", share=0, ad=2, ad_after=2,
     smart=False, entities="utf8",
     promo=(4, "Related:", "Five myths about caffeine"),
     bio="This article is for general information only and is not a substitute for medical advice.",
     newsletter=4, cookie=4, most_read_title="Popular this week",
     most_read=["Is napping good for you?", "The truth about ten thousand steps",
                "Why your knees hurt on the stairs", "Seasonal allergies: when to see a doctor"],
     copyright="\u00a9 2024 Gazette Health. Content reviewed by our medical editors.")

page("/local/2024/05/29/hartley-street-bakery-closing-after-41-years/", "gazette",
     "After 41 years of early mornings, the Hartley Street bakery is closing its doors",
     "Tom Reyes", "2024-05-29T10:05:00-05:00", "Local",
     """
For forty-one years, Walter and June Kowalski have started work at four in the morning. On
Saturday, for the last time, they will pull the final trays of rye bread and poppy seed rolls from
the ovens at their small bakery on Hartley Street, then hand the keys to the building's new owner.

The couple opened the bakery in 1983 with a second-hand oven, a loan from June's brother and
recipes Walter learned from his father in Kraków. At first, they sold mostly to neighbors from the
Polish community. Over time, word spread, and the line outside on Saturday mornings became a
neighborhood fixture.

"We never advertised," June said, standing behind the glass counter that Walter built himself.
"People just told each other. Some customers came as children with their parents, and now they come
with their own grandchildren."

The decision to retire was not an easy one. Walter, who is seventy-four, had knee surgery last
year, and the couple said the long hours had become difficult to sustain. Their two children have
careers of their own and were not interested in taking over the business.

The building has been sold to a local coffee company that plans to keep part of the space as a
bakery. Walter has agreed to spend a few weeks teaching the new staff how to make his rye bread,
though he admitted that he is not sure the recipe can be fully written down. "Some of it is in the
hands," he said.

In recent weeks, customers have been leaving cards and letters taped to the front window. One,
written in a child's handwriting, thanks the couple for "the best birthday cake in the world."
Another simply says: "Thank you for every Saturday."

The bakery will be open from 6 a.m. until it sells out on Saturday. June said they plan to bake
more than usual, but expects the shelves to be empty well before noon.
""",
     ["Coffee company buys Hartley Street building", "Farmers market returns for the season",
      "Ten years of the Polish heritage festival", "Readers' picks: the best rye bread in town"],
     cookie=3, cookie_top=True, share=0, newsletter=0, comments=4, ad=0, ad_after=3, smart=False,
     dateline="Wednesday, May 29, 2024", weather="72\u00b0F Sunny",
     crumbs=["Home", "Local", "Neighborhoods"], crumbs_inline=True, role="Staff Writer", kicker="Neighborhoods",
     timestamp="May 29, 2024 at 10:05 a.m.", topics=["Small business", "Hartley Street", "Food"],
     tip="Do you have memories of the Hartley Street bakery? Share them with us at letters@riverside-gazette.example.",
     related_title="Related coverage", follow="Follow the Gazette",
     most_read=GAZETTE_MOST_READ[0])


# --------------------------------------------------------------------------------------
# Writing the WARC


def make_png(width: int = 16, height: int = 16) -> bytes:
    """A small RGB PNG (a blue-to-green gradient with a white diagonal), built inline."""
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter type: none
        for x in range(width):
            if x == y:
                row += bytes((255, 255, 255))
            else:
                row += bytes((20, 40 + x * 12, 200 - y * 10))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def record_id(kind: str, uri: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, kind + ':' + uri)}>"


def warc_date(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_exchange(writer, uri: str, when: datetime, body: bytes, content_type: str,
                   extra_headers: list[tuple[str, str]] = (), ip: str = "192.0.2.10") -> None:
    """A request record, then the response record it produced."""
    path = uri[len(BASE):] or "/"
    resp_id, req_id = record_id("response", uri), record_id("request", uri)
    accept = "image/avif,image/webp,image/png,*/*;q=0.8" if content_type.startswith("image/") else \
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    req_headers = StatusAndHeaders(f"GET {path} HTTP/1.1", [
        ("Host", HOST), ("User-Agent", USER_AGENT), ("Accept", accept),
        ("Accept-Language", "en-US,en;q=0.7"), ("Connection", "close")],
        protocol="HTTP/1.1", is_http_request=True)
    writer.write_record(writer.create_warc_record(
        uri, "request", http_headers=req_headers,
        warc_headers_dict={"WARC-Record-ID": req_id, "WARC-Date": warc_date(when),
                           "WARC-Concurrent-To": resp_id, "WARC-IP-Address": ip}))
    http_headers = StatusAndHeaders("200 OK", [
        ("Date", format_datetime(when, usegmt=True)), ("Server", "nginx"),
        ("Content-Type", content_type), ("Content-Length", str(len(body))),
        *extra_headers, ("Connection", "close")], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(
        uri, "response", payload=io.BytesIO(body), length=len(body), http_headers=http_headers,
        warc_headers_dict={"WARC-Record-ID": resp_id, "WARC-Date": warc_date(when),
                           "WARC-IP-Address": ip}))


def build(out_dir: Path) -> tuple[Path, Path]:
    warc_path = out_dir / "sample.warc.gz"
    truth_path = out_dir / "sample_truth.json"
    truth: dict[str, dict[str, list[str]]] = {}
    with open(warc_path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        info = (
            "software: plexity_plugins examples/make_sample_warc.py (warcio)\r\n"
            "format: WARC File Format 1.1\r\n"
            "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
            "isPartOf: plexity-sample\r\n"
            "description: Synthetic news and blog pages with boilerplate, written for "
            "plexity_plugins' quick start and tests\r\n"
            f"robots: ignore\r\nhttp-header-user-agent: {USER_AGENT}\r\n"
        ).encode("utf-8")
        writer.write_record(writer.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(info), length=len(info),
            warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Record-ID": record_id("warcinfo", "sample.warc.gz"),
                               "WARC-Date": warc_date(CRAWL_START),
                               "WARC-Filename": "sample.warc.gz"}))
        when = CRAWL_START
        for i, pg in enumerate(PAGES):
            when += timedelta(seconds=7 + 3 * i)
            text, doc = TEMPLATES[pg["template"]](pg)
            uri = BASE + pg["path"]
            extra = [("Cache-Control", "max-age=300")]
            if pg["template"] == "gazette":
                extra.append(("Set-Cookie", "gz_session=anon; Path=/; HttpOnly"))
            write_exchange(writer, uri, when, text.encode("utf-8"), "text/html; charset=utf-8", extra)
            truth[uri] = {"article": doc.article, "boilerplate": doc.boilerplate, "other": doc.other}
            if i == 4:  # an image among the pages, for tools to pass through unchanged
                when += timedelta(seconds=2)
                write_exchange(writer, BASE + "/static/img/gazette-logo.png", when, make_png(),
                               "image/png", [("Cache-Control", "max-age=86400")], ip="192.0.2.20")
    truth_path.write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return warc_path, truth_path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="where sample.warc.gz and sample_truth.json go (default: next to this script)")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    warc_path, truth_path = build(args.out_dir)
    print(f"wrote {warc_path} ({warc_path.stat().st_size:,} bytes) and {truth_path}")


if __name__ == "__main__":
    main()
