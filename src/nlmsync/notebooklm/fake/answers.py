"""Offline answers for the fake `notebook_query`: the best passages of the asked sources, quoted and cited.

`split_passages` cuts a source into paragraphs (long ones into windows of whole sentences);
`compose_answer` ranks every passage against the question's content words (`search.query.query_terms`:
stop words dropped, so "what is its …" does not pull in passages for "what") with BM25
(`search.bm25.rank_texts` over `search.tokenize.tokenize`), weighted by how well the passage's whole source
matches, and writes an answer quoting the best few, with `citations` {"1": source_id}
and `references` [{source_id, citation_number, cited_text}] shaped like the real server's. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from nlmsync.search.bm25 import rank_texts
from nlmsync.search.query import query_terms
from nlmsync.search.tokenize import tokenize

__all__ = ["NO_ANSWER", "Passage", "compose_answer", "split_passages"]

MAX_PASSAGE_WORDS = 120
MAX_CITED = 3
# A passage must score at least this share of the best one to be quoted next to it.
RELATIVE_CUTOFF = 0.35
NO_ANSWER = "The selected sources do not seem to say anything about this question."

_PARAGRAPH_BREAK = regex.compile(r"\n\s*\n")
_HEADING_ONLY = regex.compile(r"^#{1,6}\s[^\n]*$")
_SENTENCE_END = regex.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class Passage:
    source_id: str
    text: str


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


def split_passages(source_id: str, text: str) -> list[Passage]:
    """The passages of one source, in order; blank text gives none."""
    passages: list[Passage] = []
    heading = ""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        flat = " ".join(paragraph.split())
        if not flat:
            continue
        if _HEADING_ONLY.match(flat):  # a heading alone says little: it leads the paragraph after it
            heading = f"{heading} {flat}".strip()
            continue
        flat, heading = f"{heading} {flat}".strip(), ""
        for window in _windows(flat) if len(flat.split()) > MAX_PASSAGE_WORDS else [flat]:
            passages.append(Passage(source_id, window))
    if heading:
        passages.append(Passage(source_id, heading))
    return passages


def compose_answer(question: str, sources: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Answer `question` from `sources` (pairs of source id and text).

    Returns the answer fields of a real `notebook_query` result: `answer`, `sources_used`, `citations`,
    `references`. With no matching passage the answer says so and cites nothing.
    """
    per_source = [split_passages(source_id, text) for source_id, text in sources]
    passages = [p for source_passages in per_source for p in source_passages]
    query_tokens = query_terms(question)
    passage_tokens = [tokenize(p.text) for p in passages] if query_tokens else []
    scores = rank_texts(query_tokens, passage_tokens) if query_tokens else []
    if scores:
        # Passage-level IDF alone favours a rare word: "how does heapsort work" would quote a physics note's
        # one line about "work" above the heapsort note, where "heapsort" is everywhere. Weighting each
        # passage by how well its whole source matches the question keeps the answer on topic.
        # A source's tokens are its passages' tokens (the passages cover its whole text).
        source_tokens: list[list[str]] = []
        start = 0
        for source_passages in per_source:
            source_tokens.append([t for tokens in passage_tokens[start:start + len(source_passages)] for t in tokens])
            start += len(source_passages)
        source_scores = rank_texts(query_tokens, source_tokens)
        top_source = max(source_scores)
        weights = [source_scores[i] / top_source if top_source > 0 else 1.0
                   for i, source_passages in enumerate(per_source) for _ in source_passages]
        scores = [score * weight for score, weight in zip(scores, weights, strict=True)]
    ranked = sorted(((s, i) for i, s in enumerate(scores) if s > 0), key=lambda pair: (-pair[0], pair[1]))
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
