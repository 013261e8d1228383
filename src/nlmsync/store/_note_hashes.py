"""What a vault note hashed to when it was last read, keyed by its file's modification time and size: an idle
refresh recognises an unchanged note by one `stat` instead of reading and hashing it again.

A record is a fact about a file, not about a notebook: a lost or stale record only costs a read. It is
trusted only while the file's mtime (nanoseconds) and size are exactly as recorded and the split limits
are those the hashes were made with; whoever records makes sure the mtime was safely in the past at
reading time (a write within the same timestamp tick would otherwise go unseen).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from nlmsync.store._base import StoreBase
from nlmsync.store._models import NoteHashes

_SELECT = "SELECT path, mtime_ns, size, split, hashes FROM note_hashes"
_FEW_PATHS = 200  # up to this many paths are looked up one by one; more read the whole table


def _record(row: tuple[str, int, int, str, str]) -> NoteHashes:
    path, mtime_ns, size, split, hashes = row
    return NoteHashes(path, mtime_ns, size, split, tuple(hashes.split()))


class NoteHashesMixin(StoreBase):
    def note_hashes(self, paths: Collection[str] | None = None) -> dict[str, NoteHashes]:
        """The records of `paths` (all records when None), by path; a path without one is absent."""
        with self._reading():
            if paths is None or len(paths) > _FEW_PATHS:
                wanted = None if paths is None else set(paths)
                found = (_record(r) for r in self.db.execute(_SELECT).fetchall())
                return {r.path: r for r in found if wanted is None or r.path in wanted}
            rows = (self.db.execute(f"{_SELECT} WHERE path = ?", [p]).fetchone() for p in paths)
            return {r[0]: _record(r) for r in rows if r is not None}

    def record_note_hashes(self, records: Iterable[NoteHashes], forget: Iterable[str] = ()) -> None:
        """Record (or replace) `records` and drop the records of the paths in `forget`, in one step."""
        values = [(r.path, r.mtime_ns, r.size, r.split, " ".join(r.hashes)) for r in records]
        gone = [(p,) for p in forget]
        if not values and not gone:
            return
        with self.step():
            self.db.conn.executemany("INSERT OR REPLACE INTO note_hashes (path, mtime_ns, size, split, hashes) "
                                     "VALUES (?, ?, ?, ?, ?)", values)
            self.db.conn.executemany("DELETE FROM note_hashes WHERE path = ?", gone)
