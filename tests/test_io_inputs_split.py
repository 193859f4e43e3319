"""plexity_plugins/io/inputs.py was split into modules by responsibility (docs/development.md, "Layout"): every name
it held is still importable from it, the very object the module that holds it now has, and its table of names
names only what those modules define."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import plexity_plugins.io.inputs as inputs

IO = Path(inputs.__file__).parent


def test_every_name_inputs_held_is_the_holder_s_object():
    import importlib

    assert len(inputs._HOLDER) == 130  # (the top-level names of inputs.py before the split)
    for name, module in inputs._HOLDER.items():
        assert getattr(inputs, name) is getattr(importlib.import_module(f"plexity_plugins.io.{module}"), name), name


def test_the_table_names_what_each_module_defines_at_its_top_level():
    for module, names in inputs._MOVED.items():
        tree = ast.parse((IO / f"{module}.py").read_text(encoding="utf-8"))
        defined = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined |= {t.id for t in targets if isinstance(t, ast.Name)}
        assert set(names) <= defined, (module, set(names) - defined)


def test_an_old_import_runs_in_a_fresh_process_and_a_name_it_never_held_is_an_error():
    check = ("from plexity_plugins.io.inputs import WarcFile, _GZIP_MEMBER, dechunk, MAX_DOCUMENT_BYTES\n"
             "print(WarcFile.__module__, _GZIP_MEMBER.__class__.__name__, dechunk.__module__, MAX_DOCUMENT_BYTES)\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["plexity_plugins.io.warc_files", "Pattern", "plexity_plugins.io.http_codings",
                                   "50000000"]
    with pytest.raises(ImportError):
        exec("from plexity_plugins.io.inputs import no_such_name", {})
