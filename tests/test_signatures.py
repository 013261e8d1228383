"""No function of the packages that do the work takes more than eight parameters: a longer list is a value
waiting to be named (a request, a scope, the run's state)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "nlmsync"
PACKAGES = ("sync", "search", "store", "app", "reading")
MOST = 8


def too_long(source: str, most: int = MOST) -> list[str]:
    """The functions of `source` taking more than `most` parameters (`self` and `cls` not counted; `*args` and
    `**kwargs` count one each), as `name (n)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            count = len([n for n in names if n not in ("self", "cls")])
            if count > most:
                found.append(f"{node.name} ({count})")
    return found


def test_no_function_of_the_working_packages_takes_more_than_eight_parameters() -> None:
    found = [f"{path.relative_to(SRC)}: {name}" for package in PACKAGES for path in sorted((SRC / package).rglob("*.py"))
             for name in too_long(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_check_counts_every_kind_of_parameter_but_self() -> None:
    source = ("class A:\n    def f(self, a, b, /, c, d, *args, e, f, g, **kwargs): ...\n"
              "async def g(a, b, c, d, e, f, g, h): ...\n")
    assert too_long(source) == ["f (9)"]
    assert sorted(too_long(source, most=7)) == ["f (9)", "g (8)"]
