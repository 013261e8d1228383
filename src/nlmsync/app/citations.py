"""An answer's citations mapped back to the vault: each cited source to the note it was uploaded from — for a
pack, the note of the pack whose text holds the quoted passage — and the passage to the heading above it in
that note (read as it is now); for an attachment, alone or in a pack, to the page (slide, section) of its text the passage begins on.
NotebookLM's citations carry the quoted text only, never a page: the page is found in the text nlmsync reads."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nlmsync import vault as vault_files
from nlmsync.app.results import Citation
from nlmsync.documents import DocumentText
from nlmsync.errors import InputError
from nlmsync.notebooklm import QueryAnswer
from nlmsync.reading import find_cited_note, heading_above
from nlmsync.store import StateStore
from nlmsync.store.document_texts import read_attachment
from nlmsync.sync import NoteOutcome


def _by_path(prefer: Callable[[str], Any], paths: list[str], index: int) -> Any:
    return prefer(paths[index])


def map_citations(store: StateStore, vault_root: Path, notebook_id: str, answer: QueryAnswer,
                  live: list[NoteOutcome], prefer: Callable[[str], Any] | None = None) -> list[Citation]:
    """The citations of `answer`, by number: a reference's source resolved to its note through the sources
    this run made `live` or else the registry; a pack's to the note of the pack that holds the cited text (not
    placed when none does; of several that hold it alike, the one with the smallest `prefer(path)`); the heading
    from the cited text found in the note."""
    path_of = {sid: o.path for o in live if o.pack is None for sid in o.source_ids}
    texts: dict[str, str | None] = {}
    documents: dict[str, DocumentText | None] = {}

    def document(path: str) -> DocumentText | None:
        if path not in documents:
            try:
                documents[path] = read_attachment(store.db, vault_files.resolve_in_vault(vault_root, path), path)
            except (InputError, OSError):
                documents[path] = None
        return documents[path]

    def note_text(path: str) -> str | None:
        """A note's text, or a packed document's as its pack holds it (by pages)."""
        if path not in texts:
            if not vault_files.is_note_path(path):
                held = document(path)
                texts[path] = held.marked_text if held is not None else None
                return texts[path]
            try:
                texts[path] = vault_files.read_note_text(vault_root, path)
            except (InputError, OSError):
                texts[path] = None
        return texts[path]

    def cited(source_id: str, quote: str | None) -> Citation:
        resolved = store.resolve_source_id(source_id)
        pack = store.pack_by_source_id(notebook_id, resolved)
        if pack is not None:
            paths = [p for p, _ in store.notes_of_pack(notebook_id, resolved)]
            rank = None if prefer is None else functools.partial(_by_path, prefer, paths)
            found = find_cited_note([note_text(p) for p in paths], quote, paths, rank) if quote else None
            if found is None:
                return Citation(number=0, source_id=source_id, pack=pack.title, located=False if quote else None)
            held = paths[found[0]]
            if not vault_files.is_note_path(held):  # a document's text: the page the passage begins on
                part = document(held)
                page = part.locate(quote) if part is not None and part.unit and quote else None
                return Citation(number=0, source_id=source_id, path=held, pack=pack.title, located=True, page=page)
            return Citation(number=0, source_id=source_id, path=held, pack=pack.title, located=True,
                            heading=heading_above(note_text(held) or "", found[1]))
        path = path_of.get(resolved)
        if path is None:
            row = store.mapping_by_source_id(notebook_id, resolved)
            path = row.path if row else None
        if path is not None and not vault_files.is_note_path(path):
            return cited_attachment(source_id, path, quote)
        text = note_text(path) if path and quote else None
        found = find_cited_note([text], quote) if text is not None and quote else None
        heading = heading_above(text, found[1]) if text is not None and found is not None else None
        return Citation(number=0, source_id=source_id, path=path, heading=heading,
                        located=(found is not None) if text is not None else None)

    def cited_attachment(source_id: str, path: str, quote: str | None) -> Citation:
        read = document(path)
        if read is None or not quote or not read.has_text:
            return Citation(number=0, source_id=source_id, path=path)
        part = read.locate(quote)
        return Citation(number=0, source_id=source_id, path=path, located=part is not None,
                        page=part if read.unit else None)

    citations: list[Citation] = []
    referenced = {r.citation_number for r in answer.references}
    for ref in answer.references:
        citation = cited(ref.source_id, ref.cited_text)
        citations.append(citation.model_copy(update={"number": ref.citation_number, "cited_text": ref.cited_text}))
    for number, source_id in answer.citations.items():
        if number.isdigit() and int(number) not in referenced:
            citations.append(cited(source_id, None).model_copy(update={"number": int(number)}))
    return sorted(citations, key=lambda c: c.number)
