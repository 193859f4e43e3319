#!/usr/bin/env bash
# What tests/test_environments.py needs to build users' environments: Debian's own Python
# with its venv module and headers (for `pip install .` with Debian's stock pip, which
# compiles kenlm and our extension). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
apt_install python3 python3-venv python3-dev
echo "ci/environments: $(/usr/bin/python3 --version), venv pip $(/usr/bin/python3 -c 'import ensurepip; print(ensurepip.version())')"
