"""`plexity score`: the perplexity of a text, its sentences, or the document perplexity.

What it prints is labelled and says how to read it: which of the model's thresholds applies
to one sentence, and what `plexity clean` would do with the same text (the default methods
judge lines and runs of lines, not one sentence alone).  ``--plain`` prints the bare numbers
for scripts.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from ..io.read_limits import MAX_DOCUMENT_BYTES
from .options import add_model_args, parse_size, single_model


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="perplexity of a sentence, with how to read it against the threshold")
    p.add_argument("text", nargs="+",
                   help="the text (its words, quoted or not), or - to read stdin (plexity score - < page.txt)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--sentences", action="store_true",
                      help="first list each sentence: perplexity, tokens, unknown tokens, text (tab-separated, "
                           "with a header line)")
    what.add_argument("--document", action="store_true",
                      help="the text's document perplexity (CCNet's for a CCNet model; for ours, its sentences "
                           "pooled): 10 ** (-sum log10 P / sum (tokens + 1)) over its lines")
    p.add_argument("--plain", action="store_true",
                   help="print the numbers only (the perplexity on the last line), no labels")
    p.add_argument("--max-document-bytes", type=parse_size, default=MAX_DOCUMENT_BYTES,
                   help=f"refuse a longer text, as plexity clean skips a longer document (default: "
                        f"{MAX_DOCUMENT_BYTES // 10**6} MB); stdin is read no further")
    add_model_args(p, threshold=False, language_map="with --document, to score the text with its language's model")
    p.set_defaults(func=cmd_score)


def read_text(args: argparse.Namespace) -> str | None:
    """The text to score (stdin read up to the cap, its bytes decoded as `plexity clean` decodes a
    .txt file), or None after saying why there is none to score."""
    from ..scoring.scorer import sanitize

    if isinstance(args.text, list):  # (unquoted words arrive one argument each)
        args.text = " ".join(args.text)
    cap = args.max_document_bytes
    raw = sys.stdin.buffer.read(cap + 1) if args.text == "-" else argument_bytes(args.text)
    if len(raw) > cap:
        where = "stdin holds" if args.text == "-" else "the text argument is"
        print(f"plexity score: {where} more than {cap:,} bytes: not scored (plexity clean skips such a document "
              f"as too_large; --max-document-bytes raises the cap)", file=sys.stderr)
        return None
    text = sanitize(raw)[0]
    if not text.strip():
        what = "empty" if not text else "only whitespace"
        if args.text == "-":
            print(f"plexity score: stdin is {what}: nothing to score", file=sys.stderr)
        else:  # `plexity score "$(cat missing.txt)"`: cat failed and the argument is empty
            print(f"plexity score: the text argument is {what}: nothing to score (if it came from $(cat FILE), "
                  f"does FILE exist? `plexity score - < FILE` fails loudly when it does not)", file=sys.stderr)
        return None
    if args.text != "-":
        hint = file_name_hint(text)
        if hint:
            print(f"plexity score: note: {hint}", file=sys.stderr)
    return text


def argument_bytes(text: str) -> bytes:
    """The bytes the shell gave as the text argument, decoded as a UTF-8 text then: under a locale that is not
    UTF-8 (LC_ALL=POSIX with PYTHONUTF8=0) Python decodes ``approuvé`` as ``approuv\\udcc3\\udca9``, which were scored
    as six unknown characters (a French sentence scored 268,639 instead of its 28,247).  A str no shell gives (a
    surrogate outside surrogateescape's, from `main([...])`) keeps its code points, as before."""
    try:
        return os.fsencode(text)
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def file_name_hint(text: str) -> str | None:
    """When the text to score looks like a file's name, what to run instead (it is still scored,
    as the words given)."""
    import os

    from ..cleaning.file_kinds import HTML_SUFFIXES, TEXT_SUFFIXES, WARC_SUFFIXES

    name = text.strip()
    if not name or any(c.isspace() for c in name):
        return None
    if not (os.path.isfile(name) or name.lower().endswith(WARC_SUFFIXES + HTML_SUFFIXES + TEXT_SUFFIXES)):
        return None
    clean = f"`plexity clean {shlex.quote(name)} --output-dir DIR` cleans it"
    if name.lower().endswith(WARC_SUFFIXES + HTML_SUFFIXES) or name.lower().endswith(".gz"):
        return f"{name!r} is scored as the words it is, not as a file: {clean}"
    return (f"{name!r} is scored as the words it is, not as a file: `plexity score - < {shlex.quote(name)}` scores "
            f"its text, "
            f"{clean}")


def cmd_score(args: argparse.Namespace) -> int:
    from ..errors import printable
    from ..scoring.multilingual import make_scorer

    text = read_text(args)
    if text is None:
        return 2
    if args.document:
        # (one model scores whatever it is given; a map needs the language to pick the model)
        scorer = make_scorer(args.model, language_check=isinstance(args.model, dict))
        score, passthrough, model = scorer.score_document(text)
        if score is None:
            print(f"plexity score: not scored: {passthrough} (no model for that language)", file=sys.stderr)
            return 1
        if score.perplexity is None:
            print("plexity score: not scored: the text has no tokens once normalised", file=sys.stderr)
            return 1
        if args.plain:
            print(f"{score.perplexity:.2f}")
        else:
            print(f"document perplexity: {score.perplexity:.2f} (model {model}; lower is more like the model's "
                  f"training text)")
        return 0
    # ("with --document it takes one" read as one model: say which takes the map, and what to give here)
    models = " or ".join(f"--model {shlex.quote(str(model))}" for model in dict.fromkeys(
        args.model.values() if isinstance(args.model, dict) else ()))
    scorer = make_scorer(single_model(args, f": give its language's model ({models}); with --document it takes a "
                                            f"map, and scores the text with its language's model"))
    records = scorer.score(text) if args.sentences else []
    if args.sentences:
        if not args.plain:
            print("perplexity\ttokens\tunknown\tsentence")
        for record in records:
            # (a tab inside the sentence would start a column of its own; a page's ESC, BEL or CR, printed as they
            # were, set the terminal's title, cleared it or overwrote the line: escaped, `\x1b`)
            print(f"{record.perplexity:.2f}\t{record.tokens}\t{record.oov}\t"
                  f"{printable(record.text.replace(chr(9), ' '))}")
    perplexity = scorer.perplexity(text)
    if args.plain:
        print(f"{perplexity:.2f}")
        return 0
    print(explain(scorer, single_model(args), text, perplexity, several=args.sentences))
    return 0


# What may end a whole sentence (then a high perplexity is not for want of its full stop)
SENTENCE_ENDS = ".!?\"'”’)»…\u3002\uff01\uff1f\u0964\u061f"


def explain(scorer, model, text: str, perplexity: float, several: bool) -> str:
    """The perplexity with its label, the threshold that applies to one sentence, and what
    `plexity clean` (method `region`, its default for plain text) does with the same text."""
    from ..scoring.scorer import PerplexityScorer

    info = scorer.info
    sentence_threshold = info.threshold
    which = "the whole text as one sentence" if several else "the text as one sentence"
    lines = [f"perplexity: {perplexity:.2f} ({which}; model {info.name}; lower is more like the model's "
             f"training text)"]
    if sentence_threshold is not None:
        side = "above" if perplexity > sentence_threshold else "at or below"
        lines.append(f"sentence threshold: {sentence_threshold:.1f}, and this is {side} it. It judges one sentence "
                     f"alone under --method sentences; region and regions (the defaults for text and for all "
                     f"visible text) pool each line's sentences against it and keep runs of lines; trim, after "
                     f"a main-content extractor, uses {info.threshold_extracted or sentence_threshold:.1f}.")
        result = PerplexityScorer(model, method="region").clean(text)
        total = result.sentences_kept + result.sentences_dropped
        if result.passthrough:
            verdict = f"passed through unfiltered ({result.passthrough}: not the model's language)"
        else:
            verdict = ("kept" if result.sentences_kept == total else
                       "dropped" if not result.sentences_kept else "partly kept")
            verdict += f", {result.sentences_kept} of {total} sentence(s) kept"
        lines.append(f"plexity clean on this text (method region): {verdict}")
        if (not result.passthrough and perplexity > sentence_threshold
                and text.rstrip()[-1:] not in SENTENCE_ENDS):
            lines.append("(a fragment without its full stop scores higher: the model has rarely seen a "
                         "sentence end there; try the whole sentence)")
    return "\n".join(lines)
