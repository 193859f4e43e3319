"""Throughput of a CCNet-style model (SentencePiece + KenLM, scored through the kenlm module)
against our default model (compiled path), and against datatrove's own ``KenlmModel``.

    .venv/bin/python bench/ccnet_throughput.py [--dev-dir ../shared/bench/wcxb-dev] [--order 5]
        [--vocab 8000] [--repeat 3] [--work DIR]

The CCNet recipe on the benchmark's text (no model can be downloaded here): the pages'
visible text (``html_to_text_tags``) is split by page number into halves; on the even half a
SentencePiece unigram model (``--vocab``) is trained on the cc_net-normalised documents, and a
KenLM model (``--order``, lmplz, build_binary trie) on those documents cut into pieces, one
document a line, as cc_net's ``mine.py`` builds its models.  It is imported with
``plexity_plugins.training.model_import.import_model`` (tokenizer ``ccnet-datatrove`` for the comparison
with datatrove, ``ccnet`` for ours).  The odd half is scored, single-threaded, every contender
``--repeat`` times, alternating, fastest pass counted:

  clean      `PerplexityScorer(ccnet model).clean(doc)` (method "sentences", no language check:
             per sentence, normaliser + SentencePiece + kenlm module, plus the document score)
  document   `PerplexityScorer(ccnet model).document_perplexity(doc)`
  datatrove  datatrove's ``KenlmModel.get_perplexity(doc)`` on the same files (pointed at them
             through its lazily-filled attributes) with the ccnet-datatrove import
  default    `PerplexityScorer().clean(doc)` with the embedded model (compiled path)

The last line of stdout is one JSON object with every figure (MB/s of UTF-8 text) and the
largest relative difference between our document perplexities and datatrove's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEV_DIR = REPO.parent / "shared" / "bench" / "wcxb-dev"


def page_texts(dev_dir: Path) -> list[tuple[int, str]]:
    from plexity_plugins.extractors import html_to_text_tags

    texts = []
    for path in sorted((dev_dir / "html").glob("*.html.gz")):
        text = html_to_text_tags(gzip.open(path).read())
        if text.strip():
            texts.append((int(path.name.split(".")[0]), text))
    return texts


def build(train: list[str], work: Path, order: int, vocab: int) -> tuple[Path, Path]:
    import sentencepiece

    from plexity_plugins.training import kenlm_tools, thresholds
    from plexity_plugins.text.ccnet_normalizer import normalize

    normalised = [line for line in (normalize(doc) for doc in train) if line]
    text = work / "normalised.txt"
    text.write_text("\n".join(normalised) + "\n", encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(input=str(text), model_prefix=str(work / "xx.sp"), vocab_size=vocab,
                                             model_type="unigram", character_coverage=0.9999, num_threads=1,
                                             input_sentence_size=200_000, shuffle_input_sentence=True,
                                             max_sentence_length=1 << 20, hard_vocab_limit=False,
                                             minloglevel=2)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(work / "xx.sp.model"))
    pieces = work / "pieces.txt"
    pieces.write_text("\n".join(" ".join(sp.encode_as_pieces(line)) for line in normalised) + "\n", encoding="utf-8")
    kenlm_tools.run_lmplz(pieces, work / "xx.arpa", order, memory="1G", temp_dir=work, discount_fallback=True)
    kenlm_tools.run_build_binary(work / "xx.arpa", work / "xx.arpa.bin", quantize_bits=None)
    (work / "xx.arpa").unlink()
    return work / "xx.arpa.bin", work / "xx.sp.model"


def fastest(function, docs: list[str], repeat: int, results: dict, name: str) -> None:
    for _ in range(repeat):
        started = time.perf_counter()
        for doc in docs:
            function(doc)
        results.setdefault(name, []).append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    parser.add_argument("--order", type=int, default=5)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # single core, like bench/throughput.py

    work = args.work or Path(tempfile.mkdtemp(prefix="plexity-ccnet-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["PLEXITY_MODEL_DIR"] = str(work / "models")
    texts = page_texts(args.dev_dir)
    train = [t for n, t in texts if n % 2 == 0]
    docs = [t for n, t in texts if n % 2 == 1]
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    t0 = time.perf_counter()
    kenlm_path, sp_path = build(train, work, args.order, args.vocab)
    build_s = time.perf_counter() - t0

    import kenlm
    import sentencepiece
    from datatrove.utils import perplexity as dt

    from plexity_plugins.training.model_import import import_model
    from plexity_plugins.scoring.scorer import PerplexityScorer

    for name, tokenizer in (("bench-ccnet", "ccnet"), ("bench-dt", "ccnet-datatrove")):
        import_model(name, kenlm_path, tokenizer, sp_path, "en", force=True)
    ours = PerplexityScorer("bench-ccnet", threshold=1e4, method="sentences", language_check=False)
    ours_dt = PerplexityScorer("bench-dt", threshold=1e4, method="sentences", language_check=False)
    default = PerplexityScorer(language_check=False)
    reference = dt.KenlmModel("unused", "en")
    reference._model = kenlm.Model(str(kenlm_path))
    reference._tokenizer = dt.SentencePiece("unused", "en")
    reference._tokenizer._model = sentencepiece.SentencePieceProcessor(model_file=str(sp_path))

    # agreement with datatrove (its rounding to 0.1 switched off for the comparison)
    dt.round = lambda value, digits=None: value
    worst = max(abs(ours_dt.document_perplexity(d) - reference.get_perplexity(d)) / reference.get_perplexity(d)
                for d in docs if d.strip())
    del dt.round

    for scorer in (ours, default):
        scorer.clean(docs[0])  # open the models
    times: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        fastest(ours.clean, docs, 1, times, "clean")
        fastest(ours.document_perplexity, docs, 1, times, "document")
        fastest(reference.get_perplexity, docs, 1, times, "datatrove")
        fastest(default.clean, docs, 1, times, "default")
    figures = {f"{k}_mb_per_s": round(mb / min(v), 3) for k, v in times.items()}
    vocabulary = sum(1 for _ in open(work / "xx.sp.vocab", encoding="utf-8"))
    report = {"mb_scored": round(mb, 2), "documents": len(docs), "train_documents": len(train),
              "order": args.order, "sp_vocab": vocabulary, "model_mb": round(kenlm_path.stat().st_size / 1e6, 1),
              "build_s": round(build_s, 1), "max_rel_diff_vs_datatrove": worst, **figures}
    for key, value in report.items():
        print(f"{key:28} {value}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
