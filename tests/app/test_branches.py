"""Every branch of source preparation (reuse, replace, rename, new upload) against the in-process fake server
and the real state store."""

from __future__ import annotations

import shlex

import pytest
from tests.app.world import notes_done, stopped_report

from nlmsync.errors import CapacityError, InputError, PartialFailure
from nlmsync.fake.faults import ErrorRule, Faults
from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title, title_hash

pytestmark = pytest.mark.anyio


def branches(report):
    return {n.path: n.branch for n in report.notes}


async def test_added_then_reused_with_zero_mutating_calls_and_one_listing(make_world):
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    world.write("b.md", "# B\nbeta\n")
    async with world.run() as orch:
        first = await orch.refresh(["a.md", "b.md"])
    assert branches(first) == {"a.md": Branch.ADDED, "b.md": Branch.ADDED}
    assert sorted(world.remote().values()) == sorted([source_title("a.md", title_hash("# A\nalpha\n")),
                                                      source_title("b.md", title_hash("# B\nbeta\n"))])
    mark = len(world.fake.calls)
    async with world.run() as orch:
        second = await orch.refresh(["a.md", "b.md"])
    assert branches(second) == {"a.md": Branch.REUSED, "b.md": Branch.REUSED}
    assert world.mutating_calls(mark) == []
    assert world.calls("notebook_get", mark) == 1
    assert [n.source_ids for n in second.notes] == [n.source_ids for n in first.notes]


async def test_replace_uploads_first_then_deletes_and_aliases(make_world):
    world = make_world()
    world.write("a.md", "v1")
    async with world.run() as orch:
        old = (await orch.refresh(["a.md"])).notes[0].source_ids[0]
    world.write("a.md", "v2")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        note = (await orch.refresh(["a.md"])).notes[0]
        assert note.branch == Branch.REPLACED and note.previous_source_ids == [old]
        new = note.source_ids[0]
        assert orch.store.resolve_source_id(old) == new
        assert orch.store.pending_deletions(world.notebook_id) == []
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]
    assert world.remote_texts() == {source_title("a.md", title_hash("v2")): "v2"}


