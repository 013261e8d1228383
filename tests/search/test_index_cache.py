"""The persisted index cache: a new process reads only what changed while nothing ran."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nlmsync.config import Settings
from nlmsync.search import index as index_module
from nlmsync.search.index import NoteIndex
from nlmsync.store.db import open_database

QUERIES = ["How does heapsort work?", "김치찌개", "ヒープソート", "E = mc²", "meeting re-indexing", "sourdough"]


def fresh(vault: Path, **settings: object) -> NoteIndex:
    """A NoteIndex as a new process would make it: a new connection to the state file."""
    return NoteIndex(vault, open_database(vault / ".nlmsync" / "state.db"), Settings(vault=vault, **settings))


def ranking(index: NoteIndex) -> list[list[tuple[str, float, tuple[str, ...]]]]:
    return [[(h.path, h.score, h.matched_terms) for h in index.search(q)] for q in QUERIES]


def touch(path: Path, text: str) -> None:
    old = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(old + 10_000_000, old + 10_000_000))


def test_unchanged_vault_is_not_read_again(vault: Path) -> None:
    first = fresh(vault)
    expected = ranking(first)
    assert first.notes_read == 30  # 26 notes + the private, binary and invalid ones (empty ones are never read)
    second = fresh(vault)
    report = second.sync()
    assert second.notes_read == 0
    assert report.indexed == 26 and report.added == report.updated == report.removed == 0
    assert {s.path for s in report.skipped} == {s.path for s in first.skipped()}
    assert ranking(second) == expected


def test_changes_made_while_nothing_ran_are_found(vault: Path) -> None:
    fresh(vault).sync()
    touch(vault / "inbox.md", "An okapi in the inbox.")
    (vault / "cooking" / "shakshuka.md").unlink()
    (vault / "new.md").write_text("# New\n\nanother okapi")
    index = fresh(vault)
    report = index.sync()
    assert (report.updated, report.added, report.removed) == (1, 1, 1)
    assert index.notes_read == 2
    assert [h.path for h in index.search("okapi")] == ["new.md", "inbox.md"]
    assert ranking(index) == ranking(NoteIndex(vault, None, Settings(vault=vault)))


def test_incremental_changes_persist_without_a_merge(vault: Path) -> None:
    index = fresh(vault)
    index.sync()
    touch(vault / "inbox.md", "A tapir.")
    index.mark_path_modified("inbox.md")
    index.sync()
    again = fresh(vault)
    again.sync()
    assert again.notes_read == 0
    assert [h.path for h in again.search("tapir")] == ["inbox.md"]
    assert ranking(again) == ranking(index)


@pytest.mark.parametrize("setting", ["weight_heading", "weight_folder"])
def test_cache_from_other_settings_is_rebuilt(vault: Path, setting: str) -> None:
    fresh(vault).sync()
    other = fresh(vault, **{setting: 3.0})
    other.sync()
    assert other.notes_read == 30
    assert ranking(other) == ranking(NoteIndex(vault, None, Settings(vault=vault, **{setting: 3.0})))


def test_damaged_snapshot_is_re_read_not_fatal(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    assert db.execute("SELECT count(*) FROM index_snapshot").fetchone()[0] == 1
    db.execute("UPDATE index_snapshot SET slots = x'00'")
    db.conn.commit()
    index = fresh(vault)
    index.sync()
    assert index.notes_read == 26
    assert ranking(index) == ranking(NoteIndex(vault, None, Settings(vault=vault)))


def test_damaged_overlay_row_is_re_read_not_fatal(vault: Path) -> None:
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    db.execute("UPDATE index_docs SET terms = 'not json' WHERE path = 'inbox.md'")
    db.conn.commit()
    index = fresh(vault)
    index.sync()
    assert index.notes_read == 1
    assert ranking(index) == ranking(NoteIndex(vault, None, Settings(vault=vault)))


def test_merges_and_overlay_give_the_same_ranking(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    index = fresh(vault)
    index.sync()
    for i, path in enumerate(["inbox.md", "Home.md", "journal/2026-05-10.md"]):
        touch(vault / path, f"edited {i} heapsort kimchi")
        index.mark_path_modified(path)
        index.sync()
    assert ranking(index) == ranking(fresh(vault)) == ranking(NoteIndex(vault, None, Settings(vault=vault)))


def test_concurrent_searches_from_threads(vault: Path) -> None:
    index = fresh(vault)
    expected = {q: [(h.path, h.score) for h in NoteIndex(vault, None, Settings(vault=vault)).search(q)]
                for q in QUERIES}
    start = threading.Barrier(8)

    def worker(n: int) -> list[bool]:
        start.wait(timeout=30)
        if n == 0:
            index.mark_full_rescan_needed()
        return [[(h.path, h.score) for h in index.search(q)] == expected[q] for q in QUERIES * 5]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(worker, range(8)))
    assert all(all(r) for r in results)


def test_a_failed_cache_write_keeps_serving_and_rewrites_later(vault: Path) -> None:
    db = open_database(vault / ".nlmsync" / "state.db")
    db.execute("PRAGMA query_only = ON")
    index = NoteIndex(vault, db, Settings(vault=vault))
    expected = ranking(NoteIndex(vault, None, Settings(vault=vault)))
    assert ranking(index) == expected  # the write failed, the answers did not
    db.execute("PRAGMA query_only = OFF")
    touch(vault / "inbox.md", "A pangolin.")
    index.mark_path_modified("inbox.md")
    assert [h.path for h in index.search("pangolin")] == ["inbox.md"]
    again = fresh(vault)
    again.sync()
    assert again.notes_read == 0
    assert ranking(again) == ranking(index)
