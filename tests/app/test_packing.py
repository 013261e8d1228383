"""Packed notebooks against the in-process fake and a real state store: when nlmsync packs, what a pack holds,
what each change costs, asking with packs, citations, and the settings that shape it."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from tests.app.world import stopped_report

from nlmsync.errors import CapacityError, PartialFailure
from nlmsync.fake.faults import ErrorRule, Faults
from nlmsync.sync.branches import Branch
from nlmsync.sync.packs.text import compose_pack, path_heading
from nlmsync.sync.titles import pack_title, parse_pack_title, title_hash

pytestmark = pytest.mark.anyio

NOTES = 40
LONG_AGO = time.time_ns() - 3600 * 10**9


def note_text(i: int, version: int = 1) -> str:
    return (f"# Note {i}\n\nVersion {version}: the body of note {i} about topic{i % 7}.\n\n"
            f"## Details\nMore words about item {i}, sorted {i * 3}.\n")


def fill(world, count: int = NOTES) -> list[str]:
    paths = [f"f{i % 4}/n{i:02}.md" for i in range(count)]
    for i, path in enumerate(paths):
        world.write(path, note_text(i))
        os.utime(world.vault / path, ns=(LONG_AGO, LONG_AGO))
    return sorted(paths)


def packed_paths(world) -> dict[str, list[str]]:
    """Title -> the notes a pack's text holds, read from the fake's sources (what NotebookLM holds)."""
    held: dict[str, list[str]] = {}
    for title, text in world.remote_texts().items():
        if parse_pack_title(title) is not None:
            held[title] = [line[2:] for line in text.splitlines() if line.startswith("# ") and line.endswith(".md")]
    return held


def assert_every_note_once(world, paths: list[str]) -> None:
    """Every note in exactly one source: one pack, or its own source — never both, never none."""
    in_packs = [p for held in packed_paths(world).values() for p in held]
    alone = [t.split(" · ")[0] for t in world.remote() .values() if parse_pack_title(t) is None]
    assert sorted(in_packs + alone) == sorted(paths)


async def mirror(world, **overrides: object):
    async with world.run(**overrides) as orch:
        return await orch.refresh(all_notes=True)


async def test_a_vault_that_does_not_fit_is_packed_with_every_note_in_one_source(make_world):
    world = make_world(capacity=6)
    paths = fill(world)
    report = await mirror(world)
    assert report.packs and all(p.branch == Branch.ADDED for p in report.packs)
    assert report.notes == []  # packed notes are reported through their packs
    assert_every_note_once(world, paths)
    assert len(world.remote()) <= 6 - 3  # pack_free sources left free
    assert report.layout is not None and report.layout.packed_note_count == NOTES
    assert [p for pack in report.packs for p in pack.paths] == paths
    text = next(iter(world.remote_texts().values()))
    first = paths[0]
    assert text.startswith(f"{path_heading(first)}\n\n{note_text(int(first[-5:-3]))}")


async def test_a_vault_that_fits_stays_one_note_per_source_unless_always(make_world):
    world = make_world(capacity=50)
    paths = fill(world, 10)
    report = await mirror(world)
    assert report.packs == [] and len(report.notes) == 10
    world2 = make_world(capacity=50)
    world2.settings = world2.settings.model_copy(update={"state": world.root / "other.db"})
    report = await mirror(world, pack="always")
    assert len(report.packs) == 1 and report.packs[0].paths == paths
    assert_every_note_once(world, paths)


async def test_pack_never_stops_with_exit_3_as_one_note_per_source_does(make_world):
    world = make_world(capacity=6)
    fill(world)
    with pytest.raises(CapacityError):
        await mirror(world, pack="never")
    assert world.mutating_calls() == []


async def test_an_idle_run_makes_no_mutating_call_and_one_listing(make_world):
    world = make_world(capacity=6)
    fill(world)
    first = await mirror(world)
    mark = len(world.fake.calls)
    again = await mirror(world)
    assert world.mutating_calls(mark) == []
    assert world.calls("notebook_get", mark) == 1
    assert [(p.branch, p.source_id) for p in again.packs] == [(Branch.REUSED, p.source_id) for p in first.packs]


@pytest.mark.parametrize("change", ["edit", "insert", "delete", "rename"])
async def test_one_change_replaces_one_pack_add_first(make_world, change):
    world = make_world(capacity=6, pack_free=1)
    paths = fill(world)
    await mirror(world, pack="always", source_max_bytes=2_000)  # several small packs
    before = packed_paths(world)
    assert len(before) >= 3
    target = paths[len(paths) // 2]
    if change == "edit":
        world.write(target, note_text(99, 2))
    elif change == "insert":
        target = target[:-3] + "b.md"
        world.write(target, note_text(98))
        paths.append(target)
    elif change == "delete":
        (world.vault / target).unlink()
        paths.remove(target)
    else:
        renamed = target[:-3] + "-renamed.md"
        (world.vault / target).rename(world.vault / renamed)
        paths[paths.index(target)] = renamed
    mark = len(world.fake.calls)
    report = await mirror(world, pack="always", source_max_bytes=2_000)
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]  # no pack was full: none is split
    changed = [p for p in report.packs if p.branch != Branch.REUSED]
    assert [p.branch for p in changed] == [Branch.REPLACED]
    assert len(set(packed_paths(world)) - set(before)) == 1
    assert_every_note_once(world, paths)
    async with world.run() as orch:
        assert orch.store.pending_deletions(world.notebook_id) == []
        old = changed[0].previous_source_ids
        assert old and orch.store.resolve_source_id(old[0]) == changed[0].source_id  # carry-over resolves


async def test_notes_alone_move_into_packs_when_the_vault_outgrows_the_notebook(make_world):
    world = make_world(capacity=12)
    paths = fill(world, 10)
    first = await mirror(world)
    assert len(first.notes) == 10 and not first.packs
    more = [f"g/m{i:02}.md" for i in range(20)]
    for i, path in enumerate(more):
        world.write(path, note_text(100 + i))
    report = await mirror(world)
    assert report.packs
    assert_every_note_once(world, paths + more)
    assert len(world.remote()) <= 12 - 3
    async with world.run() as orch:
        assert orch.store.all_mappings(world.notebook_id) == []
        assert orch.store.pending_deletions(world.notebook_id) == []


async def test_hand_added_sources_are_left_alone_and_counted(make_world):
    world = make_world(capacity=6)
    paths = fill(world)
    hand = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                           "text": "my own notes", "title": "Mine"})["source_id"]
    report = await mirror(world)
    assert hand in world.remote()
    assert len(world.remote()) <= 6 - 3
    assert report.layout is not None and report.layout.pack_count == len(world.remote()) - 1
    assert_every_note_once(world, paths + ["Mine"])


async def test_notes_that_do_not_fit_even_packed_stop_with_exit_3_saying_by_how_much(make_world):
    world = make_world(capacity=4)
    fill(world)
    with pytest.raises(CapacityError) as info:
        await mirror(world, source_max_bytes=1_000)
    message = str(info.value)
    assert f"the {NOTES} notes" in message and "short; nothing was uploaded" in message
    assert "room for 1 " in message and "'pack_free'" in message
    assert world.mutating_calls() == []


async def test_packs_that_no_longer_fit_are_not_counted_as_sources_that_stay(make_world):
    world = make_world(capacity=8)
    fill(world)
    await mirror(world, pack="always", source_max_bytes=2_000)
    with pytest.raises(CapacityError) as info:
        await mirror(world, pack="always", source_max_bytes=1_000, capacity=6)
    assert "taken by" not in str(info.value)  # the packs are its own: replaced, not staying


async def test_a_dry_run_prints_the_plan_and_changes_nothing(make_world):
    world = make_world(capacity=6)
    fill(world)
    await mirror(world, pack="always", source_max_bytes=2_000)
    world.write("f1/n05.md", note_text(5, 2))
    mark = len(world.fake.calls)
    async with world.run(pack="always", source_max_bytes=2_000) as orch:
        plan = await orch.refresh(all_notes=True, dry_run=True)
    assert world.mutating_calls(mark) == []
    changed = [p for p in plan.packs if p.branch != Branch.REUSED]
    assert [(p.branch, p.reason) for p in changed] == [(Branch.REPLACED, "1 changed: f1/n05.md")]
    assert "f1/n05.md" in changed[0].paths and changed[0].previous_source_ids


async def test_a_note_too_large_for_a_pack_stays_alone(make_world):
    world = make_world(capacity=8)
    paths = fill(world, 12)
    world.write("big.md", "# Big\n\n" + "word " * 600)
    report = await mirror(world, pack="always", source_max_bytes=2_000)
    big = [n for n in report.notes if n.path == "big.md"]
    assert big and big[0].branch == Branch.ADDED and big[0].part_count > 1
    assert "big.md" not in [p for pack in report.packs for p in pack.paths]
    in_packs = [p for held in packed_paths(world).values() for p in held]
    assert sorted(in_packs) == paths


async def test_pack_never_unpacks_a_packed_notebook(make_world):
    world = make_world(capacity=50)
    paths = fill(world, 12)
    await mirror(world, pack="always")
    report = await mirror(world, pack="never")
    assert [p.branch for p in report.packs] == [Branch.REMOVED]
    assert sorted(t.split(" · ")[0] for t in world.remote().values()) == paths
    async with world.run() as orch:
        assert not orch.store.has_packs(world.notebook_id)


async def test_asking_a_packed_notebook_uploads_nothing_and_cites_the_note_and_heading(make_world):
    world = make_world(capacity=6)
    world.write("algo/heapsort.md", "# Heapsort\n\nIntro.\n\n## How does it work?\n\nHeapsort builds a max-heap "
                                    "from the array, then swaps the root to the end.\n")
    fill(world)
    await mirror(world)
    mark = len(world.fake.calls)
    async with world.run() as orch:
        result = await orch.ask("How does heapsort build a max-heap?")
    assert world.mutating_calls(mark) == ["notebook_query"]
    held = {n.path: n for n in result.notes}
    assert held["algo/heapsort.md"].branch == Branch.REUSED and held["algo/heapsort.md"].pack
    cited = [c for c in result.citations if c.path == "algo/heapsort.md"]
    assert cited and cited[0].heading == "How does it work?" and cited[0].located and cited[0].pack
    packs_asked = {sid for n in result.notes for sid in n.source_ids}
    assert set(result.source_ids) == packs_asked


async def test_asking_about_a_note_added_since_the_mirror_replaces_its_pack_and_evicts_none(make_world):
    world = make_world(capacity=6)
    fill(world)
    await mirror(world)
    packs_before = set(world.remote())
    world.write("f1/n05b.md", "# Kimchi\n\nKimchi ferments napa cabbage with gochugaru.\n")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        result = await orch.ask("How does kimchi ferment cabbage?")
    assert world.mutating_calls(mark) == ["source_add", "source_delete", "notebook_query"]
    assert any(c.path == "f1/n05b.md" and c.located for c in result.citations)
    assert len(set(world.remote()) - packs_before) == 1 and len(packs_before - set(world.remote())) == 1
    mark = len(world.fake.calls)
    await mirror(world)
    assert world.mutating_calls(mark) == []  # the pack is already what a mirror makes


async def test_a_quote_no_note_of_the_pack_holds_is_not_placed(make_world):
    world = make_world(capacity=6)
    fill(world)
    await mirror(world)
    from nlmsync.app.citations import map_citations
    from nlmsync.notebooklm.models import QueryAnswer

    pack_id = next(iter(world.remote()))
    answer = QueryAnswer.model_validate({
        "status": "success", "answer": "x", "citations": {"1": pack_id, "2": pack_id},
        "references": [{"source_id": pack_id, "citation_number": 1, "cited_text": "words that no note holds"},
                       {"source_id": pack_id, "citation_number": 2,
                        "cited_text": "the **body** of note 17 about\n topic3"}]})
    async with world.run() as orch:
        unplaced, placed = map_citations(orch.store, world.vault, world.notebook_id, answer, [])
    assert (unplaced.path, unplaced.located, unplaced.heading) == (None, False, None)
    assert unplaced.pack == world.remote()[pack_id]
    assert (placed.path, placed.heading, placed.located) == ("f1/n17.md", "Note 17", True)


async def test_a_quote_of_a_packs_own_path_heading_is_placed_in_the_note_below_it(make_world):
    world = make_world(capacity=6)
    fill(world)
    await mirror(world)
    from nlmsync.app.citations import map_citations
    from nlmsync.notebooklm.models import QueryAnswer

    pack_id = next(iter(world.remote()))
    async with world.run() as orch:
        held = [p for p, _ in orch.store.notes_of_pack(world.notebook_id, pack_id)]
    quotes = [f"# {held[3]}", held[3], f"  {held[-1]}\n", held[0].replace("/", " / ")]
    answer = QueryAnswer.model_validate({
        "status": "success", "answer": "x", "citations": {str(n): pack_id for n in range(1, len(quotes) + 1)},
        "references": [{"source_id": pack_id, "citation_number": n, "cited_text": quote}
                       for n, quote in enumerate(quotes, start=1)]})
    async with world.run() as orch:
        cited = map_citations(orch.store, world.vault, world.notebook_id, answer, [])
    assert [(c.path, c.located) for c in cited] == [(held[3], True), (held[3], True), (held[-1], True),
                                                     (held[0], True)]


async def test_status_shows_the_layout_and_which_pack_holds_a_note(make_world):
    world = make_world(capacity=6)
    fill(world)
    world.write("f1/n05.md", note_text(5, 2))
    await mirror(world)
    world.write("f1/n05.md", note_text(5, 3))
    async with world.run() as orch:
        report = await orch.status(["f1/n05.md", "nowhere.md"])
    assert report.layout is not None and report.layout.packed_note_count == NOTES
    placed, unknown = report.notes
    assert placed.where == "pack" and placed.pack in world.remote().values()
    assert unknown.where == "no such note"
    assert [(c.path, c.change) for c in report.local_changes] == [("f1/n05.md", "modified")]
    assert len(report.packs) == report.layout.pack_count


async def test_watch_keeps_a_packed_notebook_current_with_a_new_note(make_world):
    world = make_world(capacity=6)
    paths = fill(world)
    await mirror(world)
    world.write("f2/new.md", "# New\n\nfresh words\n")
    async with world.run() as orch:
        report = await orch.keep_current(["f2/new.md"])
    assert report is not None and [p.branch for p in report.packs] == [Branch.REPLACED]
    assert_every_note_once(world, [*paths, "f2/new.md"])


async def test_a_pack_add_left_behind_by_a_killed_run_is_deleted_once_no_plan_takes_it(make_world):
    """An upload a killed run left, whose notes the vault no longer has: proven nlmsync's by what it holds (its
    words hash to its title's hash), adopted, and deleted by the next `refresh --all`."""
    world = make_world(capacity=6)
    fill(world)
    await mirror(world)
    text = compose_pack([("f0/x.md", "old")])
    stray = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": text,
                                            "title": pack_title("f0/x.md", "f0/x.md", 1, title_hash(text))})
    mark = len(world.fake.calls)
    await mirror(world)
    assert world.mutating_calls(mark) == ["source_delete"]
    assert stray["source_id"] not in world.remote()
    mark = len(world.fake.calls)
    await mirror(world)
    assert world.mutating_calls(mark) == []


