"""Reading one note, small or huge (seeds 000 and 001): pure functions over the note's text.

`read_note` decides, in the seed's order: a time range (`start_time`/`end_time`) → those transcript
lines; a chunk index or range (`chunk=N`, `chunks="20-25"`) → those chunks; a `query` → smart
samples (`smart_sample`: the best matching chunks, their neighbours for continuity, and the
beginning, middle and end chunks, each labelled with its index and role); otherwise the whole text
when it is under `autoload_chars` (or `full=True`), else a preview with metadata and usage hints.

Chunks are the note's pagination units (`ChunkPlan.chunks`): sliding windows of
`chunk_max_tokens` (seed 002), or `time_chunk_seconds` windows for a transcript. Search ranks the
finer `ChunkPlan.segments` (the same windows, or `time_search_seconds` windows for a transcript, cut so that
none crosses a chunk's boundary) with BM25 and labels each hit with the chunk that holds all of it, so the chunk
a client fetches by a hit's id holds the hit's text.

A plan keeps, per search segment, its token count and its base tokens run together (`SegmentWords`), not
its tokens: a query tokenizes only the segments that can hold one of its terms. A note of many megabytes
is then searched again and again without its tokens (many times its text's size) kept in memory.

Kept whole: the reading modes share the plan and the result models; the chunking itself is `reading.chunks`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, TypedDict, Unpack

import regex
from pydantic import BaseModel, Field

from nlmsync.config import Settings
from nlmsync.errors import InputError
from nlmsync.reading.chunks import (
    Chunk,
    chunk_by_time,
    chunk_id,
    chunk_text,
    format_timestamp,
    has_timestamps,
    parse_timestamps,
    window_openings,
)
from nlmsync.reading.snippets import extract_snippet, match_terms
from nlmsync.search.bm25 import rank_counts
from nlmsync.search.query import query_terms
from nlmsync.text import base_tokens, count_tokens, normalize, text_pieces

__all__ = [
    "MAX_CHUNKS_PER_READ",
    "ChunkPlan",
    "ChunkView",
    "NoteReading",
    "SegmentHit",
    "parse_chunk_range",
    "parse_time",
    "plan_chunks",
    "rank_segments",
    "read_chunks",
    "read_note",
    "smart_sample",
]

MAX_CHUNKS_PER_READ = 25
DEFAULT_SAMPLE_LIMIT = 10
CONTEXT_SLOTS = 3

Role = Literal["beginning", "middle", "end", "match", "neighbor", "requested", "surrounding"]

_TIME_VALUE = regex.compile(r"^\s*(?:(?:(\d+):)?(\d{1,2}):)?(\d+(?:\.\d+)?)\s*$")


class ChunkView(BaseModel):
    """A chunk as a client sees it: id `{path}:{index}`, exact offsets into the note, and its text."""

    chunk_id: str
    index: int
    role: Role
    char_offset_start: int
    char_offset_end: int
    text: str
    score: float | None = Field(default=None, description="BM25 score when the chunk matched a query.")
    start_time: str | None = Field(default=None, description="Transcript time the chunk starts at (H:MM:SS).")
    end_time: str | None = None


ReadMode = Literal["full", "preview", "chunks", "time_range", "search"]


class NoteReading(BaseModel):
    """What `read_note` returns: the text or a way into it, with the note's metadata."""

    path: str
    mode: ReadMode
    size_chars: int
    total_chunks: int
    has_timestamps: bool
    duration: str | None = Field(default=None, description="Last transcript timestamp (H:MM:SS).")
    content: str | None = Field(default=None, description="Whole text, preview, or time-range text.")
    char_offset_start: int | None = None
    char_offset_end: int | None = None
    chunks: list[ChunkView] = Field(default_factory=list)
    message: str
    hints: list[str] = Field(default_factory=list)


