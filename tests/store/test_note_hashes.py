"""What each note hashed to when last read, by path, trusted only for the file's mtime, size and split limits as
recorded: replaced, forgotten and looked up, a few paths one by one or many at once, with the same answers."""

from __future__ import annotations

import pytest

from nlmsync.store import NoteHashes, StateStore

SPLIT = "500000/1000000"


def _records(count: int) -> list[NoteHashes]:
    return [NoteHashes(f"notes/{i:04d}.md", 1_000 + i, 10 + i, SPLIT, (f"h{i}a", f"h{i}b")[:1 + i % 2])
            for i in range(count)]


@pytest.mark.parametrize("asked", [3, 250], ids=["a few paths", "many paths"])
def test_the_records_of_the_paths_asked_for_come_back_as_recorded(store: StateStore, asked: int) -> None:
    records = _records(300)
    store.record_note_hashes(records)
    wanted = [r.path for r in records[:asked]] + ["notes/never-read.md"]
    assert store.note_hashes(wanted) == {r.path: r for r in records[:asked]}
    assert store.note_hashes() == {r.path: r for r in records}
    assert store.note_hashes([]) == {}


def test_a_record_is_replaced_and_forgotten_in_one_step(store: StateStore) -> None:
    first, second = _records(2)
    store.record_note_hashes([first, second])
    newer = NoteHashes(first.path, first.mtime_ns + 1, first.size, SPLIT, ("h-new",))
    store.record_note_hashes([newer], forget=[second.path])
    assert store.note_hashes() == {first.path: newer}
    store.record_note_hashes([], forget=[first.path])
    assert store.note_hashes() == {}


def test_a_record_holds_only_for_the_file_and_split_limits_it_was_made_with() -> None:
    record = NoteHashes("a.md", 1_000, 10, SPLIT, ("h",))
    assert record.holds_for(1_000, 10, SPLIT)
    assert not record.holds_for(1_001, 10, SPLIT)
    assert not record.holds_for(1_000, 11, SPLIT)
    assert not record.holds_for(1_000, 10, "1000/1000000")
