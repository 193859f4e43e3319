"""What reading makes of a record or a file, by name: why a record gives no HTML payload (`RECORD_SKIPS`; of them,
`NOT_PAGES` are no page at all), what a payload is (`HTML`, `PAGE_TEXT`, `CLEANED_TEXT`), why a file is not read
(`NOT_A_REGULAR_FILE`, `UNREADABLE_FILE`, `UNSUPPORTED_COMPRESSION`, `WAT_FILE`), why its reading stopped before its end
(`FILE_PROBLEMS`), and `describe`: an exception in one printable line, for a skip's or a problem's detail.

These are the names the stats count and the docs list.  They are apart from the readers that give them, so that
what counts them (``plexity clean``'s stats, ``plexity run``'s counts) imports no reader.
"""

from __future__ import annotations

from ..errors import printable

# Why a record gives no HTML payload (each record gets exactly one outcome).
NOT_RESPONSE = "not_response"  # request, metadata, warcinfo, resource ... records
# A revisit record: a deduplicating crawler's note that it fetched a page again and found it unchanged since a capture
# it wrote before (wget --warc-dedup, warcprox, Heritrix): no page of its own, its page is cleaned where that capture
# is.  Named apart from not_response, so that a crawl's revisits are not taken for its requests.
REVISIT = "revisit"
# A response whose HTTP status is a redirect (3xx) or an error (4xx, 5xx): its body is the server's note ("Moved
# Permanently", "Not Found"), not the page asked for.  Scrapy's spiders never see one (its redirect and HttpError
# middlewares), and Common Crawl keeps them out of its WARCs of pages (in its crawldiagnostics WARCs).
REDIRECT_OR_ERROR = "redirect_or_error"
# A resource record holding HTML: a page's bytes stored without its HTTP response (warcit's WARCs of a folder of
# files, an FTP fetch); not read, as datatrove's WarcReader does not read one (a conversion record holding HTML,
# which it reads, is read).  Common Crawl writes none.
HTML_RESOURCE = "html_resource"
NOT_HTML = "not_html"  # images, PDF, ...
TOO_LARGE = "too_large"  # payload (decompressed) over the cap, or HTTP headers over MAX_HEADER_BYTES
EMPTY_PAYLOAD = "empty_payload"
UNDECODABLE = "undecodable"  # a Content-Encoding (gzip, deflate, br, zstd) body that does not decode
TRUNCATED = "truncated"  # damaged: fewer bytes than its Content-Length, or not ending where it says
RECORD_SKIPS = (NOT_RESPONSE, REVISIT, REDIRECT_OR_ERROR, NOT_HTML, HTML_RESOURCE, TOO_LARGE, EMPTY_PAYLOAD,
                UNDECODABLE, TRUNCATED)
# Records that are no page to clean: `plexity clean` copies them as they are, `plexity run` counts them apart from
# the documents skipped.
NOT_PAGES = (NOT_RESPONSE, REVISIT, REDIRECT_OR_ERROR, NOT_HTML, HTML_RESOURCE)

# What a record's payload is: a page's HTML (a response), or a page's text already: a WET file's
# ``conversion`` record, text/plain (Common Crawl's text of a page, every visible line of it), or a
# cleaned WARC's record read back (a response of text/plain with X-Plexity-* headers, as ``plexity
# clean`` and ``plexity run --format warc`` write it: `warc_writer.is_cleaned_record`), text already
# cut down to the page's content, which is cleaned as an extractor's text is.
HTML = "html"
PAGE_TEXT = "page_text"
CLEANED_TEXT = "cleaned_text"

# Why a file is not read at all.
NOT_A_REGULAR_FILE = "not_a_regular_file"  # a FIFO, socket or device (opening a FIFO waits for ever)
UNREADABLE_FILE = "unreadable_file"  # a symlink loop, a dangling link, no permission, a damaged .gz
UNSUPPORTED_COMPRESSION = "unsupported_compression"  # a WARC compressed otherwise than by gzip: .warc.bz2 ...
# A file of a page a browser saved "complete" (page_files/ beside page.html: its images, styles, scripts)
PAGE_RESOURCE = "page_resource"
NOT_MHTML = "not_mhtml"  # a .mhtml or .mht file holding no page: no MIME message, or its page is no HTML
WAT_FILE = "wat_file"  # Common Crawl's metadata of a crawl's records, no page in it: skipped by its name (`wat_file`)

# Why reading a file stopped before its end.
NOT_A_WARC = "not_a_warc"  # no WARC record at its start: nothing read
TRUNCATED_FILE = "truncated"  # ends inside a record (a cut gzip member, a short payload)
CORRUPT_FILE = "corrupt"  # unreadable from some record on
FILE_PROBLEMS = (NOT_A_WARC, TRUNCATED_FILE, CORRUPT_FILE)
READ_ERROR = "read_error"  # the system failed to read it (EIO): `ReadError`, raised, never one of FILE_PROBLEMS
TRAILING_GARBAGE = "trailing_garbage"  # a .gz document file: bytes after its gzip stream, ignored


def describe(exc: BaseException) -> str:
    """An exception in one short printable line (warcio quotes the garbage it met: its control characters
    escaped, as ESC or CR would reach a terminal and a task's log as they are)."""
    message = str(exc)
    message = message if len(message) <= 160 else message[:160] + "..."
    return f"{type(exc).__name__}: " + printable(message.replace("\n", " ").encode("ascii", "backslashreplace")
                                                 .decode("ascii"))
