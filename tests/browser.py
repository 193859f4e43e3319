"""Headless Chromium (Debian's chromium + chromedriver, installed by scripts/ci/50-chromium.sh)."""

from __future__ import annotations

from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def chromium(user_data_dir: Path, width: int = 1400, height: int = 1400) -> webdriver.Chrome:
    """Headless Chromium for a machine without outside network: nothing fetched in the background."""
    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), \
        "chromium and chromedriver are missing: run scripts/ci/50-chromium.sh"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", f"--user-data-dir={user_data_dir}",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
