"""`plexity clean`: clean text, HTML and WARC files into a directory (the engine is
`plexity_plugins.cleaning.files`)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..errors import FAILED_STATUS
from ..scoring.methods import METHODS
from ..extractors import DEFAULT_EXTRACTOR, EXTRACTORS
from ..cleaning.policy import CLEAN_MIN_CHARS, DEFAULT_MIN_CHARS, OTHER_LANGUAGE_ACTIONS
from ..io.read_limits import MAX_DOCUMENT_BYTES
from ..io.read_outcomes import READ_ERROR
from ..extractors.sandbox import DEFAULT_EXTRACT_TIMEOUT, EXTRACT_MEMORY_ENV
from .options import parse_memory
from .options import add_model_args, check_language_options, parse_size


def add_parser(sub) -> None:
    p = sub.add_parser("clean", help="clean text, HTML and WARC files")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="files or directories (recursive), or a quoted glob of them (as plexity run takes one)")
    p.add_argument("--output-dir", "-o", required=True, help="where cleaned files go")
    add_model_args(p)
    p.add_argument("--extractor", choices=EXTRACTORS, default=DEFAULT_EXTRACTOR,
                   help=f"HTML to text before filtering (default: {DEFAULT_EXTRACTOR})")
    p.add_argument("--method", choices=METHODS, default=None,
                   help="regions: the best runs of blocks (default for tags); region: the best run "
                        "(default for none and .txt inputs); trim: edges only (default for learned, dense, "
                        "auto, trafilatura and fast); sentences: the paper's per-sentence rule")
    p.add_argument("--annotate", action="store_true",
                   help='keep everything, wrap would-be-dropped sentences in <ppl score="...">')
    p.add_argument("--write-dropped", action="store_true",
                   help="write every dropped sentence/document with its reason to plexity-dropped.jsonl")
    p.add_argument("--min-chars", type=int, default=CLEAN_MIN_CHARS,
                   help=f"empty a document keeping fewer characters (reason too_short; default: "
                        f"{CLEAN_MIN_CHARS}, never; the datatrove step and Scrapy default to {DEFAULT_MIN_CHARS})")
    p.add_argument("--min-kept-fraction", type=float, default=0.0,
                   help="empty a document keeping a smaller share of its text (reason too_little_kept; default: 0)")
    p.add_argument("--other-languages", choices=OTHER_LANGUAGE_ACTIONS, default="keep",
                   help="documents in another language than the model's: keep unfiltered (default) or drop")
    p.add_argument("--max-document-bytes", type=parse_size, default=MAX_DOCUMENT_BYTES,
                   help=f"skip a larger document, decompressed (.gz files, WARC payloads), as too_large; "
                        f"reading stops at the cap (default: {MAX_DOCUMENT_BYTES // 10**6} MB)")
    p.add_argument("--extract-timeout", type=float, default=DEFAULT_EXTRACT_TIMEOUT, metavar="SECONDS",
                   help=f"stop extracting an HTML document after this long and skip it as extraction_failed "
                        f"(default: {DEFAULT_EXTRACT_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--extract-memory", type=parse_memory, default=None, metavar="SIZE",
                   help=f"stop extracting an HTML document when its extraction process holds more memory and "
                        f"skip it as memory_limit (default: ${EXTRACT_MEMORY_ENV}, else 768MiB, less where the job's "
                        f"memory holds less; 0: no ceiling)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--no-language-check", action="store_true",
                   help="filter every text with the model, whatever its language (default: text in another "
                        "language than the model's is passed through)")
    p.set_defaults(func=cmd_clean)



_URL = re.compile(r"^(?!file://|local://)[A-Za-z][A-Za-z0-9+.-]+://")  # (fsspec's URLs; a local one is its path)


def cmd_clean(args: argparse.Namespace) -> int:
    from ..cleaning.file_kinds import KNOWN_NAMES, kind_of
    from ..extractors.sandbox import TimeLimitedExtractor, extract_memory_limit
    from ..runtime.extras import local_path

    # (a file:// URL, as `plexity run` and fsspec take one, is the path it names: it was "input file:/data/crawl
    # does not exist", and an output folder made of it, ./file:/data/cleaned)
    args.inputs = [local_path(name) for name in args.inputs]
    for name in args.inputs:  # (s3://bucket/crawl was "input s3:/bucket/crawl does not exist")
        if _URL.match(name):
            raise ValueError(f"{name} is a URL: plexity clean reads files on this machine; plexity run "
                             f"'{name}' -o DIR reads WARC files from S3, Hugging Face or HTTP(S) (the [remote] extra; "
                             f"docs/ray.md), or copy them here and clean the copy")
    args.output_dir = local_path(args.output_dir)
    if any(kind_of(Path(name)) != "text" for name in args.inputs):  # (a page to extract, likely: a folder too)
        # its extractor's import overlaps this process's of the cleaning engine and the model; `FileCleaner.run`
        # waits for it
        TimeLimitedExtractor.start_aside(args.extractor, timeout=args.extract_timeout, memory_limit=args.extract_memory)
    from ..scoring.methods import method_for_extractor, method_for_page_text
    from ..cleaning.files import EarlierRun, FileCleaner, collect_inputs
    from ..io.output_lock import own_output_folder
    from ..scoring.multilingual import make_scorer, require_thresholds

    language_check = not args.no_language_check
    scorers: dict = {}  # one scorer per method

    def scorer_for(method: str):
        if method not in scorers:
            scorers[method] = make_scorer(args.model, threshold=args.threshold, method=method,
                                          language_check=language_check)
        return scorers[method]

    scorer = scorer_for(args.method or method_for_extractor(args.extractor))
    require_thresholds(scorer)  # (a map's model without one stopped the run at its language's first page)
    check_language_options(args, scorer)
    # Text files skip the extractor, so by default they get the method for unextracted text; a WET
    # record's text is a page's every visible line: the tag remover's kind of text, and method.
    text_scorer = scorer_for(args.method or method_for_extractor("none"))
    page_text_scorer = scorer_for(args.method or method_for_page_text())
    extract_memory_limit(args.extract_memory)  # (a ceiling it cannot take: said before the output folder is made)
    inputs = collect_inputs(args.inputs, output_dir=args.output_dir)
    if not inputs:
        holds = "holds" if len(args.inputs) == 1 else "hold"
        print(f"plexity clean: error: no file to clean: {', '.join(map(str, args.inputs))} {holds} none: give "
              f"{KNOWN_NAMES}, or folders holding them", file=sys.stderr)
        return 2
    with own_output_folder(args.output_dir):  # (a second run into it stops here, in one line)
        earlier = EarlierRun(args.output_dir, args.write_dropped)
        cleaner = FileCleaner(scorer, args.output_dir, extractor=args.extractor, annotate=args.annotate,
                              write_dropped=args.write_dropped, text_scorer=text_scorer,
                              page_text_scorer=page_text_scorer, min_chars=args.min_chars,
                              min_kept_fraction=args.min_kept_fraction, other_languages=args.other_languages,
                              max_document_bytes=args.max_document_bytes, extract_timeout=args.extract_timeout,
                              extract_memory=args.extract_memory)
        stats = cleaner.run(inputs, progress=not args.quiet)
    print(stats.summary())
    dropped = stats.what_was_dropped()
    if dropped:
        print(dropped)
    print(f"outputs and plexity-stats.json in {args.output_dir}"
          f"{'' if args.write_dropped else ' (every dropped sentence with its reason: --write-dropped)'}")
    note = earlier.note()
    if note:
        print(note)
    if stats.nothing_read():  # nothing usable is no success
        print(f"plexity clean: error: no input could be read: {stats.unread_files()}", file=sys.stderr)
        return FAILED_STATUS
    failed_reads = stats.damaged_files.get(READ_ERROR, 0)
    if failed_reads:  # the disk or the file system failed, not the input: the run is not whole
        print(f"plexity clean: error: {failed_reads} file(s) could not be read to their end (read_error: the "
              f"system failed to read them, not their contents; the records before the failure were cleaned): "
              f"{stats.read_error_files()}", file=sys.stderr)
        return FAILED_STATUS
    return 0
