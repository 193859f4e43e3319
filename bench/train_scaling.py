"""How `plexity train` scales: time, memory and disk on growing synthetic BNC / CORD-19 corpora,
extrapolated to the real ones.

    .venv/bin/python bench/train_scaling.py [--sizes 0.5 1 2 4 8] [--orders 2 3] [--memory 2G]
                                            [--out bench/train_scaling.json]

The BNC and CORD-19 themselves cannot be used here, so the corpora are synthetic: the freely
licensed English of the embedded model (scripts/default_model/corpora.py, already in
~/.cache/plexity_plugins/corpora; ~4.3 M whitespace words), its documents shuffled with a
fixed seed and cut into prefixes of each size (each prefix contains the smaller ones), written
in the real formats:

  bnc     Texts/X/XY/XYZ.xml: TEI files of ~20,000 words (a BNC text is a sample of up to
          ~45,000), <wtext> of <p> of <s> of <w>/<c> elements whose text carries its trailing
          space; every 10th file is an <stext> spoken text, which --written-only skips.
  cord19  metadata.csv with the real header: one row per ~200-word abstract (sentence-aligned
          chunks), every 3rd one spread over two lines, plus 5 % rows with an empty abstract and
          10 % duplicate cord_uid rows, as in the real file.

Each (format, order, size) runs `plexity train` in a child process with a fixed lmplz -S;
recorded: wall time, the peak RSS of the plexity process and of lmplz and build_binary (from
wait4, and lmplz's own RSSMax), the size of the training text, the ARPA file and the binary
model.  A power law y = a * words^b fitted (least squares on logs) to the points gives the
extrapolation to 100 M words (the BNC's written part is ~90 M of its ~100 M) and 80 M words
(CORD-19: ~400k unique abstracts x ~200 words).  These are extrapolations from small samples,
not measurements: the README says so.

Sizes above the ~4.3 M words available repeat the text; repeated text adds no new n-grams,
so such points are flagged "repeated", reported, and left out of every fit.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts" / "default_model"))
sys.path.insert(0, str(REPO))

import corpora  # noqa: E402

from plexity_plugins.text.sentences import split_sentences  # noqa: E402

TARGETS = {"bnc": 100e6, "cord19": 80e6}
TOKEN = re.compile(r"\w+|[^\w\s]")
WORDS_PER_BNC_TEXT = 20_000
WORDS_PER_ABSTRACT = 200
CORD19_HEADER = ["cord_uid", "sha", "source_x", "title", "doi", "pmcid", "pubmed_id", "license", "abstract",
                 "publish_time", "authors", "journal", "mag_id", "who_covidence_id", "arxiv_id",
                 "pdf_json_files", "pmc_json_files", "url", "s2_id"]


def load_documents(cache: Path) -> list[str]:
    corpora.fetch_all(cache)  # a no-op when cached
    docs = [text for _source, text in corpora.iter_documents(cache)]
    random.Random(42).shuffle(docs)
    return docs


def take_words(docs: list[str], words: int) -> tuple[list[str], bool]:
    """Documents up to `words` whitespace words; cycles (repeated=True) if there are too few."""
    out, total, repeated, i = [], 0, False, 0
    while total < words:
        if i == len(docs):
            i, repeated = 0, True
        out.append(docs[i])
        total += len(docs[i].split())
        i += 1
    return out, repeated


def sentences_of(doc: str) -> list[str]:
    return [doc[a:b] for a, b in split_sentences(doc)]


def s_element(n: int, sentence: str) -> str:
    parts = []
    for m in TOKEN.finditer(sentence):
        space = " " if sentence[m.end():m.end() + 1].isspace() else ""
        tag = "w" if m.group()[0].isalnum() or m.group()[0] == "_" else "c"
        parts.append(f"<{tag}>{escape(m.group())}{space}</{tag}>")
    return f'<s n="{n}">{"".join(parts)}</s>'


def write_bnc(docs: list[str], root: Path) -> dict:
    """Group documents into ~20k-word texts and write them in the BNC XML Edition layout."""
    texts, current, words = [], [], 0
    for doc in docs:
        current.append(doc)
        words += len(doc.split())
        if words >= WORDS_PER_BNC_TEXT:
            texts.append(current)
            current, words = [], 0
    if current:
        texts.append(current)
    spoken = 0
    for i, group in enumerate(texts):
        text_id = f"{chr(65 + i // 1296 % 26)}{'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i // 36 % 36]}" \
                  f"{'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i % 36]}"
        is_spoken = i % 10 == 9
        spoken += is_spoken
        n, blocks = 0, []
        for doc in group:
            for paragraph in doc.split("\n\n"):
                elements = []
                for sentence in sentences_of(paragraph):
                    n += 1
                    elements.append(s_element(n, sentence))
                if elements:
                    inner = "".join(elements)
                    blocks.append(f'<u who="PS000">{inner}</u>' if is_spoken else f"<p>{inner}</p>")
        body = "\n".join(blocks)
        text = (f'<stext type="CONVRSN">\n{body}\n</stext>' if is_spoken
                else f'<wtext type="OTHERPUB"><div level="1">\n{body}\n</div></wtext>')
        path = root / "Texts" / text_id[0] / text_id[:2] / f"{text_id}.xml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                        f'<bncDoc xml:id="{text_id}"><teiHeader><fileDesc><titleStmt><title>synthetic '
                        f'{text_id}</title></titleStmt></fileDesc></teiHeader>\n{text}</bncDoc>\n', encoding="utf-8")
    return {"files": len(texts), "spoken_files": spoken}


def write_cord19(docs: list[str], path: Path) -> dict:
    """Cut documents into ~200-word abstracts and write a metadata.csv as CORD-19's."""
    rng = random.Random(7)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = unique = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CORD19_HEADER)

        def emit(chunk: list[str]) -> None:
            nonlocal rows, unique
            unique += 1
            uid = f"{unique:08x}"
            text = " ".join(chunk)
            if unique % 3 == 0 and len(chunk) > 1:  # a quoted multi-line field
                text = chunk[0] + "\n" + " ".join(chunk[1:])
            row = {c: "" for c in CORD19_HEADER}
            row.update(cord_uid=uid, source_x="PMC", title=f"Synthetic study {unique}", license="cc-by",
                       abstract=text, publish_time="2020-05-01", authors="Doe, Jane", journal="Synthetic")
            if rng.random() < 0.05:
                writer.writerow([{**row, "abstract": ""}[c] for c in CORD19_HEADER])
                rows += 1
            writer.writerow([row[c] for c in CORD19_HEADER])
            rows += 1
            if rng.random() < 0.10:
                writer.writerow([{**row, "source_x": "Medline"}[c] for c in CORD19_HEADER])
                rows += 1

        for doc in docs:
            chunk, words = [], 0
            for sentence in sentences_of(doc):
                chunk.append(sentence)
                words += len(sentence.split())
                if words >= WORDS_PER_ABSTRACT:
                    emit(chunk)
                    chunk, words = [], 0
            if chunk:
                emit(chunk)
    return {"rows": rows, "abstracts": unique}


