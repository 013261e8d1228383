"""The attachments' texts in the state file, by the hash of the bytes they were read from, and what each attachment
of the vault hashed to when last read, by its file's modification time and size.

`DocumentTexts(conn)` is the `documents.TextCache` the index, `serve` and sync read attachments through: a file whose
bytes were read before is not read again, wherever it moved. It also keeps the notes' links to attachments with the
words around them (`attachment_links`, `text.attachment_links`'s), which a file with no text is found by. A text is kept while some attachment of the vault was
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
               "size INTEGER NOT NULL, content_hash TEXT NOT NULL, has_text INTEGER NOT NULL)")
    db.execute("CREATE TABLE attachment_links (note TEXT NOT NULL, target TEXT NOT NULL, words TEXT NOT NULL, "
               "PRIMARY KEY (note, target))")


class DocumentTexts:
    """The texts read from attachments' bytes (`get`, `put`: a `documents.TextCache`) and the attachments'
    recorded hashes (`hash_of`, `record`, `forget`), in the state file `db`. Without `keep` (a dry run), what is
    read is not kept: `put` and `record` write nothing."""

    def __init__(self, db: Connection, *, keep: bool = True) -> None:
        self.conn = plain_connection(db)
        self.keep = keep

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
        if not self.keep:
            return
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

    def recorded(self) -> dict[str, tuple[int, int, str]]:
        """Every attachment's record at once (one query, for a run over many): path -> (mtime, size, hash)."""
        return {path: (mtime_ns, size, content_hash) for path, mtime_ns, size, content_hash in
                self.conn.execute("SELECT path, mtime_ns, size, content_hash FROM attachment_files")}

    def record(self, path: str, mtime_ns: int, size: int, content_hash: str, has_text: bool) -> None:
        """Record what the attachment at `path` hashed to, read at this mtime and size, and whether it has text."""
        if not self.keep:
            return
        with transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO attachment_files (path, mtime_ns, size, content_hash, has_text) "
                              "VALUES (?, ?, ?, ?, ?)", [path, mtime_ns, size, content_hash, int(has_text)])

    def linking_notes(self) -> set[str]:
        """The notes that link to an attachment."""
        return {row[0] for row in self.conn.execute("SELECT DISTINCT note FROM attachment_links")}

    def set_links(self, note: str, links: dict[str, str]) -> set[str]:
        """Record the attachments `note` links to now (target → the words around the links); the targets whose
        words changed (added, changed or gone)."""
        old = dict(self.conn.execute("SELECT target, words FROM attachment_links WHERE note = ?", [note]).fetchall())
        if old == links:
            return set()
        with transaction(self.conn):
            self.conn.execute("DELETE FROM attachment_links WHERE note = ?", [note])
            self.conn.executemany("INSERT INTO attachment_links (note, target, words) VALUES (?, ?, ?)",
                                  [(note, target, words) for target, words in links.items()])
        return {t for t in old.keys() | links.keys() if old.get(t) != links.get(t)}

    def link_words(self, path: str) -> str:
        """The words around the links that reach the attachment at `path` (`text.link_matches`), note by note."""
        rows = self.conn.execute("SELECT words FROM attachment_links WHERE target = ?1 OR "
                                 "substr(?1, -length(target) - 1) = '/' || target ORDER BY note",
                                 [path.casefold()]).fetchall()
        return "\n".join(row[0] for row in rows)

    def textless(self) -> list[str]:
        """The recorded attachments that have no text."""
        return [row[0] for row in self.conn.execute("SELECT path FROM attachment_files WHERE has_text = 0")]

    def forget(self, paths: Iterable[str]) -> None:
        """Forget the attachments at `paths` (they left the vault, or are no attachments any more)."""
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM attachment_files WHERE path = ?", [(p,) for p in paths])

    def forget_links(self, notes: Iterable[str]) -> set[str]:
        """Forget the links of `notes` (they left the index); the targets they linked to."""
        gone = [(note,) for note in notes]
        with transaction(self.conn):
            targets = {row[0] for note in gone
                       for row in self.conn.execute("SELECT target FROM attachment_links WHERE note = ?", note)}
            self.conn.executemany("DELETE FROM attachment_links WHERE note = ?", gone)
        return targets

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
