"""Offline answers for the fake `notebook_query`: the best passages of the asked sources, quoted and cited.

A source is read as the notes it holds: one, or, for a source packing many notes (its text starts with a
heading naming a note's path, `# notes/heapsort.md`, and each note follows under such a heading after a blank
line), each note on its own. A packed note is then ranked as it would be uploaded alone, so an answer leads with
the note that answers the question whether the notebook holds it alone or in a pack.

`split_passages` cuts a note into passages: its paragraphs after any YAML front matter (long ones into
windows of whole sentences), a fenced code block whole, a table with its rows on their lines (a long one into
windows of whole rows, each under the table's header), so it is quoted as a table. Headings are not passages: a
heading is the `context` of the paragraphs under it, together with the note's titles (front matter `title`, a
first heading before any text). Context words count when a passage is ranked; only the paragraph is quoted.

`compose_answer` ranks the passages as an extractive answerer would, by the question's content words
(`search.query.query_terms`: stop words dropped, so "what is its …" does not pull in passages for "what").
A passage's score is the product of

- its BM25 among all the passages (`search.bm25.rank_counts`, the scorer of every passage nlmsync ranks; tokens
  by the text package's tokenizer): the rarer of the question's words count more;
- its coverage, squared: the share of the question's words it has (a compound such as `heapsort` for
  "heap sort" stands for both its words; a word in some note's title, which names what the question is
  about, counts double), so a passage that has more of the question beats one that shares a word with it;
- its note's weight: the note's own BM25 among the notes (title and heading words weighted like the
  note index's, each term's IDF taken over the passages, since a handful of notes says little about
  which words are rare) times the note's coverage, over the best note's. Passages of the notes
  that match the whole question come first.

When the notes asked are in several languages, only those in the question's language are quoted, if any of them
matches (`text.question_language` among the notes' languages).

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
from nlmsync.search.bm25 import Weights, rank_counts
from nlmsync.text import parse_front_matter, question_language, text_language, tokenize
from nlmsync.vault import has_note_suffix

__all__ = ["NO_ANSWER", "Passage", "compose_answer", "split_passages"]

MAX_PASSAGE_WORDS = 120
MAX_CITED = 3
# A passage must score at least this share of the best one to be quoted next to it.
RELATIVE_CUTOFF = 0.35
# A note's title and heading words count this many times in the note's own score (the note index's
# default heading weight): a note titled "Binary heap" is about binary heaps, one that mentions one is not.
HEADING_WEIGHT = Weights.heading
# A passage's score is multiplied by its coverage (the share of the question's words it has) to this power:
# one that has half of them keeps a quarter of its score, so it is quoted beside a passage that answers the
# whole question only if it matches its half much better.
PASSAGE_COVERAGE_POWER = 2
# In coverage, a word of the question that is in some note's title (it names what the question is about,
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
# A table's delimiter row (`| --- | :-: |`), the line under its header
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
# A line that may open a packed note: a level-one heading (a note's path, if it ends in `.md`)
_PATH_HEADING = re.compile(r"^# (.+)$", re.MULTILINE)


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


def _table_windows(rows: list[str]) -> list[str]:
    """A table (header, delimiter row, rows) as passages of whole rows, each under the header, with at most
    MAX_PASSAGE_WORDS words where the rows allow; each row on its own line."""
    head, body = rows[:2], rows[2:]
    windows: list[list[str]] = [[]]
    words = len(" ".join(head).split())
    for row in body:
        count = len(row.split())
        if windows[-1] and words + count > MAX_PASSAGE_WORDS:
            windows.append([])
            words = len(" ".join(head).split())
        windows[-1].append(row)
        words += count
    return ["\n".join([*head, *window]) for window in windows]


def _table_start(lines: list[str]) -> int | None:
    """Where a table starts in a paragraph's lines (its header row, above a delimiter row), or None."""
    return next((i - 1 for i in range(1, len(lines))
                 if _TABLE_DELIMITER.match(lines[i]) and "|" in lines[i - 1] + lines[i]), None)


def split_passages(source_id: str, text: str) -> list[Passage]:
    """The passages of one source, in order, note by note. Front matter, headings and blank text give none."""
    return [passage for note in notes_of(text) for passage in _split(source_id, note)[1]]


def notes_of(text: str) -> list[str]:
    """The texts of the notes a source holds: each note of a pack (without its path heading), else the whole
    source."""
    starts = [found for found in _PATH_HEADING.finditer(text)
              if has_note_suffix(found.group(1)) and (found.start() == 0 or text.startswith("\n\n", found.start() - 2))]
    if not starts or starts[0].start() != 0:
        return [text]
    ends = [found.start() - 1 for found in starts[1:]] + [len(text)]  # the line break between two notes
    return [text[found.end() + 2:end] if text.startswith("\n\n", found.end()) else text[found.end() + 1:end]
            for found, end in zip(starts, ends)]


