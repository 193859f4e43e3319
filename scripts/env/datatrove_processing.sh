#!/usr/bin/env bash
# A datatrove user's environment: `pip install "datatrove[processing]" plexity_plugins[datatrove]`
# in a new virtual environment (datatrove's `processing` extra pins trafilatura < 1.12): datatrove's
# own WarcReader works there (our extra brings its faust-cchardet and python-magic), and
# `plexity run --executor ray` says in one line that Ray is missing; then datatrove's `io` extra
# too, and the datatrove, executor and sample-WARC tests and a `plexity run` of the sample WARC in it.
#
#   bash scripts/env/datatrove_processing.sh [WORK_DIR]
#   DATATROVE_VERSION="==0.6.0" bash scripts/env/datatrove_processing.sh [WORK_DIR]
#   BUILT_SOURCE=DIR bash scripts/env/datatrove_processing.sh [WORK_DIR]
#
# DATATROVE_VERSION is a version specifier for datatrove (default: none, the newest);
# tests/test_environments.py gives the oldest version pyproject.toml allows.
# BUILT_SOURCE is a copy of the checkout that pip has installed from before (stock_pip.sh's
# WORK_DIR/src): a copy of it is installed instead of a fresh one, and pip reuses the extension it
# compiled there (build/, up to date) rather than compiling it again; default: a fresh copy.
# Prints "trafilatura X.Y.Z", "datatrove X.Y.Z" and the documents written; exits non-zero on any failure.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$work"

source "$repo/scripts/lib.sh"
if [[ -n "${BUILT_SOURCE:-}" ]]; then
  if [[ ! -d "$BUILT_SOURCE/build" ]]; then
    echo "env: BUILT_SOURCE $BUILT_SOURCE has no build/: pip has not built it" >&2; exit 2
  fi
  rm -rf "$work/src" && cp -a "$BUILT_SOURCE" "$work/src"  # (-a: the build's times say it is up to date)
else
  copy_checkout "$repo" "$work/src"
fi
"$PYTHON" -m venv "$work/venv"
py="$work/venv/bin/python"
log="$work/pip.log"
DATATROVE_VERSION="${DATATROVE_VERSION:-}"
kenlm_first "$py" "$log"
# (--no-compile: pip's byte-compiling of every module it installs, most never imported here, was half of
# the installs' time, 101 -> 50 s for datatrove[processing,io]; Python compiles what is imported)
echo "env: pip install \"datatrove[processing]$DATATROVE_VERSION\" \"plexity_plugins[datatrove]\" into $work/venv"
if ! PLEXITY_REQUIRE_NATIVE=1 "$py" -m pip install -q --no-compile --disable-pip-version-check \
      "datatrove[processing]$DATATROVE_VERSION" "$work/src[datatrove]" "pytest>=8" "pytest-timeout>=2.4" "psutil>=5.9" \
      >"$log" 2>&1; then
  cat "$log" >&2; echo "env: pip install failed" >&2; exit 1
fi
# datatrove's own WarcReader, beside our steps: its imports (cchardet, magic) come with our extra
"$py" - "$repo/examples" <<'PY'
import sys
from datatrove.pipeline.readers import WarcReader
docs = list(WarcReader(sys.argv[1], glob_pattern="sample.warc.gz")())
print(f"datatrove WarcReader: {len(docs)} documents")
assert len(docs) == 12, len(docs)
PY
# no Ray here: one line naming what to install, exit 2, nothing written
status=0
out="$("$work/venv/bin/plexity" run "$repo/examples/sample.warc.gz" --output-dir "$work/ray-run" --executor ray 2>&1)" \
  || status=$?
if ((status != 2)) || (($(wc -l <<<"$out") != 1)) || ! grep -qF -e "-m pip install '$work/src[ray]'" <<<"$out" \
   || [[ -e "$work/ray-run" ]]; then
  echo "env: plexity run --executor ray without Ray: exit $status, said:" >&2; echo "$out" >&2; exit 1
fi
echo "without Ray: $out"
echo "env: pip install \"datatrove[processing,io]$DATATROVE_VERSION\" too"
if ! "$py" -m pip install -q --no-compile --disable-pip-version-check "datatrove[processing,io]$DATATROVE_VERSION" \
    >"$log" 2>&1; then
  cat "$log" >&2; echo "env: pip install failed" >&2; exit 1
fi
"$py" -c "import importlib.metadata as m; print('trafilatura', m.version('trafilatura')); print('datatrove', m.version('datatrove'))"
if "$py" -c "import scrapy" 2>/dev/null; then
  echo "env: scrapy is installed in a datatrove-only environment" >&2; exit 1
fi

# The tests run against the installed package: pytest (not `python -m pytest`) from the repo
# root does not put the source tree on sys.path.  Left out: what runs no datatrove code, so is the
# same with any datatrove: Scrapy's, and a run killed or interrupted whole (our own process handling,
# _run_in_processes; its re-run's resume is the completion markers, which the killed-worker and
# resume tests prove here).  Without pytest-xdist here, pyproject.toml's `-n auto` is left out.
cd "$repo"
"$work/venv/bin/pytest" -q -p no:cacheprovider -o "addopts=-ra --strict-markers" tests/test_datatrove.py tests/test_sample_warc.py \
  tests/test_extract.py tests/test_run_faults.py tests/test_full_disk.py tests/test_lifetime.py \
  -m "not slurm" -k "not scrapy and not test_killing_the_run_kills_its_workers and not test_ctrl_c_stops_the_run"

rm -rf "$work/run"
"$work/venv/bin/plexity" run examples/sample.warc.gz --output-dir "$work/run" --tasks 1 2>"$work/run.err" \
  || { cat "$work/run.err" >&2; exit 1; }
if grep -E "^(ERROR|Traceback)|\bERROR\b.*trafilatura" "$work/run.err" >&2; then
  echo "env: plexity run printed errors (above)" >&2; exit 1
fi
"$py" - "$work/run" <<'PY'
import gzip, json, sys
from pathlib import Path
out = Path(sys.argv[1])
docs = [json.loads(line) for f in sorted((out / "documents").glob("*.jsonl.gz")) for line in gzip.open(f, "rt")]
excluded = [json.loads(line) for f in sorted((out / "excluded").glob("*.jsonl.gz")) for line in gzip.open(f, "rt")]
print(f"plexity run: {len(docs)} documents written, {len(excluded)} excluded")
assert len(docs) + len(excluded) == 12, "the sample WARC has 12 HTML pages"
assert len(docs) >= 10 and all(d["text"].strip() for d in docs)
PY
echo "env: datatrove[processing,io] environment OK"
