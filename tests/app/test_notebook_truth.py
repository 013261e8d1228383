"""The notebook is the truth; the state file is a cache of it. A fresh machine, a lost state file, a second device
with its own copy of the vault (its state file copied along or not) converge on what the notebook holds without
uploading it again: every note in exactly one source, no duplicate, no orphan, and an idle run on any of them
makes no mutating call. Each device is its own vault folder with its state file inside; they share the fake's
notebook."""

from __future__ import annotations

import shutil

import pytest
from tests.app.notebook_checks import assert_mirrored, fill, note_text, write_note

from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio

PACKED = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 1}


async def mirror(device, **settings: object):
    async with device.run(**settings) as orch:
        return await orch.refresh(all_notes=True)


def calls(world, since: int) -> dict[str, int]:
    counted: dict[str, int] = {}
    for call in world.fake.calls[since:]:
        counted[call.tool] = counted.get(call.tool, 0) + 1
    return counted


async def test_a_fresh_machine_adopts_a_packed_notebook_without_uploading_or_reading_it(make_world):
    world = make_world(capacity=20)
    laptop, runner = world.device("laptop"), world.device("runner")
    fill(laptop.vault, 60)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    assert len(first.packs) > 3
    runner.sync_from(laptop, state=False)  # a CI runner: the vault's repository, no state file
    mark = len(world.fake.calls)
    report = await mirror(runner, notebook=world.notebook_id, capacity=20, **PACKED)
    assert calls(world, mark) == {"notebook_get": 1}  # one listing; no upload, no delete, no read back
    assert all(p.branch == Branch.REUSED and p.adopted for p in report.packs)
    assert report.notices[0].startswith(f"adopted {len(first.packs)} sources the state file did not know")
    mark = len(world.fake.calls)
    again = await mirror(runner, notebook=world.notebook_id, capacity=20, **PACKED)
    assert world.mutating_calls(mark) == [] and not any(p.adopted for p in again.packs)
    assert_mirrored(world, runner.vault)


async def test_a_fresh_machine_takes_single_note_sources_as_its_own_not_as_foreign(make_world):
    world = make_world()
    laptop, runner = world.device("laptop"), world.device("runner")
    fill(laptop.vault, 26)
    first = await mirror(laptop, notebook=world.notebook_id)
    assert len(first.by_branch(Branch.ADDED)) == 26 and not first.packs
    runner.sync_from(laptop, state=False)
    mark = len(world.fake.calls)
    report = await mirror(runner, notebook=world.notebook_id)
    # each is read back once (a note's title over other text would be someone else's), then taken; no capacity is
    # given, so the plan is read once for it
    assert calls(world, mark) == {"notebook_get": 1, "source_get_content": 26, "usage_get": 1}
    assert [n.branch for n in report.notes] == [Branch.REUSED] * 26 and not report.packs
    assert_mirrored(world, runner.vault)
    mark = len(world.fake.calls)
    await mirror(runner)
    assert calls(world, mark) == {"notebook_get": 1, "usage_get": 1}  # the listing, and the plan for the capacity


async def test_a_lost_state_file_over_a_packed_notebook_whose_boundaries_moved(make_world):
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 60)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    # a history of edits, inserts, deletes, renames and folder moves, mirrored as it goes
    for i in range(0, 60, 7):
        write_note(laptop.vault, paths[i], note_text(i, 2) + "Grown. " * (i % 3) * 40)
    for name in ("f0/n000a.md", "f2/n030b.md", "g/new.md"):
        write_note(laptop.vault, name, f"# New note {name}\n\nA new note.\n")
    await mirror(laptop, **PACKED)
    (laptop.vault / paths[3]).unlink()
    (laptop.vault / "moved").mkdir()
    (laptop.vault / paths[10]).rename(laptop.vault / "moved" / "n010.md")
    (laptop.vault / paths[20]).rename(laptop.vault / "f3" / "renamed.md")
    await mirror(laptop, **PACKED)
    assert_mirrored(world, laptop.vault)

    laptop.lose_state()
    mark = len(world.fake.calls)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    assert calls(world, mark) == {"notebook_get": 1}

    laptop.lose_state()  # and the vault moved on meanwhile: only the packs that hold a change are paid for
    write_note(laptop.vault, paths[30], note_text(30, 9))
    write_note(laptop.vault, paths[50], note_text(50, 9))
    mark = len(world.fake.calls)
    report = await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    # the two packs that hold an older version are read back (proven nlmsync's), replaced, and deleted; the
    # notebook listed again before the run says it is done
    assert calls(world, mark) == {"notebook_get": 2, "source_get_content": 2, "source_add": 2, "source_delete": 2}
    assert sorted(p.branch for p in report.packs if p.branch != Branch.REUSED) == [Branch.REPLACED] * 2
    assert_mirrored(world, laptop.vault)


