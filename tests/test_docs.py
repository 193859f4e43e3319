"""The README and the docs site: the site builds in strict mode (a broken link or anchor fails),
every shell and Python block runs as written, the README's headline table is the generated
figure, and the README stays short.

How blocks are run (docs/development.md, "The documentation"): the blocks of one page run in
order in one scratch directory holding a copy of examples/, scripts/, docs/ and mkdocs.yml, with this environment's
bin/ first on PATH and private model and cache directories.  A comment line before a block says
what it needs: ``<!-- run: with ccnet -->`` / ``<!-- run: with corpora -->`` (small files of
the kinds the block names are written first), ``<!-- run: slurm -->`` (run by the slurm-marked
test below), ``<!-- run: setup -->`` (the README's two set-up commands, checked on their own).
A ``text`` block marked ``<!-- output -->`` holds lines the runnable block before it printed; a ``json`` block
so marked holds, laid out for reading, a JSON value that block printed on a line of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
RUNNABLE = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARK = re.compile(r"<!--\s*(run:\s*[\w ]+?|output)\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    code: str
    mark: str  # "", "run: slurm", "run: setup", "run: with ccnet", "output" ...

    @property
    def runnable(self) -> bool:
        return self.language in RUNNABLE

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(1).lower(), match.group(2),
                           re.sub(r"\s+", " ", mark.group(1)).strip() if mark else ""))
    return found


# -- the site -----------------------------------------------------------------------------------

def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, cwd=config.parent)


def test_the_docs_site_builds_in_strict_mode(tmp_path):
    result = mkdocs_build(REPO / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "site" / "api" / "index.html").read_text().count("PerplexityScorer") > 3  # from docstrings
    quality = (tmp_path / "site" / "quality" / "index.html").read_text()
    assert "auto+filter" in quality  # the included figure, not the --8<-- line
    assert "--8&lt;--" not in quality and "--8<--" not in quality


@pytest.mark.parametrize("breakage, message", [
    ("[a link](cli.md#no-such-anchor)", "does not contain an anchor '#no-such-anchor'"),
    ("[a link](no-such-page.md)", "not found among documentation files"),
    ('--8<-- "figures/no-such-figure.md"', "no-such-figure.md"),
])
def test_a_broken_link_anchor_or_figure_fails_the_build(tmp_path, breakage, message):
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    os.symlink(REPO / "plexity_plugins", tmp_path / "plexity_plugins")  # for the API pages
    with open(tmp_path / "docs" / "ray.md", "a") as page:
        page.write(f"\n{breakage}\n")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0 and message in result.stderr, result.stderr[-3000:]


# -- the README -----------------------------------------------------------------------------------

def test_the_readme_is_read_in_five_minutes():
    assert len((REPO / "README.md").read_text().splitlines()) <= 300


def test_the_readme_headline_table_is_the_generated_figure():
    readme = (REPO / "README.md").read_text()
    match = re.search(r"<!-- headline:start -->\n(.*?)<!-- headline:end -->", readme, re.S)
    assert match, "README.md has no <!-- headline:start --> ... <!-- headline:end --> block"
    assert match.group(1).strip() == (DOCS / "figures" / "headline.md").read_text().strip(), \
        "copy docs/figures/headline.md (written by bench/headline.py) between the README's headline markers"


def test_the_readme_links_only_to_files_that_exist():
    readme = (REPO / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (REPO / target).exists(), target


def test_the_readme_test_command_is_what_ci_runs():
    setup = [b for b in blocks(REPO / "README.md") if b.mark == "run: setup"]
    assert [b.code.strip() for b in setup] == [
        "bash scripts/setup.sh && .venv/bin/plexity clean examples/sample.warc.gz --output-dir cleaned",
        "bash scripts/setup.sh --test && .venv/bin/python -m pytest"]
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == setup[1].code.strip()
    # the install page shows the same two commands
    assert [b.code for b in blocks(DOCS / "install.md") if b.mark == "run: setup"] == [b.code for b in setup]


def test_every_block_mark_is_known():
    for page in PAGES:
        for block in blocks(page):
            assert block.mark in ("", "output", "run: setup", "run: slurm", "run: with ccnet", "run: with corpora"), \
                f"{block}: unknown mark {block.mark!r}"
            if block.mark == "output":
                assert block.language in ("text", "json"), f"{block}: an output block is a text or json block"


# -- running the blocks ---------------------------------------------------------------------------

def scratch_dir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("examples", "scripts", "docs"):
        shutil.copytree(REPO / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "mkdocs.yml", work / "mkdocs.yml")
    os.symlink(REPO / "plexity_plugins", work / "plexity_plugins")  # the API pages' source
    return work


def environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PLEXITY_MODEL_DIR"] = str(tmp_path / "models")
    env.setdefault("PLEXITY_CACHE_DIR", str(tmp_path / "cache"))
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def prepare_ccnet(work: Path) -> None:
    """CCNet-style model files under the names the Models page uses, and the texts it reads."""
    from ccnet_model import CORPUS, build_ccnet_model

    kenlm_path, sp_path = build_ccnet_model(work / "ccnet-build", CORPUS * 2)
    for language in ("en", "de"):
        shutil.copy(kenlm_path, work / f"{language}.arpa.bin")
        shutil.copy(sp_path, work / f"{language}.sp.model")
    (work / "held_out_clean_en.txt").write_text("\n".join(CORPUS) + "\n")
    (work / "page.txt").write_text("The council approved the budget for the new library on Tuesday evening.\n")


def prepare_corpora(work: Path) -> None:
    """Small corpora in the formats the Training and Models pages name."""
    from fixtures.training import synthetic_corpus as synth

    synth.make_bnc_corpus(work / "BNC", written=80, spoken=10)
    synth.make_cord19_csv(work / "cord19" / "metadata.csv", abstracts=300)
    german = work / "german_news"
    german.mkdir()
    (german / "news.txt").write_text("\n".join([
        "Der Stadtrat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen.",
        "Die Bibliothek soll im Frühjahr öffnen und an Wochentagen lange geöffnet bleiben.",
        "Die Bürger fragten den Rat nach der Straße zum Fluss und nach der alten Brücke.",
        "Der Bürgermeister sagte, die Straße werde vor dem Ende des Jahres fertig sein.",
    ] * 30) + "\n")
    (work / "heldout-clean.txt").write_text("\n".join(synth.general_sentences(__import__("random").Random(5), 200)) + "\n")
    (work / "crawl").mkdir()
    shutil.copy(work / "examples" / "sample.warc.gz", work / "crawl" / "sample.warc.gz")


PREPARE = {"run: with ccnet": prepare_ccnet, "run: with corpora": prepare_corpora}


def run_block(block: Block, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    if RUNNABLE[block.language] == "bash":
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    else:
        script = work / f"block_{block.line}.py"
        script.write_text(block.code)
        command = [sys.executable, str(script)]
    # output through files: a block's background server must not hold our pipes open
    with open(work.parent / "stdout", "w+") as out, open(work.parent / "stderr", "w+") as err:
        process = subprocess.run(command, cwd=work, env=env, stdout=out, stderr=err, text=True, timeout=600,
                                 start_new_session=True)
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())


def printed_json(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return None


def run_page(page: Path, tmp_path: Path, marks: set[str]) -> int:
    work, env = scratch_dir(tmp_path), environment(tmp_path)
    ran, last = 0, None
    for block in blocks(page):
        if block.mark == "output":
            assert last is not None, f"{block}: an output block follows no block that ran"
            printed = last.stdout.splitlines()
            if block.language == "json":  # (an answer, laid out in the page: the same value, on one line of output)
                expected = json.loads(block.code)
                assert any(printed_json(line) == expected for line in printed), \
                    f"{block}: the JSON shown is not what the block before printed:\n{last.stdout}"
                continue
            position = 0
            for line in block.code.splitlines():
                assert line in printed[position:], f"{block}: {line!r} not printed (in order) by the block before:\n{last.stdout}"
                position = printed.index(line, position) + 1
            continue
        if not block.runnable or block.mark not in marks:
            last = None if block.runnable else last
            continue
        if block.mark in PREPARE:
            PREPARE[block.mark](work)
        last = run_block(block, work, env)
        assert last.returncode == 0, f"{block} failed ({last.returncode}):\n{block.code}\n--- stdout\n" \
                                     f"{last.stdout[-3000:]}\n--- stderr\n{last.stderr[-5000:]}"
        ran += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_code_block_runs_as_written(page, tmp_path):
    run_page(page, tmp_path, {"", "run: with ccnet", "run: with corpora"})


def test_the_pages_do_have_blocks_to_run():
    # the collector finds what it should: a regression in its pattern cannot pass silently
    runnable = [b for page in PAGES for b in blocks(page) if b.runnable]
    assert len(runnable) >= 20
    assert {b.mark for b in runnable} >= {"", "run: setup", "run: slurm", "run: with ccnet", "run: with corpora"}
    assert any(b.language == "python" and 'if __name__ == "__main__":' in b.code
               for b in blocks(REPO / "README.md"))


def test_the_first_readme_command_cleans_the_sample(tmp_path):
    # `bash scripts/setup.sh` is what CI's own setup ran; what follows it runs here as written,
    # with this environment's .venv.
    first = next(b for b in blocks(REPO / "README.md") if b.mark == "run: setup")
    command = first.code.strip().split(" && ", 1)[1].replace(".venv/bin/", f"{Path(sys.executable).parent}/")
    work = scratch_dir(tmp_path)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=work, env=environment(tmp_path),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (work / "cleaned" / "sample.warc.gz").is_file() and (work / "cleaned" / "plexity-stats.json").is_file()
    # the run shows what it kept and dropped; the README says the reader leaves the filter no sentence of the sample
    assert re.search(r"12 documents \(0 skipped, 0 dropped.*, \d+ sentences: \d+ kept, 0 dropped", result.stdout)


@pytest.mark.slurm
def test_the_slurm_blocks_run_on_the_single_node_slurm(slurm_cluster, tmp_path):
    # the session's private Slurm: SLURM_CONF in the environment points sbatch and squeue at it
    ran = 0
    for page in PAGES:
        if any(b.mark == "run: slurm" for b in blocks(page)):
            (tmp_path / page.stem).mkdir()
            ran += run_page(page, tmp_path / page.stem, {"run: slurm"})
    assert ran >= 1


def test_the_readme_before_and_after_is_what_plexity_clean_does(tmp_path):
    # The README's first block shows the page of docs/cli.md line by line: kept lines as they
    # are, dropped ones with their perplexity.  Clean that page and compare.
    cli = (DOCS / "cli.md").read_text()
    page = re.search(r"cat > page.html <<'HTML'\n(.*?)\nHTML\n", cli, re.S).group(1)
    (tmp_path / "page.html").write_text(page)
    result = subprocess.run([sys.executable, "-m", "plexity_plugins.cli", "clean", "-q", str(tmp_path / "page.html"),
                             "-o", str(tmp_path / "out"), "--extractor", "tags", "--write-dropped"],
                            capture_output=True, text=True, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr

    dropped = [json.loads(line) for line in (tmp_path / "out" / "plexity-dropped.jsonl").read_text().splitlines()]
    dropped = {d["text"]: d["perplexity"] for d in dropped if "perplexity" in d}
    kept = (tmp_path / "out" / "page.html.txt").read_text().splitlines()
    shown = next(b for b in blocks(REPO / "README.md") if b.language == "text").code.splitlines()
    shown_dropped = {}
    for line in shown:
        match = re.fullmatch(r"(.*?)\s{2,}dropped \((?:perplexity )?([\d,]+)\)", line)
        if match:
            shown_dropped[match.group(1)] = float(match.group(2).replace(",", ""))
        else:
            assert line in kept, line
    assert len(shown) == len(shown_dropped) + len(kept)
    assert shown_dropped.keys() == dropped.keys()
    for text, value in shown_dropped.items():
        assert round(dropped[text]) == value, text
