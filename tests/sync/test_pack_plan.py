"""The pack planning at its own seam (`packs.plan`): which notes share a pack, which packs a run keeps, which
changed packs replace which older sources, and the room a layout has, over a real state file and the stub
client's listing."""

from __future__ import annotations

from tests.sync.stub import Bench

from nlmsync.store import PackRecord, SourceMapping
from nlmsync.sync.capacity import CAPACITY_HINT
from nlmsync.sync.branches import Branch
from nlmsync.sync.packs.layout import NotesDoNotFit
from nlmsync.sync.packs.outcomes import pack_outcome, simulated
from nlmsync.sync.packs.plan import (
    Group,
    Members,
    PackedNote,
    PlannedPack,
    Room,
    does_not_fit,
    group_changes,
    in_stages,
    pack_limit,
    packable,
    packed_notes,
    plan_packs,
    room_for_packs,
)
from nlmsync.sync.packs.text import block_size, compose_pack
from nlmsync.sync.packs.units import build_packs
from nlmsync.sync.prepared import PreparedNote, load_notes, prepare_note
from nlmsync.sync.titles import pack_title, title_hash

LIMIT = 1_000  # bytes a pack may hold in these tests (`source_max_bytes`)


def notes(bench: Bench, texts: dict[str, str]) -> list[PackedNote]:
    for path, text in texts.items():
        bench.write(path, text)
    return packed_notes(bench.deps(source_max_bytes=LIMIT), [prepare_note(p, t) for p, t in texts.items()], {})


def folder(bench: Bench, name: str, count: int) -> list[PackedNote]:
    return notes(bench, {f"{name}/{i}.md": f"note {name}{i} " * 30 for i in range(count)})


def held(bench: Bench, packed: list[PackedNote]) -> tuple[str, Members]:
    """`packed` uploaded as one pack and recorded; its source id and the notebook's packed notes."""
    text = compose_pack([(n.path, n.note.parts[0].text or "") for n in packed])
    title = pack_title(packed[0].path, packed[-1].path, len(packed), title_hash(text))
    source_id = bench.client.put(title, text)
    bench.store.record_pack(PackRecord("nb", source_id, "h", title, packed[0].path, packed[-1].path, len(packed),
                                       len(text)), [(n.path, n.note_hash) for n in packed])
    return source_id, bench.store.pack_members("nb")


def test_a_pack_holding_exactly_its_notes_is_kept_and_one_whose_note_changed_is_not(bench):
    first, second = folder(bench, "a", 3), folder(bench, "b", 3)
    kept, _ = held(bench, first)
    _, members = held(bench, second)
    edited = notes(bench, {"b/1.md": "edited " * 30})
    layout = sorted([*first, second[0], *edited, second[2]], key=lambda n: n.path)
    run = bench.run(source_max_bytes=LIMIT)
    planned = plan_packs(run.deps, layout, 10, members, run.remote)
    assert [(p.paths, p.keep is not None) for p in planned] == [
        ([n.path for n in first], True), ([n.path for n in second], False)]
    assert planned[0].source_id == kept


def test_a_changed_pack_replaces_the_packs_and_single_sources_its_notes_were_in_and_a_pack_left_empty_retires(bench):
    first, gone = folder(bench, "a", 2), folder(bench, "z", 2)
    old_pack, _ = held(bench, first)
    emptied, members = held(bench, gone)
    alone = notes(bench, {"a/2.md": "alone before " * 20})
    single = bench.client.put("a/2.md · 00000000")
    bench.store.upsert_mapping(SourceMapping(notebook_id="nb", path="a/2.md", source_id=single, content_hash="h",
                                             title="a/2.md · 00000000"))
    run = bench.run(source_max_bytes=LIMIT)
    run.registry.preload()
    planned = plan_packs(run.deps, [*first, *alone], 10, members, run.remote)
    groups = group_changes(run.deps, planned, run.registry, members, gone=[n.path for n in gone])
    assert [([p.paths for p in g.packs], [r.source_id for r in g.old_packs], g.old_singles) for g in groups] == [
        ([["a/0.md", "a/1.md", "a/2.md"]], [old_pack], ["a/2.md"]), ([], [emptied], [])]


def test_the_room_a_layout_has_counts_what_stays_and_not_what_goes_into_packs(bench):
    bench.deps(capacity=10, pack_free=1)
    bench.client.put("a source added by hand")
    single = bench.client.put("a.md · 00000000")
    bench.store.upsert_mapping(SourceMapping(notebook_id="nb", path="a.md", source_id=single, content_hash="h",
                                             title="a.md · 00000000"))
    run = bench.run(capacity=10, pack_free=1)
    room = room_for_packs(run.deps, run.remote, run.registry, ["a.md"], alone_parts=2)
    assert (room.capacity, room.free, room.staying, room.alone_parts, room.budget) == (10, 1, 1, 2, 6)
    assert room_for_packs(run.deps, run.remote, run.registry, [], alone_parts=0).staying == 2


