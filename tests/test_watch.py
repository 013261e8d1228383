"""Watch mode: §11 event mapping as pure functions, and one real watch run driven by file changes."""

from __future__ import annotations

from functools import partial

import anyio
import pytest
from watchfiles import Change

from nlmsync.fake.server import build_fake_server
from nlmsync.search.index import NoteIndex
from nlmsync.watch import FileEvent, WatchEvent, WatchPlan, plan_watch_actions, to_events, watch_vault


def test_create_modify_delete_map_to_index_marks():
    plan = plan_watch_actions([FileEvent("added", "new.md", 1), FileEvent("modified", "old.md", 2),
                               FileEvent("deleted", "gone.md"), FileEvent("modified", "image.png", 3)], {})
    assert plan.modified == ["new.md", "old.md"] and plan.deleted == ["gone.md"]
    assert plan.renamed_mappings == [] and plan.removed_mappings == []


def test_a_file_name_that_is_not_utf8_makes_no_event(tmp_path):
    (tmp_path / "latin1-\udce9.md").write_text("x")
    (tmp_path / "ok.md").write_text("x")
    changes = [(Change.added, str(tmp_path / "latin1-\udce9.md")), (Change.added, str(tmp_path / "ok.md"))]
    assert [e.path for e in to_events(tmp_path, changes)] == ["ok.md"]


def test_rename_md_to_md_moves_the_mapping():
    plan = plan_watch_actions([FileEvent("deleted", "a.md"), FileEvent("added", "dir/b.md", 7)], {"a.md": 7})
    assert plan == WatchPlan(modified=["dir/b.md"], deleted=["a.md"], renamed_mappings=[("a.md", "dir/b.md")])


def test_rename_md_to_other_removes_the_mapping():
    plan = plan_watch_actions([FileEvent("deleted", "a.md"), FileEvent("added", "a.txt", 7)], {"a.md": 7})
    assert plan == WatchPlan(deleted=["a.md"], removed_mappings=[("a.md", "a.txt")])


def test_rename_other_to_md_is_a_new_note():
    plan = plan_watch_actions([FileEvent("deleted", "a.txt"), FileEvent("added", "a.md", 7)], {"a.txt": 7})
    assert plan == WatchPlan(modified=["a.md"])


def test_delete_and_unrelated_add_are_not_a_rename():
    plan = plan_watch_actions([FileEvent("deleted", "a.md"), FileEvent("added", "b.md", 8)], {"a.md": 7})
    assert plan == WatchPlan(modified=["b.md"], deleted=["a.md"])


@pytest.mark.anyio
async def test_real_watch_keeps_index_registry_and_notebook_current(make_world):
    world = make_world(watch_debounce_ms=50)
    world.write("a.md", "# Alpha\nfirst version\n")
    world.write("other.md", "# Other\nunsynced\n")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    events: list[WatchEvent] = []
    ready, replaced, renamed, stop = anyio.Event(), anyio.Event(), anyio.Event(), anyio.Event()

    def on_batch(plan: WatchPlan) -> None:
        ready.set()
        if ("a.md", "moved.md") in plan.renamed_mappings:
            renamed.set()

    def on_message(event: WatchEvent) -> None:
        events.append(event)
        if (event.kind, event.branch, event.path) == ("refreshed", "replaced", "a.md"):
            assert str(event) == "replaced a.md"
            replaced.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(watch_vault, world.settings, refresh=True, server=build_fake_server(world.fake),
                              stop_event=stop, on_batch=on_batch, on_message=on_message))
        with anyio.fail_after(60):
            await ready.wait()
            world.write("a.md", "# Alpha\nsecond version mentions zeppelin\n")
            await replaced.wait()
            (world.vault / "a.md").rename(world.vault / "moved.md")
            await renamed.wait()
        stop.set()

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


@pytest.mark.anyio
async def test_watching_a_missing_vault_is_an_input_error_and_creates_nothing(make_world, tmp_path):
    from nlmsync.errors import InputError

    world = make_world()
    missing = tmp_path / "no-such-vault"
    settings = world.settings.model_copy(update={"vault": missing, "state": missing / ".nlmsync" / "state.db"})
    with pytest.raises(InputError, match="no-such-vault: the vault is not a directory"):
        await watch_vault(settings)
    assert not missing.exists()
