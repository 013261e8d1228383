"""Attachments as sources, against the in-process fake server and a real state file: the branches by the hash of
a file's bytes (reuse, replace add-first, rename without an upload, new upload), titles that did not take fixed
and recognised, files that cannot be sources said per file, and adoption with no upload."""

from __future__ import annotations

import pytest
from tests.app.world import World
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import hash_file
from nlmsync.fake.faults import Faults
from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title, upload_name

pytestmark = pytest.mark.anyio


def put_pdf(world: World, rel: str, *lines: str) -> str:
    """A one-page PDF of `lines` at `rel`; returns the title nlmsync gives it."""
    path = world.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf(text_page(*lines)))
    return source_title(rel, hash_file(path)[0])


def branches(report):
    return {n.path: n.branch for n in report.notes}


async def test_a_pdf_is_added_then_reused_with_no_mutating_call(make_world):
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    title = put_pdf(world, "papers/tapirs.pdf", "Tapirs are odd-toed ungulates")
    async with world.run() as orch:
        first = await orch.refresh(all_notes=True)
    assert branches(first) == {"a.md": Branch.ADDED, "papers/tapirs.pdf": Branch.ADDED}
    assert title in world.remote().values()
    assert "Tapirs are odd-toed ungulates" in world.remote_texts()[title]
    assert not any((world.root / "uploads").iterdir())
    mark = len(world.fake.calls)
    async with world.run() as orch:
        second = await orch.refresh(all_notes=True)
    assert branches(second) == {"a.md": Branch.REUSED, "papers/tapirs.pdf": Branch.REUSED}
    assert world.mutating_calls(mark) == []
