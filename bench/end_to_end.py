"""End to end: the default `plexity run` against datatrove's own pipeline, on WARCs of two page sets.

    .venv/bin/python bench/end_to_end.py [--sets wcxb,articles] [--rounds 3] [--variants default,fast,...]
                                         [--quick] [--figures DIR] [--workers 1 2] [--profile-pages 400]

1. Builds the input (once, cached under ~/.cache/plexity_plugins/bench/e2e/, never in the repo): for
   each set of --sets, its pages' HTML as HTTP response records in 4 gzipped WARC files: ``wcxb``,
   the 1,497 pages of wcxb-dev (all seven page types: article, forum, product, collection,
   listing, documentation, service), once each; ``articles``, the 76 pages of articles-dev, 20
   times over (1,520 records, each copy with a distinct URI).  Every record carries
   ``WARC-Identified-Payload-Type: text/html``, as Common Crawl's do: without it datatrove's
   WarcReader sniffs the bytes with libmagic and skips the pages it does not call text/html,
   which would make its pipeline look fast.
2. On each set, alternates --rounds times: datatrove's own WarcReader -> Trafilatura ->
   JsonlWriter (LocalPipelineExecutor, tasks=1, workers=1, a fresh process) and `plexity run DIR
   --tasks 1 --workers 1` (``default``: the extractor named by DEFAULT_EXTRACTOR, no --extractor
   given; any other name of plexity_plugins.extractors.EXTRACTORS runs with --extractor NAME).
   Wall clock of the whole command, start-up included; the best round of each counts, and its
   CPU seconds (the command's process tree).  Both pipelines must read every record (their own
   counters, from their stats.json): the script stops if either reads a different number.
3. Optional: `plexity run` with several workers (--workers), and a single-process profile of the
   pipeline's steps (--profile-pages).

On a full run (no --quick, the default --sets) the table goes to docs/figures/end_to_end.md and the
figures to docs/figures/end_to_end.json (or to --figures DIR on any run), headed by the command, the
commit, the date and the library versions.  The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import io
import json
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import figures  # noqa: E402
from throughput import CACHE, loadavg  # noqa: E402

from plexity_plugins.extractors import DEFAULT_EXTRACTOR, EXTRACTORS  # noqa: E402

PLEXITY = Path(sys.executable).parent / "plexity"
# set -> (folder under the benchmark data, copies of each page, what it holds)
SETS = {"wcxb": ("wcxb-dev", 1, "WCXB dev, all seven page types"),
        "articles": ("articles-dev", 20, "articles-dev, news-like articles")}
FILES = 4


def set_pages(bench: Path, name: str) -> list[tuple[str, bytes]]:
    """(URL, HTML bytes) of every page of a set, in a fixed order."""
    root = bench / SETS[name][0]
    pages = []
    if name == "wcxb":
        for gt in sorted((root / "ground-truth").glob("*.json")):
            url = json.loads(gt.read_text(encoding="utf-8")).get("url") or f"https://wcxb.example/{gt.stem}"
            pages.append((url, gzip.decompress((root / "html" / f"{gt.stem}.html.gz").read_bytes())))
    else:
        truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
        for path in sorted((root / "html").glob("*.html.gz")):
            key = path.name[: -len(".html.gz")]
            url = truth.get(key, {}).get("url") or f"https://articles.example/{key}"
            pages.append((url, gzip.decompress(path.read_bytes())))
    if not pages:
        raise SystemExit(f"no pages in {root} (the benchmark data is read in place, beside the repository)")
    return pages


def build_warcs(bench: Path, name: str, copies: int, every: int = 1, files: int = FILES) -> tuple[Path, int]:
    """The set's pages (one in `every`), `copies` times over, as response records in `files`
    .warc.gz files; returns the folder and the number of records."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    pages = set_pages(bench, name)[::every]
    records = len(pages) * copies
    out = CACHE / "e2e" / f"{name}-{records}-pages-in-{files}-typed"
    if (out / "DONE").exists():
        return out, records
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    writers = []
    for i in range(files):
        f = open(out / f"part-{i:03d}.warc.gz", "wb")
        writers.append((f, WARCWriter(f, gzip=True)))
    for n in range(records):
        url, body = pages[n % len(pages)]
        uri = url if copies == 1 else f"{url}{'&' if '?' in url else '?'}plexity-copy={n // len(pages)}"
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                protocol="HTTP/1.1")
        _, writer = writers[n % files]
        # WARC-Identified-Payload-Type as Common Crawl writes it: without it datatrove's WarcReader
        # sniffs the bytes with libmagic and skips pages it does not call text/html (most of ours).
        writer.write_record(writer.create_warc_record(
            uri, "response", payload=io.BytesIO(body), http_headers=http,
            warc_headers_dict={"WARC-Identified-Payload-Type": "text/html"}))
    for f, _ in writers:
        f.close()
    (out / "DONE").write_text(f"{records} records\n")
    return out, records


