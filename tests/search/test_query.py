"""Query terms (spec §3.3 step 1): stop words left out, compound tokens at a quarter weight."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from nlmsync.config import Settings
from nlmsync.search.index import NoteIndex
from nlmsync.search.query import COMPOUND_QUERY_WEIGHT, query_terms, query_weights
from nlmsync.search.tokenize import tokenize


def test_stop_words_are_left_out_and_compounds_weigh_a_quarter() -> None:
    weights = query_weights("What is the heap sort of a list?")
    assert weights == {"heap": 1.0, "sort": 1.0, "list": 1.0, "heapsort": COMPOUND_QUERY_WEIGHT}


def test_no_compound_bridges_a_removed_stop_word() -> None:
    weights = query_weights("models of heated aircraft")
    assert "modelsheated" not in weights and "modelsof" not in weights and "ofheated" not in weights
    assert weights["heatedaircraft"] == COMPOUND_QUERY_WEIGHT


def test_a_query_of_stop_words_only_keeps_them_all() -> None:
    assert query_weights("the who") == {"the": 1.0, "who": 1.0, "thewho": COMPOUND_QUERY_WEIGHT}
    assert query_terms("what is the")[:3] == ["what", "is", "the"]


def test_without_stop_words_every_token_of_the_tokenizer_is_a_term() -> None:
    text = "What is the heap sort of 김치찌개 and ヒープソート?"
    weights = query_weights(text, stop_words=False)
    assert set(weights) == set(tokenize(text))
    assert weights["the"] == 1.0 and weights["heapsort"] == COMPOUND_QUERY_WEIGHT and weights["김치"] == 1.0


def test_repeated_terms_add_up() -> None:
    assert query_weights("sort sort heap")["sort"] == 2.0


def _vault(tmp_path: Path) -> Path:
    (tmp_path / "function-words.md").write_text("The theory of the thing is the one of the many. " * 5)
    (tmp_path / "wing.md").write_text("A wing in a slipstream.\n")
    (tmp_path / "heapsort.md").write_text("Heapsort sorts in place.\n")
    (tmp_path / "heap.md").write_text("A heap is a tree.\n")
    return tmp_path


def test_search_ranks_by_content_words_unless_stop_words_are_switched_off(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with_stops = NoteIndex(vault, None, Settings(vault=vault)).search("what is the wing of the")
    assert [hit.path for hit in with_stops] == ["wing.md"]
    plain = NoteIndex(vault, None, Settings(vault=vault, query_stop_words=False)).search("what is the wing of the")
    assert {hit.path for hit in plain} >= {"wing.md", "function-words.md"}


def test_split_query_still_finds_the_joined_spelling(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    hits = NoteIndex(vault, None, Settings(vault=vault)).search("heap sort")
    assert {hit.path for hit in hits} == {"heapsort.md", "heap.md"}
    assert next(h for h in hits if h.path == "heapsort.md").matched_terms == ("heapsort",)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200) | st.lists(
    st.sampled_from(["the", "What", "heap", "sort", "of", "x" * 40, "y" * 41, "z" * 81, " ", "-", "?"]), max_size=30).map(
    "".join))
def test_ascii_queries_get_the_terms_of_the_general_path(text: str) -> None:
    # U+00B7 is no letter or digit and NFKC keeps it: the same query, not ASCII, so down the general path
    for stop_words in (True, False):
        assert list(query_weights(text, stop_words=stop_words).items()) == list(
            query_weights(text + " \u00b7", stop_words=stop_words).items())
    assert query_terms(text) == query_terms(text + " \u00b7")
