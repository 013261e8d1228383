"""The persisted BM25 index cache: tables (migration 0001) and their read/write API.

Three tables:

- `index_meta` — key/value; `signature` says which tokenizer, weights and exclusions the cache was
  built with (a different signature means the cache is thrown away and rebuilt).
- `index_docs` — one row per note the index knows, with the `mtime_ns` and `size` it was read at
  (so a rescan in a new process re-reads only changed notes). A note in the snapshot has its `slot`;
  a note indexed since has its weighted term frequencies in `terms` (JSON) and no slot; a note that
  could not be indexed has a `skip_reason`.
- `index_snapshot` — one row: the postings of the last merge as packed arrays (sorted vocabulary
  joined by newlines, int64 offsets, int32 slots, float64 weighted term frequencies).

Rows and snapshot stay consistent under any interleaving of writers: only a snapshot write assigns
slots (and it replaces every row in the same transaction); other writes only add slot-less rows or
delete rows, and a snapshot slot that no row names is simply dead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from sqlite_utils import Database

SIGNATURE_KEY = "signature"


def create_tables(db: Database) -> None:
    """Create the index cache tables (migration 0001)."""
    db.execute("CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE IF NOT EXISTS index_docs ("
        " path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, skip_reason TEXT,"
        " body_len INTEGER NOT NULL DEFAULT 0, heading_len INTEGER NOT NULL DEFAULT 0,"
        " path_len INTEGER NOT NULL DEFAULT 0, slot INTEGER, terms BLOB)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS index_snapshot ("
        " id INTEGER PRIMARY KEY CHECK (id = 1), slot_count INTEGER NOT NULL, vocab BLOB NOT NULL,"
        " offsets BLOB NOT NULL, slots BLOB NOT NULL, tfs BLOB NOT NULL)"
    )


class CachedDoc(NamedTuple):
    """One `index_docs` row. `terms` is only loaded for slot-less indexed notes."""

    path: str
    mtime_ns: int
    size: int
    skip_reason: str | None = None
    lengths: tuple[int, int, int] = (0, 0, 0)
    slot: int | None = None
    terms: dict[str, float] | None = None


@dataclass(frozen=True)
class Snapshot:
    terms: list[str]
    offsets: np.ndarray
    slots: np.ndarray
    tfs: np.ndarray
    slot_count: int


def load_signature(db: Database) -> str | None:
    row = db.execute("SELECT value FROM index_meta WHERE key = ?", [SIGNATURE_KEY]).fetchone()
    return row[0] if row else None


class DocRows(NamedTuple):
    """`index_docs` split the way a loader needs it: snapshot rows as plain tuples
    `(path, mtime_ns, size, slot, body_len, heading_len, path_len)` (fast for large vaults),
    slot-less indexed notes and skipped notes as `CachedDoc`."""

    in_snapshot: list[tuple[str, int, int, int, int, int, int]]
    overlay: list[CachedDoc]
    skipped: list[CachedDoc]


def load_docs(db: Database) -> DocRows:
    """Every row; a corrupt `terms` value comes back as an empty dict (the caller re-reads that note)."""
    in_snapshot = db.execute("SELECT path, mtime_ns, size, slot, body_len, heading_len, path_len FROM index_docs"
                             " WHERE slot IS NOT NULL AND skip_reason IS NULL").fetchall()
    overlay: list[CachedDoc] = []
    skipped: list[CachedDoc] = []
    cursor = db.execute("SELECT path, mtime_ns, size, skip_reason, body_len, heading_len, path_len, terms"
                        " FROM index_docs WHERE slot IS NULL OR skip_reason IS NOT NULL")
    for path, mtime_ns, size, reason, b, h, p, raw_terms in cursor:
        if reason is not None:
            skipped.append(CachedDoc(path, mtime_ns, size, reason, (b, h, p)))
            continue
        try:
            loaded = json.loads(raw_terms) if raw_terms is not None else {}
            terms = {str(k): float(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
        except (ValueError, TypeError, AttributeError):
            terms = {}
        overlay.append(CachedDoc(path, mtime_ns, size, None, (b, h, p), None, terms))
    return DocRows(in_snapshot, overlay, skipped)


def load_snapshot(db: Database) -> Snapshot | None:
    """The stored postings, or None when there are none or they do not fit together."""
    row = db.execute("SELECT slot_count, vocab, offsets, slots, tfs FROM index_snapshot WHERE id = 1").fetchone()
    if row is None:
        return None
    slot_count, vocab, offsets_raw, slots_raw, tfs_raw = row
    try:
        terms = bytes(vocab).decode("utf-8").split("\n") if vocab else []
        offsets = np.frombuffer(offsets_raw, dtype=np.int64)
        slots = np.frombuffer(slots_raw, dtype=np.int32)
        tfs = np.frombuffer(tfs_raw, dtype=np.float64)
    except (ValueError, TypeError, UnicodeDecodeError):
        return None
    if (len(offsets) != len(terms) + 1 or offsets[0] != 0 or offsets[-1] != len(slots) or len(tfs) != len(slots)
            or np.any(np.diff(offsets) < 0) or (len(slots) and (slots.min() < 0 or slots.max() >= slot_count))
            or sorted(terms) != terms):
        return None
    return Snapshot(terms, offsets, slots, tfs, int(slot_count))


def _row(doc: CachedDoc) -> tuple[object, ...]:
    terms = json.dumps(doc.terms, ensure_ascii=False, separators=(",", ":")) if doc.terms is not None else None
    return (doc.path, doc.mtime_ns, doc.size, doc.skip_reason, *doc.lengths, doc.slot, terms)


_UPSERT = ("INSERT OR REPLACE INTO index_docs (path, mtime_ns, size, skip_reason, body_len, heading_len, path_len,"
           " slot, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def clear(db: Database, signature: str) -> None:
    """Drop the whole cache and record the signature the next build will have."""
    with db.atomic():
        db.execute("DELETE FROM index_docs")
        db.execute("DELETE FROM index_snapshot")
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])


def write_changes(db: Database, upserts: Iterable[CachedDoc], deletions: Iterable[str]) -> None:
    """Add or replace slot-less rows and delete rows, in one transaction."""
    with db.atomic():
        db.conn.executemany("DELETE FROM index_docs WHERE path = ?", [(p,) for p in deletions])
        db.conn.executemany(_UPSERT, [_row(d) for d in upserts])


def write_snapshot(db: Database, snapshot: Snapshot, docs: Iterable[CachedDoc], signature: str) -> None:
    """Replace the snapshot and every row with this consistent set, in one transaction."""
    vocab = "\n".join(snapshot.terms).encode("utf-8")
    with db.atomic():
        db.execute("DELETE FROM index_docs")
        db.conn.executemany(_UPSERT, [_row(d) for d in docs])
        db.execute("INSERT OR REPLACE INTO index_snapshot (id, slot_count, vocab, offsets, slots, tfs)"
                   " VALUES (1, ?, ?, ?, ?, ?)",
                   [snapshot.slot_count, vocab, snapshot.offsets.astype(np.int64).tobytes(),
                    snapshot.slots.astype(np.int32).tobytes(), snapshot.tfs.astype(np.float64).tobytes()])
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])