async def test_replace_with_failing_delete_keeps_note_and_queues_old(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_delete", "Internal error", nth=1)]))
    world.write("a.md", "v1")
    async with world.run() as orch:
        old = (await orch.refresh(["a.md"])).notes[0].source_ids[0]
    world.write("a.md", "v2")
    async with world.run() as orch:
        note = (await orch.refresh(["a.md"])).notes[0]
        assert note.branch == Branch.REPLACED
        assert [p.source_id for p in orch.store.pending_deletions(world.notebook_id)] == [old]
        assert orch.store.mappings_by_path(world.notebook_id, "a.md")[0].source_id == note.source_ids[0]
    assert old in world.remote()
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
        assert report.pending_deletions_done_count == 1 and report.notes[0].branch == Branch.REUSED
        assert orch.store.pending_deletions(world.notebook_id) == []
    assert list(world.remote()) == [note.source_ids[0]]


async def test_rename_rebinds_without_upload(make_world):
    world = make_world()
    world.write("old/name.md", "same content")
    async with world.run() as orch:
        sid = (await orch.refresh(["old/name.md"])).notes[0].source_ids[0]
    (world.vault / "old/name.md").rename(world.vault / "new.md")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        note = (await orch.refresh(["new.md"])).notes[0]
        assert (note.branch, note.renamed_from, note.source_ids) == (Branch.RENAMED, "old/name.md", [sid])
        assert orch.store.mappings_by_path(world.notebook_id, "old/name.md") == []
        assert orch.store.mappings_by_path(world.notebook_id, "new.md")[0].source_id == sid
    assert world.mutating_calls(mark) == ["source_rename"]  # no upload; NotebookLM shows the new path
    assert world.remote() == {sid: source_title("new.md", title_hash("same content"))}
    mark = len(world.fake.calls)
    async with world.run() as orch:
        assert (await orch.refresh(["new.md"])).notes[0].branch == Branch.REUSED
    assert world.mutating_calls(mark) == []


async def test_failed_retitle_of_a_renamed_note_never_fails_it_and_is_retried(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_rename", "Internal error", nth=1)]))
    world.write("old.md", "same content")
    async with world.run() as orch:
        sid = (await orch.refresh(["old.md"])).notes[0].source_ids[0]
    (world.vault / "old.md").rename(world.vault / "new.md")
    async with world.run() as orch:
        note = (await orch.refresh(["new.md"])).notes[0]
        assert (note.branch, note.source_ids) == (Branch.RENAMED, [sid])
        assert orch.store.mappings_by_path(world.notebook_id, "new.md")[0].title == world.remote()[sid]
    assert world.remote()[sid].startswith("old.md · ")
    async with world.run() as orch:
        assert (await orch.refresh(["new.md"])).notes[0].branch == Branch.REUSED
        assert orch.store.mappings_by_path(world.notebook_id, "new.md")[0].title == world.remote()[sid]
    assert world.remote() == {sid: source_title("new.md", title_hash("same content"))}


async def test_new_note_evicts_least_recent_managed_note(make_world):
    world = make_world(capacity=3)
    for name in "abc":
        world.write(f"{name}.md", f"note {name}")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md", "c.md"])
        await orch.refresh(["a.md", "c.md"])  # b is now the least recently used
    world.write("d.md", "note d")
    async with world.run() as orch:
        report = await orch.refresh(["d.md"])
        assert [(n.path, n.branch) for n in report.notes] == [("b.md", Branch.EVICTED), ("d.md", Branch.ADDED)]
        assert [e.path for e in orch.store.recent_evictions(world.notebook_id, 5)] == ["b.md"]
        assert orch.store.mappings_by_path(world.notebook_id, "b.md") == []
    assert sorted(t.split(" · ")[0] for t in world.remote().values()) == ["a.md", "c.md", "d.md"]
    async with world.run() as orch:
        status = await orch.status(["a.md"])
        a_source = orch.store.mappings_by_path(world.notebook_id, "a.md")[0].source_id
        last_used = {m.path: m.last_used for m in orch.store.all_mappings(world.notebook_id)}
    assert [e.path for e in status.recent_evictions] == ["b.md"]
    # the segmented LRU's order: a note used once goes before those used twice, whatever their age; each with
    # when it was last used
    assert [(e.path, e.use_count) for e in status.next_evictions] == [("d.md", 1), ("a.md", 2), ("c.md", 2)]
    assert [e.last_used for e in status.next_evictions] == [last_used[p] for p in ("d.md", "a.md", "c.md")]
    assert all(e.last_used is not None for e in status.next_evictions)
    assert [(n.path, n.where) for n in status.notes] == [("a.md", "alone")]
    world.fake.apply("source_delete", {"source_id": a_source, "confirm": True})  # deleted in NotebookLM
    async with world.run() as orch:
        status = await orch.status(["a.md"])
    assert [(n.path, n.where, n.source_ids) for n in status.notes] == [("a.md", "missing", [a_source])]


async def test_never_evicts_a_note_made_live_in_the_same_run(make_world):
    world = make_world(capacity=2)
    for name in "abc":
        world.write(f"{name}.md", f"note {name}")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md"])
        report = await orch.refresh(["b.md", "c.md"])
    assert [(n.path, n.branch) for n in report.notes] == [("b.md", Branch.REUSED), ("a.md", Branch.EVICTED),
                                                          ("c.md", Branch.ADDED)]


async def test_a_note_that_could_not_get_room_is_reported_as_it_happens(make_world):
    """A failed eviction fails the note that needed the room, and the run's progress display hears of it like
    any other outcome, so a live display finishes."""
    world = make_world(capacity=1, faults=Faults(errors=[ErrorRule("source_delete", "Internal error")]))
    world.write("a.md", "a")
    world.write("b.md", "b")
    async with world.run() as orch:
        await orch.refresh(["a.md"])

        class Recorder:
            def __init__(self) -> None:
                self.outcomes: list[tuple[str, Branch]] = []

            def start(self, label: str, total: int) -> None:
                pass

            def advance(self, outcome) -> None:
                self.outcomes.append((outcome.path, outcome.branch))

            def indexing(self, done: int, total: int) -> None:
                pass

            def reading(self, done: int, total: int) -> None:
                pass

        orch.progress = recorder = Recorder()
        with pytest.raises(PartialFailure) as caught:
            await orch.refresh(["b.md"])
    assert [(n.path, n.branch) for n in stopped_report(caught.value).failed] == [("b.md", Branch.FAILED)]
    assert "could not make room" in stopped_report(caught.value).failed[0].error
    assert recorder.outcomes == [("b.md", Branch.FAILED)]


async def test_capacity_without_candidates_exits_3_naming_capacity(make_world):
    world = make_world(capacity=2)
    unmanaged = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                                "text": "mine", "title": "My own source"})
    assert unmanaged["status"] == "success"
    world.fake.calls.clear()
    world.write("a.md", "a")
    world.write("b.md", "b")
    async with world.run() as orch:
        with pytest.raises(CapacityError) as info:
            await orch.refresh(["a.md", "b.md"])
    assert "at most 2 (1 taken by sources nlmsync did not upload)" in str(info.value)
    assert info.value.exit_code == 3 and "capacity" in (info.value.hint or "")
    assert world.mutating_calls() == []


