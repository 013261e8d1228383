"""Fixtures for the state store tests: a fresh store on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nlmsync.store import StateStore


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    return tmp_path / ".nlmsync" / "state.db"


@pytest.fixture
def store(state_path: Path) -> Iterator[StateStore]:
    with StateStore.open(state_path) as opened:
        yield opened
