"""BM25: the one formula every score in nlmsync computes, and the one way its contributions are added up — for the
note index (warm, its base postings merged in numpy; cold, a fresh process's few postings in plain Python:
`search.scoring`), a note's chunks, snippets and the fake server's answers (`rank_counts`).

`length_norm` and `contribution` are written with arithmetic operators only, so the same function takes
floats or numpy arrays and gives, element by element, the very same float: a note scores bit for bit the same
whichever path ranks it. A document's score adds its terms' contributions in term order starting from 0.0
(`add_up`, or `np.bincount` over the same contributions in the same order).

The parameters' defaults are the settings' (`config.IndexSettings`: k1, b and the field weights of notes) and,
for passages, `config.PASSAGE_K1` and `config.PASSAGE_B`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from nlmsync.config import PASSAGE_B, PASSAGE_K1, IndexSettings

if TYPE_CHECKING:
    import numpy as np

# a float, or a numpy array of them (numpy is never imported here: the cold path runs without it)
Num = TypeVar("Num", float, "np.ndarray")
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Weights:
    """The field weights: a term's weighted frequency and a note's weighted length add its fields' counts times
    these."""

    body: float = IndexSettings.weight_body
    heading: float = IndexSettings.weight_heading
    path: float = IndexSettings.weight_path  # the file name's, shared by its words (`name_weight`)
    folder: float = IndexSettings.weight_folder  # the folder's tokens (in lengths, they count as path tokens)

    def name_weight(self, name_words: int) -> float:
        """The weight of each token of a file name of `name_words` words: `path` shared among the words. A
        file name names the note; a word that is one of several in it names the note only in part."""
        return self.path / max(name_words, 1)

    def length(self, body: Num, heading: Num, path: Num) -> Num:
        """A note's weighted length from its fields' token counts (body, heading, path)."""
        return self.body * body + self.heading * heading + self.path * path


@dataclass(frozen=True)
class Params:
    """What a note's score is computed with beside the query: the field weights, and BM25's `k1` and `b`."""

    weights: Weights
    k1: float
    b: float


def idf(doc_count: int, doc_freq: int) -> float:
    """BM25 inverse document frequency, always positive: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5))


def length_norm(length: Num, avg_length: float, k1: float, b: float) -> Num:
    """The length normalization of a document of (weighted) `length`: k1 * (1 - b + b * length / avg_length).
    `avg_length` must be positive."""
    return k1 * (1.0 - b + b * (length / avg_length))


def contribution(weight: float | Num, tf: Num, norm: Num, k1: float) -> Num:
    """A term's BM25 contribution to a document holding it `tf` times (a weighted frequency), `norm` being the
    document's `length_norm`: weight * tf * (k1 + 1) / (tf + norm), `weight` the term's idf times its weight
    in the query."""
    value: Num = weight * (tf * (k1 + 1.0)) / (tf + norm)
    return value


# A term's contributions: the documents holding it, and its contribution to each
Contributions = tuple[Sequence[K], Sequence[float]]


def add_up(contributions: Iterable[Contributions[K]]) -> dict[K, float]:
    """Each document's score: the contributions of its terms (the terms in order) added in that order, from 0.0."""
    scores: dict[K, float] = {}
    get = scores.get
    for docs, values in contributions:
        for doc, value in zip(docs, values):
            scores[doc] = get(doc, 0.0) + value
    return scores


def rank_counts(query: Mapping[str, float], counts: Sequence[Mapping[str, float]], lengths: Sequence[float], *,
                doc_count: int, avg_len: float, k1: float = PASSAGE_K1, b: float = PASSAGE_B,
                doc_freqs: Mapping[str, int] | None = None) -> list[float]:
    """The BM25 score of each document given by its term counts (weighted or not) and its length, out of a
    collection of `doc_count` documents of average length `avg_len` in which the documents not given hold no query
    term. `query` maps each term to its weight (how often the query has it), which multiplies its contribution.

    A term's IDF counts the documents holding it among those given, or its `doc_freqs` when the IDF is taken over
    another collection than the one scored. A length of 0 is taken when the average is 0."""
    norms = [length_norm(length, avg_len, k1, b) if avg_len > 0 else length_norm(0.0, 1.0, k1, b)
             for length in lengths]
    by_term: list[Contributions[int]] = []
    for term, query_weight in query.items():
        held = [(i, doc[term]) for i, doc in enumerate(counts) if term in doc]
        df = doc_freqs.get(term, 0) if doc_freqs is not None else len(held)
        if df:
            weight = query_weight * idf(doc_count, df)
            held = [(i, tf) for i, tf in held if tf > 0]
            by_term.append(([i for i, _tf in held], [contribution(weight, tf, norms[i], k1) for i, tf in held]))
    scores = add_up(by_term)
    return [scores.get(i, 0.0) for i in range(len(counts))]


def rank_texts(query_tokens: Sequence[str], docs: Sequence[Sequence[str]], *, k1: float = PASSAGE_K1,
               b: float = PASSAGE_B) -> list[float]:
    """`rank_counts` of a small collection of token lists against `query_tokens` (each counted as often as the
    query has it)."""
    if not docs:
        return []
    return rank_counts(Counter(query_tokens), [Counter(d) for d in docs], [len(d) for d in docs],
                       doc_count=len(docs), avg_len=sum(len(d) for d in docs) / len(docs), k1=k1, b=b)
