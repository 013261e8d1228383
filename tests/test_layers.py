"""Imports point down the layers of DESIGN.md: base < state < domain < app < interfaces."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "nlmsync"

LAYER_OF_TOP = {
    "errors": 0, "config": 0, "vault": 0,
    "store": 1,
    "search": 2, "notebooklm": 2, "sync": 2,
    "app": 3,
    "cli": 4, "server": 4, "watch": 4, "__main__": 4,
}


def _module_top(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imported_tops(tree: ast.AST) -> set[str]:
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] == "nlmsync" and len(parts) > 1:
                tops.add(parts[1])
            elif parts == ["nlmsync"]:
                tops.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "nlmsync" and len(parts) > 1:
                    tops.add(parts[1])
    return tops


def test_no_module_imports_from_a_higher_layer() -> None:
    violations = []
    for path in SRC.rglob("*.py"):
        top = _module_top(path)
        if top == "__init__":
            continue
        assert top in LAYER_OF_TOP, f"{path.relative_to(SRC)}: module not placed in a layer (add it to LAYER_OF_TOP)"
        mine = LAYER_OF_TOP[top]
        for imported in _imported_tops(ast.parse(path.read_text(encoding="utf-8"))):
            if imported == "__version__":
                continue
            if LAYER_OF_TOP.get(imported, -1) > mine:
                violations.append(f"{path.relative_to(SRC)} imports nlmsync.{imported}")
    assert violations == []
