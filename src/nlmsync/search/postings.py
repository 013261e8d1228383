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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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
    """Weighted term frequencies (`tf_w` of §3.2) of one note's fields; terms weighing 0 are left out."""
    tf: dict[str, float] = {}
    for term in fields.body.keys() | fields.heading.keys() | fields.path.keys():
        value = (weights.body * fields.body.get(term, 0) + weights.heading * fields.heading.get(term, 0)
                 + weights.path * fields.path.get(term, 0))
        if value > 0:
            tf[term] = value
    return DocTerms(path, tf, fields.lengths)


def _contribution(weight: float, tf: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    return weight * (tf * (k1 + 1.0)) / (tf + norm)


class PostingsIndex:
    """Weighted BM25 over documents keyed by vault path. Not thread-safe; `NoteIndex` serializes access."""

    def __init__(self, weights: Weights, k1: float, b: float, *, merge_threshold: int = 512) -> None:
        self.weights = weights
        self.k1 = k1
        self.b = b
        self.merge_threshold = merge_threshold
        self.terms: list[str] = []
        self.vocab: dict[str, int] = {}
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

    def apply(self, removed: list[str], added: list[DocTerms]) -> bool:
        """Remove then add documents; folds everything into a new base when the overlay would grow
        past `merge_threshold`. Returns True when a merge happened."""
        for path in removed:
            self.remove(path)
        if len(self.overlay) + len(added) > self.merge_threshold or self.dead > max(self.merge_threshold,
                                                                                      len(self.alive) // 2):
            for doc in added:
                self.remove(doc.path)
            self.merge(added)
            return True
        for doc in added:
            self.add(doc)
        return False

    def merge(self, extra: Sequence[DocTerms] = ()) -> None:
        """Rebuild the base from the live base documents, the overlay and `extra` (not yet indexed)."""
        docs = [*self.overlay.values(), *extra]
        docs.sort(key=lambda d: d.path)
        live_slots = np.flatnonzero(self.alive)
        remap = np.full(len(self.alive), -1, dtype=np.int64)
        remap[live_slots] = np.arange(len(live_slots))
        vocab = dict(self.vocab)
        terms = list(self.terms)

        entry_terms = np.repeat(np.arange(len(self.terms), dtype=np.int64), np.diff(self.offsets))
        keep = self.alive[self.slots] if len(self.slots) else np.zeros(0, dtype=bool)
        base_t = entry_terms[keep]
        base_s = remap[self.slots[keep]]
        base_f = self.tfs[keep]

        new_t = array("q")
        new_s = array("q")
        new_f = array("d")
        first = len(live_slots)
        for i, doc in enumerate(docs):
            slot = first + i
            for term, value in doc.tf.items():
                tid = vocab.get(term)
                if tid is None:
                    tid = vocab[term] = len(terms)
                    terms.append(term)
                new_t.append(tid)
                new_s.append(slot)
                new_f.append(value)
        all_t = np.concatenate([base_t, np.frombuffer(new_t, dtype=np.int64)])
        all_s = np.concatenate([base_s, np.frombuffer(new_s, dtype=np.int64)])
        all_f = np.concatenate([base_f, np.frombuffer(new_f, dtype=np.float64)])
        order = np.lexsort((all_s, all_t))
        all_t, all_s, all_f = all_t[order], all_s[order], all_f[order]

        counts = np.bincount(all_t, minlength=len(terms))
        used = counts > 0
        kept_terms = [t for t, u in zip(terms, used.tolist()) if u]
        self.terms = kept_terms
        self.vocab = {t: i for i, t in enumerate(kept_terms)}
        self.offsets = np.concatenate([[0], np.cumsum(counts[used])]).astype(np.int64)
        self.slots = all_s.astype(np.int32)
        self.tfs = all_f

        base_paths = [self.base_paths[s] for s in live_slots.tolist()] + [d.path for d in docs]
        extra_lengths = np.array([d.lengths for d in docs], dtype=np.int64).reshape(-1, 3)
        self.base_lengths = np.concatenate([self.base_lengths[live_slots], extra_lengths])
        self.base_paths = base_paths
        self.alive = np.ones(len(base_paths), dtype=bool)
        self.dead = 0
        self.slot_of = {p: i for i, p in enumerate(base_paths)}  # type: ignore[misc]
        for doc in extra:
            self._count(doc.lengths, +1)
        self.overlay = {}
        self.overlay_postings = {}
        self._norm_cache = None

    def load_base(self, terms: list[str], offsets: np.ndarray, slots: np.ndarray, tfs: np.ndarray,
                  base_paths: list[str | None], base_lengths: np.ndarray) -> None:
        """Install a persisted base (slots whose path is None are dead)."""
        self.terms = terms
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.offsets, self.slots, self.tfs = offsets, slots, tfs
        self.base_paths = base_paths
        self.base_lengths = base_lengths
        self.alive = np.array([p is not None for p in base_paths], dtype=bool)
        self.dead = int(len(base_paths) - self.alive.sum())
        self.slot_of = {p: i for i, p in enumerate(base_paths) if p is not None}
        live_totals = base_lengths[self.alive].sum(axis=0) if len(base_paths) else np.zeros(3, dtype=np.int64)
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

    def _base_postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.vocab.get(term)
        if tid is None:
            return self.slots[:0], self.tfs[:0]
        start, end = int(self.offsets[tid]), int(self.offsets[tid + 1])
        slots, tfs = self.slots[start:end], self.tfs[start:end]
        if self.dead:
            live = self.alive[slots]
            slots, tfs = slots[live], tfs[live]
        return slots, tfs

    def rank(self, query_tokens: list[str], limit: int | None = None) -> list[RankedDoc]:
        """Documents with a positive score, best first: score desc, matched terms desc, path asc."""
        n_docs = len(self)
        query_tf = Counter(query_tokens)
        if not n_docs or not query_tf:
            return []
        avg = self.avg_length()
        base_norm = self._base_norms(avg)
        acc = np.zeros(len(self.alive), dtype=np.float64)
        matched = np.zeros(len(self.alive), dtype=np.int32)
        over: dict[str, list[float]] = {}
        k1 = self.k1
        for term in sorted(query_tf):
            slots, tfs = self._base_postings(term)
            over_postings = self.overlay_postings.get(term, {})
            df = len(slots) + len(over_postings)
            if not df:
                continue
            weight = query_tf[term] * idf(n_docs, df)
            if len(slots):
                acc[slots] += _contribution(weight, tfs, base_norm[slots], k1)
                matched[slots] += 1
            if over_postings:
                paths = list(over_postings)
                o_tf = np.array([over_postings[p] for p in paths], dtype=np.float64)
                o_len = np.array([self.overlay[p].lengths for p in paths], dtype=np.float64)
                contrib = _contribution(weight, o_tf, self._norms(o_len, avg), k1)
                for path, value in zip(paths, contrib.tolist()):
                    entry = over.setdefault(path, [0.0, 0])
                    entry[0] += value
                    entry[1] += 1
        candidates: list[tuple[float, int, str, int]] = []
        hit_slots = np.flatnonzero(acc > 0)
        if limit is not None and len(hit_slots) > limit:
            kth = np.partition(acc[hit_slots], len(hit_slots) - limit)[len(hit_slots) - limit]
            hit_slots = hit_slots[acc[hit_slots] >= kth]
        for slot, score, count in zip(hit_slots.tolist(), acc[hit_slots].tolist(), matched[hit_slots].tolist()):
            candidates.append((-score, -count, self.base_paths[slot], slot))  # type: ignore[arg-type]
        for path, (score, count) in over.items():
            if score > 0:
                candidates.append((-score, -int(count), path, -1))
        candidates.sort()
        if limit is not None:
            candidates = candidates[:limit]
        terms = sorted(query_tf)
        return [RankedDoc(path, -neg_score, self._matched_terms(path, slot, terms))
                for neg_score, _count, path, slot in candidates]

    def _matched_terms(self, path: str, slot: int, terms: list[str]) -> tuple[str, ...]:
        if slot < 0:
            tf = self.overlay[path].tf
            return tuple(t for t in terms if t in tf)
        found: list[str] = []
        for term in terms:
            tid = self.vocab.get(term)
            if tid is None:
                continue
            start, end = int(self.offsets[tid]), int(self.offsets[tid + 1])
            pos = start + int(np.searchsorted(self.slots[start:end], slot))
            if pos < end and int(self.slots[pos]) == slot:
                found.append(term)
        return tuple(found)

