"""A run the server stops part-way: a login that expires, a notebook the server says is full, a delete it keeps
refusing. Each is said once, in one line, and the report lists each note once."""

from __future__ import annotations

import pytest
from tests.app.world import stopped_report

from nlmsync.errors import AuthenticationRequiredError, CapacityError, PartialFailure
from nlmsync.fake.faults import ErrorRule, Faults
from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio

LOGIN_GONE = "No authentication found. Either:\n1. Run 'nlm login' to authenticate via Chrome"


def notes(world, count: int, prefix: str = "n") -> list[str]:
    paths = [f"{prefix}{i:03}.md" for i in range(count)]
    for i, path in enumerate(paths):
        world.write(path, f"# {prefix} {i}\n\nNote {i} of the {prefix} series.\n")
    return paths


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_login_expiring_mid_run_is_one_line_and_each_note_is_reported_once(make_world, concurrency):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", LOGIN_GONE, nth=4)]))
    paths = notes(world, 40)
    async with world.run(concurrency=concurrency) as orch:
        with pytest.raises(AuthenticationRequiredError) as info:
            await orch.refresh(paths)
    exc, report = info.value, stopped_report(info.value)
    assert sorted(n.path for n in report.notes) == paths  # every note once
    added = [n for n in report.notes if n.branch == Branch.ADDED]
    not_tried = [n for n in report.notes if n.error and n.error.startswith("not tried")]
    assert len(added) + 1 + len(not_tried) == len(paths) and world.calls("source_add") == len(added) + 1
    assert all(n.error.count("not tried") == 1 and n.error.count("login") == 1 for n in not_tried)
    assert [n for n in report.notes if n.not_tried] == not_tried  # counted apart from the one that failed
    line = str(exc)
    assert "\n" not in line and line.count("not tried") == 1 and line.count("login") == 1
    assert f"{len(added)} of 40 notes done, 1 failed, {len(not_tried)} not tried" in line
    assert "nlm login" in (exc.hint or "")


async def test_a_notebook_full_below_the_capacity_setting_stops_with_exit_3_and_is_learned(make_world):
    world = make_world(capacity=5)  # the server holds 5 sources a notebook ...
    paths = notes(world, 8)
    async with world.run(capacity=50) as orch:  # ... the setting says 50
        with pytest.raises(CapacityError) as info:
            await orch.refresh(paths)
    exc = info.value
    assert exc.exit_code == 3 and "'capacity'" in str(exc) and "5 sources" in str(exc) and "\n" not in str(exc)
    report = stopped_report(exc)
    assert sorted(n.path for n in report.notes) == paths
    assert len([n for n in report.notes if n.branch == Branch.ADDED]) == 5
    refused = [c for c in world.fake.calls if c.tool == "source_add" and not c.applied]
    assert 1 <= len(refused) <= 4  # the first refusal stops the run: only uploads already under way meet one

    # The next runs keep the notebook to what the server holds, evicting within it instead of being refused.
    since = len(world.fake.calls)
    more = notes(world, 2, prefix="m")
    async with world.run(capacity=50) as orch:
        report = await orch.refresh(more)
        assert report.capacity == 5
        assert (await orch.status()).capacity == 5
    assert [n.branch for n in report.notes].count(Branch.EVICTED) == 2
    assert all(c.applied for c in world.fake.calls[since:] if c.tool == "source_add")
    async with world.run(capacity=50) as orch:
        with pytest.raises(CapacityError, match="holds at most 5"):
            await orch.refresh(paths)  # refused up front, nothing uploaded

    # A new setting is the user's word: what was learned under the old one is forgotten.
    async with world.run(capacity=6) as orch:
        assert (await orch.status()).capacity == 6


async def test_an_invalid_argument_refusal_at_a_plan_limit_means_full(make_world):
    world = make_world(capacity=1000)
    paths = notes(world, 50)
    async with world.run(capacity=100) as orch:
        await orch.refresh(paths)
    world.fake.faults = Faults(errors=[ErrorRule("source_add", "API error (code 3): Invalid argument")])
    more = notes(world, 2, prefix="m")
    async with world.run(capacity=100) as orch:
        with pytest.raises(CapacityError, match="'capacity'"):
            await orch.refresh(more)
        assert (await orch.status()).capacity == 50


