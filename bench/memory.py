"""Memory with worker processes: is the KenLM model shared (mmap) or copied per worker?

    .venv/bin/python bench/memory.py [--workers 1 2 4] [--mb-per-worker 3] [--quick] [--figures DIR]
                                     [--start-method fork|spawn|fork-preloaded|all]

For each worker count N, N processes (multiprocessing) each get a pickled `PerplexityScorer()`
(embedded model, opened lazily in the worker: memory-mapped), clean `--mb-per-worker` MB of the
dev pages' text (../shared/bench/articles-dev, tags extractor), then wait while the parent reads
their /proc/PID/smaps_rollup (PSS, RSS, private/shared) and, from /proc/PID/smaps, the mapping of
the model file itself.  With every worker alive at once, PSS splits each shared page between the
processes that map it, so:

  PSS added per extra worker = (sum of PSS with N workers - sum with 1) / (N - 1)

(sums include the parent process, which shares pages with forked workers)

is what one more worker really costs, and the model mapping's PSS summed over the workers stays
at the model's resident size if (and only if) the pages are shared.  Both are compared with the
model file's size.  The model and py3langid's tables are read from private copies, so that other
programs mapping the same files do not take a share of their pages.  A full run (no --quick, the
default --workers, --mb-per-worker and --start-method) writes the table of docs/performance.md to
docs/figures/memory.md and the figures to docs/figures/memory.json (any run with --figures DIR).
The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from throughput import CACHE, DEV_DIR, MB, dev_texts, load_docs, loadavg, write_input  # noqa: E402

SMAPS_FIELDS = ("Rss", "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", "Anonymous")


def read_rollup(pid: int) -> dict[str, float]:
    """Totals of /proc/PID/smaps_rollup, in MB."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in SMAPS_FIELDS:
                out[key] = int(rest.split()[0]) / 1024
    return out


def read_mapping(pid: int, path_suffix: str) -> dict[str, float]:
    """The fields of every mapping of a file ending with `path_suffix`, summed, in MB."""
    out = {k: 0.0 for k in SMAPS_FIELDS}
    out["mappings"] = 0
    inside = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split(maxsplit=1)[0]
            if "-" in first and not first.endswith(":"):  # a mapping header line
                inside = line.rstrip().endswith(path_suffix)
                out["mappings"] += inside
            elif inside:
                key = first.rstrip(":")
                if key in SMAPS_FIELDS:
                    out[key] += int(line.split()[1]) / 1024
    return out


def worker(scorer, input_path: str, mb: float, ready, go) -> None:
    docs = load_docs(Path(input_path))
    done = 0
    t0 = time.perf_counter()
    while done < mb * MB:
        for doc in docs:
            scorer.clean(doc)
            done += len(doc.encode("utf-8"))
            if done >= mb * MB:
                break
    ready.put((os.getpid(), done, time.perf_counter() - t0))
    go.wait()


