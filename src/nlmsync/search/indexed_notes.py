"""What the note index knows of each note besides its terms: the `mtime_ns` and size each indexed note was read
at, the notes it skipped and why, and so which notes a walk of the vault finds changed since (a full rescan) or
a marked path holds now (`stat_marked`).

Right after the index is loaded, the snapshot's notes' stats are still the snapshot's arrays: a new process
whose vault did not change compares them whole in numpy and never makes them a dict of tens of thousands of
paths; the dict is filled the first time a note's stat is asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync.errors import PathOutsideVaultError
from nlmsync.store.index_codec import CachedDoc, NoteFacts
from nlmsync.vault import (
    NoteFile,
    VaultListing,
    is_attachment_path,
    is_note_path,
    is_valid_name,
    resolve_in_vault,
)

if TYPE_CHECKING:
    import numpy as np

    from nlmsync.search.doc_terms import DocBatch


@dataclass
class Changes:
    """What one sync found: the notes to index (`batch`; `updated` of them were indexed before) and their facts, the
    indexed notes to remove, and the rows of skipped or no longer skipped notes to save."""

    batch: DocBatch
    updated: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: dict[str, CachedDoc] = field(default_factory=dict)
    facts: dict[str, NoteFacts | None] = field(default_factory=dict)  # the facts of the notes read; None: gone
    tell_every: int = 1  # of the notes read, one in this many has its language told as it is read
    untold: list[str] = field(default_factory=list)  # the notes read whose language is not told yet


class IndexedNotes:
    """The stats of the indexed notes and the skipped notes (their `CachedDoc` rows), by path."""

    def __init__(self) -> None:
        self._stats: dict[str, tuple[int, int]] = {}
        self._base: tuple[list[str | None], np.ndarray, np.ndarray] | None = None
        self.skipped: dict[str, CachedDoc] = {}

    @property
    def stats(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every indexed note, by path (the snapshot's arrays made a dict on first use)."""
        if self._base is not None:
            paths, mtimes, sizes = self._base
            self._base = None
            stats: dict[str | None, tuple[int, int]] = dict(zip(paths, zip(mtimes.tolist(), sizes.tolist())))
            stats.pop(None, None)
            stats.update(self._stats)
            self._stats = stats  # type: ignore[assignment]
        return self._stats

    def load_base(self, paths: list[str | None], mtimes: np.ndarray, sizes: np.ndarray) -> None:
        """The stats of a loaded snapshot's notes (a dead slot's path is None), kept as arrays."""
        self._base = (paths, mtimes, sizes)

    def load_row(self, row: CachedDoc) -> None:
        """The stats of a note indexed since the snapshot (an indexed row of the cache)."""
        self._stats[row.path] = (row.mtime_ns, row.size)

    def clear(self) -> None:
        self._stats = {}
        self._base = None
        self.skipped.clear()

    def changed(self, listing: VaultListing, slot_of: dict[str, int], alive: np.ndarray) -> tuple[list[int], list[str]]:
        """The listed notes whose (mtime_ns, size) differ from what was indexed (or were not indexed), as
        positions in `listing`, and the indexed notes the walk did not find (sorted): compared whole, numpy
        against the snapshot's arrays (`slot_of` and `alive`: the snapshot's slots) or dict against dict."""
        if self._base is None:
            stats = self._stats
            found = dict(zip(listing.paths, zip(listing.mtimes, listing.sizes)))
            changed = found.items() - stats.items()
            if not changed:
                return [], sorted(stats.keys() - found.keys())
            position = dict(zip(listing.paths, range(len(listing.paths))))
            return [position[path] for path, _ in changed], sorted(stats.keys() - found.keys())
        import numpy as np

        base_paths, base_mtimes, base_sizes = self._base
        count = len(listing.paths)
        slots = np.fromiter(map(slot_of.get, listing.paths, repeat(-1)), dtype=np.int64, count=count)
        in_base = slots >= 0
        if len(base_paths):
            at = np.where(in_base, slots, 0)
            same = (in_base & (base_mtimes[at] == np.array(listing.mtimes, dtype=np.int64))
                    & (base_sizes[at] == np.array(listing.sizes, dtype=np.int64)))
        else:  # a snapshot of a vault emptied down to nothing
            same = in_base
        seen = np.zeros(len(base_paths), dtype=bool)
        seen[slots[in_base]] = True
        gone = [base_paths[slot] for slot in np.flatnonzero(alive & ~seen).tolist()]
        if self._stats:  # notes indexed since the snapshot (rows of the cache)
            found_paths = set(listing.paths)
            gone.extend(path for path in self._stats if path not in found_paths)
        return np.flatnonzero(~same).tolist(), sorted(gone)  # type: ignore[arg-type]

    def differs(self, note: NoteFile) -> bool:
        """Whether a listed note that `changed` gave is to be read: neither indexed nor skipped with its stat.

        While the snapshot's stats are arrays, such a note is one of the snapshot that changed or one not in
        it: only the dict can know the latter (and the dict stays unfilled)."""
        stats = self._stats if self._base is not None else self.stats
        skipped = self.skipped.get(note.path)
        return stats.get(note.path) != (note.mtime_ns, note.size) and (
            skipped is None or (skipped.mtime_ns, skipped.size) != (note.mtime_ns, note.size))

    def drop_unlisted_skips(self, listing: VaultListing, changes: Changes) -> None:
        """Forget the skipped notes the walk found no more."""
        if self.skipped:
            found = set(listing.paths)
            found.update(skip.path for skip in listing.skipped)
            for path in [p for p in self.skipped if p not in found]:
                del self.skipped[path]
                changes.skipped[path] = CachedDoc.deleted(path)

    def indexed(self, note: NoteFile, changes: Changes) -> None:
        """`note` is indexed as read now (an update when it was indexed before)."""
        stats = self.stats
        if note.path in stats:
            changes.updated += 1
        self.skipped.pop(note.path, None)
        changes.skipped.pop(note.path, None)
        stats[note.path] = (note.mtime_ns, note.size)

    def gone(self, path: str, changes: Changes) -> None:
        """The note at `path` is no more: no longer indexed, nor skipped."""
        if self.stats.pop(path, None) is not None:
            changes.removed.append(path)
        if self.skipped.pop(path, None) is not None:
            changes.skipped[path] = CachedDoc.deleted(path)

    def skip(self, record: CachedDoc, changes: Changes) -> None:
        """The note of `record` is skipped (no longer indexed)."""
        if self.stats.pop(record.path, None) is not None:
            changes.removed.append(record.path)
        if self.skipped.get(record.path) == record:
            return
        self.skipped[record.path] = record
        changes.skipped[record.path] = record


def stat_marked(root: Path, path: str, attachments: frozenset[str] = frozenset()) -> NoteFile | CachedDoc | None:
    """The note (or attachment, of one of the extensions `attachments`) at a marked vault path as a walk would
    find it, a skip record, or None when it is gone."""
    if not (is_note_path(path) or is_attachment_path(path, attachments)) or not is_valid_name(path):
        return None
    try:
        fs_path = resolve_in_vault(root, path)
    except PathOutsideVaultError:
        return CachedDoc.skipped(path, 0, 0, "outside vault (symlink)") if os.path.lexists(root / path) else None
    try:
        st = fs_path.stat()
    except OSError:
        return None
    if not fs_path.is_file():
        return None
    if st.st_size == 0:
        return CachedDoc.skipped(path, 0, 0, "empty")  # as the walk records it: no stat
    return NoteFile(path, st.st_mtime_ns, st.st_size, str(fs_path))
