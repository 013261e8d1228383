"""The search index as the state file keeps it: the format of its three tables (made by the store's migration
0001) and their read/write API.

- `index_meta` — key/value; `signature` says which tokenizer, weights and exclusions the cache was
  built with (a different signature means the cache is thrown away and rebuilt).
- `index_snapshot` — one row: the index as of the last merge, as packed arrays a new process loads
  without a per-note loop: the notes (paths joined by NUL, their `mtime_ns`, `size` and field
  lengths), the sorted vocabulary (joined by newlines) and the postings (int64 offsets, int32
  slots, float64 weighted term frequencies), with a CRC of the text parts.
- `index_docs` — one row per note that changed since that merge: `kind` is `indexed` (its weighted
  term frequencies in `terms`, JSON), `skipped` (with a `skip_reason`) or `deleted`. A row hides the
  snapshot's entry for the same path. Skipped notes are always rows.

Every note keeps the `mtime_ns` and `size` it was read at, so a rescan in a new process re-reads only
changed notes. Snapshot and rows stay consistent under any interleaving of writers: a snapshot write
replaces every row in the same transaction, and any other write only adds or replaces rows, each of
which describes one note completely.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, overload

from nlmsync.store.transaction import transaction

if TYPE_CHECKING:
    import numpy as np
    from sqlite_utils import Database

SIGNATURE_KEY = "signature"
BLOCKS_KEY = "vocabulary_blocks"  # where the snapshot's vocabulary blocks are (`VocabularyBlocks`, JSON)
INDEXED, SKIPPED, DELETED = "indexed", "skipped", "deleted"

# Every function takes the state file as a plain `sqlite3` connection (what `store.db.open_connection`
# gives, and all a search needs) or as the sqlite-utils `Database` around one (what `StateStore` has).
Connection: TypeAlias = "sqlite3.Connection | Database"


def _conn(db: Connection) -> sqlite3.Connection:
    return db if isinstance(db, sqlite3.Connection) else db.conn



class CachedDoc(NamedTuple):
    """One `index_docs` row; `terms` only for an indexed note, `skip_reason` only for a skipped one."""

    path: str
    mtime_ns: int
    size: int
    skip_reason: str | None = None
    lengths: tuple[int, int, int] = (0, 0, 0)
    terms: dict[str, float] | None = None
    kind: str = INDEXED

    @classmethod
    def deleted(cls, path: str) -> CachedDoc:
        return cls(path, -1, -1, kind=DELETED)

    @classmethod
    def skipped(cls, path: str, mtime_ns: int, size: int, reason: str) -> CachedDoc:
        return cls(path, mtime_ns, size, reason, kind=SKIPPED)


class Vocabulary(Sequence[str]):
    """A snapshot's sorted vocabulary as stored: its terms' UTF-8 bytes joined by newlines.

    A term becomes a `str` only when it is looked at, with the neighbours in its block of about
    `block_bytes` (each block kept once made), so a process that answers a few queries from the cache does
    not build every term.
    `find` looks a term up in O(log n) without a Python call per probe; iterating makes every term.
    The blocks (`VocabularyBlocks`) are saved beside the snapshot, so that a cold answer reads only the
    blocks of its query terms (`StoredVocabulary`)."""

    def __init__(self, data: bytes, block_bytes: int = 16384, *, blocks: VocabularyBlocks | None = None) -> None:
        self._data = data
        self.blocks = blocks if blocks is not None else VocabularyBlocks.of(data, block_bytes)
        self._blocks: list[list[str] | None] = [None] * len(self.blocks.firsts)

    @property
    def data(self) -> bytes:
        return self._data

    def __len__(self) -> int:
        return self.blocks.term_count

    def _block_bytes(self, k: int) -> bytes:
        return self._data[self.blocks.starts[k]:self.blocks.starts[k + 1] - 1]

    def _block(self, k: int) -> list[str]:
        block = self._blocks[k]
        if block is None:
            block = self._blocks[k] = self._block_bytes(k).decode("utf-8").split("\n")
        return block

    def find(self, term: str) -> int | None:
        """The position of `term`, or None when it is not in the vocabulary."""
        k = bisect_right(self.blocks.heads, term) - 1
        if k < 0:
            return None
        block = self._block(k)
        j = bisect_left(block, term)
        return self.blocks.firsts[k] + j if j < len(block) and block[j] == term else None

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("vocabulary index out of range")
        k = bisect_right(self.blocks.firsts, i) - 1
        return self._block(k)[i - self.blocks.firsts[k]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data.decode("utf-8").split("\n") if len(self) else [])


class VocabularyBlocks(NamedTuple):
    """Where a stored vocabulary's blocks are: block k is `data[starts[k]:starts[k + 1] - 1]` (whole terms, the
    first of them `heads[k]`, number `firsts[k]`), its CRC `crcs[k]`; `term_count` terms in all."""

    term_count: int
    starts: list[int]
    firsts: list[int]
    heads: list[str]
    crcs: list[int]

    @classmethod
    def of(cls, data: bytes, block_bytes: int = 16384) -> VocabularyBlocks:
        starts: list[int] = []
        firsts: list[int] = []
        heads: list[str] = []
        crcs: list[int] = []
        start, first, size = 0, 0, len(data)
        while start < size:
            cut = data.find(b"\n", min(start + block_bytes, size))
            end = size if cut < 0 else cut
            head = data.find(b"\n", start, end)
            starts.append(start)
            firsts.append(first)
            heads.append(data[start:end if head < 0 else head].decode("utf-8"))
            crcs.append(zlib.crc32(data[start:end]))
            first += data.count(b"\n", start, end) + 1
            start = end + 1
        starts.append(size + 1)
        return cls(first, starts, firsts, heads, crcs)


class StoredVocabulary(Vocabulary):
    """A `Vocabulary` whose blocks are read from the state file when first looked at, each checked against its
    CRC (a damaged block raises `ValueError`): a cold answer reads only the block of each query term."""

    def __init__(self, blocks: VocabularyBlocks, blob: sqlite3.Blob) -> None:
        super().__init__(b"", blocks=blocks)
        self._blob = blob

    @property
    def data(self) -> bytes:
        self._blob.seek(0)
        return self._blob.read()

    def _block_bytes(self, k: int) -> bytes:
        start, end = self.blocks.starts[k], self.blocks.starts[k + 1] - 1
        self._blob.seek(start)
        data = self._blob.read(end - start)
        if len(data) != end - start or zlib.crc32(data) != self.blocks.crcs[k]:
            raise ValueError("snapshot: a vocabulary block does not match its CRC")
        return data


@dataclass(frozen=True)
class Snapshot:
    """The index as of a merge. Slot i is note `paths[i]` (None: dead, not written)."""

    paths: list[str | None]
    mtimes: np.ndarray
    sizes: np.ndarray
    lengths: np.ndarray
    terms: Sequence[str]  # sorted; a `Vocabulary` when loaded
    offsets: np.ndarray
    slots: np.ndarray
    tfs: np.ndarray


def load_signature(db: Connection) -> str | None:
    row = _conn(db).execute("SELECT value FROM index_meta WHERE key = ?", [SIGNATURE_KEY]).fetchone()
    return row[0] if row else None


def load_docs(db: Connection) -> list[CachedDoc]:
    """Every row; a corrupt `terms` value comes back as an empty dict (the caller re-reads that note)."""
    docs: list[CachedDoc] = []
    cursor = _conn(db).execute("SELECT path, kind, mtime_ns, size, skip_reason, body_len, heading_len, path_len, terms"
                        " FROM index_docs")
    for path, kind, mtime_ns, size, reason, b, h, p, raw_terms in cursor:
        terms = None
        if kind == INDEXED:
            try:
                loaded = json.loads(raw_terms) if raw_terms is not None else {}
                terms = {str(k): float(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
            except (ValueError, TypeError, AttributeError):
                terms = {}
        docs.append(CachedDoc(path, mtime_ns, size, reason, (b, h, p), terms, kind))
    return docs


def _crc(paths: bytes, vocab: bytes) -> int:
    return zlib.crc32(vocab, zlib.crc32(paths))


# Memory-mapped reads for the snapshot row: SQLite then copies its overflow pages from the page cache instead
# of making a read call for each page.
_SNAPSHOT_MMAP_BYTES = 1 << 30


_SNAPSHOT_COLUMNS = ("paths", "mtimes", "sizes", "lengths", "vocab", "offsets", "slots", "tfs")


@contextmanager
def _mapped(conn: sqlite3.Connection) -> Iterator[None]:
    """Memory-mapped reads of the state file around the block (see `_SNAPSHOT_MMAP_BYTES`)."""
    mmap = conn.execute("PRAGMA mmap_size").fetchone()  # no row: a database in memory
    remap = mmap is not None and mmap[0] < _SNAPSHOT_MMAP_BYTES
    if remap:
        conn.execute(f"PRAGMA mmap_size = {_SNAPSHOT_MMAP_BYTES}")
    try:
        yield
    finally:
        if remap:
            conn.execute(f"PRAGMA mmap_size = {int(mmap[0])}")


def _snapshot_row(conn: sqlite3.Connection, by_blob: bool) -> tuple[Any, ...] | None:
    if not by_blob:
        row: tuple[Any, ...] | None = conn.execute(
            f"SELECT crc, {', '.join(_SNAPSHOT_COLUMNS)} FROM index_snapshot WHERE id = 1").fetchone()
        return row
    # incremental blob reads copy without holding the GIL (a SELECT's values are copied while holding it);
    # they are of one moment only inside the caller's transaction
    crc = conn.execute("SELECT crc FROM index_snapshot WHERE id = 1").fetchone()
    if crc is None:
        return None
    parts: list[Any] = [crc[0]]
    for column in _SNAPSHOT_COLUMNS:
        with conn.blobopen("index_snapshot", column, 1, readonly=True) as blob:
            parts.append(blob.read())
    return tuple(parts)


def _decode_paths(raw: bytes) -> list[str | None]:
    """The snapshot's paths (joined by NUL as stored); a dead slot, stored empty, is None.

    Raises:
        UnicodeDecodeError: the stored paths are not UTF-8.
    """
    paths: list[str | None] = raw.decode("utf-8").split("\0") if raw else []  # type: ignore[assignment]
    if "" in paths:  # dead slots (a merge leaves none, so this is rare)
        paths = [path or None for path in paths]
    return paths


def load_snapshot(db: Connection, *, by_blob: bool = False) -> Snapshot | None:
    """The stored snapshot, or None when there is none or its parts do not fit together.

    `by_blob`: read the arrays as incremental blobs (the GIL is free meanwhile); only inside a transaction.
    """
    import numpy as np  # here: a fresh process's first query reads only parts of the snapshot (`SnapshotParts`)

    conn = _conn(db)
    with _mapped(conn):
        row = _snapshot_row(conn, by_blob)
    if row is None:
        return None
    crc, paths_raw, mtimes_raw, sizes_raw, lengths_raw, vocab_raw, offsets_raw, slots_raw, tfs_raw = row
    try:
        if _crc(bytes(paths_raw), bytes(vocab_raw)) != crc:
            return None
        paths = _decode_paths(bytes(paths_raw))
        saved = _read_blocks(conn, crc)
        if saved is None:  # damaged: the index is built again, and saved whole
            return None
        terms = Vocabulary(bytes(vocab_raw), blocks=saved[0])
        mtimes = np.frombuffer(mtimes_raw, dtype=np.int64)
        sizes = np.frombuffer(sizes_raw, dtype=np.int64)
        lengths = np.frombuffer(lengths_raw, dtype=np.int64).reshape(-1, 3)
        offsets = np.frombuffer(offsets_raw, dtype=np.int64)
        slots = np.frombuffer(slots_raw, dtype=np.int32)
        tfs = np.frombuffer(tfs_raw, dtype=np.float64)
    except (ValueError, TypeError, UnicodeDecodeError):
        return None
    count = len(paths)
    if (len(mtimes) != count or len(sizes) != count or len(lengths) != count or len(offsets) != len(terms) + 1
            or offsets[0] != 0 or offsets[-1] != len(slots) or len(tfs) != len(slots)
            or np.any(np.diff(offsets) < 0) or (len(slots) and (slots.min() < 0 or slots.max() >= count))):
        return None
    return Snapshot(paths, mtimes, sizes, lengths, terms, offsets, slots, tfs)


class SnapshotParts:
    """The stored snapshot as one query needs it, read without numpy and without its postings whole.

    A fresh process answering its first query (`search.cold`) reads the notes (paths, `mtime_ns`, size, field
    lengths) at once, and by incremental blob reads only the vocabulary block of each query term (where the
    blocks are is saved beside the snapshot, `VocabularyBlocks`) and that term's range of postings. Use it
    inside `with SnapshotParts.open(conn)`, itself inside a read transaction (the rows read beside it are then
    of the same moment). Anything that does not fit together raises `ValueError`: the caller then takes the
    whole-index path, which checks and rebuilds.
    """

    def __init__(self, paths: list[str | None], mtimes: list[int], sizes: list[int], lengths: memoryview,
                 terms: Vocabulary, blobs: list[sqlite3.Blob]) -> None:
        self.paths, self.mtimes, self.sizes, self.terms = paths, mtimes, sizes, terms
        self.lengths = lengths  # three per note: body, heading, path
        self._blobs = blobs
        self._entries = len(blobs[1]) // 4 if blobs else 0

    @functools.cached_property
    def slot_of(self) -> dict[str, int]:
        """The slot of each live note, by path."""
        slot_of: dict[str | None, int] = dict(zip(self.paths, range(len(self.paths))))
        slot_of.pop(None, None)
        return slot_of  # type: ignore[return-value]

    @classmethod
    def _read(cls, conn: sqlite3.Connection, row: tuple[Any, ...]) -> SnapshotParts:
        crc, paths_raw, mtimes_raw, sizes_raw, lengths_raw = row
        vocab_blob = conn.blobopen("index_snapshot", "vocab", 1, readonly=True)
        try:
            saved = _read_blocks(conn, crc)
            if saved is None or zlib.crc32(paths_raw) != saved[1]:
                raise ValueError("snapshot: its vocabulary blocks are missing or are another snapshot's")
            terms: Vocabulary = StoredVocabulary(saved[0], vocab_blob)
            paths = _decode_paths(paths_raw)
            count = len(paths)
            if len(mtimes_raw) != 8 * count or len(sizes_raw) != 8 * count or len(lengths_raw) != 24 * count:
                raise ValueError("snapshot: note arrays do not fit the paths")
            blobs = [conn.blobopen("index_snapshot", column, 1, readonly=True)
                     for column in ("offsets", "slots", "tfs")]
        except BaseException:
            vocab_blob.close()
            raise
        parts = cls(paths, memoryview(mtimes_raw).cast("q").tolist(), memoryview(sizes_raw).cast("q").tolist(),
                    memoryview(lengths_raw).cast("q"), terms, [*blobs, vocab_blob])
        offsets, slots, tfs = blobs
        if len(offsets) != 8 * (len(terms) + 1) or len(slots) % 4 or len(tfs) != 8 * parts._entries:
            parts.close()
            raise ValueError("snapshot: postings do not fit the vocabulary")
        return parts

    @classmethod
    @contextmanager
    def open(cls, db: Connection) -> Iterator[SnapshotParts]:
        """The snapshot's parts for the block (no note and no term when there is no snapshot: a cache of rows
        only), its postings read through memory-mapped pages.

        Raises:
            ValueError: its parts do not fit together (or its CRC is wrong).
        """
        conn = _conn(db)
        with _mapped(conn):
            row = conn.execute("SELECT crc, paths, mtimes, sizes, lengths FROM index_snapshot WHERE id = 1").fetchone()
            parts = cls([], [], [], memoryview(b"").cast("q"), Vocabulary(b""), []) if row is None \
                else cls._read(conn, row)
            try:
                yield parts
            finally:
                parts.close()

    def postings(self, term_id: int) -> tuple[memoryview[int], memoryview[float]]:
        """The slots (int32) and weighted term frequencies (float64) of term number `term_id`.

        Raises:
            ValueError: the term's range or slots are out of bounds.
        """
        offsets, slots, tfs = self._blobs[:3]
        offsets.seek(8 * term_id)
        start, end = memoryview(offsets.read(16)).cast("q")
        if not 0 <= start <= end <= self._entries:
            raise ValueError("snapshot: postings range out of bounds")
        slots.seek(4 * start)
        tfs.seek(8 * start)
        term_slots = memoryview(slots.read(4 * (end - start))).cast("i")
        if end > start and (min(term_slots) < 0 or max(term_slots) >= len(self.paths)):
            raise ValueError("snapshot: slot out of range")
        return term_slots, memoryview(tfs.read(8 * (end - start))).cast("d")

    def close(self) -> None:
        for blob in self._blobs:
            blob.close()


_BACKGROUND_BUSY_SECONDS = 2.0


class CacheRead:
    """The rows and the snapshot of a cache, being read (`start_read`); `result()` waits for them."""

    def __init__(self, conn: sqlite3.Connection, path: str | None) -> None:
        self._conn = conn
        self._result: tuple[list[CachedDoc], Snapshot | None] | None = None
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        if path is None:
            self._read(conn)
        else:
            self._thread = threading.Thread(target=self._read_apart, args=(path,), name="nlmsync-cache-read",
                                            daemon=True)
            self._thread.start()

    def _read(self, conn: sqlite3.Connection, *, by_blob: bool = False) -> None:
        self._result = (load_docs(conn), load_snapshot(conn, by_blob=by_blob))

    def _read_apart(self, path: str) -> None:
        try:
            # a reader of a WAL file waits only on a rare exclusive lock: then the file's own connection
            # (and its own busy timeout) decides, soon
            conn = sqlite3.connect(path, timeout=_BACKGROUND_BUSY_SECONDS)
            try:
                with transaction(conn):  # rows and snapshot of one moment
                    self._read(conn, by_blob=True)
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001 — handed to the caller of result()
            self._error = exc

    def result(self) -> tuple[list[CachedDoc], Snapshot | None]:
        """Every row (`load_docs`) and the snapshot (`load_snapshot`).

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
    of its own, in one read transaction: SQLite copies the snapshot without holding the GIL,
    so the caller can walk the vault meanwhile. Otherwise it is read at once, on `db`."""
    conn = _conn(db)
    path = None
    if not conn.in_transaction:
        main = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
        path = main[0] if main and main[0] else None
    return CacheRead(conn, path)


def _row(doc: CachedDoc) -> tuple[object, ...]:
    terms = json.dumps(doc.terms, ensure_ascii=False, separators=(",", ":")) if doc.terms is not None else None
    return (doc.path, doc.kind, doc.mtime_ns, doc.size, doc.skip_reason, *doc.lengths, terms)


_UPSERT = ("INSERT OR REPLACE INTO index_docs (path, kind, mtime_ns, size, skip_reason, body_len, heading_len,"
           " path_len, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _write_blocks(conn: sqlite3.Connection, crc: int, paths_crc: int, blocks: VocabularyBlocks) -> None:
    """Save where the vocabulary's blocks are, for the snapshot of CRC `crc` (written with it, in its
    transaction: a snapshot without its blocks is damaged)."""
    value = json.dumps({"snapshot_crc": crc, "paths_crc": paths_crc, "count": blocks.term_count,
                        "starts": blocks.starts, "firsts": blocks.firsts, "heads": blocks.heads, "crcs": blocks.crcs},
                       ensure_ascii=False, separators=(",", ":"))
    conn.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [BLOCKS_KEY, value])


def _read_blocks(conn: sqlite3.Connection, crc: int) -> tuple[VocabularyBlocks, int] | None:
    """The saved blocks of the snapshot of CRC `crc`, and the CRC of its paths; None when there are none (or
    they do not fit together)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", [BLOCKS_KEY]).fetchone()
    if row is None:
        return None
    try:
        saved = json.loads(row[0])
        if saved["snapshot_crc"] != crc:
            return None
        blocks = VocabularyBlocks(int(saved["count"]), *(list(saved[name]) for name in VocabularyBlocks._fields[1:]))
        paths_crc = int(saved["paths_crc"])
    except (ValueError, TypeError, KeyError):
        return None
    if not (len(blocks.starts) == len(blocks.firsts) + 1 == len(blocks.heads) + 1 == len(blocks.crcs) + 1
            and all(isinstance(head, str) for head in blocks.heads)):
        return None
    return blocks, paths_crc


