"""Packs: sources that hold many notes, per notebook, and which pack holds each note.

Invariants kept here: a note (notebook, path) is in at most one pack; recording a pack moves its notes out of
any pack that held them before (the old pack keeps its row until it is removed, so a replaced pack is
retired in the same step its successors are recorded). A pack's notes are kept in order (`position`), with
the hash of each note's text as it went into the pack. Packs are never in the eviction queue: only a
refresh that re-plans them retires them.

A pack adopted from the notebook by its title alone (another machine uploaded it, or this one lost its state
file) is recorded as not `proven`: its text was not read, so before nlmsync deletes it the server is asked for
what it holds (the words must hash to what the title says). `unmanaged_sources` are the sources read and found
not to be nlmsync's (a title that looks like nlmsync's over other text): never adopted, deleted or evicted, and
not read again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nlmsync.store._base import StoreBase

_PACK_COLUMNS = "notebook_id, source_id, content_hash, title, first_path, last_path, note_count, size, proven"


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
    proven: bool = True
    """Whether the source is known to hold nlmsync's text: uploaded by nlmsync and recorded, or read back."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "proven", bool(self.proven))


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
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [pack.notebook_id, pack.source_id, pack.content_hash, pack.title, pack.first_path,
                             pack.last_path, pack.note_count, pack.size, int(pack.proven), self._now()])
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

    def mark_proven(self, notebook_id: str, source_id: str) -> None:
        """The pack's text was read back and is nlmsync's."""
        with self.step():
            self.db.execute("UPDATE packs SET proven = 1 WHERE notebook_id = ? AND source_id = ?",
                            [notebook_id, source_id])

    # --- sources that are not nlmsync's ---------------------------------------------------------
    def unmanaged_sources(self, notebook_id: str) -> dict[str, str]:
        """Source id -> title of the sources read and found not to be nlmsync's uploads."""
        with self._reading():
            return dict(self.db.execute("SELECT source_id, title FROM unmanaged_sources WHERE notebook_id = ?",
                                        [notebook_id]).fetchall())

    def record_unmanaged(self, notebook_id: str, sources: dict[str, str]) -> None:
        """Remember that these sources (id -> title) are not nlmsync's: their text is not what their title says."""
        if sources:
            with self.step():
                self.db.conn.executemany(
                    "INSERT OR REPLACE INTO unmanaged_sources (notebook_id, source_id, title, found_at) "
                    "VALUES (?, ?, ?, ?)", [(notebook_id, sid, title, self._now()) for sid, title in sources.items()])

    def forget_unmanaged(self, notebook_id: str, source_ids: Iterable[str]) -> None:
        """The sources are no longer in the notebook: nothing to remember of them."""
        gone = [(notebook_id, sid) for sid in source_ids]
        if gone:
            with self.step():
                self.db.conn.executemany("DELETE FROM unmanaged_sources WHERE notebook_id = ? AND source_id = ?", gone)
