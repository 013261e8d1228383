"""From a query's text to the terms it is searched with (spec §3.3 step 1, "term frequencies in query").

The query is tokenized by the §3.1 rules, with two refinements that only the query side gets
(notes are always indexed whole, so nothing here changes what a note contains):

- **Stop words**: common English function words (`what`, `the`, `of`, …) are left out, unless the
  query has nothing else. A question such as "what are the effects of heating on the wing" then
  ranks by its content words instead of by the notes that say "the" and "of" most.
- **Compound tokens weigh a quarter** (`COMPOUND_QUERY_WEIGHT`), and none is made from a pair with a
  stop word in it. A compound of two adjacent query words is mostly a bonus for notes where the
  two also stand side by side, on top of the two words' own scores; at full weight that phrase
  bonus outweighs the words themselves. A quarter keeps its real use — a query `heap sort` still
  finds a note that only writes `heapsort`, and the other way round — without the double count.

Measured on the Cranfield collection (`benchmarks/search_peers.py`): nDCG@10 0.320 with every
token at weight 1 and no stop words, 0.366 with both refinements.
"""

from __future__ import annotations

from itertools import pairwise

from nlmsync.search.tokenize import MAX_TOKEN_LENGTH, base_tokens, cjk_bigrams, normalize

__all__ = ["COMPOUND_QUERY_WEIGHT", "STOP_WORDS", "query_terms", "query_weights"]

COMPOUND_QUERY_WEIGHT = 0.25

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
})


def _split(query: str, stop_words: bool) -> tuple[list[str], list[str]]:
    """The query's plain terms (kept base tokens, then CJK bigrams) and its compound terms."""
    normalized = normalize(query)
    base = base_tokens(normalized)
    stops = STOP_WORDS if stop_words and not STOP_WORDS.issuperset(base) else _NO_STOP_WORDS
    plain = [token for token in base if token not in stops]
    compounds = [left + right for left, right in pairwise(base)
                 if left.isascii() and right.isascii() and len(left) + len(right) <= MAX_TOKEN_LENGTH
                 and left not in stops and right not in stops]
    plain.extend(cjk_bigrams(normalized))
    return plain, compounds


_NO_STOP_WORDS: frozenset[str] = frozenset()


def query_weights(query: str, *, stop_words: bool = True) -> dict[str, float]:
    """Each query term with its weight: how often it occurs, a compound counting `COMPOUND_QUERY_WEIGHT`.

    `stop_words=False` keeps every word (the reference plugin's plain term frequencies, but for the
    compound weight).
    """
    weights: dict[str, float] = {}
    get = weights.get
    if query.isascii():  # what `_split` gives, in one pass: ASCII text has compounds of any pair and no bigrams
        base = base_tokens(normalize(query))
        stops = STOP_WORDS if stop_words and not STOP_WORDS.issuperset(base) else _NO_STOP_WORDS
        compounds = []
        previous = None  # the token before, unless it is a stop word
        for token in base:
            if token in stops:
                previous = None
                continue
            weights[token] = get(token, 0.0) + 1.0
            if previous is not None and len(previous) + len(token) <= MAX_TOKEN_LENGTH:
                compounds.append(previous + token)
            previous = token
    else:
        plain, compounds = _split(query, stop_words)
        for term in plain:
            weights[term] = get(term, 0.0) + 1.0
    for term in compounds:
        weights[term] = get(term, 0.0) + COMPOUND_QUERY_WEIGHT
    return weights


def query_terms(query: str | None) -> list[str]:
    """The query's terms as a token list, stop words left out (for scoring passages and snippets)."""
    if not query:
        return []
    plain, compounds = _split(query, stop_words=True)
    return plain + compounds
