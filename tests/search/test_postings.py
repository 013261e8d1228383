"""PostingsIndex ranking with its per-term cache: after any mix of adds, removes, merges and
reloads of the base, with queries in between, every query ranks exactly (scores bit for bit, order,
matched terms) as on an index built from scratch with the same documents."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tests.search.reference import reference_doc_terms

from nlmsync.search import postings, staged_terms
from nlmsync.search.bm25 import Weights
from nlmsync.search.doc_terms import DocBatch, DocTerms
from nlmsync.search.markdown import NoteFields
from nlmsync.search.postings import PostingsIndex, SortedTerms, stable_argsort
from nlmsync.search.ranking import Ranking

TERMS = ["heap", "sort", "heapsort", "tea", "river", "a", "b", "c"]
PATHS = ["a.md", "b.md", "c.md", "d/e.md", "f.md", "g.md"]
QUERIES = [{"heap": 1.0, "sort": 1.0, "heapsort": 0.25}, {"tea": 2.0}, {"river": 1.0, "a": 1.0},
           {t: 1.0 for t in TERMS}, {"nothing": 1.0, "b": 0.25}]
COMMON = frozenset({"a", "b"})  # stand-ins for stop words

docs = st.builds(
    lambda path, tf, lengths: DocTerms(path, tf, lengths),
    st.sampled_from(PATHS),
    st.dictionaries(st.sampled_from(TERMS), st.sampled_from([1.0, 2.0, 2.5, 4.0, 3.5, 7.0]), min_size=1, max_size=5),
    st.tuples(st.integers(1, 40), st.integers(0, 5), st.integers(1, 4)),
)
ops = st.lists(st.one_of(
    st.tuples(st.just("add"), docs),
    st.tuples(st.just("remove"), st.sampled_from(PATHS)),
    st.tuples(st.just("merge"), st.none()),
    st.tuples(st.just("reload"), st.none()),
    st.tuples(st.just("rank"), st.integers(0, len(QUERIES) - 1)),
), max_size=30)


def _fresh(current: dict[str, DocTerms]) -> PostingsIndex:
    index = PostingsIndex(Weights(), 1.2, 0.75)
    batch = DocBatch(0)
    for doc in current.values():
        batch.add(doc)
    index.apply([], batch)
    return index


def _ranks(ranking: Ranking) -> list[list[tuple[str, float, tuple[str, ...]]]]:
    return [[(r.path, r.score, r.matched_terms) for r in ranking.rank(q, limit, common)]
            for q in QUERIES for limit in (None, 2) for common in (frozenset(), COMMON)]


@settings(max_examples=examples(150), deadline=None)
@given(ops)
def test_cached_ranking_equals_a_fresh_index(steps: list[tuple[str, object]]) -> None:
    index = PostingsIndex(Weights(), 1.2, 0.75, merge_threshold=3)
    ranking = Ranking(index)
    current: dict[str, DocTerms] = {}
    for kind, arg in steps:
        if kind == "add":
            assert isinstance(arg, DocTerms)
            batch = DocBatch(3)
            batch.add(arg)
            index.apply([], batch)
            current[arg.path] = arg
        elif kind == "remove":
            index.apply([arg], DocBatch(3))  # type: ignore[list-item]
            current.pop(arg, None)  # type: ignore[call-overload]
        elif kind == "merge":
            index.merge()
        elif kind == "reload":  # the base as a new process loads it (dead slots kept), overlay kept
            index.load_base(SortedTerms(index.terms), index.offsets.copy(), index.slots.copy(), index.tf_codes.copy(),
                            index.tf_values.copy(), list(index.base_paths), index.base_lengths.copy())
        else:
            assert isinstance(arg, int)
            query = QUERIES[arg]
            assert [(r.path, r.score, r.matched_terms) for r in ranking.rank(query)] == \
                [(r.path, r.score, r.matched_terms) for r in Ranking(_fresh(current)).rank(query)]
    fresh = _ranks(Ranking(_fresh(current)))
    assert _ranks(ranking) == fresh

    def scored_again(keys: object) -> object:
        raise AssertionError(f"terms scored again instead of read from the cache: {keys}")

    setattr(ranking, "_score_terms", scored_again)  # noqa: B010 - a method replaced on this one object
    assert _ranks(ranking) == fresh  # the second answer, from the cache alone, is still the fresh index's


def test_a_stop_word_most_documents_hold_is_left_out_unless_nothing_else_matches() -> None:
    stop_words = frozenset({"the", "of"})
    docs = {path: DocTerms(path, {"the": 1.0, **({"river": 1.0} if path == "a.md" else {})}, (10, 0, 1))
            for path in PATHS[:4]}
    docs["x.md"] = DocTerms("x.md", {"tea": 1.0, "of": 1.0}, (10, 0, 1))
    index = Ranking(_fresh(docs))

    # "the": 4 of 5 notes; "of": 1 of 5
    assert [(r.path, r.matched_terms) for r in index.rank({"the": 0.25, "river": 1.0}, None, stop_words)] == \
        [("a.md", ("river",))]
    assert [r.path for r in index.rank({"the": 0.25, "river": 1.0}, None)] == ["a.md", "b.md", "c.md", "d/e.md"]
    assert [(r.path, r.matched_terms) for r in index.rank({"of": 0.25, "tea": 1.0}, None, stop_words)] == \
        [("x.md", ("of", "tea"))]
    assert [r.path for r in index.rank({"the": 1.0}, None, stop_words)] == ["a.md", "b.md", "c.md", "d/e.md"]


def test_a_document_matched_by_more_than_52_terms_lists_them_all() -> None:
    terms = {f"t{i:03d}": 1.0 for i in range(70)}
    index = PostingsIndex(Weights(), 1.2, 0.75)
    batch = DocBatch(0)
    batch.add(DocTerms("all.md", dict(terms), (70, 0, 1)))
    batch.add(DocTerms("few.md", {"t000": 1.0, "t069": 3.0}, (2, 0, 1)))
    index.apply([], batch)
    ranked = Ranking(index).rank(terms, 10)
    assert ranked[0].path == "all.md" and ranked[0].matched_terms == tuple(sorted(terms))
    assert ranked[1].matched_terms == ("t000", "t069")


fields = st.builds(
    lambda body, heading, path, folder, name_words: NoteFields(
        Counter(body), Counter(heading), Counter(path), Counter(folder), sum(body.values()), name_words),
    *[st.dictionaries(st.sampled_from(TERMS), st.integers(1, 9), max_size=5) for _ in range(4)],
    st.integers(0, 3))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(fields, max_size=8), st.integers(0, 4),
       st.sampled_from([Weights(), Weights(0.3, 1.7, 0.1, 2.9), Weights(1.0, 0.0, 4.0, 0.0)]),
       st.sampled_from([3, staged_terms.FOLD_TOKENS]))
def test_notes_added_by_their_fields_index_as_their_weighted_terms(notes: list[NoteFields], limit: int,
                                                                   weights: Weights, fold: int) -> None:
    """A batch staging notes by their counted fields (`add_counts`), folded a few terms at a time or all at once,
    builds the same base, to the float, as one given each note weighed by the reference."""
    by_fields, by_terms = DocBatch(limit, weights), DocBatch(limit, weights)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(staged_terms, "FOLD_TOKENS", fold)
        for i, note in enumerate(notes):
            by_fields.add_counts(f"n{i}.md", note)
            by_terms.add(reference_doc_terms(f"n{i}.md", note, weights))
    indexes = [PostingsIndex(weights, 1.2, 0.75), PostingsIndex(weights, 1.2, 0.75)]
    indexes[0].apply([], by_fields)
    indexes[1].apply([], by_terms)
    first, second = indexes
    assert list(first.terms) == list(second.terms) and first.base_paths == second.base_paths
    for name in ("offsets", "slots", "base_lengths"):
        assert getattr(first, name).tolist() == getattr(second, name).tolist(), name
    assert first.tf_values[first.tf_codes].tolist() == second.tf_values[second.tf_codes].tolist()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(0, 2**20) | st.integers(0, 70_000) | st.integers(0, 3), max_size=300),
       st.sampled_from([1, 2, 7, postings.SORT_BUCKET]), st.sampled_from([0, 1, 1 << 16]))
def test_stable_argsort_is_numpys_stable_argsort(values: list[int], bucket: int, room: int) -> None:
    """Sorted whole or a range of keys at a time, by one or two 16-bit radix passes, int32 keys are ordered as one
    stable sort orders them: equal keys keep their order."""
    keys = np.array(values, dtype=np.int32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings, "SORT_BUCKET", bucket)
        order = stable_argsort(keys, np.bincount(keys, minlength=max(values, default=0) + 1 + room))
    assert order.dtype == np.int32 and order.tolist() == np.argsort(keys, kind="stable").tolist()


def test_a_file_name_shares_its_weight_among_its_words() -> None:
    """`dnf-deplist.md` names its note with two words: each weighs half the file name's weight (the compound
    `dnfdeplist` too), while `dnf.md`'s one word weighs it whole."""
    def named(name: list[str], name_words: int) -> NoteFields:
        return NoteFields(Counter(), Counter(), Counter(name), Counter(["linux"]), 0, name_words)

    two = reference_doc_terms("linux/dnf-deplist.md", named(["dnf", "deplist", "dnfdeplist"], 2), Weights())
    one = reference_doc_terms("linux/dnf.md", named(["dnf"], 1), Weights())
    assert two.tf == {"dnf": 2.0, "deplist": 2.0, "dnfdeplist": 2.0, "linux": 1.0}
    assert one.tf == {"dnf": 4.0, "linux": 1.0}


