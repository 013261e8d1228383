"""The bench sync's own tests work on: a vault folder, a real state file, and a stub client for the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sync.stub import Bench


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Bench]:
    (tmp_path / "vault").mkdir()
    made = Bench(tmp_path)
    try:
        yield made
    finally:
        made.close()
