"""A pyplexity user's first day, probe 59: a script and commands ported from pyplexity (0.2.12) by
docs/from-pyplexity.md.  What they typed was answered in Python's or the model loader's bare words, naming nothing to
use instead:

- `--model bigrams_bnc.st` (pyplexity loads a local model by its path; its downloads lie in ~/.cache/cached_path/ under
  hashed names): "neither a KenLM binary nor an ARPA file";
- `PerplexityScorer(perpl_limit=8000.0)` (PerplexityProcessor's keyword): "its arguments: model, threshold, ...", not a
  word of 8000 meaning nothing to a KenLM model, which `--perpl-limit` on the command line says;
- `scorer.compute_sentence(s)`, `scorer.process(text)`, `PerplexityScorer.from_str(name)`: "has no attribute";
- `from plexity_plugins import HTMLTagRemover`, in the guide's table: "cannot import name".

Now each names what does its job here and the guide; what was ours works as before.  Real KenLM models (lmplz), a real
Perl Storable file (Perl's own nstore, as pyplexity's models were written)."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build_tiny_model

REPO = Path(__file__).resolve().parent.parent
GUIDE = "docs/from-pyplexity.md"


def plexity(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plexity_plugins", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def storable_model(path: Path) -> Path:
    """A pyplexity model as its format is: [bigram probabilities, unigram probabilities] in a Perl Storable file."""
    # (Debian's perl package, which scripts/setup.sh --test installs: a machine without it fails here, not skips)
    assert shutil.which("perl") and subprocess.run(["perl", "-MStorable", "-e", "1"]).returncode == 0, \
        "Perl's Storable module is needed to write a pyplexity model: bash scripts/setup.sh --test installs it"
    subprocess.run(["perl", "-MStorable=nstore", "-e",
                    'nstore([{"the council" => 0.25, "council approved" => 0.5}, {"the" => 0.06, "council" => 0.001}],'
                    ' $ARGV[0])', str(path)], check=True)
    return path


def test_a_pyplexity_model_file_is_named_for_what_it_is(tmp_path):
    """pyplexity's README: "You can also use the parameter --model PATH to load local models" (its .st files, as the
    Galician bigrams_modelo-gl-bigramas-merged.st).  Given here, it was "neither a KenLM binary nor an ARPA file (a
    model is a name `plexity models` lists ...)": nothing said it is pyplexity's format, unreadable here, nor how to
    build one that is."""
    pages = tmp_path / "html_source"
    pages.mkdir()
    (pages / "a.html").write_text("<html><body><p>The council approved the budget on Tuesday.</p></body></html>")
    named = storable_model(tmp_path / "bigrams_modelo-gl-bigramas-merged.st")
    cached = tmp_path / "cached_path"  # (cached_path's download of bigrams_bnc.st: a hash, no suffix)
    cached.mkdir()
    hashed = shutil.copy(named, cached / "5f3b9e0c1a7d2e4b8c6a0f1e3d5b7a9c")
    for command in (["score", "--model", named, "The council approved the budget."],
                    ["clean", "html_source", "-o", "out", "--model", hashed],
                    ["models", "import", "galician", "--kenlm", named, "--tokenizer", "plexity-tok-1"]):
        result = plexity(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "is a pyplexity model (Perl Storable, read by its PerplexityModel.from_str), not a KenLM model" \
            in result.stderr, result.stderr
        assert "plexity train --name NAME --corpus text TEXT_FILES" in result.stderr and GUIDE in result.stderr
        assert "neither a KenLM binary" not in result.stderr
    assert not (tmp_path / "out").exists()
    # the library says the same
    from plexity_plugins import ModelError, PerplexityScorer

    with pytest.raises(ModelError, match="is a pyplexity model"):
        PerplexityScorer(named)
    # a file of neither kind is told as before; a KenLM model still loads
    (tmp_path / "notes.st").write_text("not a model\n")
    other = plexity("score", "--model", "notes.st", "text", cwd=tmp_path)
    assert "neither a KenLM binary nor an ARPA file" in other.stderr and "pyplexity model" not in other.stderr
    model = build_tiny_model(tmp_path / "tiny")
    assert PerplexityScorer(model).perplexity("The cat sat on the mat.") > 0


def test_processor_keywords_name_the_threshold_and_say_8000_does_not_carry_over(tmp_path):
    """`PerplexityProcessor(perpl_model=model, perpl_limit=8000.0)` ported as `PerplexityScorer(...)`: perpl_limit was
    "unexpected keyword argument 'perpl_limit' (its arguments: model, threshold, ...)", the user left to guess that it
    is threshold and to keep 8000, which on a KenLM model keeps what pyplexity's models judged boilerplate."""
    from plexity_plugins import PerplexityScorer

    model = build_tiny_model(tmp_path / "tiny")
    with pytest.raises(TypeError) as limit:
        PerplexityScorer(model, perpl_limit=8000.0)
    assert str(limit.value) == ("PerplexityScorer() got an unexpected keyword argument 'perpl_limit': here it is "
                                "threshold=T; pyplexity's 8000 was for its own models and does not carry over (without "
                                f"a threshold the model's own applies) ({GUIDE})")
    with pytest.raises(TypeError, match=r"'perpl_model': here it is model=NAME \(a model name or path\)"):
        PerplexityScorer(perpl_model=model)
    # a misspelt argument of ours is told as before, and the command line says the same of --perpl-limit
    with pytest.raises(TypeError, match=r"'treshold'\. Did you mean 'threshold'\?"):
        PerplexityScorer(model, treshold=500)
    cli = plexity("score", "--perpl-limit", "8000", "text", cwd=tmp_path)
    assert "pyplexity's 8000 was for its own models and does not carry over (without a threshold the model's own " \
           "applies)" in cli.stderr, cli.stderr


