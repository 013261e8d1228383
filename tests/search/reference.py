"""The field-weighted term frequencies of one note, stated plainly (kept here, not in `src`): what the index's
numpy fold (`staged_terms`) must give every note, to the float."""

from __future__ import annotations

from nlmsync.search.bm25 import Weights
from nlmsync.search.doc_terms import DocTerms
from nlmsync.search.markdown import NoteFields


def reference_doc_terms(path: str, fields: NoteFields, weights: Weights) -> DocTerms:
    """A term's weighted frequency adds its fields' counts times their weights, body + heading + file name +
    folder in that order; the file name's weight is shared by its words; terms weighing 0 are left out."""
    tf: dict[str, float] = {term: weights.body * count for term, count in fields.body.items()}
    for term, count in fields.heading.items():
        tf[term] = tf.get(term, 0.0) + weights.heading * count
    name_weight = weights.name_weight(fields.name_words)
    for term, count in fields.path.items():
        tf[term] = tf.get(term, 0.0) + name_weight * count
    for term, count in fields.folder.items():
        tf[term] = tf.get(term, 0.0) + weights.folder * count
    if not (weights.body and weights.heading and weights.path and weights.folder):
        tf = {term: value for term, value in tf.items() if value > 0}
    return DocTerms(path, tf, fields.lengths)
