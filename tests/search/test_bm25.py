"""BM25 primitives and the selection rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nlmsync.search.bm25 import idf, rank_texts, select


@dataclass
class Hit:
    path: str
    score: float


def hits(*scores: float) -> list[Hit]:
    return [Hit(f"n{i}.md", s) for i, s in enumerate(scores)]


def test_idf_is_positive_even_for_a_term_in_every_document() -> None:
    assert idf(10, 10) > 0
    assert idf(10, 1) > idf(10, 5)


def test_rank_texts_prefers_more_occurrences_and_shorter_docs() -> None:
    docs = [["heap", "sort"], ["heap", "heap", "sort"], ["quick", "sort", "pivot", "partition", "heap"], ["pie"]]
    scores = rank_texts(["heap"], docs)
    assert scores[3] == 0
    assert scores[1] > scores[0] > scores[2] > 0


def test_rank_texts_query_term_frequency_multiplies() -> None:
    docs = [["a", "b"], ["b", "c"]]
    once = rank_texts(["a"], docs)[0]
    twice = rank_texts(["a", "a"], docs)[0]
    assert twice == pytest.approx(2 * once)


def test_select_keeps_scores_above_cutoff() -> None:
    chosen = select(hits(10, 9, 4.0, 3.99, 1), top_n=15, cutoff_ratio=0.4, min_k=2)
    assert [h.score for h in chosen] == [10, 9, 4.0]


def test_select_min_k_fallback() -> None:
    chosen = select(hits(10, 1, 0.5, 0.1), top_n=15, cutoff_ratio=0.4, min_k=3)
    assert [h.score for h in chosen] == [10, 1, 0.5]


def test_select_top_n_bounds_everything() -> None:
    assert len(select(hits(5, 5, 5, 5, 5), top_n=3, cutoff_ratio=0.4, min_k=4)) == 3
    assert len(select(hits(5, 5, 5, 5, 5), top_n=2, cutoff_ratio=0.0, min_k=0)) == 2


def test_select_empty() -> None:
    assert select([], top_n=15, cutoff_ratio=0.4, min_k=3) == []
