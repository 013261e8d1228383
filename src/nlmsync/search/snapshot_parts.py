"""The cold reader: the stored snapshot as a fresh process's first query reads it (`search.cold`), its notes at
once and the block of each query term on demand, without numpy and without its postings whole. The format is
the codec's (`store.index_codec`).
"""

from __future__ import annotations

import functools
import sqlite3
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Container
from itertools import accumulate, compress

from nlmsync.store.index_codec import (
    Connection,
    SnapshotBlock,
    SnapshotHead,
    decode_block,
    plain_connection,
    read_head,
    terms_with_prefix,
)

__all__ = ["SnapshotParts"]


class _BlockTerms:
    """The vocabulary of a stored snapshot, its blocks read when first looked at (`SnapshotParts.terms`)."""

    def __init__(self, parts: SnapshotParts) -> None:
        self._parts = parts

    def __len__(self) -> int:
        return self._parts.head.blocks.term_count if self._parts.head else 0

    def find(self, term: str) -> int | None:
        """The number of `term`, or None when it is not in the vocabulary.

        Raises:
            ValueError: its block is damaged.
        """
        head = self._parts.head
        if head is None:
            return None
        k = bisect_right(head.blocks.heads, term) - 1
        if k < 0:
            return None
        words = self._parts.block(k)[1]
        j = bisect_left(words, term)
        return head.blocks.firsts[k] + j if j < len(words) and words[j] == term else None


    def prefixed(self, prefix: str, cap: int) -> list[str]:
        """The first `cap` terms starting with `prefix`, in order.

        Raises:
            ValueError: a block is damaged.
        """
        head = self._parts.head
        return terms_with_prefix(head.blocks.heads, lambda k: self._parts.block(k)[1], prefix, cap) if head else []


class SnapshotParts:
    """The stored snapshot as one query needs it, read without numpy and without its postings whole.

    A fresh process answering its first query (`search.cold`) reads the notes (paths, `mtime_ns`, size, field
    lengths) at once, and only the block of each query term (`index_blocks`). Use it inside a read transaction
    (the rows read beside it are then of the same moment). Anything that does not fit together raises
    `ValueError`: the caller then takes the whole-index path, which checks and rebuilds.
    """

    def __init__(self, conn: sqlite3.Connection, head: SnapshotHead | None) -> None:
        self._conn = conn
        self.head = head
        self.lengths = memoryview(head.lengths if head else b"").cast("q")  # three per note: body, heading, path
        self.terms = _BlockTerms(self)
        self._values = memoryview(head.tf_values if head else b"").cast("d")
        self._blocks: dict[int, tuple[SnapshotBlock, list[str]]] = {}

    @functools.cached_property
    def paths(self) -> list[str | None]:
        """The notes' paths by slot (a dead slot's is None).

        Raises:
            ValueError: there are not as many as the other parts say.
            UnicodeDecodeError: they are not UTF-8.
        """
        return self.head.paths() if self.head else []

    @functools.cached_property
    def mtimes(self) -> list[int]:
        return memoryview(self.head.mtimes).cast("q").tolist() if self.head else []

    @functools.cached_property
    def sizes(self) -> list[int]:
        return memoryview(self.head.sizes).cast("q").tolist() if self.head else []

    def holds_exactly(self, paths: list[str], mtimes: list[int], sizes: list[int]) -> bool:
        """Whether the snapshot's notes are these, in this order, with these `mtime_ns` and sizes (what a walk
        of the vault it was built from finds when nothing changed since): compared as the stored bytes, with
        nothing decoded. When they are, `paths` serves as the snapshot's."""
        head = self.head
        if head is None or head.notes != len(paths) or array("q", mtimes).tobytes() != head.mtimes \
                or array("q", sizes).tobytes() != head.sizes:
            return False
        try:
            if "\0".join(paths).encode("utf-8") != head.stored_paths:
                return False
        except UnicodeEncodeError:  # a name no snapshot can hold
            return False
        self.__dict__["paths"] = list(paths)  # `functools.cached_property` keeps its value there
        return True

    def holds_in_order(self, paths: list[str], mtimes: list[int], sizes: list[int],
                       standing_in: Container[str | None]) -> bool:
        """`holds_exactly`, but for the snapshot's notes whose path is in `standing_in` (the notes rows stand for:
        edited or deleted since the snapshot was saved), which are left out of it before it is compared."""
        stored = self.paths
        kept = [path not in standing_in for path in stored]
        return (list(compress(stored, kept)) == paths and list(compress(self.mtimes, kept)) == mtimes
                and list(compress(self.sizes, kept)) == sizes)

    def slots_of(self, paths: Container[str | None]) -> list[int]:
        """The slots of the snapshot's notes whose path is in `paths`."""
        return [slot for slot, path in enumerate(self.paths) if path in paths]

    @functools.cached_property
    def slot_of(self) -> dict[str, int]:
        """The slot of each live note, by path."""
        slot_of: dict[str | None, int] = dict(zip(self.paths, range(len(self.paths))))
        slot_of.pop(None, None)
        return slot_of  # type: ignore[return-value]

    @classmethod
    def read(cls, db: Connection) -> SnapshotParts:
        """The snapshot's notes (no note and no term when there is no snapshot: a cache of rows only).

        Raises:
            ValueError: its parts do not fit together (or its CRC is wrong).
            UnicodeDecodeError: its paths are not UTF-8.
        """
        conn = plain_connection(db)
        return cls(conn, read_head(conn))

    def block(self, k: int) -> tuple[SnapshotBlock, list[str]]:
        """Block `k`, decoded, and its terms.

        Raises:
            ValueError: it is missing or damaged.
        """
        found = self._blocks.get(k)
        if found is None:
            assert self.head is not None
            row = self._conn.execute("SELECT terms, postings FROM index_blocks WHERE block = ?", [k]).fetchone()
            if row is None:
                raise ValueError(f"snapshot: block {k} is missing")
            block = decode_block(self.head, k, *row)
            found = self._blocks[k] = (block, block.terms.decode("utf-8").split("\n"))
        return found

    def postings(self, term_id: int) -> tuple[list[int], list[float]]:
        """The slots and weighted term frequencies of term number `term_id`.

        Raises:
            ValueError: its block is damaged, or a slot or frequency is out of bounds.
        """
        assert self.head is not None
        k = bisect_right(self.head.blocks.firsts, term_id) - 1
        block = self.block(k)[0]
        j = term_id - self.head.blocks.firsts[k]
        start, end = block.offsets[j], block.offsets[j + 1]
        slots = list(accumulate(block.deltas[start:end], initial=sum(block.deltas[:start])))[1:]
        if end > start and (min(slots) < 0 or max(slots) >= len(self.paths)):
            raise ValueError("snapshot: slot out of range")
        try:
            tfs = [self._values[code] for code in block.codes[start:end]]
        except IndexError:
            raise ValueError("snapshot: a frequency out of range") from None
        return slots, tfs
