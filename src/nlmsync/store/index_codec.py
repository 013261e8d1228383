"""The search index as the state file keeps it: its four tables (made by the migration steps `create_tables` and
`store_in_blocks`, which `store.schema` runs), the format of what they hold, and writing it.

- `index_meta` — key/value; `signature` says which tokenizer, weights and exclusions the cache was
  built with (a different signature means the cache is thrown away and rebuilt).
- `index_snapshot` — one row: the index as of the last merge, its notes as packed arrays a new process loads
  without a per-note loop (paths joined by NUL, their `mtime_ns`, `size` and field lengths, int64), the
  distinct weighted term frequencies (`tf_values`, float64, most frequent first) and where the blocks
  begin (`heads`: each block's first term, joined by newlines; `firsts` and `starts`: each block's first term
  number and first posting, int64, the totals last), with a CRC of all of these.
- `index_blocks` — the sorted vocabulary and its postings, a block of consecutive terms a row (about 16 KB of
  terms, or 64 Ki postings, or one term with more): `terms`, the terms joined by newlines, and `postings`,
  each term's posting count (uint32), the slot of each posting as the difference to the one before it in the
  block (int32, the first to 0) and its frequency's position in `tf_values` (uint16, uint32 for more than
  65,536 values), each part zlib-compressed (which checks its own Adler-32 on reading). A query reads only
  the blocks of its terms; frequencies are stored exactly, so a loaded index ranks bit for bit as the one
  saved.
- `index_facts` — what the index knows of each indexed note besides its terms (`NoteFacts`): its language and
  the keys its copies in other languages share (`pages`, newline-separated), a row per note keyed by a 64-bit hash
  of its path (`path_key`: the snapshot holds the paths already), kept equal to the index's notes by every write; `index_meta`'s `languages` counts the notes of each language (JSON).
- `index_docs` — one row per note that changed since that merge: `kind` is `indexed` (its weighted
  term frequencies in `terms`, JSON), `skipped` (with a `skip_reason`) or `deleted`. A row hides the
  snapshot's entry for the same path. Skipped notes are always rows.

Every note keeps the `mtime_ns` and `size` it was read at, so a rescan in a new process re-reads only
changed notes. Snapshot and rows stay consistent under any interleaving of writers: a snapshot write
replaces every row in the same transaction, and any other write only adds or replaces rows, each of
which describes one note completely.

The index reads them two ways, both search's: a fresh process's first query reads the parts it needs
(`search.snapshot_parts`), a sync loads everything in a background thread (`search.cache_read`).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, NamedTuple, TypeAlias, overload

from nlmsync.store.transaction import transaction

if TYPE_CHECKING:
    import numpy as np
    from sqlite_utils import Database

SIGNATURE_KEY = "signature"
LANGUAGES_KEY = "languages"
INDEXED, SKIPPED, DELETED = "indexed", "skipped", "deleted"

# Every function takes the state file as a plain `sqlite3` connection (what `store.db.open_connection`
# gives, and all a search needs) or as the sqlite-utils `Database` around one (what `StateStore` has).
Connection: TypeAlias = "sqlite3.Connection | Database"


def plain_connection(db: Connection) -> sqlite3.Connection:
    return db if isinstance(db, sqlite3.Connection) else db.conn


def create_tables(db: Database) -> None:
    """The index's tables as the first migration step made them (`store_in_blocks` changed the snapshot's)."""
    db.execute("CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE IF NOT EXISTS index_docs ("
        " path TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('indexed', 'skipped', 'deleted')),"
        " mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, skip_reason TEXT,"
        " body_len INTEGER NOT NULL DEFAULT 0, heading_len INTEGER NOT NULL DEFAULT 0,"
        " path_len INTEGER NOT NULL DEFAULT 0, terms BLOB)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS index_snapshot ("
        " id INTEGER PRIMARY KEY CHECK (id = 1), crc INTEGER NOT NULL, paths BLOB NOT NULL,"
        " mtimes BLOB NOT NULL, sizes BLOB NOT NULL, lengths BLOB NOT NULL, vocab BLOB NOT NULL,"
        " offsets BLOB NOT NULL, slots BLOB NOT NULL, tfs BLOB NOT NULL)"
    )


def store_in_blocks(db: Database) -> None:
    """The snapshot as a row of notes and a row per block of terms (the tables above); the cache is built again
    (its signature's format changed with it)."""
    db.execute("DROP TABLE index_snapshot")
    db.execute(
        "CREATE TABLE index_snapshot ("
        " id INTEGER PRIMARY KEY CHECK (id = 1), crc INTEGER NOT NULL, paths BLOB NOT NULL,"
        " mtimes BLOB NOT NULL, sizes BLOB NOT NULL, lengths BLOB NOT NULL, tf_values BLOB NOT NULL,"
        " heads BLOB NOT NULL, firsts BLOB NOT NULL, starts BLOB NOT NULL)"
    )
    db.execute("CREATE TABLE index_blocks (block INTEGER PRIMARY KEY, terms BLOB NOT NULL, postings BLOB NOT NULL)")
    db.execute("DELETE FROM index_docs")
    db.execute("DELETE FROM index_meta")




def create_facts(db: Database) -> None:
    """The notes' facts (`index_facts`); the cache is built again, so that every note gets its row."""
    db.execute("CREATE TABLE index_facts (key INTEGER PRIMARY KEY, lang TEXT NOT NULL, pages TEXT NOT NULL)")
    db.execute("DELETE FROM index_meta")


class NoteFacts(NamedTuple):
    """What the index knows of a note besides its terms: its language (`text.text_language`'s code, "" for none)
    and the keys it shares with its copies in other languages (`search.note_facts`)."""

    lang: str
    pages: tuple[str, ...] = ()


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


class VocabularyBlocks(NamedTuple):
    """Where a vocabulary's blocks are: block k is `data[starts[k]:starts[k + 1] - 1]` (whole terms joined by
    newlines, the first of them `heads[k]`, number `firsts[k]`); `term_count` terms in all."""

    term_count: int
    starts: list[int]
    firsts: list[int]
    heads: list[str]

    @classmethod
    def of(cls, data: bytes, block_bytes: int = 16384) -> VocabularyBlocks:
        starts: list[int] = []
        firsts: list[int] = []
        heads: list[str] = []
        start, first, size = 0, 0, len(data)
        while start < size:
            cut = data.find(b"\n", min(start + block_bytes, size))
            end = size if cut < 0 else cut
            head = data.find(b"\n", start, end)
            starts.append(start)
            firsts.append(first)
            heads.append(data[start:end if head < 0 else head].decode("utf-8"))
            first += data.count(b"\n", start, end) + 1
            start = end + 1
        starts.append(size + 1)
        return cls(first, starts, firsts, heads)


def terms_with_prefix(heads: Sequence[str], block: Callable[[int], list[str]], prefix: str, cap: int) -> list[str]:
    """The first `cap` terms starting with `prefix` of a sorted vocabulary stored in blocks: `heads` holds each
    block's first term, `block(k)` gives block k's terms."""
    found: list[str] = []
    k = max(bisect_right(heads, prefix) - 1, 0)
    while k < len(heads) and len(found) < cap:
        terms = block(k)
        j = bisect_left(terms, prefix)
        while j < len(terms) and terms[j].startswith(prefix) and len(found) < cap:
            found.append(terms[j])
            j += 1
        if j < len(terms):
            break
        k += 1
    return found


class Vocabulary(Sequence[str]):
    """A sorted vocabulary as stored: its terms' UTF-8 bytes joined by newlines.

    A term becomes a `str` only when it is looked at, with the neighbours in its block (each block kept once
    made), so a process that answers a few queries does not build every term. `find` looks a term up in
    O(log n) without a Python call per probe; iterating makes every term."""

    def __init__(self, data: bytes, block_bytes: int = 16384, *, blocks: VocabularyBlocks | None = None) -> None:
        self.data = data
        self.blocks = blocks if blocks is not None else VocabularyBlocks.of(data, block_bytes)
        self._blocks: list[list[str] | None] = [None] * len(self.blocks.firsts)

    def __len__(self) -> int:
        return self.blocks.term_count

    def _block(self, k: int) -> list[str]:
        block = self._blocks[k]
        if block is None:
            start, end = self.blocks.starts[k], self.blocks.starts[k + 1] - 1
            block = self._blocks[k] = self.data[start:end].decode("utf-8").split("\n")
        return block

    def find(self, term: str) -> int | None:
        """The position of `term`, or None when it is not in the vocabulary."""
        k = bisect_right(self.blocks.heads, term) - 1
        if k < 0:
            return None
        block = self._block(k)
        j = bisect_left(block, term)
        return self.blocks.firsts[k] + j if j < len(block) and block[j] == term else None

    def prefixed(self, prefix: str, cap: int) -> list[str]:
        """The first `cap` terms starting with `prefix`, in order."""
        return terms_with_prefix(self.blocks.heads, self._block, prefix, cap)

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


@dataclass(frozen=True)
class Snapshot:
    """The index as of a merge. Slot i is note `paths[i]` (None: dead, not written). Term t's postings are
    `offsets[t]:offsets[t + 1]` of `slots` and `tf_codes`; a posting's weighted frequency is
    `tf_values[tf_codes[i]]`."""

    paths: list[str | None]
    mtimes: np.ndarray
    sizes: np.ndarray
    lengths: np.ndarray
    terms: Sequence[str]  # sorted; a `Vocabulary` when loaded
    offsets: np.ndarray
    slots: np.ndarray
    tf_codes: np.ndarray
    tf_values: np.ndarray


def load_signature(db: Connection) -> str | None:
    row = plain_connection(db).execute("SELECT value FROM index_meta WHERE key = ?", [SIGNATURE_KEY]).fetchone()
    return row[0] if row else None


def load_docs(db: Connection) -> list[CachedDoc]:
    """Every row; a corrupt `terms` value comes back as an empty dict (the caller re-reads that note)."""
    docs: list[CachedDoc] = []
    cursor = plain_connection(db).execute("SELECT path, kind, mtime_ns, size, skip_reason, body_len, heading_len, path_len, terms"
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


# The snapshot row's columns, in the order its CRC covers them.
_SNAPSHOT_COLUMNS = ("paths", "mtimes", "sizes", "lengths", "tf_values", "heads", "firsts", "starts")
_BLOCK_TERM_BYTES = 16384
_BLOCK_POSTINGS = 1 << 16
# postings are compressed for size at zlib's fastest level: larger levels gain little on these arrays
_POSTINGS_LEVEL = 1
# a posting's frequency is stored as a uint16 position in `tf_values` up to this many values, else as uint32
_NARROW_VALUES = 1 << 16


def _crc(parts: Iterable[bytes]) -> int:
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return crc


class SnapshotHead(NamedTuple):
    """The snapshot row, checked: its notes' arrays as bytes (their paths as stored: `paths`), and where its
    blocks are."""

    stored_paths: bytes
    notes: int
    mtimes: bytes
    sizes: bytes
    lengths: bytes
    tf_values: bytes
    blocks: VocabularyBlocks  # `starts` empty: the byte places are known once the blocks are read
    posting_starts: list[int]

    @property
    def code_width(self) -> int:
        return 2 if len(self.tf_values) // 8 <= _NARROW_VALUES else 4

    def paths(self) -> list[str | None]:
        """The notes' paths, decoded.

        Raises:
            ValueError: there are not as many as the other parts say.
            UnicodeDecodeError: they are not UTF-8.
        """
        paths = _decode_paths(self.stored_paths)
        if len(paths) != self.notes:
            raise ValueError("snapshot: its parts do not fit together")
        return paths


def _decode_paths(raw: bytes) -> list[str | None]:
    """The snapshot's paths (joined by NUL as stored); a dead slot, stored empty, is None.

    Raises:
        UnicodeDecodeError: the stored paths are not UTF-8.
    """
    paths: list[str | None] = raw.decode("utf-8").split("\0") if raw else []  # type: ignore[assignment]
    if "" in paths:  # dead slots (a merge leaves none, so this is rare)
        paths = [path or None for path in paths]
    return paths


def read_head(conn: sqlite3.Connection) -> SnapshotHead | None:
    """The snapshot row, or None when there is none.

    Raises:
        ValueError: its CRC or its parts do not fit together.
    """
    row = conn.execute(f"SELECT crc, {', '.join(_SNAPSHOT_COLUMNS)} FROM index_snapshot WHERE id = 1").fetchone()
    if row is None:
        return None
    crc, *columns = row
    if _crc(columns) != crc:
        raise ValueError("snapshot: its CRC does not match")
    paths_raw, mtimes, sizes, lengths, tf_values, heads_raw, firsts_raw, starts_raw = columns
    firsts = memoryview(firsts_raw).cast("q").tolist()
    starts = memoryview(starts_raw).cast("q").tolist()
    heads = heads_raw.decode("utf-8").split("\n") if heads_raw else []
    count = len(mtimes) // 8
    if ((count == 0) != (not paths_raw) or len(mtimes) != 8 * count or len(sizes) != 8 * count
            or len(lengths) != 24 * count or len(tf_values) % 8
            or len(firsts) != len(heads) + 1 or len(starts) != len(heads) + 1 or firsts[0] != 0 or starts[0] != 0
            or any(b <= a for a, b in pairwise(firsts)) or any(b < a for a, b in pairwise(starts))):
        raise ValueError("snapshot: its parts do not fit together")
    return SnapshotHead(paths_raw, count, mtimes, sizes, lengths, tf_values,
                 VocabularyBlocks(firsts[-1], [], firsts[:-1], heads), starts)


class SnapshotBlock(NamedTuple):
    """One row of `index_blocks`, decoded: its terms, and each term's postings as `offsets[j]:offsets[j + 1]`
    of `deltas` (slot differences, the first to 0) and `codes`."""

    terms: bytes
    offsets: list[int]
    deltas: memoryview
    codes: memoryview


def decode_block(head: SnapshotHead, k: int, terms_raw: bytes, postings_raw: bytes) -> SnapshotBlock:
    """Block `k` of the snapshot.

    Raises:
        ValueError: a part does not inflate (zlib's check) or does not fit the snapshot row.
    """
    try:
        terms, postings = zlib.decompress(terms_raw), zlib.decompress(postings_raw)
    except zlib.error as exc:
        raise ValueError(f"snapshot: block {k} is damaged ({exc})") from None
    firsts, starts = head.blocks.firsts, head.posting_starts
    term_count = (firsts[k + 1] if k + 1 < len(firsts) else head.blocks.term_count) - firsts[k]
    entries = starts[k + 1] - starts[k]
    width = head.code_width
    if len(postings) != 4 * term_count + (4 + width) * entries or terms.count(b"\n") + 1 != term_count:
        raise ValueError(f"snapshot: block {k} does not fit the snapshot")
    view = memoryview(postings)
    counts = view[:4 * term_count].cast("I")
    offsets = [0, *accumulate(counts)]
    if offsets[-1] != entries:
        raise ValueError(f"snapshot: block {k} does not fit the snapshot")
    deltas = view[4 * term_count:4 * (term_count + entries)].cast("i")
    codes = view[4 * (term_count + entries):].cast("H" if width == 2 else "I")
    return SnapshotBlock(terms, offsets, deltas, codes)


def _row(doc: CachedDoc) -> tuple[object, ...]:
    terms = json.dumps(doc.terms, ensure_ascii=False, separators=(",", ":")) if doc.terms is not None else None
    return (doc.path, doc.kind, doc.mtime_ns, doc.size, doc.skip_reason, *doc.lengths, terms)


_UPSERT = ("INSERT OR REPLACE INTO index_docs (path, kind, mtime_ns, size, skip_reason, body_len, heading_len,"
           " path_len, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def clear(db: Connection, signature: str) -> None:
    """Drop the whole cache and record the signature the next build will have."""
    db = plain_connection(db)
    with transaction(db):
        db.execute("DELETE FROM index_docs")
        db.execute("DELETE FROM index_snapshot")
        db.execute("DELETE FROM index_blocks")
        db.execute("DELETE FROM index_facts")
        db.execute("DELETE FROM index_meta WHERE key = ?", [LANGUAGES_KEY])
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])


_UPSERT_FACTS = "INSERT OR REPLACE INTO index_facts (key, lang, pages) VALUES (?, ?, ?)"


def path_key(path: str) -> int:
    """The key of a note's facts: a 64-bit hash of its path (xxh3), as SQLite's signed integer."""
    return path_keys([path])[0]


def path_keys(paths: Iterable[str]) -> list[int]:
    """The `path_key` of each of `paths`."""
    from xxhash import xxh3_64_intdigest

    return [key - (1 << 64) if (key := xxh3_64_intdigest(path.encode("utf-8", "surrogatepass"))) >= 1 << 63 else key
            for path in paths]


def _write_facts(db: sqlite3.Connection, facts: Mapping[int, NoteFacts | None], languages: Mapping[str, int]) -> None:
    """Add or replace the facts of notes by their `path_key` (None: forget the note's), and record the counts of
    languages."""
    db.executemany("DELETE FROM index_facts WHERE key = ?", [(key,) for key, fact in facts.items() if fact is None])
    db.executemany(_UPSERT_FACTS, [(key, fact.lang, "\n".join(fact.pages))
                                   for key, fact in facts.items() if fact is not None])
    db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)",
               [LANGUAGES_KEY, json.dumps(dict(sorted(languages.items())), ensure_ascii=False)])


