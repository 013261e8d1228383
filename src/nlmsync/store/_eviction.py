"""Usage marking, eviction candidates from the segmented LRU, the eviction log, and the
queue of pending deletions (old sources whose best-effort delete failed).

Only managed, active mappings are candidates. The policy itself is pure (`_lru`); this module loads
a notebook's queue, applies the policy and writes the changes back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from nlmsync.store._base import StoreBase
from nlmsync.store._lru import PROTECTED, LruEntry, apply_use, eviction_order, protected_capacity
from nlmsync.store._models import EvictionRecord, PendingDeletion

EVICTION_LOG_LIMIT = 1000
# Marking up to this many paths reads only their queue entries (and the protected ones an overflow may demote);
# more, and the notebook's whole queue is read at once.
_FEW_PATHS = 200

# The queue walked in its key's (path) order, each entry's rows found by theirs: no sort for the GROUP BY
# (CROSS JOIN keeps SQLite from starting at the mappings' hash index and sorting after).
_CANDIDATES = """
SELECT l.path, l.segment, l.tick, max(m.use_count)
FROM lru_entries l CROSS JOIN source_mappings m ON m.notebook_id = l.notebook_id AND m.path = l.path
WHERE l.notebook_id = ? AND m.managed = 1 AND m.status = 'active' {extra}
GROUP BY l.path {order}
"""
# Walks the (notebook, segment, tick) index from the least recent end and stops after LIMIT candidates.
_LEAST_RECENT_PROTECTED = f"""
SELECT l.path, l.segment, l.tick, (SELECT max(m.use_count) FROM source_mappings m
    WHERE m.notebook_id = l.notebook_id AND m.path = l.path AND m.managed = 1 AND m.status = 'active')
FROM lru_entries l
WHERE l.notebook_id = ? AND l.segment = '{PROTECTED}' AND EXISTS (SELECT 1 FROM source_mappings m
    WHERE m.notebook_id = l.notebook_id AND m.path = l.path AND m.managed = 1 AND m.status = 'active')
ORDER BY l.tick LIMIT ?
"""
_PROTECTED_COUNT = f"""
SELECT count(*) FROM lru_entries l
WHERE l.notebook_id = ? AND l.segment = '{PROTECTED}' AND EXISTS (SELECT 1 FROM source_mappings m
    WHERE m.notebook_id = l.notebook_id AND m.path = l.path AND m.managed = 1 AND m.status = 'active')
