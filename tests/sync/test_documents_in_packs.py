"""Documents in a packed notebook at sync's seams, with the stub client in the server's slot: the rule that keeps
attachments as file sources while they fit beside the fewest packs the notes need (`packs.documents`), a run that
packs text PDFs and keeps a scanned one a file, an unchanged vault that reads no document again, a document's
text cut into parts only between pages (`prepared.split_pages`), and the kept packs a refresh of part of the vault
reports."""

from __future__ import annotations

import pytest
from tests.documents.pdfs import pdf, text_page
from tests.sync.stub import Bench

from nlmsync import vault as vault_files
from nlmsync.documents import DocumentText
from nlmsync.store import SourceMapping
from nlmsync.sync.branches import Branch
from nlmsync.sync.ensure import ensure_sources_for_paths
from nlmsync.sync.packs.documents import Documents, documents_in_packs
from nlmsync.sync.prepared import load_notes, split_pages
from nlmsync.sync.run import AllNotesScope, Request

pytestmark = pytest.mark.anyio

FILES = [("a.pdf", True), ("b.pdf", True), ("scan.pdf", False)]


def notes_of(bench: Bench, count: int = 3) -> Request:
    for i in range(count):
        bench.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    listing = vault_files.list_vault(bench.vault)
    stats = {p: (m, s) for p, m, s in zip(listing.paths, listing.mtimes, listing.sizes, strict=True)}
    return Request(list(listing.paths), set(listing.paths), stats, AllNotesScope())


def where(bench: Bench, request: Request, capacity: int) -> Documents:
    run = bench.run(pack="always", capacity=capacity)
    items = load_notes(run.deps, request.paths, request.found, None, None, request.stats)
    return documents_in_packs(run, request, {}, (), items, {}, FILES)


async def test_attachments_stay_files_while_they_fit_beside_the_fewest_packs(bench):
    request = notes_of(bench)
    assert where(bench, request, capacity=7) == (set(), True)  # 4 sources: one pack and three files


async def test_without_room_the_text_documents_go_into_packs_and_the_scanned_one_stays_a_file(bench):
    request = notes_of(bench)
    assert where(bench, request, capacity=6) == ({"a.pdf", "b.pdf"}, False)


async def test_a_source_added_by_hand_takes_the_room_the_files_would_have(bench):
    request = notes_of(bench)
    bench.client.put("My own notes")
    assert where(bench, request, capacity=7) == ({"a.pdf", "b.pdf"}, False)


async def test_only_a_whole_vault_run_moves_documents_others_leave_them_where_they_are(bench):
    request = notes_of(bench)
    run = bench.run(pack="always", capacity=6)
    partial = Request(request.paths, request.found, request.stats, AllNotesScope(("n0.md",)))
    members = {"a.pdf": ("s9", "h")}
    # a.pdf stays in its pack; b.pdf, with no source yet, goes where the documents are: into packs
    assert documents_in_packs(run, partial, members, (), [], {}, FILES) == ({"a.pdf", "b.pdf"}, False)
    bench.store.upsert_mapping(SourceMapping(notebook_id=run.deps.notebook_id, path="b.pdf",
                                             source_id=bench.client.put("b.pdf · 0123abcd"), content_hash="h",
                                             title="b.pdf · 0123abcd"))
    run = bench.run(pack="always", capacity=6)
    assert documents_in_packs(run, partial, members, (), [], {}, FILES) == ({"a.pdf"}, False)  # a file stays one
    files_only = {"n0.md": ("s9", "h")}  # the packs hold no document: a new one stays a file
    assert documents_in_packs(run, partial, files_only, (), [], {}, FILES) == (set(), False)


