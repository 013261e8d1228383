"""`serve`'s vault tools over attachments: found by search, read as their text with a line naming each page, and
confined as notes are (the attachments setting's kinds only, exclusions kept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.documents.pdfs import pdf, text_page

from nlmsync.config import Settings
from nlmsync.errors import PathOutsideVaultError
from nlmsync.search.index import NoteIndex
from nlmsync.server import VaultTools
from nlmsync.store.db import open_database


def tools(vault: Path, **settings: object) -> VaultTools:
    chosen = Settings(vault=vault, **settings)
    return VaultTools(chosen, NoteIndex(vault, open_database(vault / ".nlmsync" / "state.db"), chosen))


def test_a_pdf_is_found_and_read_with_its_page_numbers(vault: Path) -> None:
    (vault / "tapirs.pdf").write_bytes(pdf(text_page("Tapirs are odd-toed ungulates"),
                                           text_page("Their snouts are prehensile")))
    served = tools(vault)
    found = served.search_notes("prehensile snouts")
    assert found.results[0].path == "tapirs.pdf"
    chunk = found.results[0].chunks[0]
    assert "prehensile" in chunk.snippet
    text = served.read_note("tapirs.pdf").content or ""
    assert "[page 1]\nTapirs are odd-toed ungulates" in text and "[page 2]\nTheir snouts are prehensile" in text
    assert "[page 2]" in served.get_chunk(chunk.chunk_id).chunks[0].text


@pytest.mark.parametrize(("name", "settings", "said"), [
    ("shot.png", {}, "not a note of the vault"),
    ("private/tapirs.pdf", {"exclude": ["private/"]}, "excluded from nlmsync"),
    ("tapirs.pdf", {"attachments": "none"}, "not a note of the vault"),
])
def test_attachments_are_served_as_the_settings_say(vault: Path, name: str, settings: dict[str, object],
                                                    said: str) -> None:
    (vault / name).parent.mkdir(exist_ok=True)
    (vault / name).write_bytes(pdf(text_page("Tapirs")))
    with pytest.raises(PathOutsideVaultError, match=said):
        tools(vault, **settings).read_note(name)
