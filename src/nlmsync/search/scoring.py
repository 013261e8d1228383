"""The one ranker of note search: from the postings of a query's terms to the hits, whichever source the postings
come from — the index in memory (`search.ranking.Ranking`, which computes its base postings' contributions in
numpy and keeps them per term) or a fresh process's first answer read straight from the state file
(`search.cold`). Imports no numpy.

Of the query terms some note holds, in term order, a ranking leaves out the stop words that tell no note apart
(`telling`), adds each note's contributions up in term order (`bm25.add_up`: `note_candidates`; a loaded index
adds its base postings' with `np.bincount`, the same sums) and orders the notes with a positive score: score
desc, matched terms desc, path asc (`hits`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from nlmsync.search.bm25 import Contributions, add_up
from nlmsync.search.hits import SearchHit

__all__ = ["Candidate", "hits", "note_candidates", "telling"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

# A note that may be a hit: (-score, -matched term count, path, matched terms as a bit mask: bit j for the j-th
# term of the ranking). Tuples sort in the order of hits.
Candidate = tuple[float, int, str, int]


def telling(found: list[T], n_docs: int, common: frozenset[str], term: Callable[[T], str],
            df: Callable[[T], int]) -> list[T]:
    """The query terms a ranking scores, of those some note holds (`found`; `term` and `df` read an item's term
    and document frequency): a term of `common` (the stop words) that more than half the notes hold is left
    out, unless that would leave nothing. In a vault of one language such a word is in most notes and tells
    none apart, yet its long postings list costs every query; in a multilingual vault the same word marks the
    notes of its language and is scored."""
    if not common:
        return found
    return [item for item in found if term(item) not in common or 2 * df(item) <= n_docs] or found


def note_candidates(contributions: Sequence[Contributions[K]], limit: int | None,
                    path_of: Callable[[K], str]) -> list[Candidate]:
    """The candidates among the notes of `contributions` (per term, in the ranking's order: the notes holding it
    and its contribution to each), those with a positive score that can be among the first `limit`; `path_of`
    gives a note's path."""
    scores = add_up(contributions)
    positive = {key: value for key, value in scores.items() if value > 0}
    if limit is not None and len(positive) > limit:  # the limit-th best score is the least a hit needs
        least = heapq.nlargest(limit, positive.values())[-1]
        positive = {key: value for key, value in positive.items() if value >= least}
    masks = dict.fromkeys(positive, 0)
    for j, (keys, _values) in enumerate(contributions):
        bit = 1 << j
        for key in keys:
            if key in masks:
                masks[key] |= bit
    return [(-positive[key], -mask.bit_count(), path_of(key), mask) for key, mask in masks.items()]


def hits(candidates: list[Candidate], terms: Sequence[str], limit: int | None) -> list[SearchHit]:
    """The first `limit` candidates (all: None) as hits, in order, each with the terms it holds (`terms` in the
    ranking's order)."""
    candidates.sort()
    if limit is not None:
        del candidates[limit:]
    return [SearchHit(path, -neg_score, _terms_in(mask, terms)) for neg_score, _count, path, mask in candidates]


def _terms_in(mask: int, terms: Sequence[str]) -> tuple[str, ...]:
    """The terms whose bits are set in `mask` (bit j: `terms[j]`), in order; one step per term held."""
    held = []
    while mask:
        lowest = mask & -mask
        held.append(terms[lowest.bit_length() - 1])
        mask ^= lowest
    return tuple(held)
