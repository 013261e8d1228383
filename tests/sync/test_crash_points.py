"""Crash points (restic/SQLite style): drop the connection at every mutating call of a scripted refresh,
before and after the server applied it; a second refresh must converge to the state an uninterrupted run
reaches — every selected note live with its current content, no duplicate, no orphan, registry consistent.

Two crash models: "drop" — the fake server drops the connection (the run goes on, the client reconnects);
"kill" — nlmsync itself dies right before or after the call reaches the server (the run stops there, with
whatever it had committed).

Scenario (capacity 20): 18 notes live, then two edits, a rename, a deleted note and seven new notes, so the
refresh replaces, rebinds (and retitles), adds and has to evict five notes.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from nlmsync.errors import PartialFailure
from nlmsync.notebooklm.fake.faults import DropRule, Faults
from nlmsync.notebooklm.fake.state import FakeNotebookLM
from nlmsync.store import StateStore

pytestmark = pytest.mark.anyio

CAPACITY = 20
REQUESTED = ["n00.md", "n01.md", "n02.md", "moved/r03.md", "n05.md", "n06.md", "n07.md", "n08.md",
             *[f"n{i:02}.md" for i in range(18, 25)]]


def note_text(i: int, version: int = 1) -> str:
    return f"# Note {i}\n\nVersion {version} of note {i}.\n\n## Details\nSome words about topic {i}.\n"


class Killed(BaseException):
    """nlmsync killed mid-run (a BaseException, so no `except Exception` in the code under test stops it)."""


class KillingClient:
    """The real client, except that the Nth call of one mutating tool kills the run before or after it."""

    def __init__(self, client, tool: str, nth: int, when: str) -> None:
        self._client, self._tool, self._nth, self._when = client, tool, nth, when
        self._count = 0
        self.fired = False

    def __getattr__(self, name):
        return getattr(self._client, name)

    async def _call(self, tool, method, *args, **kwargs):
        number = 0
        if tool == self._tool:
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

    async def source_delete(self, *args, **kwargs):
        return await self._call("source_delete", self._client.source_delete, *args, **kwargs)

    async def source_rename(self, *args, **kwargs):
        return await self._call("source_rename", self._client.source_rename, *args, **kwargs)


def _contains_killed(exc: BaseException) -> bool:
    if isinstance(exc, Killed):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_contains_killed(e) for e in exc.exceptions)


async def build_base(world) -> None:
    for i in range(30):
        world.write(f"n{i:02}.md", note_text(i))
    async with world.run() as orch:
        await orch.refresh([f"n{i:02}.md" for i in range(18)])
        await orch.refresh([f"n{i:02}.md" for i in range(5, 10)])  # used twice: protected segment
    world.write("n01.md", note_text(1, 2))
    world.write("n02.md", note_text(2, 2))
    (world.vault / "moved").mkdir()
    (world.vault / "n03.md").rename(world.vault / "moved/r03.md")
    (world.vault / "n04.md").unlink()


def snapshot_state(world, target: Path) -> None:
    target.mkdir(parents=True)
    for f in world.settings.state_path.parent.glob(world.settings.state_path.name + "*"):
        if not f.name.endswith(".lock"):
            shutil.copy2(f, target / f.name)


def observe(world, state: Path) -> tuple[object, ...]:
    """Everything that must be equal between runs, with source ids replaced by what they hold."""
    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    assert len(titles) == len(set(titles)), "duplicate sources"
    store = StateStore.open(state, world.settings)
    try:
        rows = store.all_mappings(world.notebook_id)
        active = [r for r in rows if r.status == "active"]
        registered = {r.source_id for r in active}
        assert registered == set(remote), "orphans or dangling registry rows"
        for row in active:
            assert remote[row.source_id].title == row.title
        assert store.pending_deletions(world.notebook_id) == []
        registry = sorted((r.path, r.part, r.content_hash, r.title) for r in active)
    finally:
        store.close()
    for path in REQUESTED:
        current = (world.vault / path).read_text(encoding="utf-8")
        live = [remote[r[0]].text for r in sorted(((r.source_id, r.part) for r in active if r.path == path),
                                                  key=lambda x: x[1])]
        assert "".join(live) == current, f"{path} is not live with its current content"
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(registry)


@pytest.mark.parametrize("mode", ["drop", "kill"])
async def test_every_crash_point_converges(make_world, tmp_path, mode):
    world = make_world(capacity=CAPACITY)
    await build_base(world)
    base_notebooks = copy.deepcopy(world.fake.notebooks)
    base_state = tmp_path / "base"
    snapshot_state(world, base_state)

    def restore(name: str, faults: Faults) -> Path:
        fake = FakeNotebookLM(capacity=CAPACITY, faults=faults)
        fake.notebooks = copy.deepcopy(base_notebooks)
        world.fake = fake
        target = tmp_path / name
        shutil.copytree(base_state, target)
        return target / world.settings.state_path.name

    state = restore("reference", Faults())
    async with world.run(state=state) as orch:
        report = await orch.refresh(REQUESTED)
    counts = report.counts()
    assert counts == {"reused": 5, "replaced": 2, "renamed": 1, "added": 7, "evicted": 5}
    expected = observe(world, state)
    calls = {tool: world.calls(tool) for tool in ("source_add", "source_delete", "source_rename")}
    assert calls == {"source_add": 9, "source_delete": 7, "source_rename": 1}

    points = [(tool, nth, when) for tool, total in calls.items() for nth in range(1, total + 1)
              for when in ("before", "after")]
    for tool, nth, when in points:
        if mode == "drop":
            state = restore(f"{tool}-{nth}-{when}", Faults(drops=[DropRule(nth=nth, tool=tool, when=when)]))
            async with world.run(state=state) as orch:
                try:
                    await orch.refresh(REQUESTED)
                except PartialFailure:
                    pass
            fired = any(c.dropped == when or (when == "before" and not c.applied and c.tool == tool)
                        for c in world.fake.calls)
        else:
            state = restore(f"{tool}-{nth}-{when}", Faults())
            killer: list[KillingClient] = []

            def wrap(client, tool=tool, nth=nth, when=when, killer=killer):
                killer.append(KillingClient(client, tool, nth, when))
                return killer[0]

            try:
                async with world.run(wrap=wrap, state=state) as orch:
                    await orch.refresh(REQUESTED)
            except BaseException as exc:  # the simulated kill, possibly inside exception groups
                if not _contains_killed(exc):
                    raise
            fired = killer[0].fired
        assert fired, f"{tool} #{nth} {when}: the fault never fired"
        world.fake.faults = Faults()
        async with world.run(state=state) as orch:
            await orch.refresh(REQUESTED)
        got = observe(world, state)
        assert got == expected, (f"crash at {tool} #{nth} {when} did not converge: "
                                 f"remote +{set(got[0]) - set(expected[0])} -{set(expected[0]) - set(got[0])}")
