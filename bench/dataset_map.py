"""The scorer in Hugging Face `datasets`' ``Dataset.map(batched=True)``: time in one process and with ``num_proc=2``,
and each worker's memory.

    .venv/bin/python bench/dataset_map.py [--texts 1000] [--rounds 3] [--pages] [--batch-size 1000] [--bench DIR]

Needs `datasets` (``pip install datasets``: no dependency of ours).  Input (built in a temporary folder, from
``wcxb-dev/html`` of shared/bench): the first `--texts` pages, decoded as the front ends decode a body, and their
text as the ``learned`` extractor gives it, as Parquet files loaded with ``datasets.load_dataset("parquet", ...)``
(memory-mapped Arrow, as a user's dataset is).  Each round, alternating, each variant in a fresh process (the
cache off: ``datasets.disable_caching()``), `map` timed around the call (`--batch-size` rows a batch: datasets'
default is 1000):

  clean                 ``PerplexityScorer(method="trim").clean(text).text`` of each text, in one process;
  clean, num_proc=2     the same with two worker processes (forked; the scorer goes to them pickled);
  ... scorer opened     ``scorer.open()`` before `map`: the workers share the language identifier's pages;
  pages (--pages)       the HTML extracted and cleaned as docs/python-api.md's ``clean_batch`` does it (a
                        ``TimeLimitedExtractor("learned", timeout=30)``: an extraction child per process), in one
                        process and with ``num_proc=2``.

Memory: each process that ran a batch reads its own at its last batch (`memory`): RSS, PSS (shared pages split
between the processes that map them), USS (its own pages) and the anonymous pages of its RSS (not a file's: the model and
the memory-mapped dataset are files).  The extraction child's is not counted.  The best time
of `--rounds` counts for each variant, with the range; memory is each worker's range over the rounds.  The last
line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import figures  # noqa: E402

CLEAN_VARIANTS = {"clean": (1, False), "clean, num_proc=2": (2, False), "clean, num_proc=2, scorer opened": (2, True)}
PAGE_VARIANTS = {"pages": 1, "pages, num_proc=2": 2}
MEMORY = ("rss", "pss", "uss", "anon")


def memory() -> dict[str, float]:
    """This process's memory in MB (Linux's /proc/self/smaps_rollup, as psutil's ``memory_full_info`` reads it):
    RSS, PSS, USS (its private pages: ``Private_Clean`` + ``Private_Dirty``) and the anonymous pages of the RSS
    (the heap, its own or still shared with the process that forked it; not a file's pages, such as the model's or
    the memory-mapped dataset's)."""
    fields: dict[str, int] = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                fields[key] = int(value.split()[0]) * 1024
    return {"rss": fields["Rss"] / 1e6, "pss": fields["Pss"] / 1e6,
            "uss": (fields["Private_Clean"] + fields["Private_Dirty"]) / 1e6, "anon": fields["Anonymous"] / 1e6}


def build(folder: Path, bench: Path, texts: int) -> None:
    """pages.parquet (html) and texts.parquet (text) of the first `texts` wcxb-dev pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from plexity_plugins.extractors import decode_html, html_to_text_learned

    files = sorted((bench / "wcxb-dev" / "html").glob("*.html.gz"))[:texts]
    if len(files) < texts:
        raise SystemExit(f"{bench / 'wcxb-dev' / 'html'} has {len(files)} pages, fewer than --texts {texts} "
                         f"(the benchmark data: shared/bench beside the repository, or --bench DIR)")
    html = [decode_html(gzip.decompress(path.read_bytes()))[0] for path in files]
    pq.write_table(pa.table({"html": html}), folder / "pages.parquet")
    pq.write_table(pa.table({"text": [html_to_text_learned(page) for page in html]}), folder / "texts.parquet")


def load(folder: Path, name: str):
    import datasets

    return datasets.load_dataset("parquet", data_files=str(folder / f"{name}.parquet"),
                                 cache_dir=str(folder / "cache"), split="train")


def child(folder: Path, variant: str, batch_size: int) -> None:
    """One variant's `map`, in this process: one JSON line (seconds, memory of each process that ran a batch)."""
    import datasets

    from plexity_plugins import PerplexityScorer

    datasets.disable_caching()
    datasets.disable_progress_bars()
    scorer = PerplexityScorer(method="trim")
    if variant in CLEAN_VARIANTS:
        num_proc, opened = CLEAN_VARIANTS[variant]
        dataset = load(folder, "texts")
        if opened:
            scorer.open()

        def batch_function(batch):
            texts = [scorer.clean(text).text for text in batch["text"]]
            return {"clean": texts, "memory": [json.dumps(memory())] * len(texts), "pid": [os.getpid()] * len(texts)}
    else:
        from plexity_plugins.errors import ExtractionError
        from plexity_plugins.extractors.sandbox import TimeLimitedExtractor

        num_proc = PAGE_VARIANTS[variant]
        dataset = load(folder, "pages")
        extract = TimeLimitedExtractor("learned", timeout=30)

        def batch_function(batch):  # (docs/python-api.md's clean_batch)
            texts = []
            for html in batch["html"]:
                try:
                    texts.append(scorer.clean(extract(html)).text)
                except ExtractionError:
                    texts.append(None)
            return {"clean": texts, "memory": [json.dumps(memory())] * len(texts), "pid": [os.getpid()] * len(texts)}

    started = time.perf_counter()
    out = dataset.map(batch_function, batched=True, batch_size=batch_size,
                      num_proc=num_proc if num_proc > 1 else None, remove_columns=dataset.column_names)
    seconds = time.perf_counter() - started
    last = dict(zip(out["pid"], out["memory"]))  # (each process's last batch)
    print(json.dumps({"seconds": seconds, "rows": out.num_rows, "kept_chars": sum(len(t or "") for t in out["clean"]),
                      "workers": [json.loads(value) for value in last.values()]}))


def run_child(folder: Path, variant: str, batch_size: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", variant, "--folder", str(folder),
                           "--batch-size", str(batch_size)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{variant} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def span(values: list[float], digits: int = 1) -> str:
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if round(low, digits) == round(high, digits) else f"{low:.{digits}f}-{high:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=1000, help="wcxb-dev pages (and their texts) to map")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", action="store_true", help="also extract and clean the pages (slower)")
    parser.add_argument("--batch-size", type=int, default=1000, help="rows a batch (datasets' default: 1000)")
    parser.add_argument("--bench", type=Path, default=figures.BENCH, help="the folder holding wcxb-dev")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if importlib.util.find_spec("datasets") is None:
        print("this benchmark needs Hugging Face datasets, which is no dependency of plexity_plugins: "
              "pip install datasets", file=sys.stderr)
        return 2
    if args.child:
        child(args.folder, args.child, args.batch_size)
        return 0

    variants = list(CLEAN_VARIANTS) + (list(PAGE_VARIANTS) if args.pages else [])
    results: dict[str, list[dict]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, args.bench, args.texts)
        load(folder, "texts"), load(folder, "pages")  # (converted to Arrow once, before any timing)
        for number in range(1, args.rounds + 1):
            for name in variants:  # (alternating: each round runs every variant once)
                result = run_child(folder, name, args.batch_size)
                results[name].append(result)
                print(f"round {number}: {name}: {result['seconds']:.2f} s, {len(result['workers'])} process(es), "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    load_average = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n{args.texts:,} wcxb-dev texts, batches of {args.batch_size}, {args.rounds} rounds (best, and range), "
          f"load average {load_average} on {os.cpu_count()} cores; memory of each process that ran a batch, MB:")
    print(f"{'variant':34} {'best s':>7} {'range s':>11} {'processes':>9} "
          + " ".join(f"{key.upper():>9}" for key in MEMORY))
    summary = {}
    for name in variants:
        seconds = [result["seconds"] for result in results[name]]
        workers = [worker for result in results[name] for worker in result["workers"]]
        summary[name] = {"seconds": [round(value, 3) for value in seconds],
                         "processes": len(results[name][0]["workers"]),
                         "kept_chars": results[name][0]["kept_chars"],
                         **{key: [round(worker[key], 1) for worker in workers] for key in MEMORY}}
        print(f"{name:34} {min(seconds):7.2f} {span(seconds, 2):>11} {summary[name]['processes']:9} "
              + " ".join(f"{span([worker[key] for worker in workers], 0):>9}" for key in MEMORY))
    print(json.dumps({"texts": args.texts, "batch_size": args.batch_size, "rounds": args.rounds,
                      "code": figures.code_version(),
                      "datasets": figures.library_versions(("datasets",)).get("datasets"),
                      "load_average": os.getloadavg(), "variants": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
