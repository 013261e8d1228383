"""Opening the state file: WAL, migrations, refusal of newer or corrupt files."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from nlmsync.store.schema import migrations


def open_database(path: Path) -> Database:
    """Open (creating if needed) the state database at `path` and bring its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Database(path)
    db.enable_wal()
    migrations.apply(db)
    return db
