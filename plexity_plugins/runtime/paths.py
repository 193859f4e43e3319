"""Where the package keeps what it derives or installs on this machine."""

from __future__ import annotations

from pathlib import Path


def user_cache_dir() -> Path:
    """The user's cache directory for this package (``~/.cache/plexity_plugins`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("plexity_plugins"))
