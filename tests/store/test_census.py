"""What `check` counts per notebook from the state file: each synced note once (alone, in parts or in a pack),
attachments apart, stale mappings not at all, and the file read without being changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.store.helpers import NB, add

from nlmsync.errors import StateLockedError
from nlmsync.store import PackRecord, StateStore
from nlmsync.store.census import SyncedCount, synced_counts
from nlmsync.store.db import connect_read_only


def test_notes_and_attachments_are_counted_per_notebook_each_once(store: StateStore, state_path: Path) -> None:
    add(store, "a.md", "s-a")
    add(store, "long.md", "s-l1", part=0, part_count=2)
    add(store, "long.md", "s-l2", part=1, part_count=2)
    add(store, "paper.pdf", "s-p")
    add(store, "gone.md", "s-g")
    store.set_status(NB, "s-g", "stale")  # missing from the notebook: not synced
    store.record_pack(PackRecord(NB, "p-1", "hash-p", "b.md … c.md (2 notes) · aaaaaaaa", "b.md", "c.md", 2, 200),
                      [("b.md", "hb"), ("c.md", "hc")])
    add(store, "x.md", "s-x", notebook_id="nb-2")
    store.record_notebook(NB, "Vault")
    assert synced_counts(state_path) == [SyncedCount(NB, "Vault", 4, 1), SyncedCount("nb-2", None, 1, 0)]


def test_no_state_file_counts_nothing_and_makes_none(tmp_path: Path) -> None:
    assert synced_counts(tmp_path / "state.db") == [] and not (tmp_path / "state.db").exists()


def test_a_file_another_run_keeps_locked_is_said_busy_not_unreadable(store: StateStore, state_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    add(store, "a.md", "s-a")

    class Locked:
        """The file's connection, on which SQLite gave up waiting for another run's lock."""

        def __init__(self, path: Path, *, immutable: bool) -> None:
            self.conn = connect_read_only(path, immutable=immutable)

        def execute(self, *args: object) -> None:
            raise sqlite3.OperationalError("database is locked")

        def close(self) -> None:
            self.conn.close()

    monkeypatch.setattr("nlmsync.store.census.connect_read_only", Locked)
    with pytest.raises(StateLockedError):
        synced_counts(state_path)
