"""The one migration history of the state file. Steps are append-only once released.

`0001_index_cache` holds the search layer's persisted BM25 index (its tables and their format are
`store.index_codec`'s);
`0002_state`
holds everything else: notebooks, the source registry, aliases, eviction queues and log, pending
deletions, conversations and query records; `0003_lru_by_recency` indexes the eviction queue by recency;
`0004_note_hashes` records what each note hashed to when last read, by its file's mtime and size;
`0005_packs` holds the packs (sources holding many notes), their notes, and the titles of pack adds under way;
`0006_index_blocks` stores the search index's vocabulary and postings compressed, a block of terms a row;
`0007_notebook_truth` keeps what the notebook was read to hold; `0008_index_facts` keeps each indexed note's
language and the keys its translations share; `0009_document_texts` keeps the attachments' texts by the hash of
their bytes (`store.document_texts`); `0010_unprocessed_files` the files a notebook's server could not process,
by the hash of their bytes (`store._unprocessed`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nlmsync.store import document_texts, index_codec

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

MIGRATION_SET = "nlmsync"
# sqlite-utils' `Migrations.migrations_table`; a test checks they agree. Named here so that reading a
# file's history (every open) does not import sqlite-utils.
MIGRATIONS_TABLE = "_sqlite_migrations"


_STATE_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notebooks (
    notebook_id TEXT PRIMARY KEY,
    title TEXT,
    recorded_at TEXT NOT NULL
);
CREATE TABLE source_mappings (
    notebook_id TEXT NOT NULL,
    path TEXT NOT NULL,
    part INTEGER NOT NULL,
    part_count INTEGER NOT NULL,
    source_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'stale')),
    managed INTEGER NOT NULL,
    first_used TEXT,
    last_used TEXT,
    use_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (notebook_id, path, part)
);
CREATE INDEX source_mappings_by_source ON source_mappings (notebook_id, source_id);
CREATE INDEX source_mappings_by_hash ON source_mappings (notebook_id, content_hash);
CREATE TABLE lru_entries (
    notebook_id TEXT NOT NULL,
    path TEXT NOT NULL,
    segment TEXT NOT NULL CHECK (segment IN ('probation', 'protected')),
    tick INTEGER NOT NULL,
    PRIMARY KEY (notebook_id, path)
);
CREATE TABLE source_aliases (
    previous TEXT PRIMARY KEY,
    current TEXT NOT NULL,
    registered_at TEXT NOT NULL
);
CREATE INDEX source_aliases_by_current ON source_aliases (current);
CREATE TABLE evictions (
    id INTEGER PRIMARY KEY,
    notebook_id TEXT NOT NULL,
    path TEXT NOT NULL,
    source_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    evicted_at TEXT NOT NULL
);
CREATE INDEX evictions_by_notebook ON evictions (notebook_id, id);
CREATE TABLE pending_deletions (
    notebook_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    queued_at TEXT NOT NULL,
    PRIMARY KEY (notebook_id, source_id)
);
CREATE TABLE conversations (
    notebook_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    last_turn INTEGER NOT NULL,
    PRIMARY KEY (notebook_id, conversation_id)
);
CREATE INDEX conversations_by_recency ON conversations (notebook_id, last_turn);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    notebook_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    asked_at TEXT NOT NULL
);
CREATE INDEX messages_by_conversation ON messages (notebook_id, conversation_id, id);
CREATE TABLE query_records (
    id INTEGER PRIMARY KEY,
    notebook_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    question TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    selected_paths TEXT NOT NULL,
    citations TEXT NOT NULL,
    asked_at TEXT NOT NULL
);
CREATE INDEX query_records_by_conversation ON query_records (notebook_id, conversation_id, id);
"""


def _state_tables(db: Database) -> None:
    for statement in _STATE_TABLES.split(";"):
        if statement.strip():
            db.execute(statement)