def run_timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """(result, wall seconds, CPU seconds): CPU is user + system time of the command and every
    process it waited for (the extractor's sandbox child included), so it does not count the
    minutes in which another job on this shared machine had the core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc, wall, cpu


def step_times(stats_json: Path) -> dict[str, float]:
    """datatrove's per-step total time (seconds, summed over tasks) from its merged stats.json."""
    if not stats_json.exists():
        return {}
    out = {}
    for step in json.loads(stats_json.read_text()):
        total = step.get("time_stats", {}).get("total")
        if total is not None:
            out[step["name"]] = round(total, 2)
    return out


def step_documents(stats_json: Path, kind: str = "READER") -> int | None:
    """From stats.json, the documents the reader step handed on (its own ``documents`` counter: the
    records a pipeline actually processed), or, with kind="WRITER", those the writer wrote."""
    if not stats_json.exists():
        return None
    for step in json.loads(stats_json.read_text()):
        if kind in step.get("name", ""):
            documents = step.get("stats", {}).get("documents" if kind == "READER" else "total", 0)
            return documents.get("total", 0) if isinstance(documents, dict) else documents
    return None


def extractor_counters(stats_json: Path) -> dict:
    """The extraction step's own counters (in, extracted, forwarded, timeouts, failures...)."""
    if not stats_json.exists():
        return {}
    for step in json.loads(stats_json.read_text()):
        if "EXTRAC" in step.get("name", ""):
            return {k: v for k, v in step.get("stats", {}).items() if isinstance(v, (int, float))}
    return {}


def plexity_command(variant: str) -> list[str]:
    """`plexity run` as a user types it: ``default`` gives no --extractor."""
    return ["run"] if variant == "default" else ["run", "--extractor", variant]


def run_plexity(warc_dir: Path, workers: int, tasks: int, variant: str, work: Path) -> dict:
    out = work / f"run-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(PLEXITY), *plexity_command(variant), str(warc_dir), "--output-dir", str(out), "--executor", "local",
           "--tasks", str(tasks), "--workers", str(workers)]
    load_before = loadavg()
    proc, seconds, cpu = run_timed(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    summary = [line for line in proc.stdout.splitlines() if "WARC records read" in line]
    stats = out / "logs" / "stats.json"
    return {"workers": workers, "tasks": tasks, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "command": " ".join(cmd[1:]), "documents_read": step_documents(stats),
            "documents_written": step_documents(stats, "WRITER"), "extractor": extractor_counters(stats),
            "summary": summary[0] if summary else None,
            "step_seconds": step_times(stats),
            "loadavg_before": load_before, "loadavg_after": loadavg()}


def profile_single_process(warc_dir: Path, pages: int, extractor: str, work: Path) -> dict:
    """The pipeline's steps called one after the other in this process, timed per step."""
    from plexity_plugins.cli.run import build_pipeline

    first = sorted(warc_dir.glob("*.warc.gz"))[0]
    out = work / "profile"
    shutil.rmtree(out, ignore_errors=True)
    reader, extract_step, filt, writer = build_pipeline(str(first), out, extractor=extractor)
    # Extractors normally run in datatrove's sandbox subprocess (for timeouts): call them
    # directly here so that the time is seen by this process.
    extract = extract_step.extract
    docs = []
    t0 = time.perf_counter()
    for doc in reader.run():
        docs.append(doc)
        if len(docs) >= pages:
            break
    read_s = time.perf_counter() - t0
    texts = [doc.text for doc in docs]
    filt.scorer.clean("Warm up the model and the language identifier with an English sentence, please.")

    def one_pass(profiler=None):
        times = {"extract": 0.0, "filter": 0.0, "write": 0.0}
        kept = 0
        if profiler:
            profiler.enable()
        with writer:
            for doc, html in zip(docs, texts):
                doc.text = html
                t = time.perf_counter()
                doc.text = extract(html)
                t2 = time.perf_counter()
                ok = filt.filter(doc)
                t3 = time.perf_counter()
                if ok is True:
                    writer.write(doc, rank=0)
                    kept += 1
                times["extract"] += t2 - t
                times["filter"] += t3 - t2
                times["write"] += time.perf_counter() - t3
        if profiler:
            profiler.disable()
        return times, kept

    times, kept = one_pass()
    times["read"] = read_s
    total = sum(times.values())
    profiler = cProfile.Profile()
    one_pass(profiler)
    stats = pstats.Stats(profiler)
    inner = {}
    wanted = {"other_language": "language identification", "split_sentences": "splitting",
              "split_with_blocks": "splitting", "_logprobs": "tokenising and scoring",
              "keep_region": "deciding", "keep_trim": "deciding",
              "to_lm_lines": "tokenising", "to_lm_line": "tokenising (dropped sentences, again)",
              "_full_score": "KenLM full_scores (dropped sentences)",
              "<method 'score' of 'kenlm.Model' objects>": "KenLM score", "_join_kept": "joining",
              "clean": "clean() total", "filter": "filter() total", "sanitize": "sanitize"}
    for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():
        label = wanted.get(func)
        if label is None or ("plexity_plugins" not in filename and filename != "~"):
            continue
        inner[label] = round(inner.get(label, 0.0) + ct, 3)
    top = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:12]
    top_tottime = [{"function": f"{Path(k[0]).name}:{k[1]}({k[2]})", "tottime_s": round(v[2], 3)}
                   for k, v in top]
    return {"pages": len(docs), "kept_documents": kept, "seconds": {k: round(v, 3) for k, v in times.items()},
            "share": {k: round(v / total, 3) for k, v in times.items()},
            "pages_per_s_single_process": round(len(docs) / total, 1),
            "cprofile_cumulative_s": inner, "cprofile_top_tottime": top_tottime}


