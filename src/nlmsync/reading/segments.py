"""Cutting a note's text into the segments a snippet is made of (seed 004), and where a text may be cut.

Segments come in order: fenced code blocks and `def`/`class`/`function`/`func` bodies whole (brackets
matched, or indentation for Python), the rest by paragraph, long paragraphs by sentence, anything still
longer than the limit at a sentence, word or grapheme boundary (`cut_point`), each with its offsets in
the original text. `reading.snippets` scores and joins them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import regex

PARAGRAPH_SPLIT_THRESHOLD = 200

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
PARAGRAPH_BREAK = regex.compile(r"\n[ \t]*\n\s*")
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


def _match_bracket(text: str, open_at: int, known: dict[int, int | None] | None = None) -> int | None:
    """Index just past the bracket that closes the one at `open_at`, or None if it never closes.

    `known` (one dict per text) remembers the answer for every opening bracket a scan passes: where
    the scan goes from a position does not depend on where it started, so a scan from a bracket it
    passed would see the same closing bracket, the same mismatch, or the same end of the text. Many
    `function f() {` that never close then cost one scan, not one scan each to the end of the text.
    """
    if known is None:
        known = {}
    elif open_at in known:
        return known[open_at]
    stack: list[tuple[str, int]] = []
    i = open_at
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch in _OPENERS:
            stack.append((_OPENERS[ch], i))
        elif ch in _CLOSERS:
            if not stack:
                break
            closer, at = stack.pop()
            if closer != ch:
                stack.append((closer, at))
                break
            known[at] = i + 1
            if not stack:
                return i + 1
        i += 1
    for _, at in stack:  # a mismatch or the end of the text, with these brackets open
        known[at] = None
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


def _code_block_end(text: str, header_start: int, known: dict[int, int | None] | None = None) -> int:
    """Where a def/class/function starting at `header_start` ends (brackets matched, or indentation)."""
    i = header_start
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch == "{" and depth == 0:
            close = _match_bracket(text, i, known)
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


@functools.cache
def _fence_close(char: str, length: int) -> regex.Pattern[str]:
    """The line that closes a fence opened by `length` times `char`."""
    return regex.compile(rf"^[ \t]{{0,3}}{regex.escape(char)}{{{length},}}[ \t]*$", regex.MULTILINE)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks and def/class/function blocks outside fences, in order, non-overlapping."""
    spans: list[tuple[int, int]] = []
    fences: list[tuple[int, int]] = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        marker = opening.group(1)
        closing = _fence_close(marker[0], len(marker)).search(text, opening.end())
        end = closing.end() if closing is not None else len(text)
        fences.append((opening.start(), end))
        pos = end
    known: dict[int, int | None] = {}  # bracket matches, for `_match_bracket`
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
        end = _code_block_end(text, header.start(), known)
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
    """Cut a span longer than `limit` into pieces at boundaries (see `cut_point`)."""
    pieces: list[tuple[int, int]] = []
    while end - start > limit:
        cut = start + cut_point(text[start:start + limit + 1], limit)  # it reads no further
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
    for p_start, p_end in _split_by(PARAGRAPH_BREAK, text, start, end):
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


def cut_point(text: str, limit: int) -> int:
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
