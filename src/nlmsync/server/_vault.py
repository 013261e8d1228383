"""The vault side of `nlmsync serve`: search, read and chunk notes, confined to the vault.

`VaultTools` is plain synchronous code (the MCP server runs each call on a worker thread, so
searches run concurrently; `NoteIndex` is thread-safe). Every path a client gives goes through
`open_note`: it must stay inside the vault (`resolve_in_vault`: no `..`, no absolute path, no
symlink leading out), be a `.md` note or an attachment the index holds (`attachments` setting) outside the
folders nlmsync never reads, and not be excluded
(config globs or front matter `nlmsync: false`) — both for the path given and for the note a symlink
inside the vault leads to, and regardless of letter case — otherwise a `PathOutsideVaultError` naming
the path, never the file's contents. An attachment is read as the text the index holds of it, each page (slide,
section) under a line naming it (`[page 7]`), so a client can cite the page.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

from nlmsync.config import Settings
from nlmsync.errors import InputError, NlmsyncError, PathOutsideVaultError
from nlmsync.reading import (
    ChunkPlan,
    NoteReading,
    chunk_id,
    extract_snippet,
    format_timestamp,
    parse_chunk_id,
    plan_chunks,
    rank_segments,
    read_chunks,
    read_note,
)
from nlmsync.search import NoteIndex, matched_words
from nlmsync.server._models import ChunkMatch, NoteMatch, SearchResult
from nlmsync.store.document_texts import read_attachment
from nlmsync.vault import (
    IGNORED_DIRS,
    NOTE_SUFFIX,
    is_attachment_path,
    is_excluded,
    is_note_path,
    matches_exclude,
    normalize_rel_path,
    read_note_file,
    resolve_in_vault,
)

_IGNORED = "/".join(sorted(IGNORED_DIRS))
PLAN_CACHE_SIZE = 128
PLAN_CACHE_CHARS = 32_000_000  # bound on the note text the cache keeps, whatever the note sizes
SCORE_DIGITS = 3  # a score to three decimals tells a client all it can use


class VaultTools:
    """Search and reading over one vault; safe to call from many threads at once."""

    def __init__(self, settings: Settings, index: NoteIndex) -> None:
        self.settings = settings
        self.root = Path(settings.vault)
        self._real_root = os.path.realpath(self.root)
        self.index = index
        self._plans: OrderedDict[tuple[str, int, int], tuple[str, ChunkPlan]] = OrderedDict()
        self._plans_lock = threading.Lock()
        self._cached_chars = 0

    # --- confinement ---

    def open_note(self, path: str) -> tuple[str, str]:
        """`(vault path, text)` of a note a client may read.

        Raises:
            PathOutsideVaultError: the path leaves the vault, is not a note, or is excluded.
            InputError: the note is missing, binary or not UTF-8.
        """
        rel, fs_path = self._confine(path)
        return rel, self._read(rel, fs_path)

    def _confine(self, path: str) -> tuple[str, Path]:
        fs_path = resolve_in_vault(self.root, path)
        rel = normalize_rel_path(path.replace("\\", "/"))
        target = normalize_rel_path(os.path.relpath(os.path.realpath(fs_path), self._real_root))
        for name in dict.fromkeys((rel, target)):
            # a link inside the vault may lead into a folder never served or to an excluded note
            leads = "" if name == rel else f" ({rel} links to it)"
            if not self._served(name):
                raise PathOutsideVaultError(f"{name}: not a note of the vault (only {NOTE_SUFFIX} files and the "
                                            f"attachments the attachments setting names, outside {_IGNORED}, are "
                                            f"served){leads}")
            if self._excluded(name):
                raise PathOutsideVaultError(f"{name}: excluded from nlmsync by the exclude setting{leads}")
        return rel, fs_path

    def _served(self, name: str) -> bool:
        folded = name.casefold()
        if is_note_path(name):
            return is_note_path(folded)
        return is_attachment_path(name, self.index.attachments) and is_attachment_path(folded, self.index.attachments)

    def _excluded(self, rel: str) -> bool:
        return matches_exclude(rel, self.settings.exclude)

    def _read(self, rel: str, fs_path: Path) -> str:
        if not is_note_path(rel):
            try:
                return read_attachment(self.index.db, fs_path, rel).marked_text
            except OSError as exc:
                raise InputError(f"{rel}: cannot be read ({exc.strerror})") from None
        text = read_note_file(rel, fs_path)
        if is_excluded(rel, text, []):
            raise PathOutsideVaultError(f"{rel}: excluded from nlmsync by its front matter (nlmsync: false)")
        return text

    def _planned(self, path: str) -> tuple[str, str, ChunkPlan]:
        """`open_note` plus the note's chunk plan, cached by (path, mtime, size)."""
        rel, fs_path = self._confine(path)
        try:
            stat = os.stat(fs_path)
        except OSError:
            return rel, *self._plan(rel, fs_path)
        key = (rel, stat.st_mtime_ns, stat.st_size)
        with self._plans_lock:
            cached = self._plans.get(key)
            if cached is not None:
                self._plans.move_to_end(key)
                return rel, cached[0], cached[1]
        text, plan = self._plan(rel, fs_path)
        with self._plans_lock:
            if key not in self._plans:
                self._plans[key] = (text, plan)
                self._cached_chars += len(text)
            while len(self._plans) > PLAN_CACHE_SIZE or self._cached_chars > PLAN_CACHE_CHARS:
                _, (dropped, _) = self._plans.popitem(last=False)
                self._cached_chars -= len(dropped)
        return rel, text, plan

    def _plan(self, rel: str, fs_path: Path) -> tuple[str, ChunkPlan]:
        text = self._read(rel, fs_path)
        return text, plan_chunks(text, self.settings)

    # --- tools ---

    def search_notes(self, query: str, limit: int = 10, chunks_per_note: int = 3) -> SearchResult:
        """Notes ranked for `query`, each with its best `chunks_per_note` chunks and snippets."""
        if not query.strip():
            raise InputError("query: must not be empty")
        settings = self.settings
        selection = self.index.selection(query, limit=limit)
        chosen = {h.path for h in selection.chosen}
        results: list[NoteMatch] = []
        for hit in selection.hits:
            if len(results) >= limit:
                break
            try:
                rel, text, plan = self._planned(hit.path)
            except NlmsyncError:
                continue  # vanished, excluded or unreadable since indexing: not served
            matches = [
                ChunkMatch(
                    chunk_id=chunk_id(rel, h.chunk_index), score=round(h.score, SCORE_DIGITS),
                    char_offset_start=h.segment.char_offset_start, char_offset_end=h.segment.char_offset_end,
                    snippet=extract_snippet(h.segment.text, query, settings.snippet_length),
                    start_time=_time(h.segment.start_seconds), end_time=_time(h.segment.end_seconds),
                )
                for h in rank_segments(plan, query)[:chunks_per_note]
            ]
            if not matches and plan.chunks:
                # matched by its path only: its first chunk, so every result has a chunk to fetch
                first = plan.chunks[0]
                snippet = extract_snippet(text, query, settings.snippet_length)
                matches = [ChunkMatch(chunk_id=chunk_id(rel, 0), score=0.0,
                                      char_offset_start=first.char_offset_start, char_offset_end=first.char_offset_end,
                                      snippet=snippet, start_time=_time(first.start_seconds),
                                      end_time=_time(first.end_seconds))]
            results.append(NoteMatch(path=rel, score=round(hit.score, SCORE_DIGITS),
                                     matched_terms=matched_words(query, hit.matched_terms),
                                     selected=hit.path in chosen, total_chunks=len(plan.chunks), chunks=matches))
        message = ("no note matches the query" if not results else
                   "nothing in the vault matches the query well: no note is selected" if selection.weak else None)
        return SearchResult(query=query, results=results, weak_match=selection.weak, message=message)

    def read_note(self, path: str, *, chunk: int | None = None, chunks: str | None = None,
                  start_time: str | float | None = None, end_time: str | float | None = None, query: str | None = None,
                  full: bool = False, limit: int = 10) -> NoteReading:
        rel, text, plan = self._planned(path)
        return read_note(rel, text, self.settings, chunk=chunk, chunks=chunks, start_time=start_time,
                         end_time=end_time, query=query, full=full, limit=limit, plan=plan)

    def get_chunk(self, chunk_ref: str, surrounding: int = 0) -> NoteReading:
        try:
            path, index = parse_chunk_id(chunk_ref)
        except ValueError as exc:
            raise InputError(f"chunk_id: {exc}") from None
        rel, text, plan = self._planned(path)
        return read_chunks(rel, text, self.settings, range(index, index + 1), surrounding=surrounding,
                           field="chunk_id", plan=plan)


def _time(seconds: float | None) -> str | None:
    return format_timestamp(seconds) if seconds is not None else None
