"""The postings of a `PostingsIndex` in memory as a source for the ranker (`search.scoring`): a query term's
BM25 contributions to the notes holding it, kept per term.

A (term, query weight)'s contributions to every document holding the term are `bm25.contribution` over
all its postings at once (numpy arrays), and kept (`Ranking._cache`): an entry is used only while the index
has the `PostingsIndex.version` it was computed for, so it holds the very floats a fresh computation would
give, and a repeated term costs a lookup. Retired entries are not freed at once (freeing thousands of them
would delay the answer after an edit): a query overwrites those of its terms, and the oldest make room when
the cache is full.

A document's score adds its terms' contributions in sorted term order, for base documents
(`np.bincount` adds in array order) and overlay documents (`bm25.add_up`) alike, so an index maintained
incrementally ranks exactly like one built from scratch.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Final, cast

import numpy as np

from nlmsync.search.bm25 import contribution, idf
from nlmsync.search.hits import Evidence, SearchHit
from nlmsync.search.postings import PostingsIndex
from nlmsync.search.scoring import Candidate, hits, note_candidates, telling
from nlmsync.search.word_forms import WordForms

# Postings whose contributions the cache keeps at most (16 bytes each: the contribution and the slot):
# 16 MB at most.
CACHE_ENTRIES = 1 << 20
_MASK_BITS = 52
_BIT_VALUES = np.exp2(np.arange(_MASK_BITS))


# One (term, query weight)'s contributions to the documents holding the term, as the cache keeps them:
# (term, version, slots, contributions, overlay, df), read by these positions:
# - version: the `PostingsIndex.version` it was computed for
# - slots: the live base documents' slots, ascending (as intp, what `np.bincount` counts with)
# - contributions: aligned with `slots`
# - overlay: the overlay's documents holding the term, and their contributions (two tuples)
# - df: the documents holding the term, len(slots) + len(overlay)
# A plain tuple, not a class: it holds nothing the garbage collector tracks (str, int, numpy arrays, tuples of
# str and float), so the collector stops tracking it at its first collection, and a full cache adds nothing
# to the collections of the older generations.
TermScores = tuple[str, int, np.ndarray, np.ndarray, tuple[tuple[str, ...], tuple[float, ...]], int]
_TERM: Final = 0
_VERSION: Final = 1
_SLOTS: Final = 2
_CONTRIBUTIONS: Final = 3
_OVERLAY: Final = 4
_DF: Final = 5
_term = operator.itemgetter(_TERM)
_df = operator.itemgetter(_DF)


class Ranking:
    """The ranking of one `PostingsIndex` and its per-term contributions cache (see the module's docstring)."""

    def __init__(self, index: PostingsIndex) -> None:
        self.index = index
        self._cache: dict[tuple[str, float], TermScores] = {}
        self._cache_postings = 0  # the postings the cache's entries hold, one more per entry

    def rank(self, query: Mapping[str, float], limit: int | None = None,
             common: frozenset[str] = frozenset(), evidence: Evidence | None = None,
             forms: WordForms | None = None) -> list[SearchHit]:
        """Documents with a positive score, best first (`scoring.hits`).

        `query` maps each query term to its weight (its frequency in the query, `search.query.query_weights`),
        which multiplies the term's BM25 contribution; the stop words of `common` that tell no note apart are
        left out (`scoring.telling`). `forms`, if given, adds the other forms of the query's words the index holds
        (`word_forms`). `evidence`, if given, receives the notes indexed, each term's document frequency and the
        forms searched.
        """
        index = self.index
        if forms is not None and len(index):
            query = forms.expand(query, self._prefixed)
            if evidence is not None:
                evidence.forms.update(forms.found)
        if evidence is not None:
            evidence.notes = len(index)
        if not len(index) or not query:
            return []
        keys = sorted(query.items())  # (term, weight): in term order, and the cache's keys
        version = index.version
        entries = {key: scores for key in keys
                   if (scores := self._cache.get(key)) is not None and scores[_VERSION] == version}
        if len(entries) < len(keys):
            entries.update(self._score_terms([key for key in keys if key not in entries]))
        if evidence is not None:
            evidence.dfs.update((scores[_TERM], scores[_DF]) for scores in entries.values())
        found = [scores for scores in map(entries.__getitem__, keys) if scores[_DF]]  # in term order
        found = telling(found, len(index), common, _term, _df)
        candidates = self._base_candidates(found, limit) if any(len(scores[_SLOTS]) for scores in found) else []
        if index.overlay:
            candidates.extend(note_candidates([scores[_OVERLAY] for scores in found], limit, str))
        return hits(candidates, [scores[_TERM] for scores in found], limit)

    def _prefixed(self, prefix: str, cap: int) -> list[str]:
        """The indexed terms starting with `prefix` (the base's, then the overlay's), at most `cap` of each."""
        found = self.index.terms.prefixed(prefix, cap)
        if self.index.overlay_postings:
            found += [term for term in self.index.overlay_postings if term.startswith(prefix)][:cap]
        return found

    def _score_terms(self, keys: list[tuple[str, float]]) -> dict[tuple[str, float], TermScores]:
        """The contributions of `keys` (all their base postings in one numpy pass), kept in the cache."""
        index = self.index
        n_docs = len(index)
        parts_slots = []
        parts_codes = []
        for term, _weight in keys:
            term_id = index.terms.find(term)
            start, end = (0, 0) if term_id is None else (index.offsets[term_id], index.offsets[term_id + 1])
            parts_slots.append(index.slots[start:end])
            parts_codes.append(index.tf_codes[start:end])
        all_slots = np.concatenate(parts_slots, dtype=np.intp)
        all_tfs = index.tf_values.take(np.concatenate(parts_codes, dtype=np.intp))
        sizes = [len(part) for part in parts_slots]
        if index.dead:  # drop the postings of dead slots
            live = index.alive.take(all_slots)
            term_of = np.repeat(np.arange(len(keys)), sizes)
            sizes = np.bincount(term_of[live], minlength=len(keys)).tolist()
            all_slots, all_tfs = all_slots[live], all_tfs[live]
        dfs = [size + len(index.overlay_postings.get(term, ())) for (term, _weight), size in zip(keys, sizes)]
        weights = [query_weight * idf(n_docs, df) if df else 0.0 for (_term, query_weight), df in zip(keys, dfs)]
        avg = index.avg_length()
        contributions = contribution(np.repeat(weights, sizes), all_tfs, index.base_norms(avg).take(all_slots),
                                     index.k1)
        new: dict[tuple[str, float], TermScores] = {}
        start = 0
        for key, size, weight, df in zip(keys, sizes, weights, dfs):
            end = start + size
            over = index.overlay_postings.get(key[0], {})
            new[key] = (key[0], index.version, all_slots[start:end], contributions[start:end],
                        _overlay_contributions(index, over, weight, avg), df)
            start = end
        self._keep(new)
        return new

    def _keep(self, new: dict[tuple[str, float], TermScores]) -> None:
        """Put `new` in the cache (replacing retired entries of the same keys), the oldest entries making room
        so that it holds at most `CACHE_ENTRIES` postings."""
        added = sum(1 + scores[_DF] for scores in new.values())
        if added > CACHE_ENTRIES:
            return
        for key in new:
            if (old := self._cache.pop(key, None)) is not None:
                self._cache_postings -= 1 + old[_DF]
        while self._cache_postings + added > CACHE_ENTRIES:
            old = self._cache.pop(next(iter(self._cache)))
            self._cache_postings -= 1 + old[_DF]
        self._cache.update(new)
        self._cache_postings += added

    def _base_candidates(self, found: list[TermScores], limit: int | None) -> list[Candidate]:
        """The candidates among the base documents: those with a positive score that can be among the first
        `limit` (all of them when `limit` is None)."""
        all_slots = np.concatenate([scores[_SLOTS] for scores in found])
        doc_scores = np.bincount(all_slots, weights=np.concatenate([scores[_CONTRIBUTIONS] for scores in found]))
        positive = doc_scores.take((doc_scores > 0).nonzero()[0])
        if limit is not None and len(positive) > limit:  # the limit-th best score is the least a candidate needs
            is_hit = doc_scores >= np.partition(positive, len(positive) - limit)[len(positive) - limit]
        else:
            is_hit = doc_scores > 0
        hits = is_hit.nonzero()[0]
        # which terms each candidate holds: a bit mask (bit j: found[j]), added up per slot like the scores
        # (float64 adds powers of two exactly up to 2**53, so the terms go 52 at a time)
        sizes = [len(scores[_SLOTS]) for scores in found]
        masks = [0] * len(hits)
        start = 0
        for first in range(0, len(found), _MASK_BITS):
            group = sizes[first:first + _MASK_BITS]
            end = start + sum(group)
            bits = np.bincount(all_slots[start:end], weights=np.repeat(_BIT_VALUES[:len(group)], group),
                               minlength=len(doc_scores))
            masks = [mask | value << first for mask, value in zip(masks, bits.take(hits).astype(np.int64).tolist())]
            start = end
        paths = cast("list[str]", self.index.base_paths)  # a hit is a live slot: dead slots' postings are dropped
        return [(-score, -mask.bit_count(), paths[slot], mask)
                for slot, score, mask in zip(hits.tolist(), doc_scores.take(hits).tolist(), masks)]


def _overlay_contributions(index: PostingsIndex, postings: dict[str, float], weight: float,
                           avg: float) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The overlay's documents holding a term (`postings`: path -> weighted tf), and their contributions."""
    if not postings:
        return (), ()
    paths = tuple(postings)
    tfs = np.array([postings[path] for path in paths], dtype=np.float64)
    lengths = np.array([index.overlay[path].lengths for path in paths], dtype=np.float64)
    return paths, tuple(contribution(weight, tfs, index.norms(lengths, avg), index.k1).tolist())
