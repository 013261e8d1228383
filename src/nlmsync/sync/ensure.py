"""`ensure_sources_for_paths`, the entry: one run, step by step — the notes read, those that go into packs carried
out as packs, the rest through their own branches, then the attachments through theirs. Every step adds what it did to the run's report; a note that
fails leaves its registry rows untouched."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from nlmsync import vault as vault_files
from nlmsync.errors import NlmsyncError
from nlmsync.sync.attachments.ensure import AttachmentRun
from nlmsync.sync.carry.executor import Executor
from nlmsync.sync.carry.vanished import remove_vanished
from nlmsync.sync.notes.decide import PlannedNote, check_capacity_up_front, decide_all, read_for_upload
from nlmsync.sync.notes.units import NotesAlone, NoteUnit, note_units, simulate
from nlmsync.store import NoteHashes
from nlmsync.sync.packs.documents import documents_in_packs, files_to_add
from nlmsync.sync.packs.ensure import PackedNotes, pack_notes
from nlmsync.sync.prepared import PreparedNote, load_notes
from nlmsync.sync.registry import untouchable_count, vanished_paths
from nlmsync.sync.report import NoteOutcome, RefreshReport, stopped_line
from nlmsync.sync.run import AllNotesScope, Request, SyncRun


async def ensure_sources_for_paths(run: SyncRun, paths: Sequence[str], *, protect: Collection[str] = (),
                                   found: Collection[str] = (), all_notes: AllNotesScope | None = None,
                                   stats: Mapping[str, tuple[int, int]] | None = None) -> RefreshReport:
    """Make the notes at `paths` (vault-relative, normalized) live sources, in that order; returns the run's report.

    The report holds one outcome per path (reused, replaced, renamed, added, excluded or failed), with the
    evictions each note needed just before it; in a packed notebook the packs too, and a packed note's
    outcome names its pack (`refresh --all` reports its packed notes through the packs alone). `protect`
    are paths never evicted by this call (the requested paths always are). In a dry run (`SyncRun.dry_run`),
    nothing is written and no mutating call is made. `found` are the paths that came from walking the vault
    rather than from the user (see `load_notes`); `stats` the modification time and size a walk of the vault just
    found files with (`load_notes` takes them instead of a `stat` of its own). With `all_notes`, the registered
    notes in its scope that are neither among `paths` nor claimed by a rename of this run, or that are now
    excluded by configuration, have their sources removed first (`removed` outcomes, before the others):
    renames are matched by content hash before any removal is decided, so a moved note keeps its source.

    Raises:
        CapacityError: the requested notes alone exceed the capacity (before any upload), or no managed
            eviction candidate is left (after the notes before it were done and recorded).
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server cannot be
            used at all (what was done before is recorded).
        Any error carries the run's report (`NlmsyncError.report`): what was done and recorded before it.
    """
    request = Request(list(dict.fromkeys(paths)), found, stats, all_notes)
    run.protect.update(protect)
    run.protect.update(request.paths)
    try:
        await _ensure(run, request)
    except NlmsyncError as exc:
        exc.report = run.report
        raise
    run.mark_adopted()
    return run.report


async def _ensure(run: SyncRun, request: Request) -> None:
    deps = run.deps
    suffixes = vault_files.attachment_suffixes(deps.settings.attachments)
    files = [p for p in request.paths if vault_files.is_attachment_path(p, suffixes)]
    attachments = AttachmentRun(run, files, request.found, request.stats) if files else None
    notes = request
    if attachments is not None:
        taken = set(files)
        notes = replace(request, paths=[p for p in request.paths if p not in taken])
    try:
        packed = PackedNotes.read(run, request)  # a document packed before and unchanged since is settled too
        unread = [p for p in notes.paths if p not in packed.settled]
        run.registry.preload(None if request.all_notes is not None or packed.any else unread)
        known = deps.store.note_hashes(unread)
        items = load_notes(deps, unread, request.found, known, run.read, request.stats, dry_run=run.dry_run)
        if attachments is not None:  # a document too long for one source goes up as its text, by pages
            long = attachments.too_long(packed.settled)
            attachments.hand_over(long)
            notes = _with_texts(run, notes, long, items, known)
        packing = _packs_apply(run, notes, items, packed.any)
        if attachments is not None:
            notes = _documents(run, notes, packed, items, known, attachments) if packing else notes
            packed.settled -= run.files_alone
        alone = await pack_notes(run, notes, packed, items, known) if packing else items
        singled = {i.path for i in alone}
        if attachments is not None:
            attachments.decide()
        await _alone(run, notes, alone, [*(i.path for i in items if i.path not in singled), *packed.settled],
                     attachments)
    finally:
        if attachments is not None:
            attachments.close()


def _documents(run: SyncRun, notes: Request, packed: PackedNotes, items: list[PreparedNote | NoteOutcome],
               known: dict[str, NoteHashes], attachments: AttachmentRun) -> Request:
    """The run's notes with the documents whose text goes into packs (`documents_in_packs`), their texts added to
    `items` (from the state file's texts: an unchanged document is not read again) and their hash records to
    `known`; the other attachments are the run's file sources (`SyncRun.files_alone`)."""
    candidates = attachments.candidates()
    docs, files_fit = documents_in_packs(run, notes, packed.members, packed.settled, items, known, candidates)
    attachments.hand_over(docs)
    run.files_alone = set(attachments.paths)
    if files_fit:
        run.file_room = files_to_add(run, [path for path, _ in candidates])
    if not docs:
        return notes
    return _with_texts(run, notes, [path for path, _ in candidates if path in docs], items, known, packed.settled)


def _with_texts(run: SyncRun, notes: Request, paths: Sequence[str], items: list[PreparedNote | NoteOutcome],
                known: dict[str, NoteHashes], settled: Collection[str] = ()) -> Request:
    """The run's notes with the documents at `paths` (handed over by the run's attachments) taken as their text:
    those not `settled` in their packs read as notes of their text (split by pages, from the state file's texts:
    `load_notes`) into `items`, their hash records into `known`."""
    if not paths:
        return notes
    unread = [p for p in paths if p not in settled]
    known_docs = run.deps.store.note_hashes(unread)
    items.extend(load_notes(run.deps, unread, notes.found, known_docs, run.read, notes.stats, dry_run=run.dry_run))
    known.update(known_docs)
    return replace(notes, paths=[*notes.paths, *paths])


def _packs_apply(run: SyncRun, request: Request, items: Sequence[PreparedNote | NoteOutcome], packed: bool) -> bool:
    """Whether the run keeps notes in packs: the notebook is packed already, or `refresh --all` packs it (the
    `pack` setting: always, or — `auto` — when its notes do not fit one per source)."""
    mode = run.deps.settings.pack
    if request.all_notes is None or mode == "never":
        return packed  # with `never`, unpacking: the layout takes no note, its packs are retired
    if packed or mode == "always":
        return True
    required = sum(len(i.parts) for i in items if isinstance(i, PreparedNote))
    capacity, remote = run.deps.capacity.value, run.remote
    return required + len(remote) > capacity and required + untouchable_count(remote, run.registry, ()) > capacity


async def _alone(run: SyncRun, request: Request, notes: list[PreparedNote | NoteOutcome],
                 packed: list[str], attachments: AttachmentRun | None = None) -> None:
    """The branches for the notes kept one per source (`packed`: the run's notes that are in packs), then the run's
    attachments (`attachments`, decided)."""
    deps, remote, registry = run.deps, run.remote, run.registry
    decided: list[PlannedNote | NoteOutcome] = []
    if notes:  # a packed run may keep no note alone
        decided = decide_all(deps, notes, remote, registry)
        reread = read_for_upload(deps, decided, request.found, run.read, dry_run=run.dry_run)
        if reread is not None:
            decided = decide_all(deps, reread, remote, registry)
    works = [i for i in decided if isinstance(i, PlannedNote)]
    if works or len(remote) > deps.capacity.value:  # with nothing to upload, only a notebook over capacity refuses
        check_capacity_up_front(deps, works, remote, registry)
    renamed_from = {w.decision.rename_from for w in works}
    kept = [*packed, *(attachments.kept() if attachments is not None else ())]
    synced = vault_files.attachment_suffixes(deps.settings.attachments)
    vanished = {} if request.all_notes is None else vanished_paths(request.all_notes, registry, decided, kept,
                                                                   renamed_from, synced)
    if vanished:
        await remove_vanished(deps, remote, vanished, run.report, dry_run=run.dry_run)
    if run.dry_run:
        run.report.notes.extend(simulate(deps, decided, remote, run.protect))
        if attachments is not None:
            await attachments.carry_out()
        return
    left = [*vanished, *(w.decision.rename_from for w in works if w.decision.rename_from is not None)]
    mark = len(run.report.notes)
    try:
        if decided:
            await _carry_out(run, decided)
        if attachments is not None:
            await attachments.carry_out()
    finally:
        run.record_uses([o.path for o in run.report.notes[mark:] if o.branch.live], forget=left)


async def _carry_out(run: SyncRun, decided: Sequence[PlannedNote | NoteOutcome]) -> None:
    """The decided notes carried out through the run's executor, their outcomes added to the report in the order
    the notes were given (the evictions each note needed just before it), also when the run stops part-way.

    Raises:
        CapacityError: the notebook is full (no managed eviction candidate, or the server refused an add).
        NlmsyncError: the server cannot be used, or the state file cannot be written (the run stopped).
    """
    notes = note_units(NotesAlone(run.deps, run.remote), decided)
    executor: Executor[NoteUnit] = Executor(run.deps, run.remote, run.protect)
    try:
        stop = await executor.execute(notes.units)
        if isinstance(stop, NlmsyncError) and (stop is executor.fatal or executor.full):
            stop.message = stopped_line(stop.message, decided, notes.outcomes())
        if stop is not None:
            raise stop
    finally:
        run.report.notes.extend(notes.outcomes())
