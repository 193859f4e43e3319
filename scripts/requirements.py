"""Print the requirements of plexity_plugins with some extras, one a line, from pyproject.toml
(scripts/setup.sh installs them in steps: kenlm, which compiles, apart from the others).

    python scripts/requirements.py all            # the core, every extra's, and the build's
    python scripts/requirements.py all --only kenlm
    python scripts/requirements.py all --except kenlm

An extra that names plexity_plugins[...] brings that extra's requirements too.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
SELF = re.compile(r"^plexity_plugins\[(?P<extras>[^\]]+)\]$")


def requirements(extras: list[str]) -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text())
    optional = project["project"]["optional-dependencies"]
    found = list(project["build-system"]["requires"]) + list(project["project"]["dependencies"])
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in optional[extra]:
            inner = SELF.match(requirement.replace(" ", ""))
            if inner:
                todo += inner["extras"].split(",")
            elif requirement not in found:
                found.append(requirement)
    return found


def name_of(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "\n").splitlines()[0])
    parser.add_argument("extras", nargs="*", default=[])
    parser.add_argument("--only", action="append", default=[], help="only these packages")
    parser.add_argument("--except", dest="exclude", action="append", default=[], help="all but these packages")
    args = parser.parse_args()
    for requirement in requirements(args.extras):
        name = name_of(requirement)
        if (args.only and name not in args.only) or name in args.exclude:
            continue
        print(requirement)


if __name__ == "__main__":
    main()
