"""BM25 primitives."""

from __future__ import annotations

import pytest

from nlmsync.search.bm25 import idf, rank_texts


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
