"""The package map in `sync/__init__.py` names every module of the package, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

from nlmsync import sync

PACKAGE = Path(sync.__file__).resolve().parent


def modules() -> set[str]:
    """Each module of `sync/` as the map names it: `titles` at the root, `packs/plan` in a subpackage."""
    return {path.relative_to(PACKAGE).with_suffix("").as_posix() for path in PACKAGE.rglob("*.py")
            if path.name != "__init__.py"}


def mapped() -> set[str]:
    """The backticked names in the package map that look like modules of the package (a bare lowercase word or a
    `subpackage/module` path)."""
    doc = sync.__doc__ or ""
    return {name for name in re.findall(r"`([a-z_]+(?:/[a-z_]+)?)`", doc)
            if "/" in name or (PACKAGE / f"{name}.py").is_file() or name in modules()}


def test_the_package_map_names_every_module() -> None:
    assert modules() - mapped() == set()


def test_the_package_map_names_no_module_that_is_gone() -> None:
    assert {name for name in mapped() if "/" in name} - modules() == set()


def test_the_check_sees_a_module_left_out() -> None:
    assert "packs/plan" in modules() and "packs/plan" in mapped()
    assert "titles" in modules() and "titles" in mapped()
