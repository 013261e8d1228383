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
from pathlib import Path
from typing import Any

import pytest
from tests.app.crash import Reference, crash_points, packs_only, refresh_all_converges, uninterrupted_refresh_all
from tests.app.world import World

from nlmsync.fake.faults import When
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
    held = {}
    for source_id, notes in packs_only(world, state).items():
        held[remote[source_id].title] = notes
        text = compose_pack([(p, (world.vault / p).read_text(encoding="utf-8")) for p in notes])
        assert remote[source_id].text == text
    vault_notes = sorted(p.relative_to(world.vault).as_posix() for p in world.vault.rglob("*.md"))
    assert sorted(p for notes in held.values() for p in notes) == vault_notes, "a note in no pack, or in two"
    assert all(parse_pack_title(s.title) for s in remote.values())
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(sorted(held.items()))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return uninterrupted_refresh_all(tmp_path_factory.mktemp("pack-crash-base"), CAPACITY, build_base, SETTINGS, observe)


UNINTERRUPTED_CALLS = {"source_add": 4, "source_delete": 3}
POINTS = crash_points(UNINTERRUPTED_CALLS, ("drop", "source_add", 1, "after"))


def test_the_uninterrupted_refresh_replaces_splits_and_retires_packs(base: Reference) -> None:
    assert base.calls == UNINTERRUPTED_CALLS


@pytest.mark.parametrize(("mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_of_a_packed_refresh_converges(base: Reference, tmp_path: Path, mode: str, tool: str,
                                                               nth: int, when: When) -> None:
    assert base.calls == UNINTERRUPTED_CALLS, "the scenario changed: see the uninterrupted refresh's test"
    await refresh_all_converges(base, tmp_path, (mode, tool, nth, when), SETTINGS, observe)
