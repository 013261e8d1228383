"""Attachments kept alone, carried out: an `AttachmentUnit` per file — uploaded by path under a name that is its
title (`UploadLinks`), then recorded in one step in the order the files were given, its title checked against the
notebook's listing and fixed by a rename — or in a dry run said as what would be done."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from nlmsync.errors import NotebookLMError
from nlmsync.store import SourceMapping
from nlmsync.sync.attachments.files import PreparedFile
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.remote import RemoteView, strict_delete
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import source_title, upload_name
from nlmsync.sync.units import Turn, Upload, Uploaded, own_upload, record_in_turn
from nlmsync.vault import is_media

UPLOADS_DIR = "uploads"
"""The folder, beside the state file, that holds the links to the files a run uploads, named as their titles."""
_NOT_PROCESSED = re.compile(r"Source (?P<id>\S+) failed to process")
"""How the server says a file it added could not be processed (the source stays in the notebook)."""
NOT_PROCESSED_LINE = "NotebookLM could not process it"
_STILL_PROCESSING = re.compile(r"Source \S+ not ready after")
"""How the server says its wait for a file's processing ran out (the source stays, and is processed later)."""
UNPROCESSED_REASON = "NotebookLM could not process it on an earlier run: not uploaded again until the file changes"


@dataclass
class PlannedFile:
    """An attachment of the run, the branch decided for it, and the registry title its row had (None: no row)."""

    file: PreparedFile
    decision: Decision
    recorded_title: str | None = None

    @property
    def path(self) -> str:
        return self.file.path

    def needs_upload(self) -> bool:
        return self.decision.uploads

    def needs_retitle(self) -> bool:
        """Whether its source, kept, is titled otherwise than the file's title now (moved, or the server kept the
        upload's file name and the rename that fixes it has not taken yet)."""
        return self.recorded_title is not None and self.recorded_title != self.file.title


def outcome(work: PlannedFile, ids: list[str], adopted: bool = False) -> NoteOutcome:
    decision = work.decision
    return NoteOutcome(path=work.path, branch=decision.branch, source_ids=ids,
                       previous_source_ids=list(decision.previous), renamed_from=decision.rename_from,
                       adopted=adopted)


def failed(work: PlannedFile, message: str, *, not_tried: bool = False) -> NoteOutcome:
    return NoteOutcome(path=work.path, branch=Branch.FAILED, error=message, not_tried=not_tried)


class UploadLinks:
    """The files a run uploads, as hard links (copies where the file system makes none) named as their titles
    (`titles.upload_name`), so that a source the server names after its file still carries nlmsync's title. They
    live in `folder` while the run does; what a killed run left there goes at the start of the next."""

    def __init__(self, state_file: Path | None) -> None:
        self.folder = state_file.parent / UPLOADS_DIR if state_file is not None else None
        self._made: list[Path] = []

    def make(self, file: PreparedFile) -> str:
        """A link to `file` named as its title; returns its path."""
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="nlmsync-uploads-"))
        if not self._made:
            self.clear()
        self.folder.mkdir(parents=True, exist_ok=True)
        link = self.folder / upload_name(file.title, file.suffix)
        link.unlink(missing_ok=True)
        try:
            os.link(file.fs_path, link)
        except OSError:
            shutil.copyfile(file.fs_path, link)
        self._made.append(link)
        return os.fspath(link)

    def clear(self) -> None:
        """Remove every link in the folder (this run's, and any a killed run left)."""
        if self.folder is None or not self.folder.is_dir():
            return
        for entry in self.folder.iterdir():
            if entry.is_file() or entry.is_symlink():
                entry.unlink(missing_ok=True)
        self._made.clear()


class AttachmentUnit:
    """One attachment of the run, as a unit of the executor (`units.Unit`)."""

    def __init__(self, files: FilesAlone, work: PlannedFile, out: list[NoteOutcome]) -> None:
        self.files = files
        self.work = work
        self.evictions = out

    def start(self) -> list[Upload]:
        work = self.work
        if not work.needs_upload():
            return []
        file = work.file
        link = self.files.links.make(file)
        return [Upload("", file.title, partial(own_upload, self.files.deps, self.files.remote, file.path),
                       file=link, listed_as=(upload_name(file.title, file.suffix),), slow=is_media(file.path))]

    @property
    def live(self) -> bool:
        """Whether the file came out of the run live (its own outcome, said last in its place, is live)."""
        return bool(self.evictions) and self.evictions[-1].path == self.work.path and self.evictions[-1].branch.live

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        self._report(failed(self.work, message, not_tried=not_tried))

    async def finish(self, uploaded: Uploaded, turn: Turn) -> list[str]:
        work = self.work
        if uploaded.error is not None:
            result = failed(work, await self.files.not_processed(work, uploaded.error), not_tried=uploaded.not_tried)
        elif work.needs_upload():
            result = outcome(work, [a.source_id for a in uploaded.added], any(a.adopted for a in uploaded.added))
        else:
            result = outcome(work, list(work.decision.keep))
        return await record_in_turn(turn, result, partial(self.files.commit, work, result), self._report)

    def _report(self, result: NoteOutcome) -> None:
        self.evictions.append(result)
        self.files.deps.progress(result)


