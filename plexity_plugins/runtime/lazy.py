"""A package's names imported on first use (PEP 562), so that a process that needs only part of a package
(`plexity --help`, the extraction child) does not import the rest with its libraries."""

from __future__ import annotations

import importlib
import sys


def lazy_names(package: str, names: dict[str, str]):
    """`__getattr__` and `__dir__` for the package `package`: each name of `names` is imported on first use
    from its module (relative to `package`: ``".auto"``, ``"..io.decoding"``) and kept in the package."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
