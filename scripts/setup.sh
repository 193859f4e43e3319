#!/usr/bin/env bash
# Set up plexity_plugins on a fresh Debian machine (run as root from the repo root).
#
#   bash scripts/setup.sh          # system packages, .venv, the package with every extra [all]
#   bash scripts/setup.sh --test   # + test dependencies, KenLM's lmplz/build_binary and
#                                  #   every service the tests need (scripts/ci/*.sh)
#
# Idempotent: what is already there is reused.
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1
PYTHON="${PYTHON:-python3}"

# -- system packages ---------------------------------------------------------------
source scripts/lib.sh

if command -v apt-get >/dev/null 2>&1; then
  # A C++ compiler for the kenlm wheel (built from its sdist by pip).
  apt_install g++ make zlib1g-dev
  # Debian's own python3 needs venv and headers; a pyenv/other Python brings its own.
  if [[ "$(command -v "$PYTHON")" == /usr/bin/* ]]; then
    apt_install python3-venv python3-dev
  fi
  if ((want_tests)); then
    # git: the environment tests copy the checkout by its tracked files (scripts/lib.sh);
    # curl: the docs' JSON API example, which the tests run as written.
    apt_install git curl ca-certificates
    # KenLM's lmplz and build_binary (scripts/build_kenlm.sh).
    apt_install cmake libboost-program-options-dev libboost-system-dev libboost-thread-dev \
      libboost-test-dev libbz2-dev liblzma-dev libmagic1
  fi
fi

# -- Python environment -------------------------------------------------------------
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
echo "setup: installing plexity_plugins and its dependencies into .venv (a few minutes the first time)"
# pip's and setuptools' chatter goes to a log, shown only when the install fails.
pip_log="$(mktemp)"
target=".[all]"
((want_tests)) && target=".[test]"  # (test includes all)
if ! { .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip &&
       PLEXITY_REQUIRE_NATIVE=1 .venv/bin/python -m pip install -q --disable-pip-version-check -e "$target"; } >"$pip_log" 2>&1; then
  cat "$pip_log" >&2
  echo "setup: pip install failed (output above)" >&2
  exit 1
fi
rm -f "$pip_log"
.venv/bin/python -c "import plexity_plugins, kenlm, blingfire" \
  || { echo "setup: the Python install failed (see pip's messages above)" >&2; exit 1; }

# -- test prerequisites ----------------------------------------------------------------
if ((want_tests)); then
  PYTHON=.venv/bin/python bash scripts/build_kenlm.sh
  for hook in scripts/ci/*.sh; do
    [[ -e "$hook" ]] || continue
    echo "setup: $hook"
    bash "$hook"
  done
fi
echo "setup: done"