async def test_requested_notes_alone_over_capacity_refused_before_upload(make_world):
    world = make_world(capacity=2)
    for name in "abc":
        world.write(f"{name}.md", name)
    async with world.run() as orch:
        with pytest.raises(CapacityError, match="3 requested notes need 3 sources"):
            await orch.refresh(["a.md", "b.md", "c.md"])
    assert world.mutating_calls() == []


async def test_excluded_notes_are_never_uploaded(make_world):
    world = make_world(exclude=["private/**"])
    world.write("private/secret.md", "secret")
    world.write("opt-out.md", "---\nnlmsync: false\n---\nbody")
    world.write("ok.md", "fine")
    async with world.run() as orch:
        report = await orch.refresh(["private/secret.md", "opt-out.md", "ok.md"])
    assert branches(report) == {"private/secret.md": Branch.EXCLUDED, "opt-out.md": Branch.EXCLUDED,
                                "ok.md": Branch.ADDED}
    assert len(world.remote()) == 1


async def test_big_note_is_split_into_numbered_parts_managed_as_one(make_world):
    world = make_world()
    text = "".join(f"## Section {i}\n" + "word " * 30 + "\n\n" for i in range(6))
    world.write("big.md", text)
    async with world.run() as orch:
        from nlmsync.sync import SyncDeps, SyncRun, ensure_sources_for_paths
        from nlmsync.sync.remote import read_remote

        deps = SyncDeps(orch.client, orch.store, world.vault, orch.settings, world.notebook_id, max_words=70)
        remote = await read_remote(orch.client, world.notebook_id, expect_sources=False)
        outcome = (await ensure_sources_for_paths(SyncRun(deps, remote), ["big.md"])).notes[0]
        assert outcome.branch == Branch.ADDED and outcome.part_count == 3 and outcome.split
        rows = orch.store.mappings_by_path(world.notebook_id, "big.md")
        assert [(r.part, r.part_count) for r in rows] == [(0, 3), (1, 3), (2, 3)]
    titles = sorted(world.remote().values())
    assert [t.split(" · ")[0] for t in titles] == [f"big.md (part {i}/3)" for i in (1, 2, 3)]
    assert "".join(world.remote_texts()[t] for t in titles) == text


