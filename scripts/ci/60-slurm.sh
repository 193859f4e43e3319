#!/usr/bin/env bash
# A single-node Slurm (slurmctld + slurmd + munged) for the datatrove tests
# (tests/test_datatrove_slurm.py): Debian's packages, then scripts/slurm.sh start.
# Idempotent; fast when installed and running.  The daemons detach and keep running after
# the tests (README: `bash scripts/slurm.sh stop` stops them).
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib.sh
apt_install slurmctld slurmd slurm-client munge
bash scripts/slurm.sh start