def write_changes(db: Connection, rows: Iterable[CachedDoc], facts: Mapping[int, NoteFacts | None] | None = None,
                  languages: Mapping[str, int] | None = None) -> None:
    """Add or replace rows (indexed, skipped or deleted notes) and the notes' facts that changed, by `path_key`
    (None: a note no longer indexed), with the languages' counts, in one transaction."""
    db = plain_connection(db)
    with transaction(db):
        db.executemany(_UPSERT, [_row(d) for d in rows])
        if facts is not None:
            _write_facts(db, facts, languages or {})


def load_facts(db: Connection) -> dict[int, NoteFacts]:
    """The facts of every indexed note, by `path_key`."""
    rows = plain_connection(db).execute("SELECT key, lang, pages FROM index_facts").fetchall()
    return {key: NoteFacts(lang, tuple(pages.split("\n")) if pages else ()) for key, lang, pages in rows}


def facts_of(db: Connection, paths: Iterable[str]) -> dict[str, NoteFacts]:
    """The facts of those of `paths` that are indexed."""
    conn = plain_connection(db)
    paths = list(paths)
    keys = dict(zip(path_keys(paths), paths))
    wanted = list(keys)
    found: dict[str, NoteFacts] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        for key, lang, pages in conn.execute(
                f"SELECT key, lang, pages FROM index_facts WHERE key IN ({', '.join('?' * len(part))})", part):
            found[keys[key]] = NoteFacts(lang, tuple(pages.split("\n")) if pages else ())
    return found


