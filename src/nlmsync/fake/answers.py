"""Offline answers for the fake `notebook_query`: the best passages of the asked sources, quoted and cited.

`split_passages` cuts a source into passages: its paragraphs after any YAML front matter (long ones into
windows of whole sentences), a fenced code block whole. Headings are not passages: a heading is the
`context` of the paragraphs under it, together with the source's titles (front matter `title`, a first
heading before any text). Context words count when a passage is ranked; only the paragraph is quoted.

`compose_answer` ranks the passages as an extractive answerer would, by the question's content words
(`search.query.query_terms`: stop words dropped, so "what is its …" does not pull in passages for "what").
A passage's score is the product of

- its BM25 among all the passages (`search.bm25`, tokens by `search.tokenize.tokenize`): the rarer of the
  question's words count more;
- its coverage, squared: the share of the question's words it has (a compound such as `heapsort` for
  "heap sort" stands for both its words; a word in some source's title, which names what the question is
  about, counts double), so a passage that has more of the question beats one that shares a word with it;
- its source's weight: the source's own BM25 among the sources (title and heading words weighted like the
  note index's, each term's IDF taken over the passages, since a handful of sources says little about
  which words are rare) times the source's coverage, over the best source's. Passages of the sources
  that match the whole question come first.

Over the fixture vault's notes, "How does heapsort work?" thus quotes the heapsort note's "How does it
work?" section (it has both words, "heapsort" by its title) and not the physics note's line about "heat
and work", which shares only "work". The answer quotes the best few passages, with `citations`
{"1": source_id} and `references` [{source_id, citation_number, cited_text}] shaped like the real server's.
Pure, deterministic functions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from nlmsync.search import markdown_lines, query_terms
from nlmsync.search.bm25 import rank_counts
from nlmsync.text import parse_front_matter, tokenize

__all__ = ["NO_ANSWER", "Passage", "compose_answer", "split_passages"]

MAX_PASSAGE_WORDS = 120
MAX_CITED = 3
# A passage must score at least this share of the best one to be quoted next to it.
RELATIVE_CUTOFF = 0.35
# A source's title and heading words count this many times in the source's own score (the note index's
# default `weight_heading`): a note titled "Binary heap" is about binary heaps, one that mentions one is not.
HEADING_WEIGHT = 2.5
# A passage's score is multiplied by its coverage (the share of the question's words it has) to this power:
# one that has half of them keeps a quarter of its score, so it is quoted beside a passage that answers the
# whole question only if it matches its half much better.
PASSAGE_COVERAGE_POWER = 2
# In coverage, a word of the question that is in some source's title (it names what the question is about,
# as "heapsort" does, where "work" does not) counts this many times.
TITLE_WORD_WEIGHT = 2.0
NO_ANSWER = "The selected sources do not seem to say anything about this question."
# Sources whose passages and token counts are kept between questions (a source's text never changes under its
# id): a question to a notebook of large sources then costs what ranking costs, not what tokenizing them costs.
SOURCES_KEPT = 64

# The question's terms counted in a stretch of text, and its length in tokens (both weighted for a heading).
_Counted = tuple[dict[str, float], float]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Passage:
    """A quotable stretch of a source; `context`: the titles and heading above it (ranked, not quoted)."""

    source_id: str
    text: str
    context: tuple[str, ...] = ()


def _windows(paragraph: str) -> list[str]:
    """Whole sentences grouped into windows of at most MAX_PASSAGE_WORDS words (a longer sentence stays whole)."""
    windows: list[str] = []
    current: list[str] = []
    words = 0
    for sentence in _SENTENCE_END.split(paragraph):
        count = len(sentence.split())
        if current and words + count > MAX_PASSAGE_WORDS:
            windows.append(" ".join(current))
            current, words = [], 0
        current.append(sentence)
        words += count
    if current:
        windows.append(" ".join(current))
    return windows


def _flat(text: str) -> str:
    return " ".join(text.split())


def split_passages(source_id: str, text: str) -> list[Passage]:
    """The passages of one source, in order. Front matter, headings and blank text give none."""
    return _split(source_id, text)[1]


def _split(source_id: str, text: str) -> tuple[tuple[str, ...], list[Passage]]:
    """The source's titles (front matter `title`, a first heading before any text) and its passages."""
    front = parse_front_matter(text)
    title = front.data.get("title")
    titles = [_flat(title)] if isinstance(title, str) and title.strip() else []
    heading = ""
    passages: list[Passage] = []
    block: list[str] = []  # the lines of the open paragraph or code block

    def close() -> None:
        flat = _flat(" ".join(block))
        block.clear()
        if not _WORD.search(flat):  # a rule (`***`), an empty fence: nothing to quote
            return
        context = tuple(dict.fromkeys(c for c in (*titles, heading) if c))
        for window in _windows(flat) if len(flat.split()) > MAX_PASSAGE_WORDS else [flat]:
            passages.append(Passage(source_id, window, context))

    in_code = False
    for line in markdown_lines(text, front.body_start):
        if line.kind == "code":  # a fenced block is one passage, blank lines and all
            if not in_code:
                close()
                in_code = True
            block.append(line.text)
            continue
        if in_code:
            close()
            in_code = False
        if line.kind in ("heading", "setext"):
            if line.kind == "setext":  # the lines above the underline are the heading, not text
                del block[len(block) - line.absorbed:]
            close()
            if not passages and not heading and _flat(line.text) not in titles:
                titles.append(_flat(line.text))  # the first heading, before any text, titles the source
            heading = _flat(line.text)
        elif line.kind == "text":
            block.append(line.text)
        else:
            close()
    close()
    return tuple(titles), passages


