"""What the state file records as synced, counted per notebook: notes (alone or in packs) and attachments, read
without a writer lock and without creating anything, so `check` may count while another run writes."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from nlmsync.errors import StateError
from nlmsync.store.db import connect_read_only, state_failure
from nlmsync.vault import attachment_kind


@dataclass(frozen=True)
class SyncedCount:
    """The notes and attachments the state file records as live in one notebook (`notes`: each note once, however
    many parts or whichever pack holds it)."""

    notebook_id: str
    title: str | None
    notes: int
    attachments: int


def synced_counts(path: Path) -> list[SyncedCount]:
    """The synced notes and attachments of each notebook the state file at `path` knows, by notebook id; [] when
    there is no state file (none is created). Call after `db.check_state_file`, which refuses a file this version
    must not read.

    Raises:
        StateError, StateLockedError: the file cannot be read.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return []
    conn = connect_read_only(path, immutable=not Path(f"{path}-wal").exists())
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        # a file an older nlmsync wrote may lack the later tables until a command that writes upgrades it
        titles: dict[str, str | None] = {}
        if "notebooks" in tables:
            titles.update(conn.execute("SELECT notebook_id, title FROM notebooks"))
        synced: set[tuple[str, str]] = set()
        if "source_mappings" in tables:
            synced.update(conn.execute("SELECT notebook_id, path FROM source_mappings WHERE status = 'active'"))
        if "pack_members" in tables:
            synced.update(conn.execute("SELECT notebook_id, path FROM pack_members"))
        counts: dict[str, list[int]] = {}
        for notebook_id, file_path in synced:
            counted = counts.setdefault(notebook_id, [0, 0])
            counted[attachment_kind(file_path) is not None] += 1
    except sqlite3.OperationalError as exc:
        raise state_failure(path, exc, "read") or StateError(f"{path}: cannot read the state file ({exc})") from None
    finally:
        conn.close()
    return [SyncedCount(nb, titles.get(nb), notes, attachments)
            for nb, (notes, attachments) in sorted(counts.items())]
