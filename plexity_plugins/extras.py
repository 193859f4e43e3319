"""Optional dependencies: each framework or tool is an extra of the package.

    pip install plexity_plugins                # the scorer and `plexity clean`
    pip install "plexity_plugins[datatrove]"   # datatrove steps, `plexity run`
    pip install "plexity_plugins[scrapy]"      # the Scrapy pipeline and add-on
    pip install "plexity_plugins[web]"         # `plexity serve`
    pip install "plexity_plugins[report]"      # `plexity report`'s histogram PNG
    pip install "plexity_plugins[all]"         # everything

A front end whose extra is missing stops with one line naming the extra to install
(`MissingExtraError`, an ImportError), never with a traceback from deep inside an import.
"""

from __future__ import annotations

import importlib.util

# extra -> the top-level modules it brings
EXTRAS = {
    "datatrove": ("datatrove", "orjson"),
    "scrapy": ("scrapy", "itemadapter"),
    "web": ("starlette", "uvicorn"),
    "report": ("matplotlib",),
}


class MissingExtraError(ImportError):
    """A part of plexity_plugins was used whose optional dependencies are not installed."""


def require_extra(extra: str, what: str) -> None:
    """Raise MissingExtraError, naming `extra`, unless its modules can be imported."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(f"{what} needs {', '.join(missing)}, not installed: "
                                f"pip install \"plexity_plugins[{extra}]\"")
