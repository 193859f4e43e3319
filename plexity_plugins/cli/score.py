"""`plexity score`: the perplexity of a text, its sentences, or the document perplexity."""

from __future__ import annotations

import argparse
import sys

from .options import add_model_args, single_model


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="perplexity of a sentence (last line of stdout)")
    p.add_argument("text", help="the text, or - to read stdin")
    p.add_argument("--sentences", action="store_true",
                   help="first print each sentence: perplexity, tokens, OOV tokens, text (tab-separated)")
    p.add_argument("--document", action="store_true",
                   help="the text's document perplexity (CCNet's for a CCNet model; for ours, its sentences "
                        "pooled): 10 ** (-sum log10 P / sum (tokens + 1)) over its lines")
    add_model_args(p, threshold=False)
    p.set_defaults(func=cmd_score)



def cmd_score(args: argparse.Namespace) -> int:
    from ..multilingual import make_scorer

    text = sys.stdin.read() if args.text == "-" else args.text
    if args.document:
        # (one model scores whatever it is given; a map needs the language to pick the model)
        scorer = make_scorer(args.model, language_check=isinstance(args.model, dict))
        score, passthrough, _model = scorer.score_document(text)
        if score is None:
            print(f"not scored: {passthrough}", file=sys.stderr)
            return 1
        print(f"{score.perplexity:.2f}" if score.perplexity is not None else "nan")
        return 0
    scorer = make_scorer(single_model(args))
    if args.sentences:
        for record in scorer.score(text):
            print(f"{record.perplexity:.2f}\t{record.tokens}\t{record.oov}\t{record.text}")
    print(f"{scorer.perplexity(text):.2f}")
    return 0