def test_every_change_gives_the_index_a_new_version() -> None:
    index = PostingsIndex(Weights(), 1.2, 0.75, merge_threshold=1)
    seen = [index.version]

    def changed() -> None:
        assert index.version not in seen
        seen.append(index.version)

    index.add(DocTerms("a.md", {"heap": 1.0}, (1, 0, 1)))
    changed()
    index.apply([], DocBatch(3))  # nothing to do: the same index
    assert index.version == seen[-1]
    index.merge()
    changed()
    index.remove("a.md")
    changed()
    index.load_base(SortedTerms(index.terms), index.offsets, index.slots, index.tf_codes, index.tf_values,
                    list(index.base_paths), index.base_lengths)
    changed()


def test_more_than_65536_distinct_frequencies_are_kept_exactly() -> None:
    """A posting holds its frequency's position in the table of distinct values: past 65,536 values the
    positions widen to uint32, and every frequency still comes back as the very float it was given."""
    count = 70_000
    given = {f"t{i:05d}": 1.0 + i / 3 for i in range(count)}
    index = PostingsIndex(Weights(), 1.2, 0.75)
    batch = DocBatch(0)
    batch.add(DocTerms("many.md", given, (count, 0, 1)))
    batch.add(DocTerms("few.md", {"t00001": 1.0 + 1 / 3, "t69999": 0.5}, (2, 0, 1)))
    index.apply([], batch)
    assert index.tf_codes.dtype == np.uint32 and len(index.tf_values) == count + 1
    many = index.slot_of["many.md"]
    stored = {term: float(index.tf_values[index.tf_codes[start:end][index.slots[start:end] == many]][0])
              for term, start, end in zip(index.terms, index.offsets[:-1].tolist(), index.offsets[1:].tolist())}
    assert stored == given
    assert index.tf_values[0] == 1.0 + 1 / 3  # held by two postings: the most frequent value comes first
