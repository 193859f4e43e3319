"""Where the package keeps what it derives or installs on this machine."""

from __future__ import annotations

from pathlib import Path

from ..errors import NoHomeFolder, no_home_folder_message


def user_cache_dir(needed_for: str = "installed models", variable: str = "PLEXITY_MODEL_DIR") -> Path:
    """The user's cache directory for this package (``~/.cache/plexity_plugins`` on Linux); `NoHomeFolder`, naming
    `variable` (what sets the folder `needed_for` instead), where there is none: HOME unset and no /etc/passwd entry
    for this UID (a container's arbitrary UID), where platformdirs raised a RuntimeError seen as a traceback."""
    import platformdirs

    try:
        return Path(platformdirs.user_cache_dir("plexity_plugins"))
    except (RuntimeError, KeyError) as exc:  # (KeyError: Path.home()'s pwd lookup, in older platformdirs)
        raise NoHomeFolder(no_home_folder_message(needed_for, variable), exc) from exc
