"""Every distribution src/ imports is declared in pyproject.toml, not merely installed as another's dependency."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The pytest plugin (`nlmsync.testing`) is loaded only by pytest, so pytest itself is its host, not a dependency.
HOSTED = {"nlmsync/testing.py": {"pytest"}}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_normal(re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_tops(path: Path) -> set[str]:
    tops = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            tops.add(node.module.split(".")[0])
    return tops - set(sys.stdlib_module_names) - {"nlmsync", "__future__"}


def test_every_imported_distribution_is_declared() -> None:
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        where = path.relative_to(ROOT / "src").as_posix()
        for top in sorted(_imported_tops(path) - HOSTED.get(where, set())):
            names = {_normal(name) for name in distributions.get(top, [top])}
            if not names & declared:
                missing.append(f"{where}: {top} ({', '.join(sorted(names))})")
    assert missing == []
