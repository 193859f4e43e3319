"""The docs name what the code has, and the code's options, settings, arguments and counters are
documented where a user looks for them: every option of a `plexity` command on its page (and every
option a usage block shows exists), every Scrapy ``PLEXITY_*`` setting in docs/scrapy.md's table,
every argument of the datatrove steps and every counter they keep in docs/datatrove.md (the
document filter's in docs/models.md).  Fast: no model is opened and nothing runs."""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PACKAGE = REPO / "plexity_plugins"

# command -> the page that documents it
COMMAND_PAGES = {
    "clean": "cli.md", "score": "cli.md", "models import": "models.md", "run": "datatrove.md",
    "serve": "web.md", "report": "web.md", "train": "training.md", "calibrate": "training.md",
}


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def subparser(command: str) -> argparse.ArgumentParser:
    from plexity_plugins.cli import build_parser

    parser = build_parser()
    for word in command.split():
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--")} - {"--help"}


def named(option: str, text: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


@pytest.mark.parametrize("command", sorted(COMMAND_PAGES))
def test_every_option_of_a_command_is_named_on_its_page(command):
    text = page(COMMAND_PAGES[command])
    missing = sorted(o for o in long_options(subparser(command)) if not named(o, text))
    assert not missing, f"plexity {command}: {missing} not in docs/{COMMAND_PAGES[command]}"


def usage_blocks(text: str, command: str) -> list[str]:
    """The ``text`` blocks that show `plexity COMMAND`'s usage (they start with it), each joined into one line."""
    blocks = re.findall(r"^```text\n(.*?)^```", text, re.M | re.S)
    return [block.replace("\\\n", " ") for block in blocks if block.startswith(f"plexity {command} ")]


@pytest.mark.parametrize("command", sorted(COMMAND_PAGES))
def test_every_option_a_usage_block_shows_exists(command):
    options = long_options(subparser(command))
    shown = [o for block in usage_blocks(page(COMMAND_PAGES[command]), command)
             for line in block.splitlines() if line.startswith(f"plexity {command}") or line.startswith(" ")
             for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line.split("#")[0])]
    unknown = sorted(set(shown) - options)
    assert not unknown, f"docs/{COMMAND_PAGES[command]} shows plexity {command} {unknown}, which it does not take"


def test_the_usage_blocks_are_found():  # (else the test above checks nothing)
    for command in ("clean", "score", "run", "serve", "train", "calibrate"):
        assert usage_blocks(page(COMMAND_PAGES[command]), command), command


def scrapy_settings_read() -> set[str]:
    """The PLEXITY_* settings the modules of plexity_plugins/scrapy/ read from Scrapy's settings."""
    source = "\n".join(path.read_text(encoding="utf-8") for path in sorted((PACKAGE / "scrapy").glob("*.py")))
    return set(re.findall(r'settings(?:\.get\w*\(|, )"(PLEXITY_[A-Z_]+)"', source))


def scrapy_settings_documented() -> set[str]:
    rows = [line for line in page("scrapy.md").splitlines() if line.startswith("| `PLEXITY_")]
    return {name for row in rows for name in re.findall(r"`(PLEXITY_[A-Z_]+)`", row.split(" | ")[0])}


def test_every_scrapy_setting_is_in_the_settings_table_and_every_row_is_read():
    read, documented = scrapy_settings_read(), scrapy_settings_documented()
    assert len(read) > 20  # (the pattern finds them)
    assert not read - documented, f"read by the pipeline, not in docs/scrapy.md's table: {sorted(read - documented)}"
    assert not documented - read, f"in docs/scrapy.md's table, never read: {sorted(documented - read)}"


def own_parameters(cls) -> list[str]:
    """The arguments `cls` adds to those of the datatrove class it extends."""
    base = next(b for b in cls.__mro__[1:] if b.__module__.startswith("datatrove"))
    inherited = set(inspect.signature(base.__init__).parameters)
    return [p for p in inspect.signature(cls.__init__).parameters if p not in inherited | {"self", "args", "kwargs"}]


