#!/usr/bin/env bash
# Build KenLM's lmplz and build_binary from the kenlm sdist on PyPI (the PyPI package ships
# only the query module). Reuses a previous build when both binaries exist in BIN_DIR; for another
# BIN_DIR, copies the build of the default folder when it is of the same kenlm version and machine
# (its BUILD file says so), instead of compiling again.
#
#   scripts/build_kenlm.sh [BIN_DIR]
#
# BIN_DIR defaults to $PLEXITY_KENLM_BIN, else ~/.cache/plexity_plugins/kenlm/bin (where
# `plexity train` looks). Needs g++, cmake, Boost (program_options, system, thread, test) and
# the zlib, bz2 and lzma headers, and a Python with pip ($PYTHON) to fetch the sdist:
# `bash scripts/setup.sh --kenlm-tools` installs them on Debian and runs this script.
set -euo pipefail

KENLM_VERSION="${KENLM_VERSION:-0.3.0}"
DEFAULT_DIR="${XDG_CACHE_HOME:-${HOME:-~}/.cache}/plexity_plugins/kenlm/bin"  # (no HOME: the user's own)
BIN_DIR="${1:-${PLEXITY_KENLM_BIN:-$DEFAULT_DIR}}"
PYTHON="${PYTHON:-python3}"
# What a build is: the tools of another kenlm version or machine are not copied.
BUILD="kenlm $KENLM_VERSION, KENLM_MAX_ORDER=6, $OSTYPE $HOSTTYPE"

built() { [[ -x "$1/lmplz" && -x "$1/build_binary" ]]; }
runs() { local status=0; "$1" --help >/dev/null 2>&1 || status=$?; ((status < 126)); }  # (126, 127: no exec, no lib)
if built "$BIN_DIR"; then
  echo "KenLM tools already built in $BIN_DIR"
  exit 0
fi
# (BIN_DIR is not DEFAULT_DIR here: that one has no tools either)
if built "$DEFAULT_DIR" && [[ "$(cat "$DEFAULT_DIR/BUILD" 2>/dev/null)" == "$BUILD" ]] \
   && runs "$DEFAULT_DIR/lmplz" && runs "$DEFAULT_DIR/build_binary"; then
  mkdir -p "$BIN_DIR"
  install -m 0755 "$DEFAULT_DIR/lmplz" "$DEFAULT_DIR/build_binary" "$BIN_DIR/"
  echo "$BUILD" >"$BIN_DIR/BUILD"
  echo "KenLM tools installed in $BIN_DIR (copied from the same build in $DEFAULT_DIR)"
  exit 0
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
"$PYTHON" -m pip --version >/dev/null 2>&1 || missing+=("pip for $PYTHON")
if ((${#missing[@]})); then
  echo "build_kenlm: ${missing[*]} missing: run \`bash $(cd "$(dirname "$0")" && pwd)/setup.sh --kenlm-tools\`," \
       "which installs what the build needs and builds the tools" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "Fetching kenlm==$KENLM_VERSION sdist ..."
# --no-binary for kenlm only: its build requirements (cmake, setuptools) come as wheels.
"$PYTHON" -m pip download -q --no-deps --no-binary kenlm "kenlm==$KENLM_VERSION" -d "$work" 2>&1 \
  | grep -v -i '^warning' || true
tar -xzf "$work/kenlm-$KENLM_VERSION.tar.gz" -C "$work"
src="$work/kenlm-$KENLM_VERSION"

echo "Building lmplz and build_binary (about a minute) ..."
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER=6 >"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/build" --target lmplz build_binary -j "$(nproc)" >"$work/build.log" 2>&1 \
  || { tail -50 "$work/build.log"; exit 1; }

mkdir -p "$BIN_DIR"
install -m 0755 "$work/build/bin/lmplz" "$work/build/bin/build_binary" "$BIN_DIR/"
echo "$BUILD" >"$BIN_DIR/BUILD"
echo "KenLM tools installed in $BIN_DIR"