async def test_unreadable_note_fails_alone_with_exit_6(make_world):
    world = make_world()
    world.write("good.md", "fine")
    (world.vault / "bad.md").write_bytes(b"\xff\xfe\x00binary")
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as info:
            await orch.refresh(["bad.md", "good.md"])
    report = stopped_report(info.value)
    assert info.value.exit_code == 6 and "(first: bad.md: cannot read note: binary)" in str(info.value)
    assert branches(report) == {"bad.md": Branch.FAILED, "good.md": Branch.ADDED}
    assert len(world.remote()) == 1


async def test_unreadable_note_found_by_walking_is_excluded_not_failed(make_world):
    world = make_world()
    world.write("notes/good.md", "fine")
    (world.vault / "notes" / "bad.md").write_bytes(b"\xff\xfe\x00binary")
    for how in ({"all_notes": True}, {"paths": ["notes"]}):
        async with world.run() as orch:
            report = await orch.refresh(**how)
        outcome = {n.path: n for n in report.notes}
        assert outcome["notes/bad.md"].branch == Branch.EXCLUDED
        assert "binary" in (outcome["notes/bad.md"].reason or "")
        assert outcome["notes/good.md"].branch in (Branch.ADDED, Branch.REUSED)
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["notes/good.md"]


async def test_refresh_skips_a_note_for_the_reason_index_gives_said_once(make_world):
    """Front matter `nlmsync: false`, an exclude pattern, binary bytes, invalid UTF-8, white space only: the
    reason `refresh` reports is the one `index` lists, and names nothing twice (the path is the outcome's)."""
    from nlmsync.search.index import NoteIndex

    world = make_world(exclude=["drafts/**"])
    world.write("notes/good.md", "fine")
    world.write("notes/private.md", "---\nnlmsync: false\n---\nsecret")
    world.write("drafts/plan.md", "a draft")
    world.write("notes/blank.md", "  \n")
    (world.vault / "notes" / "image.md").write_bytes(b"\x89PNG\x00\x00binary")
    (world.vault / "notes" / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    reasons = {n.path: n.reason for n in report.notes if n.branch == Branch.EXCLUDED}
    indexed = {s.path: s.reason for s in NoteIndex(world.vault, None, world.settings).sync().skipped}
    assert reasons == indexed == {
        "notes/private.md": "excluded (nlmsync: false)", "drafts/plan.md": "excluded by pattern",
        "notes/blank.md": "empty", "notes/image.md": "binary", "notes/latin1.md": "invalid utf-8 (byte 3)"}


async def test_a_whitespace_only_note_is_empty_for_uploads_as_for_the_index(make_world):
    world = make_world()
    world.write("notes/good.md", "fine")
    world.write("notes/blank.md", "  \n\t\n")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        named = await orch.refresh(["notes/blank.md"])
    assert {n.path: (n.branch, n.reason) for n in report.notes}["notes/blank.md"] == (Branch.EXCLUDED, "empty")
    assert [(n.branch, n.reason) for n in named.notes] == [(Branch.EXCLUDED, "empty")]
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["notes/good.md"]


async def test_a_file_name_that_is_not_utf8_is_left_out_of_refresh_all_with_the_reason(make_world):
    world = make_world()
    world.write("good.md", "fine")
    (world.vault / "latin1-\udce9.md").write_bytes(b"caf\xc3\xa9")  # the name's byte is 0xE9, not UTF-8
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert branches(report) == {"good.md": Branch.ADDED, "latin1-\\xe9.md": Branch.EXCLUDED}
    assert report.notes[-1].reason == "invalid file name encoding"
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["good.md"]


async def test_dry_run_makes_no_mutating_call_and_writes_nothing(make_world):
    world = make_world(capacity=2)
    world.write("a.md", "a")
    world.write("b.md", "b")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md"])
    world.write("a.md", "a2")
    world.write("c.md", "c")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        plan = await orch.refresh(["a.md", "c.md"], dry_run=True)
        assert plan.dry_run
        assert [(n.path, n.branch) for n in plan.notes] == [("b.md", Branch.EVICTED), ("a.md", Branch.REPLACED),
                                                            ("c.md", Branch.ADDED)]
        assert orch.store.mappings_by_path(world.notebook_id, "b.md")
    assert world.mutating_calls(mark) == []


async def test_refresh_all_removes_sources_of_vanished_notes(make_world):
    world = make_world()
    world.write("keep.md", "k")
    world.write("gone.md", "g")
    world.write("later-private.md", "p")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "gone.md").unlink()
    world.write("later-private.md", "---\nnlmsync: false\n---\np")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        assert [(n.path, n.branch) for n in report.notes] == [
            ("gone.md", Branch.REMOVED), ("later-private.md", Branch.REMOVED), ("keep.md", Branch.REUSED),
            ("later-private.md", Branch.EXCLUDED)]
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["keep.md"]


