"""From a query's text to the terms it is searched with, each weighted by how often the query has it.

The query is tokenized by the tokenizer's rules (`nlmsync.text`), with refinements that only the query side gets (notes are
always indexed whole, so nothing here changes what a note contains):

- **Stop words weigh a quarter** (`STOP_WORD_WEIGHT`): common English function words (`what`,
  `the`, `of`, …) still count, at a quarter of a content word and by their IDF like any term. A
  question such as "what are the effects of heating on the wing" then ranks by its content words,
  yet in a multilingual vault "and", "to", "the" still tell the English note from its translations.
  Negations (`not`, `no`, `don` of "don't", …; `NEGATIONS`) are no stop words: they carry meaning.
  A query of stop words only keeps them all at full weight.
- **Compound tokens weigh a quarter** (`COMPOUND_QUERY_WEIGHT`), and a quarter of that when a stop
  word forms them (`log in` → `login`, `set up` → `setup`). A compound of two adjacent query words is mostly a bonus
  for notes where the two also stand side by side; at full weight it would outweigh the words
  themselves. A quarter keeps its real use: `heap sort` still finds a note that only writes
  `heapsort`, and the other way round. A query forms them by the notes' rule 4 (`tokenize`): not
  across a comma, a colon, a bracket.
- **A CJK word counts once**, whatever its bigrams: the word itself weighs `CJK_WORD_SHARE` and its
  character bigrams share the rest (a two-character word is its only bigram: 1). Counted in full,
  an n-character word weighed n (a word and n-1 bigrams), so a query mixing Latin and CJK ranked a
  note matching only the CJK word above one matching every word. A Latin word written against a
  CJK one (`EKS의`, `gzip形式で`: one token) also counts on its own at `LATIN_IN_CJK_WEIGHT`, so it
  finds the note that writes `EKS` apart.

Measured with `benchmarks/known_items.py` (known-item sets from tldr and obsidian-help, tuned on one
half, reported on the other) and on Cranfield (`benchmarks/search_peers.py`); figures in docs/benchmarks.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator
from itertools import pairwise
from typing import TYPE_CHECKING

from nlmsync.text import (
    MAX_TOKEN_LENGTH,
    base_tokens_and_joins,
    cjk_bigrams,
    gap_joins,
    normalize,
    words,
    words_and_gaps,
)

if TYPE_CHECKING:
    import regex

__all__ = ["CJK_WORD_SHARE", "COMPOUND_QUERY_WEIGHT", "LATIN_IN_CJK_WEIGHT", "NEGATIONS", "STOP_WORDS",
           "STOP_WORD_WEIGHT", "coverage_terms", "function_words", "matched_words", "names_nothing", "query_terms",
           "query_weights", "query_words"]

COMPOUND_QUERY_WEIGHT = 0.25
STOP_WORD_WEIGHT = 0.25
CJK_WORD_SHARE = 0.8
LATIN_IN_CJK_WEIGHT = 0.5

# Not stop words, though in most lists: "Do not compress the output" is not "compress the output".
NEGATIONS = frozenset({"no", "nor", "not", "cannot", "aren", "didn", "doesn", "don", "hadn", "hasn", "haven", "isn",
                       "shan", "shouldn", "wasn", "weren", "won", "wouldn"})

STOP_WORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "cannot", "could", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during",
    "each", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven", "having",
    "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
    "is", "isn", "it", "its", "itself", "just", "let", "me", "more", "most", "my", "myself", "no",
    "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
    "ourselves", "out", "over", "own", "same", "shan", "she", "should", "shouldn", "so", "some", "such",
    "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn", "we",
    "were", "weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "won", "would", "wouldn", "you", "your", "yours", "yourself", "yourselves", "s", "t", "d", "ll",
    "m", "re", "ve",
}) - NEGATIONS


_LATIN = re.compile(r"[a-z0-9]+")


@functools.cache
def _cjk_char() -> regex.Pattern[str]:
    """A Han, kana or Hangul character (compiled on the first query that is not ASCII)."""
    import regex

    return regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")


# The stop-words package's code of a language the language model names otherwise (Norwegian Bokmål)
_LIST_CODES = {"no": "nb"}


@functools.cache
def function_words(language: str) -> frozenset[str]:
    """The stop words of a question in `language` (a language model's code): `STOP_WORDS` for English and for a
    question whose language is not told, the stop-words package's list of the language otherwise (its words as
    the index holds them), none for a language it has no list of."""
    if language in ("", "en"):
        return STOP_WORDS
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    code = _LIST_CODES.get(language, language)
    if code not in LANGUAGE_MAPPING:
        return frozenset()
    return frozenset(token for word in get_stop_words(code) for token in query_words(word))


def _token_weights(base: list[str], stop_words: bool, common: frozenset[str] = STOP_WORDS) -> list[float]:
    """Each base token's weight: 1, or `STOP_WORD_WEIGHT` for a stop word of `common` (unless all of them are)."""
    if not stop_words or common.issuperset(base):
        return [1.0] * len(base)
    return [STOP_WORD_WEIGHT if token in common else 1.0 for token in base]


