"""Fixtures for source-preparation tests: `make_world` builds an in-process world (`tests/sync/world.py`) and
closes every store a world handed out (`World.store()`) when the test ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.sync.world import World, new_world

from nlmsync.fake.faults import Faults


@pytest.fixture
def make_world(tmp_path: Path) -> Iterator[Callable[..., World]]:
    worlds: list[World] = []

    def make(capacity: int = 50, faults: Faults | None = None, **settings: object) -> World:
        worlds.append(new_world(tmp_path, capacity, faults, **settings))
        return worlds[-1]

    yield make
    for world in worlds:
        world.close()
