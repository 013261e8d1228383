"""The one line of a refresh where notes failed says truly what else happened (exit 6)."""

from __future__ import annotations

import pytest
from tests.app.world import stopped_report

from nlmsync.errors import PartialFailure
from nlmsync.fake.faults import ErrorRule, Faults

pytestmark = pytest.mark.anyio


async def refresh_failing(world, paths: list[str]) -> PartialFailure:
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as caught:
            await orch.refresh(paths)
    assert caught.value.exit_code == 6
    return caught.value


@pytest.mark.parametrize(("notes", "failing_add", "message"), [
    pytest.param({"a.md": "alpha", "b.md": "beta"}, None,
                 "all 2 notes failed; nothing was done (first: a.md: uploading to the notebook: Internal error)",
                 id="every-note-failed"),
    pytest.param({"a.md": "alpha"}, None,
                 "the one note failed; nothing was done (first: a.md: uploading to the notebook: Internal error)",
                 id="the-one-note-failed"),
    pytest.param({"a.md": "a", "b.md": "b", "c.md": "c"}, 2,
                 "1 of 3 notes failed; the rest were done and recorded (first: b.md: uploading to the notebook: Internal error)",
                 id="some-were-done"),
    pytest.param({"a.md": "alpha", "private.md": "---\nnlmsync: false\n---\nsecret"}, None,
                 "1 of 2 notes failed; nothing was done (first: a.md: uploading to the notebook: Internal error)",
                 id="the-rest-were-excluded"),
    pytest.param({"a.md": "a", "b.md": "b", "data.txt": "plain words", "more.txt": "other words"}, 3,
                 "1 of 2 attachments failed; the rest were done and recorded "
                 "(first: data.txt: uploading to the notebook: Internal error)",
                 id="attachments-counted-apart"),
    pytest.param({"a.md": "a", "b.md": "b", "data.txt": "plain words"}, None,
                 "all 2 notes and the one attachment failed; nothing was done "
                 "(first: a.md: uploading to the notebook: Internal error)",
                 id="notes-and-attachments-failed"),
])
async def test_the_line_says_truly_what_else_happened(make_world, notes: dict[str, str], failing_add: int | None,
                                                       message: str):
    """`failing_add`: the one `source_add` call that fails, or None for every call."""
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error", nth=failing_add)]))
    for path, text in notes.items():
        world.write(path, text)
    assert str(await refresh_failing(world, list(notes))) == message


async def test_the_servers_own_tool_prefix_becomes_what_nlmsync_was_doing(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "source_add failed: backend unavailable")]))
    world.write("a.md", "alpha")
    failure = await refresh_failing(world, ["a.md"])
    assert stopped_report(failure).failed[0].error == "uploading to the notebook failed: backend unavailable"