@dataclass(slots=True)
class ChunkPlan:
    """How one note is cut: pagination `chunks`, search `segments`, and whether it is a transcript."""

    chunks: list[Chunk]
    segments: list[Chunk]
    timed: bool
    duration_seconds: float | None
    _words: SegmentWords | None = field(default=None, repr=False, compare=False)

    def segment_words(self) -> SegmentWords:
        """What a query needs of the search segments, computed once (a cached plan is searched many times)."""
        if self._words is None:
            self._words = SegmentWords.of(self.segments)
        return self._words


@dataclass(frozen=True, slots=True)
class SegmentWords:
    """Per search segment: its number of tokens (`tokenize`), and its base tokens run together — a string
    that holds, as a substring, every query term matching one of the segment's tokens (exactly or as its
    prefix, a compound of two neighbours or a CJK bigram included): what tells the segments a query can
    match from those it cannot, without keeping their tokens."""

    lengths: list[int]
    letters: list[str]

    @classmethod
    def of(cls, segments: list[Chunk]) -> SegmentWords:
        lengths, letters = [], []
        for segment in segments:
            lengths.append(_token_counts(segment.text).total())
            letters.append("".join(["".join(base_tokens(normalize(piece))) for piece in text_pieces(segment.text)]))
        return cls(lengths, letters)


def _token_counts(text: str) -> Counter[str]:
    """`Counter(tokenize(text))`, counted a piece at a time (a transcript's time window can be megabytes)."""
    return count_tokens(text_pieces(text))


@dataclass(frozen=True, slots=True)
class SegmentHit:
    """A search segment that matched, its score, and the index of the pagination chunk holding it."""

    segment: Chunk
    score: float
    chunk_index: int


def plan_chunks(text: str, settings: Settings) -> ChunkPlan:
    """Cut `text` into pagination chunks and search segments (time windows for a transcript)."""
    timed_lines = parse_timestamps(text)
    if has_timestamps(text, timed_lines):
        # a search window never crosses a chunk's boundary: every hit names the chunk that holds it
        opens = window_openings(timed_lines, settings.time_chunk_seconds)
        return ChunkPlan(
            chunks=chunk_by_time(text, settings.time_chunk_seconds, timed_lines),
            segments=chunk_by_time(text, settings.time_search_seconds, timed_lines, opens),
            timed=True,
            duration_seconds=float(max(line.seconds for line in timed_lines)),
        )
    chunks = chunk_text(text, settings.chunk_max_tokens, settings.chunk_overlap_tokens)
    return ChunkPlan(chunks=chunks, segments=chunks, timed=False, duration_seconds=None)


def _holding_chunk(starts: list[int], segment: Chunk) -> int:
    """The pagination chunk that holds the search segment: the last one starting at or before it (`starts`: the
    chunks' starts, in text order). A note cut by words searches its chunks themselves; a transcript's search
    windows lie within its chunks (`plan_chunks`), which do not overlap."""
    return max(0, bisect_right(starts, segment.char_offset_start) - 1)


def rank_segments(plan: ChunkPlan, query: str) -> list[SegmentHit]:
    """BM25 over the plan's search segments (stop words removed); hits with a positive score, best first."""
    terms = query_terms(query)
    if not terms or not plan.segments:
        return []
    words = plan.segment_words()
    wanted = set(terms)
    candidates = [i for i, letters in enumerate(words.letters) if any(term in letters for term in wanted)]
    counts = [_term_counts(_token_counts(plan.segments[i].text), terms, wanted) for i in candidates]
    scores = rank_counts(Counter(terms), counts, [words.lengths[i] for i in candidates], doc_count=len(plan.segments),
                         avg_len=sum(words.lengths) / len(words.lengths))
    starts = [c.char_offset_start for c in plan.chunks]
    hits = [SegmentHit(plan.segments[i], score, _holding_chunk(starts, plan.segments[i]))
            for i, score in zip(candidates, scores) if score > 0]
    hits.sort(key=lambda h: (-h.score, h.segment.index))
    return hits