def clear(db: Connection, signature: str) -> None:
    """Drop the whole cache and record the signature the next build will have."""
    db = _conn(db)
    with transaction(db):
        db.execute("DELETE FROM index_meta WHERE key = ?", [BLOCKS_KEY])
        db.execute("DELETE FROM index_docs")
        db.execute("DELETE FROM index_snapshot")
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])


def write_changes(db: Connection, rows: Iterable[CachedDoc]) -> None:
    """Add or replace rows (indexed, skipped or deleted notes) in one transaction."""
    db = _conn(db)
    with transaction(db):
        db.executemany(_UPSERT, [_row(d) for d in rows])


def _blob(array: np.ndarray, dtype: type) -> memoryview:
    """The array's bytes without copying them when it already has this dtype and layout."""
    import numpy as np

    return memoryview(np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8).data)


def write_snapshot(db: Connection, snapshot: Snapshot, rows: Iterable[CachedDoc], signature: str) -> None:
    """Replace the snapshot, and every row with `rows`, in one transaction."""
    paths = "\0".join(p or "" for p in snapshot.paths).encode("utf-8")
    vocab = snapshot.terms.data if isinstance(snapshot.terms, Vocabulary) else "\n".join(snapshot.terms).encode("utf-8")
    crc = _crc(paths, vocab)
    blocks = snapshot.terms.blocks if isinstance(snapshot.terms, Vocabulary) else VocabularyBlocks.of(vocab)
    import numpy as np

    db = _conn(db)
    with transaction(db):
        _write_blocks(db, crc, zlib.crc32(paths), blocks)
        db.execute("DELETE FROM index_docs")
        db.executemany(_UPSERT, [_row(d) for d in rows])
        db.execute("INSERT OR REPLACE INTO index_snapshot (id, crc, paths, mtimes, sizes, lengths, vocab, offsets,"
                   " slots, tfs) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [crc, paths, _blob(snapshot.mtimes, np.int64), _blob(snapshot.sizes, np.int64),
                    _blob(snapshot.lengths, np.int64), vocab, _blob(snapshot.offsets, np.int64),
                    _blob(snapshot.slots, np.int32), _blob(snapshot.tfs, np.float64)])
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])