async def test_an_invalid_argument_refusal_below_any_plan_limit_fails_only_that_note(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_add", "API error (code 3): Invalid argument", nth=1)]))
    paths = notes(world, 3)
    async with world.run(capacity=100, concurrency=1) as orch:
        with pytest.raises(PartialFailure) as info:
            await orch.refresh(paths)
        assert (await orch.status()).capacity == 100
    assert [n.branch for n in stopped_report(info.value).notes] == [Branch.FAILED, Branch.ADDED, Branch.ADDED]


async def test_a_delete_the_server_keeps_refusing_is_queued_reported_and_the_run_goes_on(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_delete", "Failed to delete source.")]))
    paths = notes(world, 3)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / paths[0]).unlink()
    world.write("new.md", "# New\n\nA note added after the first run.\n")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        assert {n.path: n.branch for n in report.notes} == {
            paths[0]: Branch.REMOVED, paths[1]: Branch.REUSED, paths[2]: Branch.REUSED, "new.md": Branch.ADDED}
        assert report.pending_deletions_left_count == 1
        (removed,) = [n for n in report.notes if n.branch == Branch.REMOVED]
        assert "Failed to delete source." in removed.error and "later run" in removed.error
        (queued,) = orch.store.pending_deletions(world.notebook_id)
    for _ in range(2):  # later runs are not stopped by it either: they try it again and go on
        async with world.run() as orch:
            again = await orch.refresh(all_notes=True)
        assert again.pending_deletions_left_count == 1 and {n.branch for n in again.notes} == {Branch.REUSED}
    world.fake.faults = Faults()
    async with world.run() as orch:
        done = await orch.refresh(all_notes=True)
        assert done.pending_deletions_done_count == 1 and orch.store.pending_deletions(world.notebook_id) == []
    assert queued.source_id not in world.remote()


async def test_a_note_back_while_its_old_source_waits_for_deletion_converges_to_one_source(make_world):
    world = make_world(faults=Faults(errors=[ErrorRule("source_delete", "Failed to delete source.")]))
    paths = notes(world, 2)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    text = (world.vault / paths[0]).read_text(encoding="utf-8")
    (world.vault / paths[0]).unlink()
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
        (queued,) = orch.store.pending_deletions(world.notebook_id)
        status = await orch.status()
        assert status.orphan_source_ids == [] and status.pending_deletions == [queued.source_id]
    world.write(paths[0], text)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    world.fake.faults = Faults()
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
        assert orch.store.pending_deletions(world.notebook_id) == []
        rows = orch.store.all_mappings(world.notebook_id)
    assert sorted(world.remote().values()) == sorted(r.title for r in rows) and len(rows) == 2


async def test_a_state_file_that_cannot_take_a_record_stops_the_run_with_its_own_error(make_world, monkeypatch):
    import sqlite3

    from nlmsync.errors import DiskFullError
    from nlmsync.store import StateStore

    world = make_world()
    paths = notes(world, 6)
    record = StateStore.add_new_mappings  # how a note new to the registry is recorded
    calls = {"n": 0}

    def add_new_mappings(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 2:  # the disk is full from the third record on: SQLite refuses inside the store's step
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = 13
            with self.step():
                raise error
        return record(self, *args, **kwargs)

    monkeypatch.setattr(StateStore, "add_new_mappings", add_new_mappings)
    async with world.run(concurrency=2) as orch:
        with pytest.raises(DiskFullError) as info:  # itself, not wrapped in an exception group
            await orch.refresh(paths)
    report = stopped_report(info.value)
    assert sorted(n.path for n in report.notes) == paths
    assert [n.branch for n in report.notes].count(Branch.ADDED) == 2
    assert "2 of 6 notes done" in str(info.value)
    monkeypatch.undo()
    async with world.run() as orch:  # once there is room, the repeat finishes the job without duplicates
        again = await orch.refresh(paths)
    assert {n.branch for n in again.notes} <= {Branch.REUSED, Branch.ADDED}
    titles = list(world.remote().values())
    assert len(titles) == len(set(titles)) == 6
