"""Chunks of a note: whitespace sliding windows (seed 002) and time windows for transcripts (seed 000).

Every chunk carries its character offsets into the original text, so `text[start:end] == chunk.text`
always holds and a chunk can be highlighted or cited exactly. A chunk's id is `{path}:{index}`.

- `chunk_text` — `\\S+` tokens, windows of `max_tokens` advancing by `max_tokens - overlap_tokens`.
- `parse_timestamps` / `has_timestamps` — transcript lines starting `[00:05:12]`, `00:05:12`, `[05:12]`…
- `chunk_by_time` — the seed's segment builder: a window opens at an entry's time and takes every
  following entry that starts before `open + window_seconds`; lines without a timestamp stay with
  the entry above them, except headings right above a window's first entry, which open that
  window; text before the first entry joins the first window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from itertools import pairwise

import regex

from nlmsync.text import front_matter_end, iter_lines

__all__ = [
    "Chunk", "TimedLine", "chunk_by_time", "chunk_id", "chunk_text", "format_timestamp", "has_timestamps",
    "parse_chunk_id", "parse_timestamps", "window_openings",
]

_TOKEN = regex.compile(r"\S+")
_TIMESTAMP_LINE = regex.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(\[)?(?:(\d{1,2}):)?([0-5]?\d):([0-5]\d)(?:[.,]\d{1,3})?(?(1)\])(?=[ \t]|$)",
    regex.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: `text == source[char_offset_start:char_offset_end]`; times (seconds) for time chunks."""

    index: int
    text: str
    char_offset_start: int
    char_offset_end: int
    start_seconds: float | None = None
    end_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class TimedLine:
    """A transcript line starting with a timestamp: its time and where the line starts in the text."""

    seconds: int
    offset: int


def chunk_id(path: str, index: int) -> str:
    """The id of chunk `index` of the note at vault path `path`."""
    return f"{path}:{index}"


def parse_chunk_id(value: str) -> tuple[str, int]:
    """Split `{path}:{index}` (the path may itself contain colons).

    Raises:
        ValueError: no `:<number>` suffix.
    """
    path, sep, index = value.rpartition(":")
    if not sep or not path or not index.isdigit():
        raise ValueError(f"not a chunk id (expected PATH:INDEX): {value!r}")
    return path, int(index)


