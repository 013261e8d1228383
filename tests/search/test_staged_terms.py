"""Staged notes (`staged_terms`): notes given by their texts, their tokens counted as term ids and their
compounds formed from ids, index exactly as the field weights say (`tests/search/reference.py` over `note_fields`, the
string tokenizer's counts) per note: the same terms, postings, weighted term frequencies (to the float) and
lengths, however the folds fall."""

from __future__ import annotations

import importlib
from collections import Counter
from itertools import count

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tests.search.reference import reference_doc_terms

from nlmsync.search import staged_terms
from nlmsync.search.bm25 import Weights
from nlmsync.search.doc_terms import DocBatch
from nlmsync.search.markdown import note_fields, whole_fields
from nlmsync.search.postings import PostingsIndex
from nlmsync.search.staged_terms import StagedTerms, TermIds
from nlmsync.text import (
    CJK,
    JOINING_MARKS,
    MARK,
    SPACE,
    WORD,
    base_tokens,
    cjk_bigrams,
    class_bits,
    fold,
    normalize,
    tokenize,
    words_and_joins,
)

# words that make every rule count: ASCII words and compounds, a token of 40 and one of 41 characters (two of
# them joined pass or fail the 80 limit), tokens over 80 (left out, also as a compound's half), CJK runs
# (bigrams; a 2-character word is also its own bigram; ideographs beyond the basic plane), Latin beside CJK, NFKC
# and case folding
WORDS = ["heap", "sort", "heapsort", "Heap", "a", "x" * 40, "y" * 41, "z" * 81, "q" * 200, "김치찌개", "김치",
         "ヒープソート", "堆排序", "\U00020000\U00020001字", "EKS의", "ｆｕｌｌ", "ﬁle", "ΣΑΣ", "café", "2024", "mc²",
         "—", "-", "\n# ", "\n## Heading ##", "\n"]
NAMES = ["heap-sort.md", "Heap Sort.MD", "김치찌개.md", "a\\b c.md", "---.md", "x" * 41 + " " + "y" * 41 + ".md",
         "notes.txt.md", "ヒープ.md"]
FOLDERS = ["", "pages/common", "pages/ko", "ru/Plugins", "a b/c\\d", "堆/x"]
# what stands between two words: rule 4 joins them across white space or one joining mark alone, not across the rest
SEPARATORS = [" ", " ", " ", "  ", "\n", " \t", "-", "_", ".", "/", "'", "\u2019", "^", ", ", ": ", "://", "`", " (",
              "--", "\u2014", "\u3000", "\U0001F600", " \U00020000 ", ""]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=14).map(
    lambda pairs: "".join(word + separator for word, separator in pairs))
notes = st.lists(st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES), texts), max_size=10)
WEIGHTS = [Weights(), Weights(0.3, 1.7, 0.1, 2.9), Weights(1.0, 0.0, 4.0, 0.0)]


def _built(batch: DocBatch, weights: Weights) -> PostingsIndex:
    index = PostingsIndex(weights, 1.2, 0.75)
    index.apply([], batch)
    return index


@settings(max_examples=examples(200), deadline=None)
@given(notes, st.integers(0, 4), st.sampled_from(WEIGHTS), st.sampled_from([1, 7, 50, staged_terms.FOLD_TOKENS]),
       st.booleans(), st.sampled_from([0, 3, staged_terms._FEW_PAIRS]))
def test_notes_staged_by_their_texts_index_as_the_reference_weighs_them(given_notes: list[tuple[str, str, str]], limit: int,
                                                              weights: Weights, fold: int, counted: bool,
                                                              few_pairs: int) -> None:
    """`add_text` (and, with `counted`, every other note by `add_counts`) builds the base the reference builds,
    whether a fold looks its compounds up one by one or once per distinct pair of term ids."""
    staged, reference = DocBatch(limit, weights), DocBatch(limit, weights)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(staged_terms, "FOLD_TOKENS", fold)
        patch.setattr(staged_terms, "FOLD_CHARS", fold * 8)  # about as many characters as tokens make
        patch.setattr(staged_terms, "_FEW_PAIRS", few_pairs)
        for i, (folder, name, text) in enumerate(given_notes):
            path = f"{folder}/{i}{name}" if folder else f"{i}{name}"
            whole = whole_fields(text)
            if whole is None or (counted and i % 2):
                staged.add_counts(path, note_fields(path, text))
            else:
                staged.add_text(path, whole)
            reference.add(reference_doc_terms(path, note_fields(path, text), weights))
    first, second = _built(staged, weights), _built(reference, weights)
    assert list(first.terms) == list(second.terms) and first.base_paths == second.base_paths
    for name in ("offsets", "slots", "tfs", "base_lengths"):
        assert getattr(first, name).tolist() == getattr(second, name).tolist(), name