DATATROVE_ANCHOR = """
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.extractors import Trafilatura
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter
src, out = sys.argv[1], sys.argv[2]
LocalPipelineExecutor(pipeline=[WarcReader(src, glob_pattern="*.warc.gz"), Trafilatura(), JsonlWriter(out + "/output")],
                      tasks=1, workers=1, logging_dir=out + "/logs").run()
"""


def run_datatrove_anchor(warc_dir: Path, work: Path) -> dict:
    """datatrove's own WarcReader -> Trafilatura (its defaults: extraction in a sandboxed
    subprocess with a timeout) -> JsonlWriter, LocalPipelineExecutor tasks=1 workers=1: the
    pipeline users run today, timed like `plexity run` (wall clock of a fresh process)."""
    out = work / "datatrove-anchor"
    shutil.rmtree(out, ignore_errors=True)
    proc, seconds, cpu = run_timed([sys.executable, "-c", DATATROVE_ANCHOR, str(warc_dir), str(out)])
    if proc.returncode != 0:
        raise SystemExit(f"datatrove anchor failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    written = sum(1 for f in (out / "output").glob("*.jsonl.gz") for _ in gzip.open(f, "rt"))
    stats = out / "logs" / "stats.json"
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "documents_written": written,
            "documents_read": step_documents(stats), "extractor": extractor_counters(stats),
            "step_seconds": step_times(stats)}


