"""The in-memory field-weighted BM25 index (spec §3.2-3.3): pure data structures, no disk, no locks.

Layout: a compact *base* of postings in CSR form (numpy arrays: for term id t, entries
`offsets[t]:offsets[t+1]` of `slots` and `tfs`) plus a small *overlay* of documents added
since the base was built. Removing a base document only clears its `alive` bit; adding or
changing a document puts it in the overlay (O(size of that document)). When the overlay grows
past a bound, `merge` folds base and overlay into a new base.

Scores are bit-for-bit independent of that history: a document's weighted term frequency is
`w_body*tf_body + w_heading*tf_heading + w_path*tf_path` computed the same way everywhere; the
average weighted length comes from integer token totals; each term's contribution is computed
by one numpy expression for base and overlay alike, and added in sorted term order. So an index
maintained incrementally ranks exactly like one built from scratch.

Queries reuse each (term, query weight)'s contributions (`PostingsIndex._term_cache`): they are the
floats that expression gives for the index as it is, and any change to the index retires them all
(`add` and `remove` count their in-place changes in `_changes`; `merge` and `load_base` install new
arrays and dicts, which the cache compares by identity), so a cached contribution is always the one
a fresh computation would give. An edit only retires the cache (never read again, freed a little at a
time); the terms of the next query are computed again, nothing else. A method that changes any of
these structures in place must bump `_changes`.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nlmsync.search.bm25 import idf

if TYPE_CHECKING:
    from nlmsync.search.markdown import NoteFields


@dataclass(frozen=True)
class Weights:
    body: float = 1.0
    heading: float = 2.5
    path: float = 4.0  # the file name's tokens
    folder: float = 1.0  # the folder's tokens (in lengths, they count as path tokens)

    def length(self, lengths: tuple[int, int, int]) -> float:
        return self.body * lengths[0] + self.heading * lengths[1] + self.path * lengths[2]


@dataclass(frozen=True)
class DocTerms:
    """One document ready for the index: weighted tf per term and its field lengths (token counts)."""

    path: str
    tf: dict[str, float]
    lengths: tuple[int, int, int]


class RankedDoc(NamedTuple):  # a named tuple: cheaper to make than a frozen dataclass, as immutable
    path: str
    score: float
    matched_terms: tuple[str, ...]


def doc_terms(path: str, fields: NoteFields, weights: Weights) -> DocTerms:
    """Weighted term frequencies (`tf_w` of §3.2) of one note's fields; terms weighing 0 are left out.

    Summed field by field, body + heading + file name + folder, always in that order (so always the same float).
    """
    tf: dict[str, float] = {term: weights.body * count for term, count in fields.body.items()}
    get = tf.get
    for term, count in fields.heading.items():
        tf[term] = get(term, 0.0) + weights.heading * count
    for term, count in fields.path.items():
        tf[term] = get(term, 0.0) + weights.path * count
    for term, count in fields.folder.items():
        tf[term] = get(term, 0.0) + weights.folder * count
    if not (weights.body and weights.heading and weights.path and weights.folder):
        tf = {term: value for term, value in tf.items() if value > 0}
    return DocTerms(path, tf, fields.lengths)


class DocBatch:
    """Documents on their way into the index. Kept whole while few (they may go to the overlay);
    past `limit` they are packed into flat arrays with a batch-local vocabulary, which keeps a full
    build of a large vault small in memory.

    A packed term's id is unique but not dense: the number of (document, term) entries packed before its
    first one (`dict.setdefault` over a running count, so packing runs no Python code per term)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.docs: list[DocTerms] = []
        self.packed = False
        self.vocab: dict[str, int] = {}
        self._entry_count = itertools.count()
        self.term_ids = array("i")
        self.tfs = array("d")
        self.sizes = array("q")
        self.packed_paths: list[str] = []
        self.packed_lengths = array("q")

    def __len__(self) -> int:
        return len(self.docs) + len(self.packed_paths)

    def paths(self) -> list[str]:
        return [d.path for d in self.docs] + self.packed_paths

    def add(self, doc: DocTerms) -> None:
        if self.packed:
            self._pack(doc)
            return
        self.docs.append(doc)
        if len(self.docs) > self.limit:
            self.packed = True
            for pending in self.docs:
                self._pack(pending)
            self.docs = []

    def totals(self) -> tuple[int, int, int]:
        packed = np.frombuffer(self.packed_lengths, dtype=np.int64).reshape(-1, 3).sum(axis=0) \
            if self.packed_paths else np.zeros(3, dtype=np.int64)
        body, heading, path = (int(x) for x in packed)
        for doc in self.docs:
            body, heading, path = body + doc.lengths[0], heading + doc.lengths[1], path + doc.lengths[2]
        return (body, heading, path)

    def release(self) -> None:
        """Drop the packed documents once they are in the index (a full build's biggest buffers)."""
        self.vocab = {}
        self.term_ids = array("i")
        self.tfs = array("d")
        self.sizes = array("q")
        self.packed_lengths = array("q")

    def pack_all(self) -> None:
        for doc in self.docs:
            self._pack(doc)
        self.docs = []
        self.packed = True

    def _pack(self, doc: DocTerms) -> None:
        self.term_ids.extend(map(self.vocab.setdefault, doc.tf, self._entry_count))
        self.tfs.extend(doc.tf.values())
        self.sizes.append(len(doc.tf))
        self.packed_paths.append(doc.path)
        self.packed_lengths.extend(doc.lengths)