async def test_a_source_titled_like_a_pack_over_other_text_is_never_deleted(make_world):
    world = make_world(capacity=6)
    fill(world)
    await mirror(world)
    mine = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                          "text": "# f0/x.md\n\nmy own notes", "title": "f0/x.md (1 note) · 0badc0de"})
    for _ in range(2):
        mark = len(world.fake.calls)
        report = await mirror(world)
        assert world.mutating_calls(mark) == [] and mine["source_id"] in world.remote()
    assert any(mine["source_id"] in n and "left alone" in n for n in report.notices)
    assert world.calls("source_get_content", mark) == 0  # read once, then remembered as not nlmsync's


async def test_a_pack_grown_past_the_limit_is_replaced_by_two(make_world):
    world = make_world(capacity=12, pack_free=1)
    paths = fill(world)
    first = await mirror(world, pack="always", source_max_bytes=2_000)
    grown = first.packs[1]
    target = grown.paths[len(grown.paths) // 2]
    world.write(target, note_text(77) + "padding words " * 60)
    mark = len(world.fake.calls)
    report = await mirror(world, pack="always", source_max_bytes=2_000)
    assert sorted(world.mutating_calls(mark)) == ["source_add", "source_add", "source_delete"]
    changed = [p for p in report.packs if p.branch != Branch.REUSED]
    assert [p.branch for p in changed] == [Branch.REPLACED, Branch.REPLACED]
    assert sorted(p for pack in changed for p in pack.paths) == sorted(grown.paths)
    assert all(p.byte_count <= 2_000 for p in changed)
    assert_every_note_once(world, paths)
    async with world.run() as orch:
        assert orch.store.resolve_source_id(grown.source_id or "") in {p.source_id for p in changed}


async def test_a_packed_run_reports_its_packs_to_the_progress_display(make_world):
    world = make_world(capacity=6)
    fill(world)
    seen: list[tuple[str, tuple[Any, ...]]] = []

    class Recorder:
        def start(self, label: str, total: int) -> None:
            seen.append(("start", (label, total)))

        def advance(self, outcome) -> None:
            seen.append(("advance", (outcome.branch, outcome.path)))

        def indexing(self, done: int, total: int) -> None:
            seen.append(("indexing", (done, total)))

        def reading(self, done: int, total: int) -> None:
            seen.append(("reading", (done, total)))

    async with world.run(pack="always", source_max_bytes=2_000) as orch:
        orch.progress = Recorder()
        report = await orch.refresh(all_notes=True)
    uploads = [s for s in seen if s[0] == "start" and s[1][0] == "uploading packs"]
    assert uploads == [("start", ("uploading packs", len(report.packs)))]
    assert sorted(v for k, v in seen if k == "advance") == sorted((p.branch, p.title) for p in report.packs)


async def test_refresh_all_under_a_folder_changes_only_the_packs_that_hold_its_notes(make_world):
    world = make_world(capacity=12, pack_free=1)
    paths = sorted(fill(world) + [f"z/n{i}.md" for i in range(3)])
    for i in range(3):
        world.write(f"z/n{i}.md", note_text(200 + i))
    first = await mirror(world, pack="always", source_max_bytes=2_000)
    assert len(first.packs) >= 3
    world.write("f0/n00.md", note_text(0, 2))  # in the first pack
    world.write("z/n1.md", note_text(201, 2))  # in the last
    mark = len(world.fake.calls)
    async with world.run(pack="always", source_max_bytes=2_000) as orch:
        report = await orch.refresh(["z"], all_notes=True)
    changed = [p for p in report.packs if p.branch != Branch.REUSED]
    assert [p.branch for p in changed] == [Branch.REPLACED] and "z/n1.md" in changed[0].paths
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]
    assert all(any(p.startswith("z/") for p in pack.paths) for pack in report.packs)  # only packs in scope reported
    mark = len(world.fake.calls)
    async with world.run(pack="always", source_max_bytes=2_000) as orch:
        again = await orch.refresh()  # no argument: the synced notes, packs included
    assert [p.paths[0] for p in again.packs if p.branch != Branch.REUSED] == [first.packs[0].paths[0]]
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]
    assert_every_note_once(world, paths)
    shutil.rmtree(world.vault / "z")  # a folder whose notes are all packed, deleted from the vault: still in scope
    async with world.run(pack="always", source_max_bytes=2_000) as orch:
        await orch.refresh(["z"], all_notes=True)
    assert_every_note_once(world, [p for p in paths if not p.startswith("z/")])


