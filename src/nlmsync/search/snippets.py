"""Query-aware snippet extraction (seed 004): `extract_snippet(content, query, max_length)`.

The content is cut into segments — fenced code blocks and `def`/`class`/`function`/`func` bodies
whole (bracket matched), the rest by paragraph, long paragraphs by sentence — each with its offsets in
the original text. With a query, segments are scored with BM25 (`rank_texts` over `tokenize`, the
query's terms from `search.query.query_terms` — stop words removed —, a query term also matching
words it prefixes: `auth` → `authentication`), code gets a 1.3x bonus and earlier text a slight one; the best segments that fit are joined with " … " in reading
order. Without a query (or with no match) the text is truncated at a sentence, word or bracket
boundary. A snippet never exceeds `max_length` and never splits a grapheme.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex

from nlmsync.search.bm25 import rank_texts
from nlmsync.search.query import query_terms
from nlmsync.search.tokenize import tokenize

__all__ = ["SEPARATOR", "Segment", "extract_snippet", "match_terms", "segment_text"]

SEPARATOR = " … "
TRAILER = " …"
CODE_BONUS = 1.3
POSITION_PENALTY = 0.2
PARAGRAPH_SPLIT_THRESHOLD = 200
MIN_PREFIX_MATCH = 3
SNIPPET_K1 = 1.5


_FRONT_MATTER = regex.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", regex.DOTALL)
_FENCE_OPEN = regex.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*$", regex.MULTILINE)
_CODE_HEADER = regex.compile(
    r"^[ \t]*(?:"
    r"(?:async[ \t]+)?def[ \t]+\w+[ \t]*\("
    r"|class[ \t]+\w+[ \t]*(?:[(:{<]|extends\b|implements\b)"
    r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+\w+[ \t]*(?:[({<]|extends\b|implements\b)"
    r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\b[ \t]*\*?[ \t]*\w*[ \t]*\("
    r"|func[ \t]+(?:\([^)\n]*\)[ \t]*)?\w+[ \t]*\("
    r")",
    regex.MULTILINE,
)
_PARAGRAPH_BREAK = regex.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = regex.compile(r"(?:[.!?]+[\"')\]]*(?=\s)|[。！？]+)\s*")
_WORD_GAP = regex.compile(r"\s+")
_GRAPHEME = regex.compile(r"\X")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


@dataclass(frozen=True, slots=True)
class Segment:
    """A span `text[start:end]` of the content; `code` marks a code block kept whole."""

    start: int
    end: int
    code: bool = False


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


# --- segmentation ---------------------------------------------------------------------------------

def _skip_string(text: str, i: int) -> int:
    """Index just past the string literal opening at `i` (single line, backslash escapes)."""
    quote = text[i]
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote or (ch == "\n" and quote != "`"):
            return j + 1
        j += 1
    return j


def _match_bracket(text: str, open_at: int) -> int | None:
    """Index just past the bracket that closes the one at `open_at`, or None if it never closes."""
    stack: list[str] = []
    i = open_at
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif ch in _CLOSERS:
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _indented_body_end(text: str, header_line_start: int, body_start: int) -> int:
    """End of a Python-style block: following lines blank or indented deeper than the header."""
    indent = _indent_of(text[header_line_start:_line_end(text, header_line_start)])
    end = _line_end(text, body_start)
    pos = end + 1
    while pos < len(text):
        line_end = _line_end(text, pos)
        line = text[pos:line_end]
        if line.strip():
            if _indent_of(line) <= indent:
                break
            end = line_end
        pos = line_end + 1
    return end


def _code_block_end(text: str, header_start: int) -> int:
    """Where a def/class/function starting at `header_start` ends (brackets matched, or indentation)."""
    i = header_start
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch == "{" and depth == 0:
            close = _match_bracket(text, i)
            return close if close is not None else _line_end(text, i)
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and not text[i + 1:_line_end(text, i)].split("#")[0].strip():
            return _indented_body_end(text, header_start, i)
        elif ch == "\n" and depth == 0:
            return i
        i += 1
    return len(text)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks and def/class/function blocks outside fences, in order, non-overlapping."""
    spans: list[tuple[int, int]] = []
    fences: list[tuple[int, int]] = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        marker = opening.group(1)
        closing = regex.compile(rf"^[ \t]{{0,3}}{regex.escape(marker[0])}{{{len(marker)},}}[ \t]*$",
                                regex.MULTILINE).search(text, opening.end())
        end = closing.end() if closing is not None else len(text)
        fences.append((opening.start(), end))
        pos = end
    fence_iter = iter(fences + [(len(text) + 1, len(text) + 1)])
    next_fence = next(fence_iter)
    pos = 0
    while pos < len(text):
        header = _CODE_HEADER.search(text, pos)
        start = header.start() if header is not None else len(text)
        while next_fence[0] <= start and next_fence[0] <= len(text):
            spans.append(next_fence)
            pos = next_fence[1]
            next_fence = next(fence_iter)
        if header is None:
            break
        if header.start() < pos:
            continue
        end = _code_block_end(text, header.start())
        end = min(end, next_fence[0])
        spans.append((header.start(), end))
        pos = max(end, header.end())
    return spans


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_by(pattern: regex.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    pos = start
    for match in pattern.finditer(text, start, end):
        pieces.append((pos, match.end()))
        pos = match.end()
    pieces.append((pos, end))
    return [p for p in (_stripped(text, s, e) for s, e in pieces) if p[0] < p[1]]


def _split_long(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut a span longer than `limit` into pieces at boundaries (see `_cut_point`)."""
    pieces: list[tuple[int, int]] = []
    while end - start > limit:
        cut = start + _cut_point(text[start:end], limit)
        piece = _stripped(text, start, cut)
        if piece[0] < piece[1]:
            pieces.append(piece)
        start, _ = _stripped(text, cut, end)
    if start < end:
        pieces.append((start, end))
    return pieces


def _prose_segments(text: str, start: int, end: int, limit: int) -> list[Segment]:
    segments: list[Segment] = []
    threshold = min(PARAGRAPH_SPLIT_THRESHOLD, limit)
    for p_start, p_end in _split_by(_PARAGRAPH_BREAK, text, start, end):
        if p_end - p_start <= threshold:
            segments.append(Segment(p_start, p_end))
            continue
        for s_start, s_end in _split_by(_SENTENCE_END, text, p_start, p_end):
            segments.extend(Segment(a, b) for a, b in _split_long(text, s_start, s_end, limit))
    return segments


def _code_segments(text: str, start: int, end: int, limit: int) -> list[Segment]:
    start, end = _stripped(text, start, end)
    if start >= end:
        return []
    if end - start <= limit:
        return [Segment(start, end, code=True)]
    return [Segment(a, b, code=True) for a, b in _split_long(text, start, end, limit)]


def segment_text(text: str, limit: int) -> list[Segment]:
    """Segments of `text` in order: code blocks whole (split only when longer than `limit`), then
    paragraphs, paragraphs over 200 characters by sentence, anything still over `limit` at words."""
    segments: list[Segment] = []
    pos = 0
    for c_start, c_end in _code_spans(text):
        segments.extend(_prose_segments(text, pos, c_start, limit))
        segments.extend(_code_segments(text, c_start, c_end, limit))
        pos = c_end
    segments.extend(_prose_segments(text, pos, len(text), limit))
    return segments


# --- boundaries ----------------------------------------------------------------------------------

def _grapheme_cut(text: str, limit: int) -> int:
    """The largest grapheme boundary <= limit."""
    cut = 0
    for match in _GRAPHEME.finditer(text):
        if match.end() > limit:
            break
        cut = match.end()
    return cut


def _cut_point(text: str, limit: int) -> int:
    """Where to cut `text` to keep at most `limit` characters.

    Preference: the last sentence end, then the last gap between words, each outside brackets (and
    only if it keeps at least a third of the budget); then any word gap; then a grapheme boundary.
    """
    if len(text) <= limit:
        return len(text)
    depth_at: list[int] = []
    depth = 0
    for ch in text[:limit + 1]:
        depth_at.append(depth)
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS and depth:
            depth -= 1
    floor = limit // 3
    sentence_cuts = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit + 1) if m.end() <= limit]
    word_cuts = [m.start() for m in _WORD_GAP.finditer(text, 0, limit + 1) if m.start() <= limit]
    for candidates in (sentence_cuts, word_cuts):
        good = [c for c in candidates if c >= floor and depth_at[min(c, limit)] == 0]
        if good:
            return good[-1]
    anywhere = [c for c in word_cuts if c > 0]
    if anywhere:
        return anywhere[-1]
    return _grapheme_cut(text, limit) or min(limit, len(text))


# --- selection -----------------------------------------------------------------------------------

def _assemble(text: str, chosen: list[Segment]) -> str:
    """Join segments in reading order: adjacent ones with their own whitespace, others with " … "."""
    parts: list[str] = []
    previous: Segment | None = None
    for seg in sorted(chosen, key=lambda s: s.start):
        if previous is not None:
            gap = text[previous.end:seg.start]
            parts.append(gap if not gap.strip() and len(gap) < 10 else SEPARATOR)
        parts.append(text[seg.start:seg.end])
        previous = seg
    return "".join(parts)


def _query_snippet(text: str, segments: list[Segment], terms: list[str], max_length: int) -> str | None:
    docs = [match_terms(tokenize(text[s.start:s.end]), terms) for s in segments]
    scores = rank_texts(terms, docs, k1=SNIPPET_K1)
    weighted: list[tuple[float, int]] = []
    for i, (seg, score) in enumerate(zip(segments, scores)):
        if score <= 0:
            continue
        position = 1.0 - POSITION_PENALTY * (seg.start / len(text))
        weighted.append((score * position * (CODE_BONUS if seg.code else 1.0), i))
    if not weighted:
        return None
    weighted.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen: list[int] = []
    for _, i in weighted:
        if len(_assemble(text, [segments[j] for j in chosen + [i]])) <= max_length:
            chosen.append(i)
    return _assemble(text, [segments[j] for j in _with_context(text, segments, chosen, max_length)])


def _with_context(text: str, segments: list[Segment], chosen: list[int], max_length: int) -> list[int]:
    """Grow the chosen segments (best first) with the segments right after, then right before them,
    within their paragraph and while the snippet still fits: context around a match, no new gap."""
    taken = list(chosen)
    grown = True
    while grown:
        grown = False
        for i in list(taken):
            for j in (i + 1, i - 1):
                if j < 0 or j >= len(segments) or j in taken:
                    continue
                first, second = sorted((segments[i], segments[j]), key=lambda s: s.start)
                gap = text[first.end:second.start]
                if gap.strip() or len(gap) >= 10 or _PARAGRAPH_BREAK.search(gap) or segments[j].code:
                    continue
                if len(_assemble(text, [segments[k] for k in taken + [j]])) <= max_length:
                    taken.append(j)
                    grown = True
    return taken


def _leading_snippet(text: str, max_length: int, *, more_follows: bool) -> str:
    """Whole segments from the start, then " …" when text was left out (room is kept for it)."""
    room = max(1, max_length - len(TRAILER))
    segments = segment_text(text, room)
    chosen: list[Segment] = []
    for seg in segments:
        candidate = chosen + [seg]
        if len(_assemble(text, candidate)) > room:
            break
        chosen = candidate
    snippet = _assemble(text, chosen)
    if (len(chosen) < len(segments) or more_follows) and len(snippet) + len(TRAILER) <= max_length:
        snippet += TRAILER
    return snippet


def extract_snippet(content: str, query: str | None = None, max_length: int = 300) -> str:
    """The most useful excerpt of `content` for `query`, at most `max_length` characters.

    With query terms that occur in the content: the best-scoring segments joined with " … ".
    Otherwise: the beginning of the content, cut at a boundary. Leading YAML front matter is skipped.

    Raises:
        ValueError: `max_length` is smaller than 1.
    """
    if max_length < 1:
        raise ValueError("max_length must be at least 1")
    front = _FRONT_MATTER.match(content)
    text = content[front.end():] if front is not None else content
    terms = query_terms(query)
    if terms:
        snippet = _query_snippet(text, segment_text(text, max_length), terms, max_length)
        if snippet is not None:
            return snippet
    # Only the beginning can matter: segment a bounded prefix, not a whole huge note.
    prefix = text[:max_length * 4 + 2000]
    return _leading_snippet(prefix, max_length, more_follows=len(prefix) < len(text.rstrip()))
