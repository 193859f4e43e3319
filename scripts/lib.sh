# Shared by scripts/setup.sh and scripts/ci/*.sh (source it).

# apt_install PKG...: install the Debian packages that are missing (apt-get update once per set-up: the
# file $PLEXITY_APT_UPDATED, which scripts/setup.sh makes for its run, says it was; a fixed name in /tmp was
# left by another day's or another user's run, and apt-get update then never ran again).  As a user who is
# not root: with `sudo -n` where sudo asks no password, else one line naming the command (apt_as_root).
apt_install() {
  local missing=()
  read -r -a missing <<<"$(missing_packages "$@")"
  ((${#missing[@]})) || return 0
  local as_root
  as_root="$(apt_as_root "${missing[@]}")" || return
  echo "setup: ${as_root:+$as_root }apt-get install ${missing[*]}"
  if [[ -z "${PLEXITY_APT_UPDATED:-}" || ! -e "${PLEXITY_APT_UPDATED:-}" ]]; then
    $as_root apt-get update -qq || return
    if [[ -n "${PLEXITY_APT_UPDATED:-}" ]]; then touch "$PLEXITY_APT_UPDATED"; fi
  fi
  # Packages that try to start services without systemd are refused that harmlessly.
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    --no-install-recommends "${missing[@]}" >/dev/null
}

# apt_as_root PKG...: how this user runs apt-get to install PKG: as root, as it is (prints nothing); else with
# `sudo -n` (prints "sudo -n") where sudo works without a password (a password prompt inside the set-up's logged
# steps would wait unseen); else says, in one line on stderr, the command to run (or to ask an administrator to
# run) and returns 1: apt-get's own "Permission denied ... are you root?" came after a "failed" step's log.
apt_as_root() {
  ((EUID == 0)) && return 0
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "sudo -n"
    return 0
  fi
  echo "setup: not root: these system packages are missing and only root can install them: run" \
       "\`sudo apt-get update && sudo apt-get install -y --no-install-recommends $*\`" \
       "(or ask your administrator to), then this command again" >&2
  return 1
}

# copy_checkout REPO DEST: the tracked files of REPO (with uncommitted edits), no build products,
# as a user's fresh `git clone` has them.  A checkout without git (a tarball, or no git
# installed) is copied whole, less what .gitignore names as build products and outputs.
copy_checkout() {
  rm -rf "$2" && mkdir -p "$2"
  if command -v git >/dev/null 2>&1 && git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$1" ls-files -z --cached --others --exclude-standard \
      | tar -C "$1" --null -T - -cf - 2>/dev/null | tar -C "$2" -xf -
  else
    tar -C "$1" --exclude=.git --exclude=.venv --exclude=__pycache__ --exclude='*.egg-info' --exclude=build \
      --exclude=dist --exclude=.pytest_cache --exclude='plexity_plugins/runtime/_native*.so' --exclude=site \
      --exclude=./cleaned --exclude=./cleaned-local --exclude=./out -cf - . | tar -C "$2" -xf -
  fi
}

# venv_fingerprint PYTHON: what a .venv is set up from, from the checkout's root (the Python, pyproject.toml,
# setup.py, native/): scripts/setup.sh reinstalls the Python packages when it is not the one .venv records.
venv_fingerprint() {
  { "$1" --version 2>&1; cat pyproject.toml setup.py; find native -type f -print0 | sort -z | xargs -0 cat; } \
    | sha256sum | cut -d' ' -f1
}

# kenlm_first PY LOG: on Python 3.13 and later, kenlm's module into PY's environment by scripts/kenlm_module.py
# (kenlm's sdist does not compile there as it is), as docs/install.md tells a user to before `pip install`.
kenlm_first() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 13))' || return 0
  echo "env: kenlm first: $1 scripts/kenlm_module.py"
  "$1" "$(dirname "${BASH_SOURCE[0]}")/kenlm_module.py" >"$2" 2>&1 \
    || { cat "$2" >&2; echo "env: kenlm failed" >&2; return 1; }
}

# missing_packages PKG...: the Debian packages of the list that are not installed, neither themselves nor as what
# an installed package provides: libmagic1 is libmagic1t64 since the 64-bit time_t move (Debian forky, Ubuntu
# 24.04), which `dpkg -s libmagic1` does not know: it was said missing, to a user who is not root for ever.
missing_packages() {
  local pkg provided
  provided=" $(dpkg-query -W -f '${db:Status-Abbrev} ${Provides}\n' 2>/dev/null \
    | sed -n 's/^ii *//p' | sed 's/([^)]*)//g; s/,/ /g' | tr -s ' \n' '  ') "
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || [[ "$provided" == *" $pkg "* ]] || printf '%s ' "$pkg"
  done
}

# new_venv PYTHON: .venv from PYTHON, then the latest pip.  Says which pip it has ("venv: ..."
# lines, which `step` shows): when the index (PyPI) cannot be reached, pip's upgrade still exits 0
# ("Requirement already satisfied") and venv's own pip (Debian 12: 23.0.1) stays; that is said plainly.
new_venv() {
  "$1" -m venv .venv || return
  local before after
  before="$(.venv/bin/python -m pip --version | cut -d' ' -f2)"
  .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off --upgrade pip || return
  after="$(.venv/bin/python -m pip --version | cut -d' ' -f2)"
  if [[ "$after" != "$before" ]]; then
    echo "venv: pip $before -> $after"
  elif .venv/bin/python -m pip index versions pip >/dev/null 2>&1; then
    echo "venv: pip $after, the latest"
  else
    echo "venv: kept pip $after (the one venv installs), not the latest: PyPI could not be reached"
  fi
}

# took SECONDS: "42 s", "3 min 05 s".
took() {
  if (($1 < 60)); then printf '%d s' "$1"; else printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); fi
}

# step LABEL COMMAND...: run COMMAND, its output into a log; say what it does, then how long it
# took.  While it runs, a line a minute ($SETUP_NOTE_EVERY seconds) with the last thing it logged (pip: the package it is
# at), so that a long install is never silent; its lines starting "ci/" (what a hook installed),
# "KenLM tools ", "venv: " (which pip .venv has) or "kenlm: " saying its C++ is generated again are
# shown after it; when it fails, the log's end is shown and set-up stops.
step() {
  local label="$1"
  shift
  local log started last_note pid status=0
  log="$(mktemp)"
  started=$SECONDS
  last_note=$SECONDS
  echo "setup: $label ..."
  "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if ((SECONDS - last_note >= ${SETUP_NOTE_EVERY:-60})); then
      last_note=$SECONDS
      local doing
      doing="$(grep -E '^ *(Collecting|Downloading|Building|Installing|Running|Created|Fetching|\[ *[0-9]+%\]|setup:|ci/)' "$log" \
        | tail -1 | sed -E 's/^ +//' | cut -c1-100)"
      echo "setup:   ... $(took $((SECONDS - started)))${doing:+ (now: $doing)}"
    fi
  done
  wait "$pid" || status=$?
  if ((status != 0)); then
    tail -40 "$log" >&2
    echo "setup: failed: $label (exit $status; the last lines of its output are above; full log: $log)" >&2
    exit 1
  fi
  grep -E "^(ci/|KenLM tools |venv: |kenlm: .* again)" "$log" | sed 's/^/setup:   /' || true
  rm -f "$log"
  echo "setup:   ... done in $(took $((SECONDS - started)))"
}
