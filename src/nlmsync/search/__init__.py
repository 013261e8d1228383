"""BM25 note search: tokenization, markdown fields, weighted scoring, selection, incremental index.

The names below are the package's public surface; callers outside `search` import them from here. They are
imported on first use, so a search in a fresh process loads only the modules it needs (the index, not the
note reading or the snippets). `tokenize` is imported at once: the function shares its name with its module,
which would otherwise shadow it once any submodule had imported the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports
from nlmsync.search.tokenize import tokenize

if TYPE_CHECKING:
    from nlmsync.search.chunks import chunk_id, format_timestamp, parse_chunk_id
    from nlmsync.search.index import IndexReport, NoteIndex
    from nlmsync.search.markdown import markdown_lines
    from nlmsync.search.query import matched_words, query_terms
    from nlmsync.search.hits import SearchHit
    from nlmsync.search.reading import (
        ChunkPlan,
        NoteReading,
        plan_chunks,
        rank_segments,
        read_chunks,
        read_note,
    )
    from nlmsync.search.snippets import extract_snippet

_EXPORTS = {
    "ChunkPlan": "nlmsync.search.reading",
    "IndexReport": "nlmsync.search.index",
    "NoteIndex": "nlmsync.search.index",
    "NoteReading": "nlmsync.search.reading",
    "SearchHit": "nlmsync.search.hits",
    "chunk_id": "nlmsync.search.chunks",
    "extract_snippet": "nlmsync.search.snippets",
    "format_timestamp": "nlmsync.search.chunks",
    "markdown_lines": "nlmsync.search.markdown",
    "matched_words": "nlmsync.search.query",
    "parse_chunk_id": "nlmsync.search.chunks",
    "plan_chunks": "nlmsync.search.reading",
    "query_terms": "nlmsync.search.query",
    "rank_segments": "nlmsync.search.reading",
    "read_chunks": "nlmsync.search.reading",
    "read_note": "nlmsync.search.reading",
}

__all__ = [
    "ChunkPlan",
    "IndexReport",
    "NoteIndex",
    "NoteReading",
    "SearchHit",
    "chunk_id",
    "extract_snippet",
    "format_timestamp",
    "markdown_lines",
    "matched_words",
    "parse_chunk_id",
    "plan_chunks",
    "query_terms",
    "rank_segments",
    "read_chunks",
    "read_note",
    "tokenize",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
