"""The package's layers, read from its import statements: each module imports only its own layer
and the layers below it (docs/development.md, "Layout").  Reading WARCs never imports scoring,
the models or the CLI; the core never imports a front end."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "plexity_plugins"

# Bottom to top.  Folders on one line are side by side: neither imports the other.
LAYERS = [
    ["errors"],
    ["runtime"],
    ["io"],
    ["extractors", "text"],
    ["scoring"],
    ["training", "cleaning"],
    ["datatrove", "scrapy", "web"],
    ["cli"],
]
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}


def part(module: str) -> str | None:
    """The layer folder (or front-end module) of `module`, a dotted name under plexity_plugins;
    None for the package itself (its __init__: the public names, above every layer)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def imports(path: Path, package_dir: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, names) for every import of the package in `path`, at any depth
    (imports inside functions count: they are layers too)."""
    module = ".".join(path.relative_to(package_dir.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "plexity_plugins":
                found.append((node.lineno, target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "plexity_plugins"]
    return found


def layer_violations(package_dir: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(package_dir.rglob("*.py")):
        where = path.relative_to(package_dir.parent)
        source = ".".join(where.with_suffix("").parts)
        own = part(source)
        if own == "__init__":  # the package's public names: above every layer
            continue
        assert own in LEVEL, f"{path}: a module outside every layer (add its folder to LAYERS)"
        for line, target, names in imports(path, package_dir):
            other = part(target)
            if other is None:
                # `from plexity_plugins import x`: a layer folder by name, or the version
                targets = [n for n in names if n != "__version__"]
                others = [n for n in targets if n in LEVEL]
                if len(others) != len(targets):
                    problems.append(f"{where}:{line} imports the package's public "
                                    f"names {targets} (import them from their layer)")
            else:
                others = [other]
            for other in others:
                if other != own and LEVEL[other] >= LEVEL[own]:
                    problems.append(f"{where}:{line} ({own}) imports {target} ({other}), "
                                    f"which is not below it")
    return problems


def test_every_module_imports_only_its_own_layer_and_the_layers_below():
    assert layer_violations() == []


def test_the_package_root_holds_only_the_front_ends_errors_and_the_layer_folders():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    expected = {"__init__.py", "errors.py", "scrapy.py", "data"} | {n for n in LEVEL if (PACKAGE / n).is_dir()}
    assert entries == expected


def test_the_scan_sees_an_upside_down_import(tmp_path):
    # the scan itself, on a copy of the package whose WARC reading imports the scorer
    import shutil

    copy = tmp_path / "plexity_plugins"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    inputs = copy / "io" / "inputs.py"
    inputs.write_text(inputs.read_text() + "\nfrom ..scoring.scorer import PerplexityScorer\n")
    assert layer_violations(copy) == ["plexity_plugins/io/inputs.py:%d (io) imports plexity_plugins.scoring.scorer "
                                  "(scoring), which is not below it" % len(inputs.read_text().splitlines())]