async def test_a_second_device_with_a_copied_state_file_adopts_the_pack_the_first_replaced(make_world):
    """The state file copied along by a file-sync tool, older than the notebook: it is a cache, brought level with
    the notebook; the pack the other device uploaded is not counted as someone else's, even at a full notebook."""
    world = make_world(capacity=7)
    laptop, desktop = world.device("laptop"), world.device("desktop")
    paths = fill(laptop.vault, 40)
    await mirror(laptop, notebook=world.notebook_id, capacity=7, **PACKED)
    assert len(world.remote()) == 6  # full but for `pack_free`
    desktop.sync_from(laptop)  # notes and state file
    write_note(laptop.vault, paths[5], note_text(5, 2))
    await mirror(laptop, **PACKED)
    desktop.sync_from(laptop, state=False)  # the edited note arrives; the desktop keeps its (older) state file
    mark = len(world.fake.calls)
    await mirror(desktop, **PACKED)
    assert world.mutating_calls(mark) == []
    assert_mirrored(world, desktop.vault)


async def test_edits_on_two_devices_refreshed_alternately_converge(make_world):
    world = make_world(capacity=20)
    laptop, desktop = world.device("laptop"), world.device("desktop")
    paths = fill(laptop.vault, 60)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    desktop.sync_from(laptop, state=False)  # a second device, its own state file (none yet)
    await mirror(desktop, notebook=world.notebook_id, capacity=20, **PACKED)
    for round_ in range(3):
        write_note(laptop.vault, paths[round_ * 11], note_text(round_ * 11, 10 + round_))
        write_note(laptop.vault, f"new/laptop-{round_}.md", f"# Laptop {round_}\n\nWritten on the laptop.\n")
        await mirror(laptop, **PACKED)
        # the desktop edits another note and deletes one before the laptop's changes arrive, and refreshes
        write_note(desktop.vault, paths[round_ * 13 + 2], note_text(round_ * 13 + 2, 20 + round_))
        deleted = paths[round_ * 17 + 4]
        (desktop.vault / deleted).unlink(missing_ok=True)
        await mirror(desktop, **PACKED)
        # the file-sync tool merges both folders: the newer of each file, and the deletion
        (laptop.vault / deleted).unlink(missing_ok=True)
        for source, target in ((laptop, desktop), (desktop, laptop)):
            for note in source.vault.rglob("*.md"):
                rel = note.relative_to(source.vault)
                there = target.vault / rel
                if ".nlmsync" not in rel.parts and (not there.exists()
                                                    or note.stat().st_mtime_ns > there.stat().st_mtime_ns):
                    there.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(note, there)
        await mirror(laptop, **PACKED)
        await mirror(desktop, **PACKED)
        assert_mirrored(world, desktop.vault)
    for device in (laptop, desktop, laptop):
        mark = len(world.fake.calls)
        report = await mirror(device, **PACKED)
        assert world.mutating_calls(mark) == [], [(p.branch, p.title, p.reason) for p in report.packs
                                                  if p.branch != Branch.REUSED]
    assert_mirrored(world, laptop.vault)


async def mirrored_but_one_pack(world, which: int):
    """A laptop that mirrored 60 notes in packs; then pack `which` deleted in NotebookLM (its outcome)."""
    laptop = world.device("laptop")
    fill(laptop.vault, 60)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    lost = first.packs[which]
    world.fake.apply("source_delete", {"source_id": lost.source_id, "confirm": True})
    return laptop, lost


async def test_a_pack_deleted_in_notebooklm_is_uploaded_again_and_status_says_so(make_world):
    world = make_world(capacity=20)
    laptop, lost = await mirrored_but_one_pack(world, 2)
    async with laptop.run() as orch:
        status = await orch.status(lost.paths[:1])
    assert status.notes[0].where == "missing" and status.layout.packed_note_count == 60 - len(lost.paths)
    assert any(s.command.startswith("nlmsync refresh") for s in status.next_steps)
    mark = len(world.fake.calls)
    async with laptop.run(**PACKED) as orch:  # the step status proposes
        report = await orch.refresh()
    assert world.mutating_calls(mark) == ["source_add"]
    assert [p.paths for p in report.packs if p.branch != Branch.REUSED] == [lost.paths]
    assert report.layout.packed_note_count == 60
    assert_mirrored(world, laptop.vault)


async def test_a_pack_deleted_in_notebooklm_comes_back_for_a_question_that_needs_it(make_world):
    world = make_world(capacity=20)
    laptop, lost = await mirrored_but_one_pack(world, 1)
    async with laptop.run(**PACKED) as orch:
        report = await orch.refresh([lost.paths[0]])
    assert [p.branch for p in report.packs] == [Branch.REPLACED] and report.packs[0].paths == lost.paths
    assert_mirrored(world, laptop.vault)


async def test_a_capacity_below_the_packs_held_merges_them_to_fit(make_world):
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    fill(laptop.vault, 60)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    assert len(first.packs) > 8
    report = await mirror(laptop, capacity=8, **PACKED)
    assert report.layout.pack_count <= 8 - 1 and len(world.remote()) <= 8
    assert_mirrored(world, laptop.vault)
    mark = len(world.fake.calls)
    await mirror(laptop, **PACKED)  # 8 is remembered
    assert world.mutating_calls(mark) == []


