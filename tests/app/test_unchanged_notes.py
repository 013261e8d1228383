"""Notes recognised unchanged by their file's stat (`note_hashes`): an idle refresh reads none of them, and
every change still shows — an edit, a same-size edit within the timestamp tick, a deleted source, a move,
a new exclude pattern."""

from __future__ import annotations

import os
import time

import pytest

from nlmsync.sync.branches import Branch
from nlmsync.sync.prepared import RACY_MTIME_NS

pytestmark = pytest.mark.anyio

LONG_AGO_NS = time.time_ns() - 100 * RACY_MTIME_NS


def write_old(world, rel: str, text: str, mtime_ns: int = LONG_AGO_NS) -> None:
    """Write a note last modified long ago (as most notes of a vault are at refresh time)."""
    world.write(rel, text)
    os.utime(world.vault / rel, ns=(mtime_ns, mtime_ns))


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The notes read from the vault, by path below its `vault` folder (every reader of a note's text goes
    through the admission rule's read)."""
    from nlmsync.text import admission  # read_file_bytes is patched where the admission rule calls it

    done: list[str] = []
    read = admission.read_file_bytes  # type: ignore[attr-defined]

    def counting(path, size=0):
        done.append(os.fspath(path).split(f"{os.sep}vault{os.sep}", 1)[-1].replace(os.sep, "/"))
        return read(path, size)

    monkeypatch.setattr(admission, "read_file_bytes", counting)
    return done


async def test_an_idle_refresh_reads_no_note_whose_file_is_unchanged(make_world, reads):
    world = make_world()
    for i in range(20):
        write_old(world, f"notes/n{i:02}.md", f"# Note {i}\n\nbody {i}\n")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert len(reads) == 20
    reads.clear()
    async with world.run() as orch:
        statements: list[str] = []
        orch.store.db.conn.set_trace_callback(statements.append)
        report = await orch.refresh(all_notes=True)
        orch.store.db.conn.set_trace_callback(None)
    assert report.counts() == {"reused": 20}
    assert reads == []
    assert sum(1 for s in statements if s.startswith("BEGIN")) == 1


async def test_an_edited_note_is_read_and_replaced(make_world, reads):
    world = make_world()
    write_old(world, "a.md", "alpha")
    write_old(world, "b.md", "beta")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    world.write("b.md", "beta, edited")
    reads.clear()
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert {n.path: n.branch for n in report.notes} == {"a.md": Branch.REUSED, "b.md": Branch.REPLACED}
    assert reads == ["b.md"]
    assert sorted(world.remote_texts().values()) == ["alpha", "beta, edited"]


async def test_a_note_modified_just_before_it_was_read_is_read_again(make_world):
    """A write in the same timestamp tick keeps mtime and size: a note read within `RACY_MTIME_NS` of its
    mtime gets no record, so an edit that restores both is still seen."""
    world = make_world()
    world.write("a.md", "alpha one")
    mtime = (world.vault / "a.md").stat().st_mtime_ns
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    write_old(world, "a.md", "alpha two", mtime_ns=mtime)
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
    assert report.notes[0].branch == Branch.REPLACED
    assert list(world.remote_texts().values()) == ["alpha two"]


async def test_a_recorded_note_whose_source_is_gone_is_read_and_uploaded_again(make_world):
    world = make_world()
    write_old(world, "a.md", "alpha")
    async with world.run() as orch:
        old = (await orch.refresh(["a.md"])).notes[0].source_ids[0]
    world.fake.apply("source_delete", {"source_id": old, "confirm": True})
    async with world.run() as orch:
        note = (await orch.refresh(["a.md"])).notes[0]
    assert note.branch == Branch.ADDED and note.source_ids != [old]
    assert list(world.remote_texts().values()) == ["alpha"]


async def test_a_moved_note_with_a_record_takes_the_rename_branch(make_world):
    world = make_world()
    for i in range(4):
        write_old(world, f"notes/n{i}.md", f"# Note {i}\n")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "moved").mkdir()
    (world.vault / "notes/n2.md").rename(world.vault / "moved/n2.md")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        assert orch.store.note_hashes(["notes/n2.md"]) == {}
    assert report.counts() == {"renamed": 1, "reused": 3}
    assert world.calls("source_add", mark) == 0


async def test_a_new_exclude_pattern_applies_to_a_recorded_note(make_world, reads):
    world = make_world()
    write_old(world, "a.md", "alpha")
    write_old(world, "private/b.md", "beta")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    reads.clear()
    async with world.run(exclude=["private/**"]) as orch:
        report = await orch.refresh(all_notes=True)
    assert sorted((n.path, n.branch) for n in report.notes) == [
        ("a.md", Branch.REUSED), ("private/b.md", Branch.EXCLUDED), ("private/b.md", Branch.REMOVED)]
    assert reads == []
    assert list(world.remote_texts().values()) == ["alpha"]


async def test_status_calls_changed_only_what_refresh_changes_and_reads_only_notes_whose_stat_changed(make_world,
                                                                                                      reads):
    world = make_world()
    write_old(world, "inbox.md", "# Inbox\n\nbuy milk\n")
    write_old(world, "other.md", "# Other\n\nkept as it is\n")
    async with world.run() as orch:
        await orch.refresh(["inbox.md", "other.md"])
    # a same-size edit with the file's mtime put back, as some sync tools and editors leave it: by its stat the
    # note is unchanged, and refresh reuses its source — so status must not call it changed either
    write_old(world, "inbox.md", "# Inbox\n\nbuy eggs\n")
    reads.clear()
    async with world.run() as orch:
        status = await orch.status()
        assert status.local_changes == [] and status.next_steps == []
        assert reads == []  # no note's stat changed: none is read
        assert (await orch.refresh(["inbox.md"])).notes[0].branch == Branch.REUSED
    # an edit that changes the stat is read, shown, and refreshed
    write_old(world, "other.md", "# Other\n\nchanged after all\n", LONG_AGO_NS + 1_000_000_000)
    reads.clear()
    async with world.run() as orch:
        status = await orch.status()
        assert [(c.path, c.change) for c in status.local_changes] == [("other.md", "modified")]
        assert reads == ["other.md"]
        assert (await orch.refresh(["other.md"])).notes[0].branch == Branch.REPLACED
