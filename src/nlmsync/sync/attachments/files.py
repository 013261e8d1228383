"""An attachment as a run prepares it (`PreparedFile`): its bytes hashed (or known by the hash recorded while the
file keeps its modification time and size), its title, and its text read only when it is to be uploaded or proven;
a file that cannot be a source (empty, over the limits, encrypted, damaged) is an outcome that says why."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from nlmsync import vault as vault_files
from nlmsync.documents import NO_TEXT_LAYER, DocumentReader, DocumentText
from nlmsync.errors import InputError
from nlmsync.store.document_texts import DocumentTexts
from nlmsync.sync.branches import Branch
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import source_title

EMPTY = "empty"
FEW_FILES = 50
"""A run over more attachments than this reads every recorded hash at once, not one query a file."""


@dataclass
class PreparedFile:
    """An attachment of the run: its vault path, where it is on disk, the xxh3-128 of its bytes, and its text once
    read (`document`, None until then)."""

    path: str
    fs_path: str
    content_hash: str
    document: DocumentText | None = None

    @property
    def title(self) -> str:
        """The source's title: the vault path and the short hash of the bytes (a file's text is not what the server
        is given, its bytes are)."""
        return source_title(self.path, self.content_hash)

    @property
    def suffix(self) -> str:
        return vault_files.suffix_of(self.path)


def uploadable(document: DocumentText) -> str | None:
    """Why a file whose reading gave `document` cannot be a source (None: it can). A PDF with no text layer can
    (NotebookLM reads scanned pages itself); one nlmsync could not open, or over a limit, cannot."""
    if document.notice is None or document.notice == NO_TEXT_LAYER:
        return None
    return document.notice


class FileReader:
    """The run's attachments read through the state file's texts (`store.document_texts`): a file that keeps the
    modification time and size its hash was recorded with is not even hashed again. A dry run looks there and
    writes nothing."""

    def __init__(self, deps: SyncDeps, *, dry_run: bool = False) -> None:
        self.deps = deps
        self.texts = DocumentTexts(deps.store.db.conn, keep=not dry_run)
        self.reader = DocumentReader(self.texts)
        """Reads through the state file's texts, and records what it reads there (not in a dry run)."""

    def __enter__(self) -> FileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reading process, if one was started."""
        self.reader.close()

    def load(self, paths: Sequence[str], found: Collection[str] = (),
             stats: Mapping[str, tuple[int, int]] | None = None) -> list[PreparedFile | NoteOutcome]:
        """Each attachment of `paths` prepared (hashed, not read when its hash is known), or an outcome: excluded
        by a pattern or empty; a file that cannot be read is failed when the user named it, else excluded with why
        (as a note is). A path of `stats` (the modification time and size a walk of the vault just found its file
        with, inside the vault) is not looked up again."""
        deps = self.deps
        patterns = deps.settings.exclude
        recorded = self.texts.recorded() if len(paths) > FEW_FILES else None
        items: list[PreparedFile | NoteOutcome] = []
        unread: list[int] = []
        for path in paths:
            if vault_files.excluded_by_pattern(deps.vault_root, path, patterns):
                items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=vault_files.EXCLUDED_BY_PATTERN))
                continue
            walked = stats.get(path) if stats is not None and path in found else None
            try:
                if walked is not None:
                    fs_path, (mtime_ns, size) = os.path.join(deps.vault_root, path), walked
                else:
                    fs_path = os.fspath(vault_files.resolve_in_vault(deps.vault_root, path))
                    stat = os.stat(fs_path)
                    mtime_ns, size = stat.st_mtime_ns, stat.st_size
            except (InputError, OSError) as exc:
                items.append(NoteOutcome(path=path, branch=Branch.FAILED, error=f"{path}: cannot be read ({exc})"))
                continue
            if size == 0:
                items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=EMPTY))
                continue
            if recorded is None:
                known = self.texts.hash_of(path, mtime_ns, size)
            else:
                record = recorded.get(path)
                known = record[2] if record is not None and record[:2] == (mtime_ns, size) else None
            if known is None:
                unread.append(len(items))
            items.append(PreparedFile(path, fs_path, known or ""))
        return self._read_all(items, unread, found)

    def _read_all(self, items: list[PreparedFile | NoteOutcome], unread: Sequence[int],
                  found: Collection[str]) -> list[PreparedFile | NoteOutcome]:
        """Read the files at `unread` (positions in `items`, each a `PreparedFile` whose hash is not known),
        announced first so that the reading process reads the next ones while the last is taken in; a file that
        cannot be a source becomes its outcome in place."""
        self.expect(file for i in unread if isinstance(file := items[i], PreparedFile))
        for i in unread:
            file = items[i]
            if isinstance(file, PreparedFile) and (refused := self.read(file)) is not None:
                items[i] = self.refused(file, refused, named=file.path not in found)
        return items

    def expect(self, files: Iterable[PreparedFile]) -> None:
        """Announce the files `read` will be asked for next, in that order (those not read yet): the reading
        process reads the next ones while the caller takes in the last."""
        self.reader.expect((file.fs_path, file.path) for file in files if file.document is None)

    def read(self, file: PreparedFile) -> str | None:
        """Read the file's text (from the state file when its bytes were read before); why it cannot be a source,
        or None."""
        if file.document is None:
            try:
                file.document = self.reader.read(file.fs_path, file.path)
            except OSError as exc:
                return f"cannot be read ({exc})"
            if file.document.content_hash:
                file.content_hash = file.document.content_hash
        return uploadable(file.document)

    @staticmethod
    def refused(file: PreparedFile, why: str, *, named: bool) -> NoteOutcome:
        """The outcome of a file that cannot be a source: failed when the user named it, else excluded with why."""
        if named:
            return NoteOutcome(path=file.path, branch=Branch.FAILED, error=f"{file.path}: {why}")
        return NoteOutcome(path=file.path, branch=Branch.EXCLUDED, reason=why)