def _contribution(weight: float, tf: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    return weight * (tf * (k1 + 1.0)) / (tf + norm)


class PostingsIndex:
    """Weighted BM25 over documents keyed by vault path. Not thread-safe; `NoteIndex` serializes access."""

    def __init__(self, weights: Weights, k1: float, b: float, *, merge_threshold: int = 512) -> None:
        self.weights = weights
        self.k1 = k1
        self.b = b
        self.merge_threshold = merge_threshold
        # sorted: a term's id is its position (looked up by bisection, or by `find` on a cache's Vocabulary)
        self.terms: Sequence[str] = []
        self.offsets = np.zeros(1, dtype=np.int64)
        self.slots = np.zeros(0, dtype=np.int32)
        self.tfs = np.zeros(0, dtype=np.float64)
        self.base_paths: list[str | None] = []
        self.base_lengths = np.zeros((0, 3), dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.dead = 0
        self.slot_of: dict[str, int] = {}
        self.overlay: dict[str, DocTerms] = {}
        self.overlay_postings: dict[str, dict[str, float]] = {}
        self.totals = [0, 0, 0]
        self._norm_cache: tuple[float, np.ndarray] | None = None
        self._changes = 0  # counts the changes made in place (add, remove); see `_term_cache`
        self._cache_key: tuple[Any, ...] = ()
        self._cache_objects: tuple[Any, ...] = ()
        self._cache: dict[tuple[str, float], _TermScores | None] = {}
        self._cache_entries = 0
        self._stale: list[dict[tuple[str, float], _TermScores | None]] = []
        self._offsets = memoryview(self.offsets)

    # --- size and membership ---

    def __len__(self) -> int:
        return len(self.slot_of) + len(self.overlay)

    def __contains__(self, path: object) -> bool:
        return path in self.slot_of or path in self.overlay

    def paths(self) -> list[str]:
        return sorted([*self.slot_of, *self.overlay])

    def lengths_of(self, path: str) -> tuple[int, int, int]:
        if path in self.overlay:
            return self.overlay[path].lengths
        row = self.base_lengths[self.slot_of[path]]
        return (int(row[0]), int(row[1]), int(row[2]))

    def avg_length(self) -> float:
        """Average weighted document length, exact whatever the order documents came and went."""
        count = len(self)
        return self.weights.length((self.totals[0], self.totals[1], self.totals[2])) / count if count else 0.0

    # --- changes ---

    def _count(self, lengths: tuple[int, int, int], sign: int) -> None:
        for i in range(3):
            self.totals[i] += sign * lengths[i]

    def remove(self, path: str) -> bool:
        """Forget a document; True when it was indexed."""
        slot = self.slot_of.pop(path, None)
        if slot is not None:
            self._changes += 1
            self.alive[slot] = False
            self.base_paths[slot] = None
            self.dead += 1
            self._count(self.lengths_of_slot(slot), -1)
            return True
        doc = self.overlay.pop(path, None)
        if doc is None:
            return False
        self._changes += 1
        for term in doc.tf:
            postings = self.overlay_postings[term]
            del postings[path]
            if not postings:
                del self.overlay_postings[term]
        self._count(doc.lengths, -1)
        return True

    def lengths_of_slot(self, slot: int) -> tuple[int, int, int]:
        row = self.base_lengths[slot]
        return (int(row[0]), int(row[1]), int(row[2]))

    def add(self, doc: DocTerms) -> None:
        """Index (or re-index) one document through the overlay."""
        self.remove(doc.path)
        self._changes += 1
        self.overlay[doc.path] = doc
        for term, value in doc.tf.items():
            self.overlay_postings.setdefault(term, {})[doc.path] = value
        self._count(doc.lengths, +1)

    def apply(self, removed: list[str], batch: DocBatch) -> bool:
        """Remove then add documents; folds everything into a new base when the overlay would grow
        past `merge_threshold`. Returns True when a merge happened."""
        for path in removed:
            self.remove(path)
        for path in batch.paths():
            self.remove(path)
        if (batch.packed or len(self.overlay) + len(batch) > self.merge_threshold
                or self.dead > max(self.merge_threshold, len(self.alive) // 2)):
            self.merge(batch)
            return True
        for doc in batch.docs:
            self.add(doc)
        return False

    def merge(self, batch: DocBatch | None = None) -> None:
        """Rebuild the base from the live base documents, the overlay and `batch` (not yet indexed)."""
        overlay = DocBatch(0)
        for doc in self.overlay.values():
            overlay.add(doc)
        overlay.pack_all()
        sources = [overlay]
        if batch is not None:
            batch.pack_all()
            self._count(batch.totals(), +1)
            sources.append(batch)
        live_slots = np.flatnonzero(self.alive)
        remap = np.full(len(self.alive), -1, dtype=np.int64)
        remap[live_slots] = np.arange(len(live_slots))
        # every term gets a unique id (dense for the base's terms, the sources' are not: see DocBatch)
        vocab = dict(zip(self.terms, range(len(self.terms))))
        next_id = itertools.count(len(vocab))
        entry_terms = np.repeat(np.arange(len(self.terms), dtype=np.int64), np.diff(self.offsets))
        keep = self.alive[self.slots] if len(self.slots) else np.zeros(0, dtype=bool)
        parts_t = [entry_terms[keep]]
        parts_s = [remap[self.slots[keep]].astype(np.int32)]
        parts_f = [self.tfs[keep]]
        next_slot = len(live_slots)
        for source in sources:
            local = np.frombuffer(source.term_ids, dtype=np.int32) if source.term_ids else np.zeros(0, np.int32)
            if len(local) and not vocab:  # the first terms (a full build): the source's own ids serve
                vocab = source.vocab
                next_id = itertools.count(int(local.max()) + 1)
            elif len(local):
                local_ids = np.fromiter(source.vocab.values(), dtype=np.int64, count=len(source.vocab))
                global_of = np.zeros(int(local_ids.max()) + 1, dtype=np.int64)
                global_of[local_ids] = np.fromiter(map(vocab.setdefault, source.vocab, next_id), dtype=np.int64,
                                                   count=len(source.vocab))
                local = global_of[local]
            parts_t.append(local)
            sizes = np.frombuffer(source.sizes, dtype=np.int64) if source.sizes else np.zeros(0, np.int64)
            parts_s.append(np.repeat(np.arange(next_slot, next_slot + len(sizes), dtype=np.int32), sizes))
            parts_f.append(np.frombuffer(source.tfs, dtype=np.float64) if source.tfs else np.zeros(0))
            next_slot += len(sizes)
        new_paths = [path for source in sources for path in source.packed_paths]
        new_lengths = [np.frombuffer(source.packed_lengths, dtype=np.int64).reshape(-1, 3).copy()
                       if source.packed_paths else np.zeros((0, 3), dtype=np.int64) for source in sources]
        for source in sources:
            source.release()
        terms = sorted(vocab)
        rank_of = np.zeros(next(next_id), dtype=np.int32)  # a term's id -> its position in `terms`
        rank_of[np.fromiter(map(vocab.__getitem__, terms), dtype=np.int64, count=len(terms))] = np.arange(
            len(terms), dtype=np.int32)
        del vocab
        all_t = rank_of[np.concatenate(parts_t)] if len(terms) else np.zeros(0, np.int32)
        all_s, all_f = np.concatenate(parts_s), np.concatenate(parts_f)
        # base entries come first with ascending slots per term, new slots are larger and in order:
        # a stable sort by term keeps every term's postings sorted by slot
        order = np.argsort(all_t, kind="stable")
        all_t, all_s, all_f = all_t[order], all_s[order], all_f[order]

        counts = np.bincount(all_t, minlength=len(terms))
        used = counts > 0
        self.terms = terms if used.all() else [t for t, u in zip(terms, used.tolist()) if u]
        self.offsets = np.concatenate([[0], np.cumsum(counts[used])]).astype(np.int64)
        self.slots = all_s
        self.tfs = all_f

        self.base_lengths = np.concatenate([self.base_lengths[live_slots], *new_lengths])
        self.base_paths = [self.base_paths[s] for s in live_slots.tolist()] + new_paths
        self.alive = np.ones(len(self.base_paths), dtype=bool)
        self.dead = 0
        self.slot_of = {p: i for i, p in enumerate(self.base_paths)}  # type: ignore[misc]
        self.overlay = {}
        self.overlay_postings = {}
        self._norm_cache = None

    def load_base(self, terms: Sequence[str], offsets: np.ndarray, slots: np.ndarray, tfs: np.ndarray,
                  base_paths: list[str | None], base_lengths: np.ndarray) -> None:
        """Install a persisted base (slots whose path is None are dead). `terms` may be any sorted sequence
        with a `find(term) -> id | None` (the cache's `Vocabulary`) or a list."""
        self.terms = terms
        self.offsets, self.slots, self.tfs = offsets, slots, tfs
        self.base_paths = base_paths
        self.base_lengths = base_lengths
        slot_of: dict[str | None, int] = dict(zip(base_paths, range(len(base_paths))))
        slot_of.pop(None, None)
        self.slot_of = slot_of  # type: ignore[assignment]
        self.dead = len(base_paths) - len(slot_of)
        self.alive = np.array([p is not None for p in base_paths], dtype=bool) if self.dead \
            else np.ones(len(base_paths), dtype=bool)
        live_lengths = base_lengths[self.alive] if self.dead else base_lengths
        live_totals = live_lengths.sum(axis=0) if len(base_paths) else np.zeros(3, dtype=np.int64)
        self.totals = [int(live_totals[0]), int(live_totals[1]), int(live_totals[2])]
        for doc in self.overlay.values():
            self._count(doc.lengths, +1)
        self._norm_cache = None

    # --- scoring ---

    def _norms(self, lengths: np.ndarray, avg: float) -> np.ndarray:
        weighted = (self.weights.body * lengths[:, 0] + self.weights.heading * lengths[:, 1]
                    + self.weights.path * lengths[:, 2])
        return self.k1 * (1.0 - self.b + self.b * (weighted / avg))

    def _base_norms(self, avg: float) -> np.ndarray:
        if self._norm_cache is None or self._norm_cache[0] != avg or len(self._norm_cache[1]) != len(self.alive):
            self._norm_cache = (avg, self._norms(self.base_lengths.astype(np.float64), avg))
        return self._norm_cache[1]

    def _term_id(self, term: str) -> int | None:
        if type(self.terms) is not list:  # a cache's Vocabulary (see load_base): no Python call per probe
            return self.terms.find(term)  # type: ignore[attr-defined]
        pos = bisect_left(self.terms, term)
        return pos if pos < len(self.terms) and self.terms[pos] == term else None

    def _term_cache(self, n_docs: int) -> dict[tuple[str, float], _TermScores | None]:
        """The per-term scores of the index as it is now, emptied whenever the index has changed.

        A term's scores depend on N, the average length, the live base slots and the overlay, so any
        change drops them all: an in-place change bumps `_changes` (`add`, `remove`), and `merge` and
        `load_base` install new arrays and dicts, which the identity check sees. Setting them aside is all
        an edit costs here (freeing thousands of entries at once would take milliseconds: they are freed a
        few at a time by the queries that compute new ones, `_free_stale`); a term's scores are computed
        again when a query next asks for it. After a merge or a reload they go at once, with the old arrays
        their views would keep alive."""
        key = (self._changes, n_docs, self.totals[0], self.totals[1], self.totals[2], self.dead)
        objects = (self.terms, self.offsets, self.slots, self.tfs, self.alive, self.base_lengths, self.base_paths,
                   self.overlay, self.overlay_postings)
        same_arrays = all(map(operator.is_, objects, self._cache_objects))
        if key != self._cache_key or not same_arrays:
            if same_arrays and self._cache and sum(map(len, self._stale)) < _STALE_ENTRIES:
                self._stale.append(self._cache)
            else:
                self._stale = []
            self._cache = {}
            self._cache_entries = 0
            self._offsets = memoryview(self.offsets)  # a term's postings bounds as Python ints, cheaply
            self._cache_key = key
            self._cache_objects = objects
        return self._cache

    def _score_terms(self, keys: list[tuple[str, float]], found: list[Any], n_docs: int,
                     cache: dict[tuple[str, float], _TermScores | None]) -> list[_TermScores | None]:
        """`found` (the cache's entries for `keys`, `_MISSING` where it has none) with the missing ones
        computed (all their base postings in one numpy pass) and kept in the cache."""
        missing = [i for i, entry in enumerate(found) if entry is _MISSING]
        terms = self.terms
        find = None if type(terms) is list else self._term_id  # a list is bisected right here
        n_terms = len(terms)
        offsets = self._offsets
        all_slots, all_tfs = self.slots, self.tfs
        overlay_postings = self.overlay_postings
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
        if self.dead and len(batch_slots):  # drop the postings of dead slots, for all the terms at once
            live = self.alive.take(batch_slots)
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
        avg = self.avg_length()
        k1 = self.k1
        per_entry: float | np.ndarray = weights[0] if len(missing) == 1 else np.repeat(weights, sizes)
        contribs = _contribution(per_entry, batch_tfs, self._base_norms(avg).take(batch_slots), k1)
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
                    o_len = np.array([self.overlay[p].lengths for p in paths], dtype=np.float64)
                    overlay = tuple(zip(paths, _contribution(weight, o_tf, self._norms(o_len, avg), k1).tolist()))
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
        n_docs = len(self)
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
        if self.overlay:
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
        if len(active) <= 16 and not self.overlay:  # masks of two bytes at most: decoded inline
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
        paths = self.base_paths
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
