"""BM25 note search: query terms, markdown fields, weighted scoring, selection, incremental index. (The tokenizer
is `nlmsync.text`'s; reading a note, its chunks and snippets, is `nlmsync.reading`.)

The names below are the package's public surface; callers outside `search` import them from here. They are
imported on first use, so a search in a fresh process loads only the modules it needs. `tokenize` is imported at once: the function shares its name with its module,
which would otherwise shadow it once any submodule had imported the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports
from nlmsync.search.tokenize import tokenize

if TYPE_CHECKING:
    from nlmsync.search.hits import SearchHit
    from nlmsync.search.index import IndexReport, NoteIndex
    from nlmsync.search.markdown import markdown_lines
    from nlmsync.search.query import matched_words, names_nothing, query_terms
    from nlmsync.search.selection import Selection

_EXPORTS = {
    "IndexReport": "nlmsync.search.index",
    "NoteIndex": "nlmsync.search.index",
    "SearchHit": "nlmsync.search.hits",
    "Selection": "nlmsync.search.selection",
    "markdown_lines": "nlmsync.search.markdown",
    "matched_words": "nlmsync.search.query",
    "names_nothing": "nlmsync.search.query",
    "query_terms": "nlmsync.search.query",
}

__all__ = [
    "IndexReport",
    "NoteIndex",
    "SearchHit",
    "Selection",
    "markdown_lines",
    "matched_words",
    "names_nothing",
    "query_terms",
    "tokenize",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