def measure(n: int, method: str, input_path: Path, mb: float, model_dir: Path) -> dict:
    from plexity_plugins.scoring.scorer import PerplexityScorer

    model_file = model_dir / "model.bin"
    ctx = mp.get_context("fork" if method == "fork-preloaded" else method)
    if method == "fork-preloaded":
        # The language identifier's model (numpy arrays) loaded before forking: copy-on-write shared.
        from plexity_plugins.text.language import identifier
        identifier()
    scorer = PerplexityScorer(model_dir)  # the model is not opened here: each worker opens it lazily
    ready, go = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=worker, args=(scorer, str(input_path), mb, ready, go)) for _ in range(n)]
    for p in procs:
        p.start()
    reports = [ready.get(timeout=600) for _ in procs]
    workers = []
    for pid, done, seconds in sorted(reports):
        workers.append({"pid": pid, "mb_scored": round(done / MB, 2), "seconds": round(seconds, 2),
                        "total": read_rollup(pid), "model_mapping": read_mapping(pid, model_file.name)})
    parent = read_rollup(os.getpid())  # with fork it shares pages with the workers: count it
    go.set()
    for p in procs:
        p.join()
    pss = parent["Pss"] + sum(w["total"]["Pss"] for w in workers)
    model_pss = sum(w["model_mapping"]["Pss"] for w in workers)
    return {"workers": n, "start_method": method, "sum_pss_mb": round(pss, 2),
            "parent_pss_mb": round(parent["Pss"], 2),
            "pss_per_worker_mb": [round(w["total"]["Pss"], 2) for w in workers],
            "rss_per_worker_mb": [round(w["total"]["Rss"], 2) for w in workers],
            "model_rss_per_worker_mb": [round(w["model_mapping"]["Rss"], 2) for w in workers],
            "model_pss_per_worker_mb": [round(w["model_mapping"]["Pss"], 2) for w in workers],
            "model_private_per_worker_mb": [round(w["model_mapping"]["Private_Clean"]
                                                  + w["model_mapping"]["Private_Dirty"], 2) for w in workers],
            "model_mapped": all(w["model_mapping"]["mappings"] > 0 for w in workers),
            "sum_model_pss_mb": round(model_pss, 2),
            "anonymous_per_worker_mb": [round(w["total"]["Anonymous"], 2) for w in workers],
            "mb_scored_per_worker": [w["mb_scored"] for w in workers]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--mb-per-worker", type=float, default=3.0)
    parser.add_argument("--start-method", choices=["fork", "spawn", "fork-preloaded", "all"], default="all",
                        help="fork-preloaded: fork after loading the language identifier in the parent")
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    parser.add_argument("--quick", action="store_true", help="smoke run: 0.3 MB per worker, 1 and 2 workers")
    parser.add_argument("--figures", type=Path, default=None,
                        help="write memory.md and memory.json here (default: docs/figures/ on a full run: no "
                             "--quick, the default --workers, --mb-per-worker and --start-method)")
    args = parser.parse_args()
    full_run = not args.quick and all(getattr(args, name) == parser.get_default(name)
                                      for name in ("workers", "mb_per_worker", "start_method"))
    import figures  # (bench/figures.py: imported here, where only the parent process needs it)

    provenance = figures.provenance("bench/memory.py")  # before the run: the code it ran
    if args.quick:
        args.mb_per_worker, args.workers = 0.3, [1, 2]
    if 1 not in args.workers:
        args.workers = [1, *args.workers]

    from plexity_plugins.scoring.models import resolve

    embedded = Path(resolve(None).path)
    model_mb = embedded.stat().st_size / MB
    methods = ["fork", "spawn", "fork-preloaded"] if args.start_method == "all" else [args.start_method]
    CACHE.mkdir(parents=True, exist_ok=True)
    load_start = loadavg()
    runs = []
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        # A private copy of the embedded model: PSS divides a page among ALL processes that map it,
        # and other programs on the machine (tests, servers) may map the embedded file too.
        model_dir = Path(tmp) / "en-default-copy"
        model_dir.mkdir()
        for name in ("model.bin", "model.json"):
            shutil.copyfile(embedded.parent / name, model_dir / name)
        # py3langid's tables likewise: a private cache, written once before any worker maps it.
        os.environ["PLEXITY_CACHE_DIR"] = str(Path(tmp) / "cache")
        subprocess.run([sys.executable, "-c", "from plexity_plugins.text.language import identifier; identifier()"],
                       check=True)
        langid_mb = sum(f.stat().st_size for f in (Path(tmp) / "cache").rglob("*.npy")) / MB
        input_path = Path(tmp) / "input.jsonl"
        write_input(dev_texts(args.dev_dir), args.mb_per_worker, input_path)
        print(f"model {embedded} ({model_mb:.1f} MB, measured on a private copy); py3langid's tables "
              f"{langid_mb:.1f} MB; each worker cleans {args.mb_per_worker} MB; load average {loadavg()}")
        for method in methods:
            for n in sorted(set(args.workers)):
                runs.append(measure(n, method, input_path, args.mb_per_worker, model_dir))
                r = runs[-1]
                print(f"{method:14} {n} worker(s): PSS {r['pss_per_worker_mb']} MB "
                      f"(sum with parent {r['sum_pss_mb']}); "
                      f"model mapping RSS {r['model_rss_per_worker_mb']} PSS {r['model_pss_per_worker_mb']} "
                      f"private {r['model_private_per_worker_mb']} MB")

    summary: dict = {"provenance": provenance, "quick": args.quick, "model_file_mb": round(model_mb, 2),
                     "langid_tables_mb": round(langid_mb, 2), "mb_per_worker": args.mb_per_worker,
                     "loadavg_start": load_start, "loadavg": loadavg(), "by_start_method": {}}
    for method in methods:
        mine = {r["workers"]: r for r in runs if r["start_method"] == method}
        one = mine[1]
        extra = {}
        for n, r in mine.items():
            if n == 1:
                continue
            added = (r["sum_pss_mb"] - one["sum_pss_mb"]) / (n - 1)
            model_added = (r["sum_model_pss_mb"] - one["sum_model_pss_mb"]) / (n - 1)
            extra[n] = {"pss_added_per_extra_worker_mb": round(added, 2),
                        "pss_added_per_extra_worker_vs_model": round(added / model_mb, 3),
                        "model_pss_added_per_extra_worker_mb": round(model_added, 2),
                        "model_pss_added_per_extra_worker_vs_model": round(model_added / model_mb, 3)}
        shared = all(r["model_mapped"] and max(r["model_private_per_worker_mb"]) < 0.1 * model_mb
                     for r in mine.values() if r["workers"] > 1)
        summary["by_start_method"][method] = {"runs": list(mine.values()), "extra": extra,
                                              "model_shared": shared}
        print(f"\n{method}: model file {model_mb:.1f} MB; model mapped and shared between workers: {shared}")
        for n, e in extra.items():
            print(f"  {n} workers: PSS added per extra worker {e['pss_added_per_extra_worker_mb']:.1f} MB "
                  f"({e['pss_added_per_extra_worker_vs_model']:.0%} of the model), of which the model mapping "
                  f"{e['model_pss_added_per_extra_worker_mb']:+.2f} MB "
                  f"({e['model_pss_added_per_extra_worker_vs_model']:+.1%} of the model)")
    first = summary["by_start_method"][methods[0]]["extra"]
    top = max(first) if first else None
    summary["pss_added_per_extra_worker_mb"] = first[top]["pss_added_per_extra_worker_mb"] if top else None
    summary["model_pss_added_per_extra_worker_mb"] = first[top]["model_pss_added_per_extra_worker_mb"] if top else None
    summary["model_shared"] = all(v["model_shared"] for v in summary["by_start_method"].values())
    table = render_markdown(summary, figures.header_line(provenance) + (" QUICK RUN." if args.quick else ""))
    print("\n" + table)
    figures.publish({"memory": table}, summary, "memory", args.figures or (figures.FIGURES if full_run else None))
    print(json.dumps(summary))
    return 0


METHODS = {"fork": "fork", "spawn": "spawn",
           "fork-preloaded": "fork after loading the language identifier in the parent"}


def render_markdown(summary: dict, header: str) -> str:
    """docs/figures/memory.md: the table of docs/performance.md's "Memory with workers", from `summary`."""
    rows = []
    for method, data in summary["by_start_method"].items():
        runs = sorted(data["runs"], key=lambda r: r["workers"])
        top = max(data["extra"], key=int) if data["extra"] else None
        extra = data["extra"][top] if top else None

        def per_worker(key):
            return " / ".join(f"{sum(r[key]) / len(r[key]):.1f}" for r in runs) + " MB"

        rows.append([METHODS.get(method, method), per_worker("pss_per_worker_mb"),
                     f"{extra['pss_added_per_extra_worker_mb']:.1f} MB" if extra else "—",
                     f"{round(extra['model_pss_added_per_extra_worker_mb'], 2) + 0.0:+.2f} MB" if extra else "—",
                     per_worker("model_pss_per_worker_mb"), "yes" if data["model_shared"] else "**no**"])
    counts = " / ".join(str(r["workers"]) for r in sorted(next(iter(summary["by_start_method"].values()))["runs"],
                                                          key=lambda r: r["workers"]))
    heads = ["start method", f"PSS per worker, {counts} workers", "PSS added per extra worker",
             "of which the model mapping", f"model mapping's PSS per worker, {counts} workers",
             "model pages shared"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    note = (f"Each worker cleans {summary['mb_per_worker']:g} MB of the dev pages' text (tags extractor) with a "
            f"private copy of the embedded model ({summary['model_file_mb']:.1f} MB file, memory-mapped); "
            f"py3langid's tables: {summary['langid_tables_mb']:.1f} MB, memory-mapped from a private cache. PSS "
            f"from /proc/PID/smaps_rollup while every worker is alive (a shared page split between the processes "
            f"mapping it); PSS added per extra worker = (sum of PSS with the most workers, the parent's included, "
            f"- the sum with one) / (workers - 1). Model pages shared: each worker's private part of the model "
            f"mapping under a tenth of the file. Load average {summary['loadavg_start']} at the start.")
    return "\n".join([header, "", *lines, "", note])


if __name__ == "__main__":
    sys.exit(main())
