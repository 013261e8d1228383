"""Crash points of a packed `refresh --all` (restic/SQLite style): drop the connection at every mutating call,
before and after the server applied it, or kill nlmsync right there; the next `refresh --all` must converge to
the state an uninterrupted run reaches — every note in exactly one source with its current text, the very
packs an uninterrupted run makes, no duplicate, no orphan, registry consistent.

Scenario (capacity 12, packs of at most 1,500 bytes): 40 notes mirrored in packs; then two edits in two
packs, a note moved to another folder, a deleted note, three new notes and one note grown so that its pack
must be split — so the refresh replaces packs, splits one, and retires what the changes leave behind.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.crash import Snapshot, assert_converged, crash_and_rerun
from tests.app.world import World, new_world

from nlmsync.fake.faults import Faults, When
from nlmsync.store import StateStore
from nlmsync.sync.packs.text import compose_pack
from nlmsync.sync.titles import parse_pack_title

pytestmark = pytest.mark.anyio

CAPACITY = 12
SETTINGS: dict[str, Any] = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 1}


def note_text(i: int, version: int = 1) -> str:
    return f"# Note {i}\n\nVersion {version} of note {i}, about topic {i % 5}.\n\n## Details\nWords {i}.\n"


async def build_base(world: World) -> None:
    long_ago = time.time_ns() - 3600 * 10**9
    for i in range(40):
        path = f"d{i % 3}/n{i:02}.md"
        world.write(path, note_text(i))
        os.utime(world.vault / path, ns=(long_ago, long_ago))
    async with world.run(**SETTINGS) as orch:
        await orch.refresh(all_notes=True)
    world.write("d1/n01.md", note_text(1, 2))
    world.write("d2/n35.md", note_text(35, 2))
    (world.vault / "moved").mkdir()
    (world.vault / "d0/n03.md").rename(world.vault / "moved/n03.md")
    (world.vault / "d1/n04.md").unlink()
    for name in ("d0/n06b.md", "d2/n20b.md", "e/new.md"):
        world.write(name, f"# {name}\n\nA new note.\n")
    world.write("d1/n19.md", note_text(19, 3) + "Grown. " * 120)


def observe(world: World, state: Path) -> tuple[Any, ...]:
    """What must be equal between runs: the sources (title and text), the packs and the notes they hold."""
    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    assert len(titles) == len(set(titles)), "duplicate sources"
    store = StateStore.open(state, world.settings)
    try:
        packs = store.packs(world.notebook_id)
        assert {p.source_id for p in packs} == set(remote), "orphans or dangling packs"
        assert store.all_mappings(world.notebook_id) == []
        assert store.pending_deletions(world.notebook_id) == []
        held = {}
        for pack in packs:
            notes = [p for p, _ in store.notes_of_pack(world.notebook_id, pack.source_id)]
            held[pack.title] = notes
            text = compose_pack([(p, (world.vault / p).read_text(encoding="utf-8")) for p in notes])
            assert remote[pack.source_id].text == text and remote[pack.source_id].title == pack.title
    finally:
        store.close()
    vault_notes = sorted(p.relative_to(world.vault).as_posix() for p in world.vault.rglob("*.md"))
    assert sorted(p for notes in held.values() for p in notes) == vault_notes, "a note in no pack, or in two"
    assert all(parse_pack_title(t) for t in titles)
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(sorted(held.items()))


@dataclass
class Base:
    snapshot: Snapshot
    calls: dict[str, int]
    expected: tuple[Any, ...]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    world = new_world(tmp_path_factory.mktemp("pack-crash-base"), capacity=CAPACITY)
    anyio.run(build_base, world)
    snapshot = Snapshot.take(world, CAPACITY)
    reference, state = snapshot.restore(world.root / "reference", Faults())

    async def refresh() -> None:
        async with reference.run(state=state, **SETTINGS) as orch:
            await orch.refresh(all_notes=True)

    anyio.run(refresh)
    calls = {tool: reference.calls(tool) for tool in ("source_add", "source_delete")}
    return Base(snapshot, calls, observe(reference, state))


UNINTERRUPTED_CALLS = {"source_add": 4, "source_delete": 3}
POINTS = [pytest.param(mode, tool, nth, when, id=f"{mode}-{tool}#{nth}-{when}",
                       marks=() if (tool, nth, when) == ("source_add", 1, "after") else pytest.mark.slow)
          for mode in ("drop", "kill") for tool, total in UNINTERRUPTED_CALLS.items()
          for nth in range(1, total + 1) for when in ("before", "after")]


def test_the_uninterrupted_refresh_replaces_splits_and_retires_packs(base: Base) -> None:
    assert base.calls == UNINTERRUPTED_CALLS


@pytest.mark.parametrize(("mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_of_a_packed_refresh_converges(base: Base, tmp_path: Path, mode: str, tool: str,
                                                               nth: int, when: When) -> None:
    assert base.calls == UNINTERRUPTED_CALLS, "the scenario changed: see the uninterrupted refresh's test"
    point = (mode, tool, nth, when)
    world, state = await crash_and_rerun(base.snapshot, tmp_path, point, lambda orch: orch.refresh(all_notes=True),
                                         SETTINGS)
    assert_converged(observe(world, state), base.expected, point)
