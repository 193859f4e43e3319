#!/usr/bin/env bash
# Run the README's set-up on a fresh Debian 13 (trixie, Python 3.13) root, as a stranger would: debootstrap a
# minbase root, `apt-get install python3 git` in it, copy this checkout in (its tracked files), then the README's
# first command (set-up + the sample WARC); with --test, its second too (set-up --test + the whole suite).
# As root on a Debian host; needs a few GB in ROOT_DIR and the network (Debian's mirror, PyPI).
# SUITE names another Debian suite: SUITE=forky (testing, Python 3.14), SUITE=bookworm (Debian 12, Python 3.11).
#
#   bash scripts/check_debian13.sh           # about 4 minutes on 2 cores, after debootstrap's ~30 s
#   bash scripts/check_debian13.sh --test    # + 9 min set-up and 17 min of tests, all passing (2 shared cores,
#                                            # 2026-12-05: 32 min in all)
#
# The root is made in $ROOT_DIR (default: a new folder under /tmp), unmounted and removed at the end
# (KEEP_ROOT=1 keeps it, unmounted). The host's own CA certificates (/usr/local/share/ca-certificates) are
# copied in, so that behind a TLS-inspecting proxy pip reaches PyPI as on the host. The root is bind-mounted onto
# itself, so that it is a mount point as a machine's or a container's root is (`unshare --mount`, which some tests
# run, refuses "cannot change root filesystem propagation" in a root that is not).
# PYTEST_ARGS (with --test) replaces the whole suite by those pytest arguments, e.g. to run some files again:
#
#   KEEP_ROOT=1 PYTEST_ARGS="tests/test_web_api.py tests/test_slurm_probe37.py" bash scripts/check_debian13.sh --test
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

test_too=0
case "${1:-}" in
  --test) test_too=1 ;;
  "") ;;
  *) echo "check_debian13: unknown option $1 (--test)" >&2; exit 2 ;;
esac
SUITE="${SUITE:-trixie}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
root="${ROOT_DIR:-$(mktemp -d /tmp/plexity-"$SUITE".XXXXXX)}"
mkdir -p "$root" && chmod 755 "$root"  # (mktemp's 0700: as "/", no user but root could enter it; munge's set-up failed)

unmount() {
  # (every mount under the root, deepest first: never a removal with /dev or /proc still bound in it; then the
  # root's bind mount onto itself; again for a few seconds while a process the tests started still holds one)
  local try
  for try in 1 2 3 4 5 6 7 8 9 10; do
    grep -q " $root[/ ]" /proc/mounts || return 0
    ((try == 1)) || sleep 1
    grep -o " $root/[^ ]*" /proc/mounts | sort -r | while read -r mnt; do umount -R "$mnt" 2>/dev/null || true; done
    if grep -q " $root " /proc/mounts; then umount -R "$root" 2>/dev/null || true; fi
  done
}
cleanup() {
  unmount
  if grep -q " $root[/ ]" /proc/mounts; then
    echo "check_debian13: $root still has mounts: not removed" >&2
  elif [[ "${KEEP_ROOT:-0}" != 1 ]]; then
    rm -rf "$root"
  fi
}
trap cleanup EXIT

command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
started=$SECONDS
# (a suite newer than the host's debootstrap, e.g. forky on Debian 12's: its script is sid's, as every suite's since 7)
script=()
[[ -e "/usr/share/debootstrap/scripts/$SUITE" ]] || script=(/usr/share/debootstrap/scripts/sid)
echo "check_debian13: debootstrap --variant=minbase $SUITE $root${script:+ (with the sid script)}"
debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" "${script[@]}" >"$root.debootstrap.log" 2>&1 \
  || { tail -20 "$root.debootstrap.log" >&2; exit 1; }
rm -f "$root.debootstrap.log"
mount --bind "$root" "$root" && mount --make-private "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"  # (--rbind: slurmd needs /sys/fs/cgroup)
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() {
  chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 bash -c "$1"
}
# A testing suite's Release is valid for a week: from a mirror (or a clock) that far apart, apt-get update refuses
# it as expired, which says nothing of our set-up: then the root's apt is told not to check, and the check says so.
if ! in_root "apt-get update -qq" 2>"$root.apt.log"; then
  grep -q "is expired" "$root.apt.log" || { cat "$root.apt.log" >&2; exit 1; }
  echo "check_debian13: $MIRROR's $SUITE Release has expired ($(date -u +%F) here): Acquire::Check-Valid-Until off"
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99check-valid-until"
  in_root "apt-get update -qq"
fi
rm -f "$root.apt.log"
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 git >/dev/null"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  in_root "update-ca-certificates >/dev/null 2>&1"
fi
system="$(in_root 'cat /etc/os-release' | sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p')"
echo "check_debian13: $system, $(in_root 'python3 --version')"
copy_checkout "$PWD" "$root/root/plexity_plugins"

echo "check_debian13: the README's first command"
command_started=$SECONDS
in_root "cd /root/plexity_plugins && bash scripts/setup.sh \
  && .venv/bin/plexity clean examples/sample.warc.gz --output-dir cleaned"
echo "check_debian13: the README's first command took $(took $((SECONDS - command_started)))"
if ((test_too)); then
  echo "check_debian13: the README's second command"
  command_started=$SECONDS
  tests="cd /root/plexity_plugins && bash scripts/setup.sh --test && .venv/bin/python -m pytest ${PYTEST_ARGS:-}"
  if ! in_root "$tests"; then
    echo "check_debian13: the README's second command failed on $SUITE (above), after" \
      "$(took $((SECONDS - command_started))) (all: $(took $((SECONDS - started))))" >&2
    exit 1
  fi
  echo "check_debian13: the README's second command took $(took $((SECONDS - command_started)))"
fi
echo "check_debian13: passed on $SUITE in $(took $((SECONDS - started)))"
