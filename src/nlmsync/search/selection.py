"""The selection rule: which of a question's hits are sent (`ask`, `refresh --query`) or marked (`search`,
`search_notes`). docs/ranking.md says it for users.

1. **One copy of a page.** Hits that are copies of one page in different languages (`search.note_facts`: the same
   file name in parallel language folders, the same front-matter key, the same code and images) are one
   candidate, at the best copy's place and score, named by its copy in the question's language (the best-ranked
   one when it has none there).
2. **The question's language first.** A candidate in another language than the question's counts
   `OTHER_LANGUAGE_WEIGHT` of its score. The question's language is told among the languages the vault's notes are
   written in (in a vault of one language, it is that one, and nothing is told).
3. **Where the scores stop separating.** Of the first `top_n` candidates, those scoring at least `cutoff_ratio` of
   the best, the selection keeps those above the largest drop between two neighbours (the last of them is compared
   with the next candidate, or with nothing), when that drop is at least `SEPARATION` of the best score: a clear
   question sends the few notes above the drop, and where no drop is that large (a vague question), every one of
   them. At least `min_k` are kept.
4. **Weak matches.** When a word of the question that carries at least `UNHELD_SHARE` of it is in no note, and the
   best candidate holds less than `WEAK_COVERAGE` of the question — its words weighed by how rare they are in the
   vault (`bm25.idf`; a word no note holds as one note's) — nothing in the vault matches the question well: nothing
   is selected.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from nlmsync.search.bm25 import idf
from nlmsync.search.hits import Evidence, SearchHit
from nlmsync.search.note_facts import CODE_KEY, folder_codes, path_page
from nlmsync.store.index_codec import NoteFacts

__all__ = ["CANDIDATES_PER_NOTE", "OTHER_LANGUAGE_WEIGHT", "SEPARATION", "UNHELD_SHARE", "WEAK_COVERAGE", "Selection", "coverage",
           "one_copy_each", "select_notes", "separated"]

OTHER_LANGUAGE_WEIGHT = 0.5
SEPARATION = 0.2
WEAK_COVERAGE = 0.35
UNHELD_SHARE = 0.25
CANDIDATES_PER_NOTE = 4
"""Hits ranked per note the selection may keep (`top_n`): copies of one page take several."""
_MIN_LANGUAGE_NOTES = 2  # a language counts as the vault's with this many notes (not one note told wrong)


@dataclass(frozen=True)
class Selection:
    """What the selection rule made of a question's hits."""

    language: str
    """The question's language ("" when not told)."""
    hits: list[SearchHit]
    """The question's hits as ranked (what `search` lists)."""
    candidates: list[SearchHit]
    """The hits as the rule took them: one copy of each page, in the order the rule ranks them."""
    chosen: list[SearchHit]
    """The notes selected: the first candidates, none when the match is weak."""
    weak: bool
    """Nothing in the vault matches the question well (`WEAK_COVERAGE`)."""


class Rule(TypedDict):
    """The selection rule's numbers: at most `top_n` notes, those scoring at least `cutoff_ratio` of the best, and
    at least `min_k` of them."""

    top_n: int
    cutoff_ratio: float
    min_k: int


def select_notes(hits: Sequence[SearchHit], facts: Mapping[str, NoteFacts], languages: Mapping[str, int],
                 question_language: str, evidence: Evidence, terms: Mapping[str, float], **rule: Unpack[Rule]
                 ) -> Selection:
    """The selection of `hits` (ranked best first) by the selection rule (`rule`): `facts` of their notes,
    `languages` the vault's (notes per language), the question's language, and what the ranking found of the
    question's `terms` (`evidence`)."""
    top_n, cutoff_ratio, min_k = rule["top_n"], rule["cutoff_ratio"], rule["min_k"]
    vault_languages = {lang for lang, count in languages.items() if count >= _MIN_LANGUAGE_NOTES and lang}
    candidates = one_copy_each(hits, facts, vault_languages, question_language)
    if question_language and len(vault_languages) > 1:
        candidates = _language_first(candidates, facts, question_language)
    weak = not candidates or (coverage(candidates[0], terms, evidence) < WEAK_COVERAGE
                              and _unheld_share(terms, evidence) >= UNHELD_SHARE)
    kept = separated([hit.score for hit in candidates], top_n, cutoff_ratio, min_k)
    return Selection(question_language, list(hits), candidates, [] if weak else candidates[:kept], weak)


