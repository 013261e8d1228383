"""`sources`: what the notebook holds, source by source — each pack with the range of notes it holds, the notes
alone (a split note part by part), orphans, and the sources someone added by hand."""

from __future__ import annotations

import pytest

from nlmsync.app import list_sources
from nlmsync.sync.titles import content_hash, source_title

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
    assert [(s.kind, s.source_id, s.title) for s in listed.sources if s.kind != "pack"] == [
        ("unmanaged", mine, "Meeting notes.pdf")]
    assert (listed.source_count, listed.unmanaged_count, listed.alone_count) == (len(packs) + 1, 1, 0)
    assert set(world.remote()) == {s.source_id for s in listed.sources}  # every source of the notebook, once


async def test_notes_alone_are_listed_part_by_part_with_orphans_apart(make_world):
    world = make_world()
    world.write("a.md", "# A\n\nalpha\n")
    world.write("big.md", "# Big\n\n" + "word " * 400)
    async with world.run(source_max_bytes=1_000) as orch:
        await orch.refresh(["a.md", "big.md"])
    orphan = _add_by_hand(world, source_title("lost.md", content_hash("x")), "x")  # nlmsync's title and text
    async with world.run(source_max_bytes=1_000) as orch:
        listed = await list_sources(orch)
    alone = [(s.path, s.part, s.part_count) for s in listed.sources if s.kind == "note"]
    assert alone[0] == ("a.md", 0, 1) and [a[0] for a in alone[1:]] == ["big.md"] * (len(alone) - 1)
    assert [a[1] for a in alone[1:]] == list(range(len(alone) - 1)) and alone[1][2] == len(alone) - 1 > 1
    assert [(s.kind, s.source_id) for s in listed.sources if s.kind not in ("note", "pack")] == [("orphan", orphan)]
    assert (listed.alone_count, listed.orphan_count, listed.unmanaged_count) == (len(alone), 1, 0)
