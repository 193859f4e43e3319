#!/usr/bin/env bash
# Debian's Slurm packages (slurmctld, slurmd, slurm-client, munge) for the datatrove tests
# (tests/test_datatrove_slurm.py).  It starts nothing: the tests start a private single-node
# Slurm on free ports with scripts/slurm.sh (PLEXITY_SLURM_DIR) and stop it when they end.
# Idempotent; fast when installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib.sh
apt_install slurmctld slurmd slurm-client munge
echo "ci/slurm: $(/usr/sbin/slurmctld -V)"  # (/usr/sbin: not on the PATH of a user who is not root)