@settings(max_examples=examples(200), deadline=None)
@given(texts)
def test_a_folded_body_counts_the_tokens_tokenize_gives(text: str) -> None:
    """The compounds made from term ids (rule 4) are `tokenize`'s, counted alike: one note's body alone."""
    stage = StagedTerms(TermIds())
    stage.add_text("", "", text)  # no path, no heading: the body's tokens only
    folded = stage.fold(Weights())
    terms = stage.vocabulary.terms
    counts = Counter(tokenize(text))
    assert {terms[i]: tf for i, tf in zip(folded.term_ids.tolist(), folded.tfs.tolist())} == counts
    assert folded.sizes.tolist() == [len(counts)]
    # the body's words; the path's length counts an empty file name as one token (`markdown.name_length`)
    assert folded.lengths.tolist() == [[len(base_tokens(normalize(text))), 0, 1]]


def test_a_term_id_is_the_number_of_lookups_before_the_terms_first() -> None:
    vocabulary = TermIds()
    assert vocabulary.lookup(["b", "a", "b"]).tolist() == [0, 1, 0]
    assert vocabulary.lookup([]).tolist() == []
    assert vocabulary.lookup(["c", "a", "c", "d"]).tolist() == [3, 1, 3, 6]
    assert vocabulary.ids == {"b": 0, "a": 1, "c": 3, "d": 6} and len(vocabulary) == 7
    assert vocabulary.terms == ["b", "a", "", "c", "", "", "d"]
    lengths, is_ascii = vocabulary.shapes()
    assert lengths.tolist() == [1, 1, 0, 1, 0, 0, 1] and is_ascii.dtype == np.bool_ and is_ascii.all()


@pytest.mark.parametrize("weights", WEIGHTS)
def test_a_staged_title_heading_and_file_name_weigh_as_the_reference_weighs_them(weights: Weights) -> None:
    """The heading repeating the file name is left out, the file name's weight shared by its two words, the
    body's length its words: staged by text, as the reference over `note_fields(...)` has them."""
    path = "linux/dnf-deplist.md"
    text = "# dnf deplist\n\n> An alias of `dnf repoquery`.\n\n## Deplist options\n"
    staged, reference = DocBatch(0, weights), DocBatch(0, weights)
    staged.add(reference_doc_terms("a.md", note_fields("a.md", "x"), weights))
    reference.add(reference_doc_terms("a.md", note_fields("a.md", "x"), weights))
    whole = whole_fields(text)
    assert whole is not None
    staged.add_text(path, whole)
    assert staged._staged is not None and staged._staged.notes == 1
    reference.add(reference_doc_terms(path, note_fields(path, text), weights))
    first, second = _built(staged, weights), _built(reference, weights)
    assert list(first.terms) == list(second.terms)
    assert first.tfs.tolist() == second.tfs.tolist() and first.base_lengths.tolist() == [[1, 0, 1], [5, 3, 4]]
    assert dict(zip(second.terms, second.tfs.tolist()))["dnf"] == weights.body * 1 + weights.path / 2


@pytest.mark.parametrize(("heading", "heading_length"), [("# dnf deplist", 0), ("# DNF-Deplist", 0),
                                                        ("# dnf deplist tool", 5), ("# deplist", 1),
                                                        ("# " + "x" * 81, 0), ("# dnf " + "x" * 81 + " deplist", 0)])
def test_a_one_line_heading_is_left_out_when_it_says_the_title(heading: str, heading_length: int) -> None:
    """A note whose only heading is its title (most notes) gets no heading field, staged as the reference has it."""
    path = "linux/dnf-deplist.md"
    text = f"{heading}\n\n> An alias of `dnf repoquery`.\n"
    staged, reference = DocBatch(0), DocBatch(0)
    staged.add(reference_doc_terms("a.md", note_fields("a.md", "x"), Weights()))
    reference.add(reference_doc_terms("a.md", note_fields("a.md", "x"), Weights()))
    whole = whole_fields(text)
    assert whole is not None
    staged.add_text(path, whole)
    reference.add(reference_doc_terms(path, note_fields(path, text), Weights()))
    first, second = _built(staged, Weights()), _built(reference, Weights())
    assert list(first.terms) == list(second.terms) and first.tfs.tolist() == second.tfs.tolist()
    assert first.base_lengths.tolist() == second.base_lengths.tolist()
    assert first.base_lengths[1][1] == heading_length  # its tokens, compounds included


