"""Crash points, shared by the crash-point tests of a refresh (one note per source) and of a packed one: a world
snapshotted just before the refresh, restored for each crash point, and the two crash models — the fake drops
the connection before or after it applies the Nth call of a tool (the run goes on), or nlmsync dies right
before or after that call reaches the server (the run stops there, with whatever it had committed)."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.world import World, new_world

from nlmsync.app import Orchestrator
from nlmsync.errors import PartialFailure
from nlmsync.fake.faults import DropRule, Faults, When
from nlmsync.fake.state import FakeNotebook, FakeNotebookLM
from nlmsync.store import StateStore


class Killed(BaseException):
    """nlmsync killed mid-run (a BaseException, so no `except Exception` in the code under test stops it)."""


ANY_MUTATION = "any"
"""The `tool` of a `KillingClient` that counts every mutating call, whatever its tool."""


class KillingClient:
    """The real client, except that the Nth call of one mutating tool (or of any, `ANY_MUTATION`) kills the run
    before or after it."""

    def __init__(self, client, tool: str, nth: int, when: str) -> None:
        self._client, self._tool, self._nth, self._when = client, tool, nth, when
        self._count = 0
        self.fired = False

    def __getattr__(self, name):
        return getattr(self._client, name)

    async def _call(self, tool, method, *args, **kwargs):
        number = 0
        if tool == self._tool or self._tool == ANY_MUTATION:
            self._count += 1
            number = self._count
            if number == self._nth and self._when == "before":
                self.fired = True
                raise Killed
        result = await method(*args, **kwargs)
        if number == self._nth and self._when == "after":
            self.fired = True
            raise Killed
        return result

    async def source_add_text(self, *args, **kwargs):
        return await self._call("source_add", self._client.source_add_text, *args, **kwargs)

    async def source_add_file(self, *args, **kwargs):
        return await self._call("source_add", self._client.source_add_file, *args, **kwargs)

    async def source_delete(self, *args, **kwargs):
        return await self._call("source_delete", self._client.source_delete, *args, **kwargs)

    async def source_rename(self, *args, **kwargs):
        return await self._call("source_rename", self._client.source_rename, *args, **kwargs)


def _contains_killed(exc: BaseException) -> bool:
    if isinstance(exc, Killed):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_contains_killed(e) for e in exc.exceptions)


def snapshot_state(world, target: Path) -> None:
    target.mkdir(parents=True)
    for f in world.settings.state_path.parent.glob(world.settings.state_path.name + "*"):
        if not f.name.endswith(".lock"):
            shutil.copy2(f, target / f.name)


@dataclass
class Snapshot:
    """A world as it was before the refresh under test: its vault, state file and notebooks."""

    world: World
    notebooks: dict[str, FakeNotebook]
    state: Path
    capacity: int
    tier: str | None = None
    """The plan's tier the fake's `usage_get` reports."""

    @classmethod
    def take(cls, world: World, capacity: int) -> Snapshot:
        target = world.root / "base"
        snapshot_state(world, target)
        return cls(world, copy.deepcopy(world.fake.notebooks), target, capacity, world.fake.faults.tier)

    def restore(self, root: Path, faults: Faults) -> tuple[World, Path]:
        """A copy under `root` (vault, state, notebook), served by a fake with `faults` (and the plan's tier)."""
        shutil.copytree(self.world.vault, root / "vault")
        shutil.copytree(self.state, root / "state")
        fake = FakeNotebookLM(capacity=self.capacity, faults=replace(faults, tier=self.tier))
        fake.notebooks = copy.deepcopy(self.notebooks)
        settings = self.world.settings.model_copy(update={"vault": root / "vault"})
        return World(root, fake, self.world.notebook_id, settings), root / "state" / settings.state_path.name


async def crash_once(snapshot: Snapshot, root: Path, mode: str, tool: str, nth: int, when: When,
                     refresh: Callable[[Orchestrator], Awaitable[object]],
                     settings: dict[str, Any], faults: Faults | None = None) -> tuple[World, Path, bool]:
    """Restore `snapshot` under `root` and run `refresh` with the crash point (`mode` drop or kill at the `nth`
    call of `tool`, `when` before or after), on a server with `faults` besides; returns the world, its state file
    and whether the crash fired. A refresh that ends in a partial failure (a note or pack whose add was dropped) is
    not a failure of the test."""
    base = faults or Faults()
    if mode == "drop":
        world, state = snapshot.restore(root, replace(base, drops=[DropRule(nth=nth, tool=tool, when=when)]))
        async with world.run(state=state, **settings) as orch:
            try:
                await refresh(orch)
            except PartialFailure:  # a failed note or pack: the next run finishes it
                pass
        fired = any(c.dropped == when or (when == "before" and not c.applied and c.tool == tool)
                    for c in world.fake.calls)
        return world, state, fired
    world, state = snapshot.restore(root, replace(base))
    killer: list[KillingClient] = []

    def wrap(client: object) -> object:
        killer.append(KillingClient(client, tool, nth, when))
        return killer[0]

    try:
        async with world.run(wrap=wrap, state=state, **settings) as orch:
            await refresh(orch)
    except BaseException as exc:  # the simulated kill, possibly inside exception groups
        if not _contains_killed(exc):
            raise
    return world, state, killer[0].fired


async def crash_and_rerun(snapshot: Snapshot, root: Path, point: tuple[str, str, int, When],
                          refresh: Callable[[Orchestrator], Awaitable[object]], settings: dict[str, Any],
                          faults: Faults | None = None) -> tuple[World, Path]:
    """`crash_once` at `point` (mode, tool, nth, when), which must fire, then `refresh` again on a server with
    `faults` alone; returns the world and its state file after the second run."""
    mode, tool, nth, when = point
    world, state, fired = await crash_once(snapshot, root, mode, tool, nth, when, refresh, settings, faults)
    assert fired, f"{tool} #{nth} {when}: the fault never fired"
    world.fake.faults = replace(faults or Faults())
    async with world.run(state=state, **settings) as orch:
        await refresh(orch)
    return world, state


def assert_converged(got: tuple[Any, ...], expected: tuple[Any, ...], point: tuple[str, str, int, When]) -> None:
    """What a run after a crash at `point` observed is what the uninterrupted run did."""
    _, tool, nth, when = point
    assert got == expected, (f"crash at {tool} #{nth} {when} did not converge: "
                             f"remote +{set(got[0]) - set(expected[0])} -{set(expected[0]) - set(got[0])}")


def consistent_rows(world: World, state: Path) -> list[Any]:
    """The state file's active registry rows, once the notebook holds no two sources of one title, every row's
    source is listed under the row's title, every listed source has a row, and nothing waits to be deleted."""
    from nlmsync.store import StateStore

    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    assert len(titles) == len(set(titles)), "duplicate sources"
    store = StateStore.open(state, world.settings)
    try:
        active = [r for r in store.all_mappings(world.notebook_id) if r.status == "active"]
        assert {r.source_id for r in active} == set(remote), "orphans or dangling registry rows"
        for row in active:
            assert remote[row.source_id].title == row.title
        assert store.pending_deletions(world.notebook_id) == []
    finally:
        store.close()
    return active


@dataclass
class Reference:
    """A crash-point scenario: the world just before its `refresh --all`, the mutating calls that refresh makes
    by tool when nothing goes wrong, and what `observe` saw after it (what every crash point must converge to)."""

    snapshot: Snapshot
    calls: dict[str, int]
    expected: tuple[Any, ...]


Observe = Callable[[World, Path], tuple[Any, ...]]


def uninterrupted_refresh_all(root: Path, capacity: int, build: Callable[[World], Awaitable[None]],
                              settings: dict[str, Any], observe: Observe) -> Reference:
    """A world under `root` built by `build` and snapshotted, then the `refresh --all` under test run on a copy of
    it without a fault."""
    world = new_world(root, capacity=capacity)
    anyio.run(build, world)
    snapshot = Snapshot.take(world, capacity)
    reference, state = snapshot.restore(world.root / "reference", Faults())

    async def refresh() -> None:
        async with reference.run(state=state, **settings) as orch:
            await orch.refresh(all_notes=True)

    anyio.run(refresh)
    calls = {tool: reference.calls(tool) for tool in ("source_add", "source_delete")}
    return Reference(snapshot, calls, observe(reference, state))


async def refresh_all_converges(reference: Reference, root: Path, point: tuple[str, str, int, When],
                                settings: dict[str, Any], observe: Observe) -> None:
    """A `refresh --all` crashed at `point` and run again reaches what the uninterrupted one did."""
    world, state = await crash_and_rerun(reference.snapshot, root, point, lambda orch: orch.refresh(all_notes=True),
                                         settings)
    assert_converged(observe(world, state), reference.expected, point)


def crash_points(calls: dict[str, int], fast: tuple[str, str, int, When]) -> list[Any]:
    """Every crash point of a run making `calls` (tool -> how many): each mode, call and side; all but `fast` slow."""
    return [pytest.param(mode, tool, nth, when, id=f"{mode}-{tool}#{nth}-{when}",
                         marks=() if (mode, tool, nth, when) == fast else pytest.mark.slow)
            for mode in ("drop", "kill") for tool, total in calls.items()
            for nth in range(1, total + 1) for when in ("before", "after")]


def packs_only(world: World, state: Path) -> dict[str, list[str]]:
    """The notes each pack of a notebook that holds packs alone holds (by the pack's source id), checked as such:
    no two sources of one title, every source a pack the state file records (no orphan, no file or note left
    alone), no deletion left pending."""
    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    assert len(titles) == len(set(titles)), "duplicate sources"
    store = StateStore.open(state, world.settings)
    try:
        packs = store.packs(world.notebook_id)
        assert {p.source_id for p in packs} == set(remote), "orphans, sources left alone, or dangling packs"
        assert store.all_mappings(world.notebook_id) == []
        assert store.pending_deletions(world.notebook_id) == []
        for pack in packs:
            assert remote[pack.source_id].title == pack.title
        return {p.source_id: [path for path, _ in store.notes_of_pack(world.notebook_id, p.source_id)] for p in packs}
    finally:
        store.close()