def compare_with_datatrove(warc_dir: Path, records: int, rounds: int, work: Path,
                           variants: tuple[str, ...] = ("default",)) -> dict:
    """Alternate datatrove's pipeline and `plexity run` (one task, one worker: one process reads
    every file) per variant, `rounds` times, the order turning each round; the best wall time of
    each, its pages/s and ratio to datatrove's, and the ratio of each round.  Stops when a pipeline
    reads another number of documents than the WARCs hold."""
    names = ["datatrove", *variants]
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    read: dict[str, set] = {name: set() for name in names}
    written: dict[str, int] = {}
    extraction: dict[str, dict] = {}
    per_round = []
    for i in range(rounds):
        this_round = {}
        for name in names[i % len(names):] + names[:i % len(names)]:
            r = run_datatrove_anchor(warc_dir, work) if name == "datatrove" else run_plexity(warc_dir, 1, 1, name, work)
            walls[name].append(r["seconds"])
            cpus[name].append(r["cpu_seconds"])
            read[name].add(r["documents_read"])
            written[name] = r["documents_written"]
            extraction[name] = r["extractor"]
            this_round[name] = r["seconds"]
            print(f"  {name}: {r['seconds']:.1f} s wall, {r['cpu_seconds']:.1f} s CPU, "
                  f"{r['documents_read']} documents read (load {loadavg()})", flush=True)
        per_round.append({k: round(this_round["datatrove"] / v, 2) for k, v in this_round.items()})
        print(f"  this round, x datatrove (wall): {per_round[-1]}", flush=True)
    wrong = {name: sorted(counts, key=str) for name, counts in read.items() if counts != {records}}
    if wrong:
        raise SystemExit(f"the pipelines did not read the {records} records of {warc_dir}: {wrong}; "
                         f"the comparison would not be of the same pages")
    best = {k: min(v) for k, v in walls.items()}
    best_cpu = {k: min(v) for k, v in cpus.items()}
    pps = {k: round(records / v, 1) for k, v in best.items()}
    return {"records": records, "documents_read": {k: records for k in names}, "documents_written": written,
            "extractor_counters": extraction, "pages_per_cpu_s": {k: round(records / v, 1) for k, v in best_cpu.items()},
            "seconds": walls, "cpu_seconds": cpus, "best_seconds": best, "best_cpu_seconds": best_cpu,
            "pages_per_s": pps, "ratio_to_datatrove": {k: round(v / pps["datatrove"], 2) for k, v in pps.items()},
            "cpu_ratio_to_datatrove": {k: round(best_cpu["datatrove"] / v, 2) for k, v in best_cpu.items()},
            "ratio_per_round": per_round}


def variant_label(variant: str) -> str:
    return f"`plexity run` (default: {DEFAULT_EXTRACTOR})" if variant == "default" else f"`plexity run --extractor {variant}`"


def render_markdown(results: dict) -> dict[str, str]:
    """The table, from the JSON figures alone."""
    rows, counters = [], []
    for set_name, data in results["sets"].items():
        v = data["vs_datatrove"]
        for i, variant in enumerate(["datatrove", *results["variants"]]):
            name = "datatrove: `WarcReader → Trafilatura → JsonlWriter`" if variant == "datatrove" else variant_label(variant)
            rows.append([SETS[set_name][2] if i == 0 else "", f"{v['records']}" if i == 0 else "", name,
                         f"{v['documents_written'][variant]}", f"{v['pages_per_s'][variant]:.1f}",
                         f"{v['ratio_to_datatrove'][variant]:.2f}", f"{v['pages_per_cpu_s'][variant]:.1f}",
                         f"{v['cpu_ratio_to_datatrove'][variant]:.2f}"])
        dt = v.get("extractor_counters", {}).get("datatrove", {})
        if dt:
            counters.append(f"{set_name}: " + ", ".join(f"{k} {n}" for k, n in sorted(dt.items())))
    heads = ["pages", "records (each pipeline read them all)", "pipeline", "documents out", "pages/s (wall)",
             "× datatrove (wall)", "pages per CPU second", "× datatrove (CPU)"]
    note = (f"One worker, one task, from WARC files to JSONL, start-up included; the pipelines alternate "
            f"{results['rounds']} times on the same WARCs (every record typed `WARC-Identified-Payload-Type: "
            f"text/html`, as Common Crawl's are) and each one's best round counts, by wall time and by the CPU "
            f"seconds of the command's processes (which other jobs on a shared machine do not inflate). "
            f"Documents out: what each pipeline wrote. datatrove's Trafilatura step runs with its defaults "
            f"(favour_precision, deduplicate: a paragraph seen more than twice before in the process is dropped, "
            f"so most repeated copies of an article come out empty; a 1 s timeout per page); its counters, last "
            f"round: {'; '.join(counters) or 'not recorded'}. Ours writes every page with text except those the "
            f"filter drops whole. {results['cpus']} CPUs, load average {results['loadavg_start']} at the start.")
    quick = " QUICK RUN." if results.get("quick") else ""
    return {"end_to_end": "\n\n".join([figures.header_line(results["provenance"]) + quick,
                                        figures.table(heads, rows), note])}


