"""`plexity clean` over many small text files: what a file costs beyond its cleaning.

    .venv/bin/python bench/clean_files.py [--files 1086] [--rounds 3] [--dev-dir DIR]

Input (built once under ~/.cache/plexity_plugins/bench/small-files/, never in the repo): the
English ground-truth article bodies of ../shared/bench/articles-dev, four paragraphs per file,
`--files` .txt files of about 850 bytes.  Each round, alternating, in fresh processes:

  plexity clean   `plexity clean DIR -o OUT --extractor none --quiet`, wall clock of the command
                  (start-up, the language identifier, reading, cleaning, writing, stats);
  copy floor      a Python process that reads every file and writes it to a new directory
                  (the file system's share: creating a thousand files is not free);
  cleaning floor  `PerplexityScorer().clean(text)` on the same texts in one process, after a
                  warm-up (the model's and the language identifier's loading not counted);
  start-up        `plexity clean` on one file.

The best of `--rounds` counts for each.  Overhead per file = (plexity clean - start-up - copy
floor - cleaning floor) / files.  The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from throughput import CACHE, DEV_DIR  # noqa: E402

PLEXITY = Path(sys.executable).parent / "plexity"

COPY = """
import sys
from pathlib import Path
src, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir()
for p in sorted(src.iterdir()):
    (out / (p.name + ".txt")).write_bytes(p.read_bytes())
"""

CLEAN_FLOOR = """
import sys, time
from pathlib import Path
from plexity_plugins import PerplexityScorer
texts = [p.read_text() for p in sorted(Path(sys.argv[1]).iterdir())]
scorer = PerplexityScorer()
scorer.clean("Warm up the model and the language identifier with an English sentence, please.")
scorer.clean("Der Hund läuft über die Straße und der Mann sieht ihm lange nach, bis er verschwindet.")
t0 = time.perf_counter()
for text in texts:
    scorer.clean(text)
print(time.perf_counter() - t0)
"""


def build_files(dev_dir: Path, files: int) -> Path:
    out = CACHE / "small-files" / f"articles-{files}"
    if (out / "DONE").exists():
        return out / "files"
    shutil.rmtree(out, ignore_errors=True)
    (out / "files").mkdir(parents=True)
    truth = json.loads((dev_dir / "ground-truth.json").read_text())
    paragraphs = [p for key, page in sorted(truth.items()) if page.get("english")
                  for p in page["articleBody"].split("\n") if p.strip()]
    start = 0
    for n in range(files):
        (out / "files" / f"doc{n:05d}.txt").write_text("\n".join(paragraphs[start:start + 4]) + "\n")
        start = (start + 4) % len(paragraphs)
    (out / "DONE").write_text(f"{files} files\n")
    return out / "files"


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1086)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dev-dir", type=Path, default=DEV_DIR)
    args = parser.parse_args()

    src = build_files(args.dev_dir, args.files)
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = work / "one"
        one.mkdir()
        shutil.copy(sorted(src.iterdir())[0], one)
        for r in range(args.rounds):
            for name in ("plexity clean", "copy floor", "cleaning floor", "start-up"):
                out = work / f"out-{r}-{name.replace(' ', '-')}"
                if name == "plexity clean":
                    s, _ = timed([str(PLEXITY), "clean", str(src), "-o", str(out), "--extractor", "none", "--quiet"])
                elif name == "copy floor":
                    s, _ = timed([sys.executable, "-c", COPY, str(src), str(out)])
                elif name == "cleaning floor":
                    _, stdout = timed([sys.executable, "-c", CLEAN_FLOOR, str(src)])
                    s = float(stdout.strip().splitlines()[-1])
                else:
                    s, _ = timed([str(PLEXITY), "clean", str(one), "-o", str(out), "--extractor", "none", "--quiet"])
                best[name] = min(best.get(name, s), s)
                print(f"round {r + 1}: {name}: {s:.3f} s")
    overhead = best["plexity clean"] - best["start-up"] - best["copy floor"] - best["cleaning floor"]
    per_file_ms = 1000 * overhead / args.files
    print(f"{args.files} files: plexity clean {best['plexity clean']:.2f} s = start-up {best['start-up']:.2f} + "
          f"copy floor {best['copy floor']:.2f} + cleaning floor {best['cleaning floor']:.2f} + "
          f"overhead {overhead:.2f} s ({per_file_ms:.3f} ms per file)")
    print(json.dumps({"files": args.files, "best_seconds": {k: round(v, 3) for k, v in best.items()},
                      "overhead_seconds": round(overhead, 3), "overhead_ms_per_file": round(per_file_ms, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
