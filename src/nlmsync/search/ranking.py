"""Answering a query from a `PostingsIndex` (spec §3.3): BM25 contributions per term, added up per document.

Queries reuse each (term, query weight)'s contributions (`Ranking._term_cache`): they are the
floats `_contribution` gives for the index as it is, and any change to the index retires them all
(`PostingsIndex.add` and `remove` count their in-place changes in `_changes`; `merge` and `load_base` install new
arrays and dicts, which the cache compares by identity), so a cached contribution is always the one
a fresh computation would give. An edit only retires the cache (never read again, freed a little at a
time); the terms of the next query are computed again, nothing else. A method that changes any of
these structures in place must bump `_changes`.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Mapping
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nlmsync.search.bm25 import idf

if TYPE_CHECKING:
    from nlmsync.search.postings import PostingsIndex


class RankedDoc(NamedTuple):  # a named tuple: cheaper to make than a frozen dataclass, as immutable
    path: str
    score: float
    matched_terms: tuple[str, ...]


def _contribution(weight: float, tf: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    return weight * (tf * (k1 + 1.0)) / (tf + norm)


class Ranking:
    """The ranking of one `PostingsIndex` and its per-term contributions cache (see the module's docstring)."""

    def __init__(self, index: PostingsIndex) -> None:
        self.index = index
        self._cache_key: tuple[Any, ...] = ()
        self._cache_objects: tuple[Any, ...] = ()
        self._cache: dict[tuple[str, float], _TermScores | None] = {}
        self._cache_entries = 0
        self._stale: list[dict[tuple[str, float], _TermScores | None]] = []
        self._offsets = memoryview(index.offsets)

    def _term_cache(self, n_docs: int) -> dict[tuple[str, float], _TermScores | None]:
        """The per-term scores of the index as it is now, emptied whenever the index has changed.

        A term's scores depend on N, the average length, the live base slots and the overlay, so any
        change drops them all: an in-place change bumps `_changes` (`add`, `remove`), and `merge` and
        `load_base` install new arrays and dicts, which the identity check sees. Setting them aside is all
        an edit costs here (freeing thousands of entries at once would take milliseconds: they are freed a
        few at a time by the queries that compute new ones, `_free_stale`); a term's scores are computed
        again when a query next asks for it. After a merge or a reload they go at once, with the old arrays
        their views would keep alive."""
        index = self.index
        key = (index._changes, n_docs, index.totals[0], index.totals[1], index.totals[2], index.dead)
        objects = (index.terms, index.offsets, index.slots, index.tfs, index.alive, index.base_lengths, index.base_paths,
                   index.overlay, index.overlay_postings)
        same_arrays = all(map(operator.is_, objects, self._cache_objects))
        if key != self._cache_key or not same_arrays:
            if same_arrays and self._cache and sum(map(len, self._stale)) < _STALE_ENTRIES:
                self._stale.append(self._cache)
            else:
                self._stale = []
            self._cache = {}
            self._cache_entries = 0
            self._offsets = memoryview(index.offsets)  # a term's postings bounds as Python ints, cheaply
            self._cache_key = key
            self._cache_objects = objects
        return self._cache

    def _score_terms(self, keys: list[tuple[str, float]], found: list[Any], n_docs: int,
                     cache: dict[tuple[str, float], _TermScores | None]) -> list[_TermScores | None]:
        """`found` (the cache's entries for `keys`, `_MISSING` where it has none) with the missing ones
        computed (all their base postings in one numpy pass) and kept in the cache."""
        index = self.index
        missing = [i for i, entry in enumerate(found) if entry is _MISSING]
        terms = index.terms
        find = None if type(terms) is list else index.term_id  # a list is bisected right here
        n_terms = len(terms)
        offsets = self._offsets
        all_slots, all_tfs = index.slots, index.tfs
        overlay_postings = index.overlay_postings
        parts_slots = []
        parts_tfs = []
        sizes = []  # each term's base postings, dead slots included until filtered below
        for i in missing:
            term = keys[i][0]
            if find is None:
                tid = bisect_left(terms, term)
                known = tid < n_terms and terms[tid] == term
            else:
                tid = find(term)
                known = tid is not None
            if known:
                start, end = offsets[tid], offsets[tid + 1]
                parts_slots.append(all_slots[start:end])
                parts_tfs.append(all_tfs[start:end])
                sizes.append(end - start)
            else:
                sizes.append(0)
        # the slots are kept as intp, what `np.bincount` counts with, so that no query converts them again
        if len(parts_slots) == 1:
            batch_slots, batch_tfs = parts_slots[0].astype(np.intp), parts_tfs[0]
        elif parts_slots:
            batch_slots, batch_tfs = np.concatenate(parts_slots, dtype=np.intp), np.concatenate(parts_tfs)
        else:
            batch_slots, batch_tfs = np.zeros(0, dtype=np.intp), all_tfs[:0]
        if index.dead and len(batch_slots):  # drop the postings of dead slots, for all the terms at once
            live = index.alive.take(batch_slots)
            live_before = np.concatenate([[0], np.cumsum(live)])
            sizes = np.diff(live_before.take(np.concatenate([[0], np.cumsum(sizes)]))).tolist()
            batch_slots, batch_tfs = batch_slots[live], batch_tfs[live]
        weights = []
        dfs = []
        for i, size in zip(missing, sizes):
            term, query_weight = keys[i]
            df = size + len(overlay_postings[term]) if overlay_postings and term in overlay_postings else size
            dfs.append(df)
            weights.append(query_weight * idf(n_docs, df) if df else 0.0)
        avg = index.avg_length()
        k1 = index.k1
        per_entry: float | np.ndarray = weights[0] if len(missing) == 1 else np.repeat(weights, sizes)
        contribs = _contribution(per_entry, batch_tfs, index.base_norms(avg).take(batch_slots), k1)
        start = 0
        added = 0
        new: dict[tuple[str, float], _TermScores | None] = {}
        for i, size, weight, df in zip(missing, sizes, weights, dfs):
            key = keys[i]
            entry: _TermScores | None = None
            if df:
                overlay: tuple[tuple[str, float], ...] = ()
                over = overlay_postings.get(key[0]) if overlay_postings else None
                if over:
                    paths = list(over)
                    o_tf = np.array([over[p] for p in paths], dtype=np.float64)
                    o_len = np.array([index.overlay[p].lengths for p in paths], dtype=np.float64)
                    overlay = tuple(zip(paths, _contribution(weight, o_tf, index.norms(o_len, avg), k1).tolist()))
                entry = (key[0], batch_slots[start:start + size], contribs[start:start + size], size, overlay)
                start += size
                added += size + len(overlay)
            found[i] = new[key] = entry
        # kept while the cache holds at most CACHE_ENTRIES postings (the oldest terms make room)
        added += len(new)
        if added <= CACHE_ENTRIES:
            while self._cache_entries + added > CACHE_ENTRIES:
                old = cache.pop(next(iter(cache)))
                self._cache_entries -= 1 + old[3] + len(old[4]) if old is not None else 1
            cache.update(new)
            self._cache_entries += added
        if self._stale:
            self._free_stale(2 * len(missing) + 8)
        return found

    def _free_stale(self, count: int) -> None:
        """Free about `count` entries of the caches set aside by earlier changes."""
        stale = self._stale
        while count > 0 and stale:
            entries = stale[-1]
            if len(entries) <= count:
                count -= len(entries)
                stale.pop()
            else:
                for _ in range(count):
                    entries.popitem()
                count = 0

    def rank(self, query: Mapping[str, float], limit: int | None = None) -> list[RankedDoc]:
        """Documents with a positive score, best first: score desc, matched terms desc, path asc.

        `query` maps each query term to its weight (its frequency in the query, `search.query.query_weights`),
        which multiplies the term's BM25 contribution.

        Each (term, weight)'s contributions are computed once and kept (`_term_cache`, bounded by
        `CACHE_ENTRIES` postings) until the index changes; they are the very floats a fresh computation
        gives. A document's score adds them up term by term in sorted term order, for base documents
        (`np.bincount` adds in array order) and overlay documents alike.
        """
        index = self.index
        n_docs = len(index)
        if not n_docs or not query:
            return []
        cache = self._term_cache(n_docs)
        keys = sorted(query.items())  # (term, weight): in term order, and the cache's keys
        entries = [cache.get(key, _MISSING) for key in keys]
        if _MISSING in entries:
            entries = self._score_terms(keys, entries, n_docs, cache)
        base = [entry for entry in entries if entry is not None and entry[3]]  # terms with base postings
        active: tuple[str, ...] = ()
        candidates = []
        if base:
            active, parts_slots, parts_scores, sizes, _overlays = zip(*base)
            candidates = self._base_candidates(active, parts_slots, parts_scores, sizes, limit)
        if index.overlay:
            over: dict[str, list[Any]] = {}
            for entry in entries:
                if entry is None:
                    continue
                term = entry[0]
                for path, value in entry[4]:
                    scored = over.get(path)
                    if scored is None:
                        over[path] = scored = [0.0, []]
                    scored[0] += value
                    scored[1].append(term)
            candidates.extend((-score, -len(matched), path, matched)
                              for path, (score, matched) in over.items() if score > 0)
        candidates.sort()
        if limit is not None:
            del candidates[limit:]
        if len(active) <= 16 and not index.overlay:  # masks of two bytes at most: decoded inline
            low, high, getter = _BYTE_POSITIONS[0], _BYTE_POSITIONS[1], operator.itemgetter
            return [_new_tuple(RankedDoc, (path, -neg_score, getter(*positions)(active)
                                           if len(positions := low[mask & 255] + high[mask >> 8]) > 1
                                           else (active[positions[0]],)))
                    for neg_score, _count, path, mask in candidates]
        return [_new_tuple(RankedDoc, (path, -neg_score, _terms_of(matched, active)))
                for neg_score, _count, path, matched in candidates]

    def _base_candidates(self, active: tuple[str, ...], parts_slots: tuple[np.ndarray, ...],
                         parts_scores: tuple[np.ndarray, ...], sizes: tuple[int, ...], limit: int | None) -> list[tuple[float, int, str, Any]]:
        """(-score, -matched term count, path, matched terms) of the base documents that can be among
        the first `limit` (all of them with a positive score when `limit` is None). The matched terms are
        a bit mask over `active` (bit i: `active[i]`) for up to `_MASK_BITS` terms, else a list of terms."""
        index = self.index
        if len(parts_slots) == 1:
            all_slots, all_scores = parts_slots[0], parts_scores[0]
        else:
            all_slots = np.concatenate(parts_slots)
            all_scores = np.concatenate(parts_scores)
        acc = np.bincount(all_slots, weights=all_scores)
        size = len(acc)
        kth = 0.0  # with `limit`, the limit-th best score when positive: the least a candidate needs
        if limit is not None and size > limit:
            if size <= len(all_slots):  # most slots are hit: select among all of them, zeros included
                kth = np.partition(acc, size - limit)[size - limit]
            else:
                positive = acc.take((acc > 0).nonzero()[0])
                if len(positive) > limit:
                    kth = np.partition(positive, len(positive) - limit)[len(positive) - limit]
        is_hit = (acc >= kth) if kth > 0 else (acc > 0)
        hit_slots = is_hit.nonzero()[0]
        hits = hit_slots.tolist()
        paths = index.base_paths
        scores = acc.take(hit_slots).tolist()
        if len(active) == 1:
            return [(-score, -1, paths[slot], 1) for slot, score in zip(hits, scores)]
        if len(active) <= _MASK_BITS:
            # one bit per term (powers of two add up exactly in float64), summed per slot like the scores
            bits = np.bincount(all_slots, weights=np.repeat(_BIT_VALUES[:len(active)], sizes))
            return [(-score, -mask.bit_count(), paths[slot], mask)  # type: ignore[misc]
                    for slot, score, mask in zip(hits, scores, bits.take(hit_slots).astype(np.int64).tolist())]
        # more terms than bits: the candidates' entries among all postings, term by term
        hit_entries = is_hit.take(all_slots)
        entry_slots = all_slots[hit_entries].tolist()
        counts = np.add.reduceat(hit_entries, [0, *accumulate(sizes[:-1])], dtype=np.intp).tolist()  # no part is empty
        matched: dict[int, list[str]] = {slot: [] for slot in hits}
        start = 0
        for term, count in zip(active, counts):
            if count:
                for slot in entry_slots[start:start + count]:
                    matched[slot].append(term)
                start += count
        return [(-score, -len(terms), paths[slot], terms)  # type: ignore[misc]
                for (slot, terms), score in zip(matched.items(), scores)]



def _terms_of(matched: Any, active: tuple[str, ...]) -> tuple[str, ...]:
    """The matched terms of a candidate: a bit mask over `active`, or the terms themselves."""
    if type(matched) is not int:
        return tuple(matched)
    positions = _BYTE_POSITIONS[0][matched & 255]
    chunk = 0
    while matched := matched >> 8:
        chunk += 1
        if chunk == len(_BYTE_POSITIONS):
            _BYTE_POSITIONS.append([tuple(8 * chunk + i for i in bits) for bits in _BYTE_POSITIONS[0]])
        positions += _BYTE_POSITIONS[chunk][matched & 255]
    return operator.itemgetter(*positions)(active) if len(positions) > 1 else (active[positions[0]],)


_new_tuple = tuple.__new__  # builds a RankedDoc without going through its Python-level __new__
_MASK_BITS = 52
_BIT_VALUES = np.exp2(np.arange(_MASK_BITS))
# _BYTE_POSITIONS[k][b]: the positions of the bits set in byte b of a mask, counting from bit 8k
_BYTE_POSITIONS: list[list[tuple[int, ...]]] = [[tuple(i for i in range(8) if b >> i & 1) for b in range(256)]]
_BYTE_POSITIONS.append([tuple(8 + i for i in bits) for bits in _BYTE_POSITIONS[0]])


# Postings whose contributions the per-term cache keeps at most (16 bytes each: the contribution and the
# slot as intp): 16 MB at most.
CACHE_ENTRIES = 1 << 20
_STALE_ENTRIES = 1 << 16  # (term, weight) entries set aside at most before they go at once
_MISSING = object()
_TermScores = tuple[str, np.ndarray, np.ndarray, int, tuple[tuple[str, float], ...]]