async def test_refresh_all_takes_the_rename_branch_for_a_moved_note(make_world):
    """`--all` decides its removals after renames are matched by content hash: a moved, unchanged note
    keeps its source (retitled), it is neither removed nor uploaded again."""
    world = make_world()
    for i in range(12):
        world.write(f"notes/n{i:02}.md", f"# Note {i}\n\nbody {i}\n")
    async with world.run() as orch:
        first = await orch.refresh(all_notes=True)
    sid = next(n.source_ids[0] for n in first.notes if n.path == "notes/n02.md")
    (world.vault / "moved").mkdir()
    (world.vault / "notes/n02.md").rename(world.vault / "moved/n02-renamed.md")
    world.write("notes/n03.md", "# Note 3\n\nedited\n")
    world.write("notes/n04.md", "# Note 4\n\nedited\n")
    world.write("notes/n12.md", "# Note 12\n")
    world.write("notes/n13.md", "# Note 13\n")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        assert orch.store.mappings_by_path(world.notebook_id, "notes/n02.md") == []
        assert orch.store.mappings_by_path(world.notebook_id, "moved/n02-renamed.md")[0].source_id == sid
    outcome = {n.path: n for n in report.notes}
    assert report.counts() == {"renamed": 1, "replaced": 2, "added": 2, "reused": 9}
    assert (outcome["moved/n02-renamed.md"].renamed_from, outcome["moved/n02-renamed.md"].source_ids) == (
        "notes/n02.md", [sid])
    assert "notes/n02.md" not in outcome
    assert world.calls("source_add", mark) == 4
    assert world.remote()[sid] == source_title("moved/n02-renamed.md", title_hash("# Note 2\n\nbody 2\n"))
    assert len(world.remote()) == 14


async def test_refresh_all_under_paths_prunes_only_there(make_world):
    """`refresh --all PATH…` answers only for the notes under the given paths: a deleted note's source is pruned without
    planning the rest of a vault that would not fit, and synced notes elsewhere are left alone."""
    world = make_world(capacity=3)
    world.write("notes/a.md", "a")
    world.write("notes/b.md", "b")
    world.write("other/c.md", "c")
    async with world.run() as orch:
        await orch.refresh(["notes/a.md", "notes/b.md", "other/c.md"])
    for i in range(5):
        world.write(f"big/n{i}.md", f"never synced {i}")
    (world.vault / "notes/b.md").unlink()
    (world.vault / "other/c.md").unlink()
    async with world.run() as orch:
        with pytest.raises(CapacityError):
            await orch.refresh(all_notes=True, dry_run=True)
        mark = len(world.fake.calls)
        report = await orch.refresh(["notes"], all_notes=True)
        assert [(n.path, n.branch) for n in report.notes] == [("notes/b.md", Branch.REMOVED),
                                                              ("notes/a.md", Branch.REUSED)]
        assert world.mutating_calls(mark) == ["source_delete"]
        pruned = await orch.refresh(["other/c.md"], all_notes=True)  # a note no longer in the vault
        assert [(n.path, n.branch) for n in pruned.notes] == [("other/c.md", Branch.REMOVED)]
        with pytest.raises(InputError, match="nowhere.md: no such note in the vault, and none synced"):
            await orch.refresh(["nowhere.md"], all_notes=True)
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["notes/a.md"]


