"""The persisted BM25 index cache (owned by the search layer's needs; stored here, one schema)."""

from __future__ import annotations

from sqlite_utils import Database


def create_tables(db: Database) -> None:
    """Create the index cache tables (migration 0001)."""
    db.execute("CREATE TABLE IF NOT EXISTS index_docs (path TEXT PRIMARY KEY)")
