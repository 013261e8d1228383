"""The persisted index cache: a new process reads only what changed while nothing ran."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from sqlite_utils import Database

from nlmsync.config import Settings
from nlmsync.search import index as index_module
from nlmsync.search.index import NoteIndex
from nlmsync.store.db import open_database
from nlmsync.store.schema import migrations

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
    db.execute("UPDATE index_blocks SET postings = x'00'")
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


PINNED = Path(__file__).with_name("fixture_vault_rankings.json")


def pinned_ranking(index: NoteIndex | None = None, *, vault: Path | None = None) -> dict[str, list[list[object]]]:
    """Every hit of each pinned query, its score as `float.hex` (every bit of it): from `index`, or each query
    the first of a new process on `vault`, answered from the state file without loading the index."""
    answers: dict[str, list[list[object]]] = {}
    for query in json.loads(PINNED.read_text(encoding="utf-8")):
        answering = index if index is not None else fresh(vault)
        answers[query] = [[h.path, h.score.hex(), list(h.matched_terms)] for h in answering.search(query)]
        assert index is not None or not answering.loaded
    return answers


def test_a_saved_index_ranks_the_fixture_vault_to_the_bit_as_pinned(vault: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot keeps each weighted frequency exactly (a position in a table of the distinct values): built,
    answered cold from the state file, or loaded whole by a new process, the fixture vault's scores are the
    pinned ones, bit for bit."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    expected = json.loads(PINNED.read_text(encoding="utf-8"))
    assert pinned_ranking(NoteIndex(vault, None, Settings(vault=vault))) == expected
    fresh(vault).sync()
    assert pinned_ranking(vault=vault) == expected
    loaded = fresh(vault)
    loaded.sync()
    assert loaded.loaded and loaded.notes_read == 0
    assert pinned_ranking(loaded) == expected


def _float64_snapshot_file(vault: Path) -> Path:
    """A state file as an nlmsync whose snapshot row held the postings uncompressed left it: the schema up to
    `0005_packs`, a snapshot row of float64 frequencies and int64 offsets, its format-1 signature, and a row."""
    built = NoteIndex(vault, None, Settings(vault=vault))
    built.sync()
    postings = built._postings
    path = vault / ".nlmsync" / "state.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="0006_index_blocks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "CACHE_FORMAT", 1)
        signature = built._signature()
    count = len(postings.base_paths)
    old.conn.execute(
        "INSERT INTO index_snapshot (id, crc, paths, mtimes, sizes, lengths, vocab, offsets, slots, tfs)"
        " VALUES (1, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
        ["\0".join(p or "" for p in postings.base_paths).encode(), np.zeros(count, np.int64).tobytes(),
         np.zeros(count, np.int64).tobytes(), postings.base_lengths.astype(np.int64).tobytes(),
         "\n".join(postings.terms).encode(), postings.offsets.astype(np.int64).tobytes(),
         postings.slots.astype(np.int32).tobytes(), postings.tf_values[postings.tf_codes].tobytes()])
    old.conn.executemany("INSERT INTO index_meta (key, value) VALUES (?, ?)",
                         [("signature", signature), ("vocabulary_blocks", "[]")])
    old.conn.execute("INSERT INTO index_docs (path, kind, mtime_ns, size) VALUES ('inbox.md', 'deleted', -1, -1)")
    old.conn.commit()
    old.close()
    return path


def test_a_state_file_with_a_float64_snapshot_is_upgraded_and_its_index_built_again(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    path = _float64_snapshot_file(vault)
    index = fresh(vault)
    assert index.search("heapsort")  # answered, not refused; the old snapshot is not read
    assert index.loaded and index.notes_read == 30
    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(index_snapshot)")]
    assert "tf_values" in columns and "tfs" not in columns
    assert conn.execute("SELECT count(*) FROM index_blocks").fetchone()[0] > 0
    assert conn.execute("SELECT count(*) FROM index_meta WHERE key = 'vocabulary_blocks'").fetchone()[0] == 0
    conn.close()
    expected = json.loads(PINNED.read_text(encoding="utf-8"))
    assert pinned_ranking(index) == expected
    assert pinned_ranking(vault=vault) == expected  # the rebuilt snapshot answers a new process cold
