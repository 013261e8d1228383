"""The background reader: the whole cache, rows, snapshot and the notes' facts, read while the index walks the vault (`start_read`),
for the first sync of a process. The format is the codec's (`store.index_codec`).
"""

from __future__ import annotations

import sqlite3
import threading
from itertools import accumulate

import numpy as np

from nlmsync.store.index_codec import (
    CachedDoc,
    Connection,
    NoteFacts,
    Snapshot,
    Vocabulary,
    decode_block,
    load_docs,
    load_facts,
    plain_connection,
    read_head,
)
from nlmsync.store.transaction import transaction

__all__ = ["CacheRead", "load_snapshot", "start_read"]


def load_snapshot(db: Connection) -> Snapshot | None:
    """The stored snapshot, whole, or None when there is none or its parts do not fit together."""
    conn = plain_connection(db)
    try:
        head = read_head(conn)
        if head is None:
            return None
        total = head.posting_starts[-1]
        slots = np.empty(total, dtype=np.int32)
        codes = np.empty(total, dtype=np.uint16 if head.code_width == 2 else np.uint32)
        counts = np.empty(head.blocks.term_count, dtype=np.int64)
        vocab: list[bytes] = []
        rows = conn.execute("SELECT block, terms, postings FROM index_blocks ORDER BY block")
        k = -1
        for k, (number, terms_raw, postings_raw) in enumerate(rows):
            if number != k or k >= len(head.blocks.firsts):
                return None
            block = decode_block(head, k, terms_raw, postings_raw)
            first, start, end = head.blocks.firsts[k], head.posting_starts[k], head.posting_starts[k + 1]
            counts[first:first + len(block.offsets) - 1] = np.diff(block.offsets)
            np.cumsum(np.frombuffer(block.deltas, dtype=np.int32), dtype=np.int32, out=slots[start:end])
            codes[start:end] = np.frombuffer(block.codes, dtype=codes.dtype)
            vocab.append(block.terms)
        if k + 1 != len(head.blocks.firsts):
            return None
        data = b"\n".join(vocab)
        byte_starts = [0, *accumulate(len(part) + 1 for part in vocab)]
        terms = Vocabulary(data, blocks=head.blocks._replace(starts=byte_starts))
        paths = head.paths()
        count = len(paths)
        values = np.frombuffer(head.tf_values, dtype=np.float64)
        if total and (slots.min() < 0 or slots.max() >= count or int(codes.max()) >= len(values)):
            return None
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Snapshot(paths, np.frombuffer(head.mtimes, dtype=np.int64), np.frombuffer(head.sizes, dtype=np.int64),
                        np.frombuffer(head.lengths, dtype=np.int64).reshape(-1, 3), terms, offsets, slots, codes,
                        values)
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


_BACKGROUND_BUSY_SECONDS = 2.0


class CacheRead:
    """The rows and the snapshot of a cache, being read (`start_read`); `result()` waits for them."""

    def __init__(self, conn: sqlite3.Connection, path: str | None) -> None:
        self._conn = conn
        self._result: tuple[list[CachedDoc], Snapshot | None, dict[int, NoteFacts]] | None = None
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        if path is None:
            self._read(conn)
        else:
            self._thread = threading.Thread(target=self._read_apart, args=(path,), name="nlmsync-cache-read",
                                            daemon=True)
            self._thread.start()

    def _read(self, conn: sqlite3.Connection) -> None:
        self._result = (load_docs(conn), load_snapshot(conn), load_facts(conn))

    def _read_apart(self, path: str) -> None:
        try:
            # a reader of a WAL file waits only on a rare exclusive lock: then the file's own connection
            # (and its own busy timeout) decides, soon
            conn = sqlite3.connect(path, timeout=_BACKGROUND_BUSY_SECONDS)
            try:
                with transaction(conn):  # rows and snapshot of one moment
                    self._read(conn)
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001 — handed to the caller of result()
            self._error = exc

    def result(self) -> tuple[list[CachedDoc], Snapshot | None, dict[int, NoteFacts]]:
        """Every row (`load_docs`), the snapshot (`load_snapshot`) and the notes' facts (`load_facts`).

        Raises:
            sqlite3.Error: the cache could not be read.
        """
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            if self._error is not None:
                if isinstance(self._error, sqlite3.Error):
                    self._error = None
                    self._read(self._conn)  # the file's own connection decides (locked, damaged, …)
                else:
                    raise self._error
        assert self._result is not None
        return self._result


def start_read(db: Connection) -> CacheRead:
    """Start reading the rows and the snapshot; `result()` returns them.

    A file-backed cache with no transaction open on `db` is read in a background thread on a connection
    of its own, in one read transaction: SQLite reads and zlib inflates the blocks without holding the GIL,
    so the caller can walk the vault meanwhile. Otherwise it is read at once, on `db`."""
    conn = plain_connection(db)
    path = None
    if not conn.in_transaction:
        main = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
        path = main[0] if main and main[0] else None
    return CacheRead(conn, path)
