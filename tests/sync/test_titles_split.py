"""Deterministic titles, content hashes and lossless splitting of notes over the source limits."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.sync.prepared import split_note
from nlmsync.sync.titles import (
    MAX_TITLE_CHARS,
    content_hash,
    looks_managed,
    pack_title,
    parse_note_title,
    short_hash,
    shown_path_matches,
    source_title,
    title_hash,
)


def test_title_is_path_plus_short_hash_and_unique_to_content():
    h1, h2 = content_hash("version one"), content_hash("version two")
    assert source_title("notes/heapsort.md", h1) == f"notes/heapsort.md · {h1[:8]}"
    assert source_title("notes/heapsort.md", h1) != source_title("notes/heapsort.md", h2)
    # xxh3-128 of the UTF-8 bytes, the same in every process and every version: the titles already in notebooks
    # carry these hashes, and a change would upload every note again
    assert content_hash("notes/heapsort.md") == "bdfec8d6ad07122e53fe91f546ca9181"
    assert content_hash("Überblick") == "08239d77c56696d1ebd4a9dbcb5188eb"


def test_part_titles_are_numbered_from_one():
    h = content_hash("p")
    assert source_title("big.md", h, part=1, part_count=3) == f"big.md (part 2/3) · {short_hash(h)}"
    assert looks_managed(source_title("big.md", h, part=1, part_count=3))
    assert not looks_managed("Meeting notes")


def test_long_path_keeps_file_name_within_500_chars():
    path = "/".join(["deep"] * 200) + "/heapsort.md"
    title = source_title(path, content_hash("x"), 2, 5)
    assert len(title) == MAX_TITLE_CHARS
    assert title.startswith("…") and "heapsort.md (part 3/5) · " in title


def test_small_note_is_not_split():
    assert split_note("# A\n\nshort", max_words=100, max_bytes=1000) == ["# A\n\nshort"]


def test_split_prefers_paragraph_and_heading_boundaries():
    paragraphs = [f"para {i} " + "word " * 8 + "\n\n" for i in range(10)]
    text = "# Title\n" + "".join(paragraphs) + "## Later\nend\n"
    parts = split_note(text, max_words=25, max_bytes=10_000)
    assert "".join(parts) == text
    assert len(parts) > 1
    for part in parts:
        assert len(part.split()) <= 25
    for left, right in itertools.pairwise(parts):
        assert left.endswith("\n\n") or right.startswith("#")


def test_split_respects_byte_limit_with_multibyte_text():
    text = "한국어 문장입니다. " * 3000
    parts = split_note(text, max_words=10**6, max_bytes=4096)
    assert "".join(parts) == text
    assert all(len(p.encode()) <= 4096 for p in parts)


def test_split_cuts_a_single_giant_word():
    text = "x" * 10_000
    parts = split_note(text, max_words=10, max_bytes=3000)
    assert "".join(parts) == text and all(len(p) <= 3000 for p in parts)


@settings(max_examples=examples(60), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab #\n\té한")), max_size=600),
       st.integers(min_value=1, max_value=40), st.integers(min_value=8, max_value=200))
def test_split_is_lossless_and_within_limits(text, max_words, max_bytes):
    parts = split_note(text, max_words=max_words, max_bytes=max_bytes)
    assert "".join(parts) == text
    for part in parts:
        assert len(part.encode()) <= max_bytes
        assert len(part.split()) <= max_words


@pytest.mark.parametrize("size", [0, 1])
def test_empty_or_tiny_text(size):
    assert split_note("a" * size, max_words=5, max_bytes=5) == ["a" * size]


def test_a_title_too_long_for_its_path_shows_the_paths_end_and_is_matched_to_it_alone():
    path = "archive/" * 70 + "note.md"
    shown = parse_note_title(source_title(path, title_hash("words")))
    assert shown is not None and shown.shown.startswith("…") and shown_path_matches(shown.shown, path)
    assert not shown_path_matches(shown.shown, "elsewhere/note.md")  # the same name, but not the path's end
    assert shown_path_matches("a/note.md", "a/note.md") and not shown_path_matches("note.md", "a/note.md")


_TITLE_PIECES = st.sampled_from(["a", "/", " ", "·", " · ", "\n", "0", "f", "g", " (part 2/3)", " (3 notes)", " … ",
                                 "0123abcd", " · 0123abcd", "é"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_TITLE_PIECES, max_size=8).map("".join))
def test_the_short_hash_of_a_title_is_what_the_full_title_pattern_reads(title):
    """`title_short_hash` reads the hash from the title's end; it must agree with the pattern that parses the whole
    title (path, part marker, hash), for nlmsync's titles and for any other text a listing may hold."""
    from nlmsync.sync.titles import _TITLE_PATTERN, title_short_hash

    match = _TITLE_PATTERN.match(title)
    assert title_short_hash(title) == (match.group("hash") if match is not None else None)


@pytest.mark.parametrize("title", [
    source_title("notes/a.md", content_hash("x")),
    source_title("notes/a.md", content_hash("x"), 1, 3),
    source_title("p" * 600, content_hash("x")),
    source_title("a.md", content_hash("x")) + "\n",
    "a.md · 0123abcd\nb",
    " · 0123abcd",
    "notes/a.md · 0123ABCD",
])
def test_the_short_hash_of_titles_at_the_edges(title):
    from nlmsync.sync.titles import _TITLE_PATTERN, title_short_hash

    match = _TITLE_PATTERN.match(title)
    assert title_short_hash(title) == (match.group("hash") if match is not None else None)


def test_a_packed_note_whose_path_fills_the_title_exactly_is_shown_whole_and_one_longer_is_shortened() -> None:
    suffix = len(pack_title("a.md", "a.md", 1, "0" * 32)) - len("a.md")
    exact = "d/" * 100 + "n" * (MAX_TITLE_CHARS - suffix - 203) + ".md"
    assert len(pack_title(exact, exact, 1, "0" * 32)) == MAX_TITLE_CHARS
    assert pack_title(exact, exact, 1, "0" * 32).startswith(exact)
    longer = pack_title("x" + exact, "x" + exact, 1, "0" * 32)
    assert len(longer) == MAX_TITLE_CHARS and longer.startswith("…") and exact[1:] in longer
