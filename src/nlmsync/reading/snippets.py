"""Query-aware snippet extraction (seed 004): `extract_snippet(content, query, max_length)`.

The content is cut into segments (`reading.segments`) — fenced code blocks and `def`/`class`/`function`/`func`
bodies whole (bracket matched), the rest by paragraph, long paragraphs by sentence — each with its offsets
in the original text. With a query, segments are scored with BM25 (`rank_texts` over `tokenize`, the
query's terms from `search.query.query_terms` — stop words removed —, a query term also matching
words it prefixes: `auth` → `authentication`), code gets a 1.3x bonus and earlier text a slight one; the best segments that fit are joined with " … " in reading
order. Without a query (or with no match) the text is truncated at a sentence, word or bracket
boundary. A snippet never exceeds `max_length` and never splits a grapheme.

Cost. A note of up to `EXACT_LIMIT` characters (after front matter) is segmented and scored whole,
exactly as described above; the work is linear in its size (the snippet's length is kept up to date
as segments are added, instead of re-joining the chosen segments for every candidate).

A longer note (exports, logs, transcripts) is first narrowed by a linear pre-pass, and only the
narrowed text is segmented and scored:

1. The note is cut into fixed windows of `max(WINDOW, 4 * max_length)` characters, each normalized
   like `tokenize` does (NFKC, lower case). A window's score is BM25 over windows, with each query
   term's tf the number of times it occurs in the window as a substring (`str.count`, no
   tokenizing); a term with a shorter query term of 3+ characters as its prefix (the compound
   `heapsort` of `heap sort`) is not counted on its own, its prefix counts it. Earlier windows get
   the same slight bonus as earlier segments.
2. In score order (ties: the earlier window), the first `WINDOWS` windows where some term starts a
   word (any occurrence, for a term beyond ASCII such as a CJK bigram; a whole word, for a term
   shorter than 3 characters) are kept — so a window full of `cheap` does not stand for `heap`.
3. Each kept window is widened by up to half a window on both sides, to a blank line, else a line
   break, else a space; overlapping ones merge. Their segments (cut as above, each widened window
   on its own) are scored with BM25 statistics from these segments only; selection and joining are
   as above, positions counted in the whole note.

If no window qualifies, the note is treated as having no match (its beginning). So on a long note
the snippet may differ from what scoring the whole note would give — different BM25 statistics,
and a match only through a compound of words written apart (`heapsort` in a note that writes
`heap sort`) is not found — but it is drawn from the best windows and costs a few passes of
`str.count` over the note instead of tokenizing all of it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence

from nlmsync.config import SNIPPET_K1
from nlmsync.reading.segments import PARAGRAPH_BREAK, Segment, segment_text
from nlmsync.search.bm25 import rank_counts, rank_texts
from nlmsync.search.query import query_terms
from nlmsync.text import front_matter_end, normalize, tokenize

__all__ = ["EXACT_LIMIT", "SEPARATOR", "extract_snippet", "match_terms"]

SEPARATOR = " … "
TRAILER = " …"
CODE_BONUS = 1.3
POSITION_PENALTY = 0.2
MIN_PREFIX_MATCH = 3
EXACT_LIMIT = 65_536  # characters: a longer note is narrowed to its best windows first (module docstring)
WINDOW = 2048
WINDOWS = 4
JOIN_LIMIT = 10  # a gap shorter than this, all whitespace, joins two segments as it is; others are " … "


_NON_SPACE = re.compile(r"\S")  # the standard library's \s is str.isspace, what str.rstrip strips


def match_terms(tokens: Iterable[str], terms: Sequence[str]) -> list[str]:
    """Map document tokens onto query terms: exact, or a term of 3+ characters that prefixes the token.

    Tokens matching no term are kept as they are, so document lengths stay honest for BM25.
    """
    exact = set(terms)
    prefixes = [t for t in exact if len(t) >= MIN_PREFIX_MATCH]
    lengths = sorted({len(t) for t in prefixes}, reverse=True)
    heads = {t[:MIN_PREFIX_MATCH] for t in prefixes}  # cheap first filter: most tokens share no head
    mapped: list[str] = []
    for token in tokens:
        if token not in exact and token[:MIN_PREFIX_MATCH] in heads:
            for n in lengths:
                if n < len(token) and token[:n] in exact:
                    token = token[:n]
                    break
        mapped.append(token)
    return mapped


# --- selection -----------------------------------------------------------------------------------

def _join(text: str, first: Segment, second: Segment) -> str:
    """What stands between two segments in a snippet: their own gap if short and blank, else " … "."""
    if second.start - first.end < JOIN_LIMIT:  # the length first: a gap may be megabytes long
        gap = text[first.end:second.start]
        if not gap.strip():
            return gap
    return SEPARATOR


def _assemble(text: str, chosen: list[Segment]) -> str:
    """Join segments in reading order: adjacent ones with their own whitespace, others with " … "."""
    parts: list[str] = []
    previous: Segment | None = None
    for seg in sorted(chosen, key=lambda s: s.start):
        if previous is not None:
            parts.append(_join(text, previous, seg))
        parts.append(text[seg.start:seg.end])
        previous = seg
    return "".join(parts)


class _Layout:
    """Segments chosen so far and `len(_assemble(text, chosen))`, kept up to date as segments are added.

    Adding a segment changes the length by its own length and the joins on either side of it, less
    the join it replaces — so trying a candidate costs a bisection, not a join of all chosen text.
    """

    __slots__ = ("_segments", "_starts", "_text", "length")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] = []
        self._segments: list[Segment] = []
        self.length = 0

    def _join_length(self, first: Segment, second: Segment) -> int:
        return len(_join(self._text, first, second))

    def length_with(self, seg: Segment) -> int:
        """The snippet's length if `seg` (not yet chosen) were added."""
        k = bisect_left(self._starts, seg.start)
        before = self._segments[k - 1] if k > 0 else None
        after = self._segments[k] if k < len(self._segments) else None
        length = self.length + seg.end - seg.start
        if before is not None:
            length += self._join_length(before, seg)
        if after is not None:
            length += self._join_length(seg, after)
        if before is not None and after is not None:
            length -= self._join_length(before, after)
        return length

    def add(self, seg: Segment, length: int) -> None:
        """Add `seg`, whose `length_with` was `length`."""
        k = bisect_left(self._starts, seg.start)
        self._starts.insert(k, seg.start)
        self._segments.insert(k, seg)
        self.length = length


