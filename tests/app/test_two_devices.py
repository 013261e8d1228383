"""Two devices refreshing one notebook at the same time: what the other device does between this run's listing and
its calls is met for what it is — a notebook the other device filled is full (exit 3), not failed packs — and a
run that exits 0 leaves every note of the vault in a source, even when the other device deleted one the run
counted on."""

from __future__ import annotations

import pytest
from tests.app.notebook_checks import assert_mirrored, fill, held_notes, note_text, vault_notes, write_note

from nlmsync.errors import CapacityError
from nlmsync.fake.faults import TIERS
from nlmsync.fake.replies import indexed_text

pytestmark = pytest.mark.anyio

PACKED = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 3}


class OtherDevice:
    """The real client, but just before this run's first call of `tool` another device changes the notebook
    (`act`, on the fake)."""

    def __init__(self, client, tool: str, act) -> None:
        self._client, self._tool, self._act = client, tool, act
        self.acted = False

    def __getattr__(self, name):
        return getattr(self._client, name)

    def _maybe(self, tool: str) -> None:
        if tool == self._tool and not self.acted:
            self.acted = True
            self._act()

    async def source_add_text(self, *args, **kwargs):
        self._maybe("source_add")
        return await self._client.source_add_text(*args, **kwargs)

    async def source_delete(self, *args, **kwargs):
        self._maybe("source_delete")
        return await self._client.source_delete(*args, **kwargs)


def notes_in_no_source(world, vault) -> list[str]:
    notes = set(vault_notes(vault))
    sources = {s.id: (s.title, indexed_text(s.text)) for s in world.fake.notebooks[world.notebook_id].sources.values()}
    return sorted(notes - set(held_notes(sources, notes)))


async def test_a_notebook_the_other_device_filled_is_full_not_failed(make_world):
    world = make_world(capacity=50)
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 110, folders=5, pad=2)
    async with laptop.run(notebook=world.notebook_id, capacity=50, **PACKED) as orch:
        await orch.refresh(all_notes=True)
    held = len(world.remote())
    assert held < 50
    theirs: list[str] = []

    def fill_up() -> None:  # the desktop's new packs land first: it deletes the ones they replace afterwards
        for i in range(50 - held):
            theirs.append(world.fake.apply("source_add", {
                "notebook_id": world.notebook_id, "source_type": "text", "text": f"desktop pack {i}",
                "title": f"z/{i}.md … z/{i}b.md (2 notes) · {i:08x}"})["source_id"])

    write_note(laptop.vault, paths[7], note_text(7, 2))
    mark = len(world.fake.calls)
    with pytest.raises(CapacityError) as raised:
        async with world.run_with(laptop.settings(**PACKED),
                                  wrap=lambda client: OtherDevice(client, "source_add", fill_up)) as orch:
            await orch.refresh(all_notes=True)
    assert "full" in raised.value.message
    assert world.calls("source_delete", mark) == 0 and notes_in_no_source(world, laptop.vault) == []
    for source_id in theirs:  # the desktop's run deletes what its packs replaced
        world.fake.apply("source_delete", {"source_id": source_id, "confirm": True})
    async with laptop.run(**PACKED) as orch:
        await orch.refresh(all_notes=True)
    assert_mirrored(world, laptop.vault)


@pytest.mark.parametrize(("deleted", "said"), [(1, "1 source this run counted on was deleted"),
                                               (2, "2 sources this run counted on were deleted")])
async def test_a_run_that_exits_0_leaves_no_note_out_though_the_other_device_deleted_a_pack(make_world, deleted: int,
                                                                                           said: str):
    world = make_world(capacity=50)
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 110, folders=5, pad=2)
    async with laptop.run(notebook=world.notebook_id, capacity=50, **PACKED) as orch:
        first = await orch.refresh(all_notes=True)
    kept = [p for p in first.packs if paths[7] not in p.paths and paths[8] not in p.paths][:deleted]

    def delete_kept() -> None:  # the desktop deletes packs this run reuses (copies, to its older vault)
        for pack in kept:
            world.fake.apply("source_delete", {"source_id": pack.source_id, "confirm": True})

    write_note(laptop.vault, paths[7], note_text(7, 2))
    async with world.run_with(laptop.settings(**PACKED),
                              wrap=lambda client: OtherDevice(client, "source_delete", delete_kept)) as orch:
        report = await orch.refresh(all_notes=True)
    assert notes_in_no_source(world, laptop.vault) == []
    for pack in kept:
        assert any(p.paths == pack.paths and p.branch != "reused" for p in report.packs), report.packs
    assert f"another device changed the notebook during this run: {said}, and their notes uploaded again" \
        in report.notices, report.notices
    assert_mirrored(world, laptop.vault)


async def test_two_devices_through_a_plan_downgrade_and_sources_added_in_the_free_room(make_world):
    """Two devices, each with its own state file, refresh in turn while the plan is downgraded under them and the
    user adds sources in the room packs leave free: every run that exits 0 leaves every note of its vault in a
    source, and both end with the notebook mirrored, within the plan, and idle runs that change nothing."""
    world = make_world(capacity=300)
    world.fake.faults.tier = TIERS["pro"]
    laptop, desktop = world.device("laptop"), world.device("desktop")
    paths = fill(laptop.vault, 55, folders=5, pad=12)
    tiny = {"pack": "always", "source_max_bytes": 1_000, "pack_free": 3}

    async def refresh(device) -> str:
        try:
            async with device.run(**tiny) as orch:
                await orch.refresh(all_notes=True)
        except CapacityError:
            return "full"
        assert notes_in_no_source(world, device.vault) == []
        return "done"

    async with laptop.run(notebook=world.notebook_id, **tiny) as orch:
        await orch.refresh(all_notes=True)
    desktop.sync_from(laptop, state=False)
    async with desktop.run(notebook=world.notebook_id, **tiny) as orch:
        await orch.refresh(all_notes=True)
    world.fake.capacity, world.fake.faults.tier = 50, TIERS["standard"]  # the plan downgraded
    mine: set[str] = set()
    said = []
    for round_ in range(3):
        write_note(laptop.vault, paths[round_ * 7], note_text(round_ * 7, 10 + round_))
        said.append(await refresh(laptop))
        desktop.sync_from(laptop, state=False)
        write_note(desktop.vault, paths[round_ * 11 + 3], note_text(round_ * 11 + 3, 20 + round_))
        said.append(await refresh(desktop))
        laptop.sync_from(desktop, state=False)
        if not mine and len(world.remote()) < 50:  # the user adds sources of their own in the free room
            mine = {world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                                    "text": f"mine {i}", "title": f"Mine {i}"})["source_id"]
                    for i in range(2)}
    assert said.count("full") <= 2, said
    for device in (laptop, desktop):
        assert await refresh(device) == "done"
    assert mine and len(world.remote()) <= 50, (said, len(world.remote()))
    assert_mirrored(world, laptop.vault, hand_added=mine)
    for device in (laptop, desktop, laptop):
        mark = len(world.fake.calls)
        await refresh(device)
        assert world.mutating_calls(mark) == []