async def test_idle_refresh_writes_the_state_file_once_whatever_the_number_of_notes(make_world):
    """The bookkeeping of reused notes (their use, their place in the eviction queue) is one step per run,
    not one per note, and nothing else is written: no commit that changes nothing."""
    world = make_world()
    for i in range(30):
        world.write(f"n{i:02}.md", f"note {i}")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
        before = [(e.path, e.segment) for e in orch.store.eviction_queue(world.notebook_id)]
    mark = len(world.fake.calls)
    async with world.run() as orch:
        statements: list[str] = []
        orch.store.db.conn.set_trace_callback(statements.append)
        report = await orch.refresh(all_notes=True)
        orch.store.db.conn.set_trace_callback(None)
        assert report.counts() == {"reused": 30}
        assert sum(1 for s in statements if s.startswith("BEGIN")) == 1
        assert {m.use_count for m in orch.store.all_mappings(world.notebook_id)} == {2}
        after = [(e.path, e.segment) for e in orch.store.eviction_queue(world.notebook_id)]
    assert world.mutating_calls(mark) == [] and world.calls("notebook_get", mark) == 1
    assert [p for p, _ in after] == [p for p, _ in before]  # used again in the same order
    assert {segment for _, segment in after} == {"protected"}


async def test_reused_notes_keep_their_order_of_use_among_uploads(make_world):
    """A reused note's use is recorded after the uploads before it, as if each note were recorded alone."""
    world = make_world()
    for name in "abcd":
        world.write(f"{name}.md", f"note {name}")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md", "c.md", "d.md"])
    world.write("b.md", "note b, edited")
    async with world.run() as orch:
        report = await orch.refresh(["d.md", "b.md", "a.md", "c.md"])
        assert [n.branch for n in report.notes] == [Branch.REUSED, Branch.REPLACED, Branch.REUSED, Branch.REUSED]
        assert [e.path for e in orch.store.eviction_queue(world.notebook_id)] == ["d.md", "b.md", "a.md", "c.md"]


async def test_empty_listing_is_read_again_before_concluding(make_world):
    world = make_world()
    world.write("a.md", "a")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    world.fake.faults.empty_sources_once = True
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
    assert report.notes[0].branch == Branch.REUSED
    assert world.calls("notebook_get", mark) == 2 and world.mutating_calls(mark) == []


async def test_existing_source_with_the_exact_title_is_adopted_not_uploaded(make_world):
    world = make_world()
    world.write("a.md", "alpha")
    title = source_title("a.md", title_hash("alpha"))
    sid = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": "alpha",
                                          "title": title})["source_id"]
    world.fake.calls.clear()
    async with world.run() as orch:
        note = (await orch.refresh(["a.md"])).notes[0]
    assert (note.branch, note.adopted, note.source_ids) == (Branch.REUSED, True, [sid])
    assert world.mutating_calls() == []


async def test_late_duplicate_of_a_live_title_is_deleted(make_world):
    world = make_world()
    world.write("a.md", "alpha")
    async with world.run() as orch:
        kept = (await orch.refresh(["a.md"])).notes[0].source_ids[0]
    title = source_title("a.md", title_hash("alpha"))
    world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": "alpha",
                                    "title": title})
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
    assert report.pending_deletions_done_count == 1 and report.notes[0].branch == Branch.REUSED
    assert list(world.remote()) == [kept]


async def test_refresh_by_query_uses_the_selection(make_world):
    world = make_world(min_k=1, cutoff_ratio=0.9)
    world.write("sorting/heapsort.md", "# Heapsort\nmax-heap sift down\n")
    world.write("cooking/bread.md", "# Bread\nflour water salt\n")
    async with world.run() as orch:
        report = await orch.refresh(query="heapsort")
    assert [(n.path, n.branch) for n in report.notes] == [("sorting/heapsort.md", Branch.ADDED)]


