"""The tokenizer (rules 1-5): normalization, base tokens, length bounds, compounds, CJK bigrams; a text read
through its code points' classes agrees with the plain statement of the rules (`tests/text/oracle.py`)."""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.text import oracle

from nlmsync.text import (
    MAX_TOKEN_LENGTH,
    base_tokens_and_joins,
    cjk_bigrams,
    count_tokens_and_words,
    normalize,
    text_pieces,
    tokenize,
    tokens_and_words,
    words,
    words_and_joins,
)

tokens_module = importlib.import_module("nlmsync.text.tokens")


def test_nfkc_and_lowercase() -> None:
    assert tokenize("ＨＥＡＰ Sort") == ["heap", "sort", "heapsort"]
    assert tokenize("ﬁle") == ["file"]


def test_base_tokens_are_letters_and_numbers_only() -> None:
    assert tokenize("O(n log n) -- 2nd_pass!") == ["o", "n", "log", "n", "2nd", "pass", "nlog", "logn", "2ndpass"]


def test_adjacent_ascii_compounds() -> None:
    assert "heapsort" in tokenize("heap sort")
    assert "mergesort" in tokenize("merge-sort")
    assert tokenize("heapsort") == ["heapsort"]


@pytest.mark.parametrize("separator", [" ", "   ", "\n", " \t\n ", "\u3000", "-", "_", ".", "/", "'", "\u2019", "^"])
def test_words_one_word_may_be_split_into_form_a_compound(separator: str) -> None:
    """Rule 4: only white space, or one joining mark alone, between the two words."""
    assert tokenize(f"heap{separator}sort") == ["heap", "sort", "heapsort"]


@pytest.mark.parametrize("separator", [", ", ": ", "://", "(", ") ", "`", " `", " - ", "--", "..", ". ", "!", "{{",
                                       "}} {{", "\u2014", "\u3001", "=", " = "])
def test_no_compound_across_other_punctuation(separator: str) -> None:
    """A comma, a colon, a bracket, a backtick, a sentence's end, a run of marks: the end of a phrase."""
    assert tokenize(f"heap{separator}sort") == ["heap", "sort"]
    assert tokenize(f"{{{{path/to/file}}}}{separator}sort")[-2:] == ["pathto", "tofile"]


def test_no_compound_across_a_word_left_out() -> None:
    """A word rule 3 leaves out (longer than 80) ends the phrase too: its neighbours were never side by side."""
    assert tokenize("heap " + "x" * (MAX_TOKEN_LENGTH + 1) + " sort") == ["heap", "sort"]
    assert tokenize("a b " + "x" * (MAX_TOKEN_LENGTH + 1) + " c d") == ["a", "b", "c", "d", "ab", "cd"]


def test_no_compound_across_non_ascii_tokens() -> None:
    tokens = tokenize("heap 정렬 sort")
    assert "heapsort" not in tokens
    assert "heap정렬" not in tokens


def test_token_length_bounds() -> None:
    long_word = "a" * (MAX_TOKEN_LENGTH + 1)
    assert tokenize(long_word) == []
    assert tokenize("a" * MAX_TOKEN_LENGTH) == ["a" * MAX_TOKEN_LENGTH]
    assert tokenize("x") == ["x"]


def test_hangul_bigrams() -> None:
    assert tokenize("김치찌개") == ["김치찌개", "김치", "치찌", "찌개"]


def test_katakana_prolonged_sound_mark_stays_inside_the_run() -> None:
    assert tokenize("ヒープソート") == ["ヒープソート", "ヒー", "ープ", "プソ", "ソー", "ート"]


def test_mixed_script_token_bigrams_only_cjk_part() -> None:
    tokens = tokenize("python入門")
    assert tokens[0] == "python入門"
    assert "入門" in tokens
    assert not any(t.startswith("n入") for t in tokens)


def test_bigrams_survive_an_unspaced_sentence_longer_than_80() -> None:
    sentence = "今日は" * 40
    tokens = tokenize(sentence)
    assert sentence not in tokens
    assert {"今日", "日は", "は今"} <= set(tokens)


def test_formula_text() -> None:
    assert tokenize("E = mc²") == ["e", "mc2"]
    assert "mc2" in tokenize("mc^2")


