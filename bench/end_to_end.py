"""End to end: `plexity run` (local executor) over a WARC collection of a few thousand pages.

    .venv/bin/python bench/end_to_end.py [--pages 3040] [--files 4] [--workers 1 2]
                                         [--extractor auto|trafilatura|fast|tags] [--profile-pages 400] [--quick]
                                         [--vs-datatrove ROUNDS] [--vs-extractors auto trafilatura fast tags]

1. Builds the input (once, cached under ~/.cache/plexity_plugins/bench/e2e/, never in the repo):
   the dev benchmark pages' HTML (../shared/bench/articles-dev/html) written again and again, each
   copy with a distinct URI, as HTTP response records into `--files` gzipped WARC files.
2. Runs `plexity run DIR --executor local --tasks FILES --workers W` for each W, from a clean output
   directory, and reports pages/s (wall clock of the whole command, start-up included) and
   datatrove's own per-step time (its stats.json: the time each step spent, summed over tasks).
With --vs-datatrove ROUNDS, also alternates datatrove's own WarcReader -> Trafilatura ->
   JsonlWriter (LocalPipelineExecutor, tasks=1, workers=1) with `plexity run --tasks 1
   --workers 1` per extractor of --vs-extractors, ROUNDS times, on the same WARCs: best wall
   time and best CPU seconds (the command's process tree) of each, their ratios to datatrove's,
   and the wall-time ratio of each round.
3. Profiles a single-process run of the same pipeline steps (WarcHtmlReader -> extractor ->
   PerplexitySentenceFilter -> JsonlWriter, built by `plexity_plugins.cli.run.build_pipeline`) on
   `--profile-pages` pages: wall time per step with plain timers, then the filter's internals
   (language identification, splitting, tokenising and scoring, deciding) from cProfile.

The last line of stdout is one JSON object with every figure.
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

from throughput import CACHE, DEV_DIR, dev_page_paths, loadavg  # noqa: E402

PLEXITY = Path(sys.executable).parent / "plexity"


def build_warcs(dev_dir: Path, pages: int, files: int) -> Path:
    """`pages` HTML response records (the dev pages, repeated) in `files` .warc.gz files."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = CACHE / "e2e" / f"dev-pages-{pages}-in-{files}-typed"
    if (out / "DONE").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    truth = json.loads((dev_dir / "ground-truth.json").read_text())
    bodies = []
    for path in dev_page_paths(dev_dir):
        key = path.name[: -len(".html.gz")]
        url = truth.get(key, {}).get("url") or f"https://dev.example/{key}"
        bodies.append((url, gzip.open(path).read()))
    writers = []
    for i in range(files):
        f = open(out / f"part-{i:03d}.warc.gz", "wb")
        writers.append((f, WARCWriter(f, gzip=True)))
    for n in range(pages):
        url, body = bodies[n % len(bodies)]
        uri = f"{url}{'&' if '?' in url else '?'}plexity-copy={n // len(bodies)}"
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
    (out / "DONE").write_text(f"{pages} pages\n")
    return out


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


