"""BM25 (spec §3.2-3.3): the one formula every ranking in nlmsync computes — the note index's (warm, its
postings merged in numpy; cold, a fresh process's few postings in plain Python), snippets, chunk search and
the fake server's answers.

`length_norm` and `contribution` are written with arithmetic operators only, so the same function takes
floats or numpy arrays and gives, element by element, the very same float: a note scores bit for bit the same
whichever path ranks it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75

# a float, or a numpy array of them (numpy is never imported here: the cold path runs without it)
Num = TypeVar("Num", float, "np.ndarray")


@dataclass(frozen=True)
class Weights:
    """The field weights of §3.2: a term's weighted frequency and a note's weighted length add its fields'
    counts times these."""

    body: float = 1.0
    heading: float = 2.5
    path: float = 4.0  # the file name's, shared by its words (`name_weight`)
    folder: float = 1.0  # the folder's tokens (in lengths, they count as path tokens)

    def name_weight(self, name_words: int) -> float:
        """The weight of each token of a file name of `name_words` words: `path` shared among the words. A
        file name names the note; a word that is one of several in it names the note only in part."""
        return self.path / max(name_words, 1)

    def length(self, body: Num, heading: Num, path: Num) -> Num:
        """A note's weighted length from its fields' token counts (body, heading, path)."""
        return self.body * body + self.heading * heading + self.path * path


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


def term_score(tf: float, doc_len: float, avg_len: float, term_idf: float, k1: float, b: float) -> float:
    """One term's BM25 contribution for a (possibly weighted) term frequency; 0 for a term not held, and a
    length of 0 when the collection's average is 0."""
    if tf <= 0:
        return 0.0
    norm = length_norm(doc_len, avg_len, k1, b) if avg_len > 0 else length_norm(0.0, 1.0, k1, b)
    return contribution(term_idf, tf, norm, k1)


def rank_texts(query_tokens: Sequence[str], docs: Sequence[Sequence[str]], *, k1: float = DEFAULT_K1,
               b: float = DEFAULT_B) -> list[float]:
    """BM25 score of each token list in `docs` against `query_tokens` (a small, in-memory collection).

    Query term frequency multiplies each term's contribution, as in the note index.
    """
    if not docs:
        return []
    return rank_counts(query_tokens, [Counter(d) for d in docs], [len(d) for d in docs], doc_count=len(docs),
                       avg_len=sum(len(d) for d in docs) / len(docs), k1=k1, b=b)


def rank_counts(query_tokens: Sequence[str], counts: Sequence[Mapping[str, int]], lengths: Sequence[int], *,
                doc_count: int, avg_len: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> list[float]:
    """`rank_texts` of documents given as token counts and lengths (tokens), out of a collection of
    `doc_count` documents of average length `avg_len` in which the documents not given hold no query
    token: the same scores, without the tokens of every document at hand."""
    query_tf = Counter(query_tokens)
    doc_freq = {t: sum(1 for c in counts if t in c) for t in query_tf}
    scores: list[float] = []
    for counter, length in zip(counts, lengths):
        total = 0.0
        for term, qtf in query_tf.items():
            df = doc_freq[term]
            if df:
                total += qtf * term_score(counter.get(term, 0), length, avg_len, idf(doc_count, df), k1, b)
        scores.append(total)
    return scores


class Scored(Protocol):
    @property
    def score(self) -> float: ...


H = TypeVar("H", bound=Scored)


def select(hits: Sequence[H], top_n: int, cutoff_ratio: float, min_k: int) -> list[H]:
    """The selection rule (§3.3) over hits already ranked best first.

    Keep the first `top_n`; of those, the ones scoring at least `top score * cutoff_ratio`;
    if fewer than `min_k` survive, the first `min_k` of the top results instead.
    """
    top = list(hits[:top_n])
    if not top:
        return []
    threshold = top[0].score * cutoff_ratio
    chosen = [hit for hit in top if hit.score >= threshold]
    if len(chosen) < min_k:
        return top[:min_k]
    return chosen
