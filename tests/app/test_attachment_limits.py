"""Attachments over the server's limits, against the in-process fake server and a real state file: a document whose
text is over the words one source holds goes up as its text in page-range parts (reused, replaced add-first,
adopted on a fresh machine with no upload), a file over 200 MB is left out with a notice while the rest syncs,
and a dry run keeps no text it read."""

from __future__ import annotations

import os

import pytest
from tests.app.world import World, stopped_report
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import MAX_FILE_BYTES
from nlmsync.documents.model import TOO_LARGE
from nlmsync.errors import PartialFailure
from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio

WORDS = " ".join(["tapirs"] * 20)
LIMIT = 60
"""The words one source holds in these tests (`source_max_words`): three pages of 22 words are over it."""


def long_pdf(world: World, rel: str = "long.pdf", word: str = "page") -> None:
    (world.vault / rel).write_bytes(pdf(*(text_page(f"{word} {i} {WORDS}") for i in range(1, 4))))


def parts(world: World, name: str = "long.pdf") -> dict[str, str]:
    """The notebook's sources of `name`'s text, title -> text."""
    return {t: x for t, x in sorted(world.remote_texts().items()) if t.startswith(name)}


def file_uploads(world: World, since: int = 0) -> list[str]:
    return [c.arguments["file_path"].rsplit("/", 1)[-1] for c in world.fake.calls[since:]
            if c.tool == "source_add" and c.arguments.get("source_type") == "file"]


def vault_of(world: World) -> None:
    world.write("n.md", "# N\n\nshort\n")
    (world.vault / "short.pdf").write_bytes(pdf(text_page("Okapis are shy")))
    long_pdf(world)


async def test_a_document_over_the_word_limit_goes_up_as_its_text_in_parts_of_whole_pages(make_world):
    world = make_world(source_max_words=LIMIT)
    vault_of(world)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: n for n in report.notes}
    assert said["long.pdf"].branch == Branch.ADDED and said["long.pdf"].part_count == 2
    assert said["short.pdf"].branch == Branch.ADDED
    assert [t.split(" · ")[0] for t in parts(world)] == ["long.pdf (part 1/2)", "long.pdf (part 2/2)"]
    assert [x.split("\n")[0] for x in parts(world).values()] == ["[page 1]", "[page 3]"]
    assert [name.split(" · ")[0] for name in file_uploads(world)] == ["short.pdf"]  # never the long one
    assert report.notices == [f"long.pdf: 66 words, over the {LIMIT} one source holds: uploaded as its text, by "
                              "pages, in parts titled as a long note's"]


async def test_an_unchanged_long_document_is_reused_with_no_call_and_no_reading(make_world):
    world = make_world(source_max_words=LIMIT)
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    mark = len(world.fake.calls)
    async with world.run() as orch:
        again = await orch.refresh(all_notes=True)
        assert (await orch.status()).local_changes == []
    assert world.mutating_calls(mark) == []
    assert {n.path: n.branch for n in again.notes} == {"n.md": Branch.REUSED, "short.pdf": Branch.REUSED,
                                                       "long.pdf": Branch.REUSED}
    assert again.notices == [] and len(parts(world)) == 2


async def test_a_changed_long_document_replaces_its_parts_add_first(make_world):
    world = make_world(source_max_words=LIMIT)
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    old = set(parts(world))
    long_pdf(world, word="leaf")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert {n.path: n.branch for n in report.notes}["long.pdf"] == Branch.REPLACED
    assert world.mutating_calls(mark) == ["source_add", "source_add", "source_delete", "source_delete"]
    assert not old & set(parts(world)) and len(parts(world)) == 2
    assert all("leaf" in text for text in parts(world).values())
    assert file_uploads(world, mark) == []


async def test_a_file_source_that_grows_over_the_limit_is_replaced_by_its_text_and_back(make_world):
    world = make_world(source_max_words=LIMIT)
    world.write("n.md", "# N\n\nshort\n")
    (world.vault / "long.pdf").write_bytes(pdf(text_page("Okapis are shy")))
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (file_source,) = parts(world)
    long_pdf(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert file_source not in world.remote() and len(parts(world)) == 2
    (world.vault / "long.pdf").write_bytes(pdf(text_page("Okapis eat leaves")))
    mark = len(world.fake.calls)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert [t.split(" · ")[0] for t in parts(world)] == ["long.pdf"]
    assert [name.split(" · ")[0] for name in file_uploads(world, mark)] == ["long.pdf"]


async def test_a_fresh_machine_adopts_a_long_documents_parts_with_no_upload(make_world):
    world = make_world(source_max_words=LIMIT)
    one, two = world.device("one"), world.device("two")
    one.write("n.md", "# N\n\nshort\n")
    long_pdf(one)
    async with one.run(notebook=world.notebook_id, source_max_words=LIMIT) as orch:
        first = await orch.refresh(all_notes=True)
    two.sync_from(one, state=False)
    mark = len(world.fake.calls)
    async with two.run(notebook=world.notebook_id, source_max_words=LIMIT) as orch:
        second = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == []
    was = {n.path: n.source_ids for n in first.notes}
    assert len(was["long.pdf"]) == 2
    assert {n.path: (n.branch, n.source_ids) for n in second.notes}["long.pdf"] == (Branch.REUSED, was["long.pdf"])


async def test_a_file_over_200_mb_is_left_out_with_a_notice_while_the_rest_syncs(make_world):
    world = make_world()
    world.write("n.md", "# N\n\nshort\n")
    (world.vault / "short.pdf").write_bytes(pdf(text_page("Okapis are shy")))
    with open(world.vault / "huge.pdf", "wb") as huge:
        huge.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk taken, and never read
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: n for n in report.notes}
    assert (said["huge.pdf"].branch, said["huge.pdf"].reason) == (Branch.EXCLUDED, TOO_LARGE)
    assert said["short.pdf"].branch == Branch.ADDED and said["n.md"].branch == Branch.ADDED
    assert all(not name.startswith("huge.pdf") for name in file_uploads(world))
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as named:  # named, it fails (exit 6) with the same line
            await orch.refresh(["huge.pdf"])
    assert named.value.exit_code == 6
    (outcome,) = stopped_report(named.value).notes
    assert outcome.branch == Branch.FAILED and outcome.error == f"huge.pdf: {TOO_LARGE}"
    assert os.path.getsize(world.vault / "huge.pdf") == MAX_FILE_BYTES + 1


async def test_a_dry_run_of_a_packed_notebook_keeps_no_text_it_read(make_world):
    world = make_world(capacity=5, pack="always")  # the PDFs do not fit as files: their text goes into the pack
    world.write("n.md", "# N\n\nshort\n")
    (world.vault / "a.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk")))
    (world.vault / "b.pdf").write_bytes(pdf(text_page("Okapis are shy")))
    async with world.run() as orch:
        await orch.refresh(["n.md"])  # the notebook is packed, holding no document yet
    state = world.settings.state_path
    before = state.read_bytes()
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True, dry_run=True)
        texts = orch.store.db.execute("SELECT count(*) FROM document_texts").fetchone()[0]
        files = orch.store.db.execute("SELECT count(*) FROM attachment_files").fetchone()[0]
    assert report.dry_run and [p.paths for p in report.packs] == [["a.pdf", "b.pdf", "n.md"]]
    assert (texts, files) == (0, 0)
    assert world.mutating_calls() == ["source_add"] and before