class FilesAlone:
    """What the units of a run's attachments share: the run's deps and listing, the upload links, and the steps
    they take in the notebook and the state file (recording a file, fixing its title, deleting a source the
    server could not process)."""

    def __init__(self, deps: SyncDeps, remote: RemoteView) -> None:
        self.deps = deps
        self.remote = remote
        self.links = UploadLinks(deps.store.path)

    def commit(self, work: PlannedFile, result: NoteOutcome) -> list[str]:
        """Record one attachment in one step (its use is recorded with the others at the end of the run); returns
        the old source ids to delete best-effort afterwards."""
        store, nb, decision = self.deps.store, self.deps.notebook_id, work.decision
        retire: list[str] = []
        with store.step():
            if decision.rename_from is not None:
                store.rename_mapping(nb, decision.rename_from, work.path)
            elif decision.branch == Branch.REUSED:
                if decision.canonicalize:
                    store.upsert_mapping(self._row(work, result.source_ids[0], work.recorded_title))
            else:
                new = result.source_ids[0]
                store.remove_mappings(nb, work.path)
                # recorded under the upload's file name until a listing shows the title took (`fix_titles`): a run
                # killed before it looks leaves a row the next run checks again
                store.upsert_mapping(self._row(work, new, upload_name(work.file.title, work.file.suffix)))
                for old in decision.prior_part_ids:
                    if old != new:
                        store.register_source_alias(old, new)
                retire = [sid for sid in decision.previous if sid != new]
                for sid in retire:
                    store.queue_deletion(nb, sid, f"replaced by a new version of {work.path}")
        return retire

    def _row(self, work: PlannedFile, source_id: str, title: str | None) -> SourceMapping:
        return SourceMapping(notebook_id=self.deps.notebook_id, path=work.path, source_id=source_id,
                             content_hash=work.file.content_hash, title=title or work.file.title)

    async def not_processed(self, work: PlannedFile, error: str) -> str:
        """The line for an upload that failed. A source the server added but could not process is deleted (queued
        for a later run when the delete fails), the file's bytes are remembered as such (not uploaded again until
        they change), and the line says so. One still processing when the server's wait ran out is left to
        finish: the next run finds it by its title."""
        if _STILL_PROCESSING.search(error):
            settings = self.deps.settings
            waited, setting = ((settings.media_timeout, "media_timeout") if is_media(work.path)
                               else (settings.call_timeout, "call_timeout"))
            return (f"NotebookLM was still processing it when the wait ran out ({waited:g} s, the {setting} "
                    "setting): its source stays in the notebook, and the next run takes it without uploading it "
                    "again")
        match = _NOT_PROCESSED.search(error)
        if match is None:
            return error
        deps, source_id = self.deps, match.group("id").rstrip(".")
        deps.store.record_unprocessed(deps.notebook_id, work.file.content_hash, error)
        try:
            await strict_delete(deps.client, deps.notebook_id, self.remote, source_id)
        except NotebookLMError:
            with deps.store.step():
                deps.store.queue_deletion(deps.notebook_id, source_id, "NotebookLM could not process it")
            return f"{NOT_PROCESSED_LINE}; its source is deleted by a later run"
        return f"{NOT_PROCESSED_LINE}; its source was deleted"

    async def fix_titles(self, paths: list[str], *, listed: dict[str, str]) -> None:
        """Give the sources of `paths` the title of their file (`source_rename`), where the notebook lists them
        (`listed`, a fresh listing, id -> title) under another: moved, or uploaded and named after the upload's
        file because the server's rename did not take. The registry keeps the title listed until a rename takes,
        so a later run sees the difference and tries again; a failed rename never fails the file."""
        deps, store, nb = self.deps, self.deps.store, self.deps.notebook_id
        for path in paths:
            rows = store.mappings_by_path(nb, path)
            if len(rows) != 1:
                continue
            row = rows[0]
            source_id = store.resolve_source_id(row.source_id)
            title = source_title(path, row.content_hash)
            shown = listed.get(source_id, self.remote.sources.get(source_id))
            if shown is None:
                continue
            if shown != row.title:
                self.remote.added(source_id, shown)
                with store.step():
                    store.upsert_mapping(row, source_id=source_id, title=shown)
                row = store.mappings_by_path(nb, path)[0]
            if shown == title:
                continue
            try:
                await deps.client.source_rename(nb, source_id, title)
            except NotebookLMError:
                continue
            self.remote.added(source_id, title)
            with store.step():
                store.upsert_mapping(row, source_id=source_id, title=title)
