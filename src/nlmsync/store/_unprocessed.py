"""The files NotebookLM could not process, by notebook and the hash of their bytes: such a file is not uploaded
again (each try would add a source that fails, and be deleted) until its bytes change."""

from __future__ import annotations

from collections.abc import Collection

from nlmsync.store._base import StoreBase


class UnprocessedMixin(StoreBase):
    def unprocessed(self, notebook_id: str, hashes: Collection[str]) -> dict[str, str]:
        """Of `hashes`, those of files the notebook's server could not process, with the reason it gave."""
        if not hashes:
            return {}
        with self._reading():
            rows = self.db.execute("SELECT content_hash, reason FROM unprocessed_files WHERE notebook_id = ?",
                                   [notebook_id]).fetchall()
        wanted = set(hashes)
        return {h: reason for h, reason in rows if h in wanted}

    def record_unprocessed(self, notebook_id: str, content_hash: str, reason: str) -> None:
        """Remember that the server could not process the file of `content_hash` (one step of its own, or the
        caller's)."""
        with self.step():
            self.db.conn.execute("INSERT OR REPLACE INTO unprocessed_files (notebook_id, content_hash, reason) "
                                 "VALUES (?, ?, ?)", [notebook_id, content_hash, reason])
