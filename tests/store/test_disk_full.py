"""No room to write the state file: its own one-line error (exit 7), never taken for a damaged file, nothing
moved aside or half-written, and the same work goes through once there is room.

The full disk is SQLite's own: `PRAGMA max_page_count` makes the file unable to grow, and SQLite answers every
write that needs a page more with SQLITE_FULL, as it does when the device is full. Where SQLite meets the full
device while growing its WAL index, the error it raises then is handed to the opening check as it would be.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from tests.store.helpers import NB, add

from nlmsync.errors import EXIT_BUSY, DiskFullError, StateError, exit_code_for
from nlmsync.store import StateStore

SQLITE_IOERR_SHMSIZE = 4874


def fill_up(store: StateStore) -> None:
    """The disk under the state file is full from now on: not one page more."""
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")


def room_again(store: StateStore) -> None:
    store.db.execute("PRAGMA max_page_count = 1073741823")


def test_a_step_on_a_full_disk_is_its_own_error_and_the_file_stays_as_it_was(state_path: Path) -> None:
    with StateStore.open(state_path) as store:
        add(store, "kept.md", "s0")
        fill_up(store)
        with pytest.raises(DiskFullError) as caught, store.step():
            for i in range(200):
                add(store, f"n{i:03}.md", f"s{i + 1}")
        error = caught.value
        assert exit_code_for(error) == EXIT_BUSY
        assert str(error) == f"{state_path}: no space left on the device; nothing was half-written"
        assert "mv" not in (error.hint or "") and "free some space" in (error.hint or "")
        assert [m.path for m in store.all_mappings(NB)] == ["kept.md"]  # the step is not there, not half there
        room_again(store)
        with store.step():  # the same work, once there is room
            for i in range(200):
                add(store, f"n{i:03}.md", f"s{i + 1}")
        assert len(store.all_mappings(NB)) == 201
        assert store.db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    assert sorted(p.name for p in state_path.parent.iterdir() if "broken" in p.name) == []


def test_a_state_file_whose_wal_index_cannot_grow_is_a_full_disk_not_a_damaged_file(
        state_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
    digest = hashlib.sha256(state_path.read_bytes()).hexdigest()
    connect = sqlite3.connect

    def full_device(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if kwargs.get("uri"):  # the read-only opening check: SQLite cannot grow the -shm file on a full device
            error = sqlite3.OperationalError("disk I/O error")
            error.sqlite_errorcode = SQLITE_IOERR_SHMSIZE
            error.sqlite_errorname = "SQLITE_IOERR_SHMSIZE"
            raise error
        return connect(database, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sqlite3, "connect", full_device)
    with pytest.raises(DiskFullError) as caught:
        StateStore.open(state_path)
    assert "no space left" in str(caught.value) and "mv" not in (caught.value.hint or "")
    monkeypatch.undo()
    assert hashlib.sha256(state_path.read_bytes()).hexdigest() == digest
    with StateStore.open(state_path) as store:
        assert [m.path for m in store.all_mappings(NB)] == ["a.md"]


def test_an_io_error_on_opening_is_not_taken_for_damage_either(state_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
    connect = sqlite3.connect

    def failing(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if kwargs.get("uri"):
            error = sqlite3.OperationalError("unable to open database file")
            error.sqlite_errorcode = 14  # SQLITE_CANTOPEN
            raise error
        return connect(database, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sqlite3, "connect", failing)
    with pytest.raises(StateError) as caught:
        StateStore.open(state_path)
    assert str(caught.value) == f"{state_path}: cannot read the state file (unable to open database file)"
    assert caught.value.hint is None  # nothing says the file is damaged: no advice to move it aside
