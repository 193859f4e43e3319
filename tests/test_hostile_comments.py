"""Comments end where HTML's tokenizer ends them, in every reader: at ``-->``, at ``--!>``, and at once
for ``<!-->`` and ``<!--->``.

The learned reader (the default) ended a comment at ``-->`` only: a page with ``<!-- ... --!>``,
``<!-->`` or ``<!--->`` and no later ``-->`` gave no text at all, and one with a later ``-->`` lost what
lay between (browsers, lexbor and libxml2 show it).  Found by hostile-page round three: 300,000
``<!-- -- -- --!>`` and a paragraph, read as nothing.
"""

from __future__ import annotations

import pytest

from plexity_plugins.extractors import get_extractor
from plexity_plugins.extractors.learned import segment

PARAGRAPHS = "".join(f"<p>Paragraph {i}: the council approved the budget for the new library on Tuesday evening, and "
                     f"the building will open in the spring, the mayor said to the press.</p>" for i in range(6))


@pytest.mark.parametrize("comment", ["<!-- a note --!>", "<!-->", "<!--->", "<!-- a note --!> then text -->"])
@pytest.mark.parametrize("reader", ["learned", "dense", "fast", "tags", "trafilatura"])
def test_a_comment_ends_where_html_ends_it(reader, comment):
    html = f"<html><body><h1>The library</h1>{comment}{PARAGRAPHS}</body></html>"
    text = get_extractor(reader)(html)
    assert "Paragraph 5: the council approved" in text
    if comment.endswith("then text -->"):
        assert "then text -->" in text or reader in ("trafilatura", "dense", "fast")  # (their heuristics may drop it)


def test_the_learned_reader_s_python_reference_ends_comments_the_same_way():
    html = f"<html><body><h1>The library</h1><!-- a note --!>{PARAGRAPHS}</body></html>"
    page = segment.segment(html)
    assert sum("Paragraph" in block.text for block in page.blocks) == 6