def _lru_by_recency(db: Database) -> None:
    """The eviction queue by segment and recency: marking a few notes reads only the least recent
    protected entries an overflow could demote, instead of the whole segment."""
    db.execute("CREATE INDEX lru_entries_by_recency ON lru_entries (notebook_id, segment, tick)")


def _note_hashes(db: Database) -> None:
    """What each note hashed to when last read, by its file's mtime and size (`_note_hashes.py`)."""
    db.execute("CREATE TABLE note_hashes (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, "
               "size INTEGER NOT NULL, split TEXT NOT NULL, hashes TEXT NOT NULL)")


_PACK_TABLES = """
CREATE TABLE packs (
    notebook_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT NOT NULL,
    first_path TEXT NOT NULL,
    last_path TEXT NOT NULL,
    note_count INTEGER NOT NULL,
    size INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (notebook_id, source_id)
);
CREATE TABLE pack_members (
    notebook_id TEXT NOT NULL,
    path TEXT NOT NULL,
    source_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    note_hash TEXT NOT NULL,
    PRIMARY KEY (notebook_id, path)
);
CREATE INDEX pack_members_by_source ON pack_members (notebook_id, source_id, position);
CREATE TABLE pack_adds (
    notebook_id TEXT NOT NULL,
    title TEXT NOT NULL,
    started_at TEXT NOT NULL,
    PRIMARY KEY (notebook_id, title)
);
"""


def _packs(db: Database) -> None:
    """Packs: sources holding many notes, each note in one (`_packs.py`), and the adds of packs under way."""
    for statement in _PACK_TABLES.split(";"):
        if statement.strip():
            db.execute(statement)


def _notebook_truth(db: Database) -> None:
    """The state file as a cache of the notebook: a pack adopted from the notebook by its title is recorded as
    not read yet (the `proven` column of `packs`: it is read back before nlmsync deletes it); the sources read and found not to
    be nlmsync's are remembered (`unmanaged_sources`), so they are read once; the titles of pack adds under way
    are no longer kept (a source left by an interrupted add is recognised by what it holds)."""
    db.execute("ALTER TABLE packs ADD COLUMN proven INTEGER NOT NULL DEFAULT 1")
    db.execute("CREATE TABLE unmanaged_sources (notebook_id TEXT NOT NULL, source_id TEXT NOT NULL, "
               "title TEXT NOT NULL, found_at TEXT NOT NULL, PRIMARY KEY (notebook_id, source_id))")
    db.execute("DROP TABLE pack_adds")


def _unprocessed_files(db: Database) -> None:
    """The files a notebook's server could not process, by the hash of their bytes (`_unprocessed.py`)."""
    db.execute("CREATE TABLE unprocessed_files (notebook_id TEXT NOT NULL, content_hash TEXT NOT NULL, "
               "reason TEXT NOT NULL, PRIMARY KEY (notebook_id, content_hash))")


# The history, in order: (name, step).
_STEPS: list[tuple[str, Callable[[Database], None]]] = [
    ("0001_index_cache", index_codec.create_tables),
    ("0002_state", _state_tables),
    ("0003_lru_by_recency", _lru_by_recency),
    ("0004_note_hashes", _note_hashes),
    ("0005_packs", _packs),
    ("0006_index_blocks", index_codec.store_in_blocks),
    ("0007_notebook_truth", _notebook_truth),
    ("0008_index_facts", index_codec.create_facts),
    ("0009_document_texts", document_texts.create_tables),
    ("0010_unprocessed_files", _unprocessed_files),
]


MIGRATION_NAMES = tuple(name for name, _ in _STEPS)
"""The names of the steps, in order: a state file that applied one not among them was written by a newer nlmsync."""


@functools.cache
def _migrations() -> Migrations:
    from sqlite_utils.migrations import Migrations

    built = Migrations(MIGRATION_SET)
    for name, step in _STEPS:
        built(name=name)(step)
    return built


def __getattr__(name: str) -> Any:
    # `migrations` (the sqlite-utils object that applies the steps) is built on first use: only a file
    # that needs a step pays for importing sqlite-utils
    if name == "migrations":
        return _migrations()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
