"""Eviction at its own seam (`carry.eviction`): the room a run makes, and the room a dry run says it would make,
over a real state file's eviction queue and the stub client in the server's slot."""

from __future__ import annotations

import pytest
from tests.sync.stub import Bench

from nlmsync.errors import CapacityError, ServerError
from nlmsync.store import SourceMapping
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.capacity import CAPACITY_HINT
from nlmsync.sync.carry.eviction import make_room, plan_evictions
from nlmsync.sync.notes.decide import PlannedNote
from nlmsync.sync.notes.units import simulate
from nlmsync.sync.prepared import prepare_note
from nlmsync.sync.report import NoteOutcome

pytestmark = pytest.mark.anyio


def fill(bench: Bench, *paths: str) -> None:
    """Each of `paths` uploaded by nlmsync and recorded: a managed source, queued for eviction in this order."""
    deps = bench.deps(capacity=len(paths))
    rows = [SourceMapping(notebook_id="nb", path=p, source_id=bench.client.put(f"{p} · 0000000{i}"),
                          content_hash=f"h{i}", title=f"{p} · 0000000{i}") for i, p in enumerate(paths)]
    deps.store.add_new_mappings(rows)


async def test_a_dry_run_plans_the_evictions_the_run_makes_each_note_once(bench):
    fill(bench, "a.md", "b.md", "c.md")
    run = bench.run(capacity=3)
    planned, occupied = plan_evictions(run.deps, run.remote, len(run.remote), 2, set())
    assert len({o.path for o in planned}) == len(planned) == 2 and occupied == 1
    evicted: list[NoteOutcome] = []
    await make_room(run.deps, run.remote, 2, set(), lambda: len(run.remote), evicted)
    assert [(o.path, o.branch, o.source_ids, o.reason) for o in planned] == [
        (o.path, o.branch, o.source_ids, o.reason) for o in evicted] == [
        ("a.md", Branch.EVICTED, ["s0"], "capacity"), ("b.md", Branch.EVICTED, ["s1"], "capacity")]
    assert all(o.branch == Branch.EVICTED for o in evicted) and len(bench.client.sources) == 1
    assert {e.path for e in bench.store.recent_evictions("nb", 10)} == {o.path for o in evicted}
    assert all(bench.store.mappings_by_path("nb", o.path) == [] for o in evicted)


async def test_the_notes_a_run_makes_live_are_never_evicted_and_none_left_means_full(bench):
    fill(bench, "a.md", "b.md")
    run = bench.run(capacity=2)
    with pytest.raises(CapacityError) as refused:
        plan_evictions(run.deps, run.remote, 2, 1, {"a.md", "b.md"})
    assert str(refused.value) == ("notebook nb is full (capacity 2 sources) and no source uploaded by nlmsync may be "
                                  "evicted")
    assert refused.value.hint == CAPACITY_HINT and "'capacity' setting" in CAPACITY_HINT
    evicted: list[NoteOutcome] = []
    with pytest.raises(CapacityError) as full:
        await make_room(run.deps, run.remote, 2, {"a.md"}, lambda: len(run.remote), evicted)
    assert str(full.value) == str(refused.value)  # the run says what its dry run says
    assert [o.path for o in evicted] == ["b.md"] and bench.store.mappings_by_path("nb", "a.md")


def test_a_dry_run_of_several_notes_plans_room_for_each_in_turn_and_passes_the_rest_through(bench):
    """A full notebook of three: the dry run of two new notes, a kept one and an excluded file says what the run
    would do, in order: each new note evicts the oldest note left (the kept one never), the kept one keeps its
    source, the excluded one passes as it was."""
    fill(bench, "a.md", "b.md", "c.md")
    run = bench.run(capacity=3)
    kept = prepare_note("c.md", "c\n")
    excluded = NoteOutcome(path="big.pdf", branch=Branch.EXCLUDED, reason="not a note")
    items: list[PlannedNote | NoteOutcome] = [
        excluded, PlannedNote(prepare_note("d.md", "d\n"), Decision(Branch.ADDED)),
        PlannedNote(kept, Decision(Branch.REUSED, keep=("s2",)), ("c.md · 00000002",)),
        PlannedNote(prepare_note("e.md", "e\n"), Decision(Branch.ADDED))]
    outcomes = simulate(run.deps, items, run.remote, {"c.md"})
    assert outcomes[0] is excluded
    assert [(o.path, o.branch, o.source_ids) for o in outcomes[1:]] == [
        ("a.md", Branch.EVICTED, ["s0"]), ("d.md", Branch.ADDED, []), ("c.md", Branch.REUSED, ["s2"]),
        ("b.md", Branch.EVICTED, ["s1"]), ("e.md", Branch.ADDED, [])]
    assert bench.client.mutating() == [] and len(bench.store.mappings_by_path("nb", "a.md")) == 1  # nothing done


async def test_a_note_whose_eviction_was_refused_is_not_picked_again(bench, monkeypatch: pytest.MonkeyPatch):
    fill(bench, "a.md", "b.md")
    run = bench.run(capacity=2)
    delete = bench.client.source_delete

    async def refusing(source_id: str) -> object:
        if source_id == "s0":
            raise ServerError("Internal error")
        return await delete(source_id)

    monkeypatch.setattr(bench.client, "source_delete", refusing)
    exclude: set[str] = set()
    evicted: list[NoteOutcome] = []
    with pytest.raises(ServerError):
        await make_room(run.deps, run.remote, 1, exclude, lambda: len(run.remote), evicted)
    await make_room(run.deps, run.remote, 1, exclude, lambda: len(run.remote), evicted)  # the run's next unit
    assert [o.path for o in evicted] == ["b.md"] and list(bench.client.sources) == ["s0"]


def test_a_dry_run_names_the_source_already_holding_a_new_notes_title_and_adopts_nothing(bench):
    """A note to upload whose title a source of the notebook already holds (an upload the state file lost): the dry
    run names that source as the note's, as the run would find it; a dry run adopts nothing."""
    fill(bench, "a.md")
    note = prepare_note("f.md", "f\n")
    held = bench.client.put(note.parts[0].title)
    run = bench.run(capacity=5)
    outcomes = simulate(run.deps, [PlannedNote(note, Decision(Branch.ADDED)),
                                   PlannedNote(prepare_note("g.md", "g\n"), Decision(Branch.ADDED))], run.remote, set())
    assert [(o.path, o.source_ids, o.adopted) for o in outcomes] == [("f.md", [held], False), ("g.md", [], False)]
