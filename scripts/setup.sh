#!/usr/bin/env bash
# Set up plexity_plugins on a fresh Debian machine (from anywhere in the checkout; as root, or as a user who
# may run sudo without a password, when system packages are missing: else it names the command and stops).
#
#   bash scripts/setup.sh                # system packages, .venv, the package with every extra [all]
#   bash scripts/setup.sh --kenlm-tools  # + KenLM's lmplz and build_binary, which `plexity train`
#                                        #   runs (cmake and Boost from Debian, built from kenlm's sdist)
#   bash scripts/setup.sh --test         # + test dependencies, the KenLM tools and every service the
#                                        #   tests need (scripts/ci/*.sh)
#
# Each step says what it does and how long it took.  Idempotent: what is already there is
# reused (the Python packages when .venv was set up from the same pyproject.toml, setup.py and
# native/ sources: .venv/.plexity-setup records which).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

want_tests=0
want_kenlm_tools=0
for option in "$@"; do
  case "$option" in
    --test) want_tests=1 want_kenlm_tools=1 ;;
    --kenlm-tools) want_kenlm_tools=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option $option (options: --kenlm-tools, --test)" >&2; exit 2 ;;
  esac
done
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup: plexity_plugins needs Python 3.11 or later; $PYTHON is $("$PYTHON" --version 2>&1 || echo missing)" \
       "(set PYTHON=python3.11, or on Debian 12: apt-get install python3)" >&2
  exit 2
fi
extras=all
((want_tests)) && extras=test  # (test includes all)
setup_started=$SECONDS

# -- system packages ---------------------------------------------------------------
packages=()
if command -v apt-get >/dev/null 2>&1; then
  # A C++ compiler for kenlm's Python module (built from its sdist) and our extension.
  packages+=(g++ make zlib1g-dev)
  # libmagic: python-magic, which datatrove's own WarcReader needs (the [datatrove] extra).
  packages+=(libmagic1)
  # Debian's own python3 needs venv and headers; a pyenv/other Python brings its own.
  if [[ "$(command -v "$PYTHON")" == /usr/bin/* ]]; then
    packages+=(python3-venv python3-dev)
  fi
  if ((want_kenlm_tools)); then
    # KenLM's lmplz and build_binary (scripts/build_kenlm.sh).  Boost.System is not named: libboost-thread-dev
    # brings it on Debian 12 and 13, and from Boost 1.89 (Debian forky) it is headers only, in libboost-dev, and
    # libboost-system-dev is no more (apt-get: "Unable to locate package").
    packages+=(cmake libboost-program-options-dev libboost-thread-dev libboost-test-dev libbz2-dev liblzma-dev)
  fi
  if ((want_tests)); then
    # git: the environment tests copy the checkout by its tracked files (scripts/lib.sh);
    # curl: the docs' JSON API example, which the tests run as written.
    packages+=(git curl ca-certificates)
    # bzip2: tests/test_other_compressions.py runs the conversion plexity names for a .warc.bz2
    # (`bzcat f.warc.bz2 | gzip > f.warc.gz`) as written; a minbase Debian has no bzcat.
    packages+=(bzip2)
    # wget: tests/test_archiving_tools_probe47.py crawls a local site with it and reads its WARCs, as the docs say
    # a user's wget crawl is read (a minbase Debian has no wget)
    packages+=(wget)
    # perl (its Storable module): tests/test_first_day_probe59.py writes a pyplexity model file as pyplexity's are
    packages+=(perl)
    # and the ones the hooks install (their `apt_install` lines), so that a user who is not root hears of all of
    # them at once, before anything else is done
    packages+=($(sed -n 's/^apt_install //p' scripts/ci/*.sh))
  fi
  missing="$(missing_packages "${packages[@]}")"
  if [[ -n "$missing" ]]; then
    as_root="$(apt_as_root $missing)" || exit 1  # (not root, no sudo without a password: it said what to run)
    # apt-get update once for this run (apt_install), however many of the hooks install something
    apt_updated="$(mktemp -d)"
    trap 'rm -rf "$apt_updated"' EXIT
    export PLEXITY_APT_UPDATED="$apt_updated/updated"
    step "system packages: ${as_root:+$as_root }apt-get install ${missing% }" apt_install $missing
  else
    echo "setup: system packages: already installed"
  fi
fi

# -- Python environment -------------------------------------------------------------
# What .venv was set up from: reinstall when it changes (a new dependency, changed C++).
fingerprint="$(venv_fingerprint "$PYTHON")"
stamp=.venv/.plexity-setup  # "EXTRAS FINGERPRINT" of the last complete install
# the compiled extension, by the name setup.py gives it
native_module="$(sed -n 's/^ *"\(plexity_plugins[.a-z_]*_native\)",$/\1/p' setup.py | head -1)"
read -r installed_extras installed_fingerprint 2>/dev/null <"$stamp" || true
if [[ -x .venv/bin/python && "${installed_fingerprint:-}" == "$fingerprint" &&
      ( "${installed_extras:-}" == "$extras" || "${installed_extras:-}" == test ) ]] \
   && .venv/bin/python -c "import $native_module" 2>/dev/null; then
  echo "setup: Python packages: .venv is up to date (set up from these sources; rm $stamp to reinstall)"
else
  rm -f "$stamp"
  pip=(.venv/bin/python -m pip install --disable-pip-version-check --progress-bar off)
  if [[ ! -x .venv/bin/python ]]; then
    step "Python environment: $PYTHON -m venv .venv, then the latest pip" new_venv "$PYTHON"
  fi
  # kenlm's Python module comes as source only: pip compiles it (C++, a minute or two); on Python 3.13+ from
  # C++ that Cython 3 generates again (scripts/kenlm_module.py says why).
  step "compiling kenlm's Python module (pip, from its source; a minute or two)" \
    .venv/bin/python scripts/kenlm_module.py
  reqs="$(mktemp)"
  .venv/bin/python scripts/requirements.py "$extras" --except kenlm >"$reqs"
  step "Python packages: $(wc -l <"$reqs") requirements of .[$extras] and their dependencies (pip: datatrove, Scrapy, Ray ...)" \
    "${pip[@]}" -r "$reqs"
  rm -f "$reqs"
  # (no build isolation: the build's setuptools and wheel were installed above)
  step "compiling plexity_plugins' extension (C++: our scorer and KenLM's query code) and installing it" \
    env PLEXITY_REQUIRE_NATIVE=1 "${pip[@]}" --no-deps --no-build-isolation -e .
  .venv/bin/python -c "import plexity_plugins, $native_module, kenlm, blingfire" \
    || { echo "setup: the Python install failed (see pip's messages above)" >&2; exit 1; }
  echo "$extras $fingerprint" >"$stamp"
fi

# -- KenLM's tools, test services ----------------------------------------------------
if ((want_kenlm_tools)); then
  step "KenLM's lmplz and build_binary (cmake, from kenlm's source; about a minute)" \
    env PYTHON=.venv/bin/python bash scripts/build_kenlm.sh
fi
if ((want_tests)); then
  for hook in scripts/ci/*.sh; do
    [[ -e "$hook" ]] || continue
    step "for the tests: $hook" bash "$hook"
  done
fi
echo "setup: done in $(took $((SECONDS - setup_started)))"
