#!/usr/bin/env bash
# Headless Chromium + chromedriver from Debian for the web demo's browser tests
# (tests/test_web_browser.py) and the README screenshots. Idempotent; fast when installed.
set -euo pipefail

cd "$(dirname "$0")/../.."
source scripts/lib.sh
apt_install chromium chromium-driver fonts-dejavu-core
# Both must come from the same Chromium build, or chromedriver refuses to drive it.
browser=$(/usr/bin/chromium --version 2>/dev/null | grep -oE '[0-9]+' | head -1)
driver=$(/usr/bin/chromedriver --version | grep -oE '[0-9]+' | head -1)
if [[ "$browser" != "$driver" ]]; then
  echo "ci/chromium: chromium $browser and chromedriver $driver differ: upgrading both" >&2
  as_root="$(apt_as_root chromium chromium-driver)" || exit 1
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver \
    >/dev/null
fi
echo "ci/chromium: $(/usr/bin/chromium --version 2>/dev/null), $(/usr/bin/chromedriver --version | cut -d' ' -f1-2)"
