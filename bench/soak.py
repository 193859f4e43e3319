"""Soak: does a long `plexity run` (or `plexity clean`) stay flat in memory, file descriptors and temporary files?

    .venv/bin/python bench/soak.py [--records 200000] [--files 8] [--workers 2] [--every 5]
                                   [--kill-at 0.5] [--clean] [--out DIR] [--quick]

1. Builds the input once (cached under ~/.cache/plexity_plugins/bench/soak/, never in the repository): the
   1,497 wcxb-dev and 76 articles-dev pages (read in place from ../shared/bench, as bench/end_to_end.py reads
   them) repeated to --records response records in --files gzipped WARC files, each copy under its own URI
   and with a small mutation of its HTML (its number in the title and a comment after <body>), so that no
   step can answer a page from a cache of content. Every record carries `WARC-Identified-Payload-Type:
   text/html`, as Common Crawl's do.
2. Runs `plexity run DIR --output-dir OUT --executor local --workers N` under `nice -n 10`, its TMPDIR a
   folder of its own, and every --every seconds reads, for the run's process, each worker and each
   extraction child (the sandbox that runs the learned reader): RSS and PSS (/proc/PID/smaps_rollup),
   open file descriptors (those on temporary or deleted files apart), threads; the files in that TMPDIR and in
   the output and logging folders; and the records read so far (the input's bytes read, from each
   worker's position in its file and the completed tasks, times the records per byte), so pages per second.
3. With --kill-at F: SIGKILLs the run's process when F of the input is read, waits, lists what it left
   (processes of its session still alive, half-written `.part` files, files in its TMPDIR), then runs the same
   command again (a resumed run) to the end.
4. With --clean: `plexity clean` of the first WARC file, sampled the same way (--clean-only: that alone).

Prints one line per sample and, at the end, for each role the first and peak figures and the slope per
100,000 records (least squares over the second half of the samples, after the warm-up), then one JSON line
of all figures.  --quick: 4,000 records in 2 files, samples every second (a check that the script works).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from end_to_end import set_pages  # noqa: E402
from throughput import CACHE, loadavg  # noqa: E402

PLEXITY = Path(sys.executable).parent / "plexity"
BENCH = REPO.parent / "shared" / "bench"
FIGURES = ("rss_mb", "pss_mb", "fds", "threads")


# -- input ---------------------------------------------------------------------------------------------------------

def build_input(records: int, files: int) -> Path:
    """The wcxb and articles pages repeated to `records` mutated copies in `files` .warc.gz files (cached)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = CACHE / "soak" / f"{records}-records-in-{files}"
    if (out / "DONE").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    bench = Path(os.environ.get("PLEXITY_BENCH_DIR", BENCH))
    pages = set_pages(bench, "wcxb") + set_pages(bench, "articles")
    handles = [open(out / f"soak-{i:03d}.warc.gz", "wb") for i in range(files)]
    # Each record a gzip member of its own, as warcio writes them, but compressed by ISA-L at level 1 when it is
    # installed (~0.3 GB of HTML a second against zlib's ~0.05 at warcio's level: 200,000 records in minutes).
    try:
        from isal.igzip import compress
    except ImportError:
        from gzip import compress
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    for n in range(records):
        url, body = pages[n % len(pages)]
        copy = n // len(pages)
        # Small mutations: the copy's number in the title and a comment after <body>, so that no two records
        # share their bytes (nothing may be answered from a cache of content), the page otherwise as served.
        body = body.replace(b"<title>", b"<title>%d " % copy, 1).replace(b"<body", b"<!-- copy %d --><body" % n, 1)
        uri = f"{url}{'&' if '?' in url else '?'}plexity-soak={copy}"
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                protocol="HTTP/1.1")
        buffer.seek(0)
        buffer.truncate()
        writer.write_record(writer.create_warc_record(
            uri, "response", payload=io.BytesIO(body), http_headers=http,
            warc_headers_dict={"WARC-Identified-Payload-Type": "text/html"}))
        handles[n % files].write(compress(buffer.getvalue(), 1))
    for f in handles:
        f.close()
    (out / "DONE").write_text(f"{records} records\n")
    return out


# -- sampling ------------------------------------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def process_tree(root: int) -> list[tuple[int, int]]:
    """(pid, depth) of root and every descendant."""
    out, todo = [], [(root, 0)]
    while todo:
        pid, depth = todo.pop()
        out.append((pid, depth))
        todo.extend((c, depth + 1) for c in children(pid))
    return out


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def role(pid: int, depth: int, root_depth: int) -> str:
    """main (the command's process), worker (a forked task runner), child (an extraction sandbox)."""
    if "plexity_plugins.extractors.sandbox" in command_line(pid) or "sandbox" in command_line(pid):
        return "child"
    return "main" if depth == root_depth else "worker"


