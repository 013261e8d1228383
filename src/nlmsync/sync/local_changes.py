"""What changed in the vault since its notes were synced, as `status` shows it, each change with the command that
brings the notebook up to date. A note counts as changed by the rule `refresh` decides with. Changes nothing."""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nlmsync import vault as vault_files
from nlmsync.errors import InputError
from nlmsync.documents.model import DocumentText
from nlmsync.store import NoteHashes, SourceMapping
from nlmsync.sync.prepared import MAX_SOURCE_BYTES, MAX_SOURCE_WORDS, prepare_document, prepare_note, split_key
from nlmsync.text import admit_note
from nlmsync.vault import NoteChange

__all__ = ["LocalChange", "local_changes", "synced_hashes"]


@dataclass(frozen=True)
class LocalChange:
    """One synced note whose notebook source no longer matches the vault."""

    path: str
    change: NoteChange  # modified, renamed, deleted, excluded, or (in a packed notebook) added
    renamed_to: str | None = None

    @property
    def command(self) -> str:
        """The command that brings this note's source up to date."""
        if self.change is NoteChange.MODIFIED:
            return f"nlmsync refresh {shlex.quote(self.path)}"
        if self.change is NoteChange.RENAMED:
            return f"nlmsync refresh {shlex.quote(self.renamed_to or self.path)}"
        return "nlmsync refresh --all"


def _hashes(root: Path, path: str, exclude: list[str],
            limits: tuple[int, int] = (MAX_SOURCE_WORDS, MAX_SOURCE_BYTES)) -> tuple[str, ...] | None:
    """The part hashes of the note at `path`, split within `limits` (words, bytes); None when the admission rule
    refuses it (unreadable, empty, excluded)."""
    try:
        admission = admit_note(root, path, exclude)
    except InputError:
        return None
    if admission.refused is not None:
        return None
    return prepare_note(path, admission.text, *limits).hashes


def _recorded(root: Path, path: str, file_stat: os.stat_result, known: Mapping[str, NoteHashes],
              exclude: list[str], limits: tuple[int, int]) -> tuple[str, ...] | None:
    """The note's recorded part hashes when its file's stat and the split `limits` are still the record's (and no
    pattern excludes it now); None when the note must be read to be known."""
    record = known.get(path)
    if record is None or not record.holds_for(file_stat.st_mtime_ns, file_stat.st_size, split_key(*limits)):
        return None
    return None if vault_files.excluded_by_pattern(root, path, exclude) else record.hashes


def _file_hash(root: Path, path: str, file_stat: os.stat_result,
               files: Mapping[str, tuple[int, int, str]]) -> tuple[str, ...] | None:
    """The hash of an attachment's bytes: recorded while its file keeps the stat it was recorded with, else read;
    None when it cannot be read."""
    from nlmsync.documents import hash_file

    record = files.get(path)
    if record is not None and record[:2] == (file_stat.st_mtime_ns, file_stat.st_size):
        return (record[2],)
    try:
        return (hash_file(os.path.join(root, path))[0],)
    except OSError:
        return None


def _file_stat(root: Path, path: str) -> os.stat_result | None:
    """The stat of the note's file; None when there is no regular file at `path`."""
    try:
        found = os.stat(os.path.join(root, path))
    except (OSError, ValueError):
        return None
    return found if stat.S_ISREG(found.st_mode) else None


def synced_hashes(mappings: Iterable[SourceMapping], packed: Mapping[str, tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Each synced note's path -> the content hashes its sources were uploaded with, in part order: the notes
    alone (registry rows of one notebook) and the packed notes (`StateStore.pack_members`: one hash each)."""
    parts: dict[str, list[SourceMapping]] = {}
    for m in mappings:
        parts.setdefault(m.path, []).append(m)
    synced = {path: tuple(r.content_hash for r in sorted(rows, key=lambda r: r.part)) for path, rows in parts.items()}
    synced.update((path, (note_hash,)) for path, (_, note_hash) in packed.items())
    return synced


def local_changes(root: Path, synced: Mapping[str, tuple[str, ...]], exclude: list[str],
                  known: Mapping[str, NoteHashes] | None = None, *, packed: bool = False,
                  files: Mapping[str, tuple[int, int, str]] | None = None,
                  texts: Callable[[str], DocumentText | None] | None = None,
                  limits: tuple[int, int] = (MAX_SOURCE_WORDS, MAX_SOURCE_BYTES)) -> list[LocalChange]:
    """The synced notes (and attachments) that differ from the vault, in path order: `synced` maps each note's path
    to the hashes its sources were uploaded with (`synced_hashes`); `known` are the notes' `note_hashes` records
    (`StateStore.note_hashes`), `files` the attachments' recorded hashes by path (mtime, size, hash of the bytes:
    `DocumentTexts.recorded`), a file that kept them not read again; `texts` the texts read from attachments, by
    the hash of their bytes (`DocumentTexts.get`), by which a document packed as text is known. In a `packed` notebook, where every note of the vault belongs in a source, a
    note in none (written since the last mirror, or never uploaded) is listed too (`added`). `limits` are the words
    and bytes a source holds (the `source_max_words` and `source_max_bytes` settings), which a note's parts are
    split by."""
    changes: list[LocalChange] = []
    missing: dict[tuple[str, ...], str] = {}
    for path, registered in sorted(synced.items()):
        file_stat = _file_stat(root, path)
        if file_stat is None:
            missing[registered] = path
            continue
        if vault_files.attachment_kind(path) is not None:
            # a document packed as text is known by the hashes of the text its pack holds, while its file keeps
            # the stat they were recorded with; a file source by its bytes
            packed_text = _recorded(root, path, file_stat, known or {}, exclude, limits)
            current = registered if packed_text == registered else _file_hash(root, path, file_stat, files or {})
            if current is not None and current != registered and texts is not None:
                document = texts(current[0])  # the text read from these bytes, as a pack would hold it
                if document is not None and prepare_document(path, document, *limits).hashes == registered:
                    current = registered
        else:
            current = (_recorded(root, path, file_stat, known or {}, exclude, limits)
                       or _hashes(root, path, exclude, limits))
        if current is None:
            changes.append(LocalChange(path, NoteChange.EXCLUDED))
        elif current != registered:
            changes.append(LocalChange(path, NoteChange.MODIFIED))
    if missing or packed:
        for note in vault_files.scan_vault(root).notes:
            if note.path in synced:
                continue
            hashes = _hashes(root, note.path, exclude, limits)
            found = missing.pop(hashes or (), None)
            if found is not None:
                changes.append(LocalChange(found, NoteChange.RENAMED, renamed_to=note.path))
            elif packed and hashes is not None:
                changes.append(LocalChange(note.path, NoteChange.ADDED))
            if not missing and not packed:
                break
        changes.extend(LocalChange(path, NoteChange.DELETED) for path in missing.values())
    return sorted(changes, key=lambda c: c.path)
