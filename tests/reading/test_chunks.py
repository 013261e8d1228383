"""Sliding-window chunks (seed 002) and time chunks (seed 000): exact offsets, overlap, edge sizes."""

from __future__ import annotations

from itertools import pairwise

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.reading.chunks import (
    chunk_by_time,
    chunk_id,
    chunk_text,
    format_timestamp,
    has_timestamps,
    parse_chunk_id,
    parse_timestamps,
)


def _words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_seed_example_1000_tokens_three_windows() -> None:
    chunks = chunk_text(_words(1000), max_tokens=400, overlap_tokens=50)
    assert [(c.text.split()[0], c.text.split()[-1]) for c in chunks] == [
        ("w0", "w399"), ("w350", "w749"), ("w700", "w999")]
    assert [c.index for c in chunks] == [0, 1, 2]


def test_overlap_is_shared_with_the_next_chunk() -> None:
    chunks = chunk_text(_words(100), max_tokens=30, overlap_tokens=5)
    for left, right in pairwise(chunks):
        assert left.text.split()[-5:] == right.text.split()[:5]


def test_offsets_recover_text_with_odd_whitespace_and_unicode() -> None:
    text = "  \tÉtude\u00a0n°1 —\n\n日本語 テキスト\r\n👨\u200d👩\u200d👧 fin  \n"
    for chunk in chunk_text(text, max_tokens=2, overlap_tokens=1):
        assert text[chunk.char_offset_start:chunk.char_offset_end] == chunk.text
        assert chunk.text == chunk.text.strip()


def test_tiny_and_empty_notes() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\t ") == []
    [only] = chunk_text("one")
    assert (only.index, only.text, only.char_offset_start, only.char_offset_end) == (0, "one", 0, 3)


def test_huge_note_covers_every_token_once_per_window() -> None:
    text = _words(200_000)
    chunks = chunk_text(text)
    assert len(chunks) == 572  # ceil((200000 - 400) / 350) + 1
    assert chunks[-1].char_offset_end == len(text)
    assert chunks[0].char_offset_start == 0


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_window_is_refused(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="tokens"):
        chunk_text("a b c", max_tokens, overlap)


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(max_size=400), max_tokens=st.integers(1, 12), data=st.data())
def test_offsets_always_recover_the_text_and_cover_all_tokens(text: str, max_tokens: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, max_tokens - 1))
    chunks = chunk_text(text, max_tokens, overlap)
    for chunk in chunks:
        assert text[chunk.char_offset_start:chunk.char_offset_end] == chunk.text
    tokens = regex.findall(r"\S+", text)
    step = max_tokens - overlap
    # window i is exactly tokens[i*step : i*step + max_tokens]; the last one ends at the last token
    assert [regex.findall(r"\S+", c.text) for c in chunks] == [tokens[i * step:i * step + max_tokens]
                                                              for i in range(len(chunks))]
    assert (chunks == []) == (tokens == [])
    if chunks:
        assert chunks[-1].text.endswith(tokens[-1]) and len(chunks) == 1 + max(0, -(-(len(tokens) - max_tokens) // step))


def test_chunk_ids_round_trip_with_colons_in_paths() -> None:
    assert chunk_id("notes/a.md", 3) == "notes/a.md:3"
    assert parse_chunk_id("meetings/10:30 sync.md:12") == ("meetings/10:30 sync.md", 12)
    with pytest.raises(ValueError, match="PATH:INDEX"):
        parse_chunk_id("notes/a.md")


TRANSCRIPT = """---
title: Talk
---
# Talk

[00:00:00] Hello and welcome
[00:00:03] Today we discuss
continued line without a stamp
[00:00:07] machine learning
[00:05:02] Now lets look at
[00:05:05] neural networks
[01:00:00] Much later
"""


def test_seed_time_chunking_example() -> None:
    chunks = chunk_by_time(TRANSCRIPT, 300)
    assert [c.text.splitlines()[-1] for c in chunks] == [
        "[00:00:07] machine learning", "[00:05:05] neural networks", "[01:00:00] Much later"]
    assert chunks[0].char_offset_start == 0 and chunks[0].text.startswith("---")
    assert "continued line without a stamp" in chunks[0].text
    assert [(c.start_seconds, c.end_seconds) for c in chunks] == [(0, 302), (302, 3600), (3600, 3600)]
    for chunk in chunks:
        assert TRANSCRIPT[chunk.char_offset_start:chunk.char_offset_end] == chunk.text


def test_thirty_second_windows_are_finer() -> None:
    assert len(chunk_by_time(TRANSCRIPT, 30)) == 3
    assert len(chunk_by_time(TRANSCRIPT, 2)) == 6


def test_timestamp_formats_and_detection() -> None:
    text = "[05:12] a\n00:05:13 b\n- [1:02:03.500] c\n10:61 not a time\nplain 00:00:01 not at start\n"
    assert [t.seconds for t in parse_timestamps(text)] == [312, 313, 3723]
    assert has_timestamps(text)
    assert not has_timestamps("Meeting at\n10:30 in room 4\nand more prose\nand more\nand more\n")
    assert chunk_by_time("no stamps here", 300) == []
    assert format_timestamp(3723) == "1:02:03" and format_timestamp(312) == "5:12"


def test_fixture_transcript_is_timed(vault) -> None:
    text = (vault / "meetings/2026-04-15-q2-planning-transcript.md").read_text(encoding="utf-8")
    assert has_timestamps(text)
    windows = chunk_by_time(text, 300)
    assert all(b.start_seconds - a.start_seconds >= 300 for a, b in pairwise(windows))
    assert not has_timestamps((vault / "algorithms/sorting/heapsort.md").read_text(encoding="utf-8"))


def test_a_heading_above_a_window_opens_it() -> None:
    text = ("[00:00:01] intro\ncontinued intro\n\n## Part 2\n\n[00:06:00] second part\n"
            "[00:07:00] more\n### Late\n[00:20:00] last\n")
    chunks = chunk_by_time(text, 300)
    assert [c.text for c in chunks] == ["[00:00:01] intro\ncontinued intro",
                                        "## Part 2\n\n[00:06:00] second part\n[00:07:00] more",
                                        "### Late\n[00:20:00] last"]
    assert all(text[c.char_offset_start:c.char_offset_end] == c.text for c in chunks)