def measure(pid: int) -> dict | None:
    try:
        figures = {}
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "Pss"):
                    figures[key.lower() + "_mb"] = round(int(rest.split()[0]) / 1024, 1)
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    figures["threads"] = int(line.split()[1])
        figures["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
        return figures
    except (OSError, ValueError):
        return None


def input_positions(pid: int, inputs: dict[str, int]) -> dict[str, int]:
    """The read position of each input file `pid` has open (its fdinfo's pos)."""
    out = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target in inputs:
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    out[target] = int(f.readline().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return out


def temporary_fds(pid: int) -> int:
    """Descriptors of `pid` open on a temporary or deleted file (the shared memory a page crosses in is one)."""
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            n += target.startswith(("/tmp/", "/dev/shm/", "/memfd:")) or target.endswith("(deleted)")
    except OSError:
        pass
    return n


def folder_figures(folder: Path, since: set[str] | None = None) -> tuple[int, int]:
    """(files, bytes) under `folder`; with `since`, only paths not in it."""
    files = size = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(dirpath, name)
            if since is not None and path in since:
                continue
            try:
                size += os.lstat(path).st_size
                files += 1
            except OSError:
                pass
    return files, size


class Sampler:
    def __init__(self, inputs: dict[str, int], records: int, out: Path, tmpdir: Path):
        self.inputs, self.records, self.out, self.tmpdir = inputs, records, out, tmpdir
        self.total_bytes = sum(inputs.values())
        self.done_bytes: dict[str, int] = {}
        self.samples: list[dict] = []
        self.t0 = time.monotonic()

    def read_bytes(self, positions: dict[str, int]) -> int:
        # A file no longer open after having been read is done (tasks read whole files).
        for path, pos in positions.items():
            self.done_bytes[path] = max(self.done_bytes.get(path, 0), pos)
        for path in list(self.done_bytes):
            if path not in positions and self.done_bytes[path] > 0:
                self.done_bytes[path] = self.inputs[path]
        return sum(self.done_bytes.values())

    def sample(self, root: int) -> dict:
        tree = process_tree(root)
        procs, positions, temporary = [], {}, 0
        for pid, depth in tree:
            figures = measure(pid)
            if figures is None:
                continue
            procs.append({"pid": pid, "role": role(pid, depth, 0), **figures})
            positions.update(input_positions(pid, self.inputs))
            temporary += temporary_fds(pid)
        read = self.read_bytes(positions)
        tmp_files, tmp_bytes = folder_figures(self.tmpdir)
        out_files, out_bytes = folder_figures(self.out)
        s = {"t": round(time.monotonic() - self.t0, 1), "records": round(self.records * read / self.total_bytes),
             "procs": procs, "tmpdir_files": tmp_files, "tmpdir_bytes": tmp_bytes,
             "temporary_fds": temporary,
             "out_files": out_files, "out_mb": round(out_bytes / 1e6, 1), "load": loadavg()[0]}
        self.samples.append(s)
        return s


def line(s: dict, previous: dict | None) -> str:
    rate = ""
    if previous and s["t"] > previous["t"]:
        rate = f"{(s['records'] - previous['records']) / (s['t'] - previous['t']):6.0f}/s"
    procs = " ".join(f"{p['role'][0]}{p['pid'] % 1000}:{p['rss_mb']:.0f}/{p['pss_mb']:.0f}MB,{p['fds']}fd,"
                     f"{p['threads']}t" for p in s["procs"])
    return (f"{s['t']:7.0f}s {s['records']:8d} rec {rate} | {procs} | tmp {s['tmpdir_files']} files, "
            f"{s['temporary_fds']} fds out {s['out_files']} files {s['out_mb']} MB load {s['load']}")


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of y over x."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return None if den == 0 else sum((x - mx) * (y - my) for x, y in points) / den


def summary(samples: list[dict]) -> dict:
    """Per role: the first sample's and peak RSS/PSS/fds/threads, and each one's slope per 100,000 records over
    the second half of the run (a process counted by role: the largest of a role at each sample)."""
    out = {}
    for which in ("main", "worker", "child"):
        series = []
        for s in samples:
            if not s["records"]:  # (starting: the run's process before its imports)
                continue
            procs = [p for p in s["procs"] if p["role"] == which]
            if procs:
                series.append((s["records"], {k: max(p[k] for p in procs) for k in FIGURES}))
        if not series:
            continue
        late = series[len(series) // 2:]
        out[which] = {k: {"first": series[0][1][k], "peak": max(f[k] for _, f in series),
                          "last": series[-1][1][k],
                          "slope_per_100k": None if (sl := slope([(r, f[k]) for r, f in late])) is None
                          else round(sl * 100_000, 2)}
                      for k in FIGURES}
    rates = [(b["records"] - a["records"]) / (b["t"] - a["t"]) for a, b in zip(samples, samples[1:]) if b["t"] > a["t"]]
    quarter = max(1, len(rates) // 4)
    out["pages_per_s"] = {"first_quarter": round(sum(rates[:quarter]) / quarter, 1) if rates else None,
                          "last_quarter": round(sum(rates[-quarter:]) / quarter, 1) if rates else None}
    out["tmpdir_files_peak"] = max((s["tmpdir_files"] for s in samples), default=0)
    out["temporary_fds_peak"] = max((s["temporary_fds"] for s in samples), default=0)
    out["out_files_last"] = samples[-1]["out_files"] if samples else 0
    return out


def watch(cmd: list[str], env: dict, sampler: Sampler, every: float, log, kill_at: float | None = None) -> dict:
    proc = subprocess.Popen(["nice", "-n", "10", *cmd], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    # nice execs the command: proc.pid is the command's own process.
    stdout_file = sampler.out.parent / f"{sampler.out.name}.stdout"
    pump = subprocess.Popen(["cat"], stdin=proc.stdout, stdout=open(stdout_file, "a"))
    previous, killed = None, False
    while proc.poll() is None:
        s = sampler.sample(proc.pid)
        print(line(s, previous), file=log, flush=True)
        previous = s
        if kill_at is not None and s["records"] >= kill_at * sampler.records:
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(every)
    proc.wait()
    pump.wait()
    return {"pid": proc.pid, "exit": proc.returncode, "killed": killed,
            "seconds": round(time.monotonic() - sampler.t0, 1), "stdout": stdout_file.read_text()[-3000:]}


def leftovers(session: int, out: Path, tmpdir: Path) -> dict:
    """Processes of the killed run's session still alive, and the files it left half-written and in its TMPDIR."""
    alive = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getsid(int(name)) == session:
                    alive.append((int(name), command_line(int(name))[:120]))
            except OSError:
                pass
    parts = sorted(str(p.relative_to(out)) for p in out.rglob(".*.part"))
    return {"alive": alive, "part_files": parts, "tmpdir_files": folder_figures(tmpdir)[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--kill-at", type=float, default=None, help="SIGKILL the run at this share read, then resume")
    ap.add_argument("--clean", action="store_true", help="also `plexity clean` the first WARC file")
    ap.add_argument("--clean-only", action="store_true", help="only `plexity clean` the first WARC file")
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a cache folder, emptied first)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.records, args.files, args.every = 4_000, 2, 1.0

    t = time.monotonic()
    warcs = build_input(args.records, args.files)
    print(f"input: {warcs} ({args.records} records, built/checked in {time.monotonic() - t:.0f} s)", flush=True)
    work = args.out or CACHE / "soak" / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tmpdir = work / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    inputs = {str(p): p.stat().st_size for p in sorted(warcs.glob("*.warc.gz"))}
    out = work / "run"
    cmd = [str(PLEXITY), "run", str(warcs), "--output-dir", str(out), "--executor", "local",
           "--workers", str(args.workers)]
    report: dict = {"command": " ".join(["plexity", *cmd[1:]]), "records": args.records, "files": args.files}
    args.clean = args.clean or args.clean_only
    sampler = Sampler(inputs, args.records, out, tmpdir)
    if args.clean_only:
        result = {"killed": False, "exit": 0, "stdout": "WARC records read (not run)"}
    else:
        result = watch(cmd, env, sampler, args.every, sys.stdout, args.kill_at)
        report["run"] = {**result, **summary(sampler.samples)}
    if result["killed"]:
        time.sleep(3)
        report["after_kill"] = leftovers(result["pid"], out, tmpdir)
        print("after SIGKILL:", json.dumps(report["after_kill"]), flush=True)
        resumed = Sampler(inputs, args.records, out, tmpdir)
        result = watch(cmd, env, resumed, args.every, sys.stdout)
        report["resumed"] = {**result, **summary(resumed.samples)}
    if "WARC records read" not in result["stdout"] or result["exit"] != 0:
        print(result["stdout"], flush=True)
    if args.clean:
        first = next(iter(inputs))
        clean_out = work / "clean"
        sampler = Sampler({first: inputs[first]}, args.records // args.files, clean_out, tmpdir)
        ccmd = [str(PLEXITY), "clean", first, "--output-dir", str(clean_out), "--quiet"]
        result = watch(ccmd, env, sampler, args.every, sys.stdout)
        report["clean"] = {"command": " ".join(["plexity", *ccmd[1:]]), **result, **summary(sampler.samples)}
    for key in ("run", "resumed", "clean"):
        if key in report:
            print(key, json.dumps({k: v for k, v in report[key].items() if k != "stdout"}), flush=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
