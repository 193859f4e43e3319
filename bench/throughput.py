"""Single-core throughput: our scorer vs pyplexity 0.2.12 vs raw KenLM scoring.

    .venv/bin/python bench/throughput.py [--mb 20] [--repeat 3] [--quick] [--cpu N] [--dev-dir DIR]
                                         [--skip-pyplexity] [--figures DIR]

Input: the text of the dev benchmark pages (../shared/bench/articles-dev/html/*.html.gz beside
the repository, extracted with `html_to_text_tags`), repeated until it is at least `--mb` MB
(10^6 bytes of UTF-8).  The same documents go to every contender; each runs in its own child
process pinned to one CPU (os.sched_setaffinity), so its peak RSS is its own:

  ours       `PerplexityScorer().clean(doc)` per document, end to end (language identification,
             splitting, tokenising, scoring, deciding, joining); also timed with
             language_check=False; and where its time goes: clean()'s own steps (language
             identification; splitting; tokenising+scoring; deciding and building the result)
             timed one by one within a pass, so that what they cost each other (cache) counts.
  pyplexity  pyplexity 0.2.12's own `PerplexityProcessor.process(doc)` per document, in a virtual
             environment of its own (created if missing: it needs numpy < 2), with a bigram model
             in pyplexity's in-memory format built from the same training text as our embedded
             model (its models cannot be downloaded here), and an untrained
             `PunktSentenceTokenizer()` (its punkt data cannot be downloaded either).
  kenlm      the limit of our design: the same documents split and tokenised beforehand with our
             splitter/tokenizer; only `model.score(line, bos=True, eos=True)` is timed.

Only the processing is timed (no model building or loading).  Each contender makes `--repeat`
passes over the input and its fastest pass counts (this VM's speed varies by +-20 % from
minute to minute; the fastest pass is the least disturbed one); ours and the KenLM limit
alternate for `--rounds` rounds, so that both meet the same minutes, and the ratio is also
printed round by round.  The last line of stdout is one
JSON object with every figure: {"mb_per_s": .., "pyplexity_mb_per_s": .., "kenlm_limit_mb_per_s": ..}.
A full run (no --quick, no --skip-pyplexity, the default --mb) writes the table of docs/performance.md
to docs/figures/throughput.md and the figures to docs/figures/throughput.json (any run with --figures DIR).

This file is also the child processes' entry point (`--stage ...`); the pyplexity stages run
under pyplexity's venv, so nothing here imports plexity_plugins at module level.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEV_DIR = REPO.parent / "shared" / "bench" / "articles-dev"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "plexity_plugins" / "bench"
PYPLEXITY_VENV = CACHE / "pyplexity-venv"
PYPLEXITY_VERSION = "0.2.12"
PYPLEXITY_LIMIT = 8000.0  # pyplexity's CLI default perplexity limit (bulk_perplexity)
MB = 1e6


# -- helpers shared by every process (standard library only) ----------------------------------

def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec from the parent.
    return _status_mb("VmHWM")


def current_rss_mb() -> float:
    return _status_mb("VmRSS")


def load_docs(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def pin_to(cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- input -----------------------------------------------------------------------------------

def dev_page_paths(dev_dir: Path) -> list[Path]:
    paths = sorted((dev_dir / "html").glob("*.html.gz"))
    if not paths:
        raise SystemExit(f"no dev pages in {dev_dir / 'html'} (expected *.html.gz beside the repository)")
    return paths


def dev_texts(dev_dir: Path) -> list[str]:
    """Text of every dev page, extracted with the tags extractor (non-empty ones)."""
    from plexity_plugins.extractors import html_to_text_tags

    texts = [html_to_text_tags(gzip.open(p).read()) for p in dev_page_paths(dev_dir)]
    return [t for t in texts if t.strip()]


def write_input(texts: list[str], mb: float, out: Path) -> tuple[int, int]:
    """`texts` repeated until >= mb MB, one JSON string per line; (documents, bytes)."""
    docs = size = 0
    with open(out, "w", encoding="utf-8") as f:
        while size < mb * MB:
            for text in texts:
                f.write(json.dumps(text) + "\n")
                docs += 1
                size += len(text.encode("utf-8"))
                if size >= mb * MB:
                    break
    return docs, size


# -- stage: ours -----------------------------------------------------------------------------

def stage_ours(input_path: Path, repeat: int) -> dict:
    from plexity_plugins.runtime import native
    from plexity_plugins.text.language import identifier
    from plexity_plugins.scoring.scorer import PerplexityScorer, sanitize
    from plexity_plugins.text.sentences import split_with_blocks

    docs = load_docs(input_path)
    rss_input = current_rss_mb()
    scorer = PerplexityScorer()
    scorer.clean(docs[0])  # opens the model: not timed
    identifier()  # loads the language identifier (only clean() of a non-English text would): not timed
    rss_loaded = current_rss_mb()

    def timed_clean(s):
        best = None
        for _ in range(repeat):
            sentences = kept = passthrough = 0
            t0, c0 = time.perf_counter(), time.process_time()
            for doc in docs:
                r = s.clean(doc)
                sentences += r.sentences
                kept += r.sentences_kept
                passthrough += r.passthrough is not None
            run = (time.perf_counter() - t0, time.process_time() - c0, sentences, kept, passthrough)
            best = run if best is None or run[0] < best[0] else best
        return best

    clean_s, clean_cpu_s, sentences, kept, passthrough = timed_clean(scorer)
    no_lang = PerplexityScorer(language_check=False)
    no_lang.clean(docs[0])
    clean_nolang_s, _, sentences_nolang, _, _ = timed_clean(no_lang)
    peak_clean = peak_rss_mb()

    # Where clean()'s time goes: clean()'s own steps, in its order, with a stopwatch between
    # them (fastest of `repeat` passes).  Timing each step in a loop of its own would hide
    # what the steps cost each other: the language identifier's tables (~70 MB) and the
    # model (~17 MB) evict each other from the CPU caches.
    def timed_steps():
        best = None
        for _ in range(repeat):
            steps = dict.fromkeys(("language_identification", "splitting", "tokenising_and_scoring",
                                   "decision_and_rest"), 0.0)
            now = time.perf_counter
            for doc in docs:
                t0 = now()
                limit = scorer._limit(None)
                text, replaced = sanitize(doc)
                t1 = now()
                passed = scorer._passthrough(text, limit, replaced)
                t2 = now()
                steps["decision_and_rest"] += t1 - t0
                steps["language_identification"] += t2 - t1
                if passed is not None:
                    continue
                spans, blocks = split_with_blocks(text, scorer.max_sentence_chars)
                t3 = now()
                logprobs, counts = scorer._logprobs(text, spans)
                t4 = now()
                scorer._decide(text, replaced, limit, spans, blocks, logprobs, counts, False)
                t5 = now()
                steps["splitting"] += t3 - t2
                steps["tokenising_and_scoring"] += t4 - t3
                steps["decision_and_rest"] += t5 - t4
            if best is None or sum(steps.values()) < sum(best.values()):
                best = steps
        return best

    pieces = timed_steps()
    return {
        "clean_s": clean_s, "clean_cpu_s": clean_cpu_s, "sentences": sentences, "sentences_kept": kept,
        "passthrough_documents": passthrough, "scoring_path": native.status(),
        "clean_no_language_check_s": clean_nolang_s, "sentences_no_language_check": sentences_nolang,
        "pieces_s": pieces,
        "rss_after_input_mb": rss_input, "rss_after_model_mb": rss_loaded, "peak_rss_mb": peak_clean,
    }


# -- stage: raw KenLM ------------------------------------------------------------------------

def stage_kenlm(input_path: Path, repeat: int) -> dict:
    from plexity_plugins.scoring.models import load_kenlm, resolve
    from plexity_plugins.text.sentences import split_sentences
    from plexity_plugins.text.plexity_tokenizer import to_lm_lines

    docs = load_docs(input_path)
    rss_input = current_rss_mb()
    lines = []
    for doc in docs:
        lines.extend(to_lm_lines([doc[a:b] for a, b in split_sentences(doc)]))
    del docs
    lm = load_kenlm(resolve(None))
    score = lm.score
    score("warm up", bos=True, eos=True)
    runs = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for line in lines:
            score(line, bos=True, eos=True)
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    seconds, cpu_seconds = min(runs)
    tokens = sum(line.count(" ") + 1 for line in lines if line)
    return {"score_s": seconds, "score_cpu_s": cpu_seconds, "sentences": len(lines), "tokens": tokens,
            "rss_after_input_mb": rss_input, "peak_rss_mb": peak_rss_mb()}


# -- pyplexity: training text, model, stage --------------------------------------------------

def write_training_sentences(out: Path) -> int:
    """The embedded model's training documents (same corpora, same hold-out rule as
    scripts/default_model/build.py), split by our splitter, one raw sentence per line."""
    sys.path.insert(0, str(REPO / "scripts" / "default_model"))
    import build  # noqa: F401  (the hold-out rule)
    import corpora

    from plexity_plugins.text.sentences import split_sentences

    corpora.fetch_all(corpora.DEFAULT_CACHE_DIR)
    n = 0
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for index, (source, text) in enumerate(corpora.iter_documents(corpora.DEFAULT_CACHE_DIR)):
            if build.held_out(source, index):
                continue
            for a, b in split_sentences(text):
                f.write(text[a:b] + "\n")
                n += 1
    tmp.replace(out)
    return n


def stage_pyplexity_model(train: Path, out: Path) -> dict:
    """[bigram_probs, unigram_probs] as pyplexity's BigramPerplexityModel reads them: keys are
    UTF-8 bytes ("w1 w2" / "w"), tokens from pyplexity's own _custom_tokenize, "#" the sentence
    start; P(w2|w1) = c(w1 w2) / c(w1 as a context), P(w) = c(w) / N (maximum likelihood)."""
    from collections import Counter

    from pyplexity.perpl_model import PerplexityModel

    tokenize = PerplexityModel()._custom_tokenize
    bigrams: Counter = Counter()
    contexts: Counter = Counter()
    unigrams: Counter = Counter()
    with open(train, encoding="utf-8") as f:
        for sentence in f:
            tokens = tokenize(sentence.rstrip("\n"))
            history = ["#"] + tokens
            unigrams.update(history)
            contexts.update(history[:-1])
            bigrams.update(w1 + " " + w2 for w1, w2 in zip(history, tokens))
    total = sum(unigrams.values())
    bigram_probs = {k.encode("utf-8", "replace"): c / contexts[k.split(" ", 1)[0]] for k, c in bigrams.items()}
    unigram_probs = {k.encode("utf-8", "replace"): c / total for k, c in unigrams.items()}
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        pickle.dump([bigram_probs, unigram_probs], f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(out)
    return {"bigrams": len(bigram_probs), "unigrams": len(unigram_probs), "tokens": total}


def stage_pyplexity(input_path: Path, model_path: Path, repeat: int) -> dict:
    import nltk
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    import pyplexity
    from pyplexity.perpl_model import BigramPerplexityModel, PerplexityProcessor

    docs = load_docs(input_path)
    rss_input = current_rss_mb()
    with open(model_path, "rb") as f:
        data = pickle.load(f)
    model = BigramPerplexityModel(data)  # prints "Done."
    del data
    rss_model = current_rss_mb()
    # pyplexity calls nltk.sent_tokenize, which needs punkt data we cannot download here:
    # an untrained Punkt tokenizer (same algorithm, no learned abbreviations) stands in.
    punkt = PunktSentenceTokenizer()
    counted = [0]

    def sent_tokenize(text, language="english"):
        sentences = punkt.tokenize(text)
        counted[0] += len(sentences)
        return sentences

    nltk.sent_tokenize = sent_tokenize
    processor = PerplexityProcessor(model, PYPLEXITY_LIMIT)
    processor.process(docs[0])
    runs = []
    for _ in range(repeat):
        counted[0] = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for doc in docs:
            processor.process(doc)
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    seconds, cpu_seconds = min(runs)
    version = None
    try:
        from importlib.metadata import version as pkg_version
        version = pkg_version("pyplexity")
    except Exception:
        version = getattr(pyplexity, "__version__", None)
    return {"process_s": seconds, "process_cpu_s": cpu_seconds, "sentences": counted[0], "version": version,
            "sentence_splitter": "untrained nltk.tokenize.punkt.PunktSentenceTokenizer() (punkt data not downloadable)",
            "rss_after_input_mb": rss_input, "rss_after_model_mb": rss_model, "peak_rss_mb": peak_rss_mb()}


def ensure_pyplexity_venv(python: str) -> Path:
    """pyplexity 0.2.12 in its own venv (it pins old numpy/pandas); created if missing."""
    venv_python = PYPLEXITY_VENV / "bin" / "python"
    check = [str(venv_python), "-c", f"import pyplexity, importlib.metadata as m; "
             f"assert m.version('pyplexity') == '{PYPLEXITY_VERSION}'"]
    if venv_python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return venv_python
    print(f"creating {PYPLEXITY_VENV} with pyplexity=={PYPLEXITY_VERSION} ...", file=sys.stderr)
    PYPLEXITY_VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(PYPLEXITY_VENV)], check=True)
    subprocess.run([str(venv_python), "-m", "pip", "install", "-q", f"pyplexity=={PYPLEXITY_VERSION}", "numpy<2"],
                   check=True)
    subprocess.run(check, check=True)
    return venv_python


def ensure_pyplexity_model(venv_python: Path) -> tuple[Path, dict]:
    train = CACHE / "pyplexity-train-sentences.txt"
    model = CACHE / "pyplexity-bigrams.pkl"
    meta_path = CACHE / "pyplexity-bigrams.json"
    if model.exists() and meta_path.exists():
        return model, json.loads(meta_path.read_text())
    if not train.exists():
        print("writing the training sentences for pyplexity's model ...", file=sys.stderr)
        write_training_sentences(train)
    print("building pyplexity's bigram model ...", file=sys.stderr)
    meta = run_stage(venv_python, ["--stage", "pyplexity-model", "--train", str(train), "--model", str(model)])
    meta_path.write_text(json.dumps(meta))
    return model, meta


# -- orchestration ---------------------------------------------------------------------------

def run_stage(python, args: list[str]) -> dict:
    """Run this script as a child process; its last stdout line is its JSON result."""
    proc = subprocess.run([str(python), str(Path(__file__).resolve()), *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"stage {args[1]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20.0, help="input size in MB (10^6 bytes; default 20)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 MB")
    parser.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the last allowed one)")
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    parser.add_argument("--repeat", type=int, default=3,
                        help="passes over the input per contender; the fastest counts (default 3)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternations of ours and the KenLM limit, so that both meet the VM's slow and fast "
                             "minutes alike; each one's fastest pass over all rounds counts (default 3)")
    parser.add_argument("--skip-pyplexity", action="store_true", help="only ours and the KenLM limit")
    parser.add_argument("--figures", type=Path, default=None,
                        help="write throughput.md and throughput.json here (default: docs/figures/ on a full run: "
                             "no --quick, no --skip-pyplexity, the default --mb)")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--train", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.stage:
        stages = {"ours": lambda: stage_ours(args.input, args.repeat),
                  "kenlm": lambda: stage_kenlm(args.input, args.repeat),
                  "pyplexity": lambda: stage_pyplexity(args.input, args.model, args.repeat),
                  "pyplexity-model": lambda: stage_pyplexity_model(args.train, args.model)}
        print(json.dumps(stages[args.stage]()))
        return 0

    mb = 1.0 if args.quick else args.mb
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    pin_to(cpu)  # children inherit the affinity
    sys.path.insert(0, str(REPO))
    CACHE.mkdir(parents=True, exist_ok=True)
    results: dict = {}
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        input_path = Path(tmp) / "input.jsonl"
        texts = dev_texts(args.dev_dir)
        documents, size = write_input(texts, mb, input_path)
        input_mb = size / MB
        print(f"input: {documents} documents ({len(texts)} dev pages repeated), {input_mb:.2f} MB; "
              f"pinned to CPU {cpu}; load average {loadavg()}")

        if not args.skip_pyplexity:
            venv_python = ensure_pyplexity_venv("python3.11")
            model_path, model_meta = ensure_pyplexity_model(venv_python)
        load_before = loadavg()
        rep = ["--repeat", str(max(args.repeat, 1))]
        ours = kenlm = None
        rounds = []
        for _ in range(max(args.rounds, 1)):
            ours_now = run_stage(sys.executable, ["--stage", "ours", "--input", str(input_path), *rep])
            kenlm_now = run_stage(sys.executable, ["--stage", "kenlm", "--input", str(input_path), *rep])
            rounds.append({"clean_s": ours_now["clean_s"], "kenlm_score_s": kenlm_now["score_s"]})
            if ours is None or ours_now["clean_s"] < ours["clean_s"]:
                ours = ours_now
            if kenlm is None or kenlm_now["score_s"] < kenlm["score_s"]:
                kenlm = kenlm_now
        pyp = None
        if not args.skip_pyplexity:
            pyp = run_stage(venv_python, ["--stage", "pyplexity", "--input", str(input_path),
                                          "--model", str(model_path), *rep])
        load_after = loadavg()

    mbps = input_mb / ours["clean_s"]
    limit = input_mb / kenlm["score_s"]
    pieces = ours["pieces_s"]
    print(f"\nours: PerplexityScorer().clean(doc), end to end, language check on (default); "
          f"scoring path: {ours['scoring_path']}; fastest of {args.repeat} passes x {len(rounds)} rounds")
    print(f"  {mbps:7.2f} MB/s  {ours['sentences'] / ours['clean_s']:9.0f} sentences/s  "
          f"{ours['clean_s']:.2f} s  ({ours['sentences']} sentences, {ours['passthrough_documents']} "
          f"documents passed through as another language)")
    print(f"  peak RSS {ours['peak_rss_mb']:.0f} MB (input documents held in memory: RSS "
          f"{ours['rss_after_input_mb']:.0f} MB before the model; {ours['rss_after_model_mb']:.0f} MB after "
          f"opening the model and the language identifier)")
    print(f"  language check off: {input_mb / ours['clean_no_language_check_s']:7.2f} MB/s "
          f"({ours['clean_no_language_check_s']:.2f} s)")
    print(f"  steps of clean(), timed within a pass (s, share; sum {sum(pieces.values()):.2f} s): " + ", ".join(
        f"{k} {v:.2f} ({v / sum(pieces.values()):.0%})" for k, v in pieces.items()))
    print(f"KenLM limit: model.score() over {kenlm['sentences']} pre-tokenised sentences "
          f"({kenlm['tokens']} tokens)")
    print(f"  {limit:7.2f} MB/s  {kenlm['sentences'] / kenlm['score_s']:9.0f} sentences/s  "
          f"{kenlm['score_s']:.2f} s  peak RSS {kenlm['peak_rss_mb']:.0f} MB (all tokenised lines held in memory)")
    print(f"  ours = {mbps / limit:.1%} of the limit (fastest against fastest); round by round: " + ", ".join(
        f"{r['kenlm_score_s'] / r['clean_s']:.1%}" for r in rounds))
    if pyp:
        pmbps = input_mb / pyp["process_s"]
        print(f"pyplexity {pyp['version']} PerplexityProcessor.process(doc), bigram model built here "
              f"({model_meta['bigrams']} bigrams, {model_meta['unigrams']} unigrams); sentence splitter: "
              f"{pyp['sentence_splitter']}")
        print(f"  {pmbps:7.2f} MB/s  {pyp['sentences'] / pyp['process_s']:9.0f} sentences/s  "
              f"{pyp['process_s']:.2f} s  peak RSS {pyp['peak_rss_mb']:.0f} MB "
              f"(its model in memory: {pyp['rss_after_model_mb'] - pyp['rss_after_input_mb']:.0f} MB)")
        print(f"  ours = {mbps / pmbps:.1f}x pyplexity")
    cpu_line = f"CPU-time MB/s (less sensitive to other load): ours {input_mb / ours['clean_cpu_s']:.2f}, " \
               f"KenLM limit {input_mb / kenlm['score_cpu_s']:.2f}"
    if pyp:
        cpu_line += f", pyplexity {input_mb / pyp['process_cpu_s']:.2f}"
    print(cpu_line)
    print(f"load average before/after: {load_before} / {load_after} ({os.cpu_count()} CPUs)")

    results = {
        "mb_per_s": round(mbps, 3),
        "pyplexity_mb_per_s": round(input_mb / pyp["process_s"], 3) if pyp else None,
        "kenlm_limit_mb_per_s": round(limit, 3),
        "ratio_to_pyplexity": round(mbps / (input_mb / pyp["process_s"]), 2) if pyp else None,
        "fraction_of_kenlm_limit": round(mbps / limit, 3),
        "fraction_of_kenlm_limit_per_round": [round(r["kenlm_score_s"] / r["clean_s"], 3) for r in rounds],
        "rounds": [{k: round(v, 3) for k, v in r.items()} for r in rounds],
        "sentences_per_s": round(ours["sentences"] / ours["clean_s"]),
        "pyplexity_sentences_per_s": round(pyp["sentences"] / pyp["process_s"]) if pyp else None,
        "kenlm_limit_sentences_per_s": round(kenlm["sentences"] / kenlm["score_s"]),
        # The same figures from CPU time (time.process_time): less sensitive to other load.
        "cpu_time_mb_per_s": round(input_mb / ours["clean_cpu_s"], 3),
        "cpu_time_pyplexity_mb_per_s": round(input_mb / pyp["process_cpu_s"], 3) if pyp else None,
        "cpu_time_kenlm_limit_mb_per_s": round(input_mb / kenlm["score_cpu_s"], 3),
        "mb_per_s_no_language_check": round(input_mb / ours["clean_no_language_check_s"], 3),
        "pieces_s": {k: round(v, 3) for k, v in pieces.items()},
        "peak_rss_mb": round(ours["peak_rss_mb"], 1),
        "rss_with_input_only_mb": round(ours["rss_after_input_mb"], 1),
        "pyplexity_peak_rss_mb": round(pyp["peak_rss_mb"], 1) if pyp else None,
        "pyplexity_model_rss_mb": round(pyp["rss_after_model_mb"] - pyp["rss_after_input_mb"], 1) if pyp else None,
        "kenlm_limit_peak_rss_mb": round(kenlm["peak_rss_mb"], 1),
        "input_mb": round(input_mb, 3), "documents": documents, "dev_pages": len(texts),
        "sentences": ours["sentences"], "pyplexity_sentences": pyp["sentences"] if pyp else None,
        "passthrough_documents": ours["passthrough_documents"],
        "pyplexity_sentence_splitter": pyp["sentence_splitter"] if pyp else None,
        "cpu": cpu, "loadavg_before": load_before, "loadavg_after": load_after,
        "repeat": args.repeat, "scoring_path": ours["scoring_path"],
    }
    import figures  # (bench/figures.py: imported here, where only the parent process needs it)

    table = render_markdown(results, figures.header_line(figures.provenance("bench/throughput.py")))
    print("\n" + table)
    full_run = not args.quick and not args.skip_pyplexity and args.mb == parser.get_default("mb")
    figures.publish({"throughput": table}, results, "throughput",
                    args.figures or (figures.FIGURES if full_run else None))
    print(json.dumps(results))
    return 0


def render_markdown(results: dict, header: str) -> str:
    """docs/figures/throughput.md: the one-core table of docs/performance.md, from `results`."""
    rss = f"{results['peak_rss_mb']:.0f} MB ({results['rss_with_input_only_mb']:.0f} MB of it the input held in memory)"
    rows = [["ours: `PerplexityScorer().clean(doc)`, end to end (language check on, the default)",
             f"**{results['mb_per_s']:.2f}**", f"{results['sentences_per_s'] / 1000:.0f} k", rss],
            ["ours, `language_check=False`", f"{results['mb_per_s_no_language_check']:.2f}", "", ""]]
    if results["pyplexity_mb_per_s"] is not None:
        rows.append(["pyplexity 0.2.12 `PerplexityProcessor.process(doc)` (see below)",
                     f"{results['pyplexity_mb_per_s']:.2f}", f"{results['pyplexity_sentences_per_s'] / 1000:.0f} k",
                     f"{results['pyplexity_peak_rss_mb']:.0f} MB"])
    rows.append(["raw KenLM `model.score()` on pre-split, pre-tokenised lines (the limit of the design)",
                 f"{results['kenlm_limit_mb_per_s']:.2f}", f"{results['kenlm_limit_sentences_per_s'] / 1000:.0f} k",
                 "—"])
    lines = ["| | MB/s | sentences/s | peak RSS |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    ratio = (f"ours = {results['fraction_of_kenlm_limit']:.0%} of the KenLM limit"
             + (f", {results['ratio_to_pyplexity']:.1f}× pyplexity" if results["ratio_to_pyplexity"] else ""))
    cpu = (f"by CPU time: ours {results['cpu_time_mb_per_s']:.2f} MB/s, the KenLM limit "
           f"{results['cpu_time_kenlm_limit_mb_per_s']:.2f}"
           + (f", pyplexity {results['cpu_time_pyplexity_mb_per_s']:.2f}"
              if results["cpu_time_pyplexity_mb_per_s"] else ""))
    return "\n".join([header, "", *lines, "",
                      f"{results['documents']:,} documents, {results['input_mb']:.1f} MB ({results['dev_pages']} dev "
                      f"pages' text repeated), one core, the fastest of {results['repeat']} passes; {ratio}; {cpu}; "
                      f"load average {results['loadavg_before']} before, {results['loadavg_after']} after."])


if __name__ == "__main__":
    sys.exit(main())
