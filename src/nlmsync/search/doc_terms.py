"""A note's way into the postings index, its fields weighed: the batches (`DocBatch`) a sync or a full build hands to
`PostingsIndex`, and one document as the index's overlay holds it (`DocTerms`).

There is one way a note becomes weighted term frequencies: it is staged (`staged_terms.StagedTerms`, by its
field texts or, for a note only the line walk reads, by its fields' token counts) and weighed with the others
staged beside it by one numpy fold (`StagedTerms.fold`); one note alone is a fold of one.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nlmsync.search.bm25 import Weights

if TYPE_CHECKING:
    import numpy as np

    from nlmsync.search.markdown import NoteFields, NoteText
    from nlmsync.search.staged_terms import StagedTerms, TermIds


@dataclass(frozen=True)
class DocTerms:
    """One document ready for the index: weighted tf per term and its field lengths (token counts)."""

    path: str
    tf: dict[str, float]
    lengths: tuple[int, int, int]


class DocBatch:
    """Notes on their way into the index, in the order they come, kept packed: flat arrays of (term id, weighted
    tf) per note over a batch-local vocabulary (`staged_terms.TermIds`: a term's id is its position in it), which
    keeps a full build of a large vault small in memory.

    A note given by its texts (`add_text`) or its fields' counts (`add_counts`) is staged, and weighed with the
    notes staged beside it whenever `StagedTerms.full`, before a document given already weighed (`add`: one the
    index held), and in `pack_all`. Up to `limit` notes, the index takes the batch into its overlay (`docs`:
    one `DocTerms` a note); past it the batch is `packed`, and the index merges it into a new base."""

    def __init__(self, limit: int, weights: Weights | None = None) -> None:
        self.limit = limit
        self.weights = weights if weights is not None else Weights()
        self._vocabulary: TermIds | None = None  # made once something is packed (it needs numpy)
        self.term_ids = array("i")
        self.tfs = array("d")
        self.sizes = array("q")
        self.packed_paths: list[str] = []
        self.packed_lengths = array("q")
        self._staged: StagedTerms | None = None
        self._staged_paths: list[str] = []
        self._docs: list[DocTerms] | None = None

    def __len__(self) -> int:
        return len(self.packed_paths) + len(self._staged_paths)

    @property
    def packed(self) -> bool:
        """Past `limit` notes: the batch goes into the index by a merge, not through its overlay."""
        return len(self) > self.limit

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
        return self.packed_paths + self._staged_paths

    def add(self, doc: DocTerms) -> None:
        """Pack a document already weighed, after the notes staged before it."""
        import numpy as np

        self._fold_staged()
        self.term_ids.frombytes(self.vocabulary.lookup(list(doc.tf)).astype(np.int32).tobytes())
        self.tfs.extend(doc.tf.values())
        self.sizes.append(len(doc.tf))
        self.packed_paths.append(doc.path)
        self.packed_lengths.extend(doc.lengths)
        self._docs = None

    def add_text(self, path: str, text: NoteText) -> None:
        """Stage a note by its texts (`markdown.whole_fields`)."""
        self._stage().add_text(path, text.heading, text.body)
        self._staged_note(path)

    def add_counts(self, path: str, fields: NoteFields) -> None:
        """Stage a note by its fields' token counts (`markdown.note_fields`: a note only the line walk reads)."""
        self._stage().add_counts(fields)
        self._staged_note(path)

    def _stage(self) -> StagedTerms:
        if self._staged is None:
            from nlmsync.search.staged_terms import StagedTerms

            self._staged = StagedTerms(self.vocabulary)
        return self._staged

    def _staged_note(self, path: str) -> None:
        self._staged_paths.append(path)
        self._docs = None
        if self._staged is not None and self._staged.full:
            self._fold_staged()

    def _fold_staged(self) -> None:
        """The staged notes' weighted term frequencies and lengths appended as packed entries."""
        if self._staged is None or not self._staged_paths:
            return
        import numpy as np

        folded = self._staged.fold(self.weights)
        self.term_ids.frombytes(folded.term_ids.tobytes())
        self.tfs.frombytes(folded.tfs.tobytes())
        self.sizes.frombytes(folded.sizes.astype(np.int64).tobytes())
        self.packed_lengths.frombytes(folded.lengths.astype(np.int64).tobytes())
        self.packed_paths += self._staged_paths
        self._staged_paths = []

    @property
    def docs(self) -> list[DocTerms]:
        """Every note of the batch as one `DocTerms`, in order (what the index's overlay holds)."""
        if self._docs is None:
            self.pack_all()
            terms = self.vocabulary.terms
            tfs = self.tfs.tolist()
            lengths = self.packed_lengths.tolist()
            docs = []
            start = 0
            for i, (path, size) in enumerate(zip(self.packed_paths, self.sizes)):
                end = start + size
                held = [terms[term_id] for term_id in self.term_ids[start:end]]
                docs.append(DocTerms(path, dict(zip(held, tfs[start:end])),
                                     (lengths[3 * i], lengths[3 * i + 1], lengths[3 * i + 2])))
                start = end
            self._docs = docs
        return self._docs

    def totals(self) -> tuple[int, int, int]:
        """The body, heading and path lengths of all the batch's notes, added up."""
        import numpy as np

        self.pack_all()
        packed: np.ndarray = np.frombuffer(self.packed_lengths, dtype=np.int64).reshape(-1, 3).sum(axis=0) \
            if self.packed_paths else np.zeros(3, dtype=np.int64)
        return (int(packed[0]), int(packed[1]), int(packed[2]))

    def release(self) -> None:
        """Drop the packed documents once they are in the index (a full build's biggest buffers)."""
        self._vocabulary = None
        self._staged = None
        self._docs = None
        self.term_ids = array("i")
        self.tfs = array("d")
        self.sizes = array("q")
        self.packed_lengths = array("q")

    def pack_all(self) -> None:
        """Weigh every note staged so far."""
        self._fold_staged()
