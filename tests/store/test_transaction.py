"""`store.transaction`: the one transaction primitive of the state file (steps, index cache, migrations)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nlmsync.store.transaction import transaction


class Boom(Exception):
    pass


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    conn.execute("PRAGMA journal_mode=wal")  # as the state file
    conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    return conn


def _rows(conn: sqlite3.Connection) -> list[int]:
    return [x for (x,) in conn.execute("SELECT x FROM t ORDER BY x")]


def test_a_transaction_commits_the_block_or_nothing_of_it(tmp_path: Path) -> None:
    conn = _open(tmp_path / "s.db")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(Boom), transaction(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        raise Boom
    assert _rows(conn) == [1] and not conn.in_transaction
    assert _rows(_open(tmp_path / "s.db")) == [1]  # committed, for another connection too


def test_inside_a_transaction_a_caught_failure_rolls_back_only_the_inner_block(tmp_path: Path) -> None:
    conn = _open(tmp_path / "s.db")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(Boom), transaction(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise Boom
        with transaction(conn):
            conn.execute("INSERT INTO t VALUES (3)")
        assert conn.in_transaction
    assert _rows(conn) == [1, 3]


def test_an_error_that_ends_the_whole_transaction_propagates_as_it_is(tmp_path: Path) -> None:
    conn = _open(tmp_path / "s.db")
    with pytest.raises(Boom), transaction(conn), transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("ROLLBACK")  # as a RAISE(ROLLBACK) trigger would
        raise Boom
    assert _rows(conn) == [] and not conn.in_transaction


def test_immediate_takes_the_write_lock_at_once(tmp_path: Path) -> None:
    """A deferred transaction that has only read holds no write lock; an immediate one holds it before any
    write, so a second writer is refused at once (timeout 0 here) instead of one of them failing later."""
    first, second = _open(tmp_path / "s.db"), _open(tmp_path / "s.db")
    with transaction(first):
        _rows(first)
        with transaction(second):
            second.execute("INSERT INTO t VALUES (1)")
    with transaction(first, immediate=True), pytest.raises(sqlite3.OperationalError, match="locked"):
        second.execute("BEGIN IMMEDIATE")
    assert _rows(second) == [1]
