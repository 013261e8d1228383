"""Notes of many megabytes: indexing and reading take memory bounded by a small multiple of the note's size
(tracemalloc peaks, deterministic), and the bounded code paths give what the plain ones give."""

from __future__ import annotations

import importlib
import re
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from nlmsync.config import Settings
from nlmsync.reading.note import plan_chunks, rank_segments, read_note
from nlmsync.reading.snippets import extract_snippet, match_terms
from nlmsync.search.bm25 import rank_texts
from nlmsync.search.index import NoteIndex
from nlmsync.search.markdown import note_fields, split_markdown
from nlmsync.search.query import query_terms
from nlmsync.text import PIECE_CHARS, count_tokens, text_pieces, tokenize

tokenize_module = importlib.import_module("nlmsync.text.tokens")

FIXTURE_VAULT = Path(__file__).resolve().parents[2] / "fixtures" / "vault"
MEMORY_FACTOR = 5  # the bound: peak memory while indexing or reading one note <= 5x its size


def fixture_texts() -> list[str]:
    texts = []
    for path in sorted(FIXTURE_VAULT.rglob("*.md")):
        data = path.read_bytes()
        if b"\x00" not in data:
            texts.append(data.decode("utf-8", "replace"))
    return texts


def large_note(megabytes: float) -> str:
    """Ordinary notes (headings, lists, code, CJK, front matter) one after another, `megabytes` of UTF-8."""
    texts = fixture_texts()
    parts, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        parts.append(f"\n\n## Part {i}\n\n{texts[i % len(texts)]}")
        size += len(parts[-1].encode("utf-8"))
        i += 1
    return "".join(parts)


def peak_of(work: object) -> int:
    tracemalloc.start()
    try:
        work()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("size", [1, 2, 7, 64, 4096])
@pytest.mark.parametrize("joined", [1, PIECE_CHARS])  # 1: each piece tokenized on its own, no joining
def test_counting_tokens_in_pieces_equals_tokenizing_the_whole_text(size: int, joined: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize_module, "PIECE_CHARS", joined)
    text = "".join(fixture_texts()) + " heap\nsort Σ ΣΑΣ\r\nヒープ\tソート " + "x" * 300 + " tail"
    pieces = list(text_pieces(text, size=size))
    assert "".join(pieces) == text
    assert count_tokens(pieces) == Counter(tokenize(text))


@pytest.mark.parametrize("variant", ["as is", "crlf", "setext around"])
def test_note_fields_count_the_tokens_of_split_markdowns_texts(variant: str) -> None:
    for text in fixture_texts():
        if variant == "crlf":
            text = text.replace("\n", "\r\n")
        elif variant == "setext around":
            text = f"first line\nsecond line\n===\n{text}\nlast paragraph\ngoes on\n---\nafter"
        fields, parts = note_fields("n.md", text), split_markdown(text)
        assert fields.body == Counter(tokenize(parts.body))
        assert fields.heading == Counter(tokenize(parts.heading))


@pytest.mark.slow  # indexes a note of several MB with its memory traced
def test_indexing_a_large_note_takes_memory_within_5x_its_size(tmp_path: Path) -> None:
    text = large_note(3) + "\n\nzanzibar at the very end\n"
    (tmp_path / "big.md").write_text(text, encoding="utf-8")
    size = (tmp_path / "big.md").stat().st_size
    NoteIndex(tmp_path).sync()  # imports and first-use compilations are not the note's cost
    index = NoteIndex(tmp_path)
    peak = peak_of(index.sync)
    assert peak <= MEMORY_FACTOR * size, f"indexing took {peak / size:.1f}x the note's size"
    assert [hit.path for hit in index.search("zanzibar")] == ["big.md"]


QUERIES = ["heapsort worst case", "heap sort", "recursion depth quicksort", "김치찌개 만드는 법", "ヒープソート",
           "sourdough starter", "the", "sift", "zzz unknown words", "quick"]


@pytest.mark.slow  # a large note ranked segment by segment against BM25 over all its tokens, per query
@pytest.mark.parametrize("query", QUERIES)
def test_ranking_a_notes_segments_equals_bm25_over_all_their_tokens(query: str) -> None:
    settings = Settings()
    text = large_note(0.2)
    plan = plan_chunks(text, settings)
    terms = query_terms(query)
    docs = [match_terms(tokenize(segment.text), terms) for segment in plan.segments]
    expected = sorted(((score, i) for i, score in enumerate(rank_texts(terms, docs)) if score > 0),
                      key=lambda pair: (-pair[0], pair[1]))
    hits = rank_segments(plan, query)
    assert [(hit.score, hit.segment.index) for hit in hits] == expected
    assert all(plan.chunks[hit.chunk_index].char_offset_start <= hit.segment.char_offset_start for hit in hits)


@pytest.mark.slow  # a note of tens of megabytes, read whole
def test_reading_a_large_note_takes_memory_within_5x_its_size() -> None:
    settings = Settings()
    # one str byte a character, as the file; without the fixture transcript's timestamps (repeated, they
    # would go back in time, which no transcript does): the note is cut into word windows
    text = re.sub(r"(?m)^\[?\d+:\d+(?::\d+)?\]?", "", large_note(2).encode("ascii", "ignore").decode("ascii"))
    size = len(text)
    plan_chunks("warm up the imports", settings)
    reading = None

    def read() -> None:
        nonlocal reading
        plan = plan_chunks(text, settings)
        reading = read_note("big.md", text, settings, query="heapsort worst case", plan=plan)
        read_note("big.md", text, settings, query="sourdough starter", plan=plan)

    peak = peak_of(read)
    assert peak <= MEMORY_FACTOR * size, f"reading took {peak / size:.1f}x the note's size"
    assert reading is not None and any(view.role == "match" for view in reading.chunks)


@pytest.mark.parametrize("query", ["heapsort worst case", "zzz unknown", None])
def test_a_snippet_of_a_large_note_copies_it_at_most_once(query: str | None) -> None:
    text = large_note(2).encode("ascii", "ignore").decode("ascii") + " \n"
    extract_snippet("warm up the imports: heapsort", "heapsort")
    snippet = ""

    def cut() -> None:
        nonlocal snippet
        snippet = extract_snippet(text, query, 300)

    peak = peak_of(cut)
    assert peak <= 2 * len(text), f"a snippet took {peak / len(text):.1f}x the note's size"
    assert 0 < len(snippet) <= 300