def one_copy_each(hits: Sequence[SearchHit], facts: Mapping[str, NoteFacts], languages: Collection[str],
                  question_language: str) -> list[SearchHit]:
    """`hits` with the copies of each page made one candidate (see the module), best first."""
    folders = folder_codes([hit.path for hit in hits], languages)
    group_of: dict[str, int] = {}  # a key -> the group holding it
    groups: list[list[SearchHit]] = []
    langs_of: list[set[str]] = []
    for hit in hits:
        fact = facts.get(hit.path, _UNKNOWN)
        keys = ["path:" + path_page(hit.path, folders), *(k for k in fact.pages if not k.startswith(CODE_KEY))]
        codes = [k for k in fact.pages if k.startswith(CODE_KEY)]
        found = next((group_of[k] for k in keys if k in group_of), None)
        if found is None:  # copies by their code and images only when in another language
            found = next((group_of[k] for k in codes if k in group_of and fact.lang
                          and fact.lang not in langs_of[group_of[k]]), None)
        if found is None:
            found = len(groups)
            groups.append([])
            langs_of.append(set())
        groups[found].append(hit)
        langs_of[found].add(fact.lang)
        for key in (*keys, *codes):
            group_of.setdefault(key, found)
    candidates = []
    for members in groups:
        named = next((hit for hit in members if facts.get(hit.path, _UNKNOWN).lang == question_language), members[0])
        candidates.append(named if named is members[0] else SearchHit(named.path, members[0].score,
                                                                       named.matched_terms))
    return candidates


def _language_first(candidates: list[SearchHit], facts: Mapping[str, NoteFacts], language: str) -> list[SearchHit]:
    """The candidates ranked by their scores, one in another language than `language` counting
    `OTHER_LANGUAGE_WEIGHT` of its score."""
    def weighed(hit: SearchHit) -> float:
        lang = facts.get(hit.path, _UNKNOWN).lang
        return hit.score if not lang or lang == language else hit.score * OTHER_LANGUAGE_WEIGHT

    ranked = sorted(range(len(candidates)), key=lambda i: (-weighed(candidates[i]), i))
    return [SearchHit(candidates[i].path, weighed(candidates[i]), candidates[i].matched_terms) for i in ranked]


def separated(scores: Sequence[float], top_n: int, cutoff_ratio: float, min_k: int) -> int:
    """How many of the candidates scoring `scores` (best first) the rule keeps (see the module, 3)."""
    if not scores or scores[0] <= 0:
        return 0
    best = scores[0]
    window = [score for score in scores[:top_n] if score >= best * cutoff_ratio]
    following = [*scores[len(window):len(window) + 1], 0.0][0]
    drops = [window[i] - (window[i + 1] if i + 1 < len(window) else following) for i in range(len(window))]
    largest = max(range(len(drops)), key=lambda i: (drops[i], -i))
    kept = largest + 1 if drops[largest] >= SEPARATION * best else len(window)
    return min(max(kept, min_k), len(scores), top_n)


def _df(term: str, evidence: Evidence) -> int:
    """The notes holding `term` or, counted as it, one of its forms searched."""
    return max([evidence.dfs.get(term, 0), *(evidence.dfs.get(form, 0)
                                             for form, word in evidence.forms.items() if word == term)])


def _mass(terms: Mapping[str, float], evidence: Evidence) -> dict[str, float]:
    """What each of the question's `terms` carries of it: its weight (a word written twice counts once) times its IDF
    in the vault, a term no note
    holds counting as one that one note holds (a word a vault lacks says no more than its rarest word: in a vault
    of a handful of notes, most words of a question are in none)."""
    notes = max(evidence.notes, 1)
    return {term: min(weight, 1.0) * idf(notes, max(_df(term, evidence), 1)) for term, weight in terms.items()}


def coverage(hit: SearchHit, terms: Mapping[str, float], evidence: Evidence) -> float:
    """The share of the question a hit holds: of its `terms`' mass (the words a note must hold to match the
    question, `query.coverage_terms`, each weighed by its IDF in the vault), what the hit's matched terms carry (a
    form of a word, `Evidence.forms`, holds the word)."""
    mass = _mass(terms, evidence)
    total = sum(mass.values())
    held = {evidence.forms.get(term, term) for term in hit.matched_terms}
    return sum(value for term, value in mass.items() if term in held) / total if total > 0 else 1.0


def _unheld_share(terms: Mapping[str, float], evidence: Evidence) -> float:
    """The largest share of the question's mass one term carries that no note holds."""
    mass = _mass(terms, evidence)
    total = sum(mass.values())
    unheld = [value for term, value in mass.items() if not _df(term, evidence)]
    return max(unheld) / total if unheld and total > 0 else 0.0


_UNKNOWN = NoteFacts("")
