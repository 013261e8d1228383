"""An answer's citations mapped back to the vault: each cited source to the note it was uploaded from, and a
cited passage to the heading above it in that note (read as it is now)."""

from __future__ import annotations

from pathlib import Path

from nlmsync import vault as vault_files
from nlmsync.app.results import Citation
from nlmsync.errors import InputError
from nlmsync.notebooklm import QueryAnswer
from nlmsync.store import StateStore
from nlmsync.sync import NoteOutcome, find_cited_text, heading_above


def map_citations(store: StateStore, vault_root: Path, notebook_id: str, answer: QueryAnswer,
                  live: list[NoteOutcome]) -> list[Citation]:
    """The citations of `answer`, by number: a reference's source resolved to its note through the sources
    this run made `live` or else the registry; the heading from the cited text found in the note."""
    path_of = {sid: o.path for o in live for sid in o.source_ids}
    texts: dict[str, str | None] = {}

    def note_path(source_id: str) -> str | None:
        resolved = store.resolve_source_id(source_id)
        if resolved in path_of:
            return path_of[resolved]
        row = store.mapping_by_source_id(notebook_id, resolved)
        return row.path if row else None

    def note_text(path: str) -> str | None:
        if path not in texts:
            try:
                texts[path] = vault_files.read_note_text(vault_root, path)
            except (InputError, OSError):
                texts[path] = None
        return texts[path]

    citations: list[Citation] = []
    referenced = {r.citation_number for r in answer.references}
    for ref in answer.references:
        path = note_path(ref.source_id)
        heading = None
        text = note_text(path) if path else None
        if text is not None and ref.cited_text:
            offset = find_cited_text(text, ref.cited_text)
            heading = heading_above(text, offset) if offset is not None else None
        citations.append(Citation(number=ref.citation_number, source_id=ref.source_id, path=path,
                                  heading=heading, cited_text=ref.cited_text))
    for number, source_id in answer.citations.items():
        if number.isdigit() and int(number) not in referenced:
            citations.append(Citation(number=int(number), source_id=source_id, path=note_path(source_id)))
    return sorted(citations, key=lambda c: c.number)
