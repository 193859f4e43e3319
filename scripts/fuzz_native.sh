#!/usr/bin/env bash
# Fuzz the compiled extension (plexity_plugins.runtime._native) under AddressSanitizer + UndefinedBehaviorSanitizer.
# Not run in CI: a developer's probe.  Needs clang and its sanitizer runtimes (Debian: apt-get install -y clang
# libclang-rt-14-dev) and atheris (pip-installed here into a throwaway venv that sees the project's packages).
#
#   bash scripts/fuzz_native.sh [SECONDS] [PYTHON] [PAGE_FOLDER ...]
#
# Builds a sanitized copy of the extension into $PLEXITY_FUZZ_DIR (default /tmp/plexity-fuzz; the normal .so in
# plexity_plugins/runtime/ is not touched), then runs scripts/fuzz_native.py for SECONDS (default 600) niced, one
# process, seeded with the tests' pages, tests/fuzz_corpus/ and the first 40 files of each PAGE_FOLDER.  A crash
# or sanitizer report stops it with the input written to $PLEXITY_FUZZ_DIR/crash-*; new inputs that reach new code
# go to $PLEXITY_FUZZ_DIR/corpus (copy a finding's minimised input to tests/fuzz_corpus/: the tests replay it).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_TO_RUN="${1:-600}"
PYTHON="${2:-${PYTHON:-python3}}"
shift $(($# < 2 ? $# : 2))
OUT="${PLEXITY_FUZZ_DIR:-/tmp/plexity-fuzz}"
mkdir -p "$OUT/corpus"

if [ ! -x "$OUT/venv/bin/python" ]; then
  "$PYTHON" -m venv --system-site-packages "$OUT/venv"
  "$OUT/venv/bin/pip" install -q atheris
fi
VPY="$OUT/venv/bin/python"

# The sanitized build (by the project's Python: its setuptools reads pyproject.toml): the package's Python files
# next to a sanitized _native (setup.py's sources and flags, plus the sanitizers and libFuzzer's coverage hooks;
# setup.py's -O3 stays, so findings are the shipped code's).  vptr and function checks are off: atheris' runtime
# lacks their handlers.  Alignment reports are recoverable so that fuzz_native.supp can pass KenLM's bit packing.
SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize=vptr,function -fno-sanitize-recover=undefined"
SAN="$SAN -fsanitize-recover=alignment -fno-omit-frame-pointer -g"
rm -rf "$OUT/lib/plexity_plugins"
mkdir -p "$OUT/lib"
cp -r "$ROOT/plexity_plugins" "$OUT/lib/"
find "$OUT/lib/plexity_plugins" \( -name '_native*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
(cd "$ROOT" && CC=clang CXX=clang++ LDSHARED="clang++ -shared" CFLAGS="$SAN" CXXFLAGS="$SAN" LDFLAGS="$SAN" \
  PLEXITY_REQUIRE_NATIVE=1 nice -n 10 "$PYTHON" setup.py -q build_ext --force --build-lib "$OUT/lib" \
  --build-temp "$OUT/tmp")

ATHERIS="$("$VPY" -c 'import atheris, os; print(os.path.dirname(os.path.dirname(atheris.__file__)))')"
export LD_PRELOAD="$ATHERIS/asan_with_fuzzer.so"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:handle_abort=1:symbolize=1"
# Every object from malloc, each to its own size: in pymalloc's pools (objects up to 512 bytes: most of the
# target's strs and bytes) a read past an object's end lands in its neighbour, which ASan does not see.
export PYTHONMALLOC=malloc
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$ROOT/scripts/fuzz_native.supp"
# (the project's own packages: a venv made with --system-site-packages sees the base Python's, not its venv's)
export PYTHONPATH="$OUT/lib:$("$PYTHON" -c 'import site; print(":".join(site.getsitepackages()))')"
cd "$OUT"
rm -rf "$OUT/seeds"
"$VPY" "$ROOT/scripts/fuzz_native.py" --write-seeds "$OUT/seeds" "$@"
SEEDS=("$OUT/corpus" "$OUT/seeds" "$ROOT/tests/fuzz_corpus")
exec nice -n 10 "$VPY" "$ROOT/scripts/fuzz_native.py" -max_total_time="$SECONDS_TO_RUN" -max_len=20000 \
  -rss_limit_mb=4096 -timeout=60 -artifact_prefix="$OUT/" "${SEEDS[@]}"
