"""The one line of a refresh where notes failed says truly what else happened (exit 6)."""

from __future__ import annotations

import pytest

from nlmsync.errors import PartialFailure
from nlmsync.notebooklm.fake.faults import ErrorRule, Faults

pytestmark = pytest.mark.anyio


async def refresh_failing(world, paths: list[str]) -> PartialFailure:
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as caught:
            await orch.refresh(paths)
    assert caught.value.exit_code == 6
    return caught.value


async def test_when_every_note_failed_it_says_nothing_was_done(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error")]))
    world.write("a.md", "alpha")
    world.write("b.md", "beta")
    failure = await refresh_failing(world, ["a.md", "b.md"])
    assert str(failure) == "all 2 notes failed; nothing was done (first: a.md: source_add: Internal error)"


async def test_a_single_note_that_failed(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error")]))
    world.write("a.md", "alpha")
    failure = await refresh_failing(world, ["a.md"])
    assert str(failure) == "the one note failed; nothing was done (first: a.md: source_add: Internal error)"


async def test_when_some_were_done_it_says_the_rest_were_recorded(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error", nth=2)]))
    for name in ("a", "b", "c"):
        world.write(f"{name}.md", name)
    failure = await refresh_failing(world, ["a.md", "b.md", "c.md"])
    assert str(failure) == ("1 of 3 notes failed; the rest were done and recorded "
                            "(first: b.md: source_add: Internal error)")


async def test_failed_notes_next_to_excluded_ones_did_nothing(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error")]))
    world.write("a.md", "alpha")
    world.write("private.md", "---\nnlmsync: false\n---\nsecret")
    failure = await refresh_failing(world, ["a.md", "private.md"])
    assert str(failure) == "1 of 2 notes failed; nothing was done (first: a.md: source_add: Internal error)"


async def test_the_servers_own_tool_prefix_is_not_doubled(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "source_add failed: backend unavailable")]))
    world.write("a.md", "alpha")
    failure = await refresh_failing(world, ["a.md"])
    assert failure.report.failed[0].error == "source_add failed: backend unavailable"
