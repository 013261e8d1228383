"""The in-memory field-weighted BM25 index: pure data structures, no disk, no locks.
This module builds, changes, merges and loads it; `search.ranking.Ranking` answers queries from it.

Layout: a compact *base* of postings in CSR form (numpy arrays: for term id t, entries
`offsets[t]:offsets[t+1]` of `slots` and `tf_codes`) plus a small *overlay* of documents added
since the base was built. A base posting's weighted term frequency is `tf_values[tf_codes[i]]`: a
vault's postings take a few thousand distinct values (small whole counts times a few weights), so each is
kept once, exactly, and a posting holds its value's position (`TfTable`), the most frequent values first.
Removing a base document only clears its `alive` bit; adding or changing a document puts it in the overlay
(O(size of that document)). When the overlay grows past a bound, `merge` folds base and overlay into a new
base.

Scores are bit-for-bit independent of that history: a document's weighted term frequency is
`w_body*tf_body + w_heading*tf_heading + w_path*tf_path` computed the same way everywhere; the
average weighted length comes from integer token totals; each term's contribution is `bm25.contribution`
for base and overlay alike, added in sorted term order. So an index maintained incrementally ranks exactly
like one built from scratch.

`version` names the index's state: every change (`add`, `remove`, `apply`, `merge`, `load_base`) gives it a
new value, and whatever is computed from the index (the ranking's per-term cache) holds while it is unchanged.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Iterator
from typing import Protocol

import numpy as np

from nlmsync.search.bm25 import Weights, length_norm
from nlmsync.search.doc_terms import DocBatch, DocTerms


class Terms(Protocol):
    """A sorted vocabulary: a term's id is its position, which `find` looks up."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def find(self, term: str) -> int | None: ...
    def prefixed(self, prefix: str, cap: int) -> list[str]: ...


class SortedTerms(list[str]):
    """The vocabulary a merge makes: a sorted list, looked up by bisection. (A vocabulary loaded from the
    state file is the cache's `Vocabulary`, which finds a term without decoding the others.)"""

    def find(self, term: str) -> int | None:
        pos = bisect_left(self, term)
        return pos if pos < len(self) and self[pos] == term else None

    def prefixed(self, prefix: str, cap: int) -> list[str]:
        """The first `cap` terms starting with `prefix`, in order."""
        start = bisect_left(self, prefix)
        return [term for term in itertools.takewhile(lambda t: t.startswith(prefix), self[start:start + cap])]