def _term_counts(counts: Counter[str], terms: list[str], wanted: set[str]) -> dict[str, int]:
    """How often each query term occurs among tokens counted in `counts`, once `match_terms` has mapped them
    onto `terms` (the terms that do not occur left out)."""
    tokens = list(counts)
    found: dict[str, int] = {}
    for token, term in zip(tokens, match_terms(tokens, terms)):
        if term in wanted:
            found[term] = found.get(term, 0) + counts[token]
    return found


def smart_sample(plan: ChunkPlan, query: str, limit: int = DEFAULT_SAMPLE_LIMIT) -> list[tuple[int, Role, float | None]]:
    """Seed 001: `(chunk index, role, score)` in reading order, at most `limit` (>= 4) entries.

    Beginning, middle and end chunks take up to three places; the rest go first to the best matching
    chunks (half of the room), then to their neighbours (i-1, i+1) for continuity, then to further
    matches. A chunk that is both a match and a context chunk is labelled a match.
    """
    total = len(plan.chunks)
    if total == 0:
        return []
    best: dict[int, float] = {}
    for hit in rank_segments(plan, query):
        best.setdefault(hit.chunk_index, hit.score)
    ranked = sorted(best, key=lambda i: (-best[i], i))
    context: dict[int, Role] = {total - 1: "end"}
    context[total // 2] = "middle"
    context[0] = "beginning"
    room = max(1, limit - len(context))
    roles: dict[int, Role] = {}
    first_pass = ranked[:max(1, (room + 1) // 2)]
    for i in first_pass:
        roles[i] = "match"
    for i in first_pass:
        for j in (i - 1, i + 1):
            if 0 <= j < total and j not in roles and len(roles) < room:
                roles[j] = "match" if j in best else "neighbor"
    for i in ranked[len(first_pass):]:
        if len(roles) >= room:
            break
        roles.setdefault(i, "match")
    for i, role in context.items():
        roles.setdefault(i, role)
    return [(i, roles[i], best.get(i)) for i in sorted(roles)]


def parse_chunk_range(spec: str, total: int) -> range:
    """`"N"` or `"N-M"` (inclusive) → the chunk indices, checked against the note's `total` chunks.

    Raises:
        InputError: malformed, reversed, out of range, or more than `MAX_CHUNKS_PER_READ` chunks.
    """
    match = regex.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", spec)
    if match is None:
        raise InputError(f"chunks: expected N or N-M (e.g. \"20-25\"), got {spec!r}")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if last < first:
        raise InputError(f"chunks: range {spec!r} ends before it starts")
    _check_index(first, total, "chunks")
    _check_index(last, total, "chunks")
    if last - first + 1 > MAX_CHUNKS_PER_READ:
        raise InputError(f"chunks: at most {MAX_CHUNKS_PER_READ} chunks per call, {spec!r} asks for {last - first + 1}")
    return range(first, last + 1)


def _check_index(index: int, total: int, field: str) -> None:
    if not 0 <= index < total:
        span = f"0-{total - 1}" if total else "none"
        raise InputError(f"{field}: chunk {index} out of range (the note has {total} chunks: {span})")


def parse_time(value: str | float, field: str) -> float:
    """Seconds from `H:MM:SS`, `MM:SS`, or a number of seconds.

    Raises:
        InputError: naming `field`, for anything else or a negative time.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = _TIME_VALUE.match(str(value))
        if match is None:
            raise InputError(f"{field}: expected H:MM:SS, MM:SS or seconds, got {value!r}")
        hours, minutes, secs = match.groups()
        seconds = int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs)
    if seconds < 0:
        raise InputError(f"{field}: time must not be negative")
    return seconds


def _view(path: str, chunk: Chunk, role: Role, score: float | None = None) -> ChunkView:
    return ChunkView(
        chunk_id=chunk_id(path, chunk.index), index=chunk.index, role=role,
        char_offset_start=chunk.char_offset_start, char_offset_end=chunk.char_offset_end, text=chunk.text,
        score=score,
        start_time=format_timestamp(chunk.start_seconds) if chunk.start_seconds is not None else None,
        end_time=format_timestamp(chunk.end_seconds) if chunk.end_seconds is not None else None,
    )


class _Shown(TypedDict, total=False):
    """The fields of a `NoteReading` that depend on what is shown."""

    content: str
    char_offset_start: int
    char_offset_end: int
    chunks: list[ChunkView]
    hints: list[str]


def _base(path: str, text: str, plan: ChunkPlan, mode: ReadMode, message: str,
          **fields: Unpack[_Shown]) -> NoteReading:
    return NoteReading(
        path=path, mode=mode, size_chars=len(text), total_chunks=len(plan.chunks), has_timestamps=plan.timed,
        duration=format_timestamp(plan.duration_seconds) if plan.duration_seconds is not None else None,
        message=message, **fields,
    )


def _usage_hints(path: str, plan: ChunkPlan) -> list[str]:
    last = max(0, len(plan.chunks) - 1)
    hints = [
        (f"Search inside the note: read_note(path={path!r}, query='…') returns the best matching chunks "
         "with their neighbours plus the beginning, middle and end."),
        (f"Page through it: read_note(path={path!r}, chunk=N) or chunks='N-M' (0-{last}, at most "
         f"{MAX_CHUNKS_PER_READ} per call); get_chunk(chunk_id='{path}:N', surrounding=1) adds context."),
        f"Load everything anyway: read_note(path={path!r}, full=true).",
    ]
    if plan.timed:
        hints.insert(2, f"Read a time range: read_note(path={path!r}, start_time='0:05:00', end_time='0:10:00').")
    return hints


def _time_range(path: str, text: str, plan: ChunkPlan, settings: Settings,
                start_time: str | float | None, end_time: str | float | None) -> NoteReading:
    if not plan.timed:
        raise InputError(f"{path}: start_time/end_time need a transcript with timestamps; this note has none")
    start = parse_time(start_time, "start_time") if start_time is not None else 0.0
    end = parse_time(end_time, "end_time") if end_time is not None else start + settings.time_chunk_seconds
    if end <= start:
        raise InputError("end_time: must be after start_time")
    window = f"{format_timestamp(start)}-{format_timestamp(end)}"
    timed = parse_timestamps(text)
    picked = [i for i, line in enumerate(timed) if start <= line.seconds < end]
    if not picked:
        return _base(path, text, plan, "time_range", f"No transcript lines in {window}.", content="",
                     hints=_usage_hints(path, plan))

    def block_end(i: int) -> int:
        return timed[i + 1].offset if i + 1 < len(timed) else len(text)

    begin = timed[picked[0]].offset
    last = picked[-1]
    cut_note = ""
    for i in picked[1:]:
        if block_end(i) - begin > settings.autoload_chars:
            last = i - 1
            cut_note = (f" Cut at about {settings.autoload_chars} characters; continue with "
                        f"start_time='{format_timestamp(timed[i].seconds)}'.")
            break
    content = text[begin:block_end(last)].rstrip()
    return _base(path, text, plan, "time_range", f"Transcript lines in {window}.{cut_note}", content=content,
                 char_offset_start=begin, char_offset_end=begin + len(content))


def read_chunks(path: str, text: str, settings: Settings, indices: range, *, surrounding: int = 0,
                field: str = "chunk", plan: ChunkPlan | None = None) -> NoteReading:
    """Chunks `indices` of the note (role `requested`), plus `surrounding` chunks on each side. `plan` is
    `plan_chunks(text, settings)` when the caller has it already.

    Raises:
        InputError: an index out of range (naming `field`), or more than `MAX_CHUNKS_PER_READ` chunks in all.
    """
    plan = plan_chunks(text, settings) if plan is None else plan
    return _read_chunks(path, text, plan, indices, surrounding, field)


def _read_chunks(path: str, text: str, plan: ChunkPlan, indices: range, surrounding: int,
                 field: str = "chunk") -> NoteReading:
    if surrounding < 0:
        raise InputError("surrounding: must not be negative")
    total = len(plan.chunks)
    for i in (indices.start, indices.stop - 1):
        _check_index(i, total, field)
    lo, hi = max(0, indices.start - surrounding), min(total, indices.stop + surrounding)
    if hi - lo > MAX_CHUNKS_PER_READ:
        raise InputError(f"surrounding: at most {MAX_CHUNKS_PER_READ} chunks per call, this asks for {hi - lo}")
    views = [_view(path, plan.chunks[i], "requested" if i in indices else "surrounding") for i in range(lo, hi)]
    shown = f"{indices.start}" if len(indices) == 1 else f"{indices.start}-{indices.stop - 1}"
    return _base(path, text, plan, "chunks", f"Chunk {shown} of {total} (indices 0-{total - 1}).", chunks=views)


class NoteRequest(TypedDict, total=False):
    """What a reader asks of one note (`read_note`), each part optional: a chunk or a range of chunks, a time
    range, the chunks matching a query (at most `limit`), or the whole note however large (`full`)."""

    chunk: int | None
    chunks: str | None
    start_time: str | float | None
    end_time: str | float | None
    query: str | None
    full: bool
    limit: int


def read_note(path: str, text: str, settings: Settings, *, plan: ChunkPlan | None = None,
              **request: Unpack[NoteRequest]) -> NoteReading:
    """Read the note at vault path `path` whose text is `text` as `request` asks (see the module docstring for
    the order). `plan` is `plan_chunks(text, settings)` when the caller has it already (a huge note is cut once).

    Raises:
        InputError: conflicting or invalid arguments, naming the field.
    """
    chunk, chunks = request.get("chunk"), request.get("chunks")
    start_time, end_time, query = request.get("start_time"), request.get("end_time"), request.get("query")
    full, limit = request.get("full", False), request.get("limit", DEFAULT_SAMPLE_LIMIT)
    if chunk is not None and chunks is not None:
        raise InputError("chunk/chunks: give one of them, not both")
    plan = plan_chunks(text, settings) if plan is None else plan
    if start_time is not None or end_time is not None:
        return _time_range(path, text, plan, settings, start_time, end_time)
    if chunk is not None or chunks is not None:
        indices = parse_chunk_range(chunks, len(plan.chunks)) if chunks is not None else range(chunk or 0, (chunk or 0) + 1)
        return _read_chunks(path, text, plan, indices, 0)
    if query is not None and query.strip():
        return _search(path, text, plan, query, limit)
    if full or len(text) <= settings.autoload_chars:
        warning = (f" Warning: {len(text)} characters, above the {settings.autoload_chars}-character auto-load "
                   "threshold." if len(text) > settings.autoload_chars else "")
        return _base(path, text, plan, "full", f"Full note loaded.{warning}", content=text)
    preview = extract_snippet(text, None, settings.preview_chars) if settings.preview_chars else ""
    return _base(path, text, plan, "preview",
                 f"Too large to load whole ({len(text)} characters > {settings.autoload_chars}); "
                 f"showing a preview. The note has {len(plan.chunks)} chunks.",
                 content=preview, hints=_usage_hints(path, plan))


def _search(path: str, text: str, plan: ChunkPlan, query: str, limit: int) -> NoteReading:
    if limit < CONTEXT_SLOTS + 1:
        raise InputError(f"limit: must be at least {CONTEXT_SLOTS + 1}")
    sample = smart_sample(plan, query, limit)
    views = [_view(path, plan.chunks[i], role, score) for i, role, score in sample]
    matches = sum(1 for _, role, _ in sample if role == "match")
    labels = ", ".join(f"{i}" if role in ("match", "neighbor") else f"{i} ({role})" for i, role, _ in sample)
    found = (f"Found {matches} matching chunks for {query!r}" if matches
             else f"No chunk matches {query!r}; showing the beginning, middle and end")
    hints = [
        "Ask for more context near a chunk: get_chunk(chunk_id='PATH:N', surrounding=1) or chunks='N-M'.",
        "Search again with other words to find other sections.",
    ]
    return _base(path, text, plan, "search",
                 f"{found} in {path}. Showing chunks: {labels}. Total: {len(plan.chunks)} chunks in the note "
                 f"(~{len(text)} characters).", chunks=views, hints=hints)
