"""The package exports exactly the documented names, each the thing itself (not a submodule of the same name)."""

from __future__ import annotations

import types

from nlmsync import reading


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(reading.__all__) == [
        "ChunkPlan", "NoteReading", "chunk_id", "extract_snippet", "find_cited_note", "find_cited_text",
        "format_timestamp", "heading_above", "parse_chunk_id", "plan_chunks", "rank_segments", "read_chunks",
        "read_note",
    ]
    for name in reading.__all__:
        value = getattr(reading, name)
        assert not isinstance(value, types.ModuleType), name
        assert value.__module__.startswith("nlmsync.reading"), name