class PostingsIndex:
    """Weighted BM25 over documents keyed by vault path. Not thread-safe; `NoteIndex` serializes access."""

    def __init__(self, weights: Weights, k1: float, b: float, *, merge_threshold: int = 512) -> None:
        self.weights = weights
        self.k1 = k1
        self.b = b
        self.merge_threshold = merge_threshold
        self.terms: Terms = SortedTerms()
        self.offsets = np.zeros(1, dtype=np.int64)
        self.slots = np.zeros(0, dtype=np.int32)
        self.tf_codes: np.ndarray = np.zeros(0, dtype=np.uint16)
        self.tf_values = np.zeros(0, dtype=np.float64)
        self.base_paths: list[str | None] = []
        self.base_lengths = np.zeros((0, 3), dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.dead = 0
        self.slot_of: dict[str, int] = {}
        self.overlay: dict[str, DocTerms] = {}
        self.overlay_postings: dict[str, dict[str, float]] = {}
        self.totals = [0, 0, 0]
        self._norm_cache: tuple[float, np.ndarray] | None = None
        self.version = 0
        """A new value after every change of the index (see the module's docstring)."""

    # --- size and membership ---

    def __len__(self) -> int:
        return len(self.slot_of) + len(self.overlay)

    def __contains__(self, path: object) -> bool:
        return path in self.slot_of or path in self.overlay

    def paths(self) -> list[str]:
        return sorted([*self.slot_of, *self.overlay])

    @property
    def tfs(self) -> np.ndarray:
        """The weighted term frequency of each base posting, as floats (made on each use: `tf_values` and
        `tf_codes` are what the index keeps)."""
        tfs: np.ndarray = self.tf_values[self.tf_codes]
        return tfs

    def lengths_of(self, path: str) -> tuple[int, int, int]:
        if path in self.overlay:
            return self.overlay[path].lengths
        row = self.base_lengths[self.slot_of[path]]
        return (int(row[0]), int(row[1]), int(row[2]))

    def avg_length(self) -> float:
        """Average weighted document length, exact whatever the order documents came and went."""
        count = len(self)
        return self.weights.length(self.totals[0], self.totals[1], self.totals[2]) / count if count else 0.0

    # --- changes ---

    def _count(self, lengths: tuple[int, int, int], sign: int) -> None:
        for i in range(3):
            self.totals[i] += sign * lengths[i]

    def remove(self, path: str) -> bool:
        """Forget a document; True when it was indexed."""
        slot = self.slot_of.pop(path, None)
        if slot is not None:
            self.version += 1
            self.alive[slot] = False
            self.base_paths[slot] = None
            self.dead += 1
            self._count(self.lengths_of_slot(slot), -1)
            return True
        doc = self.overlay.pop(path, None)
        if doc is None:
            return False
        self.version += 1
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
        self.version += 1
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
        table = TfTable(self.tf_values)
        parts_c = [self.tf_codes[keep]]
        next_slot = len(live_slots)
        for source in sources:
            local: np.ndarray = (np.frombuffer(source.term_ids, dtype=np.int32) if source.term_ids
                                 else np.zeros(0, np.int32))
            if len(local) and not vocab:  # the first terms (a full build): the source's own ids serve
                vocab = source.vocab
                next_id = itertools.count(max(source.vocab.values()) + 1)  # a staged term may have no entry
            elif len(local):
                local_ids = np.fromiter(source.vocab.values(), dtype=np.int64, count=len(source.vocab))
                global_of = np.zeros(int(local_ids.max()) + 1, dtype=np.int64)
                global_of[local_ids] = np.fromiter(map(vocab.setdefault, source.vocab, next_id), dtype=np.int64,
                                                   count=len(source.vocab))
                local = global_of[local]
            parts_t.append(local)
            sizes = np.frombuffer(source.sizes, dtype=np.int64) if source.sizes else np.zeros(0, np.int64)
            parts_s.append(np.repeat(np.arange(next_slot, next_slot + len(sizes), dtype=np.int32), sizes))
            parts_c.append(table.codes(np.frombuffer(source.tfs, dtype=np.float64) if source.tfs else np.zeros(0)))
            next_slot += len(sizes)
        new_paths: list[str | None] = [path for source in sources for path in source.packed_paths]
        new_lengths = [np.frombuffer(source.packed_lengths, dtype=np.int64).reshape(-1, 3).copy()
                       if source.packed_paths else np.zeros((0, 3), dtype=np.int64) for source in sources]
        for source in sources:
            source.release()
        terms, ids = _sorted_vocabulary(vocab)
        rank_of = np.zeros(next(next_id), dtype=np.int32)  # a term's id -> its position in `terms`
        rank_of[ids] = np.arange(len(terms), dtype=np.int32)
        del vocab, ids
        all_t = rank_of[_joined(parts_t)] if len(terms) else np.zeros(0, np.int32)
        del parts_t, rank_of
        counts = np.bincount(all_t, minlength=len(terms))
        # base entries come first with ascending slots per term, new slots are larger and in order:
        # a stable sort by term keeps every term's postings sorted by slot
        order = stable_argsort(all_t, counts)
        del all_t  # sorted, the terms are `counts` of each in order
        # sorted one array at a time, each part dropped once it is (a full build's peak of memory is here)
        all_s = _joined(parts_s)[order]
        del parts_s
        all_c = _joined(parts_c)[order]
        del parts_c, order

        used = counts > 0
        self.terms = SortedTerms(terms if used.all() else [t for t, u in zip(terms, used.tolist()) if u])
        self.offsets = np.concatenate([[0], np.cumsum(counts[used])]).astype(np.int64)
        self.slots = all_s
        self.tf_codes, self.tf_values = table.by_frequency(all_c)

        self.base_lengths = np.concatenate([self.base_lengths[live_slots], *new_lengths])
        self.base_paths = [self.base_paths[s] for s in live_slots.tolist()] + new_paths
        self.alive = np.ones(len(self.base_paths), dtype=bool)
        self.dead = 0
        self.slot_of = {p: i for i, p in enumerate(self.base_paths)}  # type: ignore[misc]
        self.overlay = {}
        self.overlay_postings = {}
        self._norm_cache = None
        self.version += 1

    def load_base(self, terms: Terms, offsets: np.ndarray, slots: np.ndarray, tf_codes: np.ndarray,
                  tf_values: np.ndarray, base_paths: list[str | None], base_lengths: np.ndarray) -> None:
        """Install a persisted base (slots whose path is None are dead)."""
        self.terms = terms
        self.offsets, self.slots, self.tf_codes, self.tf_values = offsets, slots, tf_codes, tf_values
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
        self.version += 1

    # --- scoring: the length norms `search.ranking` reads ---

    def norms(self, lengths: np.ndarray, avg: float) -> np.ndarray:
        """`bm25.length_norm` of documents of these field lengths (rows of body, heading, path)."""
        weighted = self.weights.length(lengths[:, 0], lengths[:, 1], lengths[:, 2])
        return length_norm(weighted, avg, self.k1, self.b)

    def base_norms(self, avg: float) -> np.ndarray:
        if self._norm_cache is None or self._norm_cache[0] != avg or len(self._norm_cache[1]) != len(self.alive):
            self._norm_cache = (avg, self.norms(self.base_lengths.astype(np.float64), avg))
        return self._norm_cache[1]


class TfTable:
    """The distinct weighted term frequencies of a merge: `codes` gives each value its position in the table
    (adding the values it lacks), `by_frequency` renumbers the merged postings' codes most frequent first."""

    # values coded per call at most: the sorted lookup's intermediates stay a fraction of the postings' size
    CHUNK = 1 << 18

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.array(values, dtype=np.float64)
        self._sorter = np.argsort(self.values, kind="stable")

    def codes(self, values: np.ndarray) -> np.ndarray:
        """The position in the table of each of `values` (int32), each value the table lacked added to it."""
        out = np.empty(len(values), dtype=np.int32)
        for start in range(0, len(values), self.CHUNK):
            part = values[start:start + self.CHUNK]
            found = self._find(part)
            missing = found < 0
            if missing.any():
                self._add(np.unique(part[missing]))
                found[missing] = self._find(part[missing])
            out[start:start + len(part)] = found
        return out

    def _find(self, values: np.ndarray) -> np.ndarray:
        """The table position of each value, -1 where the table lacks it (equal floats: the same bits, as the
        values are never NaN and a frequency is never -0.0)."""
        if not len(self.values):
            return np.full(len(values), -1, dtype=np.int64)
        ordered = self.values[self._sorter]
        at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
        return np.where(ordered[at] == values, self._sorter[at], -1)

    def _add(self, new: np.ndarray) -> None:
        self.values = np.concatenate([self.values, new])
        self._sorter = np.argsort(self.values, kind="stable")

    def by_frequency(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`codes` renumbered by how many postings hold each value (most first; unused values dropped), as
        uint16 when the values fit, and the table in that order."""
        counts = np.bincount(codes, minlength=len(self.values)) if len(codes) else np.zeros(len(self.values), np.int64)
        order = np.argsort(-counts, kind="stable")
        used = int(np.count_nonzero(counts))
        dtype = np.uint16 if used <= 1 << 16 else np.uint32
        rank = np.empty(len(order), dtype=dtype)
        rank[order] = np.arange(len(order), dtype=np.int64).astype(dtype)  # unused values rank past the used
        return rank[codes] if len(codes) else np.zeros(0, dtype=dtype), self.values[order[:used]]


# postings sorted at once by `stable_argsort`: its temporaries are a few times this many 8-byte positions
SORT_BUCKET = 1 << 21


def _sorted_vocabulary(vocab: dict[str, int]) -> tuple[list[str], np.ndarray]:
    """The terms of `vocab` sorted, and their ids in that order.

    The terms are sorted as positions into the dict's own order, which carries their ids along; looking
    each sorted term up again in a dict of half a million terms (a full build's) costs as much as the sort."""
    keys = list(vocab)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ids = np.fromiter(vocab.values(), dtype=np.int64, count=len(keys))
    return list(map(keys.__getitem__, order)), ids[np.array(order, dtype=np.int64)]


def stable_argsort(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` of non-negative int32 keys (a merge's term ranks), as int32 positions;
    `counts` is `np.bincount(keys)` (of any length past the largest key).

    The keys are cut into ranges of about `SORT_BUCKET` postings each, by their counts, and each range's positions
    (in order) are sorted on their own by radix sorts: numpy sorts keys of 16 bits or less stably by radix sort,
    in linear time, so a range of at most 65,536 keys takes one pass and a wider one two (the low half, then the
    high half of the keys in that order). Sorting the whole array at once would hold several arrays of 8-byte
    positions as long as the postings, more memory than anything else in a full build of a big vault; a range's
    fit in the processor's cache, which makes the sort faster too."""
    count, span = len(keys), len(counts)
    order = np.empty(count, dtype=np.int32)
    if count <= SORT_BUCKET:
        order[:] = _radix_argsort(keys, span)
        return order
    # each range ends after the first key whose postings reach its share (a key with more postings than a share is
    # a range of its own); at most 255 ranges, so a posting's range is one byte
    ranges = min(-(-count // SORT_BUCKET), 255)
    shares = np.arange(1, ranges, dtype=np.int64) * count // ranges
    ends = np.unique(np.append(np.searchsorted(counts.cumsum(), shares, side="left") + 1, span))
    range_of = np.searchsorted(ends, np.arange(span), side="right").astype(np.uint8)[keys]
    start, low = 0, 0
    for at, high in enumerate(ends.tolist()):
        positions = np.flatnonzero(range_of == at)
        order[start:start + len(positions)] = positions[_radix_argsort(keys[positions] - low, high - low)]
        start += len(positions)
        low = high
    return order


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """`np.concatenate(parts)`, with no copy when all but one part are empty (a full build's one batch)."""
    filled = [part for part in parts if len(part)]
    return filled[0] if len(filled) == 1 else np.concatenate(parts)


def _radix_argsort(keys: np.ndarray, span: int) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` of non-negative int32 keys below `span`, by one or two radix passes."""
    if span <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]