async def test_refresh_all_lays_out_only_the_packs_whose_notes_changed(make_world, monkeypatch):
    """An idle mirror of a packed notebook looks at no note and lays nothing out; a change lays out the packs in
    its reach only, and the others are reported reused as they are."""
    import nlmsync.sync.packs.plan as packs_module

    world = make_world(capacity=12, pack_free=1)
    paths = fill(world)
    first = await mirror(world, pack="always", source_max_bytes=2_000)
    laid_out: list[int] = []
    real = packs_module.plan_layout  # type: ignore[attr-defined]

    def counting(notes, *args, **kwargs):
        laid_out.append(len(notes))
        return real(notes, *args, **kwargs)

    monkeypatch.setattr(packs_module, "plan_layout", counting)
    idle = await mirror(world, pack="always", source_max_bytes=2_000)
    assert laid_out == [] and [p.branch for p in idle.packs] == [Branch.REUSED] * len(first.packs)
    assert [p.paths for p in idle.packs] == [p.paths for p in first.packs]
    world.write(paths[0], note_text(0, 2))
    changed = await mirror(world, pack="always", source_max_bytes=2_000)
    assert laid_out == [len(first.packs[0].paths)]
    assert [p.branch for p in changed.packs] == [Branch.REPLACED] + [Branch.REUSED] * (len(first.packs) - 1)
    assert_every_note_once(world, paths)


