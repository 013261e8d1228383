"""The source registry: vault path (and part) → NotebookLM source, per notebook; the mapping follows a note renamed in the vault.

Invariants kept here: a (notebook, path, part) has one row; a split note's rows are parts of one
unit (writing a part with `part_count` N drops the path's parts >= N, so write every part of a new
version in one step); a source id belongs to at most one row of a notebook (binding it to another
path moves it, with its usage and its place in the eviction queue). Usage fields (`first_used`,
`last_used`, `use_count`) change only through `mark_used`; an upsert over an existing row keeps them.
A managed path joins the eviction queue (probation) when first registered and leaves it when its
rows go.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from nlmsync.store._base import StoreBase
from nlmsync.store._lru import PROBATION
from nlmsync.store._models import STATUSES, SourceMapping
from nlmsync.vault import ATTACHMENT_KINDS, attachment_suffixes, has_note_suffix, is_attachment_path

_ANY_ATTACHMENT = attachment_suffixes(ATTACHMENT_KINDS)

MAPPING_COLUMNS = ("notebook_id", "path", "part", "part_count", "source_id", "content_hash", "title",
                   "status", "managed", "first_used", "last_used", "use_count")
_SELECT = f"SELECT {', '.join(MAPPING_COLUMNS)} FROM source_mappings"


def row_to_mapping(row: tuple[Any, ...]) -> SourceMapping:
    """A row selected as `MAPPING_COLUMNS` as a `SourceMapping` (a run reads every row of the notebook: unpacked
    by position, not through a dict)."""
    (notebook_id, path, part, part_count, source_id, content_hash, title, status, managed, first_used, last_used,
     use_count) = row
    return SourceMapping(notebook_id=notebook_id, path=path, part=part, part_count=part_count, source_id=source_id,
                         content_hash=content_hash, title=title, status=status, managed=bool(managed),
                         first_used=first_used, last_used=last_used, use_count=use_count)


def _by_path_and_part(mapping: SourceMapping) -> tuple[str, int]:
    return mapping.path, mapping.part


def _mapping_values(mapping: SourceMapping) -> list[Any]:
    return [int(mapping.managed) if c == "managed" else getattr(mapping, c) for c in MAPPING_COLUMNS]


class RegistryMixin(StoreBase):
    # --- lookups ------------------------------------------------------------------------------
    def _query_mappings(self, where: str, params: Iterable[Any]) -> list[SourceMapping]:
        rows = self.db.execute(f"{_SELECT} WHERE {where}", list(params)).fetchall()
        return [row_to_mapping(r) for r in rows]

    def mappings_by_path(self, notebook_id: str, path: str) -> list[SourceMapping]:
        """The rows of `path` in `notebook_id`, ordered by part (empty when unregistered)."""
        with self._reading():
            return self._query_mappings("notebook_id = ? AND path = ? ORDER BY part", [notebook_id, path])

    def all_mappings(self, notebook_id: str) -> list[SourceMapping]:
        with self._reading():
            return self._query_mappings("notebook_id = ? ORDER BY path, part", [notebook_id])

    def mapped_source_ids(self, notebook_id: str) -> set[str]:
        """The source ids the notebook's rows hold as stored (not resolved through aliases): what a run checks
        the remote listing against before it reads whole rows."""
        with self._reading():
            return {r[0] for r in self.db.execute("SELECT source_id FROM source_mappings WHERE notebook_id = ?",
                                                  [notebook_id])}

    def has_active_mapping(self, notebook_id: str) -> bool:
        """Whether some row of the notebook is active (its source was listed at the last reconcile)."""
        with self._reading():
            return self.db.execute("SELECT 1 FROM source_mappings WHERE notebook_id = ? AND status = 'active' LIMIT 1",
                                   [notebook_id]).fetchone() is not None

    def mapping_by_source_id(self, notebook_id: str, source_id: str) -> SourceMapping | None:
        """The row holding `source_id`, or an id on the same alias chain (it or its resolution)."""
        with self._reading():
            target = self._resolve(source_id)
            ids = {source_id, target}
            ids.update(r[0] for r in self.db.execute(
                "SELECT previous FROM source_aliases WHERE current = ?", [target]))
            marks = ", ".join("?" for _ in ids)
            found = sorted(self._query_mappings(f"notebook_id = ? AND source_id IN ({marks})",
                                                [notebook_id, *sorted(ids)]), key=_by_path_and_part)
            exact = [m for m in found if m.source_id in (source_id, target)]
            return (exact or found)[0] if found else None

    def mappings_by_hash(self, notebook_id: str, content_hash: str) -> list[SourceMapping]:
        """Rows whose uploaded content has `content_hash` (rename/move detection: the rename branch)."""
        with self._reading():
            return sorted(self._query_mappings("notebook_id = ? AND content_hash = ?", [notebook_id, content_hash]),
                          key=_by_path_and_part)

    # --- writes -------------------------------------------------------------------------------
    def upsert_mapping(self, mapping: SourceMapping | None = None, /, **fields: Any) -> SourceMapping:
        """Insert or replace the row for (notebook, path, part); returns the row as stored.

        Pass a `SourceMapping` or its fields. Rows of the same path with `part >= part_count` go (the
        unit shrank); another row of the notebook holding the same source id goes too (the source
        moved to this path: the rename branch), handing its usage over when this row is new.
        """
        if mapping is None:
            mapping = SourceMapping(**fields)
        elif fields:
            mapping = replace(mapping, **fields)
        with self.step():
            return self._upsert(mapping)

    def _upsert(self, mapping: SourceMapping) -> SourceMapping:
        nb = mapping.notebook_id
        existing = self._query_mappings("notebook_id = ? AND path = ? AND part = ?",
                                        [nb, mapping.path, mapping.part])
        holders = [m for m in self._query_mappings("notebook_id = ? AND source_id = ?", [nb, mapping.source_id])
                   if (m.path, m.part) != (mapping.path, mapping.part)]
        usage_from = existing[0] if existing else (holders[0] if holders else None)
        if usage_from is not None:
            mapping = replace(mapping, first_used=usage_from.first_used, last_used=usage_from.last_used,
                              use_count=usage_from.use_count)
        position = None if existing or not holders else self.db.execute(
            "SELECT segment, tick FROM lru_entries WHERE notebook_id = ? AND path = ?", [nb, holders[0].path]).fetchone()
        for holder in holders:
            self.db.execute("DELETE FROM source_mappings WHERE notebook_id = ? AND path = ? AND part = ?",
                            [nb, holder.path, holder.part])
            self._sync_queue_entry(nb, holder.path)
        self.db.execute("DELETE FROM source_mappings WHERE notebook_id = ? AND path = ? AND part >= ?",
                        [nb, mapping.path, mapping.part_count])
        marks = ", ".join("?" for _ in MAPPING_COLUMNS)
        self.db.execute(f"INSERT OR REPLACE INTO source_mappings ({', '.join(MAPPING_COLUMNS)}) VALUES ({marks})",
                        _mapping_values(mapping))
        self._sync_queue_entry(nb, mapping.path, position)
        return mapping

    def add_new_mappings(self, mappings: Sequence[SourceMapping]) -> None:
        """Record the rows of paths that have none yet (notes uploaded for the first time, their sources held by
        no row) and queue the managed ones in probation, in one step: what `upsert_mapping` does for such rows,
        without looking for rows it would replace or move.

        Raises:
            sqlite3.IntegrityError: a row of one of the paths exists after all (the caller's view was wrong).
        """
        if not mappings:
            return
        marks = ", ".join("?" for _ in MAPPING_COLUMNS)
        queued = list(dict.fromkeys((m.notebook_id, m.path) for m in mappings if m.managed))
        with self.step():
            self.db.conn.executemany(f"INSERT INTO source_mappings ({', '.join(MAPPING_COLUMNS)}) VALUES ({marks})",
                                     [_mapping_values(m) for m in mappings])
            if queued:
                first = self._next_ticks(len(queued))
                self.db.conn.executemany(
                    "INSERT INTO lru_entries (notebook_id, path, segment, tick) VALUES (?, ?, ?, ?)",
                    [(nb, path, PROBATION, first + i) for i, (nb, path) in enumerate(queued)])

    def remove_mappings(self, notebook_id: str, path: str) -> list[SourceMapping]:
        """Forget every part of `path` (and its queue entry); returns the rows removed."""
        with self.step():
            removed = self._query_mappings("notebook_id = ? AND path = ? ORDER BY part", [notebook_id, path])
            self.db.execute("DELETE FROM source_mappings WHERE notebook_id = ? AND path = ?", [notebook_id, path])
            self.db.execute("DELETE FROM lru_entries WHERE notebook_id = ? AND path = ?", [notebook_id, path])
            return removed

    def rename_mapping(self, notebook_id: str, old_path: str, new_path: str) -> list[SourceMapping]:
        """Move `old_path`'s rows (and queue position) to `new_path`; returns rows displaced from `new_path`."""
        if old_path == new_path:
            return []
        with self.step():
            if not self._query_mappings("notebook_id = ? AND path = ?", [notebook_id, old_path]):
                return []
            displaced = self.remove_mappings(notebook_id, new_path)
            self.db.execute("UPDATE source_mappings SET path = ? WHERE notebook_id = ? AND path = ?",
                            [new_path, notebook_id, old_path])
            self.db.execute("UPDATE lru_entries SET path = ? WHERE notebook_id = ? AND path = ?",
                            [new_path, notebook_id, old_path])
            return displaced

    def set_status(self, notebook_id: str, source_id: str, status: str) -> int:
        """Set the status of the rows holding `source_id`; returns how many rows changed."""
        if status not in STATUSES:
            raise ValueError(f"status must be 'active' or 'stale', not {status!r}")
        with self.step():
            cur = self.db.execute("UPDATE source_mappings SET status = ? WHERE notebook_id = ? AND source_id = ?",
                                  [status, notebook_id, source_id])
            return cur.rowcount

    def apply_vault_rename(self, old_path: str, new_path: str) -> list[SourceMapping]:
        """A vault rename for the registry, in every notebook: a note renamed to a note (`.md`→`.md`), or an
        attachment to an attachment (`a.pdf`→`b.pdf`), takes its mapping along.

        A note renamed to something that is not a note has left the vault, as a deleted one has: its mapping
        stays until `refresh --all` removes its source, so a note that comes back (`a.md`→`a.txt`→`a.md`) keeps
        its source. Managed active sources displaced by the rename (the new path's) are queued for deletion so
        they do not linger in the notebook. Returns the rows that lost their mapping.
        """
        both_notes = has_note_suffix(old_path) and has_note_suffix(new_path)
        if not both_notes and not (is_attachment_path(old_path, _ANY_ATTACHMENT)
                                   and is_attachment_path(new_path, _ANY_ATTACHMENT)):
            return []
        lost: list[SourceMapping] = []
        with self.step():
            notebooks = [r[0] for r in self.db.execute(
                "SELECT DISTINCT notebook_id FROM source_mappings WHERE path = ?", [old_path])]
            for nb in notebooks:
                lost.extend(self.rename_mapping(nb, old_path, new_path))
            for m in lost:
                if m.managed and m.status == "active":
                    self._queue_deletion(m.notebook_id, m.source_id, f"vault rename of {m.path}")
        return lost

    # --- queue membership (kept in step with the registry) ------------------------------------
    def _sync_queue_entry(self, notebook_id: str, path: str, position: tuple[str, int] | None = None) -> None:
        """Queue a managed path not yet queued (at `position`, a moved source's segment and tick, else new
        in probation); drop the entry of a path with no managed row left."""
        managed = self.db.execute(
            "SELECT 1 FROM source_mappings WHERE notebook_id = ? AND path = ? AND managed = 1 LIMIT 1",
            [notebook_id, path]).fetchone()
        if not managed:
            self.db.execute("DELETE FROM lru_entries WHERE notebook_id = ? AND path = ?", [notebook_id, path])
            return
        queued = self.db.execute("SELECT 1 FROM lru_entries WHERE notebook_id = ? AND path = ?",
                                 [notebook_id, path]).fetchone()
        if not queued:
            segment, tick = position or (PROBATION, self._next_ticks(1))
            self.db.execute("INSERT INTO lru_entries (notebook_id, path, segment, tick) VALUES (?, ?, ?, ?)",
                            [notebook_id, path, segment, tick])