def test_pyplexity_methods_name_the_scorers(tmp_path):
    """`model.compute_sentence(s)`, `text_processor.process(text)` and `PerplexityModel.from_str(name)`, on a scorer,
    were "'PerplexityScorer' object has no attribute 'compute_sentence'"."""
    import kenlm

    from plexity_plugins import PerplexityScorer

    model = build_tiny_model(tmp_path / "tiny")
    scorer = PerplexityScorer(model, threshold=10.0, method="sentences")  # (the tiny model's <unk> is likely)
    for call, meant in ((lambda: scorer.compute_sentence("The cat sat."), "here it is .perplexity(sentence)"),
                        (lambda: scorer.process("The cat sat."), "here it is .clean(text).text"),
                        (lambda: PerplexityScorer.from_str("bigrams-cord19"), "PerplexityScorer(name) opens a model")):
        with pytest.raises(AttributeError) as error:
            call()
        assert "it is pyplexity's; " + meant in str(error.value) and GUIDE in str(error.value)
    assert not hasattr(scorer, "process") and not hasattr(PerplexityScorer, "from_str")
    # the scorer is as it was: pickled, its perplexity KenLM's own (</s> counted) of the tokenised sentence, which
    # is what the guide says compute_sentence becomes
    again = pickle.loads(pickle.dumps(scorer))
    sentence = "The cat sat on the mat."
    line = again.tokenizer.span_lines(sentence, [(0, len(sentence))])[0]
    assert again.perplexity(sentence) == pytest.approx(kenlm.Model(str(model / "model.bin")).perplexity(line),
                                                       rel=1e-5)
    assert again.clean("The cat sat on the mat. Zq xv 99 kk BODY.").text == "The cat sat on the mat."


def test_html_tag_remover_names_the_tags_extractor(tmp_path):
    """`from plexity_plugins import HTMLTagRemover` (the guide's table maps `HTMLTagRemover().process(html)`) said
    "cannot import name 'HTMLTagRemover' from 'plexity_plugins'", where PerplexityModel named the scorer."""
    result = subprocess.run([sys.executable, "-c", "from plexity_plugins import HTMLTagRemover"], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    last = result.stderr.strip().splitlines()[-1]
    assert last == ("ImportError: HTMLTagRemover is pyplexity's: here it is plexity_plugins.extractors.get_extractor"
                    "('tags'): get_extractor('tags')(html) is process(html)'s job; pyplexity's names and ours side by "
                    f"side: {GUIDE}"), last
    from plexity_plugins.extractors import get_extractor

    assert get_extractor("tags")("<html><body><nav>Home</nav><p>The council met.</p></body></html>") == \
        "Home\nThe council met."


def test_text_under_a_name_of_no_kind_is_told_the_name_that_reads_it(tmp_path):
    """pyplexity fed every file to its scorer; here `doc-0001` (text, pyplexity's own output of a page) was skipped
    "not one of the .txt, .text ... files", naming no way on.  Now the skip names the `.txt` name that reads it;
    a file of no kind that is no text (an image, bytes with control characters, JSON) is not told so."""
    import re

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "doc-0001").write_text("The council approved the budget on Tuesday after a long debate.\n" * 3)
    (folder / "logo").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    (folder / "blob").write_bytes(b"ab\x01cd" * 10)
    (folder / "settings").write_text('{"threshold": 8000}\n')
    first = plexity("clean", folder, "-o", tmp_path / "out", cwd=tmp_path)
    warnings = dict(re.findall(r"skipped \S+/(\S+): (.*)", first.stderr))
    assert warnings["doc-0001"] == "unknown_file_type (plain text by its bytes: rename it to doc-0001.txt to read it)"
    assert all(why.startswith("unknown_file_type (not one of the .txt") for name, why in warnings.items()
               if name != "doc-0001"), warnings
    (folder / "doc-0001").rename(folder / "doc-0001.txt")  # (as told)
    again = plexity("clean", folder / "doc-0001.txt", "-o", tmp_path / "out", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "out" / "doc-0001.txt.txt").read_text().startswith("The council approved the budget")
