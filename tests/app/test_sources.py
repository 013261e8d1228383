"""`sources`: what the notebook holds, source by source — each pack with the range of notes it holds, the notes
alone (a split note part by part, an upload the state file did not know), and the sources someone added by
hand."""

from __future__ import annotations

import pytest

from nlmsync.app import list_sources
from nlmsync.sync.titles import source_title, title_hash

pytestmark = pytest.mark.anyio


def _add_by_hand(world, title: str, text: str) -> str:
    added = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text", "text": text,
                                            "title": title})
    return str(added["source_id"])


async def test_a_packed_notebook_lists_each_pack_with_its_range_and_the_sources_added_by_hand(make_world):
    world = make_world(capacity=10)
    paths = sorted(f"f{i % 3}/n{i:02}.md" for i in range(40))
    for path in paths:
        world.write(path, f"# {path}\n\nThe words of {path}, about a topic of its own.\n")
    async with world.run(pack="always", source_max_bytes=1_000) as orch:
        report = await orch.refresh(all_notes=True)
    mine = _add_by_hand(world, "Meeting notes.pdf", "minutes of the meeting")
    async with world.run(pack="always", source_max_bytes=1_000) as orch:
        listed = await list_sources(orch)
    packs = [s for s in listed.sources if s.kind == "pack"]
    assert len(packs) == len(report.packs) > 1 and listed.pack_count == len(packs)
    assert [(p.first_path, p.last_path, p.note_count) for p in packs] == [
        (p.paths[0], p.paths[-1], len(p.paths)) for p in sorted(report.packs, key=lambda p: p.paths[0])]
    assert sum(p.note_count or 0 for p in packs) == listed.packed_note_count == len(paths)
    texts = world.remote_texts()
    assert [p.byte_count for p in packs] == [len(texts[p.title].encode()) for p in packs]  # the bytes of its text
    assert [(s.kind, s.source_id, s.title) for s in listed.sources if s.kind != "pack"] == [
        ("unmanaged", mine, "Meeting notes.pdf")]
    assert (listed.source_count, listed.unmanaged_count, listed.alone_count) == (len(packs) + 1, 1, 0)
    assert set(world.remote()) == {s.source_id for s in listed.sources}  # every source of the notebook, once


async def test_notes_alone_are_listed_part_by_part_and_look_alikes_as_added_by_hand(make_world):
    world = make_world()
    world.write("a.md", "# A\n\nalpha\n")
    world.write("big.md", "# Big\n\n" + "word " * 400)
    async with world.run(source_max_bytes=1_000) as orch:
        await orch.refresh(["a.md", "big.md"])
    upload = _add_by_hand(world, source_title("lost.md", title_hash("x")), "x")  # nlmsync's title and text
    lookalike = _add_by_hand(world, source_title("lost.md", title_hash("x")), "y")  # the title, other text
    async with world.run(source_max_bytes=1_000) as orch:
        listed = await list_sources(orch)
    alone = [(s.path, s.part, s.part_count) for s in listed.sources if s.kind == "note"]
    parts = len(alone) - 2
    assert alone[0] == ("a.md", 0, 1) and alone[1:-1] == [("big.md", i, parts) for i in range(parts)] and parts > 1
    # an upload of nlmsync's the state file did not know is taken as what it is, the source of a note
    assert alone[-1] == ("lost.md", 0, 1) and upload in {s.source_id for s in listed.sources if s.kind == "note"}
    assert [(s.kind, s.source_id) for s in listed.sources if s.kind != "note"] == [("unmanaged", lookalike)]
    assert (listed.alone_count, listed.orphan_count, listed.unmanaged_count) == (len(alone), 0, 1)


async def test_an_upload_of_a_note_the_vault_does_not_have_is_listed_as_an_orphan(make_world):
    world = make_world()
    world.write("a.md", "# A\n\nalpha\n")
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    gone = "archive/" * 70 + "gone.md"  # a title too long to hold it: shortened to its end, "…"
    title = source_title(gone, title_hash("the words of a note no longer in the vault"))
    assert title.startswith("…")
    orphan = _add_by_hand(world, title, "the words of a note no longer in the vault")
    async with world.run() as orch:
        listed = await list_sources(orch)
    assert [(s.kind, s.source_id, s.title) for s in listed.sources if s.kind != "note"] == [("orphan", orphan, title)]
    assert (listed.alone_count, listed.orphan_count, listed.unmanaged_count) == (1, 1, 0)
