"""The state file's one transaction primitive: `transaction(conn)`, for the store's steps, the index cache's
writes and the migrations alike.

It is sqlite-utils' `Database.atomic` (a transaction, or a savepoint inside the caller's, so an inner failure
the caller catches rolls back only the inner part; a failed COMMIT is rolled back), with two differences that
are why nlmsync keeps its own rather than calling that one:

- it takes a plain `sqlite3` connection: a search in a fresh process writes the index cache without importing
  sqlite-utils (about 0.3 s of a 2-core machine's start-up);
- `immediate=True` starts with `BEGIN IMMEDIATE`: a writer takes the write lock at once, so two processes
  writing the same file wait on the busy timeout instead of one failing to upgrade a read lock (DESIGN.md's
  sqlite-utils note; `Database.atomic` always begins deferred).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["transaction"]

_savepoint_ids = itertools.count(1)


@contextmanager
def transaction(conn: sqlite3.Connection, *, immediate: bool = False) -> Iterator[None]:
    """One transaction around the block, or a savepoint when `conn` is already in one.

    `immediate` (the outermost transaction only): begin with `BEGIN IMMEDIATE`, taking the write lock at once.
    """
    if conn.in_transaction:
        savepoint = f"nlmsync_{next(_savepoint_ids)}"
        conn.execute(f"SAVEPOINT {savepoint}")
        try:
            yield
        except BaseException:
            # an error that ended the whole transaction (savepoints included) propagates as it is
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
                conn.execute(f"RELEASE SAVEPOINT {savepoint}")
            raise
        else:
            conn.execute(f"RELEASE SAVEPOINT {savepoint}")
        return
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    else:
        try:
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()
            raise
