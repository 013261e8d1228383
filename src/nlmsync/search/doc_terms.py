"""A note's way into the postings index (spec §3.2): the field weights, its weighted term frequencies
(`DocTerms`) and the batches (`DocBatch`) a sync or a full build hands to `PostingsIndex`."""

from __future__ import annotations

import itertools
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

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


FOLD_ENTRIES = 1 << 17  # staged (note, field, term) entries folded at once: numpy's temporaries stay ~10 MB


class DocBatch:
    """Documents on their way into the index. Kept whole while few (they may go to the overlay);
    past `limit` they are packed into flat arrays with a batch-local vocabulary, which keeps a full
    build of a large vault small in memory.

    A packed term's id is unique but not dense: the number of (document, term) entries packed before its
    first one (`dict.setdefault` over a running count, so packing runs no Python code per term).

    A note given by its fields (`add_note`) once the batch is packed is staged field by field (term ids
    and counts, no weighted dict made for it); `pack_all` then weighs and sums its fields for all staged
    notes at once with numpy (every `FOLD_ENTRIES` entries), in the order and with the floats `doc_terms` has."""

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
        # notes staged by `add_note`: every field's term ids and counts, and per note its four field sizes
        self._staged_weights: Weights | None = None
        self._staged_ids = array("i")
        self._staged_counts = array("q")
        self._staged_sizes = array("q")

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

    def add_note(self, path: str, fields: NoteFields, weights: Weights) -> None:
        """Add a note by its fields: `add(doc_terms(...))`, staged field by field once the batch is packed."""
        if not self.packed or self._staged_weights not in (None, weights):
            self.add(doc_terms(path, fields, weights))
            return
        self._staged_weights = weights
        setdefault, entry_count, counts = self.vocab.setdefault, self._entry_count, self._staged_counts
        for field in (fields.body, fields.heading, fields.path, fields.folder):
            self._staged_ids.extend(map(setdefault, field, entry_count))
            counts.extend(field.values())
        self._staged_sizes.extend((len(fields.body), len(fields.heading), len(fields.path), len(fields.folder)))
        self.packed_paths.append(path)
        self.packed_lengths.extend(fields.lengths)
        if len(self._staged_ids) >= FOLD_ENTRIES:
            self._fold_staged()

    def _fold_staged(self) -> None:
        """The staged notes' weighted term frequencies appended as packed entries: per (note, term) the
        weighted counts of body, heading, file name and folder added in that order, as `doc_terms` does."""
        weights = self._staged_weights
        if weights is None:
            return
        import numpy as np  # here: a process that reads no note (a fresh search of an unchanged vault) needs none

        ids = np.frombuffer(self._staged_ids, dtype=np.int32).astype(np.int64)
        field_sizes = np.frombuffer(self._staged_sizes, dtype=np.int64)
        n_notes = len(field_sizes) // 4
        field_of = np.repeat(np.tile(np.arange(4), n_notes), field_sizes)
        values = np.frombuffer(self._staged_counts, dtype=np.int64).astype(np.float64) * np.array(
            [weights.body, weights.heading, weights.path, weights.folder])[field_of]
        stride = int(ids.max()) + 1 if len(ids) else 1
        note_of = np.repeat(np.arange(n_notes, dtype=np.int64), field_sizes.reshape(-1, 4).sum(axis=1))
        keys, entry_of = np.unique(note_of * stride + ids, return_inverse=True)
        tf = np.zeros(len(keys))
        for field in range(4):  # one entry per (note, term) and field: the fields add up in order
            in_field = field_of == field
            tf[entry_of[in_field]] += values[in_field]
        if not (weights.body and weights.heading and weights.path and weights.folder):
            keys, tf = keys[tf > 0], tf[tf > 0]
        self.term_ids.frombytes((keys % stride).astype(np.int32).tobytes())
        self.tfs.frombytes(tf.tobytes())
        self.sizes.frombytes(np.bincount(keys // stride, minlength=n_notes).astype(np.int64).tobytes())
        self._staged_weights = None
        self._staged_ids, self._staged_counts, self._staged_sizes = array("i"), array("q"), array("q")

    def totals(self) -> tuple[int, int, int]:
        import numpy as np

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
        self._fold_staged()

    def _pack(self, doc: DocTerms) -> None:
        self._fold_staged()  # the staged notes come before this one
        self.term_ids.extend(map(self.vocab.setdefault, doc.tf, self._entry_count))
        self.tfs.extend(doc.tf.values())
        self.sizes.append(len(doc.tf))
        self.packed_paths.append(doc.path)
        self.packed_lengths.extend(doc.lengths)