def load_languages(db: Connection) -> dict[str, int]:
    """How many indexed notes each language has (empty when the cache does not say)."""
    row = plain_connection(db).execute("SELECT value FROM index_meta WHERE key = ?", [LANGUAGES_KEY]).fetchone()
    try:
        counts = json.loads(row[0]) if row else {}
    except ValueError:
        return {}
    return {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}


def _block_cuts(term_starts: np.ndarray, offsets: np.ndarray) -> list[int]:
    """Where the blocks begin (term numbers, 0 first, the term count last): a new block at each multiple of
    `_BLOCK_TERM_BYTES` of the terms' bytes and of `_BLOCK_POSTINGS` postings, so a block holds at most that
    much and one term more."""
    import numpy as np

    count = len(term_starts)
    cuts = np.concatenate([
        np.searchsorted(term_starts, np.arange(_BLOCK_TERM_BYTES, int(term_starts[-1]) + 1, _BLOCK_TERM_BYTES)),
        np.searchsorted(offsets[:-1], np.arange(_BLOCK_POSTINGS, int(offsets[-1]), _BLOCK_POSTINGS)),
    ]) if count else np.zeros(0, dtype=np.int64)
    return [0, *np.unique(cuts[(cuts > 0) & (cuts < count)]).tolist(), count] if count else [0]


