"""Usage marking (§5.5), eviction candidates from the segmented LRU (§6), the eviction log, and the
queue of pending deletions (old sources whose best-effort delete failed).

Only managed, active mappings are candidates. The policy itself is pure (`_lru`); this module loads
a notebook's queue, applies the policy and writes the changes back.
"""

from __future__ import annotations

from collections.abc import Iterable

from nlmsync.store._base import StoreBase
from nlmsync.store._lru import PROTECTED, LruEntry, apply_use, eviction_order, protected_capacity
from nlmsync.store._models import EvictionRecord, PendingDeletion

EVICTION_LOG_LIMIT = 1000

_CANDIDATES = """
SELECT l.path, l.segment, l.tick, max(m.use_count)
FROM lru_entries l JOIN source_mappings m ON m.notebook_id = l.notebook_id AND m.path = l.path
WHERE l.notebook_id = ? AND m.managed = 1 AND m.status = 'active' {extra}
GROUP BY l.path
"""


class EvictionMixin(StoreBase):
    @property
    def protected_capacity(self) -> int:
        """Size of the protected LRU segment: `protected_share` of `capacity`, rounded down."""
        return protected_capacity(self.settings.capacity, self.settings.protected_share)

    def _queued(self, notebook_id: str, *, protected_or: list[str] | None = None) -> dict[str, LruEntry]:
        """The notebook's candidates; with `protected_or`, only the protected ones and those paths
        (all that a use can change, so marking stays cheap in a long queue)."""
        if protected_or is None:
            sql, params = _CANDIDATES.format(extra=""), [notebook_id]
        else:
            marks = ", ".join("?" for _ in protected_or)
            sql = _CANDIDATES.format(extra=f"AND (l.segment = '{PROTECTED}' OR l.path IN ({marks}))")
            params = [notebook_id, *protected_or]
        rows = self.db.execute(sql, params).fetchall()
        return {p: LruEntry(path=p, segment=seg, tick=tick, uses=uses) for p, seg, tick, uses in rows}

    def mark_used(self, notebook_id: str, paths: Iterable[str]) -> None:
        """§5.5: the given paths produced a source id for a query: count the use, promote in the LRU.

        Pass only paths that really produced a source id; unregistered paths are ignored. Every part
        of a path is marked.
        """
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return
        with self.step():
            now = self._now()
            known = [p for p in wanted if self.db.execute(
                "SELECT 1 FROM source_mappings WHERE notebook_id = ? AND path = ? LIMIT 1",
                [notebook_id, p]).fetchone()]
            queued = self._queued(notebook_id, protected_or=known)
            changed, next_tick = apply_use(queued, known, self._next_ticks(0), self.protected_capacity)
            self.db.conn.executemany(
                "UPDATE source_mappings SET use_count = use_count + 1, last_used = ?, "
                "first_used = coalesce(first_used, ?) WHERE notebook_id = ? AND path = ?",
                [(now, now, notebook_id, p) for p in known])
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

        Call it once the remote delete succeeded (§6 steps 4–5); a part whose delete failed belongs in
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
