"""Docstrings name code that exists: every backticked dotted name in a docstring of `src/` (`store.StateStore`,
`Capacity.refused_at`, `settings.vault` for a parameter `settings`, `persistence.py`) resolves to a module, a
class, a function or an attribute of nlmsync, of the standard library or of a dependency."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src" / "nlmsync"
DOTTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`")
NOT_CODE = frozenset({"md", "txt", "js", "json", "jsonl", "toml", "db", "gz", "html", "pdf", "wal", "mp3"})
"""The endings of file names a docstring shows as examples (`a.md`, `config.toml`): not names of code."""
ALIASES = {"np": "numpy", "Database": "sqlite_utils.Database"}


@dataclass(frozen=True)
class Named:
    """A dotted name in the docstring of `node` (a module, class or function) of `module`."""

    module: str
    owner: str
    name: str
    params: dict[str, str]
    """The parameters of the function the docstring is of, and what each is annotated with."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def named() -> Iterator[Named]:
    for path in sorted(SRC.rglob("*.py")):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=False) or ""
            params: dict[str, str] = {}
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    params[arg.arg] = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            for match in DOTTED.finditer(doc):
                yield Named(module, getattr(node, "name", "<module>"), match.group(1), params)


def definitions() -> dict[str, list[Any]]:
    """Every class, function and module of nlmsync by its name (the objects themselves)."""
    found: dict[str, list[Any]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = importlib.import_module(module_name(path))
        found.setdefault(module.__name__.rpartition(".")[2], []).append(module)
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) == module.__name__:
                found.setdefault(name, []).append(value)
    return found


def instance_attributes(cls: type) -> set[str]:
    """The attributes instances of `cls` have beyond its class's: annotated fields, and those its methods set on
    `self`."""
    names: set[str] = set()
    for klass in cls.__mro__:
        names.update(getattr(klass, "__annotations__", {}))
        names.update(getattr(klass, "model_fields", {}))
        file = getattr(importlib.import_module(klass.__module__), "__file__", None)
        if file is None or not file.endswith(".py"):
            continue
        source = ast.parse(Path(file).read_text(encoding="utf-8"))
        for node in ast.walk(source):
            if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                names.update(target.attr for target in ast.walk(node) if isinstance(target, ast.Attribute)
                             and isinstance(target.value, ast.Name) and target.value.id == "self")
    return names


def has_path(value: Any, attrs: list[str]) -> bool:
    for attr in attrs:
        if hasattr(value, attr):
            value = getattr(value, attr)
        elif isinstance(value, type) and attr in instance_attributes(value):
            return True  # an instance's attribute: what it holds is not checked further
        else:
            return False
    return True


def importable(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return has_path(value, parts[cut:])
    return False


def resolves(item: Named, defined: dict[str, list[Any]]) -> bool:
    parts = item.name.split(".")
    if parts[-1] == "py":
        return any(path.name == item.name for path in SRC.rglob("*.py"))
    if parts[-1].lower() in NOT_CODE:
        return True
    package = item.module.split(".")
    bases = [".".join(package[:cut]) for cut in range(len(package), 0, -1)]
    if any(importable(f"{base}.{item.name}") for base in bases):
        return True
    head = ALIASES.get(parts[0], parts[0])
    if importable(".".join([head, *parts[1:]])) or has_path(builtins, parts):
        return True
    if any(has_path(value, parts[1:]) for value in defined.get(parts[0], ())):
        return True
    annotation = item.params.get(parts[0], "")
    types = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation)
    return any(has_path(value, parts[1:]) for name in types for value in defined.get(name, ()))


def test_every_dotted_name_in_a_docstring_is_code_that_exists() -> None:
    defined = definitions()
    wrong = [f"{item.module}:{item.owner}: `{item.name}`" for item in named() if not resolves(item, defined)]
    assert wrong == []


def test_the_check_tells_a_name_that_is_gone() -> None:
    defined = definitions()
    params = {"settings": "Settings", "remote": "RemoteView"}
    good = ["store.StateStore", "sync.capacity.decide_capacity", "Capacity.refused_at", "settings.vault",
            "remote.foreign", "persistence.py", "str.translate", "np.bincount", "a.md", "Executor.fatal"]
    assert all(resolves(Named("nlmsync.sync.ensure", "f", name, params), defined) for name in good)
    gone = ["citations.locate_quote", "StateStore.capacity", "pack_runner.PackRunner", "settings.nothing",
            "nowhere.py"]
    assert not any(resolves(Named("nlmsync.sync.ensure", "f", name, params), defined) for name in gone)
