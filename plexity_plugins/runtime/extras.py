"""Optional dependencies: each framework or tool is an extra of the package.

    pip install plexity_plugins                # the scorer and `plexity clean`
    pip install "plexity_plugins[datatrove]"   # datatrove steps, `plexity run`
    pip install "plexity_plugins[scrapy]"      # the Scrapy pipeline and add-on
    pip install "plexity_plugins[web]"         # `plexity serve`
    pip install "plexity_plugins[report]"      # `plexity report`'s histogram PNG
    pip install "plexity_plugins[ccnet]"       # CCNet / edugp SentencePiece models
    pip install "plexity_plugins[ray]"         # `plexity run --executor ray` (with datatrove)
    pip install "plexity_plugins[remote]"      # http(s):// and s3:// inputs (hf:// comes with datatrove)
    pip install "plexity_plugins[all]"         # everything

A front end whose extra is missing stops with one line naming the extra to install
(`MissingExtraError`, an ImportError), never with a traceback from deep inside an import.
"""

from __future__ import annotations

import importlib.util
from ..errors import MissingExtraError

# extra -> the top-level modules it brings
EXTRAS = {
    "datatrove": ("datatrove", "orjson"),
    "scrapy": ("scrapy", "itemadapter"),
    "web": ("starlette", "uvicorn"),
    "report": ("matplotlib",),
    "ccnet": ("sentencepiece",),  # CCNet / edugp models (plexity_plugins.text.model_tokenizers)
    "ray": ("ray",),
    "remote": ("aiohttp", "s3fs"),  # fsspec's http(s) and s3 filesystems (see require_protocol)
}


def require_extra(extra: str, what: str) -> None:
    """Raise MissingExtraError, naming `extra`, unless its modules can be imported."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(f"{what} needs {', '.join(missing)}, not installed: "
                                f"pip install \"plexity_plugins[{extra}]\"")


def is_url(spec: str) -> bool:
    """Whether `spec` names a file or folder by an fsspec URL (``s3://``, ``hf://``, ``https://``
    ...) rather than a local path (``file://`` counts as local)."""
    from fsspec.core import split_protocol

    protocol, _ = split_protocol(spec)
    return protocol not in (None, "file", "local") and len(protocol) > 1  # (C:\ is a path)


def require_protocol(url: str, what: str) -> None:
    """Raise MissingExtraError unless fsspec can open `url` (its filesystem's package is
    installed), or ValueError if no fsspec filesystem has its protocol."""
    from fsspec.core import split_protocol
    from fsspec.registry import get_filesystem_class

    protocol, _ = split_protocol(url)
    try:
        get_filesystem_class(protocol)
    except ImportError as exc:  # fsspec's message names the package: "Install s3fs to access S3"
        raise MissingExtraError(f"{what}: {url} needs a package that is not installed ({exc}): "
                                f"pip install \"plexity_plugins[remote]\"") from None
    except ValueError as exc:
        raise ValueError(f"{what}: {url}: {exc}") from None
