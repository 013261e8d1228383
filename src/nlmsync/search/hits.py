"""The one result type of note search (imports nothing heavy: both the index's ranking and a fresh
process's first answer, `search.cold`, make it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class SearchHit(NamedTuple):
    """A note found for a query: its vault path, its score, and the query terms it holds (in term order).

    The one result type of search, from `Ranking.rank` to `NoteIndex.search` and its callers. What
    the interfaces print are other things made from it: `app.SelectedNote` (a hit the selection rule
    picked, as `ask --json` reports it) and the MCP server's `NoteMatch` (a hit with its snippet and best
    chunks). A named tuple: immutable, and cheaper to make than a frozen dataclass.
    """

    path: str
    score: float
    matched_terms: tuple[str, ...]


@dataclass
class Evidence:
    """What a ranking found of a query's terms, for the rule that tells a weak match (`search.selection`): how many
    notes are indexed, and how many hold each term (0 for none)."""

    notes: int = 0
    dfs: dict[str, int] = field(default_factory=dict)
    forms: dict[str, str] = field(default_factory=dict)
    """The other forms of the query's words that were searched too, and the word each stands for."""
