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
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlmsync.search.bm25 import idf
from nlmsync.search.markdown import NoteFields


@dataclass(frozen=True)
class Weights:
    body: float = 1.0
    heading: float = 2.5
    path: float = 4.0

    def length(self, lengths: tuple[int, int, int]) -> float:
        return self.body * lengths[0] + self.heading * lengths[1] + self.path * lengths[2]


@dataclass(frozen=True)
class DocTerms:
    """One document ready for the index: weighted tf per term and its field lengths (token counts)."""

    path: str
    tf: dict[str, float]
    lengths: tuple[int, int, int]


@dataclass(frozen=True)
class RankedDoc:
    path: str
    score: float
    matched_terms: tuple[str, ...]


def doc_terms(path: str, fields: NoteFields, weights: Weights) -> DocTerms:
    """Weighted term frequencies (`tf_w` of §3.2) of one note's fields; terms weighing 0 are left out.

    Summed field by field, body + heading + path, always in that order (so always the same float).
    """
    tf: dict[str, float] = {term: weights.body * count for term, count in fields.body.items()}
    get = tf.get
    for term, count in fields.heading.items():
        tf[term] = get(term, 0.0) + weights.heading * count
    for term, count in fields.path.items():
        tf[term] = get(term, 0.0) + weights.path * count
    if not (weights.body and weights.heading and weights.path):
        tf = {term: value for term, value in tf.items() if value > 0}
    return DocTerms(path, tf, fields.lengths)


