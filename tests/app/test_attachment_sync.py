"""Attachments as sources, against the in-process fake server and a real state file: the branches by the hash of
a file's bytes (reuse, replace add-first, rename without an upload, new upload), titles that did not take fixed
and recognised, files that cannot be sources said per file, and adoption with no upload."""

from __future__ import annotations

import os

import pytest
from tests.app.notebook_checks import LONG_AGO
from tests.app.world import World, stopped_report
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import hash_file
from nlmsync.documents import reader as reader_module
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


async def test_a_changed_pdf_is_replaced_add_first_with_one_upload_and_one_delete(make_world):
    world = make_world()
    put_pdf(world, "paper.pdf", "first version")
    async with world.run() as orch:
        old = (await orch.refresh(all_notes=True)).notes[0].source_ids[0]
    title = put_pdf(world, "paper.pdf", "second version")
    mark = len(world.fake.calls)
    async with world.run() as orch:
        (outcome,) = (await orch.refresh(all_notes=True)).notes
        assert orch.store.resolve_source_id(old) == outcome.source_ids[0]
    assert (outcome.branch, outcome.previous_source_ids) == (Branch.REPLACED, [old])
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]
    assert list(world.remote().values()) == [title]


async def test_a_moved_pdf_is_renamed_never_uploaded_again(make_world):
    world = make_world()
    put_pdf(world, "inbox/paper.pdf", "tapirs")
    async with world.run() as orch:
        first = (await orch.refresh(all_notes=True)).notes[0].source_ids
    (world.vault / "papers").mkdir()
    (world.vault / "inbox/paper.pdf").rename(world.vault / "papers/paper.pdf")
    title = source_title("papers/paper.pdf", hash_file(world.vault / "papers/paper.pdf")[0])
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert branches(report) == {"papers/paper.pdf": Branch.RENAMED}
    assert report.notes[0].source_ids == first
    assert world.mutating_calls(mark) == ["source_rename"]
    assert list(world.remote().values()) == [title]


async def test_a_title_the_server_did_not_apply_is_fixed_by_a_rename(make_world):
    world = make_world(faults=Faults(file_titles_ignored=True))
    title = put_pdf(world, "papers/paper.pdf", "tapirs")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert list(world.remote().values()) == [title]
    assert [c.tool for c in world.fake.calls if c.tool in ("source_add", "source_rename")] == \
        ["source_add", "source_rename"]
    mark = len(world.fake.calls)
    async with world.run() as orch:
        assert branches(await orch.refresh(all_notes=True)) == {"papers/paper.pdf": Branch.REUSED}
    assert world.mutating_calls(mark) == []


async def test_an_upload_named_after_its_file_is_recognised_and_never_uploaded_twice(make_world):
    from nlmsync.fake.faults import ErrorRule

    world = make_world(faults=Faults(file_titles_ignored=True, errors=[ErrorRule("source_rename", "Internal error")]))
    title = put_pdf(world, "papers/paper.pdf", "tapirs")
    async with world.run() as orch:
        first = await orch.refresh(all_notes=True)
    assert list(world.remote().values()) == [upload_name(title, ".pdf")]
    mark = len(world.fake.calls)
    async with world.run() as orch:  # the rename is tried again and fails again: the source is still the file's
        assert branches(await orch.refresh(all_notes=True)) == {"papers/paper.pdf": Branch.REUSED}
    assert world.mutating_calls(mark) == ["source_rename"]
    (world.root / "state.db").unlink()  # a fresh machine, or a lost state file
    world.fake.faults = Faults(file_titles_ignored=True)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert branches(report) == {"papers/paper.pdf": Branch.REUSED} and report.notes[0].adopted
    assert report.notes[0].source_ids == first.notes[0].source_ids
    assert world.calls("source_add", mark) == 0 and world.calls("source_delete", mark) == 0
    assert list(world.remote().values()) == [title]


async def test_files_that_cannot_be_sources_are_said_per_file_while_the_rest_syncs(make_world):
    world = make_world()
    put_pdf(world, "good.pdf", "tapirs")
    (world.vault / "locked.pdf").write_bytes(pdf(text_page("secret"), encrypt=True))
    (world.vault / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really a pdf")
    (world.vault / "empty.pdf").write_bytes(b"")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: (n.branch, n.reason) for n in report.notes}
    assert said["good.pdf"][0] == Branch.ADDED
    assert said["locked.pdf"][0] == said["broken.pdf"][0] == said["empty.pdf"][0] == Branch.EXCLUDED
    assert "encrypted" in said["locked.pdf"][1] and "cannot be read" in said["broken.pdf"][1]
    assert said["empty.pdf"][1] == "empty"
    assert world.calls("source_add") == 1