async def test_source_deleted_in_notebooklm_is_uploaded_again_and_aliased(make_world):
    world = make_world()
    world.write("a.md", "alpha")
    async with world.run() as orch:
        old = (await orch.refresh(["a.md"])).notes[0].source_ids[0]
    world.fake.apply("source_delete", {"source_id": old, "confirm": True})
    async with world.run() as orch:
        note = (await orch.refresh(["a.md"])).notes[0]
        assert note.branch == Branch.ADDED and note.source_ids != [old]
        assert orch.store.resolve_source_id(old) == note.source_ids[0]
        assert orch.store.mappings_by_path(world.notebook_id, "a.md")[0].status == "active"


async def test_capacity_reached_mid_run_carries_what_was_done(make_world):
    world = make_world(capacity=2)
    world.write("a.md", "a")
    world.write("b.md", "b")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md"])
    world.write("b.md", "b2")  # replacing b adds first: it needs a third slot
    world.write("c.md", "c")
    async with world.run() as orch:
        with pytest.raises(CapacityError) as info:
            await orch.refresh(["c.md", "b.md"])
        report = stopped_report(info.value)
        assert [(n.path, n.branch) for n in report.notes] == [("a.md", Branch.EVICTED), ("c.md", Branch.ADDED)]
        assert report.source_count == 2 and info.value.exit_code == 3
        assert orch.store.mappings_by_path(world.notebook_id, "c.md")[0].source_id == report.notes[1].source_ids[0]
    assert sorted(t.split(" · ")[0] for t in world.remote().values()) == ["b.md", "c.md"]


async def test_an_error_that_stops_the_service_carries_a_refresh_report(make_world):
    """The service (below the app) hands what it did up as the same `RefreshReport` the app reports, not a
    bare list, the removals of an `--all` run first."""
    from nlmsync.sync import RefreshReport, SyncDeps, SyncRun, ensure_sources_for_paths, read_remote
    from nlmsync.sync.run import AllNotesScope

    world = make_world(capacity=3)
    for name in "abg":
        world.write(f"{name}.md", name)
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md", "g.md"])
    (world.vault / "g.md").unlink()  # removed by --all first: one slot free
    world.write("c.md", "c")  # takes it
    world.write("b.md", "b2")  # replacing b adds first: a fourth slot, and a.md may not be evicted
    async with world.run() as orch:
        deps = SyncDeps(orch.client, orch.store, world.vault, orch.settings, world.notebook_id)
        remote = await read_remote(orch.client, world.notebook_id, expect_sources=True)
        with pytest.raises(CapacityError) as info:
            await ensure_sources_for_paths(SyncRun(deps, remote), ["c.md", "b.md"], protect={"a.md"},
                                           all_notes=AllNotesScope(("b.md", "c.md", "g.md")))
    report = stopped_report(info.value)
    assert isinstance(report, RefreshReport) and report.notebook_id == world.notebook_id
    assert [(n.path, n.branch) for n in notes_done(info.value)] == [
        ("g.md", Branch.REMOVED), ("c.md", Branch.ADDED)]


async def test_bad_path_is_refused_before_any_server_call(make_world):
    world = make_world()
    world.write("a.md", "a")
    async with world.run(notebook="new:Never") as orch:
        with pytest.raises(InputError, match="outside.md"):
            await orch.refresh(["a.md", "../outside.md"])
    assert world.fake.calls == [] and len(world.fake.notebooks) == 1  # no notebook created for a typo


async def test_empty_folder_argument_refreshes_nothing_not_every_synced_note(make_world):
    world = make_world()
    world.write("a.md", "a")
    (world.vault / "empty").mkdir()
    async with world.run() as orch:
        await orch.refresh(["a.md"])
        assert (await orch.refresh(["empty"])).notes == []
        assert [n.path for n in (await orch.refresh()).notes] == ["a.md"]  # no argument: the synced notes


