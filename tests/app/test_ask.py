"""`Orchestrator.ask` and friends in-process: selection → ensure → query with carry-over → record, citations."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from nlmsync.errors import StateLockedError, UsageError
from nlmsync.fake.faults import DropRule, Faults
from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title, title_hash

pytestmark = pytest.mark.anyio

HEAPSORT = """# Heapsort

Heapsort sorts an array in place in O(n log n) time.

## How does it work?

Build a max-heap, then repeatedly swap the root with the last element and sift down.
"""
MERGESORT = "# Merge sort\n\nMerge sort splits the list, sorts halves and merges them; it is stable.\n"
SOURDOUGH = "# Sourdough\n\nFeed the starter flour and water; bake the loaf in a hot dutch oven.\n"


def fill(world) -> None:
    world.write("sorting/heapsort.md", HEAPSORT)
    world.write("sorting/merge-sort.md", MERGESORT)
    world.write("cooking/sourdough.md", SOURDOUGH)


def query_calls(world):
    return [c.arguments for c in world.fake.calls if c.tool == "notebook_query"]


async def test_ask_selects_ensures_queries_and_maps_citations(make_world):
    world = make_world(min_k=1)
    fill(world)
    async with world.run() as orch:
        result = await orch.ask("How does heapsort sift down a max-heap?")
        assert result.selected_notes[0].path == "sorting/heapsort.md"
        assert {n.path: n.branch for n in result.notes}["sorting/heapsort.md"] == Branch.ADDED
        heap_ids = next(n.source_ids for n in result.notes if n.path == "sorting/heapsort.md")
        assert result.source_ids[: len(heap_ids)] == heap_ids and result.carried_over_source_ids == []
        assert "max-heap" in result.answer
        first = result.citations[0]
        assert (first.number, first.path, first.heading, first.located) == (
            1, "sorting/heapsort.md", "How does it work?", True)  # the quoted text found in the note
        records = orch.store.query_records(world.notebook_id, result.conversation_id)
        assert records[0].source_ids == result.source_ids
        assert records[0].selected_paths == [n.path for n in result.notes if n.source_ids]
    assert query_calls(world)[0]["source_ids"] == result.source_ids


async def test_follow_up_carries_over_newest_first_and_new_starts_fresh(make_world):
    world = make_world(min_k=1, cutoff_ratio=0.9)
    fill(world)
    async with world.run() as orch:
        first = await orch.ask("heapsort max-heap")
        second = await orch.ask("sourdough starter loaf", continue_latest=True)
        assert second.conversation_id == first.conversation_id and second.continued
        assert set(first.source_ids) <= set(second.carried_over_source_ids)
        assert second.source_ids[0] not in first.source_ids  # the newly selected note comes first
        fresh = await orch.ask("sourdough starter loaf", new=True)
        assert fresh.carried_over_source_ids == [] and fresh.conversation_id != first.conversation_id
        assert orch.store.latest_conversation(world.notebook_id) == fresh.conversation_id


async def test_only_a_question_about_the_conversations_notes_follows_it_up(make_world):
    world = make_world()
    fill(world)
    async with world.run() as orch:
        first = await orch.ask("How do I bake a sourdough loaf?")
        unrelated = await orch.ask("How does heapsort sift down?")
        assert not unrelated.continued and unrelated.conversation_id != first.conversation_id
        assert unrelated.carried_over_source_ids == []  # the sourdough sources stay with their conversation
        assert any(f"shares no note with the latest one ({first.conversation_id})" in n for n in unrelated.notices)
        related = await orch.ask("Why does heapsort build a max-heap first?")
        assert related.continued and related.conversation_id == unrelated.conversation_id
        assert related.carried_over_source_ids and not related.notices
        vague = await orch.ask("And why?")  # matches no note well: read as a follow-up
        assert vague.continued and vague.conversation_id == unrelated.conversation_id
        anyway = await orch.ask("What about the starter?", continue_latest=True)
        assert anyway.continued and anyway.conversation_id == unrelated.conversation_id


def test_a_note_matched_only_to_reach_min_k_says_nothing_of_what_a_question_is_about() -> None:
    from types import SimpleNamespace

    from nlmsync.app.follow_up import follows_up, well_matched

    hits = [SimpleNamespace(path=p, score=s) for p, s in [("kimchi.md", 9.8), ("meeting.md", 5.7), ("heap.md", 1.6)]]
    assert well_matched(hits, 0.4) == ["kimchi.md", "meeting.md"] and well_matched([], 0.4) == []
    assert follows_up(["heap.md"], {"heap.md", "merge.md"}) and not follows_up(["heap.md"], {"kimchi.md"})
    assert follows_up([], {"kimchi.md"})  # a question that matches nothing well
    assert follows_up(["git.md"], {"kimchi.md"}, names_nothing=True)  # "Why?" matches notes holding "why"


async def test_carry_over_follows_aliases_to_the_current_source(make_world):
    world = make_world(min_k=1, cutoff_ratio=0.9)
    fill(world)
    async with world.run() as orch:
        first = await orch.ask("heapsort max-heap")
        old_ids = set(first.source_ids)
    world.write("sorting/heapsort.md", HEAPSORT + "\nEdited: heapsort is not stable.\n")
    async with world.run() as orch:
        replaced = await orch.refresh(["sorting/heapsort.md"])
        new_id = replaced.notes[0].source_ids[0]
        follow = await orch.ask("sourdough starter loaf", continue_latest=True)
    assert new_id in follow.carried_over_source_ids and not (old_ids & set(follow.carried_over_source_ids))


async def test_rejected_conversation_is_retried_once_without_it(make_world):
    world = make_world(min_k=1)
    fill(world)
    async with world.run() as orch:
        result = await orch.ask("heapsort", conversation_id="no-such-conversation")
    assert result.conversation_id and result.conversation_id != "no-such-conversation"
    assert any("no-such-conversation" in n for n in result.notices)
    calls = query_calls(world)
    assert [c.get("conversation_id") for c in calls] == ["no-such-conversation", None]


async def test_new_notebook_title_is_created_once_then_reused(make_world):
    world = make_world()
    fill(world)
    async with world.run(notebook="new:Demo") as orch:
        first = await orch.refresh(["sorting/heapsort.md"])
    async with world.run(notebook="new:Demo") as orch:
        second = await orch.refresh(["sorting/heapsort.md"])
        assert orch.store.default_notebook() == first.notebook_id
    assert second.notebook_id == first.notebook_id and second.notes[0].branch == Branch.REUSED
    assert world.mutating_calls().count("notebook_create") == 1


async def test_new_notebook_title_is_found_again_after_another_one_was_used(make_world):
    world = make_world()
    fill(world)
    ids = []
    for title in ("A", "B", "A"):
        async with world.run(notebook=f"new:{title}") as orch:
            ids.append((await orch.refresh(["sorting/heapsort.md"])).notebook_id)
    assert ids[0] == ids[2] != ids[1]
    assert world.mutating_calls().count("notebook_create") == 2


async def test_new_notebook_whose_create_answer_was_lost_is_adopted_not_created_twice(make_world):
    # call 1 of notebook_create made the fixture's notebook
    world = make_world(faults=Faults(drops=[DropRule(nth=2, tool="notebook_create", when="after")]))
    fill(world)
    async with world.run(notebook="new:Lost") as orch:
        first = await orch.refresh(["sorting/heapsort.md"])
    async with world.run(notebook="new:Lost") as orch:
        second = await orch.refresh(["sorting/heapsort.md"])
    assert first.notebook_id == second.notebook_id
    assert any(c.tool == "notebook_create" and c.dropped == "after" for c in world.fake.calls)
    assert [nb.title for nb in world.fake.notebooks.values()].count("Lost") == 1


async def test_no_notebook_is_a_usage_error(make_world):
    world = make_world()
    fill(world)
    async with world.run(notebook=None) as orch:
        with pytest.raises(UsageError, match="no notebook given"):
            await orch.refresh(["sorting/heapsort.md"])


async def test_status_and_reconcile_report_stale_orphans_and_pending(make_world):
    world = make_world()
    fill(world)
    async with world.run() as orch:
        report = await orch.refresh(["sorting/heapsort.md", "sorting/merge-sort.md"])
    gone = report.notes[0].source_ids[0]
    world.fake.apply("source_delete", {"source_id": gone, "confirm": True})
    orphan = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                             "text": "x", "title": source_title("lost.md", title_hash("x"))})
    orphan = orphan["source_id"]
    # titled like an upload of lost.md, but its text is not the one the title's hash names: not nlmsync's
    world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": "y",
                                    "title": source_title("lost.md", title_hash("x"))})
    async with world.run() as orch:
        status = await orch.status()
        assert [e.path for e in status.stale_sources] == ["sorting/heapsort.md"]
        # the upload of lost.md is nlmsync's (what it holds hashes to its title): the state file takes it as a
        # source of a note that left the vault, which `refresh --all` removes; the look-alike is someone else's
        assert [(e.path, e.source_id) for e in status.active_sources if e.path == "lost.md"] == [("lost.md", orphan)]
        assert [(c.path, c.change) for c in status.local_changes] == [("lost.md", "deleted")]
        assert status.orphan_source_ids == [] and status.source_count == 3 and status.unmanaged_count == 1
        assert [s.command for s in status.next_steps] == [
            "nlmsync refresh --all (mirrors the vault: also uploads notes not synced yet)",
            "nlmsync refresh sorting/heapsort.md"]
        result = await orch.reconcile()
        assert result.stale_paths == ["sorting/heapsort.md"] and result.orphan_source_ids == []
        assert result.active_count == 2
        assert orch.store.mappings_by_path(world.notebook_id, "sorting/heapsort.md")[0].status == "stale"


async def test_conversation_rejected_with_a_generic_error_is_retried_but_other_errors_are_not(make_world):
    from nlmsync.errors import ServerError
    from nlmsync.fake.faults import ErrorRule

    world = make_world(min_k=1, faults=Faults(errors=[ErrorRule("notebook_query", "Conversation history expired", nth=2),
                                                      ErrorRule("notebook_query", "Internal error", nth=4)]))
    fill(world)
    async with world.run() as orch:
        first = await orch.ask("heapsort")
        second = await orch.ask("heapsort")  # call 2 is rejected, call 3 starts a new conversation
        assert second.conversation_id not in (None, first.conversation_id)
        assert any(n.endswith("; asked again in a new conversation") for n in second.notices), second.notices
        with pytest.raises(ServerError, match="Internal error"):
            await orch.ask("heapsort")  # call 4: a failure that is not about the conversation
    assert [c.get("conversation_id") for c in query_calls(world)] == [None, first.conversation_id, None,
                                                                       second.conversation_id]


async def test_dry_run_plans_a_new_notebook_without_creating_it(make_world):
    # the server has no notebook with the title: the dry run only looked
    world = make_world()
    fill(world)
    async with world.run(notebook="new:Planned") as orch:
        plan = await orch.refresh(["sorting"], dry_run=True)
        assert orch.store.default_notebook() is None
    assert plan.notebook_id == "new:Planned" and plan.dry_run
    assert [(n.path, n.branch) for n in plan.notes] == [("sorting/heapsort.md", Branch.ADDED),
                                                        ("sorting/merge-sort.md", Branch.ADDED)]
    assert [c.tool for c in world.fake.calls] == ["notebook_list"] and len(world.fake.notebooks) == 1


class _QueryObserver:
    """Wraps the client: while `notebook_query` runs, checks whether another run could take the writer lock."""

    def __init__(self, client, world) -> None:
        self._client = client
        self._world = world
        self.lock_free_during_query: bool | None = None

    def __getattr__(self, name):
        return getattr(self._client, name)

    async def notebook_query(self, *args, **kwargs):
        other = self._world.store()
        try:
            with other.writer(timeout=0):
                self.lock_free_during_query = True
        except StateLockedError:
            self.lock_free_during_query = False
        return await self._client.notebook_query(*args, **kwargs)


async def test_the_query_holds_no_writer_lock_so_a_scheduled_refresh_is_not_refused(make_world):
    world = make_world()
    fill(world)
    observers: list[_QueryObserver] = []

    def wrap(client):
        observers.append(_QueryObserver(client, world))
        return observers[0]

    async with world.run(wrap=wrap) as orch:
        result = await orch.ask("how does heapsort work")
        assert result.conversation_id
        assert orch.store.query_records(world.notebook_id, result.conversation_id)
    assert observers[0].lock_free_during_query is True


async def test_waiting_for_the_writer_lock_leaves_the_event_loop_running(make_world):
    world = make_world()
    fill(world)
    other = world.store()
    ticks = 0
    async with world.run() as orch, anyio.create_task_group() as tg:
        done = anyio.Event()

        async def refresh():
            await orch.refresh(["sorting/heapsort.md"])
            done.set()

        with other.writer():
            tg.start_soon(refresh)
            with anyio.fail_after(30):
                while ticks < 5:  # the loop keeps turning while refresh waits for the lock
                    await anyio.lowlevel.checkpoint()
                    ticks += 1
            assert not done.is_set()
        with anyio.fail_after(30):
            await done.wait()
    assert [t.split(" · ")[0] for t in world.remote().values()] == ["sorting/heapsort.md"]


async def test_asking_an_empty_notebook_about_nothing_in_the_vault_is_refused_before_any_query(make_world):
    from nlmsync.errors import InputError

    world = make_world()
    world.write("a.md", "# Apples\n\nRed and green apples.\n")
    with pytest.raises(InputError) as info:
        async with world.run() as orch:
            await orch.ask("How do submarines dive?")
    assert "no note of the vault matches the question" in str(info.value) and info.value.exit_code == 2
    assert world.calls("notebook_query") == 0


async def test_ask_tells_the_progress_display_it_prepares_the_selected_notes(make_world):
    world = make_world(min_k=1)
    fill(world)

    class Recorder:
        def __init__(self) -> None:
            self.started: list[tuple[str, int]] = []
            self.advanced: list[str] = []

        def start(self, label: str, total: int) -> None:
            self.started.append((label, total))

        def advance(self, outcome) -> None:
            self.advanced.append(outcome.path)

        def indexing(self, done: int, total: int) -> None:
            pass

        def reading(self, done: int, total: int) -> None:
            pass

    async with world.run() as orch:
        orch.progress = recorder = Recorder()
        result = await orch.ask("How does heapsort sift down a max-heap?")
    selected = [n.path for n in result.selected_notes]
    assert recorder.started[0] == ("preparing sources", len(selected))
    assert recorder.started[1][0].startswith("asking NotebookLM")
    assert "sorting/heapsort.md" in recorder.advanced
