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
    ["__main__"],  # `python -m plexity_plugins`: the command
]
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}

# Inside a layer folder, modules layered the same way: bottom to top, side by side on one line.  What the
# datatrove executors share (and the local executor) is below the Ray and the Slurm executor, which do not import
# each other.  (executor.py still hands out their names where they were, by `__getattr__` through importlib: the
# old import path, and a Slurm job's executor.pik pickled before they moved.)  The Scrapy front end: its logger, the
# settings, reading an item and the reactor at the bottom; the feeds (their exporter reads a setting and an item's
# Content-Type) and the dropped file's setting above them; the pipeline above those, the add-on (which enables the
# pipeline) on top.  (Its __init__ hands out every name where the one module scrapy.py had it.)  The reading of
# inputs in io/: the caps, the outcomes' names and what bytes are (and the WARC writer, whose cleaned records the
# reader knows) at the bottom; the body's codings, a file opened, a record's headers, the resynchronisation on them;
# the document reader, a saved page's MHTML, warcio's iterator and a WACZ's members above; WarcFile above those;
# inputs.py, which hands out every name it held before the split (`__getattr__` through importlib), on top.
MODULE_LAYERS = {"datatrove": [["executor"], ["ray_executor", "slurm_executor"]],
                 "scrapy": [["log", "settings", "items", "reactor"], ["feeds", "dropped_file"], ["pipeline"],
                            ["addon"]],
                 "io": [["read_limits", "read_outcomes", "payload_sniffing", "warc_writer"],
                        ["http_codings", "input_files", "record_headers", "warc_resync"],
                        ["document_files", "mhtml_files", "warc_iterator", "wacz_files"], ["warc_files"], ["inputs"]]}


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


def package_copy(tmp_path: Path) -> Path:
    """A copy of the package's sources under `tmp_path`, for a scan test to break."""
    import shutil

    copy = tmp_path / "plexity_plugins"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    return copy


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


def module_layer_violations(package_dir: Path = PACKAGE) -> list[str]:
    """Imports that reach up or across between the modules `MODULE_LAYERS` layers inside a folder."""
    problems = []
    for folder, layers in MODULE_LAYERS.items():
        level = {name: n for n, names in enumerate(layers) for name in names}
        for name in level:
            path = package_dir / folder / f"{name}.py"
            assert path.is_file(), f"{path}: in MODULE_LAYERS, not in the package"
            for line, target, names in imports(path, package_dir):
                parts = target.split(".")
                if parts[1:2] != [folder]:
                    continue
                others = [parts[2]] if len(parts) > 2 else names  # (`from . import ray_executor`)
                for other in others:
                    if other in level and other != name and level[other] >= level[name]:
                        problems.append(f"{path.relative_to(package_dir.parent)}:{line} ({name}) imports "
                                        f"{folder}.{other}, which is not below it")
    return problems


def test_the_modules_of_a_layer_folder_that_are_layered_import_only_those_below():
    assert module_layer_violations() == []


def test_the_module_scan_sees_an_import_across(tmp_path):
    copy = package_copy(tmp_path)
    slurm, shared = copy / "datatrove" / "slurm_executor.py", copy / "datatrove" / "executor.py"
    slurm.write_text(slurm.read_text() + "\nfrom .ray_executor import RETRIES\n")
    shared.write_text(shared.read_text() + "\nfrom . import slurm_executor\n")
    assert module_layer_violations(copy) == [
        f"plexity_plugins/datatrove/executor.py:{len(shared.read_text().splitlines())} (executor) imports "
        f"datatrove.slurm_executor, which is not below it",
        f"plexity_plugins/datatrove/slurm_executor.py:{len(slurm.read_text().splitlines())} (slurm_executor) "
        f"imports datatrove.ray_executor, which is not below it"]