def run_train(corpus: str, order: int, inputs: Path, models: Path, name: str, memory: str) -> dict:
    """`plexity train` in a child process: wall time and the peak RSS of it and its children."""
    cmd = [str(REPO / ".venv" / "bin" / "plexity"), "train", "--corpus", corpus, "--order", str(order),
           "--name", name, "--output-dir", str(models), "-S", memory, "--force", "-q", str(inputs)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        # wait4: the peak RSS of the child or of any of its descendants (lmplz, build_binary).
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        log.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"plexity train failed:\n{log.read()}")
    meta = json.loads((models / name / "model.json").read_text())
    build = meta["build"]
    return {
        "seconds": round(seconds, 1),
        "steps_seconds": build["steps_seconds"],
        "tokens": meta["tokens"], "sentences": build["sentences"], "documents": build["documents"],
        "vocab": meta["vocab_size"], "ngrams": build["ngrams"],
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "python_rss_mb": build["python_max_rss_mb"],
        "lmplz_rss_mb": build["lmplz_resources"].get("rss_max_mb"),
        "build_binary_rss_mb": build["build_binary_resources"]["max_rss_mb"],
        "model_mb": round((models / name / "model.bin").stat().st_size / 1e6, 1),
        "training_text_mb": build["work_files_mb"]["training_text"],
        "arpa_mb": build["work_files_mb"]["arpa"],
        "threshold": meta["threshold"],
    }