def _split(source_id: str, text: str) -> tuple[tuple[str, ...], list[Passage]]:
    """The note's titles (front matter `title`, a first heading before any text) and its passages."""
    front = parse_front_matter(text)
    title = front.data.get("title")
    titles = [_flat(title)] if isinstance(title, str) and title.strip() else []
    heading = ""
    passages: list[Passage] = []
    block: list[str] = []  # the lines of the open paragraph or code block

    def close(code: bool = False) -> None:
        lines = [line.strip() for line in block]
        block.clear()
        start = None if code else _table_start(lines)
        flat = _flat(" ".join(lines[:start]))  # the paragraph (above the table, if it has one)
        if _WORD.search(flat):  # a rule (`***`), an empty fence: nothing to quote
            add(_windows(flat) if len(flat.split()) > MAX_PASSAGE_WORDS else [flat])
        if start is not None:  # a table: quoted as a table
            add(_table_windows(lines[start:]))

    def add(windows: list[str]) -> None:
        context = tuple(dict.fromkeys(c for c in (*titles, heading) if c))
        passages.extend(Passage(source_id, window, context) for window in windows)

    in_code = False
    for line in markdown_lines(text, front.body_start):
        if line.kind == "code":  # a fenced block is one passage, blank lines and all
            if not in_code:
                close()
                in_code = True
            block.append(line.text)
            continue
        if in_code:
            close(code=True)
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
    close(code=in_code)
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
class _Note:
    """A note of a source as the answers read it: its titles, its passages, and each passage's token counts and
    length."""

    titles: tuple[str, ...]
    passages: list[Passage]
    tokens: list[tuple[Counter[str], int]]
    language: str


@lru_cache(maxsize=SOURCES_KEPT)
def _read(source_id: str, text: str) -> tuple[_Note, ...]:
    """The notes of a source, read."""
    notes = []
    for note in notes_of(text):
        titles, passages = _split(source_id, note)
        notes.append(_Note(titles, passages, [_tokens(p.text) for p in passages], text_language(note)))
    return tuple(notes)


@lru_cache(maxsize=4096)
def _heading_tokens(text: str) -> tuple[Counter[str], int]:
    return _tokens(text)


def _tokens(text: str) -> tuple[Counter[str], int]:
    tokens = tokenize(text)
    return Counter(tokens), len(tokens)


def _ranked(terms: Sequence[str], read: Sequence[_Note]) -> list[tuple[float, int]]:
    """(score, passage index) of every passage of the notes that matches, best first (ties in note order)."""
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

    headings: dict[str, _Counted] = {heading: counted(_heading_tokens(heading)) for note in read
                                     for p in note.passages for heading in p.context}
    units: list[_Counted] = []  # each passage: its context and its text
    notes: list[_Counted] = []  # each note: its passages' text, and each of its headings weighted once
    titled: set[str] = set()  # the question's terms in some note's title
    for note in read:
        texts = [counted(tokens) for tokens in note.tokens]
        units.extend(merged([*(headings[h] for h in p.context), text])
                     for p, text in zip(note.passages, texts, strict=True))
        own = dict.fromkeys(h for p in note.passages for h in p.context)
        notes.append(merged([*texts, *(counted(_heading_tokens(h), HEADING_WEIGHT) for h in own)]))
        if note.passages:
            titled.update(t for title in note.titles for t in counted(_heading_tokens(title))[0])
    groups = [(g, TITLE_WORD_WEIGHT if not g.isdisjoint(titled) else 1.0) for g in _term_groups(terms)
              if any(not g.isdisjoint(counts) for counts, _ in units)]
    if not groups:
        return []
    query_tf = Counter(terms)
    # Each term's IDF over the passages: a handful of notes says little about which words are rare.
    doc_freqs = {t: sum(1 for counts, _ in units if t in counts) for t in query_tf}
    note_scores = [score * coverage for score, coverage in
                   zip(_bm25(query_tf, doc_freqs, len(units), notes), _coverage(notes, groups), strict=True)]
    top_note = max(note_scores)
    weights = [note_scores[i] / top_note for i, note in enumerate(read) for _ in note.passages]
    scores = [score * coverage ** PASSAGE_COVERAGE_POWER * weight for score, coverage, weight in
              zip(_bm25(query_tf, doc_freqs, len(units), units), _coverage(units, groups), weights, strict=True)]
    return sorted(((s, i) for i, s in enumerate(scores) if s > 0), key=lambda pair: (-pair[0], pair[1]))


def compose_answer(question: str, sources: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Answer `question` from `sources` (pairs of source id and text).

    Returns the answer fields of a real `notebook_query` result: `answer`, `sources_used`, `citations`,
    `references`. With no matching passage the answer says so and cites nothing.
    """
    terms = query_terms(question)
    read = [note for source_id, text in sources for note in _read(source_id, text)]
    languages = {note.language for note in read if note.language and note.passages}
    if len(languages) > 1:  # the passages in the question's language, where the notebook has some that match
        language = question_language(question, languages)
        own = [note for note in read if note.language == language]
        if own and _ranked(terms, own):
            read = own
    passages = [p for note in read for p in note.passages]
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
        if "\n" in passage.text:  # a table: each row a line of the quote, the marker after it
            lines.append("\n".join(f"> {row}" for row in passage.text.split("\n")) + f"\n>\n> [{number}]")
        else:
            lines.append(f"> {passage.text} [{number}]")
        citations[str(number)] = passage.source_id
        references.append({"source_id": passage.source_id, "citation_number": number, "cited_text": passage.text})
        used[passage.source_id] = None
    return {"answer": "\n\n".join(lines), "sources_used": list(used), "citations": citations,
            "references": references}
