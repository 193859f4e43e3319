#!/usr/bin/env bash
# Fuzz where crawled bytes enter (plexity_plugins/io/: WARC and ARC files, gzip members, HTTP codings, charsets,
# sniffing, document files), coverage-guided by atheris.  Not run in CI: a developer's probe.  No compiler needed:
# atheris is pip-installed here into a throwaway venv that sees the project's packages (never the product's).
#
#   bash scripts/fuzz_input.sh [SECONDS] [PYTHON]
#
# Runs scripts/fuzz_input.py for SECONDS (default 600) niced, one process (-workers=1), inputs up to 64 KB,
# -rss_limit_mb=2048, with scripts/fuzz_input.dict, seeded with tests/warc_corpus.py's files, an ARC file,
# examples/sample.warc.gz, HTTP bodies and pages, and tests/fuzz_corpus/input/.  A finding (an unnamed exception,
# counts that do not add up, more than a second of CPU for an input: `Hang`) stops it with the input written to
# $PLEXITY_FUZZ_DIR/crash-*; new inputs that reach new code go to $PLEXITY_FUZZ_DIR/corpus (copy a finding's input
# to tests/fuzz_corpus/input/: tests/test_input_fuzz42.py replays it).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_TO_RUN="${1:-600}"
PYTHON="${2:-${PYTHON:-python3}}"
OUT="${PLEXITY_FUZZ_DIR:-/tmp/plexity-fuzz-input}"
mkdir -p "$OUT/corpus"

if [ ! -x "$OUT/venv/bin/python" ]; then
  "$PYTHON" -m venv --system-site-packages "$OUT/venv"
  "$OUT/venv/bin/pip" install -q atheris
fi
VPY="$OUT/venv/bin/python"
# (the project's own packages: a venv made with --system-site-packages sees the base Python's, not its venv's)
export PYTHONPATH="$ROOT:$("$PYTHON" -c 'import site; print(":".join(site.getsitepackages()))')"
cd "$OUT"
rm -rf "$OUT/seeds"
"$VPY" "$ROOT/scripts/fuzz_input.py" --write-seeds "$OUT/seeds"
exec nice -n 10 "$VPY" "$ROOT/scripts/fuzz_input.py" -workers=1 -max_total_time="$SECONDS_TO_RUN" -max_len=65536 \
  -rss_limit_mb=2048 -timeout=20 -dict="$ROOT/scripts/fuzz_input.dict" -print_final_stats=1 \
  -artifact_prefix="$OUT/" "$OUT/corpus" "$OUT/seeds" "$ROOT/tests/fuzz_corpus/input"
