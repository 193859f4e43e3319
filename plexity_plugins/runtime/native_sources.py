"""Which sources the compiled extension was built from.

setup.py compiles `fingerprint` of native/'s own sources into the extension (``_native.SOURCES``).
In a checkout installed editable (``pip install -e .``, as scripts/setup.sh installs), the Python
files change with a pull or an edit while the extension stays as built: `plexity_plugins.runtime.native`
compares the two and stops on an extension built from other sources, which would otherwise give the
Python reference's results at its speed (or, for a changed algorithm, other results), unsaid.

No import of the package here: setup.py loads this file by its path, before anything is built.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SUFFIXES = (".cpp", ".h")  # our own sources; native/third_party is KenLM's, unmodified


def fingerprint(native_dir: Path) -> str:
    """A digest of the extension's own sources in `native_dir` (their names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(native_dir).iterdir() if p.is_file() and p.suffix in SUFFIXES):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def checkout_native_dir(package_dir: Path) -> Path | None:
    """native/ of the checkout the package is imported from (an editable install), else None (a
    wheel or ``pip install .``: the package and its extension were installed together)."""
    root = Path(package_dir).resolve().parent
    native = root / "native"
    if (root / "setup.py").is_file() and (native / "plexity_native.cpp").is_file():
        return native
    return None