"""


class EvictionMixin(StoreBase):
    @property
    def protected_capacity(self) -> int:
        """Size of the protected LRU segment: `protected_share` of `capacity`, rounded down."""
        return protected_capacity(self.settings.capacity, self.settings.protected_share)

    def _queued(self, notebook_id: str, *, only: list[str] | None = None) -> dict[str, LruEntry]:
        """The notebook's candidates; with `only`, just those of these paths."""
        if only is None:
            sql, params = _CANDIDATES.format(extra="", order=""), [notebook_id]
        else:
            sql = _CANDIDATES.format(extra="AND l.path IN (SELECT value FROM json_each(?))", order="")
            params = [notebook_id, json.dumps(only)]
        return self._entries(sql, params)

    def _entries(self, sql: str, params: Sequence[object]) -> dict[str, LruEntry]:
        rows = self.db.execute(sql, params).fetchall()
        return {row[0]: LruEntry._make(row) for row in rows}

    def _queued_for_use(self, notebook_id: str, used: list[str]) -> tuple[dict[str, LruEntry], int]:
        """What `apply_use` needs to mark `used`: their entries and the least recent protected ones that an
        overflow could demote, with the count of the protected ones left out — so marking a few notes does
        not load a long protected segment."""
        if len(used) > _FEW_PATHS:
            return self._queued(notebook_id), 0
        entries = self._queued(notebook_id, only=used)
        protected = self.db.execute(_PROTECTED_COUNT, [notebook_id]).fetchone()[0]
        promoted = sum(1 for e in entries.values() if e.segment != PROTECTED)
        overflow = protected + promoted - self.protected_capacity
        if overflow > 0:
            oldest = self._entries(_LEAST_RECENT_PROTECTED, [notebook_id, overflow + len(entries)])
            entries = {**oldest, **entries}
        given = sum(1 for e in entries.values() if e.segment == PROTECTED)
        return entries, protected - given

    def mark_used(self, notebook_id: str, paths: Iterable[str]) -> None:
        """Usage marking: the given paths produced a source id for a query: count the use, promote in the LRU.

        Pass only paths that really produced a source id; unregistered paths are ignored. Every part
        of a path is marked. The paths are one use, in their order (a refresh marks all the notes it
        reused with one call): one step, whatever their number.
        """
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return
        with self.step():
            now = self._now()
            # a path with no registry row is in no query's answer, nor in the queue `apply_use` reads
            queued, unseen = self._queued_for_use(notebook_id, wanted)
            changed, next_tick = apply_use(queued, wanted, self._next_ticks(0), self.protected_capacity, unseen)
            self.db.execute(
                "UPDATE source_mappings SET use_count = use_count + 1, last_used = ?, "
                "first_used = coalesce(first_used, ?) WHERE notebook_id = ? "
                "AND path IN (SELECT value FROM json_each(?))", [now, now, notebook_id, json.dumps(wanted)])
            self.db.conn.executemany(
                "UPDATE lru_entries SET segment = ?, tick = ? WHERE notebook_id = ? AND path = ?",
                [(e.segment, e.tick, notebook_id, e.path) for e in changed.values()])
            self._set_meta("next_tick", str(next_tick))

    def eviction_queue(self, notebook_id: str) -> list[LruEntry]:
        """The candidates in eviction order (for status output and tests)."""
        with self._reading():
            queued = self._queued(notebook_id)
            return [queued[p] for p in eviction_order(queued.values())]

    def next_eviction_candidate(self, notebook_id: str, exclude: Iterable[str] = frozenset()) -> str | None:
        """The path to evict next (probation LRU, then protected LRU), never one in `exclude`; or None."""
        with self._reading():
            order = eviction_order(self._queued(notebook_id).values(), exclude)
            return order[0] if order else None

    def record_eviction(self, notebook_id: str, path: str, source_id: str, reason: str) -> None:
        """Log an eviction and forget `path` (every part, and its queue entry) in one step.

        Call it once the remote delete succeeded (the mapping goes, the eviction is logged); a part whose delete failed belongs in
        `queue_deletion`.
        """
        with self.step():
            self.db.execute("DELETE FROM source_mappings WHERE notebook_id = ? AND path = ?", [notebook_id, path])
            self.db.execute("DELETE FROM lru_entries WHERE notebook_id = ? AND path = ?", [notebook_id, path])
            self.db.execute("INSERT INTO evictions (notebook_id, path, source_id, reason, evicted_at) "
                            "VALUES (?, ?, ?, ?, ?)", [notebook_id, path, source_id, reason, self._now()])
            self.db.execute(
                "DELETE FROM evictions WHERE notebook_id = ? AND id <= "
                "(SELECT id FROM evictions WHERE notebook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                [notebook_id, notebook_id, EVICTION_LOG_LIMIT])

    def recent_evictions(self, notebook_id: str, limit: int = 20) -> list[EvictionRecord]:
        """The newest evictions first."""
        with self._reading():
            rows = self.db.execute(
                "SELECT notebook_id, path, source_id, reason, evicted_at FROM evictions "
                "WHERE notebook_id = ? ORDER BY id DESC LIMIT ?", [notebook_id, limit]).fetchall()
            return [EvictionRecord(*r) for r in rows]

    # --- pending deletions ----------------------------------------------------------------------
    def _queue_deletion(self, notebook_id: str, source_id: str, reason: str) -> None:
        self.db.execute("INSERT INTO pending_deletions (notebook_id, source_id, reason, queued_at) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", [notebook_id, source_id, reason, self._now()])

    def queue_deletion(self, notebook_id: str, source_id: str, reason: str) -> None:
        """Remember a remote source that should be deleted (its best-effort delete failed)."""
        with self.step():
            self._queue_deletion(notebook_id, source_id, reason)

    def pending_deletions(self, notebook_id: str) -> list[PendingDeletion]:
        """Queued deletions, oldest first."""
        with self._reading():
            rows = self.db.execute(
                "SELECT notebook_id, source_id, reason, queued_at FROM pending_deletions "
                "WHERE notebook_id = ? ORDER BY queued_at, rowid", [notebook_id]).fetchall()
            return [PendingDeletion(*r) for r in rows]

    def deletion_done(self, notebook_id: str, source_id: str) -> None:
        """The source is gone remotely (deleted now, or found missing): drop it from the queue."""
        with self.step():
            self.db.execute("DELETE FROM pending_deletions WHERE notebook_id = ? AND source_id = ?",
                            [notebook_id, source_id])