async def test_only_notes_that_got_a_source_are_marked_used(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "Internal error", nth=1)]))
    world.write("a.md", "a")
    world.write("b.md", "b")
    async with world.run(concurrency=1) as orch:
        with pytest.raises(PartialFailure) as info:
            await orch.refresh(["a.md", "b.md"])  # a.md's upload fails
        assert branches(stopped_report(info.value)) == {"a.md": Branch.FAILED, "b.md": Branch.ADDED}
        queue = orch.store.eviction_queue(world.notebook_id)
    assert [(e.path, e.uses) for e in queue] == [("b.md", 1)]


async def test_paths_are_vault_relative_whatever_the_current_folder(make_world, monkeypatch):
    """`serve` and `watch` pass vault-relative paths: a note of the same name in the folder the process runs
    from is not the one meant (the command line's arguments are made vault-relative by `cli.paths`)."""
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    world.write("sub/a.md", "# Sub A\nother\n")
    monkeypatch.chdir(world.vault / "sub")
    async with world.run() as orch:
        report = await orch.refresh(["a.md"])
    assert branches(report) == {"a.md": Branch.ADDED}


async def test_an_idle_refresh_all_reads_the_registry_once_and_a_changed_one_reports_the_layout_after_it(
        make_world, monkeypatch):
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    world.write("b.md", "# B\nbeta\n")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    reads: list[str] = []
    async with world.run() as orch:
        read = orch.store.mappings_with_resolved_ids

        def counted(notebook_id):
            reads.append(notebook_id)
            return read(notebook_id)

        monkeypatch.setattr(orch.store, "mappings_with_resolved_ids", counted)
        idle = await orch.refresh(all_notes=True)
    assert reads == [world.notebook_id]
    assert idle.layout is not None and idle.layout.alone_note_count == 2
    world.write("c.md", "# C\ngamma\n")
    async with world.run() as orch:
        changed = await orch.refresh(all_notes=True)
    assert changed.layout is not None and changed.layout.alone_note_count == 3


async def test_watch_keeps_only_synced_notes_current_in_a_notebook_of_notes_alone(make_world):
    world = make_world(capacity=5)
    world.write("a.md", "note a")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    world.write("new.md", "a note never synced")
    world.write("a.md", "note a, edited")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        assert await orch.keep_current(["new.md"]) is None  # not synced: watch leaves it to the user
        assert world.mutating_calls(mark) == []
        report = await orch.keep_current(["a.md", "new.md"])
    assert report is not None and [(n.path, n.branch) for n in report.notes] == [("a.md", Branch.REPLACED)]


async def test_status_names_the_notes_of_the_vault_whose_sources_the_state_file_does_not_hold(make_world):
    """Sources titled by nlmsync that no registry row accounts for and whose text cannot be read back to prove
    them are orphans; the next step names the notes of the vault they are titled for (a refresh adopts them),
    not a note that left the vault."""
    world = make_world()
    for name in ("a", "b c", "gone"):
        world.write(f"{name}.md", f"note {name}")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b c.md", "gone.md"])
    store = world.store()
    try:
        for name in ("a", "b c", "gone"):
            store.remove_mappings(world.notebook_id, f"{name}.md")
    finally:
        store.close()
    (world.vault / "gone.md").unlink()
    world.fake.faults = Faults(errors=[ErrorRule("source_get_content", "Internal error")])
    async with world.run() as orch:
        status = await orch.status()
    assert len(status.orphan_source_ids) == 3
    (step,) = status.next_steps
    assert step.why == ("2 sources titled by nlmsync for notes of the vault are not in the state file; refreshing "
                        "the notes adopts them")
    assert shlex.split(step.command)[:2] == ["nlmsync", "refresh"]
    assert sorted(shlex.split(step.command)[2:]) == ["a.md", "b c.md"]