def chunk_text(text: str, max_tokens: int = 400, overlap_tokens: int = 50) -> list[Chunk]:
    """Sliding windows of `max_tokens` whitespace tokens sharing `overlap_tokens` with the next one.

    A text with no token has no chunk. The last window ends at the last token.

    Raises:
        ValueError: `max_tokens` < 1, or `overlap_tokens` outside `[0, max_tokens)`.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError("overlap_tokens must be >= 0 and smaller than max_tokens")
    # one pass over the tokens keeping only the windows still open (at most max_tokens / step of them):
    # a note of millions of words never has a list of every token's offsets
    step = max_tokens - overlap_tokens
    chunks: list[Chunk] = []
    open_starts: deque[int] = deque()  # where each window not yet closed begins
    count = 0
    last_end = 0
    for match in _TOKEN.finditer(text):
        if count % step == 0:
            open_starts.append(match.start())
        count += 1
        last_end = match.end()
        if count >= max_tokens and (count - max_tokens) % step == 0:  # token `count - 1` closes a window
            begin = open_starts.popleft()
            chunks.append(Chunk(len(chunks), text[begin:last_end], begin, last_end))
    if open_starts and not (count >= max_tokens and (count - max_tokens) % step == 0):
        begin = open_starts[0]  # the last window ends at the last token; windows after it are not made
        chunks.append(Chunk(len(chunks), text[begin:last_end], begin, last_end))
    return chunks


def parse_timestamps(text: str) -> list[TimedLine]:
    """Every line that starts with a timestamp (`[HH:MM:SS]`, `HH:MM:SS`, `[MM:SS]`, `MM:SS`, optional
    fraction, optional list bullet), in text order."""
    lines: list[TimedLine] = []
    for match in _TIMESTAMP_LINE.finditer(text):
        hours = int(match.group(2) or 0)
        seconds = hours * 3600 + int(match.group(3)) * 60 + int(match.group(4))
        lines.append(TimedLine(seconds, match.start()))
    return lines


def has_timestamps(text: str, timed: list[TimedLine] | None = None) -> bool:
    """True for a transcript-like note: at least two timestamped lines, and they are at least half of
    the non-blank lines after any front matter and headings."""
    timed = parse_timestamps(text) if timed is None else timed
    if len(timed) < 2:
        return False
    content_lines = sum(1 for line in iter_lines(text, front_matter_end(text))
                        if line.strip() and not line.lstrip().startswith("#"))
    return len(timed) * 2 >= content_lines


def format_timestamp(seconds: float) -> str:
    """`H:MM:SS` (or `M:SS` under an hour)."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _line_span_end(text: str, offset: int) -> int:
    """End of the text before `offset`, trailing whitespace and newlines dropped."""
    end = offset
    while end > 0 and text[end - 1] in "\r\n \t":
        end -= 1
    return end


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def _window_start(text: str, entry_offset: int, floor: int) -> int:
    """Where a window whose first entry starts at `entry_offset` begins: headings (and blank lines)
    right above the entry open the window with it; nothing before `floor` is taken."""
    begin = entry_offset
    pos = entry_offset
    while pos > floor:
        line_start = text.rfind("\n", floor, pos - 1) + 1
        line_start = max(line_start, floor)
        line = text[line_start:pos].strip()
        if line and not line.startswith("#"):
            break
        if line:
            begin = line_start
        pos = line_start
    return begin


def _time_groups(timed: list[TimedLine], window_seconds: float, opens: Collection[int]) -> list[list[TimedLine]]:
    """The entries of each time window: a window opens at an entry's time and takes every following entry that
    starts before `open + window_seconds`, unless the entry's offset is in `opens` (it opens a window of its own)."""
    groups: list[list[TimedLine]] = [[timed[0]]]
    window_open = timed[0].seconds
    for line in timed[1:]:
        if line.seconds < window_open + window_seconds and line.offset not in opens:
            groups[-1].append(line)
        else:
            groups.append([line])
            window_open = line.seconds
    return groups


def window_openings(timed: list[TimedLine], window_seconds: float) -> set[int]:
    """The offsets of the entries that open `chunk_by_time`'s windows of `window_seconds`."""
    return {group[0].offset for group in _time_groups(timed, window_seconds, ())} if timed else set()


def chunk_by_time(text: str, window_seconds: float, timed: list[TimedLine] | None = None,
                  opens: Collection[int] = ()) -> list[Chunk]:
    """Time windows over a transcript (see the module docstring); empty when there is no timestamp.

    A window also opens at each entry whose offset is in `opens`: given the `window_openings` of longer windows,
    every window lies within one of them (their boundaries are the same lines, and so are the headings above).

    Raises:
        ValueError: `window_seconds` <= 0.
    """
    if window_seconds <= 0:
        raise ValueError("window_seconds must be positive")
    timed = parse_timestamps(text) if timed is None else timed
    if not timed:
        return []
    groups = _time_groups(timed, window_seconds, opens)
    starts = [0] + [_window_start(text, group[0].offset, _line_end(text, previous[-1].offset))
                    for previous, group in pairwise(groups)]
    chunks: list[Chunk] = []
    for i, group in enumerate(groups):
        begin = starts[i]
        end = _line_span_end(text, starts[i + 1]) if i + 1 < len(groups) else len(text.rstrip())
        next_start = groups[i + 1][0].seconds if i + 1 < len(groups) else None
        end_seconds = max(group[-1].seconds, next_start if next_start is not None else group[-1].seconds)
        chunks.append(Chunk(i, text[begin:end], begin, end, float(group[0].seconds), float(end_seconds)))
    return chunks
