"""A note's way into the postings index (spec §3.2): its weighted term frequencies (`DocTerms`) and the
batches (`DocBatch`) a sync or a full build hands to `PostingsIndex`."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nlmsync.search.bm25 import Weights

if TYPE_CHECKING:
    from nlmsync.search.markdown import NoteFields, NoteText
    from nlmsync.search.staged_terms import StagedTerms, TermIds


@dataclass(frozen=True)
class DocTerms:
    """One document ready for the index: weighted tf per term and its field lengths (token counts)."""

    path: str
    tf: dict[str, float]
    lengths: tuple[int, int, int]


def doc_terms(path: str, fields: NoteFields, weights: Weights) -> DocTerms:
    """Weighted term frequencies (`tf_w` of §3.2) of one note's fields; terms weighing 0 are left out. The
    file name's tokens weigh `Weights.name_weight`: at full weight each, `dnf-deplist.md` outranked the page
    about `dnf` for a query about `dnf`, for holding it in its file name.

    Summed field by field, body + heading + file name + folder, always in that order (so always the same float).
    """
    tf: dict[str, float] = {term: weights.body * count for term, count in fields.body.items()}
    get = tf.get
    for term, count in fields.heading.items():
        tf[term] = get(term, 0.0) + weights.heading * count
    name_weight = weights.name_weight(fields.name_words)
    for term, count in fields.path.items():
        tf[term] = get(term, 0.0) + name_weight * count
    for term, count in fields.folder.items():
        tf[term] = get(term, 0.0) + weights.folder * count
    if not (weights.body and weights.heading and weights.path and weights.folder):
        tf = {term: value for term, value in tf.items() if value > 0}
    return DocTerms(path, tf, fields.lengths)


class DocBatch:
    """Documents on their way into the index. Kept whole while few (they may go to the overlay);
    past `limit` they are packed into flat arrays with a batch-local vocabulary (`staged_terms.TermIds`: a
    term's id is its position in it), which keeps a full build of a large vault small in memory.

    A note given by its texts (`add_text`) or its fields (`add_note`) once the batch is packed is staged
    (`staged_terms.StagedTerms`: no weighted dict made for it); whenever `StagedTerms.full`, and
    in `pack_all`, the staged notes are counted and weighed for all of them at once with numpy, in the order
    and with the floats `doc_terms` has."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.docs: list[DocTerms] = []
        self.packed = False
        self._vocabulary: TermIds | None = None  # made once something is packed (it needs numpy)
        self.term_ids = array("i")
        self.tfs = array("d")
        self.sizes = array("q")
        self.packed_paths: list[str] = []
        self.packed_lengths = array("q")
        self._staged: StagedTerms | None = None
        self._staged_weights: Weights | None = None

    def __len__(self) -> int:
        return len(self.docs) + len(self.packed_paths)

    @property
    def vocabulary(self) -> TermIds:
        if self._vocabulary is None:
            # here: a process that reads no note (a fresh search of an unchanged vault) imports no numpy
            from nlmsync.search.staged_terms import TermIds

            self._vocabulary = TermIds()
        return self._vocabulary

    @property
    def vocab(self) -> dict[str, int]:
        """The packed terms' ids by term."""
        return self.vocabulary.ids

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
        """Add a note by its fields: `add(doc_terms(...))`, staged once the batch is packed."""
        if not self._stages(weights):
            self.add(doc_terms(path, fields, weights))
            return
        self._staged.add_counts(fields)  # type: ignore[union-attr]
        self._staged_note(path)

    def add_text(self, path: str, text: NoteText, weights: Weights) -> None:
        """Add a note by its texts (`markdown.whole_fields`): `add_note(path, markdown.text_fields(...))`,
        staged as tokens once the batch is packed."""
        if not self._stages(weights):
            # imported here: only the few notes before the batch is packed need it
            from nlmsync.search.markdown import text_fields

            self.add(doc_terms(path, text_fields(path, text), weights))
            return
        self._staged.add_text(path, text.heading, text.body)  # type: ignore[union-attr]
        self._staged_note(path)

    def _stages(self, weights: Weights) -> bool:
        if not self.packed or self._staged_weights not in (None, weights):
            return False
        if self._staged is None:
            from nlmsync.search.staged_terms import StagedTerms

            self._staged = StagedTerms(self.vocabulary)
        self._staged_weights = weights
        return True

    def _staged_note(self, path: str) -> None:
        self.packed_paths.append(path)
        if self._staged.full:  # type: ignore[union-attr]
            self._fold_staged()

    def _fold_staged(self) -> None:
        """The staged notes' weighted term frequencies and lengths appended as packed entries."""
        weights = self._staged_weights
        if weights is None or self._staged is None:
            return
        import numpy as np

        folded = self._staged.fold(weights)
        self.term_ids.frombytes(folded.term_ids.tobytes())
        self.tfs.frombytes(folded.tfs.tobytes())
        self.sizes.frombytes(folded.sizes.astype(np.int64).tobytes())
        self.packed_lengths.frombytes(folded.lengths.astype(np.int64).tobytes())
        self._staged_weights = None

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
        self._vocabulary = None
        self._staged = None
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
        import numpy as np

        self._fold_staged()  # the staged notes come before this one
        self.term_ids.frombytes(self.vocabulary.lookup(list(doc.tf)).astype(np.int32).tobytes())
        self.tfs.extend(doc.tf.values())
        self.sizes.append(len(doc.tf))
        self.packed_paths.append(doc.path)
        self.packed_lengths.extend(doc.lengths)