def test_a_layout_that_does_not_fit_says_what_it_needs_what_takes_the_room_and_by_how_much(bench):
    packed = folder(bench, "f", 3)
    size = sum(block_size(n.path, n.size) for n in packed)
    deps = bench.deps(source_max_bytes=LIMIT)
    error = does_not_fit(deps, Room(capacity=10, free=1, staying=4, alone_parts=3), NotesDoNotFit(4, 2), packed)
    assert str(error) == (
        f"the 3 notes ({size:,} bytes) need at least 4 packs of at most {LIMIT:,} bytes and 3 for notes too large "
        "for a pack, but notebook nb has room for 5 (capacity 10, 1 left free by 'pack_free', 4 taken by sources "
        "that stay): 2 sources short; nothing was uploaded")
    bare = does_not_fit(deps, Room(capacity=1, free=1, staying=0, alone_parts=0), NotesDoNotFit(1, 0), packed[:1])
    assert str(bare).endswith("need at least 1 pack of at most 1,000 bytes, but notebook nb has room for 0 (capacity "
                              "1, 1 left free by 'pack_free'): 1 source short; nothing was uploaded")
    assert error.hint == bare.hint == CAPACITY_HINT


def test_a_note_exactly_as_large_as_a_pack_may_hold_is_packed_one_byte_more_is_not(bench):
    deps = bench.deps(source_max_bytes=5_000)
    bench.write("n.md", "word " * 10)
    note = load_notes(deps, ["n.md"])[0]
    assert isinstance(note, PreparedNote)
    fits = pack_limit(deps) - block_size("n.md", 0)  # the size whose block fills a pack exactly
    assert packable(deps, note, fits) and not packable(deps, note, fits + 1)


def test_a_kept_packs_outcome_is_titled_as_the_notebook_holds_it() -> None:
    kept = PackRecord("nb", "s-a", "h", "Pack a.md … c.md", "a.md", "c.md", 0, 0)
    outcome = pack_outcome(PlannedPack(notes=[], keep=kept, source_id="s-a"), Branch.REUSED)
    assert (outcome.title, outcome.source_id) == ("Pack a.md … c.md", "s-a")
    assert pack_outcome(PlannedPack(notes=[], title="New pack"), Branch.ADDED).title == "New pack"
    assert pack_outcome(PlannedPack(notes=[]), Branch.FAILED).title == ""  # not titled yet


def test_a_group_goes_in_one_pack_at_a_time_each_old_source_retired_once_the_packs_holding_its_notes_are_in() -> None:
    def pack(*paths: str) -> PlannedPack:
        return PlannedPack(notes=[PackedNote(prepare_note(p, f"text of {p}"), 10) for p in paths])

    def old(source_id: str, first: str, last: str) -> PackRecord:
        return PackRecord("nb", source_id, "h", f"Pack {first} … {last}", first, last, 2, 20)

    held = {"old-a": ["a.md", "b.md"], "old-b": ["b.md", "c.md"]}
    group = Group(packs=[pack("a.md", "b.md"), pack("c.md", "d.md")], old_packs=[old("old-a", "a.md", "b.md"),
                  old("old-b", "b.md", "c.md")], old_singles=["d.md"])
    stages = in_stages(group, lambda source_id: held[source_id])
    assert [([p.paths for p in s.packs], [r.source_id for r in s.old_packs], s.old_singles) for s in stages] == [
        ([["a.md", "b.md"]], ["old-a"], []),
        ([["c.md", "d.md"]], ["old-b"], ["d.md"])]  # old-b holds c.md too: it waits for the second pack
    assert [s.elsewhere for s in stages] == [{"c.md", "d.md"}, {"a.md", "b.md"}]
    assert all(s.replacing for s in stages)


def test_a_built_pack_whose_title_a_live_pack_of_the_state_file_has_is_kept_and_a_stranger_of_that_title_is_not(bench):
    ours, theirs = folder(bench, "a", 2), folder(bench, "b", 2)
    source_id, _ = held(bench, ours)
    text = compose_pack([(n.path, n.note.parts[0].text or "") for n in theirs])
    bench.client.put(pack_title(theirs[0].path, theirs[-1].path, 2, title_hash(text)), text)  # not in the state file
    run = bench.run(source_max_bytes=LIMIT)
    packs = [PlannedPack(notes=ours), PlannedPack(notes=theirs)]
    assert build_packs(run.deps, packs, run.remote, [n.path for n in [*ours, *theirs]], []) == {}
    assert [p.source_id for p in packs] == [source_id, None]


def test_a_dry_run_says_the_notes_that_left_an_old_pack_once_beside_the_first_pack_that_replaces_it(bench):
    packed = folder(bench, "a", 3)
    old, members = held(bench, packed)
    run = bench.run(source_max_bytes=LIMIT)
    record = bench.store.pack_by_source_id("nb", old)
    assert record is not None
    group = Group(packs=[PlannedPack(notes=[packed[0]]), PlannedPack(notes=[packed[1]])], old_packs=[record])
    outcomes = simulated(run.deps, [group], members)
    assert [(o.branch, o.paths, o.previous_source_ids, o.reason) for o in outcomes] == [
        (Branch.REPLACED, ["a/0.md"], [old], "1 left: a/2.md"),
        (Branch.REPLACED, ["a/1.md"], [], "its notes moved between packs")]
