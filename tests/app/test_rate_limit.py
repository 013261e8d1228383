"""A rate-limited `source_add` (RESOURCE_EXHAUSTED) is a definite "not applied": the run pauses, goes on at a
lower rate and says so; past the bounded pauses the remaining notes fail with the reason (exit 6). The pauses
go through the injected sleep, so nothing here waits."""

from __future__ import annotations

import pytest
from tests.app.world import stopped_report

from nlmsync.errors import PartialFailure
from nlmsync.fake.faults import Faults, RateLimitRule
from nlmsync.notebooklm.retry import RATE_LIMIT_PAUSES
from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_a_rate_limited_burst_pauses_once_and_every_note_is_still_added(make_world):
    world = make_world(faults=Faults(rate_limits=[RateLimitRule("source_add", 1), RateLimitRule("source_add", 2)]))
    for i in range(5):
        world.write(f"n{i}.md", f"note {i}")
    sleeps = Sleeps()
    async with world.run(sleep=sleeps) as orch:
        report = await orch.refresh([f"n{i}.md" for i in range(5)])
    assert [n.branch for n in report.notes] == [Branch.ADDED] * 5
    assert len(world.remote()) == 5 and world.calls("source_add") == 7  # two refused, sent again once each
    assert report.notices == [("NotebookLM rate-limited uploads: paused once (10 s in all) and went on at 20 adds "
                              "per minute")]
    assert sleeps.delays[0] == pytest.approx(RATE_LIMIT_PAUSES[0], abs=1)  # the pause (then 3 s between adds)


async def test_a_limit_that_persists_fails_the_remaining_notes_with_the_reason(make_world):
    world = make_world(faults=Faults(rate_limits=[RateLimitRule("source_add")]), concurrency=1)
    for i in range(8):
        world.write(f"n{i}.md", f"note {i}")
    sleeps = Sleeps()
    async with world.run(sleep=sleeps) as orch:
        with pytest.raises(PartialFailure) as caught:
            await orch.refresh([f"n{i}.md" for i in range(8)])
    report = stopped_report(caught.value)
    assert caught.value.exit_code == 6 and [n.branch for n in report.notes] == [Branch.FAILED] * 8
    assert world.remote() == {} and world.calls("source_add") == len(RATE_LIMIT_PAUSES) + 1  # then none is tried
    gave_up = f"paused {len(RATE_LIMIT_PAUSES)} times ({sum(RATE_LIMIT_PAUSES):g} s in all), then gave up"
    assert "RESOURCE_EXHAUSTED" in report.notes[0].error and gave_up in report.notes[0].error
    assert all(n.error.startswith("uploading to the notebook: not tried: ") and gave_up in n.error for n in report.notes[1:])
    assert report.notices == [f"NotebookLM kept rate-limiting uploads: {gave_up} on the remaining adds"]
    assert len(sleeps.delays) == len(RATE_LIMIT_PAUSES)  # one wait before each add sent again
