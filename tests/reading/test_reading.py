"""Reading one note (seeds 000, 001): auto-load vs preview, chunk ranges, time ranges, smart sampling."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlmsync.config import Settings
from nlmsync.errors import InputError
from nlmsync.reading.note import (
    parse_chunk_range,
    parse_time,
    plan_chunks,
    rank_segments,
    read_chunks,
    read_note,
    smart_sample,
)

TRANSCRIPT_PATH = "meetings/2026-04-15-q2-planning-transcript.md"


def _big_note(chunks: int, *, topic_at: tuple[int, ...] = ()) -> str:
    """A note of exactly `chunks` non-overlapping 10-token chunks; `topic_at` chunks mention kimchi."""
    parts = []
    for i in range(chunks):
        words = [f"filler{i}w{j}" for j in range(10)]
        if i in topic_at:
            words[3] = "kimchi"
        parts.append(" ".join(words))
    return "\n\n".join(parts)


SMALL = Settings(chunk_max_tokens=10, chunk_overlap_tokens=0, autoload_chars=2000, preview_chars=120)


@pytest.fixture
def transcript(vault: Path) -> str:
    return (vault / TRANSCRIPT_PATH).read_text(encoding="utf-8")


def test_small_note_is_loaded_whole(vault: Path) -> None:
    text = (vault / "algorithms/sorting/heapsort.md").read_text(encoding="utf-8")
    reading = read_note("algorithms/sorting/heapsort.md", text, Settings())
    assert reading.mode == "full" and reading.content == text
    assert reading.size_chars == len(text) and reading.total_chunks == 1 and not reading.has_timestamps


def test_large_note_gives_preview_metadata_and_hints(transcript: str) -> None:
    reading = read_note(TRANSCRIPT_PATH, transcript, Settings())
    assert reading.mode == "preview"
    assert reading.content is not None and len(reading.content) <= 500
    assert reading.content.startswith("# Q2 planning meeting")
    assert reading.has_timestamps and reading.duration == "3:59:10"
    assert reading.total_chunks == len(plan_chunks(transcript, Settings()).chunks) > 40
    assert any("query=" in h for h in reading.hints) and any("start_time" in h for h in reading.hints)
    assert reading.chunks == []


def test_preview_chars_0_gives_metadata_and_hints_only(transcript: str) -> None:
    reading = read_note(TRANSCRIPT_PATH, transcript, Settings(preview_chars=0))
    assert reading.mode == "preview" and reading.content == "" and reading.hints and reading.total_chunks > 40


def test_full_flag_loads_a_large_note_with_a_warning(transcript: str) -> None:
    reading = read_note(TRANSCRIPT_PATH, transcript, Settings(), full=True)
    assert reading.content == transcript and "Warning" in reading.message


def test_chunk_range_returns_exact_spans() -> None:
    text = _big_note(30)
    reading = read_note("big.md", text, SMALL, chunks="20-25")
    assert [c.index for c in reading.chunks] == [20, 21, 22, 23, 24, 25]
    assert all(c.role == "requested" for c in reading.chunks)
    for view in reading.chunks:
        assert text[view.char_offset_start:view.char_offset_end] == view.text
        assert view.chunk_id == f"big.md:{view.index}"
    assert read_note("big.md", text, SMALL, chunk=7).chunks[0].text.startswith("filler7w0")


def test_surrounding_chunks_are_labelled() -> None:
    reading = read_chunks("big.md", _big_note(30), SMALL, range(1), surrounding=2)
    assert [(c.index, c.role) for c in reading.chunks] == [(0, "requested"), (1, "surrounding"), (2, "surrounding")]


@pytest.mark.parametrize(("spec", "message"), [
    ("abc", "expected N or N-M"), ("5-3", "ends before"), ("28-40", "out of range"), ("0-29", "at most 25"),
])
def test_bad_chunk_ranges_name_the_field(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_chunk_range(spec, 30)
    assert str(info.value).startswith("chunks:")


def test_chunk_index_out_of_range_and_conflicting_arguments() -> None:
    with pytest.raises(InputError, match="chunk 99 out of range"):
        read_note("big.md", _big_note(30), SMALL, chunk=99)
    with pytest.raises(InputError, match="not both"):
        read_note("big.md", _big_note(30), SMALL, chunk=1, chunks="1-2")


def test_time_range_returns_those_transcript_lines(transcript: str) -> None:
    reading = read_note(TRANSCRIPT_PATH, transcript, Settings(), start_time="1:00:00", end_time="1:02:00")
    assert reading.mode == "time_range" and reading.content is not None
    stamps = [line[1:9] for line in reading.content.splitlines() if line.startswith("[")]
    assert stamps and all("01:00:00" <= s < "01:02:00" for s in stamps)
    assert transcript[reading.char_offset_start:reading.char_offset_end] == reading.content


def test_long_time_range_is_cut_with_a_continuation(transcript: str) -> None:
    reading = read_note(TRANSCRIPT_PATH, transcript, Settings(), start_time=0, end_time="4:00:00")
    assert reading.content is not None and len(reading.content) <= 50_000
    assert "continue with start_time=" in reading.message


def test_time_range_on_a_note_without_timestamps_is_refused() -> None:
    with pytest.raises(InputError, match="no.*timestamps|has none"):
        read_note("big.md", _big_note(3), SMALL, start_time="0:10")


@pytest.mark.parametrize(("value", "seconds"), [("1:02:03", 3723), ("05:12", 312), ("90", 90), (12.5, 12.5)])
def test_parse_time(value: str | float, seconds: float) -> None:
    assert parse_time(value, "start_time") == seconds


def test_parse_time_rejects_garbage() -> None:
    with pytest.raises(InputError, match="^end_time:"):
        parse_time("soon", "end_time")


def test_smart_sample_on_a_45_chunk_note() -> None:
    text = _big_note(45, topic_at=(12, 30))
    plan = plan_chunks(text, SMALL)
    sample = smart_sample(plan, "kimchi", limit=10)
    roles = {i: role for i, role, _ in sample}
    assert roles[12] == "match" and roles[30] == "match"
    assert roles[11] == roles[13] == roles[29] == roles[31] == "neighbor"
    assert roles[0] == "beginning" and roles[22] == "middle" and roles[44] == "end"
    assert len(sample) <= 10
    assert [i for i, _, _ in sample] == sorted(roles)
    scores = {i: s for i, _, s in sample}
    assert scores[12] is not None and scores[0] is None


def test_read_note_query_reports_total_and_roles() -> None:
    text = _big_note(45, topic_at=(12,))
    reading = read_note("big.md", text, SMALL, query="how is the kimchi")
    assert reading.mode == "search" and reading.total_chunks == 45
    assert "12" in reading.message and "0 (beginning)" in reading.message and "44 (end)" in reading.message
    match = next(c for c in reading.chunks if c.role == "match")
    assert match.index == 12 and "kimchi" in match.text


def test_query_with_no_match_still_gives_structure() -> None:
    reading = read_note("big.md", _big_note(45), SMALL, query="zeppelin")
    assert [c.role for c in reading.chunks] == ["beginning", "middle", "end"]
    assert reading.message.startswith("No chunk matches")


def test_transcript_search_maps_30s_segments_to_5min_chunks(transcript: str) -> None:
    settings = Settings()
    plan = plan_chunks(transcript, settings)
    assert len(plan.segments) > len(plan.chunks)
    reading = read_note(TRANSCRIPT_PATH, transcript, settings, query="dead letter queue")
    matches = [c for c in reading.chunks if c.role == "match"]
    best = max(matches, key=lambda c: c.score or 0.0)
    assert "dead letter queue" in best.text
    assert all(any(w in c.text.lower() for w in ("dead", "letter", "queue")) for c in matches)
    assert all(c.start_time is not None for c in reading.chunks)


OVERLAPPING = Settings(chunk_max_tokens=10, chunk_overlap_tokens=4)


@pytest.mark.parametrize("query", ["kimchi", "filler7w9 kimchi", "filler20w2", "dead letter queue replay", "certificate"])
def test_every_hit_names_the_chunk_that_holds_its_text(query: str, transcript: str) -> None:
    """A hit's chunk holds all of the hit's text, in a note cut into overlapping word windows (where a hit past
    the first chunk starts inside the chunk before it too) as in a transcript (whose search windows are finer
    than its chunks)."""
    for text, settings in ((_big_note(45, topic_at=(7, 20, 33)), OVERLAPPING), (transcript, Settings())):
        plan = plan_chunks(text, settings)
        hits = rank_segments(plan, query)
        for hit in hits:
            chunk = plan.chunks[hit.chunk_index]
            assert chunk.char_offset_start <= hit.segment.char_offset_start
            assert hit.segment.char_offset_end <= chunk.char_offset_end
        if plan.timed:  # the search windows are cut within the chunks, not across them
            assert all(any(c.char_offset_start <= s.char_offset_start and s.char_offset_end <= c.char_offset_end
                           for c in plan.chunks) for s in plan.segments)
    assert rank_segments(plan_chunks(_big_note(45, topic_at=(7, 20, 33)), OVERLAPPING), "kimchi")


def test_tiny_note_sample_is_the_one_chunk() -> None:
    plan = plan_chunks("just kimchi", SMALL)
    assert smart_sample(plan, "kimchi") == [  # type: ignore[comparison-overlap]  # approx equals the float
        (0, "match", pytest.approx(smart_sample(plan, "kimchi")[0][2]))]
    assert smart_sample(plan_chunks("", SMALL), "kimchi") == []