def _compounds(base: list[str], joins: list[bool], token_weights: list[float]) -> Iterator[tuple[str, float]]:
    """Compounds of adjacent ASCII words (rule 4, `joins`), each weighing `COMPOUND_QUERY_WEIGHT` times its
    lighter word's weight."""
    for (left, right), join, weight in zip(pairwise(base), joins[1:], map(min, pairwise(token_weights))):
        if join and left.isascii() and right.isascii() and len(left) + len(right) <= MAX_TOKEN_LENGTH:
            yield left + right, COMPOUND_QUERY_WEIGHT * weight


def query_weights(query: str, *, stop_words: bool = True, common: frozenset[str] = STOP_WORDS) -> dict[str, float]:
    """Each query term with its weight: how often it occurs, a stop word (of `common`) counting
    `STOP_WORD_WEIGHT`, a compound `COMPOUND_QUERY_WEIGHT` (times its stop word's weight), a CJK word and its
    bigrams one together, a Latin word inside a CJK token `LATIN_IN_CJK_WEIGHT` more on its own.

    `stop_words=False` counts stop words in full (the reference plugin's plain term frequencies, but for
    the compound and CJK weights).
    """
    weights: dict[str, float] = {}
    get = weights.get
    normalized = normalize(query)
    base, joins = base_tokens_and_joins(normalized)
    token_weights = _token_weights(base, stop_words, common)
    for token, weight in zip(base, token_weights):
        weights[token] = get(token, 0.0) + weight
    for term, weight in _compounds(base, joins, token_weights):
        weights[term] = get(term, 0.0) + weight
    if not normalized.isascii():
        cjk_char = _cjk_char()
        for word in words(normalized):
            if word.isascii() or cjk_char.search(word) is None:
                continue
            if _LATIN.search(word):
                for latin in _LATIN.findall(word):
                    weights[latin] = get(latin, 0.0) + LATIN_IN_CJK_WEIGHT
            bigrams = cjk_bigrams(word)
            if not bigrams:
                continue
            share = CJK_WORD_SHARE
            if len(word) <= MAX_TOKEN_LENGTH:  # a base token: counted 1 above, keeps its share
                weights[word] -= 1.0 - share
            else:
                share = 0.0
            each = (1.0 - share) / len(bigrams)
            for term in bigrams:
                weights[term] = get(term, 0.0) + each
    return weights


