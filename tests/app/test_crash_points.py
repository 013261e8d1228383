"""Crash points (restic/SQLite style): drop the connection at every mutating call of a scripted refresh,
before and after the server applied it; a second refresh must converge to the state an uninterrupted run
reaches — every selected note live with its current content, no duplicate, no orphan, registry consistent.

Two crash models: "drop" — the fake server drops the connection (the run goes on, the client reconnects);
"kill" — nlmsync itself dies right before or after the call reaches the server (the run stops there, with
whatever it had committed).

Each crash point is its own test (`[MODE-TOOL#N-WHEN]`), all from one base world built once per module.

Scenario (capacity 20): 18 notes live, then two edits, a rename, a deleted note and seven new notes, so the
refresh replaces, rebinds (and retitles), adds and has to evict five notes. The notes were last modified
long before the first run, so the unchanged ones are recognised by their stat (`note_hashes`), not read.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.crash import Snapshot, consistent_rows, crash_once
from tests.app.world import new_world

from nlmsync.fake.faults import Faults, When

pytestmark = pytest.mark.anyio

CAPACITY = 20
REQUESTED = ["n00.md", "n01.md", "n02.md", "moved/r03.md", "n05.md", "n06.md", "n07.md", "n08.md",
             *[f"n{i:02}.md" for i in range(18, 25)]]


def note_text(i: int, version: int = 1) -> str:
    return f"# Note {i}\n\nVersion {version} of note {i}.\n\n## Details\nSome words about topic {i}.\n"


async def build_base(world) -> None:
    long_ago = time.time_ns() - 3600 * 10**9  # as most notes are: their part hashes get recorded by their stat
    for i in range(30):
        world.write(f"n{i:02}.md", note_text(i))
        os.utime(world.vault / f"n{i:02}.md", ns=(long_ago, long_ago))
    async with world.run() as orch:
        await orch.refresh([f"n{i:02}.md" for i in range(18)])
        await orch.refresh([f"n{i:02}.md" for i in range(5, 10)])  # used twice: protected segment
    world.write("n01.md", note_text(1, 2))
    world.write("n02.md", note_text(2, 2))
    (world.vault / "moved").mkdir()
    (world.vault / "n03.md").rename(world.vault / "moved/r03.md")
    (world.vault / "n04.md").unlink()


def observe(world, state: Path) -> tuple[Any, ...]:
    """Everything that must be equal between runs, with source ids replaced by what they hold."""
    remote = world.fake.notebooks[world.notebook_id].sources
    active = consistent_rows(world, state)
    registry = sorted((r.path, r.part, r.content_hash, r.title) for r in active)
    for path in REQUESTED:
        current = (world.vault / path).read_text(encoding="utf-8")
        live = [remote[r[0]].text for r in sorted(((r.source_id, r.part) for r in active if r.path == path),
                                                  key=lambda x: x[1])]
        assert "".join(live) == current, f"{path} is not live with its current content"
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(registry)


UNINTERRUPTED_CALLS = {"source_add": 9, "source_delete": 7, "source_rename": 1}
# Every mutating call of the uninterrupted refresh, before and after the server applied it, in both crash
# models: one test each. The slow marker leaves out all but the lost answer of the first upload.
POINTS = [pytest.param(mode, tool, nth, when, id=f"{mode}-{tool}#{nth}-{when}",
                       marks=() if (tool, nth, when) == ("source_add", 1, "after") else pytest.mark.slow)
          for mode in ("drop", "kill") for tool, total in UNINTERRUPTED_CALLS.items()
          for nth in range(1, total + 1) for when in ("before", "after")]


@dataclass
class Base:
    """The world just before the scripted refresh, and what an uninterrupted refresh makes of it."""

    snapshot: Snapshot
    counts: dict[str, int]
    calls: dict[str, int]
    expected: tuple[Any, ...]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    world = new_world(tmp_path_factory.mktemp("crash-base"), capacity=CAPACITY)
    anyio.run(build_base, world)
    snapshot = Snapshot.take(world, CAPACITY)
    reference, state = snapshot.restore(world.root / "reference", Faults())

    async def refresh() -> dict[str, int]:
        async with reference.run(state=state) as orch:
            return (await orch.refresh(REQUESTED)).counts()

    counts = anyio.run(refresh)
    calls = {tool: reference.calls(tool) for tool in UNINTERRUPTED_CALLS}
    return Base(snapshot, counts, calls, observe(reference, state))


def test_the_uninterrupted_refresh_takes_every_branch(base: Base) -> None:
    assert base.counts == {"reused": 5, "replaced": 2, "renamed": 1, "added": 7, "evicted": 5}
    assert base.calls == UNINTERRUPTED_CALLS


@pytest.mark.parametrize(("mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_converges(base: Base, tmp_path: Path, mode: str, tool: str, nth: int,
                                           when: When) -> None:
    assert base.calls == UNINTERRUPTED_CALLS, "the scenario changed: see test_the_uninterrupted_refresh_takes_every_branch"
    world, state, fired = await crash_once(base.snapshot, tmp_path, mode, tool, nth, when,
                                           lambda orch: orch.refresh(REQUESTED), {})
    assert fired, f"{tool} #{nth} {when}: the fault never fired"
    world.fake.faults = Faults()
    async with world.run(state=state) as orch:
        await orch.refresh(REQUESTED)
    got = observe(world, state)
    expected = base.expected
    assert got == expected, (f"crash at {tool} #{nth} {when} did not converge: "
                             f"remote +{set(got[0]) - set(expected[0])} -{set(expected[0]) - set(got[0])}")
