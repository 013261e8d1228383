"""A plan downgrade: a notebook mirrored on Pro (300 sources) whose plan becomes Standard — `usage_get` reports the
Standard tier and the server refuses adds past 50. The runs that follow, with no `capacity` given, believe the
plan once the server refuses at it, merge the packs down to fit, and never delete a pack whose successor is then
refused."""

from __future__ import annotations

from typing import Any

import pytest
from tests.app.notebook_checks import assert_mirrored, fill, note_text, write_note

from nlmsync.errors import CapacityError
from nlmsync.fake.faults import TIERS

pytestmark = pytest.mark.anyio

TINY: dict[str, Any] = {"pack": "always", "source_max_bytes": 1_000, "pack_free": 3}


async def mirror(device, all_notes: bool = True, **settings: object):
    async with device.run(**TINY, **settings) as orch:
        return await orch.refresh(all_notes=all_notes)


def downgraded(world) -> None:
    """The plan becomes Standard: the server reports it and refuses an add once the notebook holds 50."""
    world.fake.capacity = 50
    world.fake.faults.tier = TIERS["standard"]


@pytest.mark.parametrize("all_notes", [True, False], ids=["refresh --all", "refresh"])
async def test_a_plan_downgrade_merges_the_packs_down_to_the_plan(make_world, all_notes: bool):
    world = make_world(capacity=300)
    world.fake.faults.tier = TIERS["pro"]
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 62, folders=6, pad=12)
    await mirror(laptop, notebook=world.notebook_id)
    assert len(world.remote()) > 55
    downgraded(world)
    for i in (5, 25, 45):
        write_note(laptop.vault, paths[i], note_text(i, 2))
    held = len(world.remote())
    outcomes = []
    for _ in range(3):
        mark = len(world.fake.calls)
        try:
            await mirror(laptop, all_notes)
        except CapacityError as exc:
            outcomes.append(("full", exc.message))
            assert "more than its plan allows (50)" in exc.message
        else:
            outcomes.append(("done", ""))
        refused = [c for c in world.fake.calls[mark:] if c.tool == "source_add" and not c.applied]
        deleted = [c for c in world.fake.calls[mark:] if c.tool == "source_delete"]
        # a run that is refused deletes nothing first
        assert not (refused and deleted), outcomes
        if outcomes[-1][0] == "done":
            break
        assert len(world.remote()) == held
    assert outcomes[-1][0] == "done", outcomes
    assert len(outcomes) <= 2, outcomes
    assert len(world.remote()) <= 50 - TINY["pack_free"]
    assert_mirrored(world, laptop.vault)
    mark = len(world.fake.calls)
    await mirror(laptop)
    assert world.mutating_calls(mark) == []
