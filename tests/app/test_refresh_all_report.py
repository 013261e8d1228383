"""`refresh --all` reports every note of the vault once: the ones it uploaded or kept, and the ones it did not,
each with the reason `index` gives — an empty file included."""

from __future__ import annotations

import unicodedata

import pytest

from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio


async def test_every_note_of_the_vault_is_in_the_report_with_why_it_was_not_uploaded(make_world):
    world = make_world()
    world.write("a.md", "# A\n\nalpha\n")
    world.write("blank.md", "  \n\n")
    (world.vault / "empty.md").write_bytes(b"")
    composed, decomposed = unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")
    world.write(composed, "# Café\n\nespresso\n")
    world.write(decomposed, "# Café\n\nlatte\n")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    outcomes = {(n.path, n.branch, n.reason) for n in report.notes}
    assert outcomes == {
        ("a.md", Branch.ADDED, None),
        (composed, Branch.ADDED, None),
        ("blank.md", Branch.EXCLUDED, "empty"),
        ("empty.md", Branch.EXCLUDED, "empty"),
        (decomposed, Branch.EXCLUDED, f"duplicate of {composed} after Unicode normalization"),
    }
    assert len(report.notes) == 5
    since = len(world.fake.calls)
    async with world.run() as orch:  # and so again on a run with nothing to do
        again = await orch.refresh(all_notes=True)
    assert {(n.path, n.branch) for n in again.notes} == {
        ("a.md", Branch.REUSED), (composed, Branch.REUSED), ("blank.md", Branch.EXCLUDED),
        ("empty.md", Branch.EXCLUDED), (decomposed, Branch.EXCLUDED)}
    assert world.mutating_calls(since) == []


async def test_every_note_of_a_folder_an_exclude_pattern_matches_is_excluded_by_it_and_its_source_taken_out(
        make_world):
    world = make_world()
    world.write("keep.md", "# Keep\n\nkept\n")
    for name in ("a", "b", "deep/c"):
        world.write(f"drafts/{name}.md", f"# {name}\n\ndraft words of {name}\n")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert len(world.remote()) == 4
    (world.vault / "drafts/a.md").write_bytes(b"")  # now empty, binary, or a second name of one note: the pattern
    (world.vault / "drafts/b.md").write_bytes(b"\x00\x01 binary")  # is what keeps each out, and says so
    composed, decomposed = (unicodedata.normalize(form, "drafts/café.md") for form in ("NFC", "NFD"))
    world.write(composed, "# Café\n\nespresso\n")
    world.write(decomposed, "# Café\n\nlatte\n")
    async with world.run(exclude=["drafts"]) as orch:
        report = await orch.refresh(all_notes=True)
    excluded = {n.path: n.reason for n in report.notes if n.branch == Branch.EXCLUDED}
    assert excluded == dict.fromkeys(["drafts/a.md", "drafts/b.md", "drafts/deep/c.md", composed, decomposed],
                                     "excluded by pattern")
    assert {n.path for n in report.notes if n.branch == Branch.REMOVED} == {
        "drafts/a.md", "drafts/b.md", "drafts/deep/c.md"}
    assert [title.split(" · ")[0] for title in world.remote().values()] == ["keep.md"]
    async with world.run(exclude=["drafts"]) as orch:
        named = await orch.refresh(["drafts/b.md"])  # named, it is excluded too: not a failure
    assert [(n.path, n.branch, n.reason) for n in named.notes] == [
        ("drafts/b.md", Branch.EXCLUDED, "excluded by pattern")]
