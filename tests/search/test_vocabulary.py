"""The cache's vocabulary: a sorted term list kept as the stored bytes, made `str` a block at a time."""

from __future__ import annotations

from bisect import bisect_left

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.store.index_codec import Vocabulary

terms_lists = st.lists(st.text(st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]), min_size=1,
                               max_size=12), max_size=60, unique=True).map(sorted)


@settings(max_examples=examples(200), deadline=None)
@given(terms=terms_lists, block_bytes=st.integers(min_value=1, max_value=64), probes=st.lists(st.text(max_size=6)))
def test_vocabulary_is_the_sorted_list(terms: list[str], block_bytes: int, probes: list[str]) -> None:
    vocabulary = Vocabulary("\n".join(terms).encode("utf-8"), block_bytes)
    assert len(vocabulary) == len(terms)
    assert list(vocabulary) == terms
    assert [vocabulary[i] for i in range(len(terms))] == terms
    assert vocabulary[-1:] == terms[-1:] and vocabulary[1:4] == terms[1:4]
    assert [vocabulary.find(term) for term in terms] == list(range(len(terms)))
    for probe in probes:
        assert vocabulary.find(probe) == (terms.index(probe) if probe in terms else None)
        assert bisect_left(vocabulary, probe) == bisect_left(terms, probe)
    with pytest.raises(IndexError):
        vocabulary[len(terms)]


def test_an_empty_vocabulary() -> None:
    vocabulary = Vocabulary(b"")
    assert len(vocabulary) == 0 and list(vocabulary) == [] and vocabulary.find("a") is None
