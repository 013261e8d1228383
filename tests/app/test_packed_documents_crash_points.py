"""Crash points of the switch of documents from file sources into a pack: every mutating call of a `refresh --all`
that lowered capacity moves two PDFs' text into the notes' pack, dropped or killed before and after the server
applied it; a second refresh must reach what an uninterrupted run reaches — one pack holding the notes and the
PDFs' text, the file sources gone, no duplicate, no orphan, the registry agreeing with the notebook.

Scenario: three notes in one pack and two PDFs as file sources (capacity 6, `pack_free` 3); then capacity 5,
where the files no longer fit: the refresh adds the new pack, deletes the old one and the two file sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.crash import Snapshot, assert_converged, crash_and_rerun
from tests.app.world import World, new_world
from tests.documents.pdfs import pdf, text_page

from nlmsync.fake.faults import Faults, When
from nlmsync.store import StateStore

pytestmark = pytest.mark.anyio

SETTINGS: dict[str, Any] = {"pack": "always", "capacity": 5}


async def build_base(world: World) -> None:
    for i in range(3):
        world.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    (world.vault / "a.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk")))
    (world.vault / "b.pdf").write_bytes(pdf(text_page("Okapis are shy"), text_page("Okapis eat leaves")))
    async with world.run(pack="always", capacity=6) as orch:
        await orch.refresh(all_notes=True)
    assert len(world.remote()) == 3  # one pack, two files


def observe(world: World, state: Path) -> tuple[Any, ...]:
    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    assert len(titles) == len(set(titles)), "duplicate sources"
    store = StateStore.open(state, world.settings)
    try:
        packs = store.packs(world.notebook_id)
        assert {p.source_id for p in packs} == set(remote), "orphans, files left, or dangling packs"
        assert store.all_mappings(world.notebook_id) == []
        assert store.pending_deletions(world.notebook_id) == []
        held = [p for pack in packs for p, _ in store.notes_of_pack(world.notebook_id, pack.source_id)]
    finally:
        store.close()
    assert held == ["a.pdf", "b.pdf", "n0.md", "n1.md", "n2.md"]
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(held)


@dataclass
class Base:
    snapshot: Snapshot
    calls: dict[str, int]
    expected: tuple[Any, ...]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    world = new_world(tmp_path_factory.mktemp("packed-documents-base"), capacity=6)
    anyio.run(build_base, world)
    snapshot = Snapshot.take(world, 6)
    reference, state = snapshot.restore(world.root / "reference", Faults())

    async def refresh() -> None:
        async with reference.run(state=state, **SETTINGS) as orch:
            await orch.refresh(all_notes=True)

    anyio.run(refresh)
    calls = {tool: reference.calls(tool) for tool in ("source_add", "source_delete")}
    return Base(snapshot, calls, observe(reference, state))


UNINTERRUPTED_CALLS = {"source_add": 1, "source_delete": 3}
POINTS = [pytest.param(mode, tool, nth, when, id=f"{mode}-{tool}#{nth}-{when}",
                       marks=() if (mode, tool, nth, when) == ("kill", "source_add", 1, "after") else pytest.mark.slow)
          for mode in ("drop", "kill") for tool, total in UNINTERRUPTED_CALLS.items()
          for nth in range(1, total + 1) for when in ("before", "after")]


def test_the_uninterrupted_switch_adds_one_pack_and_deletes_the_old_one_and_the_files(base: Base) -> None:
    assert base.calls == UNINTERRUPTED_CALLS


@pytest.mark.parametrize(("mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_of_the_switch_into_a_pack_converges(base: Base, tmp_path: Path, mode: str,
                                                                     tool: str, nth: int, when: When) -> None:
    assert base.calls == UNINTERRUPTED_CALLS, "the scenario changed: see the uninterrupted switch's test"
    point = (mode, tool, nth, when)
    world, state = await crash_and_rerun(base.snapshot, tmp_path, point, lambda orch: orch.refresh(all_notes=True),
                                         SETTINGS)
    assert_converged(observe(world, state), base.expected, point)
