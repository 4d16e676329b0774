"""Print pip constraints that pin every dependency of the base install and the named extras to
the lowest version `pyproject.toml` declares (`name>=X` -> `name==X`), so CI can check that the
lower bounds are true.  Usage: python .ci/lowest.py [EXTRA ...] > lowest.txt

Self-references (`warpweave[mip,smt]`) are followed; a dependency without a lower bound is
left free (pip picks the newest), and its name is printed on stderr.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQ = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*(.*)$")


def requirements(project: dict, extras: list[str]) -> list[str]:
    """The base dependencies and those of `extras`, self-references expanded."""
    name = project["name"]
    optional = project.get("optional-dependencies", {})
    out, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in optional[extra]:
            m = REQ.match(req)
            if m and m.group(1) == name:
                todo += [x.strip() for x in m.group(2).strip("[]").split(",")]
            else:
                out.append(req)
    return out


def main(extras: list[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins: dict[str, str] = {}
    for req in requirements(project, extras):
        m = REQ.match(req)
        name, spec = m.group(1).lower(), m.group(3)
        low = re.search(r">=\s*([^,;\s]+)", spec)
        if low:
            pins[name] = low.group(1)
        else:
            print(f"lowest.py: {name} has no lower bound", file=sys.stderr)
    for name, version in sorted(pins.items()):
        print(f"{name}=={version}")


if __name__ == "__main__":
    main(sys.argv[1:])