@pytest.mark.parametrize("name, page_name", [
    ("PerplexitySentenceFilter", "datatrove.md"), ("WarcHtmlReader", "datatrove.md"),
    ("HtmlTagsExtractor", "datatrove.md"), ("LearnedExtractor", "datatrove.md"),
    ("PerplexityDocumentFilter", "models.md"), ("RayTaskExecutor", "ray.md")])
def test_every_argument_of_a_datatrove_step_is_documented(name, page_name):
    import plexity_plugins.datatrove as steps

    parameters = own_parameters(getattr(steps, name))
    assert parameters
    text = page(page_name)
    missing = [p for p in parameters if f"`{p}`" not in text]
    assert not missing, f"{name}: {missing} not in docs/{page_name}"


def counters(module: str) -> set[str]:
    """The counter names a module passes to ``stat_update`` as literals or module constants."""
    import importlib

    mod = importlib.import_module(module)
    names = set()
    for node in ast.walk(ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "stat_update":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
                elif isinstance(arg, ast.Name) and isinstance(getattr(mod, arg.id, None), str):
                    names.add(getattr(mod, arg.id))
                elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                    names.add(arg.values[0].value + "<")  # f"skipped_{...}": documented as skipped_<...>
    return names


@pytest.mark.parametrize("module, page_name", [
    ("plexity_plugins.datatrove.filter", "datatrove.md"), ("plexity_plugins.datatrove.readers", "datatrove.md"),
    ("plexity_plugins.datatrove.extractors", "datatrove.md"),
    ("plexity_plugins.datatrove.document_filter", "models.md")])
def test_every_counter_of_a_datatrove_step_is_documented(module, page_name):
    names = counters(module)
    assert names
    if module.endswith(".readers"):  # (counted as f"skipped_{record.skip}")
        from plexity_plugins.io.inputs import RECORD_SKIPS

        names |= {f"skipped_{reason}" for reason in RECORD_SKIPS}
    if module.endswith(".extractors"):  # (counted by a variable: the sandbox's skips)
        from plexity_plugins.datatrove.extractors import LOST_COUNTERS

        names |= set(LOST_COUNTERS)
    text = page(page_name)
    # (a name ending in "<" is a prefix, ``dropped_<reason>``: its backquote need not close right after it)
    patterns = {n: f"`{re.escape(n.rstrip('<'))}" + ("" if n.endswith("<") else "`") for n in names}
    missing = sorted(n for n, pattern in patterns.items() if not re.search(pattern, text))
    assert not missing, f"{module} counts {missing}, not in docs/{page_name}"


def test_every_web_api_status_the_guarantees_give_is_one_the_summary_names_and_the_app_answers():
    """guarantees.md's rows say what the web API answers for each input (`the web API: 422`) and its last
    paragraph sums them up (`answers 200, 413 or 422, never 500`): a row's status must be one of those, and
    each one the app's code answers (a row said 400 for a page past the memory ceiling; the app answers 422)."""
    text = "\n".join(page(name) for name in ("guarantees.md", "guarantees-input.md", "guarantees-output.md"))
    summary = re.search(r"the web API answers ((?:\d{3}, )*\d{3} or \d{3}), never 500", text)
    assert summary, "guarantees.md's summary of the web API's answers"
    summed = set(re.findall(r"\d{3}", summary.group(1)))
    claimed = set(re.findall(r"the web API(?::| answers) (\d{3})(?!, \d{3} or)", text))
    assert claimed, "the rows' web API statuses are found"
    assert not claimed - summed, f"guarantees name web API statuses {sorted(claimed - summed)}, not in {sorted(summed)}"
    app = (PACKAGE / "web" / "app.py").read_text(encoding="utf-8")
    answered = set(re.findall(r"ApiError\((\d{3})", app)) | {"200"}
    assert not summed - answered, f"the app never answers {sorted(summed - answered)}"


def test_the_settings_change_a_page_quotes_is_what_a_run_says():
    """docs/datatrove.md quotes `plexity run`'s stop on a re-run with `--extractor tags`: its list of differences
    is what the settings record gives for that change (it lacked `step: LearnedExtractor -> HtmlTagsExtractor`)."""
    from plexity_plugins.cleaning.settings_record import differences
    from plexity_plugins.datatrove import HtmlTagsExtractor, LearnedExtractor, PerplexitySentenceFilter
    from plexity_plugins.datatrove.run_settings import run_settings

    quoted = re.search(r"holds the results of a run with other settings \((extractor|step)(.*?)\): give a new",
                       page("datatrove.md"))
    assert quoted
    before = run_settings([LearnedExtractor(), PerplexitySentenceFilter()], tasks=1, inputs=False)
    after = run_settings([HtmlTagsExtractor(), PerplexitySentenceFilter(method="regions")], tasks=1, inputs=False)
    assert quoted.group(1) + quoted.group(2) == "; ".join(differences(before, after))


def test_every_environment_variable_plexity_reads_is_one_a_near_miss_is_warned_of():
    """docs/cli.md: a `PLEXITY_*` variable a letter or two from one plexity reads is a warning on every command.
    That holds only for the variables `runtime.environment.USER_VARIABLES` lists: every `PLEXITY_*` name the package
    reads (but the Scrapy settings, from settings.py, and the extraction child's own) must be there, and on a page
    (`PLEXITY_PURE_PYTHON`, read by the scorer and named in docs/performance.md, was not listed: a misspelling of it
    ran the compiled path, silently)."""
    from plexity_plugins.runtime.environment import INTERNAL_VARIABLES, USER_VARIABLES

    read = set()
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "scrapy":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"PLEXITY_[A-Z_]+", node.value):
                read.add(node.value)
    read -= set(INTERNAL_VARIABLES)
    assert "PLEXITY_MODEL_DIR" in read  # (the scan finds them)
    unwarned = sorted(read - set(USER_VARIABLES))
    assert not unwarned, f"read, and no near miss of them warned of: {unwarned}"
    text = "\n".join([(REPO / "README.md").read_text(encoding="utf-8")] + [p.read_text(encoding="utf-8")
                                                                            for p in DOCS.glob("*.md")])
    assert not [v for v in USER_VARIABLES if v not in text], "a variable plexity reads is on no page"