def write_snapshot(db: Connection, snapshot: Snapshot, rows: Iterable[CachedDoc], signature: str,
                   facts: Mapping[int, NoteFacts] | None = None, languages: Mapping[str, int] | None = None) -> None:
    """Replace the snapshot, and every row with `rows` and every note's facts with `facts`, in one transaction."""
    import numpy as np

    terms = snapshot.terms
    vocab = terms.data if isinstance(terms, Vocabulary) else "\n".join(terms).encode("utf-8")
    term_starts = np.zeros(len(terms), dtype=np.int64)
    if len(terms):
        term_starts[1:] = np.flatnonzero(np.frombuffer(vocab, dtype=np.uint8) == 0x0A) + 1
    cuts = _block_cuts(term_starts, snapshot.offsets)
    values = np.ascontiguousarray(snapshot.tf_values, dtype=np.float64)
    codes = np.ascontiguousarray(snapshot.tf_codes, dtype=np.uint16 if len(values) <= _NARROW_VALUES else np.uint32)
    slots = np.ascontiguousarray(snapshot.slots, dtype=np.int32)
    offsets = snapshot.offsets
    byte_ends = [*term_starts[cuts[1:-1]].tolist(), len(vocab) + 1]

    def blocks() -> Iterator[tuple[int, bytes, bytes]]:
        for k, (first, end) in enumerate(pairwise(cuts)):
            start_entry, end_entry = int(offsets[first]), int(offsets[end])
            counts = np.diff(offsets[first:end + 1]).astype(np.uint32)
            block_slots = slots[start_entry:end_entry]
            deltas = np.diff(block_slots, prepend=np.int32(0)) if len(block_slots) else block_slots
            postings = counts.tobytes() + deltas.astype(np.int32).tobytes() + codes[start_entry:end_entry].tobytes()
            words = vocab[int(term_starts[first]):byte_ends[k] - 1]
            yield k, zlib.compress(words), zlib.compress(postings, _POSTINGS_LEVEL)

    heads = "\n".join(terms[first] for first in cuts[:-1]).encode("utf-8")
    columns = ["\0".join(p or "" for p in snapshot.paths).encode("utf-8"),
               np.ascontiguousarray(snapshot.mtimes, dtype=np.int64).tobytes(),
               np.ascontiguousarray(snapshot.sizes, dtype=np.int64).tobytes(),
               np.ascontiguousarray(snapshot.lengths, dtype=np.int64).tobytes(), values.tobytes(), heads,
               np.array(cuts, dtype=np.int64).tobytes(), np.asarray(offsets, dtype=np.int64)[cuts].tobytes()]
    db = plain_connection(db)
    with transaction(db):
        db.execute("DELETE FROM index_docs")
        db.executemany(_UPSERT, [_row(d) for d in rows])
        db.execute("DELETE FROM index_blocks")
        db.executemany("INSERT INTO index_blocks (block, terms, postings) VALUES (?, ?, ?)", blocks())
        db.execute(f"INSERT OR REPLACE INTO index_snapshot (id, crc, {', '.join(_SNAPSHOT_COLUMNS)})"
                   f" VALUES (1, ?, {', '.join('?' * len(_SNAPSHOT_COLUMNS))})", [_crc(columns), *columns])
        if facts is not None:
            db.execute("DELETE FROM index_facts")
            _write_facts(db, facts, languages or {})
        db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", [SIGNATURE_KEY, signature])