def _term_groups(terms: Sequence[str]) -> list[frozenset[str]]:
    """The question's words for coverage: each distinct plain term with the question's compounds made from it.

    A passage that writes "heapsort" has both words of "heap sort"; the compound is no word of its own.
    """
    distinct = list(dict.fromkeys(terms))
    present = set(distinct)
    parts = {t: {t[:i], t[i:]} for t in distinct for i in range(1, len(t))
             if t[:i] in present and t[i:] in present}
    return [frozenset({t, *(c for c, words in parts.items() if t in words)})
            for t in distinct if t not in parts]


def _coverage(units: Sequence[_Counted], groups: Sequence[tuple[frozenset[str], float]]) -> list[float]:
    """Per unit, the weighted share of the question's words (`groups`, each with its weight) it has."""
    total = sum(weight for _, weight in groups)
    return [sum(weight for group, weight in groups if not group.isdisjoint(counts)) / total
            for counts, _ in units]


def _bm25(query_tf: Counter[str], doc_freqs: dict[str, int], doc_count: int, units: Sequence[_Counted]) -> list[float]:
    """BM25 of each unit, each term's IDF taken over `doc_count` passages of which `doc_freqs` hold it."""
    avg_len = sum(length for _, length in units) / len(units)
    return rank_counts(query_tf, [counts for counts, _ in units], [length for _, length in units],
                       doc_count=doc_count, avg_len=avg_len, doc_freqs=doc_freqs)


@dataclass(frozen=True)
class _Source:
    """A source as the answers read it: its titles, its passages, and each passage's token counts and length."""

    titles: tuple[str, ...]
    passages: list[Passage]
    tokens: list[tuple[Counter[str], int]]


@lru_cache(maxsize=SOURCES_KEPT)
def _read(source_id: str, text: str) -> _Source:
    titles, passages = _split(source_id, text)
    return _Source(titles, passages, [_tokens(p.text) for p in passages])


@lru_cache(maxsize=4096)
def _heading_tokens(text: str) -> tuple[Counter[str], int]:
    return _tokens(text)


def _tokens(text: str) -> tuple[Counter[str], int]:
    tokens = tokenize(text)
    return Counter(tokens), len(tokens)