def test_every_name_of_the_package_a_page_gives_is_there_and_a_quoted_traceback_names_its_class_as_python_does():
    """Every `plexity_plugins.x.y` a page names imports, and an exception a page quotes as a traceback's last line
    (`plexity_plugins.errors.SettingsChanged: ...`) is named by its class's own module, as Python prints it
    (docs/datatrove.md quoted `plexity_plugins.datatrove.run_settings.SettingsChanged`, a name it is imported under:
    the user's traceback said `plexity_plugins.errors.SettingsChanged`)."""
    import importlib

    def resolve(name: str):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                found = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for part in parts[i:]:
                found = getattr(found, part, None)
            return found
        return None

    missing, misnamed = [], []
    for path in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for name in set(re.findall(r"(?<![\w/.])plexity_plugins(?:\.[A-Za-z_]\w*)+", text)):
            if resolve(name) is None:
                missing.append(f"{path.name}: {name}")
        for module, cls in re.findall(r"^(plexity_plugins(?:\.\w+)+)\.([A-Z]\w*): ", text, re.M):
            found = resolve(f"{module}.{cls}")
            if found is None or found.__module__ != module:
                printed = getattr(found, "__module__", "?")
                misnamed.append(f"{path.name}: {module}.{cls} (Python prints {printed}.{cls})")
    assert not missing, f"pages name what the package does not have: {missing}"
    assert not misnamed, f"pages quote a traceback's exception under another name: {misnamed}"