def test_the_package_root_holds_only_the_front_ends_errors_and_the_layer_folders():
    # (build products left out: a compiled extension built here before the layers, say)
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and p.suffix not in (".so", ".pyd")}
    expected = {"__init__.py", "__main__.py", "errors.py", "data"}
    expected |= {n for n in LEVEL if (PACKAGE / n).is_dir()}
    assert entries == expected


def test_the_scan_sees_an_upside_down_import(tmp_path):
    # the scan itself, on a copy of the package whose WARC reading imports the scorer
    copy = package_copy(tmp_path)
    inputs = copy / "io" / "inputs.py"
    inputs.write_text(inputs.read_text() + "\nfrom ..scoring.scorer import PerplexityScorer\n")
    assert layer_violations(copy) == ["plexity_plugins/io/inputs.py:%d (io) imports plexity_plugins.scoring.scorer "
                                  "(scoring), which is not below it" % len(inputs.read_text().splitlines())]


# -- datatrove through its public API ------------------------------------------------------------

# datatrove's private methods that its own docstrings hand to subclasses: a subclass overrides them
# (and calls datatrove's), which is subclassing, not reaching into datatrove.
DATATROVE_HOOKS = {"_run_for_rank", "_write", "_default_adapter"}


def datatrove_private_names() -> set[str]:
    """Every private name datatrove's own code defines or sets (functions, classes, attributes,
    module-level names), read from the installed datatrove."""
    import datatrove

    names = set()
    for path in Path(datatrove.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")} - DATATROVE_HOOKS


def private_datatrove_uses(package_dir: Path = PACKAGE) -> list[str]:
    """What our modules take of datatrove's privates: a private module or name imported, a
    module-level name of datatrove's assigned, a private name of datatrove's used (read, set or
    overridden) other than the hooks above."""
    privates = datatrove_private_names()
    problems = []
    for path in sorted(package_dir.rglob("*.py")):
        where = path.relative_to(package_dir.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        datatrove_names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "datatrove":
                if any(part.startswith("_") for part in node.module.split(".")):
                    problems.append(f"{where}:{node.lineno} imports the private module {node.module}")
                problems += [f"{where}:{node.lineno} imports {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_")]
                datatrove_names |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                datatrove_names |= {a.asname or a.name for a in node.names if a.name.split(".")[0] == "datatrove"}
        if not datatrove_names:
            continue  # (a module that does not touch datatrove)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id in datatrove_names:
                problems.append(f"{where}:{node.lineno} assigns datatrove's {node.value.id}.{node.attr}")
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if name in privates:
                problems.append(f"{where}:{node.lineno} uses datatrove's private {name}")
    return problems


def test_datatrove_is_used_through_its_public_api():
    assert private_datatrove_uses() == []


def test_the_scan_sees_datatrove_s_privates(tmp_path):
    copy = package_copy(tmp_path)
    writers = copy / "datatrove" / "writers.py"
    writers.write_text(writers.read_text() + "\n\ndef peek(manager):\n    return manager._output_files\n"
                       "\n\nfrom datatrove.executor import ray as datatrove_ray\n"
                       "datatrove_ray.RayTaskManager = None\n")
    lines = len(writers.read_text().splitlines())
    assert sorted(private_datatrove_uses(copy)) == [
        f"plexity_plugins/datatrove/writers.py:{lines - 4} uses datatrove's private _output_files",
        f"plexity_plugins/datatrove/writers.py:{lines} assigns datatrove's datatrove_ray.RayTaskManager"]


# -- the tests share helpers through helper modules ------------------------------------------------

def test_no_test_module_imports_another():
    """What several test modules need is in a helper module (helpers.py, web_server.py, browser.py,
    article_page.py, ccnet_model.py, warc_corpus.py ...) or conftest.py, not in one of them."""
    tests = Path(__file__).resolve().parent
    found = []
    for path in sorted(tests.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}:{node.lineno} imports {n}" for n in names if n.split(".")[0].startswith("test_")]
    assert found == []
