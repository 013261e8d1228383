"""nlmsync killed right after the server applied its K-th mutating call, for every K of a packed run: a first
mirror into an empty notebook, an incremental mirror of a notebook full but for `pack_free` (edits, a move, a
deletion, new notes, a pack grown past the limit: packs replaced in waves), the same changes mirrored by a
machine with no state file (an adopting run), a notebook whose plan was downgraded below what it holds (the packs
merged down to the plan), and an edit while sources the user added fill the free room (packs merged to make
room). The next run must converge — every note of the vault in
exactly one source with its current text, no stray, the registry agreeing with the notebook — and the run after
it must make no mutating call. Deterministic: the kill is a simulated one at an exact call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.crash import ANY_MUTATION, Snapshot, crash_once
from tests.app.notebook_checks import assert_mirrored, fill, note_text, write_note
from tests.app.world import World, new_world

from nlmsync.config import Settings
from nlmsync.errors import CapacityError
from nlmsync.fake.faults import TIERS, Faults
from nlmsync.store import StateStore
from nlmsync.sync.titles import parse_note_title, parse_pack_title

pytestmark = pytest.mark.anyio

SETTINGS: dict[str, Any] = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 1}
NOTES = 48


async def _mirror(world: World, state: Path | None = None, settings: dict[str, Any] = SETTINGS) -> None:
    state_given: dict[str, Any] = {"state": state} if state else {}
    async with world.run(**state_given, **settings) as orch:
        await orch.refresh(all_notes=True)


def _change(vault: Path, paths: list[str]) -> None:
    write_note(vault, paths[1], note_text(1, 2))
    write_note(vault, paths[40], note_text(40, 2))
    (vault / "moved").mkdir()
    (vault / paths[3]).rename(vault / "moved" / "n003.md")
    (vault / paths[4]).unlink()
    for name in ("f0/n006b.md", "f2/n020b.md", "e/new.md"):
        write_note(vault, name, f"# New {name}\n\nA new note.\n")
    write_note(vault, paths[19], note_text(19, 3) + "Grown. " * 120)


def _first_mirror(root: Path) -> tuple[Snapshot, int]:
    capacity = 12
    world = new_world(root, capacity=capacity)
    fill(world.vault, NOTES)
    return Snapshot.take(world, capacity), capacity


def _full_notebook(root: Path) -> tuple[Snapshot, int]:
    world = new_world(root, capacity=12)
    paths = fill(world.vault, NOTES)
    anyio.run(_mirror, world)
    capacity = len(world.remote()) + SETTINGS["pack_free"]  # the notebook at its capacity but for pack_free
    world.fake.capacity = capacity
    world.settings = world.settings.model_copy(update={"capacity": capacity})
    _change(world.vault, paths)
    return Snapshot.take(world, capacity), capacity


def _fresh_machine(root: Path) -> tuple[Snapshot, int]:
    """A notebook mirrored from another machine, a vault changed since, and no state file: the run adopts the
    packs by their titles, reads back and replaces the ones whose notes changed, and deletes what is left over."""
    world = new_world(root, capacity=12)
    paths = fill(world.vault, NOTES)
    anyio.run(_mirror, world)
    for state in world.settings.state_path.parent.glob(world.settings.state_path.name + "*"):
        state.unlink()
    _change(world.vault, paths)
    return Snapshot.take(world, 12), 12


TINY: dict[str, Any] = {"pack": "always", "source_max_bytes": 1_000, "pack_free": 3}
FREE_ROOM: dict[str, Any] = {**SETTINGS, "pack_free": 3}


def _plan_downgrade(root: Path) -> tuple[Snapshot, int]:
    """A notebook mirrored on Pro (one note a pack), its plan now Standard: the run the server refused at more than
    the plan allows learned it, and the next one merges the packs down to fit."""
    world = new_world(root, capacity=300)
    world.settings = Settings(vault=world.vault, state=world.settings.state_path, notebook=world.notebook_id)
    world.fake.faults.tier = TIERS["pro"]
    paths = fill(world.vault, 55, folders=5, pad=12)
    anyio.run(_mirror, world, None, TINY)
    world.fake.capacity, world.fake.faults.tier = 50, TIERS["standard"]
    write_note(world.vault, paths[30], note_text(30, 2))
    with pytest.raises(CapacityError):
        anyio.run(_mirror, world, None, TINY)
    return Snapshot.take(world, 50), 50


def _free_room(root: Path) -> tuple[Snapshot, int]:
    """Packs about 70% full, the notebook full but for `pack_free`, then two sources the user added in that room
    and an edit: the packs are merged, a few neighbours at a time, to make room."""
    world = new_world(root, capacity=22)
    paths = fill(world.vault, 110, folders=5, pad=2)
    anyio.run(_mirror, world, None, FREE_ROOM)
    capacity = world.fake.capacity = len(world.remote()) + FREE_ROOM["pack_free"]
    world.settings = world.settings.model_copy(update={"capacity": capacity})
    for i in range(2):
        world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                        "text": f"my own notes {i}", "title": f"Mine {i}"})
    write_note(world.vault, paths[70], note_text(70, 2))
    return Snapshot.take(world, capacity), capacity


SCENARIOS = {"first-mirror": _first_mirror, "full-notebook": _full_notebook, "fresh-machine": _fresh_machine,
             "plan-downgrade": _plan_downgrade, "free-room": _free_room}
SCENARIO_SETTINGS = {"plan-downgrade": TINY, "free-room": FREE_ROOM}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Snapshot, int]]:
    """Each scenario's snapshot and how many mutating calls its uninterrupted refresh makes."""
    found = {}
    for name, build in SCENARIOS.items():
        snapshot, _ = build(tmp_path_factory.mktemp(name))
        world, state = snapshot.restore(tmp_path_factory.mktemp(f"{name}-reference"), Faults())
        anyio.run(_mirror, world, state, SCENARIO_SETTINGS.get(name, SETTINGS))
        assert_mirrored(world, world.vault, hand_added(world))
        found[name] = (snapshot, len(world.mutating_calls()))
    return found


