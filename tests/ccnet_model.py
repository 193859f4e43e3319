"""A CCNet model in miniature (SentencePiece on normalised text, KenLM on its pieces) and the corpus
it is trained on: the CCNet tests and the Models page's runnable examples."""

from __future__ import annotations

from pathlib import Path

import sentencepiece

from plexity_plugins.text.ccnet_normalizer import normalize
from plexity_plugins.training import kenlm_tools

CORPUS = [
    "The council approved the budget for the new library on Tuesday evening.",
    "The library will open in the spring and will stay open late on weekdays.",
    "Residents asked the council about the road to the river and the old bridge.",
    "The mayor said that the road would be finished before the end of the year.",
    "Children played in the park near the river while their parents talked.",
    "Scientists measured the temperature of the water every morning for a month.",
    "The results of the study were published in a report by the university.",
    "The report said that the river was cleaner than it had been for many years.",
    "Farmers in the valley grow apples, pears and cherries on small family farms.",
    "The train to the city leaves the station every hour during the day.",
    "Many visitors come to the town in the summer to walk in the hills.",
    "The museum shows paintings and photographs from the history of the region.",
    "Teachers at the school started a new program to help children read.",
    "The hospital opened a new wing for patients who need long care.",
    "Workers repaired the roof of the church after the storm in the winter.",
    "The company built a factory near the port and hired three hundred people.",
]


def build_ccnet_model(directory: Path, documents: list[str], vocab_size: int = 300, order: int = 3) -> tuple[Path, Path]:
    """(xx.arpa.bin, xx.sp.model) as CCNet builds them: SentencePiece trained on normalised
    text, KenLM on that text cut into pieces, one document a line."""
    directory.mkdir(parents=True, exist_ok=True)
    normalised = [normalize(doc) for doc in documents]
    text = directory / "normalised.txt"
    text.write_text("\n".join(normalised) + "\n", encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(directory / "xx.sp"), vocab_size=vocab_size, model_type="unigram",
        character_coverage=1.0, hard_vocab_limit=False, num_threads=1, minloglevel=2)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(directory / "xx.sp.model"))
    pieces = directory / "pieces.txt"
    pieces.write_text("\n".join(" ".join(sp.encode_as_pieces(line)) for line in normalised) + "\n", encoding="utf-8")
    kenlm_tools.run_lmplz(pieces, directory / "xx.arpa", order, memory="64M", discount_fallback=True, temp_dir=directory)
    kenlm_tools.run_build_binary(directory / "xx.arpa", directory / "xx.arpa.bin", quantize_bits=None)
    return directory / "xx.arpa.bin", directory / "xx.sp.model"
