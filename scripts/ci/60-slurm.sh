#!/usr/bin/env bash
# A single-node Slurm (slurmctld + slurmd + munged) for the datatrove tests
# (tests/test_datatrove_slurm.py): Debian's packages, then scripts/slurm.sh start.
# Idempotent; fast when installed and running.  The daemons detach and outlive this script.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
for pkg in slurmctld slurmd slurm-client munge; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "ci/slurm: apt-get install ${missing[*]}"
  if [[ ! -f /tmp/.plexity-apt-updated ]]; then
    apt-get update -qq && touch /tmp/.plexity-apt-updated
  fi
  # the packages try to start their services; without systemd that is refused harmlessly
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    --no-install-recommends "${missing[@]}" >/dev/null
fi
bash scripts/slurm.sh start