def _reference_tokens(text: str) -> list[str]:
    """Rules 1-5 spelled out token by token, as they were first written: the fast paths must agree."""
    import unicodedata

    import regex

    normalized = unicodedata.normalize("NFKC", text).lower()
    matches = list(regex.finditer(r"[\p{L}\p{N}]+", normalized))
    raw = [m.group() for m in matches]
    base = [t for t in raw if len(t) <= MAX_TOKEN_LENGTH]
    # rule 4: two words side by side in the text (none left out between), white space or one joining mark apart
    compounds = [left.group() + right.group() for left, right in pairwise(matches)
                 if left.group().isascii() and right.group().isascii()
                 and max(len(left.group()), len(right.group())) <= MAX_TOKEN_LENGTH
                 and len(left.group() + right.group()) <= MAX_TOKEN_LENGTH
                 and (normalized[left.end():right.start()].isspace()
                      or normalized[left.end():right.start()] in ("-", "_", "'", ".", "/", "^", "\u2019"))]
    bigrams = [run[i:i + 2] for token in raw
               for run in regex.findall(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006]{2,}", token)
               for i in range(len(run) - 1)]
    return base + compounds + bigrams


# CJK letters beside CJK symbols that are not letters (a radical, the Korean standard symbol), long and
# short words, marks and scripts without bigrams
_mixed_text = st.lists(st.sampled_from(["서울", "여행", "今日は", "ヒープソート", "々", "ー", "\u2e80", "\u327f", "\u3007",
                                        "python", "入門", "x" * 41, "y" * 39, "é", "Ωμέγα", "-", " ", "\n", "·", "²"]),
                       max_size=30).map("".join) | st.text(max_size=100)


@given(_mixed_text)
def test_tokens_agree_with_the_rules_applied_token_by_token(text: str) -> None:
    assert tokenize(text) == _reference_tokens(text)


def test_every_cjk_character_is_in_the_blocks_checked_before_looking_for_runs() -> None:
    import regex

    cjk = regex.compile(rf"(?V1)[{oracle._CJK_CLASS}&&[\p{{L}}\p{{N}}]]")
    outside = [hex(c) for c in range(sys.maxunicode + 1)
               if cjk.match(chr(c)) and not oracle._CJK_BLOCKS.match(chr(c))]
    assert outside == []


# what tells the rules apart: words of every script and length, every kind of separator (white space of all
# sorts, joining marks alone and in runs, other punctuation), NFKC's changes, code points beyond the basic plane
_RULE_WORDS = ["heap", "Sort", "x" * 40, "y" * 41, "z" * 81, "2nd", "mc²", "Ωμέγα", "café", "ﬁle", "ＨＥＡＰ", "서울",
               "김치찌개", "今日は", "ヒープソート", "々", "ー", "\u2e80", "\u327f", "\u3007", "python入門", "EKS의",
               "\U00020000\U00020001字", "\U0001F600", "·", "—"]
_SEPARATORS = [" ", "  ", "\n", " \t", "\u3000", "\x1c", "\u2028", "-", "_", ".", "/", "'", "\u2019", "^", "--", ", ",
               "://", "`", "", "\u00a0"]
_rule_text = st.lists(st.tuples(st.sampled_from(_RULE_WORDS), st.sampled_from(_SEPARATORS)), max_size=20).map(
    lambda pairs: "".join(word + separator for word, separator in pairs)) | st.text(max_size=200)


@given(_rule_text)
def test_a_text_read_by_its_classes_has_the_tokens_of_the_plain_rules(text: str) -> None:
    assert tokens_and_words(text) == oracle.tokens_and_words(text)
    normalized = normalize(text)
    assert normalized == oracle.normalize(text)
    assert words(normalized) == oracle.words(normalized)
    assert words_and_joins(normalized) == oracle.words_and_joins(normalized)
    assert base_tokens_and_joins(normalized) == oracle.base_tokens_and_joins(normalized)
    assert cjk_bigrams(normalized) == oracle.cjk_bigrams(normalized)


@given(_rule_text, st.integers(1, 64), st.integers(1, 64))
def test_a_text_counted_in_pieces_has_the_counts_of_the_plain_rules(text: str, size: int, joined: int) -> None:
    """Cut in pieces (each after white space), counted a few pieces at a time: compounds across the cuts too."""
    pieces = list(text_pieces(text, size=size))
    whole = (Counter(oracle.tokenize(text)), oracle.tokens_and_words(text)[1])  # the text's tokens, at once
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens_module, "PIECE_CHARS", joined)
        assert count_tokens_and_words(pieces) == whole
    assert count_tokens_and_words(pieces) == whole
