"""Query terms: stop words and compound tokens at a quarter weight, negations kept,
a CJK word counted once whatever its bigrams."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlmsync.config import Settings
from nlmsync.search.index import NoteIndex
from nlmsync.search.query import (
    CJK_WORD_SHARE,
    COMPOUND_QUERY_WEIGHT,
    LATIN_IN_CJK_WEIGHT,
    STOP_WORD_WEIGHT,
    matched_words,
    query_terms,
    query_weights,
)
from nlmsync.search.tokenize import tokenize


def test_stop_words_and_compounds_weigh_a_quarter() -> None:
    weights = query_weights("What is the heap sort?")
    stop_compound = COMPOUND_QUERY_WEIGHT * STOP_WORD_WEIGHT
    assert weights == {"what": STOP_WORD_WEIGHT, "is": STOP_WORD_WEIGHT, "the": STOP_WORD_WEIGHT, "heap": 1.0,
                       "sort": 1.0, "whatis": stop_compound, "isthe": stop_compound, "theheap": stop_compound,
                       "heapsort": COMPOUND_QUERY_WEIGHT}
    assert 0 < STOP_WORD_WEIGHT < 1


def test_query_compounds_follow_the_separator_rule() -> None:
    """Rule 4 as the notes get it: no compound across a comma or a colon, one across a hyphen or a full stop."""
    assert "heapsort" not in query_weights("heap, sort") and "heapsort" not in query_terms("heap: sort")
    assert query_weights("heap-sort")["heapsort"] == COMPOUND_QUERY_WEIGHT
    assert "nodejs" in query_terms("node.js")


def test_a_stop_word_still_forms_its_compounds(tmp_path: Path) -> None:
    assert query_weights("set up the backup")["setup"] == COMPOUND_QUERY_WEIGHT * STOP_WORD_WEIGHT
    (tmp_path / "auth.md").write_text("The login page asks for a password.\n")
    (tmp_path / "aaa.md").write_text("The shell page asks for a password.\n")
    assert NoteIndex(tmp_path, None).search("log in page password")[0].path == "auth.md"


def test_a_negation_is_kept_in_full() -> None:
    weights = query_weights("Do not compress the output, don't wait")
    assert weights["not"] == weights["don"] == weights["compress"] == 1.0
    assert "not" in query_terms("Do not compress the output")


def test_a_cjk_word_counts_once_whatever_its_bigrams() -> None:
    assert query_weights("공식") == {"공식": 1.0}  # a two-character word is its only bigram: once, not twice
    weights = query_weights("김치찌개")
    assert weights["김치찌개"] == CJK_WORD_SHARE
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights["김치"] == weights["치찌"] == weights["찌개"] == (1 - CJK_WORD_SHARE) / 3
    mixed = query_weights("Amazon EKS의 공식 CLI")
    assert mixed == {"amazon": 1.0, "eks의": 1.0, "eks": LATIN_IN_CJK_WEIGHT, "공식": 1.0, "cli": 1.0}


def test_a_note_matching_every_word_beats_one_matching_the_cjk_word(tmp_path: Path) -> None:
    (tmp_path / "eks.md").write_text("Amazon `EKS`의 CLI 공식 문서입니다.\n")
    (tmp_path / "other.md").write_text("공식 안내 공식 공지\n")
    for name in ("s3", "ec2", "iam", "rds"):  # Amazon and CLI are common words here, 공식 is not
        (tmp_path / f"{name}.md").write_text(f"Amazon {name} CLI 도구\n")
    hits = NoteIndex(tmp_path, None).search("Amazon EKS의 공식 CLI")
    assert hits[0].path == "eks.md"


def test_a_negation_picks_the_note_that_says_it(tmp_path: Path) -> None:
    (tmp_path / "gzip.md").write_text("Compress the output file with the fastest method.\n")
    (tmp_path / "store.md").write_text("Do not compress the output file, store it as is.\n")
    hits = NoteIndex(tmp_path, None).search("Do not compress the output file")
    assert hits[0].path == "store.md"


def test_function_words_tell_the_english_note_from_its_translation(tmp_path: Path) -> None:
    (tmp_path / "en.md").write_text("Pin a note to the sidebar and open it in a new tab.\n")
    (tmp_path / "fr.md").write_text("Épingler une note: sidebar, new tab.\n")
    hits = NoteIndex(tmp_path, None).search("note in a new tab and the sidebar")
    assert hits[0].path == "en.md"


def test_a_query_of_stop_words_only_keeps_them_all() -> None:
    assert query_weights("the who") == {"the": 1.0, "who": 1.0, "thewho": COMPOUND_QUERY_WEIGHT}
    assert query_terms("what is the")[:3] == ["what", "is", "the"]


def test_without_stop_words_every_token_of_the_tokenizer_is_a_term() -> None:
    text = "What is the heap sort of 김치찌개 and ヒープソート?"
    weights = query_weights(text, stop_words=False)
    assert set(weights) == set(tokenize(text))
    assert weights["the"] == 1.0 and weights["heapsort"] == COMPOUND_QUERY_WEIGHT


def test_repeated_terms_add_up() -> None:
    assert query_weights("sort sort heap")["sort"] == 2.0


def _vault(tmp_path: Path) -> Path:
    (tmp_path / "function-words.md").write_text("The theory of the thing is the one of the many. " * 5)
    (tmp_path / "wing.md").write_text("A wing in a slipstream.\n")
    (tmp_path / "heapsort.md").write_text("Heapsort sorts in place.\n")
    (tmp_path / "heap.md").write_text("A heap is a tree.\n")
    for topic in ("lift", "drag", "thrust", "stall", "flutter", "buckling"):
        (tmp_path / f"{topic}.md").write_text(f"The {topic} of the model is what the tests measure.\n")
    return tmp_path


def test_search_weighs_stop_words_less_unless_switched_off(tmp_path: Path) -> None:
    vault = _vault(tmp_path)

    def scores(**settings: object) -> dict[str, float]:
        hits = NoteIndex(vault, None, Settings(vault=vault, **settings)).search("what is the wing of the")
        return {hit.path: hit.score for hit in hits}

    with_stops, plain = scores(), scores(query_stop_words=False)
    assert max(with_stops, key=with_stops.__getitem__) == "wing.md"
    assert with_stops["wing.md"] == plain["wing.md"]
    assert with_stops["function-words.md"] < plain["function-words.md"] / 2


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


@pytest.mark.parametrize(("query", "terms", "shown"), [
    # words side by side in the note (a compound matched) make one phrase; overlapping phrases join
    ("how do I create a new vault", {"anew", "create", "do", "doi", "i", "new", "newvault", "vault"},
     ["do I", "create", "a new vault"]),
    ("how do I create a new vault", {"vault"}, ["vault"]),
    # as the query writes them: case, and the joining mark between the words
    ("Heap-Sort in C", {"heapsort", "c"}, ["Heap-Sort", "C"]),
    # no compound across a comma: `heapsort` is no term of this query
    ("heap, sort", {"heap", "heapsort"}, ["heap"]),
    # CJK: the characters the matched bigrams cover; a Latin word written against CJK on its own
    ("gzip形式で圧縮する", {"gzip", "圧縮", "縮す", "形式"}, ["gzip", "形式", "圧縮す"]),
    ("김치찌개 만들기", {"김치찌개"}, ["김치찌개"]),
    ("nothing", set(), []),
])
def test_matched_words_are_the_querys_words_a_hit_matched(query: str, terms: set[str], shown: list[str]) -> None:
    assert matched_words(query, terms) == shown


def test_a_question_of_stop_words_alone_names_nothing() -> None:
    from nlmsync.search import names_nothing

    assert names_nothing("And why?") and names_nothing("What about it?") and names_nothing("")
    assert not names_nothing("And its worst case?") and not names_nothing("Warum?")