def _query_snippet(text: str, segments: list[Segment], terms: list[str], max_length: int) -> str | None:
    scores = _segment_scores(text, segments, terms)
    weighted: list[tuple[float, int]] = []
    for i, (seg, score) in enumerate(zip(segments, scores)):
        if score <= 0:
            continue
        position = 1.0 - POSITION_PENALTY * (seg.start / len(text))
        weighted.append((score * position * (CODE_BONUS if seg.code else 1.0), i))
    if not weighted:
        return None
    weighted.sort(key=lambda pair: (-pair[0], pair[1]))
    layout = _Layout(text)
    chosen: list[int] = []
    for _, i in weighted:
        length = layout.length_with(segments[i])
        if length <= max_length:
            chosen.append(i)
            layout.add(segments[i], length)
    return _assemble(text, [segments[j] for j in _with_context(text, segments, chosen, layout, max_length)])


def _segment_scores(text: str, segments: list[Segment], terms: list[str]) -> list[float]:
    """`rank_texts` of the segments' tokens (mapped by `match_terms`) against `terms`.

    A segment none of whose tokens contains a query term cannot score: `match_terms` leaves its
    tokens as they are and BM25 only needs how many there are, so it is passed as that many empty
    strings (never a term) — the same scores, without mapping or counting its words.
    """
    distinct = set(terms)
    docs: list[list[str]] = []
    for seg in segments:
        tokens = tokenize(text[seg.start:seg.end])
        joined = " ".join(tokens)  # a term within a token is within this, and the other way round
        if any(term in joined for term in distinct):
            docs.append(match_terms(tokens, terms))
        else:
            docs.append([""] * len(tokens))
    return rank_texts(terms, docs, k1=SNIPPET_K1)


def _with_context(text: str, segments: list[Segment], chosen: list[int], layout: _Layout,
                  max_length: int) -> list[int]:
    """Grow the chosen segments (best first) with the segments right after, then right before them,
    within their paragraph and while the snippet still fits: context around a match, no new gap.

    `layout` holds the chosen segments and is grown with them.
    """
    taken = list(chosen)
    in_taken = set(taken)
    grown = True
    while grown:
        grown = False
        for i in list(taken):
            for j in (i + 1, i - 1):
                if j < 0 or j >= len(segments) or j in in_taken or segments[j].code:
                    continue
                first, second = sorted((segments[i], segments[j]), key=lambda s: s.start)
                if second.start - first.end >= JOIN_LIMIT:
                    continue
                gap = text[first.end:second.start]
                if gap.strip() or PARAGRAPH_BREAK.search(gap):
                    continue
                length = layout.length_with(segments[j])
                if length <= max_length:
                    taken.append(j)
                    in_taken.add(j)
                    layout.add(segments[j], length)
                    grown = True
    return taken


def _leading_snippet(text: str, max_length: int, *, more_follows: bool) -> str:
    """Whole segments from the start, then " …" when text was left out (room is kept for it)."""
    room = max(1, max_length - len(TRAILER))
    segments = segment_text(text, room)
    layout = _Layout(text)
    chosen: list[Segment] = []
    for seg in segments:
        length = layout.length_with(seg)
        if length > room:
            break
        chosen.append(seg)
        layout.add(seg, length)
    snippet = _assemble(text, chosen)
    if (len(chosen) < len(segments) or more_follows) and len(snippet) + len(TRAILER) <= max_length:
        snippet += TRAILER
    return snippet