FIXTURE_VAULT = Path(__file__).resolve().parents[2] / "fixtures" / "vault"


async def test_the_quick_start_question_on_the_fixture_vault_packed_cites_the_heapsort_note_first(make_world):
    """`refresh --all` packs the fixture vault, then `ask` with the bundled fake: the answer's first citation is
    the heapsort note, placed in its pack, and quotes how heapsort works."""
    world = make_world(capacity=6, pack="always")
    shutil.copytree(FIXTURE_VAULT, world.vault, dirs_exist_ok=True, ignore=shutil.ignore_patterns("quirks"))
    report = await mirror(world)
    assert report.packs and len(world.remote()) <= 3
    async with world.run() as orch:
        result = await orch.ask("How does heapsort work?")
    first = result.citations[0]
    assert (first.path, first.located) == ("algorithms/sorting/heapsort.md", True) and first.pack
    assert "max-heap" in result.answer
    assert "physics/thermodynamics.md" not in [c.path for c in result.citations]


async def test_a_quote_several_notes_of_a_pack_hold_is_cited_from_the_note_selected_not_the_first_in_the_pack(
        make_world):
    world = make_world(capacity=6)
    code = "```md\n![[Document.pdf#page=3]]\n```\n"
    world.write("el/Ενσωμάτωση αρχείων.md", "---\npermalink: embeds\n---\n# Ενσωμάτωση αρχείων\n\nΓια να ενσωματώσετε "
                "ένα αρχείο, προσθέστε ένα θαυμαστικό πριν από έναν σύνδεσμο προς αυτό.\n\n" + code)
    world.write("en/Embed files.md", "---\npermalink: embeds\n---\n# Embed files\n\nTo embed a file, add an "
                "exclamation mark before a link to it.\n\n" + code)
    fill(world)
    await mirror(world)
    async with world.run() as orch:
        result = await orch.ask("How do I embed page 3 of Document.pdf in a note?")
    assert [note.path for note in result.selected_notes][:1] == ["en/Embed files.md"]
    quoted = [c for c in result.citations if c.cited_text and "Document.pdf" in c.cited_text]
    assert quoted and {c.path for c in quoted} == {"en/Embed files.md"}


