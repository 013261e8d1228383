"""Attachments in the search index: found by their text and their file name, read once per content (the texts
kept in the state file by the hash of their bytes), as many of them as the `attachments` setting names."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.documents.pdfs import pdf, text_page

from nlmsync.config import Settings
from nlmsync.search import NoteIndex
from nlmsync.store import open_database


def fresh(vault: Path, **settings: object) -> NoteIndex:
    """A NoteIndex as a new process makes it."""
    return NoteIndex(vault, open_database(vault / ".nlmsync" / "state.db"), Settings(vault=vault, **settings))


def paths(index: NoteIndex, query: str) -> list[str]:
    return [hit.path for hit in index.search(query)]


def with_paper(vault: Path) -> Path:
    papers = vault / "papers"
    papers.mkdir()
    (papers / "tapirology.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk"),
                                                text_page("their snouts are prehensile")))
    return papers / "tapirology.pdf"


def test_a_pdf_is_found_by_its_text_and_its_file_name(vault: Path) -> None:
    with_paper(vault)
    index = fresh(vault)
    assert paths(index, "prehensile snouts") == ["papers/tapirology.pdf"]
    assert paths(index, "tapirology")[0] == "papers/tapirology.pdf"
    assert index.documents_read == 1


def test_an_unchanged_attachment_is_not_read_again_nor_a_moved_one(vault: Path) -> None:
    paper = with_paper(vault)
    fresh(vault).sync()
    again = fresh(vault)
    assert again.sync().unchanged == again.sync().indexed
    assert again.documents_read == 0
    shutil.move(paper, vault / "moved.pdf")
    moved = fresh(vault)
    assert paths(moved, "prehensile snouts") == ["moved.pdf"]
    assert moved.documents_read == 0  # the same bytes: their text is the state file's


def test_a_changed_attachment_is_read_again(vault: Path) -> None:
    paper = with_paper(vault)
    index = fresh(vault)
    index.sync()
    paper.write_bytes(pdf(text_page("Mountain tapirs are woolly")))
    index.mark_path_modified("papers/tapirology.pdf")
    assert paths(index, "woolly") == ["papers/tapirology.pdf"] and paths(index, "prehensile") == []
    assert index.documents_read == 2


def test_no_attachments_when_the_setting_says_none_or_a_pattern_excludes_them(vault: Path) -> None:
    with_paper(vault)
    assert paths(fresh(vault, attachments="none"), "prehensile snouts") == []
    excluded = fresh(vault, exclude=["papers/"])
    assert paths(excluded, "prehensile snouts") == []
    assert excluded.documents_read == 0


def test_images_only_when_asked_for_and_by_their_file_name(vault: Path) -> None:
    (vault / "whiteboard-sketch.png").write_bytes(b"\x89PNG\r\n\x1a\n not read")
    assert paths(fresh(vault), "whiteboard sketch") == []
    index = fresh(vault, attachments=["documents", "images"])
    assert paths(index, "whiteboard sketch")[0] == "whiteboard-sketch.png"
    assert index.documents_read == 0


def test_an_attachment_without_text_is_indexed_by_name_with_a_notice(vault: Path) -> None:
    (vault / "locked-report.pdf").write_bytes(pdf(text_page("secret"), encrypt=True))
    report = fresh(vault).sync()
    assert [(n.path, n.reason) for n in report.notices] == [
        ("locked-report.pdf", "encrypted PDF: its text cannot be read without the password")]
    assert report.as_dict()["attachment_notices"] == [
        {"path": "locked-report.pdf", "notice": "encrypted PDF: its text cannot be read without the password"}]
    assert paths(fresh(vault), "locked report")[0] == "locked-report.pdf"


def test_the_texts_of_attachments_gone_from_the_vault_are_dropped(vault: Path) -> None:
    paper = with_paper(vault)
    fresh(vault).sync()
    paper.unlink()
    index = fresh(vault)
    index.sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    assert db.execute("SELECT count(*) FROM document_texts").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM attachment_files").fetchone()[0] == 0


def test_the_selection_for_a_question_takes_attachments_as_it_takes_notes(vault: Path) -> None:
    with_paper(vault)
    (vault / "tapir-notes.md").write_text("# Tapirs\n\nTheir snouts are prehensile, says the paper.\n")
    index = fresh(vault)
    assert set(paths(index, "prehensile snouts")[:2]) == {"papers/tapirology.pdf", "tapir-notes.md"}
    assert {hit.path for hit in index.selected("prehensile snouts")} == {"papers/tapirology.pdf", "tapir-notes.md"}
    assert [hit.path for hit in fresh(vault, attachments="none").selected("prehensile snouts")] == ["tapir-notes.md"]


def test_a_file_without_text_is_found_by_the_words_of_the_notes_linking_to_it(vault: Path) -> None:
    (vault / "files").mkdir()
    (vault / "files" / "IMG_0042.png").write_bytes(b"\x89PNG\r\n\x1a\n a photo")
    (vault / "files" / "scan.pdf").write_bytes(pdf(b"q 500 0 0 700 50 50 cm /Im1 Do Q", image=True))
    (vault / "trip.md").write_text("# Trip\n\nThe okapi at the zoo: ![[IMG_0042.png]]\n\nUnrelated line.\n")
    (vault / "receipts.md").write_text("Receipt for the [aardvark food](files/scan.pdf) we bought.\n")
    index = fresh(vault, attachments=["documents", "images"])
    assert set(paths(index, "okapi")) == {"files/IMG_0042.png", "trip.md"}
    assert "files/scan.pdf" in paths(index, "aardvark food")
    assert "files/IMG_0042.png" not in paths(index, "unrelated")
    (vault / "trip.md").write_text("# Trip\n\nThe tapir at the zoo: ![[IMG_0042.png]]\n")
    index.mark_path_modified("trip.md")
    assert "files/IMG_0042.png" in paths(index, "tapir") and "files/IMG_0042.png" not in paths(index, "okapi")
    assert index.documents_read == 1  # the scan, once: the image has no text to read
    (vault / "trip.md").unlink()
    index.mark_path_deleted("trip.md")
    assert "files/IMG_0042.png" not in paths(index, "tapir")
    again = fresh(vault, attachments=["documents", "images"])
    assert "files/scan.pdf" in paths(again, "aardvark food") and again.documents_read == 0