class DocBatch:
    """Documents on their way into the index. Kept whole while few (they may go to the overlay);
    past `limit` they are packed into flat arrays with a batch-local vocabulary, which keeps a full
    build of a large vault small in memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.docs: list[DocTerms] = []
        self.packed = False
        self.vocab: dict[str, int] = {}
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
        setdefault = self.vocab.setdefault
        vocab = self.vocab
        self.term_ids.extend([setdefault(term, len(vocab)) for term in doc.tf])
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
            self.alive[slot] = False
            self.base_paths[slot] = None
            self.dead += 1
            self._count(self.lengths_of_slot(slot), -1)
            return True
        doc = self.overlay.pop(path, None)
        if doc is None:
            return False
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
        vocab = dict(zip(self.terms, range(len(self.terms))))
        entry_terms = np.repeat(np.arange(len(self.terms), dtype=np.int32), np.diff(self.offsets))
        keep = self.alive[self.slots] if len(self.slots) else np.zeros(0, dtype=bool)
        parts_t = [entry_terms[keep]]
        parts_s = [remap[self.slots[keep]].astype(np.int32)]
        parts_f = [self.tfs[keep]]
        next_slot = len(live_slots)
        for source in sources:
            global_ids = np.array([vocab.setdefault(term, len(vocab)) for term in source.vocab], dtype=np.int32)
            sizes = np.frombuffer(source.sizes, dtype=np.int64) if source.sizes else np.zeros(0, np.int64)
            local = np.frombuffer(source.term_ids, dtype=np.int32) if source.term_ids else np.zeros(0, np.int32)
            parts_t.append(global_ids[local] if len(local) else local)
            parts_s.append(np.repeat(np.arange(next_slot, next_slot + len(sizes), dtype=np.int32), sizes))
            parts_f.append(np.frombuffer(source.tfs, dtype=np.float64) if source.tfs else np.zeros(0))
            next_slot += len(sizes)
        new_paths = [path for source in sources for path in source.packed_paths]
        new_lengths = [np.frombuffer(source.packed_lengths, dtype=np.int64).reshape(-1, 3).copy()
                       if source.packed_paths else np.zeros((0, 3), dtype=np.int64) for source in sources]
        for source in sources:
            source.release()
        terms = sorted(vocab)
        sorted_id = np.array([vocab[term] for term in terms], dtype=np.int64)
        rank_of = np.empty(len(terms), dtype=np.int32)
        rank_of[sorted_id] = np.arange(len(terms), dtype=np.int32)
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

    def _base_postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self._term_id(term)
        if tid is None:
            return self.slots[:0], self.tfs[:0]
        start, end = int(self.offsets[tid]), int(self.offsets[tid + 1])
        slots, tfs = self.slots[start:end], self.tfs[start:end]
        if self.dead:
            live = self.alive[slots]
            slots, tfs = slots[live], tfs[live]
        return slots, tfs

    def rank(self, query: Mapping[str, float], limit: int | None = None) -> list[RankedDoc]:
        """Documents with a positive score, best first: score desc, matched terms desc, path asc.

        `query` maps each query term to its weight (its frequency in the query, `search.query.query_weights`),
        which multiplies the term's BM25 contribution.
        """
        n_docs = len(self)
        query_tf = query
        if not n_docs or not query_tf:
            return []
        avg = self.avg_length()
        base_norm = self._base_norms(avg)
        # Base postings of all query terms are scored in one pass. `np.bincount` adds each slot's
        # contributions in array order, i.e. term by term in sorted order, exactly like the overlay below.
        # Which terms a document matched: one bit per term (a power of two, summed exactly in float64)
        # for the first 52 terms, the postings kept for any further ones.
        parts_slots: list[np.ndarray] = []
        parts_tfs: list[np.ndarray] = []
        weights: list[float] = []
        active: list[tuple[str, np.ndarray]] = []
        over: dict[str, list[Any]] = {}
        k1 = self.k1
        for term in sorted(query_tf):
            slots, tfs = self._base_postings(term)
            over_postings = self.overlay_postings.get(term, {})
            df = len(slots) + len(over_postings)
            if not df:
                continue
            weight = query_tf[term] * idf(n_docs, df)
            parts_slots.append(slots)
            parts_tfs.append(tfs)
            weights.append(weight)
            active.append((term, slots))
            if over_postings:
                paths = list(over_postings)
                o_tf = np.array([over_postings[p] for p in paths], dtype=np.float64)
                o_len = np.array([self.overlay[p].lengths for p in paths], dtype=np.float64)
                contrib = _contribution(weight, o_tf, self._norms(o_len, avg), k1)
                for path, value in zip(paths, contrib.tolist()):
                    entry = over.setdefault(path, [0.0, 0, []])
                    entry[0] += value
                    entry[1] += 1
                    entry[2].append(term)
        size = len(self.alive)
        if parts_slots:
            all_slots = np.concatenate(parts_slots)
            all_tfs = np.concatenate(parts_tfs)
            sizes = [len(part) for part in parts_slots]
            per_entry = np.repeat(np.array(weights), sizes)
            acc = np.bincount(all_slots, weights=_contribution(per_entry, all_tfs, base_norm[all_slots], k1),
                              minlength=size)
            order = np.arange(len(sizes))
            bit_values = np.where(order < _MASK_BITS, np.exp2(np.minimum(order, _MASK_BITS)), 0.0)
            bits = np.bincount(all_slots, weights=np.repeat(bit_values, sizes), minlength=size)
        else:
            acc = bits = np.zeros(size, dtype=np.float64)
        candidates: list[tuple[float, int, str, int]] = []
        hit_slots = np.flatnonzero(acc > 0)
        if limit is not None and len(hit_slots) > limit:
            kth = np.partition(acc[hit_slots], len(hit_slots) - limit)[len(hit_slots) - limit]
            hit_slots = hit_slots[acc[hit_slots] >= kth]
        for slot, score, mask in zip(hit_slots.tolist(), acc[hit_slots].tolist(),
                                     bits[hit_slots].astype(np.int64).tolist()):
            count = mask.bit_count() + sum(_contains(slots, slot) for _, slots in active[_MASK_BITS:])
            candidates.append((-score, -count, self.base_paths[slot], slot))  # type: ignore[arg-type]
        for path, (score, count, _terms) in over.items():
            if score > 0:
                candidates.append((-score, -int(count), path, -1))
        candidates.sort()
        if limit is not None:
            candidates = candidates[:limit]
        ranked: list[RankedDoc] = []
        for neg_score, _count, path, slot in candidates:
            if slot < 0:
                terms = tuple(over[path][2])
            else:
                mask = int(bits[slot])
                terms = tuple(term for i, (term, _) in enumerate(active[:_MASK_BITS]) if mask >> i & 1)
                terms += tuple(term for term, slots in active[_MASK_BITS:] if _contains(slots, slot))
            ranked.append(RankedDoc(path, -neg_score, terms))
        return ranked


_MASK_BITS = 52


def _contains(sorted_slots: np.ndarray, slot: int) -> bool:
    pos = int(np.searchsorted(sorted_slots, slot))
    return pos < len(sorted_slots) and int(sorted_slots[pos]) == slot
