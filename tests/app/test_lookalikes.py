"""A source someone added by hand under the title nlmsync would give a note is not nlmsync's: its identity is
established by the registry or by the text the server holds, never by the title alone (`sync/adopt.py`).
Such a look-alike is never adopted, deleted or evicted, and the report says it was left alone as unmanaged."""

from __future__ import annotations

import pytest

from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title, title_hash

pytestmark = pytest.mark.anyio

NOTE = "# Inbox\n\nBuy milk.\n\n\n   Call Ada about the heap.  \n"


def hand_add(world, title: str, text: str) -> str:
    return world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": text,
                                           "title": title})["source_id"]


async def test_a_lookalike_of_a_note_never_synced_is_not_adopted_and_survives_every_later_run(make_world):
    world = make_world()
    world.write("inbox.md", NOTE)
    title = source_title("inbox.md", title_hash(NOTE))
    mine = hand_add(world, title, "My own notes on the inbox.")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    note = report.notes[0]
    assert (note.branch, note.adopted) == (Branch.ADDED, False) and note.source_ids != [mine]
    assert report.notices == [(f"source {mine} is titled like an nlmsync upload ({title}) but does not hold that "
                              "text; left alone as unmanaged")]
    assert world.fake.source(mine) is not None and world.fake.source(mine).text == "My own notes on the inbox."
    uploaded = note.source_ids[0]
    assert world.fake.source(uploaded).text == NOTE

    mark = len(world.fake.calls)
    async with world.run() as orch:  # nothing changed: no change, and the look-alike is not taken for a duplicate
        again = await orch.refresh(all_notes=True)
    assert [n.branch for n in again.notes] == [Branch.REUSED] and world.mutating_calls(mark) == []

    world.write("inbox.md", NOTE + "\nMore.\n")  # replace: the old upload goes, the look-alike stays
    async with world.run() as orch:
        replaced = await orch.refresh(all_notes=True)
    assert replaced.notes[0].branch == Branch.REPLACED
    assert set(world.remote()) == {mine, replaced.notes[0].source_ids[0]}


async def test_a_lookalike_of_a_synced_note_is_not_deleted_as_a_duplicate(make_world):
    world = make_world()
    world.write("inbox.md", NOTE)
    async with world.run() as orch:
        kept = (await orch.refresh(all_notes=True)).notes[0].source_ids[0]
    title = source_title("inbox.md", title_hash(NOTE))
    mine = hand_add(world, title, "Not the note at all.")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        status = await orch.status()
    assert report.pending_deletions_done_count == 0 and [n.branch for n in report.notes] == [Branch.REUSED]
    assert set(world.remote()) == {kept, mine}
    assert len(report.notices) == 1 and report.notices[0].startswith(f"source {mine} is titled like")
    assert status.source_count == 2 and status.orphan_source_ids == [] and status.unmanaged_count == 1
    assert status.next_steps == []  # nothing to adopt: the look-alike is simply not nlmsync's


async def test_a_lookalike_is_never_evicted_and_counts_against_capacity(make_world):
    world = make_world(capacity=2)
    world.write("a.md", "alpha")
    world.write("b.md", "beta")
    mine = hand_add(world, source_title("a.md", title_hash("alpha")), "someone else's alpha")
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
    assert report.notes[0].branch == Branch.ADDED and not report.notes[0].adopted
    async with world.run() as orch:  # full: b needs a slot, and only a.md (nlmsync's own) may be evicted
        report = await orch.refresh(["b.md"])
    assert [(n.path, n.branch) for n in report.notes] == [("a.md", Branch.EVICTED), ("b.md", Branch.ADDED)]
    assert mine in world.remote()


async def test_a_lost_upload_is_still_adopted_though_the_server_reflows_its_text(make_world):
    """Crash recovery: an earlier run's add landed but was never recorded. The server hands the text back
    re-joined by blank lines (as the real one does), and the words are the same: adopted, not uploaded again."""
    world = make_world()
    world.write("inbox.md", NOTE)
    lost = hand_add(world, source_title("inbox.md", title_hash(NOTE)), NOTE)
    assert world.fake.apply("source_get_content", {"source_id": lost})["content"] != NOTE
    world.fake.calls.clear()
    async with world.run() as orch:
        report = await orch.refresh(["inbox.md"])
    note = report.notes[0]
    assert (note.branch, note.adopted, note.source_ids) == (Branch.REUSED, True, [lost])
    assert world.mutating_calls() == []
    assert report.notices == [("adopted 1 source the state file did not know (uploaded by another machine or an "
                               "interrupted run): 1 note")]
