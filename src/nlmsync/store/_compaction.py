"""Compaction: keep every table bounded without dropping what a live mapping or kept
conversation needs.

1. Keep the newest `max_conversations` conversations (whole file); drop the rest with their turns.
2. Keep the newest `max_messages_per_conversation` messages and `max_query_records_per_conversation`
   query records of each conversation.
3. Prune aliases to those reachable from ids still in use: ids held by a mapping or by a kept query
   record (their chain), and aliases leading to an active mapping's id.
4. Hard cap of `max_aliases`: if more remain, first rewrite every stored reference (mappings, query
   records) to its resolved id — resolution gives the same answer afterwards, so nothing is lost —
   then drop the oldest aliases down to `alias_low_water` (a tenth below the cap), so a busy vault at
   the cap compacts once per few hundred registrations rather than on every one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from nlmsync.store._aliases import resolve_chain
from nlmsync.store._base import StoreBase


@dataclass(frozen=True, slots=True)
class CompactionReport:
    conversations: int
    messages: int
    query_records: int
    aliases: int


def alias_low_water(max_aliases: int) -> int:
    """How many aliases the hard cap trims down to: `max_aliases` less a tenth of it."""
    return max_aliases - max_aliases // 10


def _delete_beyond(table: str, keep: int) -> str:
    """Delete all but the newest `keep` rows of each conversation; only conversations over the bound are
    ranked (found from the covering index), so a turn past a bound does not sort the whole table."""
    over = (f"SELECT notebook_id, conversation_id FROM {table} GROUP BY notebook_id, conversation_id "
            f"HAVING count(*) > {int(keep)}")
    return (f"DELETE FROM {table} WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER "
            f"(PARTITION BY notebook_id, conversation_id ORDER BY id DESC) AS rn FROM {table} "
            f"WHERE (notebook_id, conversation_id) IN ({over})) WHERE rn > {int(keep)})")


class CompactionMixin(StoreBase):
    def compact(self) -> CompactionReport:
        """Apply every bound now, in one step; returns how many rows of each kind were dropped."""
        with self.step():
            return self._compact()

    def _compact_now(self) -> None:
        self._compact()

    def _compact(self) -> CompactionReport:
        s = self.settings
        gone = self.db.execute(
            "SELECT notebook_id, conversation_id FROM conversations ORDER BY last_turn DESC LIMIT -1 OFFSET ?",
            [s.max_conversations]).fetchall()
        messages = records = 0
        for key in gone:
            where = "WHERE notebook_id = ? AND conversation_id = ?"
            self.db.execute(f"DELETE FROM conversations {where}", list(key))
            messages += self.db.execute(f"DELETE FROM messages {where}", list(key)).rowcount
            records += self.db.execute(f"DELETE FROM query_records {where}", list(key)).rowcount
        messages += self.db.execute(_delete_beyond("messages", s.max_messages_per_conversation)).rowcount
        records += self.db.execute(_delete_beyond("query_records", s.max_query_records_per_conversation)).rowcount
        aliases = self._prune_aliases()
        return CompactionReport(conversations=len(gone), messages=messages, query_records=records, aliases=aliases)

    def _referenced_aliases(self) -> set[str]:
        """Alias keys that a mapping or a kept query record names directly (json_each keeps the scan of
        every record's ids inside SQLite: a full history holds hundreds of thousands of them)."""
        return {r[0] for r in self.db.execute(
            "SELECT previous FROM source_aliases WHERE previous IN (SELECT source_id FROM source_mappings) "
            "UNION SELECT j.value FROM query_records q, json_each(q.source_ids) j "
            "WHERE j.value IN (SELECT previous FROM source_aliases)")}

    def _prune_aliases(self) -> int:
        aliases = dict(self.db.execute("SELECT previous, current FROM source_aliases").fetchall())
        if not aliases:
            return 0
        keep: set[str] = set()
        for start in self._referenced_aliases():
            current = start
            while current in aliases and current not in keep:
                keep.add(current)
                current = aliases[current]
        active = {r[0] for r in self.db.execute("SELECT source_id FROM source_mappings WHERE status = 'active' "
                                                "UNION SELECT source_id FROM packs")}
        keep.update(a for a in aliases if resolve_chain(aliases.get, a) in active)
        drop = set(aliases) - keep
        if len(keep) > self.settings.max_aliases:
            self._canonicalize_references(aliases)
            by_age = [r[0] for r in self.db.execute("SELECT previous FROM source_aliases ORDER BY registered_at, rowid")]
            kept = [a for a in by_age if a in keep]
            drop.update(kept[: len(kept) - alias_low_water(self.settings.max_aliases)])
        self.db.conn.executemany("DELETE FROM source_aliases WHERE previous = ?", [(a,) for a in drop])
        return len(drop)

    def _canonicalize_references(self, aliases: dict[str, str]) -> None:
        """Rewrite stored ids to their resolution, so no stored reference needs an alias any more."""
        rows = self.db.execute("SELECT notebook_id, path, part, source_id FROM source_mappings").fetchall()
        held = {(nb, source_id) for nb, _path, _part, source_id in rows}
        for nb, path, part, source_id in rows:
            target = resolve_chain(aliases.get, source_id)
            # A row whose resolution another row already holds keeps its id: reconcile would give
            # the live id to that other row and mark this one stale anyway.
            if target != source_id and (nb, target) not in held:
                held.add((nb, target))
                self.db.execute("UPDATE source_mappings SET source_id = ? WHERE notebook_id = ? AND path = ? "
                                "AND part = ?", [target, nb, path, part])
        for row_id, raw in self.db.execute("SELECT id, source_ids FROM query_records").fetchall():
            ids = json.loads(raw)
            resolved = [resolve_chain(aliases.get, i) for i in ids]
            if resolved != ids:
                self.db.execute("UPDATE query_records SET source_ids = ? WHERE id = ?",
                                [json.dumps(resolved), row_id])
