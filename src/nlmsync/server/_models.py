"""What `search_notes` answers (note reading answers `NoteReading`): each thing once, as the client reads it."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChunkMatch(BaseModel):
    """A matching passage inside a note, addressable by `chunk_id` (`get_chunk` reads it)."""

    chunk_id: str = Field(description="`{path}:{index}` of the chunk holding the match.")
    score: float = Field(description="How well the passage matches; 0 when the note matched by its path only "
                                     "(its first chunk is given).")
    char_offset_start: int = Field(description="Start of the passage in the note's text (the chunk itself, or the "
                                               "30-second window of a transcript).")
    char_offset_end: int
    snippet: str
    start_time: str | None = None
    end_time: str | None = None


class NoteMatch(BaseModel):
    """One note found: its score, the query's words it holds, whether `ask` would use it, its best passages."""

    path: str
    score: float
    matched_terms: list[str]
    selected: bool = Field(description="One of the notes `ask` would send to the notebook for this query.")
    total_chunks: int
    chunks: list[ChunkMatch] = Field(default_factory=list)


class SearchResult(BaseModel):
    """The notes found for a query, best first; `message` only when nothing matched, or nothing matched well."""

    query: str
    results: list[NoteMatch] = Field(default_factory=list)
    weak_match: bool = Field(default=False, description="Nothing in the vault matches the query well: no note is "
                                                        "selected; `ask_notebook` sends the question as it is.")
    message: str | None = None
