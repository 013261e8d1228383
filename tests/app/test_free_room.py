"""Sources the user added in the room packs leave free (`pack_free`): a change costs uploads in proportion to the
change — the packs are merged a few neighbours at a time until they fit again, the rest stay as they are — and no
old pack is deleted before the pack that takes its notes is in, but for the first merge when no source is free."""

from __future__ import annotations

from typing import Any

import pytest
from tests.app.notebook_checks import assert_mirrored, fill, note_text, watch_for_notes_out, write_note

from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio

PACKED: dict[str, Any] = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 3}


async def mirror(device, **settings: object):
    async with device.run(**PACKED, **settings) as orch:
        return await orch.refresh(all_notes=True)


def hand_add(world, count: int) -> set[str]:
    return {world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                            "text": f"my own notes {i}", "title": f"Mine {i}"})["source_id"]
            for i in range(count)}


@pytest.mark.parametrize("mine", [2, 3])
async def test_sources_added_in_the_free_room_cost_a_merge_each_not_a_new_layout(make_world, mine: int):
    world = make_world(capacity=50)
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 110, folders=5, pad=2)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=22)  # packs too full to merge in pairs
    capacity = world.fake.capacity = len(first.packs) + PACKED["pack_free"]  # full but for `pack_free`
    assert len(first.packs) > 15
    ours = hand_add(world, mine)
    write_note(laptop.vault, paths[70], note_text(70, 2))
    mark = len(world.fake.calls)
    out = watch_for_notes_out(world, laptop.vault)
    report = await mirror(laptop, capacity=capacity)
    changed = [p for p in report.packs if p.branch != Branch.REUSED]
    adds, deletes = world.calls("source_add", mark), world.calls("source_delete", mark)
    # the edited note's pack, and `mine` merges, each of the fewest neighbours that fit in one pack fewer (three
    # into two: no two of these packs fit in one); the other packs stay
    assert adds <= 1 + 2 * mine and deletes <= 1 + 3 * mine, [(p.branch, p.reason) for p in changed]
    assert len(world.remote()) <= capacity
    if mine < PACKED["pack_free"]:
        assert out == []  # no old pack deleted before the packs that hold its notes were in
    else:  # no free source: until the first merge freed one, an old pack is deleted just before the pack that
        # takes its notes (three packs cut into two: twice), and then no more
        assert len(out) <= 2 and all(len(o) <= max(len(p.paths) for p in first.packs) for o in out), out
    assert_mirrored(world, laptop.vault, hand_added=ours)
    mark = len(world.fake.calls)
    await mirror(laptop)
    assert world.mutating_calls(mark) == []


@pytest.mark.parametrize("retitle", ["My renamed pack", "same title, other hash"])
async def test_a_fresh_machine_over_a_notebook_with_a_retitled_pack_merges_to_fit(make_world, retitle: str):
    """One pack retitled by the user is a source of the user's: its notes go into a pack again, and the packs taken
    by their titles are merged to make room, as any of the run's packs would be."""
    world = make_world(capacity=50)
    laptop, runner = world.device("laptop"), world.device("runner")
    fill(laptop.vault, 110, folders=5, pad=2)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=22)
    capacity = len(first.packs) + PACKED["pack_free"]
    world.fake.capacity = capacity
    pack = first.packs[len(first.packs) // 2]
    title = retitle if retitle.startswith("My") else pack.title[:-8] + "0badf00d"
    world.fake.apply("source_rename", {"notebook_id": world.notebook_id, "source_id": pack.source_id,
                                       "new_title": title})
    runner.sync_from(laptop, state=False)
    await mirror(runner, notebook=world.notebook_id, capacity=capacity)
    assert_mirrored(world, runner.vault, hand_added={pack.source_id})
    assert len(world.remote()) <= capacity
    mark = len(world.fake.calls)
    await mirror(runner, capacity=capacity)
    assert world.mutating_calls(mark) == []
