"""Reading notes, whole or in part, for `nlmsync serve` (and the snippets `search` shows): chunks with character offsets and ids (seed 002),
query-aware snippets (seed 004) cut from a note's segments, reading one note however large (seeds 000 and
001: a preview, chunks, a time range, or the passages matching a query), and finding the text an answer cites
in a note and the heading above it (`citations.py`). Pure functions over a note's text; it tokenizes with
`nlmsync.text`, scores passages with `search`'s BM25, and knows nothing of the index.

The names below are the package's public surface, imported on first use (a search that shows no snippet
loads none of this).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.reading.chunks import chunk_id, format_timestamp, parse_chunk_id
    from nlmsync.reading.citations import find_cited_note, find_cited_text, heading_above
    from nlmsync.reading.note import (
        ChunkPlan,
        NoteReading,
        plan_chunks,
        rank_segments,
        read_chunks,
        read_note,
    )
    from nlmsync.reading.snippets import extract_snippet

_EXPORTS = {
    "ChunkPlan": "nlmsync.reading.note",
    "NoteReading": "nlmsync.reading.note",
    "chunk_id": "nlmsync.reading.chunks",
    "extract_snippet": "nlmsync.reading.snippets",
    "find_cited_note": "nlmsync.reading.citations",
    "find_cited_text": "nlmsync.reading.citations",
    "heading_above": "nlmsync.reading.citations",
    "format_timestamp": "nlmsync.reading.chunks",
    "parse_chunk_id": "nlmsync.reading.chunks",
    "plan_chunks": "nlmsync.reading.note",
    "rank_segments": "nlmsync.reading.note",
    "read_chunks": "nlmsync.reading.note",
    "read_note": "nlmsync.reading.note",
}

__all__ = [
    "ChunkPlan",
    "NoteReading",
    "chunk_id",
    "extract_snippet",
    "find_cited_note",
    "find_cited_text",
    "format_timestamp",
    "heading_above",
    "parse_chunk_id",
    "plan_chunks",
    "rank_segments",
    "read_chunks",
    "read_note",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