def run_plexity(warc_dir: Path, workers: int, tasks: int, extractor: str, work: Path) -> dict:
    out = work / f"run-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(PLEXITY), "run", str(warc_dir), "--output-dir", str(out), "--executor", "local",
           "--tasks", str(tasks), "--workers", str(workers), "--extractor", extractor]
    load_before = loadavg()
    proc, seconds, cpu = run_timed(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    summary = [line for line in proc.stdout.splitlines() if "WARC records read" in line]
    return {"workers": workers, "tasks": tasks, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "command": " ".join(cmd[1:]),
            "summary": summary[0] if summary else None, "step_seconds": step_times(out / "logs" / "stats.json"),
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
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "documents_written": written,
            "step_seconds": step_times(out / "logs" / "stats.json")}


def compare_with_datatrove(warc_dir: Path, pages: int, rounds: int, work: Path,
                           extractors: tuple[str, ...] = ("auto", "trafilatura", "fast", "tags")) -> dict:
    """Alternate datatrove's pipeline and `plexity run` (one worker, one task per WARC file is
    not used here: tasks=1 so both read every file in one process) per extractor, `rounds`
    times; report the best wall time of each, pages/s, and the ratio to datatrove's."""
    best: dict[str, float] = {}
    best_cpu: dict[str, float] = {}
    per_round = []
    for _ in range(rounds):
        walls = {}
        for name in ["datatrove", *extractors]:
            if name == "datatrove":
                r = run_datatrove_anchor(warc_dir, work)
                print(f"  datatrove wrote {r['documents_written']} documents; step time {r['step_seconds']}")
            else:
                r = run_plexity(warc_dir, 1, 1, name, work)
            s, cpu = r["seconds"], r["cpu_seconds"]
            walls[name] = s
            best[name] = min(best.get(name, s), s)
            best_cpu[name] = min(best_cpu.get(name, cpu), cpu)
            print(f"  {name}: {s:.1f} s wall, {cpu:.1f} s CPU (load {loadavg()})")
        per_round.append({k: round(walls["datatrove"] / v, 2) for k, v in walls.items()})
        print(f"  this round, x datatrove (wall): {per_round[-1]}")
    pps = {k: round(pages / v, 1) for k, v in best.items()}
    return {"best_seconds": best, "best_cpu_seconds": best_cpu, "pages_per_s": pps,
            "ratio_to_datatrove": {k: round(v / pps["datatrove"], 2) for k, v in pps.items()},
            "cpu_ratio_to_datatrove": {k: round(best_cpu["datatrove"] / v, 2) for k, v in best_cpu.items()},
            "ratio_per_round": per_round}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=3040, help="pages in the WARC collection (default 3040)")
    parser.add_argument("--files", type=int, default=4, help="WARC files = datatrove tasks (default 4)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--extractor", default="auto", choices=["auto", "dense", "trafilatura", "fast", "tags"])
    parser.add_argument("--profile-pages", type=int, default=400)
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    parser.add_argument("--quick", action="store_true", help="smoke run: 152 pages, 2 files, 50 profiled")
    parser.add_argument("--vs-datatrove", type=int, default=0, metavar="ROUNDS",
                        help="also time datatrove's WarcReader->Trafilatura->JsonlWriter against plexity run "
                             "(auto, trafilatura, fast, tags; one worker, one task), alternating, ROUNDS times")
    parser.add_argument("--vs-extractors", nargs="+", default=["auto", "trafilatura", "fast", "tags"],
                        choices=["auto", "dense", "trafilatura", "fast", "tags"], help="plexity run's extractors in --vs-datatrove")
    args = parser.parse_args()
    if args.quick:
        args.pages, args.files, args.profile_pages = 152, 2, 50

    warc_dir = build_warcs(args.dev_dir, args.pages, args.files)
    size_mb = sum(p.stat().st_size for p in warc_dir.glob("*.warc.gz")) / 1e6
    print(f"input: {args.pages} pages in {args.files} WARC files ({size_mb:.1f} MB gzipped) in {warc_dir}; "
          f"extractor {args.extractor}; load average {loadavg()}")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        work = Path(tmp)
        runs = []
        for w in args.workers:
            r = run_plexity(warc_dir, w, args.files, args.extractor, work)
            r["pages_per_s"] = round(args.pages / r["seconds"], 1)
            runs.append(r)
            print(f"plexity run --workers {w}: {r['seconds']:.1f} s, {r['pages_per_s']} pages/s "
                  f"(load {r['loadavg_before']} -> {r['loadavg_after']})")
            print(f"  datatrove step time (s, summed over tasks): {r['step_seconds']}")
            print(f"  {r['summary']}")
        versus = None
        if args.vs_datatrove:
            print("datatrove's pipeline vs plexity run, one worker, alternating:")
            versus = compare_with_datatrove(warc_dir, args.pages, args.vs_datatrove, work, tuple(args.vs_extractors))
            print(f"  pages/s {versus['pages_per_s']}; ratio to datatrove (best wall times) "
                  f"{versus['ratio_to_datatrove']}; by CPU seconds {versus['cpu_ratio_to_datatrove']}")
        profile = profile_single_process(warc_dir, args.profile_pages, args.extractor, work)
    print(f"single-process profile of the same steps on {profile['pages']} pages "
          f"({profile['pages_per_s_single_process']} pages/s): seconds {profile['seconds']}, "
          f"share {profile['share']}")
    print(f"  inside the filter (cProfile cumulative s): {profile['cprofile_cumulative_s']}")
    print("  top functions by own time: " + ", ".join(f"{t['function']} {t['tottime_s']}"
                                                       for t in profile["cprofile_top_tottime"]))
    by_workers = {r["workers"]: r for r in runs}
    speedup = (by_workers[2]["pages_per_s"] / by_workers[1]["pages_per_s"]
               if 1 in by_workers and 2 in by_workers else None)
    if speedup:
        print(f"2 workers / 1 worker: {speedup:.2f}x")
    print(json.dumps({"pages": args.pages, "files": args.files, "extractor": args.extractor,
                      "pages_per_s": {r["workers"]: r["pages_per_s"] for r in runs},
                      "speedup_2_vs_1": round(speedup, 2) if speedup else None,
                      "runs": runs, "vs_datatrove": versus, "profile": profile, "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
