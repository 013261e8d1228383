"""The single notes' decisions at their own seam (`notes.decide`): each note's branch from the registry, the
listing and the vault, with a real state file and the stub client in the server's slot."""

from __future__ import annotations

from tests.sync.stub import Bench

from nlmsync.store import SourceMapping
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.branches import decide_branch
from nlmsync.sync.notes.decide import PlannedNote, decide_all, needs_retitle, slots_needed
from nlmsync.sync.prepared import PreparedNote, load_notes, prepare_note
from nlmsync.sync.registry import ResolvedMapping
from nlmsync.sync.remote import RemoteView


def synced(bench: Bench, path: str, text: str) -> str:
    """`path` holding `text`, uploaded and recorded as a note kept alone; returns its source's id."""
    bench.write(path, text)
    note = prepare_note(path, text)
    source_id = bench.client.put(note.parts[0].title, text)
    bench.deps()
    bench.store.upsert_mapping(SourceMapping(notebook_id="nb", path=path, source_id=source_id,
                                             content_hash=note.hashes[0], title=note.parts[0].title))
    return source_id


def decided(bench: Bench, *paths: str) -> dict[str, PlannedNote]:
    run = bench.run()
    run.registry.preload()
    notes = [n for n in load_notes(run.deps, list(paths)) if isinstance(n, PreparedNote)]
    return {p.path: p for p in decide_all(run.deps, notes, run.remote, run.registry) if isinstance(p, PlannedNote)}


def test_a_copy_of_a_note_that_is_still_there_is_uploaded_and_takes_nothing_from_it(bench):
    """`b.md` copied from `a.md`: the same text, but `a.md` did not go anywhere, so `b.md` is new and `a.md`
    keeps its source."""
    source_id = synced(bench, "a.md", "the same words\n")
    bench.write("b.md", "the same words\n")
    decisions = decided(bench, "b.md")
    assert decisions["b.md"].decision.branch == Branch.ADDED and decisions["b.md"].decision.rename_from is None
    assert [m.source_id for m in bench.store.mappings_by_path("nb", "a.md")] == [source_id]


def test_a_note_moved_and_copied_is_renamed_once_and_its_copy_is_new(bench):
    """`a.md` moved to `b.md` and copied to `c.md`: one of them takes `a.md`'s source, the other is uploaded."""
    source_id = synced(bench, "a.md", "moved and copied\n")
    (bench.vault / "a.md").rename(bench.vault / "b.md")
    bench.write("c.md", "moved and copied\n")
    decisions = decided(bench, "b.md", "c.md")
    assert [(d.decision.branch, d.decision.rename_from, d.decision.keep) for d in decisions.values()] == [
        (Branch.RENAMED, "a.md", (source_id,)), (Branch.ADDED, None, ())]


def test_a_split_note_renamed_while_one_of_its_parts_was_deleted_is_uploaded_again():
    """The vanished path's parts must all be live for a rename: one part gone from the notebook means the note
    has no whole source to rebind, so it is uploaded (never reported renamed with a part missing)."""
    old = [ResolvedMapping(0, "s1", "h1", "s1"), ResolvedMapping(1, "s2", "h2", "s2")]
    assert decide_branch(["h1", "h2"], [], {"s1", "s2"}, [("old.md", old)]).branch == Branch.RENAMED
    assert decide_branch(["h1", "h2"], [], {"s1"}, [("old.md", old)]).branch == Branch.ADDED


def test_a_note_whose_source_is_live_and_unchanged_is_reused_and_an_edited_one_replaced(bench):
    kept = synced(bench, "a.md", "kept\n")
    edited = synced(bench, "b.md", "before\n")
    bench.write("b.md", "after\n")
    decisions = decided(bench, "a.md", "b.md")
    assert (decisions["a.md"].decision.branch, decisions["a.md"].decision.keep) == (Branch.REUSED, (kept,))
    assert (decisions["b.md"].decision.branch, decisions["b.md"].decision.previous) == (Branch.REPLACED, (edited,))


SPLIT = "".join(f"Paragraph {i} holds words enough to need a part of its own here.\n\n" for i in range(3))


def test_a_kept_split_note_is_retitled_only_when_its_titles_name_another_path_or_part():
    note = prepare_note("a.md", SPLIT, max_words=15)
    titles = tuple(p.title for p in note.parts)
    assert len(titles) == 3
    kept = Decision(Branch.REUSED, keep=("s1", "s2", "s3"))
    assert not needs_retitle(PlannedNote(note, kept, titles))
    assert needs_retitle(PlannedNote(prepare_note("moved/a.md", SPLIT, max_words=15), kept, titles))
    assert needs_retitle(PlannedNote(note, kept, (titles[1], titles[0], titles[2])))  # parts' titles swapped
    assert needs_retitle(PlannedNote(note, kept, titles[:2]))  # a part's row missing


def test_a_part_whose_exact_title_is_listed_takes_no_new_slot():
    note = prepare_note("a.md", SPLIT, max_words=15)
    listed = RemoteView("nb", "Stub", {"s1": note.parts[1].title, "s2": "someone's notes.pdf"})
    assert slots_needed(PlannedNote(note, Decision(Branch.ADDED)), listed) == len(note.parts) - 1 == 2
