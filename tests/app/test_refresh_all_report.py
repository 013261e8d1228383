"""`refresh --all` reports every note of the vault once: the ones it uploaded or kept, and the ones it did not,
each with the reason `index` gives — an empty file included."""

from __future__ import annotations

import unicodedata

import pytest

from nlmsync.sync.plan import Branch

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
