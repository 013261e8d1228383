"""A vault path's tokens (rule 6): `.md` removed, separators split, each part tokenized on its own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nlmsync.search.tokenize import tokenize_path
from nlmsync.text import tokenize


def test_path_tokens() -> None:
    assert tokenize_path("algorithms/sorting/heapsort.md") == ["algorithms", "sorting", "heapsort"]
    assert tokenize_path("cooking\\merge-sort.MD") == ["cooking", "merge", "sort", "mergesort"]
    assert tokenize_path("travel/서울 여행.md")[:2] == ["travel", "서울"]


def test_path_compounds_do_not_cross_folders() -> None:
    assert "sortingheapsort" not in tokenize_path("sorting/heapsort.md")


# ASCII text takes a shortcut (no NFKC, the `re` engine); a separator that is not ASCII (U+00B7, which
# NFKC keeps and which is neither letter nor digit) sends the same text down the general path.
_ascii_text = st.text(alphabet=st.characters(max_codepoint=127), max_size=200) | st.lists(
    st.sampled_from(["heap", "Sort", "x" * 79, "y" * 81, "2nd", "-", " ", "_", "\n", "É", "A1"]), max_size=30).map("".join)


@given(_ascii_text)
def test_ascii_shortcut_gives_the_tokens_of_the_general_path(text: str) -> None:
    assert tokenize(text) == tokenize(text + " \u00b7")
    assert tokenize_path(text + ".md") == tokenize_path(text + " \u00b7.md")  # the suffix goes either way
