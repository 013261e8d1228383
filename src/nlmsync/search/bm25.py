"""BM25 scoring primitives (spec §3.2-3.3) shared by note search, snippets, chunk search and the fake server."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def idf(doc_count: int, doc_freq: int) -> float:
    """BM25 inverse document frequency, always positive: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5))


def term_score(tf: float, doc_len: float, avg_len: float, term_idf: float, k1: float, b: float) -> float:
    """One term's BM25 contribution for a (possibly weighted) term frequency."""
    if tf <= 0:
        return 0.0
    norm = k1 * (1.0 - b + b * (doc_len / avg_len if avg_len > 0 else 0.0))
    return term_idf * (tf * (k1 + 1.0)) / (tf + norm)


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