async def test_a_file_the_server_cannot_process_is_deleted_reported_and_not_retried_until_it_changes(make_world):
    from nlmsync.errors import PartialFailure

    world = make_world(faults=Faults(processing_fails=("bad.pdf*",)))  # nlmsync uploads it as `bad.pdf · <hash>.pdf`
    put_pdf(world, "good.pdf", "tapirs")
    put_pdf(world, "bad.pdf", "okapis")
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as failure:
            await orch.refresh(all_notes=True)
    said = {n.path: n for n in stopped_report(failure.value).notes}
    assert said["good.pdf"].branch == Branch.ADDED
    assert said["bad.pdf"].branch == Branch.FAILED and "could not process" in said["bad.pdf"].error
    assert len(world.remote()) == 1  # the failed source was deleted
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: n for n in report.notes}
    assert said["bad.pdf"].branch == Branch.EXCLUDED and "earlier run" in said["bad.pdf"].reason
    assert world.mutating_calls(mark) == []
    world.fake.faults = Faults()
    title = put_pdf(world, "bad.pdf", "okapis, mended")
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert branches(report)["bad.pdf"] == Branch.ADDED and title in world.remote().values()


async def test_a_scanned_pdf_is_a_live_source_reused_and_never_deleted_by_the_read_back_proof(make_world):
    world = make_world()
    put_pdf(world, "good.pdf", "tapirs")
    (world.vault / "scan.pdf").write_bytes(pdf(b"q 100 0 0 100 0 0 cm /Im1 Do Q", image=True))
    scan = source_title("scan.pdf", hash_file(world.vault / "scan.pdf")[0])
    async with world.run() as orch:
        first = await orch.refresh(all_notes=True)
    assert branches(first) == {"good.pdf": Branch.ADDED, "scan.pdf": Branch.ADDED}
    (source_id,) = next(n.source_ids for n in first.notes if n.path == "scan.pdf")
    assert world.remote()[source_id] == scan and world.remote_texts()[scan] == ""  # the fake reads no page image
    mark = len(world.fake.calls)
    async with world.run() as orch:
        again = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == [] and branches(again)["scan.pdf"] == Branch.REUSED
    copy = world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "file", "wait": True,
                                           "file_path": str(world.vault / "scan.pdf"), "title": scan})
    assert copy["status"] == "success"  # another machine's upload of the same bytes: nothing proves it a copy
    mark = len(world.fake.calls)
    async with world.run() as orch:
        last = await orch.refresh(all_notes=True)
    assert world.calls("source_delete", mark) == 0
    assert sorted(sid for sid, title in world.remote().items() if title == scan) == sorted([source_id,
                                                                                           copy["source_id"]])
    assert {n.path: n.source_ids for n in last.notes}["scan.pdf"] == [source_id]


async def test_images_are_synced_only_when_asked_for(make_world):
    world = make_world()
    put_pdf(world, "paper.pdf", "tapirs")
    (world.vault / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    async with world.run() as orch:
        assert set(branches(await orch.refresh(all_notes=True))) == {"paper.pdf"}
    async with world.run(attachments=["documents", "images"]) as orch:
        report = await orch.refresh(all_notes=True)
    assert branches(report) == {"paper.pdf": Branch.REUSED, "shot.png": Branch.ADDED}


async def test_a_kind_dropped_from_the_setting_is_removed_as_no_longer_synced_not_as_gone(make_world):
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    put_pdf(world, "paper.pdf", "tapirs")
    (world.vault / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    async with world.run(attachments=["documents", "images"]) as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "paper.pdf").unlink()
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: (n.branch, n.reason) for n in report.notes}
    assert said["shot.png"] == (Branch.REMOVED, "no longer synced: the 'attachments' setting leaves out its kind")
    assert said["paper.pdf"] == (Branch.REMOVED, "no longer in the vault")
    assert said["a.md"][0] == Branch.REUSED