def test_words_not_yet_known_get_ids_when_folded_and_long_ones_none() -> None:
    vocabulary = TermIds()
    vocabulary.lookup(["heapsort"])  # a compound first
    tokens = ["heap", "x" * 81, "heapsort", "heap", "x" * 81, "sort"]
    vocabulary.word_ids["sort"] = 7  # known from an earlier fold
    known = len(vocabulary.word_ids)
    staged = np.fromiter(map(vocabulary.word_ids.setdefault, tokens, count(staged_terms.PENDING)), dtype=np.int64)
    ids = vocabulary.resolve_words(staged, len(vocabulary.word_ids) - known, 80)
    assert ids.tolist() == [1, -1, 0, 1, -1, 7]
    assert vocabulary.word_ids == {"heap": 1, "x" * 81: -1, "heapsort": 0, "sort": 7}
    again = np.fromiter(map(vocabulary.word_ids.setdefault, tokens, count(staged_terms.PENDING)), dtype=np.int64)
    assert again.tolist() == [1, -1, 0, 1, -1, 7]  # the next fold stages them with their ids


@given(st.lists(texts, max_size=6))
def test_separators_of_many_texts_join_words_as_each_texts_own(given_texts: list[str]) -> None:
    """Rule 4 told for a fold's texts at once, by table (beyond the basic plane too), is `words_and_joins`'s, text by
    text."""
    normalized = [normalize(text) for text in given_texts]
    expected = [join for text in normalized for join in words_and_joins(text)[1]]
    assert fold.FoldTexts(normalized).joins().tolist() == expected


@given(st.lists(texts, max_size=6))
def test_cjk_bigrams_of_many_texts_are_each_texts_own(given_texts: list[str]) -> None:
    """Rule 5 told for a fold's texts at once from their code points is `cjk_bigrams` text by text, in order."""
    normalized = [normalize(text) for text in given_texts]
    codes, text_of = fold.FoldTexts(normalized).bigrams()
    got = [(int(i), chr(code >> 21) + chr(code & 0x1FFFFF)) for i, code in zip(text_of.tolist(), codes.tolist())]
    assert got == [(i, bigram) for i, text in enumerate(normalized) for bigram in cjk_bigrams(text)]


def test_the_code_point_table_classes_every_character_of_the_basic_plane_as_the_patterns_do() -> None:
    import regex

    cjk_class = importlib.import_module("nlmsync.text.tokens")._CJK_CLASS
    word, cjk = regex.compile(r"[\p{L}\p{N}]"), regex.compile(rf"(?V1)[{cjk_class}&&[\p{{L}}\p{{N}}]]")
    table = fold._plane_classes()
    chars = [chr(code) for code in range(0x10000)]
    assert [bool(bits & WORD) for bits in table.tolist()] == [bool(word.match(c)) for c in chars]
    assert [bool(bits & CJK) for bits in table.tolist()] == [bool(cjk.match(c)) for c in chars]
    assert [bool(bits & SPACE) for bits in table.tolist()] == [c.isspace() for c in chars]
    assert [chr(code) for code, bits in enumerate(table.tolist()) if bits & MARK] == sorted(JOINING_MARKS)
    assert not (table[:fold._FIRST_CJK] & CJK).any()  # a fold of such code points has no bigram
    assert (table[:0x80] == fold._ascii_classes()).all()
    assert class_bits("\U00020000") == WORD | CJK  # beyond the plane
    assert class_bits("\U0001F600") == 0


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.text(max_size=200), min_size=1, max_size=3), texts)
def test_code_points_are_classed_as_the_whole_plane_table_classes_them_however_the_table_was_filled(
        any_texts: list[str], text: str) -> None:
    """A fold of a few notes classes the code points its table does not know yet one by one; a large one fills the
    table for the whole plane: the same classes, whatever came before."""
    table = fold._plane_classes()
    classes = fold._CodeClasses()
    for given_text in [*any_texts, text]:
        codes = np.frombuffer(given_text.encode("utf-32-le"), dtype=np.uint32)
        expected = [int(table[code]) if code <= 0xFFFF else class_bits(chr(code))
                    for code in codes.tolist()]
        found = classes.of(codes, int(codes.max()) if len(codes) else 0)
        assert (found & 0x7F).tolist() == expected and (found & fold._KNOWN).all()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fold, "_TABLE_WORTH", 1)  # the next code points fill the whole table
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        found = classes.of(codes, int(codes.max()) if len(codes) else 0)
        assert (found & 0x7F).tolist() == [int(table[c]) if c <= 0xFFFF else class_bits(chr(c))
                                                           for c in codes.tolist()]