async def test_a_source_titled_exactly_like_a_live_pack_is_read_and_never_deleted(make_world):
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    fill(laptop.vault, 60)
    first = await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    mine = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                          "text": "my own notes on these", "title": first.packs[0].title})["source_id"]
    for _ in range(2):
        mark = len(world.fake.calls)
        report = await mirror(laptop, **PACKED)
        assert world.mutating_calls(mark) == [] and mine in world.remote()
        assert any(mine in n and "left alone" in n for n in report.notices)
    assert_mirrored(world, laptop.vault, hand_added={mine})


async def test_replacing_more_packs_than_there_is_room_for_goes_in_waves(make_world):
    """A notebook on a plan of 100 (the fake refuses an add beyond that as NotebookLM does: an invalid argument),
    mirrored with its capacity given once; a later run that gives none replaces more packs than are free, a wave
    at a time, never asking for a source beyond the capacity."""
    world = make_world(capacity=100)
    laptop, runner = world.device("laptop"), world.device("runner")
    paths = fill(laptop.vault, 185, folders=10, pad=12)
    tiny = {**PACKED, "source_max_bytes": 1_000, "pack_free": 3}
    first = await mirror(laptop, notebook=world.notebook_id, capacity=100, **tiny)
    assert 90 <= len(world.remote()) <= 97, len(world.remote())
    for i in range(0, 185, 29):
        write_note(laptop.vault, paths[i], note_text(i, 2))
    mark = len(world.fake.calls)
    report = await mirror(laptop, **tiny)  # no capacity given: the one given before holds
    changed = [p for p in report.packs if p.branch == Branch.REPLACED]
    assert len(changed) == 7 and world.calls("source_add", mark) == 7
    assert all(c.applied for c in world.fake.calls[mark:] if c.tool == "source_add")  # never refused as full
    assert_mirrored(world, laptop.vault)
    # a fresh machine that was never told the capacity: the notebook holds more than the free plan's 50, so
    # it is on a larger plan, and nothing needs laying out again
    runner.sync_from(laptop, state=False)
    mark = len(world.fake.calls)
    async with runner.run(notebook=world.notebook_id, **tiny) as orch:
        await orch.refresh(all_notes=True)
        status = await orch.status()
    assert world.mutating_calls(mark) == [] and (status.capacity, status.capacity_source) == (100, "held")
    assert len(first.packs) == status.layout.pack_count


async def test_status_of_a_packed_notebook_lists_the_notes_in_no_source(make_world):
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    fill(laptop.vault, 60)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    write_note(laptop.vault, "f1/zz-new.md", "# A new note\n\nWritten after the mirror.\n")
    async with laptop.run(**PACKED) as orch:
        status = await orch.status()
        plan = await orch.refresh(all_notes=True, dry_run=True)
    assert [(c.path, c.change) for c in status.local_changes] == [("f1/zz-new.md", "added")]
    assert [s.command for s in status.next_steps] == ["nlmsync refresh --all (puts each in its pack)"]
    assert [p.branch for p in plan.packs if p.branch != Branch.REUSED] == [Branch.REPLACED]
    await mirror(laptop, **PACKED)
    async with laptop.run(**PACKED) as orch:
        status = await orch.status()
    assert status.local_changes == [] and status.next_steps == []


async def test_conflict_copies_of_the_state_file_are_never_read(make_world):
    """What a file-sync tool leaves beside the state file (a conflicted copy, another device's copy with its
    write-ahead log, a half-written one) is not the state file: nlmsync opens `state.db` alone."""
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    fill(laptop.vault, 30)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    folder = laptop.state.parent
    (folder / "state (conflicted copy 2026-11-27).db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    (folder / "state.sync-conflict-20261127-101010-ABCDEFG.db").write_bytes(laptop.state.read_bytes()[:4096])
    mark = len(world.fake.calls)
    report = await mirror(laptop, **PACKED)
    assert world.mutating_calls(mark) == [] and report.notices == []
    assert_mirrored(world, laptop.vault)


async def test_a_state_file_copied_without_its_write_ahead_log_is_a_stale_cache(make_world):
    """A sync tool that copied `state.db` while the other device's run had changes still in its write-ahead log
    brings an older state: the next run brings it level with the notebook, uploading nothing again."""
    world = make_world(capacity=20)
    laptop, desktop = world.device("laptop"), world.device("desktop")
    paths = fill(laptop.vault, 40)
    await mirror(laptop, notebook=world.notebook_id, capacity=20, **PACKED)
    desktop.sync_from(laptop)
    older = desktop.state.read_bytes()
    write_note(laptop.vault, paths[7], note_text(7, 2))
    write_note(laptop.vault, paths[33], note_text(33, 2))
    await mirror(laptop, **PACKED)
    desktop.sync_from(laptop, state=False)
    desktop.state.write_bytes(older)  # the main file as it was, the log that held the later steps not copied
    for log in desktop.state.parent.glob("state.db-*"):
        log.unlink()
    mark = len(world.fake.calls)
    await mirror(desktop, **PACKED)
    assert world.mutating_calls(mark) == []
    assert_mirrored(world, desktop.vault)