def test_of_a_packs_notes_holding_a_quote_alike_one_in_the_questions_language_goes_before_a_better_ranked_one():
    """The preference `ask` cites a pack's notes by, none of them selected: the question's language first, then
    the rank; a note the index does not know (excluded since it was packed) counts as in another language."""
    from types import SimpleNamespace

    from nlmsync.app.orchestrator import Orchestrator

    languages = {"el.md": "el", "en.md": "en"}
    index = SimpleNamespace(facts=lambda paths: {p: SimpleNamespace(lang=languages[p])
                                                 for p in paths if p in languages})
    hits = [SimpleNamespace(path=p, score=score) for p, score in (("gone.md", 9.0), ("el.md", 5.0), ("en.md", 1.0))]
    selection = SimpleNamespace(chosen=[], hits=hits, language="en")
    key = Orchestrator._citation_preference(SimpleNamespace(index=index), selection, set())  # type: ignore[arg-type]
    assert sorted(["gone.md", "el.md", "en.md"], key=key) == ["en.md", "gone.md", "el.md"]


async def test_a_packed_refresh_whose_uploads_all_fail_is_a_partial_failure_not_a_success(make_world):
    """Every pack's upload refused: the run is not done, whatever its notes' lines say (exit 6, and the report
    says which packs failed)."""
    world = make_world(capacity=6, faults=Faults(errors=[ErrorRule("source_add", "Internal error")]))
    fill(world)
    with pytest.raises(PartialFailure) as info:
        await mirror(world, source_max_bytes=2_000)
    report = stopped_report(info.value)
    assert info.value.exit_code == 6 and len(report.packs) > 1
    assert all(p.branch == Branch.FAILED for p in report.packs)
    assert str(info.value).startswith(f"all {len(report.packs)} packs failed; nothing was done")
    assert world.remote() == {}


async def test_notes_kept_alone_in_a_full_notebook_make_room_for_their_pack_by_going_first(make_world):
    """Four notes alone fill the notebook; packed, there is no room to add the pack first: a single source is
    deleted before the pack lands, and every note ends in the pack, none lost and none twice."""
    world = make_world(capacity=4)
    paths = fill(world, 4)
    await mirror(world, pack="never")
    assert len(world.remote()) == 4 and not packed_paths(world)
    singles = {title.split(" · ")[0]: source_id for source_id, title in world.remote().items()}
    report = await mirror(world, pack="always", pack_free=0)
    early = [(e.notebook_id, e.path, e.source_id, e.reason) for e in world.store().recent_evictions(world.notebook_id)]
    assert early and all(e == (world.notebook_id, e[1], singles[e[1]], "made room for packs") for e in early)
    assert_every_note_once(world, paths)
    assert len(world.remote()) == 1 and list(packed_paths(world).values()) == [paths]
    assert [p.branch for p in report.packs] == [Branch.REPLACED]  # the pack replaces the notes alone