# --- long notes: the windows worth scoring -------------------------------------------------------

def _probe_terms(terms: list[str]) -> dict[str, int]:
    """The terms the pre-pass counts, with how often the query has them: all but those that a
    shorter term of 3+ characters prefixes (its occurrences are that term's too)."""
    weights = Counter(terms)
    prefixes = [t for t in weights if len(t) >= MIN_PREFIX_MATCH]
    return {term: qtf for term, qtf in weights.items()
            if not any(p != term and term.startswith(p) for p in prefixes)}


def _starts_a_word(window: str, term: str) -> bool:
    """Whether `term` occurs in `window` where a token matching it could start (see the docstring).

    A window has the character before it and the one after it at its ends (a space at the note's
    ends), so a word cut by the window's edge is not taken for one starting there.
    """
    if not term.isascii():
        return term in window
    whole = len(term) < MIN_PREFIX_MATCH
    i = window.find(term, 1)
    while i >= 0:
        end = i + len(term)
        if not window[i - 1].isalnum() and (not whole or (end < len(window) and not window[end].isalnum())):
            return True
        i = window.find(term, i + 1)
    return False


def _snap(text: str, pos: int, limit: int, *, back: bool) -> int:
    """`pos` moved towards `limit` (at most) to just after a blank line, else a line break, else a space
    (`back`), or to just before one (forward); `pos` itself if there is none."""
    for mark in ("\n\n", "\n", " "):
        if back:
            found = text.rfind(mark, limit, pos)
            if found >= 0:
                return found + len(mark)
        else:
            found = text.find(mark, pos, limit)
            if found >= 0:
                return found
    return pos


def _padded_window(text: str, start: int, size: int) -> str:
    """`f" {text} "[start:start + size + 2]` without copying the whole text."""
    before = text[start - 1] if start else " "
    after = " " if start + size >= len(text) else ""
    return before + text[start:start + size + 1] + after


def _window_segments(text: str, terms: list[str], max_length: int) -> list[Segment]:
    """The segments of the best windows of a long `text` for `terms` (module docstring), in order."""
    size = max(WINDOW, 4 * max_length)
    probes = _probe_terms(terms)
    # window k is text[k * size - 1:(k + 1) * size + 1], a space standing in past either end (see
    # `_starts_a_word`); cut from the note one at a time, never a padded or lowered copy of the whole note
    fold = str.lower if text.isascii() else normalize  # normalizing ASCII is lowering
    windows = [fold(_padded_window(text, a, size)) for a in range(0, len(text), size)]
    n = len(windows)
    counts = {term: [w.count(term) for w in windows] for term in probes}
    # BM25 over the windows, each of length 1 (no length normalization)
    in_window = [{term: tfs[k] for term, tfs in counts.items() if tfs[k]} for k in range(n)]
    totals = rank_counts(probes, in_window, [1.0] * n, doc_count=n, avg_len=1.0, k1=SNIPPET_K1, b=0.0)
    scored = [(score * (1.0 - POSITION_PENALTY * (k * size / len(text))), k)
              for k, score in enumerate(totals) if score > 0]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    kept: list[int] = []
    for _, k in scored:
        if any(counts[term][k] and _starts_a_word(windows[k], term) for term in probes):
            kept.append(k)
            if len(kept) == WINDOWS:
                break
    spans: list[tuple[int, int]] = []
    for k in sorted(kept):
        start, end = k * size, min(len(text), (k + 1) * size)
        start = _snap(text, start, max(0, start - size // 2), back=True)
        end = _snap(text, end, min(len(text), end + size // 2), back=False)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    segments: list[Segment] = []
    for start, end in spans:
        segments.extend(Segment(start + s.start, start + s.end, s.code)
                        for s in segment_text(text[start:end], max_length))
    return segments


def extract_snippet(content: str, query: str | None = None, max_length: int = 300) -> str:
    """The most useful excerpt of `content` for `query`, at most `max_length` characters.

    With query terms that occur in the content: the best-scoring segments joined with " … ".
    Otherwise: the beginning of the content, cut at a boundary. Leading YAML front matter is skipped.
    A note longer than `EXACT_LIMIT` characters is scored in its best windows only (module docstring).

    Raises:
        ValueError: `max_length` is smaller than 1.
    """
    if max_length < 1:
        raise ValueError("max_length must be at least 1")
    text = content[front_matter_end(content):]
    terms = query_terms(query)
    if terms:
        if len(text) <= EXACT_LIMIT:
            segments = segment_text(text, max_length)
        else:
            segments = _window_segments(text, terms, max_length)
        snippet = _query_snippet(text, segments, terms, max_length) if segments else None
        if snippet is not None:
            return snippet
    # Only the beginning can matter: segment a bounded prefix, not a whole huge note.
    prefix = text[:max_length * 4 + 2000]
    more_follows = _NON_SPACE.search(text, len(prefix)) is not None  # not `text.rstrip()`: a copy of it all
    return _leading_snippet(prefix, max_length, more_follows=more_follows)