async def test_a_fresh_machine_adopts_the_attachments_with_no_upload(make_world):
    world = make_world(attachments=["documents", "images"])
    one, two = world.device("one"), world.device("two")
    one.write("a.md", "# A\nalpha\n")
    for rel, line in (("p/first.pdf", "tapirs"), ("p/second.pdf", "okapis")):
        (one.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (one.vault / rel).write_bytes(pdf(text_page(line)))
    (one.vault / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    async with one.run(notebook=world.notebook_id, attachments="all") as orch:
        first = await orch.refresh(all_notes=True)
    assert len(world.remote()) == 4
    two.sync_from(one, state=False)
    mark = len(world.fake.calls)
    async with two.run(notebook=world.notebook_id, attachments="all") as orch:
        second = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == []
    assert {n.path: n.source_ids for n in second.notes} == {n.path: n.source_ids for n in first.notes}
    assert all(n.branch == Branch.REUSED and n.adopted for n in second.notes)


async def test_a_copy_is_deleted_once_proven_and_a_textless_one_is_left_alone(make_world):
    world = make_world(attachments="all")
    title = put_pdf(world, "paper.pdf", "tapirs are odd-toed ungulates of the forest")
    (world.vault / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    shot = source_title("shot.png", hash_file(world.vault / "shot.png")[0])
    for rel, wanted in (("paper.pdf", title), ("shot.png", shot)):  # another machine's copies, the same bytes
        world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "file",
                                        "file_path": str(world.vault / rel), "title": wanted, "wait": True})
    assert sorted(world.remote().values()) == sorted([title, title, shot, shot])
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert sorted(world.remote().values()) == sorted([title, shot, shot])


async def test_a_look_alike_of_an_attachment_title_is_never_deleted(make_world):
    world = make_world()
    title = put_pdf(world, "paper.pdf", "tapirs are odd-toed ungulates of the forest")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    world.fake.apply("source_add", {"notebook_id": world.notebook_id, "source_type": "text",
                                    "text": "a shopping list: eggs, milk, bread", "title": title})
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    assert sorted(world.remote().values()) == [title, title]


async def test_attachments_take_their_place_in_eviction(make_world):
    world = make_world(capacity=2)
    put_pdf(world, "old.pdf", "tapirs")
    world.write("a.md", "# A\nalpha\n")
    async with world.run() as orch:
        await orch.refresh(["old.pdf"])
        await orch.refresh(["a.md"])
    put_pdf(world, "new.pdf", "okapis")
    async with world.run() as orch:
        report = await orch.refresh(["new.pdf"])
    assert branches(report) == {"old.pdf": Branch.EVICTED, "new.pdf": Branch.ADDED}


async def test_status_and_sources_show_attachments_beside_notes(make_world):
    from nlmsync.app.sources import list_sources

    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    put_pdf(world, "papers/tapirs.pdf", "Tapirs are odd-toed ungulates")
    put_pdf(world, "papers/okapis.pdf", "Okapis live in the forest")
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    gone = next(sid for sid, title in world.remote().items() if title.startswith("papers/okapis.pdf"))
    world.fake.apply("source_delete", {"source_id": gone, "confirm": True})
    async with world.run() as orch:
        status = await orch.status()
        listed = await list_sources(orch)
    size = (world.vault / "papers/tapirs.pdf").stat().st_size
    assert (status.attachment_count, status.attachment_bytes) == (1, size)
    assert {(e.path, e.kind) for e in status.active_sources} == {("a.md", "note"), ("papers/tapirs.pdf", "attachment")}
    assert [(e.path, e.kind) for e in status.stale_sources] == [("papers/okapis.pdf", "attachment")]
    assert (listed.alone_count, listed.attachment_count) == (1, 1)
    assert [(s.path, s.byte_count) for s in listed.sources if s.kind == "attachment"] == [("papers/tapirs.pdf", size)]


async def test_in_a_packed_notebook_files_with_no_text_take_the_room_the_packs_leave_and_the_rest_are_said(make_world):
    world = make_world(capacity=5, pack="always", attachments="all")
    for i in range(3):
        world.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    for name in ("a.png", "b.png", "c.png"):
        (world.vault / name).write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode() * 16)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: (n.branch, n.reason) for n in report.notes if n.path.endswith(".png")}
    assert said["a.png"] == (Branch.ADDED, None)
    for left_out in ("b.png", "c.png"):  # each file beyond the room is said, not only the first
        assert said[left_out][0] == Branch.EXCLUDED and "pack_free" in said[left_out][1]
    assert len(report.packs) == 1 and len(world.remote()) == 2


async def test_ask_sends_the_pdf_that_holds_the_answer(make_world):
    world = make_world(min_k=1)
    world.write("a.md", "# Cooking\n\nBoil the pasta for nine minutes.\n")
    title = put_pdf(world, "papers/tapirs.pdf", "Lowland tapirs forage at dusk with prehensile snouts")
    async with world.run() as orch:
        result = await orch.ask("When do lowland tapirs forage?")
    assert [n.path for n in result.notes if n.branch.live] == ["papers/tapirs.pdf"]
    assert list(world.remote().values()) == [title]


