"""The wheel pip builds from this repository carries `py.typed`, so a user's type checker reads nlmsync's
annotations instead of treating the package as untyped."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hatchling.build import build_wheel

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_the_typed_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the build backend's hooks build the project in the current folder
    wheel = tmp_path / build_wheel(str(tmp_path))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "nlmsync/py.typed" in names
    assert "nlmsync/cli/__init__.py" in names  # the package itself, not only the marker