async def test_a_run_packs_text_pdfs_keeps_a_scanned_one_a_file_and_reads_nothing_again_when_idle(bench,
                                                                                                  monkeypatch):
    for i in range(3):
        bench.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    (bench.vault / "a.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk")))
    (bench.vault / "b.pdf").write_bytes(pdf(text_page("Okapis are shy"), text_page("Okapis eat leaves")))
    (bench.vault / "scan.pdf").write_bytes(pdf(b"q 1 0 0 1 0 0 cm /Im1 Do Q", image=True))

    async def refresh() -> None:
        listing = vault_files.list_vault(bench.vault, vault_files.attachment_suffixes(["documents"]))
        stats = {p: (m, s) for p, m, s in zip(listing.paths, listing.mtimes, listing.sizes, strict=True)}
        await ensure_sources_for_paths(bench.run(pack="always", capacity=6), listing.paths, found=set(listing.paths),
                                       all_notes=AllNotesScope(), stats=stats)

    monkeypatch.setattr("nlmsync.sync.prepared.RACY_MTIME_NS", 0)  # the files just written count as settled
    await refresh()
    titles = bench.client.titles()
    assert len(titles) == 2 and any(t.startswith("scan.pdf") for t in titles)
    (pack,) = [s.text for s in bench.client.sources.values() if "notes)" in s.title]
    assert "# a.pdf\n\n[page 1]\nLowland tapirs forage at dusk" in pack and "scan.pdf" not in pack

    def no_reading(*args: object) -> object:
        raise AssertionError("an unchanged document was read again")

    monkeypatch.setattr("nlmsync.documents.reader.hash_file", no_reading)
    monkeypatch.setattr("nlmsync.store.document_texts.DocumentTexts.get", no_reading)
    bench.client.calls.clear()
    await refresh()
    assert bench.client.mutating() == []


def test_a_documents_text_is_cut_between_pages_and_whole_when_it_fits():
    document = DocumentText("h", "page", tuple(" ".join([f"w{i}"] * 30) for i in range(1, 6)))
    assert split_pages(document) == [document.marked_text]
    parts = split_pages(document, max_words=70)
    assert [p.split("\n")[0] for p in parts] == ["[page 1]", "[page 3]", "[page 5]"]
    assert "\n\n".join(parts) == document.marked_text  # nothing lost, nothing added
    assert all(len(p.split()) <= 70 for p in parts)


def test_a_single_page_over_the_limit_is_cut_within_itself():
    document = DocumentText("h", "page", ("short", " ".join(["long"] * 50)))
    parts = split_pages(document, max_words=20)
    assert parts[0] == "[page 1]\nshort" and all(len(p.split()) <= 20 for p in parts)
    assert "".join(parts).count("long") == 50


async def test_a_refresh_of_part_of_the_vault_reports_the_kept_packs_holding_its_notes_and_no_other(bench,
                                                                                                   monkeypatch):
    for folder in ("a", "b"):
        for i in range(3):
            bench.write(f"{folder}/n{i}.md", f"# Note {folder}{i}\n\n" + f"words of note {folder}{i} " * 20 + "\n")
    listing = vault_files.list_vault(bench.vault)
    stats = {p: (m, s) for p, m, s in zip(listing.paths, listing.mtimes, listing.sizes, strict=True)}
    monkeypatch.setattr("nlmsync.sync.prepared.RACY_MTIME_NS", 0)  # the files just written count as settled

    async def refresh(*roots: str):
        paths = [p for p in listing.paths if AllNotesScope(roots).covers(p)]
        return await ensure_sources_for_paths(bench.run(pack="always", source_max_bytes=1_000), paths,
                                              found=set(paths), all_notes=AllNotesScope(roots), stats=stats)

    first = await refresh("")
    touching = [p.title for p in first.packs if any(path.startswith("a/") for path in p.paths)]
    assert 0 < len(touching) < len(first.packs)  # some packs hold no note of a/
    mark = len(bench.client.mutating())
    shown = await refresh("a")
    assert [(p.branch, p.title) for p in shown.packs] == [(Branch.REUSED, title) for title in touching]
    assert len(bench.client.mutating()) == mark