def main() -> int:
    variants = ["default", *(e for e in EXTRACTORS if e != "none")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=figures.BENCH, help="the folder holding wcxb-dev and articles-dev")
    parser.add_argument("--sets", default="wcxb,articles", help=f"comma-separated, from {', '.join(SETS)}")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the pipelines (default 3)")
    parser.add_argument("--variants", default="default",
                        help=f"comma-separated `plexity run` variants to time against datatrove's pipeline, from "
                             f"{', '.join(variants)} (default: default, i.e. no --extractor)")
    parser.add_argument("--quick", action="store_true", help="smoke run: one WCXB page in ten, 2 article copies, 1 round")
    parser.add_argument("--figures", type=Path, default=None,
                        help="write end_to_end.md and end_to_end.json here (default: docs/figures/ on a full run)")
    parser.add_argument("--workers", type=int, nargs="*", default=[],
                        help="also time `plexity run --tasks 4 --workers W` for each W, on the first set")
    parser.add_argument("--profile-pages", type=int, default=0,
                        help="also profile the pipeline's steps in one process on this many pages of the first set")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    for bad, allowed, what in ((set(sets) - set(SETS), SETS, "set"), (set(chosen) - set(variants), variants, "variant")):
        if bad:
            parser.error(f"unknown {what}(s) {sorted(bad)}: choose from {', '.join(allowed)}")
    absent = [str(args.bench / SETS[s][0]) for s in sets if not (args.bench / SETS[s][0]).is_dir()]
    if absent:
        print(f"bench/end_to_end.py: benchmark data not found: {', '.join(absent)} (read in place from "
              f"shared/bench beside the repository, or --bench DIR)", file=sys.stderr)
        return 2
    rounds = 1 if args.quick else args.rounds
    provenance = figures.provenance("bench/end_to_end.py")  # before the run: the code it ran
    results = {"provenance": provenance, "variants": chosen, "default_extractor": DEFAULT_EXTRACTOR,
               "rounds": rounds, "quick": args.quick, "cpus": os.cpu_count(), "loadavg_start": loadavg(), "sets": {}}
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        work = Path(tmp)
        for set_name in sets:
            _, copies, what = SETS[set_name]
            if args.quick:
                warc_dir, records = build_warcs(args.bench, set_name, min(copies, 2), every=10 if copies == 1 else 1)
            else:
                warc_dir, records = build_warcs(args.bench, set_name, copies)
            size_mb = sum(p.stat().st_size for p in warc_dir.glob("*.warc.gz")) / 1e6
            print(f"{set_name}: {records} records ({what}) in {FILES} WARC files ({size_mb:.1f} MB gzipped) in "
                  f"{warc_dir}; load average {loadavg()}", flush=True)
            versus = compare_with_datatrove(warc_dir, records, rounds, work, tuple(chosen))
            print(f"  pages/s {versus['pages_per_s']}; x datatrove (best wall) {versus['ratio_to_datatrove']}; "
                  f"by CPU seconds {versus['cpu_ratio_to_datatrove']}", flush=True)
            results["sets"][set_name] = {"warc_dir": str(warc_dir), "megabytes": round(size_mb, 1),
                                         "vs_datatrove": versus}
        first = sets[0]
        warc_dir = Path(results["sets"][first]["warc_dir"])
        records = results["sets"][first]["vs_datatrove"]["records"]
        runs = []
        for w in args.workers:
            r = run_plexity(warc_dir, w, FILES, chosen[0], work)
            r["pages_per_s"] = round(records / r["seconds"], 1)
            runs.append(r)
            print(f"plexity run --workers {w} ({first}): {r['seconds']:.1f} s, {r['pages_per_s']} pages/s")
        if runs:
            results["workers"] = runs
        if args.profile_pages:
            extractor = DEFAULT_EXTRACTOR if chosen[0] == "default" else chosen[0]
            profile = profile_single_process(warc_dir, args.profile_pages, extractor, work)
            print(f"single-process profile of the same steps on {profile['pages']} pages "
                  f"({profile['pages_per_s_single_process']} pages/s): seconds {profile['seconds']}, "
                  f"share {profile['share']}")
            print(f"  inside the filter (cProfile cumulative s): {profile['cprofile_cumulative_s']}")
            results["profile"] = profile
    tables = render_markdown(results)
    print("\n" + "\n\n".join(tables.values()))
    full_run = not args.quick and sets == list(SETS)
    folder = args.figures or (figures.FIGURES if full_run else None)
    figures.publish(tables, results, "end_to_end", folder)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
