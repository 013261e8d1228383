"""Watch mode: the vault event mapping as pure functions, and one real watch run driven by file changes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import pytest
from tests.held_sleep import HeldSleep
from watchfiles import Change

from nlmsync.fake.server import build_fake_server
from nlmsync.search.index import NoteIndex
from nlmsync.sync.branches import Branch
from nlmsync.vault import NoteChange
from nlmsync.watch import FileEvent, WatchEvent, WatchPlan, plan_watch_actions, to_events, watch_vault

ADDED, MODIFIED, DELETED = NoteChange.ADDED, NoteChange.MODIFIED, NoteChange.DELETED


class Watching:
    """A real watch of a world's vault, run by `watching`: what it did (`plans`) and said (`events`), and `until`
    to wait for what a test expects of it."""

    def __init__(self) -> None:
        self.plans: list[WatchPlan] = []
        self.events: list[WatchEvent] = []
        self._changed = anyio.Event()

    def on_batch(self, plan: WatchPlan) -> None:
        self.plans.append(plan)
        self._notify()

    def on_message(self, event: WatchEvent) -> None:
        self.events.append(event)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, condition: Callable[[], object]) -> None:
        while not condition():
            await self._changed.wait()


@asynccontextmanager
async def watching(world, **options: Any) -> AsyncIterator[Watching]:
    """`watch_vault` over `world` (`refresh=True` refreshes against its fake) from its first batch on, stopped on
    leaving the block."""
    watch, stop = Watching(), anyio.Event()
    if options.get("refresh"):
        options["server"] = build_fake_server(world.fake)
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(watch_vault, world.settings, stop_event=stop, on_batch=watch.on_batch,
                              on_message=watch.on_message, **options))
        with anyio.fail_after(60):
            await watch.until(lambda: watch.plans)  # the first (possibly empty) batch: it is running
        yield watch
        stop.set()


def test_create_modify_delete_map_to_index_marks():
    plan = plan_watch_actions([FileEvent(ADDED, "new.md", 1), FileEvent(MODIFIED, "old.md", 2),
                               FileEvent(DELETED, "gone.md"), FileEvent(MODIFIED, "image.png", 3)], {})
    assert plan.modified == ["new.md", "old.md"] and plan.deleted == ["gone.md"]
    assert plan.renamed_mappings == []


def test_a_file_name_that_is_not_utf8_makes_no_event(tmp_path):
    (tmp_path / "latin1-\udce9.md").write_text("x")
    (tmp_path / "ok.md").write_text("x")
    changes = [(Change.added, str(tmp_path / "latin1-\udce9.md")), (Change.added, str(tmp_path / "ok.md"))]
    assert [e.path for e in to_events(tmp_path, changes)] == ["ok.md"]


def test_rename_md_to_md_moves_the_mapping():
    plan = plan_watch_actions([FileEvent(DELETED, "a.md"), FileEvent(ADDED, "dir/b.md", 7)], {"a.md": 7})
    assert plan == WatchPlan(modified=["dir/b.md"], deleted=["a.md"], renamed_mappings=[("a.md", "dir/b.md")])


def test_rename_md_to_other_is_the_note_leaving_the_vault():
    plan = plan_watch_actions([FileEvent(DELETED, "a.md"), FileEvent(ADDED, "a.txt", 7)], {"a.md": 7})
    assert plan == WatchPlan(deleted=["a.md"])


def test_rename_other_to_md_is_a_new_note():
    plan = plan_watch_actions([FileEvent(DELETED, "a.txt"), FileEvent(ADDED, "a.md", 7)], {"a.txt": 7})
    assert plan == WatchPlan(modified=["a.md"])


def test_delete_and_unrelated_add_are_not_a_rename():
    plan = plan_watch_actions([FileEvent(DELETED, "a.md"), FileEvent(ADDED, "b.md", 8)], {"a.md": 7})
    assert plan == WatchPlan(modified=["b.md"], deleted=["a.md"])


PDF = frozenset({".pdf"})


def test_an_attachment_is_followed_as_a_note_is():
    plan = plan_watch_actions([FileEvent(ADDED, "papers/new.pdf", 1), FileEvent(MODIFIED, "old.PDF", 2),
                               FileEvent(DELETED, "gone.pdf"), FileEvent(MODIFIED, "image.png", 3)], {}, PDF)
    assert plan == WatchPlan(modified=["papers/new.pdf", "old.PDF"], deleted=["gone.pdf"])
    # with no attachment kinds taken (`attachments = "none"`) a PDF is nothing to the watch
    assert not plan_watch_actions([FileEvent(ADDED, "papers/new.pdf", 1)], {})


def test_an_attachment_renamed_to_an_attachment_moves_its_mapping_and_to_a_note_does_not():
    moved = plan_watch_actions([FileEvent(DELETED, "a.pdf"), FileEvent(ADDED, "read/a.pdf", 7)], {"a.pdf": 7}, PDF)
    assert moved == WatchPlan(modified=["read/a.pdf"], deleted=["a.pdf"], renamed_mappings=[("a.pdf", "read/a.pdf")])
    to_note = plan_watch_actions([FileEvent(DELETED, "a.pdf"), FileEvent(ADDED, "a.md", 7)], {"a.pdf": 7}, PDF)
    assert to_note == WatchPlan(modified=["a.md"], deleted=["a.pdf"])


@pytest.mark.anyio
async def test_real_watch_follows_a_pdf_added_changed_moved_and_removed(make_world):
    from tests.app.test_attachment_sync import put_pdf

    world = make_world(watch_debounce_ms=50)
    put_pdf(world, "paper.pdf", "Tapirs are odd-toed ungulates")
    async with world.run() as orch:
        await orch.refresh(["paper.pdf"])
    async with watching(world, refresh=True) as watch:
        with anyio.fail_after(60):
            put_pdf(world, "new.pdf", "Okapis live in the Ituri forest")
            await watch.until(lambda: any("new.pdf" in p.modified for p in watch.plans))
            title = put_pdf(world, "paper.pdf", "Tapirs eat fallen fruit")
            await watch.until(lambda: WatchEvent("refreshed", path="paper.pdf", branch="replaced") in watch.events)
            (world.vault / "paper.pdf").rename(world.vault / "read.pdf")
            await watch.until(lambda: WatchEvent("renamed", path="paper.pdf", renamed_to="read.pdf") in watch.events)
            (world.vault / "new.pdf").unlink()
            await watch.until(lambda: any("new.pdf" in p.deleted for p in watch.plans))
    assert not any(e.path == "new.pdf" for e in watch.events)  # only files already synced are refreshed
    # the changed bytes uploaded once, then the source kept through the move and given its new path's title
    moved = title.replace("paper.pdf", "read.pdf")
    assert [t for t, text in world.remote_texts().items() if "Tapirs" in text] == [moved]
    assert "Tapirs eat fallen fruit" in world.remote_texts()[moved]
    store = world.store()
    (row,) = store.mappings_by_path(world.notebook_id, "read.pdf")
    assert row.source_id in world.remote() and store.mappings_by_path(world.notebook_id, "paper.pdf") == []
    index = NoteIndex(world.vault, store.db, world.settings)
    assert [h.path for h in index.search("tapirs fallen fruit")] == ["read.pdf"]
    assert index.search("okapis ituri") == []
    store.close()


@pytest.mark.anyio
async def test_real_watch_keeps_index_registry_and_notebook_current(make_world):
    world = make_world(watch_debounce_ms=50)
    world.write("a.md", "# Alpha\nfirst version\n")
    world.write("other.md", "# Other\nunsynced\n")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    async with watching(world, refresh=True) as watch:
        with anyio.fail_after(60):
            world.write("a.md", "# Alpha\nsecond version mentions zeppelin\n")
            await watch.until(lambda: WatchEvent("refreshed", path="a.md", branch="replaced") in watch.events)
            (world.vault / "a.md").rename(world.vault / "moved.md")
            await watch.until(lambda: any(("a.md", "moved.md") in p.renamed_mappings for p in watch.plans))
    events = watch.events
    assert str(WatchEvent("refreshed", path="a.md", branch="replaced")) == "replaced a.md"

    assert not any(e.path == "other.md" for e in events)  # only already-synced notes are refreshed
    assert WatchEvent("renamed", path="a.md", renamed_to="moved.md") in events
    store = world.store()
    rows = store.mappings_by_path(world.notebook_id, "moved.md")
    assert rows and store.mappings_by_path(world.notebook_id, "a.md") == []
    assert world.remote()[rows[0].source_id].endswith(rows[0].title[-8:])
    assert "zeppelin" in world.remote_texts()[rows[0].title]
    hits = NoteIndex(world.vault, store.db, world.settings).search("zeppelin")
    assert [h.path for h in hits] == ["moved.md"]
    store.close()


def test_a_folder_event_stands_for_the_notes_in_it(tmp_path):
    from nlmsync.watch import expand_folders

    (tmp_path / "science" / "deep").mkdir(parents=True)
    for rel in ("science/a.md", "science/deep/b.md", "science/picture.png"):
        (tmp_path / rel).write_text("x")
    known = {"physics/a.md": 11, "physics/deep/b.md": 12, "physics.md": 13, "other/c.md": 14}
    (tmp_path / "a.txt").write_text("x")
    events = expand_folders(tmp_path, [FileEvent(DELETED, "physics"), FileEvent(ADDED, "science", 99),
                                       FileEvent(ADDED, "a.txt", 5), FileEvent(DELETED, "gone.txt")], known)
    assert sorted((e.kind, e.path) for e in events) == [
        ("added", "a.txt"), ("added", "science/a.md"), ("added", "science/deep/b.md"),
        ("deleted", "gone.txt"), ("deleted", "physics/a.md"), ("deleted", "physics/deep/b.md")]
    inodes = {e.path: e.inode for e in events if e.kind == "added"}
    assert inodes["science/a.md"] == (tmp_path / "science" / "a.md").stat().st_ino


@pytest.mark.anyio
async def test_a_folder_renamed_under_watch_renames_every_note_in_it_and_later_edits_reach_the_notebook(make_world):
    world = make_world(watch_debounce_ms=50)
    world.write("physics/heat.md", "# Heat\nfirst version\n")
    world.write("physics/deep/waves.md", "# Waves\ncrests and troughs\n")
    async with world.run() as orch:
        await orch.refresh(["physics"])
    async with watching(world, refresh=True) as watch:
        with anyio.fail_after(60):
            (world.vault / "physics").rename(world.vault / "science")
            await watch.until(lambda: len([e for e in watch.events if e.kind == "renamed"]) == 2)
            world.write("science/heat.md", "# Heat\nsecond version mentions zeppelin\n")
            await watch.until(lambda: WatchEvent("refreshed", path="science/heat.md", branch="replaced")
                              in watch.events)
    events = watch.events

    assert {(e.path, e.renamed_to) for e in events if e.kind == "renamed"} == {
        ("physics/heat.md", "science/heat.md"), ("physics/deep/waves.md", "science/deep/waves.md")}
    store = world.store()
    assert sorted(m.path for m in store.all_mappings(world.notebook_id)) == ["science/deep/waves.md",
                                                                             "science/heat.md"]
    (row,) = store.mappings_by_path(world.notebook_id, "science/heat.md")
    assert "zeppelin" in world.remote_texts()[row.title]
    store.close()


@pytest.mark.anyio
async def test_watch_goes_on_when_the_disk_under_the_state_file_is_full(make_world, monkeypatch):
    import sqlite3

    from nlmsync.store import StateStore

    world = make_world(watch_debounce_ms=50)
    world.write("a.md", "# Alpha\nalpha\n")
    world.write("b.md", "# Beta\nbeta\n")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md"])
    rename = StateStore.apply_vault_rename
    full = {"now": True}

    def apply_vault_rename(self, old_path, new_path):
        if full["now"]:
            with self.step():  # the write SQLite cannot make: the device is full
                error = sqlite3.OperationalError("database or disk is full")
                error.sqlite_errorcode = 13
                raise error
        return rename(self, old_path, new_path)

    monkeypatch.setattr(StateStore, "apply_vault_rename", apply_vault_rename)
    async with watching(world) as watch:
        with anyio.fail_after(60):
            (world.vault / "a.md").rename(world.vault / "a2.md")
            await watch.until(lambda: any(e.kind == "failed" for e in watch.events))
            full["now"] = False  # room again: the watch is still there for the next change
            (world.vault / "b.md").rename(world.vault / "b2.md")
            await watch.until(lambda: WatchEvent("renamed", path="b.md", renamed_to="b2.md") in watch.events)
    events = watch.events

    (failure,) = [e for e in events if e.kind == "failed"]
    assert "no space left on the device" in failure.error and str(failure).startswith("not recorded: ")
    assert WatchEvent("renamed", path="b.md", renamed_to="b2.md") in events


@pytest.mark.anyio
async def test_a_note_renamed_away_and_back_under_watch_keeps_its_source(make_world):
    from nlmsync.watch import VaultWatcher

    world = make_world()
    world.write("note.md", "# Note\nkept as it is\n")
    async with world.run() as orch:
        source = (await orch.refresh(["note.md"])).notes[0].source_ids
    start = len(world.fake.calls)
    store = world.store()
    watcher = VaultWatcher(world.settings, store, None, lambda event: None)
    inode = (world.vault / "note.md").stat().st_ino
    (world.vault / "note.md").rename(world.vault / "note.txt")
    await watcher.apply([FileEvent(DELETED, "note.md"), FileEvent(ADDED, "note.txt", inode)])
    (world.vault / "note.txt").rename(world.vault / "note.md")
    await watcher.apply([FileEvent(DELETED, "note.txt"), FileEvent(ADDED, "note.md", inode)])
    store.close()
    async with world.run() as orch:
        report = await orch.refresh()  # the notes already synced: note.md still is
    assert [(n.path, n.branch, n.source_ids) for n in report.notes] == [("note.md", Branch.REUSED, source)]
    assert not {"source_add", "source_delete"} & {c.tool for c in world.fake.calls[start:]}
    assert list(world.remote()) == source


@pytest.mark.anyio
async def test_watch_refresh_waits_through_an_expired_login_and_resumes_when_it_comes_back(make_world):
    from nlmsync.app.login_wait import RETRY_SECONDS
    from nlmsync.fake.faults import Faults

    world = make_world(watch_debounce_ms=50)
    world.write("a.md", "# Alpha\nfirst\n")
    world.write("b.md", "# Beta\nfirst\n")
    async with world.run() as orch:
        await orch.refresh(["a.md", "b.md"])
    # one call on the login, then it expires; renewing fails; refresh_auth's third call finds a new login
    world.fake.faults = Faults(expire_login_after=1, renewal_fails=True, login_back_after=3)
    clock = HeldSleep()
    async with watching(world, refresh=True, sleep=clock.sleep) as watch:
        with anyio.fail_after(60):
            world.write("a.md", "# Alpha\nsecond\n")
            await watch.until(lambda: clock.asked)  # said so, and sleeps before trying again
            world.write("b.md", "# Beta\nsecond\n")  # changed while waiting: kept for later
            await watch.until(lambda: "b.md" in watch.plans[-1].modified)
            clock.tick()  # refresh_auth's second call: still no login
            await watch.until(lambda: len(clock.asked) == 2)
            assert not any(e.kind == "refreshed" for e in watch.events)
            clock.tick()  # the third: the login made elsewhere
            await watch.until(lambda: {e.path for e in watch.events if e.kind == "refreshed"} == {"a.md", "b.md"})
    kinds = [e.kind for e in watch.events]
    assert kinds.count("login_expired") == 1 and kinds.count("login_back") == 1  # said once, each
    assert kinds.index("login_expired") < kinds.index("login_back") < kinds.index("refreshed")
    (expired,) = [e for e in watch.events if e.kind == "login_expired"]
    assert "Google login" in expired.error and "nlm login" in str(expired)
    assert clock.asked == [RETRY_SECONDS, RETRY_SECONDS] and RETRY_SECONDS <= 60
    assert {e.path: e.branch for e in watch.events if e.kind == "refreshed"} == {"a.md": "replaced", "b.md": "replaced"}
    assert sorted(world.remote_texts().values()) == ["# Alpha\nsecond\n", "# Beta\nsecond\n"]
    assert world.calls("refresh_auth") == 3


@pytest.mark.anyio
async def test_watch_refresh_waits_for_the_allowance_to_reset(make_world):
    from datetime import UTC, datetime, timedelta

    from nlmsync.fake.faults import Faults

    world = make_world(watch_debounce_ms=50)
    world.write("a.md", "# Alpha\nfirst\n")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    start = len(world.fake.calls)
    now = datetime.now(UTC).replace(microsecond=0)
    world.fake.clock = now.timestamp  # the fake's rolling window resets five hours from now
    world.fake.faults = Faults(usage_used={"rolling": 100.0})
    clock = HeldSleep()
    async with watching(world, refresh=True, sleep=clock.sleep, clock=lambda: now) as watch:
        with anyio.fail_after(60):
            world.write("a.md", "# Alpha\nsecond\n")
            await watch.until(lambda: clock.asked)
            (spent,) = [e for e in watch.events if e.kind == "allowance_spent"]
            assert spent.resets_at == (now + timedelta(hours=5)).isoformat() and "rolling" in spent.error
            assert world.calls("source_add", since=start) == 0  # nothing sent meanwhile
            world.fake.faults = Faults()  # the window has reset
            clock.tick()
            await watch.until(lambda: any(e.kind == "refreshed" for e in watch.events))
    assert clock.asked == [5 * 3600.0]  # slept until the reset, not in a loop
    assert [e.kind for e in watch.events if e.kind.startswith("allowance")] == ["allowance_spent", "allowance_back"]
    assert list(world.remote_texts().values()) == ["# Alpha\nsecond\n"]
