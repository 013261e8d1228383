"""The attachments' texts in the state file, by the hash of the bytes they were read from, and what each attachment
of the vault hashed to when last read, by its file's modification time and size.

`DocumentTexts(conn)` is the `documents.TextCache` the index, `serve` and sync read attachments through: a file whose
bytes were read before is not read again, wherever it moved. A text is kept while some attachment of the vault was
last found with its hash (`attachment_files`); `prune` drops the others. Both tables are caches: a lost row costs a
read. Like the index's own tables, these work on a plain `sqlite3` connection (a search imports no sqlite-utils).
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from nlmsync.store.index_codec import Connection, plain_connection
from nlmsync.store.transaction import transaction

if TYPE_CHECKING:
    import os

    from sqlite_utils import Database

    from nlmsync.documents import DocumentText


def create_tables(db: Database) -> None:
    """The migration step that made the two tables."""
    db.execute("CREATE TABLE document_texts (content_hash TEXT PRIMARY KEY, unit TEXT NOT NULL, notice TEXT, "
               "pages BLOB NOT NULL, read_at TEXT NOT NULL)")
    db.execute("CREATE TABLE attachment_files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, "
               "size INTEGER NOT NULL, content_hash TEXT NOT NULL)")


class DocumentTexts:
    """The texts read from attachments' bytes (`get`, `put`: a `documents.TextCache`) and the attachments'
    recorded hashes (`hash_of`, `record`, `forget`), in the state file `db`."""

    def __init__(self, db: Connection) -> None:
        self.conn = plain_connection(db)

    def get(self, content_hash: str) -> DocumentText | None:
        from nlmsync.documents import DocumentText

        row = self.conn.execute("SELECT unit, notice, pages FROM document_texts WHERE content_hash = ?",
                                [content_hash]).fetchone()
        if row is None:
            return None
        unit, notice, pages = row
        try:
            parts = json.loads(zlib.decompress(pages))
        except (zlib.error, ValueError):
            return None  # a damaged row is read again
        return DocumentText(content_hash, unit, tuple(parts), notice)

    def put(self, document: DocumentText) -> None:
        pages = zlib.compress(json.dumps(list(document.pages)).encode("utf-8"), 6)
        with transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO document_texts (content_hash, unit, notice, pages, read_at) "
                              "VALUES (?, ?, ?, ?, ?)",
                              [document.content_hash, document.unit, document.notice, pages,
                               time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())])

    def hash_of(self, path: str, mtime_ns: int, size: int) -> str | None:
        """The hash recorded for the attachment at `path` while its file has this mtime and size, else None."""
        row = self.conn.execute("SELECT content_hash FROM attachment_files WHERE path = ? AND mtime_ns = ? "
                                "AND size = ?", [path, mtime_ns, size]).fetchone()
        return None if row is None else str(row[0])

    def record(self, path: str, mtime_ns: int, size: int, content_hash: str) -> None:
        """Record what the attachment at `path` hashed to, read at this mtime and size."""
        with transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO attachment_files (path, mtime_ns, size, content_hash) "
                              "VALUES (?, ?, ?, ?)", [path, mtime_ns, size, content_hash])

    def forget(self, paths: Iterable[str]) -> None:
        """Forget the attachments at `paths` (they left the vault, or are no attachments any more)."""
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM attachment_files WHERE path = ?", [(p,) for p in paths])

    def prune(self) -> int:
        """Drop the texts no recorded attachment has; how many."""
        with transaction(self.conn):
            return self.conn.execute("DELETE FROM document_texts WHERE content_hash NOT IN "
                                     "(SELECT content_hash FROM attachment_files)").rowcount


def read_attachment(db: Connection | None, fs_path: str | os.PathLike[str], vault_path: str) -> DocumentText:
    """The text of one attachment through the state file `db`'s texts (None: read without them).

    Raises:
        OSError: the file cannot be opened or read.
    """
    from nlmsync.documents import DocumentReader

    with DocumentReader(DocumentTexts(db) if db is not None else None) as reader:
        return reader.read(fs_path, vault_path)