async def test_status_tells_a_changed_pdf_by_its_bytes(make_world):
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    paper = world.vault / "paper.pdf"
    paper.write_bytes(pdf(text_page("Tapirs are odd-toed ungulates"), compress=True))  # bytes that are no text
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
        assert (await orch.status()).local_changes == []
    paper.write_bytes(pdf(text_page("Tapirs are odd-toed ungulates, second edition"), compress=True))
    async with world.run() as orch:
        changes = (await orch.status()).local_changes
    assert [(c.path, c.change) for c in changes] == [("paper.pdf", "modified")]


async def test_a_dry_run_says_what_it_would_do_with_the_files_and_writes_nothing(make_world):
    world = make_world()
    put_pdf(world, "paper.pdf", "tapirs")
    state = world.settings.state_path
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True, dry_run=True)
        texts = orch.store.db.execute("SELECT count(*) FROM document_texts").fetchone()[0]
    assert branches(report) == {"paper.pdf": Branch.ADDED} and report.dry_run
    assert world.mutating_calls() == [] and texts == 0 and state.exists()


async def test_a_server_that_may_not_read_the_files_stops_the_run_with_a_clear_error(make_world, monkeypatch,
                                                                                     tmp_path_factory):
    from nlmsync.errors import FileOutsideServerFoldersError

    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    put_pdf(world, "a.pdf", "tapirs")
    put_pdf(world, "b.pdf", "okapis")
    monkeypatch.setenv("NOTEBOOKLM_ALLOWED_FILE_DIRS", str(tmp_path_factory.mktemp("elsewhere")))
    async with world.run(concurrency=1) as orch:
        with pytest.raises(FileOutsideServerFoldersError) as stopped:
            await orch.refresh(all_notes=True)
    assert stopped.value.exit_code == 2 and "NOTEBOOKLM_ALLOWED_FILE_DIRS" in str(stopped.value)
    said = {n.path: n for n in stopped_report(stopped.value).notes}
    assert said["a.md"].branch == Branch.ADDED
    assert said["b.pdf"].not_tried and world.calls("source_add") == 2


async def test_a_file_whose_row_names_a_replaced_id_is_reused_and_recorded_under_the_id_it_resolves_to(make_world):
    """An unchanged PDF whose registry row names a source that was replaced (an alias to the listed one) is reused
    with no call, and its row is rewritten to the live source, so a later run finds it by the id the row stores."""
    world = make_world()
    put_pdf(world, "paper.pdf", "tapirs")
    async with world.run() as orch:
        (live,) = (await orch.refresh(all_notes=True)).notes[0].source_ids
    store = world.store()
    try:
        store.db.execute("UPDATE source_mappings SET source_id = 's-replaced' WHERE path = 'paper.pdf'")
        store.register_source_alias("s-replaced", live)
    finally:
        store.close()
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
        rows = orch.store.mappings_by_path(world.notebook_id, "paper.pdf")
    assert branches(report) == {"paper.pdf": Branch.REUSED} and report.notes[0].source_ids == [live]
    assert [r.source_id for r in rows] == [live]
    assert world.mutating_calls(mark) == []


async def test_an_idle_refresh_neither_hashes_nor_reads_an_unchanged_file(make_world, monkeypatch):
    """A file whose modification time and size are those recorded with its hash is reused by its stat alone: the
    idle run opens none of its bytes."""
    world = make_world()
    world.write("a.md", "# A\nalpha\n")
    put_pdf(world, "papers/tapirs.pdf", "Tapirs are odd-toed ungulates")
    put_pdf(world, "papers/okapis.pdf", "Okapis are giraffids")
    for path in (world.vault / "papers").iterdir():  # saved long ago: no rule of recency can distrust its stat
        os.utime(path, ns=(LONG_AGO, LONG_AGO))
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    async with world.run() as orch:  # records the files' stats with their hashes
        await orch.refresh(all_notes=True)

    def no_hashing(target):
        raise AssertionError(f"{target} hashed again")

    monkeypatch.setattr(reader_module, "hash_file", no_hashing)
    monkeypatch.setattr(reader_module.DocumentReader, "read", lambda *a, **k: pytest.fail("a file was read"))
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert set(branches(report).values()) == {Branch.REUSED} and len(report.notes) == 3
    assert world.mutating_calls(mark) == []
