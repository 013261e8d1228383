"""The store's core: one connection (opened and closed here), one re-entrant lock, steps as transactions, the
writer lock.

Every public method of `StateStore` runs either inside `step()` (writes) or `_reading()` (reads),
both holding the store's RLock, so one instance may be shared by threads. A step is one logical
change in one `BEGIN IMMEDIATE` transaction; a step inside a step joins it (as a savepoint, so an
inner failure the caller catches rolls back only the inner part): both are `store.transaction`. Work a step makes due — automatic
compaction — runs at the end of the outermost step, inside the same transaction.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Self

from sqlite_utils import Database

from nlmsync.config import Settings
from nlmsync.store._lock import WriterLock
from nlmsync.store.db import open_database, state_failure
from nlmsync.store.transaction import transaction

# How long a run waits for another nlmsync run on the same vault before stopping as busy (exit 7).
DEFAULT_WRITER_TIMEOUT = 10.0
Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StoreBase:
    writer_timeout: float = DEFAULT_WRITER_TIMEOUT
    """How long `writer()` waits for another run to finish before giving up."""

    def __init__(self, db: Database, settings: Settings | None = None, *, clock: Clock = _utc_now) -> None:
        self.db = db
        self.settings = settings if settings is not None else Settings()
        self._clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        self._end_of_step: list[Callable[[], None]] = []
        self.path = _database_file(db)
        self._writer = WriterLock(self.path.with_name(self.path.name + ".lock") if self.path else None)

    # --- transactions -------------------------------------------------------------------------
    @contextmanager
    def step(self) -> Iterator[None]:
        """One logical step = one transaction: after a crash the file is before it or after it."""
        with self._lock, self._translate_errors():
            outermost = self._depth == 0
            self._depth += 1
            try:
                with transaction(self.db.conn, immediate=outermost):
                    if not outermost:
                        yield
                        return
                    try:
                        yield
                        while self._end_of_step:
                            self._end_of_step.pop(0)()
                    except BaseException:
                        self._end_of_step.clear()
                        raise
            finally:
                self._depth -= 1

    @contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock, self._translate_errors():
            yield

    @contextmanager
    def _translate_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            failure = state_failure(self._name, exc, "write")
            if failure is None:
                raise
            raise failure from exc

    def _at_end_of_step(self, action: Callable[[], None]) -> None:
        if action not in self._end_of_step:
            self._end_of_step.append(action)

    @property
    def _name(self) -> str:
        return str(self.path) if self.path else "in-memory state"

    # --- writer lock --------------------------------------------------------------------------
    @contextmanager
    def writer(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the cross-process writer lock for the block (one nlmsync run writes at a time).

        Raises:
            StateLockedError: "another nlmsync is running on this vault (pid N)" after `timeout` seconds.
        """
        self._writer.acquire(self.writer_timeout if timeout is None else timeout)
        try:
            yield
        finally:
            self._writer.release()

    # --- what one part of the store uses of another: declared for the type checker, defined by the mixin
    # named (`StateStore` inherits them all)
    if TYPE_CHECKING:
        def _resolve(self, source_id: str) -> str:
            """The source id at the end of `source_id`'s alias chain (`AliasMixin`)."""
            ...

        def _queue_deletion(self, notebook_id: str, source_id: str, reason: str) -> None:
            """Queue a remote source for deletion by the next run (`EvictionMixin`)."""
            ...

        def _compact_now(self) -> None:
            """Compact the conversations and aliases past their bounds (`CompactionMixin`)."""
            ...

    # --- small shared helpers -----------------------------------------------------------------
    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="microseconds")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, value])

    def _next_ticks(self, count: int) -> int:
        """Reserve `count` consecutive recency ticks; returns the first (call inside a step)."""
        first = int(self._meta("next_tick") or "1")
        self._set_meta("next_tick", str(first + count))
        return first

    # --- opening and closing ----------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path, settings: Settings | None = None) -> Self:
        """Open (or create) the state file at `path`.

        Raises:
            StateCorruptError, StateTooNewError, StateError: the file is refused and left untouched.
        """
        return cls(open_database(Path(path)), settings)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            while self._writer.held:
                self._writer.release()
            self.db.close()


def _database_file(db: Database) -> Path | None:
    for _seq, name, filename in db.execute("PRAGMA database_list").fetchall():
        if name == "main" and filename:
            return Path(filename)
    return None
