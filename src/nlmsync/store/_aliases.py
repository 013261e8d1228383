"""Source-id aliases: resolution, registration, and reconciliation canonicalization.

An alias `previous -> current` says a source was replaced by another. Aliases are global to the state file
(NotebookLM source ids are unique across notebooks), and the map is kept flat — every alias points at a fixed
point — so resolution is one hop in practice; it still walks any chain and is safe against cycles (a hand-edited
or damaged file). The chain logic is pure (`resolve_chain`, `plan_alias_registration`: testable without a
database); `AliasMixin` reads and writes the table with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nlmsync.store._base import StoreBase
from nlmsync.store._models import ReconcileResult, ResolvedRow
from nlmsync.store._registry import MAPPING_COLUMNS, row_to_mapping


TargetOf = Callable[[str], "str | None"]
ReferrersOf = Callable[[str], Iterable[str]]


def resolve_chain(target_of: TargetOf, source_id: str) -> str:
    """Follow aliases from `source_id` until a fixed point; on a cycle stop at the last unseen id."""
    seen = {source_id}
    current = source_id
    while True:
        nxt = target_of(current)
        if nxt is None or nxt in seen:
            return current
        seen.add(nxt)
        current = nxt


@dataclass(frozen=True, slots=True)
class AliasPlan:
    """The writes of one registration: `set` maps ids to their new target; `delete` lists ids that
    become fixed points again (their alias would otherwise close a cycle)."""

    resolved: str
    set: dict[str, str]
    delete: frozenset[str]


def plan_alias_registration(target_of: TargetOf, referrers_of: ReferrersOf, previous: str,
                            current: str) -> AliasPlan:
    """Plan `register_source_alias(previous, current)` (alias registration).

    `target_of(id)` is the stored alias of an id (or None); `referrers_of(id)` lists the ids whose
    alias points directly at it.

    1. Resolve `current` first (ignoring `previous`'s own alias, which this registration replaces).
    2. Store `previous -> resolved`.
    3. Rewrite every alias that pointed at `previous` to point at `resolved`.
    If `current`'s chain leads back to `previous`, `current` is live again: its alias is dropped, so
    no cycle can form.
    """
    if previous == current:
        return AliasPlan(resolved=resolve_chain(target_of, current), set={}, delete=frozenset())

    def target_without_previous(source_id: str) -> str | None:
        return None if source_id == previous else target_of(source_id)

    resolved = resolve_chain(target_without_previous, current)
    delete: frozenset[str] = frozenset()
    if resolved == previous:
        resolved = current
        delete = frozenset({current})
    updates = {previous: resolved}
    for alias in referrers_of(previous):
        if alias not in delete and alias != resolved:
            updates[alias] = resolved
    return AliasPlan(resolved=resolved, set=updates, delete=delete)


class AliasMixin(StoreBase):
    def _alias_target(self, source_id: str) -> str | None:
        row = self.db.execute("SELECT current FROM source_aliases WHERE previous = ?", [source_id]).fetchone()
        return row[0] if row else None

    def _alias_referrers(self, source_id: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT previous FROM source_aliases WHERE current = ?",
                                              [source_id])]

    def _resolve(self, source_id: str) -> str:
        return resolve_chain(self._alias_target, source_id)

    def _alias_map(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT previous, current FROM source_aliases").fetchall())

    def resolve_source_id(self, source_id: str) -> str:
        """Alias resolution: follow aliases from `source_id` to a fixed point (cycle-safe)."""
        with self._reading():
            return self._resolve(source_id)

    def aliases(self) -> dict[str, str]:
        """Every stored alias, `previous -> current`."""
        with self._reading():
            return self._alias_map()

    def register_source_alias(self, previous: str, current: str) -> str:
        """Alias registration: record that `previous` was replaced by `current`; returns the id `previous` now resolves to.

        Resolves `current` first, stores `previous -> resolved`, and rewrites every alias that pointed
        at `previous` to `resolved`, so the alias map stays flat and acyclic.
        """
        with self.step():
            plan = plan_alias_registration(self._alias_target, self._alias_referrers, previous, current)
            for alias in plan.delete:
                self.db.execute("DELETE FROM source_aliases WHERE previous = ?", [alias])
            now = self._now()
            self.db.conn.executemany(
                "INSERT INTO source_aliases (previous, current, registered_at) VALUES (?, ?, ?) "
                "ON CONFLICT (previous) DO UPDATE SET current = excluded.current",
                [(alias, target, now) for alias, target in plan.set.items()])
            if plan.set:
                count = self.db.execute("SELECT count(*) FROM source_aliases").fetchone()[0]
                if count > self.settings.max_aliases:
                    self._at_end_of_step(self._compact_now)
            return plan.resolved

    def reconcile(self, notebook_id: str, remote_ids: Iterable[str]) -> ReconcileResult:
        """Reconciliation canonicalization: resolve each mapping's id before checking it against the remote set.

        Present remotely → marked active and rewritten to the canonical id; absent → marked stale (an
        entry holding a historical alias of a live source is therefore never marked stale). When two
        rows resolve to the same live id, the row already holding it (else the most recently used)
        keeps it and the others are marked stale.
        """
        remote = set(remote_ids)
        with self._reading():
            result, updates = self._reconciled(notebook_id, remote)
        if not updates:  # nothing to write: no transaction, no commit
            return result
        with self.step():  # decided again inside the step, against the rows as they are now
            result, updates = self._reconciled(notebook_id, remote)
            self.db.conn.executemany(
                "UPDATE source_mappings SET source_id = ?, status = ? WHERE notebook_id = ? AND path = ? AND part = ?",
                updates)
            return result

    def reconcile_needed(self, notebook_id: str, remote_ids: Iterable[str]) -> bool:
        """Whether `reconcile` could change a row: one holds an alias, is live but marked stale, is gone but
        marked active, or shares its live id with another. False is exact; True may still change nothing. A
        run checks this first, reading one column, instead of building every row."""
        remote = remote_ids if isinstance(remote_ids, (set, frozenset, dict)) else set(remote_ids)
        with self._reading():
            aliased = self.db.execute(
                "SELECT 1 FROM source_mappings m JOIN source_aliases a ON a.previous = m.source_id "
                "WHERE m.notebook_id = ? LIMIT 1", [notebook_id]).fetchone()
            if aliased:
                return True
            rows = self.db.execute("SELECT source_id, status FROM source_mappings WHERE notebook_id = ?",
                                   [notebook_id]).fetchall()
        live = [source_id for source_id, status in rows if source_id in remote]
        return (len(live) != len(set(live))
                or any((source_id in remote) != (status == "active") for source_id, status in rows))

    def _reconciled(self, notebook_id: str, remote: set[str]) -> tuple[ReconcileResult, list[tuple[str, str, str, str, int]]]:
        """Reconciliation decided on the current rows: the result, and the row updates it takes."""
        aliases = self._alias_map()
        rows = self.db.execute(
            f"SELECT {', '.join(MAPPING_COLUMNS)} FROM source_mappings WHERE notebook_id = ?",
            [notebook_id]).fetchall()
        mappings = [row_to_mapping(r) for r in rows]
        resolved = [resolve_chain(aliases.get, m.source_id) for m in mappings]
        order = sorted(range(len(mappings)), key=lambda i: (mappings[i].path, mappings[i].part))
        order.sort(key=lambda i: mappings[i].last_used or "", reverse=True)
        order.sort(key=lambda i: mappings[i].source_id != resolved[i])
        claimed: set[str] = set()
        result = ReconcileResult()
        updates: list[tuple[str, str, str, str, int]] = []
        for i in order:
            m, target = mappings[i], resolved[i]  # rows loaded for this call: updated in place
            before = (m.source_id, m.status)
            if target in remote and target not in claimed:
                claimed.add(target)
                m.source_id, m.status = target, "active"
                result.active.append(m)
                if target != before[0]:
                    result.canonicalized.append(m)
            else:
                m.status = "stale"
                result.stale.append(m)
            if (m.source_id, m.status) != before:
                updates.append((m.source_id, m.status, notebook_id, m.path, m.part))
        for bucket in (result.active, result.stale, result.canonicalized):
            bucket.sort(key=lambda m: (m.path, m.part))
        return result, updates

    def mappings_with_resolved_ids(self, notebook_id: str) -> list[ResolvedRow]:
        """Every registry row of the notebook (by path, part) with its source id resolved (alias resolution), in one
        read: what a run decides its notes' branches from without a query per note."""
        with self._reading():
            aliases = self._alias_map()
            rows = self.db.execute(
                f"SELECT {', '.join(MAPPING_COLUMNS)} FROM source_mappings WHERE notebook_id = ? ORDER BY path, part",
                [notebook_id]).fetchall()
            mappings = [row_to_mapping(r) for r in rows]
            return [ResolvedRow(m, resolve_chain(aliases.get, m.source_id)) for m in mappings]