def fit(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """y = a * x^b by least squares on logs."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
    return math.exp(my - b * mx), b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.5, 1, 2, 4, 8], help="million words")
    parser.add_argument("--orders", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--corpora", nargs="+", default=["bnc", "cord19"], choices=["bnc", "cord19"])
    parser.add_argument("--memory", default="2G", help="lmplz -S for every run")
    parser.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE_DIR)
    parser.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "train_scaling.json")
    parser.add_argument("--generate", nargs=3, metavar=("CORPUS", "MWORDS", "DIR"), default=None,
                        help=argparse.SUPPRESS)  # the child process that writes one corpus
    parser.add_argument("--report", type=Path, default=None,
                        help="only recompute the extrapolation and tables from a saved results file")
    args = parser.parse_args()

    if args.report:
        results = json.loads(args.report.read_text())
        results["extrapolation"] = extrapolate(results["runs"])
        args.report.write_text(json.dumps(results, indent=2) + "\n")
        print(report(results))
        return 0
    if args.generate:
        corpus, size, target = args.generate
        docs = load_documents(args.cache)
        subset, repeated = take_words(docs, int(float(size) * 1e6))
        shape = write_bnc(subset, Path(target)) if corpus == "bnc" else write_cord19(subset, Path(target) / "metadata.csv")
        print(json.dumps({"input_words": sum(len(d.split()) for d in subset), "repeated": repeated,
                          "source_words": sum(len(d.split()) for d in docs), **shape}))
        return 0

    work = Path(tempfile.mkdtemp(prefix="plexity-train-bench-", dir=args.work))
    results = {"machine": {"cpus": os.cpu_count(), "lmplz_memory": args.memory,
                           "python": sys.version.split()[0]}, "runs": [], "extrapolation": {}}
    try:
        for corpus in args.corpora:
            for size in sorted(args.sizes):
                data = work / f"{corpus}-{size}"
                t0 = time.perf_counter()
                # A separate process writes the corpus: the text it holds must not count in the peak
                # memory of `plexity train`, which would inherit this process's high-water mark.
                shape = json.loads(subprocess.run(
                    [sys.executable, __file__, "--generate", corpus, str(size), str(data), "--cache", str(args.cache)],
                    check=True, capture_output=True, text=True).stdout)
                gen_seconds = time.perf_counter() - t0
                real_words, repeated = shape.pop("input_words"), shape.pop("repeated")
                results["source_words"] = shape.pop("source_words")
                for order in args.orders:
                    name = f"bench-{corpus}-{order}-{size}"
                    run = run_train(corpus, order, data, work / "models", name, args.memory)
                    # The words that reached the model (BNC: minus the spoken 10 %, minus the held-out 5 %).
                    run.update(corpus=corpus, order=order, size_m_words=size, input_words=real_words,
                               repeated=repeated, input_mb=round(sum(p.stat().st_size for p in data.rglob("*")
                                                                     if p.is_file()) / 1e6, 1), **shape)
                    results["runs"].append(run)
                    print(f"{corpus:6} order {order} {real_words / 1e6:5.2f} M words ({run['input_mb']} MB): "
                          f"{run['seconds']:6.1f}s {run['steps_seconds']}, peak {run['peak_rss_mb']} MB, "
                          f"plexity {run['python_rss_mb']} MB, lmplz {run['lmplz_rss_mb']} MB, "
                          f"build_binary {run['build_binary_rss_mb']} MB, model {run['model_mb']} MB, "
                          f"arpa {run['arpa_mb']} MB" + (" [repeated text]" if repeated else ""),
                          file=sys.stderr, flush=True)
                    shutil.rmtree(work / "models" / name)
                print(f"  (writing the synthetic {corpus} corpus took {gen_seconds:.0f}s)", file=sys.stderr)
                shutil.rmtree(data)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["extrapolation"] = extrapolate(results["runs"])
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    return 0


# Streaming reading, tokenising and (disk-backed) sorting cost a constant amount per word: a
# straight line.  The numbers of distinct n-grams grow more slowly than the text: a power law.
LINEAR = ("seconds", "read_seconds", "lmplz_seconds", "build_binary_seconds", "training_text_mb")
POWER = ("model_mb", "arpa_mb", "vocab", "peak_rss_mb", "lmplz_rss_mb", "build_binary_rss_mb", "python_rss_mb")


def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """y = a + b * x by least squares."""
    if len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def extrapolate(runs: list[dict]) -> dict:
    """Per corpus and order: every figure at the real corpus's size, from the unrepeated runs."""
    out = {}
    for corpus, order in sorted({(r["corpus"], r["order"]) for r in runs}):
        rows = [dict(r, read_seconds=r["steps_seconds"]["read"], lmplz_seconds=r["steps_seconds"]["lmplz"],
                     build_binary_seconds=r["steps_seconds"]["build_binary"])
                for r in runs if r["corpus"] == corpus and r["order"] == order and not r["repeated"]]
        target = TARGETS[corpus]
        xs = [r["input_words"] for r in rows]
        ex = {"target_words": target, "measured_words": [min(xs), max(xs)]}
        for key in LINEAR:
            f = linear_fit(xs, [r[key] for r in rows])
            if f:
                ex[key] = round(f[0] + f[1] * target, 1)
        for key in POWER:
            f = fit(xs, [r[key] for r in rows])
            if f:
                ex[key] = {"value": round(f[0] * target ** f[1], 1), "exponent": round(f[1], 2)}
        out[f"{corpus}-order{order}"] = ex
    return out


def report(results: dict) -> str:
    """A Markdown table of the measurements and one of the extrapolations."""
    lines = ["| corpus | order | words (M) | time (s): read / lmplz / build_binary / total | peak RSS (MB) | "
             "lmplz RSSMax (MB) | training text / ARPA / model (MB) |", "|---|---|---|---|---|---|---|"]
    for r in results["runs"]:
        st = r["steps_seconds"]
        lines.append(f"| {r['corpus']} | {r['order']} | {r['input_words'] / 1e6:.1f}"
                     f"{' (repeated)' if r['repeated'] else ''} | {st['read']} / {st['lmplz']} / "
                     f"{st['build_binary']} / {r['seconds']} | {r['peak_rss_mb']:.0f} | {r['lmplz_rss_mb']:.0f} | "
                     f"{r['training_text_mb']} / {r['arpa_mb']} / {r['model_mb']} |")
    lines += ["", "| extrapolated to | total time | read / lmplz / build_binary | training text | ARPA | "
              "model (binary) | vocabulary |", "|---|---|---|---|---|---|---|"]
    for key, ex in results["extrapolation"].items():
        if "seconds" not in ex:
            continue  # fewer than two sizes measured
        lines.append(f"| {key} ({ex['target_words'] / 1e6:.0f} M words) | {ex['seconds'] / 60:.0f} min | "
                     f"{ex['read_seconds'] / 60:.0f} / {ex['lmplz_seconds'] / 60:.0f} / "
                     f"{ex['build_binary_seconds'] / 60:.1f} min | {ex['training_text_mb'] / 1e3:.1f} GB | "
                     f"{ex['arpa_mb']['value'] / 1e3:.1f} GB (x^{ex['arpa_mb']['exponent']}) | "
                     f"{ex['model_mb']['value']:.0f} MB (x^{ex['model_mb']['exponent']}) | "
                     f"{ex['vocab']['value'] / 1e6:.1f} M (x^{ex['vocab']['exponent']}) |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
