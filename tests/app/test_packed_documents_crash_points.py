"""Crash points of the switch of documents from file sources into a pack: every mutating call of a `refresh --all`
that lowered capacity moves two PDFs' text into the notes' pack, dropped or killed before and after the server
applied it; a second refresh must reach what an uninterrupted run reaches — one pack holding the notes and the
PDFs' text, the file sources gone, no duplicate, no orphan, the registry agreeing with the notebook.

Scenario: three notes in one pack and two PDFs as file sources (capacity 6, `pack_free` 3); then capacity 5,
where the files no longer fit: the refresh adds the new pack, deletes the old one and the two file sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.app.crash import Reference, crash_points, packs_only, refresh_all_converges, uninterrupted_refresh_all
from tests.app.world import World
from tests.documents.pdfs import pdf, text_page

from nlmsync.fake.faults import When

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
    held = [path for notes in packs_only(world, state).values() for path in notes]
    assert held == ["a.pdf", "b.pdf", "n0.md", "n1.md", "n2.md"]
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(held)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return uninterrupted_refresh_all(tmp_path_factory.mktemp("packed-documents-base"), 6, build_base, SETTINGS, observe)


UNINTERRUPTED_CALLS = {"source_add": 1, "source_delete": 3}
POINTS = crash_points(UNINTERRUPTED_CALLS, ("kill", "source_add", 1, "after"))


def test_the_uninterrupted_switch_adds_one_pack_and_deletes_the_old_one_and_the_files(base: Reference) -> None:
    assert base.calls == UNINTERRUPTED_CALLS


@pytest.mark.parametrize(("mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_of_the_switch_into_a_pack_converges(base: Reference, tmp_path: Path, mode: str,
                                                                     tool: str, nth: int, when: When) -> None:
    assert base.calls == UNINTERRUPTED_CALLS, "the scenario changed: see the uninterrupted switch's test"
    await refresh_all_converges(base, tmp_path, (mode, tool, nth, when), SETTINGS, observe)
