"""The tokenizer's rules stated plainly with regular expressions (kept here, not in `src`): the oracle that
`nlmsync.text.tokens` (a text read through its code points' classes) and `nlmsync.text.fold` (many texts at
once, with numpy) must agree with, token for token.

1. NFKC + lowercase.  2. Base tokens `[\\p{L}\\p{N}]+`.  3. Lengths 1..80.
4. Adjacent ASCII compound tokens, of words with only white space or one joining mark alone between them (none
   across a word rule 3 left out).  5. CJK / Hangul bigrams of every base token's CJK runs.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import regex

MIN_TOKEN_LENGTH = 1
MAX_TOKEN_LENGTH = 80

# Base tokens of ASCII text (the letters and digits of ASCII are exactly its \p{L} and \p{N}), with the
# standard library's engine: faster, and a process that only meets ASCII never imports `regex`.
_ASCII_BASE_TOKEN = re.compile(r"[A-Za-z0-9]+")
_ASCII_WORD_SPLIT = re.compile(r"([A-Za-z0-9]+)")  # `split` gives the words and what stands between them
# Rule 4: the marks that, alone between two words, still join them (hyphen, underscore, apostrophes, full stop,
# slash, and the caret of formula text: `mc^2` is `mc²`); white space of any length joins them too.
JOINING_MARKS = frozenset("-_'./^\u2019")
_CJK_CLASS = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006]"
# The Unicode blocks every character of `_CJK_CLASS` is in (a test checks each code point): text with none
# of them has no CJK run, which the standard library's engine tells faster than `regex` finds the runs.
_CJK_BLOCKS = re.compile("[\u1100-\u11ff\u3005-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
                         "\uac00-\ud7ff\uf900-\ufaff\uff66-\uffdc\U00016fe0-\U00016fff\U0001aff0-\U0001b16f"
                         "\U00020000-\U0003ffff]")


class _UnicodePatterns(NamedTuple):
    base_token: regex.Pattern[str]
    word_split: regex.Pattern[str]
    cjk_run: regex.Pattern[str]
    cjk_character: regex.Pattern[str]


@functools.cache
def _unicode() -> _UnicodePatterns:
    """The `regex` patterns for text beyond ASCII, compiled on first use.

    `cjk_run` finds the CJK runs of base tokens in the whole text at once: its characters are CJK *and*
    letters or numbers, so a run never spans two base tokens (a CJK symbol such as a radical ends one)."""
    import regex

    cjk = rf"(?V1)[{_CJK_CLASS}&&[\p{{L}}\p{{N}}]]"
    return _UnicodePatterns(regex.compile(r"[\p{L}\p{N}]+"), regex.compile(r"([\p{L}\p{N}]+)"),
                            regex.compile(cjk + "{2,}"), regex.compile(cjk + "+"))


def normalize(text: str) -> str:
    """NFKC then lowercase (rule 1)."""
    if text.isascii():  # NFKC leaves ASCII as it is
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """All tokens of `text`: base tokens in order, then compounds and CJK bigrams (rules 1-5)."""
    return tokens_and_words(text)[0]


def tokens_and_words(text: str) -> tuple[list[str], int]:
    """`tokenize(text)` and how many of its tokens are words (base tokens): the length BM25 gives a note's
    body counts its words, not the compounds and CJK bigrams made from them, which repeat the same text."""
    normalized = normalize(text)
    base, joins = base_tokens_and_joins(normalized)
    tokens = base + compound_tokens(base, joins)
    if not normalized.isascii():
        tokens.extend(cjk_bigrams(normalized))
    return tokens, len(base)


def words(normalized: str) -> list[str]:
    """Rule 2 alone: every `[\\p{L}\\p{N}]+` run of normalized text, of any length (a query's CJK words)."""
    return (_ASCII_BASE_TOKEN if normalized.isascii() else _unicode().base_token).findall(normalized)


def base_tokens_and_joins(normalized: str) -> tuple[list[str], list[bool]]:
    """The base tokens (rules 2-3: the `[\\p{L}\\p{N}]+` runs 1..80 long), and per token whether it forms a
    compound with the one before it (rule 4): only white space or one of `JOINING_MARKS` stands between them, and
    no word rule 3 left out."""
    return _rule_3(*words_and_joins(normalized))


def words_and_joins(normalized: str) -> tuple[list[str], list[bool]]:
    """`words(normalized)`, of any length, and per word whether what separates it from the word before is white
    space only or one joining mark alone (the first word: False).

    One split by the word pattern gives the words and what stands between them at once (a second scan for the
    separators would cost as much again as finding the words)."""
    return _words_and_joins(word_split(normalized))


def word_split(normalized: str) -> list[str]:
    """The text before the first word, then word, separator, word, ..., word, and the text after the last (the
    whole text when it has no word)."""
    return (_ASCII_WORD_SPLIT if normalized.isascii() else _unicode().word_split).split(normalized)


def _words_and_joins(parts: list[str]) -> tuple[list[str], list[bool]]:
    """`words_and_joins` of a text's `word_split`."""
    found = parts[1::2]
    return found, [False, *map(_SEPARATORS_JOIN.__getitem__, parts[2:-1:2])] if found else []


def _rule_3(raw: list[str], joins: list[bool]) -> tuple[list[str], list[bool]]:
    """Rule 3: the words longer than `MAX_TOKEN_LENGTH` left out; the word after one left out joins nothing."""
    kept: list[str] = []
    kept_joins: list[bool] = []
    dropped_before = False
    for word, join in zip(raw, joins, strict=True):
        if len(word) > MAX_TOKEN_LENGTH:
            dropped_before = True
            continue
        kept.append(word)
        kept_joins.append(join and not dropped_before)
        dropped_before = False
    return kept, kept_joins


def separator_joins(separator: str) -> bool:
    """Rule 4: whether two words with this text between them may be one word split."""
    return separator.isspace() or (len(separator) == 1 and separator in JOINING_MARKS)


class _KnownSeparators(dict[str, bool]):
    """`separator_joins` of the separators met so far (a text's are mostly a few: a space, a line break), up to
    `_KNOWN_SEPARATORS` of them: one dictionary lookup a separator, no call."""

    def __missing__(self, separator: str) -> bool:
        joins = separator_joins(separator)
        if len(self) < _KNOWN_SEPARATORS:
            self[separator] = joins
        return joins


_KNOWN_SEPARATORS = 4096
_SEPARATORS_JOIN = _KnownSeparators()


def compound_tokens(base: list[str], joins: list[bool]) -> list[str]:
    """Rule 4: each pair of adjacent ASCII base tokens joined (`heap` + `sort` -> `heapsort`), at most 80 long,
    where the second joins the first (`joins`, of `base_tokens_and_joins`)."""
    return [first + second for first, second, join in zip(base, base[1:], joins[1:])
            if join and first.isascii() and second.isascii() and len(first + second) <= MAX_TOKEN_LENGTH]


def cjk_bigrams(normalized: str) -> list[str]:
    """Rule 5 on normalized text: the overlapping two-character pieces of every CJK/Hangul run of its base
    tokens (of any length), in text order."""
    if normalized.isascii() or not _CJK_BLOCKS.search(normalized):
        return []
    return [run[i:i + 2] for run in _unicode().cjk_run.findall(normalized) for i in range(len(run) - 1)]
