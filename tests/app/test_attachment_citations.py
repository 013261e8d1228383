"""Citations of an attachment's source: the file and the page (slide, section) the quoted text begins on, found in
the text nlmsync reads (NotebookLM's citations carry the quote, never a page); printed, in `--json` and in a saved
answer as a link Obsidian opens at that page."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.documents.pdfs import pdf, text_page

from nlmsync.app.answer_notes import _cited
from nlmsync.app.citations import map_citations
from nlmsync.app.results import Citation
from nlmsync.notebooklm.models import QueryAnswer
from nlmsync.store import StateStore, open_database


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(open_database(tmp_path / "state.db"))


def cite(store: StateStore, vault: Path, path: str, quote: str | None) -> Citation:
    store.upsert_mapping(notebook_id="nb", path=path, source_id="src-1", content_hash="h", title=f"{path} · 0123")
    answer = QueryAnswer.model_validate({"answer": "Tapirs [1].", "citations": {"1": "src-1"},
                                         "references": [{"source_id": "src-1", "citation_number": 1,
                                                         "cited_text": quote}]})
    (citation,) = map_citations(store, vault, "nb", answer, [])
    return citation


def test_a_pdf_citation_names_the_file_and_the_page(tmp_path: Path, store: StateStore) -> None:
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "tapirs.pdf").write_bytes(
        pdf(text_page("Tapirs are odd-toed ungulates"), text_page("Their snouts are prehensile and short")))
    citation = cite(store, tmp_path, "papers/tapirs.pdf", "snouts are prehensile")
    assert (citation.path, citation.page, citation.located) == ("papers/tapirs.pdf", 2, True)
    assert citation.model_dump()["page"] == 2
    assert _cited(citation) == "[[papers/tapirs.pdf#page=2]]"
    assert citation.place == "page 2"


def test_a_quote_the_pdf_does_not_hold_is_not_placed(tmp_path: Path, store: StateStore) -> None:
    (tmp_path / "tapirs.pdf").write_bytes(pdf(text_page("Tapirs are odd-toed ungulates")))
    citation = cite(store, tmp_path, "tapirs.pdf", "elephants never forget")
    assert (citation.page, citation.located) == (None, False)
    assert _cited(citation) == "[[tapirs.pdf]]"


def test_a_presentation_citation_names_the_slide(tmp_path: Path, store: StateStore) -> None:
    import pptx

    deck = pptx.Presentation()
    for title in ("Tapirs", "Their snouts are prehensile"):
        deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = title
    deck.save(str(tmp_path / "talk.pptx"))
    citation = cite(store, tmp_path, "talk.pptx", "snouts are prehensile")
    assert (citation.page, citation.located) == (2, True)
    assert _cited(citation) == "[[talk.pptx]], slide 2"


def test_a_citation_of_a_pdfs_text_in_a_pack_names_the_file_and_the_page(tmp_path: Path, store: StateStore) -> None:
    from nlmsync.store import PackRecord

    (tmp_path / "a.md").write_text("# A\n\nTapirs live in forests.\n", encoding="utf-8")
    (tmp_path / "tapirs.pdf").write_bytes(
        pdf(text_page("Tapirs are odd-toed ungulates"), text_page("Their snouts are prehensile and short")))
    store.record_pack(PackRecord("nb", "pack-1", "h", "a.md … tapirs.pdf (2 notes) · 0123", "a.md", "tapirs.pdf", 2,
                                 100), [("a.md", "h1"), ("tapirs.pdf", "h2")])
    answer = QueryAnswer.model_validate({"answer": "Tapirs [1].", "citations": {"1": "pack-1"},
                                         "references": [{"source_id": "pack-1", "citation_number": 1,
                                                         "cited_text": "snouts are prehensile"}]})
    (citation,) = map_citations(store, tmp_path, "nb", answer, [])
    assert (citation.path, citation.page, citation.located) == ("tapirs.pdf", 2, True)
    assert _cited(citation) == "[[tapirs.pdf#page=2]]"
