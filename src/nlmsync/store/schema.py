"""The one migration history of the state file. Steps are append-only once released."""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from nlmsync.store import index_cache

MIGRATION_SET = "nlmsync"

migrations = Migrations(MIGRATION_SET)


@migrations(name="0001_index_cache")
def _index_cache_tables(db: Database) -> None:
    index_cache.create_tables(db)


def known_migration_names() -> list[str]:
    return [m.name for m in migrations._migrations]