TOTALS = {"first-mirror": 7, "full-notebook": 10, "fresh-machine": 11, "plan-downgrade": 24, "free-room": 12}
"""The mutating calls of each scenario's uninterrupted refresh: the kills cover each of them."""
KILLS = [pytest.param(name, k, id=f"{name}-{k}", marks=() if k in (1, total) else pytest.mark.slow)
         for name, total in TOTALS.items() for k in range(1, total + 1)]


def test_the_kills_cover_every_mutating_call_of_the_uninterrupted_runs(bases) -> None:
    assert {name: calls for name, (_, calls) in bases.items()} == TOTALS


@pytest.mark.parametrize(("scenario", "k"), KILLS)
async def test_a_kill_after_any_applied_mutation_converges(bases, tmp_path: Path, scenario: str, k: int) -> None:
    snapshot, _ = bases[scenario]
    settings = SCENARIO_SETTINGS.get(scenario, SETTINGS)
    world, state, fired = await crash_once(snapshot, tmp_path, "kill", ANY_MUTATION, k, "after",
                                           lambda orch: orch.refresh(all_notes=True), settings)
    assert fired
    await _mirror(world, state, settings)  # the run after the kill finishes the job
    mine = hand_added(world)
    assert_mirrored(world, world.vault, mine)
    with StateStore.open(state, world.settings) as store:
        registered = {p.source_id for p in store.packs(world.notebook_id)}
        registered |= {store.resolve_source_id(m.source_id) for m in store.all_mappings(world.notebook_id)}
        assert registered == set(world.remote()) - mine and store.pending_deletions(world.notebook_id) == []
    assert len(world.remote()) <= snapshot.capacity
    mark = len(world.fake.calls)
    await _mirror(world, state, settings)
    assert world.mutating_calls(mark) == []


def hand_added(world: World) -> set[str]:
    """The sources the user added (titled as no upload of nlmsync's)."""
    return {sid for sid, title in world.remote().items()
            if parse_pack_title(title) is None and parse_note_title(title) is None}
