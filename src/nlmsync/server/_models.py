"""Structured results of the vault tools of `nlmsync serve` (note reading reuses `NoteReading`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChunkMatch(BaseModel):
    """A matching span inside a note, addressable by `chunk_id` (fetch it with `get_chunk`)."""

    chunk_id: str = Field(description="`{path}:{index}` of the chunk holding the match.")
    index: int
    score: float = Field(description="BM25 score of the span; 0 when the note matched by its path only (then the "
                                     "note's first chunk is given).")
    char_offset_start: int = Field(description="Start of the matching span in the note's text (the chunk itself, "
                                               "or the 30-second window of a transcript).")
    char_offset_end: int
    snippet: str
    start_time: str | None = None
    end_time: str | None = None


class NoteMatch(BaseModel):
    """One note of `search_notes`' results: a `search.SearchHit` as the tool answers it, with whether the
    selection rule picks it, its snippet and its best chunks."""

    path: str
    score: float
    matched_terms: list[str]
    selected: bool = Field(description="Picked by the selection rule nlmsync uses for `ask`.")
    snippet: str
    total_chunks: int
    has_timestamps: bool
    chunks: list[ChunkMatch] = Field(default_factory=list)


class SearchResult(BaseModel):
    """`search_notes`: notes ranked by field-weighted BM25, each with its matching chunks."""

    query: str
    results: list[NoteMatch] = Field(default_factory=list)
    message: str = ""
