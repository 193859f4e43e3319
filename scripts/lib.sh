# Shared by scripts/setup.sh and scripts/ci/*.sh (source it).

# apt_install PKG...: install the Debian packages that are missing (apt-get update once).
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  echo "setup: apt-get install ${missing[*]}"
  if [[ ! -f /tmp/.plexity-apt-updated ]]; then
    apt-get update -qq && touch /tmp/.plexity-apt-updated
  fi
  # Packages that try to start services without systemd are refused that harmlessly.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    --no-install-recommends "${missing[@]}" >/dev/null
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