def coverage_terms(query: str, *, stop_words: bool = True, language: str = "") -> dict[str, float]:
    """The terms a note must hold to hold the whole query, with their weights in it (`query_weights`' terms less
    what only helps a note that holds the words already: a compound of two words, and a CJK word, which its
    character pairs stand for), the stop words those of the query's `language` (`function_words`)."""
    weights = query_weights(query, stop_words=stop_words, common=function_words(language))
    normalized = normalize(query)
    base, joins = base_tokens_and_joins(normalized)
    # a compound the query does not also write as a word of its own
    extra = {term for term, _weight in _compounds(base, joins, [1.0] * len(base))}.difference(base)
    if not normalized.isascii():
        cjk_char = _cjk_char()
        extra.update(word for word in words(normalized)
                     if not word.isascii() and cjk_char.search(word) is not None
                     and cjk_bigrams(word) not in ([], [word]))
    return {term: weight for term, weight in weights.items() if term not in extra}


def query_words(query: str) -> list[str]:
    """The query's words as the index holds them (normalized, lowercased; rule 3's longest left out)."""
    return base_tokens_and_joins(normalize(query))[0]


def names_nothing(query: str) -> bool:
    """Whether every word of `query` is a stop word ("And why?", "What about it?"): it names nothing a note could be
    about, and only what was asked before tells what it means."""
    return all(word in STOP_WORDS for word in query_words(query))


def query_terms(query: str | None) -> list[str]:
    """The query's terms as a token list, stop words left out (for scoring passages and snippets):
    the kept base tokens, their CJK bigrams, then the compounds of two kept tokens side by side."""
    if not query:
        return []
    normalized = normalize(query)
    base, joins = base_tokens_and_joins(normalized)
    stops = _NO_STOP_WORDS if STOP_WORDS.issuperset(base) else STOP_WORDS
    plain = [token for token in base if token not in stops]
    compounds = [left + right for (left, right), join in zip(pairwise(base), joins[1:])
                 if join and left.isascii() and right.isascii() and len(left) + len(right) <= MAX_TOKEN_LENGTH
                 and left not in stops and right not in stops]
    plain.extend(cjk_bigrams(normalized))
    return plain + compounds


_NO_STOP_WORDS: frozenset[str] = frozenset()


def matched_words(query: str, terms: Collection[str]) -> list[str]:
    """The words of `query` that a hit's matched `terms` (of `query_weights(query)`) stand for, as the query
    writes them, in its order: what a person reads, rather than the index's terms.

    A compound that matched shows as the two words it joins (`heap sort`, not `heapsort`), matched CJK bigrams
    as the characters they cover; words and phrases that overlap are one phrase (`create a` and `a new vault`:
    `create a new vault`, words the note has side by side).
    """
    normalized = normalize(query)
    shown = query if len(query) == len(normalized) else normalized  # offsets into `normalized` fit it
    spans: list[tuple[int, int]] = []
    found, gaps = words_and_gaps(normalized)  # gaps: before the first word, between each two, after the last
    start = len(gaps[0])
    previous: tuple[str, int] | None = None  # the word before, and where it starts
    for i, word in enumerate(found):
        end = start + len(word)
        if len(word) <= MAX_TOKEN_LENGTH:
            if word in terms:
                spans.append((start, end))
            if (previous is not None and word.isascii() and previous[0].isascii()
                    and gap_joins(gaps[i]) and previous[0] + word in terms):
                spans.append((previous[1], end))
            previous = (word, start)
        else:
            previous = None
        if not word.isascii():
            spans.extend(_cjk_spans(word, start, terms))
        start = end + len(gaps[i + 1])
    return [shown[first:last] for first, last in _merged(spans)]


def _cjk_spans(word: str, start: int, terms: Collection[str]) -> Iterator[tuple[int, int]]:
    """The spans of a word's matched CJK bigrams, and of the Latin letters written inside it that matched."""
    for offset in range(len(word) - 1):
        pair = word[offset:offset + 2]
        if pair in terms and not pair.isascii():
            yield start + offset, start + offset + 2
    for latin in _LATIN.finditer(word):
        if latin.group() in terms and latin.group() != word:
            yield start + latin.start(), start + latin.end()


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` in order, those that overlap joined."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged
