"""Packs: sources that hold many notes, per notebook, and which pack holds each note.

Invariants kept here: a note (notebook, path) is in at most one pack; recording a pack moves its notes out of
any pack that held them before (the old pack keeps its row until it is removed, so a replaced pack is
retired in the same step its successors are recorded). A pack's notes are kept in order (`position`), with
the hash of each note's text as it went into the pack. Packs are never in the eviction queue: only a
refresh that re-plans them retires them.

`pack_adds` holds the titles of pack uploads under way: recorded before the add is sent, cleared once the
pack is recorded or found never to have landed, so a source left behind by a run killed in between is
known to be nlmsync's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nlmsync.store._base import StoreBase

_PACK_COLUMNS = "notebook_id, source_id, content_hash, title, first_path, last_path, note_count, size"


@dataclass(frozen=True, slots=True)
class PackRecord:
    """One pack as the registry holds it: its source, the hash of the text uploaded, its title, its first and
    last note, how many notes it holds and its size in bytes."""

    notebook_id: str
    source_id: str
    content_hash: str
    title: str
    first_path: str
    last_path: str
    note_count: int
    size: int


class PacksMixin(StoreBase):
    def packs(self, notebook_id: str) -> list[PackRecord]:
        """The notebook's packs in path order."""
        with self._reading():
            rows = self.db.execute(f"SELECT {_PACK_COLUMNS} FROM packs WHERE notebook_id = ? "
                                   "ORDER BY first_path, source_id", [notebook_id]).fetchall()
            return [PackRecord(*row) for row in rows]

    def has_packs(self, notebook_id: str) -> bool:
        with self._reading():
            return self.db.execute("SELECT 1 FROM packs WHERE notebook_id = ? LIMIT 1",
                                   [notebook_id]).fetchone() is not None

    def pack_by_source_id(self, notebook_id: str, source_id: str) -> PackRecord | None:
        with self._reading():
            row = self.db.execute(f"SELECT {_PACK_COLUMNS} FROM packs WHERE notebook_id = ? AND source_id = ?",
                                  [notebook_id, source_id]).fetchone()
            return PackRecord(*row) if row else None

    def pack_members(self, notebook_id: str, paths: Iterable[str] | None = None) -> dict[str, tuple[str, str]]:
        """Note path -> (the source id of its pack, the hash of its text in the pack): every packed note of the
        notebook, or those of `paths` that are packed."""
        with self._reading():
            if paths is None:
                rows = self.db.execute("SELECT path, source_id, note_hash FROM pack_members WHERE notebook_id = ?",
                                       [notebook_id]).fetchall()
            else:
                rows = [r for p in dict.fromkeys(paths) for r in self.db.execute(
                    "SELECT path, source_id, note_hash FROM pack_members WHERE notebook_id = ? AND path = ?",
                    [notebook_id, p]).fetchall()]
            return {path: (source_id, note_hash) for path, source_id, note_hash in rows}

    def pack_members_with_stats(self, notebook_id: str, split: str
                                ) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[int, int]]]:
        """`pack_members(notebook_id)`, and by path the modification time and size of each packed note whose hash
        record (of one part, made with the split limits `split`) is the text its pack holds: while the file keeps
        that modification time and size, its pack holds the note as it is (the rule of `NoteHashes.holds_for`,
        in one query over every packed note)."""
        with self._reading():
            rows = self.db.execute(
                "SELECT m.path, m.source_id, m.note_hash, h.mtime_ns, h.size FROM pack_members AS m "
                "LEFT JOIN note_hashes AS h ON h.path = m.path AND h.split = ? AND h.hashes = m.note_hash "
                "WHERE m.notebook_id = ?", [split, notebook_id]).fetchall()
            members = {path: (source_id, note_hash) for path, source_id, note_hash, _, _ in rows}
            stats = {path: (mtime_ns, size) for path, _, _, mtime_ns, size in rows if mtime_ns is not None}
            return members, stats

    def notes_of_pack(self, notebook_id: str, source_id: str) -> list[tuple[str, str]]:
        """The (path, note hash) of the notes a pack holds, in order."""
        with self._reading():
            return [(p, h) for p, h in self.db.execute(
                "SELECT path, note_hash FROM pack_members WHERE notebook_id = ? AND source_id = ? ORDER BY position",
                [notebook_id, source_id]).fetchall()]

    def record_pack(self, pack: PackRecord, notes: Sequence[tuple[str, str]]) -> None:
        """Record `pack` holding `notes` (path, note hash) in that order; the notes leave the packs that held
        them."""
        with self.step():
            self.db.execute(f"INSERT OR REPLACE INTO packs ({_PACK_COLUMNS}, recorded_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [pack.notebook_id, pack.source_id, pack.content_hash, pack.title, pack.first_path,
                             pack.last_path, pack.note_count, pack.size, self._now()])
            self.db.execute("DELETE FROM pack_members WHERE notebook_id = ? AND source_id = ?",
                            [pack.notebook_id, pack.source_id])
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO pack_members (notebook_id, path, source_id, position, note_hash) "
                "VALUES (?, ?, ?, ?, ?)",
                [(pack.notebook_id, path, pack.source_id, i, note_hash) for i, (path, note_hash) in enumerate(notes)])

    def remove_pack(self, notebook_id: str, source_id: str) -> PackRecord | None:
        """Forget a pack and the notes it still holds; returns its record (None when unknown)."""
        with self.step():
            record = self.pack_by_source_id(notebook_id, source_id)
            self.db.execute("DELETE FROM packs WHERE notebook_id = ? AND source_id = ?", [notebook_id, source_id])
            self.db.execute("DELETE FROM pack_members WHERE notebook_id = ? AND source_id = ?",
                            [notebook_id, source_id])
            return record

    # --- adds under way -----------------------------------------------------------------------
    def start_pack_add(self, notebook_id: str, title: str) -> None:
        """Note that a pack titled `title` is about to be uploaded (before the call is sent)."""
        with self.step():
            self.db.execute("INSERT OR IGNORE INTO pack_adds (notebook_id, title, started_at) VALUES (?, ?, ?)",
                            [notebook_id, title, self._now()])

    def pack_adds(self, notebook_id: str) -> list[str]:
        """The titles of pack uploads started and not yet settled, oldest first."""
        with self._reading():
            return [r[0] for r in self.db.execute(
                "SELECT title FROM pack_adds WHERE notebook_id = ? ORDER BY started_at, rowid", [notebook_id])]

    def end_pack_adds(self, notebook_id: str, titles: Iterable[str]) -> None:
        """The uploads of `titles` are settled: recorded, or known not to have landed."""
        wanted = [(notebook_id, t) for t in titles]
        if wanted:
            with self.step():
                self.db.conn.executemany("DELETE FROM pack_adds WHERE notebook_id = ? AND title = ?", wanted)