def _ranked(terms: Sequence[str], read: Sequence[_Source]) -> list[tuple[float, int]]:
    """(score, passage index) of every passage that matches, best first (ties in source order)."""
    wanted = set(terms)

    def counted(tokens: tuple[Counter[str], int], weight: float = 1.0) -> _Counted:
        counts, length = tokens
        return {t: weight * counts[t] for t in wanted if t in counts}, weight * length

    def merged(parts: Sequence[_Counted]) -> _Counted:
        counts: dict[str, float] = {}
        for part, _ in parts:
            for t, n in part.items():
                counts[t] = counts.get(t, 0.0) + n
        return counts, sum(length for _, length in parts)

    headings: dict[str, _Counted] = {heading: counted(_heading_tokens(heading)) for source in read
                                     for p in source.passages for heading in p.context}
    units: list[_Counted] = []  # each passage: its context and its text
    sources: list[_Counted] = []  # each source: its passages' text, and each of its headings weighted once
    titled: set[str] = set()  # the question's terms in some source's title
    for source in read:
        texts = [counted(tokens) for tokens in source.tokens]
        units.extend(merged([*(headings[h] for h in p.context), text])
                     for p, text in zip(source.passages, texts, strict=True))
        own = dict.fromkeys(h for p in source.passages for h in p.context)
        sources.append(merged([*texts, *(counted(_heading_tokens(h), HEADING_WEIGHT) for h in own)]))
        if source.passages:
            titled.update(t for title in source.titles for t in counted(_heading_tokens(title))[0])
    groups = [(g, TITLE_WORD_WEIGHT if not g.isdisjoint(titled) else 1.0) for g in _term_groups(terms)
              if any(not g.isdisjoint(counts) for counts, _ in units)]
    if not groups:
        return []
    query_tf = Counter(terms)
    # Each term's IDF over the passages: a handful of sources says little about which words are rare.
    doc_freqs = {t: sum(1 for counts, _ in units if t in counts) for t in query_tf}
    source_scores = [score * coverage for score, coverage in
                     zip(_bm25(query_tf, doc_freqs, len(units), sources), _coverage(sources, groups), strict=True)]
    top_source = max(source_scores)
    weights = [source_scores[i] / top_source for i, source in enumerate(read) for _ in source.passages]
    scores = [score * coverage ** PASSAGE_COVERAGE_POWER * weight for score, coverage, weight in
              zip(_bm25(query_tf, doc_freqs, len(units), units), _coverage(units, groups), weights, strict=True)]
    return sorted(((s, i) for i, s in enumerate(scores) if s > 0), key=lambda pair: (-pair[0], pair[1]))


def compose_answer(question: str, sources: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Answer `question` from `sources` (pairs of source id and text).

    Returns the answer fields of a real `notebook_query` result: `answer`, `sources_used`, `citations`,
    `references`. With no matching passage the answer says so and cites nothing.
    """
    terms = query_terms(question)
    read = [_read(source_id, text) for source_id, text in sources]
    passages = [p for source in read for p in source.passages]
    ranked = _ranked(terms, read) if terms and passages else []
    if not ranked:
        return {"answer": NO_ANSWER, "sources_used": [], "citations": {}, "references": []}
    best = ranked[0][0]
    chosen = [i for s, i in ranked[:MAX_CITED] if s >= best * RELATIVE_CUTOFF]
    lines = ["From the selected sources:"]
    citations: dict[str, str] = {}
    references: list[dict[str, Any]] = []
    used: dict[str, None] = {}
    for number, index in enumerate(chosen, start=1):
        passage = passages[index]
        lines.append(f"> {passage.text} [{number}]")
        citations[str(number)] = passage.source_id
        references.append({"source_id": passage.source_id, "citation_number": number, "cited_text": passage.text})
        used[passage.source_id] = None
    return {"answer": "\n\n".join(lines), "sources_used": list(used), "citations": citations,
            "references": references}
