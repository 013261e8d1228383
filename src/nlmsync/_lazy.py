"""Lazy package exports: a package names its public names and the module each lives in, and a name's module is
imported on first use (PEP 562), so importing the package costs only what a caller actually touches."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any


def lazy_exports(namespace: MutableMapping[str, Any], exports: Mapping[str, str],
                 public: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of a package whose globals are `namespace`: an exported name is read from
    its module (`exports[name]`) on first use and kept in the package; any other name is an AttributeError."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *public])

    return __getattr__, __dir__
